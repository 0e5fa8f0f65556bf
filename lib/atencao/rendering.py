"""Como os exploradores se desenham: HTML ao vivo, figura do matplotlib e imagens PNG.

Todas as escolhas visuais dos dois exploradores (Aulas 1–2 e Aula 3) moram aqui:

- :func:`explorer_html` — a visualização ao vivo (tabelas coloridas e barras): leva milissegundos,
  então cada clique redesenha na hora;
- :func:`draw_explorer` — a mesma visualização numa figura do matplotlib (exportar PNG/SVG e imagem
  estática); os textos do painel lateral vêm de :func:`side_panel`, os mesmos do HTML;
- :func:`thumbnails_png` — a grade camadas × cabeças do modelo em miniatura, montada com NumPy
  (uma matriz de cores por cabeça) e codificada pelo Pillow;
- :func:`static_bundle` — a figura estática que fica salva no notebook (veja
  :mod:`atencao.explorer_widget`);
- :func:`display_static_and_live` — as duas saídas de um explorador: essa figura e o widget vivo.

Fonte: Módulo 6, Aula 1 (``04-projeto``), Aula 2 (``05-projeto``) e Aula 3 (``04-projeto``).
"""

from __future__ import annotations

import base64
import functools
import io
import textwrap
from dataclasses import dataclass
from html import escape

import numpy as np

from .plotting import HIGHLIGHT_COLOR as HIGHLIGHT
from .plotting import HIGHLIGHT_COLOR_NAME, plot_attention_heads, row_maxima, text_color
from .views import ExplorerView

