"""Corpus de respostas da Aula 5 (03-exercicios), como alunos as escreveriam a partir dos enunciados: pelo
menos 3 válidas e 8 erradas por exercício. As válidas passam sem nenhum ❌; as erradas não passam, e a dica
nomeia o engano (o trecho esperado aparece no relatório). ``VALIDAS`` e ``ERRADAS`` entram na contagem de
``test_checks_corpus``."""

import corpus
import numpy as np
import pytest

import atencao
from atencao.backward import attention_backward, softmax_backward
from atencao.checks import aula05
from atencao.training import TinyAttentionModel


# ---------- exercício 1: o backward da softmax ----------
def sm_certo(A, dA):
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def sm_jacobiano_por_linha(A, dA):
    A2, dA2 = A.reshape(-1, A.shape[-1]), dA.reshape(-1, A.shape[-1])
    out = np.zeros_like(A2)
    for r in range(A2.shape[0]):
        J = np.diag(A2[r]) - np.outer(A2[r], A2[r])
        out[r] = J.T @ dA2[r]
    return out.reshape(A.shape)


def sm_einsum(A, dA):
    return A * (dA - np.einsum("...j,...j->...", dA, A)[..., None])


def sm_lista_de_linhas(A, dA):  # devolve listas aninhadas: vira array
    return (A * dA - A * np.sum(A * dA, axis=-1, keepdims=True)).tolist()


def sm_sem_soma(A, dA):
    return A * dA


def sm_so_diagonal(A, dA):
    return A * (1 - A) * dA


def sm_soma_global(A, dA):
    return A * (dA - np.sum(dA * A))


def sm_soma_sem_A(A, dA):
    return A * (dA - dA.sum(axis=-1, keepdims=True))


def sm_sem_A_na_frente(A, dA):
    return dA - (dA * A).sum(axis=-1, keepdims=True)


def sm_sinal_trocado(A, dA):
    return A * (dA + (dA * A).sum(axis=-1, keepdims=True))


def sm_eixo_zero(A, dA):
    return A * (dA - (dA * A).sum(axis=0, keepdims=True))


def sm_sem_keepdims(A, dA):  # a soma por linha sem keepdims: (3, 5) − (3,) dá erro de formas
    return A * (dA - (dA * A).sum(axis=-1))


def sm_sem_return(A, dA):
    A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def sm_da_biblioteca(A, dA):
    return softmax_backward(A, dA)


def sm_float32(A, dA):
    A, dA = A.astype(np.float32), dA.astype(np.float32)
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def sm_devolve_float32(A, dA):  # a fórmula certa, convertida no fim: os números "parecem" iguais
    return (A * (dA - (dA * A).sum(axis=-1, keepdims=True))).astype(np.float32)


def sm_media_ponderada(A, dA):  # divide pela soma dos pesos: 0/0 = NaN na linha toda bloqueada
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True) / A.sum(axis=-1, keepdims=True))


# ---------- exercício 2: o backward da atenção ----------
def att_certo(dO, Q, K, V, mask=None):
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    d_k = Q.shape[-1]
    dV = A.T @ dO
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), dV


def _softmax_mascarada(S, mask):
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    m = S.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(S - m)
    tot = e.sum(axis=-1, keepdims=True)
    return np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)


def att_einsum(dO, Q, K, V, mask=None):
    A = _softmax_mascarada(np.einsum("id,jd->ij", Q, K) / np.sqrt(Q.shape[1]), mask)
    dV = np.einsum("ij,id->jd", A, dO)
    dA = np.einsum("id,jd->ij", dO, V)
    dS = A * (dA - np.einsum("ij,ij->i", dA, A)[:, None])
    return (np.einsum("ij,jd->id", dS, K) / np.sqrt(Q.shape[1]),
            np.einsum("ij,id->jd", dS, Q) / np.sqrt(Q.shape[1]), dV)


def att_escala_em_Q(dO, Q, K, V, mask=None):  # a escala aplicada em Q antes, como faz a biblioteca
    s = 1 / np.sqrt(Q.shape[-1])
    Qs = Q * s
    A = _softmax_mascarada(Qs @ K.T, mask)
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(-1, keepdims=True))
    return (dS @ K) * s, dS.T @ Qs, A.T @ dO


