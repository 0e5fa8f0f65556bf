"""softmax, scaled_dot_product_attention e self_attention (Aula 1)."""

import warnings

import numpy as np
import pytest

import atencao
from atencao import scaled_dot_product_attention, self_attention, softmax


def naive_attention(Q, K, V, mask=None):
    """Referência com laços duplos explícitos, sem nada vetorizado."""
    n_q, n_k = Q.shape[0], K.shape[0]
    out = np.zeros((n_q, V.shape[1]))
    W = np.zeros((n_q, n_k))
    for i in range(n_q):
        scores = [float(Q[i] @ K[j]) / np.sqrt(Q.shape[1]) for j in range(n_k)]
        allowed = [True if mask is None else bool(mask[i, j]) for j in range(n_k)]
        exps = [np.exp(s - max(s for s, a in zip(scores, allowed) if a)) if a else 0.0
                for s, a in zip(scores, allowed)] if any(allowed) else [0.0] * n_k
        total = sum(exps)
        for j in range(n_k):
            W[i, j] = exps[j] / total if total else 0.0
            out[i] += W[i, j] * V[j]
    return out, W


def test_softmax_valores_do_enunciado_sem_aviso():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax([1000.0, 1001.0, 1002.0])
    np.testing.assert_allclose(p, [0.09003057, 0.24472847, 0.66524096], atol=1e-8)


def test_softmax_menos_infinito_da_peso_zero_e_linha_toda_bloqueada_da_zeros():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax(np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]]))
    assert p[0, 1] == 0.0 and p[0].sum() == pytest.approx(1.0)
    assert np.array_equal(p[1], np.zeros(3))


def test_softmax_eixo_e_dtype():
    z = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert softmax(z).dtype == np.float32
    np.testing.assert_allclose(softmax(z, axis=0).sum(axis=0), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="axis"):
        softmax(z, axis=2)


@pytest.mark.parametrize("bad, exc, msg", [
    ([1.0, np.nan], ValueError, "NaN"),
    ([1.0, np.inf], ValueError, "infinito"),
    ([], ValueError, "vazio"),
    (["a", "b"], TypeError, "números reais"),
])
def test_softmax_entradas_ruins(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        softmax(bad)


def test_linhas_somam_um_e_concorda_com_laco_duplo():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 4))
    out, W = scaled_dot_product_attention(Q, K, V)
    ref_out, ref_W = naive_attention(Q, K, V)
    np.testing.assert_allclose(W.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(W, ref_W, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    assert out.shape == (5, 4) and W.shape == (5, 7)


def test_lotes_nos_eixos_iniciais_e_broadcast():
    rng = np.random.default_rng(1)
    Q = rng.normal(size=(2, 3, 5, 4))
    K = rng.normal(size=(3, 6, 4))       # broadcast no eixo de lote
    V = rng.normal(size=(6, 2))
    out, W = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 5, 2) and W.shape == (2, 3, 5, 6)
    for b in range(2):
        for h in range(3):
            ref_out, ref_W = naive_attention(Q[b, h], K[h], V)
            np.testing.assert_allclose(W[b, h], ref_W, atol=1e-12)
            np.testing.assert_allclose(out[b, h], ref_out, atol=1e-12)


def test_equivariancia_por_permutacao():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6, 5))
    perm = rng.permutation(6)
    out, W = self_attention(X)
    out_p, W_p = self_attention(X[perm])
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(W_p, W[np.ix_(perm, perm)], atol=1e-12)


def test_exemplo_gato_felino_da_aula():
    tokens, E = atencao.gato_felino()
    _, A = self_attention(E)
    g, f, p, a = range(4)
    assert A[g, f] > A[g, p] and A[f, g] > A[f, a]       # gato e felino se olham
    assert A[p].argmax() == p and A[a].argmax() == a      # pulou e alto olham para si
    # à mão: pontuações da linha de gato = [1, 0.9, 0, 0] / sqrt(4); softmax delas
    e = np.exp([0.5, 0.45, 0.0, 0.0])
    np.testing.assert_allclose(A[g], e / e.sum(), atol=1e-12)
    np.testing.assert_allclose(A[g], [0.3160, 0.3006, 0.1917, 0.1917], atol=1e-4)


def test_mascara_bloqueia_e_linhas_nao_afetadas_ficam_identicas():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    mask = np.ones((4, 5), dtype=bool)
    mask[1, [0, 3]] = False          # linha 1 parcialmente bloqueada
    mask[2, :] = False               # linha 2 toda bloqueada
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, W = scaled_dot_product_attention(Q, K, V, mask=mask)
    full_out, full_W = scaled_dot_product_attention(Q, K, V)
    assert np.array_equal(W[[0, 3]], full_W[[0, 3]]) and np.array_equal(out[[0, 3]], full_out[[0, 3]])
    assert W[1, 0] == 0 and W[1, 3] == 0 and W[1].sum() == pytest.approx(1.0)
    assert np.array_equal(W[2], np.zeros(5)) and np.array_equal(out[2], np.zeros(2))
    assert not np.isnan(out).any()
    ref_out, ref_W = naive_attention(Q, K, V, mask)
    np.testing.assert_allclose(W, ref_W, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


def test_mascara_causal_e_broadcast_de_mascara():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2, 5, 3))
    _, W = self_attention(X, mask=atencao.causal_mask(5))
    assert np.all(np.triu(W, k=1) == 0)
    np.testing.assert_allclose(W.sum(-1), 1.0)
    assert W[:, 0, 0] == pytest.approx(1.0)


