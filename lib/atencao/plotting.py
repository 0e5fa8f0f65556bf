"""Mapas de calor da atenção com matplotlib: uma função desenha uma cabeça ou uma grade de cabeças.

Linhas = consultas ("quem olha"), colunas = chaves ("para quem"). Em cada linha, a célula de maior
peso ganha uma moldura e o número em negrito (uma linha bloqueada, sem nenhum peso, não tem maior
peso). Todas as cabeças de uma grade usam a mesma escala de cores e uma única barra de cores. O
tamanho das figuras segue a regra de :mod:`atencao._layout` (cabem em 1000 px, texto ≥ 8 pt).

As funções devolvem um :class:`AttentionPlot` (desempacotável como ``fig, axes = ...``) e não deixam
um ``<Figure ...>`` no notebook: a figura aparece uma única vez, desenhada pelo próprio Jupyter.

Fonte: Módulo 6, Aula 1 (``02-codigo``, ``04-projeto``) e Aula 2 (``05-projeto``, mapas por cabeça).
"""

from __future__ import annotations

import sys
import unicodedata
import warnings
from dataclasses import dataclass

import numpy as np

from . import _layout
from ._validation import as_float_array, check_tokens, shape_str

__all__ = ["AttentionPlot", "plot_attention", "plot_attention_heads", "row_maxima", "token_label"]

#: Cor da moldura que destaca o maior peso de cada linha (visível sobre o viridis claro e escuro), e o nome
#: dela nas legendas dos exploradores: trocar a cor é mudar só estas duas linhas.
HIGHLIGHT_COLOR = "#ff3b30"
HIGHLIGHT_COLOR_NAME = "vermelha"


class AttentionPlot:
    """Resultado de um gráfico: ``fig`` (Figure) e ``axes`` (um Axes ou um array 2-D de Axes).

    Desempacotável (``fig, axes = plot_attention(...)``). No Jupyter, como última expressão de uma
    célula, não imprime nada: a figura já é mostrada pelo matplotlib.
    """

    def __init__(self, fig, axes):
        self.fig = fig
        self.axes = axes

    def __iter__(self):
        return iter((self.fig, self.axes))

    def __repr__(self) -> str:
        return f"AttentionPlot({len(self.fig.axes)} eixo(s))"

    def _ipython_display_(self):
        """Nada a mostrar além da própria figura, que o backend inline do Jupyter já exibe."""


