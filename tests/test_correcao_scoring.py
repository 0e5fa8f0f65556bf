"""As regras da nota (:mod:`correcao.scoring`) como funções puras: uma linha, o notebook corrigível e o que as caixas
disseram, escritos à mão. Nenhum destes testes abre uma caixa, roda um kernel ou chama o nbgrader."""

from __future__ import annotations

from pathlib import Path

from correcao import scoring
from correcao.catalogo import Gradable
from correcao.execution import ExecutionResult
from correcao.politica import GradingPolicy
from correcao.relatorio import Row

EX1, EX2 = "aula01-ex1-verificacao", "aula01-ex2-verificacao"


def _gradable() -> Gradable:
    return Gradable("aula-01-self-attention", "03-exercicios", Path("nenhum.ipynb"),
                    {EX1: ("code", 2, True), EX2: ("code", 3, True), "aula01-ex3-escrita": ("markdown", 1, False)})


def _row(**pontos_no_kernel) -> Row:
    """A linha como o nbgrader a deixa: os pontos que ele leu das saídas do kernel."""
    g = _gradable()
    return Row("ana", g.assignment, g.notebook, maximum=g.max_auto,
               scores={EX1: pontos_no_kernel.get("ex1", 2.0), EX2: pontos_no_kernel.get("ex2", 3.0)})


def _result(**verdicts) -> ExecutionResult:
    return ExecutionResult(verdicts={EX1: verdicts.get("ex1", (True, "")), EX2: verdicts.get("ex2", (True, ""))})


def test_os_pontos_sao_os_do_verificador_e_a_situacao_sai_da_soma():
    row = _row()
    scoring.apply_verification(_gradable(), row, _result())
    assert (row.scores, row.total, row.status, row.reasons) == ({EX1: 2.0, EX2: 3.0}, 5.0, "ok", [])

    row = _row(ex2=0.0)
    scoring.apply_verification(_gradable(), row, _result(ex2=(False, "linhas não somam 1")))
    assert (row.total, row.status) == (2.0, "parcial")

    row = _row(ex1=0.0, ex2=0.0)
    scoring.apply_verification(_gradable(), row, _result(ex1=(False, ""), ex2=(False, "")))
    assert (row.total, row.status) == (0.0, "zero")


def test_passou_no_kernel_e_falhou_no_verificador_zera_e_vai_para_revisao():
    row = _row()
    scoring.apply_verification(_gradable(), row, _result(ex1=(False, "tabela de respostas")))
    assert row.scores[EX1] == 0.0 and row.status == "revisar"
    assert any(m.startswith(f"{EX1}: passou no notebook, mas falhou na conferência independente (não passou: "
                            "tabela de respostas)") for m in row.reasons), row.reasons


def test_reprovou_no_kernel_e_passou_no_verificador_retem_os_pontos():
    row = _row(ex2=0.0)
    res = _result()
    res.failed_in_kernel = {EX2}
    scoring.apply_verification(_gradable(), row, res)
    assert row.status == "revisar" and row.em_revisao == {EX2: 3.0} and row.total == 2.0, row


def test_verificacao_sem_veredito_vale_zero():
    row = _row()
    res = ExecutionResult(verdicts={EX1: (True, "")})
    scoring.apply_verification(_gradable(), row, res)
    assert row.scores == {EX1: 2.0, EX2: 0.0} and row.status == "revisar", row


def test_codigo_que_mexe_na_correcao_retem_todos_os_pontos():
    row = _row()
    res = _result()
    res.flags = ["célula 3: sys.modules"]
    scoring.apply_verification(_gradable(), row, res)
    assert row.status == "revisar" and row.total == 0.0 and row.em_revisao == {EX1: 2.0, EX2: 3.0}, row
    assert any(m.startswith("o código mexe na correção: célula 3: sys.modules") for m in row.reasons), row.reasons


def test_desfecho_da_execucao_vira_a_situacao_com_o_motivo():
    row = _row(ex2=0.0)
    res = _result(ex2=(False, "a conferência parou"))
    res.outcome, res.where = "tempo_esgotado", "a célula 7"
    scoring.apply_verification(_gradable(), row, res)
    assert (row.status, row.total) == ("tempo_esgotado", 2.0)
    assert any(m.startswith("tempo esgotado em a célula 7: o notebook passou do tempo limite") for m in row.reasons)
    assert scoring.outcome_reason(ExecutionResult()) is None
    assert "não é culpa do aluno" in scoring.outcome_reason(ExecutionResult(outcome="falha_da_maquina"))


def test_explain_outputs_diz_o_erro_de_cada_celula_e_zera_a_verificacao_apagada():
    def code(gid, *outputs):
        return {"cell_type": "code", "source": "", "metadata": {"nbgrader": {"grade_id": gid, "grade": True}},
                "outputs": list(outputs)}

    erro = {"output_type": "error", "ename": "AssertionError", "evalue": "errado", "traceback": []}
    nb = {"cells": [code(EX1, erro), {"cell_type": "code", "source": "", "metadata": {}, "outputs": [
        {"output_type": "error", "ename": "NotImplementedError", "evalue": "", "traceback": []}]}]}
    row = _row()
    scoring.explain_outputs(nb, _gradable(), row)
    assert row.scores[EX2] == 0.0, row.scores  # apagada do notebook
    assert any(m.startswith(f"{EX2}: célula de verificação apagada") for m in row.reasons), row.reasons
    assert any(m.startswith(f"{EX1}: ") and "errado" in m for m in row.reasons), row.reasons
    assert len(row.reasons) == 2, row.reasons  # o esboço não resolvido fica para a verificação dizer


