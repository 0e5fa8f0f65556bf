"""SelfAttention e MultiHeadAttention (Aula 2), inclusive a concordância com o PyTorch."""

import numpy as np
import pytest

import atencao
from atencao import MultiHeadAttention, SelfAttention
from atencao.multihead import merge_heads, split_heads


def naive_mha(mha, X, mask=None):
    """Referência com laço explícito sobre as cabeças (o que a versão vetorizada evita)."""
    outs, weights = [], []
    for h in range(mha.n_heads):
        cols = slice(h * mha.d_k, (h + 1) * mha.d_k)
        out, w = atencao.scaled_dot_product_attention(X @ mha.W_q[:, cols], X @ mha.W_k[:, cols],
                                                      X @ mha.W_v[:, cols], mask=mask)
        outs.append(out)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ mha.W_o, np.stack(weights, axis=-3)


def test_self_attention_reproduz_a_aula_e_repr_deterministico():
    attn = SelfAttention(8, 4, 4, seed=42)
    assert repr(attn) == "SelfAttention(d_model=8, d_k=4, d_v=4, seed=42)"
    rng = np.random.default_rng(42)
    scale = np.sqrt(2.0 / (8 + 4))
    np.testing.assert_array_equal(attn.W_q, rng.normal(0, scale, (8, 4)))  # mesma ordem de sorteio da aula
    X = np.random.default_rng(42).normal(0, 1, (6, 8))
    out, W = attn(X)
    ref_out, ref_W = atencao.scaled_dot_product_attention(X @ attn.W_q, X @ attn.W_k, X @ attn.W_v)
    np.testing.assert_allclose(W, ref_W)
    np.testing.assert_allclose(out, ref_out)
    assert out.shape == (6, 4) and W.shape == (6, 6)
    np.testing.assert_array_equal(SelfAttention(8, 4, seed=42).W_v, attn.W_v)


def test_self_attention_entradas_ruins():
    with pytest.raises(ValueError, match=r"d_model=8.*\(6, 5\)"):
        SelfAttention(8, 4)(np.ones((6, 5)))
    with pytest.raises(ValueError, match="`d_k`"):
        SelfAttention(8, 0)
    with pytest.raises(TypeError, match="`d_model`"):
        SelfAttention(8.0, 4)


def test_split_merge_sao_inversos():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    h = split_heads(x, 4)
    assert h.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(h[:, 1], x[..., 2:4])
    np.testing.assert_array_equal(merge_heads(h), x)


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
def test_multi_cabeca_igual_ao_laco_por_cabeca(batch):
    mha = MultiHeadAttention(12, 3, seed=1)
    X = np.random.default_rng(2).normal(size=batch + (5, 12))
    out, W = mha(X, mask=atencao.causal_mask(5))
    ref_out, ref_W = naive_mha(mha, X, mask=atencao.causal_mask(5))
    assert out.shape == batch + (5, 12) and W.shape == batch + (3, 5, 5)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    np.testing.assert_allclose(W, ref_W, atol=1e-12)
    _, W_avg = mha(X, average_weights=True)
    np.testing.assert_allclose(W_avg, mha(X)[1].mean(axis=-3))


def test_escala_por_cabeca_usa_d_k_e_nao_d_model():
    mha = MultiHeadAttention(16, 4, seed=3)
    X = np.random.default_rng(4).normal(size=(6, 16))
    _, W = mha(X)
    Q = split_heads(X @ mha.W_q, 4)
    K = split_heads(X @ mha.W_k, 4)
    scores = Q @ np.swapaxes(K, -1, -2)
    np.testing.assert_allclose(W, atencao.softmax(scores / np.sqrt(4)), atol=1e-12)
    assert not np.allclose(W, atencao.softmax(scores / np.sqrt(16)), atol=1e-3)


