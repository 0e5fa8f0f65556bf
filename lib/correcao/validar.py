"""Conferência antes da entrega (``make validar NB=...``): o mesmo motor da correção, num notebook só.

O notebook do aluno não muda: uma cópia, com o mesmo nome de arquivo, é corrigida exatamente como o
professor corrigiria (:func:`correcao.motor.grade_class`: mesma leitura, mesma arrumação de células
repetidas ou coladas, mesma caixa do bwrap se houver; sem ela, no próprio computador do aluno, o código é
dele mesmo). As saídas antigas do notebook não contam: tudo roda de novo. O relatório diz, em português,
quantas verificações passam, o que cada uma disse, onde a execução parou, quais respostas escritas ainda
são o esboço (✍️) e o que a correção vai anotar; "Pronto para entregar" só quando tudo isso está limpo.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from .catalogo import CODE_STUB, TEXT_STUB, cell_label, nbgrader_meta, original_cells, read_notebook
from .entregas import nfc

CHECK_LINE = re.compile(r"^(✅|❌|⏳) (.+?):")


def _avisos_protegidas(nb: dict, g) -> list[str]:
    protected = {gid: c.source for gid, c in original_cells(g.source).items() if nbgrader_meta(c).get("locked")}
    seen = {}
    for c in nb["cells"]:
        gid = nbgrader_meta(c).get("grade_id")
        if isinstance(gid, str) and gid not in seen:
            src = c.get("source", "")
            seen[gid] = "".join(src) if isinstance(src, list) else src
    out = []
    for gid, source in protected.items():
        if gid not in seen:
            out.append(f"⚠️ a célula protegida {gid} foi apagada ou perdeu os metadados: "
                       "na correção ela vale 0 ponto. Recupere-a do notebook original.")
        elif seen[gid] != source:
            out.append(f"⚠️ a célula protegida {gid} foi editada: na correção ela volta ao original.")
    return out


def _esbocos(nb: dict) -> list[str]:
    """Respostas que ainda são o esboço do curso: as escritas (✍️, corrigidas pelo professor) e as de código."""
    out = []
    for index, c in enumerate(nb["cells"]):
        meta = nbgrader_meta(c)
        if not meta.get("solution"):
            continue
        src = c.get("source", "")
        src = ("".join(src) if isinstance(src, list) else src).strip()
        pontos = meta.get("points") if meta.get("grade") else None
        vale = f", vale {pontos:g} ponto(s) na correção do professor" if isinstance(pontos, (int, float)) else ""
        if c.get("cell_type") == "markdown" and src == TEXT_STUB.strip():
            out.append(f"✍️ resposta escrita ainda não respondida: {cell_label(nb['cells'], index)}{vale}")
        elif c.get("cell_type") == "code" and CODE_STUB.splitlines()[-1] in src:
            out.append(f"✍️ exercício ainda com o esboço (raise NotImplementedError): {cell_label(nb['cells'], index)}")
    return out


def validate(path: Path, cell_timeout: int = 60) -> tuple[bool, list[str]]:
    """Devolve (pronto para entregar?, linhas do relatório em português).

    Parameters
    ----------
    path : Path
        O notebook do aluno (de preferência a cópia dele em ``trabalho/``). Não é alterado.
    cell_timeout : int
        Segundos por célula (a correção do professor usa 20 por padrão).
    """
    from .isolamento import bwrap_disponivel
    from .motor import grade_class

    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="validar-") as tmp:
        entregas = Path(tmp) / "entregas" / "voce"
        entregas.mkdir(parents=True)
        shutil.copy(path, entregas / path.name)  # mesmo nome: um arquivo renomeado aparece como na correção
        rows = grade_class(entregas.parent, Path(tmp) / "saida", cell_timeout, workers=1, log=lambda *_: None,
                           isolar=bwrap_disponivel(), guardar_notebooks=True)
        row = next((r for r in rows if r.arquivo == nfc(path.name)), rows[0])
        nb = json.loads(row.autograded.read_text(encoding="utf-8")) if row.autograded else None
    if row.status in ("arquivo_invalido", "desconhecido", "sem_notebooks"):
        return False, [f"❌ {' | '.join(row.reasons)}."]
    from .catalogo import catalog

    g = catalog()[(row.assignment, row.notebook)]
    nb = nb or {"cells": []}
    checks, errors = [], []
    for index, c in enumerate(nb["cells"]):
        for out in c.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                checks += [line for line in text.splitlines()
                           if CHECK_LINE.match(line) or line.startswith("  ❌") or line.strip().startswith("dica:")]
    points = {gid: p for gid, (_, p, auto) in g.cells.items() if auto}
    passed = sum(1 for gid, p in points.items() if row.scores.get(gid, 0) >= p)
    notas = []
    for r in row.reasons:  # o que a correção vai anotar (o que a verificação já imprimiu não se repete)
        gid = next((gid for gid in points if r.startswith(f"{gid}: ")), None)
        if gid is None or not any(r[len(gid) + 2:][:40] in line for line in checks):
            notas.append(f"⚠️ {r}")
    errors = [n for n in notas if n.startswith("⚠️ erro em ")]
    esbocos = _esbocos(nb)
    original, _ = read_notebook(path.read_bytes())
    avisos = _avisos_protegidas(original or {"cells": []}, g)
    report = [f"Notebook {path.name} ({g.assignment}, {g.notebook}): {passed} de {len(points)} verificação(ões) "
              "passando.", *checks, *notas, *avisos, *esbocos]
    if row.status not in ("ok", "parcial", "zero"):
        report.append(f"❌ a execução não chegou ao fim na correção ({row.status}): veja o aviso acima.")
    ok = passed == len(points) and not errors and not esbocos and row.status == "ok"
    report.append("Pronto para entregar! ✅" if ok else "Ainda há o que resolver antes de entregar.")
    return ok, report
