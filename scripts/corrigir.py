"""Correção automática de uma turma com o nbgrader: ``notas.csv`` e um retorno em HTML por aluno e notebook.

Uso (ou ``make corrigir ENTREGAS=... [SAIDA=...]``):

    python scripts/corrigir.py ENTREGAS [--saida PASTA] [--tempo-celula S] [--tempo-notebook S]

``ENTREGAS`` é uma pasta (ou um ``.zip``) no formato do próprio nbgrader: ``<aluno>/<notebook>.ipynb``,
com os notebooks de exercício e de projeto de qualquer aula (o nome do arquivo diz a aula).

Como funciona:

1. monta um curso nbgrader descartável numa pasta temporária, com ``solutions/`` como ``source/``
   (uma tarefa por aula) e roda ``nbgrader generate_assignment``;
2. para cada aluno e notebook: confere o arquivo (JSON válido? é desta aula?), copia-o para
   ``submitted/`` e roda ``nbgrader autograde`` só nele, num processo com tempo limite; o aluno
   roda numa cópia, numa pasta temporária: as entregas nunca são modificadas;
3. lê as notas no banco do nbgrader e escreve ``notas.csv`` (pontos por exercício, total, máximo,
   situação e motivo) e ``retorno/<aluno>/<notebook>.html`` em português.

Nada para no meio: uma entrega quebrada vira uma linha com o motivo.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gerar_alunos import CODE_STUB, TEXT_STUB  # noqa: E402  (o mesmo esboço dos notebooks de aluno)

COURSE_ID = "self-attention-do-zero"
CSV_FIXED = ["aluno", "aula", "notebook"]
CSV_TAIL = ["total", "maximo", "correcao_manual_pendente", "situacao", "motivo"]


# ---------- o que existe para corrigir ----------
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

    def zero_scores(self) -> dict:
        """Zero em cada verificação automática (entrega que não pôde ser executada)."""
        return {gid: 0.0 for gid, (_, _, auto) in self.cells.items() if auto}


def nbgrader_cells(nb: dict) -> dict:
    """grade_id -> (cell_type, pontos, automática?) das células que valem nota."""
    out = {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if meta.get("grade"):
            auto = cell.get("cell_type") == "code" and not meta.get("solution")
            out[meta["grade_id"]] = (cell.get("cell_type"), float(meta.get("points", 0)), auto)
    return out


def catalog() -> dict[tuple, Gradable]:
    """Todos os notebooks de ``solutions/``, por (aula, notebook)."""
    found: dict[tuple, Gradable] = {}
    for path in sorted(SOLUTIONS.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            nb = json.loads(path.read_text(encoding="utf-8"))
            found[(path.parent.name, path.stem)] = Gradable(path.parent.name, path.stem, path, nbgrader_cells(nb))
    return found


def _grade_ids(path: Path) -> set:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        return {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb["cells"]} - {None}
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
    ids = _grade_ids(path)
    return max(candidates, key=lambda g: len(ids & set(g.cells)))  # empate: a primeira aula


# ---------- o curso nbgrader descartável ----------
def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "NBGRADER_EXECUTION")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # nbgrader chama `alembic`
    env.update(extra or {})
    return env


def build_course(tmp: Path, gradables: list[Gradable], cell_timeout: int) -> Path:
    course = tmp / "curso-nbgrader"  # um por processo de correção
    (course / "source").mkdir(parents=True)
    config = f"""c = get_config()
