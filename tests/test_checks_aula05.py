"""Aula 5, 03-exercicios: as verificações aprovam as soluções e reprovam, com a dica do engano, as respostas
erradas típicas. O corpus completo (≥ 3 válidas e ≥ 8 erradas por exercício) está em
``test_checks_aula05_corpus.py``; aqui ficam as respostas "de referência" que ele reusa."""

import numpy as np

import atencao
from atencao.checks import aula05


def sm_certo(A, dA):
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def att_certo(dO, Q, K, V, mask=None):
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    d_k = Q.shape[-1]
    dV = A.T @ dO
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), dV


def num_certo(Q, K, V, dO, mask=None, eps=1e-6):
    def perda():
        return float((atencao.scaled_dot_product_attention(Q, K, V, mask=mask)[0] * dO).sum())

    grads = []
    for x in (Q, K, V):  # mexer em x (no lugar) muda a perda
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            original = x[i]
            x[i] = original + eps
            mais = perda()
            x[i] = original - eps
            menos = perda()
            x[i] = original
            g[i] = (mais - menos) / (2 * eps)
        grads.append(g)
    return tuple(grads)


def test_as_solucoes_passam(capsys):
    assert aula05.exercicio_1(sm_certo)
    assert aula05.exercicio_2(att_certo)
    assert aula05.exercicio_3(num_certo)
    assert "❌" not in capsys.readouterr().out


def test_exercicio_nao_feito_fica_a_fazer(capsys):
    def nao_feito(*args, **kwargs):
        raise NotImplementedError("Exercício 1")

    for verificacao in (aula05.exercicio_1, aula05.exercicio_2, aula05.exercicio_3):
        assert verificacao(nao_feito).status == "nao_feito"
    assert "⏳" in capsys.readouterr().out
