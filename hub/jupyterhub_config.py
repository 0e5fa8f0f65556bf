"""O JupyterHub do curso num servidor só: usuários Unix da máquina, o curso instalado uma vez para todos e o
exchange do nbgrader numa pasta compartilhada. Veja docs/professor.md, "No JupyterHub".

Tudo o que muda de uma instalação para outra vem de variáveis de ambiente (com os padrões abaixo):

- ``CURSO_HUB_VENV``: o ambiente Python do curso, legível por todos (``/opt/curso-hub/venv``);
- ``CURSO_HUB_CURSO``: a pasta do curso (um clone do repositório, legível por todos; ``/opt/curso``);
- ``CURSO_HUB_ETC``: as configurações do Jupyter de alunos e professores (``<curso>/hub/etc``);
- ``CURSO_HUB_ID``: o id do curso no nbgrader (``atencao``);
- ``CURSO_HUB_EXCHANGE``: a raiz do exchange do nbgrader (``/srv/nbgrader/exchange``, gravável por todos,
  com o bit *sticky*: ``chmod 1777``);
- ``CURSO_HUB_ALUNOS`` e ``CURSO_HUB_PROFESSORES``: os usuários Unix, separados por vírgula;
- ``CURSO_HUB_PORTA`` e ``CURSO_HUB_IP``: onde o hub escuta (``127.0.0.1:8000``; na frente, um proxy HTTPS);
- ``CURSO_HUB_ESTADO``: o estado do hub (``jupyterhub.sqlite``, o segredo dos cookies, o pid do proxy), fora da
  pasta do curso e legível só pelo root (``/var/lib/curso-hub``, criada por ``hub/instalar.sh``).

Privacidade: o servidor de cada aluno roda com ``umask 077`` (o do professor, com 022: veja ``popen_kwargs``) e o
hub fecha a pasta pessoal de cada usuário da turma (``chmod 0700``) antes de iniciar o servidor; o exchange do
nbgrader põe as permissões dele. As soluções
(``<curso>/solutions``) só os professores leem (grupo ``curso-prof``, posto por ``hub/instalar.sh``).

Os alunos veem o curso (a página inicial ``00-comece-aqui``), a lista de tarefas do nbgrader (*Assignments*) e a
validação; só os professores veem o *Formgrader* e a criação de tarefas (a configuração deles,
``<etc>/professor``, vem antes da dos alunos no ``JUPYTER_CONFIG_PATH``).
"""

import json
import os
import pwd
import shutil
import subprocess
from pathlib import Path

c = get_config()  # noqa: F821 (o JupyterHub define get_config ao ler este arquivo)

VENV = Path(os.environ.get("CURSO_HUB_VENV", "/opt/curso-hub/venv"))
CURSO = Path(os.environ.get("CURSO_HUB_CURSO", "/opt/curso"))
ETC = Path(os.environ.get("CURSO_HUB_ETC", str(CURSO / "hub" / "etc")))
CURSO_ID = os.environ.get("CURSO_HUB_ID", "atencao")
EXCHANGE = os.environ.get("CURSO_HUB_EXCHANGE", "/srv/nbgrader/exchange")
ALUNOS = {u for u in os.environ.get("CURSO_HUB_ALUNOS", "").split(",") if u}
PROFESSORES = {u for u in os.environ.get("CURSO_HUB_PROFESSORES", "prof").split(",") if u}
ESTADO = Path(os.environ.get("CURSO_HUB_ESTADO", "/var/lib/curso-hub"))

