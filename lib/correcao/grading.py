"""Corrigir UM notebook: o ``autograde`` do nbgrader (que executa pelas caixas de :mod:`correcao.execution`) dentro
do orçamento do notebook, e as regras de :mod:`correcao.scoring` aplicadas ao que voltou."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import warnings

from .catalogo import (
    Gradable,
)
from .execution import Worker
from .isolamento import NotebookBudget
from .planning import GradingTask
from .relatorio import Row
from .scoring import (
    apply_verification,
    checks_outside_version,
    explain_outputs,
    foreign_notebook,
    last_error,
    old_version_failures,
    old_version_missing,
    withhold_solution_copies,
)


def _kernel_scores(w: Worker, g: Gradable, ident: str, row: Row) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{w.course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(g.notebook, g.assignment, ident)
        for grade in nb.grades:
            _, points, auto = g.cells[grade.name]
            if auto:
                row.scores[grade.name] = grade.auto_score or 0.0
            elif grade.needs_manual_grade:
                row.manual_pending += 1


FEEDBACK_RESERVE_S = 15.0  # do orçamento do notebook, o que fica para as notas do nbgrader e o HTML do retorno


def grade_one(w: Worker, e: GradingTask) -> Row:
    """Corrige um notebook (``e.ident`` é o id do nbgrader; ``e.student``, o nome mostrado), dentro do
    orçamento dele (:class:`correcao.isolamento.NotebookBudget`): o prazo das caixas é o orçamento
    (``w.limits.relogio_s``) menos o que a leitura já gastou e a reserva para o retorno."""
    prazo = max(1.0, w.limits.relogio_s - e.read_seconds - min(FEEDBACK_RESERVE_S, 0.1 * w.limits.relogio_s))
    with NotebookBudget(f"{w.tag}-p{w.number}-{e.ident}", w.limits, prazo, isolar=w.isolate) as grupo:
        w.budget = w.kernel_box.grupo = w.student_box.grupo = w.verifier_box.grupo = grupo
        try:
            row = _grade_one(w, e, grupo)
        finally:
            w.budget = w.kernel_box.grupo = w.student_box.grupo = w.verifier_box.grupo = None
    # medidas depois de fechar o grupo (tudo morto, o cgroup lido e removido)
    cpu, decorrido = grupo.cpu_s(), time.monotonic() - grupo.inicio
    if cpu is not None:
        row.cpu_ratio = cpu / max(decorrido, 1e-6)
    row.cpu_others = grupo.cpu_others()
    row.peak_memory = grupo.peak_memory
    return row


def _grade_one(w: Worker, e: GradingTask, grupo: NotebookBudget) -> Row:
    g = e.g
    row = Row(e.student, g.assignment, g.notebook, maximum=g.max_auto, arquivo=e.file, reasons=list(e.notes),
              isolation=f"bwrap+{grupo.tipo}" if w.kernel_box.isolar else "sem_isolamento")
    dest = w.course / "submitted" / e.ident / g.assignment
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(e.path, dest / f"{g.notebook}.ipynb")
    w.api.coursedir.notebook_id = g.notebook
    t0 = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # avisos internos do SQLAlchemy do nbgrader, sem ação para o professor
        result = w.api.autograde(g.assignment, e.ident, force=True, create=True)
    if w.timings is not None:
        w.timings["autograde"] = time.monotonic() - t0
    log = result.get("log", "") + result.get("error", "")
    autograded = w.course / "autograded" / e.ident / g.assignment / f"{g.notebook}.ipynb"
    res = w.results.pop(e.ident, None)
    if not result.get("success") or not autograded.exists() or res is None:
        row.status, row.scores = "erro_na_correcao", g.zero_scores()
        row.reasons.append("o nbgrader não conseguiu corrigir: " + last_error(log))
        if os.environ.get("CORRECAO_DEPURAR"):
            print(log, file=sys.stderr)
        return row
    keep = w.folder / "corrigidos" / f"{e.ident}.ipynb"  # um por arquivo: nada sobrescreve o retorno de outro
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(autograded, keep)
    row.autograded = keep
    _kernel_scores(w, g, e.ident, row)
    explain_outputs(json.loads(autograded.read_text(encoding="utf-8")), g, row)
    checks_outside_version(g, row, e.missing_checks)
    apply_verification(g, row, res)
    withhold_solution_copies(row, *e.copied_answers)
    old_version_failures(g, row, e.old_version)
    old_version_missing(g, row, e.missing_checks)
    foreign_notebook(row, e.foreign)
    row.cpu_ratio = res.cpu_ratio
    # o tempo foi do aluno (nunca se corrige de novo): ignorou a interrupção, inundou a saída ou estourou a memória
    row.tempo_do_aluno = bool(res.ignored_interrupt or res.truncated or res.notebook_memory)
    return row
