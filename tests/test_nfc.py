"""O mesmo texto, digitado com acentos compostos (NFC) ou colado decomposto (NFD, macOS e PDFs), dá
exatamente o mesmo resultado em toda entrada de texto: tokens, vetores, pesos, rótulos e o aluno da correção."""

import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

import atencao
from atencao.embeddings import word_vector
from atencao.explorer import explorer_embeddings, explorer_view
from atencao.model_explorer import model_view

FRASE = "O coração não esquece a saudade"
TOKENS = ["o", "coração", "não", "esquece", "a", "saudade"]
ROOT = Path(__file__).resolve().parents[1]


def _nfd(texto: str) -> str:
    return unicodedata.normalize("NFD", texto)


def _iguais(a, b) -> bool:
    """Igualdade que entra em tuplas, listas e arrays (o mesmo valor, bit a bit)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_iguais(x, y) for x, y in zip(a, b))
    return a == b


def _rotulos(plot) -> tuple:
    ax = plot.axes
    return [t.get_text() for t in ax.get_xticklabels()], [t.get_text() for t in ax.get_yticklabels()]


def _pesos(frase):
    tokens, X = atencao.embed(frase)
    return atencao.self_attention(X)[1]


def _view(frase):
    v = explorer_view(frase, mode="multi", query=1)
    return v.tokens, v.weights, v.shown, v.row, v.top, v.output, v.title


def _igual(x):
    return x


def _saude(forma):
    return atencao.embed(forma(FRASE + " saúde"), vectors={forma("saúde"): [1.0] * 6})


# cada entrada recebe a forma do texto (composto ou decomposto) e devolve o que o aluno vê
ENTRADAS = {
    "tokenize": lambda forma: atencao.tokenize(forma(FRASE)),
    "embed(frase)": lambda forma: atencao.embed(forma(FRASE)),
    "embed(lista de tokens)": lambda forma: atencao.embed([forma(t) for t in TOKENS]),
    "embed(vectors=dict)": _saude,
    "embed_hashed(frase)": lambda forma: atencao.embed_hashed(forma(FRASE), d_model=8),
    "embed_hashed(tokens)": lambda forma: atencao.embed_hashed([forma(t) for t in TOKENS], d_model=8),
    "word_vector": lambda forma: [word_vector(forma(t), 8) for t in TOKENS],
    "explorer_embeddings": lambda forma: explorer_embeddings([forma(t) for t in TOKENS]),
    "explorer_view": lambda forma: _view(forma(FRASE)),
    "plot_attention (rótulos)": lambda forma: _rotulos(
        atencao.plot_attention(_pesos(FRASE), [forma(t) for t in TOKENS])),
    "ascii_heatmap": lambda forma: atencao.ascii_heatmap(_pesos(FRASE), [forma(t) for t in TOKENS]),
    "format_weights": lambda forma: atencao.format_weights(_pesos(FRASE), [forma(t) for t in TOKENS]),
    "strongest_attention": lambda forma: atencao.strongest_attention(_pesos(FRASE), [forma(t) for t in TOKENS],
                                                                     ignore_self=True),
    "attention_summary": lambda forma: atencao.attention_summary(_pesos(FRASE), [forma(t) for t in TOKENS]),
}


@pytest.mark.parametrize("nome", ENTRADAS)
def test_texto_decomposto_da_o_mesmo_resultado(nome):
    assert _nfd(FRASE) != FRASE  # a entrada decomposta é mesmo outra sequência de caracteres
    composto, decomposto = ENTRADAS[nome](_igual), ENTRADAS[nome](_nfd)
    assert _iguais(decomposto, composto), (nome, decomposto, composto)


def test_tokenize_devolve_os_tokens_compostos():
    assert atencao.tokenize(_nfd(FRASE)) == TOKENS


# ---------- o modelo de verdade (Aula 3) ----------
MODELO = {
    "tokenizer.encode": lambda enc, f: enc.tokenizer.encode(f),
    "tokenizer.tokenize": lambda enc, f: enc.tokenizer.tokenize(f),
    "encoder(frase)": lambda enc, f: (lambda out: (out.tokens, out.ids, out.attentions))(enc(f)),
    "model_view": lambda enc, f: (lambda v: (v.tokens, v.shown, v.row, v.top, v.title))(
        model_view(enc, f, layer=3, head=2, query=2)),
}


@pytest.mark.parametrize("nome", MODELO)
@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_modelo_de_verdade_com_texto_decomposto(enc, nome):
    frase = "Não deixe o coração decidir sozinho: a ação é tudo!"
    composto, decomposto = MODELO[nome](enc, frase), MODELO[nome](enc, _nfd(frase))
    assert _iguais(decomposto, composto)


def test_tokenizador_do_modelo_nao_gera_unk_com_acentos_decompostos(enc):
    pecas = enc.tokenizer.tokenize(_nfd(FRASE))
    assert "<unk>" not in pecas and "▁coração" in pecas


# ---------- a verificação do projeto da Aula 1 ----------
def proj_com_tokens_decompostos(frase, vectors=None):
    """Um visualizador certo cujo texto (tokens, destaques e resumo) sai decomposto, como colado de um PDF."""
    tokens = [_nfd(t) for t in atencao.tokenize(frase)]
    vectors = None if vectors is None else {_nfd(k): v for k, v in vectors.items()}
    tokens, X = atencao.embed(tokens, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, [_nfd(t) for t in tokens])
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        linha[i] = -np.inf
        j = int(np.argmax(linha))
        destaques.append((_nfd(t), _nfd(tokens[j]), float(A[i, j])))
    print("\n".join(f"{_nfd(t)} → {_nfd(o)} ({w:.2f})" for t, o, w in destaques))
    return [_nfd(t) for t in tokens], A, destaques


def test_verificacao_do_projeto_aceita_texto_decomposto():
    from atencao.checks import aula01

    assert aula01.projeto(proj_com_tokens_decompostos)


def test_normalizar_nao_depende_de_unicodedata_trocado_depois(monkeypatch):
    """Uma célula que troque ``unicodedata.normalize`` não muda os tokens (nem, com eles, as verificações)."""
    decomposta = _nfd(FRASE)
    monkeypatch.setattr(unicodedata, "normalize", lambda forma, texto: "gato")
    assert atencao.tokenize(decomposta) == TOKENS


# ---------- a correção: o mesmo aluno, e a cópia apontada ----------
def _correcao():
    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo import gerar

    from correcao import catalogo, entregas

    g = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
    return gerar, catalogo, entregas, g


@pytest.mark.parametrize("forma", ["zip", "pasta"])
def test_joao_em_nfd_e_em_nfc_e_o_mesmo_aluno(tmp_path, forma):
    gerar, catalogo, entregas, g = _correcao()
    nb = g.source.read_bytes()
    membros = [(f"{_nfd('João')}/03-exercicios.ipynb", nb), ("João/03-exercicios.ipynb", nb),
               (f"{_nfd('João')}/{_nfd('Cópia de 03-exercícios')}.ipynb", nb), ("bruno/03-exercicios.ipynb", nb)]
    if forma == "zip":
        origem = tmp_path / "turma.zip"
        origem.write_bytes(gerar._zip([(f"turma/{nome}", dados) for nome, dados in membros]))
    else:
        origem = tmp_path / "turma"
        for nome, dados in membros:
            (origem / nome).parent.mkdir(parents=True, exist_ok=True)
            (origem / nome).write_bytes(dados)
    ent = entregas.read_submissions(origem, tmp_path / "tmp")
    assert ent.alunos == sorted(["bruno", "João"])
    assert all(a.aluno == unicodedata.normalize("NFC", a.aluno) for a in ent.arquivos)
    do_joao = sorted(a.caminho for a in ent.arquivos if a.aluno == "João")
    assert do_joao == ["03-exercicios.ipynb", "03-exercicios.ipynb", "Cópia de 03-exercícios.ipynb"]
    assert (catalogo.base_name(_nfd("Cópia de 03-exercícios.ipynb"))
            == catalogo.base_name("Cópia de 03-exercícios.ipynb"))


def test_copias_com_o_mesmo_nome_em_nfd_e_nfc_sao_apontadas(tmp_path):
    gerar, catalogo, entregas, g = _correcao()
    motor = pytest.importorskip("correcao.motor")
    from correcao.relatorio import Row

    nb = g.source.read_bytes()
    origem = tmp_path / "turma.zip"
    origem.write_bytes(gerar._zip([(f"{_nfd('João')}/03-exercicios.ipynb", nb), ("João/03-exercicios.ipynb", nb),
                                   ("bruno/03-exercicios.ipynb", nb)]))
    ent = entregas.read_submissions(origem, tmp_path / "tmp")
    plano, linhas, _ = motor.plan_class(ent, catalogo.catalog(), tmp_path / "saneados")
    assert not linhas and sorted(e.student for e in plano) == sorted(["bruno", "João", "João"])
    rows = [Row(e.student, e.g.assignment, e.g.notebook, arquivo=e.file) for e in plano]
    motor._mark_copies(rows)
    joao = [r for r in rows if r.student == "João"]
    assert all(any("2 cópias" in m and "dois jeitos" in m for m in r.reasons) for r in joao), [r.reasons for r in joao]
    assert not next(r for r in rows if r.student == "bruno").reasons
