"""A turma inteira num JupyterHub de verdade, nesta máquina (``make test-hub``; a CI roda), seguindo o guia do
professor ao pé da letra: os comandos são lidos dos blocos de docs/professor.md ("No JupyterHub"), com os caminhos
do guia trocados pelos do teste (``/opt/curso`` → a cópia do curso em ``/opt/curso-hub-teste``, o exchange e o
estado do hub numa pasta temporária) e nada mais:

1. Instalar: o ``hub/instalar.sh`` que o guia chama (com ``CURSO_HUB_LEVE=1``: só o que a Aula 1 precisa), com o
   ``PATH`` de quem o roda (aqui, um Python do pyenv em /root vem antes: o ambiente tem de sair do sistema);
2. Alunos e professor: os ``useradd`` do guia, para 10 alunos e um professor; o hub sobe com o comando do guia (o
   mesmo do ``hub/curso-hub.service``), a partir da pasta do curso e com o ``PATH`` do systemd;
3. Liberar e 5. corrigir: os blocos do guia, digitados no terminal do JupyterLab do professor (o ambiente que o
   servidor dele dá de fato, sem nenhuma ajuda no ``PATH``); o primeiro ``turma liberar`` dá certo e o gradebook
   tem o ``alembic_version``.

E confere: os 10 servidores sobem ao mesmo tempo; as pastas pessoais são fechadas (um aluno não lê a pasta do
colega, a do professor, o gradebook, nem as soluções do curso), enquanto buscar, entregar e receber o retorno
pelo exchange funcionam; cada link da página inicial copiada para ``~/curso`` leva a um arquivo; cada um tem o
seu MPLCONFIGDIR, dentro da pasta pessoal; o estado do hub fica fora do clone; o Formgrader lista as entregas
corrigidas para a correção manual e o *Autograde* recusa. No fim, nenhum processo, usuário ou grupo criado sobra.

Precisa de root (``useradd``) e do ``/usr/bin/python3``; o ``hub/instalar.sh`` instala o que faltar (bubblewrap,
npm, o proxy); o ambiente do hub fica em ``/opt/curso-hub-teste/venv`` (a primeira vez leva alguns minutos). A turma
só roda com ``CURSO_TESTE_HUB=1`` (o ``make test-hub`` define); as conferências rápidas do começo (a unidade do
systemd, a página inicial e a configuração do hub) rodam também no ``make test``.
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hub_comum import copiar_curso, falta, rodar

ROOT = Path(__file__).resolve().parents[2]
BASE = Path(os.environ.get("CURSO_HUB_TESTE", "/opt/curso-hub-teste"))
VENV = BASE / "venv"
CURSO = BASE / "curso"
AULA = "aula-01-self-attention"
NB = "03-exercicios"
ALUNOS = 10
PATH_DO_SYSTEMD = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
GRUPO = "curso-prof"


def _porta() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- o guia ------------------------------------------------------------------------------------------------------


def blocos_do_guia(secao: str) -> list[str]:
    """Os blocos ```bash``` da subseção ``### <secao>...`` de "## No JupyterHub" em docs/professor.md."""
    texto = (ROOT / "docs" / "professor.md").read_text(encoding="utf-8")
    hub = texto.split("\n## No JupyterHub", 1)[1].split("\n## ", 1)[0]
    partes = re.split(r"\n### ", hub)
    achada = [p for p in partes if p.startswith(secao)]
    assert len(achada) == 1, f"docs/professor.md: a subseção '### {secao}' de 'No JupyterHub'"
    return re.findall(r"```bash\n(.*?)```", achada[0], re.S)


def linhas_do_guia(secao: str) -> list[str]:
    """Os comandos dos blocos da subseção, um por linha (continuações com ``\\`` juntadas, sem os comentários)."""
    linhas = []
    for bloco in blocos_do_guia(secao):
        for linha in bloco.replace("\\\n", " ").splitlines():
            linha = re.sub(r"\s+# .*$", "", linha).strip()  # o comentário no fim da linha
            if linha and not linha.startswith("#"):
                linhas.append(linha)
    return linhas


def no_teste(texto: str, exchange: Path, estado: Path) -> str:
    """Os caminhos do guia trocados pelos do teste (e nada mais)."""
    trocas = {"/opt/curso-hub/": f"{BASE}/", "/opt/curso": str(CURSO), "/srv/nbgrader/exchange": str(exchange),
              "/var/lib/curso-hub": str(estado)}
    return re.sub("|".join(map(re.escape, trocas)), lambda m: trocas[m.group()], texto)


