"""Figuras da Aula 6: o fluxo do gradiente por camada (com e sem resíduo, pré-LN e pós-LN) e as curvas de perda.

O matplotlib só é importado quando uma figura é desenhada. O cálculo fica em funções sem gráfico
(:func:`gradient_norms_by_layer`, :func:`gradient_flow`), que os testes chamam.

Fonte: He et al. (2016), o caminho residual; Xiong et al. (2020), figura 3 (o gradiente por camada no pré-LN e no
pós-LN); Módulo 6, Aula 4 (``01-teoria``) e Aula 6 (``02-codigo``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["gradient_norms_by_layer", "gradient_flow", "FLOW_VARIANTS", "plot_gradient_flow", "plot_loss_curves"]

#: As variantes da figura do fluxo do gradiente: rótulo → argumentos de :class:`~atencao.gpt.GPTConfig`.
FLOW_VARIANTS = {
    "pré-LN com resíduo (GPT-2)": {"norm_first": True, "residual": True},
    "pós-LN com resíduo (artigo original)": {"norm_first": False, "residual": True},
    "pré-LN sem resíduo": {"norm_first": True, "residual": False},
}


def gradient_norms_by_layer(model, tokens, targets, what: str = "inputs") -> np.ndarray:
    """A norma do gradiente em cada bloco, na ida e volta de um lote.

    Parameters
    ----------
    model : GPT
    tokens, targets : ndarray de int, forma (B, n)
    what : {"inputs", "params"}
        ``"inputs"``: ``‖∂L/∂x‖`` na **entrada** de cada bloco (o sinal que a volta leva até ali);
        ``"params"``: ``sqrt(Σ ‖∂L/∂θ‖²)`` sobre os pesos do bloco.

    Returns
    -------
    ndarray de float64, forma (n_layers,)
        O índice 0 é o bloco mais perto da entrada.

    Raises
    ------
    ValueError
        ``what`` desconhecido.
    """
    from .gpt_backward import cross_entropy

    if what not in ("inputs", "params"):
        raise ValueError(f"`what` precisa ser 'inputs' ou 'params'; recebido {what!r}.")
    logits, cache = model.forward(tokens)
    _, dlogits = cross_entropy(logits, targets)
    recorded = []
    grads = model.backward(cache, dlogits, input_grads=recorded)
    if what == "inputs":
        return np.array([float(np.linalg.norm(g)) for g in recorded[::-1]])  # a volta grava do último ao primeiro
    norms = np.zeros(model.config.n_layers)
    for name, g in grads.items():
        if name.startswith("blocks."):
            norms[int(name.split(".")[1])] += float(np.sum(np.asarray(g, np.float64) ** 2))
    return np.sqrt(norms)


def gradient_flow(config_kwargs: dict, batches, variants: dict | None = None, seeds=(0, 1, 2),
                  what: str = "inputs") -> dict:
    """As normas por bloco de cada variante, na média de lotes e de sementes dos pesos iniciais.

    Parameters
    ----------
    config_kwargs : dict
        Os argumentos comuns de :class:`~atencao.gpt.GPTConfig` (``vocab_size``, ``n_layers``...).
    batches : list[(tokens, targets)]
    variants : dict, opcional
        Rótulo → argumentos próprios da variante (padrão: :data:`FLOW_VARIANTS`).
    seeds : sequência de int
        As sementes dos pesos iniciais.
    what : {"inputs", "params"}
        Como em :func:`gradient_norms_by_layer`.

    Returns
    -------
    dict
        Rótulo → ndarray (n_layers,).
    """
    from .gpt import GPT, GPTConfig

    out = {}
    for label, extra in (variants or FLOW_VARIANTS).items():
        runs = [gradient_norms_by_layer(GPT(GPTConfig(**{**config_kwargs, **extra, "seed": s})), t, y, what)
                for s in seeds for t, y in batches]
        out[label] = np.mean(runs, axis=0)
    return out


def plot_gradient_flow(norms: dict, params_norms: dict | None = None, title: str | None = None):
    """Desenha a norma do gradiente por bloco (eixo y logarítmico), uma linha por variante.

    Parameters
    ----------
    norms : dict
        Rótulo → ndarray (n_layers,), de :func:`gradient_flow` com ``what="inputs"``.
    params_norms : dict, opcional
        O mesmo com ``what="params"``: vira um segundo painel, à direita.
    title : str, opcional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import pyplot

    plt = pyplot()  # a figura aparece na própria célula também no matplotlib 3.8 (veja pyplot)

    panels = [(norms, "‖∂L/∂x‖ na entrada do bloco")]
    if params_norms is not None:
        panels.append((params_norms, "norma do gradiente dos pesos do bloco"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.4), layout="constrained", squeeze=False)
    for ax, (data, ylabel) in zip(axes[0], panels):
        for (label, values), marker in zip(data.items(), "osD^v"):
            ax.semilogy(np.arange(1, len(values) + 1), values, marker=marker, label=label)
        n = max(len(v) for v in data.values())
        ax.set_xticks(np.arange(1, n + 1))
        ax.set_xlabel("bloco (1 = perto da entrada)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].legend(fontsize=9)
    fig.suptitle(title or "O gradiente por bloco na inicialização")
    return fig


def plot_loss_curves(history, baseline_bits: float | None = None, title: str | None = None):
    """As curvas de treino e de validação (em bits por caractere) de um :class:`TrainingHistory`.

    Com ``baseline_bits``, uma linha tracejada marca a linha de base de bigramas. Devolve a ``Figure``.
    """
    from .plotting import pyplot

    plt = pyplot()  # a figura aparece na própria célula também no matplotlib 3.8 (veja pyplot)

    bits = 1.0 / math.log(2.0)
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    ax.plot(history.steps, np.array(history.train_loss) * bits, "o-", ms=3, label="treino")
    ax.plot(history.steps, np.array(history.val_loss) * bits, "s-", ms=3, label="validação")
    if baseline_bits is not None:
        ax.axhline(baseline_bits, color="gray", ls="--", label="bigramas (linha de base)")
    ax.set_xlabel("passo")
    ax.set_ylabel("perda (bits por caractere)")
    ax.set_title(title or "Perda no treino e na validação")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return fig