c.JupyterHub.ip = os.environ.get("CURSO_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("CURSO_HUB_PORTA", "8000"))
c.JupyterHub.cleanup_servers = True  # parar o hub para os servidores dos usuários
# O estado do hub fora da pasta do curso (e de onde o hub for iniciado): o banco, o segredo dos cookies e o pid do
# proxy. A pasta (0700, do root) é criada por hub/instalar.sh; no systemd, pelo StateDirectory de curso-hub.service.
c.JupyterHub.db_url = f"sqlite:///{ESTADO / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(ESTADO / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(ESTADO / "jupyterhub-proxy.pid")

# Usuários Unix da máquina (PAM): cada aluno é um usuário, e as permissões do exchange separam os alunos.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = ALUNOS | PROFESSORES
c.Authenticator.admin_users = PROFESSORES
c.LocalProcessSpawner.shell_cmd = []
# O servidor de cada aluno (e o que ele inicia: kernels, terminais, o nbgrader) cria arquivos que só o dono lê. O
# do professor fica com umask 022 (a pasta pessoal dele é fechada do mesmo jeito): o release_feedback do nbgrader
# copia as páginas de retorno para o exchange com as permissões que elas têm, e o aluno precisa lê-las.
c.LocalProcessSpawner.popen_kwargs = {"umask": 0o077}
c.Spawner.cmd = [str(VENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab/tree/curso/00-comece-aqui.ipynb"  # a página inicial do curso
c.Spawner.notebook_dir = "~"
# Medido (2 núcleos, make test-hub): 10 alunos e o professor entrando juntos ficam prontos em 23 a 44 s.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90
# O PATH começa pelo ambiente do curso: o nbgrader chama o `alembic` dele ao criar o gradebook (o primeiro
# `turma liberar`), e o terminal do JupyterLab (um bash que não é de login: hub/etc/aluno/jupyter_server_config.json)
# mantém este PATH. O MPLCONFIGDIR de cada um (dentro da pasta pessoal) é posto em _preparar.
c.Spawner.environment = {
    "CURSO_HUB_ID": CURSO_ID,
    "CURSO_HUB_EXCHANGE": EXCHANGE,
    "PATH": os.pathsep.join([str(VENV / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
}
# Na página inicial do hub, o trecho só do curso no computador do aluno (a célula com a etiqueta "curso-local":
# make lab, trabalho/, solutions/) dá lugar a este.
NOTA_DO_HUB = (
    "**No JupyterHub da turma**: esta página e as aulas estão na sua pasta `curso/`, uma cópia só sua (nada do que "
    "você escreve nela é sobrescrito). As aulas que valem nota chegam pela **lista de tarefas** (menu *Nbgrader* → "
    "*Assignment List*): *Fetch* traz a aula para a pasta `atencao/`, onde você responde; *Validate* confere e "
    "*Submit* entrega (você pode entregar de novo até o professor coletar; vale a última entrega). O retorno da "
    "correção chega pelo mesmo lugar, com *Fetch Feedback*. As soluções ficam com o professor."
)


def pagina_inicial_do_hub(origem: Path) -> str:
    """A página inicial do curso (``notebooks/00-comece-aqui.ipynb``) com a nota do hub no lugar das células
    com a etiqueta ``curso-local``; os links das aulas (``modulo-06/...``) ficam como estão."""
    nb = json.loads(origem.read_text(encoding="utf-8"))
    celulas = []
    for celula in nb["cells"]:
        if "curso-local" in celula.get("metadata", {}).get("tags", []):
            celula = {**celula, "source": NOTA_DO_HUB, "metadata": {"tags": ["curso-hub"]}}
        celulas.append(celula)
    return json.dumps({**nb, "cells": celulas}, ensure_ascii=False, indent=1) + "\n"


def _como_usuario(nome: str, *cmd, entrada: str | None = None) -> None:
    """Um comando como o usuário (os arquivos são dele, e um link simbólico posto por ele não leva o root a
    outro lugar), com umask 077."""
    subprocess.run(["runuser", "-u", nome, "--", *cmd], input=entrada, text=True, check=False, umask=0o077)


def _preparar(spawner):
    """Antes de cada servidor: a pasta pessoal fechada (0700), o MPLCONFIGDIR dentro dela, a cópia do curso em
    ``~/curso`` (só o que falta: nada do aluno é sobrescrito; ``~/curso/modulo-06/...``, como os links da página
    inicial) e as configurações do Jupyter (as do professor, com o Formgrader, antes das dos alunos)."""
    nome = spawner.user.name
    configs = [ETC / "aluno"]
    if nome in PROFESSORES:
        configs.insert(0, ETC / "professor")
        # o `turma corrigir` do terminal do professor põe quem não entregou em turma-<aula>.csv (só ele vê a lista)
        spawner.environment["CURSO_HUB_ALUNOS"] = ",".join(sorted(ALUNOS))
    spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(str(p) for p in configs)
    spawner.popen_kwargs = {**getattr(spawner, "popen_kwargs", {}), "umask": 0o022 if nome in PROFESSORES else 0o077}
    try:
        casa = Path(pwd.getpwnam(nome).pw_dir)
    except KeyError:  # sem usuário Unix (o PAM também recusaria): nada a copiar
        return
    spawner.environment["MPLCONFIGDIR"] = str(casa / ".cache" / "matplotlib")
    dono = casa.is_dir() and casa.stat().st_uid == pwd.getpwnam(nome).pw_uid
    if nome in ALUNOS | PROFESSORES and dono and casa.stat().st_mode & 0o077:
        os.chmod(casa, 0o700)  # um colega não lê os notebooks nem o retorno (nem, no professor, source/ e o gradebook)
    origem = CURSO / "notebooks" / "modulo-06"
    if origem.is_dir():  # copiado como o usuário (cp -rn: só o que falta)
        destino = casa / "curso"
        _como_usuario(nome, "mkdir", "-p", str(destino))
        _como_usuario(nome, "cp", "-rn", str(origem), str(destino))
        inicio = CURSO / "notebooks" / "00-comece-aqui.ipynb"
        if inicio.exists():  # set -C: não sobrescreve a página do aluno
            _como_usuario(nome, "sh", "-c", 'exec 2>/dev/null; set -C; cat > "$1"', "sh", str(destino / inicio.name),
                          entrada=pagina_inicial_do_hub(inicio))


c.Spawner.pre_spawn_hook = _preparar

# Servidores parados sem uso: o jupyterhub-idle-culler derruba os parados há 1 h (cada um ocupa de 125 a
# 145 MB sem kernel; um kernel depois da Aula 3, cerca de 300 MB).
if shutil.which("jupyterhub-idle-culler", path=str(VENV / "bin")):
    c.JupyterHub.load_roles = [{"name": "idle-culler", "services": ["idle-culler"],
                                "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
    c.JupyterHub.services = [{"name": "idle-culler",
                              "command": [str(VENV / "bin" / "jupyterhub-idle-culler"), "--timeout=3600"]}]

# Um arquivo local (fora do git) pode mudar o que for preciso: usuários, porta, um token para a API.
_local = Path(os.environ.get("CURSO_HUB_LOCAL", "/etc/curso-hub/local_config.py"))
if _local.exists():
    exec(compile(_local.read_text(encoding="utf-8"), str(_local), "exec"))  # noqa: S102
