"""O tempo estimado de cada notebook e de cada aula, calculado pela regra escrita no CONTRIBUTING.md.

A regra ("Tempos estimados" no CONTRIBUTING.md) conta o que o aluno lê, roda e escreve:

- a prosa das células de texto, a ``WORDS_PER_MINUTE`` palavras por minuto (sem os blocos de código, os endereços
  dos links e as fórmulas; uma fórmula dentro da linha, ``$...$``, conta como uma palavra);
- cada fórmula em destaque (``$$...$$``), ``MINUTES_PER_EQUATION`` minutos;
- cada célula de código que o aluno só lê e roda, ``MINUTES_PER_CODE_CELL`` minuto, mais um minuto a cada
  ``CODE_LINES_PER_MINUTE`` linhas não vazias, mais ``MINUTES_PER_FIGURE`` por figura guardada na saída (nos
  exercícios e projetos, na saída da solução: as demonstrações só desenham depois do exercício feito);
- cada exercício de código (célula com ``"solution": true``), ``MINUTES_PER_EXERCISE`` minutos, mais
  ``MINUTES_PER_SOLUTION_LINE`` por linha de código da resposta de ``solutions/`` (sem comentários nem linhas
  vazias): escrever, rodar a verificação e corrigir;
- cada resposta escrita (célula de texto com ``"solution": true``), ``MINUTES_PER_WRITTEN_ANSWER`` minutos.

O tempo impresso é o calculado arredondado a 5 minutos ("cerca de 35 minutos"; a aula, "cerca de 3 h 10 min").
``tests/test_tempo_estimado.py`` confere cada tempo impresso nos notebooks e na página inicial contra esta regra.

Uso:
    python scripts/tempo_estimado.py                       # a tabela de todas as aulas, com os tempos impressos
    python scripts/tempo_estimado.py --aplicar aula-04     # escreve os tempos calculados nos notebooks da aula
                                                           # (notebooks/ e solutions/) e na página inicial
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "notebooks" / "modulo-06"
HOME_PAGE = ROOT / "notebooks" / "00-comece-aqui.ipynb"

# A regra (justificada no CONTRIBUTING.md, seção "Tempos estimados").
WORDS_PER_MINUTE = 100
MINUTES_PER_EQUATION = 2
MINUTES_PER_CODE_CELL = 1
CODE_LINES_PER_MINUTE = 10
MINUTES_PER_FIGURE = 1
MINUTES_PER_EXERCISE = 8
MINUTES_PER_SOLUTION_LINE = 0.5
MINUTES_PER_WRITTEN_ANSWER = 5
ROUND_TO = 5
# Quanto um tempo impresso pode se afastar do calculado: 5 minutos ou 10 %, o que for maior.
TOLERANCE_MINUTES = 5
TOLERANCE_FRACTION = 0.10

_CODE_FENCE = re.compile(r"```.*?```", re.S)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_SOLUTION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
# "cerca de 35 minutos", "cerca de 35 min", "cerca de 3 h", "cerca de 3 h 10 min"
_TIME = r"cerca de (?:(?P<h>\d+) h(?: (?P<hm>\d+) min)?|(?P<m>\d+) min(?:utos)?)\b"
NOTEBOOK_TIME = re.compile(r"\*\*Tempo estimado:\*\* " + _TIME)
LESSON_TIME = re.compile(r"a aula inteira, com os (?:\w+) notebooks, " + _TIME)
HOME_LESSON_TIME = re.compile(r"\*\*Aula (?P<aula>\d+)\b[^\n]*?Tempo estimado: " + _TIME)
# Um tempo escrito de outro jeito ("duas horas e meia") escaparia da conferência: o teste recusa.
ANY_TIME_MENTION = re.compile(r"[Tt]empo estimado(?!\W*(?:a aula inteira, com os \w+ notebooks, )?cerca de \d)"
                              r"[^\n]{0,40}|[Cc]erca de (?!\d)[^\n\d,.;)]{0,25}\b(?:horas?|minutos?)\b")


@dataclass
class Estimate:
    """As partes do tempo de um notebook, em minutos (sem arredondar)."""

    words: int = 0
    equations: int = 0
    code_cells: int = 0
    code_lines: int = 0
    figures: int = 0
    exercises: int = 0
    solution_lines: int = 0
    written_answers: int = 0

    @property
    def reading(self) -> float:
        return self.words / WORDS_PER_MINUTE + self.equations * MINUTES_PER_EQUATION

    @property
    def code(self) -> float:
        return (self.code_cells * MINUTES_PER_CODE_CELL + self.code_lines / CODE_LINES_PER_MINUTE
                + self.figures * MINUTES_PER_FIGURE)

    @property
    def practice(self) -> float:
        return (self.exercises * MINUTES_PER_EXERCISE + self.solution_lines * MINUTES_PER_SOLUTION_LINE
                + self.written_answers * MINUTES_PER_WRITTEN_ANSWER)

    @property
    def minutes(self) -> float:
        return self.reading + self.code + self.practice


def prose_words(markdown: str) -> tuple[int, int]:
    """(palavras de prosa, fórmulas em destaque) de uma célula de texto."""
    text = _CODE_FENCE.sub(" ", markdown)
    equations = len(_DISPLAY_MATH.findall(text))
    text = _INLINE_MATH.sub(" x ", _DISPLAY_MATH.sub(" ", text))
    text = _LINK_TARGET.sub("]", text)
    return len(_WORD.findall(text)), equations


def _source(cell) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _cells(path: Path) -> list:
    """As células de um notebook, lidas como JSON (sem a validação do nbformat, que só deixaria a leitura lenta)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["cells"]


