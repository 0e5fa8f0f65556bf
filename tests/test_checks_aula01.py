"""As respostas certas da Aula 1 (e as peças com que outros testes montam respostas): o corpus
(``test_checks_aula01_corpus.py``), os casos sorteados, as trapaças e as entradas estranhas partem delas. As
respostas erradas e as dicas que elas recebem moram só no corpus."""

import numpy as np

import atencao
from atencao import softmax


def _proj(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v


def ex3_certo():
    _, E = atencao.gato_felino()
    E[3] = [0.0, 0.0, 0.9, 0.1]
    return E


def ex4_certo(X, W_q, W_k, W_v):
    Q, K, V = _proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(K.shape[1]))  # a fórmula escrita (o enunciado proíbe a função pronta)
    return A @ V, A


def _destaques(A, tokens, ignorar_o_proprio=True):
    out = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        if ignorar_o_proprio:
            linha[i] = -np.inf
        j = int(np.argmax(linha))
        out.append((t, tokens[j], float(A[i, j])))
    return out


def _resumo(destaques):
    print("\n".join(f"{t} → {o} ({w:.2f})" for t, o, w in destaques))


def proj_certo(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, tokens)
    _resumo(_destaques(A, tokens))
    return tokens, A, _destaques(A, tokens)


def proj_sem_figura_nem_texto(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    return tokens, A, _destaques(A, tokens)


def ex4_float32_einsum(X, W_q, W_k, W_v):
    Q, K, V = (np.einsum("nd,dk->nk", X, W).astype(np.float32) for W in (W_q, W_k, W_v))
    A = softmax(np.einsum("qk,nk->qn", Q, K) / np.float32(np.sqrt(Q.shape[1])))
    return [A @ V, A]
