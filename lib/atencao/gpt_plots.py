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


def gradient_norms_by_layer(model, tokens, targets) -> np.ndarray:
    """A norma do gradiente dos pesos de cada bloco, ``sqrt(Σ ‖∂L/∂θ‖²)`` sobre os pesos do bloco.

    Returns
    -------
    ndarray de float64, forma (n_layers,)
        O índice 0 é o bloco mais perto da entrada.
    """
    _, grads = model.loss_and_grads(tokens, targets)
    norms = np.zeros(model.config.n_layers)
    for name, g in grads.items():
        if name.startswith("blocks."):
            norms[int(name.split(".")[1])] += float(np.sum(np.asarray(g, np.float64) ** 2))
    return np.sqrt(norms)


def gradient_flow(config_kwargs: dict, batches, variants: dict | None = None, seeds=(0, 1, 2)) -> dict:
    """As normas por camada de cada variante, na média de lotes e de sementes dos pesos iniciais.

    Parameters
    ----------
    config_kwargs : dict
        Os argumentos comuns de :class:`~atencao.gpt.GPTConfig` (``vocab_size``, ``n_layers``...).
    batches : list[(tokens, targets)]
    variants : dict, opcional
        Rótulo → argumentos próprios da variante (padrão: :data:`FLOW_VARIANTS`).
    seeds : sequência de int
        As sementes dos pesos iniciais.

    Returns
    -------
    dict
        Rótulo → ndarray (n_layers,).
    """
    from .gpt import GPT, GPTConfig

    out = {}
    for label, extra in (variants or FLOW_VARIANTS).items():
        runs = [gradient_norms_by_layer(GPT(GPTConfig(**{**config_kwargs, **extra, "seed": s})), t, y)
                for s in seeds for t, y in batches]
        out[label] = np.mean(runs, axis=0)
    return out


def plot_gradient_flow(norms: dict, title: str | None = None):
    """Desenha a norma do gradiente por bloco (eixo y logarítmico), uma linha por variante.

    ``norms``: rótulo → ndarray (n_layers,), como devolve :func:`gradient_flow`. Devolve a ``Figure``.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    markers = "osD^v"
    for (label, values), marker in zip(norms.items(), markers):
        layers = np.arange(1, len(values) + 1)
        ax.semilogy(layers, values, marker=marker, label=label)
    n = max(len(v) for v in norms.values())
    ax.set_xticks(np.arange(1, n + 1))
    ax.set_xlabel("bloco (1 = perto da entrada)")
    ax.set_ylabel("norma do gradiente dos pesos do bloco")
    ax.set_title(title or "O gradiente por bloco na inicialização")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    return fig


def plot_loss_curves(history, baseline_bits: float | None = None, title: str | None = None):
    """As curvas de treino e de validação (em bits por caractere) de um :class:`TrainingHistory`.

    Com ``baseline_bits``, uma linha tracejada marca a linha de base de bigramas. Devolve a ``Figure``.
    """
    import matplotlib.pyplot as plt

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
