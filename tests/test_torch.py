"""O porte do PyTorch concorda com torch.nn.MultiheadAttention; as máscaras convertem certo (Aula 2)."""

import numpy as np
import pytest
from exigir import exigir

import atencao
from atencao import MultiHeadAttention
from atencao.masks import from_torch_mha_mask, from_torch_sdpa_mask, to_torch_mha_mask, to_torch_sdpa_mask

torch = exigir("torch")



def _torch_case(batch_first, bias, seed=0):
    torch.manual_seed(seed)
    module = torch.nn.MultiheadAttention(16, 4, bias=bias, batch_first=batch_first).eval()
    if bias:  # vieses não nulos, para testar de verdade a cópia deles
        with torch.no_grad():
            module.in_proj_bias.normal_()
            module.out_proj.bias.normal_()
    x = torch.randn(3, 7, 16)
    return module, x


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("masks", ["nenhuma", "attn_mask", "key_padding_mask", "as duas"])
def test_porte_do_pytorch_concorda(batch_first, bias, average, masks):
    module, x = _torch_case(batch_first, bias)
    causal_blocked = torch.triu(torch.ones(7, 7, dtype=torch.bool), diagonal=1)  # True = bloqueado (torch)
    padding = torch.zeros(3, 7, dtype=torch.bool)
    padding[0, 5:] = True
    padding[2, 6:] = True
    kw, ours_mask = {}, np.ones((1, 7, 7), dtype=bool)
    if masks in ("attn_mask", "as duas"):
        kw["attn_mask"] = causal_blocked
        ours_mask = ours_mask & from_torch_mha_mask(causal_blocked)
    if masks in ("key_padding_mask", "as duas"):
        kw["key_padding_mask"] = padding
        ours_mask = ours_mask & from_torch_mha_mask(padding)[:, None, :]
    xt = x if batch_first else x.transpose(0, 1)
    with torch.no_grad():
        out_t, w_t = module(xt, xt, xt, average_attn_weights=average, **kw)
    out_t = out_t.numpy() if batch_first else out_t.transpose(0, 1).numpy()
    ours = MultiHeadAttention.from_torch(module)
    out, w = ours(x.numpy(), mask=ours_mask, average_weights=average)
    assert out.shape == out_t.shape and w.shape == w_t.shape
    assert np.abs(out - out_t).max() <= 1e-5
    assert np.abs(w - w_t.numpy()).max() <= 1e-5


def test_porte_float64():
    module, x = _torch_case(True, True)
    module = module.double()
    ours = MultiHeadAttention.from_torch(module)
    with torch.no_grad():
        out_t, _ = module(x.double(), x.double(), x.double())
    out, _ = ours(x.double().numpy())
    assert out.dtype == np.float64 and np.abs(out - out_t.numpy()).max() < 1e-12


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_porte_de_todo_dtype_de_ponto_flutuante(dtype):
    """Os formatos em que os módulos chegam (bfloat16 não existe no NumPy): pesos copiados sem perda, em float32
    (float64 se o módulo for float64), e a mesma saída que o módulo, calculado em float64 com esses pesos."""
    module, x = _torch_case(True, True)
    module = module.to(getattr(torch, dtype))
    ours = MultiHeadAttention.from_torch(module)
    esperado = np.float64 if dtype == "float64" else np.float32
    assert all(W.dtype == esperado for W in (ours.W_q, ours.W_k, ours.W_v, ours.W_o, ours.b_q, ours.b_o))
    d = module.embed_dim
    pesos = module.in_proj_weight.detach().double().numpy()  # os valores exatos do módulo
    np.testing.assert_array_equal(ours.W_k, pesos[d:2 * d].T)
    np.testing.assert_array_equal(ours.b_o, module.out_proj.bias.detach().double().numpy())
    referencia = module.double()
    with torch.no_grad():
        out_t, w_t = referencia(x.double(), x.double(), x.double())
    out, w = ours(x.numpy(), average_weights=True)
    assert np.abs(out - out_t.numpy()).max() <= 1e-4 and np.abs(w - w_t.numpy()).max() <= 1e-5


