"""Corpus de respostas da Aula 2, como alunos as escreveriam: o único lugar onde cada resposta errada e a dica que
ela tem de receber moram. Nenhuma válida leva ❌; cada errada falha no critério esperado, com uma dica em cada ❌
(e, quando a entrada diz, com o trecho da dica que nomeia o engano); a verificação nunca quebra com um erro dela
mesma. As respostas certas que outros testes também usam ficam em ``test_checks_aula02.py``.
"""

import corpus
import numpy as np
import test_checks_aula02 as t2
import test_checks_entradas as te

import atencao
from atencao import softmax
from atencao.checks import aula02


def mask_invertida(Q, K, V, mask=None):
    return t2.mask_certo(Q, K, V, None if mask is None else ~mask)


def mask_depois_da_softmax(Q, K, V, mask=None):
    A = softmax(t2._scores(Q, K))
    if mask is not None:
        A = A * mask
    return A @ V, A


def mask_softmax_ingenua(Q, K, V, mask=None):
    scores = t2._scores(Q, K)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A


def mask_ignorada(Q, K, V, mask=None):
    return t2.mask_certo(Q, K, V)


def mask_quase_zero(Q, K, V, mask=None):
    """Bloqueia com -50 em vez de -inf (e zera à mão as linhas todas bloqueadas): peso ~1e-22, não 0."""
    scores = t2._scores(Q, K)
    if mask is not None:
        scores = np.where(mask, scores, -50.0)
    A = softmax(scores)
    if mask is not None:
        A[~mask.any(axis=-1)] = 0.0
    return A @ V, A


def mha_escala_d_model(X, W_q, W_k, W_v, W_o, n_heads):
    return t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=X.shape[1])


def mha_reshape_sem_transpor(X, W_q, W_k, W_v, W_o, n_heads):
    n, d = X.shape
    Q, K, V = ((X @ W).reshape(n_heads, n, d // n_heads) for W in (W_q, W_k, W_v))
    A = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d // n_heads))
    return (A @ V).reshape(n, d) @ W_o, A


def mha_sem_W_o(X, W_q, W_k, W_v, W_o, n_heads):
    out, A = t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads)
    return out @ np.linalg.inv(W_o), A


def mha_pesos_medios(X, W_q, W_k, W_v, W_o, n_heads):
    out, A = t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads)
    return out, A.mean(axis=0)


def comparar_sem_validar(attn, X1, X2):
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean()) if A1.shape == A2.shape else 0.0


