"""Correção com o nbgrader: entrada em .zip, repetição, fonte do nbgrader, metadados, `make validar`,
a falta do bwrap e a varredura do código que mexe na correção.

(Separado de test_correcao.py para rodar em paralelo com a correção da turma inteira.)
"""

import csv
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from correcao import catalogo, isolamento, motor, varredura

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import turma_corrigida  # noqa: E402
from turma_exemplo import gerar  # noqa: E402


@pytest.fixture(scope="module")
def turma(tmp_path_factory):
    """A turma de exemplo extraída numa pasta temporária (para validar notebooks soltos)."""
    dest = tmp_path_factory.mktemp("turma")
    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        z.extractall(dest)
    return dest / "turma-exemplo"


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_zip_baguncado_da_as_mesmas_notas_que_a_turma_arrumada(tmp_path, turma, tmp_path_factory):
    """Uma turma como chega (zip do Windows, cópias, renomeado, célula colada, kernel que morre, caminho
    hostil): as mesmas linhas de notas.csv que os mesmos notebooks na turma arrumada (corrigida uma vez na
    sessão), sem caminhos temporários."""
    pacote = tmp_path / "turma.zip"
    membros = [("../fora.txt", b"tentativa de sair da pasta"), ("entregas/../../fuga.ipynb", b"{}")]
    alunos = ("bruno-parcial", "joao-arquivos-ruins", "sofia-duas-copias", "ulisses-celula-colada",
              "wagner-kernel-morre")
    for aluno in alunos:
        for f in sorted((turma / aluno).rglob("*")):
            if f.is_file():
                membros.append((f"entregas\\{aluno}\\{f.relative_to(turma / aluno)}", f.read_bytes()))
    membros.append(("entregas/rita/Exercicios-Copy1.IPYNB",
                    (turma / "rita-renomeados" / "03-exercicios-Copy1.ipynb").read_bytes()))
    pacote.write_bytes(gerar._zip(membros))
    motor.grade_class(pacote, tmp_path / "saida", cell_timeout=20, log=lambda *_: None)
    texto = (tmp_path / "saida" / "notas.csv").read_text(encoding="utf-8")
    assert "/tmp" not in texto and str(tmp_path) not in texto and "correcao-" not in texto
    linhas = {(r["aluno"], r["arquivo"]): r for r in csv.DictReader(io.StringIO(texto))}
    assert len(linhas) == 8
    arrumada = {(r["aluno"], r["arquivo"]): r for r in turma_corrigida.turma_corrigida(tmp_path_factory)["table"]}
    mesmas = {("rita", "Exercicios-Copy1.IPYNB"): ("rita-renomeados", "03-exercicios-Copy1.ipynb")}
    mesmas.update({k: k for k in linhas if k[0] in alunos})
    fora = ("aluno", "arquivo", "retorno", "motivo")
    for nossa, dela in mesmas.items():  # as colunas de pontos são as das aulas presentes em cada correção
        a, b = linhas[nossa], arrumada[dela]
        assert {k: v for k, v in a.items() if k not in fora} == {k: b.get(k) for k in a if k not in fora}, nossa
        assert all(b[k] == "" for k in b.keys() - a.keys()), nossa
    assert (linhas[("rita", "Exercicios-Copy1.IPYNB")]["situacao"],
            linhas[("rita", "Exercicios-Copy1.IPYNB")]["total"]) == ("ok", "4")
    assert linhas[("wagner-kernel-morre", "03-exercicios.ipynb")]["situacao"] == "kernel_morreu"
    assert not (tmp_path.parent / "fora.txt").exists()
    nao = (tmp_path / "saida" / "nao-corrigidos.csv").read_text(encoding="utf-8")
    assert "entregas/../../fuga.ipynb" in nao and "../fora.txt" in nao  # não lidos, mas listados


@pytest.mark.lento  # roda o generate_assignment do nbgrader sobre as soluções (make test-lento)
def test_solucoes_servem_de_fonte_ao_nbgrader_sem_edicao(tmp_path):
    """generate_assignment do nbgrader sobre solutions/ dá exatamente os notebooks de aluno do curso."""
    everything = catalogo.catalog()
    w = motor.Trabalhador(tmp_path, list(everything.values()), 0, isolamento.Limites(), False, 5, "teste")
    course = w.course
    for g in everything.values():
        release = json.loads((course / "release" / g.assignment / f"{g.notebook}.ipynb").read_text(encoding="utf-8"))
        ours = json.loads((ROOT / "notebooks" / g.source.relative_to(ROOT / "solutions")).read_text(encoding="utf-8"))
        assert ["".join(c["source"]) for c in release["cells"]] == ["".join(c["source"]) for c in ours["cells"]]