def att_vazando(dO, Q, K, V, mask=None):
    return att_certo(dO, Q, K, V, mask=None)  # a volta ignora a máscara


def _att(dO, Q, K, V, mask, dQ_de, dK_de, dV_de=lambda A, dO: A.T @ dO, sem_soma=False):
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    dA = dO @ V.T
    dS = A * dA if sem_soma else A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    d_k = Q.shape[-1]
    return dQ_de(dS, K, d_k), dK_de(dS, Q, d_k), dV_de(A, dO)


def _dQ(dS, K, d_k):
    return dS @ K / np.sqrt(d_k)


def _dK(dS, Q, d_k):
    return dS.T @ Q / np.sqrt(d_k)


def att_sem_soma(dO, Q, K, V, mask=None):
    return _att(dO, Q, K, V, mask, _dQ, _dK, sem_soma=True)


def att_sem_escala(dO, Q, K, V, mask=None):
    return _att(dO, Q, K, V, mask, lambda dS, K, d: dS @ K, lambda dS, Q, d: dS.T @ Q)


def att_divide_por_d_k(dO, Q, K, V, mask=None):
    return _att(dO, Q, K, V, mask, lambda dS, K, d: dS @ K / d, lambda dS, Q, d: dS.T @ Q / d)


def att_multiplica_pela_raiz(dO, Q, K, V, mask=None):
    return _att(dO, Q, K, V, mask, lambda dS, K, d: dS @ K * np.sqrt(d), lambda dS, Q, d: dS.T @ Q * np.sqrt(d))


def att_dK_sem_transposta(dO, Q, K, V, mask=None):
    return _att(dO, Q, K, V, mask, _dQ, lambda dS, Q, d: dS @ Q / np.sqrt(d))


def att_dV_sem_transposta(dO, Q, K, V, mask=None):
    return _att(dO, Q, K, V, mask, _dQ, _dK, dV_de=lambda A, dO: A @ dO)


def att_softmax_ingenua(dO, Q, K, V, mask=None):
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        A = e / e.sum(axis=-1, keepdims=True)
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(-1, keepdims=True))
    return dS @ K / np.sqrt(Q.shape[-1]), dS.T @ Q / np.sqrt(Q.shape[-1]), A.T @ dO


def att_ordem_trocada(dO, Q, K, V, mask=None):  # na ordem da volta, não na pedida
    dQ, dK, dV = att_certo(dO, Q, K, V, mask)
    return dV, dK, dQ


def att_so_dois(dO, Q, K, V, mask=None):
    dQ, dK, _ = att_certo(dO, Q, K, V, mask)
    return dQ, dK


def att_da_biblioteca(dO, Q, K, V, mask=None):
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    return attention_backward(dO, Q, K, V, A)


# ---------- exercício 3: a verificação de gradiente ----------
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


def _perda(Q, K, V, dO, mask):
    return float((atencao.scaled_dot_product_attention(Q, K, V, mask=mask)[0] * dO).sum())


def num_copias(Q, K, V, dO, mask=None, eps=1e-6):
    out = []
    for k in range(3):
        g = np.zeros_like((Q, K, V)[k])
        for i in np.ndindex(g.shape):
            mais, menos = [a.copy() for a in (Q, K, V)], [a.copy() for a in (Q, K, V)]
            mais[k][i] += eps
            menos[k][i] -= eps
            g[i] = (_perda(*mais, dO, mask) - _perda(*menos, dO, mask)) / (2 * eps)
        out.append(g)
    return out


def num_plano(Q, K, V, dO, mask=None, eps=1e-6):
    grads = []
    for x in (Q, K, V):
        plano, g = x.reshape(-1), np.zeros(x.size)  # vista: mexer em plano mexe em x
        for i in range(x.size):
            v = plano[i]
            plano[i] = v + eps
            a = _perda(Q, K, V, dO, mask)
            plano[i] = v - eps
            b = _perda(Q, K, V, dO, mask)
            plano[i] = v
            g[i] = (a - b) / (2 * eps)
        grads.append(g.reshape(x.shape))
    return tuple(grads)


