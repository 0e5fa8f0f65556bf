"""A exportação para um ambiente virtual de aprendizagem (AVA: Moodle, Canvas, Google Sala de Aula...).

Um AVA entra na correção por um :class:`LMSExporter`: ele reconhece o download do AVA, converte-o nas pastas de
alunos que :func:`correcao.motor.grade_class` corrige, guarda quem é quem numa parte de uma turma dividida
(``parte.json``) e, no fim, escreve o que o AVA aceita de volta (as notas e os retornos). :func:`grade_with` e
:func:`join_parts_with` fazem o resto, iguais para todo AVA; :func:`correcao.exporters.exporter_for` escolhe o
exportador de um download. O Moodle (:class:`correcao.moodle.MoodleExporter`) é o primeiro; um AVA novo é uma classe
nova, acrescentada à lista de :func:`correcao.exporters.exporters`, e nada mais muda na correção.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


class LMSExporter:
    """A interface de um AVA. ``name`` é a chave dele no anexo de ``parte.json``; os participantes (``dict``: nome
    de aluno na correção -> o que o AVA precisa para achá-lo) são do formato que cada AVA escolher."""

    name = ""
    outputs: tuple[str, ...] = ()  # o que :meth:`export` grava na saída: nomes de correcao.saida (vão para anteriores/)

    def detects(self, entrada: Path) -> bool:
        """``entrada`` (pasta ou .zip) é um download deste AVA."""
        raise NotImplementedError

    def check_options(self) -> None:
        """Confere as opções do exportador antes de corrigir (levanta ``OSError``/``ValueError`` com o problema)."""

    def convert(self, entradas: list[Path], destino: Path) -> tuple[Path, dict]:
        """O download em ``destino`` como uma pasta por aluno; devolve a pasta e os participantes."""
        raise NotImplementedError

    def before_grading(self, participantes: dict) -> None:
        """Confere, antes de corrigir a turma, o que depende dos participantes (levanta ``ValueError``)."""

    def to_attachment(self, participantes: dict):
        """Os participantes como dados simples de JSON, para ``parte.json``."""
        raise NotImplementedError

    def from_attachment(self, dados) -> dict:
        """O inverso de :meth:`to_attachment`."""
        raise NotImplementedError

    def export(self, rows: list, participantes: dict, saida: Path, log=print) -> None:
        """Escreve em ``saida`` o que o AVA aceita de volta, a partir das linhas corrigidas (:class:`Row`) e das
        páginas de retorno já escritas (``saida / row.retorno``)."""
        raise NotImplementedError


def grade_with(exporter: LMSExporter, entradas: list[Path], saida: Path, log=print, **kwargs) -> list:
    """Corrige o download ``entradas`` do AVA de ``exporter`` com :func:`correcao.motor.grade_class` (``kwargs`` vão
    para ela) e escreve em ``saida``, ao lado de ``notas.csv``, o que o AVA aceita de volta. Com ``parte=(K, N)``
    nos ``kwargs``, só a parte (``parte.json``, com os participantes): o que vai ao AVA sai na junção
    (:func:`join_parts_with`)."""
    from .motor import grade_class

    saida = Path(saida).resolve()
    with tempfile.TemporaryDirectory(prefix=f"{exporter.name}-") as tmp:
        convertido, participantes = exporter.convert([Path(e) for e in entradas], Path(tmp))
        log(f"  {exporter.name.capitalize()}: {len(participantes)} participante(s)")
        exporter.before_grading(participantes)  # antes de corrigir a turma, e não depois
        if kwargs.get("parte") is not None:
            anexo = {exporter.name: exporter.to_attachment(participantes)}
            return grade_class(convertido, saida, log=log, anexo_parte=anexo, **kwargs)
        rows = grade_class(convertido, saida, log=log, **kwargs)
    exporter.export(rows, participantes, saida, log=log)
    return rows


def join_parts_with(candidatos: list[LMSExporter], pastas: list[Path], saida: Path, log=print) -> list:
    """Junta as partes de uma correção (:func:`correcao.partes.join_parts`) e, se elas vieram de um AVA (o anexo de
    ``parte.json`` tem a chave de um dos ``candidatos``), escreve também o que vai de volta para ele.

    Raises
    ------
    correcao.partes.PartsError
        Veja :func:`correcao.partes.join_parts`.
    """
    from . import partes

    saida = Path(saida).resolve()
    rows, anexo = partes.join_parts(pastas, saida, log=log)
    for exporter in candidatos:
        if anexo.get(exporter.name):
            exporter.export(rows, exporter.from_attachment(anexo[exporter.name]), saida, log=log)
    return rows
