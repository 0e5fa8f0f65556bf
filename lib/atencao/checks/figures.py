"""As figuras do pyplot que a função do aluno abriu: quais são, o que mostram, e fechá-las depois.

O projeto da Aula 1 pede um mapa de calor: a verificação confere os dados desenhados (:func:`figure_data`)
e fecha as figuras novas (:func:`close_new_figures`) para não poluir a saída do notebook. Nada aqui importa o
matplotlib (só :func:`warm_up_matplotlib`, de propósito): sem ``matplotlib.pyplot`` carregado, não há figuras.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["open_figures", "close_new_figures", "figure_data", "warm_up_matplotlib"]


def open_figures() -> set:
    """Os números (``plt.get_fignums()``) das figuras abertas do pyplot; vazio sem o pyplot carregado."""
    plt = sys.modules.get("matplotlib.pyplot")
    return set(plt.get_fignums()) if plt else set()


def close_new_figures(before: set) -> None:
    """Fecha as figuras abertas que não estão em ``before`` (o :func:`open_figures` de antes): as que o código
    do aluno abriu durante a verificação (não poluem a saída)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt:
        for num in set(plt.get_fignums()) - before:
            plt.close(num)


def figure_data(nums) -> list:
    """Os dados desenhados nas figuras ``nums`` do pyplot: para cada figura, a lista de arrays (float) das
    imagens e malhas de cores dos seus eixos (o que um mapa de calor mostra)."""
    plt = sys.modules.get("matplotlib.pyplot")
    out = []
    if plt is None:
        return out
    for num in sorted(nums):
        arrays = []
        for ax in plt.figure(num).get_axes():
            for artista in [*ax.images, *ax.collections]:
                dados = getattr(artista, "get_array", lambda: None)()
                if dados is not None and np.size(dados) <= 1 << 16:
                    try:
                        arrays.append(np.ma.filled(np.ma.asarray(dados, dtype=float), np.nan))
                    except (TypeError, ValueError):
                        continue
        out.append(arrays[:32])
    return out[:16]


def warm_up_matplotlib() -> None:
    """Carrega o matplotlib e cria um mapa pequeno (fechado em seguida) antes da vigilância: a primeira figura
    importa módulos e fontes, e fazer isso sob ``sys.setprofile`` custa segundos (na correção, perto do tempo
    limite). Na correção roda uma vez no processo do aluno, antes das chamadas (veja
    :attr:`.checker.RemoteCall.warm_up`): cada chamada é um ``fork`` dele e herda o que já está carregado."""
    import contextlib
    import io

    from ..plotting import plot_attention

    antes = open_figures()
    with contextlib.redirect_stdout(io.StringIO()):
        plot_attention(np.eye(2), ["a", "b"], title="aquecimento")
    close_new_figures(antes)
