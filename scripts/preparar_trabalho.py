"""Prepara a pasta ``trabalho/``: a cópia dos notebooks onde o aluno escreve as respostas.

``notebooks/`` guarda os originais (versionados e testados); o aluno trabalha em ``trabalho/``, que
o git ignora. Assim, atualizar o curso (``git pull``), ``make test`` e ``make alunos`` nunca apagam
uma resposta. Só copia o que ainda não existe em ``trabalho/``: nada já copiado é sobrescrito.

Antes de abrir o JupyterLab, ``make lab`` também confere, com ``--porta N``:

- se o curso **já está aberto** num servidor Jupyter (nesta pasta): diz o endereço e como fechá-lo, em
  vez de abrir um segundo servidor na mesma pasta (código de saída 3, que o ``curso.py`` devolve como 0:
  não é um erro);
- se a porta está ocupada por outro programa: sugere outra porta (código 4);
- se o PyTorch instalado é a versão com CUDA: avisa que o curso só usa a CPU (nada quebra).

Com ``--configurar``, aplica ao ambiente Python atual as configurações que ``make lab`` aplica ao
``.venv``: o JupyterLab sem o pop-up de notícias e sem a busca de atualizações, as linhas de código longas
quebradas na largura da célula (nada cortado numa tela estreita), as soluções marcadas como SOLUÇÃO e
somente leitura (:mod:`atencao.solucoes`), as dicas em português para o ``NameError``
de uma célula rodada fora de ordem (:mod:`atencao.dicas`) e a interface do nbgrader (que é do professor)
fora do JupyterLab do aluno. É o passo que o conda e o Binder usam. Com ``--configurar --hub`` (o ambiente do
JupyterHub), a lista de tarefas do nbgrader fica para os alunos, e o Formgrader só para os professores.

Uso: ``python scripts/preparar_trabalho.py [--porta 8888] [--configurar]`` (``make lab`` chama sozinho).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE, WORK = ROOT / "notebooks", ROOT / "trabalho"
START_PAGE = "00-comece-aqui.ipynb"  # a página inicial do curso, em trabalho/ (a que o make lab abre)


def prepare() -> list[Path]:
    """Copia para ``trabalho/`` os arquivos de ``notebooks/`` que faltam; devolve os copiados."""
    copied = []
    for src in sorted(SOURCE.rglob("*")):
        if src.is_dir() or ".ipynb_checkpoints" in src.parts:
            continue
        dest = WORK / src.relative_to(SOURCE)
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            copied.append(dest)
    return copied


# Lido pelo IPython ao iniciar um kernel com o Python deste ambiente (<ambiente>/etc/ipython): as dicas em português
# de atencao.dicas para o NameError de uma célula rodada antes da que ela precisa (fora da correção automática).
KERNEL_CONFIG = """\
# Escrito por scripts/preparar_trabalho.py (curso "Self-attention do zero"): as dicas em português para um
# NameError (célula rodada antes da de importações ou da função), fora da correção automática.
import os

if not os.environ.get("NBGRADER_EXECUTION"):
    c.InteractiveShellApp.extensions.append("atencao.dicas")