c.CourseDirectory.course_id = {COURSE_ID!r}
c.CourseDirectory.root = {str(course)!r}
c.ClearSolutions.code_stub = {{"python": {CODE_STUB!r}}}
c.ClearSolutions.text_stub = {TEXT_STUB!r}
c.Execute.timeout = {int(cell_timeout)}
c.Execute.interrupt_on_timeout = True
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 50
"""
    (course / "nbgrader_config.py").write_text(config, encoding="utf-8")
    for assignment in sorted({g.assignment for g in gradables}):
        (course / "source" / assignment).mkdir()
        for g in gradables:
            if g.assignment == assignment:
                shutil.copy(g.source, course / "source" / assignment / f"{g.notebook}.ipynb")
        run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force"],
                             cwd=course, env=_env(), capture_output=True, text=True)
        if run.returncode:
            raise SystemExit(f"nbgrader generate_assignment falhou para {assignment}:\n{run.stdout[-2000:]}"
                             f"{run.stderr[-2000:]}")
    return course


# ---------- entregas ----------
def open_submissions(path: Path, tmp: Path) -> Path:
    """Pasta com ``<aluno>/<notebook>.ipynb``; um .zip é extraído numa pasta temporária."""
    if not path.exists():
        raise SystemExit(f"ENTREGAS não existe: {path}")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SystemExit(f"ENTREGAS precisa ser uma pasta ou um .zip: {path}")
        dest = tmp / "entregas"
        with zipfile.ZipFile(path) as z:
            for member in z.infolist():  # sem caminhos absolutos nem "..": nada sai da pasta
                target = (dest / member.filename).resolve()
                if dest.resolve() not in target.parents and target != dest.resolve():
                    continue
                z.extract(member, dest)
        path = dest
        entries = [p for p in path.iterdir() if not p.name.startswith(("__MACOSX", "."))]
        if len(entries) == 1 and entries[0].is_dir() and not any(entries[0].glob("*.ipynb")):
            path = entries[0]  # zip com uma pasta-raiz (ex.: entregas/aluno/...)
    return path


def students(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


# ---------- uma correção ----------
@dataclass
class Row:
    student: str
    assignment: str
    notebook: str
    scores: dict = field(default_factory=dict)
    total: float = 0.0
    maximum: float = 0.0
    manual_pending: int = 0
    status: str = "ok"
    reasons: list = field(default_factory=list)
    autograded: Path | None = None

    def csv(self, columns: list[str]) -> dict:
        out = {"aluno": self.student, "aula": self.assignment, "notebook": self.notebook,
               "total": _num(self.total), "maximo": _num(self.maximum),
               "correcao_manual_pendente": self.manual_pending, "situacao": self.status,
               "motivo": " | ".join(self.reasons)}
        out.update({c: _num(self.scores[c]) if c in self.scores else "" for c in columns})
        return out


def _num(x) -> str:
    return "" if x is None else (str(int(x)) if float(x).is_integer() else f"{x:.2f}")


def inspect_file(path: Path, expected: Gradable, everything: dict[tuple, Gradable]) -> str | None:
    """Motivo para não corrigir (arquivo vazio, não JSON, notebook de outra aula), ou ``None``."""
    raw = path.read_bytes()
    if not raw.strip():
        return "arquivo vazio"
    try:
        nb = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "o arquivo não é um notebook (não é JSON válido)"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "o arquivo é JSON, mas não é um notebook do Jupyter"
    ids = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb["cells"] if isinstance(c, dict)}
    ids.discard(None)
    if ids and not ids & set(expected.cells):
        other = [g for g in everything.values() if g is not expected and ids & set(g.cells)]
        return "notebook de outro exercício/aula" + (
            f" (parece ser {other[0].notebook} de {other[0].assignment})" if other else "")
    try:
        import nbformat

        nbformat.validate(nbformat.reads(raw.decode("utf-8"), as_version=4))
    except Exception as exc:  # noqa: BLE001
        return f"notebook com estrutura inválida ({type(exc).__name__})"
    return None


def grade_one(course: Path, g: Gradable, student: str, submitted: Path, notebook_timeout: float) -> Row:
    row = Row(student, g.assignment, g.notebook, maximum=g.max_auto)
    dest = course / "submitted" / student / g.assignment
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(submitted, dest / f"{g.notebook}.ipynb")
    cmd = [sys.executable, "-m", "nbgrader", "autograde", g.assignment, f"--student={student}",
           f"--notebook={g.notebook}", "--create", "--force"]
    try:
        run = subprocess.run(cmd, cwd=course, env=_env(), capture_output=True, text=True, timeout=notebook_timeout)
        log = run.stdout + run.stderr
    except subprocess.TimeoutExpired:
        row.status, row.scores = "tempo_esgotado", g.zero_scores()
        row.reasons.append(f"o notebook passou de {notebook_timeout:.0f} s no total e foi interrompido")
        return row
    autograded = course / "autograded" / student / g.assignment / f"{g.notebook}.ipynb"
    if run.returncode or not autograded.exists():
        row.status = "erro_na_correcao"
        row.scores = g.zero_scores()
        row.reasons.append("o nbgrader não conseguiu corrigir: " + _last_error(log))
        return row
    keep = course.parent / "corrigidos" / student / f"{g.notebook}.ipynb"  # o --force da próxima correção apagaria
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(autograded, keep)
    row.autograded = keep
    _read_scores(course, g, row)
    _explain(autograded, g, row, log)
    return row


def _last_error(log: str) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and "IPKernelApp" not in ln]
    errors = [ln for ln in lines if "ERROR" in ln or "Error" in ln]
    return (errors or lines or ["sem detalhes"])[-1][:300]


def _read_scores(course: Path, g: Gradable, row: Row) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(g.notebook, g.assignment, row.student)
        for grade in nb.grades:
            _, points, auto = g.cells[grade.name]
            if auto:
                row.scores[grade.name] = grade.auto_score or 0.0
            elif grade.needs_manual_grade:
                row.manual_pending += 1
    row.total = sum(row.scores.values())


def _explain(autograded: Path, g: Gradable, row: Row, log: str) -> None:
    """Motivos legíveis: verificações que falharam, células removidas ou alteradas, tempo esgotado."""
    nb = json.loads(autograded.read_text(encoding="utf-8"))
    present = set()
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        present.add(gid)
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            ename, evalue = out.get("ename", ""), (out.get("evalue") or "").splitlines()
            first = re.sub(r"\(\d+\.py, line (\d+)\)", r"(linha \1)", evalue[0][:200]) if evalue else ""
            if ename in ("CellTimeoutError", "KeyboardInterrupt") or "timeout" in first.lower():
                row.reasons.append(f"{gid or 'célula do aluno'}: tempo esgotado, execução interrompida (laço infinito?)")
            elif gid in g.cells:
                row.reasons.append(f"{gid}: {first or ename}")
            else:
                row.reasons.append(f"{gid or 'célula do aluno'}: erro {ename}: {first}")
    for gid, (_, _, auto) in g.cells.items():
        if auto and gid not in present:
            row.reasons.append(f"{gid}: célula de verificação apagada ou sem os metadados de correção (0 pontos)")
            row.scores[gid] = 0.0
    if "has changed" in log:
        row.reasons.append("células protegidas ou de verificação foram alteradas; a correção usou as originais")
    row.total = sum(row.scores.values())
    row.status = "ok" if row.total >= row.maximum else ("parcial" if row.total > 0 else "zero")
    row.reasons = list(dict.fromkeys(row.reasons))


def failed_row(student: str, g: Gradable | None, notebook: str, status: str, reason: str) -> Row:
    if g is None:
        return Row(student, "", notebook, status=status, reasons=[reason])
    return Row(student, g.assignment, g.notebook, scores=g.zero_scores(),
               maximum=g.max_auto, status=status, reasons=[reason])


# ---------- retorno em HTML ----------
def feedback_html(row: Row, g: Gradable | None) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(gid)}</td><td>{_num(row.scores.get(gid))}</td><td>{_num(points)}</td></tr>"
        for gid, (_, points, auto) in (g.cells.items() if g else []) if auto)
    reasons = "".join(f"<li>{esc(r)}</li>" for r in row.reasons) or "<li>Nenhum problema encontrado.</li>"
    manual = (f"<p>{row.manual_pending} resposta(s) escrita(s) aguardam a correção do professor.</p>"
              if row.manual_pending else "")
    body = ""
    if row.autograded and row.autograded.exists():
        body = _notebook_body(row.autograded)
    status = {"ok": "tudo certo", "parcial": "parcialmente correto", "zero": "nenhuma verificação passou",
              "tempo_esgotado": "tempo esgotado", "erro_na_correcao": "não foi possível corrigir",
              "arquivo_invalido": "arquivo inválido", "notebook_errado": "notebook de outro exercício",
              "sem_notebooks": "nenhum notebook entregue", "desconhecido": "notebook desconhecido"}
    return f"""<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>Retorno: {esc(row.student)} · {esc(row.notebook)}</title>
