"""As respostas certas da Aula 2 (e as peças com que outros testes montam respostas): o corpus
(``test_checks_aula02_corpus.py``), os casos sorteados e as trapaças partem delas. As respostas erradas e as dicas
que elas recebem moram só no corpus."""

import numpy as np

import atencao
from atencao import softmax


def _scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])


def mask_certo(Q, K, V, mask=None):
    scores = _scores(Q, K)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    A = softmax(scores)
    return A @ V, A


def _heads(X, W, n_heads):
    n, d = X.shape
    return (X @ W).reshape(n, n_heads, d // n_heads).transpose(1, 0, 2)


def mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=None):
    Q, K, V = (_heads(X, W, n_heads) for W in (W_q, W_k, W_v))
    d_k = d_scale or X.shape[1] // n_heads
    A = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_k))
    concat = (A @ V).transpose(1, 0, 2).reshape(X.shape[0], -1)
    return concat @ W_o, A


def comparar_certo(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("as frases precisam ter o mesmo número de tokens")
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def projeto_certo(frase_a, frase_b, mha):
    Xa, Xb = (atencao.embed_hashed(f, d_model=mha.d_model)[1] for f in (frase_a, frase_b))
    if Xa.shape[0] != Xb.shape[0]:
        raise ValueError(f"as frases têm {Xa.shape[0]} e {Xb.shape[0]} tokens; precisam ter o mesmo número")
    Wa, Wb = mha(Xa)[1], mha(Xb)[1]
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))