def text_color(rgba) -> str:
    """A cor do número escrito sobre uma célula de cor ``rgba`` (tupla RGB ou RGBA, cada canal de 0 a 1):
    ``"black"`` sobre células claras, ``"white"`` sobre escuras, pela luminância relativa (ITU-R BT.709, limiar
    0,45). Usada pelos mapas de calor e pelo explorador (:mod:`atencao.rendering`)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def token_label(token: str) -> str:
    r"""O rótulo de um token como aparece no gráfico: o texto literal.

    Caracteres de controle (quebra de linha, tabulação...) aparecem escritos como ``\n``, ``\t``; ``$``,
    ``_``, ``%`` e ``\`` aparecem como são (os rótulos são desenhados sem o mathtext do matplotlib).
    """
    return "".join(repr(ch)[1:-1] if unicodedata.category(ch) == "Cc" else ch for ch in str(token))


def row_maxima(w: np.ndarray, ignore_self: bool = False) -> np.ndarray:
    """Máscara booleana (n_q, n_k) do(s) maior(es) peso(s) de cada linha (empates incluídos).

    Com ``ignore_self`` a diagonal (o próprio token) fica de fora, como em
    :func:`atencao.text.strongest_attention`. ``NaN`` marca uma posição bloqueada pela máscara.
    Uma linha **bloqueada** (nenhum peso positivo: todas as chaves mascaradas, pesos todos 0 ou
    ``NaN``) não tem máximo: a linha inteira fica ``False``. Com ``ignore_self``, o mesmo vale
    para uma linha cujo único peso positivo é o do próprio token.
    """
    w = np.where(np.isnan(w), -np.inf, np.asarray(w, dtype=float))
    if ignore_self:
        w = np.where(np.eye(*w.shape, dtype=bool), -np.inf, w)
    top = w.max(axis=-1, keepdims=True)
    return (top > 0) & np.isclose(w, top, rtol=0, atol=1e-12)


@dataclass(frozen=True)
class _PanelStyle:
    """O que todos os painéis de uma grade compartilham: a escala (``norm``) e o mapa de cores, o layout
    (:class:`atencao._layout.GridLayout`: fontes, passo entre rótulos, se os números são escritos) e o destaque
    do maior peso de cada linha."""

    norm: object
    cmap: object
    layout: _layout.GridLayout
    highlight_max: bool = True
    ignore_self: bool = False


def _draw_heatmap(ax, w, tokens_q, tokens_k, style: _PanelStyle, y_labels=True):
    """Desenha um painel: a matriz de pesos ``w`` (n_q, n_k) em ``ax``; devolve a imagem (para a barra de cores).

    ``y_labels=False`` omite os rótulos das linhas (painéis à direita na grade).
    """
    import matplotlib

    norm, cmap, layout, highlight_max = style.norm, style.cmap, style.layout, style.highlight_max
    n_q, n_k = w.shape
    cm = (matplotlib.colormaps[cmap] if isinstance(cmap, str) else cmap).with_extremes(bad="#d9d9d9")  # bloqueado
    im = ax.imshow(np.ma.masked_invalid(w), cmap=cm, norm=norm, aspect="equal", interpolation="nearest")
    sx, sy = layout.x_step, layout.y_step
    ax.set_xticks(range(0, n_k, sx), [token_label(tokens_k[j]) for j in range(0, n_k, sx)], parse_math=False,
                  rotation=90 if layout.rotate_x else 0, ha="center", va="top")
    if y_labels:
        ax.set_yticks(range(0, n_q, sy), [token_label(tokens_q[i]) for i in range(0, n_q, sy)], parse_math=False,
                      va="center")
    else:
        ax.set_yticks([])  # os rótulos das linhas ficam no painel da esquerda (as linhas se alinham)
    ax.tick_params(length=0, labelsize=layout.tick_pt, pad=2)
    ax.set_xlabel("para quem (chaves)", fontsize=_layout.LABEL_PT)
    ax.set_ylabel("quem olha (consultas)", fontsize=_layout.LABEL_PT)
    # linhas entre as células: duas coleções de linhas (mais leves que ticks menores + grade)
    ax.vlines(np.arange(0.5, n_k - 1), -0.5, n_q - 0.5, colors="white", linewidth=0.5, alpha=0.4)
    ax.hlines(np.arange(0.5, n_q - 1), -0.5, n_k - 0.5, colors="white", linewidth=0.5, alpha=0.4)
    ax.set_xlim(-0.5, n_k - 0.5)
    ax.set_ylim(n_q - 0.5, -0.5)
    is_max = row_maxima(w, style.ignore_self) if highlight_max else np.zeros(w.shape, dtype=bool)
    if layout.annotate:
        for i in range(n_q):
            for j in range(n_k):
                if np.isnan(w[i, j]):
                    continue
                color = text_color(im.cmap(norm(w[i, j])))
                ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", color=color, fontsize=layout.annot_pt,
                        fontweight="bold" if is_max[i, j] else "normal")
    if highlight_max:
        from matplotlib.patches import Rectangle

        lw = float(np.clip(layout.cell * 72 * 0.1, 1.2, 2.2))  # moldura proporcional à célula (pt)
        for i, j in zip(*np.nonzero(is_max)):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=HIGHLIGHT_COLOR,
                                   linewidth=lw, zorder=3))
    return im


_INLINE = ("inline", "module://matplotlib_inline.backend_inline")


def pyplot():
    """O ``matplotlib.pyplot``, com as figuras mostradas no Jupyter no fim da célula que as desenha.

    No matplotlib 3.8 (o mínimo do curso), o backend inline do Jupyter é carregado no meio do
    ``import matplotlib.pyplot`` e, quando esse import acontece dentro de uma célula (a primeira figura do
    notebook, desenhada pela biblioteca), o matplotlib-inline só liga a exibição das figuras depois dessa
    célula: a figura aparecia uma célula atrasada. Aqui a ligação é feita na hora, com as mesmas duas chamadas
    do matplotlib-inline (``activate_matplotlib`` e ``configure_inline_support``). Fora do Jupyter, com
    outro backend ou com a exibição já ligada (matplotlib 3.9 ou mais novo), só devolve o pyplot.

    Returns
    -------
    module
        ``matplotlib.pyplot``.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    backend = matplotlib.rcParams._get("backend")  # sem resolver o backend (get_backend() o carregaria)
    if shell is None or backend not in _INLINE:
        return plt
    from matplotlib_inline.backend_inline import configure_inline_support, flush_figures

    if flush_figures not in shell.events.callbacks.get("post_execute", []):
        from IPython.core.pylabtools import activate_matplotlib

        activate_matplotlib(backend)
        configure_inline_support(shell, backend)
    return plt