def _num(Q, K, V, dO, mask, eps=1e-6, fator=2.0, frente=False, dtype=np.float64, restaura=True, linhas=False):
    arrays = [a.astype(dtype) for a in (Q, K, V)]
    dO = dO.astype(dtype)
    grads = []
    for x in arrays:
        g = np.zeros_like(x)
        indices = range(x.shape[0]) if linhas else np.ndindex(x.shape)
        for i in indices:
            v = x[i].copy()
            base = _perda(*arrays, dO, mask)
            x[i] = v + dtype(eps)
            a = _perda(*arrays, dO, mask)
            x[i] = v - dtype(eps)
            b = _perda(*arrays, dO, mask)
            if restaura:
                x[i] = v
            g[i] = (a - base) / eps if frente else (a - b) / (fator * eps)
        grads.append(g)
    return tuple(grads)


def num_sem_o_2(Q, K, V, dO, mask=None, eps=1e-6):
    return _num(Q, K, V, dO, mask, fator=1.0)


def num_para_frente(Q, K, V, dO, mask=None, eps=1e-6):
    return _num(Q, K, V, dO, mask, frente=True)


def num_float32(Q, K, V, dO, mask=None, eps=1e-6):
    return _num(Q, K, V, dO, mask, dtype=np.float32)


def num_passo_grande(Q, K, V, dO, mask=None, eps=1e-6):
    return _num(Q, K, V, dO, mask, eps=1e-2)


def num_passo_1e1(Q, K, V, dO, mask=None, eps=1e-6):
    return _num(Q, K, V, dO, mask, eps=1e-1)


def num_tudo_de_uma_vez(Q, K, V, dO, mask=None, eps=1e-6):
    grads = []
    for k in range(3):
        mais, menos = [a.copy() for a in (Q, K, V)], [a.copy() for a in (Q, K, V)]
        mais[k] += eps
        menos[k] -= eps
        grads.append(np.full(mais[k].shape, (_perda(*mais, dO, mask) - _perda(*menos, dO, mask)) / (2 * eps)))
    return tuple(grads)


def num_sem_restaurar(Q, K, V, dO, mask=None, eps=1e-6):
    g = []
    for x in (Q, K, V):
        gx = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            x[i] += eps
            a = _perda(Q, K, V, dO, mask)
            x[i] -= 2 * eps  # e não volta ao original
            b = _perda(Q, K, V, dO, mask)
            gx[i] = (a - b) / (2 * eps)
        g.append(gx)
    return tuple(g)


def num_restaura_somando(Q, K, V, dO, mask=None, eps=1e-6):  # volta com +ε: o arredondamento muda x[i]
    g = []
    for x in (Q, K, V):
        gx = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            x[i] += eps
            a = _perda(Q, K, V, dO, mask)
            x[i] -= 2 * eps
            b = _perda(Q, K, V, dO, mask)
            x[i] += eps  # "devolve" o valor somando, em vez de reatribuir o original
            gx[i] = (a - b) / (2 * eps)
        g.append(gx)
    return tuple(g)


def num_por_linhas(Q, K, V, dO, mask=None, eps=1e-6):
    return _num(Q, K, V, dO, mask, linhas=True)


def num_eps_fixo(Q, K, V, dO, mask=None, eps=1e-6):  # o passo escrito à mão, não o eps recebido
    return num_certo(Q, K, V, dO, mask, 1e-5)


def num_so_dQ(Q, K, V, dO, mask=None, eps=1e-6):
    return num_certo(Q, K, V, dO, mask, eps)[0]


def num_da_biblioteca(Q, K, V, dO, mask=None, eps=1e-6):
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    return attention_backward(dO, Q, K, V, A)


def _lavar(fn, *args, **kw):
    """Uma trapaça achada por uma aluna hostil: a função proibida chamada de dentro da ``atencao.softmax``
    (permitida), pelo ``detach`` de um objeto que a softmax tenta converter, com ``map`` e ``functools.partial``
    (nenhum quadro do aluno na pilha). A softmax podia chamar o miolo dela sem contar; qualquer outra proibida, não."""
    import functools

    caixa = []

    class Tensor:
        pass

    t = Tensor()
    t.is_floating_point = True
    t.detach = functools.partial(caixa.extend, map(functools.partial(fn, **kw), *[[a] for a in args]))
    try:
        atencao.softmax(t)
    except TypeError:
        pass
    return caixa[0]