<style>
body {{font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222}}
table {{border-collapse: collapse}} td, th {{border: 1px solid #ccc; padding: .3rem .7rem; text-align: left}}
.resumo {{background: #f4f7fb; border-left: 4px solid #3b6ea8; padding: .5rem 1rem; margin-bottom: 1.5rem}}
.nota {{font-size: 1.4rem; font-weight: bold}}
</style></head><body>
<h1>Retorno da correção automática</h1>
<div class="resumo">
<p><b>Aluno(a):</b> {esc(row.student)} · <b>Aula:</b> {esc(row.assignment or '—')} · <b>Notebook:</b> {esc(row.notebook)}</p>
<p class="nota">Nota automática: {_num(row.total)} de {_num(row.maximum)} · situação: {esc(status.get(row.status, row.status))}</p>
{manual}
<table><tr><th>Verificação</th><th>Pontos</th><th>Máximo</th></tr>{rows}</table>
<h3>O que a correção encontrou</h3><ul>{reasons}</ul>
</div>
{body}
</body></html>
"""


def _notebook_body(path: Path) -> str:
    """O notebook corrigido, convertido para HTML pelo nbconvert (saídas das verificações incluídas)."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="basic")
    body, _ = exporter.from_notebook_node(nbformat.read(path, as_version=4))
    return "<h2>O seu notebook, como foi executado na correção</h2>\n" + body


# ---------- tudo junto ----------
def _grade_parallel(tmp: Path, plan: list, cell_timeout: int, notebook_timeout: float, workers: int,
                    log) -> list[Row]:
    """Corrige o plano em ``workers`` cursos nbgrader independentes (um banco de notas cada), em paralelo."""
    from concurrent.futures import ThreadPoolExecutor

    if not plan:
        return []
    by_student: dict[str, list] = {}
    for item in plan:
        by_student.setdefault(item[0], []).append(item)
    groups = [[] for _ in range(max(1, min(workers, len(by_student))))]
    for k, items in enumerate(by_student.values()):  # o mesmo aluno sempre no mesmo curso
        groups[k % len(groups)].extend(items)

    def run(k: int, items: list) -> list[Row]:
        needed = sorted({id(g): g for _, g, _ in items}.values(), key=lambda g: (g.assignment, g.notebook))
        course = build_course(tmp / f"processo-{k}", needed, cell_timeout)
        out = []
        for student, g, nb_path in items:
            t0 = time.perf_counter()
            row = grade_one(course, g, student, nb_path, notebook_timeout)
            log(f"  {student} · {g.notebook}: {_num(row.total)}/{_num(row.maximum)} {row.status}"
                f" ({time.perf_counter() - t0:.1f} s)")
            out.append(row)
        return out

    with ThreadPoolExecutor(len(groups)) as pool:
        return [row for rows in pool.map(run, range(len(groups)), groups) for row in rows]


def grade_class(entregas: Path, saida: Path, cell_timeout: int = 20, notebook_timeout: float = 180.0,
                workers: int | None = None, log=print) -> list[Row]:
    everything = catalog()
    workers = workers or min(4, os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix="correcao-") as tmp_name:
        tmp = Path(tmp_name)
        folder = open_submissions(entregas, tmp)
        work = tmp / "copia-das-entregas"
        shutil.copytree(folder, work)  # o nbgrader e o código dos alunos só veem esta cópia
        plan, rows = [], []
        for sdir in students(work):
            notebooks = sorted(p for p in sdir.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            if not notebooks:
                rows.append(failed_row(sdir.name, None, "", "sem_notebooks", "nenhum notebook (.ipynb) na pasta"))
            for nb_path in notebooks:
                g = identify(everything, nb_path)
                if g is None:
                    rows.append(failed_row(sdir.name, None, nb_path.stem, "desconhecido",
                                           f"“{nb_path.name}” não é um notebook de exercício ou projeto do curso"))
                    continue
                problem = inspect_file(nb_path, g, everything)
                if problem:
                    status = "notebook_errado" if problem.startswith("notebook de outro") else "arquivo_invalido"
                    rows.append(failed_row(sdir.name, g, g.notebook, status, problem))
                else:
                    plan.append((sdir.name, g, nb_path))
        rows += _grade_parallel(tmp, plan, cell_timeout, notebook_timeout, workers, log)
        rows.sort(key=lambda r: (r.student, r.assignment, r.notebook))
        write_outputs(rows, everything, saida)
    return rows


def write_outputs(rows: list[Row], everything: dict[tuple, Gradable], saida: Path) -> None:
    saida.mkdir(parents=True, exist_ok=True)
    used = {(r.assignment, r.notebook) for r in rows}
    columns = [gid for g in sorted(everything.values(), key=lambda g: (g.assignment, g.notebook))
               if (g.assignment, g.notebook) in used for gid, (_, _, auto) in g.cells.items() if auto]
    with open(saida / "notas.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIXED + columns + CSV_TAIL)
        writer.writeheader()
        for r in rows:
            writer.writerow(r.csv(columns))
    feedback = saida / "retorno"
    if feedback.exists():
        shutil.rmtree(feedback)
    for r in rows:
        g = everything.get((r.assignment, r.notebook))
        dest = feedback / r.student / (f"{r.assignment}-{r.notebook}.html" if r.assignment
                                       else f"{r.notebook or 'sem-notebook'}.html")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(feedback_html(r, g), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Corrige uma turma com o nbgrader (notas.csv + retorno em HTML).")
    parser.add_argument("entregas", type=Path, help="pasta ou .zip com <aluno>/<notebook>.ipynb")
    parser.add_argument("--saida", type=Path, default=ROOT / "build" / "correcao")
    parser.add_argument("--tempo-celula", type=int, default=20, help="segundos por célula (padrão 20)")
    parser.add_argument("--tempo-notebook", type=float, default=180, help="segundos por notebook (padrão 180)")
    parser.add_argument("--processos", type=int, default=None, help="correções em paralelo (padrão: núcleos, até 4)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    print(f"Corrigindo {args.entregas} ...")
    rows = grade_class(args.entregas, args.saida, args.tempo_celula, args.tempo_notebook, args.processos)
    print(f"{len(rows)} linha(s) em {args.saida / 'notas.csv'}; retornos em {args.saida / 'retorno'}/ "
          f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
