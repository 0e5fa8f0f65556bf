"""Aula 4: codificação posicional, LayerNorm, FFN e os blocos Transformer do curso, iguais aos do PyTorch."""

import numpy as np
import pytest
from exigir import exigir

from atencao import causal_mask, padding_mask
from atencao.feedforward import FeedForward, gelu
from atencao.masks import from_torch_mha_mask
from atencao.normalization import LayerNorm
from atencao.positional import positional_encoding
from atencao.transformer import TransformerDecoderBlock, TransformerEncoderBlock

# ---------------------------------------------------------------- sem PyTorch


def _pe_com_lacos(n, d, base=10000.0):
    """A fórmula do artigo escrita com laços, coluna a coluna."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for col in range(d):
            i2 = col - col % 2
            ang = pos / base ** (i2 / d)
            pe[pos, col] = np.sin(ang) if col % 2 == 0 else np.cos(ang)
    return pe


@pytest.mark.parametrize("n, d", [(1, 1), (5, 2), (7, 8), (9, 7), (50, 64)])
def test_codificacao_posicional_e_a_formula_do_artigo(n, d):
    pe = positional_encoding(n, d)
    assert pe.shape == (n, d) and pe.dtype == np.float64
    np.testing.assert_allclose(pe, _pe_com_lacos(n, d), atol=1e-12)


def test_codificacao_posicional_valores_conhecidos():
    pe = positional_encoding(3, 4)
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1])  # posição 0: sen 0 = 0, cos 0 = 1
    np.testing.assert_allclose(pe[1], [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)])
    assert positional_encoding(4, 6, dtype=np.float32).dtype == np.float32
    # o produto escalar entre posições depende só da distância (com todas as frequências)
    big = positional_encoding(40, 32)
    np.testing.assert_allclose(big[3] @ big[10], big[20] @ big[27], atol=1e-12)


@pytest.mark.parametrize("args, erro, texto", [
    ((0, 4), ValueError, "`n`"), ((3, 0), ValueError, "`d_model`"), ((3.0, 4), TypeError, "`n`"),
    ((3, 4, -1.0), ValueError, "`base`"),
])
def test_codificacao_posicional_recusa_argumentos_invalidos(args, erro, texto):
    with pytest.raises(erro, match=texto):
        positional_encoding(*args)


def test_layernorm_normaliza_cada_token():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 5.0, size=(2, 4, 6))
    y = LayerNorm(6)(x)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), x.var(axis=-1) / (x.var(axis=-1) + 1e-5), atol=1e-12)
    ln = LayerNorm.from_weights(np.full(6, 2.0), np.full(6, 1.0))
    np.testing.assert_allclose(ln(x), 2 * y + 1, atol=1e-12)
    # cada token sozinho: mudar um token não muda os outros
    x2 = x.copy()
    x2[0, 1] += 10
    np.testing.assert_array_equal(LayerNorm(6)(x2)[0, [0, 2, 3]], y[0, [0, 2, 3]])


def test_layernorm_recusa_entrada_errada():
    with pytest.raises(ValueError, match=r"\(\.\.\., n, d_model=6\)"):
        LayerNorm(6)(np.ones((2, 5)))
    with pytest.raises(ValueError, match="`eps`"):
        LayerNorm(6, eps=0.0)
    with pytest.raises(ValueError, match="mesma forma"):
        LayerNorm.from_weights(np.ones(3), np.ones(4))


def test_gelu_e_feedforward():
    x = np.linspace(-4, 4, 81)
    from math import erf
    np.testing.assert_allclose(gelu(x), [v * 0.5 * (1 + erf(v / np.sqrt(2))) for v in x], atol=1e-6)
    ffn = FeedForward(4, 16, activation="relu", seed=3)
    tokens = np.random.default_rng(1).normal(size=(5, 4))
    sozinhos = np.stack([ffn(t[None])[0] for t in tokens])  # cada token passa sozinho pela mesma rede
    np.testing.assert_allclose(ffn(tokens), sozinhos, atol=1e-12)
    with pytest.raises(ValueError, match="activation"):
        FeedForward(4, 16, activation="tanh")
    with pytest.raises(ValueError, match="`W_2`"):
        FeedForward.from_weights(np.ones((4, 8)), np.zeros(8), np.ones((4, 8)), np.zeros(4))


def test_bloco_codificador_formas_mascara_e_ordem():
    x = np.random.default_rng(2).normal(size=(2, 5, 8))
    for norm_first in (False, True):
        block = TransformerEncoderBlock(8, 2, 32, norm_first=norm_first, seed=1)
        out, w = block(x, mask=causal_mask(5))
        assert out.shape == (2, 5, 8) and w.shape == (2, 2, 5, 5)
        assert np.all(np.triu(w, k=1) == 0)
        # causal: o token 2 não depende dos tokens 3 e 4
        x2 = x.copy()
        x2[:, 3:] += 1.0
        np.testing.assert_allclose(block(x2, mask=causal_mask(5))[0][:, :3], out[:, :3], atol=1e-12)
    # pós-LN termina numa normalização: cada linha tem média 0; pré-LN não
    post, _ = TransformerEncoderBlock(8, 2, 32, seed=1)(x)
    pre, _ = TransformerEncoderBlock(8, 2, 32, norm_first=True, seed=1)(x)
    np.testing.assert_allclose(post.mean(axis=-1), 0, atol=1e-12)
    assert np.abs(pre.mean(axis=-1)).max() > 1e-3
    with pytest.raises(ValueError, match="divisível"):
        TransformerEncoderBlock(10, 3, 8)


def test_bloco_decodificador_cruzada_com_n_q_diferente_de_n_k():
    rng = np.random.default_rng(4)
    x, memory = rng.normal(size=(3, 8)), rng.normal(size=(6, 8))
    block = TransformerDecoderBlock(8, 4, 16, activation="gelu", seed=2)
    out, (self_w, cross_w) = block(x, memory, mask=causal_mask(3))
    assert out.shape == (3, 8) and self_w.shape == (4, 3, 3) and cross_w.shape == (4, 3, 6)
    np.testing.assert_allclose(cross_w.sum(-1), 1, atol=1e-12)
    # a memória mascarada (preenchimento) não recebe peso
    _, (_, cw) = block(x, memory, mask=causal_mask(3), memory_mask=padding_mask([4], 6)[0])
    assert np.all(cw[..., 4:] == 0)
    with pytest.raises(ValueError, match="`memory`"):
        block(x, memory[:, :4])


# ---------------------------------------------------------------- contra o PyTorch

torch = exigir("torch")

D, H, F, N_SRC, N_TGT = 16, 4, 32, 7, 5


def _aleatorizar_normalizacoes(module):
    """Ganhos e vieses das LayerNorm longe de 1 e 0, para testar de verdade a cópia deles."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.startswith("norm") or name.endswith("bias"):
                p.normal_()


