"""Cada tempo estimado impresso (nos notebooks e na página inicial) bate com a regra do CONTRIBUTING.md, que
scripts/tempo_estimado.py aplica."""

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import tempo_estimado as te  # noqa: E402

NOTEBOOKS = [p for lesson in te.lessons() for p in te.lesson_notebooks(lesson)]
SOLUTIONS = sorted((ROOT / "solutions" / "modulo-06").rglob("[0-9][0-9]-*.ipynb"))
def _param(path: Path):
    return pytest.param(path, id=str(path.relative_to(ROOT)))


def _markdown(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS + SOLUTIONS])
def test_cada_tempo_impresso_bate_com_a_regra(path):
    times = te.printed_times(path)
    kinds = [kind for kind, _, _ in times]
    assert kinds.count("notebook") == 1, (
        f"{path.name}: esperado um '**Tempo estimado:** cerca de N minutos' no notebook; "
        f"achados {kinds.count('notebook')}")
    wrong = [(kind, printed, computed) for kind, printed, computed in times
             if not te.within_tolerance(printed, computed)]
    assert not wrong, (f"{path.relative_to(ROOT)}: tempo impresso longe da regra (o que, impresso, calculado): "
                       f"{wrong}; rode scripts/tempo_estimado.py --aplicar <aula>")


@pytest.mark.parametrize("path", [_param(p) for p in [*NOTEBOOKS, *SOLUTIONS, te.HOME_PAGE]])
def test_nenhum_tempo_escrito_fora_do_formato_conferido(path):
    """'cerca de duas horas e meia' ou 'uns 40 min' escapariam da conferência acima."""
    loose = te.ANY_TIME_MENTION.findall(_markdown(path))
    assert not loose, (f"{path.name}: tempo estimado fora do formato 'cerca de N minutos' / 'cerca de N h M min': "
                       f"{loose}")


def test_a_pagina_inicial_da_o_tempo_de_cada_aula_pela_regra():
    times = te.home_page_times()
    assert sorted(int(name.split()[1]) for name, _, _ in times) == list(range(1, len(te.lessons()) + 1)), times
    wrong = [t for t in times if not te.within_tolerance(t[1], t[2])]
    assert not wrong, f"tempos da página inicial longe da regra (aula, impresso, calculado): {wrong}"


def test_a_regra_conta_prosa_formulas_e_links_como_o_contributing_diz():
    words, equations = te.prose_words(
        "Leia [o artigo](https://arxiv.org/abs/1706.03762) e a fórmula $d_k$:\n\n$$a = b + c$$\n\n"
        "```python\nprint('nada disto conta')\n```\nFim.")
    # "Leia", "o", "artigo", "e", "a", "fórmula", a fórmula da linha (uma palavra), "Fim"
    assert (words, equations) == (8, 1)


def test_um_notebook_feito_a_mao_da_a_soma_da_regra(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(" ".join(["palavra"] * 300) + "\n\n$$x = y$$"),
        nbformat.v4.new_code_cell("a = 1\nb = 2\n\nprint(a + b)"),
        nbformat.v4.new_code_cell("def f(x):\n    raise NotImplementedError",
                                  metadata={"nbgrader": {"solution": True, "grade": False}}),
        nbformat.v4.new_markdown_cell("✍️", metadata={"nbgrader": {"solution": True, "grade": True}}),
    ]
    solution = nbformat.v4.new_notebook()
    solution.cells = [nbformat.v4.new_code_cell(
        "def f(x):\n    ### BEGIN SOLUTION\n    # um comentário não conta\n    y = x + 1\n\n    return y\n"
        "    ### END SOLUTION")]
    nbformat.write(nb, tmp_path / "aluno.ipynb")
    nbformat.write(solution, tmp_path / "solucao.ipynb")
    est = te.estimate(tmp_path / "aluno.ipynb", solution=tmp_path / "solucao.ipynb")
    assert (est.words, est.equations, est.code_cells, est.code_lines) == (300, 1, 1, 3)
    assert (est.exercises, est.solution_lines, est.written_answers) == (1, 2, 1)
    expected = (300 / te.WORDS_PER_MINUTE + te.MINUTES_PER_EQUATION + te.MINUTES_PER_CODE_CELL
                + 3 / te.CODE_LINES_PER_MINUTE + te.MINUTES_PER_EXERCISE + 2 * te.MINUTES_PER_SOLUTION_LINE
                + te.MINUTES_PER_WRITTEN_ANSWER)
    assert est.minutes == pytest.approx(expected)


@pytest.mark.parametrize("minutes, text", [(35, "35 minutos"), (60, "1 h"), (190, "3 h 10 min")])
def test_o_formato_impresso_se_le_de_volta(minutes, text):
    assert te.format_minutes(minutes) == text
    match = te.NOTEBOOK_TIME.search(f"**Tempo estimado:** cerca de {text}.")
    assert match and te.parse_minutes(match) == minutes


def test_a_tolerancia_recusa_um_tempo_da_metade():
    """A teoria da Aula 4 dizia 30 minutos para um texto que a regra mede em 35; um tempo da metade não passa."""
    assert te.within_tolerance(35, 33.6) and te.within_tolerance(200, 215)
    assert not te.within_tolerance(15, 35.9) and not te.within_tolerance(155, 210)


def test_a_regra_esta_escrita_no_contributing_com_as_mesmas_constantes():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "## Tempos estimados" in text
    for phrase in [f"{te.WORDS_PER_MINUTE} palavras por minuto", f"| {te.MINUTES_PER_EQUATION} minutos |",
                   f"{te.MINUTES_PER_CODE_CELL} minuto, mais 1 a cada {te.CODE_LINES_PER_MINUTE} linhas",
                   f"{te.MINUTES_PER_EXERCISE} minutos, mais meio minuto por linha",
                   f"| {te.MINUTES_PER_WRITTEN_ANSWER} minutos |"]:
        assert phrase in text, f"CONTRIBUTING.md não diz {phrase!r}: a regra escrita e a do script divergiram"
    assert te.MINUTES_PER_SOLUTION_LINE == 0.5  # "meio minuto por linha"
    # o exemplo do texto (a Aula 4 inteira) também segue a regra
    match = te.re.search(r"a Aula 4 inteira dá " + te._TIME, text)
    assert match, "CONTRIBUTING.md: o exemplo 'a Aula 4 inteira dá cerca de N h M min' sumiu"
    aula4 = next(p for p in te.lessons() if p.name.startswith("aula-04-"))
    assert te.within_tolerance(te.parse_minutes(match), te.lesson_minutes(aula4)), (
        f"CONTRIBUTING.md diz {match.group(0)!r}; a regra dá {te.format_minutes(te.lesson_minutes(aula4))}")
