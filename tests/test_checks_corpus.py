"""Corpus de respostas das Aulas 1 e 2, como alunos as escreveriam: pelo menos 3 válidas e 8 erradas por
exercício prático. Nenhuma válida leva ❌, nenhuma errada leva ✅, a verificação nunca quebra com um erro
dela mesma, e todo ❌ vem com uma dica (o que mudar). As respostas dos outros arquivos de teste entram aqui
pelo nome; as novas estão abaixo.
"""

import re
from pathlib import Path

import corpus
import numpy as np
import pytest
import test_checks_aula01 as t1
import test_checks_aula02 as t2
import test_checks_entradas as te

import atencao
from atencao import softmax
from atencao.checks import aula01, aula02
from correcao import catalogo


def _softmax_a_mao(s):
    """Softmax estável escrita pelo aluno, com linha toda -inf dando zeros."""
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    tot = e.sum(axis=-1, keepdims=True)
    return np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)


# ---------- Aula 1, exercício 3 ----------
def ex3_copia_a_linha():
    _, E = atencao.gato_felino()
    E[3] = E[2]  # alto igual a pulou
    return E


def ex3_lista_float32():
    return t1.ex3_certo().astype(np.float32).tolist()


def ex3_muda_pulou_para_gato():  # pulou parecido com gato, não com alto
    _, E = atencao.gato_felino()
    E[2] = E[0]
    return E


def ex3_cosseno_baixo():
    _, E = atencao.gato_felino()
    E[3] = E[2] * 0.5 + np.array([0.0, 0.0, 0.0, 0.6])
    return E


