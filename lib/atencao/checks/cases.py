"""Os casos de uma verificação: fixos no notebook, sorteados na conferência da correção.

Na conferência da correção (:mod:`correcao._veredito`) os casos são sorteados a cada vez: uma tabela de
respostas copiada dos casos fixos do notebook não passa. No notebook, os casos são sempre os mesmos.
"""

from __future__ import annotations

import random

__all__ = ["RANDOMIZE_CASES", "case_seed"]

# Ligado pela conferência da correção antes de os módulos de verificação carregarem (eles tiram a foto de
# integridade ao carregar: trocar o valor depois é apontado e desfeito, veja :mod:`.integrity`).
RANDOMIZE_CASES = False


def case_seed(fixed: int | None) -> int | None:
    """A semente dos casos de uma verificação.

    Parameters
    ----------
    fixed : int ou None
        A semente usada no notebook (os mesmos casos a cada execução). ``None`` serve às verificações cujos
        casos do notebook são escritos à mão (``n = 1, 2, 5, 7``, frases fixas): ``case_seed(None)`` é
        ``None`` no notebook (use os casos de sempre) e uma semente na conferência (sorteie outros, de um
        espaço que nenhuma tabela de respostas montada na célula cobre).

    Returns
    -------
    int ou None
        ``fixed`` no notebook; quando :data:`RANDOMIZE_CASES` está ligado (a conferência da correção), uma
        semente sorteada em ``[0, 2**32)`` por ``random.SystemRandom`` (que o código do aluno não prevê).
        Use-a em ``np.random.default_rng(case_seed(2017))``.
    """
    return random.SystemRandom().randrange(2**32) if RANDOMIZE_CASES else fixed
