"""Cada versão anterior de cada notebook do curso, resolvida por um aluno honesto: ``tests/versoes-antigas.zip``.

As versões são as de ``lib/correcao/versoes_antigas.json`` (``scripts/versoes_antigas.py``). Para cada uma,
o notebook de aluno do último commit daquela versão (``git show <commit>:notebooks/...``), com as respostas
das soluções do mesmo commit escritas com outra forma (:func:`gerar.resposta_a_mao`). O zip fica guardado no
repositório: o clone da CI pode ser raso, sem o histórico. ``make turma-exemplo`` o regenera (com o histórico).
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

from correcao import nomes_antigos
from turma_exemplo import gerar

ROOT = Path(__file__).resolve().parents[2]
ZIP = ROOT / "tests" / "versoes-antigas.zip"


def raso() -> bool:
    """O clone não tem o histórico do git (CI com ``--depth``)?"""
    out = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True)
    return out.returncode != 0 or out.stdout.strip() != "false"


def _show(commit: str, caminho: str) -> dict:
    texto = subprocess.run(["git", "show", f"{commit}:{caminho}"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout
    return json.loads(texto)


def aluno(versao: nomes_antigos.Versao) -> str:
    """O "aluno" de uma versão no zip: o commit e a aula (``6b382f60-aula-02``)."""
    return f"{versao.commits[1][:8]}-{versao.aula[:7]}"


def resolvidos() -> dict[tuple[str, str], dict]:
    """(aluno, arquivo) -> o notebook de aluno de cada versão anterior, resolvido (precisa do histórico)."""
    out = {}
    for v in nomes_antigos.versoes():
        commit = v.commits[1]
        nb = _show(commit, f"notebooks/{v.caminho}")
        sol = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
               for c in _show(commit, f"solutions/{v.caminho}")["cells"]}
        nb = copy.deepcopy(nb)
        for c in nb["cells"]:
            meta = c.get("metadata", {}).get("nbgrader", {})
            if meta.get("solution") and meta.get("grade_id") in sol:
                c["source"] = gerar.resposta_a_mao("".join(sol[meta["grade_id"]]["source"]), c["cell_type"])
        out[(aluno(v), f"{v.notebook}.ipynb")] = gerar.clean(nb)
    return out


def conteudo() -> bytes:
    membros = [(f"versoes-antigas/{a}/{arquivo}", gerar._bytes(nb)) for (a, arquivo), nb in sorted(resolvidos().items())]
    return gerar._zip(membros)


def guardado(a: str, arquivo: str) -> dict:
    """Um notebook do zip guardado (sem precisar do histórico do git)."""
    import zipfile

    with zipfile.ZipFile(ZIP) as z:
        return json.loads(z.read(f"versoes-antigas/{a}/{arquivo}"))


def write(dest: Path = ZIP) -> Path:
    dest.write_bytes(conteudo())
    return dest
