"""Os exportadores para AVA que a correção conhece (a interface está em :mod:`correcao.lms`): um AVA novo é uma
linha na lista de :func:`exporters`."""

from __future__ import annotations

from pathlib import Path

from .lms import LMSExporter


def exporters(**opcoes) -> list[LMSExporter]:
    """Os exportadores conhecidos, com as ``opcoes`` da linha de comando (``idioma``, ``planilha``...)."""
    from .moodle import MoodleExporter

    return [MoodleExporter(idioma=opcoes.get("idioma", "pt_br"), planilha=opcoes.get("planilha"))]


def exporter_for(entradas: list[Path], **opcoes) -> LMSExporter | None:
    """O exportador do AVA de onde ``entradas`` vieram, ou ``None`` (pastas ou zips de alunos, sem AVA)."""
    for exporter in exporters(**opcoes):
        if any(exporter.detects(Path(e)) for e in entradas):
            return exporter
    return None
