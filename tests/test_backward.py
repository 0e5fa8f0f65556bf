"""Aula 5: o backward da biblioteca confere com o torch.autograd (≤ 1e-6 em float64) e com as diferenças
centrais; o SGD e o Adam dão os mesmos passos do torch.optim."""

import numpy as np
import pytest
from exigir import exigir

from atencao import MultiHeadAttention, causal_mask, scaled_dot_product_attention, softmax
from atencao.backward import (
    attention_backward,
    gradient_check,
    linear_backward,
    multihead_backward,
    numerical_gradient,
    softmax_backward,
)
from atencao.optim import SGD, Adam

torch = exigir("torch")

TOL = 1e-6


def _t(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def test_softmax_backward_igual_ao_autograd():
    rng = np.random.default_rng(0)
    Z, dA = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5))
    Zt = _t(Z)
    torch.softmax(Zt, dim=-1).backward(torch.tensor(dA))
    dZ = softmax_backward(softmax(Z), dA)
    assert np.abs(dZ - Zt.grad.numpy()).max() <= TOL
    assert np.abs(dZ.sum(axis=-1)).max() <= 1e-12  # cada linha do gradiente soma 0


def test_softmax_backward_outro_eixo():
    rng = np.random.default_rng(1)
    Z, dA = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    Zt = _t(Z)
    torch.softmax(Zt, dim=0).backward(torch.tensor(dA))
    assert np.abs(softmax_backward(softmax(Z, axis=0), dA, axis=0) - Zt.grad.numpy()).max() <= TOL


def test_softmax_backward_sem_o_termo_da_soma_diverge():
    """O termo Σⱼ dA ⊙ A faz diferença: sem ele, o resultado fica longe do autograd."""
    rng = np.random.default_rng(2)
    Z, dA = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    A = softmax(Z)
    assert np.abs(A * dA - softmax_backward(A, dA)).max() > 1e-2


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("scale", [None, 1.0, 0.3])
def test_attention_backward_igual_ao_autograd(masked, scale):
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 6))
    mask = np.ones((4, 5), bool) if not masked else np.tril(np.ones((4, 5), bool))
    if masked:
        mask = np.broadcast_to(mask, (2, 4, 5)).copy()
        mask[1, 2] = False  # uma linha toda bloqueada: pesos 0, gradiente 0
    out, A = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)
    dO = rng.normal(size=out.shape)
    Qt, Kt, Vt = _t(Q), _t(K), _t(V)
    f = 1 / np.sqrt(3) if scale is None else scale
    S = (Qt @ Kt.transpose(-1, -2)) * f
    S = S.masked_fill(~torch.tensor(mask), float("-inf"))
    At = torch.nan_to_num(torch.softmax(S, dim=-1))  # a linha toda -inf vira 0, como na biblioteca
    (At @ Vt).backward(torch.tensor(dO))
    dQ, dK, dV = attention_backward(dO, Q, K, V, A, scale=scale)
    for ours, theirs in ((dQ, Qt), (dK, Kt), (dV, Vt)):
        assert ours.shape == theirs.shape
        assert np.abs(ours - theirs.grad.numpy()).max() <= TOL


def test_attention_backward_nao_passa_pela_mascara():
    """Uma chave bloqueada para todas as consultas não recebe gradiente em K nem em V."""
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(3, 4, 4))
    mask = np.ones((4, 4), bool)
    mask[:, 2] = False
    out, A = scaled_dot_product_attention(Q, K, V, mask=mask)
    _, dK, dV = attention_backward(rng.normal(size=out.shape), Q, K, V, A)
    assert np.all(dK[2] == 0) and np.all(dV[2] == 0)
    assert np.abs(dK[[0, 1, 3]]).max() > 0


