"""Explorador interativo: o cálculo puro, o HTML e a ligação dos widgets (sem navegador)."""

import re

import numpy as np
import pytest

import atencao
from atencao.explorer import (AttentionExplorer, draw_explorer, explorar, explorer_embeddings, explorer_html,
                              explorer_view)

FRASE = "O gato subiu no telhado e o cão dormiu no sofá"


def _cells(html):
    """(i, j, peso, bloqueado) de cada célula do primeiro mapa."""
    first = html.split("<table", 2)[1]
    return [(int(i), int(j), float(w), "blocked" in cls)
            for cls, i, j, w in re.findall(r"<td (class='blocked' )?data-i='(\d+)' data-j='(\d+)' data-w='([\d.]+)'",
                                           first)]


# ---------- cálculo puro ----------
def test_embeddings_usam_vetores_feitos_a_mao_e_separam_palavras_novas():
    X = explorer_embeddings(["gato", "felino", "zebra"], d_model=16)
    np.testing.assert_array_equal(X[0, :6], atencao.HAND_MADE_VECTORS["gato"])
    assert np.all(X[0, 6:] == 0) and np.all(X[2, :6] == 0)   # palavra nova não se parece com as conhecidas
    assert abs(np.linalg.norm(X[2]) - 2) < 1.5
    with pytest.raises(ValueError, match="`d_model`"):
        explorer_embeddings(["a"], d_model=6)


def test_modo_aula1_e_a_self_attention_da_aula():
    v = explorer_view(FRASE, mode="aula1")
    tokens, _ = atencao.tokenize(FRASE), None
    X = explorer_embeddings(tokens)
    np.testing.assert_allclose(v.shown, atencao.self_attention(X)[1])
    assert v.weights.shape == (1, 11, 11) and v.tokens == tokens


def test_modo_multi_cabeca_cabeca_media_e_todas():
    X = explorer_embeddings(atencao.tokenize(FRASE))
    mha = atencao.MultiHeadAttention(16, 4, seed=0)
    out, W = mha(X)
    v = explorer_view(FRASE, mode="multi", head=2, query=1)
    np.testing.assert_allclose(v.shown, W[2])
    np.testing.assert_allclose(v.row, W[2, 1])
    np.testing.assert_allclose(v.output, out[1])
    assert explorer_view(FRASE, mode="multi", head="todas").shown.shape == (4, 11, 11)
    np.testing.assert_allclose(explorer_view(FRASE, mode="multi").shown, W.mean(0))


def test_mascara_causal_zera_o_triangulo_superior():
    v = explorer_view(FRASE, mode="cabeca", causal=True)
    assert np.all(np.triu(v.shown, 1) == 0) and v.allowed is not None
    assert "máscara causal" in v.title


def test_sem_escala_e_temperatura_baixa_saturam_a_softmax():
    base = explorer_view(FRASE, mode="multi", head=0).shown.max(axis=1).mean()
    cold = explorer_view(FRASE, mode="multi", head=0, temperature=0.1).shown.max(axis=1).mean()
    hot = explorer_view(FRASE, mode="multi", head=0, temperature=10).shown.max(axis=1).mean()
    assert hot < base < cold
    unscaled = explorer_view(FRASE, mode="multi", head=0, scale=False)
    assert unscaled.shown.max(axis=1).mean() > base and "SEM ÷√d_k" in unscaled.title


def test_top_k_e_consulta():
    v = explorer_view(FRASE, query=1, top_k=3)
    assert len(v.top) == 3 and v.top[0][1] == pytest.approx(v.row.max())
    assert [w for _, w in v.top] == sorted([w for _, w in v.top], reverse=True)


