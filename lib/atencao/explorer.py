"""Explorador interativo da atenção: digite uma frase e mexa nos botões das Aulas 1 e 2.

Dividido em três camadas, cada uma testável sozinha:

1. :func:`explorer_view` — **cálculo puro**: frase + controles → :class:`ExplorerView` (tokens,
   pesos, linha da consulta, top-k, vetor de saída). Nenhum gráfico, nenhum widget.
2. :func:`explorer_html` — a visualização ao vivo em HTML (tabelas coloridas e barras): leva
   milissegundos, então cada clique redesenha na hora; :func:`draw_explorer` — a mesma
   visualização numa figura do matplotlib, para exportar em PNG/SVG e como imagem estática.
3. :class:`AttentionExplorer` — só liga os controles do ipywidgets às funções acima. Usa sempre
   **a mesma** figura do matplotlib (sem pyplot: nada vaza nem se acumula) e mostra erros em
   português dentro do próprio widget. Sem front-end de widgets (nbval, nbconvert, GitHub), a
   célula mostra uma imagem estática do estado inicial.

Embeddings para qualquer frase (:func:`explorer_embeddings`): palavras do vocabulário feito à mão
(:data:`atencao.HAND_MADE_VECTORS`) usam os seus 6 números; as demais ganham um vetor
pseudoaleatório fixo (:func:`atencao.embeddings.word_vector`) nas outras coordenadas, com o mesmo
comprimento típico. Assim palavras conhecidas mostram similaridades de verdade e palavras novas não
criam semelhanças falsas com elas.

Fonte: Módulo 6, Aula 1 (``04-projeto``: visualizador de atenção) e Aula 2 (``05-projeto``).
"""

from __future__ import annotations

import base64
import functools
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .attention import check_temperature, scaled_dot_product_attention
from .embeddings import FEATURES, HAND_MADE_VECTORS, VECTOR_SCALE, tokenize, word_vector
from .masks import causal_mask
from .multihead import MultiHeadAttention
from ._validation import check_dim, nfc
from .projections import SelfAttention

__all__ = ["MODES", "ExplorerView", "explorer_embeddings", "explorer_view", "explorer_html", "draw_explorer",
           "AttentionExplorer", "explorar"]

#: Modos do explorador: chave → rótulo mostrado no botão.
MODES = {
    "aula1": "Aula 1: sem projeções",
    "cabeca": "Aula 2: uma cabeça (Q, K, V)",
    "multi": "Multicabeça",
}

_N_FEATURES = len(FEATURES)


def explorer_embeddings(tokens, d_model: int = 16, seed: int = 0) -> np.ndarray:
    """Embeddings (n, d_model) para qualquer lista de tokens (veja a docstring do módulo).

    Raises
    ------
    ValueError
        Se ``d_model`` for menor que 7 (6 coordenadas feitas à mão + pelo menos 1 pseudoaleatória).
    """
    d_model = check_dim(d_model, "d_model")
    if d_model <= _N_FEATURES:
        raise ValueError(f"`d_model` precisa ser maior que {_N_FEATURES}; recebido {d_model}.")
    X = np.zeros((len(tokens), d_model))
    d_rest = d_model - _N_FEATURES
    for i, t in enumerate(nfc(str(t)) for t in tokens):  # "não" decomposto (NFD) acha o vetor de "não"
        if t in HAND_MADE_VECTORS:
            X[i, :_N_FEATURES] = HAND_MADE_VECTORS[t]
        else:
            X[i, _N_FEATURES:] = word_vector(t, d_rest, seed) * (VECTOR_SCALE / np.sqrt(d_rest))
    return X