def test_verificacoes_fora_da_versao_do_aluno_saem_da_nota_e_do_maximo():
    row = _row()
    row.reasons = [f"{EX2}: não passou", "outro motivo"]
    scoring.checks_outside_version(_gradable(), row, [EX2])
    assert (row.scores, row.maximum, row.reasons) == ({EX1: 2.0}, 2.0, ["outro motivo"])


def test_versao_antiga_sem_o_exercicio_novo_nao_sai_ok():
    """Achado ao atacar a correção: a Aula 3 de uma versão sem o exercício 4 saía 6/6 ``ok`` (o mesmo aluno, na versão
    de hoje, 6/8 ``parcial``): a versão antiga era um jeito de pular o exercício mais difícil."""
    row = _row()
    scoring.checks_outside_version(_gradable(), row, [EX2])
    row.status, row.total = "ok", sum(row.scores.values())  # como apply_verification a deixa
    scoring.old_version_missing(_gradable(), row, [EX2])
    assert (row.status, row.total, row.maximum, row.em_revisao) == ("revisar", 2.0, 2.0, {}), row
    assert f"sem {EX2}: 2 de 2 pontos nesta linha, e o máximo da versão de hoje é 5" in row.reasons[-1], row.reasons
    completa = _row()  # a versão antiga com todos os exercícios de hoje (só os ids mudaram): ok
    completa.status = "ok"
    scoring.old_version_missing(_gradable(), completa, [])
    assert completa.status == "ok" and not completa.reasons


def test_copia_da_solucao_e_versao_antiga_com_falha_vao_para_revisao():
    row = _row()
    scoring.withhold_solution_copies(row, ["exercício 1"], [EX1])
    assert row.status == "revisar" and row.em_revisao == {EX1: 2.0}, row
    sem_copia = _row()
    scoring.withhold_solution_copies(sem_copia, [], [])
    assert sem_copia.status == "ok" and not sem_copia.em_revisao

    antiga = _row(ex2=0.0)
    antiga.status = "parcial"
    scoring.old_version_failures(_gradable(), antiga, "versão anterior do curso (v1)")
    assert antiga.status == "revisar" and EX2 in antiga.reasons[-1], antiga
    atual = _row(ex2=0.0)
    atual.status = "parcial"
    scoring.old_version_failures(_gradable(), atual, "")
    assert atual.status == "parcial"


def test_copias_do_mesmo_notebook_citam_umas_as_outras():
    a, b, c = _row(), _row(), _row()
    a.arquivo, b.arquivo, c.arquivo = "03-exercicios.ipynb", "v2/03-exercicios.ipynb", "x.ipynb"
    c.student = "bia"
    scoring.mark_copies([a, b, c])
    assert "“v2/03-exercicios.ipynb”" in a.reasons[-1] and "“03-exercicios.ipynb”" in b.reasons[-1]
    assert c.reasons == []


def test_aviso_de_maquina_ocupada_cita_os_limites_da_politica():
    row = _row()
    row.status, row.cpu_ratio = "tempo_esgotado", 0.2
    nota = scoring.busy_machine_note(row, GradingPolicy(cell_timeout=7, notebook_timeout=90))
    assert "só 20% do tempo" in nota and "--tempo-celula 7" in nota and "--tempo-notebook 90" in nota, nota


def test_ultimo_erro_do_log_sem_caminhos():
    log = "INFO tudo bem\n[IPKernelApp] ERROR ruído\nERROR falhou em /tmp/x/y.ipynb\n"
    assert scoring.last_error(log) == "ERROR falhou em …"
    assert scoring.last_error("") == "sem detalhes"


def test_o_motivo_do_tempo_e_da_memoria_diz_o_limite_da_correcao():
    """O aluno lia "passou do tempo limite (laço infinito?)" e "(limite por processo, --memoria)": sem o número, e
    com uma opção da linha de comando do professor."""
    celula = ExecutionResult(outcome="tempo_esgotado", continued=True, where="a célula 7", limits=(30, 180, 2048))
    assert "a célula passou do tempo limite de 30 s e foi interrompida" in scoring.outcome_reason(celula)
    notebook = ExecutionResult(outcome="tempo_esgotado", where="a célula 9", limits=(30, 180, 2048))
    assert "o notebook passou do tempo limite de 180 s" in scoring.outcome_reason(notebook)
    memoria = ExecutionResult(outcome="memoria_esgotada", where="a célula 4", limits=(30, 180, 2048))
    assert "(limite de 2048 MiB por processo)" in scoring.outcome_reason(memoria)
    assert "--memoria" not in scoring.outcome_reason(memoria)
    sem_limites = ExecutionResult(outcome="tempo_esgotado", continued=True, where="a célula 7")
    assert "passou do tempo limite e foi interrompida" in scoring.outcome_reason(sem_limites)
    memoria_numa_celula = ExecutionResult(outcome="memoria_esgotada", where="a célula 4", continued=True,
                                          limits=(30, 180, 2048))
    assert scoring.outcome_reason(memoria_numa_celula).endswith("a célula levantou MemoryError e parou; o resto do "
                                                                  "notebook rodou normalmente")