"""


# Lido pelo servidor Jupyter deste ambiente: os notebooks de solutions/ abrem marcados como SOLUÇÃO e somente
# leitura (atencao.solucoes; CURSO_SOLUCOES_EDITAVEIS=1 make lab para editá-los).
SERVER_CONFIG = """\
# Escrito por scripts/preparar_trabalho.py (curso "Self-attention do zero"): os notebooks de solutions/ abrem
# marcados como SOLUÇÃO e somente leitura (atencao.solucoes; CURSO_SOLUCOES_EDITAVEIS=1 para editá-los).
c.ServerApp.contents_manager_class = "atencao.solucoes.SolucoesSomenteLeitura"
"""


# No hub (``--hub``): os alunos buscam, validam e entregam pela lista de tarefas do nbgrader; o Formgrader e a
# criação de tarefas ficam só na configuração dos professores (hub/etc/professor, que o hub põe antes).
STUDENT_HUB_EXTENSIONS = ("assignment_list", "course_list", "validate_assignment")
TEACHER_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment")


def nbgrader_commands(hub: bool = False) -> list[list[str]]:
    """Os comandos ``jupyter ... enable/disable`` do nbgrader no ambiente atual: sem ``hub``, a interface do
    nbgrader toda fora do JupyterLab (``make lab``, conda, Binder: o aluno sozinho não tem exchange); com
    ``hub``, a lista de tarefas e a validação ligadas e o Formgrader e a criação de tarefas desligados."""
    jupyter = [sys.executable, "-m", "jupyter"]
    ext = "nbgrader.server_extensions."
    if not hub:
        return [jupyter + ["labextension", "disable", "--level=sys_prefix", "@jupyter/nbgrader"]] + [
            jupyter + ["server", "extension", "disable", "--sys-prefix", ext + e]
            for e in ("formgrader",) + STUDENT_HUB_EXTENSIONS]
    return ([jupyter + ["labextension", "enable", "--level=sys_prefix", "@jupyter/nbgrader"]]
            + [jupyter + ["labextension", "disable", "--level=sys_prefix", p] for p in TEACHER_PLUGINS]
            + [jupyter + ["server", "extension", "enable", "--sys-prefix", ext + e] for e in STUDENT_HUB_EXTENSIONS]
            + [jupyter + ["server", "extension", "disable", "--sys-prefix", ext + "formgrader"]])


def configure(prefixo: Path | None = None, hub: bool = False) -> Path:
    """As configurações do curso no JupyterLab do ambiente ``prefixo`` (o atual, por padrão); devolve o
    arquivo de configurações escrito. Também escreve ``<prefixo>/etc/ipython/ipython_kernel_config.py``, que
    carrega as dicas de :mod:`atencao.dicas` em cada kernel, e
    ``<prefixo>/etc/jupyter/jupyter_server_config.py``, que abre as soluções marcadas e
    somente leitura (:mod:`atencao.solucoes`). Não precisa de ``make`` nem de shell. ``hub``: o ambiente do
    JupyterHub (veja :func:`comandos_nbgrader`)."""
    prefixo = Path(prefixo or sys.prefix)
    destino = prefixo / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    destino.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "scripts" / "overrides.json", destino)
    kernel = prefixo / "etc" / "ipython" / "ipython_kernel_config.py"
    kernel.parent.mkdir(parents=True, exist_ok=True)
    kernel.write_text(KERNEL_CONFIG, encoding="utf-8")
    servidor = prefixo / "etc" / "jupyter" / "jupyter_server_config.py"
    servidor.parent.mkdir(parents=True, exist_ok=True)
    servidor.write_text(SERVER_CONFIG, encoding="utf-8")
    comandos = nbgrader_commands(hub)
    if prefixo == Path(sys.prefix):  # as extensões são as do ambiente que roda este script
        import subprocess

        for cmd in comandos:
            subprocess.run(cmd, capture_output=True, check=False)
    return destino


def running_servers(runtime_dir: Path | None = None) -> list[dict]:
    """O que os servidores Jupyter escreveram nos seus arquivos de estado (``jpserver-*.json`` na pasta de
    execução do Jupyter): o mesmo que ``jupyter_server.serverapp.list_running_servers`` lê, sem importar o
    servidor (que, numa máquina ocupada, levava dezenas de segundos só para dizer que o curso já está aberto).
    Arquivos ilegíveis (sendo escritos agora) ficam de fora."""
    if runtime_dir is None:
        try:
            from jupyter_core.paths import jupyter_runtime_dir
        except ImportError:  # sem o Jupyter instalado ainda: não há servidor
            return []
        runtime_dir = Path(jupyter_runtime_dir())
    infos = []
    for arquivo in sorted(Path(runtime_dir).glob("jpserver-*.json")):
        try:
            infos.append(json.loads(arquivo.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return infos


def course_servers(root: Path = ROOT, runtime_dir: Path | None = None) -> list[dict]:
    """Os servidores Jupyter vivos (dos arquivos de estado do Jupyter) que servem a pasta do curso."""
    vivos = []
    for info in running_servers(runtime_dir):
        if Path(info.get("root_dir", "")).resolve() == root.resolve() and _pid_alive(info.get("pid")):
            vivos.append(info)
    return vivos


def _pid_alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (TypeError, ValueError, ProcessLookupError):
        return False
    except PermissionError:  # existe, de outro usuário
        return True
    return True


def port_in_use(porta: int) -> bool:
    """Alguém já escuta em ``porta`` (em localhost)?"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", porta)) == 0