def test_tensores_bfloat16_e_com_gradiente_entram_na_biblioteca():
    x = torch.randn(2, 5, 8, requires_grad=True)
    baixo = x.detach().to(torch.bfloat16)
    out, w = atencao.self_attention(baixo)  # antes: TypeError (ScalarType BFloat16)
    ref_out, ref_w = atencao.self_attention(baixo.float().numpy())
    assert out.dtype == np.float32 and np.array_equal(out, ref_out) and np.array_equal(w, ref_w)
    np.testing.assert_array_equal(atencao.softmax(x), atencao.softmax(x.detach().numpy()))  # requires_grad
    assert atencao.softmax(x.detach().half()).dtype == np.float16  # float16 continua float16
    mask = torch.from_numpy(atencao.causal_mask(5))
    np.testing.assert_array_equal(from_torch_sdpa_mask(mask), atencao.causal_mask(5))


def test_pesos_do_hugging_face_em_bfloat16():
    from atencao.bert import BertConfig, hf_state_dict_names, weights_from_hf

    config = BertConfig(d_model=4, n_layers=1, n_heads=2, d_ff=8, vocab_size=10, max_positions=6,
                        type_vocab_size=1, eps=1e-12)
    torch.manual_seed(0)
    state = {nome: torch.randn(3, 4).to(torch.bfloat16) for nome in hf_state_dict_names(1).values()}
    pesos = weights_from_hf(state, config)
    for nosso, deles in hf_state_dict_names(1).items():
        assert pesos[nosso].dtype == np.float32
        np.testing.assert_array_equal(pesos[nosso], state[deles].float().numpy())


def test_porte_recusa_configuracao_nao_suportada():
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2, add_bias_kv=True))
    with pytest.raises(ValueError, match="kdim"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=4))


def test_convencoes_de_mascara_contra_o_pytorch():
    rng = np.random.default_rng(0)
    q, k, v = (torch.from_numpy(rng.normal(size=(2, 5, 4))) for _ in range(3))
    ours_mask = atencao.causal_mask(5)
    # F.scaled_dot_product_attention: True = permitido (igual ao curso)
    out_t = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.from_numpy(to_torch_sdpa_mask(ours_mask)))
    out, _ = atencao.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy(), mask=ours_mask)
    np.testing.assert_allclose(out, out_t.numpy(), atol=1e-12)
    assert np.array_equal(from_torch_sdpa_mask(torch.from_numpy(ours_mask)), ours_mask)
    # nn.MultiheadAttention: True = bloqueado (o contrário)
    blocked = torch.from_numpy(to_torch_mha_mask(ours_mask))
    assert torch.equal(blocked, torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1))
    module = torch.nn.MultiheadAttention(4, 1, bias=False, batch_first=True).double().eval()
    with torch.no_grad():
        _, w_t = module(q, q, q, attn_mask=blocked)
    assert np.all(np.triu(w_t.numpy(), k=1) == 0)
    _, w = MultiHeadAttention.from_torch(module)(q.numpy(), mask=from_torch_mha_mask(blocked), average_weights=True)
    np.testing.assert_allclose(w, w_t.numpy(), atol=1e-12)


@pytest.mark.parametrize("scale", [None, 1.0, 0.3, 2.5])
@pytest.mark.parametrize("causal", [False, True])
def test_scale_igual_ao_do_pytorch(scale, causal):
    """``scale`` tem o mesmo sentido que em F.scaled_dot_product_attention: None = 1/sqrt(d_k), senão o fator."""
    rng = np.random.default_rng(1)
    q, k, v = (torch.from_numpy(rng.normal(size=(2, 5, 4))) for _ in range(3))
    mask = atencao.causal_mask(5) if causal else None
    kw = {} if mask is None else {"attn_mask": torch.from_numpy(to_torch_sdpa_mask(mask))}
    out_t = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale, **kw)
    out, _ = atencao.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy(), mask=mask, scale=scale)
    np.testing.assert_allclose(out, out_t.numpy(), atol=1e-12)
