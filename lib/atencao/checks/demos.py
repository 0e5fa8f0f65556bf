"""As funções de apoio das células de treino da Aula 5 (``04-projeto``): elas decidem se o treino roda.

Ficam fora de :mod:`.aula05` (as verificações) porque rodam também no processo do aluno da correção, que não tem
as verificações (:mod:`correcao.biblioteca_aluno`): lá, o resultado da verificação do passo 1 é o que o
verificador isolado mandou (:func:`.status.record`).

Fonte: Módulo 6, Aula 5, ``04-projeto`` (passos 2 a 5).
"""

from __future__ import annotations

from .report import MARKS, wrap_report
from .status import grading, passou

__all__ = ["pronto_para_treinar", "sua_tarefa"]


def pronto_para_treinar(attention_backward_fn) -> bool:
    """``True`` se ``attention_backward_fn`` (a ``my_attention_backward`` do passo 1) pode entrar no treino.

    As células de treino do ``04-projeto`` começam com ``if aula05.pronto_para_treinar(my_attention_backward):``.
    Depois de reiniciar o kernel, quem roda a célula da função e pula a da verificação ficava sem nada: a célula
    de treino não imprimia nada e apagava a figura guardada. Aqui, uma função que ainda não foi verificada neste
    kernel é verificada em silêncio (a mesma verificação do passo 1); se passar, o treino segue. Senão, uma linha
    diz o que fazer.

    Parameters
    ----------
    attention_backward_fn : callable
        A função do aluno, ``f(dO, Q, K, V, mask=None) -> (dQ, dK, dV)``.

    Returns
    -------
    bool

    Fonte: Módulo 6, Aula 5, ``04-projeto`` (passos 2 a 5).
    """
    if passou(attention_backward_fn, avisar=False):
        return True
    nome = getattr(attention_backward_fn, "__name__", "a sua função")
    if not callable(attention_backward_fn):
        print(wrap_report(f"{MARKS['falhou']} — o que a célula passou não é uma função: rode a célula do passo 1 "
                          "(a do def) e esta de novo."))
        return False
    status = None
    if not grading():  # na correção as células rodam em ordem, e a verificação do passo 1 já rodou
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):  # o relatório completo é o da célula do passo 1
            resultado = _exercise_2()(attention_backward_fn)
        if resultado:
            return True
        status = resultado.status
    if status == "nao_feito":
        texto = (f"{MARKS['nao_feito']} — o treino usa a sua {nome}, que ainda levanta NotImplementedError: cole no "
                 "passo 1 a sua função do notebook 03, rode a célula dela, a verificação logo abaixo e esta.")
    else:
        texto = (f"{MARKS['espera']} — o treino espera o {MARKS['ok']} da sua {nome}: rode a verificação do passo 1 "
                 "para ver o que falta, corrija a função, rode a célula dela, a verificação e esta de novo.")
    print(wrap_report(texto))
    return False


def sua_tarefa(task_fn):
    """A tarefa que ``task_fn`` (a ``my_task`` do passo 4) devolve, ou ``None`` com uma linha curta dizendo o que
    corrigir.

    Um ``source`` inválido (uma posição à frente com ``causal=True``, uma fora de 0 … 7) levanta um erro em
    ``make_task``; chamada direto na célula, ela mostrava um rastro de 25 linhas com a mensagem em português lá
    embaixo. Aqui a mensagem vem primeiro, numa linha. Um erro de outro lugar (um erro de digitação dentro de
    ``my_task``) sobe como está: o rastro mostra a linha dele.

    Parameters
    ----------
    task_fn : callable
        A função do aluno, sem argumentos, que devolve ``make_task(...)``.

    Returns
    -------
    Task ou None

    Fonte: Módulo 6, Aula 5, ``04-projeto`` (passo 4).
    """
    from ..training import Task, make_task

    nome = getattr(task_fn, "__name__", "a sua função")
    try:
        tarefa = task_fn()
    except NotImplementedError:
        print(f"{MARKS['nao_feito']} — escreva a sua tarefa em {nome}() e rode a célula dela e esta de novo.")
        return None
    except (ValueError, TypeError) as exc:
        tb = exc.__traceback__  # o erro passou pelo make_task (ou pelo que ele chama para conferir o source)?
        while tb is not None and tb.tb_frame.f_code is not make_task.__code__:
            tb = tb.tb_next
        if tb is None:  # não veio do make_task: o rastro completo ajuda mais
            raise
        print(wrap_report(f"{MARKS['falhou']} — o make_task recusou a tarefa de {nome}(): {exc} Corrija o source "
                          "(ou o causal) e rode a célula de " + f"{nome} e esta de novo."))
        return None
    if tarefa is None:
        print(f"{MARKS['falhou']} — {nome}() devolveu None: faltou o `return` antes de make_task(...)?")
        return None
    if not isinstance(tarefa, Task):
        print(wrap_report(f"{MARKS['falhou']} — {nome}() devolveu {type(tarefa).__name__}, e não uma tarefa: devolva "
                          "make_task(nome, descrição, source, causal=...)."))
        return None
    if tarefa.n != 8:
        print(wrap_report(f"{MARKS['falhou']} — a tarefa de {nome}() tem {tarefa.n} posições, e o modelo do projeto, "
                          "8: o source precisa de 8 posições (uma para cada posição i, de 0 a 7)."))
        return None
    return tarefa



def _exercise_2():
    """A verificação do passo 1 (:func:`.aula05.exercicio_2`), importada só quando usada (ela importa este módulo)."""
    from .aula05 import exercicio_2

    return exercicio_2