# ---------- Aula 1, exercício 4 ----------
def ex4_lacos(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    n, d_k = Q.shape
    A = np.zeros((n, n))
    for i in range(n):
        s = np.array([Q[i] @ K[j] for j in range(n)]) / d_k ** 0.5
        e = np.exp(s - s.max())
        A[i] = e / e.sum()
    return A @ V, A


def ex4_escala_em_W_q(X, W_q, W_k, W_v):
    Q = X @ (W_q / np.sqrt(W_q.shape[1]))  # a escala dentro da projeção: a mesma conta
    A = softmax(Q @ (X @ W_k).T)
    return [A @ (X @ W_v), A]


def ex4_pesos_transpostos(X, W_q, W_k, W_v):
    out, A = t1.ex4_certo(X, W_q, W_k, W_v)
    return A.T @ (X @ W_v), A.T


def ex4_esquece_softmax(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ K.T / np.sqrt(K.shape[1])
    return S @ V, S


def ex4_devolve_so_saida(X, W_q, W_k, W_v):
    return t1.ex4_certo(X, W_q, W_k, W_v)[0]


def _softmax_ingenua(s):
    e = np.exp(s)  # sem subtrair o máximo: estoura com pontuações grandes
    return e / e.sum(axis=-1, keepdims=True)


def ex4_softmax_ingenua(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = _softmax_ingenua(Q @ K.T / np.sqrt(K.shape[1]))
    return A @ V, A


# ---------- Aula 1, projeto ----------
def proj_a_mao(frase, vectors=None):
    import matplotlib.pyplot as plt

    tokens, X = atencao.embed(frase, vectors)
    A = _softmax_a_mao(X @ X.T / np.sqrt(X.shape[1]))
    fig, ax = plt.subplots()
    ax.imshow(A, cmap="viridis")
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        linha[i] = -1
        j = int(np.argmax(linha))
        destaques.append([t, tokens[j], float(A[i, j])])
        print(f"{t} → {tokens[j]} ({A[i, j]:.2f})")
    return tuple(tokens), A.astype(np.float32), destaques


def proj_tabela_de_texto(frase, vectors=None):
    tokens, A, destaques = t1.proj_certo(frase, vectors)
    print(atencao.format_weights(A, tokens))
    return tokens, A.tolist(), destaques


def proj_destaque_por_coluna(frase, vectors=None):
    tokens, A, _ = t1.proj_certo(frase, vectors)
    B = A.copy()
    np.fill_diagonal(B, -1)
    return tokens, A, [(tokens[j], tokens[int(np.argmax(B[:, j]))], A[int(np.argmax(B[:, j])), j])
                       for j in range(len(tokens))]


def proj_transposto(frase, vectors=None):
    tokens, A, _ = t1.proj_certo(frase, vectors)
    return tokens, A.T, t1._destaques(A.T, tokens)


def proj_tokens_da_frase_crua(frase, vectors=None):
    tokens, A, h = t1.proj_certo(frase, vectors)
    return frase.split(), A, h


# ---------- Aula 2, exercício 1 ----------
def mask_no_lugar_numa_copia(Q, K, V, mask=None):
    scores = np.einsum("id,jd->ij", Q, K) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores[~mask] = -np.inf  # muda só o próprio array de pontuações
    A = _softmax_a_mao(scores)
    return A @ V, A


def mask_float32(Q, K, V, mask=None):
    out, A = t2.mask_certo(Q.astype(np.float32), K.astype(np.float32), V.astype(np.float32), mask)
    return out, A


def mask_menos_um_bilhao(Q, K, V, mask=None):
    s = t2._scores(Q, K)
    if mask is not None:
        s = np.where(mask, s, -1e9)  # linha toda bloqueada vira uniforme, não zero
    A = softmax(s)
    return A @ V, A


def mask_depois_renormalizando(Q, K, V, mask=None):  # zera os bloqueados depois da softmax e renormaliza
    A = softmax(t2._scores(Q, K))
    if mask is not None:
        A = A * mask
        soma = A.sum(axis=-1, keepdims=True)
        A = np.divide(A, soma, out=np.zeros_like(A), where=soma > 0)  # a linha toda bloqueada fica 0
    return A @ V, A


def mask_softmax_sem_maximo(Q, K, V, mask=None):
    s = t2._scores(Q, K)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    A = np.nan_to_num(_softmax_ingenua(s))  # a linha toda bloqueada (0/0) vira 0; as pontuações grandes, não
    return A @ V, A


def mask_triangulo_de_cima(Q, K, V, mask=None):
    return t2.mask_certo(Q, K, V, None if mask is None else np.triu(np.ones_like(mask, dtype=bool)))


def mask_chama_a_biblioteca(Q, K, V, mask=None):
    return atencao.scaled_dot_product_attention(Q, K, V, mask=mask)


# ---------- Aula 2, exercício 2 ----------
def mha_laco_nas_cabecas(X, W_q, W_k, W_v, W_o, n_heads):
    d_k = X.shape[1] // n_heads
    saidas, pesos = [], []
    for h in range(n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        Q, K, V = X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols]
        A = softmax(Q @ K.T / np.sqrt(d_k))
        saidas.append(A @ V)
        pesos.append(A)
    return np.concatenate(saidas, axis=1) @ W_o, np.stack(pesos)


def mha_einsum(X, W_q, W_k, W_v, W_o, n_heads):
    n, d = X.shape
    Q, K, V = ((X @ W).reshape(n, n_heads, d // n_heads) for W in (W_q, W_k, W_v))
    A = softmax(np.einsum("ihd,jhd->hij", Q, K) / np.sqrt(d // n_heads))
    return np.einsum("hij,jhd->ihd", A, V).reshape(n, d) @ W_o, A


def mha_escala_em_W_q(X, W_q, W_k, W_v, W_o, n_heads):
    W_q = W_q / np.sqrt(X.shape[1] // n_heads)  # um array novo: a entrada não muda
    return t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=1)


def mha_concat_sem_transpor(X, W_q, W_k, W_v, W_o, n_heads):
    Q, K, V = (t2._heads(X, W, n_heads) for W in (W_q, W_k, W_v))
    A = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(X.shape[1] // n_heads))
    return (A @ V).reshape(X.shape[0], -1) @ W_o, A


def mha_softmax_por_coluna(X, W_q, W_k, W_v, W_o, n_heads):
    Q, K, V = (t2._heads(X, W, n_heads) for W in (W_q, W_k, W_v))
    A = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(X.shape[1] // n_heads), axis=-2)
    return (A @ V).transpose(1, 0, 2).reshape(X.shape[0], -1) @ W_o, A


def mha_softmax_ingenua(X, W_q, W_k, W_v, W_o, n_heads):
    Q, K, V = (t2._heads(X, W, n_heads) for W in (W_q, W_k, W_v))
    A = _softmax_ingenua(Q @ K.transpose(0, 2, 1) / np.sqrt(X.shape[1] // n_heads))
    return (A @ V).transpose(1, 0, 2).reshape(X.shape[0], -1) @ W_o, A


def mha_ordem_trocada(X, W_q, W_k, W_v, W_o, n_heads):
    out, A = t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads)
    return A, out


def mha_da_biblioteca(X, W_q, W_k, W_v, W_o, n_heads):
    return atencao.MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, n_heads=n_heads)(X)


# ---------- Aula 2, exercício 3 ----------
def comparar_forward_e_numpy(attn, X1, X2):
    if len(X1) != len(X2):
        raise ValueError(f"X1 tem {len(X1)} tokens e X2 tem {len(X2)}: precisam ter o mesmo número")
    _, A1 = attn.forward(X1)
    _, A2 = attn.forward(X2)
    return A1, A2, np.mean(np.abs(A1 - A2))  # np.float64


def comparar_soma_em_vez_de_media(attn, X1, X2):
    A1, A2, _ = t2.comparar_certo(attn, X1, X2)
    return A1, A2, float(np.abs(A1 - A2).sum())


# ---------- Aula 2, projeto ----------
def projeto_forward_em_lista(frase_a, frase_b, mha):
    pesos = [mha.forward(atencao.embed_hashed(f, d_model=mha.d_model)[1])[1] for f in (frase_a, frase_b)]
    if pesos[0].shape != pesos[1].shape:
        raise ValueError("as duas frases precisam ter o mesmo número de tokens")
    return pesos[0], pesos[1], np.mean(np.abs(pesos[0] - pesos[1]), axis=(-1, -2))


def projeto_valida_pelo_texto(frase_a, frase_b, mha):
    if len(atencao.tokenize(frase_a)) != len(atencao.tokenize(frase_b)):
        raise ValueError("frases de tamanhos diferentes")
    return t2.projeto_certo(frase_a, frase_b, mha)


def projeto_media_no_eixo_errado(frase_a, frase_b, mha):
    Wa, Wb, _ = t2.projeto_certo(frase_a, frase_b, mha)
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=0)


def projeto_frases_trocadas(frase_a, frase_b, mha):
    Wa, Wb, d = t2.projeto_certo(frase_a, frase_b, mha)
    return Wb, Wa, d


def projeto_d_model_fixo(frase_a, frase_b, mha):
    Xa, Xb = atencao.embed_hashed(frase_a, d_model=16)[1], atencao.embed_hashed(frase_b, d_model=16)[1]
    if len(Xa) != len(Xb):
        raise ValueError("tamanhos diferentes")
    Wa, Wb = mha(Xa)[1], mha(Xb)[1]
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))


def projeto_diferenca_com_sinal(frase_a, frase_b, mha):
    Wa, Wb, _ = t2.projeto_certo(frase_a, frase_b, mha)
    return Wa, Wb, (Wa - Wb).mean(axis=(1, 2))


# ---------- Aula 2, aquecimento: a softmax ----------
def sm_certa(z, axis=-1):
    return _softmax_a_mao_eixo(np.asarray(z, dtype=float), axis)


def _softmax_a_mao_eixo(z, axis):
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)
    t = e.sum(axis=axis, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def sm_moveaxis_e_laco(z, axis=-1):
    z = np.moveaxis(np.array(z, dtype=float), axis, -1)
    out = np.zeros_like(z)
    for idx in np.ndindex(z.shape[:-1]):
        linha = z[idx]
        if np.isneginf(linha).all():
            continue
        e = np.exp(linha - linha.max())
        out[idx] = e / e.sum()
    return np.moveaxis(out, -1, axis)


def sm_maximo_global(z, axis=-1):  # o máximo do array inteiro: uma linha em outra escala vira zeros
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z[np.isfinite(z)].max())
    t = e.sum(axis=axis, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def sm_float32(z, axis=-1):
    return sm_certa(np.asarray(z, dtype=np.float32), axis).astype(np.float32)


def sm_ingenua(z, axis=-1):
    e = np.exp(np.asarray(z, dtype=float))
    return e / e.sum(axis=axis, keepdims=True)


def sm_sem_eixo(z, axis=-1):
    return sm_certa(z, -1)


def sm_nan_na_linha_toda_inf(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sm_sem_dividir(z, axis=-1):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    return np.exp(z - np.where(np.isfinite(m), m, 0.0))


def sm_soma_do_array_inteiro(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z[np.isfinite(z)].max())
    return e / e.sum()


def sm_chama_a_biblioteca(z, axis=-1):
    return atencao.softmax(z, axis=axis)


def sm_pela_perda_do_treino(z, axis=-1):
    """A softmax tirada da perda do modelo da Aula 5 (o gradiente da entropia cruzada é softmax − one-hot): uma
    trapaça achada por uma aluna hostil, que passava com 2 de 2."""
    from atencao.training import TinyAttentionModel

    z = np.moveaxis(np.asarray(z, dtype=float), axis, -1)
    linhas = z.reshape(1, -1, z.shape[-1])
    mortas = np.isneginf(linhas).all(axis=-1)  # uma linha toda -inf: zeros, como a softmax do curso
    linhas = np.where(mortas[..., None], 0.0, linhas)
    m = linhas.shape[1]
    _, g0 = TinyAttentionModel.loss(linhas, np.zeros((1, m), int))  # (softmax − one-hot na coluna 0) / m
    p = g0 * m
    p[..., 0] += 1
    p[mortas] = 0.0
    return np.moveaxis(p.reshape(z.shape), -1, axis)


def sm_muda_a_entrada(z, axis=-1):
    if isinstance(z, np.ndarray):
        z -= np.where(np.isfinite(z.max(axis=axis, keepdims=True)), z.max(axis=axis, keepdims=True), 0.0)
    return sm_certa(z, axis)


def sm_menos_inf_vira_zero(z, axis=-1):
    z = np.asarray(z, dtype=float)
    return sm_certa(np.where(np.isneginf(z), 0.0, z), axis)


# ---------- Aula 2, exercício 1, passo 1: a máscara causal ----------
def mc_tril(n):
    return np.tril(np.ones((n, n), dtype=bool))


def mc_arange(n):
    return np.arange(n)[:, None] >= np.arange(n)[None, :]


def mc_lista_de_listas(n):  # o enunciado pede um array: a atenção usa ~mask e mask.shape
    return [[j <= i for j in range(n)] for i in range(n)]


def mc_nao_triu(n):
    return ~np.triu(np.ones((n, n), dtype=bool), k=1)


def mc_triu(n):
    return np.triu(np.ones((n, n), dtype=bool))


def mc_invertida(n):
    return ~mc_tril(n)


def mc_sem_diagonal(n):
    return np.tril(np.ones((n, n), dtype=bool), k=-1)


def mc_zeros_e_uns(n):
    return np.tril(np.ones((n, n)))


def mc_tudo_true(n):
    return np.ones((n, n), dtype=bool)


def mc_da_biblioteca(n):
    return atencao.causal_mask(n)


def mc_um_a_mais(n):
    return mc_tril(n + 1)


def mc_sem_return(n):
    mc_tril(n)


# ---------- respostas novas, escritas a partir dos enunciados ----------
def sm_logsumexp(z, axis=-1):  # válida: exp(z - logsumexp), com a linha toda -inf dando zeros
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    soma = np.exp(z - m).sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = m + np.log(soma)
    return np.where(soma > 0, np.exp(z - np.where(soma > 0, lse, 0.0)), 0.0)


def sm_eixo_zero_sempre(z, axis=-1):  # o axis recebido nunca é usado: sempre o eixo 0
    return sm_certa(z, 0)


def sm_transpoe_e_usa_menos_um(z, axis=-1):  # válida: leva o eixo pedido para o fim e volta
    z = np.swapaxes(np.asarray(z, dtype=float), axis, -1)
    return np.swapaxes(_softmax_a_mao_eixo(z, -1), axis, -1)


def mc_laco(n):  # válida: dois laços
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1):
            m[i, j] = True
    return m


def mc_tril_k_um(n):  # uma diagonal a mais: cada token vê também o seguinte
    return np.tril(np.ones((n, n), dtype=bool), k=1)


def mc_estritamente_abaixo(n):  # "o passado": sem a diagonal
    return np.arange(n)[:, None] > np.arange(n)[None, :]


def projeto_valida_pelo_split(frase_a, frase_b, mha):  # conta palavras separadas por espaço, não tokens
    if len(frase_a.split()) != len(frase_b.split()):
        raise ValueError("as frases precisam ter o mesmo número de palavras")
    Xa, Xb = (atencao.embed_hashed(f, d_model=mha.d_model)[1] for f in (frase_a, frase_b))
    Wa, Wb = mha(Xa)[1], mha(Xb)[1]
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))


def projeto_valida_pelos_caracteres(frase_a, frase_b, mha):
    if len(frase_a) != len(frase_b):
        raise ValueError("as frases precisam ter o mesmo tamanho")
    return t2.projeto_certo(frase_a, frase_b, mha)


def projeto_valida_pelos_tokens_do_embed(frase_a, frase_b, mha):  # válida: compara as listas de tokens
    tokens_a, Xa = atencao.embed_hashed(frase_a, d_model=mha.d_model)
    tokens_b, Xb = atencao.embed_hashed(frase_b, d_model=mha.d_model)
    if len(tokens_a) != len(tokens_b):
        raise ValueError(f"“{frase_a}” tem {len(tokens_a)} tokens e “{frase_b}” tem {len(tokens_b)}")
    Wa, Wb = mha.forward(Xa)[1], mha.forward(Xb)[1]
    return Wa, Wb, np.array([np.abs(Wa[h] - Wb[h]).mean() for h in range(mha.n_heads)])

def ex4_escala_d_v(X, W_q, W_k, W_v):  # divide pela raiz da dimensão de V
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = softmax(Q @ K.T / np.sqrt(V.shape[1]))
    return A @ V, A


def ex4_softmax_com_keepdims_a_mao(X, W_q, W_k, W_v):  # válida: tudo escrito, softmax por linha
    S = (X @ W_q) @ (X @ W_k).T / np.sqrt(W_k.shape[1])
    E = np.exp(S - S.max(axis=1).reshape(-1, 1))
    A = E / E.sum(axis=1).reshape(-1, 1)
    return (A @ (X @ W_v), A)


def proj_segundo_maior_com_argsort(frase, vectors=None):  # válida: o 2º da ordem quando o 1º é o próprio token
    import matplotlib.pyplot as plt

    tokens, X = atencao.embed(frase, vectors)
    A = atencao.self_attention(X)[1]
    plt.figure()
    plt.imshow(A)
    destaques = []
    for i, t in enumerate(tokens):
        ordem = [j for j in np.argsort(-A[i], kind="stable") if j != i]
        destaques.append((t, tokens[ordem[0]], float(A[i, ordem[0]])))
        print(t, "→", tokens[ordem[0]], round(float(A[i, ordem[0]]), 2))
    return tokens, A, destaques


# ---------- o corpus ----------
VALIDAS = {
    aula02.aquecimento_softmax: [sm_certa, sm_moveaxis_e_laco, sm_float32, sm_logsumexp, sm_transpoe_e_usa_menos_um],
    aula02.exercicio_1_passo_1: [mc_tril, mc_arange, mc_nao_triu, mc_laco],
    aula01.exercicio_3: [t1.ex3_certo, te.ex3_quinta_coordenada, ex3_copia_a_linha, ex3_lista_float32],
    aula01.exercicio_4: [t1.ex4_certo, t1.ex4_float32_einsum, ex4_lacos, ex4_escala_em_W_q,
                         ex4_softmax_com_keepdims_a_mao],
    aula01.projeto: [t1.proj_certo, proj_a_mao, proj_tabela_de_texto, proj_segundo_maior_com_argsort],
    aula02.exercicio_1: [t2.mask_certo, mask_no_lugar_numa_copia, mask_float32],
    aula02.exercicio_2: [t2.mha_certo, mha_laco_nas_cabecas, mha_einsum, mha_escala_em_W_q],
    aula02.exercicio_3: [t2.comparar_certo, t2.comparar_mensagem_com_broadcast, comparar_forward_e_numpy],
    aula02.projeto: [t2.projeto_certo, projeto_forward_em_lista, projeto_valida_pelo_texto,
                     projeto_valida_pelos_tokens_do_embed],
}

# (resposta errada, trecho do critério que falha)
ERRADAS = {
    aula02.aquecimento_softmax: [
        (sm_ingenua, "logits grandes"), (sm_sem_eixo, "axis=0"), (sm_nan_na_linha_toda_inf, "linha toda -inf"),
        (sm_sem_dividir, "vetor"), (sm_soma_do_array_inteiro, "matriz"), (sm_chama_a_biblioteca, "sem a função pronta"),
        (sm_pela_perda_do_treino, "sem a função pronta"),
        (sm_muda_a_entrada, "não altera as entradas"), (sm_menos_inf_vira_zero, "-inf"),
        (sm_maximo_global, "escalas diferentes"), (sm_eixo_zero_sempre, "cada linha"),
    ],
    aula02.exercicio_1_passo_1: [
        (mc_triu, "diagonal e abaixo"), (mc_invertida, "diagonal e abaixo"), (mc_sem_diagonal, "diagonal e abaixo"),
        (mc_zeros_e_uns, "dtype bool"), (mc_tudo_true, "diagonal e abaixo"), (mc_da_biblioteca, "sem a função pronta"),
        (mc_um_a_mais, "forma (n, n)"), (mc_sem_return, "devolve um array"), (mc_lista_de_listas, "devolve um array"),
        (mc_tril_k_um, "diagonal e abaixo"), (mc_estritamente_abaixo, "diagonal e abaixo"),
    ],
    aula01.exercicio_3: [
        (t1.ex3_sem_mudar, "modificado"), (t1.ex3_tudo_igual, "gato e felino"), (t1.ex3_so_tres_linhas, "4 linhas"),
        (t1.ex3_com_nan, "finitos"), (t1.ex3_estragou_gato, "gato e felino"), (te.ex3_escala_tudo, "gato e felino"),
        (ex3_muda_pulou_para_gato, "pulou e alto são parecidos"), (ex3_cosseno_baixo, "pulou e alto são parecidos"),
    ],
    aula01.exercicio_4: [
        (t1.ex4_sem_escala, "pesos"), (t1.ex4_escala_d_model, "pesos"), (t1.ex4_softmax_por_coluna, "pesos"),
        (t1.ex4_trocado, "ordem do retorno"), (t1.ex4_sem_projetar_v, "saída"), (te.ex4_escala_por_n, "pesos"),
        (te.ex4_escala_W_q_no_lugar, "não altera as entradas"), (te.ex4_chama_a_biblioteca, "sem a função pronta"),
        (ex4_pesos_transpostos, "pesos"), (ex4_esquece_softmax, "pesos"), (ex4_devolve_so_saida, "devolve (saida"),
        (ex4_softmax_ingenua, "caso 5"), (ex4_escala_d_v, "pesos"),
    ],
    aula01.projeto: [
        (t1.proj_sem_figura_nem_texto, "desenha"), (t1.proj_so_figura, "desenha"),
        (t1.proj_conta_o_proprio, "OUTRO token"), (t1.proj_sem_escala, "matriz de atenção"),
        (t1.proj_pares, "(token, outro token, peso)"), (t1.proj_pesos_inventados, "peso de cada destaque"),
        (proj_destaque_por_coluna, "destaque"), (proj_transposto, "matriz de atenção"),
        (proj_tokens_da_frase_crua, "tokens"),
    ],
    aula02.exercicio_1: [
        (t2.mask_invertida, "pesos"), (t2.mask_depois_da_softmax, "pesos"), (t2.mask_softmax_ingenua, "pesos"),
        (t2.mask_ignorada, "pesos"), (te.mask_escala_Q_no_lugar, "não altera as entradas"),
        (mask_menos_um_bilhao, "linha 2 toda bloqueada"), (mask_triangulo_de_cima, "pesos"),
        (mask_softmax_sem_maximo, "pontuações grandes"), (mask_depois_renormalizando, "pontuações grandes"),
        (mask_chama_a_biblioteca, "sem a função pronta"),
    ],
    aula02.exercicio_2: [
        (t2.mha_escala_d_model, "pesos por cabeça"), (t2.mha_reshape_sem_transpor, "pesos por cabeça"),
        (t2.mha_sem_W_o, "saída"), (t2.mha_pesos_medios, "pesos por cabeça"), (t2.mha_sem_escala, "pesos por cabeça"),
        (mha_concat_sem_transpor, "saída"), (mha_softmax_por_coluna, "pesos por cabeça"),
        (mha_ordem_trocada, "pesos por cabeça"),
        (mha_softmax_ingenua, "pesos por cabeça"), (mha_da_biblioteca, "sem a função pronta"),
    ],
    aula02.exercicio_3: [
        (t2.comparar_sem_validar, "tamanhos diferentes"), (t2.comparar_instancias_diferentes, "2ª frase"),
        (t2.comparar_nova_instancia_padrao, "1ª frase"), (t2.comparar_diferenca_com_sinal, "diferença média"),
        (t2.comparar_sem_validar_nem_tratar, "tamanhos diferentes"), (te.comparar_X1_no_lugar, "não altera"),
        (te.comparar_muda_a_instancia, "não altera"), (comparar_soma_em_vez_de_media, "diferença média"),
    ],
    aula02.projeto: [
        (t2.projeto_media_global, "por cabeça"), (t2.projeto_pesos_medios, "frase A"),
        (t2.projeto_sem_valueerror, "levantam ValueError"), (t2.projeto_ignora_a_mha, "pesos da frase A"),
        (te.projeto_muda_mha, "não altera"), (projeto_media_no_eixo_errado, "por cabeça"),
        (projeto_frases_trocadas, "frase A"), (projeto_d_model_fixo, "levantou"),
        (projeto_diferenca_com_sinal, "por cabeça"), (projeto_valida_pelo_split, "mesmo número de tokens não levantam"),
        (projeto_valida_pelos_caracteres, "mesmo número de tokens não levantam"),
    ],
}


_id = corpus.nome
_falhas_sem_dica = corpus.falhas_sem_dica


# (verificação, resposta errada, trecho da dica): a dica nomeia o engano de cada uma
DICAS = [
    (aula02.exercicio_1, mask_depois_renormalizando, "a máscara entrou DEPOIS da softmax"),
    (aula01.exercicio_4, ex4_escala_d_v, "dividiu por sqrt(d_v)"),
    (aula02.aquecimento_softmax, sm_sem_eixo, "o argumento axis foi ignorado"),
    (aula02.aquecimento_softmax, sm_eixo_zero_sempre, "ao longo do eixo 0, não do eixo pedido (axis=-1)"),
    (aula02.exercicio_1_passo_1, mc_sem_diagonal, "a diagonal precisa ser True"),
    (aula02.exercicio_1_passo_1, mc_estritamente_abaixo, "a diagonal precisa ser True"),
    (aula02.exercicio_1_passo_1, mc_invertida, "cada token pode olhar para si mesmo"),
    (aula02.projeto, projeto_valida_pelo_split, "não frase.split()"),
    (aula02.projeto, projeto_valida_pelos_caracteres, "não o número de caracteres"),
]


def _verificacoes() -> list:
    """As verificações de exercício de todos os módulos ``atencao/checks/aulaNN.py``: as funções públicas
    criadas pelo decorador ``@check`` (achadas nos módulos, não numa lista escrita aqui)."""
    import importlib
    import pkgutil

    import atencao.checks as pacote
    from atencao.checks import framework

    achadas = []
    for info in sorted(pkgutil.iter_modules(pacote.__path__), key=lambda i: i.name):
        if not re.fullmatch(r"aula\d\d", info.name):
            continue
        mod = importlib.import_module(f"{pacote.__name__}.{info.name}")
        for nome, f in vars(mod).items():
            codigo = getattr(f, "__code__", None)
            if (not nome.startswith("_") and hasattr(f, "__wrapped__") and codigo is not None
                    and codigo.co_filename == framework.__file__ and f.__module__ == mod.__name__):
                achadas.append(f)
    return achadas


def _corpus_completo() -> tuple[dict, dict]:
    """Este corpus e os de ``tests/test_checks_aulaNN_corpus.py``, achados pelo nome do arquivo."""
    import importlib

    validas, erradas = dict(VALIDAS), dict(ERRADAS)
    for arquivo in sorted(Path(__file__).parent.glob("test_checks_aula[0-9][0-9]_corpus.py")):
        mod = importlib.import_module(arquivo.stem)  # aqui dentro: eles importam deste arquivo
        validas.update(mod.VALIDAS)
        erradas.update(mod.ERRADAS)
    return validas, erradas


def _faltas(verificacoes: list, validas: dict, erradas: dict) -> list[str]:
    """As verificações com menos de 3 respostas válidas ou 8 erradas no corpus (inclusive as ausentes)."""
    return [f"{v.__module__}.{v.__name__}: {len(validas.get(v, []))} válidas, {len(erradas.get(v, []))} erradas"
            for v in verificacoes if len(validas.get(v, [])) < 3 or len(erradas.get(v, [])) < 8]


def test_o_corpus_tem_3_validas_e_8_erradas_por_exercicio():
    verificacoes = _verificacoes()
    # cada aula achada nas pastas tem verificações, e cada verificação, o seu corpus
    assert {v.__module__.rsplit(".", 1)[1] for v in verificacoes} == {a.module for a in catalogo.lessons()}
    assert len(verificacoes) >= 14, [v.__name__ for v in verificacoes]
    assert not _faltas(verificacoes, *_corpus_completo())


def test_uma_verificacao_sem_entradas_no_corpus_faz_a_contagem_falhar(monkeypatch):
    """Uma verificação nova num módulo ``aulaNN``, sem respostas no corpus, não passa em silêncio."""
    from atencao.checks.framework import check

    def exercicio_9(c, fn):
        c.expect(fn() == 1, "devolve 1")

    exercicio_9.__module__ = aula02.__name__
    nova = check("Exercício 9")(exercicio_9)
    monkeypatch.setattr(aula02, "exercicio_9", nova, raising=False)
    verificacoes = _verificacoes()
    assert nova in verificacoes
    assert _faltas(verificacoes, *_corpus_completo()) == ["atencao.checks.aula02.exercicio_9: 0 válidas, 0 erradas"]


test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)


@pytest.mark.parametrize("check, fn", [(aula01.exercicio_4, ex4_softmax_ingenua),
                                       (aula02.exercicio_1, mask_softmax_sem_maximo),
                                       (aula02.exercicio_2, mha_softmax_ingenua)], ids=lambda x: _id(x))
def test_softmax_instavel_nao_passa_e_a_dica_diz_por_que(check, fn, capsys):
    assert not check(fn)
    assert "ubtraia o máximo de cada linha" in capsys.readouterr().out


@pytest.mark.parametrize("check, fn, dica", DICAS, ids=lambda x: _id(x))
def test_a_dica_nomeia_o_engano(check, fn, dica, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert not check(fn)
    out = " ".join(capsys.readouterr().out.split())
    assert dica in out, out


@pytest.mark.parametrize("check, fn", [(aula02.aquecimento_softmax, sm_eixo_zero_sempre),
                                       (aula02.projeto, projeto_valida_pelo_split)], ids=lambda x: _id(x))
def test_na_correcao_a_falha_levanta(check, fn, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check(fn)
