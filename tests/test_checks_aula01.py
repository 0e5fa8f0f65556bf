"""As verificações da Aula 1 aceitam a resposta certa e rejeitam respostas erradas típicas."""

import re

import numpy as np
import pytest

import atencao
from atencao import softmax
from atencao.checks import aula01


# ---------- exercício 3 ----------
def ex3_certo():
    _, E = atencao.gato_felino()
    E[3] = [0.0, 0.0, 0.9, 0.1]
    return E


def ex3_sem_mudar():
    return atencao.gato_felino()[1]


def ex3_tudo_igual():  # pulou e alto parecidos... com tudo
    return np.ones((4, 4))


def ex3_so_tres_linhas():
    return ex3_certo()[:3]


def ex3_com_nan():
    E = ex3_certo()
    E[2, 0] = np.nan
    return E


def ex3_estragou_gato():
    E = ex3_certo()
    E[0] = [0, 1, 0, 0]
    return E


def nao_feito(*args, **kwargs):
    raise NotImplementedError("Exercício ainda não resolvido")


def test_ex3_aceita_resposta_certa(capsys):
    assert aula01.exercicio_3(ex3_certo)
    assert "✅ OK — Exercício 3" in capsys.readouterr().out


@pytest.mark.parametrize("fn, trecho", [
    (ex3_sem_mudar, "foi modificado"),
    (ex3_tudo_igual, "gato e felino continuam"),
    (ex3_so_tres_linhas, "4 linhas"),
    (ex3_com_nan, "finitos"),
    (ex3_estragou_gato, "gato e felino continuam"),
])
def test_ex3_rejeita_respostas_erradas(fn, trecho, capsys):
    result = aula01.exercicio_3(fn)
    out = capsys.readouterr().out
    assert not result and result.status == "falhou"
    assert any(trecho in f for f in result.failures), result.failures
    assert "❌" in out and "esperado:" in out


# ---------- exercício 4 ----------
def _proj(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v


def ex4_certo(X, W_q, W_k, W_v):
    Q, K, V = _proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(K.shape[1]))  # a fórmula escrita (o enunciado proíbe a função pronta)
    return A @ V, A


def ex4_sem_escala(X, W_q, W_k, W_v):
    Q, K, V = _proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T)
    return A @ V, A


def ex4_escala_d_model(X, W_q, W_k, W_v):
    Q, K, V = _proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(X.shape[1]))
    return A @ V, A


def ex4_softmax_por_coluna(X, W_q, W_k, W_v):
    Q, K, V = _proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(Q.shape[1]), axis=0)
    return A @ V, A


def ex4_trocado(X, W_q, W_k, W_v):
    out, A = ex4_certo(X, W_q, W_k, W_v)
    return A, out


def ex4_sem_projetar_v(X, W_q, W_k, W_v):
    Q, K, _ = _proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(Q.shape[1]))
    return A @ X, A


def ex4_quebra(X, W_q, W_k, W_v):
    return X @ W_q @ W_k  # erro de forma do NumPy


def test_ex4_aceita_resposta_certa():
    assert aula01.exercicio_4(ex4_certo)


@pytest.mark.parametrize("fn, dica", [
    (ex4_sem_escala, "faltou dividir"),
    (ex4_escala_d_model, "sqrt(d_k)"),
    (ex4_softmax_por_coluna, "por coluna"),
    (ex4_trocado, "primeiro a saída"),
    (ex4_sem_projetar_v, "V = X @ W_v"),
    (ex4_quebra, "levantou ValueError"),
])
def test_ex4_rejeita_erros_tipicos_com_dica_especifica(fn, dica, capsys):
    result = aula01.exercicio_4(fn)
    out = capsys.readouterr().out
    assert not result
    assert dica in out, out


# ---------- projeto ----------
def _destaques(A, tokens, ignorar_o_proprio=True):
    out = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        if ignorar_o_proprio:
            linha[i] = -np.inf
        j = int(np.argmax(linha))
        out.append((t, tokens[j], float(A[i, j])))
    return out


def _resumo(destaques):
    print("\n".join(f"{t} → {o} ({w:.2f})" for t, o, w in destaques))


def proj_certo(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, tokens)
    _resumo(_destaques(A, tokens))
    return tokens, A, _destaques(A, tokens)