def _root_figure(artist):
    """A figura de cima (a ``Figure``, não uma ``SubFigure``) de um Artist, em qualquer matplotlib da faixa do
    curso (``get_figure(root=True)`` só existe a partir do 3.10). ``SubFigure.figure`` aponta para a figura
    de cima (ou para a SubFigure que a contém, no 3.10+); a ``Figure`` aponta para si mesma."""
    fig = artist.figure
    while fig.figure is not fig:
        fig = fig.figure
    return fig


def _axes_space(ax) -> tuple[float, float]:
    """Espaço (polegadas) que um Axes existente terá: a sua célula da grade se a figura tem um layout
    automático (constrained/tight, que a ocupa inteira), senão a posição atual."""
    fig = _root_figure(ax)
    fw, fh = fig.get_size_inches()
    spec = ax.get_subplotspec()
    if spec is not None and fig.get_layout_engine() is not None:
        n_rows, n_cols = spec.get_gridspec().get_geometry()
        return fw * len(spec.colspan) / n_cols, fh * len(spec.rowspan) / n_rows
    box = ax.get_position()
    return box.width * fw, box.height * fh


def plot_attention_heads(weights, tokens_q, tokens_k=None, titles=None, ncols: int | None = None,
                         annotate: bool | None = None, highlight_max: bool = True, ignore_self: bool = False,
                         cmap: str = "viridis",
                         vmax: float | None = None, suptitle: str | None = None, axes=None,
                         figure=None, mask=None) -> AttentionPlot:
    """Grade de mapas de calor: uma cabeça, várias cabeças ou camadas × cabeças.

    O tamanho segue a regra de :mod:`atencao._layout`: a figura tem no máximo 10 polegadas
    (1000 px, a largura do notebook), nenhum texto fica abaixo de 8 pt, as células não encolhem
    abaixo do seu conteúdo e a figura cresce para caber os rótulos. Se os painéis não cabem numa
    linha, a grade quebra em mais linhas. Com muitas cabeças ou muitos tokens, desenhe **menos**
    (algumas cabeças escolhidas, ``weights[..., a:b, a:b]`` com ``tokens[a:b]``) em vez de tudo.

    Parameters
    ----------
    weights : array_like
        Forma (n_q, n_k) para uma matriz; (n_heads, n_q, n_k) para uma cabeça por painel
        (quebra em linhas de ``ncols``); (n_linhas, n_colunas, n_q, n_k) para uma grade explícita
        (que também quebra em mais linhas se as colunas não couberem na largura).
    tokens_q : list of str, tamanho n_q
        Rótulos das linhas (consultas), escritos literalmente (``$x$`` aparece como ``$x$``).
    tokens_k : list of str, tamanho n_k, opcional
        Rótulos das colunas (padrão: ``tokens_q``, caso da self-attention).
    titles : list of str, opcional
        Um título por painel (padrão: "cabeça 0", "cabeça 1", ... quando há mais de um painel).
    ncols : int, opcional
        Painéis por linha para entrada 3-D, no máximo (padrão: ⌈√n_heads⌉ até 4; 4 cabeças → 2 × 2).
        Se as colunas não couberem em 1000 px com células legíveis, são menos.
    annotate : bool, opcional
        Escrever o peso em cada célula (padrão: só se n_q e n_k ≤ 12 e a grade cabe na largura com
        células que comportam os números). Os números só são escritos se a célula os comporta em
        8 pt; com ``annotate=True`` numa figura criada aqui e células pequenas demais, um aviso.
    highlight_max : bool
        Moldura e negrito no maior peso de cada linha (todos, em caso de empate). Uma linha
        bloqueada (todas as chaves mascaradas) não tem maior peso e não ganha moldura.
    ignore_self : bool
        Destaca o maior peso **fora da diagonal** (o outro token que recebe mais atenção), como
        ``strongest_attention(..., ignore_self=True)``.
    cmap : str
        Mapa de cores do matplotlib.
    vmax : float, opcional
        Topo da escala de cores, comum a todos os painéis (padrão: o maior peso; a base é 0).
    suptitle : str, opcional
        Título geral (quebrado em linhas se for mais largo que a figura).
    axes : Axes do matplotlib, opcional
        Só para uma matriz 2-D: desenha nesse eixo em vez de criar uma figura (o tamanho é o dele).
    mask : array_like de bool, opcional, compatível com (n_q, n_k)
        Máscara usada no cálculo (``True`` = pode olhar): as posições bloqueadas aparecem em cinza,
        sem número.
    figure : Figure ou SubFigure do matplotlib, opcional
        Desenha a grade dentro dela (vazia, de tamanho fixo) em vez de criar uma figura com o pyplot;
        é o que o explorador interativo usa para redesenhar sempre na mesma figura.

    Returns
    -------
    AttentionPlot
        ``fig`` e ``axes`` (array 2-D de Axes, ou o Axes único para entrada 2-D).

    Raises
    ------
    ValueError
        Forma de ``weights`` com menos de 2 ou mais de 4 eixos, pesos fora de [0, 1], ``NaN``/``inf``,
        número de tokens diferente do número de linhas/colunas, ``axes`` com entrada de várias cabeças.
    TypeError
        Pesos não numéricos ou tokens dados como um texto único.

    Fonte: Módulo 6, Aula 1 (``04-projeto``), Aula 2 (``05-projeto``) e Aula 3 (``02-codigo``).
    """
    from matplotlib.colors import Normalize

    w = _checked_weights(weights, mask)
    single = w.ndim == 2
    n_q, n_k = w.shape[-2:]
    tokens_q, tokens_k = _checked_tokens(tokens_q, tokens_k, w.shape)
    if axes is not None and not single:
        raise ValueError("`axes` só pode ser usado com uma matriz 2-D (n_q, n_k).")
    panels = w.reshape(-1, n_q, n_k)
    titles = _panel_titles(titles, panels.shape[0])
    layout = _grid_layout(panels.shape[0], n_q, n_k, tokens_q, tokens_k, axes=axes, figure=figure,
                          annotate=annotate, cols=_wanted_columns(w, ncols), titles=titles, suptitle=suptitle)
    if axes is not None:
        fig, ax_grid = axes.figure, np.array([[axes]])
    else:
        figure = figure if figure is not None else _new_figure(layout, n_k, warn_annotate=bool(annotate))
        fig, ax_grid = figure, figure.subplots(layout.rows, layout.cols, squeeze=False)
    norm = Normalize(vmin=0.0, vmax=float(np.nanmax(panels)) if vmax is None else float(vmax))
    style = _PanelStyle(norm, cmap, layout, highlight_max, ignore_self)
    _draw_grid(fig, ax_grid, panels, tokens_q, tokens_k, style)
    return AttentionPlot(fig, ax_grid[0, 0] if single else ax_grid)