def _mascaras_torch(n_q, n_k, causal, padding):
    """(attn_mask, key_padding_mask) no PyTorch (True = bloqueado) e a máscara do curso (True = pode olhar)."""
    kw, ours = {}, np.ones((1, n_q, n_k), dtype=bool)
    if causal:
        blocked = torch.triu(torch.ones(n_q, n_k, dtype=torch.bool), diagonal=1)
        kw["attn_mask"] = blocked
        ours = ours & from_torch_mha_mask(blocked)
    if padding:
        pad = torch.zeros(3, n_k, dtype=torch.bool)
        pad[0, n_k - 2:] = True
        pad[2, n_k - 1:] = True
        kw["key_padding_mask"] = pad
        ours = ours & from_torch_mha_mask(pad)[:, None, :]
    return kw, (ours if (causal or padding) else None)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("masks", ["nenhuma", "causal", "preenchimento", "as duas"])
def test_bloco_codificador_igual_ao_do_pytorch(norm_first, activation, masks):
    torch.manual_seed(0)
    module = torch.nn.TransformerEncoderLayer(D, H, F, dropout=0.1, activation=activation, batch_first=True,
                                              norm_first=norm_first).eval()
    _aleatorizar_normalizacoes(module)
    x = torch.randn(3, N_SRC, D)
    kw, ours_mask = _mascaras_torch(N_SRC, N_SRC, masks in ("causal", "as duas"), masks in ("preenchimento", "as duas"))
    with torch.no_grad():
        ref = module(x, src_mask=kw.get("attn_mask"), src_key_padding_mask=kw.get("key_padding_mask")).numpy()
    block = TransformerEncoderBlock.from_torch(module)
    out, w = block(x.numpy(), mask=ours_mask)
    assert out.dtype == np.float32 and out.shape == ref.shape and w.shape == (3, H, N_SRC, N_SRC)
    assert np.abs(out - ref).max() <= 1e-5


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("masks", ["nenhuma", "causal", "preenchimento", "as duas"])
def test_bloco_decodificador_igual_ao_do_pytorch(norm_first, activation, masks):
    torch.manual_seed(1)
    module = torch.nn.TransformerDecoderLayer(D, H, F, dropout=0.1, activation=activation, batch_first=True,
                                              norm_first=norm_first).eval()
    _aleatorizar_normalizacoes(module)
    tgt, memory = torch.randn(3, N_TGT, D), torch.randn(3, N_SRC, D)
    causal, padding = masks in ("causal", "as duas"), masks in ("preenchimento", "as duas")
    kw_self, mask_self = _mascaras_torch(N_TGT, N_TGT, causal, False)
    kw_mem, mask_mem = _mascaras_torch(N_TGT, N_SRC, False, padding)
    with torch.no_grad():
        ref = module(tgt, memory, tgt_mask=kw_self.get("attn_mask"),
                     memory_key_padding_mask=kw_mem.get("key_padding_mask")).numpy()
    block = TransformerDecoderBlock.from_torch(module)
    out, (self_w, cross_w) = block(tgt.numpy(), memory.numpy(), mask=mask_self, memory_mask=mask_mem)
    assert out.dtype == np.float32 and out.shape == ref.shape
    assert self_w.shape == (3, H, N_TGT, N_TGT) and cross_w.shape == (3, H, N_TGT, N_SRC)
    assert np.abs(out - ref).max() <= 1e-5


