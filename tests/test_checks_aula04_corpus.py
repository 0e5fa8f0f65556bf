"""Corpus de respostas da Aula 4 (como um aluno escreveria, a partir dos enunciados): as válidas passam, as erradas
não passam e recebem a dica do seu engano, e a verificação nunca quebra com um erro dela mesma ("o seu código
levantou" só quando o erro é do aluno). ``VALIDAS`` e ``ERRADAS`` entram na contagem de ``test_checks_corpus``
(pelo menos 3 válidas e 8 erradas por verificação)."""

import corpus
import numpy as np
import pytest

import atencao
from atencao.checks import aula04
from atencao.multihead import MultiHeadAttention
from atencao.transformer import TransformerDecoderBlock

# ---------------------------------------------------------------- exercício 1: a codificação senoidal


def pe_certo(n, d_model):
    pos = np.arange(n)[:, None]
    ang = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang[:, : d_model // 2])
    return pe


def pe_certo_lacos(n, d_model):
    pe = [[0.0] * d_model for _ in range(n)]
    for pos in range(n):
        for i in range(0, d_model, 2):
            ang = pos / (10000 ** (i / d_model))
            pe[pos][i] = np.sin(ang)
            if i + 1 < d_model:
                pe[pos][i + 1] = np.cos(ang)
    return pe  # uma lista de listas


def pe_certo_exp_log(n, d_model):  # como no Annotated Transformer, com o cuidado do d_model ímpar
    pos = np.arange(n, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))
    pe = np.zeros((n, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)[:, : d_model // 2]
    return pe


def pe_certo_intercalado(n, d_model):
    ang = np.arange(n)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pares = np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(n, -1)  # sen, cos, sen, cos...
    return pares[:, :d_model]


def pe_seno_cosseno_trocados(n, d_model):
    ang = np.arange(n)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.cos(ang)
    pe[:, 1::2] = np.sin(ang[:, : d_model // 2])
    return pe


def pe_em_metades(n, d_model):
    ang = np.arange(n)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(ang), np.cos(ang)], axis=1)[:, :d_model]


def pe_expoente_por_coluna(n, d_model):
    ang = np.arange(n)[:, None] / 10000 ** (np.arange(d_model) / d_model)
    pe = np.sin(ang)
    pe[:, 1::2] = np.cos(ang[:, 1::2])
    return pe


def pe_expoente_i(n, d_model):
    i = np.arange(0, d_model, 2) // 2
    ang = np.arange(n)[:, None] / 10000 ** (i / d_model)
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang[:, : d_model // 2])
    return pe


def pe_sem_dividir_por_d(n, d_model):
    ang = np.arange(n)[:, None] / 10000.0 ** np.arange(0, d_model, 2)
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang[:, : d_model // 2])
    return pe


def pe_posicoes_de_1(n, d_model):
    return pe_certo(n + 1, d_model)[1:]


def pe_transposta(n, d_model):
    return pe_certo(n, d_model).T


def pe_quebra_com_d_impar(n, d_model):  # o Annotated Transformer sem o cuidado do ímpar
    pos = np.arange(n)[:, None]
    div = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)
    return pe


def pe_calcula_com_d_mais_1(n, d_model):
    d = d_model + d_model % 2
    return pe_certo(n, d)[:, :d_model]


def pe_multiplica(n, d_model):
    ang = np.arange(n)[:, None] * 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang[:, : d_model // 2])
    return pe


def pe_cheia_de_nan(n, d_model):  # o esboço que não foi preenchido
    return np.full((n, d_model), np.nan)


def pe_sem_return(n, d_model):
    pe_certo(n, d_model)


def pe_usa_a_da_biblioteca(n, d_model):
    return atencao.positional_encoding(n, d_model)


# ---------------------------------------------------------------- exercício 2: a LayerNorm


def ln_certo(x, weight, bias, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * weight + bias


def ln_certo_np_var(x, weight, bias, eps=1e-5):
    return weight * (x - np.mean(x, -1, keepdims=True)) / np.sqrt(np.var(x, -1, keepdims=True) + eps) + bias


def ln_certo_linha_a_linha(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    planas = x.reshape(-1, x.shape[-1])
    out = np.empty_like(planas)
    for k, linha in enumerate(planas):
        out[k] = (linha - linha.mean()) / np.sqrt(linha.var() + eps) * weight + bias
    return out.reshape(x.shape)


def ln_certo_std(x, weight, bias, eps=1e-5):
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return bias + weight * ((x - x.mean(axis=-1, keepdims=True)) / std)


def ln_eixo_0(x, weight, bias, eps=1e-5):
    m = x.mean(axis=0, keepdims=True)
    return (x - m) / np.sqrt(x.var(axis=0, keepdims=True) + eps) * weight + bias


def ln_array_inteiro(x, weight, bias, eps=1e-5):
    return (x - x.mean()) / np.sqrt(x.var() + eps) * weight + bias


def ln_eps_fora_da_raiz(x, weight, bias, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / (x.std(axis=-1, keepdims=True) + eps) * weight + bias


def ln_ddof_1(x, weight, bias, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps) * weight + bias


def ln_eps_fixo(x, weight, bias, eps=1e-5):
    return ln_certo(x, weight, bias, 1e-5)


def ln_sem_eps(x, weight, bias, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / x.std(axis=-1, keepdims=True) * weight + bias


def ln_divide_pela_variancia(x, weight, bias, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / (x.var(axis=-1, keepdims=True) + eps) * weight + bias


def ln_sem_centrar(x, weight, bias, eps=1e-5):
    return x / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * weight + bias


def ln_sem_ganho_e_vies(x, weight, bias, eps=1e-5):
    return ln_certo(x, 1.0, 0.0, eps)


def ln_ganho_e_vies_trocados(x, weight, bias, eps=1e-5):
    return ln_certo(x, bias, weight, eps)


def ln_sem_keepdims(x, weight, bias, eps=1e-5):  # quebra: (4,) não se alinha com (4, 6)
    return (x - x.mean(axis=-1)) / np.sqrt(x.var(axis=-1) + eps) * weight + bias


def ln_usa_a_da_biblioteca(x, weight, bias, eps=1e-5):
    return atencao.LayerNorm.from_weights(weight, bias, eps=eps)(x)


def ln_usa_a_do_bert(x, weight, bias, eps=1e-5):
    """Uma LayerNorm pronta com outro nome, a do modelo da Aula 3 (passava com 2 de 2)."""
    from atencao import bert

    return bert._layer_norm(x, weight, bias, eps)


# ---------------------------------------------------------------- exercício 3: o bloco codificador


def bloco_certo(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    if norm_first:
        a, w = attn(norm1(x), mask=mask)
        x = x + a
        return x + ffn(norm2(x)), w
    a, w = attn(x, mask=mask)
    x = norm1(x + a)
    return norm2(x + ffn(x)), w


def bloco_mascara_posicional(x, attn, ffn, norm1, norm2, norm_first, mask=None):  # attn(h, mask): vira key
    if norm_first:
        a, w = attn(norm1(x), mask)
        x = x + a
        return x + ffn(norm2(x)), w
    a, w = attn(x, mask)
    x = norm1(x + a)
    return norm2(x + ffn(x)), w


def bloco_certo_forward(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    entrada = norm1.forward(x) if norm_first else x
    saida_attn, pesos = attn.forward(entrada, entrada, entrada, mask=mask)
    h = x + saida_attn if norm_first else norm1.forward(x + saida_attn)
    if norm_first:
        return h + ffn.forward(norm2.forward(h)), pesos
    return norm2.forward(h + ffn.forward(h)), pesos


def bloco_certo_subcamada(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    pesos = []

    def atencao_(h):
        out, w = attn(h, mask=mask)
        pesos.append(w)
        return out

    def subcamada(x, f, norm):
        return x + f(norm(x)) if norm_first else norm(x + f(x))

    x = subcamada(x, atencao_, norm1)
    x = subcamada(x, ffn, norm2)
    return [x, pesos[0]]


def bloco_sempre_pos(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    return bloco_certo(x, attn, ffn, norm1, norm2, False, mask)


def bloco_sempre_pre(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    return bloco_certo(x, attn, ffn, norm1, norm2, True, mask)


def bloco_ln_antes_do_residuo(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    if norm_first:
        return bloco_certo(x, attn, ffn, norm1, norm2, True, mask)
    a, w = attn(x, mask=mask)
    x = x + norm1(a)
    return x + norm2(ffn(x)), w


def bloco_pre_ln_depois(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    a, w = attn(x, mask=mask)
    if not norm_first:
        x = norm1(x + a)
        return norm2(x + ffn(x)), w
    x = x + norm1(a)
    return x + norm2(ffn(x)), w


def bloco_residuo_normalizado(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    if not norm_first:
        return bloco_certo(x, attn, ffn, norm1, norm2, False, mask)
    h = norm1(x)
    a, w = attn(h, mask=mask)
    x = h + a
    h = norm2(x)
    return h + ffn(h), w


def bloco_sem_residuo(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    a, w = attn(norm1(x) if norm_first else x, mask=mask)
    if norm_first:
        return ffn(norm2(a)), w
    x = norm1(a)
    return norm2(ffn(x)), w


def bloco_normas_trocadas(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    return bloco_certo(x, attn, ffn, norm2, norm1, norm_first, mask)


def bloco_ffn_na_entrada(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    if norm_first:
        return bloco_certo(x, attn, ffn, norm1, norm2, True, mask)
    a, w = attn(x, mask=mask)
    h = norm1(x + a)
    return norm2(h + ffn(x)), w


def bloco_sem_mascara(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    return bloco_certo(x, attn, ffn, norm1, norm2, norm_first, None)


def bloco_sem_desempacotar(x, attn, ffn, norm1, norm2, norm_first, mask=None):  # attn devolve (saida, pesos)
    a = attn(norm1(x) if norm_first else x, mask=mask)
    if norm_first:
        x = x + a
        return x + ffn(norm2(x)), a
    x = norm1(x + a)
    return norm2(x + ffn(x)), a


def bloco_so_a_saida(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    return bloco_certo(x, attn, ffn, norm1, norm2, norm_first, mask)[0]


def bloco_pesos_medios(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    out, w = bloco_certo(x, attn, ffn, norm1, norm2, norm_first, mask)
    return out, w.mean(axis=-3)


def bloco_usa_o_da_biblioteca(x, attn, ffn, norm1, norm2, norm_first, mask=None):
    bloco = atencao.TransformerEncoderBlock.__new__(atencao.TransformerEncoderBlock)
    bloco.self_attn, bloco.ffn, bloco.norm1, bloco.norm2, bloco.norm_first = attn, ffn, norm1, norm2, norm_first
    return bloco(x, mask=mask)


# ---------------------------------------------------------------- exercício 4: a atenção cruzada


def cruzada_certa(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    return w @ V, w


def cruzada_certa_einsum(x, memory, W_q, W_k, W_v):
    Q = np.einsum("...qd,dk->...qk", x, W_q)
    K = np.einsum("...nd,dk->...nk", memory, W_k)
    s = np.einsum("...qk,...nk->...qn", Q, K) / np.sqrt(W_k.shape[1])
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    return np.einsum("...qn,...nv->...qv", w, memory @ W_v), w


def cruzada_certa_escala_em_q(x, memory, W_q, W_k, W_v):
    d_k = W_q.shape[-1]
    Q = (x @ W_q) / d_k ** 0.5
    K = memory @ W_k
    w = atencao.softmax(np.matmul(Q, np.moveaxis(K, -1, -2)), axis=-1)
    return (w @ (memory @ W_v)).tolist(), w.tolist()


def cruzada_chaves_do_decodificador(x, memory, W_q, W_k, W_v):
    return cruzada_certa(x, x, W_q, W_k, W_v)


def cruzada_papeis_trocados(x, memory, W_q, W_k, W_v):
    Q, K, V = memory @ W_q, x @ W_k, x @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    return w @ V, w


def cruzada_valores_do_decodificador(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, x @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    return w @ V, w


def cruzada_sem_escala(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2))
    return w @ V, w


def cruzada_escala_n_k(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2]))
    return w @ V, w


def cruzada_escala_d_model(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(x.shape[-1]))
    return w @ V, w


def cruzada_softmax_nas_colunas(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]), axis=-2)
    return w @ V, w


def cruzada_com_mascara_causal(x, memory, W_q, W_k, W_v):
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    w = atencao.softmax(s)
    return w @ V, w


def cruzada_pesos_transpostos(x, memory, W_q, W_k, W_v):
    out, w = cruzada_certa(x, memory, W_q, W_k, W_v)
    return out, np.swapaxes(w, -1, -2)


def cruzada_scores_K_Q(x, memory, W_q, W_k, W_v):  # K Qᵀ com a softmax nas colunas: a mesma conta, transposta
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(K.shape[-1]), axis=-2)  # (..., n_k, n_q)
    return np.swapaxes(w, -1, -2) @ V, w


def cruzada_transposta_2d(x, memory, W_q, W_k, W_v):  # .T inverte também os eixos de lote
    Q, K, V = x @ W_q, memory @ W_k, memory @ W_v
    w = atencao.softmax(Q @ K.T / np.sqrt(K.shape[-1]))
    return w @ V, w


def cruzada_usa_a_pronta(x, memory, W_q, W_k, W_v):
    return atencao.scaled_dot_product_attention(x @ W_q, memory @ W_k, memory @ W_v)


def cruzada_lavada_pela_softmax(x, memory, W_q, W_k, W_v):
    """A atenção pronta chamada de dentro da softmax (permitida neste exercício): veja _lavar no corpus da Aula 5."""
    from test_checks_aula05_corpus import _lavar

    return _lavar(atencao.scaled_dot_product_attention, x @ W_q, memory @ W_k, memory @ W_v)


def cruzada_pelo_bloco_decodificador(x, memory, W_q, W_k, W_v):
    """A MultiHeadAttention (proibida) rodada por dentro de um TransformerDecoderBlock (permitido), com as outras
    peças trocadas por nada: a saída do bloco menos a entrada é a atenção cruzada (passava com 2 de 2)."""
    class SemAtencao:
        d_model = x.shape[-1]

        def __call__(self, h, mask=None, average_weights=False):
            return np.zeros_like(h), None

    d, d_k, d_v = x.shape[-1], W_q.shape[1], W_v.shape[1]

    def quadrada(W, f=1.0):
        M = np.zeros((d, d))
        M[:, :W.shape[1]] = W * f
        return M

    mha = MultiHeadAttention.__new__(MultiHeadAttention)
    mha.d_model, mha.n_heads, mha.d_k, mha.seed = d, 1, d, None
    mha.W_q = quadrada(W_q, np.sqrt(d / d_k))
    mha.W_k, mha.W_v, mha.W_o = quadrada(W_k), quadrada(W_v), np.eye(d)
    mha.b_q = mha.b_k = mha.b_v = mha.b_o = None
    bloco = TransformerDecoderBlock.__new__(TransformerDecoderBlock)
    bloco.norm_first = True
    bloco.norm1 = bloco.norm2 = bloco.norm3 = lambda h: h
    bloco.self_attn, bloco.cross_attn, bloco.ffn = SemAtencao(), mha, (lambda h: np.zeros_like(h))
    y, (_, pesos) = bloco(x, memory)
    return (y - x)[..., :d_v], pesos[..., 0, :, :]


# ---------------------------------------------------------------- o corpus

VALIDAS = {
    aula04.exercicio_1: [pe_certo, pe_certo_lacos, pe_certo_exp_log, pe_certo_intercalado],
    aula04.exercicio_2: [ln_certo, ln_certo_np_var, ln_certo_linha_a_linha, ln_certo_std],
    aula04.exercicio_3: [bloco_certo, bloco_certo_forward, bloco_certo_subcamada],
    aula04.exercicio_4: [cruzada_certa, cruzada_certa_einsum, cruzada_certa_escala_em_q],
}

# (verificação, resposta errada, trecho da dica): a dica nomeia o engano
DICAS = [
    (aula04.exercicio_1, "sin_cos_swapped", pe_seno_cosseno_trocados, "seno e cosseno trocados"),
    (aula04.exercicio_1, "sin_cos_halves", pe_em_metades, "estão em metades"),
    (aula04.exercicio_1, "exponent_column_index", pe_expoente_por_coluna, "usa o índice de cada coluna"),
    (aula04.exercicio_1, "exponent_pair_index", pe_expoente_i, "usa i/d_model"),
    (aula04.exercicio_1, "exponent_without_d_model", pe_sem_dividir_por_d, "faltou dividir o expoente por d_model"),
    (aula04.exercicio_1, "positions_from_one", pe_posicoes_de_1, "começam em 0"),
    (aula04.exercicio_1, "pe_transposed", pe_transposta, "saiu transposta"),
    (aula04.exercicio_1, "odd_d_model_shape_error", pe_quebra_com_d_impar, "colunas de seno e só"),
    (aula04.exercicio_1, "odd_d_model_padded", pe_calcula_com_d_mais_1, "não calcule com d_model + 1"),
    (aula04.exercicio_1, "frequency_multiplied", pe_multiplica, "uma divisão"),
    (aula04.exercicio_1, "no_return", pe_sem_return, "faltou um `return`"),
    (aula04.exercicio_1, "pe_not_finite", pe_cheia_de_nan, "apareceram NaN/inf na matriz"),
    (aula04.exercicio_1, "forbidden_function", pe_usa_a_da_biblioteca, "a sua função chamou"),
    (aula04.exercicio_2, "stats_over_axis0", ln_eixo_0, "no ÚLTIMO eixo"),
    (aula04.exercicio_2, "stats_over_everything", ln_array_inteiro, "não do array inteiro"),
    (aula04.exercicio_2, "eps_outside_sqrt", ln_eps_fora_da_raiz, "o eps fica DENTRO da raiz"),
    (aula04.exercicio_2, "var_ddof1", ln_ddof_1, "não por d_model - 1"),
    (aula04.exercicio_2, "eps_ignored", ln_eps_fixo, "use o eps recebido"),
    (aula04.exercicio_2, "ln_not_finite", ln_sem_eps, "só o eps, somado DENTRO da raiz"),
    (aula04.exercicio_2, "divided_by_variance", ln_divide_pela_variancia, "não pela variância"),
    (aula04.exercicio_2, "not_centered", ln_sem_centrar, "faltou subtrair a média"),
    (aula04.exercicio_2, "missing_weight_bias", ln_sem_ganho_e_vies, "faltou aplicar o ganho e o viés"),
    (aula04.exercicio_2, "weight_bias_swapped", ln_ganho_e_vies_trocados, "weight e bias trocados"),
    (aula04.exercicio_2, "forbidden_function", ln_usa_a_da_biblioteca, "a sua função chamou"),
    (aula04.exercicio_2, "forbidden_function", ln_usa_a_do_bert, "a sua função chamou atencao._layer_norm"),
    (aula04.exercicio_3, "criterion_failed", bloco_mascara_posicional, "Passe a máscara pelo nome: attn(h, mask=mask)"),
    (aula04.exercicio_3, "norm_order_swapped", bloco_sempre_pos, "o bloco seguiu a outra ordem"),
    (aula04.exercicio_3, "norm_order_swapped", bloco_sempre_pre, "o bloco seguiu a outra ordem"),
    (aula04.exercicio_3, "post_ln_before_residual", bloco_ln_antes_do_residuo,
     "a normalização vem DEPOIS da soma com o resíduo"),
    (aula04.exercicio_3, "pre_ln_after_sublayer", bloco_pre_ln_depois, "a normalização vem ANTES da subcamada"),
    (aula04.exercicio_3, "pre_ln_normalized_residual", bloco_residuo_normalizado,
     "o resíduo é a entrada SEM normalizar"),
    (aula04.exercicio_3, "missing_residual", bloco_sem_residuo, "faltou a conexão residual"),
    (aula04.exercicio_3, "norms_swapped", bloco_normas_trocadas, "norm1 vai com a atenção"),
    (aula04.exercicio_3, "ffn_on_block_input", bloco_ffn_na_entrada, "a FFN recebe a saída da primeira subcamada"),
    (aula04.exercicio_3, "mask_not_passed", bloco_sem_mascara, "passe a máscara para a atenção"),
    (aula04.exercicio_3, "wrong_return_format", bloco_so_a_saida, "return saida, pesos"),
    (aula04.exercicio_3, "wrong_shape", bloco_pesos_medios, "os pesos da atenção por cabeça"),
    (aula04.exercicio_3, "forbidden_function", bloco_usa_o_da_biblioteca, "a sua função chamou"),
    (aula04.exercicio_3, "criterion_failed", bloco_sem_desempacotar, "attn(...) devolve a tupla (saida, pesos)"),
    (aula04.exercicio_4, "keys_from_decoder", cruzada_chaves_do_decodificador, "as chaves e os valores vêm de memory"),
    (aula04.exercicio_4, "roles_swapped", cruzada_papeis_trocados, "os papéis estão trocados"),
    (aula04.exercicio_4, "criterion_failed", cruzada_valores_do_decodificador,
     "K = memory @ W_k e V = memory @ W_v têm n_k linhas"),
    (aula04.exercicio_4, "no_scale", cruzada_sem_escala, "faltou dividir as pontuações por sqrt(d_k)"),
    (aula04.exercicio_4, "scale_by_n_k", cruzada_escala_n_k, "não sqrt(n_k)"),
    (aula04.exercicio_4, "scale_by_d_model", cruzada_escala_d_model, "não sqrt(d_model)"),
    (aula04.exercicio_4, "softmax_by_column", cruzada_softmax_nas_colunas, "a softmax é em cada LINHA"),
    (aula04.exercicio_4, "causal_mask_in_cross_attention", cruzada_com_mascara_causal, "não tem máscara causal"),
    (aula04.exercicio_4, "weights_transposed", cruzada_pesos_transpostos, "os pesos estão transpostos"),
    (aula04.exercicio_4, "weights_transposed", cruzada_scores_K_Q, "os pesos estão transpostos"),
    (aula04.exercicio_4, "forbidden_function", cruzada_usa_a_pronta, "a sua função chamou"),
    (aula04.exercicio_4, "forbidden_function", cruzada_pelo_bloco_decodificador,
     "(por dentro de outra função da biblioteca)"),
    (aula04.exercicio_4, "forbidden_function", cruzada_lavada_pela_softmax,
     "scaled_dot_product_attention (por dentro de outra função"),
    (aula04.exercicio_4, "criterion_failed", cruzada_transposta_2d, "np.swapaxes(K, -1, -2)"),
]

_id = corpus.nome


@pytest.mark.parametrize("check, fn", [(aula04.exercicio_2, ln_sem_keepdims)], ids=_id)
def test_o_erro_do_aluno_vira_um_x_com_a_linha_dele(check, fn, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    result = check(fn)
    out = capsys.readouterr().out
    assert not result and "levantou" in out and not corpus.falhas_sem_dica(out), out


@pytest.mark.parametrize("check, fn", [(aula04.exercicio_1, pe_em_metades), (aula04.exercicio_3, bloco_sempre_pos)],
                         ids=_id)
def test_na_correcao_a_falha_levanta(check, fn, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check(fn)


def test_exercicio_nao_feito_diz_a_fazer(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

    def ainda_nao(*args, **kwargs):
        raise NotImplementedError

    for check in VALIDAS:
        assert check(ainda_nao).status == "nao_feito"
    assert capsys.readouterr().out.count("⏳") == len(VALIDAS)


def test_a_verificacao_do_bloco_nao_confia_nas_pecas_alteradas(capsys, monkeypatch):
    """Uma resposta que altera os pesos recebidos (para "acertar" a referência) é apontada e não passa."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

    def zera_a_ffn(x, attn, ffn, norm1, norm2, norm_first, mask=None):
        ffn.W_2[...] = 0.0
        return bloco_certo(x, attn, ffn, norm1, norm2, norm_first, mask)

    assert not aula04.exercicio_3(zera_a_ffn)
    assert "não altera as entradas" in capsys.readouterr().out


def test_as_pecas_do_bloco_atravessam_a_ponte_da_correcao():
    """Na correção, a função do aluno roda em outro processo: a atenção, a FFN e as LayerNorm do exercício 3
    vão para lá como dados e são refeitas iguais (a mesma saída)."""
    import json

    from correcao import _aluno, _remoto

    x = np.random.default_rng(0).normal(size=(2, 5, 8))
    for peca in aula04._partes(7, 8, 2, "gelu"):
        refeita = _remoto.decode_value(json.loads(json.dumps(_remoto.encode_value(peca))), objetos=True,
                                 refazer=_aluno._rebuild)
        assert type(refeita) is type(peca)
        a, b = peca(x), refeita(x)
        np.testing.assert_array_equal(a[0] if isinstance(a, tuple) else a, b[0] if isinstance(b, tuple) else b)


# ---------------------------------------------------------------- projeto: o KV cache

def _qkv_novo(attn, x_new):
    from atencao.multihead import split_heads

    return [split_heads(x_new @ W + b, attn.n_heads) for W, b in
            ((attn.W_q, attn.b_q), (attn.W_k, attn.b_k), (attn.W_v, attn.b_v))]  # (n_heads, 1, d_k) cada


def kv_certo(attn, x_new, K_cache, V_cache):
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    K = np.concatenate([K_cache, k], axis=1)  # (n_heads, t + 1, d_k)
    V = np.concatenate([V_cache, v], axis=1)
    w = atencao.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_k))  # (n_heads, 1, t + 1)
    return merge_heads(w @ V) @ attn.W_o + attn.b_o, K, V


def kv_certo_por_cabeca(attn, x_new, K_cache, V_cache):
    d_k = attn.d_k
    k = (x_new @ attn.W_k + attn.b_k).reshape(attn.n_heads, 1, d_k)  # uma linha só: reshape basta
    v = (x_new @ attn.W_v + attn.b_v).reshape(attn.n_heads, 1, d_k)
    q = (x_new @ attn.W_q + attn.b_q).reshape(attn.n_heads, d_k)
    K, V = np.concatenate((K_cache, k), 1), np.concatenate((V_cache, v), 1)
    cabecas = []
    for h in range(attn.n_heads):
        s = K[h] @ q[h] / d_k ** 0.5
        e = np.exp(s - s.max())
        cabecas.append((e / e.sum()) @ V[h])
    return (np.concatenate(cabecas) @ attn.W_o + attn.b_o)[None, :], K, V


def kv_certo_einsum(attn, x_new, K_cache, V_cache):
    q, k, v = _qkv_novo(attn, x_new)
    K, V = np.append(K_cache, k, axis=1), np.append(V_cache, v, axis=1)
    s = np.einsum("hqd,hkd->hqk", q, K) / np.sqrt(K.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    heads = np.einsum("hqk,hkd->qhd", w, V).reshape(1, -1)
    return [heads @ attn.W_o + attn.b_o, K, V]


def kv_esquece_o_cache(attn, x_new, K_cache, V_cache):
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    w = atencao.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(attn.d_k))
    return merge_heads(w @ v) @ attn.W_o + attn.b_o, np.concatenate([K_cache, k], 1), np.concatenate([V_cache, v], 1)


def kv_concatena_depois(attn, x_new, K_cache, V_cache):
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    if K_cache.shape[1] == 0:
        return kv_certo(attn, x_new, K_cache, V_cache)
    w = atencao.softmax(q @ np.swapaxes(K_cache, -1, -2) / np.sqrt(attn.d_k))
    out = merge_heads(w @ V_cache) @ attn.W_o + attn.b_o
    return out, np.concatenate([K_cache, k], 1), np.concatenate([V_cache, v], 1)


def kv_escala_d_model(attn, x_new, K_cache, V_cache):
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    K, V = np.concatenate([K_cache, k], 1), np.concatenate([V_cache, v], 1)
    w = atencao.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_model))
    return merge_heads(w @ V) @ attn.W_o + attn.b_o, K, V


def kv_sem_W_o(attn, x_new, K_cache, V_cache):
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    K, V = np.concatenate([K_cache, k], 1), np.concatenate([V_cache, v], 1)
    return merge_heads(atencao.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_k)) @ V), K, V


def kv_nao_atualiza(attn, x_new, K_cache, V_cache):
    out, _, _ = kv_certo(attn, x_new, K_cache, V_cache)
    return out, K_cache, V_cache


def kv_novo_no_comeco(attn, x_new, K_cache, V_cache):
    out, K, V = kv_certo(attn, x_new, K_cache, V_cache)
    return out, np.concatenate([K[:, -1:], K[:, :-1]], 1), np.concatenate([V[:, -1:], V[:, :-1]], 1)


def kv_sem_vies(attn, x_new, K_cache, V_cache):
    from atencao.multihead import merge_heads, split_heads

    q, k, v = (split_heads(x_new @ W, attn.n_heads) for W in (attn.W_q, attn.W_k, attn.W_v))
    K, V = np.concatenate([K_cache, k], 1), np.concatenate([V_cache, v], 1)
    w = atencao.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_k))
    return merge_heads(w @ V) @ attn.W_o + attn.b_o, K, V


def kv_so_a_saida(attn, x_new, K_cache, V_cache):
    return kv_certo(attn, x_new, K_cache, V_cache)[0]


def kv_usa_a_camada(attn, x_new, K_cache, V_cache):
    out, K, V = kv_certo(attn, x_new, K_cache, V_cache)
    return attn(x_new)[0], K, V


def kv_certo_sdpa_por_cabeca(attn, x_new, K_cache, V_cache):  # válida: o enunciado proíbe só a attn(...)
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    K, V = np.concatenate([K_cache, k], axis=1), np.concatenate([V_cache, v], axis=1)
    cabecas = [atencao.scaled_dot_product_attention(q[h], K[h], V[h])[0] for h in range(attn.n_heads)]
    return merge_heads(np.stack(cabecas)) @ attn.W_o + attn.b_o, K, V


def kv_certo_sdpa_de_uma_vez(attn, x_new, K_cache, V_cache):  # válida: a atenção das cabeças numa chamada só
    from atencao.multihead import merge_heads

    q, k, v = _qkv_novo(attn, x_new)
    K, V = np.concatenate([K_cache, k], axis=1), np.concatenate([V_cache, v], axis=1)
    saida, _ = atencao.scaled_dot_product_attention(q, K, V)
    return merge_heads(saida) @ attn.W_o + attn.b_o, K, V


def _kv_com(attn, x_new, K_cache, V_cache, escala=None, vieses=True, b_o=True, mascara=None, eixo=-1):
    from atencao.multihead import merge_heads, split_heads

    zero = np.zeros(attn.d_model)
    q, k, v = (split_heads(x_new @ W + (b if vieses else zero), attn.n_heads)
               for W, b in ((attn.W_q, attn.b_q), (attn.W_k, attn.b_k), (attn.W_v, attn.b_v)))
    K, V = np.concatenate([K_cache, k], axis=1), np.concatenate([V_cache, v], axis=1)
    s = q @ np.swapaxes(K, -1, -2) / (np.sqrt(attn.d_k) if escala is None else escala)
    if mascara is not None:
        s = np.where(mascara, s, -np.inf)
    w = atencao.softmax(s, axis=eixo)
    return merge_heads(w @ V) @ attn.W_o + (attn.b_o if b_o else 0.0), K, V


def kv_sem_escala(attn, x_new, K_cache, V_cache):  # esquece o 1/sqrt(d_k)
    return _kv_com(attn, x_new, K_cache, V_cache, escala=1.0)


def kv_escala_sem_raiz(attn, x_new, K_cache, V_cache):
    return _kv_com(attn, x_new, K_cache, V_cache, escala=attn.d_k)


def kv_sem_vieses_nem_b_o(attn, x_new, K_cache, V_cache):
    return _kv_com(attn, x_new, K_cache, V_cache, vieses=False, b_o=False)


def kv_sem_b_o(attn, x_new, K_cache, V_cache):
    return _kv_com(attn, x_new, K_cache, V_cache, b_o=False)


def kv_sem_b_v(attn, x_new, K_cache, V_cache):  # esquece só o viés dos valores
    from atencao.multihead import merge_heads

    q, k, _ = _qkv_novo(attn, x_new)
    v = (x_new @ attn.W_v).reshape(attn.n_heads, 1, attn.d_k)
    K, V = np.concatenate([K_cache, k], axis=1), np.concatenate([V_cache, v], axis=1)
    w = atencao.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_k))
    return merge_heads(w @ V) @ attn.W_o + attn.b_o, K, V


def kv_sem_b_q_nem_b_k(attn, x_new, K_cache, V_cache):  # o viés só nos valores
    from atencao.multihead import merge_heads, split_heads

    q, k = split_heads(x_new @ attn.W_q, attn.n_heads), split_heads(x_new @ attn.W_k, attn.n_heads)
    v = split_heads(x_new @ attn.W_v + attn.b_v, attn.n_heads)
    K, V = np.concatenate([K_cache, k], axis=1), np.concatenate([V_cache, v], axis=1)
    w = atencao.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_k))
    return merge_heads(w @ V) @ attn.W_o + attn.b_o, K, V


def kv_softmax_nas_cabecas(attn, x_new, K_cache, V_cache):
    return _kv_com(attn, x_new, K_cache, V_cache, eixo=0)


def kv_mascara_causal_1(attn, x_new, K_cache, V_cache):  # causal_mask(1, t + 1): só a coluna 0 liberada
    return _kv_com(attn, x_new, K_cache, V_cache, mascara=atencao.causal_mask(1, K_cache.shape[1] + 1))


VALIDAS[aula04.projeto] = [kv_certo, kv_certo_por_cabeca, kv_certo_einsum, kv_certo_sdpa_por_cabeca,
                           kv_certo_sdpa_de_uma_vez]
DICAS_PROJETO = [
    (aula04.projeto, "new_token_only", kv_esquece_o_cache, "a consulta nova olha para TODAS as chaves"),
    (aula04.projeto, "new_token_missing_from_cache", kv_concatena_depois,
     "concatene a chave e o valor dele ao cache ANTES"),
    (aula04.projeto, "scale_by_d_model", kv_escala_d_model, "não por sqrt(d_model)"),
    (aula04.projeto, "missing_output_projection", kv_sem_W_o, "faltou a projeção de saída"),
    (aula04.projeto, "wrong_shape", kv_nao_atualiza, "devolva o cache com o token novo"),
    (aula04.projeto, "new_token_at_cache_start", kv_novo_no_comeco, "o token novo entra no FIM do cache"),
    (aula04.projeto, "missing_b_v", kv_sem_vies, "Confira também b_q e b_k"),
    (aula04.projeto, "no_scale", kv_sem_escala, "faltou a escala: divida os scores de cada cabeça por sqrt(d_k)"),
    (aula04.projeto, "scale_by_d_k", kv_escala_sem_raiz, "a escala é a RAIZ de d_k"),
    (aula04.projeto, "missing_biases", kv_sem_vieses_nem_b_o, "faltaram os vieses: q = x_new @ W_q + b_q"),
    (aula04.projeto, "missing_b_o", kv_sem_b_o, "faltou somar b_o no fim"),
    (aula04.projeto, "missing_b_v", kv_sem_b_v, "faltou somar b_v: v = x_new @ W_v + b_v"),
    (aula04.projeto, "cache_without_bias", kv_sem_b_q_nem_b_k, "a chave do token novo entrou no cache sem o viés"),
    (aula04.projeto, "softmax_over_heads", kv_softmax_nas_cabecas, "não sobre as cabeças (axis=0)"),
    (aula04.projeto, "first_key_only", kv_mascara_causal_1, "causal_mask(1, t + 1) é a 1ª linha de uma máscara causal"),
    (aula04.projeto, "wrong_return_format", kv_so_a_saida, "return saida, K_cache, V_cache"),
    (aula04.projeto, "forbidden_function", kv_usa_a_camada, "a sua função chamou"),
]

# as erradas, cada uma com a dica que nomeia o engano (e a do aluno que quebra com um erro dele)
ERRADAS: dict = {}
for _check, _categoria, _fn, _dica in DICAS + DICAS_PROJETO:
    ERRADAS.setdefault(_check, []).append((_categoria, _fn, _dica))
ERRADAS[aula04.exercicio_2].append(("student_exception", ln_sem_keepdims, "levantou"))

test_validas_passam, test_erradas_falham_e_a_dica_nomeia_o_engano = corpus.testes(VALIDAS, ERRADAS,
                                                                                 trecho_na_dica=True)