def torch_has_cuda() -> bool:
    """O PyTorch instalado veio com as bibliotecas da NVIDIA (a versão com CUDA, de vários GB)?"""
    nomes = {(d.metadata["Name"] or "").lower() for d in importlib.metadata.distributions()}
    return "torch" in nomes and any(n.startswith("nvidia-") for n in nomes)


# Os códigos de saída de antes_de_abrir (o curso.py devolve 0 para JA_ABERTO: o endereço já foi dito).
CAN_OPEN, ALREADY_OPEN, PORT_IN_USE = 0, 3, 4


def check_before_opening(porta: int) -> int:
    """As conferências de ``make lab``; devolve o código de saída: 0 (pode abrir), 3 (o curso já está aberto,
    e o endereço foi impresso) ou 4 (a porta está ocupada por outro programa)."""
    abertos = course_servers()
    if abertos:
        info = abertos[0]
        pagina = f"{info.get('url', '')}lab/tree/{WORK.name}/{START_PAGE}"
        print(f"O curso já está aberto: {pagina}?token={info.get('token', '')}\n"
              f"Abra esse endereço no navegador. Para fechar aquele servidor: Ctrl+C no terminal em que ele roda, "
              f"ou File > Shut Down no JupyterLab; depois rode `make lab` (sem make: `python3 curso.py lab`) de novo.")
        return ALREADY_OPEN
    if port_in_use(porta):
        print(f"A porta {porta} está ocupada por outro programa. Use outra: make lab PORT={porta + 2} (sem make: "
              f"python3 curso.py lab --porta {porta + 2})")
        return PORT_IN_USE
    if torch_has_cuda():
        print("Aviso: o PyTorch instalado é a versão com CUDA (vários GB); o curso usa só a CPU e funciona assim "
              "mesmo. Para trocar pela versão de CPU (cerca de 190 MB): python -m pip install torch==2.13.0 "
              "--index-url https://download.pytorch.org/whl/cpu (com o Python do ambiente do curso: "
              f"{sys.executable})")
    return 0


def main(argv=None) -> int:
    """O comando (veja o módulo); devolve o código de saída. Com o curso já aberto, os notebooks novos (ou o que o
    aluno apagou para recomeçar) são copiados do mesmo jeito: copiar nunca sobrescreve nada, e o servidor aberto
    os mostra."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--porta", type=int, default=None, help="a porta do JupyterLab (confere se está livre)")
    args.add_argument("--configurar", dest="configure", action="store_true",
                      help="aplica as configurações do curso ao JupyterLab deste ambiente (conda, Binder)")
    args.add_argument("--hub", action="store_true",
                      help="com --configurar: o ambiente do JupyterHub (lista de tarefas do nbgrader para os alunos)")
    opcoes = args.parse_args(argv)
    porta = opcoes.porta
    if opcoes.configure:
        print(f"Configurações do curso aplicadas: {configure(hub=opcoes.hub)}")
    codigo = check_before_opening(porta) if porta is not None else CAN_OPEN
    if codigo == PORT_IN_USE:
        return codigo
    new = prepare()
    if new:
        print(f"{len(new)} arquivo(s) novo(s) copiado(s) para trabalho/ (as suas respostas ficam lá).")
    elif codigo == CAN_OPEN:
        print("trabalho/ já está em dia: nada foi sobrescrito.")
    return codigo


if __name__ == "__main__":
    sys.exit(main())
