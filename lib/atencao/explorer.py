"""Explorador interativo da atenção: digite uma frase e mexa nos botões das Aulas 1 e 2.

Três camadas, cada uma testável sozinha:

1. :func:`explorer_view` (:mod:`atencao.views`) — **cálculo puro**: frase + controles →
   :class:`ExplorerView`. Nenhum gráfico, nenhum widget.
2. :mod:`atencao.rendering` — o HTML ao vivo (:func:`~atencao.rendering.explorer_html`) e a figura do
   matplotlib para exportar e para a imagem estática (:func:`~atencao.rendering.draw_explorer`).
3. :class:`AttentionExplorer` — os controles desta aula sobre a base comum
   :class:`atencao.explorer_widget.ExplorerWidget` (erros em português no próprio widget, exportar,
   figura estática que sobrevive ao notebook salvo e reaberto).

Fonte: Módulo 6, Aula 1 (``04-projeto``: visualizador de atenção) e Aula 2 (``05-projeto``).
"""

from __future__ import annotations

from .embeddings import tokenize
from .explorer_widget import ExplorerWidget, control_row
from .rendering import draw_explorer, explorer_html  # noqa: F401 - nomes antigos deste módulo
from .views import MODES, ExplorerView, explorer_embeddings, explorer_view  # noqa: F401

__all__ = ["AttentionExplorer", "explorar", "explorer_view", "ExplorerView"]


class AttentionExplorer(ExplorerWidget):
    """O explorador com widgets. Use :func:`explorar` para criá-lo com os padrões de cada aula.

    Parameters
    ----------
    sentence : str
        Frase inicial.
    mode : {"aula1", "cabeca", "multi"}
        Modo inicial.
    **kwargs
        Outros valores iniciais de :func:`explorer_view` (``causal``, ``sqrt_dk``, ``temperature``,
        ``head``, ``query``, ``top_k``, ``positions``, ``n_heads``, ``d_model``, ``seed``).

    Raises
    ------
    ValueError
        Valores iniciais inválidos (como em :func:`explorer_view`).

    Attributes
    ----------
    view : ExplorerView
        O estado mostrado agora (atualizado a cada mudança de controle).
    fig : matplotlib.figure.Figure
        A única figura do matplotlib, redesenhada no lugar para exportar e para a imagem estática.
    view_html : ipywidgets.HTML
        A visualização ao vivo, rápida o bastante para cada clique.
    widget : ipywidgets.VBox
        Os controles, a visualização e a linha de mensagens.
    """

    label = "Explorador de atenção"

    def __init__(self, sentence: str = "O gato subiu no telhado", mode: str = "aula1", **kwargs):
        import ipywidgets as widgets

        self._fixed = {k: kwargs.pop(k) for k in ("n_heads", "d_model", "seed") if k in kwargs}
        super().__init__(sentence, explorer_view(sentence, mode, **self._fixed, **kwargs))
        s = self.view.settings
        style = {"description_width": "initial"}
        self.mode = widgets.ToggleButtons(options=[(v, k) for k, v in MODES.items()], value=mode, description="Modo:",
                                    style={"description_width": "initial", "button_width": "auto"})
        self.head = widgets.Dropdown(description="Cabeça:", style=style, layout=widgets.Layout(width="170px"))
        self.causal = widgets.Checkbox(value=s["causal"], description="máscara causal", indent=False,
                                 layout=widgets.Layout(width="auto", margin="2px 14px 2px 8px"))
        self.sqrt_dk = widgets.Checkbox(value=s["sqrt_dk"], description="dividir por √d_k", indent=False,
                                  layout=widgets.Layout(width="auto", margin="2px 14px 2px 2px"))
        self.positions = widgets.Checkbox(value=s["positions"], description="somar posições (PE)", indent=False,
                                    layout=widgets.Layout(width="auto", margin="2px 14px 2px 2px"))
        self.temperature = widgets.FloatLogSlider(value=s["temperature"], base=10, min=-1, max=1, step=0.05,
                                            description="Temperatura:", continuous_update=False, style=style,
                                            layout=widgets.Layout(width="330px"))
        self.top_k = widgets.IntSlider(value=s["top_k"], min=1, max=8, description="top-k:", continuous_update=False,
                                 style=style, layout=widgets.Layout(width="250px"))
        self._assemble([
            control_row(self.sentence, self.query),
            self.mode,
            control_row(self.head, self.causal, self.sqrt_dk, self.positions, self.temperature, self.top_k),
        ])

    def _controls(self) -> dict:
        return dict(sentence=self.sentence, mode=self.mode, causal=self.causal, sqrt_dk=self.sqrt_dk,
                    temperature=self.temperature, head=self.head, query=self.query, top_k=self.top_k,
                    positions=self.positions)

    def _compute(self, settings: dict, owner) -> ExplorerView:
        if owner is self.sentence:  # tokens novos: a consulta volta ao início se sair da frase
            n = len(tokenize(settings["sentence"]))
            if settings["query"] is None or settings["query"] >= n:
                settings["query"] = 0
        if owner is self.mode:
            settings["head"] = "media"
        return explorer_view(**settings)

    def _sync_extra(self, view: ExplorerView) -> None:
        multi = view.settings["mode"] == "multi"
        n_h = view.weights.shape[0]
        options = ([("média", "media"), ("todas", "todas")] + [(f"cabeça {h}", h) for h in range(n_h)] if multi
                   else [("única", "media")])
        if list(self.head.options) != options:
            self.head.options = options
        self.head.value = view.settings["head"] if multi else "media"
        self.head.disabled = not multi

    def _static_png(self) -> bytes:
        return self._figure_png()

    def __repr__(self) -> str:
        s = self.view.settings
        return f"AttentionExplorer(frase={s['sentence']!r}, modo={s['mode']!r})"


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

    Raises
    ------
    ValueError
        Valores iniciais inválidos (como em :func:`explorer_view`).
    """
    return AttentionExplorer(sentence, mode, **kwargs)
