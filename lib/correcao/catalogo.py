"""O que existe para corrigir: os notebooks de ``solutions/``, as células que valem nota e o esboço do aluno.

``solutions/`` é a fonte de tudo: os notebooks de aluno (``scripts/gerar_alunos.py``) e o curso do
nbgrader da correção saem dela com o mesmo esboço (:data:`CODE_STUB`, :data:`TEXT_STUB`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"

CODE_STUB = "# SEU CÓDIGO AQUI\nraise NotImplementedError(\"Exercício ainda não resolvido\")"
TEXT_STUB = "✍️ *Escreva a sua resposta aqui (dê dois cliques nesta célula para editar).*"


@dataclass
class Gradable:
    """Um notebook corrigível: a aula (tarefa do nbgrader), o nome e o que vale cada célula."""

    assignment: str
    notebook: str
    source: Path
    cells: dict = field(default_factory=dict)  # grade_id -> (tipo, pontos, automática?)

    @property
    def max_auto(self) -> float:
        return sum(p for _, p, auto in self.cells.values() if auto)

    @property
    def checks(self) -> list[str]:
        """``grade_id`` das verificações automáticas, na ordem do notebook."""
        return [gid for gid, (_, _, auto) in self.cells.items() if auto]

    def zero_scores(self) -> dict:
        """Zero em cada verificação automática (entrega que não pôde ser executada)."""
        return {gid: 0.0 for gid in self.checks}


def nbgrader_meta(cell) -> dict:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbg = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return nbg if isinstance(nbg, dict) else {}


def is_check(cell) -> bool:
    """Célula de verificação: código, vale nota, não é resposta do aluno."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def nbgrader_cells(nb: dict) -> dict:
    """grade_id -> (cell_type, pontos, automática?) das células que valem nota."""
    out = {}
    for cell in nb.get("cells", []):
        meta = nbgrader_meta(cell)
        if meta.get("grade"):
            out[meta["grade_id"]] = (cell.get("cell_type"), float(meta.get("points", 0)), is_check(cell))
    return out


def catalog(solutions: Path = SOLUTIONS) -> dict[tuple, Gradable]:
    """Todos os notebooks de ``solutions/``, por (aula, notebook)."""
    found: dict[tuple, Gradable] = {}
    for path in sorted(solutions.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            nb = json.loads(path.read_text(encoding="utf-8"))
            found[(path.parent.name, path.stem)] = Gradable(path.parent.name, path.stem, path, nbgrader_cells(nb))
    return found


def grade_ids(path: Path) -> set:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        return {nbgrader_meta(c).get("grade_id") for c in nb["cells"]} - {None}
    except Exception:  # noqa: BLE001 - arquivo quebrado: quem reclama é inspect_file
        return set()


def identify(everything: dict[tuple, Gradable], path: Path) -> Gradable | None:
    """Qual notebook do curso é ``path``: pelo nome e, se o nome existe em várias aulas (ex.:
    ``03-exercicios``), pela pasta da aula (``<aluno>/<aula>/<nb>.ipynb``) ou pelos ids de correção
    das células (únicos no curso). ``None`` se o nome não for de nenhum exercício ou projeto."""
    candidates = [g for g in everything.values() if g.notebook == path.stem]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    for g in candidates:
        if g.assignment in path.parts:
            return g
    ids = grade_ids(path)
    return max(candidates, key=lambda g: len(ids & set(g.cells)))  # empate: a primeira aula


def inspect_file(path: Path, expected: Gradable, everything: dict[tuple, Gradable]) -> str | None:
    """Motivo para não corrigir (arquivo vazio, não JSON, notebook de outra aula), ou ``None``."""
    raw = path.read_bytes()
    if not raw.strip():
        return "arquivo vazio"
    try:
        nb = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # JSON inválido, aninhado ou com números enormes de propósito
        return "o arquivo não é um notebook (não é JSON válido)"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "o arquivo é JSON, mas não é um notebook do Jupyter"
    ids = {nbgrader_meta(c).get("grade_id") for c in nb["cells"] if isinstance(c, dict)}
    ids.discard(None)
    if ids and not ids & set(expected.cells):
        other = [g for g in everything.values() if g is not expected and ids & set(g.cells)]
        return "notebook de outro exercício/aula" + (
            f" (parece ser {other[0].notebook} de {other[0].assignment})" if other else "")
    try:
        import warnings

        import nbformat

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # avisos do nbformat sobre ids de células: não são do professor
            nbformat.validate(nbformat.reads(raw.decode("utf-8"), as_version=4))
    except Exception as exc:  # noqa: BLE001
        return f"notebook com estrutura inválida ({type(exc).__name__})"
    return None


def student_version(solution):
    """Versão de aluno de um notebook de solução (cópia; o original não muda), com o esboço do curso."""
    import nbformat
    from nbgrader.preprocessors import ClearSolutions

    nb = nbformat.from_dict(solution)
    pre = ClearSolutions(code_stub={"python": CODE_STUB}, text_stub=TEXT_STUB, enforce_metadata=True)
    nb, _ = pre.preprocess(nb, {})
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


@functools.lru_cache(maxsize=None)
def original_cells(source: Path) -> dict:
    """Células da versão de aluno de ``source`` (a que o aluno recebeu), por ``grade_id``."""
    import nbformat

    return {nbgrader_meta(c).get("grade_id"): c for c in student_version(nbformat.read(source, as_version=4)).cells
            if nbgrader_meta(c).get("grade_id")}
