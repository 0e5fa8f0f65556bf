"""O modelo só de atenção da cabeça de indução (atencao.induction): a volta conferida por diferenças centrais
em float64 (com e sem ablação), as sequências repetidas, os erros de entrada e um treino curto em que a
segunda metade passa a ser prevista pelo contexto."""

import numpy as np
import pytest

from atencao.induction import AttentionOnlyModel, loss_by_position, repeated_sequences, train_induction


def _numerico(model, tokens, nome, ablate=(), eps=1e-6):
    p = model.params[nome]
    g = np.zeros_like(p)
    for i in np.ndindex(p.shape):
        original = p[i]
        p[i] = original + eps
        mais = model.loss(tokens, ablate=ablate)
        p[i] = original - eps
        menos = model.loss(tokens, ablate=ablate)
        p[i] = original
        g[i] = (mais - menos) / (2 * eps)
    return g


@pytest.mark.parametrize("ablate", [(), ((1, 0),)], ids=["inteiro", "com-ablacao"])
def test_a_volta_bate_com_as_diferencas_centrais(ablate):
    model = AttentionOnlyModel(vocab_size=5, n_ctx=6, d_model=4, n_heads=2, seed=3)
    tokens = repeated_sequences(np.random.default_rng(0), 2, 3, 5)
    loss, grads = model.loss_and_grads(tokens, ablate=ablate)
    assert loss == pytest.approx(model.loss(tokens, ablate=ablate), rel=1e-12)
    assert set(grads) == set(model.params)
    for nome, g in grads.items():
        assert g.shape == model.params[nome].shape, nome
        num = _numerico(model, tokens, nome, ablate=ablate)
        # o arredondamento das diferenças centrais é ~1e-16 / eps = 1e-10 em valor absoluto: os gradientes das
        # projeções da primeira camada são pequenos (~1e-4), então a régua é absoluta, não relativa
        assert np.abs(g - num).max() < 1e-8, (nome, np.abs(g - num).max())
        assert np.abs(g).max() > 1e-5, nome  # nenhum gradiente é zero por engano


def test_a_ablacao_zera_o_gradiente_das_projecoes_da_cabeca_desligada():
    model = AttentionOnlyModel(vocab_size=5, n_ctx=6, d_model=4, n_heads=2, seed=1)
    tokens = repeated_sequences(np.random.default_rng(2), 3, 3, 5)
    _, grads = model.loss_and_grads(tokens, ablate=[(1, 1)])
    d_head = model.d_head
    assert np.all(grads["1.W_q"][:, d_head:] == 0) and np.all(grads["1.W_o"][d_head:] == 0)
    assert np.abs(grads["1.W_q"][:, :d_head]).max() > 0


def test_as_sequencas_repetem_a_primeira_metade():
    toks = repeated_sequences(np.random.default_rng(0), 4, 7, 11)
    assert toks.shape == (4, 14) and toks.dtype == np.int64
    assert np.array_equal(toks[:, :7], toks[:, 7:])
    assert toks.min() >= 0 and toks.max() < 11


def test_entrada_errada_da_erro_em_portugues():
    model = AttentionOnlyModel(vocab_size=5, n_ctx=6, d_model=4, n_heads=2)
    with pytest.raises(ValueError, match="n_ctx = 6"):
        model.forward(np.zeros((1, 7), dtype=int))
    with pytest.raises(ValueError, match="ids em 0 … 4"):
        model.forward(np.full((1, 3), 5))
    with pytest.raises(ValueError, match="não existe"):
        model.forward(np.zeros((1, 3), dtype=int), ablate=[(2, 0)])
    with pytest.raises(ValueError, match="precisa dividir"):
        AttentionOnlyModel(vocab_size=5, n_ctx=6, d_model=5, n_heads=2)
    with pytest.raises(ValueError, match="mais que o contexto"):
        train_induction(model, steps=1, half=4)


def test_um_treino_curto_aprende_a_copiar_do_contexto():
    """Com 200 passos, a segunda metade (que repete a primeira) fica muito mais fácil que a primeira, e
    desligar as duas cabeças da segunda camada desfaz boa parte disso."""
    model = AttentionOnlyModel(vocab_size=12, n_ctx=12, d_model=16, n_heads=2, seed=0)
    run = train_induction(model, steps=200, batch_size=32, half=6, lr=0.02, seed=0, every=100)
    assert run.snapshot_steps == [0, 100, 200] and len(run.losses) == 200
    toks = repeated_sequences(np.random.default_rng(5), 100, 6, 12)
    por_posicao = loss_by_position(model, toks)
    primeira, segunda = por_posicao[:5].mean(), por_posicao[6:].mean()
    assert primeira > np.log(12) - 0.3  # aleatória: não há o que aprender
    assert segunda < 0.5 * primeira
    sem_camada_2 = loss_by_position(model, toks, ablate=[(1, 0), (1, 1)])[6:].mean()
    assert sem_camada_2 > segunda + 0.5
