"""Mapas de calor (Aula 1, 02-codigo e 04-projeto; Aula 2, várias cabeças)."""

import warnings

import numpy as np
import pytest
from matplotlib.patches import Rectangle

import atencao
from atencao.plotting import _text_color


def _weights(n=4, seed=0):
    rng = np.random.default_rng(seed)
    return atencao.softmax(rng.normal(size=(n, n)) * 2)


def test_um_mapa_com_rotulos_centrados_maximos_destacados_e_barra_de_cores():
    tokens = ["o", "coração", "não", "ação"]
    W = _weights()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inclusive "Glyph missing" para os acentos
        fig, ax = atencao.plot_attention(W, tokens, title="teste")
        fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == tokens
    assert [t.get_text() for t in ax.get_yticklabels()] == tokens
    assert list(ax.get_xticks()) == [0, 1, 2, 3] and list(ax.get_yticks()) == [0, 1, 2, 3]
    assert all(t.get_ha() == "center" for t in ax.get_xticklabels())
    assert all(t.get_va() == "center" for t in ax.get_yticklabels())
    assert ax.get_ylabel().startswith("quem olha") and ax.get_xlabel().startswith("para quem")
    boxes = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_edgecolor()[:3] != (0, 0, 0)]
    corners = sorted((round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in boxes)
    assert corners == [(i, int(W[i].argmax())) for i in range(4)]
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert texts[(0, int(W[0].argmax()))].get_fontweight() == "bold"
    assert texts[(0, 0)].get_text() == f"{W[0, 0]:.2f}"
    assert len(fig.axes) == 2  # o mapa e a barra de cores
    assert fig.axes[1].get_ylabel() == "peso de atenção"


def test_cor_do_texto_legivel_em_celula_clara_e_escura():
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    assert _text_color(cmap(0.0)) == "white"   # roxo escuro
    assert _text_color(cmap(1.0)) == "black"   # amarelo claro


def test_varias_cabecas_escala_comum_e_titulos():
    W = np.stack([_weights(seed=s) for s in range(3)])
    fig, axes = atencao.plot_attention_heads(W, list("abcd"))
    assert axes.shape == (2, 2)
    assert [ax.get_title() for ax in axes.ravel()[:3]] == ["cabeça 0", "cabeça 1", "cabeça 2"]
    limits = {ax.images[0].get_clim() for ax in axes.ravel()[:3]}
    assert limits == {(0.0, float(W.max()))}
    assert sum(1 for a in fig.axes if a.get_ylabel() == "peso de atenção") == 1


def test_grade_quebra_linhas_e_desliga_paineis_vazios():
    W = np.stack([_weights(seed=s) for s in range(5)])
    fig, axes = atencao.plot_attention_heads(W, list("abcd"), ncols=3)
    assert axes.shape == (2, 3)
    assert not axes[1, 2].axison


def test_frase_longa_afina_rotulos_e_nao_anota():
    n = 64
    W = atencao.softmax(np.random.default_rng(0).normal(size=(n, n)))
    fig, ax = atencao.plot_attention(W, [f"t{i}" for i in range(n)])
    assert len(ax.get_xticklabels()) <= 40 and not ax.texts


def test_desenha_num_eixo_existente_e_nao_mostra_repr():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    result = atencao.plot_attention(_weights(2), ["a", "b"], ax=ax)
    assert result.fig is fig and result.axes is ax
    assert hasattr(result, "_ipython_display_") and "0x" not in repr(result)


@pytest.mark.parametrize("weights, tokens, exc, msg", [
    (np.full((3, 3), 1 / 3), ["a", "b"], ValueError, "2 token"),
    (np.full((2, 2), 3.0), ["a", "b"], ValueError, "pontuações em vez dos pesos"),
    (np.full(3, 1 / 3), ["a", "b", "c"], ValueError, r"\(n_q, n_k\)"),
    (np.full((2, 2), 0.5), "ab", TypeError, "lista de tokens"),
    (np.full((2, 2), np.nan), ["a", "b"], ValueError, "NaN"),
])
def test_entradas_ruins(weights, tokens, exc, msg):
    with pytest.raises(exc, match=msg):
        atencao.plot_attention(weights, tokens)



def _framed(ax):
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    return sorted((round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in boxes)


def test_destaque_ignorando_o_proprio_token_e_empates():
    W = np.array([[0.6, 0.3, 0.1], [0.2, 0.4, 0.4], [0.1, 0.2, 0.7]])
    _, ax = atencao.plot_attention(W, ["a", "b", "c"])
    assert _framed(ax) == [(0, 0), (1, 1), (1, 2), (2, 2)]          # empate na linha b: as duas
    _, ax = atencao.plot_attention(W, ["a", "b", "c"], ignore_self=True)
    assert _framed(ax) == [(0, 1), (1, 2), (2, 1)]
    expected = [(q, k) for q, k, _ in atencao.strongest_attention(W, ["a", "b", "c"], ignore_self=True)]
    assert expected == [("a", "b"), ("b", "c"), ("c", "b")]


def test_mascara_deixa_bloqueados_em_cinza_sem_numero():
    W = atencao.self_attention(np.eye(3), mask=atencao.causal_mask(3))[1]
    _, ax = atencao.plot_attention(W, ["a", "b", "c"], mask=atencao.causal_mask(3))
    data = ax.images[0].get_array()
    assert data.mask[0, 1] and data.mask[0, 2] and not data.mask[1, 0]
    assert len(ax.texts) == 6  # só o triângulo de baixo (com a diagonal) tem números
