"""O que um professor encontrou ao corrigir uma turma só com o docs/professor.md: limites de tempo curtos demais,
uma pasta de saída que não se pode escrever, uma turma vazia, a correção anterior na mesma pasta, um zip cortado
e um notebook de outra disciplina com o nome de um do curso. Cada achado: a recusa (ou a revisão) com a causa,
antes de corrigir, em vez de uma turma de zeros ou de um erro em inglês no fim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import catalogo, isolamento, motor, planning, relatorio, scoring
from correcao import saida as saida_mod
from correcao.entregas import read_submissions
from correcao.politica import GradingPolicy
from correcao.relatorio import Row

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "corrigir.py"
AULA1 = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
TEMPOS = {"execucao": 6.24, "celulas": [("célula 3", "a", 0.4), ("célula 9", "b", 1.71), ("célula 12", "c", 0.2)]}


def _corrigir(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)


# ---------- limites de tempo menores que o tempo da solução ----------
def test_limites_menores_que_a_solucao_sao_recusados_com_os_tempos_medidos():
    with pytest.raises(motor.MachineFailure) as erro:
        motor._limits_fit(GradingPolicy(notebook_timeout=1, cell_timeout=1), TEMPOS)
    texto = str(erro.value)
    assert "--tempo-notebook 1 s, e a solução inteira levou 6,2 s" in texto, texto
    assert "--tempo-celula 1 s, e a célula 9 da solução levou 1,7 s" in texto, texto
    assert "todo aluno, mesmo o que acertou tudo, sairia tempo_esgotado" in texto and "nada foi escrito" in texto
    assert "sugestão: --tempo-notebook 60" in texto and "sugestão: --tempo-celula 10" in texto, texto
    with pytest.raises(motor.MachineFailure) as so_notebook:
        motor._limits_fit(GradingPolicy(notebook_timeout=5), TEMPOS)
    assert "--tempo-notebook 5 s" in str(so_notebook.value) and "--tempo-celula" not in str(so_notebook.value)
    # a solução sozinha cabe, mas sem folga: na correção, dois notebooks de uma vez passavam do limite (antes, com
    # TEMPO_CELULA=1 e uma célula de 0,8 s na prova, toda a turma saía tempo_esgotado)
    with pytest.raises(motor.MachineFailure) as sem_folga:
        motor._limits_fit(GradingPolicy(cell_timeout=3, notebook_timeout=12), TEMPOS)
    assert "ao menos 2 vezes o tempo da solução" in str(sem_folga.value), str(sem_folga.value)
    assert "--tempo-celula 3 s, e a célula 9" in str(sem_folga.value)
    assert "--tempo-notebook 12 s, e a solução inteira levou 6,2 s" in str(sem_folga.value)


def test_a_turma_comeca_ao_lado_da_prova_e_para_quando_ela_falha(tmp_path, monkeypatch):
    """A turma não espera a prova do começo (~2 s por correção); se a prova falha, a correção para ali, antes do fim
    da turma, e nenhuma nota sai."""
    import threading

    comecou = threading.Event()
    corrigidas = []
    original = motor.grade_parallel

    def contando(pool, plan, workers, check):
        corrigidas.append(len(plan))
        comecou.set()
        return original(pool, plan, workers, check)

    def prova_que_falha(*args, **kwargs):
        assert comecou.wait(60), "a turma esperou a prova"
        raise motor.MachineFailure("a prova falhou de propósito")

    monkeypatch.setattr(motor, "grade_parallel", contando)
    monkeypatch.setattr(motor, "preflight", prova_que_falha)
    dados = (ROOT / "solutions" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb").read_bytes()
    for k in range(6):
        (tmp_path / "turma" / f"aluno-{k}").mkdir(parents=True)
        (tmp_path / "turma" / f"aluno-{k}" / "03-exercicios.ipynb").write_bytes(dados)
    inicio = time.monotonic()
    with pytest.raises(motor.MachineFailure, match="de propósito"):
        motor.grade_class(tmp_path / "turma", tmp_path / "saida", GradingPolicy(isolate=False), log=lambda *_: None)
    assert corrigidas == [6] and not (tmp_path / "saida").exists()
    assert time.monotonic() - inicio < 60


def test_limites_que_cabem_a_solucao_passam():
    motor._limits_fit(GradingPolicy(), TEMPOS)
    motor._limits_fit(GradingPolicy(notebook_timeout=13, cell_timeout=4), TEMPOS)
    motor._limits_fit(GradingPolicy(notebook_timeout=1, cell_timeout=1), {})  # sem medida, nada a dizer


@pytest.mark.lento
@pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")
def test_tempo_notebook_de_1_s_para_antes_de_corrigir_com_o_codigo_4(tmp_path):
    """Antes: TEMPO_NOTEBOOK=1 dava tempo_esgotado a todos os alunos, com "(laço infinito?)" no motivo, e saía 0."""
    turma = tmp_path / "turma"
    (turma / "ana").mkdir(parents=True)
    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        (turma / "ana" / "03-exercicios.ipynb").write_bytes(z.read("turma-exemplo/ana-correta/03-exercicios.ipynb"))
    run = _corrigir(str(turma), "--saida", str(tmp_path / "saida"), "--tempo-notebook", "1", "--processos", "1")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "--tempo-notebook 1 s, e a solução inteira levou" in run.stderr, run.stderr
    assert not (tmp_path / "saida").exists()


# ---------- a pasta de saída ----------
def test_saida_que_e_um_arquivo_e_recusada_antes_de_corrigir(tmp_path):
    arquivo = tmp_path / "notas.txt"
    arquivo.write_text("minhas notas")
    for saida, trecho in ((arquivo, "é um arquivo, e não uma pasta"),
                          (arquivo / "correcao", "está dentro de “" + str(arquivo) + "”, que é um arquivo")):
        with pytest.raises(ValueError) as erro:
            saida_mod.writable_output(saida)
        assert trecho in str(erro.value) and "SAIDA (--saida)" in str(erro.value), str(erro.value)
    run = _corrigir(str(tmp_path), "--saida", str(arquivo))
    assert run.returncode == 2 and "é um arquivo, e não uma pasta" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and arquivo.read_text() == "minhas notas"


def test_saida_sem_permissao_e_recusada_sem_criar_nada(tmp_path, monkeypatch):
    # como root, a permissão não vale; aqui, o os.access responde como para outro usuário
    monkeypatch.setattr(saida_mod.os, "access", lambda p, modo: Path(p) != tmp_path / "somente-leitura")
    (tmp_path / "somente-leitura").mkdir()
    with pytest.raises(ValueError, match="sem permissão de escrita em “.*somente-leitura”"):
        saida_mod.writable_output(tmp_path / "somente-leitura" / "correcao" / "aula-1")
    assert list((tmp_path / "somente-leitura").iterdir()) == []
    saida_mod.writable_output(tmp_path / "outra" / "pasta")  # uma pasta nova, num lugar que se pode escrever
    assert not (tmp_path / "outra").exists()


def test_saida_dentro_da_pasta_das_entregas_e_recusada(tmp_path):
    """Antes, a segunda correção lia a pasta de saída como a entrega de um aluno "correcao" (sem_notebooks)."""
    (tmp_path / "turma" / "ana").mkdir(parents=True)
    for saida in (tmp_path / "turma" / "correcao", tmp_path / "turma"):
        with pytest.raises(ValueError, match="fica dentro da pasta das entregas"):
            saida_mod.writable_output(saida, [tmp_path / "turma"])
    saida_mod.writable_output(tmp_path / "correcao", tmp_path / "turma")  # ao lado: pode
    saida_mod.writable_output(tmp_path / "turma" / "correcao", tmp_path / "turma.zip")  # um zip não é lido de novo


# ---------- uma turma vazia ----------
def test_turma_sem_nenhuma_entrega_sai_com_erro_e_nao_escreve_nada(tmp_path):
    (tmp_path / "vazia" / "__MACOSX").mkdir(parents=True)
    (tmp_path / "vazia" / "__MACOSX" / "._x").write_bytes(b"x")
    run = _corrigir(str(tmp_path / "vazia"), "--saida", str(tmp_path / "saida"), "--sem-isolamento")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "nenhuma entrega encontrada (só 1 resto(s) do sistema, ignorados)" in run.stderr, run.stderr
    assert not (tmp_path / "saida").exists()
    # uma pasta de aluno só com restos do macOS também não é uma entrega (antes: a linha "ana sem_notebooks", código 0)
    (tmp_path / "vazia" / "ana").mkdir()
    (tmp_path / "vazia" / "ana" / "._03-exercicios.ipynb").write_bytes(b"x")
    run = _corrigir(str(tmp_path / "vazia"), "--saida", str(tmp_path / "saida"), "--sem-isolamento")
    assert run.returncode == 2 and "(só 1 pasta(s) de aluno vazia(s) e 2 resto(s) do sistema" in run.stderr, run.stderr


# ---------- a correção anterior na mesma pasta ----------
def test_a_correcao_anterior_vai_para_anteriores_e_o_resto_da_pasta_fica(tmp_path):
    saida = tmp_path / "saida"
    assert saida_mod.keep_previous(saida) is None  # nada antes
    (saida / "retorno" / "ana").mkdir(parents=True)
    (saida / "notas.csv").write_text("aula 1")
    (saida / "retorno" / "ana" / "x.html").write_text("retorno da aula 1")
    (saida / "turma-aula-01.csv").write_text("hub")
    (saida / "minha-planilha.ods").write_text("do professor")
    quando = time.mktime((2026, 3, 2, 14, 5, 9, 0, 0, -1))
    os.utime(saida / "notas.csv", (quando, quando))
    primeira = saida_mod.keep_previous(saida)
    assert primeira == saida / "anteriores" / "2026-03-02-140509"
    assert (primeira / "notas.csv").read_text() == "aula 1"
    assert (primeira / "retorno" / "ana" / "x.html").read_text() == "retorno da aula 1"
    assert (primeira / "turma-aula-01.csv").exists() and not (saida / "notas.csv").exists()
    assert (saida / "minha-planilha.ods").read_text() == "do professor"
    (saida / "notas.csv").write_text("aula 2")
    os.utime(saida / "notas.csv", (quando, quando))  # a mesma data: outra pasta, nunca por cima
    segunda = saida_mod.keep_previous(saida)
    assert segunda == saida / "anteriores" / "2026-03-02-140509-2" and (segunda / "notas.csv").read_text() == "aula 2"
    assert (primeira / "notas.csv").read_text() == "aula 1"



def test_o_que_um_ava_escreve_vai_para_anteriores(tmp_path):
    """O que cada AVA declara em ``LMSExporter.outputs`` está na lista de ``correcao.saida`` (um AVA novo que a
    esquecer falha aqui), e vai para ``anteriores/`` com a planilha do Moodle e a parte de uma turma dividida."""
    from correcao.exporters import exporters

    for exporter in exporters():
        assert exporter.outputs and set(exporter.outputs) <= set(saida_mod.OUTPUT_NAMES), exporter.name
    saida = tmp_path / "saida"
    saida.mkdir()
    nomes = ("notas.csv", "parte.json", "moodle-notas.csv", "moodle-retornos.zip", "similaridade.html")
    for nome in (*nomes, "minha-planilha.ods"):
        (saida / nome).write_text(nome)
    guardada = saida_mod.keep_previous(saida)
    assert sorted(p.name for p in guardada.iterdir()) == sorted(nomes)
    assert [p.name for p in saida.iterdir() if p.is_file()] == ["minha-planilha.ods"]


# ---------- um zip cortado ----------
def test_zip_cortado_no_meio_diz_que_esta_danificado(tmp_path):
    inteiro = tmp_path / "turma.zip"
    with zipfile.ZipFile(inteiro, "w") as z:
        z.writestr("ana/03-exercicios.ipynb", json.dumps({"cells": []}) * 200)
    cortado = tmp_path / "turma-baixada.zip"
    cortado.write_bytes(inteiro.read_bytes()[: inteiro.stat().st_size // 2])
    with pytest.raises(SystemExit) as erro:
        read_submissions(cortado, tmp_path / "tmp")
    assert "“turma-baixada.zip” está incompleto ou danificado (o download parou no meio?)" in str(erro.value)
    texto = tmp_path / "notas.txt"
    texto.write_text("não é zip")
    with pytest.raises(SystemExit, match="não é nenhum dos dois"):
        read_submissions(texto, tmp_path / "tmp")
    run = _corrigir(str(cortado), "--saida", str(tmp_path / "saida"), "--sem-isolamento")
    assert run.returncode == 2 and run.stderr.startswith("Erro: ENTREGAS: o zip “turma-baixada.zip” está incompleto")
    assert not (tmp_path / "saida").exists()


# ---------- um notebook de outra disciplina com o nome de um do curso ----------
def _notebook(*codigos: str) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
                      for c in codigos]}


def test_notebook_so_com_o_nome_do_curso_vai_para_revisao():
    outro = _notebook("import pandas as pd", "df = pd.read_csv('vendas.csv')\ndf.describe()")
    motivo = planning.foreign_reason(outro, AULA1, "bia/03-exercicios.ipynb")
    assert "“bia/03-exercicios.ipynb” tem o nome de 03-exercicios (aula-01-self-attention)" in motivo, motivo
    curso = json.loads(AULA1.source.read_text(encoding="utf-8"))
    assert planning.foreign_reason(curso, AULA1, "ana/03-exercicios.ipynb") == ""
    assert planning.foreign_reason(_notebook("", "  "), AULA1, "caio/03-exercicios.ipynb") == ""  # vazio: zero
    for situacao, esperada in (("zero", "revisar"), ("parcial", "revisar"), ("ok", "ok")):
        row = Row("bia", AULA1.assignment, AULA1.notebook, total=0.0, maximum=4.0, status=situacao,
                  reasons=["células protegidas apagadas voltaram"])
        scoring.foreign_notebook(row, motivo)
        assert row.status == esperada and (row.reasons[0] == motivo) == (esperada == "revisar"), row


# ---------- o retorno diz o nome de cada verificação como no notebook ----------
def test_o_quadro_de_pontos_do_retorno_mostra_o_titulo_da_secao_de_cada_verificacao():
    row = Row("ana", AULA1.assignment, AULA1.notebook, scores={"aula01-ex3-verificacao": 2.0,
                                                              "aula01-ex4-verificacao": 0.0}, total=2.0, maximum=4.0)
    pagina = relatorio.feedback_html(row, AULA1)
    assert ("<td>Exercício 3 (prático): pulou e alto parecidos <code>aula01-ex3-verificacao</code></td><td>2</td>"
            in pagina), pagina[:3000]
    assert "<td>Exercício 4 (prático): projeções para Q, K e V <code>aula01-ex4-verificacao</code></td>" in pagina


# ---------- memória pequena demais para a aula: memória esgotada, e não "trapaça" ----------
def test_memoryerror_na_conferencia_e_memoria_esgotada_e_nao_revisao():
    """Com MEMORIA=300, a Aula 3 (o modelo carregado) dava 0 e revisar, com "passou no notebook, mas falhou na
    conferência independente": o texto das trapaças pegas, para um aluno que acertou tudo."""
    from correcao.execution import ExecutionResult

    aula3 = catalogo.catalog()[("aula-03-atencao-num-transformer-real", "03-exercicios")]
    pontos = {gid: float(aula3.cells[gid][1]) for gid in aula3.checks}
    row = Row("olga", aula3.assignment, aula3.notebook, scores=dict(pontos), maximum=sum(pontos.values()))
    res = ExecutionResult(verdicts={gid: (False, "MemoryError: Unable to allocate 576. KiB") for gid in aula3.checks})
    scoring.apply_verification(aula3, row, res)
    assert row.status == "memoria_esgotada" and row.total == 0, row
    texto = " | ".join(row.reasons)
    assert "passou no notebook" not in texto and "memória esgotada na conferência de aula03-ex1-verificacao" in texto
    assert "--memoria" in texto, texto


