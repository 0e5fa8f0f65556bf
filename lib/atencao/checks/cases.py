"""Os casos de uma verificação: fixos no notebook, sorteados na conferência da correção.

Na conferência da correção (:mod:`correcao._veredito`) os casos são sorteados a cada vez: uma tabela de
respostas copiada dos casos fixos do notebook não passa. No notebook, os casos são sempre os mesmos.
"""

from __future__ import annotations

import contextlib
import random
import types

__all__ = ["RANDOMIZE_CASES", "case_seed", "randomized", "fixed_cases"]

# Ligado pela conferência da correção antes de os módulos de verificação carregarem (eles tiram a foto de
# integridade ao carregar: trocar o valor depois é apontado e desfeito, veja :mod:`.integrity`).
RANDOMIZE_CASES = False
# Na conferência, o relatório do retorno roda uma vez com os casos do notebook (:func:`fixed_cases`); o objeto é o
# mesmo do começo ao fim (a foto de integridade compara o objeto, não o conteúdo)
_FIXED = types.SimpleNamespace(on=False)


def randomized() -> bool:
    """``True`` quando os casos são sorteados: na conferência da correção (:data:`RANDOMIZE_CASES`), fora de
    :func:`fixed_cases`."""
    return RANDOMIZE_CASES and not _FIXED.on


@contextlib.contextmanager
def fixed_cases():
    """Na conferência da correção, os casos do notebook (os fixos) enquanto o bloco roda: o relatório que o retorno
    mostra é o mesmo que o aluno viu no notebook, e a mesma turma dá o mesmo retorno byte a byte. O veredito que
    vale ponto roda fora deste bloco, com os casos sorteados."""
    antes, _FIXED.on = _FIXED.on, True
    try:
        yield
    finally:
        _FIXED.on = antes


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
        semente sorteada em ``[0, 2**32)`` por ``random.SystemRandom`` (que o código do aluno não prevê); dentro
        de :func:`fixed_cases`, ``fixed``.
        Use-a em ``np.random.default_rng(case_seed(2017))``.
    """
    return random.SystemRandom().randrange(2**32) if randomized() else fixed