__all__ = ["explorer_html", "draw_explorer", "thumbnails_png", "static_bundle", "display_static_and_live"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"  # o tipo da saída de um widget do ipywidgets

#: Quantas coordenadas do vetor de saída o painel lateral mostra (no HTML e no PNG).
OUTPUT_COORDS = 6
BAR = "#3b6ea8"


# ---------- textos do painel lateral (iguais no HTML e no PNG) ----------
@dataclass
class SidePanel:
    """Os textos ao lado do mapa: quem a consulta olha, o top-k e o vetor de saída."""

    heading: str
    blocked: bool
    top: list
    output_label: str
    output: str


def side_panel(view: ExplorerView) -> SidePanel:
    """Os textos do painel lateral de ``view`` (um só lugar para o HTML e a figura exportada)."""
    q = view.tokens[view.query]
    blocked = bool(view.blocked_rows[view.query])
    if blocked:
        heading = f"“{q}”: linha toda bloqueada pela máscara (não olha para nenhum token)"
    else:
        heading = f"“{q}” olha para…" + (" (média das cabeças)" if view.shown.ndim == 3 else "")
    k = min(OUTPUT_COORDS, len(view.output))
    vec = np.array2string(np.asarray(view.output[:k], dtype=float), precision=2, suppress_small=True)
    return SidePanel(heading, blocked, list(view.top), f"saída de “{q}” ({k} primeiras coordenadas):", vec)


def _row_maxima(w: np.ndarray, allowed) -> np.ndarray:
    """Maior(es) peso(s) de cada linha, só entre as posições permitidas; linha toda bloqueada: nenhum."""

    if allowed is None:
        return row_maxima(w)
    return row_maxima(np.where(allowed, w, -1.0)) & allowed & allowed.any(axis=-1, keepdims=True)


# ---------- HTML ----------
@functools.lru_cache(maxsize=1)
def _viridis_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """256 cores do viridis: em hexadecimal, em RGB (uint8) e, para cada uma, a cor de texto legível."""
    import matplotlib


    rgba = matplotlib.colormaps["viridis"](np.linspace(0, 1, 256))
    return (np.array([matplotlib.colors.to_hex(c) for c in rgba]), (rgba[:, :3] * 255).round().astype(np.uint8),
            np.array([text_color(c) for c in rgba]))


def _color_index(values: np.ndarray, vmax: float) -> np.ndarray:
    return np.clip((values / (vmax or 1.0) * 255).round().astype(int), 0, 255)


def _cell_size(n: int, compact: bool) -> tuple[int, bool]:
    """Lado da célula em px e se os pesos são escritos nela.

    Os números (em negrito no maior da linha) cabem inteiros: 32–34 px. Frases longas encolhem as
    células para o mapa caber na largura de um notebook (~800 px) sem rolagem.
    """
    if n <= (8 if compact else 12):
        return (32 if compact else 34), True
    if n <= 16:
        return (22 if compact else 26), False
    if n <= 40:
        return (12 if compact else 16), False
    return max(6 if compact else 9, (360 if compact else 700) // n), False


def _heatmap_html(w: np.ndarray, tokens: list, query: int, title: str, vmax: float, allowed, compact: bool) -> str:
    """Uma matriz de atenção como tabela HTML colorida (linhas = quem olha, colunas = para quem).

    Células bloqueadas pela máscara ficam hachuradas e vazias; o maior peso de cada linha ganha
    moldura (nenhuma numa linha toda bloqueada, que também fica marcada no rótulo).
    """
    n = len(tokens)
    cell, annotate = _cell_size(n, compact)
    background, _, text = _viridis_table()
    idx = _color_index(w, vmax)
    bg, fg = background[idx], text[idx]
    is_max = _row_maxima(w, allowed)
    blocked_row = np.zeros(n, bool) if allowed is None else ~allowed.any(axis=-1)
    esc = [escape(t) for t in tokens]
    label_px = min(9, cell - 1)
    head = "".join(f"<th class='col' title='{t}'><div style='font-size:{label_px}px'>{t}</div></th>" for t in esc)
    rows = []
    for i in range(n):
        cells = []
        for j in range(n):
            if allowed is not None and not allowed[i, j]:
                cells.append(f"<td class='blocked' data-i='{i}' data-j='{j}' data-w='{w[i, j]:.4f}' "
                             f"title='{esc[i]} → {esc[j]}: bloqueado pela máscara'></td>")
                continue
            mark = " class='max'" if is_max[i, j] else ""
            value = f"{w[i, j]:.2f}" if annotate else ""
            tip = f" title='{esc[i]} → {esc[j]}: {w[i, j]:.3f}'" if n <= 48 else ""  # frases longas: HTML menor
            cells.append(f"<td{mark} data-i='{i}' data-j='{j}' data-w='{w[i, j]:.4f}'{tip} "
                         f"style='background:{bg[i, j]};color:{fg[i, j]}'>{value}</td>")
        classes = " ".join(c for c, on in (("query", i == query), ("blockedrow", blocked_row[i])) if on)
        tr = f"<tr class='{classes}'>" if classes else "<tr>"
        tip = " title='linha toda bloqueada pela máscara'" if blocked_row[i] else ""
        rows.append(f"{tr}<th class='row'{tip}>{esc[i]}</th>{''.join(cells)}</tr>")
    small = " small" if cell < 20 else ""
    return (f"<div class='panel'><div class='ptitle'>{escape(title)}</div>"
            f"<table class='heat{small}' style='--cell:{cell}px'><tr><th class='corner'>quem olha ↓<br>"
            f"para quem →</th>{head}</tr>{''.join(rows)}</table></div>")


def _bars_html(view: ExplorerView, side: SidePanel) -> str:
    """A linha da consulta em barras, o top-k e o vetor de saída."""
    n = len(view.tokens)
    blocked_key = np.zeros(n, bool) if view.allowed is None else ~view.allowed[view.query]
    top_row = float(view.row.max()) or 1.0
    best = -1 if side.blocked else int(np.argmax(np.where(blocked_key, -1.0, view.row)))
    bars = []
    for j, (t, w) in enumerate(zip(view.tokens, view.row)):
        if blocked_key[j]:
            body = "<span class='off'>bloqueado</span>"
        else:
            body = (f"<span class='b{' max' if j == best else ''}' style='width:{150 * w / top_row:.0f}px'></span>"
                    f"<span class='v'>{w:.2f}</span>")
        bars.append(f"<div class='bar'><span class='lbl' title='{escape(t)}'>{escape(t)}</span>{body}</div>")
    top = "".join(f"<tr><td>{escape(t)}</td><td>{w:.3f}</td></tr>" for t, w in side.top)
    top = (f"<div class='sub'>top {len(side.top)}:</div><table class='top'>{top}</table>" if side.top
           else "<div class='sub'>top-k: nenhum token (linha bloqueada)</div>")
    return (f"<div class='bars'><div class='head{' off' if side.blocked else ''}'>{escape(side.heading)}</div>"
            f"{''.join(bars)}{top}<div class='sub'>{escape(side.output_label)}</div>"
            f"<code class='vec'>{escape(side.output)}</code></div>")


#: A classe de um widget vivo que vem depois de uma figura estática (o explorador a tem no HTML dele; outro widget
#: precisa de ``add_class(LIVE_CLASS)``): a regra da figura estática (``_STATIC_CSS``) não o esconde.
LIVE_CLASS = "atx"
#: Com o widget vivo, a figura estática salva logo antes dele (:func:`static_bundle`) sai de cena: a regra vai no
#: HTML de cada widget vivo (o do explorador, em ``_CSS``; o do treino, em :mod:`atencao.training_view`).
LIVE_RULE = ("/* widget vivo: a figura estática salva logo antes dele (atencao.explorer_widget) sai de cena */\n"
             ".jp-OutputArea-child:has(.atx-static):has(+ .jp-OutputArea-child ." + LIVE_CLASS + ") {display: none}")
_CSS = """<style>
.atx {font-family: var(--jp-ui-font-family, sans-serif); font-size: 12px; line-height: 1.3;
      color: var(--jp-ui-font-color1, #222); white-space: normal; max-width: 100%}
.atx .title {font-weight: bold; margin: 2px 0 6px}
.atx .wrap {display: flex; flex-wrap: wrap; gap: 14px 24px; align-items: flex-start}
.atx .maps {display: flex; flex-wrap: wrap; gap: 10px 20px; align-items: flex-start}
.atx .ptitle {font-weight: bold; text-align: center}
.atx table.heat {border-collapse: collapse; font-size: 11px; table-layout: fixed}
.atx table.heat td {width: var(--cell); min-width: var(--cell); max-width: var(--cell); height: var(--cell);
                    text-align: center; padding: 0; overflow: visible; white-space: nowrap; box-sizing: border-box}
.atx table.heat td.max {outline: 2px solid __HIGHLIGHT__; outline-offset: -2px; font-weight: bold}
.atx table.heat.small td {height: var(--cell)}
.atx table.heat th.row {text-align: right; padding: 0 4px 0 0; white-space: nowrap; font-weight: normal;
                        max-width: 110px; overflow: hidden; text-overflow: ellipsis}
.atx table.heat.small th.row {font-size: 9px; line-height: 1}
.atx table.heat tr.query th.row {font-weight: bold; color: __HIGHLIGHT__}
.atx table.heat tr.blockedrow th.row {color: #999; text-decoration: line-through}
.atx table.heat th.col {vertical-align: bottom; font-weight: normal; padding: 0; width: var(--cell);
                        max-width: var(--cell); overflow: hidden}
.atx table.heat th.col div {writing-mode: vertical-rl; transform: rotate(180deg); max-height: 90px;
                            overflow: hidden; padding-top: 2px; margin: 0 auto; line-height: 1; white-space: nowrap}
.atx table.heat td.blocked {background: repeating-linear-gradient(45deg, #eee, #eee 3px, #ddd 3px, #ddd 6px)}
.atx table.heat th.corner {font-size: 9px; color: #888; font-weight: normal; text-align: right;
                           vertical-align: bottom; white-space: nowrap; padding-right: 4px}
.atx .legend {display: flex; flex-wrap: wrap; align-items: center; gap: 6px; font-size: 10px; margin-top: 4px}
.atx .legend .grad {width: 140px; height: 10px;
                    background: linear-gradient(to right, #440154, #3b528b, #21918c, #5ec962, #fde725)}
.atx .bars {flex: 0 0 auto; width: 300px}
.atx .bars .head {font-weight: bold; margin-bottom: 4px}
.atx .bar {display: flex; align-items: center; gap: 4px; height: 15px}
.atx .bar .lbl {flex: 0 0 84px; text-align: right; overflow: hidden; white-space: nowrap; text-overflow: ellipsis}
.atx .bar .b {flex: 0 0 auto; height: 11px; background: #3b6ea8}
.atx .bar .b.max {background: __HIGHLIGHT__}
.atx .bar .v, .atx .bar .off {flex: 0 0 auto; white-space: nowrap}
.atx .off {color: #999}
.atx .sub {margin-top: 8px; white-space: normal; word-break: normal; overflow-wrap: normal}
.atx table.top {border-collapse: collapse; font-family: var(--jp-code-font-family, monospace); font-size: 11px}
.atx table.top td {padding: 0 10px 0 0}
.atx table.top td:first-child {text-align: right}
.atx code.vec {display: block; white-space: nowrap; font-size: 11px; background: none; padding: 0}
__LIVE_RULE__
</style>""".replace("__HIGHLIGHT__", HIGHLIGHT).replace("__LIVE_RULE__", LIVE_RULE)  # o destaque: o da figura


def explorer_html(view: ExplorerView) -> str:
    """A visualização do explorador em HTML (o que o widget mostra a cada mudança).

    Mapa(s) de calor como tabelas coloridas (maior peso de cada linha com moldura na cor de destaque; a linha
    da consulta com o rótulo em vermelho; várias cabeças quebram em linhas) e, ao lado (ou embaixo,
    se não couber), a linha da consulta em barras, o top-k e o vetor de saída. Cada célula traz
    ``data-w`` com o peso, o que permite testá-la no navegador.

    Parameters
    ----------
    view : ExplorerView

    Returns
    -------
    str
        HTML com o seu próprio ``<style>`` (classes sob ``.atx``).
    """
    shown = view.shown if view.shown.ndim == 3 else view.shown[None]
    allowed = None if view.allowed is None else np.asarray(view.allowed, dtype=bool)
    vmax = float(shown.max())
    compact = shown.shape[0] > 1
    titles = [f"cabeça {h}" for h in range(shown.shape[0])] if compact else [""]
    maps = "".join(_heatmap_html(m, view.tokens, view.query, t, vmax, allowed, compact) for m, t in zip(shown, titles))
    legend = (f"<div class='legend'>0<span class='grad'></span>{vmax:.2f} · moldura {HIGHLIGHT_COLOR_NAME} = "
              "maior peso da linha"
              + (" · hachurado = bloqueado pela máscara" if allowed is not None else "") + "</div>")
    return (f"{_CSS}<div class='atx'><div class='title'>{escape(view.title)}</div><div class='wrap'>"
            f"<div><div class='maps'>{maps}</div>{legend}</div>{_bars_html(view, side_panel(view))}</div></div>")


# ---------- figura do matplotlib ----------
def _figure_size(view: ExplorerView) -> tuple[float, float]:
    n = len(view.tokens)
    if view.shown.ndim == 3:
        return 11.0, 8.0 if n <= 12 else 9.5
    return 11.0, 5.2 if n <= 14 else (6.5 if n <= 30 else 8.5)


def draw_explorer(fig, view: ExplorerView) -> None:
    """Desenha ``view`` em ``fig`` (uma ``matplotlib.figure.Figure``), apagando o que havia nela.

    À esquerda, o mapa de calor (ou a grade de cabeças) com o maior peso de cada linha destacado e a
    linha da consulta marcada; à direita, a linha da consulta em barras, o top-k e o vetor que ela
    produz (os mesmos textos de :func:`explorer_html`). O tamanho da figura acompanha o conteúdo.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Redesenhada no lugar (o explorador usa sempre a mesma, sem pyplot).
    view : ExplorerView
    """

    fig.clear()
    fig.set_size_inches(*_figure_size(view))
    n = len(view.tokens)
    side = side_panel(view)
    left, right = fig.subfigures(1, 2, width_ratios=[2.3, 1.0])
    many = view.shown.ndim == 3
    plot_attention_heads(view.shown, view.tokens, figure=left, ncols=2 if many else None, mask=view.allowed,
                         annotate=n <= (8 if many else 12),
                         titles=[f"cabeça {h}" for h in range(view.shown.shape[0])] if many else None)
    blocked_rows = view.blocked_rows
    for ax in left.axes[:-1]:  # a última é a barra de cores
        if ax.images:
            ax.axhspan(view.query - 0.5, view.query + 0.5, fill=False, edgecolor="white", linewidth=1.5,
                       linestyle="--", zorder=4)
            for pos, label in zip(ax.get_yticks(), ax.get_yticklabels()):
                if blocked_rows[round(pos)]:
                    label.set_color("#999999")  # linha toda bloqueada: rótulo apagado, sem moldura
    left.suptitle(view.title, fontsize=10)

    # à direita: as barras em cima (altura conforme o número de tokens) e os textos logo abaixo
    fontsize = 8 if n <= 24 else 6
    # alturas em polegadas: ~0,2 por token (no máximo o que sobra da figura), 1,7 para os textos
    height = fig.get_figheight()
    bars_h = min(height - 2.0, 0.7 + 0.2 * min(n, 40))
    ax_bar, ax_txt, filler = right.subplots(3, 1, height_ratios=[bars_h, 1.7, max(0.01, height - bars_h - 1.7)])
    filler.set_axis_off()
    y = np.arange(n)
    blocked_key = np.zeros(n, bool) if view.allowed is None else ~np.asarray(view.allowed, bool)[view.query]
    best = -1 if side.blocked else int(np.argmax(np.where(blocked_key, -1.0, view.row)))
    ax_bar.barh(y, view.row, color=[HIGHLIGHT if j == best else BAR for j in range(n)])
    step = max(1, int(np.ceil(n / 40)))
    ax_bar.set_yticks(y[::step], [view.tokens[j] for j in y[::step]], fontsize=fontsize)
    ax_bar.set_ylim(n - 0.5, -0.5)
    ax_bar.set_xlim(0, (float(view.row.max()) or 1.0) * 1.15)  # linha toda bloqueada: pesos 0, eixo de 0 a 1
    if n <= 24:
        for j in np.flatnonzero(blocked_key):
            ax_bar.text(0, j, " bloqueado", va="center", ha="left", fontsize=7, color="#999999")
    ax_bar.set_xlabel("peso de atenção", fontsize=8)
    ax_bar.tick_params(axis="x", labelsize=7)
    ax_bar.set_title("\n".join(textwrap.wrap(side.heading, 34)), fontsize=9,
                     color="#999999" if side.blocked else "black")
    ax_txt.set_axis_off()
    top = "\n".join(f"{t:>12}  {w:.3f}" for t, w in side.top) or "nenhum token (linha bloqueada)"
    label = side.output_label.replace(" (", "\n(")  # o mesmo texto do HTML, em duas linhas
    from matplotlib.transforms import blended_transform_factory

    ax_txt.text(0.03, 1.0, f"top {len(side.top)}:\n{top}\n\n{label}\n{side.output}", fontsize=8.5,
                family="monospace", va="top", ha="left",  # x desde a borda da coluna, y logo abaixo das barras
                transform=blended_transform_factory(right.transSubfigure, ax_txt.transAxes))


def render_png(fig, dpi: int = 72, metadata: dict | None = None) -> bytes:
    """A figura como PNG (bytes), com ``dpi`` pontos por polegada; ``metadata``: os campos de texto do PNG (o padrão
    do matplotlib se ``None``; ``{"Software": None}`` tira a versão dele, e o mesmo relatório dá os mesmos bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=metadata)
    return buf.getvalue()


# ---------- miniaturas do modelo ----------
_TILE, _GAP, _LEFT, _TOP = 36, 3, 40, 36


def thumbnails_rgb(attentions: np.ndarray) -> np.ndarray:
    """A grade camadas × cabeças como imagem RGB (uint8), sem destaque; cada miniatura tem 36 × 36 px.

    Parameters
    ----------
    attentions : ndarray, forma (n_layers, n_heads, n, n)
        Pesos em [0, 1] (viridis de 0 a 1, como nos mapas grandes com ``vmax=1``).
    """
    from PIL import Image, ImageDraw

    n_layers, n_heads, n, _ = attentions.shape
    _, rgb, _ = _viridis_table()
    pick = np.arange(_TILE) * n // _TILE  # vizinho mais próximo: cada pixel pega um (consulta, chave)
    tiles = rgb[_color_index(attentions[:, :, pick][:, :, :, pick], 1.0)]  # (L, H, T, T, 3)
    step = _TILE + _GAP
    height, width = _TOP + n_layers * step, _LEFT + n_heads * step
    img = np.full((height, width, 3), 255, np.uint8)
    grid = img[_TOP:, _LEFT:].reshape(n_layers, step, n_heads, step, 3)
    grid[:, :_TILE, :, :_TILE] = tiles.transpose(0, 2, 1, 3, 4)
    pil = Image.fromarray(img)
    draw, font = ImageDraw.Draw(pil), _font(11)
    for h in range(n_heads):
        draw.text((_LEFT + h * step + _TILE / 2, _TOP - 4), str(h), fill="#333333", font=font, anchor="mb")
    for layer in range(n_layers):
        draw.text((_LEFT - 5, _TOP + layer * step + _TILE / 2), str(layer), fill="#333333", font=font, anchor="rm")
    draw.text((_LEFT + n_heads * step / 2, 2), "cabeça", fill="black", font=_font(12), anchor="mt")
    label = Image.new("RGB", (n_layers * step, 16), "white")  # "camada" na vertical, à esquerda
    ImageDraw.Draw(label).text((n_layers * step / 2, 1), "camada", fill="black", font=_font(12), anchor="mt")
    pil.paste(label.rotate(90, expand=True), (1, _TOP))
    return np.asarray(pil)


@functools.lru_cache(maxsize=4)
def _font(size: int):
    """A DejaVu Sans do matplotlib (tem "ç"; a fonte padrão do Pillow não tem)."""
    from pathlib import Path

    import matplotlib
    from PIL import ImageFont

    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"), size)


def thumbnails_png(attentions_or_rgb: np.ndarray, selected: tuple | None = None) -> bytes:
    """PNG da grade camadas × cabeças: cada miniatura é um mapa de atenção (linhas = quem olha).

    Parameters
    ----------
    attentions_or_rgb : ndarray
        Os pesos, forma (n_layers, n_heads, n, n), ou a imagem já montada por :func:`thumbnails_rgb`
        (o explorador guarda a imagem por frase e só redesenha o destaque).
    selected : (camada, cabeça), opcional
        Miniatura destacada com moldura na cor de destaque; ``(camada, "media")`` destaca a camada inteira.

    Returns
    -------
    bytes
        PNG (RGB, 8 bits), sem nenhum Axes do matplotlib (rápido: alguns milissegundos).
    """
    from PIL import Image

    img = attentions_or_rgb if attentions_or_rgb.dtype == np.uint8 else thumbnails_rgb(attentions_or_rgb)
    if selected is not None:
        img = img.copy()
        layer, head = selected
        step = _TILE + _GAP
        top = _TOP + layer * step - 2
        if head == "media":
            left, right = _LEFT - 2, img.shape[1] - _GAP + 1
        else:
            left = _LEFT + int(head) * step - 2
            right = left + _TILE + 3
        bottom = top + _TILE + 3
        red = np.array([int(HIGHLIGHT[k:k + 2], 16) for k in (1, 3, 5)], np.uint8)  # a cor do destaque
        for a, b in ((top, top + 2), (bottom - 1, bottom + 1)):
            img[max(a, 0):b, max(left, 0):right + 1] = red
        for a, b in ((left, left + 2), (right - 1, right + 1)):
            img[max(top, 0):bottom + 1, max(a, 0):b] = red
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


# ---------- figura estática salva no notebook ----------
#: Sem o widget vivo (notebook reaberto, kernel novo), o JupyterLab mostraria "Error displaying widget:
#: model not found" na saída seguinte; esta regra a esconde e deixa só a figura estática.
_STATIC_CSS = ("<style>.jp-OutputArea-child:has(.atx-static) + .jp-OutputArea-child:not(:has(." + LIVE_CLASS + "))"
               " {display: none}</style>")


def static_bundle(png: bytes, text: str, alt: str) -> dict:
    """A figura estática de um explorador como saída do notebook: ``text/html`` (a imagem embutida e a
    regra que esconde o widget morto) e ``text/plain``.

    Parameters
    ----------
    png : bytes
        A imagem.
    text : str
        O texto para quem não mostra HTML (terminal, nbval).
    alt : str
        Descrição da imagem (leitores de tela).

    Returns
    -------
    dict
        ``{"text/html": ..., "text/plain": ...}``, pronto para ``display(..., raw=True)``.
    """
    data = base64.b64encode(png).decode("ascii")
    html = (f'<div class="atx-static"><img alt="{escape(alt)}" src="data:image/png;base64,{data}" '
            f'style="max-width:100%"></div>{_STATIC_CSS}')
    return {"text/html": html, "text/plain": text}


def display_static_and_live(static: dict, widget) -> None:
    """Mostra as duas saídas de um explorador (como ``_ipython_display_`` dos exploradores e do treino da Aula 5):
    a figura estática ``static`` (de :func:`static_bundle`), que fica salva no arquivo, e o widget vivo ``widget``
    (um widget do ipywidgets), só com o tipo do widget e um ``text/plain`` vazio: num notebook reaberto, sem o
    kernel, a figura fica e o widget morto some (a regra de :func:`static_bundle`); no nbval, o texto das duas é o
    da figura.

    Parameters
    ----------
    static : dict
        ``{"text/html": ..., "text/plain": ...}``, de :func:`static_bundle`.
    widget : ipywidgets.Widget
        O widget vivo (um ``VBox``, por exemplo).
    """
    from IPython.display import display

    display(static, raw=True)
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    display({WIDGET_MIME: data[WIDGET_MIME], "text/plain": ""}, raw=True)