def _checked_weights(weights, mask) -> np.ndarray:
    """Os pesos como array de floats com 2 a 4 eixos, em [0, 1]; as posições bloqueadas por ``mask`` viram
    ``NaN``. Levanta ``ValueError``/``TypeError`` como diz :func:`plot_attention_heads`."""
    w = as_float_array(weights, "weights", expected="(n_q, n_k)")
    if w.ndim > 4:
        raise ValueError(
            f"`weights` precisa ter forma (n_q, n_k), (n_heads, n_q, n_k) ou (linhas, colunas, n_q, n_k); "
            f"recebida forma {shape_str(w.shape)}."
        )
    if w.min() < -1e-6 or w.max() > 1 + 1e-6:
        raise ValueError(
            f"`weights` devem estar em [0, 1] (são pesos de atenção); recebido intervalo "
            f"[{w.min():.3g}, {w.max():.3g}]. Passou as pontuações em vez dos pesos da softmax?"
        )
    if mask is not None:
        from ._validation import broadcast_mask

        w = np.where(broadcast_mask(mask, w.shape), w, np.nan)
    return w


def _checked_tokens(tokens_q, tokens_k, shape) -> tuple[list, list]:
    """Os rótulos das linhas e das colunas conferidos contra ``shape`` (``tokens_k`` padrão: ``tokens_q``, se a
    matriz é quadrada)."""
    n_q, n_k = shape[-2:]
    tokens_q = check_tokens(tokens_q, n_q, "tokens_q", "linhas", shape)
    tokens_k = tokens_q if tokens_k is None and n_q == n_k else tokens_k
    if tokens_k is None:
        raise ValueError(f"`tokens_k` é obrigatório quando n_q ≠ n_k (forma {shape_str(shape)}).")
    return tokens_q, check_tokens(tokens_k, n_k, "tokens_k", "colunas", shape)


