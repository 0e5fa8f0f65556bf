"""Uma aula nova só mexe nela mesma: numa cópia do curso, uma aula de exemplo com um exercício entra com três
arquivos (o notebook de solução, o módulo de verificações e o corpus) e tudo o que vem depois a acha sozinho.

São os passos de ``CONTRIBUTING.md`` ("Acrescentar uma aula"), na mesma ordem:

1. ``solutions/modulo-06/aula-09-exemplo/01-exercicios.ipynb``: o notebook de solução, com os metadados do
   nbgrader (célula de importações, célula de solução entre ``### BEGIN SOLUTION``/``### END SOLUTION``,
   célula de verificação com os pontos);
2. ``lib/atencao/checks/aula09.py``: a verificação;
3. ``tests/test_checks_aula09_corpus.py``: 3 respostas válidas e 8 erradas;
4. ``make alunos`` (o notebook do aluno sai da solução) e ``make executar`` (as saídas guardadas);
5. o nbval nos dois notebooks, o corpus (e a contagem de 3 válidas e 8 erradas por verificação), a estrutura
   dos notebooks (``tests/test_notebooks.py``) e a correção de uma turma de dois alunos, na caixa.

Nenhum outro arquivo da cópia muda: o teste confere isso no fim.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AULA = "aula-09-exemplo"

pytestmark = pytest.mark.lento  # copia o curso, executa notebooks e corrige dois alunos nas caixas

VERIFICACOES = '''"""Verificações da Aula 9 (exemplo): ``01-exercicios``."""

from __future__ import annotations

import numpy as np

from .framework import Checker, case_seed, check, protect

__all__ = ["exercicio_1"]


@check("Exercício 1 (pontuações escaladas)")
def exercicio_1(c: Checker, scores_fn):
    """Confere ``scores_fn(Q, K) -> S``, ``S = Q Kᵀ / √d_k`` com forma (n, m), em dois casos."""
    rng = np.random.default_rng(case_seed(9))  # casos fixos no notebook, sorteados na correção
    for n, m, d_k in c.cases([(3, 3, 4), (2, 5, 8)]):
        Q, K = rng.normal(size=(n, d_k)), rng.normal(size=(m, d_k))
        S = c.array(c.call("scores_fn", scores_fn, Q, K, names=("Q", "K")), "a função devolve uma matriz")
        if S is None:
            return
        if not c.expect(S.shape == (n, m), "S tem forma (n, m): uma linha por query, uma coluna por key",
                        (n, m), S.shape, "use Q @ K.T (não K @ Q.T)."):
            return
        if not c.expect(np.allclose(S, Q @ K.T / np.sqrt(d_k)), "S = Q Kᵀ / √d_k",
                        hint="divida Q @ K.T por np.sqrt(d_k), com d_k = Q.shape[1]."):
            return


protect()  # no fim do módulo: a foto da biblioteca, antes do código do aluno
'''

CORPUS = '''"""Corpus da Aula 9 (exemplo): 3 respostas válidas e 8 erradas."""

import corpus
import numpy as np

from atencao.checks import aula09


def certa(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def einsum(Q, K):
    return np.einsum("id,jd->ij", Q, K) / Q.shape[-1] ** 0.5


def lacos(Q, K):
    return np.array([[q @ k for k in K] for q in Q]) / np.sqrt(len(Q[0]))


def sem_escala(Q, K):
    return Q @ K.T


def divide_por_d_k(Q, K):
    return Q @ K.T / Q.shape[1]


def raiz_de_n(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[0])


def transposta(Q, K):
    return K @ Q.T / np.sqrt(Q.shape[1])


def com_softmax(Q, K):
    S = Q @ K.T / np.sqrt(Q.shape[1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def arredonda(Q, K):
    return np.round(Q @ K.T / np.sqrt(Q.shape[1]))


def so_a_primeira_linha(Q, K):
    return (Q @ K.T / np.sqrt(Q.shape[1]))[:1]


def produto_elemento_a_elemento(Q, K):
    return Q * K / np.sqrt(Q.shape[1])


VALIDAS = {aula09.exercicio_1: [certa, einsum, lacos]}
ERRADAS = {aula09.exercicio_1: [
    (sem_escala, "S = Q"), (divide_por_d_k, "S = Q"), (raiz_de_n, "S = Q"), (transposta, "S = Q"),
    (com_softmax, "S = Q"), (arredonda, "S = Q"), (so_a_primeira_linha, "forma (n, m)"),
    (produto_elemento_a_elemento, "forma (n, m)"),
]}

test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)
'''


def _nbgrader(grade_id: str, *, solution=False, grade=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _celula(tipo: str, fonte: str, metadados: dict | None = None) -> dict:
    c = {"cell_type": tipo, "id": hashlib.sha1(fonte.encode()).hexdigest()[:8], "metadata": metadados or {},
         "source": fonte}
    if tipo == "code":
        c.update(outputs=[], execution_count=None)
    return c


def notebook_de_solucao() -> dict:
    """O notebook de solução da aula de exemplo: importações, enunciado, solução e verificação."""
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                        "name": "python3"}, "language_info": {"name": "python"}},
            "cells": [
                _celula("markdown", "# Aula 9 (exemplo) — Exercícios"),
                _celula("code", "import numpy as np\nfrom atencao.checks import aula09",
                        _nbgrader("aula09-01-exercicios-importacoes")),
                _celula("markdown", "## Exercício 1 (prático)\n\nComplete `scaled_scores(Q, K)`: devolve "
                                    "$S = QK^\\top/\\sqrt{d_k}$, de forma `(n, m)`."),
                _celula("code", "def scaled_scores(Q, K):\n    ### BEGIN SOLUTION\n"
                                "    return Q @ K.T / np.sqrt(Q.shape[1])\n    ### END SOLUTION",
                        _nbgrader("aula09-ex1-solucao", solution=True)),
                _celula("code", "aula09.exercicio_1(scaled_scores)",
                        _nbgrader("aula09-ex1-verificacao", grade=True, points=2)),
            ]}


def _arquivos(raiz: Path) -> dict[str, str]:
    """Caminho → sha256 de cada arquivo do curso (o que o git acompanharia), para ver o que mudou."""
    saida = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=raiz, capture_output=True,
                           check=True).stdout.decode()
    return {p: hashlib.sha256((raiz / p).read_bytes()).hexdigest() for p in saida.split("\0")
            if p and (raiz / p).is_file()}


def _rodar(cmd: list, cwd: Path, env: dict, timeout: int = 600) -> str:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r.stdout


def _aluno(estudante: Path, codigo: str) -> dict:
    nb = json.loads(estudante.read_text(encoding="utf-8"))
    for c in nb["cells"]:
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "aula09-ex1-solucao":
            c["source"] = codigo
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
    return nb


def test_uma_aula_nova_com_tres_arquivos(tmp_path):
    if not shutil.which("git") or not (ROOT / ".git").exists():
        pytest.skip("precisa do curso num repositório git (para saber quais arquivos copiar)")
    copia = tmp_path / "curso"
    for rel in _arquivos(ROOT):
        destino = copia / rel
        destino.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, destino)
    subprocess.run(["git", "init", "-q"], cwd=copia, check=True)
    shutil.copy2(ROOT / ".gitignore", copia / ".gitignore")
    antes = _arquivos(copia)

    # os três arquivos da aula
    solucao = copia / "solutions" / "modulo-06" / AULA / "01-exercicios.ipynb"
    solucao.parent.mkdir(parents=True)
    solucao.write_text(json.dumps(notebook_de_solucao(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (copia / "lib" / "atencao" / "checks" / "aula09.py").write_text(VERIFICACOES, encoding="utf-8")
    (copia / "tests" / "test_checks_aula09_corpus.py").write_text(CORPUS, encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(copia / "lib")  # a biblioteca da cópia, não a instalada
    py = sys.executable
    # make alunos e make executar (só os dois notebooks novos)
    _rodar([py, "scripts/gerar_alunos.py"], copia, env)
    estudante = copia / "notebooks" / "modulo-06" / AULA / "01-exercicios.ipynb"
    assert estudante.exists()
    _rodar([py, "scripts/executar.py", solucao, estudante], copia, env)
    saida_sol = json.dumps(json.loads(solucao.read_text(encoding="utf-8")), ensure_ascii=False)
    saida_alu = json.dumps(json.loads(estudante.read_text(encoding="utf-8")), ensure_ascii=False)
    assert "tudo certo!" in saida_sol and "⏳" in saida_alu and "BEGIN SOLUTION" not in saida_alu

    # nbval nos dois, o corpus (com a contagem de todas as aulas) e a estrutura dos notebooks
    _rodar([py, "-m", "pytest", "-q", "-p", "no:randomly", "--basetemp", tmp_path / "pt",
            solucao.relative_to(copia), estudante.relative_to(copia),
            "tests/test_checks_aula09_corpus.py",
            "tests/test_checks_corpus.py::test_o_corpus_tem_3_validas_e_8_erradas_por_exercicio",
            "tests/test_notebooks.py", "-k", "not readme and not pagina_inicial"], copia, env)

    # a correção de uma turma de dois alunos, nas caixas (ou sem elas, onde o bwrap não roda)
    turma = tmp_path / "turma"
    for nome, codigo in (("ana", "def scaled_scores(Q, K):\n    return np.einsum('id,jd->ij', Q, K) / "
                                 "np.sqrt(K.shape[-1])"),
                         ("bruno", "def scaled_scores(Q, K):\n    return Q @ K.T")):
        (turma / nome).mkdir(parents=True)
        (turma / nome / "01-exercicios.ipynb").write_text(json.dumps(_aluno(estudante, codigo)), encoding="utf-8")
    saida = tmp_path / "correcao"
    from correcao import isolamento

    extra = [] if isolamento.bwrap_available() else ["--sem-isolamento"]
    _rodar([py, "scripts/corrigir.py", turma, "--saida", saida, *extra], copia, env)
    with open(saida / "notas.csv", encoding="utf-8", newline="") as f:
        linhas = {r["aluno"]: r for r in csv.DictReader(f)}
    assert {a: (linhas[a]["aula"], linhas[a]["situacao"], linhas[a]["total"], linhas[a]["maximo"])
            for a in linhas} == {"ana": (AULA, "ok", "2", "2"), "bruno": (AULA, "zero", "0", "2")}, linhas

    # nenhum arquivo do curso mudou, fora os da aula nova e os que saem dela (o notebook do aluno)
    depois = _arquivos(copia)
    mudou = {p for p in depois if antes.get(p) != depois[p]} | (set(antes) - set(depois))
    assert mudou == {f"solutions/modulo-06/{AULA}/01-exercicios.ipynb",
                     f"notebooks/modulo-06/{AULA}/01-exercicios.ipynb",
                     "lib/atencao/checks/aula09.py", "tests/test_checks_aula09_corpus.py"}, mudou