def _solution_lines(solution: Path) -> int:
    if not solution.exists():
        return 0
    count = 0
    for cell in _cells(solution):
        for region in _SOLUTION.findall(_source(cell)):
            count += sum(1 for line in region.splitlines() if line.strip() and not line.strip().startswith("#"))
    return count


def estimate(path: Path, solution: Path | None = None) -> Estimate:
    """As partes do tempo do notebook de aluno ``path``; as linhas das respostas vêm de ``solution`` (por padrão,
    o notebook de mesmo caminho em ``solutions/``, se ``path`` está em ``notebooks/``)."""
    path = Path(path).resolve()
    est = Estimate()
    for cell in _cells(path):
        is_solution = bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))
        src = _source(cell)
        if cell["cell_type"] == "markdown":
            if is_solution:
                est.written_answers += 1
            else:
                words, equations = prose_words(src)
                est.words += words
                est.equations += equations
        elif cell["cell_type"] == "code":
            if is_solution:
                est.exercises += 1
                continue
            est.code_cells += 1
            est.code_lines += sum(1 for line in src.splitlines() if line.strip())
    if solution is None and path.is_relative_to(ROOT / "notebooks"):
        solution = ROOT / "solutions" / path.relative_to(ROOT / "notebooks")
    has_solution = solution is not None and solution.exists()
    est.solution_lines = _solution_lines(solution) if has_solution else 0
    # as figuras que o aluno vê: as da solução executada (as demonstrações só desenham depois do exercício feito)
    est.figures = _figures(solution if has_solution else path)
    return est


def _figures(path: Path) -> int:
    return sum(1 for cell in _cells(path) for out in cell.get("outputs", [])
               if "image/png" in out.get("data", {}))


def rounded(minutes: float) -> int:
    """Os minutos arredondados a ``ROUND_TO`` (ao menos ``ROUND_TO``)."""
    return max(ROUND_TO, int(ROUND_TO * round(minutes / ROUND_TO)))


def format_minutes(minutes: int) -> str:
    """``35`` → ``"35 minutos"``; ``190`` → ``"3 h 10 min"``; ``180`` → ``"3 h"``."""
    if minutes < 60:
        return f"{minutes} minutos"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def parse_minutes(match: re.Match) -> int:
    """Os minutos de um tempo impresso achado por ``NOTEBOOK_TIME``, ``LESSON_TIME`` ou ``HOME_LESSON_TIME``."""
    if match.group("m"):
        return int(match.group("m"))
    return 60 * int(match.group("h")) + int(match.group("hm") or 0)


def within_tolerance(printed: int, computed: float) -> bool:
    return abs(printed - computed) <= max(TOLERANCE_MINUTES, TOLERANCE_FRACTION * computed)


def lessons() -> list[Path]:
    return sorted(p for p in MODULE.iterdir() if p.is_dir() and p.name.startswith("aula-"))


def lesson_notebooks(lesson: Path) -> list[Path]:
    return sorted(p for p in lesson.glob("[0-9][0-9]-*.ipynb"))


def notebook_minutes(path: Path) -> int:
    """O tempo do notebook pela regra, arredondado."""
    path = Path(path).resolve()
    solution = ROOT / "solutions" / path.relative_to(ROOT / "notebooks") if path.is_relative_to(
        ROOT / "notebooks") else None
    stamps = tuple(p.stat().st_mtime_ns if p and p.exists() else 0 for p in (path, solution))
    return _notebook_minutes(path, stamps)


@functools.lru_cache(maxsize=None)
def _notebook_minutes(path: Path, stamps: tuple) -> int:  # stamps: o cache vale enquanto os arquivos não mudam
    return rounded(estimate(path).minutes)


def lesson_minutes(lesson: Path) -> int:
    """O tempo da aula: a soma dos tempos arredondados dos seus notebooks (o que o aluno vê somado)."""
    return sum(notebook_minutes(p) for p in lesson_notebooks(lesson))


def printed_times(path: Path) -> list[tuple[str, int, int]]:
    """Os tempos impressos num notebook de aula: ``(o que é, impresso, calculado)``, para a conferência."""
    path = Path(path).resolve()
    text = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "markdown")
    found = []
    for match in NOTEBOOK_TIME.finditer(text):
        found.append(("notebook", parse_minutes(match), notebook_minutes(student_path(path))))
    for match in LESSON_TIME.finditer(text):
        found.append(("aula", parse_minutes(match), lesson_minutes(student_path(path).parent)))
    return found


