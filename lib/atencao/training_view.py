"""A vista do treino (Aula 5, ``04-projeto``): a matriz de atenção passo a passo, com um controle deslizante.

Como os exploradores das Aulas 1–3, a conta é uma função pura (:func:`draw_training`, que desenha numa figura
do matplotlib) e o widget só liga o controle a ela. No notebook salvo fica a figura estática
(:func:`atencao.rendering.static_bundle`, a mesma dos exploradores) e, com o kernel vivo, o widget.

Fonte: Módulo 6, Aula 5, ``04-projeto``.
"""

from __future__ import annotations

import numpy as np

from .rendering import LIVE_CLASS, LIVE_RULE, display_static_and_live, render_png, static_bundle
from .training import TrainingRun, pattern_score

__all__ = ["draw_training", "TrainingReplay", "replay"]



def _br(x: float) -> str:
    """Duas casas com a vírgula decimal, para o texto da figura (rótulos em português).

    A convenção do curso: a prosa e as figuras usam a vírgula decimal; o que uma célula imprime como texto
    (``print``, arrays, o :meth:`TrainingReplay.summary`) usa o ponto, como o Python, para que uma mesma saída
    de texto nunca traga ``0.99`` e ``0,99`` juntos."""
    return f"{x:.2f}".replace(".", ",")


def _log_ticks_br(ax, values: np.ndarray) -> None:
    """Os números do eixo y (em escala log) como decimais em português (``2,2``, ``0,5``), e não ``2.2×10⁰``:
    numa curva que não cruza uma década, só as marcas intermediárias têm número, e cada uma tem o seu."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    br = FuncFormatter(lambda v, _: f"{v:.3g}".replace(".", ","))
    ax.yaxis.set_major_formatter(br)
    finitos = values[np.isfinite(values) & (values > 0)]
    curta = finitos.size and finitos.max() / finitos.min() < 10  # até uma década: as marcas intermediárias contam
    ax.yaxis.set_minor_formatter(br if curta else NullFormatter())


def draw_training(fig, run: TrainingRun, index: int = -1) -> None:
    """Desenha em ``fig`` a atenção média guardada ``run.snapshots[index]`` (com o padrão esperado marcado)
    e a curva de perda, com o passo atual marcado.

    Raises
    ------
    IndexError
        ``index`` fora de ``run.snapshots``.
    """
    from matplotlib.ticker import FuncFormatter

    weights, step = run.snapshots[index], run.steps[index]
    expected = run.task.expected_pattern()
    n = run.task.n
    ax_w, ax_l = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    imagem = ax_w.imshow(weights, vmin=0, vmax=1, cmap="viridis")
    barra = fig.colorbar(imagem, ax=ax_w, fraction=0.046, pad=0.04)  # a escala de 0 a 1, fixa em todos os passos
    barra.set_label("peso de atenção")
    barra.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.1f}".replace(".", ",")))
    rows, cols = np.nonzero(expected)
    ax_w.scatter(cols, rows, marker="s", s=140, facecolors="none", edgecolors="white", linewidths=1.2)
    ax_w.set_xticks(range(n))
    ax_w.set_yticks(range(n))
    ax_w.set_xlabel("posição olhada (chave)")
    ax_w.set_ylabel("posição que olha (consulta)")
    ax_w.set_title(f"{run.task.name}: passo {step}\npeso no padrão: {_br(pattern_score(weights, run.task))}",
                   fontsize=10)
    losses = np.asarray(run.losses)
    ax_l.plot(np.arange(len(losses)), losses, color="#1f77b4", lw=1.2)
    ax_l.axvline(step, color="#d62728", lw=1, ls="--")  # a atenção do passo k é a do modelo de losses[k]
    ax_l.set_yscale("log")
    _log_ticks_br(ax_l, losses)
    ax_l.set_xlabel("passo de treino")
    ax_l.set_ylabel("perda (entropia cruzada)")
    ax_l.set_title("curva de perda (escala log)", fontsize=10)
    ax_l.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0, 1, 0.98))  # uma folga no alto: os acentos da primeira linha do título


def _png(run: TrainingRun, index: int) -> bytes:
    from matplotlib.figure import Figure  # sem pyplot: a figura não aparece sozinha no notebook

    fig = Figure(figsize=(8.6, 3.6))
    draw_training(fig, run, index)
    return render_png(fig, dpi=100)  # 860 × 360 px: legível na largura do notebook


class TrainingReplay:
    """O treino passo a passo: um controle deslizante sobre os passos guardados em ``run``.

    Parameters
    ----------
    run : TrainingRun
        O registro devolvido por :func:`atencao.training.train`.

    Fonte: Módulo 6, Aula 5, ``04-projeto``.
    """

    def __init__(self, run: TrainingRun):
        if not isinstance(run, TrainingRun) or not run.snapshots:
            raise TypeError("`run` precisa ser o registro devolvido por atencao.training.train(...).")
        self.run = run

    def summary(self) -> str:
        """Uma linha de texto: do primeiro ao último passo guardado, o peso no padrão esperado (com o ponto
        decimal, como o resto do que a célula imprime)."""
        first, last = (pattern_score(self.run.snapshots[i], self.run.task) for i in (0, -1))
        return (f"{self.run.task.name}: peso no padrão {first:.2f} no passo {self.run.steps[0]} → {last:.2f} no "
                f"passo {self.run.steps[-1]} ({len(self.run.steps)} passos guardados; mexa no controle)")

    def widget(self, first_png: bytes | None = None):
        """O widget (ipywidgets): o controle "passo" e a figura, redesenhada a cada mudança (``first_png``: a
        figura do último passo, se já desenhada)."""
        import ipywidgets as widgets

        steps = self.run.steps
        slider = widgets.SelectionSlider(options=[(str(s), i) for i, s in enumerate(steps)], value=len(steps) - 1,
                                         description="passo", continuous_update=False,
                                         layout=widgets.Layout(width="520px"))
        png = first_png or _png(self.run, -1)
        # no tamanho natural da figura (a largura vem do cabeçalho do PNG): esticada, ela ficava borrada
        largura = int.from_bytes(png[16:20], "big") if png[:8] == b"\x89PNG\r\n\x1a\n" else None
        image = widgets.Image(value=png, format="png",
                              layout=widgets.Layout(width=f"{largura}px" if largura else None, max_width="100%"))
        slider.observe(lambda change: setattr(image, "value", _png(self.run, change["new"])), names="value")
        caixa = widgets.VBox([widgets.HTML(f"<style>{LIVE_RULE}</style>"), slider, image])
        # a classe dos exploradores: a regra da figura estática (rendering.static_bundle) esconde a saída seguinte
        # que não a tem (o widget morto de um notebook reaberto), e escondia também este, vivo; e a regra dos
        # widgets vivos (LIVE_RULE), que tira de cena a figura estática logo antes dele
        caixa.add_class(LIVE_CLASS)
        return caixa

    def _ipython_display_(self) -> None:
        png = _png(self.run, -1)  # desenhada uma vez: a figura estática e a primeira do widget
        display_static_and_live(static_bundle(png, self.summary(), f"atenção treinada na tarefa {self.run.task.name}"),
                                self.widget(png))


def replay(run: TrainingRun) -> TrainingReplay:
    """:class:`TrainingReplay` de ``run`` (mostre-o como última linha da célula)."""
    return TrainingReplay(run)
