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
- ``CURSO_HUB_PORTA`` e ``CURSO_HUB_IP``: onde o hub escuta (``127.0.0.1:8000``; na frente, um proxy HTTPS).

Os alunos veem o curso (a página inicial ``00-comece-aqui``), a lista de tarefas do nbgrader (*Assignments*) e a
validação; só os professores veem o *Formgrader* e a criação de tarefas (a configuração deles,
``<etc>/professor``, vem antes da dos alunos no ``JUPYTER_CONFIG_PATH``).
"""

import os
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

c.JupyterHub.ip = os.environ.get("CURSO_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("CURSO_HUB_PORTA", "8000"))
c.JupyterHub.cleanup_servers = True  # parar o hub para os servidores dos usuários

# Usuários Unix da máquina (PAM): cada aluno é um usuário, e as permissões do exchange separam os alunos.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = ALUNOS | PROFESSORES
c.Authenticator.admin_users = PROFESSORES
c.LocalProcessSpawner.shell_cmd = []
c.Spawner.cmd = [str(VENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab/tree/curso/00-comece-aqui.ipynb"  # a página inicial do curso
c.Spawner.notebook_dir = "~"
# Medido (2 núcleos): um servidor fica pronto em 12 a 16 s (4 a 5 s de CPU); quatro de uma vez, 35 s.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90
c.Spawner.environment = {
    "CURSO_HUB_ID": CURSO_ID,
    "CURSO_HUB_EXCHANGE": EXCHANGE,
    "MPLCONFIGDIR": "/tmp/matplotlib-{username}",
}


def _preparar(spawner):
    """Antes de cada servidor: a cópia do curso em ``~/curso`` (só o que falta: nada do aluno é sobrescrito) e
    as configurações do Jupyter (as do professor, com o Formgrader, antes das dos alunos)."""
    nome = spawner.user.name
    configs = [ETC / "aluno"]
    if nome in PROFESSORES:
        configs.insert(0, ETC / "professor")
    spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(str(p) for p in configs)
    origem = CURSO / "notebooks" / "modulo-06"
    if origem.is_dir():  # copiado como o usuário (cp -rn: só o que falta), para que os arquivos sejam dele
        import pwd

        destino = Path(pwd.getpwnam(nome).pw_dir) / "curso"
        subprocess.run(["runuser", "-u", nome, "--", "mkdir", "-p", str(destino)], check=False)
        subprocess.run(["runuser", "-u", nome, "--", "cp", "-rn", f"{origem}/.", str(destino)], check=False)
        inicio = CURSO / "notebooks" / "00-comece-aqui.ipynb"
        if inicio.exists() and not (destino / inicio.name).exists():
            subprocess.run(["runuser", "-u", nome, "--", "cp", "-n", str(inicio), str(destino)], check=False)


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
