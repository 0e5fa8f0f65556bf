"""Aula 5: as respostas certas que outros testes usam (as trapaças achadas), com os nomes de sempre, e o que não é
"resposta + dica": o exercício não feito (⏳) e os ajudantes das células do ``04-projeto`` (``pronto_para_treinar``,
``sua_tarefa``). As respostas, certas e erradas, e as dicas que elas recebem moram só no corpus da aula
(``test_checks_aula05_corpus.py``)."""

import pytest
import test_checks_aula05_corpus as corpus_aula05
from test_checks_aula05_corpus import att_certo, num_certo

from atencao.checks import aula05

__all__ = ["att_certo", "num_certo"]


def test_exercicio_nao_feito_fica_a_fazer(capsys):
    def nao_feito(*args, **kwargs):
        raise NotImplementedError("Exercício 1")

    for verificacao in (aula05.exercicio_1, aula05.exercicio_2, aula05.exercicio_3):
        assert verificacao(nao_feito).status == "nao_feito"
    assert "⏳" in capsys.readouterr().out


def test_o_treino_do_projeto_verifica_sozinho_depois_de_reiniciar_o_kernel(capsys):
    """04-projeto: depois de reiniciar o kernel, quem roda a célula da função e pula a da verificação via a célula
    do treino não imprimir nada (e apagar a figura guardada). Agora a função ainda não verificada é verificada em
    silêncio e o treino segue; uma função errada ou não feita recebe uma linha dizendo o que fazer."""

    def recem_definida(dO, Q, K, V, mask=None):  # nunca verificada neste "kernel"
        return att_certo(dO, Q, K, V, mask)

    assert aula05.pronto_para_treinar(recem_definida)
    assert capsys.readouterr().out == ""  # nada a dizer: o treino roda e a figura aparece
    assert aula05.passou(recem_definida, avisar=False)

    assert not aula05.pronto_para_treinar(corpus_aula05.att_sem_soma)
    saida = " ".join(capsys.readouterr().out.split())
    assert "⏸️ ESPERANDO" in saida and "rode a verificação do passo 1" in saida and "Exercício 2" not in saida

    def nao_feita(dO, Q, K, V, mask=None):
        raise NotImplementedError("cole aqui a sua função")

    assert not aula05.pronto_para_treinar(nao_feita)
    assert "⏳ A FAZER" in capsys.readouterr().out


def test_o_treino_do_projeto_na_correcao_nao_verifica_de_novo(monkeypatch, capsys):
    """Na correção as células rodam em ordem: sem verificação registrada, a célula do treino não a roda por conta
    própria (uma verificação que falha levantaria AssertionError fora da célula de verificação)."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")

    def errada(dO, Q, K, V, mask=None):
        return corpus_aula05.att_sem_soma(dO, Q, K, V, mask)

    assert not aula05.pronto_para_treinar(errada)
    assert "ESPERANDO" in capsys.readouterr().out


def test_a_tarefa_invalida_do_projeto_diz_o_erro_numa_linha(capsys):
    """04-projeto, passo 4: um source que olha para a frente com causal=True levantava o erro do make_task no meio
    de um rastro de 25 linhas; agora a mensagem vem primeiro, curta, e a célula segue sem treinar."""
    from atencao.training import Task, make_task

    def para_frente():
        return make_task("vizinho", "o da direita", [1, 2, 3, 4, 5, 6, 7, 7], causal=True)

    assert aula05.sua_tarefa(para_frente) is None
    saida = " ".join(capsys.readouterr().out.split())
    assert saida.startswith("❌ FALHOU — o make_task recusou a tarefa de para_frente(): Com `causal=True`")
    assert "source[0] = 1 olha para a frente" in saida and "Traceback" not in saida
    assert len(saida.strip().splitlines()) <= 4

    def fora():
        return make_task("x", "d", [0, 1, 2, 3, 4, 5, 6, 8])

    assert aula05.sua_tarefa(fora) is None
    assert "entre 0 e n−1 = 7" in capsys.readouterr().out

    def curta():
        return make_task("x", "d", [0, 0, 1])

    assert aula05.sua_tarefa(curta) is None
    assert "tem 3 posições, e o modelo do projeto, 8" in " ".join(capsys.readouterr().out.split())

    def sem_return():
        make_task("x", "d", [0] * 8)

    assert aula05.sua_tarefa(sem_return) is None
    assert "faltou o `return`" in capsys.readouterr().out

    def com_erro_de_digitacao():
        return make_task("x", "d", [0] * 8).nome  # um erro do aluno, fora do make_task: o rastro completo ajuda

    with pytest.raises(AttributeError):
        aula05.sua_tarefa(com_erro_de_digitacao)

    def certa():
        return make_task("primeiro", "o primeiro token", [0] * 8, causal=True)

    assert isinstance(aula05.sua_tarefa(certa), Task)
    assert capsys.readouterr().out == ""
