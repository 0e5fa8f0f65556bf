"""Máscaras e a convenção True = pode olhar (Aulas 1 e 2)."""

import numpy as np
import pytest

import atencao
from atencao import masks


def test_causal_mask_triangular_inferior_com_diagonal():
    m = atencao.causal_mask(4)
    assert m.dtype == bool and m.shape == (4, 4)
    assert np.array_equal(m, np.tril(np.ones((4, 4), bool)))
    assert m.diagonal().all()
    assert atencao.causal_mask(2, 3).shape == (2, 3)


@pytest.mark.parametrize("n, exc", [(0, ValueError), (2.5, TypeError), (True, TypeError)])
def test_causal_mask_argumento_ruim(n, exc):
    with pytest.raises(exc, match="`n`"):
        atencao.causal_mask(n)


def test_padding_mask():
    m = atencao.padding_mask([2, 3])
    assert m.shape == (2, 1, 3)
    assert np.array_equal(m[:, 0], [[True, True, False], [True, True, True]])
    with pytest.raises(ValueError, match="entre 1 e n=3"):
        atencao.padding_mask([4], n=3)
    with pytest.raises(TypeError, match="lengths"):
        atencao.padding_mask([1.5])


def test_padding_mask_zera_atencao_no_preenchimento():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 3, 4))
    _, W = atencao.self_attention(X, mask=atencao.padding_mask([2, 3]))
    assert np.all(W[0, :, 2] == 0)
    _, W_short = atencao.self_attention(X[0, :2])
    np.testing.assert_allclose(W[0, :2, :2], W_short, atol=1e-12)


def test_conversoes_de_convencao_sao_inversas():
    m = atencao.causal_mask(3)
    assert np.array_equal(masks.to_torch_mha_mask(m), ~m)
    assert np.array_equal(masks.from_torch_mha_mask(masks.to_torch_mha_mask(m)), m)
    assert np.array_equal(masks.from_torch_sdpa_mask(masks.to_torch_sdpa_mask(m)), m)
    with pytest.raises(TypeError, match="booleana"):
        masks.to_torch_mha_mask(np.zeros((2, 2)))


def test_mascara_de_zeros_e_uns_vale_igual_na_atencao_e_nas_conversoes():
    """A mesma regra em todo lugar: inteiros só com 0 e 1 são uma máscara; outros números, não."""
    m = np.array([[1, 0], [1, 1]])
    assert np.array_equal(masks.to_torch_mha_mask(m), ~m.astype(bool))
    X = np.eye(2)
    assert np.allclose(atencao.self_attention(X, mask=m)[1], atencao.self_attention(X, mask=m.astype(bool))[1])
    with pytest.raises(TypeError, match="booleana"):
        masks.to_torch_sdpa_mask(np.array([[2, 0], [1, 1]]))
