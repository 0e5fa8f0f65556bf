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

from correcao.catalogo import (  # noqa: F401 (o esboço é um só)
    CODE_STUB,
    DIGEST_KEY,
    TEXT_STUB,
    solution_digest,
    student_version,
)

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
            for c in nb.cells] + [nb.metadata.get("curso", {}).get(DIGEST_KEY)]


def _student(sol: Path):
    """A versão de aluno da solução ``sol``, com a impressão digital dela (a correção lê as células de aluno daqui,
    sem o nbgrader, enquanto ela bate: ``correcao.catalogo.committed_student_copy``)."""
    solucao = nbformat.read(sol, as_version=4)
    nb = student_version(solucao)
    nb.metadata.setdefault("curso", {})[DIGEST_KEY] = solution_digest(solucao)
    return nb


def stale() -> list[str]:
    """Notebooks de aluno que não correspondem à regeneração a partir da solução."""
    out = []
    for sol, stu in pairs():
        expected = _student(sol)
        if not stu.exists():
            out.append(f"{stu.relative_to(ROOT)}: não existe")
        elif _sources(nbformat.read(stu, as_version=4)) != _sources(expected):
            out.append(f"{stu.relative_to(ROOT)}: difere de {sol.relative_to(ROOT)} (rode `make alunos`)")
    return out


def generate() -> list[Path]:
    """Escreve os notebooks de aluno; devolve os que mudaram (só o código; saídas antigas somem)."""
    changed = []
    for sol, stu in pairs():
        new = _student(sol)
        atual = nbformat.read(stu, as_version=4) if stu.exists() else None
        if atual is not None and _sources(atual) == _sources(new):
            continue
        if atual is not None and _sources(atual)[:-1] == _sources(new)[:-1]:  # só a impressão digital: as saídas ficam
            atual.metadata.setdefault("curso", {})[DIGEST_KEY] = new.metadata["curso"][DIGEST_KEY]
            nbformat.write(atual, stu)
            changed.append(stu)
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