def test_o_relatorio_que_a_conferencia_nao_terminou_aparece_como_erro_na_celula(monkeypatch):
    from correcao import _veredito

    def sem_memoria(*args):
        raise MemoryError("Unable to allocate 576. KiB")

    monkeypatch.setattr(_veredito, "notebook_report", sem_memoria)
    monkeypatch.setattr(_veredito, "_judge", lambda *a: (False, "MemoryError: Unable to allocate", "grading_error", []))
    veredito, _ = _veredito._verdict({"grade_id": "aula01-ex3-verificacao"}, {}, None, None, 20.0, True)
    (saida,) = veredito["saidas"]
    assert saida["output_type"] == "error" and saida["ename"] == "MemoryError", saida
    assert "a conferência não terminou esta verificação" in saida["traceback"][0]


def test_as_mensagens_da_caixa_saem_em_portugues():
    from atencao.checks.errors import translate

    assert translate("Unable to allocate 576. KiB for an array with shape (384, 384) and data type float32") == (
        "sem memória para um array de 576. KiB (forma (384, 384), float32): o processo passou do limite de memória")
    # a raiz da caixa é somente leitura (com e sem root): quem grava em ../../ lê isto, e não o inglês do sistema
    assert translate("[Errno 30] Read-only file system: '../../INVADIDO.txt'") == (
        "sem permissão para gravar em '../../INVADIDO.txt' (a correção só deixa gravar na pasta do notebook)")


