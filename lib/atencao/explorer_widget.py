"""A ligação dos controles (ipywidgets) comum aos dois exploradores.

:class:`ExplorerWidget` cuida do que :class:`atencao.explorer.AttentionExplorer` (Aulas 1–2) e
:class:`atencao.model_explorer.ModelExplorer` (Aula 3) têm em comum: o campo "Frase", a
"Consulta", a visualização ao vivo (:func:`atencao.rendering.explorer_html`), a linha de mensagens
(erros em português, com o nome do campo que o aluno vê), exportar PNG/SVG, ``update``,
``settings`` e o que fica salvo no notebook. Cada explorador só diz quais são os seus controles e
como calcular a visão (:mod:`atencao.views`).

O que fica salvo no notebook
----------------------------
O JupyterLab escolhe **um** tipo por saída e prefere o do widget
(``application/vnd.jupyter.widget-view+json``, ordem −10, ``safe: false``) a qualquer imagem ou
HTML da mesma saída. Ao reabrir um notebook salvo, o modelo do widget não existe mais (o kernel é
outro) e o renderizador do ``@jupyter-widgets/jupyterlab-manager`` não recua para os outros tipos:
escreve "Error displaying widget: model not found". Salvar o estado dos widgets (opção desligada por
padrão no JupyterLab) mostraria controles mortos e dependeria de cada instalação. Por isso o
explorador mostra **duas saídas**:

1. a figura estática (:func:`atencao.rendering.static_bundle`: ``text/html`` com a imagem
   embutida + ``text/plain``), que qualquer visualizador mostra (GitHub, nbconvert, correção);
2. o widget, com ``text/plain`` vazio.

O CSS do widget vivo esconde a figura estática que vem logo antes dele; o CSS da figura estática
esconde a saída seguinte enquanto ela não tiver um explorador vivo (o "model not found" de um
notebook reaberto). Num notebook não confiável o JupyterLab nem tenta o widget (``safe: false``):
mostra a figura e o texto vazio.

Fonte: Módulo 6, Aulas 1, 2 e 3 (projetos).
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from .rendering import display_static_and_live, draw_explorer, explorer_html, render_png, static_bundle
from .views import ExplorerView

__all__ = ["ExplorerWidget"]



def control_row(*children, **layout):
    """Uma linha de controles (widgets do ipywidgets, ``children``) que quebra quando a largura acaba (nada
    espremido): um ``ipywidgets.HBox``; ``layout`` vai ao ``ipywidgets.Layout`` dela."""
    import ipywidgets as widgets

    return widgets.HBox(list(children), layout=widgets.Layout(flex_flow="row wrap", align_items="center", **layout))


class ExplorerWidget:
    """Base dos exploradores com widgets (não use diretamente).

    Parameters
    ----------
    sentence : str
        Frase inicial.
    view : ExplorerView
        A visão inicial (já validada: um erro aqui sobe para quem criou o explorador).

    Attributes
    ----------
    view : ExplorerView
        O estado mostrado agora (atualizado a cada mudança de controle).
    sentence, query : ipywidgets.Text, ipywidgets.Dropdown
    view_html : ipywidgets.HTML
        A visualização ao vivo (:func:`atencao.rendering.explorer_html`).
    message : ipywidgets.HTML
        Erros e avisos, em português.
    widget : ipywidgets.VBox
        Tudo junto (criado por :meth:`_assemble`).
    """

    #: Nome mostrado no texto simples da saída e no ``repr``.
    label = "Explorador"

    def __init__(self, sentence: str, view: ExplorerView):
        import ipywidgets as widgets

        self.view = view
        self._fig = None
        self._updating = False
        style = {"description_width": "initial"}
        self.sentence = widgets.Text(value=sentence, description="Frase:", continuous_update=False, style=style,
                               layout=widgets.Layout(flex="1 1 360px", min_width="280px", max_width="720px"))
        self.query = widgets.Dropdown(description="Consulta:", style=style, layout=widgets.Layout(width="230px"))
        self.view_html = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.message = widgets.HTML()
        self.filename = widgets.Text(value="atencao", description="Arquivo:", style=style,
                                     layout=widgets.Layout(width="260px"))
        self.save_png = widgets.Button(description="Salvar PNG", icon="download")
        self.save_svg = widgets.Button(description="Salvar SVG", icon="download")
        self.save_png.on_click(lambda _: self.export("png"))
        self.save_svg.on_click(lambda _: self.export("svg"))

    # ---------- o que cada explorador define ----------
    def _controls(self) -> dict:
        """Nome do argumento da função de visão → controle que o define."""
        raise NotImplementedError

    def _compute(self, settings: dict, owner) -> ExplorerView:
        """A visão para ``settings`` (``owner`` = o controle que mudou, ou None)."""
        raise NotImplementedError

    def _static_png(self) -> bytes:
        """A figura estática (PNG) do estado atual."""
        raise NotImplementedError

    def _sync_extra(self, view: ExplorerView) -> None:
        """Opções de controles que dependem do estado (além da consulta)."""

    # ---------- montagem ----------
    def _assemble(self, rows: list) -> None:
        """Monta ``widget`` (linhas de controles, visualização, exportar, mensagens) e liga os controles."""
        import ipywidgets as widgets

        salvar = control_row(self.filename, self.save_png, self.save_svg)
        self.widget = widgets.VBox(rows + [self.view_html, salvar, self.message], layout=widgets.Layout(width="100%"))
        self._sync_controls(self.view)
        for control in self._controls().values():
            control.observe(self._on_change, names="value")
        self._redraw()

    # ---------- controles → cálculo → visualização ----------
    @property
    def fixed(self) -> dict:
        """Argumentos da visão que não têm controle (tamanhos, semente)."""
        return getattr(self, "_fixed", {})

    def settings(self) -> dict:
        """Os valores atuais dos controles, no formato da função de visão."""
        return {name: control.value for name, control in self._controls().items()} | self.fixed

    def _sync_controls(self, view: ExplorerView) -> None:
        self._updating = True
        try:
            options = [(f"{i}: {t}", i) for i, t in enumerate(view.tokens)]
            if list(self.query.options) != options:
                self.query.options = options
            self.query.value = view.query
            self._sync_extra(view)
        finally:
            self._updating = False

    def _error(self, exc: Exception, prefix: str = "") -> None:
        """Mostra o erro no widget, com os argumentos trocados pelos nomes dos campos (`sentence` → “Frase”)."""
        from .checks.errors import translate  # só aqui: o explorador não carrega as verificações sem precisar

        text = translate(str(exc))  # erros comuns do Python (ex.: ao salvar a figura) em português
        for name, control in self._controls().items():
            label = (control.description or name).rstrip(":").strip()
            text = text.replace(f"`{name}`", f"“{label}”")
        self.message.value = f"<span style='color:#c0392b'>⚠️ {escape(prefix + text)}</span>"

    def _on_change(self, change) -> None:
        if self._updating:
            return
        try:
            view = self._compute(self.settings(), change["owner"])
        except Exception as exc:  # noqa: BLE001 - todo erro vira mensagem no próprio widget
            self._error(exc)
            return
        self.view = view
        self._sync_controls(view)
        self.message.value = ""
        self._redraw()

    def _redraw(self) -> None:
        self.view_html.value = explorer_html(self.view)

    def update(self, **changes) -> ExplorerView:
        """Muda controles pelo Python (como um clique faria) e devolve o novo estado.

        Raises
        ------
        ValueError
            Controle inexistente ou valor fora das opções dele.
        """
        from traitlets import TraitError

        controls = self._controls()
        for name, value in changes.items():
            if name not in controls:
                raise ValueError(f"`{name}` não é um controle deste explorador; use um de {sorted(controls)}.")
            try:
                controls[name].value = value
            except TraitError:
                options = [v for _, v in controls[name].options] if hasattr(controls[name], "options") else None
                raise ValueError(f"`{name}` não aceita {value!r}" + (f"; opções: {options}." if options else ".")) \
                    from None
        return self.view

    # ---------- figura do matplotlib: exportar e imagem estática ----------
    @property
    def fig(self):
        """A única figura do matplotlib (sem pyplot: nada vaza), criada na primeira exportação."""
        if self._fig is None:
            from matplotlib.figure import Figure

            self._fig = Figure(layout="constrained")
        return self._fig

    def draw(self):
        """Desenha o estado atual em :attr:`fig` e a devolve."""
        draw_explorer(self.fig, self.view)
        return self.fig

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
            self.draw().savefig(path, format=fmt, dpi=150)
        except Exception as exc:  # noqa: BLE001
            self._error(exc, "Não foi possível salvar: ")
            return None
        self.message.value = f"✅ Figura salva em <code>{escape(str(path.resolve()))}</code>"
        return path

    def _figure_png(self, dpi: int = 90) -> bytes:
        return render_png(self.draw(), dpi=dpi)

    # ---------- exibição ----------
    def static_bundle(self) -> dict:
        """A figura estática do estado atual como saída de notebook (veja a docstring do módulo)."""
        return static_bundle(self._static_png(), f"{self.label} — {self.view.title}",
                             f"{self.label}: {self.view.title}")

    def _ipython_display_(self) -> None:
        """Duas saídas: a figura estática (fica no arquivo) e o widget vivo (veja a docstring do módulo)."""
        display_static_and_live(self.static_bundle(), self.widget)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(frase={self.view.settings['sentence']!r})"