def test_attention_backward_com_lote_em_broadcast():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    out, A = scaled_dot_product_attention(Q, K, V, mask=causal_mask(4))
    dO = rng.normal(size=out.shape)
    Qt, Kt, Vt = _t(Q), _t(K), _t(V)
    S = (Qt @ Kt.T / np.sqrt(2)).masked_fill(~torch.tensor(causal_mask(4)), float("-inf"))
    (torch.softmax(S, -1) @ Vt).backward(torch.tensor(dO))
    dQ, dK, dV = attention_backward(dO, Q, K, V, A)
    assert dK.shape == (4, 2) and dV.shape == (4, 2)
    for ours, theirs in ((dQ, Qt), (dK, Kt), (dV, Vt)):
        assert np.abs(ours - theirs.grad.numpy()).max() <= TOL


def test_linear_backward_igual_ao_autograd():
    rng = np.random.default_rng(6)
    x, W, b, dy = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=(2, 3, 5))
    xt, Wt, bt = _t(x), _t(W), _t(b)
    (xt @ Wt + bt).backward(torch.tensor(dy))
    dx, dW, db = linear_backward(dy, x, W, bias=True)
    for ours, theirs in ((dx, xt), (dW, Wt), (db, bt)):
        assert np.abs(ours - theirs.grad.numpy()).max() <= TOL


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_multihead_backward_igual_ao_autograd(bias, masked):
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(8, 2, bias=bias, batch_first=True).double()
    if bias:
        with torch.no_grad():
            module.in_proj_bias.normal_()
            module.out_proj.bias.normal_()
    ours = MultiHeadAttention.from_torch(module)
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 5, 8))
    xt = _t(x)
    kw = {"attn_mask": torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)} if masked else {}
    out_t, _ = module(xt, xt, xt, need_weights=False, **kw)
    dout = rng.normal(size=out_t.shape)
    out_t.backward(torch.tensor(dout))
    grads = multihead_backward(ours, dout, x, mask=causal_mask(5) if masked else None)
    d = 8
    W_in = module.in_proj_weight.grad.numpy()
    expected = {"W_q": W_in[:d].T, "W_k": W_in[d:2 * d].T, "W_v": W_in[2 * d:].T,
                "W_o": module.out_proj.weight.grad.numpy().T, "query": xt.grad.numpy()}
    if bias:
        b_in = module.in_proj_bias.grad.numpy()
        expected.update(b_q=b_in[:d], b_k=b_in[d:2 * d], b_v=b_in[2 * d:], b_o=module.out_proj.bias.grad.numpy())
    assert set(grads) == set(expected)
    for name, g in expected.items():
        assert np.abs(grads[name] - g).max() <= TOL, name


def test_multihead_backward_cruzada():
    """query, key e value diferentes: cada um recebe o seu gradiente (conferido pelas diferenças centrais)."""
    layer = MultiHeadAttention(4, 2, seed=3)
    rng = np.random.default_rng(8)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    dout = rng.normal(size=(3, 4))
    grads = multihead_backward(layer, dout, q, k, v)
    for name, x in (("query", q), ("key", k), ("value", v)):
        num = numerical_gradient(lambda _: float((layer(q, k, v)[0] * dout).sum()), x)
        assert gradient_check(grads[name], num) <= 1e-8, name


def test_verificacao_numerica_aprova_o_certo_e_reprova_o_errado():
    rng = np.random.default_rng(9)
    Q, K, V = rng.normal(size=(3, 4, 3))
    dO = rng.normal(size=(4, 3))

    def loss(_):
        return float((scaled_dot_product_attention(Q, K, V, mask=causal_mask(4))[0] * dO).sum())

    _, A = scaled_dot_product_attention(Q, K, V, mask=causal_mask(4))
    dQ, dK, dV = attention_backward(dO, Q, K, V, A)
    assert gradient_check(dQ, numerical_gradient(loss, Q)) <= 1e-8
    assert gradient_check(dK, numerical_gradient(loss, K)) <= 1e-8
    assert gradient_check(dV, numerical_gradient(loss, V)) <= 1e-8
    dS = softmax_backward(A, dO @ V.T)
    wrong_dK = (dS @ Q) / np.sqrt(3)  # dS sem a transposta
    assert gradient_check(wrong_dK, numerical_gradient(loss, K)) > 1e-2  # a verificação pega
    assert gradient_check(dQ * np.sqrt(3), numerical_gradient(loss, Q)) > 1e-2  # sem o 1/√d_k


