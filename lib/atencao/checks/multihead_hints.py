"""Dicas para a atenção multicabeça do aluno, comuns à Aula 2 (exercício 2) e à Aula 3 (exercício 4).

Um módulo à parte, sem ``protect()``: as duas aulas o importam sem que uma importe a outra.
"""

from __future__ import annotations

import numpy as np

from ..attention import softmax
from ..multihead import split_heads
from .categories import Hint, mistake
from .report import UNSTABLE_SOFTMAX_HINT

__all__ = ["diagnose_heads"]


def diagnose_heads(X, W_q, W_k, n_heads, A, b_q=0.0, b_k=0.0) -> Hint | str:
    """Dica específica para pesos multicabeça errados, reconhecendo os enganos mais comuns.

    Parameters
    ----------
    X : ndarray, shape (n, d_model)
    W_q, W_k : ndarray, shape (d_model, d_model)
    n_heads : int
    A : ndarray
        Os pesos que a função do aluno devolveu (o esperado é (n_heads, n, n)).
    b_q, b_k : ndarray, shape (d_model,), ou 0.0
        Os vieses da Aula 3, exercício 4 (0.0 na Aula 2).

    Returns
    -------
    Hint ou str
        A dica do engano reconhecido, uma :class:`~.categories.Hint` com o id do engano (escala por sqrt(d_model),
        sem escala, softmax por coluna, reshape sem transpor; NaN/inf: a softmax instável) ou, se nenhum, o passo a
        passo da conta.
    """
    if A.size and not np.isfinite(A).all():
        return UNSTABLE_SOFTMAX_HINT
    n, d_model = X.shape
    d_k = d_model // n_heads
    XQ, XK = X @ W_q + b_q, X @ W_k + b_k
    Q, K = split_heads(XQ, n_heads), split_heads(XK, n_heads)
    scores = Q @ np.swapaxes(K, -1, -2)
    Qr, Kr = (P.reshape(n_heads, n, d_k) for P in (XQ, XK))
    candidates = [
        (mistake("scale_by_d_model", "cada cabeça se escala por sqrt(d_k) = sqrt(d_model / n_heads), não por "
                 "sqrt(d_model)."), softmax(scores / np.sqrt(d_model))),
        (mistake("no_scale", "faltou dividir as pontuações de cada cabeça por sqrt(d_k)."), softmax(scores)),
        (mistake("softmax_by_column", "a softmax precisa ser aplicada em cada linha (último eixo), não por coluna."),
         softmax(scores / np.sqrt(d_k), axis=-2)),
        (mistake("reshape_without_transpose", "para dividir em cabeças: (n, d_model) → reshape (n, n_heads, d_k) → "
                 "transpose (n_heads, n, d_k). Um reshape direto para (n_heads, n, d_k) mistura tokens."),
         softmax(Qr @ np.swapaxes(Kr, -1, -2) / np.sqrt(d_k))),
    ]
    for hint, cand in candidates:
        if cand.shape == A.shape and np.allclose(cand, A, atol=1e-5):
            return hint
    return ("confira cada passo: Q = X @ W_q, K = X @ W_k, V = X @ W_v; divida em n_heads cabeças de d_k "
            "colunas; pontuações Q Kᵀ / sqrt(d_k); softmax em cada linha.")
