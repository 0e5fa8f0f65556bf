"""Explorador interativo: o cálculo puro, o HTML e a ligação dos widgets (sem navegador)."""

import re

import numpy as np
import pytest

import atencao
from atencao.explorer import AttentionExplorer, explorar, explorer_view
from atencao.rendering import draw_explorer, explorer_html, side_panel
from atencao.views import explorer_embeddings

FRASE = "O gato subiu no telhado e o cão dormiu no sofá"


def _cells(html):
    """(i, j, peso, bloqueado) de cada célula do primeiro mapa."""
    return [(i, j, w, cls == "blocked") for i, j, w, cls in _cells_with_class(html)]


def _cells_with_class(html):
    """(i, j, peso, classe) de cada célula do primeiro mapa (classe: '', 'max' ou 'blocked')."""
    first = html.split("<table class='heat", 2)[1]
    return [(int(i), int(j), float(w), cls)
            for cls, i, j, w in re.findall(r"<td(?: class='(\w+)')? data-i='(\d+)' data-j='(\d+)' data-w='([\d.]+)'",
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
    unscaled = explorer_view(FRASE, mode="multi", head=0, sqrt_dk=False)
    assert unscaled.shown.max(axis=1).mean() > base and "SEM ÷√d_k" in unscaled.title


@pytest.mark.parametrize("mode, d_k", [("aula1", 16), ("cabeca", 8), ("multi", 4)])
@pytest.mark.parametrize("sqrt_dk", [True, False])
def test_temperatura_vira_o_scale_da_atencao(mode, d_k, sqrt_dk):
    """Os controles viram ``scale = 1 / (temperatura · √d_k)`` (sem √d_k com a caixa desligada), com o d_k do modo."""
    X = explorer_embeddings(atencao.tokenize(FRASE))
    scale = 1 / (0.5 * (np.sqrt(d_k) if sqrt_dk else 1.0))
    layer = {"aula1": lambda X, scale: atencao.scaled_dot_product_attention(X, X, X, scale=scale),
             "cabeca": atencao.SelfAttention(16, 8, seed=0), "multi": atencao.MultiHeadAttention(16, 4, seed=0)}[mode]
    _, W = layer(X, scale=scale)
    v = explorer_view(FRASE, mode=mode, head="todas", sqrt_dk=sqrt_dk, temperature=0.5)
    np.testing.assert_allclose(v.weights, W.reshape(-1, *W.shape[-2:]), atol=1e-12)


@pytest.mark.parametrize("mode", ["aula1", "cabeca", "multi"])
def test_posicoes_separam_a_mesma_palavra_em_dois_lugares(mode):
    sem = explorer_view("o gato viu o gato", mode=mode)
    com = explorer_view("o gato viu o gato", mode=mode, positions=True)
    np.testing.assert_allclose(sem.shown[1], sem.shown[4])  # as duas "gato": a mesma linha sem posição
    assert not np.allclose(com.shown[1], com.shown[4]) and "com posições (PE)" in com.title
    X = explorer_embeddings(sem.tokens) + atencao.positional_encoding(5, 16)
    if mode == "aula1":  # Q = K = V = X + PE: a conta da Aula 1 com a soma da Aula 4
        _, W = atencao.scaled_dot_product_attention(X, X, X)
        np.testing.assert_allclose(com.shown, W)
        assert com.shown[1, 1] > 2 * com.shown[1, 4]  # "gato" 1 olha mais para si que para o outro "gato"


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


def test_posicoes_precisa_ser_verdadeiro_ou_falso():
    with pytest.raises(TypeError, match="`positions` precisa ser True ou False; recebido 'sim'"):
        explorer_view(FRASE, positions="sim")


# ---------- HTML ----------
def test_html_tem_uma_celula_por_par_e_maximo_destacado():
    v = explorer_view("o gato pulou", query=0)
    html = explorer_html(v)
    cells = _cells(html)
    assert len(cells) == 9
    w = {(i, j): x for i, j, x, _ in cells}
    np.testing.assert_allclose([[w[i, j] for j in range(3)] for i in range(3)], v.shown, atol=1e-4)
    assert sum(cls == "max" for *_, cls in _cells_with_class(html)) == 3
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
    ex.sqrt_dk.value = False
    ex.temperature.value = 0.2
    assert "SEM ÷√d_k" in ex.view.title and "temperatura 0.2" in ex.view.title
    ex.positions.value = True
    assert "com posições (PE)" in ex.view.title and ex.view.settings["positions"] is True


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


@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_muitas_atualizacoes_nao_vazam_figuras(ex):
    import matplotlib.pyplot as plt

    fig = ex.fig
    before = plt.get_fignums()
    for k in range(12):  # todas as combinações de cabeça e máscara, duas figuras estáticas
        ex.update(query=k % 11, causal=bool(k % 2), head=["media", "todas", 0, 1][k % 4])
        if k % 10 == 0:
            ex.static_bundle()
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


def _displayed(obj, monkeypatch):
    """As saídas que ``display(obj)`` publicaria no notebook (bundles, na ordem)."""
    import IPython.display

    published = []
    monkeypatch.setattr(IPython.display, "display", lambda data, raw=False, **kw: published.append(data))
    obj._ipython_display_()
    return published


def test_notebook_guarda_figura_estatica_antes_do_widget(ex, monkeypatch):
    static, live = _displayed(ex, monkeypatch)
    # 1ª saída: a figura (o que fica visível quando o notebook é reaberto sem o widget)
    assert set(static) == {"text/html", "text/plain"}
    assert re.search(r'<div class="atx-static"><img alt="[^"]+" src="data:image/png;base64,iVBOR', static["text/html"])
    assert ":not(:has(.atx))" in static["text/html"]  # esconde o "model not found" da saída seguinte
    assert static["text/plain"].startswith("Explorador de atenção — 4 cabeças")
    # 2ª saída: só o widget (texto vazio: nada de "VBox(children=...)" onde não há widgets)
    assert set(live) == {"application/vnd.jupyter.widget-view+json", "text/plain"} and live["text/plain"] == ""
    assert live["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    # o widget vivo esconde a figura estática logo antes dele
    assert ".jp-OutputArea-child:has(.atx-static):has(+ .jp-OutputArea-child .atx)" in ex.view_html.value
    assert "0x" not in static["text/plain"] and "0x" not in repr(ex)


def test_retorno_da_correcao_mostra_a_figura_sem_o_css(ex, monkeypatch, tmp_path):
    import nbformat

    from correcao.relatorio import notebook_body

    outputs = [nbformat.v4.new_output("display_data", data=data) for data in _displayed(ex, monkeypatch)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("atencao.explorar()", outputs=outputs)])
    nbformat.write(nb, tmp_path / "nb.ipynb")
    body = notebook_body(tmp_path / "nb.ipynb")
    assert re.search(r'<img [^>]*src="data:image/png;base64', body)
    assert "jp-OutputArea-child" not in body and "style&gt;" not in body and "widget-view" not in body


def test_draw_explorer_desenha_grade_e_barras(ex):
    ex.update(head="todas")
    draw_explorer(ex.fig, ex.view)
    left, right = ex.fig.subfigs
    assert sum(1 for a in left.axes if a.images) == 4
    assert sum(1 for a in right.axes if a.patches) == 1 and len(right.axes[0].patches) == 11  # uma barra por token


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


# ---------- estrutura ----------
def test_api_publica_sem_ajudantes_internos():
    import atencao.explorer
    import atencao.model_explorer
    import atencao.rendering
    import atencao.views
    from atencao.explorer_widget import ExplorerWidget

    assert set(atencao.explorer.__all__) == {"AttentionExplorer", "explorar", "explorer_view", "ExplorerView"}
    assert set(atencao.model_explorer.__all__) == {"ModelExplorer", "explorar_modelo", "model_view"}
    for module in (atencao.explorer, atencao.model_explorer, atencao.rendering, atencao.views):
        assert not {"top_tokens", "render_png", "side_panel", "thumbnails_rgb"} & set(module.__all__)
    assert issubclass(atencao.explorer.AttentionExplorer, ExplorerWidget)
    assert issubclass(atencao.model_explorer.ModelExplorer, ExplorerWidget)
    assert atencao.model_explorer.model_view is atencao.views.model_view


def test_update_recusa_controle_inexistente_e_valor_fora_das_opcoes(ex):
    with pytest.raises(ValueError, match="`camada` não é um controle"):
        ex.update(camada=2)
    with pytest.raises(ValueError, match="`query` não aceita 99"):
        ex.update(query=99)


# ---------- textos e casos de borda ----------
def test_erro_nomeia_o_campo_que_o_aluno_ve(ex):
    ex.update(sentence="")
    assert "“Frase” não tem nenhuma palavra" in ex.message.value and "`sentence`" not in ex.message.value


def test_painel_lateral_diz_o_mesmo_no_html_e_no_png(ex):
    from matplotlib.text import Text

    ex.update(query=4)
    side = side_panel(ex.view)
    assert side.output_label == "saída de “telhado” (6 primeiras coordenadas):"
    html = ex.view_html.value
    assert side.output_label in html.replace("&quot;", '"') and "saída[:" not in html
    texts = " ".join(" ".join(t.get_text().split()) for t in ex.draw().findobj(Text))  # quebras de linha → espaço
    assert side.output_label in texts and " ".join(side.output.split()) in texts and "saída[:" not in texts
    assert len(side.output.strip("[]").split()) == 6


def _padding_view():
    """Visão com a consulta 2 toda bloqueada (um token de preenchimento olhando para nada)."""
    from dataclasses import replace

    v = explorer_view(FRASE, causal=True, query=2)
    allowed = v.allowed.copy()
    allowed[2] = False
    row = np.zeros(len(v.tokens))
    shown = v.shown.copy()
    shown[2] = 0.0
    return replace(v, allowed=allowed, shown=shown, row=row, top=[], output=np.zeros_like(v.output))


def test_linha_toda_bloqueada_sem_moldura_e_descrita_como_bloqueada():
    v = _padding_view()
    assert list(np.flatnonzero(v.blocked_rows)) == [2]
    cells = _cells_with_class(explorer_html(v))
    assert [cls for i, _, _, cls in cells if i == 2] == ["blocked"] * 11  # nenhuma 'max' na linha 2
    assert all(any(cls == "max" for i, _, _, cls in cells if i == r) for r in (0, 1, 3))
    html = explorer_html(v)
    assert "<tr class='query blockedrow'>" in html and "linha toda bloqueada" in html
    assert "class='b max'" not in html  # nenhuma barra vermelha de "maior peso"
    assert "bloqueada" in side_panel(v).heading


def test_png_linha_toda_bloqueada_sem_moldura():
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    fig = Figure(layout="constrained")
    v = _padding_view()
    draw_explorer(fig, v)
    heat = next(a for a in fig.subfigs[0].axes if a.images)
    red = matplotlib.colors.to_rgb(atencao.plotting.HIGHLIGHT_COLOR)
    frames = [p for p in heat.patches if isinstance(p, Rectangle) and np.allclose(p.get_edgecolor()[:3], red)]
    rows = sorted({int(round(p.get_y() + 0.5)) for p in frames})
    assert 2 not in rows and {0, 1, 3} <= set(rows)
    bars = next(a for a in fig.subfigs[1].axes if a.patches)
    assert not any(np.allclose(b.get_facecolor()[:3], red) for b in bars.patches)
    assert "bloqueada" in bars.get_title()


def test_celulas_anotadas_cabem_o_numero_em_negrito():
    """Com "todas" as cabeças os números continuam inteiros: a célula tem a largura de "1.00" em negrito."""
    html = explorer_html(explorer_view("o gato dormiu no sofá da sala", mode="multi", head="todas"))
    assert set(re.findall(r"--cell:(\d+)px", html)) == {"32"} and html.count("<table class='heat'") == 4
    assert len(re.findall(r"<td class='max'[^>]*>\d\.\d\d</td>", html)) >= 4 * 7  # números nas molduras
    assert "max-height: 640px" not in html and "overflow: auto" not in html  # sem caixa de rolagem interna


def test_erro_ao_salvar_a_figura_em_portugues(ex, tmp_path):
    """Uma pasta que não existe e não pode ser criada: a mensagem do explorador é a traduzida, não a do Python."""
    (tmp_path / "arquivo").write_text("não é pasta")
    ex.filename.value = str(tmp_path / "arquivo" / "figura")
    assert ex.export("png") is None
    assert "Não foi possível salvar: já existe um arquivo com este nome" in ex.message.value