def test_ids_de_correcao_unicos_no_curso_e_metadados_completos():
    seen = {}
    for g in catalogo.catalog().values():
        nb = json.loads(g.source.read_text(encoding="utf-8"))
        kinds = set()
        for cell in nb["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader")
            if not meta:
                continue
            gid = meta["grade_id"]
            assert gid not in seen, f"grade_id repetido: {gid} em {g.notebook} e {seen[gid]}"
            seen[gid] = g.notebook
            if meta["grade"] and not meta["solution"]:
                kinds.add("teste")
                assert meta["locked"] and meta["points"] > 0 and cell["cell_type"] == "code"
            elif meta["solution"]:
                kinds.add("resposta" if cell["cell_type"] == "markdown" else "solucao")
            elif meta["locked"]:
                kinds.add("protegida")
        assert {"teste", "solucao", "protegida"} <= kinds, (g.notebook, kinds)


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_sem_bwrap_recusa_com_instrucao_e_sem_isolamento_marca_cada_linha(tmp_path, turma, monkeypatch):
    monkeypatch.setattr(isolamento.shutil, "which", lambda name: None)
    with pytest.raises(isolamento.SemBwrap, match="apt-get install bubblewrap"):
        motor.grade_class(turma, tmp_path / "saida", log=lambda *_: None)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "corrigir.py"), str(turma), "--saida",
                          str(tmp_path / "cli")], capture_output=True, text=True, env={"PATH": "/nada"})
    assert out.returncode == 3 and "bubblewrap" in out.stderr and "--sem-isolamento" in out.stderr
    assert not (tmp_path / "cli" / "notas.csv").exists()
    pasta = tmp_path / "uma"
    (pasta / "bruno-parcial").mkdir(parents=True)
    (pasta / "bruno-parcial" / "03-exercicios.ipynb").write_bytes(
        (turma / "bruno-parcial" / "03-exercicios.ipynb").read_bytes())
    rows = motor.grade_class(pasta, tmp_path / "saida", cell_timeout=10, isolar=False, log=lambda *_: None)
    assert [(r.total, r.isolation) for r in rows] == [(2.0, "sem_isolamento")]
    assert "sem_isolamento" in (tmp_path / "saida" / "notas.csv").read_text(encoding="utf-8")


def _editaveis(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code" and not catalogo.nbgrader_meta(c).get("locked")]


def test_varredura_nao_aponta_as_solucoes_nem_os_notebooks_do_curso():
    for path in sorted((ROOT / "solutions").rglob("*.ipynb")) + sorted((ROOT / "notebooks").rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        modulos = varredura.modulos_importados([c.source for c in nb.cells if c.cell_type == "code"])
        for src in _editaveis(nb):
            assert varredura.varrer(src, modulos) == [], (path.name, src[:200])


@pytest.mark.parametrize("nome", [n for n in gerar.TRAPACAS if n != "trapaca-imprime-aprovado"])
def test_varredura_aponta_cada_trapaca(nome):
    modulos = {"np", "atencao", "aula01", "os", "sys"}
    codigo = "\n".join(gerar.TRAPACAS[nome])
    assert varredura.varrer(codigo, modulos), nome


@pytest.mark.parametrize("codigo, trecho", [
    ("import builtins\nbuiltins.print = None", "builtins"),
    ("f = lambda: 0\nf.__code__ = (lambda: 1).__code__", "__code__"),
    ("import gc\n[o for o in gc.get_objects()]", "importa gc"),
    ("x = eval('1 + 1')", "usa eval"),
    ("!ls /", "comando de shell"),
    ("%env NBGRADER_EXECUTION=", "NBGRADER"),
    ("from atencao.checks import _core", "importa as verificações"),
    ("setattr(np, 'allclose', None)", "usa setattr"),
    ("import os\nos.kill(1, 9)", "os.kill"),
    ("import os\nfk = getattr(os, 'fo' + 'rk')", "nome calculado"),
    ("import os\ngetattr(os, 'environ')", "getattr(..., 'environ')"),
])
def test_varredura_aponta_tecnicas_de_trapaca(codigo, trecho):
    motivos = varredura.varrer(codigo, {"np", "os"})
    assert any(trecho in m for m in motivos), motivos


def test_varredura_nao_aponta_codigo_comum_de_aluno():
    comum = ("import numpy as np\nimport math\nfrom collections import Counter\n%timeit np.ones(3)\n"
             "def f(X, W):\n    Q = X @ W\n    Q /= math.sqrt(Q.shape[-1])\n    return Q\n"
             "class Camada:\n    def __init__(self):\n        self.W = np.eye(2)\n")
    assert varredura.varrer(comum, {"np", "math", "Counter"}) == []


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_arquivos_hostis_na_pasta_viram_linhas_e_nao_derrubam_a_correcao(tmp_path, turma):
    """Achados de um teste "como aluno": cada um derrubava a turma inteira (ou entregava as respostas)."""
    import os

    pasta = tmp_path / "entregas"
    casos = {
        "atalho-para-solucao": lambda p: p.symlink_to(ROOT / "solutions" / "modulo-06" / "aula-01-self-attention"
                                                     / "03-exercicios.ipynb"),
        "atalho-quebrado": lambda p: p.symlink_to("/nao/existe.ipynb"),
        "atalho-para-dev-zero": lambda p: p.symlink_to("/dev/zero"),
        "fifo": lambda p: os.mkfifo(p),
        "json-aninhado": lambda p: p.write_text("[" * 5000 + "]" * 5000),
        "numero-enorme": lambda p: p.write_text('{"cells": [], "nbformat": ' + "9" * 5000 + "}"),
    }
    for nome, fazer in casos.items():
        (pasta / nome).mkdir(parents=True)
        fazer(pasta / nome / "03-exercicios.ipynb")
    (pasta / "pasta-atalho").mkdir()
    (pasta / "pasta-atalho" / "solucoes").symlink_to(ROOT / "solutions")
    rows = {r.student: r for r in motor.grade_class(pasta, tmp_path / "saida", log=lambda *_: None)}
    for nome in casos:
        assert rows[nome].status == "arquivo_invalido" and rows[nome].total == 0, (nome, rows[nome])
    assert "atalho" in rows["atalho-para-solucao"].reasons[0]
    assert "não é um arquivo comum" in rows["fifo"].reasons[0]
    assert rows["pasta-atalho"].status == "sem_notebooks"
    assert (tmp_path / "saida" / "notas.csv").exists()
