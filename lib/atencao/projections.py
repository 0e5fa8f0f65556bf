"""Self-attention com projeções aprendíveis ``W_q``, ``W_k``, ``W_v`` (uma cabeça).

Fonte: Vaswani et al. (2017), seção 3.2; Módulo 6, Aula 2, ``02-codigo`` (passo 3).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_dim, check_layer_inputs, check_seed
from ._weights import xavier_normal
from .attention import scaled_dot_product_attention

__all__ = ["SelfAttention"]


class SelfAttention:
    """Uma cabeça de self-attention: ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``, depois a atenção escalada.

    Parameters
    ----------
    d_model : int
        Dimensão dos embeddings de entrada ``d``.
    d_k : int
        Dimensão de consultas e chaves.
    d_v : int, opcional
        Dimensão dos valores (padrão: ``d_k``).
    seed : int
        Semente do sorteio dos pesos (mesma semente, mesmos pesos).
    dtype : dtype do NumPy
        Tipo dos pesos (padrão float64).

    Attributes
    ----------
    W_q : ndarray, forma (d_model, d_k)
    W_k : ndarray, forma (d_model, d_k)
    W_v : ndarray, forma (d_model, d_v)

    Raises
    ------
    TypeError, ValueError
        Dimensões que não são inteiros ≥ 1.

    Fonte: Módulo 6, Aula 2, ``02-codigo`` (passo 3). Os pesos são sorteados na ordem W_q, W_k, W_v,
    com desvio ``sqrt(2 / (d_model + d_k))`` (e ``d_v`` para W_v), como na aula.
    """

    def __init__(self, d_model: int, d_k: int, d_v: int | None = None, seed: int = 42, dtype=np.float64):
        self.d_model = check_dim(d_model, "d_model")
        self.d_k = check_dim(d_k, "d_k")
        self.d_v = self.d_k if d_v is None else check_dim(d_v, "d_v")
        self.seed = check_seed(seed)
        rng = np.random.default_rng(seed)
        self.W_q = xavier_normal(rng, self.d_model, self.d_k, dtype)
        self.W_k = xavier_normal(rng, self.d_model, self.d_k, dtype)
        self.W_v = xavier_normal(rng, self.d_model, self.d_v, dtype)

    def __repr__(self) -> str:
        return f"SelfAttention(d_model={self.d_model}, d_k={self.d_k}, d_v={self.d_v}, seed={self.seed})"

    def forward(self, X, mask=None, scale: float | None = None):
        """Aplica a self-attention a ``X``: ``softmax(scale · Q Kᵀ) V`` com ``Q, K, V = X W_q, X W_k, X W_v``.

        Parameters
        ----------
        X : array_like, forma (..., n, d_model)
        mask : array_like de bool, opcional, compatível com (..., n, n); ``True`` = pode olhar.
        scale : float ou None
            Fator das pontuações, como em :func:`~atencao.attention.scaled_dot_product_attention`
            (``None``, o padrão, = ``1 / sqrt(d_k)``, a atenção do artigo; ``1.0`` = sem escala).

        Returns
        -------
        output : ndarray, forma (..., n, d_v)
        weights : ndarray, forma (..., n, n)
            dtype comum de ``X`` e dos pesos.

        Raises
        ------
        ValueError
            Se o último eixo de ``X`` não for ``d_model`` (e os erros de
            :func:`~atencao.attention.scaled_dot_product_attention`).
        """
        # X faz os três papéis (consulta, chave e valor); a máscara é conferida contra (..., n, n)
        X, _, _, allowed = check_layer_inputs(self.d_model, self.W_q.dtype, mask, X, names=("X",) * 3)
        return scaled_dot_product_attention(X @ self.W_q, X @ self.W_k, X @ self.W_v, mask=allowed, scale=scale)

    __call__ = forward