@pytest.mark.parametrize("scale", [1.0, 0.2])
def test_scale_das_camadas_multiplica_as_pontuacoes(scale):
    X = np.random.default_rng(5).normal(size=(6, 16))
    mha = MultiHeadAttention(16, 4, seed=3)
    Q, K = split_heads(X @ mha.W_q, 4), split_heads(X @ mha.W_k, 4)
    _, W = mha(X, scale=scale)
    np.testing.assert_allclose(W, atencao.softmax(scale * (Q @ np.swapaxes(K, -1, -2))), atol=1e-12)
    sa = SelfAttention(16, 8, seed=3)
    _, W = sa(X, scale=scale)
    np.testing.assert_allclose(W, atencao.softmax(scale * ((X @ sa.W_q) @ (X @ sa.W_k).T)), atol=1e-12)


@pytest.mark.parametrize("layer", [MultiHeadAttention(8, 2), SelfAttention(8, 4)], ids=["multi", "uma"])
@pytest.mark.parametrize("bad, exc, msg", [(False, TypeError, "scale=1.0 para não escalar"),
                                           (0.0, ValueError, "`scale`"), (-2, ValueError, "`scale`")])
def test_scale_ruim_nas_camadas(layer, bad, exc, msg):
    with pytest.raises(exc, match=msg):
        layer(np.ones((3, 8)), scale=bad)


def test_cross_attention_e_dtypes():
    mha = MultiHeadAttention(8, 2, bias=True, dtype=np.float32)
    q = np.ones((3, 8), dtype=np.float32)
    kv = np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32)
    out, W = mha(q, kv)
    assert out.shape == (3, 8) and W.shape == (2, 3, 5)
    assert out.dtype == np.float32 and W.dtype == np.float32
    assert MultiHeadAttention(8, 2)(q)[0].dtype == np.float64
    assert "bias=True" in repr(mha) and "0x" not in repr(mha)


@pytest.mark.parametrize("kwargs, call, exc, msg", [
    (dict(d_model=10, n_heads=3), None, ValueError, "divisível por `n_heads`=3"),
    (dict(d_model=8, n_heads=2), lambda m: m(np.ones((4, 6))), ValueError, r"d_model=8.*\(4, 6\)"),
    (dict(d_model=8, n_heads=2), lambda m: m(np.ones((4, 8)), np.ones((5, 8)), np.ones((6, 8))), ValueError,
     "mesmo número de tokens"),
    (dict(d_model=8, n_heads=2), lambda m: m(np.ones((4, 8)), mask=np.ones((3, 3), bool)), ValueError, "`mask`"),
    (dict(d_model=8, n_heads=2), lambda m: m(np.full((4, 8), np.nan)), ValueError, "NaN"),
])
def test_multi_cabeca_entradas_ruins(kwargs, call, exc, msg):
    with pytest.raises(exc, match=msg):
        m = MultiHeadAttention(**kwargs)
        call(m)


def test_entradas_enormes_dao_erro_claro_e_nao_nan():
    """Pontuações que estouram o float32 viram a mensagem em português, não NaN com um aviso do NumPy."""
    mha = MultiHeadAttention(8, 2, seed=0, dtype=np.float32)
    X = np.full((3, 8), 1e20, dtype=np.float32)
    with pytest.raises(ValueError, match="estouraram o limite do tipo float32"):
        mha(X)


def test_split_heads_e_merge_heads_com_erros_em_portugues():
    X = np.ones((3, 8))
    assert split_heads(X, 4).shape == (4, 3, 2) and merge_heads(split_heads(X, 4)).shape == (3, 8)
    with pytest.raises(ValueError, match="`n_heads`=3 precisa dividir d_model=8"):
        split_heads(X, 3)
    with pytest.raises(TypeError, match="`n_heads` precisa ser um inteiro"):
        split_heads(X, 2.0)
    with pytest.raises(ValueError, match=r"forma \(\.\.\., n, d_model\)"):
        split_heads(np.ones(8), 2)
    with pytest.raises(ValueError, match=r"forma \(\.\.\., n_heads, n, d_k\)"):
        merge_heads(np.ones((3, 8)))
