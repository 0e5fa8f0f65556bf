"""Gera os notebooks de aluno a partir das soluções (a fonte única).

Para cada ``solutions/<caminho>.ipynb`` escreve ``notebooks/<caminho>.ipynb``: as regiões entre
``### BEGIN SOLUTION`` e ``### END SOLUTION`` são trocadas por um esboço em português pelo
pré-processador ``ClearSolutions`` do nbgrader, e as saídas são apagadas (``make executar`` as refaz).

Uso:
    python scripts/gerar_alunos.py           # regenera
    python scripts/gerar_alunos.py --check   # só confere: sai com 1 se algum aluno estiver desatualizado
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from correcao.catalogo import CODE_STUB, TEXT_STUB, student_version  # noqa: F401 (o esboço é um só)

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
NOTEBOOKS = ROOT / "notebooks"

def pairs():
    """(solução, aluno) para cada notebook de ``solutions/``."""
    for sol in sorted(SOLUTIONS.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in sol.parts:
            yield sol, NOTEBOOKS / sol.relative_to(SOLUTIONS)


def _sources(nb) -> list:
    return [(c.cell_type, c.source, c.get("metadata", {}).get("nbgrader"), c.get("metadata", {}).get("tags"))
            for c in nb.cells]


def stale() -> list[str]:
    """Notebooks de aluno que não correspondem à regeneração a partir da solução."""
    out = []
    for sol, stu in pairs():
        expected = student_version(nbformat.read(sol, as_version=4))
        if not stu.exists():
            out.append(f"{stu.relative_to(ROOT)}: não existe")
        elif _sources(nbformat.read(stu, as_version=4)) != _sources(expected):
            out.append(f"{stu.relative_to(ROOT)}: difere de {sol.relative_to(ROOT)} (rode `make alunos`)")
    return out


def generate() -> list[Path]:
    """Escreve os notebooks de aluno; devolve os que mudaram (só o código; saídas antigas somem)."""
    changed = []
    for sol, stu in pairs():
        new = student_version(nbformat.read(sol, as_version=4))
        if stu.exists() and _sources(nbformat.read(stu, as_version=4)) == _sources(new):
            continue
        stu.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(new, stu)
        changed.append(stu)
    return changed


if __name__ == "__main__":
    if "--check" in sys.argv:
        problems = stale()
        print("\n".join(problems) or "Notebooks de aluno em dia com as soluções.")
        sys.exit(1 if problems else 0)
    for path in generate():
        print(f"gerado: {path.relative_to(ROOT)}")