def _wanted_columns(w: np.ndarray, ncols: int | None) -> int:
    """Quantos painéis por linha a grade quer (o layout pode usar menos, se não couberem na largura)."""
    if w.ndim == 2:
        return 1
    if w.ndim == 4:
        return w.shape[1]
    n_panels = w.shape[0]
    return min(4, int(np.ceil(np.sqrt(n_panels)))) if ncols is None else max(1, int(ncols))


def _panel_titles(titles, n_panels: int):
    """Um título por painel: os dados, ou "cabeça h" quando há mais de um painel e nenhum foi dado."""
    if titles is None and n_panels > 1:
        titles = [f"cabeça {h}" for h in range(n_panels)]
    if titles is not None and len(titles) != n_panels:
        raise ValueError(f"`titles` tem {len(titles)} título(s), mas há {n_panels} painel(is).")
    return titles


def _grid_layout(n_panels, n_q, n_k, tokens_q, tokens_k, *, axes, figure, **common) -> _layout.GridLayout:
    """O layout da grade (:mod:`atencao._layout`): no espaço de ``axes`` ou de ``figure``, se dados; senão, o
    tamanho que a figura nova terá."""
    labels_q, labels_k = [token_label(t) for t in tokens_q], [token_label(t) for t in tokens_k]
    if axes is not None:
        return _layout.layout_in(*_axes_space(axes), 1, n_q, n_k, labels_q, labels_k, **common)
    if figure is not None:
        fw, fh = figure.bbox.width / figure.dpi, figure.bbox.height / figure.dpi
        return _layout.layout_in(fw, fh, n_panels, n_q, n_k, labels_q, labels_k, **common)
    return _layout.grid_layout(n_panels, n_q, n_k, labels_q, labels_k, **common)


