"""Conferência antes da entrega (``make validar NB=...``): o mesmo motor da correção, num notebook só.

O notebook do aluno não muda: uma cópia, com o mesmo nome de arquivo, é corrigida exatamente como o
professor corrigiria (:func:`correcao.motor.grade_class`: mesma leitura, mesma arrumação de células
repetidas ou coladas, mesma caixa do bwrap se houver; sem ela, no próprio computador do aluno, o código é
dele mesmo). As saídas antigas do notebook não contam: tudo roda de novo. O relatório diz, em português,
quantas verificações passam, o que cada uma disse, onde a execução parou, quais respostas escritas ainda
são o esboço (✍️) e o que a correção vai anotar; "Pronto para entregar" só quando todas as verificações
passam, nenhuma resposta escrita ficou no esboço e a situação é ``ok``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from .catalogo import blank_answers, cell_label, nbgrader_meta
from .relatorio import STATUSES, strip_paths

CHECK_LINE = re.compile(r"^(✅|❌|⏳) (.+?):")


def _stubs(nb: dict, g) -> list[str]:
    """As respostas escritas ainda com o esboço ✍️ (os exercícios de código já aparecem nas verificações)."""
    return [f"✍️ resposta escrita ainda não respondida: {cell_label(nb['cells'], index)}, vale {pontos:g} "
            "ponto(s) na correção do professor" for _, index, pontos in blank_answers(nb, g)]


def validate(path: Path, cell_timeout: int = 60) -> tuple[bool, list[str]]:
    """Devolve (pronto para entregar?, linhas do relatório em português).

    Parameters
    ----------
    path : Path
        O notebook do aluno (de preferência a cópia dele em ``trabalho/``). Não é alterado.
    cell_timeout : int
        Segundos por célula (a correção do professor usa 20 por padrão).
    """
    return validate_many([path], cell_timeout)[0]


def validate_many(paths: list[Path], cell_timeout: int = 60, workers: int = 1) -> list[tuple[bool, list[str]]]:
    """:func:`validate` de vários notebooks numa correção só (``workers`` em paralelo), na mesma ordem."""
    from .isolamento import bwrap_available
    from .motor import grade_class

    paths = [Path(p) for p in paths]
    with tempfile.TemporaryDirectory(prefix="validar-") as tmp:
        for k, path in enumerate(paths):  # uma "aluna" por notebook; mesmo nome de arquivo (renomeado aparece)
            (Path(tmp) / "entregas" / f"n{k:03d}").mkdir(parents=True)
            shutil.copy(path, Path(tmp) / "entregas" / f"n{k:03d}" / path.name)
        rows = grade_class(Path(tmp) / "entregas", Path(tmp) / "saida", cell_timeout, workers=workers,
                           log=lambda *_: None, isolar=bwrap_available(), guardar_notebooks=True,
                           preflight_check=False)  # um notebook só: a falha da máquina aparece nele mesmo
        out = []
        for k, path in enumerate(paths):
            row = next(r for r in rows if r.student == f"n{k:03d}")
            nb = json.loads(row.autograded.read_text(encoding="utf-8")) if row.autograded else None
            out.append(_report(path, row, nb))
    return out


def _report_lines(text: str) -> list[str]:
    """As linhas de resultado (✅/❌/⏳), de critério que falhou e de dica de uma saída, com as continuações
    que a verificação quebrou (recuo da linha + 5 espaços); esperado/obtido ficam de fora (estão no notebook)."""
    linhas, recuo = [], None
    for line in text.splitlines():
        corpo = line.lstrip()
        if CHECK_LINE.match(line) or line.startswith("  ❌") or corpo.startswith("dica:"):
            linhas.append(line)
            recuo = len(line) - len(corpo) + 5
        elif recuo is not None and corpo and len(line) - len(corpo) == recuo and not corpo.startswith(
                ("esperado:", "obtido:")):
            linhas.append(line)  # continuação de uma linha quebrada
        else:
            recuo = None
    return linhas


def _report(path: Path, row, nb: dict | None) -> tuple[bool, list[str]]:
    if row.status in ("arquivo_invalido", "desconhecido", "sem_notebooks"):
        return False, [f"❌ {path.name}: {' | '.join(row.reasons)}."]
    from .catalogo import catalog

    g = catalog()[(row.assignment, row.notebook)]
    nb = nb or {"cells": []}
    checks, com_linha = [], set()  # com_linha: verificações que imprimiram o seu ✅/❌/⏳
    for c in nb["cells"]:
        for out in c.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                linhas = _report_lines(text)
                checks += linhas
                if any(CHECK_LINE.match(line) for line in linhas):
                    com_linha.add(nbgrader_meta(c).get("grade_id"))
    points = {gid: p for gid, (_, p, auto) in g.cells.items() if auto}
    # passa o que o verificador aprovou, mesmo com os pontos retidos para a revisão do professor (o aviso diz por quê)
    passed = sum(1 for gid, p in points.items() if row.scores.get(gid, 0) + row.em_revisao.get(gid, 0) >= p)
    notas = []
    for r in row.reasons:  # o que a correção vai anotar (o que a verificação já imprimiu não se repete)
        gid = next((gid for gid in points if r.startswith(f"{gid}: ")), None)
        # a linha que o kernel imprimiu não se repete, a menos que o verificador isolado tenha discordado dela
        if ((gid is None or gid not in com_linha or "conferência independente" in r)
                and "resposta(s) escrita(s) ainda com o esboço" not in r):
            notas.append(f"⚠️ {strip_paths(r)}")
    esbocos = _stubs(nb, g)
    report = [f"Notebook {path.name} ({g.assignment}, {g.notebook}): {passed} de {len(points)} verificação(ões) "
              "passando.", *checks, *notas, *esbocos]
    if row.status not in ("ok", "parcial", "zero"):
        report.append(f"❌ situação na correção: {STATUSES.get(row.status, row.status)} ({row.status}); "
                      "veja os avisos acima.")
    ok = passed == len(points) and not esbocos and row.status == "ok"  # a nota toda; erros soltos são avisos
    report.append("Pronto para entregar! ✅" if ok else "Ainda há o que resolver antes de entregar.")
    return ok, report
