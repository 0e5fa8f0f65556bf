"""O último resultado de cada função verificada, que as células de demonstração consultam (:func:`passou`).

Um módulo à parte, sem as verificações: na correção, o processo do aluno não tem as verificações
(:mod:`correcao.biblioteca_aluno`), mas as demonstrações dele (``if aula02.passou(sua_funcao):``) rodam como no
notebook, com o resultado que o verificador isolado mandou (:func:`record`, chamada por :mod:`correcao._aluno`).
"""

from __future__ import annotations

import os
import weakref

from .report import MARKS, wrap_report

__all__ = ["grading", "passou", "record"]

def grading() -> bool:
    """``True`` durante a correção automática (o nbgrader define ``NBGRADER_EXECUTION``)."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))



# o último resultado de cada função verificada (a função do aluno é a chave; se ela for redefinida, a nova
# ainda não foi verificada): é o que :func:`passou` consulta antes de uma demonstração
_LAST_STATUS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def record(fn, status: str) -> None:
    """Guarda o resultado (``"ok"``, ``"falhou"`` ou ``"nao_feito"``) da última verificação de ``fn`` (veja
    :func:`passou`). Um objeto sem referência fraca não é guardado: a demonstração pede para verificar de novo."""
    try:
        _LAST_STATUS[fn] = status
    except TypeError:
        pass


def passou(fn, avisar: bool = True) -> bool:
    """``True`` se a última verificação rodada com a função ``fn`` (o mesmo objeto) deu ✅.

    As células de demonstração dos exercícios começam com ``if aula02.passou(sua_funcao):`` e só usam a
    função do aluno depois do ✅, em vez de quebrar com um erro de dentro da biblioteca. Quando não
    passou, imprime o que falta (resolver, corrigir ou rodar a verificação) e devolve ``False``.

    Parameters
    ----------
    fn : callable
        A função do aluno, a mesma passada à verificação. Se a célula da função rodou de novo depois da
        verificação, é outra função: a verificação precisa rodar de novo.
    avisar : bool
        Se ``False``, não imprime nada (para escolher entre a função do aluno e a da biblioteca).

    Returns
    -------
    bool
    """
    nome = getattr(fn, "__name__", "a sua função")
    try:
        status = _LAST_STATUS.get(fn)
    except TypeError:
        status = None
    if status == "ok":
        return True
    if not avisar:
        return False
    if status == "nao_feito":
        print(wrap_report(f"{MARKS['nao_feito']} — a demonstração aparece quando {nome} estiver pronta e a verificação "
                          f"acima der {MARKS['ok']}."))
    elif status == "falhou":
        print(wrap_report(f"{MARKS['espera']} — a demonstração espera o {MARKS['ok']}: corrija {nome} (a verificação "
                          "acima diz o que falta) e rode de novo a célula da função, a verificação e esta célula."))
    else:
        print(wrap_report(f"{MARKS['espera']} — rode antes a verificação acima: a demonstração usa {nome} só depois "
                          f"do {MARKS['ok']} (se você mudou a função, verifique de novo)."))
    return False