def test_o_servico_do_systemd_roda_o_comando_do_guia():
    """O ``hub/curso-hub.service`` sobe o hub com o comando do guia, a partir da pasta do estado (fora do clone)."""
    unidade = dict(ln.split("=", 1) for ln in (ROOT / "hub" / "curso-hub.service").read_text(encoding="utf-8")
                   .splitlines() if "=" in ln and not ln.startswith("#"))
    comando = next(ln for ln in linhas_do_guia("2. Alunos e professor") if "bin/jupyterhub" in ln)
    assert unidade["ExecStart"] == comando
    assert unidade["WorkingDirectory"] == "/var/lib/curso-hub" and unidade["StateDirectory"] == "curso-hub"
    assert unidade["Environment"] == "CURSO_HUB_ESTADO=/var/lib/curso-hub"
    ambiente = "".join(blocos_do_guia("2. Alunos e professor"))
    assert unidade["EnvironmentFile"] in ambiente  # o guia escreve o arquivo que a unidade lê


def _config_do_hub(monkeypatch, **env):
    from traitlets.config import Config

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    c = Config()
    caminho = ROOT / "hub" / "jupyterhub_config.py"
    escopo = {"get_config": lambda: c}
    exec(compile(caminho.read_text(encoding="utf-8"), str(caminho), "exec"), escopo)  # noqa: S102
    return c, escopo


def test_a_pagina_inicial_do_hub_so_tem_links_que_existem(monkeypatch, tmp_path):
    """A página que o hub copia para ``~/curso`` (ao lado de ``~/curso/modulo-06``, a cópia de
    ``notebooks/modulo-06``): cada link leva a um arquivo, e o texto é o do hub (sem ``make lab``, ``trabalho/``
    nem ``solutions/``). A página do curso local continua com o trecho dela, e o link da solução leva ao arquivo."""
    _, escopo = _config_do_hub(monkeypatch, CURSO_HUB_CURSO=str(ROOT), CURSO_HUB_LOCAL=str(tmp_path / "nada.py"))
    original = ROOT / "notebooks" / "00-comece-aqui.ipynb"
    pagina = tmp_path / "00-comece-aqui.ipynb"
    pagina.write_text(escopo["pagina_inicial_do_hub"](original), encoding="utf-8")
    links = _links(pagina)
    assert len(links) >= 19 and all(a.startswith("modulo-06/") for a in links), links
    assert [a for a in links if not (original.parent / a).is_file()] == []  # ~/curso tem o que notebooks/ tem
    texto = pagina.read_text(encoding="utf-8")
    assert "No JupyterHub da turma" in texto
    assert not [p for p in ("make lab", "trabalho/", "solutions/") if p in texto]
    local = _links(original)
    assert "../solutions/modulo-06/aula-01-self-attention/03-exercicios.ipynb" in local
    assert [a for a in local if not (original.parent / a).is_file()] == []
    assert "make lab" in original.read_text(encoding="utf-8")


def test_configuracao_do_hub_estado_path_matplotlib_e_umask(monkeypatch, tmp_path):
    """O estado do hub na pasta dele; o ambiente do curso no começo do PATH dos servidores; o MPLCONFIGDIR de cada
    um, já expandido, na pasta pessoal; umask 077 para os alunos e 022 para o professor (o retorno que o nbgrader
    copia para o exchange precisa ser legível); a lista de alunos só no servidor do professor."""
    venv, estado = tmp_path / "venv", tmp_path / "estado"
    c, _ = _config_do_hub(monkeypatch, CURSO_HUB_VENV=str(venv), CURSO_HUB_CURSO=str(tmp_path / "curso"),
                          CURSO_HUB_ESTADO=str(estado), CURSO_HUB_ALUNOS="bia,caio", CURSO_HUB_PROFESSORES="chp0",
                          CURSO_HUB_LOCAL=str(tmp_path / "nada.py"))
    assert c.JupyterHub.db_url == f"sqlite:///{estado}/jupyterhub.sqlite"
    assert c.JupyterHub.cookie_secret_file == str(estado / "jupyterhub_cookie_secret")
    assert c.ConfigurableHTTPProxy.pid_file == str(estado / "jupyterhub-proxy.pid")
    assert c.Spawner.environment["PATH"].split(":")[0] == str(venv / "bin")
    assert not any("{" in v for v in c.Spawner.environment.values())  # o JupyterHub não formata estes valores
    from types import SimpleNamespace

    aluno = SimpleNamespace(user=SimpleNamespace(name="root"), environment={}, popen_kwargs={})
    c.Spawner.pre_spawn_hook(aluno)  # "root" existe em toda máquina e não é da turma: a pasta dele fica como está
    assert aluno.environment["MPLCONFIGDIR"] == str(Path(pwd.getpwnam("root").pw_dir) / ".cache" / "matplotlib")
    assert aluno.popen_kwargs["umask"] == 0o077 and "CURSO_HUB_ALUNOS" not in aluno.environment
    prof = SimpleNamespace(user=SimpleNamespace(name="chp0"), environment={}, popen_kwargs={})
    c.Spawner.pre_spawn_hook(prof)
    assert prof.popen_kwargs["umask"] == 0o022 and prof.environment["CURSO_HUB_ALUNOS"] == "bia,caio"
    termo = json.loads((ROOT / "hub" / "etc" / "aluno" / "jupyter_server_config.json").read_text(encoding="utf-8"))
    assert termo["ServerApp"]["terminado_settings"]["shell_command"] == ["/bin/bash"]  # sem -l: o PATH fica