@pytest.mark.parametrize("kwargs, msg", [
    (dict(sentence="?!"), "nenhuma palavra"),
    (dict(sentence=FRASE, mode="xyz"), "`mode`"),
    (dict(sentence=FRASE, query=99), "`query`"),
    (dict(sentence=FRASE, mode="multi", head=9), "`head`"),
    (dict(sentence=FRASE, temperature=0), "`temperature`"),
])
def test_entradas_ruins(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        explorer_view(**kwargs)


# ---------- HTML ----------
def test_html_tem_uma_celula_por_par_e_maximo_destacado():
    v = explorer_view("o gato pulou", query=0)
    html = explorer_html(v)
    cells = _cells(html)
    assert len(cells) == 9
    w = {(i, j): x for i, j, x, _ in cells}
    np.testing.assert_allclose([[w[i, j] for j in range(3)] for i in range(3)], v.shown, atol=1e-4)
    assert html.count("outline:2px solid") == 3
    assert "“o” olha para…" in html


def test_html_mascara_causal_deixa_triangulo_superior_bloqueado():
    cells = _cells(explorer_html(explorer_view(FRASE, causal=True)))
    assert all(blocked == (j > i) for i, j, _, blocked in cells)


def test_html_escapa_tokens():
    v = explorer_view("a b c")
    v.tokens = ["a", "<script>", "c"]
    html = explorer_html(v)
    assert "<script>" not in html and "&lt;script&gt;" in html


# ---------- widgets ----------
@pytest.fixture
def ex():
    return AttentionExplorer(FRASE, mode="multi")


def test_mudar_controles_muda_o_estado_e_a_visualizacao(ex):
    before_html, before_title = ex.view_html.value, ex.view.title
    ex.causal.value = True
    assert ex.view.title != before_title and "máscara causal" in ex.view.title
    assert ex.view_html.value != before_html and "blocked" in ex.view_html.value
    ex.head.value = 1
    np.testing.assert_allclose(ex.view.shown, ex.view.weights[1])
    ex.query.value = 4
    assert "“telhado” olha para…" in ex.view_html.value
    ex.scale.value = False
    ex.temperature.value = 0.2
    assert "SEM ÷√d_k" in ex.view.title and "temperatura 0.2" in ex.view.title


def test_nova_frase_refaz_tokens_e_consulta(ex):
    ex.query.value = 10
    ex.sentence.value = "O coração não esquece"
    assert ex.view.tokens == ["o", "coração", "não", "esquece"]
    assert ex.query.value == 0 and [label for label, _ in ex.query.options][1] == "1: coração"


def test_trocar_modo_ajusta_cabecas(ex):
    ex.mode.value = "aula1"
    assert ex.head.disabled and ex.view.weights.shape[0] == 1
    ex.mode.value = "multi"
    assert not ex.head.disabled and ex.head.value == "media"


def test_erro_no_callback_aparece_no_widget_em_portugues(ex):
    ex.sentence.value = "?!"
    assert "nenhuma palavra" in ex.message.value and "⚠️" in ex.message.value
    ex.sentence.value = "o gato"
    assert ex.message.value == "" and ex.view.tokens == ["o", "gato"]


def test_muitas_atualizacoes_nao_vazam_figuras(ex):
    import matplotlib.pyplot as plt

    fig = ex.fig
    before = plt.get_fignums()
    for k in range(30):
        ex.update(query=k % 11, causal=bool(k % 2), head=["media", "todas", 0, 1][k % 4])
        if k % 10 == 0:
            ex._repr_mimebundle_()
    assert plt.get_fignums() == before and ex.fig is fig
    assert len(fig.subfigs) == 2  # só o desenho atual


def test_exporta_png_e_svg(ex, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ex.filename.value = "figuras/minha_atencao"
    png = ex.export("png")
    svg = ex.export("svg", "outra.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert svg.name == "outra.svg" and b"<svg" in svg.read_bytes()[:500]
    assert "Figura salva em" in ex.message.value and "outra.svg" in ex.message.value
    ex.filename.value = "  "
    assert ex.export("png") is None and "nome de arquivo" in ex.message.value


def test_sem_widgets_mostra_imagem_estatica_e_texto_estavel(ex):
    bundle = ex._repr_mimebundle_()
    assert {"image/png", "text/plain", "application/vnd.jupyter.widget-view+json"} <= set(bundle)
    assert bundle["text/plain"].startswith("Explorador de atenção — 4 cabeças")
    assert "0x" not in bundle["text/plain"] and "0x" not in repr(ex)


def test_draw_explorer_desenha_grade_e_barras(ex):
    ex.update(head="todas")
    draw_explorer(ex.fig, ex.view)
    left, right = ex.fig.subfigs
    assert sum(1 for a in left.axes if a.images) == 4 and len(right.axes) == 1


def test_explorar_e_o_ponto_de_entrada():
    e = explorar("o gato", mode="cabeca")
    assert isinstance(e, AttentionExplorer) and e.view.settings["mode"] == "cabeca"


def test_top_k_nao_lista_tokens_bloqueados():
    v = explorer_view(FRASE, causal=True, query=1, top_k=5)
    assert [t for t, _ in v.top] == [t for t, _ in v.top if t in v.tokens[:2]] and len(v.top) == 2


def test_exportacao_mostra_bloqueados_em_cinza(ex):
    ex.update(causal=True, head=0)
    draw_explorer(ex.fig, ex.view)
    heat = next(a for a in ex.fig.subfigs[0].axes if a.images)
    assert heat.images[0].get_array().mask[0, -1]
