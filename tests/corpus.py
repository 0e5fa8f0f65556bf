"""O que todo corpus de respostas usa: as duas provas de cada verificação de exercício.

Um corpus (``tests/test_checks_aulaNN_corpus.py``, um por aula) é o único lugar onde uma resposta errada e a dica
que ela tem de receber moram. Ele declara ``VALIDAS = {verificação: [resposta, ...]}`` e
``ERRADAS = {verificação: [(categoria, resposta, trecho da falha[, trecho da dica[, trecho que não aparece]]), ...]}``
e ganha os testes com uma linha::

    test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)

``test_checks_corpus.py`` acha todos os corpora pelo nome do arquivo e exige, de cada verificação de cada
``atencao/checks/aulaNN.py``, pelo menos 3 respostas válidas e 8 erradas.

A ``categoria`` de uma errada é o id do engano que a verificação tem de dar a ela (o da dica da tabela de erros
típicos, :func:`atencao.checks.framework.mistake`, ou uma das categorias genéricas de
:data:`atencao.checks.categories.GENERIC`): é o que o relatório da turma (``correcao.class_report``) conta. O
``test_relatorio_turma.py`` exige uma categoria em cada errada de cada corpus das aulas.
"""

from __future__ import annotations

import re

import numpy as np
import pytest


def nome(x) -> str:
    """O id de um caso no pytest: o nome da função (da verificação ou da resposta)."""
    return getattr(x, "__name__", str(x))


def falhas_sem_dica(out: str) -> list[str]:
    """Os critérios ❌ (não o cabeçalho) que não têm uma linha ``dica:`` antes do próximo critério."""
    linhas = out.splitlines()
    sem = []
    for i, linha in enumerate(linhas):
        if linha.startswith("  ❌"):
            bloco = []
            for seguinte in linhas[i + 1:]:
                if re.match(r"\s{2}[✅❌]", seguinte):
                    break
                bloco.append(seguinte)
            if not any(b.strip().startswith("dica:") for b in bloco):
                sem.append(linha.strip())
    return sem


def testes(validas: dict, erradas: dict, *, trecho_na_dica: bool = False, fixtures: tuple = ()):
    """Os dois testes de um corpus: toda válida passa sem ❌; toda errada falha, com o trecho esperado entre as
    falhas (com ``trecho_na_dica``, em qualquer lugar do relatório: a dica que nomeia o engano), com uma dica em
    cada ❌, e sem a verificação quebrar com um erro dela mesma.

    Cada errada é ``(categoria, resposta, trecho)``, ``(categoria, resposta, trecho, dica)`` ou ``(categoria, resposta,
    trecho, dica, ausente)``: a verificação dá a categoria ``categoria`` à falha (:attr:`CheckResult.category`),
    ``dica`` precisa aparecer no relatório (o engano que ela nomeia) e ``ausente`` não (a dica de outro engano). A
    categoria pode faltar (a entrada começa pela resposta): só quando o corpus ainda não as diz.
    ``fixtures``: os nomes das fixtures do pytest que a verificação recebe depois da resposta (``("enc",)`` na
    Aula 3, o modelo)."""

    def rodar(check, fn, request, capsys, monkeypatch):
        monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        result = check(fn, *(request.getfixturevalue(f) for f in fixtures))
        return result, capsys.readouterr().out

    @pytest.mark.parametrize("check, fn", [(c, f) for c, fs in validas.items() for f in fs], ids=nome)
    def test_validas_passam(check, fn, request, capsys, monkeypatch):
        result, out = rodar(check, fn, request, capsys, monkeypatch)
        assert result and result.status == "ok", out
        assert "❌" not in out

    @pytest.mark.parametrize("check, categoria, fn, trecho, dica, ausente",
                             [(c, *entrada(e)) for c, es in erradas.items() for e in es], ids=nome)
    def test_erradas_falham_com_dica(check, categoria, fn, trecho, dica, ausente, request, capsys, monkeypatch):
        result, out = rodar(check, fn, request, capsys, monkeypatch)
        assert not result and result.status == "falhou" and "❌" in out, out
        assert categoria is None or result.category == categoria, (result.category, result.categories, out)
        texto = " ".join(out.split())
        if trecho_na_dica:
            assert trecho in texto, out
        else:
            assert any(trecho in f for f in result.failures), (result.failures, out)
        assert dica is None or dica in texto, out
        assert ausente is None or ausente not in texto, out
        assert not falhas_sem_dica(out), out
        if "levantou" not in trecho:  # a verificação não quebra: um erro só aparece quando é do código do aluno
            assert "o seu código levantou" not in out, out

    return test_validas_passam, test_erradas_falham_com_dica


def entrada(e: tuple) -> tuple:
    """Uma errada do corpus como ``(categoria, resposta, trecho, dica, ausente)`` (``None`` no que falta)."""
    categoria, resto = (e[0], e[1:]) if isinstance(e[0], str) else (None, e)
    return (categoria, *resto, *[None] * (5 - len(resto) - 1))


def softmax_a_mao(s):
    """A softmax estável que um aluno escreveria, com uma linha toda -inf dando zeros (para montar respostas)."""
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    tot = e.sum(axis=-1, keepdims=True)
    return np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)


def softmax_ingenua(s):
    """A softmax sem subtrair o máximo: estoura (NaN) com pontuações grandes; a base de respostas erradas."""
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)