def comparar_instancias_diferentes(attn, X1, X2):
    outra = atencao.SelfAttention(attn.d_model, attn.d_k, attn.d_v, seed=7)
    A1, A2 = attn(X1)[1], outra(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def comparar_nova_instancia_padrao(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("tamanhos diferentes")
    nova = atencao.SelfAttention(8, 4, 4)  # ignora a instância recebida
    A1, A2 = nova(X1)[1], nova(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def comparar_diferenca_com_sinal(attn, X1, X2):
    A1, A2, _ = t2.comparar_certo(attn, X1, X2)
    return A1, A2, float((A1 - A2).mean())


def projeto_sem_valueerror(frase_a, frase_b, mha):
    Wa = mha(atencao.embed_hashed(frase_a, d_model=mha.d_model)[1])[1]
    Wb = mha(atencao.embed_hashed(frase_b, d_model=mha.d_model)[1])[1]
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))


def projeto_ignora_a_mha(frase_a, frase_b, mha):
    return t2.projeto_certo(frase_a, frase_b, atencao.MultiHeadAttention(16, 4, seed=7))


def projeto_media_global(frase_a, frase_b, mha):
    Wa, Wb, _ = t2.projeto_certo(frase_a, frase_b, mha)
    return Wa, Wb, np.full(mha.n_heads, np.abs(Wa - Wb).mean())


def projeto_pesos_medios(frase_a, frase_b, mha):
    Wa, Wb, d = t2.projeto_certo(frase_a, frase_b, mha)
    return Wa.mean(0), Wb.mean(0), d


def comparar_mensagem_com_broadcast(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("não dá para comparar (nem fazer broadcast de) frases com números de tokens diferentes")
    return t2.comparar_certo(attn, X1, X2)


def comparar_sem_validar_nem_tratar(attn, X1, X2):
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def mha_sem_escala(X, W_q, W_k, W_v, W_o, n_heads):
    return t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=1)


def mask_no_lugar_numa_copia(Q, K, V, mask=None):
    scores = np.einsum("id,jd->ij", Q, K) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores[~mask] = -np.inf  # muda só o próprio array de pontuações
    A = corpus.softmax_a_mao(scores)
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
    A = np.nan_to_num(corpus.softmax_ingenua(s))  # a linha toda bloqueada (0/0) vira 0; as pontuações grandes, não
    return A @ V, A


def mask_triangulo_de_cima(Q, K, V, mask=None):
    return t2.mask_certo(Q, K, V, None if mask is None else np.triu(np.ones_like(mask, dtype=bool)))


def mask_chama_a_biblioteca(Q, K, V, mask=None):
    return atencao.scaled_dot_product_attention(Q, K, V, mask=mask)


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
    A = corpus.softmax_ingenua(Q @ K.transpose(0, 2, 1) / np.sqrt(X.shape[1] // n_heads))
    return (A @ V).transpose(1, 0, 2).reshape(X.shape[0], -1) @ W_o, A


def mha_ordem_trocada(X, W_q, W_k, W_v, W_o, n_heads):
    out, A = t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads)
    return A, out


def mha_da_biblioteca(X, W_q, W_k, W_v, W_o, n_heads):
    return atencao.MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, n_heads=n_heads)(X)


def comparar_forward_e_numpy(attn, X1, X2):
    if len(X1) != len(X2):
        raise ValueError(f"X1 tem {len(X1)} tokens e X2 tem {len(X2)}: precisam ter o mesmo número")
    _, A1 = attn.forward(X1)
    _, A2 = attn.forward(X2)
    return A1, A2, np.mean(np.abs(A1 - A2))


def comparar_soma_em_vez_de_media(attn, X1, X2):
    A1, A2, _ = t2.comparar_certo(attn, X1, X2)
    return A1, A2, float(np.abs(A1 - A2).sum())


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


# ---------- o corpus ----------
VALIDAS = {
    aula02.aquecimento_softmax: [sm_certa, sm_moveaxis_e_laco, sm_float32, sm_logsumexp, sm_transpoe_e_usa_menos_um],
    aula02.exercicio_1_passo_1: [mc_tril, mc_arange, mc_nao_triu, mc_laco],
    aula02.exercicio_1: [t2.mask_certo, mask_no_lugar_numa_copia, mask_float32],
    aula02.exercicio_2: [t2.mha_certo, mha_laco_nas_cabecas, mha_einsum, mha_escala_em_W_q],
    aula02.exercicio_3: [t2.comparar_certo, comparar_mensagem_com_broadcast, comparar_forward_e_numpy],
    aula02.projeto: [t2.projeto_certo, projeto_forward_em_lista, projeto_valida_pelo_texto,
                     projeto_valida_pelos_tokens_do_embed],
}

# (resposta errada, trecho do critério que falha[, trecho da dica que nomeia o engano[, trecho que não aparece]])
ERRADAS = {
    aula02.aquecimento_softmax: [
        ("unstable_softmax", sm_ingenua, "logits grandes"),
        ("axis_ignored", sm_sem_eixo, "axis=0", "o argumento axis foi ignorado"),
        ("all_masked_row_nan", sm_nan_na_linha_toda_inf, "linha toda -inf"),
        ("missing_normalization", sm_sem_dividir, "vetor"),
        ("global_max_subtracted", sm_soma_do_array_inteiro, "matriz"),
        ("forbidden_function", sm_chama_a_biblioteca, "sem a função pronta"),
        ("forbidden_function", sm_pela_perda_do_treino, "sem a função pronta"),
        ("input_mutated", sm_muda_a_entrada, "não altera as entradas"), ("wrong_values", sm_menos_inf_vira_zero,
         "-inf"),
        ("global_max_subtracted", sm_maximo_global, "escalas diferentes"),
        ("axis_ignored", sm_eixo_zero_sempre, "cada linha", "ao longo do eixo 0, não do eixo pedido (axis=-1)"),
    ],
    aula02.exercicio_1_passo_1: [
        ("upper_triangle", mc_triu, "diagonal e abaixo"),
        # a convenção do PyTorch (True = bloqueado) e a sem diagonal dão a mesma [[False]] com n = 1: a dica diz qual
        ("inverted_mask", mc_invertida, "diagonal e abaixo", "a máscara está invertida: aqui True = pode olhar",
         "k=-1"),
        ("diagonal_blocked", mc_sem_diagonal, "diagonal e abaixo", "a diagonal precisa ser True", "invertida"),
        ("criterion_failed", mc_zeros_e_uns, "dtype bool"), ("nothing_blocked", mc_tudo_true, "diagonal e abaixo"),
        ("forbidden_function", mc_da_biblioteca, "sem a função pronta"),
        ("criterion_failed", mc_um_a_mais, "forma (n, n)"), ("criterion_failed", mc_sem_return, "devolve um array"),
        ("criterion_failed", mc_lista_de_listas, "devolve um array"),
        ("nothing_blocked", mc_tril_k_um, "diagonal e abaixo"),
        ("diagonal_blocked", mc_estritamente_abaixo, "diagonal e abaixo", "a diagonal precisa ser True"),
    ],
    aula02.exercicio_1: [
        ("inverted_mask", mask_invertida, "pesos", "invertida"),
        ("mask_after_softmax", mask_depois_da_softmax, "pesos", "ANTES da softmax"),
        ("all_masked_row_nan", mask_softmax_ingenua, "pesos", "NaN"),
        ("mask_ignored", mask_ignorada, "pesos", "a máscara foi ignorada"),
        ("finite_fill_value", mask_quase_zero, "pontuações grandes", "em vez de -np.inf"),
        ("forbidden_function", te.mask_escala_Q_no_lugar, "não altera as entradas"),
        ("all_masked_row_weight", mask_menos_um_bilhao, "linha 2 toda bloqueada"),
        ("mask_transposed", mask_triangulo_de_cima, "pesos"),
        ("unstable_softmax", mask_softmax_sem_maximo, "pontuações grandes", "ubtraia o máximo de cada linha"),
        ("mask_after_softmax_renormalized", mask_depois_renormalizando, "pontuações grandes",
         "a máscara entrou DEPOIS da softmax"),
        ("forbidden_function", mask_chama_a_biblioteca, "sem a função pronta"),
    ],
    aula02.exercicio_2: [
        ("scale_by_d_model", mha_escala_d_model, "pesos por cabeça", "não por sqrt(d_model)"),
        ("reshape_without_transpose", mha_reshape_sem_transpor, "pesos por cabeça", "transpose"),
        ("missing_output_projection", mha_sem_W_o, "saída", "faltou projetar"),
        ("wrong_heads_shape", mha_pesos_medios, "pesos por cabeça", "(n_heads, n, n)"),
        ("no_scale", mha_sem_escala, "pesos por cabeça", "faltou dividir", "mistura tokens"),
        ("wrong_values", mha_concat_sem_transpor, "saída"),
        ("softmax_by_column", mha_softmax_por_coluna, "pesos por cabeça"),
        ("wrong_heads_shape", mha_ordem_trocada, "pesos por cabeça"),
        ("unstable_softmax", mha_softmax_ingenua, "pesos por cabeça", "ubtraia o máximo de cada linha"),
        ("forbidden_function", mha_da_biblioteca, "sem a função pronta"),
    ],
    aula02.exercicio_3: [
        ("missing_value_error", comparar_sem_validar, "tamanhos diferentes"),
        ("wrong_values", comparar_instancias_diferentes, "2ª frase"),
        ("wrong_values", comparar_nova_instancia_padrao, "1ª frase"),
        ("wrong_values", comparar_diferenca_com_sinal, "diferença média"),
        ("missing_value_error", comparar_sem_validar_nem_tratar, "tamanhos diferentes",
         "broadcast do NumPy, um ValueError vazio ou outro tipo de erro não contam"),
        ("input_mutated", te.comparar_X1_no_lugar, "não altera"),
        ("input_mutated", te.comparar_muda_a_instancia, "não altera"),
        ("wrong_values", comparar_soma_em_vez_de_media, "diferença média"),
    ],
    aula02.projeto: [
        ("wrong_values", projeto_media_global, "por cabeça"), ("wrong_shape", projeto_pesos_medios, "frase A"),
        ("missing_value_error", projeto_sem_valueerror, "levantam ValueError"),
        ("wrong_shape", projeto_ignora_a_mha, "d_model=12, n_heads=3): pesos da frase A"),
        ("input_mutated", te.projeto_muda_mha, "não altera"),
        ("wrong_shape", projeto_media_no_eixo_errado, "por cabeça"),
        ("sentences_swapped", projeto_frases_trocadas, "frase A", "estão trocados"),
        ("student_exception", projeto_d_model_fixo, "levantou"),
        ("wrong_values", projeto_diferenca_com_sinal, "por cabeça"),
        ("criterion_failed", projeto_valida_pelo_split, "mesmo número de tokens não levantam", "não frase.split()"),
        ("criterion_failed", projeto_valida_pelos_caracteres, "mesmo número de tokens não levantam",
         "não o número de caracteres"),
    ],
}

test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)