def sm_lavada_pela_softmax(A, dA):
    return _lavar(softmax_backward, A, dA)


class _Coringa:
    """Um objeto que aceita qualquer conta e guarda o que multiplica por ele (o dQ, dK e dV do modelo)."""

    __array_ufunc__ = None

    def __init__(self, caixa=None):
        self.caixa = caixa

    def reshape(self, *a, **k):
        return self

    @property
    def T(self):
        return self

    def __matmul__(self, o):
        return self

    def __rmatmul__(self, o):
        if self.caixa is not None:
            self.caixa.append(np.array(o))
        return self

    def __iadd__(self, o):
        return self

    def sum(self, *a, **k):
        return self

    def __array_function__(self, func, types, args, kwargs):
        return _Coringa()


def att_pelo_modelo(dO, Q, K, V, mask=None):
    """O attention_backward (proibido) rodado por dentro de uma função permitida, o TinyAttentionModel.backward, com
    pesos falsos que guardam os gradientes (uma trapaça achada por uma aluna hostil: passava com 3 de 3). O módulo
    do modelo já está carregado quando a vigilância liga, como na correção, onde a célula do aluno o importou."""
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    caixa = []
    modelo = TinyAttentionModel(vocab=V.shape[-1], n=1, d_model=1, d_k=1)
    modelo.params["W_out"] = np.eye(V.shape[-1])
    for nome in ("W_q", "W_k", "W_v"):
        modelo.params[nome] = _Coringa(caixa)
    modelo.params["E"] = np.zeros(1)
    cache = {"O": _Coringa(), "x": _Coringa(), "Q": Q, "K": K, "V": V, "A": A, "tokens": np.zeros(1, int)}
    try:
        modelo.backward(cache, dO)
    except TypeError:
        pass
    return tuple(caixa[:3])


def _att_com_pesos(dO, Q, K, V, A, eixo_da_soma=-1):
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(axis=eixo_da_soma, keepdims=True))
    s = 1 / np.sqrt(Q.shape[-1])
    return dS @ K * s, dS.T @ Q * s, A.T @ dO


def att_scores_vezes_mascara(dO, Q, K, V, mask=None):  # "bloqueia" multiplicando as pontuações pela máscara
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = S * mask
    return _att_com_pesos(dO, Q, K, V, atencao.softmax(S))


def att_menos_1e9(dO, Q, K, V, mask=None):  # -1e9 no lugar de -inf: a linha toda bloqueada fica uniforme
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -1e9)
    return _att_com_pesos(dO, Q, K, V, atencao.softmax(S))


def att_menos_1e9_somado(dO, Q, K, V, mask=None):  # a máscara somada às pontuações: S − 1e9 onde bloqueado
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = S - 1e9 * ~mask
    return _att_com_pesos(dO, Q, K, V, atencao.softmax(S))


def att_linha_bloqueada_na_primeira_chave(dO, Q, K, V, mask=None):  # a linha sem chaves olha para a chave 0
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    A = atencao.softmax(S if mask is None else np.where(mask, S, -np.inf))
    if mask is not None:
        A[~mask.any(axis=-1), 0] = 1.0
    return _att_com_pesos(dO, Q, K, V, A)


def att_sem_keepdims(dO, Q, K, V, mask=None):  # numa matriz quadrada o NumPy aceita, e a conta sai errada
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(axis=-1))
    return dS @ K / np.sqrt(Q.shape[-1]), dS.T @ Q / np.sqrt(Q.shape[-1]), A.T @ dO


def att_mascara_transposta(dO, Q, K, V, mask=None):
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask.T if mask.shape[0] == mask.shape[1] else mask, S, -np.inf)
    return _att_com_pesos(dO, Q, K, V, atencao.softmax(S))


def att_mascara_depois_da_softmax(dO, Q, K, V, mask=None):
    A = atencao.softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
    if mask is not None:
        A = A * mask
    return _att_com_pesos(dO, Q, K, V, A)


