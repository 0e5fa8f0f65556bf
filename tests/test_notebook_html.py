"""O exportador HTML do retorno com memória (correcao.notebook_html): o mesmo HTML, byte a byte, que o exportador
do nbconvert sem memória, na primeira conversão e nas seguintes (quando as células vêm da memória)."""

from __future__ import annotations

import base64
from pathlib import Path

import nbformat
import pytest

from correcao import notebook_html

ROOT = Path(__file__).resolve().parents[1]

# um PNG de 1x1 pixel, para o anexo de uma célula de Markdown
_PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201c7a5a0b40000000049454e44ae426082")).decode()


def _plain(nb) -> str:
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="basic").from_notebook_node(nb)[0]


def _memo(nb) -> str:
    exporter = notebook_html.html_exporter()
    notebook_html.set_language(exporter, nb)
    return exporter.from_notebook_node(nb)[0]


def _solution(lesson: str, name: str):
    (path,) = [*ROOT.glob(f"solutions/*/{lesson}/{name}.ipynb")] or [*ROOT.glob(f"notebooks/*/{lesson}/{name}.ipynb")]
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("lesson,name", [("aula-01-self-attention", "03-exercicios"),
                                         ("aula-01-self-attention", "02-codigo"),  # figuras
                                         ("aula-03-atencao-num-transformer-real", "02-codigo")])
def test_mesmo_html_que_o_nbconvert_sem_memoria(lesson, name):
    nb = _solution(lesson, name)
    esperado = _plain(nb)
    assert _memo(nb) == esperado
    assert _memo(nb) == esperado  # a segunda vez, com as células na memória


def test_celula_mudada_e_convertida_de_novo():
    nb = _solution("aula-01-self-attention", "03-exercicios")
    _memo(nb)
    code = next(c for c in nb.cells if c.cell_type == "code")
    md = next(c for c in nb.cells if c.cell_type == "markdown")
    code.source += "\nx_novo_do_aluno = 1"
    md.source += "\n\n**texto novo** <script>alert(1)</script>"
    html = _memo(nb)
    assert html == _plain(nb)
    assert "x_novo_do_aluno" in html and "<strong>texto novo</strong>" in html


def test_anexo_e_linguagem_do_notebook():
    """Uma célula com imagem anexada não vem da memória (o anexo é da célula); a linguagem do realce é a do
    notebook convertido, não a do anterior."""
    anexada = nbformat.v4.new_markdown_cell("![pixel](attachment:p.png)")
    anexada["attachments"] = {"p.png": {"image/png": _PIXEL}}
    texto = nbformat.v4.new_markdown_cell("Um texto com `código` e $x^2$.")
    codigo = nbformat.v4.new_code_cell("print('oi')  # comentário")
    for lexer in ("ipython3", "python", "text", None):  # None: sem language_info (o nbconvert usa o ipython3)
        nb = nbformat.v4.new_notebook(cells=[anexada, texto, codigo])
        if lexer:
            nb.metadata["language_info"] = {"name": "python", "pygments_lexer": lexer}
        html = _memo(nb)
        assert html == _plain(nb)
    assert f"data:image/png;base64,{_PIXEL}" in _memo(nb)
