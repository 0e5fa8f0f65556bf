"""Codificação posicional senoidal: a posição de cada token como um vetor somado ao embedding.

A atenção sozinha não sabe a ordem dos tokens: permutar as linhas da entrada só permuta as linhas da
saída (Aula 2, ``04-exercicios``). O Transformer original soma a cada embedding um vetor que depende só da
posição ``pos`` (Vaswani et al., 2017, seção 3.5)::

    PE[pos, 2i]     = sin(pos / base^(2i / d_model))
    PE[pos, 2i + 1] = cos(pos / base^(2i / d_model)),      base = 10000

As colunas pares têm senos e as ímpares, cossenos, com o **mesmo** ângulo em cada par ``(2i, 2i + 1)``;
a frequência cai de 1 (colunas 0 e 1) até ~1/base (últimas colunas).

Fonte: Vaswani et al. (2017), seção 3.5; Módulo 6, Aula 4 (``01-teoria``, ``02-codigo`` e
``03-exercicios``, exercício 1).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_dim, check_positive

__all__ = ["positional_encoding"]


def positional_encoding(n: int, d_model: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """A matriz de codificação posicional senoidal ``PE``, uma linha por posição ``0 … n-1``.

    Parameters
    ----------
    n : int
        Número de posições (tokens).
    d_model : int
        Dimensão dos embeddings. Pode ser ímpar: a última coluna (par) fica só com o seno do último
        ângulo, o seu cosseno não cabe.
    base : float
        A base das frequências (10000 no artigo).
    dtype : dtype do NumPy
        Tipo da saída (padrão float64; o cálculo é feito em float64).

    Returns
    -------
    ndarray, forma (n, d_model)
        ``PE[pos, 2i] = sin(pos / base^(2i/d_model))`` e ``PE[pos, 2i+1] = cos(...)`` (mesmo ângulo); valores
        em [-1, 1], e a linha 0 é ``[0, 1, 0, 1, ...]``.

    Raises
    ------
    TypeError, ValueError
        ``n`` ou ``d_model`` que não são inteiros ≥ 1; ``base`` que não é um número finito > 0.

    Fonte: Vaswani et al. (2017), seção 3.5; Módulo 6, Aula 4, ``02-codigo``.
    """
    n, d_model = check_dim(n, "n"), check_dim(d_model, "d_model")
    base = check_positive(base, "base")
    pos = np.arange(n, dtype=np.float64)[:, None]  # (n, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(d_model / 2),): 0, 2, 4, ...
    angles = pos / base ** (two_i / d_model)  # (n, ceil(d_model / 2))
    pe = np.empty((n, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)  # colunas pares: seno
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])  # colunas ímpares: cosseno do mesmo ângulo
    return pe.astype(dtype, copy=False)