def att_soma_no_eixo_0(dO, Q, K, V, mask=None):  # o backward da softmax somando as colunas
    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
    return _att_com_pesos(dO, Q, K, V, A, eixo_da_soma=0)


def num_guarda_em_float32(Q, K, V, dO, mask=None, eps=1e-6):  # a conta em float64, guardada em float32
    out = []
    for x in (Q, K, V):
        g = np.zeros(x.shape, dtype=np.float32)
        for i in np.ndindex(x.shape):
            v = x[i]
            x[i] = v + eps
            a = _perda(Q, K, V, dO, mask)
            x[i] = v - eps
            b = _perda(Q, K, V, dO, mask)
            x[i] = v
            g[i] = (a - b) / (2 * eps)
        out.append(g)
    return tuple(out)


def num_cinco_pontos(Q, K, V, dO, mask=None, eps=1e-6):  # a fórmula de 5 pontos, mais precisa, mas outra conta
    out = []
    for x in (Q, K, V):
        g = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            v = x[i]
            L = []
            for passo in (2 * eps, eps, -eps, -2 * eps):
                x[i] = v + passo
                L.append(_perda(Q, K, V, dO, mask))
            x[i] = v
            g[i] = (-L[0] + 8 * L[1] - 8 * L[2] + L[3]) / (12 * eps)
        out.append(g)
    return tuple(out)


VALIDAS = {
    aula05.exercicio_1: [sm_certo, sm_jacobiano_por_linha, sm_einsum, sm_lista_de_linhas],
    aula05.exercicio_2: [att_certo, att_einsum, att_escala_em_Q],
    aula05.exercicio_3: [num_certo, num_copias, num_plano],
}

ERRADAS = {
    aula05.exercicio_1: [
        ("missing_sum_term", sm_sem_soma, "faltou o termo da soma"),
        ("jacobian_diagonal_only", sm_so_diagonal, "só a diagonal do jacobiano"),
        ("sum_over_everything", sm_soma_global, "sobre o array inteiro"),
        ("sum_without_a", sm_soma_sem_A, "a soma ficou sem o A"),
        ("missing_leading_a", sm_sem_A_na_frente, "faltou multiplicar por A na frente"),
        ("sum_sign_flipped", sm_sinal_trocado, "sinal do termo"),
        ("sum_over_axis0", sm_eixo_zero, "no eixo errado"), ("no_return", sm_sem_return, "faltou um `return`"),
        ("missing_keepdims", sm_sem_keepdims,
         "levantou esse erro de formas porque faltou keepdims=True na soma por linha: "
                          "(dA * A).sum(axis=-1) tem forma (3,)"),
        ("forbidden_function", sm_da_biblioteca, "a conta é sua"),
        ("forbidden_function", sm_lavada_pela_softmax, "softmax_backward (por dentro de outra função"),
        ("float32", sm_float32, "dZ veio em float32"),
        ("float32", sm_devolve_float32, "dZ veio em float32"),
        ("dz_not_finite", sm_media_ponderada, "apareceram NaN/inf em dZ"),
    ],
    aula05.exercicio_2: [
        ("gradient_leaks_through_mask", att_vazando, "passou por posições bloqueadas"),
        ("missing_sum_term", att_sem_soma, "faltou o termo da soma"),
        ("missing_scale", att_sem_escala, "faltou o fator 1/√d_k"), ("scale_by_d_k", att_divide_por_d_k, "não 1/d_k"),
        ("scale_multiplied", att_multiplica_pela_raiz, "divide, não multiplica"),
        ("dk_not_transposed", att_dK_sem_transposta, "dK sem a transposta"),
        ("dv_not_transposed", att_dV_sem_transposta, "dV = Aᵀ dO"),
        ("naive_softmax_nan", att_softmax_ingenua, "NaN ou inf"),
        ("wrong_return_format", att_so_dois, "devolve (dQ, dK, dV)"),
        ("forbidden_function", att_da_biblioteca, "a conta é sua"),
        ("forbidden_function", att_pelo_modelo, "attention_backward (por dentro de outra função da biblioteca)"),
        ("grads_out_of_order", att_ordem_trocada, "a tupla está fora de ordem: devolva (dQ, dK, dV)"),
        ("mask_multiplied", att_scores_vezes_mascara, "multiplicar as pontuações pela máscara não bloqueia nada"),
        ("finite_mask_value", att_menos_1e9, "-1e9 (ou outro número finito) no lugar de -inf"),
        ("finite_mask_value_added", att_menos_1e9_somado, "S - 1e9 (somado às pontuações bloqueadas)"),
        ("blocked_row_weight", att_linha_bloqueada_na_primeira_chave,
         "a consulta 2 tem todas as chaves bloqueadas, e a convenção do curso é "
                                                "peso 0"),
        ("missing_keepdims", att_sem_keepdims,
         "faltou keepdims=True na soma por linha: (dA * A).sum(axis=-1) tem forma (4,)"),
        ("mask_transposed", att_mascara_transposta, "a máscara está transposta"),
        ("mask_after_softmax", att_mascara_depois_da_softmax, "a máscara entrou DEPOIS da softmax"),
        ("sum_over_axis0", att_soma_no_eixo_0, "a soma do backward da softmax foi no eixo errado"),
    ],
    aula05.exercicio_3: [
        ("missing_factor_2", num_sem_o_2, "faltou o 2 no denominador"),
        ("forward_difference", num_para_frente, "diferença para frente"),
        ("float32", num_float32, "float32"), ("step_too_large", num_passo_grande, "passo é grande demais"),
        ("step_too_large", num_passo_1e1, "passo é grande demais"),
        ("all_positions_at_once", num_tudo_de_uma_vez, "todos os números do array"),
        ("input_mutated", num_sem_restaurar, "não altera as entradas"),
        ("wrong_values", num_por_linhas, "uma posição i de cada vez"),
        ("input_mutated", num_restaura_somando, "Somar e subtrair ε não basta: em ponto flutuante"),
        ("wrong_return_format", num_so_dQ, "devolve (dQ, dK, dV)"),
        ("forbidden_function", num_da_biblioteca, "a conta é sua"),
        ("eps_ignored", num_eps_fixo, "a sua função não usou o eps que recebeu"),
        ("float32", num_guarda_em_float32, "dQ foi guardado em float32"),
        ("five_point_formula", num_cinco_pontos, "essa é a fórmula de 5 pontos"),
    ],
}