# --- a preparação ------------------------------------------------------------------------------------------------


def _instalar(exchange: Path, estado: Path) -> None:
    """O bloco "1. Instalar" do guia: o ``git clone`` é a cópia acima; o resto roda como está."""
    linhas = linhas_do_guia("1. Instalar")
    assert any(ln.startswith("git clone ") and ln.endswith(" /opt/curso") for ln in linhas), linhas
    # as variáveis do começo do script: os caminhos do teste e só o que a Aula 1 precisa
    env = dict(os.environ, CURSO_HUB_LEVE="1", CURSO_HUB_VENV=str(VENV), CURSO_HUB_EXCHANGE=str(exchange),
               CURSO_HUB_ESTADO=str(estado))
    for linha in linhas:
        if linha.startswith(("git clone ", "apt-get update")):
            continue
        r = subprocess.run(["bash", "-c", no_teste(linha, exchange, estado)], env=env, capture_output=True,
                           text=True, timeout=3600)
        assert r.returncode == 0, f"{linha}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    # o ambiente é do Python do sistema, que todos rodam (e não o do PATH de quem instalou)
    cfg = (VENV / "pyvenv.cfg").read_text(encoding="utf-8")
    assert re.search(r"^home = /usr/bin$", cfg, re.M), cfg


def _useradd(linha: str, nome: str) -> list[str]:
    """Um ``useradd ... ana && passwd ana`` do guia para o usuário ``nome`` (a senha não entra: o teste usa a API)."""
    cmd = shlex.split(linha.split("&&")[0])
    assert cmd[0] == "useradd", linha
    return [*cmd[:-1], nome]


def _pids_de(usuario: str) -> list[int]:
    uid = pwd.getpwnam(usuario).pw_uid
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if p.stat().st_uid == uid:
                    pids.append(int(p.name))
            except FileNotFoundError:
                continue
    return pids


def _arquivos(pasta: Path) -> set[str]:
    return {str(p.relative_to(pasta)) for p in pasta.rglob("*") if "__pycache__" not in p.parts}


class Hub:
    def __init__(self, url: str, token: str):
        self.url, self.token = url, token

    def pedir(self, metodo: str, caminho: str, corpo=None, esperar: float = 60):
        dados = None if corpo is None else json.dumps(corpo).encode()
        req = urllib.request.Request(self.url + urllib.parse.quote(caminho, safe="/?=&"), data=dados, method=metodo,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=esperar) as r:
            texto = r.read().decode()
        return json.loads(texto) if texto.strip().startswith(("{", "[")) else texto

    def iniciar(self, usuario: str, limite: float = 300) -> float:
        t0 = time.monotonic()
        try:
            self.pedir("POST", f"/hub/api/users/{usuario}/server")
        except urllib.error.HTTPError as exc:
            if exc.code != 400:  # 400: já está rodando
                raise
        while time.monotonic() - t0 < limite:
            info = self.pedir("GET", f"/hub/api/users/{usuario}")
            servidor = info.get("servers", {}).get("", {})
            if servidor.get("ready"):
                return time.monotonic() - t0
            time.sleep(0.5)
        raise AssertionError(f"o servidor de {usuario} não ficou pronto em {limite:.0f} s")

    def nbgrader(self, usuario: str, acao: str, **campos):
        """A lista de tarefas do nbgrader no servidor do aluno, como o botão do JupyterLab a chama."""
        corpo = urllib.parse.urlencode(campos).encode()
        req = urllib.request.Request(f"{self.url}/user/{usuario}/assignments/{acao}", data=corpo, method="POST",
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read().decode())

    def terminal(self, usuario: str, texto: str, limite: float = 900) -> tuple[int, str]:
        """Digita ``texto`` num terminal novo do JupyterLab de ``usuario`` (o shell e o ambiente que o servidor
        dele dá) e devolve o código de saída do último comando e o que apareceu na tela."""
        import asyncio

        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        nome = self.pedir("POST", f"/user/{usuario}/api/terminals")["name"]
        marca = f"FIM{secrets.token_hex(4)}"
        fim = re.compile(marca + r"=(\d+)")

        async def digitar():
            url = self.url.replace("http", "ws", 1) + f"/user/{usuario}/terminals/websocket/{nome}"
            ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {self.token}"}))
            await ws.write_message(json.dumps(["stdin", texto.rstrip("\n") + "\r" + f"echo {marca}=$?\r"]))
            tela, t0 = "", time.monotonic()
            while time.monotonic() - t0 < limite:
                msg = await asyncio.wait_for(ws.read_message(), timeout=limite)
                if msg is None:
                    break
                tipo, *dados = json.loads(msg)
                if tipo == "stdout":
                    tela += dados[0]
                    achado = fim.search(tela)
                    if achado:
                        ws.close()
                        return int(achado.group(1)), tela
            raise AssertionError(f"o terminal de {usuario} não terminou em {limite:.0f} s:\n{tela[-3000:]}")

        try:
            return asyncio.run(digitar())
        finally:
            self.pedir("DELETE", f"/user/{usuario}/api/terminals/{nome}")