def proj_sem_figura_nem_texto(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    return tokens, A, _destaques(A, tokens)


def proj_so_figura(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, tokens)
    return tokens, A, _destaques(A, tokens)


def proj_mapa_de_outra_matriz(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(np.eye(len(tokens)), tokens)  # um mapa n × n, mas não o da atenção
    _resumo(_destaques(A, tokens))
    return tokens, A, _destaques(A, tokens)


def proj_so_os_tokens(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print(tokens)  # imprime algo com todos os tokens, mas não o resumo
    return tokens, A, h


def proj_setas_ao_contrario(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print("\n".join(f"{o} ← {t} ({w:.2f})" for t, o, w in h))  # o alvo antes do token
    return tokens, A, h


def proj_tabela(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print(f"{'token':<10} {'mais atenção':<14} peso")
    for t, o, w in h:
        print(f"{t:<10} {o:<14} {w:.3f}")
    return tokens, A, h


def proj_setas_sem_os_pesos(frase, vectors=None):
    """Achado: imshow dos pesos e o resumo sem o peso de cada destaque (o enunciado pede ``gato → felino (0.41)``)."""
    import matplotlib.pyplot as plt

    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    plt.figure().add_subplot().imshow(A)
    h = _destaques(A, tokens)
    print("\n".join(f"{t} {o}" for t, o, _ in h))
    return tokens, A, h


def proj_peso_de_outra_linha(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print("\n".join(f"{t} → {o} ({h[-1 - k][2] + 0.05:.2f})" for k, (t, o, _) in enumerate(h)))
    return tokens, A, h


def test_projeto_confere_a_figura_e_o_resumo(capsys):
    for fn, obtido in ((proj_sem_figura_nem_texto, "mapa de calor: não (nenhuma figura nova mostra esta matriz); "
                                                   "resumo impresso: não"),
                       (proj_so_figura, "mapa de calor: sim; resumo impresso: não"),
                       (proj_mapa_de_outra_matriz, "mapa de calor: não (nenhuma figura nova mostra esta matriz)"),
                       (proj_so_os_tokens, "resumo impresso: falta a linha de"),
                       (proj_setas_ao_contrario, "resumo impresso: falta a linha de"),
                       (proj_setas_sem_os_pesos, "mapa de calor: sim; resumo impresso: falta a linha de"),
                       (proj_peso_de_outra_linha, "resumo impresso: falta a linha de")):
        assert not aula01.projeto(fn)
        assert obtido in " ".join(capsys.readouterr().out.split()), fn.__name__


def proj_pesos_com_virgula_e_porcentagem(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    for k, (t, o, w) in enumerate(h):
        print(f"{t} → {o}: {w * 100:.1f}%" if k % 2 else f"{t} olha mais para {o}, peso {w:.2f}".replace(".", ","))
    return tokens, A, h


@pytest.mark.parametrize("fn", [proj_tabela, proj_pesos_com_virgula_e_porcentagem], ids=lambda f: f.__name__)
def test_projeto_aceita_o_resumo_em_tabela_e_outros_formatos_do_peso(capsys, fn):
    assert aula01.projeto(fn), capsys.readouterr().out


def proj_conta_o_proprio(frase, vectors=None):
    tokens, A, _ = proj_certo(frase, vectors)
    return tokens, A, _destaques(A, tokens, ignorar_o_proprio=False)


def proj_sem_escala(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    A = softmax(X @ X.T)
    atencao.plot_attention(A, tokens)
    _resumo(_destaques(A, tokens))
    return tokens, A, _destaques(A, tokens)


def proj_ignora_vetores(frase, vectors=None):
    return proj_certo(frase)


def proj_usa_as_prontas(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, tokens)
    print(atencao.attention_summary(A, tokens, ignore_self=True))
    return tokens, A, atencao.strongest_attention(A, tokens, ignore_self=True)


def proj_sem_copia(frase, vectors=None):
    """Põe -inf na diagonal da própria matriz (pesos[i] é uma vista) e depois desenha: a figura recusa o -inf."""
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i]  # sem .copy()
        linha[i] = -np.inf
        j = int(np.argmax(linha))
        destaques.append((t, tokens[j], float(A[i, j])))
    atencao.plot_attention(A, tokens)
    _resumo(destaques)
    return tokens, A, destaques


def test_projeto_sem_copia_ganha_a_dica_da_vista(capsys):
    assert not aula01.projeto(proj_sem_copia)
    out = " ".join(capsys.readouterr().out.split())
    assert "pesos[i].copy()" in out and "vista" in out, out


def proj_usa_o_ajudante(frase, vectors=None):
    """O ajudante privado das prontas (text._strongest), que acha o destaque de cada linha: passava com 4 de 4."""
    from atencao.text import _strongest

    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    best, _ = _strongest(A, True)
    destaques = [(t, tokens[int(j)], float(A[i, int(j)])) for i, (t, j) in enumerate(zip(tokens, best))]
    atencao.plot_attention(A, tokens)
    _resumo(destaques)
    return tokens, A, destaques


@pytest.mark.parametrize("fn, nomes", [
    (proj_usa_as_prontas, ["atencao.attention_summary", "atencao.strongest_attention"]),
    (proj_usa_o_ajudante, ["atencao._strongest"]),  # o ajudante das prontas também é proibido
])
def test_projeto_o_destaque_e_o_resumo_sao_do_aluno(capsys, fn, nomes):
    assert not aula01.projeto(fn)
    out = " ".join(capsys.readouterr().out.split())
    assert all(nome in out for nome in nomes), out


def test_projeto_aceita_certo_e_fecha_figuras():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    assert aula01.projeto(proj_certo)
    assert plt.get_fignums() == before


@pytest.mark.parametrize("fn, trecho", [
    (proj_conta_o_proprio, "OUTRO token"),
    (proj_sem_escala, "matriz de atenção"),
    (proj_ignora_vetores, "levantou"),
])
def test_projeto_rejeita_erros_tipicos(fn, trecho):
    result = aula01.projeto(fn)
    assert not result and any(trecho in f for f in result.failures), result.failures


# ---------- comportamento comum ----------
@pytest.mark.parametrize("check", [aula01.exercicio_3, aula01.exercicio_4, aula01.projeto])
def test_exercicio_nao_feito_avisa_sem_erro(check, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    result = check(nao_feito)
    assert not result and result.status == "nao_feito"
    assert "⏳" in capsys.readouterr().out


@pytest.mark.parametrize("check, fn", [
    (aula01.exercicio_3, nao_feito), (aula01.exercicio_3, ex3_sem_mudar),
    (aula01.exercicio_4, ex4_sem_escala), (aula01.projeto, proj_conta_o_proprio),
])
def test_na_correcao_falha_levanta_assertionerror(check, fn, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check(fn)


def test_na_correcao_resposta_certa_nao_levanta(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert aula01.exercicio_4(ex4_certo)


def test_o_que_a_funcao_do_aluno_imprime_nao_polui_o_relatorio(capsys):
    def proj_falante(frase, vectors=None):
        print("LINHA DO ALUNO")
        return proj_certo(frase, vectors)

    assert aula01.projeto(proj_falante)
    assert "LINHA DO ALUNO" not in capsys.readouterr().out


def ex4_float32_einsum(X, W_q, W_k, W_v):
    Q, K, V = (np.einsum("nd,dk->nk", X, W).astype(np.float32) for W in (W_q, W_k, W_v))
    A = softmax(np.einsum("qk,nk->qn", Q, K) / np.float32(np.sqrt(Q.shape[1])))
    return [A @ V, A]  # lista em vez de tupla, float32: também está certo


def test_ex4_aceita_resposta_certa_em_float32_einsum_e_lista():
    assert aula01.exercicio_4(ex4_float32_einsum)


def test_ex3_devolver_tupla_ou_esquecer_return_da_mensagem_clara(capsys):
    assert not aula01.exercicio_3(lambda: atencao.gato_felino())
    assert "devolva apenas E" in capsys.readouterr().out
    assert not aula01.exercicio_3(lambda: None)
    assert "faltou um `return`" in capsys.readouterr().out


def proj_pares(frase, vectors=None):
    tokens, A, hl = proj_certo(frase, vectors)
    return tokens, A, [(q, k) for q, k, _ in hl]


def proj_pesos_inventados(frase, vectors=None):
    tokens, A, hl = proj_certo(frase, vectors)
    return tokens, A, [(q, k, 0.999) for q, k, _ in hl]


@pytest.mark.parametrize("fn, trecho", [(proj_pares, "(token, outro token, peso)"),
                                       (proj_pesos_inventados, "peso de cada destaque")])
def test_projeto_confere_formato_e_pesos_dos_destaques(fn, trecho):
    result = aula01.projeto(fn)
    assert not result and any(trecho in f for f in result.failures), result.failures


def proj_indice_no_lugar_do_token(frase, vectors=None):
    """Um aluno novo: (t, j, peso) em vez de (t, tokens[j], peso); a dica falava da diagonal, já ignorada."""
    tokens, X = atencao.embed(frase, vectors)
    A = softmax(X @ X.T / np.sqrt(X.shape[1]))
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        linha[i] = -np.inf
        j = int(np.argmax(linha))
        destaques.append((t, j, float(A[i, j])))
    atencao.plot_attention(A, tokens)
    _resumo([(t, tokens[j], w) for t, j, w in destaques])
    return tokens, A, destaques


def proj_peso_da_diagonal(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    A = softmax(X @ X.T / np.sqrt(X.shape[1]))
    destaques = [(t, k, float(A[i, i])) for (i, t), (_, k, _) in zip(enumerate(tokens), _destaques(A, tokens))]
    atencao.plot_attention(A, tokens)
    _resumo(destaques)
    return tokens, A, destaques


def test_projeto_indice_no_lugar_do_token_e_peso_da_diagonal(capsys):
    assert not aula01.projeto(proj_indice_no_lugar_do_token)
    out = " ".join(capsys.readouterr().out.split())
    assert "não o índice j" in out and "ignore a diagonal" not in out, out
    assert not aula01.projeto(proj_peso_da_diagonal)
    out = " ".join(capsys.readouterr().out.split())
    assert "não o da diagonal" in out and "0.39452669963935794" not in out, out
    assert re.search(r"esperado: \[0[.,]\d{3}", out), out