def _new_figure(layout: _layout.GridLayout, n_k: int, warn_annotate: bool):
    """Uma figura nova do pyplot no tamanho do layout; avisa se ``annotate=True`` foi pedido e os números não
    cabem nas células."""
    figure = pyplot().figure(figsize=layout.figsize, layout="constrained")
    figure.get_layout_engine().set(wspace=0.04, hspace=0.04)
    if warn_annotate and not layout.annotate:
        warnings.warn(
            f"annotate=True, mas os números não cabem nas células: com {n_k} colunas, cada célula tem "
            f"{layout.cell * 72:.0f} pt e um número de {layout.annot_pt:.0f} pt precisa de "
            f"{_layout.min_annot_cell(layout.annot_pt) * 72:.0f} pt. Foram omitidos; desenhe um trecho da "
            "frase (weights[a:b, a:b] e tokens[a:b]) para vê-los.", stacklevel=3)
    return figure


def _draw_grid(fig, ax_grid, panels, tokens_q, tokens_k, style: _PanelStyle) -> None:
    """A grade: um painel (:func:`_draw_heatmap`) por matriz de ``panels`` (n_panels, n_q, n_k), com os nomes
    dos eixos só na borda, uma barra de cores comum e o título geral. Painéis a mais, ou todos bloqueados, somem."""
    layout, n_panels, cols = style.layout, panels.shape[0], style.layout.cols
    im = None
    for k, ax in enumerate(ax_grid.ravel()):
        if k >= n_panels or np.isnan(panels[k]).all():
            ax.set_axis_off()
            continue
        first_column = k % cols == 0
        im = _draw_heatmap(ax, panels[k], tokens_q, tokens_k, style, y_labels=first_column)
        if layout.titles is not None:
            ax.set_title(layout.titles[k], fontsize=_layout.TITLE_PT)
        if not first_column:
            ax.set_ylabel("")
        if k + cols < n_panels:  # há um painel logo abaixo: o nome do eixo x fica só na última linha
            ax.set_xlabel("")
    cbar = fig.colorbar(im, ax=ax_grid.ravel().tolist(), shrink=0.85 if layout.rows == 1 else 0.6)
    cbar.set_label("peso de atenção", fontsize=_layout.LABEL_PT)
    cbar.ax.tick_params(labelsize=_layout.COLORBAR_TICK_PT)
    if layout.suptitle:
        fig.suptitle(layout.suptitle, fontsize=_layout.SUPTITLE_PT)


def plot_attention(weights, tokens, tokens_k=None, title: str | None = None, ax=None, **kwargs) -> AttentionPlot:
    """Mapa de calor de uma matriz de atenção (n_q, n_k): atalho de :func:`plot_attention_heads`.

    Parameters
    ----------
    weights : array_like, forma (n_q, n_k)
        Pesos de atenção (cada linha soma 1).
    tokens : list of str, tamanho n_q
        Rótulos das linhas, e das colunas se ``tokens_k`` não for dado.
    tokens_k : list of str, opcional
        Rótulos das colunas.
    title : str, opcional
    ax : Axes do matplotlib, opcional
        Desenha num eixo existente.
    **kwargs
        Repassados a :func:`plot_attention_heads` (``annotate``, ``highlight_max``, ``ignore_self``,
        ``cmap``, ``vmax``).

    Returns
    -------
    AttentionPlot

    Raises
    ------
    ValueError, TypeError
        Como em :func:`plot_attention_heads`; além disso, se ``weights`` não for 2-D.

    Fonte: Módulo 6, Aula 1, ``02-codigo`` e ``04-projeto``.
    """
    w = as_float_array(weights, "weights", expected="(n_q, n_k)")
    if w.ndim != 2:
        raise ValueError(
            f"`weights` precisa ter forma (n_q, n_k); recebida forma {shape_str(w.shape)}. "
            "Para várias cabeças, use plot_attention_heads."
        )
    return plot_attention_heads(w, tokens, tokens_k, titles=[title] if title else None, axes=ax, **kwargs)
