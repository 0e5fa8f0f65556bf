"""Configuração comum dos testes da biblioteca (não afeta os kernels do nbval)."""

import matplotlib
import pytest

matplotlib.use("Agg")  # só neste processo: os notebooks do nbval rodam em kernels próprios


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
