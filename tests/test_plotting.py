"""Mapas de calor (Aula 1, 02-codigo e 04-projeto; Aula 2, várias cabeças)."""

import warnings

import numpy as np
import pytest
from matplotlib.patches import Rectangle

import atencao
from atencao import _layout
from atencao.plotting import text_color


def _weights(n=4, seed=0):
    rng = np.random.default_rng(seed)
    return atencao.softmax(rng.normal(size=(n, n)) * 2)


def test_um_mapa_com_rotulos_centrados_maximos_destacados_e_barra_de_cores():
    tokens = ["o", "coração", "não", "ação"]
    W = _weights()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inclusive "Glyph missing" para os acentos
        # menos as obsolescências entre dependências (o pyparsing novo avisa o matplotlib 3.8, o mínimo do curso)
        warnings.simplefilter("ignore", DeprecationWarning)
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
    assert text_color(cmap(0.0)) == "white"   # roxo escuro
    assert text_color(cmap(1.0)) == "black"   # amarelo claro


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


def test_desenha_num_eixo_de_subfigura_em_qualquer_matplotlib_da_faixa():
    """O espaço do painel vem da figura de cima, mesmo com o eixo numa SubFigure dentro de outra (o
    ``get_figure(root=True)`` do matplotlib 3.10 não existe no 3.8, o mínimo do curso)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4))
    interna = fig.subfigures(1, 2)[1].subfigures(2, 1)[0]
    ax = interna.subplots()
    result = atencao.plot_attention(_weights(3), ["a", "b", "c"], ax=ax)
    assert result.axes is ax
    from atencao.plotting import _root_figure

    assert _root_figure(ax) is fig and _root_figure(fig) is fig


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


# --- regra de tamanho (atencao._layout): cabe em 1000 px, texto ≥ 8 pt, nada cortado -----------------


TOKENS_AULA3 = ["<s>", "▁O", "▁gato", "▁pul", "ou", "▁no", "▁muro", "▁porque", "▁ele", "▁estava", "▁as", "sust",
                "ado", "</s>"]


def _heads(n_heads, n, seed=0):
    return atencao.softmax(np.random.default_rng(seed).normal(size=(n_heads, n, n)) * 2)


FIGURAS = {  # casos que o aluno encontrou e os tamanhos típicos do curso
    "rótulo longo com duas palavras": lambda: atencao.plot_attention(
        _weights(3), ["eu", "inconstitucionalissimamente", "ri"], title="uma palavra comprida"),
    "12 cabeças × 14 tokens, ncols=4": lambda: atencao.plot_attention_heads(
        _heads(12, 14), TOKENS_AULA3, ncols=4, suptitle="As 12 cabeças da camada 8: “O gato pulou no muro porque "
                                                         "ele estava assustado”"),
    "3 painéis × 14 tokens": lambda: atencao.plot_attention_heads(
        _heads(3, 14), TOKENS_AULA3, ncols=3, titles=["Aula 1: Q = K = V = X", "treinada: camada 1, cabeça 10",
                                                      "treinada: camada 8, cabeça 8"]),
    "4 cabeças × 12 tokens com números": lambda: atencao.plot_attention_heads(_heads(4, 12), list("abcdefghijkl")),
    "64 tokens": lambda: atencao.plot_attention(_weights(64), [f"t{i}" for i in range(64)]),
    "título geral longo": lambda: atencao.plot_attention_heads(
        _heads(2, 4), list("abcd"), suptitle="um título geral bem comprido " * 6),
}


#: as duas maiores ficam no make test-lento (a CI roda os dois níveis)
_PESADAS = {"12 cabeças × 14 tokens, ncols=4", "64 tokens"}


@pytest.fixture(scope="module", ids=list(FIGURAS), params=[
    pytest.param(nome, marks=pytest.mark.lento) if nome in _PESADAS else nome for nome in FIGURAS])
def figura(request):
    """Cada figura desenhada uma vez para os três testes de tamanho (só leem e salvam; nenhum a muda)."""
    import matplotlib.pyplot as plt

    fig = FIGURAS[request.param]().fig
    yield fig
    plt.close(fig)


def _display_scale(fig):
    """Fator com que o notebook (1000 px de largura) mostra a figura: 1 se ela cabe."""
    return min(1.0, _layout.NOTEBOOK_WIDTH_PX / (fig.get_figwidth() * fig.dpi))


def test_figura_cabe_na_largura_do_notebook(figura):
    import io

    figura.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # como o backend inline mostra
    assert figura.get_figwidth() * figura.dpi <= _layout.NOTEBOOK_WIDTH_PX
    assert figura.get_tightbbox().width <= _layout.MAX_WIDTH_IN + 0.05


def test_savefig_simples_nao_corta_rotulos(figura):
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figura)  # a figura é compartilhada e já saiu do pyplot: um canvas próprio
    figura.savefig(io.BytesIO(), format="png")  # sem bbox_inches
    canvas.draw()
    renderer = canvas.get_renderer()
    inside = figura.bbox.padded(1)  # 1 px de tolerância
    for ax in figura.axes:
        for artist in [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts,
                       *ax.get_xticklabels(), *ax.get_yticklabels()]:
            if artist.get_visible() and artist.get_text():
                box = artist.get_window_extent(renderer)
                assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1), artist.get_text()
    if figura._suptitle is not None:
        box = figura._suptitle.get_window_extent(renderer)
        assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1)


def test_texto_nunca_menor_que_8_pt_no_tamanho_de_exibicao(figura):
    from matplotlib.text import Text

    scale = _display_scale(figura)
    sizes = [t.get_fontsize() * scale for t in figura.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert sizes and min(sizes) >= _layout.MIN_FONT_PT - 1e-9


def test_display_font_pt_reduz_figuras_largas():
    assert _layout.display_font_pt(10, 20.0) == pytest.approx(5.0)  # 2000 px mostrados em 1000 px
    assert _layout.display_font_pt(10, 8.0) == 10


def test_rotulo_longo_nao_espreme_as_celulas_nem_sobrepoe_numeros():
    import matplotlib.pyplot as plt

    tokens = ["eu", "inconstitucionalissimamente", "ri"]
    fig, ax = atencao.plot_attention(_weights(3), tokens)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    cell_in = ax.get_window_extent(renderer).width / 3 / fig.dpi
    number_in = max(t.get_window_extent(renderer).width for t in ax.texts) / fig.dpi
    assert cell_in >= number_in + 0.05  # o número cabe na célula, com folga
    for row in range(3):
        boxes = sorted((t.get_window_extent(renderer) for t in ax.texts if round(t.get_position()[1]) == row),
                       key=lambda b: b.x0)
        assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:]))  # números vizinhos não se tocam
    plt.close(fig)


def test_grade_larga_quebra_em_linhas_equilibradas_sem_perder_paineis():
    fig, axes = atencao.plot_attention_heads(_heads(4, 14), TOKENS_AULA3, ncols=4)
    assert axes.shape == (2, 2) and all(ax.images for ax in axes.ravel())
    fig, axes = atencao.plot_attention_heads(_heads(12, 14), TOKENS_AULA3, ncols=4)
    assert axes.shape[1] < 4 and sum(1 for ax in axes.ravel() if ax.images) == 12


def test_numeros_pedidos_que_nao_cabem_avisam():
    with pytest.warns(UserWarning, match="annotate=True.*trecho da frase"):
        _, ax = atencao.plot_attention(_weights(40), [f"t{i}" for i in range(40)], annotate=True)
    assert not ax.texts


# --- linha bloqueada: nenhum maior peso ------------------------------------------------------------------

def _padded():
    """Três tokens, o último é preenchimento: não olha para ninguém e ninguém olha para ele."""
    real = np.array([True, True, False])
    mask = real[:, None] & real[None, :]
    _, W = atencao.self_attention(np.random.default_rng(1).normal(size=(3, 4)), mask=mask)
    return W, mask, ["o", "gato", "<pad>"]


@pytest.mark.parametrize("com_mascara", [True, False], ids=["mask=", "pesos zero"])
def test_linha_bloqueada_sem_moldura(com_mascara):
    W, mask, tokens = _padded()
    assert not W[2].any()
    _, ax = atencao.plot_attention(W, tokens, mask=mask if com_mascara else None)
    framed = _framed(ax)
    assert [r for r, _ in framed] == [0, 1]  # uma moldura nas linhas 0 e 1, nenhuma na linha bloqueada
    assert not any(t.get_fontweight() == "bold" for t in ax.texts if round(t.get_position()[1]) == 2)


def test_row_maxima_linha_bloqueada_e_so_o_proprio_token():
    from atencao.plotting import row_maxima

    W = np.array([[np.nan, np.nan], [0.3, 0.7]])
    assert not row_maxima(W)[0].any() and row_maxima(W)[1].tolist() == [False, True]
    causal = np.array([[1.0, 0.0], [0.4, 0.6]])  # primeira linha: só olha para si
    assert row_maxima(causal, ignore_self=True).tolist() == [[False, False], [True, False]]
    assert row_maxima(np.zeros((2, 2))).sum() == 0


# --- rótulos literais -----------------------------------------------------------------------------------

def test_rotulos_aparecem_literalmente():
    tokens = ["$x$", "a_b", "50%", "\\n", "😀", "linha\nnova"]
    W = atencao.softmax(np.random.default_rng(0).normal(size=(6, 6)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig, ax = atencao.plot_attention(W, tokens)
        fig.canvas.draw()
    expected = ["$x$", "a_b", "50%", "\\n", "😀", "linha\\nnova"]  # a quebra de linha aparece como \n
    for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        assert [t.get_text() for t in labels] == expected
        assert not any(t.get_parse_math() for t in labels)  # sem mathtext: $x$ não vira um x itálico
    assert atencao.plotting.token_label("a\tb") == "a\\tb"


def test_pyplot_liga_a_exibicao_inline_se_o_jupyter_ainda_nao_ligou(monkeypatch):
    """No matplotlib 3.8 a primeira figura do notebook, desenhada pela biblioteca, aparecia uma célula atrasada:
    ``pyplot()`` liga a exibição do backend inline na hora, só quando ela falta (no 3.9+ já vem ligada), e
    nunca fora do Jupyter (o nbval de ``make test-minimo`` confere os notebooks de verdade)."""
    import sys
    import types

    import matplotlib
    import matplotlib.pyplot as plt
    import matplotlib_inline.backend_inline as inline
    from IPython.core import pylabtools

    from atencao.plotting import pyplot

    chamadas = []
    monkeypatch.setattr(pylabtools, "activate_matplotlib", lambda backend: chamadas.append(("ativar", backend)))
    monkeypatch.setattr(inline, "configure_inline_support", lambda shell, backend: chamadas.append(("ligar", backend)))
    callbacks = {"post_execute": []}
    shell = types.SimpleNamespace(events=types.SimpleNamespace(callbacks=callbacks))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))

    assert pyplot() is plt and chamadas == []  # o backend destes testes é o Agg: nada a ligar
    monkeypatch.setitem(matplotlib.rcParams, "backend", "module://matplotlib_inline.backend_inline")
    assert pyplot() is plt
    assert chamadas == [("ativar", "module://matplotlib_inline.backend_inline"),
                        ("ligar", "module://matplotlib_inline.backend_inline")]
    callbacks["post_execute"].append(inline.flush_figures)  # já ligada (matplotlib 3.9+): nada muda
    assert pyplot() is plt and len(chamadas) == 2
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    callbacks["post_execute"].clear()
    assert pyplot() is plt and len(chamadas) == 2  # fora do Jupyter
