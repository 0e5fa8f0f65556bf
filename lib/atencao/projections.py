"""Self-attention com projeções aprendíveis ``W_q``, ``W_k``, ``W_v`` (uma cabeça).

Fonte: Vaswani et al. (2017), seção 3.2; Módulo 6, Aula 2, ``02-codigo`` (passo 3).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_dim, shape_str
from .attention import scaled_dot_product_attention

__all__ = ["SelfAttention"]  # check_seed e xavier_normal: internos (multihead.py também os usa)


def check_seed(seed):
    """Confere a semente do sorteio dos pesos (um inteiro ≥ 0)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"`seed` precisa ser um inteiro ≥ 0 (a semente do sorteio); recebido {seed!r}.")
    return int(seed)


def xavier_normal(rng: np.random.Generator, fan_in: int, fan_out: int, dtype=np.float64) -> np.ndarray:
    """Matriz (fan_in, fan_out) normal com desvio ``sqrt(2 / (fan_in + fan_out))`` (Glorot e Bengio, 2010).

    Mantém a variância dos sinais parecida na ida e na volta, para a atenção não começar saturada.
    """
    return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), (fan_in, fan_out)).astype(dtype)


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

    def forward(self, X, mask=None, scale: bool = True, temperature: float = 1.0):
        """Aplica a self-attention a ``X``.

        Parameters
        ----------
        X : array_like, forma (..., n, d_model)
        mask : array_like de bool, opcional, compatível com (..., n, n); ``True`` = pode olhar.
        scale, temperature
            Como em :func:`~atencao.attention.scaled_dot_product_attention` (experimentos; o padrão
            é a atenção do artigo).

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
        X = as_float_array(X, "X", expected="(..., n, d_model)")
        if X.shape[-1] != self.d_model:
            raise ValueError(
                f"`X` precisa ter forma (..., n, d_model={self.d_model}); recebida forma {shape_str(X.shape)}."
            )
        Q = X @ self.W_q  # (..., n, d_k)
        K = X @ self.W_k  # (..., n, d_k)
        V = X @ self.W_v  # (..., n, d_v)
        return scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale, temperature=temperature)

    __call__ = forward
