"""A turma de exemplo corrigida **uma vez por execução dos testes**, compartilhada pelos arquivos de teste.

Corrigir a turma (dezenas de notebooks, cada um executado duas vezes numa caixa) é a parte demorada da
suíte. Com o ``pytest -n`` (xdist), cada arquivo roda num processo; o primeiro que pedir a correção a faz,
com uma trava de arquivo na pasta temporária comum da sessão, e os outros leem o resultado guardado.
"""

from __future__ import annotations

import csv
import hashlib
import os
import pickle
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from filelock import FileLock

from correcao import isolamento, motor

ROOT = Path(__file__).resolve().parents[1]
TURMA = ROOT / "tests" / "turma-exemplo.zip"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def repo_digest() -> dict:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True).stdout.split(b"\0")
    return {f: digest(ROOT / f.decode()) for f in files if f and (ROOT / f.decode()).is_file()}


def _corrigir(saida: Path) -> dict:
    before, repo_before = digest(TURMA), repo_digest()
    marca = secrets.token_hex(8)
    rows = motor.grade_class(TURMA, saida, cell_timeout=20, notebook_timeout=120, log=lambda *_: None, marca=marca,
                             guardar_notebooks=True)
    sobreviventes = isolamento.leftover_pids(marca)
    cgroups = [str(d) for d in isolamento.leftover_cgroups() if marca in d.name]
    notas = (saida / "notas.csv").read_bytes()
    outputs = sorted(str(p.relative_to(saida)) for p in saida.rglob("*"))
    time.sleep(3)  # um processo fantasma teria tempo de reescrever notas.csv
    with open(saida / "notas.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    return dict(saida=saida, rows=rows, table=table, before=before, repo_before=repo_before, notas=notas,
                outputs=outputs, sobreviventes=sobreviventes, cgroups=cgroups)


def turma_corrigida(tmp_path_factory) -> dict:
    """O resultado da correção da turma (``saida``, ``rows``, ``table``, ``notas``...), feita uma só vez."""
    if not isolamento.bwrap_available() and not os.environ.get("CI"):
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    comum = tmp_path_factory.getbasetemp().parent  # a mesma para todos os processos do xdist
    pasta = comum / "turma-corrigida"
    guardado = pasta / "resultado.pickle"
    with FileLock(str(comum / "turma-corrigida.lock")):
        # a pasta comum pode ser a de outra execução (um --basetemp fixo sem o xdist): uma correção guardada de
        # outra versão do curso ou da turma não vale, e é refeita
        valida = guardado.exists() and _mesma_versao(pickle.loads(guardado.read_bytes()))
        if not valida:
            shutil.rmtree(pasta / "saida", ignore_errors=True)
            (pasta / "saida").mkdir(parents=True, exist_ok=True)
            dados = _corrigir(pasta / "saida")
            guardado.write_bytes(pickle.dumps(dados))
    return pickle.loads(guardado.read_bytes())


def _mesma_versao(dados: dict) -> bool:
    return dados.get("before") == digest(TURMA) and dados.get("repo_before") == repo_digest()
