"""Mapas de calor da atenção com matplotlib: uma função desenha uma cabeça ou uma grade de cabeças.

Linhas = consultas ("quem olha"), colunas = chaves ("para quem"). Em cada linha, a célula de maior
peso ganha uma moldura e o número em negrito. Todas as cabeças de uma grade usam a mesma escala de
cores e uma única barra de cores.

As funções devolvem um :class:`AttentionPlot` (desempacotável como ``fig, axes = ...``) e não deixam
um ``<Figure ...>`` no notebook: a figura aparece uma única vez, desenhada pelo próprio Jupyter.

Fonte: Módulo 6, Aula 1 (``02-codigo``, ``04-projeto``) e Aula 2 (``05-projeto``, mapas por cabeça).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_tokens, shape_str

__all__ = ["AttentionPlot", "plot_attention", "plot_attention_heads"]

#: Cor da moldura que destaca o maior peso de cada linha (visível sobre o viridis claro e escuro).
HIGHLIGHT_COLOR = "#ff3b30"


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


def _text_color(rgba) -> str:
    """Preto sobre células claras, branco sobre escuras (luminância relativa, ITU-R BT.709)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def _tick_step(n: int, max_labels: int = 40) -> int:
    """Passo entre rótulos para frases longas (mostra no máximo ``max_labels`` rótulos por eixo)."""
    return max(1, int(np.ceil(n / max_labels)))


def row_maxima(w: np.ndarray, ignore_self: bool = False) -> np.ndarray:
    """Máscara booleana (n_q, n_k) do(s) maior(es) peso(s) de cada linha (empates incluídos).

    Com ``ignore_self`` a diagonal (o próprio token) fica de fora, como em
    :func:`atencao.text.strongest_attention`.
    """
    w = np.where(np.eye(*w.shape, dtype=bool), -np.inf, w) if ignore_self and min(w.shape) > 1 else w
    return np.isclose(w, w.max(axis=-1, keepdims=True), rtol=0, atol=1e-12)


def _draw_heatmap(ax, w, tokens_q, tokens_k, norm, cmap, annotate, highlight_max, fontsize, ignore_self=False):
    """Desenha uma matriz de pesos ``w`` (n_q, n_k) em ``ax``; devolve a imagem (para a barra de cores)."""
    import matplotlib

    n_q, n_k = w.shape
    cm = (matplotlib.colormaps[cmap] if isinstance(cmap, str) else cmap).with_extremes(bad="#d9d9d9")  # bloqueado
    im = ax.imshow(np.ma.masked_invalid(w), cmap=cm, norm=norm, aspect="equal", interpolation="nearest")
    sx, sy = _tick_step(n_k), _tick_step(n_q)
    longest = max(len(t) for t in tokens_k)
    long_labels = longest * n_k > 26 or n_k > 12
    ax.set_xticks(range(0, n_k, sx), [tokens_k[j] for j in range(0, n_k, sx)],
                  rotation=90 if long_labels else 0, ha="center", va="top")
    ax.set_yticks(range(0, n_q, sy), [tokens_q[i] for i in range(0, n_q, sy)], va="center")
    ax.tick_params(length=0)
    ax.set_xlabel("para quem (chaves)")
    ax.set_ylabel("quem olha (consultas)")
    ax.set_xticks(np.arange(-0.5, n_k, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_q, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5, alpha=0.4)
    ax.tick_params(which="minor", length=0)
    # bloqueadas (NaN) nunca são o maior peso: uma linha toda bloqueada fica sem moldura
    is_max = (row_maxima(np.nan_to_num(w, nan=-1.0), ignore_self) & ~np.isnan(w) if highlight_max
              else np.zeros(w.shape, dtype=bool))
    if annotate:
        for i in range(n_q):
            for j in range(n_k):
                if np.isnan(w[i, j]):
                    continue
                color = _text_color(im.cmap(norm(w[i, j])))
                ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", color=color, fontsize=fontsize,
                        fontweight="bold" if is_max[i, j] else "normal")
    if highlight_max:
        from matplotlib.patches import Rectangle

        for i, j in zip(*np.nonzero(is_max)):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=HIGHLIGHT_COLOR,
                                   linewidth=2.2, zorder=3))
    return im


