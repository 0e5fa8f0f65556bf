"""Conferência antes da entrega (``make validar NB=...``): o mesmo motor da correção, num notebook só.

O notebook do aluno não muda: uma cópia é corrigida como o professor corrigiria (na caixa do bwrap, se
houver; sem ela, no próprio computador do aluno, o código é dele mesmo) e o relatório diz, em português,
quantas verificações passam, o que cada uma disse e o que ainda falta.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from .catalogo import catalog, identify, inspect_file, nbgrader_meta, original_cells

CHECK_LINE = re.compile(r"^(✅|❌|⏳) (.+?):")


def _avisos_protegidas(path: Path, g) -> list[str]:
    import nbformat

    submitted = nbformat.read(path, as_version=4)
    protected = {gid: c.source for gid, c in original_cells(g.source).items() if nbgrader_meta(c).get("locked")}
    seen = {nbgrader_meta(c).get("grade_id"): c for c in submitted.cells if nbgrader_meta(c).get("grade_id")}
    out = []
    for gid, source in protected.items():
        if gid not in seen:
            out.append(f"⚠️ a célula protegida {gid} foi apagada ou perdeu os metadados: "
                       "na correção ela vale 0 ponto. Recupere-a do notebook original.")
        elif seen[gid].source != source:
            out.append(f"⚠️ a célula protegida {gid} foi editada: na correção ela volta ao original.")
    return out


def validate(path: Path, cell_timeout: int = 60) -> tuple[bool, list[str]]:
    """Devolve (pronto para entregar?, linhas do relatório em português)."""
    from .isolamento import bwrap_disponivel
    from .motor import grade_class

    everything = catalog()
    path = Path(path)
    g = identify(everything, path.resolve())
    if g is None:
        names = sorted({g.notebook for g in everything.values()})
        return False, [f"❌ “{path.name}” não é um notebook de exercício ou projeto do curso "
                       f"(conhecidos: {', '.join(names)})."]
    problem = inspect_file(path, g, everything)
    if problem:
        return False, [f"❌ {problem}."]
    avisos = _avisos_protegidas(path, g)
    with tempfile.TemporaryDirectory(prefix="validar-") as tmp:
        entregas = Path(tmp) / "entregas" / "voce" / g.assignment
        entregas.mkdir(parents=True)
        shutil.copy(path, entregas / f"{g.notebook}.ipynb")
        rows = grade_class(entregas.parents[1], Path(tmp) / "saida", cell_timeout, workers=1, log=lambda *_: None,
                           isolar=bwrap_disponivel(), guardar_notebooks=True)
        row = rows[0]
        nb = json.loads(row.autograded.read_text(encoding="utf-8")) if row.autograded else {"cells": []}
    checks, errors = [], []
    for c in nb["cells"]:
        for out in c.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                checks += [line for line in text.splitlines()
                           if CHECK_LINE.match(line) or line.startswith("  ❌") or line.strip().startswith("dica:")]
            elif out.get("output_type") == "error" and not nbgrader_meta(c).get("grade"):
                errors.append(f"❌ erro numa célula: {out.get('ename')}: {(out.get('evalue') or '')[:200]}")
    points = {gid: p for gid, (_, p, auto) in g.cells.items() if auto}
    passed = sum(1 for gid, p in points.items() if row.scores.get(gid, 0) >= p)
    report = [f"Notebook {path.name} ({g.assignment}): {passed} de {len(points)} verificação(ões) passando.",
              *checks, *errors, *avisos]
    if row.status not in ("ok", "parcial", "zero"):
        report.append(f"⚠️ situação na correção: {row.status}: " + " | ".join(row.reasons))
    ok = passed == len(points) and not errors and row.status == "ok"
    report.append("Pronto para entregar! ✅" if ok else "Ainda há o que resolver antes de entregar.")
    return ok, report