def _local_config(run: Path, token: str) -> tuple[Path, int]:
    """Só o que o teste precisa a mais (portas livres e um token para a API), como o guia permite em
    /etc/curso-hub/local_config.py; o estado do hub, o PATH e o resto ficam com a configuração do curso."""
    porta, porta_hub, porta_api = _porta(), _porta(), _porta()
    local = run / "local_config.py"
    local.write_text(f"""
c.JupyterHub.port = {porta}
c.JupyterHub.hub_port = {porta_hub}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{porta_api}"
c.JupyterHub.services.append({{"name": "teste", "api_token": {token!r}}})
c.JupyterHub.load_roles.append({{"name": "teste", "services": ["teste"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]}})
""", encoding="utf-8")
    return local, porta


@pytest.fixture(scope="module")
def turma():  # noqa: PLR0915 — a preparação do hub, passo a passo, como o guia
    if not os.environ.get("CURSO_TESTE_HUB"):
        pytest.skip("o teste do JupyterHub roda com `make test-hub` (python3 curso.py test-hub)")
    if os.geteuid() != 0:
        falta("o teste do hub cria usuários Unix: rode como root (make test-hub)")
    if not Path("/usr/bin/python3").exists():
        falta("sem /usr/bin/python3 (o ambiente do hub é criado com ele)")
    grupo_existia = subprocess.run(["getent", "group", GRUPO], capture_output=True).returncode == 0
    etc_existia = Path("/etc/curso-hub").exists()  # o hub/instalar.sh cria /etc/curso-hub (vazia)
    criados, processo = [], None
    run = Path(tempfile.mkdtemp(prefix="curso-hub-teste-"))  # fora do basetemp do pytest (0700): o exchange
    os.chmod(run, 0o755)                                        # precisa ser alcançável por todos
    exchange, estado = run / "exchange", run / "estado"
    try:
        BASE.mkdir(parents=True, exist_ok=True)
        copiar_curso(CURSO)
        t_instalar = time.monotonic()
        _instalar(exchange, estado)
        t_instalar = time.monotonic() - t_instalar
        assert exchange.stat().st_mode & 0o7777 == 0o1777 and estado.stat().st_mode & 0o777 == 0o700
        sufixo = secrets.token_hex(3)
        alunos = [f"cha{sufixo}{k:02d}" for k in range(ALUNOS)]
        prof = f"chp{sufixo}"
        modelo_aluno, modelo_prof = (ln for ln in linhas_do_guia("2. Alunos e professor") if ln.startswith("useradd"))
        assert f"-G {GRUPO}" in modelo_prof and "-G" not in modelo_aluno
        for u in alunos:
            rodar(_useradd(modelo_aluno, u))
            criados.append(u)
        rodar(_useradd(modelo_prof, prof))
        criados.append(prof)
        # o hub, com o comando do guia, da pasta do curso (onde nada dele pode ficar) e com o PATH do systemd
        linhas = linhas_do_guia("2. Alunos e professor")
        assert "export CURSO_HUB_ALUNOS=ana,bia,caio CURSO_HUB_PROFESSORES=prof" in linhas
        ambiente = linhas[linhas.index("cat > /etc/curso-hub/ambiente <<'FIM'") + 1:linhas.index("FIM")]
        assert [a.split("=")[0] for a in ambiente] == ["CURSO_HUB_ALUNOS", "CURSO_HUB_PROFESSORES"], ambiente
        comando = shlex.split(no_teste(next(ln for ln in linhas if "bin/jupyterhub" in ln), exchange, estado))
        token = secrets.token_hex(24)
        local, porta = _local_config(run, token)
        env = {"PATH": PATH_DO_SYSTEMD, "HOME": "/root", "USER": "root", "LANG": "C.UTF-8",
               "CURSO_HUB_ALUNOS": ",".join(alunos), "CURSO_HUB_PROFESSORES": prof, "CURSO_HUB_VENV": str(VENV),
               "CURSO_HUB_CURSO": str(CURSO),
               "CURSO_HUB_EXCHANGE": str(exchange), "CURSO_HUB_ESTADO": str(estado), "CURSO_HUB_LOCAL": str(local)}
        clone = _arquivos(CURSO)
        log = open(run / "hub.log", "w")
        t0 = time.monotonic()
        processo = subprocess.Popen(comando, cwd=CURSO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        hub = Hub(f"http://127.0.0.1:{porta}", token)
        while True:
            try:
                hub.pedir("GET", "/hub/api/", esperar=5)
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if processo.poll() is not None or time.monotonic() - t0 > 180:
                    raise AssertionError("o hub não subiu:\n" + (run / "hub.log").read_text()[-4000:]) from None
                time.sleep(0.5)
        yield {"hub": hub, "alunos": alunos, "prof": prof, "exchange": exchange, "estado": estado, "run": run,
               "subida_s": time.monotonic() - t0, "clone": clone, "instalar_s": t_instalar}
    finally:
        if processo is not None and processo.poll() is None:
            processo.send_signal(signal.SIGTERM)  # cleanup_servers: o hub para os servidores e o proxy
            try:
                processo.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(processo.pid, signal.SIGKILL)
                processo.wait(10)
        for u in criados:
            for pid in _pids_de(u):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["userdel", "-r", "-f", u], capture_output=True)
        if not grupo_existia:
            subprocess.run(["groupdel", GRUPO], capture_output=True)
        if not etc_existia and Path("/etc/curso-hub").is_dir() and not any(Path("/etc/curso-hub").iterdir()):
            Path("/etc/curso-hub").rmdir()
        shutil.rmtree(run, ignore_errors=True)
        sobrou = [u for u in criados if subprocess.run(["id", u], capture_output=True).returncode == 0]
        assert not sobrou, f"usuários que sobraram: {sobrou}"
        assert grupo_existia or subprocess.run(["getent", "group", GRUPO], capture_output=True).returncode
        assert processo is None or processo.poll() is not None, "o hub ainda roda"