def test_memoria_do_notebook_esgotada_aponta_a_celula_em_curso():
    """No pod (bwrap+rlimit), o vigia mata o notebook inteiro: a situação dizia a célula seguinte à última que
    terminou (um título, a célula 3), e não a que rodava (o laço de fork, a célula 4)."""
    import nbformat

    from correcao import execution

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y = 2"),
                                         nbformat.v4.new_markdown_cell("## Exercício 1"),
                                         nbformat.v4.new_code_cell("import os\nwhile True: os.fork()")])
    res = execution.ExecutionResult()
    execution._classify_kernel_outcome(nb, {0, 1}, "kernel_morreu:3", False, True, res)
    assert res.outcome == "memoria_esgotada" and res.notebook_memory and res.where.startswith("célula 4"), res.where
    sem_anuncio = execution.ExecutionResult()
    execution._classify_kernel_outcome(nb, {0, 1}, None, False, True, sem_anuncio)
    assert sem_anuncio.where.startswith("célula 3"), sem_anuncio.where


def test_a_recusa_dos_limites_diz_as_opcoes_de_quem_chamou(monkeypatch):
    """Pelo python (no pod, sem make), a recusa dizia "TEMPO_CELULA= e TEMPO_NOTEBOOK= no make corrigir"."""
    monkeypatch.delenv("MAKELEVEL", raising=False)
    with pytest.raises(motor.MachineFailure) as pelo_python:
        motor._limits_fit(GradingPolicy(notebook_timeout=1, cell_timeout=1), TEMPOS)
    assert "com --tempo-celula e --tempo-notebook maior(es), ou sem" in str(pelo_python.value)
    assert "make" not in str(pelo_python.value)
    monkeypatch.setenv("MAKELEVEL", "1")
    with pytest.raises(motor.MachineFailure) as pelo_make:
        motor._limits_fit(GradingPolicy(notebook_timeout=1, cell_timeout=1), TEMPOS)
    assert "com TEMPO_CELULA= e TEMPO_NOTEBOOK= maior(es) no make corrigir" in str(pelo_make.value)