def plot_attention_heads(weights, tokens_q, tokens_k=None, titles=None, ncols: int | None = None,
                         annotate: bool | None = None, highlight_max: bool = True, ignore_self: bool = False,
                         cmap: str = "viridis",
                         vmax: float | None = None, suptitle: str | None = None, axes=None,
                         figure=None, mask=None) -> AttentionPlot:
    """Grade de mapas de calor: uma cabeça, várias cabeças ou camadas × cabeças.

    Parameters
    ----------
    weights : array_like
        Forma (n_q, n_k) para uma matriz; (n_heads, n_q, n_k) para uma cabeça por painel
        (quebra em linhas de ``ncols``); (n_linhas, n_colunas, n_q, n_k) para uma grade explícita.
    tokens_q : list of str, tamanho n_q
        Rótulos das linhas (consultas).
    tokens_k : list of str, tamanho n_k, opcional
        Rótulos das colunas (padrão: ``tokens_q``, caso da self-attention).
    titles : list of str, opcional
        Um título por painel (padrão: "cabeça 0", "cabeça 1", ... quando há mais de um painel).
    ncols : int, opcional
        Painéis por linha para entrada 3-D (padrão: ⌈√n_heads⌉, no máximo 4; 4 cabeças → 2 × 2).
    annotate : bool, opcional
        Escrever o peso em cada célula (padrão: só se n_q e n_k ≤ 12).
    highlight_max : bool
        Moldura e negrito no maior peso de cada linha (todos, em caso de empate).
    ignore_self : bool
        Destaca o maior peso **fora da diagonal** (o outro token mais atendido), como
        ``strongest_attention(..., ignore_self=True)``.
    cmap : str
        Mapa de cores do matplotlib.
    vmax : float, opcional
        Topo da escala de cores, comum a todos os painéis (padrão: o maior peso; a base é 0).
    suptitle : str, opcional
        Título geral.
    axes : Axes do matplotlib, opcional
        Só para uma matriz 2-D: desenha nesse eixo em vez de criar uma figura.
    mask : array_like de bool, opcional, compatível com (n_q, n_k)
        Máscara usada no cálculo (``True`` = pode olhar): as posições bloqueadas aparecem em cinza,
        sem número.
    figure : Figure ou SubFigure do matplotlib, opcional
        Desenha a grade dentro dela (vazia) em vez de criar uma figura com o pyplot; é o que o
        explorador interativo usa para redesenhar sempre na mesma figura.

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

    Fonte: Módulo 6, Aula 1 (``04-projeto``) e Aula 2 (``05-projeto``).
    """
    from matplotlib.colors import Normalize

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
    single = w.ndim == 2
    n_q, n_k = w.shape[-2:]
    if mask is not None:
        from ._validation import broadcast_mask

        w = np.where(broadcast_mask(mask, w.shape), w, np.nan)
    tokens_q = check_tokens(tokens_q, n_q, "tokens_q", "linhas", w.shape)
    tokens_k = tokens_q if tokens_k is None and n_q == n_k else tokens_k
    if tokens_k is None:
        raise ValueError(f"`tokens_k` é obrigatório quando n_q ≠ n_k (forma {shape_str(w.shape)}).")
    tokens_k = check_tokens(tokens_k, n_k, "tokens_k", "colunas", w.shape)

    if w.ndim == 2:
        grid = w[None, None]
    elif w.ndim == 3:
        cols = min(4, int(np.ceil(np.sqrt(w.shape[0])))) if ncols is None else max(1, int(ncols))
        rows = int(np.ceil(w.shape[0] / cols))
        grid = np.full((rows * cols, n_q, n_k), np.nan)
        grid[: w.shape[0]] = w
        grid = grid.reshape(rows, cols, n_q, n_k)
    else:
        grid = w
    rows, cols = grid.shape[:2]
    n_panels = w.shape[0] if w.ndim == 3 else rows * cols
    if titles is None and n_panels > 1:
        titles = [f"cabeça {h}" for h in range(n_panels)]
    if titles is not None and len(titles) != n_panels:
        raise ValueError(f"`titles` tem {len(titles)} título(s), mas há {n_panels} painel(is).")

    annotate = (n_q <= 12 and n_k <= 12) if annotate is None else annotate
    norm = Normalize(vmin=0.0, vmax=float(np.nanmax(grid)) if vmax is None else float(vmax))
    fontsize = 9 if max(n_q, n_k) <= 8 else 7

    if axes is not None:
        if not single:
            raise ValueError("`axes` só pode ser usado com uma matriz 2-D (n_q, n_k).")
        fig, ax_grid = axes.figure, np.array([[axes]])
    else:
        if figure is None:
            import matplotlib.pyplot as plt

            cell = 0.55 if max(n_q, n_k) <= 12 else max(0.18, 7.0 / max(n_q, n_k))
            pw, ph = max(3.0, cell * n_k + 1.6), max(2.6, cell * n_q + 1.4)
            figure = plt.figure(figsize=(pw * cols + 1.2, ph * rows + (0.5 if suptitle else 0)), layout="constrained")
        fig, ax_grid = figure, figure.subplots(rows, cols, squeeze=False)
    im = None
    for r in range(rows):
        for c in range(cols):
            ax = ax_grid[r, c]
            k = r * cols + c
            if np.isnan(grid[r, c]).all():
                ax.set_axis_off()
                continue
            im = _draw_heatmap(ax, grid[r, c], tokens_q, tokens_k, norm, cmap, annotate, highlight_max, fontsize,
                               ignore_self)
            if titles is not None:
                ax.set_title(titles[k])
            if c > 0:
                ax.set_ylabel("")
            if r < rows - 1:
                ax.set_xlabel("")
    fig.colorbar(im, ax=ax_grid.ravel().tolist(), label="peso de atenção", shrink=0.85 if rows == 1 else 0.6)
    if suptitle:
        fig.suptitle(suptitle)
    return AttentionPlot(fig, ax_grid[0, 0] if single else ax_grid)


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