_id = corpus.nome
test_validas_passam, test_erradas_falham_com_a_dica_do_engano = corpus.testes(VALIDAS, ERRADAS, trecho_na_dica=True)


@pytest.mark.parametrize("check, fn", [(aula05.exercicio_1, sm_sem_soma), (aula05.exercicio_2, att_vazando),
                                       (aula05.exercicio_3, num_float32)], ids=_id)
def test_na_correcao_a_falha_levanta(check, fn, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check(fn)



_SORTEADOS = """
import contextlib, io, sys
from atencao.checks import cases
cases.RANDOMIZE_CASES = True  # como na correção: antes de as verificações carregarem
import test_checks_aula05_corpus as corpus
problemas = []
for _ in range(3):
    for check, fns in corpus.VALIDAS.items():
        for fn in fns:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                if not check(fn):
                    problemas.append(("válida reprovada", fn.__name__, out.getvalue()))
    for check, fns in corpus.ERRADAS.items():
        for categoria, fn, trecho in fns:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                ok = check(fn)
            if ok or trecho not in " ".join(out.getvalue().split()) or ok.category != categoria:
                problemas.append(("errada", fn.__name__, ok.category, out.getvalue()))
print(problemas)
sys.exit(1 if problemas else 0)
"""


@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_com_casos_sorteados_as_validas_passam_e_as_erradas_nao():
    """Na conferência da correção os casos são sorteados (outras sementes a cada vez): as respostas do corpus
    mantêm o veredito, a dica e a categoria. Num processo novo, porque a chave é ligada antes de as verificações
    carregarem."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])}
    env.pop("NBGRADER_EXECUTION", None)
    r = subprocess.run([sys.executable, "-c", _SORTEADOS], capture_output=True, text=True, env=env, cwd=tests,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
