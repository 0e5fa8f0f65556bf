"""Regra de tamanho dos mapas de calor: a figura cabe no notebook e o texto continua legível.

A regra, para toda figura de :mod:`atencao.plotting`:

1. **Largura.** No máximo ``MAX_WIDTH_IN`` = 10 polegadas, ou seja, 1000 px no dpi padrão do
   matplotlib e do backend inline do Jupyter (100). É a largura útil de uma célula do JupyterLab:
   a figura aparece no tamanho natural, sem ser reduzida pelo navegador.
2. **Texto.** Nenhum texto menor que ``MIN_FONT_PT`` = 8 pt nesse tamanho (rótulos dos tokens 8 ou
   9 pt, números nas células 8 ou 9 pt, títulos 10 pt).
3. **Células.** Uma célula nunca é menor que o seu conteúdo: o número anotado (``0.00``) com
   margem ou, sem números, a altura de um rótulo de token.
4. **Grades.** Painéis que não cabem numa linha quebram em mais linhas, equilibradas (a altura
   cresce, a largura não). Se nem um painel cabe com as células mínimas (muitos tokens), as
   células ficam menores, mas o texto não: só 1 rótulo a cada k é escrito e os números somem.
   Nesses casos o notebook deve mostrar **menos** (algumas cabeças escolhidas, um trecho da
   frase, um resumo por camada) em vez de encolher tudo.
5. **Rótulos.** A figura cresce para caber os rótulos, medidos com a própria fonte do matplotlib:
   um ``fig.savefig(...)`` simples (sem ``bbox_inches``) não corta nada.

Tudo em polegadas (1 pol = 72 pt = 100 px no dpi padrão).

Fonte: issue "Figures and explorers that read well at any size"; Módulo 6, Aula 3, ``02-codigo``.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from functools import lru_cache

#: Largura útil de uma célula de notebook, em px, e o dpi com que o Jupyter mostra as figuras.
NOTEBOOK_WIDTH_PX = 1000
DPI = 100
MAX_WIDTH_IN = NOTEBOOK_WIDTH_PX / DPI
#: Menor tamanho de texto permitido, em pontos, no tamanho em que a figura é mostrada.
MIN_FONT_PT = 8

TITLE_PT = 10
SUPTITLE_PT = 11
LABEL_PT = 9          # "quem olha (consultas)", "para quem (chaves)", "peso de atenção"
COLORBAR_TICK_PT = 8

_GAP = 0.25           # entre painéis
_MARGIN = 0.12        # bordas da figura (o constrained layout usa ~0,04 pol de cada lado)
_AXIS_TITLE = 0.28    # "quem olha (consultas)" ou "para quem (chaves)": uma linha de 9 pt e folga
_COLORBAR = 0.95      # barra, números e "peso de atenção"
_TICK_PAD = 0.12      # distância entre o rótulo e o eixo
_MEASURE_DPI = 720    # medidas de texto em pixels finos (a 72 dpi o arredondamento é de 1 pt)


def text_size_in(text: str, size: float, weight: str = "normal") -> tuple[float, float]:
    """Largura e altura (polegadas) de um texto de uma linha na fonte atual do matplotlib, sem mathtext."""
    import matplotlib

    rc = matplotlib.rcParams
    return _text_size(text, float(size), weight, tuple(rc["font.family"]), tuple(rc["font.sans-serif"]))


@lru_cache(maxsize=4096)
def _text_size(text: str, size: float, weight: str, family: tuple, sans: tuple) -> tuple[float, float]:
    from matplotlib.font_manager import FontProperties

    w, h, _ = _renderer().get_text_width_height_descent(text or " ", FontProperties(size=size, weight=weight),
                                                      ismath=False)
    return w / _MEASURE_DPI, max(h / _MEASURE_DPI, size * 1.17 / 72.0)


@lru_cache(maxsize=1)
def _renderer():
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(10, 10, _MEASURE_DPI)


def display_font_pt(font_pt: float, fig_width_in: float, dpi: float = DPI,
                    notebook_px: float = NOTEBOOK_WIDTH_PX) -> float:
    """Tamanho aparente (pt) de um texto quando a figura é reduzida para caber em ``notebook_px``."""
    return font_pt * min(1.0, notebook_px / (fig_width_in * dpi))


def wrap(text: str | None, width_in: float, size: float) -> str | None:
    """Quebra ``text`` em linhas que cabem em ``width_in`` polegadas (na fonte de ``size`` pt)."""
    if not text:
        return text
    if max(text_size_in(line, size)[0] for line in text.split("\n")) <= width_in + 1e-6:
        return text
    per_char = text_size_in(text, size)[0] / max(1, len(text))
    return "\n".join(textwrap.fill(line, max(8, int(width_in / per_char))) for line in text.split("\n"))


def _lines(text: str | None) -> int:
    return 0 if not text else text.count("\n") + 1


@dataclass
class GridLayout:
    """Decisões de tamanho de uma grade de mapas de calor (veja a regra no topo do módulo)."""

    rows: int
    cols: int
    cell: float                 # lado de uma célula, em polegadas
    figsize: tuple[float, float]
    tick_pt: float              # rótulos dos tokens
    annot_pt: float             # números nas células
    annotate: bool
    x_step: int                 # escreve 1 rótulo de coluna a cada x_step
    y_step: int
    rotate_x: bool              # rótulos das colunas na vertical
    titles: list | None
    suptitle: str | None


def labels_collide(widths: list, step: int, cell: float) -> bool:
    """Rótulos horizontais das colunas (1 a cada ``step``) encostariam uns nos outros?"""
    shown = widths[::step]
    return any((a + b) / 2 + 0.06 > cell * step for a, b in zip(shown, shown[1:]))


def tick_font(n: int) -> float:
    return 9.0 if n <= 16 else 8.0


def annot_font(n: int) -> float:
    return 9.0 if n <= 8 else 8.0


def min_label_cell(tick_pt: float) -> float:
    """Menor célula em que rótulos vizinhos (um por célula) não se sobrepõem."""
    return text_size_in("Ág", tick_pt)[1] + 0.03


def min_annot_cell(annot_pt: float) -> float:
    """Menor célula que comporta o número ``0.00`` em negrito com margem."""
    return text_size_in("0.00", annot_pt, "bold")[0] + 0.08


def grid_layout(n_panels: int, n_q: int, n_k: int, tokens_q: list, tokens_k: list, *, annotate: bool | None,
                cols: int, titles: list | None, suptitle: str | None) -> GridLayout:
    """Aplica a regra: quantas colunas cabem, as fontes, o lado da célula e o tamanho da figura.

    ``cols`` é o número de colunas pedido (no máximo). Em ordem de preferência, tenta caber com
    ``cols`` colunas: rótulos de 9 pt, depois de 8 pt, e, quando os números nas células são só o
    padrão (``annotate=None``: até 12 tokens), sem os números. Se nada disso cabe, a grade quebra
    em mais linhas (``annotate=True`` mantém os números e quebra a grade).
    """
    n = max(n_q, n_k)
    want_annot = (n_q <= 12 and n_k <= 12) if annotate is None else bool(annotate)
    title_w = max((text_size_in(line, TITLE_PT)[0] for t in (titles or []) for line in str(t).split("\n")),
                  default=0.0)

    def option(tick_pt: float, annot: bool) -> dict:
        label_min = min_label_cell(tick_pt)
        annot_pt = min(annot_font(n), tick_pt)
        cell_min = max(label_min, min_annot_cell(annot_pt)) if annot else label_min
        ytick_w = max(text_size_in(t, tick_pt)[0] for t in tokens_q) + _TICK_PAD
        return dict(tick_pt=tick_pt, annot_pt=annot_pt, annot=annot, label_min=label_min, cell_min=cell_min,
                    cell_pref=0.5 if annot else max(cell_min, min(0.32, 5.0 / n)),
                    fixed=2 * _MARGIN + _AXIS_TITLE + ytick_w + _COLORBAR)

    def width(o: dict, c: int, cell: float) -> float:
        panel = max(n_k * cell, min(title_w, MAX_WIDTH_IN / c - _GAP))
        return o["fixed"] + c * panel + (c - 1) * _GAP

    cols = max(1, min(cols, n_panels))
    fonts = sorted({tick_font(n), float(MIN_FONT_PT)}, reverse=True)
    annots = [want_annot] + ([False] if want_annot and annotate is None else [])
    options = [option(t, a) for a in annots for t in fonts]
    o = next((o for o in options if width(o, cols, o["cell_min"]) <= MAX_WIDTH_IN), options[-1])
    if width(o, cols, o["cell_min"]) > MAX_WIDTH_IN:
        while cols > 1 and width(o, cols, o["cell_min"]) > MAX_WIDTH_IN:
            cols -= 1  # quebra em linhas em vez de encolher
        cols = math.ceil(n_panels / math.ceil(n_panels / cols))  # linhas equilibradas: 4 painéis → 2 × 2
    rows = math.ceil(n_panels / cols)
    cell = min(o["cell_pref"], (MAX_WIDTH_IN - o["fixed"] - (cols - 1) * _GAP) / (cols * n_k))
    show_annot = o["annot"] and cell >= min_annot_cell(o["annot_pt"])  # só não cabe com 1 painel e tokens demais
    step = max(1, math.ceil(o["label_min"] / cell - 1e-9))
    x_widths = [text_size_in(t, o["tick_pt"])[0] for t in tokens_k]
    rotate_x = labels_collide(x_widths, step, cell)

    w_in = min(MAX_WIDTH_IN, width(o, cols, cell))
    panel_w = (w_in - o["fixed"] - (cols - 1) * _GAP) / cols
    titles = None if titles is None else [wrap(str(t), max(panel_w, 1.0), TITLE_PT) for t in titles]
    if suptitle:
        sup_w = text_size_in(suptitle, SUPTITLE_PT)[0] + 2 * _MARGIN
        w_in = min(MAX_WIDTH_IN, max(w_in, sup_w))
        suptitle = wrap(suptitle, w_in - 2 * _MARGIN, SUPTITLE_PT)
    title_lines = max((_lines(t) for t in titles), default=0) if titles else 0
    xtick_h = (max(x_widths) if rotate_x else text_size_in("Ág", o["tick_pt"])[1]) + _TICK_PAD
    panel_h = n_q * cell + xtick_h + title_lines * text_size_in("Ág", TITLE_PT)[1] * 1.25
    h_in = (2 * _MARGIN + rows * panel_h + (rows - 1) * _GAP + _AXIS_TITLE
            + _lines(suptitle) * text_size_in("Ág", SUPTITLE_PT)[1] * 1.3)
    h_in = max(h_in, 2.2)  # a barra de cores precisa de altura para os seus números
    return GridLayout(rows=rows, cols=cols, cell=cell, figsize=(w_in, h_in), tick_pt=o["tick_pt"],
                      annot_pt=o["annot_pt"], annotate=show_annot, x_step=step, y_step=step, rotate_x=rotate_x,
                      titles=titles, suptitle=suptitle)


def layout_in(width_in: float, height_in: float, n_panels: int, n_q: int, n_k: int, tokens_q: list,
              tokens_k: list, *, annotate: bool | None, cols: int, titles: list | None, suptitle: str | None,
              colorbar: bool = True) -> GridLayout:
    """A mesma regra num espaço já dado (um Axes ou uma SubFigure de tamanho fixo): a figura não muda.

    As fontes continuam ≥ ``MIN_FONT_PT``; o que se ajusta é o lado da célula, se os números cabem
    nela e quantos rótulos são escritos.
    """
    n = max(n_q, n_k)
    tick_pt, annot_pt = tick_font(n), annot_font(n)
    label_min = min_label_cell(tick_pt)
    want_annot = (n_q <= 12 and n_k <= 12) if annotate is None else bool(annotate)
    cols = max(1, min(cols, n_panels))
    rows = math.ceil(n_panels / cols)
    ytick_w = max(text_size_in(t, tick_pt)[0] for t in tokens_q) + _TICK_PAD
    x_widths = [text_size_in(t, tick_pt)[0] for t in tokens_k]
    longest_x = max(x_widths)
    avail_w = width_in - _AXIS_TITLE - ytick_w - (_COLORBAR if colorbar else 0) - (cols - 1) * _GAP
    title_h = text_size_in("Ág", TITLE_PT)[1] * 1.25 if titles else 0.0
    avail_h = (height_in - _AXIS_TITLE - _lines(suptitle) * text_size_in("Ág", SUPTITLE_PT)[1] * 1.3
               - rows * title_h - (rows - 1) * _GAP)
    cell_w = avail_w / (cols * n_k)
    # os rótulos das colunas ocupam altura: na vertical, a do maior deles
    cell_h_flat = (avail_h - rows * (text_size_in("Ág", tick_pt)[1] + _TICK_PAD)) / (rows * n_q)
    cell = max(0.01, min(cell_w, cell_h_flat))
    step = max(1, math.ceil(label_min / cell - 1e-9))
    rotate_x = labels_collide(x_widths, step, cell)
    if rotate_x:
        cell = max(0.01, min(cell_w, (avail_h - rows * (longest_x + _TICK_PAD)) / (rows * n_q)))
        step = max(1, math.ceil(label_min / cell - 1e-9))
    return GridLayout(rows=rows, cols=cols, cell=cell, figsize=(width_in, height_in), tick_pt=tick_pt,
                      annot_pt=annot_pt, annotate=want_annot and cell >= min_annot_cell(annot_pt),
                      x_step=step, y_step=step, rotate_x=rotate_x, titles=titles, suptitle=suptitle)