def home_page_times() -> list[tuple[str, int, int]]:
    """Os tempos de cada aula na página inicial: ``(aula, impresso, calculado)``."""
    text = "\n".join(_source(c) for c in _cells(HOME_PAGE))
    by_number = {int(p.name.split("-")[1]): p for p in lessons()}
    return [(f"Aula {m.group('aula')}", parse_minutes(m), lesson_minutes(by_number[int(m.group("aula"))]))
            for m in HOME_LESSON_TIME.finditer(text)]


def student_path(path: Path) -> Path:
    """O notebook de aluno correspondente (o próprio, se ``path`` já está em ``notebooks/``)."""
    path = Path(path).resolve()
    if path.is_relative_to(ROOT / "solutions"):
        return ROOT / "notebooks" / path.relative_to(ROOT / "solutions")
    return path


def _replace(text: str, pattern: re.Pattern, minutes: int) -> str:
    def sub(match: re.Match) -> str:
        whole = match.group(0)
        start = match.start("h") if match.group("h") else match.start("m")
        return whole[:start - match.start()] + format_minutes(minutes) + whole[match.end() - match.start():]
    return pattern.sub(sub, text)


def apply(lesson: Path) -> list[Path]:
    """Escreve os tempos calculados nos notebooks da aula (em ``notebooks/`` e em ``solutions/``) e na página
    inicial; devolve os arquivos mudados. Só o texto muda: as saídas guardadas continuam valendo."""
    total = lesson_minutes(lesson)
    changed = []
    for student in lesson_notebooks(lesson):
        minutes = notebook_minutes(student)
        twins = [student, ROOT / "solutions" / student.relative_to(ROOT / "notebooks")]
        for path in (p for p in twins if p.exists()):
            nb = nbformat.read(path, as_version=4)
            dirty = False
            for cell in nb.cells:
                if cell.cell_type != "markdown":
                    continue
                new = _replace(_replace(_source(cell), NOTEBOOK_TIME, minutes), LESSON_TIME, total)
                if new != _source(cell):
                    cell.source, dirty = new, True
            if dirty:
                nbformat.write(nb, path)
                changed.append(path)
    number = int(lesson.name.split("-")[1])
    nb = nbformat.read(HOME_PAGE, as_version=4)
    dirty = False
    for cell in nb.cells:
        def sub(match: re.Match) -> str:
            if int(match.group("aula")) != number:
                return match.group(0)
            whole = match.group(0)
            start = match.start("h") if match.group("h") else match.start("m")
            return whole[:start - match.start()] + format_minutes(total) + whole[match.end() - match.start():]
        new = HOME_LESSON_TIME.sub(sub, _source(cell))
        if cell.cell_type == "markdown" and new != _source(cell):
            cell.source, dirty = new, True
    if dirty:
        nbformat.write(nb, HOME_PAGE)
        changed.append(HOME_PAGE)
    return changed


def table() -> str:
    lines = [f"{'notebook':58} {'prosa':>6} {'fórm.':>5} {'cél.':>4} {'lin.':>4} {'fig.':>4} {'ex.':>3} "
             f"{'l.sol':>5} {'esc.':>4} {'min':>6} {'calc.':>5} impresso"]
    for lesson in lessons():
        for path in lesson_notebooks(lesson):
            e = estimate(path)
            printed = ", ".join(f"{kind} {p}" for kind, p, _ in printed_times(path)) or "—"
            lines.append(f"{str(path.relative_to(MODULE)):58} {e.words:6d} {e.equations:5d} {e.code_cells:4d} "
                         f"{e.code_lines:4d} {e.figures:4d} {e.exercises:3d} {e.solution_lines:5d} "
                         f"{e.written_answers:4d} {e.minutes:6.1f} {notebook_minutes(path):5d} {printed}")
        lines.append(f"{lesson.name + ' (aula)':58} {'':>54} {lesson_minutes(lesson):5d} "
                     f"= {format_minutes(lesson_minutes(lesson))}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Tempos estimados pela regra do CONTRIBUTING.md.")
    parser.add_argument("--aplicar", nargs="+", metavar="AULA",
                        help="escreve os tempos calculados nos notebooks destas aulas (ex.: aula-04) e na página "
                             "inicial")
    args = parser.parse_args(argv)
    if args.aplicar:
        for name in args.aplicar:
            matches = [p for p in lessons() if p.name.startswith(name)]
            if len(matches) != 1:
                print(f"aula {name!r}: esperada uma pasta de notebooks/modulo-06 que comece assim; achadas "
                      f"{[p.name for p in matches]}", file=sys.stderr)
                return 2
            for path in apply(matches[0]):
                print(f"atualizado: {path.relative_to(ROOT)}")
        return 0
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
