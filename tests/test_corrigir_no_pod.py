"""O que um professor encontrou ao corrigir uma turma num pod simulado (não root, /proc mascarado), com o
``python3 curso.py --neste-ambiente corrigir`` e o log lido por um pipe (como o ``kubectl logs``): o registro saía
todo de uma vez no fim; o Ctrl-C e o SIGTERM (o pod apagado) davam um traceback em inglês ou nada; as linhas que
não vão a uma caixa faltavam no registro; uma turma toda zerada terminava sem aviso nenhum."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from correcao.relatorio import Row

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "corrigir.py"
HONESTO = ROOT / "solutions" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb"


def _script():
    spec = importlib.util.spec_from_file_location("corrigir_script", SCRIPT)
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo


def test_uma_turma_toda_zerada_termina_com_um_aviso():
    resumo = _script().summary([Row(f"a{k}", "aula-01-self-attention", "03-exercicios", total=0.0, maximum=4.0,
                                    status="zero", isolation="bwrap+rlimit") for k in range(3)])
    assert resumo[0] == "Situações: 3 zero"
    assert resumo[1].startswith("Isolamento: bwrap+rlimit")
    assert resumo[2].startswith("ATENÇÃO: todas as 3 entrega(s) corrigida(s) ficaram com 0 ponto (de até 4)")


def test_sem_aviso_quando_alguem_pontuou_ou_tem_pontos_retidos():
    script = _script()
    zero = Row("a", "aula-01-self-attention", "03-exercicios", total=0.0, maximum=4.0, status="zero")
    ok = Row("b", "aula-01-self-attention", "03-exercicios", total=4.0, maximum=4.0, status="ok")
    retida = Row("c", "aula-01-self-attention", "03-exercicios", total=0.0, maximum=4.0, status="revisar",
                 em_revisao={"aula01-ex3-verificacao": 2.0})
    invalida = Row("d", "", "x.ipynb", status="arquivo_invalido")
    assert script.summary([zero, ok])[0] == "Situações: 1 ok, 1 zero"
    assert not any("ATENÇÃO" in x for x in script.summary([zero, ok]))
    assert not any("ATENÇÃO" in x for x in script.summary([zero, retida]))
    assert not any("ATENÇÃO" in x for x in script.summary([invalida]))  # nenhuma corrigida: nada a avisar
    assert script.summary([]) == []


@pytest.mark.lento
@pytest.mark.parametrize("sinal", [signal.SIGTERM, signal.SIGINT])
def test_interrompida_diz_em_portugues_e_nao_deixa_nada(tmp_path, sinal):
    """O registro por um pipe sai linha a linha (a linha de quem não foi executado também); um SIGTERM (o pod
    apagado) ou um Ctrl-C no meio: a mensagem em português, o código 130, nenhuma nota, nenhuma pasta temporária."""
    turma = tmp_path / "turma"
    for k in range(8):
        (turma / f"aluno-{k}").mkdir(parents=True)
        (turma / f"aluno-{k}" / "03-exercicios.ipynb").write_bytes(HONESTO.read_bytes())
    (turma / "quebrado").mkdir()
    (turma / "quebrado" / "03-exercicios.ipynb").write_text("{ isto não é json", encoding="utf-8")
    temporaria = tmp_path / "tmp"
    temporaria.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "TMPDIR": str(temporaria)}
    env.pop("PYTHONUNBUFFERED", None)  # como num pod (env -i): a saída por um pipe, com o buffer padrão do Python
    saida = tmp_path / "saida"
    # o comando do guia no pod (sem make); o curso.py repassa o SIGTERM ao processo da correção
    proc = subprocess.Popen([sys.executable, str(ROOT / "curso.py"), "--neste-ambiente", "corrigir", str(turma),
                             "--saida", str(saida)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        linhas, inicio = [], time.monotonic()
        corrigida = re.compile(r"^  aluno-\d · 03-exercicios: \d+/4 \w+ \(\d+\.\d s\)$")
        while not any(corrigida.match(x) for x in linhas):  # a primeira entrega corrigida, com o processo rodando
            linha = proc.stdout.readline()
            assert linha, f"o processo terminou antes de corrigir alguém: {linhas} {proc.stderr.read()}"
            linhas.append(linha)
            assert time.monotonic() - inicio < 300, linhas
        assert proc.poll() is None, "o registro só chegou no fim (sem linha a linha num pipe)"
        assert any(x.startswith("  quebrado · 03-exercicios: 0/4 arquivo_invalido (não executado: o arquivo não é")
                   for x in linhas), linhas
        if sinal == signal.SIGINT:  # o Ctrl-C do terminal vai ao grupo de processos inteiro
            os.killpg(proc.pid, sinal)
        else:  # o SIGTERM do pod vai ao processo principal (o tini repassa ao filho dele), que o repassa à correção
            proc.send_signal(sinal)
        resto, erro = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, erro)
    assert "Correção interrompida (Ctrl-C ou SIGTERM) antes do fim: nenhuma nota foi escrita" in erro, erro
    assert "Traceback" not in erro, erro
    assert not saida.exists()
    assert list(temporaria.iterdir()) == [], list(temporaria.iterdir())
    assert json.loads(HONESTO.read_text(encoding="utf-8"))  # a solução intacta


def test_memoryerror_numa_celula_diz_que_o_resto_rodou():
    """Um MemoryError numa célula (o processo seguiu): o motivo dizia "valem os pontos das verificações que
    terminaram antes", e as de depois também valeram (10/10)."""
    import nbformat

    from correcao import execution, scoring

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = bytearray(10**12)"),
                                         nbformat.v4.new_code_cell("y = 2")])
    nb.cells[0].outputs = [nbformat.v4.new_output("error", ename="MemoryError", evalue="", traceback=[])]
    res = execution.ExecutionResult(limits=(30, 180, 2048))
    execution._classify_kernel_outcome(nb, {0, 1}, "ok", False, False, res)
    assert (res.outcome, res.continued) == ("memoria_esgotada", True), res
    motivo = scoring.outcome_reason(res)
    assert "(limite de 2048 MiB por processo)" in motivo and "o resto do notebook rodou normalmente" in motivo
    assert "terminaram antes" not in motivo
    morto = execution.ExecutionResult(limits=(30, 180, 2048))  # o processo morreu depois: não seguiu
    execution._classify_kernel_outcome(nb, {0}, "kernel_morreu:1", False, False, morto)
    assert morto.outcome == "memoria_esgotada" and not morto.continued


def test_a_celula_de_verificacao_interrompida_diz_por_que_no_retorno(tmp_path):
    """No retorno, a célula de verificação interrompida pelo limite mostrava só "CellTimeoutError:" (o retorno
    mostra nome e mensagem do erro de uma verificação, sem o traceback, e a mensagem estava vazia)."""
    import nbformat

    from correcao import relatorio
    from correcao._executar import CELL_TIMEOUT_ERROR

    celula = nbformat.v4.new_code_cell("aula01.exercicio_3(minha_funcao)")
    celula.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "aula01-ex3-verificacao",
                                   "points": 2, "locked": True}
    celula.outputs = [nbformat.from_dict(dict(CELL_TIMEOUT_ERROR))]
    caminho = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[celula]), caminho)
    corpo = relatorio.notebook_body(caminho)
    assert "CellTimeoutError: a célula passou do tempo limite e foi interrompida" in corpo, corpo[-2000:]
