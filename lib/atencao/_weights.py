"""Pesos das camadas de atenção: o sorteio inicial e a projeção ``x @ W + b`` (uso interno da biblioteca).

Usados por :class:`~atencao.projections.SelfAttention` e :class:`~atencao.multihead.MultiHeadAttention`.
"""

from __future__ import annotations

import numpy as np


def xavier_normal(rng: np.random.Generator, fan_in: int, fan_out: int, dtype=np.float64) -> np.ndarray:
    """Matriz (fan_in, fan_out) normal com desvio ``sqrt(2 / (fan_in + fan_out))`` (Glorot e Bengio, 2010).

    Mantém a variância dos sinais parecida na ida e na volta, para a atenção não começar saturada.
    """
    return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), (fan_in, fan_out)).astype(dtype)


def project(x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """``x @ W + b``: (..., n, d_in) → (..., n, d_out), com uma única multiplicação de matrizes para todo o lote."""
    y = x.reshape(-1, x.shape[-1]) @ W
    if b is not None:
        y += b
    return y.reshape(*x.shape[:-1], W.shape[1])
