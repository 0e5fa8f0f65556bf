"""Aula 6: cada peça do backward do GPT confere com as diferenças centrais (float64) e com o torch.autograd
(≤ 1e-6); o modelo inteiro também, no pré-LN, no pós-LN, sem resíduo e com dropout."""

import numpy as np
import pytest
from exigir import exigir

from atencao.backward import gradient_check, numerical_gradient
from atencao.gpt import GPT, GPTConfig
from atencao.gpt_backward import (
    cross_entropy,
    dropout_mask,
    embedding_backward,
    ffn_backward,
    ffn_forward,
    gelu_tanh,
    gelu_tanh_backward,
    layer_norm,
    layer_norm_backward,
)
from atencao.gpt_torch import to_torch, torch_grads, torch_logits

torch = exigir("torch")

TOL = 1e-6  # contra o torch.autograd
TOL_NUM = 1e-6  # contra as diferenças centrais (erro relativo de gradient_check; um erro de fórmula dá > 1e-3)


def _t(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def _close(a, b, tol=TOL):
    """Erro relativo à escala do gradiente (≤ tol) e formas iguais."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


# ---------------------------------------------------------------- peças


def test_cross_entropy_igual_ao_torch_e_as_diferencas_centrais():
    rng = np.random.default_rng(0)
    logits, targets = rng.normal(size=(3, 4, 7)) * 3, rng.integers(0, 7, (3, 4))
    loss, dlogits = cross_entropy(logits, targets)
    lt = _t(logits)
    ref = torch.nn.functional.cross_entropy(lt.reshape(-1, 7), torch.tensor(targets.reshape(-1)))
    ref.backward()
    assert abs(loss - float(ref.detach())) <= 1e-12
    assert _close(dlogits, lt.grad.numpy())
    num = numerical_gradient(lambda z: cross_entropy(z, targets)[0], logits.copy())
    assert gradient_check(dlogits, num) <= TOL_NUM
    # cada linha do gradiente soma 0 (softmax − one-hot) e a média divide por N = 12 posições
    assert np.abs(dlogits.sum(axis=-1)).max() <= 1e-15
    p00 = np.exp(logits[0, 0]) / np.exp(logits[0, 0]).sum()
    assert np.isclose(dlogits[0, 0, targets[0, 0]], (p00[targets[0, 0]] - 1) / 12)


def test_cross_entropy_estavel_com_logits_grandes():
    loss, d = cross_entropy(np.array([[1000.0, 0.0, -1000.0]]), np.array([0]))
    assert np.isfinite(loss) and loss <= 1e-12 and np.all(np.isfinite(d))


@pytest.mark.parametrize("logits, targets, trecho", [
    (np.zeros((2, 3)), np.array([0, 3]), "0 … 2"),
    (np.zeros((2, 3)), np.array([0.0, 1.0]), "inteiros"),
    (np.zeros((2, 3)), np.array([0, 1, 2]), "forma"),
])
def test_cross_entropy_entrada_errada(logits, targets, trecho):
    with pytest.raises((ValueError, TypeError), match=trecho):
        cross_entropy(logits, targets)


def test_layer_norm_backward_igual_ao_torch_e_as_diferencas_centrais():
    rng = np.random.default_rng(1)
    x, dy = rng.normal(size=(2, 3, 6)) * 2 + 1, rng.normal(size=(2, 3, 6))
    w, b = rng.normal(size=6), rng.normal(size=6)
    dx, dw, db = layer_norm_backward(dy, x, w, 1e-5)
    xt, wt, bt = _t(x), _t(w), _t(b)
    torch.nn.functional.layer_norm(xt, (6,), wt, bt, 1e-5).backward(torch.tensor(dy))
    for ours, ref in ((dx, xt.grad), (dw, wt.grad), (db, bt.grad)):
        assert _close(ours, ref.numpy())
    num = numerical_gradient(lambda z: float(np.sum(layer_norm(z, w, b, 1e-5) * dy)), x.copy())
    assert gradient_check(dx, num) <= TOL_NUM
    # sem o termo da variância a volta erra: o teste distingue
    xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    sem_variancia = ((dy * w) - (dy * w).mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert gradient_check(sem_variancia, num) > 1e-2 and np.abs(xhat).max() > 0


def test_layer_norm_igual_a_da_aula_4():
    from atencao import LayerNorm

    rng = np.random.default_rng(2)
    ln = LayerNorm.from_weights(rng.normal(size=5), rng.normal(size=5))
    x = rng.normal(size=(3, 4, 5))
    assert np.abs(layer_norm(x, ln.weight, ln.bias, ln.eps) - ln(x)).max() <= 1e-14


def test_layer_norm_backward_entrada_errada():
    with pytest.raises(ValueError, match="weight"):
        layer_norm_backward(np.zeros((2, 4)), np.zeros((2, 4)), np.ones(3))
    with pytest.raises(ValueError, match="dy"):
        layer_norm_backward(np.zeros((2, 3)), np.zeros((2, 4)), np.ones(4))


def test_gelu_tanh_igual_ao_torch_na_ida_e_na_volta():
    x = np.linspace(-6, 6, 241)
    dy = np.cos(x)
    xt = _t(x)
    torch.nn.functional.gelu(xt, approximate="tanh").backward(torch.tensor(dy))
    assert np.abs(gelu_tanh(x) - torch.nn.functional.gelu(torch.tensor(x), approximate="tanh").numpy()).max() <= 1e-14
    assert _close(gelu_tanh_backward(dy, x), xt.grad.numpy())
    num = numerical_gradient(lambda z: float(np.sum(gelu_tanh(z) * dy)), x.copy())
    assert gradient_check(gelu_tanh_backward(dy, x), num) <= TOL_NUM


def test_ffn_backward_igual_ao_torch():
    rng = np.random.default_rng(3)
    x, dout = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    W_1, b_1, W_2, b_2 = rng.normal(size=(4, 8)), rng.normal(size=8), rng.normal(size=(8, 4)), rng.normal(size=4)
    y, cache = ffn_forward(x, W_1, b_1, W_2, b_2)
    dx, g = ffn_backward(dout, cache, W_1, W_2)
    ts = {k: _t(v) for k, v in dict(x=x, W_1=W_1, b_1=b_1, W_2=W_2, b_2=b_2).items()}
    yt = torch.nn.functional.gelu(ts["x"] @ ts["W_1"] + ts["b_1"], approximate="tanh") @ ts["W_2"] + ts["b_2"]
    assert np.abs(y - yt.detach().numpy()).max() <= 1e-13
    yt.backward(torch.tensor(dout))
    assert _close(dx, ts["x"].grad.numpy())
    for k in ("W_1", "b_1", "W_2", "b_2"):
        assert _close(g[k], ts[k].grad.numpy()), k


def test_embedding_backward_soma_os_tokens_repetidos():
    dx = np.arange(12.0).reshape(1, 4, 3)
    dE = embedding_backward(dx, np.array([[2, 0, 2, 2]]), 4)
    assert dE.shape == (4, 3)
    assert np.array_equal(dE[2], dx[0, 0] + dx[0, 2] + dx[0, 3])
    assert np.array_equal(dE[0], dx[0, 1]) and not dE[1].any() and not dE[3].any()


def test_dropout_mask_mantem_a_media():
    m = dropout_mask(np.random.default_rng(0), (200_000,), 0.25)
    assert set(np.unique(m)) == {0.0, 1 / 0.75}
    assert abs(m.mean() - 1.0) < 0.01 and abs((m == 0).mean() - 0.25) < 0.01
    assert dropout_mask(np.random.default_rng(0), (3,), 0.0) is None


# ---------------------------------------------------------------- o modelo inteiro

VARIANTES = {
    "pré-LN": {},
    "pós-LN": {"norm_first": False},
    "sem resíduo": {"residual": False},
}


def _pequeno(**kw):
    cfg = GPTConfig(vocab_size=7, block_size=5, d_model=8, n_heads=2, n_layers=2, init_std=0.3, **kw)
    rng = np.random.default_rng(11)
    model = GPT(cfg)
    for p in model.params.values():  # pesos de LayerNorm e vieses longe de 1 e 0, para nada passar por acaso
        if p.ndim == 1:
            p += rng.normal(0, 0.3, p.shape)
    return model, rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))


def _b_k(name):
    return name.endswith("attn.b_k")


@pytest.mark.parametrize("variante", list(VARIANTES) + ["dropout"])
def test_modelo_inteiro_igual_as_diferencas_centrais(variante):
    kw = {"dropout": 0.3} if variante == "dropout" else VARIANTES[variante]
    model, tokens, targets = _pequeno(**kw)

    def loss(_):  # a mesma semente: as mesmas máscaras de dropout a cada chamada
        return model.loss_and_grads(tokens, targets, train=True, rng=np.random.default_rng(5))[0]

    _, grads = model.loss_and_grads(tokens, targets, train=True, rng=np.random.default_rng(5))
    assert set(grads) == set(model.params)
    for name, p in model.params.items():
        num = numerical_gradient(loss, p)
        if _b_k(name):  # o viés das chaves não muda a softmax (soma o mesmo número à linha): gradiente 0
            assert np.abs(grads[name]).max() <= 1e-12 and np.abs(num).max() <= 1e-8
        else:
            assert gradient_check(grads[name], num) <= TOL_NUM, name


@pytest.mark.parametrize("variante", list(VARIANTES))
def test_modelo_inteiro_igual_ao_autograd(variante):
    model, tokens, targets = _pequeno(**VARIANTES[variante])
    loss, grads = model.loss_and_grads(tokens, targets)
    loss_t, grads_t = torch_grads(model, tokens, targets)
    assert abs(loss - loss_t) <= 1e-12 * abs(loss_t)
    escala = max(np.abs(g).max() for g in grads_t.values())
    for name in model.params:
        assert np.abs(grads[name] - grads_t[name]).max() <= TOL * escala, name
        if not _b_k(name):
            assert _close(grads[name], grads_t[name]), name


def test_logits_iguais_aos_do_torch_no_modelo_padrao():
    model = GPT(GPTConfig(vocab_size=30, seed=3))
    tokens = np.random.default_rng(0).integers(0, 30, (2, 64))
    logits, _ = model.forward(tokens)
    ref = torch_logits(to_torch(model, requires_grad=False), model.config, tokens).numpy()
    assert np.abs(logits - ref).max() <= 1e-12


def test_os_blocos_sao_as_pecas_do_curso_e_veem_os_pesos():
    from atencao import LayerNorm, MultiHeadAttention, causal_mask

    model = GPT(GPTConfig(vocab_size=10, block_size=8, d_model=16, n_heads=4, n_layers=2))
    blk = model.blocks[1]
    assert isinstance(blk.attn, MultiHeadAttention) and isinstance(blk.ln1, LayerNorm)
    assert model.params["blocks.1.attn.W_q"] is blk.attn.W_q
    model.params["blocks.1.attn.W_q"] += 1.0  # o otimizador muda no lugar: o objeto vê
    assert np.all(blk.attn.W_q == model.params["blocks.1.attn.W_q"])
    # o bloco com a máscara causal padrão dá a mesma saída do caminho de treino, e os pesos de atenção
    tokens = np.array([[1, 2, 3, 4, 5]])
    x = model.E[tokens] + model.P[:5]
    _, cache = model.forward(tokens)
    y0, w0 = model.blocks[0](x)
    assert w0.shape == (1, 4, 5, 5) and np.allclose(np.triu(w0[0, 0], 1), 0)
    assert np.abs(y0 - cache["blocks"][1][0]["x"]).max() <= 1e-12
    y_mask, _ = model.blocks[0](x, mask=causal_mask(5))
    assert np.array_equal(y0, y_mask)


def test_inicializacao_escalada_do_gpt2():
    model = GPT(GPTConfig(vocab_size=50, d_model=64, n_layers=8, seed=0))
    std_res = np.std(np.concatenate([model.params[f"blocks.{i}.attn.W_o"].ravel() for i in range(8)]))
    std_q = np.std(np.concatenate([model.params[f"blocks.{i}.attn.W_q"].ravel() for i in range(8)]))
    assert abs(std_q - 0.02) < 0.001 and abs(std_res - 0.02 / 4) < 0.0003  # 1/sqrt(2 · 8) = 1/4
    plain = GPT(GPTConfig(vocab_size=50, d_model=64, n_layers=8, scaled_init=False))
    assert abs(np.std(plain.params["blocks.0.ffn.W_2"]) - 0.02) < 0.001
    assert not model.params["blocks.0.attn.b_q"].any() and np.all(model.params["blocks.0.ln1.weight"] == 1)


@pytest.mark.parametrize("tokens, trecho", [
    (np.zeros((1, 9), int), "block_size = 8"),
    (np.zeros((1, 3)), "inteiros"),
    (np.array([[0, 10]]), "0 … 9"),
    (np.zeros(3, int), r"\(B, n\)"),
])
def test_entrada_errada_no_modelo(tokens, trecho):
    model = GPT(GPTConfig(vocab_size=10, block_size=8, d_model=8, n_heads=2, n_layers=1))
    with pytest.raises((ValueError, TypeError), match=trecho):
        model.forward(tokens)


def test_configuracao_errada():
    with pytest.raises(ValueError, match="n_heads"):
        GPTConfig(vocab_size=10, d_model=10, n_heads=4)
    with pytest.raises(ValueError, match="dropout"):
        GPTConfig(vocab_size=10, dropout=1.0)
    with pytest.raises(ValueError, match="rng"):
        GPT(GPTConfig(vocab_size=10, dropout=0.1)).forward(np.zeros((1, 3), int), train=True)