def test_numerical_gradient_devolve_x_intacto_e_recusa_float32():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    before = x.copy()
    g = numerical_gradient(lambda a: float((a ** 2).sum()), x)
    assert np.array_equal(x, before)
    assert np.abs(g - 2 * x).max() <= 1e-6
    with pytest.raises(TypeError, match="float64"):
        numerical_gradient(lambda a: float(a.sum()), x.astype(np.float32))
    with pytest.raises(ValueError, match="eps"):
        numerical_gradient(lambda a: float(a.sum()), x, eps=0)
    with pytest.raises(TypeError, match="número"):
        numerical_gradient(lambda a: a, x)
    with pytest.raises(TypeError, match="`f` precisa ser uma função .*recebido int"):
        numerical_gradient(3, x)


def test_numerical_gradient_em_vistas_nao_contiguas():
    """Uma vista não contígua (``W.T``, uma fatia com passo) recebia zeros em silêncio: ``x.reshape(-1)`` era uma
    cópia, e mexer nela não mexia em ``W``. Agora a régua mexe em ``x`` de verdade e dá o gradiente certo."""
    rng = np.random.default_rng(8)
    W = rng.normal(size=(3, 4))
    C = rng.normal(size=(3, 4))

    def perda(_):
        return float((np.sin(W) * C).sum())  # lê W; dL/dW = cos(W) * C

    exato = np.cos(W) * C
    antes = W.copy()
    g = numerical_gradient(perda, W.T)  # (4, 3), vista transposta de W
    assert g.shape == (4, 3) and not W.T.flags.c_contiguous
    assert gradient_check(g, exato.T) <= 1e-8
    assert np.array_equal(W, antes)  # W volta ao valor original, bit a bit
    fatia = W[:, ::2]  # vista com passo
    assert gradient_check(numerical_gradient(perda, fatia), exato[:, ::2]) <= 1e-8
    assert np.array_equal(W, antes)
    somente_leitura = W.copy()
    somente_leitura.setflags(write=False)
    with pytest.raises(ValueError, match="`x` é somente leitura"):
        numerical_gradient(perda, somente_leitura)


def test_erros_claros():
    with pytest.raises(ValueError, match="mesma forma"):
        softmax_backward(np.ones((2, 3)) / 3, np.ones((2, 4)))
    Q = np.ones((2, 3))
    with pytest.raises(ValueError, match="weights"):
        attention_backward(np.ones((2, 3)), Q, Q, Q, np.ones((3, 2)))
    with pytest.raises(ValueError, match="dO"):
        attention_backward(np.ones((3, 2)), Q, Q, Q, np.ones((2, 2)))
    with pytest.raises(ValueError, match="Formas"):
        linear_backward(np.ones((2, 3)), np.ones((2, 4)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="dout"):
        multihead_backward(MultiHeadAttention(4, 2), np.ones((3, 3)), np.ones((3, 4)))


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_otimizadores_iguais_ao_torch(kind):
    rng = np.random.default_rng(10)
    W0 = rng.normal(size=(3, 4))
    grads_seq = [rng.normal(size=(3, 4)) for _ in range(6)]
    params = {"W": W0.copy()}
    Wt = torch.nn.Parameter(torch.tensor(W0))
    if kind == "sgd":
        ours, theirs = SGD(params, lr=0.05), torch.optim.SGD([Wt], lr=0.05)
    else:
        ours, theirs = Adam(params, lr=0.05), torch.optim.Adam([Wt], lr=0.05)
    for g in grads_seq:
        ours.step({"W": g})
        Wt.grad = torch.tensor(g)
        theirs.step()
    assert np.abs(params["W"] - Wt.detach().numpy()).max() <= 1e-12


def test_otimizadores_erros():
    params = {"W": np.zeros((2, 2))}
    with pytest.raises(ValueError, match="lr"):
        SGD(params, lr=-1)
    with pytest.raises(ValueError, match="betas"):
        Adam(params, betas=(0.9, 1.0))
    with pytest.raises(KeyError, match="W"):
        Adam(params).step({})
    with pytest.raises(ValueError, match="forma"):
        SGD(params).step({"W": np.zeros(3)})