# --- as verificações ---------------------------------------------------------------------------------------------


def _como(usuario: str, cmd, **kw):
    return subprocess.run(["runuser", "-u", usuario, "--", "env", "-i", f"HOME={pwd.getpwnam(usuario).pw_dir}",
                           f"PATH={PATH_DO_SYSTEMD}", *map(str, cmd)], capture_output=True, text=True, **kw)


LER = """import json, os, sys
lidos = []
for p in json.loads(sys.argv[1]):
    try:
        os.listdir(p) if os.path.isdir(p) else open(p, "rb").read(1)
        lidos.append(p)
    except OSError:
        pass
print(json.dumps(lidos))
"""


def _lidos_por(usuario: str, caminhos: list) -> list[str]:
    """Quais de ``caminhos`` ``usuario`` consegue ler (listar, se for pasta)."""
    r = _como(usuario, ["/usr/bin/python3", "-c", LER, json.dumps([str(c) for c in caminhos])], timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _privado(turma) -> None:
    """Cada aluno não lê nada de um colega nem do professor, nem as soluções do curso; lê o próprio."""
    alunos, prof = turma["alunos"], turma["prof"]
    casa = {u: Path(pwd.getpwnam(u).pw_dir) for u in [*alunos, prof]}
    for u in casa:
        assert casa[u].stat().st_mode & 0o777 == 0o700, (u, oct(casa[u].stat().st_mode))
    solucao = CURSO / "solutions" / "modulo-06" / AULA / f"{NB}.ipynb"
    nbgrader = casa[prof] / "curso-nbgrader"
    do_prof = [casa[prof], nbgrader, nbgrader / "source", nbgrader / "source" / AULA / f"{NB}.ipynb",
               nbgrader / "gradebook.db", CURSO / "solutions", solucao, CURSO / "tests",
               turma["exchange"] / "atencao" / "inbound", turma["exchange"] / "atencao" / "feedback", turma["estado"]]
    for i, u in enumerate(alunos):
        colega = casa[alunos[(i + 1) % len(alunos)]]
        dos_outros = [colega, colega / "curso", colega / "curso" / "00-comece-aqui.ipynb", colega / "atencao",
                      colega / "atencao" / AULA, colega / "atencao" / AULA / f"{NB}.ipynb",
                      colega / "atencao" / AULA / "feedback", *do_prof]
        assert _lidos_por(u, dos_outros) == [], u
        proprios = [casa[u] / "curso" / "00-comece-aqui.ipynb", CURSO / "notebooks" / "00-comece-aqui.ipynb",
                    CURSO / "lib" / "atencao" / "__init__.py"]
        assert _lidos_por(u, proprios) == [str(p) for p in proprios], u
    assert _lidos_por(prof, [solucao]) == [str(solucao)]  # o professor lê as soluções (grupo curso-prof)


def _links(pagina: Path) -> list[str]:
    nb = json.loads(pagina.read_text(encoding="utf-8"))
    texto = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return [alvo for alvo in re.findall(r"\]\(([^)\s]+)\)", texto) if not re.match(r"[a-z]+:", alvo)]


def _resposta_certa() -> dict:
    """As respostas de ``solutions/`` escritas de outra forma (uma cópia das soluções iria para revisão)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo.gerar import a_mao

    return a_mao(json.loads((CURSO / "solutions" / "modulo-06" / AULA / f"{NB}.ipynb").read_text(encoding="utf-8")))


def _interface(hub: Hub, usuario: str) -> tuple[set, int]:
    """O que o JupyterLab do usuário desliga (``disabledExtensions`` da página) e o código HTTP do Formgrader."""
    pagina = hub.pedir("GET", f"/user/{usuario}/lab")
    dados = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', pagina, re.S).group(1))
    try:
        hub.pedir("GET", f"/user/{usuario}/formgrader")
        codigo = 200
    except urllib.error.HTTPError as exc:
        codigo = exc.code
    return set(dados.get("disabledExtensions", [])), codigo


def _pss_mb(usuario: str) -> float:
    total = 0
    for pid in _pids_de(usuario):
        try:
            for linha in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if linha.startswith("Pss:"):
                    total += int(linha.split()[1])
        except OSError:
            continue
    return total / 1024


def _memoria_livre_mb() -> float:
    for linha in Path("/proc/meminfo").read_text().splitlines():
        if linha.startswith("MemAvailable:"):
            return int(linha.split()[1]) / 1024
    return float("nan")


def _ambiente_do_servidor(usuario: str) -> dict:
    """As variáveis do processo ``jupyterhub-singleuser`` do usuário."""
    for pid in _pids_de(usuario):
        try:
            if b"jupyterhub-singleuser" in Path(f"/proc/{pid}/cmdline").read_bytes():
                dados = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                return dict(d.decode().split("=", 1) for d in dados if b"=" in d)
        except OSError:
            continue
    raise AssertionError(f"sem o servidor de {usuario}")


def test_turma_no_hub_de_ponta_a_ponta(turma):  # noqa: PLR0915 — o roteiro de uma turma, em ordem
    hub, alunos, prof, estado = turma["hub"], turma["alunos"], turma["prof"], turma["estado"]
    a_certo, a_adulterado = alunos[:2]
    # 1. os 10 alunos e o professor entram ao mesmo tempo
    livre_antes = _memoria_livre_mb()
    with ThreadPoolExecutor(len(alunos) + 1) as pool:
        tempos = dict(zip([*alunos, prof], pool.map(hub.iniciar, [*alunos, prof])))
    livre_depois = _memoria_livre_mb()
    pss = {u: _pss_mb(u) for u in alunos}
    # o estado do hub fica na pasta dele, e nada aparece no clone (de onde o hub foi iniciado)
    assert (estado / "jupyterhub.sqlite").is_file() and (estado / "jupyterhub_cookie_secret").is_file()
    assert _arquivos(CURSO) == turma["clone"], sorted(_arquivos(CURSO) ^ turma["clone"])
    # cada um com o seu matplotlib dentro da pasta pessoal, o ambiente do curso no PATH e umask 077
    pastas_mpl = set()
    for u in [*alunos, prof]:
        amb = _ambiente_do_servidor(u)
        casa = pwd.getpwnam(u).pw_dir
        assert amb["MPLCONFIGDIR"] == f"{casa}/.cache/matplotlib", amb.get("MPLCONFIGDIR")
        assert amb["PATH"].split(":")[0] == str(VENV / "bin")
        assert (amb.get("CURSO_HUB_ALUNOS") == ",".join(sorted(alunos))) if u == prof else "CURSO_HUB_ALUNOS" not in amb
        pastas_mpl.add(amb["MPLCONFIGDIR"])
    assert len(pastas_mpl) == len(alunos) + 1
    codigo, tela = hub.terminal(a_certo, "umask; command -v alembic; "
                                         "python -c 'import matplotlib; print(\"MPL\", matplotlib.get_configdir())'")
    casa = pwd.getpwnam(a_certo).pw_dir
    assert codigo == 0 and "0077" in tela and f"{VENV}/bin/alembic" in tela, tela
    assert f"MPL {casa}/.cache/matplotlib" in tela and "temporary" not in tela, tela
    assert Path(casa, ".cache", "matplotlib").stat().st_uid == pwd.getpwnam(a_certo).pw_uid
    # a página inicial do hub: cada link leva a um arquivo da cópia do aluno, e o texto é o do hub
    for u in alunos:
        pagina = Path(pwd.getpwnam(u).pw_dir) / "curso" / "00-comece-aqui.ipynb"
        links = _links(pagina)
        assert len(links) >= 19, links  # as aulas 1 a 5
        quebrados = [a for a in links if not (pagina.parent / urllib.parse.unquote(a.split("#")[0])).is_file()]
        assert not quebrados, quebrados
        texto = pagina.read_text(encoding="utf-8")
        assert "No JupyterHub da turma" in texto and "make lab" not in texto and "solutions/" not in texto
    assert hub.pedir("GET", f"/user/{a_certo}/api/contents/curso/00-comece-aqui.ipynb?content=0")["type"] == "notebook"
    # o aluno tem a lista de tarefas e não o Formgrader; o professor, os dois
    desligadas, formgrader = _interface(hub, a_certo)
    assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"} <= desligadas
    assert "@jupyter/nbgrader:assignment-list" not in desligadas and formgrader == 404
    desligadas, formgrader = _interface(hub, prof)
    assert not desligadas & {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"}
    assert formgrader == 200
    # 2. o professor libera a Aula 1 com o bloco "3. Liberar uma aula", no terminal dele (prazo futuro, e só o
    # 03-exercicios, como o comentário do guia mostra), na primeira vez
    bloco = no_teste("\n".join(linhas_do_guia("3. Liberar uma aula")), turma["exchange"], estado)
    bloco, trocas = re.subn(r'--prazo "[^"]*"', f'--prazo "2099-01-01 00:00:00 -0300" --notebooks {NB}', bloco)
    assert trocas == 1, bloco
    t0 = time.monotonic()
    codigo, tela = hub.terminal(prof, bloco, limite=600)
    liberar_s = time.monotonic() - t0
    assert codigo == 0, tela[-4000:]
    pasta = Path(pwd.getpwnam(prof).pw_dir) / "curso-nbgrader"
    with sqlite3.connect(pasta / "gradebook.db") as db:
        assert db.execute("select version_num from alembic_version").fetchall(), "gradebook sem alembic_version"
    # 3. os alunos buscam e dois entregam (um certo; outro com uma célula que tenta adulterar a correção)
    for u in alunos:
        lista = hub.nbgrader(u, "fetch", course_id="atencao", assignment_id=AULA)
        assert lista["success"], lista
    for u in (a_certo, a_adulterado):
        caminho = f"atencao/{AULA}/{NB}.ipynb"
        nb = hub.pedir("GET", f"/user/{u}/api/contents/{caminho}")["content"]
        assert any("NotImplementedError" in "".join(c["source"]) for c in nb["cells"])  # o do aluno, em branco
        nb = _resposta_certa()
        if u == a_adulterado:  # uma célula que tenta trocar a verificação e mexer no curso do professor
            nb["cells"].insert(2, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                   "source": "import atencao.checks as _c, os\n"
                                             "_c.__dict__.update({k: (lambda *a, **k: None) for k in dir(_c)})\n"
                                             f"print(os.listdir({str(pasta)!r}))\n"
                                             f"open({str(pasta)!r} + '/adulterado.txt', 'w').write('x')\n"})
        hub.pedir("PUT", f"/user/{u}/api/contents/{caminho}", {"type": "notebook", "format": "json", "content": nb})
        entregue = hub.nbgrader(u, "submit", course_id="atencao", assignment_id=AULA)
        assert entregue["success"], entregue
    _privado(turma)
    # 4. o professor corrige com o bloco "5. Coletar, corrigir e devolver", no terminal dele
    bloco = no_teste("\n".join(linhas_do_guia("5. Coletar, corrigir e devolver")),
                     turma["exchange"], estado)
    t0 = time.monotonic()
    codigo, tela = hub.terminal(prof, bloco, limite=900)
    correcao_s = time.monotonic() - t0
    assert codigo == 0, tela[-4000:]
    with open(pasta / "correcao" / AULA / "notas.csv", encoding="utf-8") as f:
        notas = {ln["aluno"]: ln for ln in csv.DictReader(f)}
    sys.path.insert(0, str(CURSO / "lib"))
    from correcao.catalogo import catalog

    g = catalog(CURSO / "solutions")[(AULA, NB)]
    maximo = sum(p for _, p, _ in g.cells.values())
    assert set(notas) == {a_certo, a_adulterado}
    assert float(notas[a_certo]["total"]) == g.max_auto and float(notas[a_certo]["maximo"]) == maximo
    assert notas[a_adulterado]["situacao"] == "revisar", notas[a_adulterado]
    # o relatório da turma e a página de similaridade, ao lado de notas.csv (a coluna sobrevive ao máximo do hub)
    assert "similaridade" in notas[a_certo], list(notas[a_certo])
    relatorio = (pasta / "correcao" / AULA / "relatorio-turma.html").read_text(encoding="utf-8")
    assert "Relatório da turma" in relatorio and "aula01-ex3-verificacao" in relatorio
    assert "Similaridade entre as entregas" in (pasta / "correcao" / AULA / "similaridade.html").read_text(
        encoding="utf-8")
    with open(pasta / "correcao" / AULA / "nao-corrigidos.csv", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["aluno", "arquivo", "motivo"]]  # timestamp.txt e o segredo não aparecem
    assert not (pasta / "adulterado.txt").exists()  # a célula do aluno rodou na caixa: nada chegou ao disco
    with open(pasta / "correcao" / AULA / f"turma-{AULA}.csv", encoding="utf-8") as f:
        linhas = {ln["aluno"]: ln["situacao"] for ln in csv.DictReader(f)}
    assert set(linhas) == set(alunos)  # quem não entregou também (o hub passa CURSO_HUB_ALUNOS ao professor)
    assert [u for u, situacao in linhas.items() if situacao == "sem entrega"] == alunos[2:], linhas
    # o gradebook (lido como o Formgrader o lê) tem as notas da caixa e o máximo da tarefa
    r = _como(prof, [VENV / "bin" / "python", "-c",
                     "import json; from correcao import hub; "
                     f"print(json.dumps(hub.gradebook_scores(hub.HubCourse({str(pasta)!r}), {AULA!r})))"],
              cwd=pasta, timeout=120)
    assert r.returncode == 0, r.stderr
    gradebook = json.loads(r.stdout)
    assert gradebook[a_certo][NB] == [g.max_auto, maximo]
    assert gradebook[a_adulterado][NB] == [float(notas[a_adulterado]["total"]), maximo]
    _formgrader(hub, prof, [a_certo, a_adulterado])
    # 5. cada aluno busca o retorno em pt-BR
    for u in (a_certo, a_adulterado):
        retorno = hub.nbgrader(u, "fetch_feedback", course_id="atencao", assignment_id=AULA)
        assert retorno["success"], retorno
        arquivos = hub.pedir("GET", f"/user/{u}/api/contents/atencao/{AULA}/feedback")["content"]
        pagina = next(a for a in arquivos if a["type"] == "directory")
        html = hub.pedir("GET", f"/user/{u}/api/contents/{pagina['path']}/{NB}.html")["content"]
        assert "Retorno da correção automática" in html and f"Máximo da tarefa: {maximo:g}" in html
        assert u in html and (a_adulterado if u == a_certo else a_certo) not in html
    _privado(turma)  # com o retorno na pasta de cada um, ainda nada dos outros
    print(f"\n[hub] hub/instalar.sh {turma['instalar_s']:.1f} s; subida {turma['subida_s']:.1f} s; "
          f"{len(alunos)} alunos e o professor prontos em "
          f"{min(tempos.values()):.1f} a {max(tempos.values()):.1f} s; memória livre {livre_antes:.0f} -> "
          f"{livre_depois:.0f} MB; PSS por servidor {min(pss.values()):.0f} a {max(pss.values()):.0f} MB; "
          f"primeiro turma liberar {liberar_s:.1f} s; correção de 2 entregas {correcao_s:.1f} s")


def _formgrader(hub: Hub, prof: str, entregaram: list[str]) -> None:
    """Depois de ``turma corrigir``, a correção manual do Formgrader lista as entregas (``autograded/``), e o
    botão *Autograde* recusa (o código do aluno não roda fora da caixa)."""
    lista = hub.pedir("GET", f"/user/{prof}/formgrader/api/submitted_notebooks/{AULA}/{NB}")
    assert sorted(s["student"] for s in lista) == sorted(entregaram), lista
    resultado = hub.pedir("POST", f"/user/{prof}/formgrader/api/submission/{AULA}/{entregaram[0]}/autograde", {},
                          esperar=120)
    assert resultado["success"] is False and "turma corrigir" in json.dumps(resultado, ensure_ascii=False), resultado


def test_nada_sobra(turma):
    """Roda depois do de ponta a ponta (mesmo módulo): os servidores param (e o hub, na limpeza da fixture)."""
    hub = turma["hub"]
    for u in [*turma["alunos"], turma["prof"]]:
        hub.pedir("DELETE", f"/hub/api/users/{u}/server")
    limite = time.monotonic() + 60
    while time.monotonic() < limite and any(_pids_de(u) for u in [*turma["alunos"], turma["prof"]]):
        time.sleep(0.5)
    assert not any(_pids_de(u) for u in [*turma["alunos"], turma["prof"]])
