"""O que todo corpus de respostas usa: as duas provas de cada verificação de exercício.

Um corpus (``tests/test_checks_aulaNN_corpus.py``, ou o das Aulas 1 e 2 em ``test_checks_corpus.py``) declara
``VALIDAS = {verificação: [resposta, ...]}`` e ``ERRADAS = {verificação: [(resposta, trecho da falha), ...]}`` e
ganha os testes com uma linha::

    test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)

``test_checks_corpus.py`` acha todos os corpora pelo nome do arquivo e exige, de cada verificação de cada
``atencao/checks/aulaNN.py``, pelo menos 3 respostas válidas e 8 erradas.
"""

from __future__ import annotations

import re

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


def testes(validas: dict, erradas: dict, *, trecho_na_dica: bool = False):
    """Os dois testes de um corpus: toda válida passa sem ❌; toda errada falha, com o trecho esperado entre as
    falhas (com ``trecho_na_dica``, em qualquer lugar do relatório: a dica que nomeia o engano), com uma dica em
    cada ❌, e sem a verificação quebrar com um erro dela mesma."""

    @pytest.mark.parametrize("check, fn", [(c, f) for c, fs in validas.items() for f in fs], ids=nome)
    def test_validas_passam(check, fn, capsys, monkeypatch):
        monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        result = check(fn)
        out = capsys.readouterr().out
        assert result and result.status == "ok", out
        assert "❌" not in out

    @pytest.mark.parametrize("check, fn, trecho", [(c, f, t) for c, fs in erradas.items() for f, t in fs],
                             ids=nome)
    def test_erradas_falham_com_dica(check, fn, trecho, capsys, monkeypatch):
        monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        result = check(fn)
        out = capsys.readouterr().out
        assert not result and result.status == "falhou" and "❌" in out, out
        if trecho_na_dica:
            assert trecho in " ".join(out.split()), out
        else:
            assert any(trecho in f for f in result.failures), (result.failures, out)
        assert not falhas_sem_dica(out), out
        if "levantou" not in trecho:  # a verificação não quebra: um erro só aparece quando é do código do aluno
            assert "o seu código levantou" not in out, out

    return test_validas_passam, test_erradas_falham_com_dica