def test_pesos_dos_blocos_iguais_aos_do_pytorch():
    """Os pesos devolvidos pelo bloco são os da atenção do PyTorch com as mesmas entradas (pós-LN: a entrada)."""
    torch.manual_seed(2)
    module = torch.nn.TransformerEncoderLayer(D, H, F, batch_first=True).eval()
    x = torch.randn(2, N_SRC, D)
    with torch.no_grad():
        _, w_ref = module.self_attn(x, x, x, average_attn_weights=False)
    _, w = TransformerEncoderBlock.from_torch(module)(x.numpy())
    assert np.abs(w - w_ref.numpy()).max() <= 1e-6


def test_layernorm_e_ffn_iguais_aos_do_pytorch():
    torch.manual_seed(3)
    ln = torch.nn.LayerNorm(D, eps=1e-6)
    _aleatorizar_normalizacoes(torch.nn.ModuleDict({"norm": ln}))
    x = torch.randn(2, 3, D) * 4 + 2
    with torch.no_grad():
        assert np.abs(LayerNorm.from_torch(ln)(x.numpy()) - ln(x).numpy()).max() <= 1e-5
        l1, l2 = torch.nn.Linear(D, F), torch.nn.Linear(F, D)
        ffn = FeedForward.from_torch(l1, l2, "gelu")
        ref = l2(torch.nn.functional.gelu(l1(x))).numpy()
    assert np.abs(ffn(x.numpy()) - ref).max() <= 1e-5


def test_ativacao_nao_suportada_e_recusada():
    module = torch.nn.TransformerEncoderLayer(D, H, F, activation=torch.nn.GELU(approximate="tanh"), batch_first=True)
    with pytest.raises(ValueError, match="gelu"):
        TransformerEncoderBlock.from_torch(module)