@dataclass
class ExplorerView:
    """Tudo o que o explorador mostra, já calculado.

    Attributes
    ----------
    tokens : list of str
    weights : ndarray, forma (n_heads, n, n)
        Pesos de todas as cabeças (uma só nos modos sem multicabeça).
    shown : ndarray, forma (n, n) ou (n_heads, n, n)
        O que vai para o mapa de calor: uma cabeça, a média, ou todas.
    query : int
        Índice do token em foco; ``row`` (n,) é a linha dele em ``shown`` (média, se forem todas).
    top : list of (str, float)
        Os ``top_k`` tokens mais atendidos pela consulta.
    output : ndarray, forma (d,)
        O vetor que a consulta produz: a soma dos valores ponderada por ``row`` (no modo
        multicabeça, a saída final depois de W_o).
    title : str
    allowed : ndarray de bool, forma (n, n), ou None
        A máscara usada (``True`` = pode olhar); ``None`` sem máscara.
    """

    tokens: list
    weights: np.ndarray
    shown: np.ndarray
    query: int
    row: np.ndarray
    top: list
    output: np.ndarray
    title: str
    allowed: np.ndarray | None = None
    settings: dict = field(default_factory=dict)


def explorer_view(sentence: str, mode: str = "aula1", causal: bool = False, scale: bool = True,
                  temperature: float = 1.0, head="media", query: int = 0, top_k: int = 3, n_heads: int = 4,
                  d_model: int = 16, seed: int = 0) -> ExplorerView:
    """Calcula o estado do explorador (a função por trás de todos os controles).

    Parameters
    ----------
    sentence : str
        Qualquer frase; os tokens saem de :func:`atencao.tokenize`.
    mode : {"aula1", "cabeca", "multi"}
        Sem projeções (Q = K = V = X); uma cabeça com W_q, W_k, W_v; ou ``n_heads`` cabeças.
    causal : bool
        Aplica :func:`atencao.causal_mask` (cada token só olha para si e para os anteriores).
    scale : bool
        Divide as pontuações por sqrt(d_k) (desligue para ver a softmax saturar).
    temperature : float
        Divide as pontuações (0.1 a 10 no controle deslizante).
    head : int, "media" ou "todas"
        No modo multicabeça: uma cabeça, a média das cabeças, ou todas lado a lado.
    query : int
        Índice do token em foco (0 a n-1).
    top_k : int
        Quantos tokens mais atendidos listar.
    n_heads, d_model, seed : int
        Tamanho e semente dos pesos (sorteados, não treinados).

    Returns
    -------
    ExplorerView

    Raises
    ------
    ValueError
        Frase sem palavras, modo ou cabeça inexistentes, consulta fora da frase, temperatura ≤ 0.
    """
    if mode not in MODES:
        raise ValueError(f"`mode` precisa ser um de {list(MODES)}; recebido {mode!r}.")
    tokens = tokenize(sentence)
    n = len(tokens)
    if not isinstance(query, (int, np.integer)) or not 0 <= query < n:
        raise ValueError(f"`query` precisa ser um índice de 0 a {n - 1} (a frase tem {n} tokens); recebido {query!r}.")
    temperature = check_temperature(temperature)
    top_k = check_dim(top_k, "top_k")
    X = explorer_embeddings(tokens, d_model, seed)
    mask = causal_mask(n) if causal else None
    if mode == "aula1":
        out, W = scaled_dot_product_attention(X, X, X, mask=mask, scale=scale, temperature=temperature)
        W, label = W[None], "sem projeções (Q = K = V = X)"
    elif mode == "cabeca":
        sa = SelfAttention(d_model, d_model // 2, seed=seed)
        out, W = sa(X, mask=mask, scale=scale, temperature=temperature)
        W, label = W[None], f"uma cabeça, d_k = {sa.d_k}"
    else:
        mha = MultiHeadAttention(d_model, n_heads, seed=seed)
        out, W = mha(X, mask=mask, scale=scale, temperature=temperature)
        label = f"{n_heads} cabeças, d_k = {mha.d_k}"
    n_h = W.shape[0]
    if mode != "multi" or head == "media":
        shown, head_label = W.mean(axis=0), ("média das cabeças" if mode == "multi" else "")
    elif head == "todas":
        shown, head_label = W, "todas as cabeças"
    elif isinstance(head, (int, np.integer)) and 0 <= head < n_h:
        shown, head_label = W[head], f"cabeça {head}"
    else:
        raise ValueError(f"`head` precisa ser 'media', 'todas' ou um número de 0 a {n_h - 1}; recebido {head!r}.")
    row = (shown if shown.ndim == 2 else shown.mean(axis=0))[query]
    top = top_tokens(tokens, row, top_k, None if mask is None else mask[query])
    parts = [label] + ([head_label] if head_label else [])
    parts += ["máscara causal"] if causal else []
    parts += [] if scale else ["SEM ÷√d_k"]
    parts += [f"temperatura {temperature:.2g}"] if temperature != 1 else []
    settings = dict(sentence=sentence, mode=mode, causal=causal, scale=scale, temperature=temperature, head=head,
                    query=query, top_k=top_k, n_heads=n_heads, d_model=d_model, seed=seed)
    return ExplorerView(tokens, W, shown, query, row, top, out[query], " · ".join(parts), mask, settings)


def top_tokens(tokens: list, row: np.ndarray, k: int, allowed=None) -> list:
    """Os ``k`` tokens de maior peso numa linha de atenção, ``[(token, peso), ...]``; os bloqueados
    pela máscara (``allowed`` falso) não entram."""
    order = [j for j in np.argsort(-row, kind="stable") if allowed is None or allowed[j]]
    return [(tokens[j], float(row[j])) for j in order[:k]]


def draw_explorer(fig, view: ExplorerView) -> None:
    """Desenha ``view`` em ``fig`` (uma ``matplotlib.figure.Figure``), apagando o que havia nela.

    À esquerda, o mapa de calor (ou a grade de cabeças) com o maior peso de cada linha destacado e a
    linha da consulta marcada; à direita, a linha da consulta em barras e o vetor que ela produz.
    """
    from .plotting import plot_attention_heads

    fig.clear()
    n = len(view.tokens)
    left, right = fig.subfigures(1, 2, width_ratios=[2.6, 1.0])
    many = view.shown.ndim == 3
    plot_attention_heads(view.shown, view.tokens, figure=left, ncols=2 if many else None, mask=view.allowed,
                         annotate=n <= (6 if many else 12),
                         titles=[f"cabeça {h}" for h in range(view.shown.shape[0])] if many else None)
    for ax in left.axes[:-1]:  # a última é a barra de cores
        if ax.images:
            ax.axhspan(view.query - 0.5, view.query + 0.5, fill=False, edgecolor="white", linewidth=1.5,
                       linestyle="--", zorder=4)
    left.suptitle(view.title, fontsize=10)

    ax_bar = right.add_axes((0.32, 0.36 if n <= 24 else 0.3, 0.62, 0.56))  # fora do layout automático
    y = np.arange(n)
    colors = ["#ff3b30" if j == int(np.argmax(view.row)) else "#3b6ea8" for j in range(n)]
    ax_bar.barh(y, view.row, color=colors)
    step = max(1, int(np.ceil(n / 40)))
    ax_bar.set_yticks(y[::step], [view.tokens[j] for j in y[::step]], fontsize=8 if n <= 24 else 6)
    ax_bar.invert_yaxis()
    ax_bar.set_xlim(0, max(1e-9, float(view.row.max())) * 1.15)
    ax_bar.set_xlabel("peso de atenção")
    ax_bar.set_title(f"“{view.tokens[view.query]}” olha para…", fontsize=10)
    top = "\n".join(f"{t}: {w:.2f}" for t, w in view.top)
    vec = np.array2string(view.output[:4], precision=2, suppress_small=True)
    right.text(0.04, 0.01, f"top {len(view.top)}:\n{top}\n\nsaída[:4] = {vec}", fontsize=8, family="monospace",
               va="bottom", ha="left")


@functools.lru_cache(maxsize=1)
def _viridis_table() -> tuple[np.ndarray, np.ndarray]:
    """256 cores do viridis em hexadecimal e, para cada uma, a cor de texto legível sobre ela."""
    import matplotlib

    from .plotting import _text_color

    rgba = matplotlib.colormaps["viridis"](np.linspace(0, 1, 256))
    return np.array([matplotlib.colors.to_hex(c) for c in rgba]), np.array([_text_color(c) for c in rgba])


def _colors(values: np.ndarray, vmax: float) -> tuple[np.ndarray, np.ndarray]:
    """Cores de fundo (viridis) e do texto (preto/branco legível) para cada peso."""
    background, text = _viridis_table()
    idx = np.clip((values / (vmax or 1.0) * 255).round().astype(int), 0, 255)
    return background[idx], text[idx]


def _heatmap_html(w: np.ndarray, tokens: list, query: int, title: str, vmax: float, allowed, compact: bool) -> str:
    """Uma matriz de atenção como tabela HTML colorida (linhas = quem olha, colunas = para quem).

    Células bloqueadas pela máscara ficam cinza e vazias; o maior peso de cada linha ganha moldura.
    """
    from html import escape

    from .plotting import row_maxima

    n = len(tokens)
    small = n > 16 or (compact and n > 8)
    cell = 16 if small else (26 if compact else 34)
    annotate = n <= (8 if compact else 12)
    bg, fg = _colors(w, vmax)
    is_max = row_maxima(w)
    esc = [escape(t) for t in tokens]
    head = "".join(
        f"<th class='col' title='{t}'><div style='writing-mode:vertical-rl;transform:rotate(180deg);"
        f"{'font-size:9px;' if small else ''}max-height:90px;overflow:hidden;padding-top:2px'>{t}</div></th>" for t in esc)
    rows = []
    for i in range(n):
        cells = []
        for j in range(n):
            if allowed is not None and not allowed[i, j]:
                cells.append(f"<td class='blocked' data-i='{i}' data-j='{j}' data-w='{w[i, j]:.4f}' "
                             f"title='{esc[i]} → {esc[j]}: bloqueado pela máscara'></td>")
                continue
            border = "outline:2px solid #ff3b30;outline-offset:-2px;font-weight:bold;" if is_max[i, j] else ""
            text = f"{w[i, j]:.2f}" if annotate else ""
            tip = f" title='{esc[i]} → {esc[j]}: {w[i, j]:.3f}'" if n <= 48 else ""  # frases longas: HTML menor
            cells.append(f"<td data-i='{i}' data-j='{j}' data-w='{w[i, j]:.4f}'{tip} "
                         f"style='background:{bg[i, j]};color:{fg[i, j]};{border}'>{text}</td>")
        mark = " class='query'" if i == query else ""
        rows.append(f"<tr{mark}><th class='row'>{esc[i]}</th>{''.join(cells)}</tr>")
    return (f"<div class='panel'><div class='ptitle'>{escape(title)}</div>"
            f"<table class='heat' style='--cell:{cell}px'><tr><th class='corner'>quem olha ↓ · para quem →</th>"
            f"{head}</tr>{''.join(rows)}</table></div>")


_CSS = """<style>
.atx {font-family: var(--jp-ui-font-family, sans-serif); font-size: 12px; color: var(--jp-ui-font-color1, #222)}
.atx .title {font-weight: bold; margin: 2px 0 6px}
.atx .wrap {display: flex; gap: 18px; align-items: flex-start}
.atx .maps {display: flex; flex-wrap: wrap; gap: 12px; max-width: 760px; max-height: 640px; overflow: auto}
.atx .ptitle {font-weight: bold; text-align: center}
.atx table.heat {border-collapse: collapse; font-size: 11px}
.atx table.heat td {width: var(--cell); min-width: var(--cell); height: var(--cell); text-align: center; padding: 0}
.atx table.heat th.row {text-align: right; padding-right: 4px; white-space: nowrap; font-weight: normal}
.atx table.heat tr.query th.row {font-weight: bold; color: #ff3b30}
.atx table.heat th.col {vertical-align: bottom; font-weight: normal; padding: 0}
.atx table.heat th.col div {margin: 0 auto}
.atx table.heat td.blocked {background: repeating-linear-gradient(45deg, #eee, #eee 3px, #ddd 3px, #ddd 6px)}
.atx .legend {display: flex; align-items: center; gap: 6px; font-size: 10px; margin-top: 4px}
.atx .legend .grad {width: 140px; height: 10px; background: linear-gradient(to right, #440154, #3b528b, #21918c, #5ec962, #fde725)}
.atx table.heat th.corner {font-size: 9px; color: #888; font-weight: normal; text-align: right; vertical-align: bottom}
.atx .bars {min-width: 240px; max-height: 660px; overflow: auto}
.atx .bar {display: flex; align-items: center; gap: 4px; height: 15px}
.atx .bar .lbl {width: 80px; text-align: right; overflow: hidden; white-space: nowrap}
.atx .bar .b {height: 11px; background: #3b6ea8}
.atx .bar .b.max {background: #ff3b30}
.atx pre {font-size: 11px; margin: 6px 0 0}
</style>"""


def explorer_html(view: ExplorerView) -> str:
    """A visualização do explorador em HTML (o que o widget mostra a cada mudança).

    Mapa(s) de calor como tabelas coloridas (maior peso de cada linha com moldura vermelha; a linha
    da consulta com o rótulo em vermelho) e, ao lado, a linha da consulta em barras, o top-k e o
    vetor de saída. Cada célula traz ``data-w`` com o peso, o que permite testá-la no navegador.
    """
    from html import escape

    shown = view.shown if view.shown.ndim == 3 else view.shown[None]
    vmax = float(shown.max())
    titles = [f"cabeça {h}" for h in range(shown.shape[0])] if view.shown.ndim == 3 else [""]
    compact = shown.shape[0] > 1
    maps = "".join(_heatmap_html(m, view.tokens, view.query, t, vmax, view.allowed, compact)
                   for m, t in zip(shown, titles))
    legend = (f"<div class='legend'>0<span class='grad'></span>{vmax:.2f} · moldura vermelha = maior peso da linha"
              + (" · cinza = bloqueado pela máscara" if view.allowed is not None else "") + "</div>")
    top_row = view.row.max() or 1.0
    q = escape(view.tokens[view.query])
    whose = " (média das cabeças)" if compact else ""
    blocked = np.zeros(len(view.tokens), bool) if view.allowed is None else ~view.allowed[view.query]
    best = int(np.argmax(view.row))
    bars = "".join(
        f"<div class='bar'><span class='lbl'>{escape(t)}</span>"
        + ("<span style='color:#999'>bloqueado</span>" if blocked[j] else
           f"<span class='b{' max' if j == best else ''}' style='width:{160 * w / top_row:.0f}px'></span>"
           f"<span>{w:.2f}</span>")
        + "</div>"
        for j, (t, w) in enumerate(zip(view.tokens, view.row)))
    top = "\n".join(f"{escape(t):>12}  {w:.3f}" for t, w in view.top)
    vec = escape(np.array2string(view.output[:6], precision=2, suppress_small=True))
    return (f"{_CSS}<div class='atx'><div class='title'>{escape(view.title)}</div><div class='wrap'>"
            f"<div><div class='maps'>{maps}</div>{legend}</div><div class='bars'><b>“{q}” olha para…{whose}</b>{bars}"
            f"<pre>top {len(view.top)}:\n{top}\n\nsaída de “{q}” (6 primeiras coordenadas):\n{vec}</pre>"
            f"</div></div></div>")


def render_png(fig, dpi: int = 72) -> bytes:
    """A figura como PNG (bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


class AttentionExplorer:
    """O explorador com widgets. Use :func:`explorar` para criá-lo com os padrões de cada aula.

    Parameters
    ----------
    sentence : str
        Frase inicial.
    mode : {"aula1", "cabeca", "multi"}
        Modo inicial.
    **kwargs
        Outros valores iniciais de :func:`explorer_view` (``causal``, ``scale``, ``temperature``,
        ``head``, ``query``, ``top_k``, ``n_heads``, ``d_model``, ``seed``).

    Attributes
    ----------
    view : ExplorerView
        O estado mostrado agora (atualizado a cada mudança de controle).
    fig : matplotlib.figure.Figure
        A única figura do matplotlib, redesenhada no lugar para exportar e para a imagem estática.
    view_html : ipywidgets.HTML
        A visualização ao vivo (:func:`explorer_html`), rápida o bastante para cada clique.
    widget : ipywidgets.VBox
        Os controles, a visualização e a linha de mensagens.
    """

    def __init__(self, sentence: str = "O gato subiu no telhado", mode: str = "aula1", **kwargs):
        import ipywidgets as W
        from matplotlib.figure import Figure

        self._fixed = {k: kwargs.pop(k) for k in ("n_heads", "d_model", "seed") if k in kwargs}
        self.view = explorer_view(sentence, mode, **self._fixed, **kwargs)
        s = self.view.settings
        self.fig = Figure(figsize=(10.5, 5.0), layout="constrained")
        style = {"description_width": "initial"}
        self.sentence = W.Text(value=sentence, description="Frase:", continuous_update=False,
                               layout=W.Layout(width="60%"), style=style)
        self.mode = W.ToggleButtons(options=[(v, k) for k, v in MODES.items()], value=mode, description="Modo:",
                                    style={"description_width": "initial", "button_width": "auto"})
        self.head = W.Dropdown(description="Cabeça:", style=style, layout=W.Layout(width="180px"))
        self.causal = W.Checkbox(value=s["causal"], description="máscara causal", indent=False)
        self.scale = W.Checkbox(value=s["scale"], description="dividir por √d_k", indent=False)
        self.temperature = W.FloatLogSlider(value=s["temperature"], base=10, min=-1, max=1, step=0.05,
                                            description="Temperatura:", continuous_update=False, style=style)
        self.query = W.Dropdown(description="Consulta:", style=style, layout=W.Layout(width="220px"))
        self.top_k = W.IntSlider(value=s["top_k"], min=1, max=8, description="top-k:", continuous_update=False,
                                 style=style, layout=W.Layout(width="260px"))
        self.filename = W.Text(value="atencao", description="Arquivo:", style=style, layout=W.Layout(width="260px"))
        self.save_png = W.Button(description="Salvar PNG", icon="download")
        self.save_svg = W.Button(description="Salvar SVG", icon="download")
        self.view_html = W.HTML()
        self.message = W.HTML()
        self._set_options(self.view)
        self.head.value = s["head"]
        self.widget = W.VBox([
            W.HBox([self.sentence, self.query]),
            self.mode,
            W.HBox([self.head, self.causal, self.scale, self.temperature, self.top_k]),
            self.view_html,
            W.HBox([self.filename, self.save_png, self.save_svg]),
            self.message,
        ])
        self._updating = False
        for control in (self.sentence, self.mode, self.head, self.causal, self.scale, self.temperature,
                        self.query, self.top_k):
            control.observe(self._on_change, names="value")
        self.save_png.on_click(lambda _: self.export("png"))
        self.save_svg.on_click(lambda _: self.export("svg"))
        self._redraw()

    # ---------- ligação controles → cálculo → figura ----------
    def _set_options(self, view: ExplorerView) -> None:
        """Opções que dependem do estado: tokens da consulta e cabeças do modo."""
        self._updating = True
        try:
            self.query.options = [(f"{i}: {t}", i) for i, t in enumerate(view.tokens)]
            self.query.value = view.query
            n_h = view.weights.shape[0]
            options = [("média", "media"), ("todas", "todas")] + [(f"cabeça {h}", h) for h in range(n_h)]
            if view.settings["mode"] != "multi":
                options = [("única", "media")]
            if list(self.head.options) != options:
                self.head.options = options
            self.head.disabled = view.settings["mode"] != "multi"
        finally:
            self._updating = False

    def settings(self) -> dict:
        """Os valores atuais dos controles, no formato de :func:`explorer_view`."""
        return dict(sentence=self.sentence.value, mode=self.mode.value, causal=self.causal.value,
                    scale=self.scale.value, temperature=self.temperature.value, head=self.head.value,
                    query=self.query.value, top_k=self.top_k.value, **self._fixed)

    def _on_change(self, change) -> None:
        if self._updating:
            return
        try:
            settings = self.settings()
            if change["owner"] is self.sentence:  # tokens novos: consulta volta ao início se sair da frase
                n = len(tokenize(settings["sentence"]))
                settings["query"] = settings["query"] if settings["query"] is not None and settings["query"] < n else 0
            if change["owner"] is self.mode:
                settings["head"] = "media"
            view = explorer_view(**settings)
        except Exception as exc:  # noqa: BLE001 - todo erro vira mensagem no próprio widget
            self.message.value = f"<span style='color:#c0392b'>⚠️ {_escape(str(exc))}</span>"
            return
        self.view = view
        self._set_options(view)
        if self.head.value != view.settings["head"]:
            self._updating = True
            self.head.value = view.settings["head"]
            self._updating = False
        self.message.value = ""
        self._redraw()

    def _redraw(self) -> None:
        self.view_html.value = explorer_html(self.view)

    def update(self, **changes) -> ExplorerView:
        """Muda controles pelo Python (como um clique faria) e devolve o novo estado."""
        for name, value in changes.items():
            getattr(self, name).value = value
        return self.view

    def export(self, fmt: str = "png", filename: str | None = None) -> Path | None:
        """Salva a figura atual em PNG ou SVG, no nome escolhido (relativo à pasta do notebook).

        Returns
        -------
        Path ou None
            Caminho salvo; ``None`` se deu erro (a mensagem aparece no widget).
        """
        try:
            if fmt not in ("png", "svg"):
                raise ValueError(f"formato {fmt!r} não suportado: use 'png' ou 'svg'.")
            name = (filename if filename is not None else self.filename.value).strip()
            if not name:
                raise ValueError("escreva um nome de arquivo no campo “Arquivo”.")
            path = Path(name)
            if path.suffix.lower() != f".{fmt}":
                path = path.with_name(path.name + f".{fmt}")
            path.parent.mkdir(parents=True, exist_ok=True)
            draw_explorer(self.fig, self.view)
            self.fig.savefig(path, format=fmt, dpi=150)
        except Exception as exc:  # noqa: BLE001
            self.message.value = f"<span style='color:#c0392b'>⚠️ Não foi possível salvar: {_escape(str(exc))}</span>"
            return None
        self.message.value = f"✅ Figura salva em <code>{_escape(str(path.resolve()))}</code>"
        return path

    # ---------- exibição ----------
    def __repr__(self) -> str:
        s = self.view.settings
        return f"AttentionExplorer(frase={s['sentence']!r}, modo={s['mode']!r})"

    def _repr_mimebundle_(self, **kwargs):
        """Widget ao vivo no JupyterLab; imagem estática onde não há widgets (nbval, GitHub)."""
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data)
        data["text/plain"] = f"Explorador de atenção — {self.view.title}"
        draw_explorer(self.fig, self.view)
        data["image/png"] = base64.b64encode(render_png(self.fig, dpi=80)).decode("ascii")
        return data


def _escape(text: str) -> str:
    import html

    return html.escape(text)


def explorar(sentence: str = "O gato subiu no telhado", mode: str = "aula1", **kwargs) -> AttentionExplorer:
    """Cria o explorador interativo (ponto de entrada dos projetos das Aulas 1 e 2).

    Exemplo: ``atencao.explorar("O coração não esquece a saudade", mode="multi")`` como última linha
    de uma célula.

    Parameters
    ----------
    sentence, mode, **kwargs
        Como em :class:`AttentionExplorer`.

    Returns
    -------
    AttentionExplorer
    """
    return AttentionExplorer(sentence, mode, **kwargs)
