"""Embeddings feitos à mão, tokenização e saídas em texto (Aula 1)."""

import numpy as np
import pytest
from wcwidth import wcswidth

import atencao
from atencao.embeddings import UnknownTokenError


def test_gato_felino_igual_a_aula_e_copia_nova():
    tokens, E = atencao.gato_felino()
    assert tokens == ["gato", "felino", "pulou", "alto"]
    np.testing.assert_array_equal(E[1], [0.9, 0.1, 0.0, 0.0])
    E[0] = 99
    assert atencao.gato_felino()[1][0, 0] == 1.0


def test_tokenize_mantem_acentos_e_remove_pontuacao():
    assert atencao.tokenize("O coração não esquece!") == ["o", "coração", "não", "esquece"]
    with pytest.raises(ValueError, match="nenhuma palavra"):
        atencao.tokenize("?!")
    with pytest.raises(TypeError, match="sentence"):
        atencao.tokenize(42)


def test_frases_do_projeto_todas_cobertas():
    for frase in atencao.PROJECT_SENTENCES:
        tokens, X = atencao.embed(frase)
        assert X.shape == (len(tokens), len(atencao.FEATURES))


def test_vetores_proprios_por_dicionario_e_por_matriz():
    tokens, X = atencao.embed("sol lua", vectors={"sol": [1, 0], "lua": [0.9, 0.1]})
    assert tokens == ["sol", "lua"] and X.shape == (2, 2)
    tokens, X = atencao.embed(["eu", "tu"], vectors=np.eye(2))
    assert X.shape == (2, 2)
    with pytest.raises(ValueError, match=r"\(2, d\).*\(3, 2\)"):
        atencao.embed(["eu", "tu"], vectors=np.ones((3, 2)))
    with pytest.raises(ValueError, match="dimensões diferentes"):
        atencao.embed("sol lua", vectors={"sol": [1, 0], "lua": [1, 0, 0]})


def test_token_desconhecido_explica_como_fornecer_vetor():
    with pytest.raises(UnknownTokenError, match=r"\['zebra'\].*vectors="):
        atencao.embed("o zebra pulou")
    with pytest.raises(KeyError):  # continua sendo um KeyError
        atencao.embed("zebra")


def test_ascii_heatmap_alinhado_com_acentos():
    tokens = ["o", "coração", "não", "ação"]
    A = np.full((4, 4), 0.25)
    A[1] = [0.1, 0.7, 0.1, 0.1]
    text = atencao.ascii_heatmap(A, tokens)
    rows = text.splitlines()[:-1]
    assert len({wcswidth(r) for r in rows}) == 1, rows   # todas as linhas com a mesma largura
    assert "█" in rows[3]                                 # o maior peso (linha de coração) é █
    decomposed = ["o", "corac\u0327a\u0303o", "na\u0303o", "ac\u0327a\u0303o"]  # acentos combinantes (NFD)
    rows_nfd = atencao.ascii_heatmap(A, decomposed).splitlines()[:-1]
    assert [wcswidth(r) for r in rows_nfd] == [wcswidth(r) for r in rows]


def test_ascii_heatmap_entradas_ruins():
    with pytest.raises(ValueError, match="3 token"):
        atencao.ascii_heatmap(np.full((4, 4), 0.25), ["a", "b", "c"])
    with pytest.raises(TypeError, match="lista de tokens"):
        atencao.ascii_heatmap(np.full((2, 2), 0.5), "ab")
    with pytest.raises(ValueError, match="negativos"):
        atencao.ascii_heatmap(-np.ones((2, 2)), ["a", "b"])


def test_resumo_do_token_mais_atendido():
    tokens, E = atencao.gato_felino()
    _, A = atencao.self_attention(E)
    with_self = atencao.strongest_attention(A, tokens)
    assert [k for _, k, _ in with_self] == ["gato", "gato", "pulou", "alto"]
    others = atencao.strongest_attention(A, tokens, ignore_self=True)
    assert others[0][:2] == ("gato", "felino") and others[1][:2] == ("felino", "gato")
    assert others[0][2] == pytest.approx(A[0, 1])
    summary = atencao.attention_summary(A, tokens, ignore_self=True)
    assert summary.splitlines()[0] == f"gato   → felino ({A[0, 1]:.2f})"
    assert atencao.strongest_attention([[1.0]], ["só"], ignore_self=True)[0][1] is None


def test_tabela_de_pesos_alinhada():
    tokens = ["não", "sim"]
    text = atencao.format_weights(np.array([[0.5, 0.5], [0.25, 0.75]]), tokens)
    assert len({wcswidth(r) for r in text.splitlines()}) == 1
    assert "0.750" in text


def test_linha_bloqueada_no_resumo():
    real = np.array([True, True, False])  # <pad> não olha para ninguém e ninguém olha para ele
    _, A = atencao.self_attention(np.random.default_rng(1).normal(size=(3, 4)), mask=real[:, None] & real[None, :])
    tokens = ["o", "gato", "<pad>"]
    rows = atencao.strongest_attention(A, tokens)
    assert rows[2] == ("<pad>", None, 0.0)
    assert rows[0][1] is not None and rows[0][2] == pytest.approx(A[0].max())  # as outras linhas, como antes
    lines = atencao.attention_summary(A, tokens).splitlines()
    assert lines[2].startswith("<pad> → ") and "linha bloqueada" in lines[2] and "0.00" not in lines[2]
    assert "linha bloqueada" in atencao.attention_summary(A, tokens, ignore_self=True).splitlines()[2]


def test_so_o_proprio_token_com_peso_ignorando_a_diagonal():
    A = np.array([[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]])  # máscara causal
    rows = atencao.strongest_attention(A, ["a", "b", "c"], ignore_self=True)
    assert rows[0] == ("a", None, 0.0) and rows[1][:2] == ("b", "a") and rows[2][:2] == ("c", "b")
    first = atencao.attention_summary(A, ["a", "b", "c"], ignore_self=True).splitlines()[0]
    assert first == "a → (nenhum outro token recebe peso)"


def test_word_vector_d_model_nao_inteiro_tem_mensagem_em_portugues():
    from atencao.embeddings import word_vector

    with pytest.raises(TypeError, match="`d_model` precisa ser um inteiro"):
        word_vector("gato", 2.5)