def test_scale_1_e_sem_escala():
    Q, K, V = np.array([[3.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.eye(2)
    _, W = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(W[0], softmax([3.0, 0.0]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtype_de_saida_igual_ao_de_entrada(dtype):
    X = np.random.default_rng(5).normal(size=(4, 3)).astype(dtype)
    out, W = self_attention(X)
    assert out.dtype == dtype and W.dtype == dtype


def test_inteiros_viram_float64():
    out, W = self_attention([[1, 0], [0, 1]])
    assert out.dtype == np.float64


@pytest.mark.parametrize("args, exc, msg", [
    ((np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2))), ValueError, r"d_k.*\(3, 4\).*\(3, 5\)"),
    ((np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 2))), ValueError, r"n_k.*\(3, 4\).*\(2, 2\)"),
    ((np.ones(4), np.ones((3, 4)), np.ones((3, 2))), ValueError, r"`Q`.*\(4,\)"),
    ((np.ones((0, 4)), np.ones((3, 4)), np.ones((3, 2))), ValueError, "`Q` está vazio"),
    ((np.ones((3, 4)), np.full((3, 4), np.nan), np.ones((3, 2))), ValueError, "`K` contém NaN"),
    ((np.ones((3, 4)), np.ones((3, 4)), np.full((3, 2), np.inf)), ValueError, "`V` contém infinito"),
    ((np.ones((2, 3, 4)), np.ones((5, 3, 4)), np.ones((5, 3, 2))), ValueError, "lote"),
    (([["a"]], np.ones((3, 4)), np.ones((3, 2))), TypeError, "`Q`"),
])
def test_entradas_ruins_com_mensagem_clara(args, exc, msg):
    with pytest.raises(exc, match=msg):
        scaled_dot_product_attention(*args)


def test_mascara_ruim():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"`mask`.*\(3, 3\).*\(4, 4\)"):
        self_attention(X, mask=np.ones((3, 3), dtype=bool))
    with pytest.raises(TypeError, match="booleana"):
        self_attention(X, mask=np.full((4, 4), 0.5))


def _qkv(seed=6):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))


def test_scale_none_e_1_sobre_raiz_de_d_k():
    Q, K, V = _qkv()
    out, W = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(W, softmax(Q @ K.T / np.sqrt(4)))
    out_explicito, W_explicito = scaled_dot_product_attention(Q, K, V, scale=1 / np.sqrt(4))
    np.testing.assert_allclose(W, W_explicito)
    np.testing.assert_allclose(out, out_explicito)


@pytest.mark.parametrize("scale", [1.0, 0.3, 2, np.float32(0.5)])
def test_scale_multiplica_as_pontuacoes(scale):
    Q, K, V = _qkv()
    out, W = scaled_dot_product_attention(Q, K, V, scale=scale)
    expected = softmax(float(scale) * (Q @ K.T))
    np.testing.assert_allclose(W, expected)
    np.testing.assert_allclose(out, expected @ V)


def test_scale_pequeno_espalha_e_grande_concentra():
    Q, K, V = _qkv()
    _, W_frio = scaled_dot_product_attention(Q, K, V, scale=0.001)
    np.testing.assert_allclose(W_frio, 1 / 5, atol=0.01)  # fator pequeno: quase uniforme
    _, W_quente = scaled_dot_product_attention(Q, K, V, scale=100.0)
    assert W_quente.max(axis=-1).min() > 0.9  # fator grande: quase um-quente


@pytest.mark.parametrize("bad", [True, False, np.True_])
def test_scale_booleano_da_api_antiga_e_recusado(bad):
    Q, K, V = _qkv()
    with pytest.raises(TypeError, match=r"`scale`.*não True/False.*scale=None.*scale=1\.0 para não escalar"):
        scaled_dot_product_attention(Q, K, V, scale=bad)


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1.0, ValueError), (np.inf, ValueError),
                                      (np.nan, ValueError), ("alto", TypeError), ([1.0, 2.0], TypeError)])
def test_scale_precisa_ser_numero_finito_positivo(bad, exc):
    Q, K, V = _qkv()
    with pytest.raises(exc, match="`scale`"):
        scaled_dot_product_attention(Q, K, V, scale=bad)


def test_temperatura_saiu_da_funcao_de_atencao():
    Q, K, V = _qkv()
    with pytest.raises(TypeError, match="temperature"):
        scaled_dot_product_attention(Q, K, V, temperature=0.5)


def test_mais_entradas_ruins_com_mensagem_em_portugues():
    with pytest.raises(TypeError, match="`axis`"):
        softmax([1.0, 2.0], axis="linha")
    with pytest.raises(TypeError, match="`scale`"):
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), scale="nao")
    with pytest.raises(ValueError, match="estouraram"):
        self_attention([[1e200, 0.0], [0.0, 1e200]])
    with pytest.raises(TypeError, match="`seed`"):
        atencao.SelfAttention(8, 4, seed="a")
    with pytest.raises(TypeError, match="`sentence`"):
        atencao.embed(None)
    with pytest.raises(TypeError, match="`sentence`"):
        atencao.embed_hashed(123)
    with pytest.raises(ValueError, match="'gato' precisa ser uma lista de números"):
        atencao.embed("o gato", vectors={"gato": "abc"})
    with pytest.raises(TypeError, match="lista de tokens"):
        atencao.plot_attention(np.full((2, 2), 0.5), None)
    with pytest.raises(ValueError, match="vazia"):
        atencao.padding_mask([])
    with pytest.raises(ValueError, match="≥ 1"):
        atencao.padding_mask([-1])
    tokens, _ = atencao.embed("O Peixe", vectors={"Peixe": [0, 0, 0, 0, 0, 1]})  # chaves em minúsculas também
    assert tokens == ["o", "peixe"]
