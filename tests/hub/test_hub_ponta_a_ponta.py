"""A turma inteira num JupyterHub de verdade, nesta máquina (``make test-hub``; a CI roda): o hub em 127.0.0.1
com o ``hub/jupyterhub_config.py`` do curso, três usuários Unix temporários (dois alunos e o professor), a
Aula 1 ``03-exercicios`` liberada pelo exchange do nbgrader, os dois alunos buscam e entregam pela API REST do
hub (um certo; outro com uma célula que tenta adulterar a correção), o professor corrige com
``curso.py turma corrigir`` (a caixa do curso), o gradebook tem as notas esperadas e cada aluno busca o retorno em
pt-BR pelo exchange. No fim, nenhum processo dos usuários fica rodando e nenhum usuário sobra.

Precisa de root (``useradd``), do bubblewrap, do Node (``configurable-http-proxy`` do npm) e do ambiente do
hub em ``/opt/curso-hub-teste`` (criado aqui na primeira vez, a partir de ``/usr/bin/python3``; refeito quando
``hub/requirements-hub.txt`` muda). Só roda com ``CURSO_TESTE_HUB=1`` (o ``make test-hub`` define).
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

if not os.environ.get("CURSO_TESTE_HUB"):
    pytest.skip("o teste do JupyterHub roda com `make test-hub` (python3 curso.py test-hub)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
BASE = Path(os.environ.get("CURSO_HUB_TESTE", "/opt/curso-hub-teste"))
VENV = BASE / "venv"
CURSO = BASE / "curso"
AULA = "aula-01-self-attention"
NB = "03-exercicios"
NA_CI = bool(os.environ.get("CI"))


def _falta(motivo: str):
    if NA_CI:
        pytest.fail(motivo)
    pytest.skip(motivo)


def _rodar(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}: {r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


def _porta() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proxy() -> str | None:
    achado = shutil.which("configurable-http-proxy") or shutil.which("configurable-http-proxy",
                                                                        path=str(BASE / "node" / "bin"))
    if achado or not shutil.which("npm"):
        return achado
    _rodar(["npm", "install", "--silent", "--prefix", BASE / "node", "-g", "configurable-http-proxy@5"])
    return shutil.which("configurable-http-proxy", path=str(BASE / "node" / "bin"))


def _copiar_curso() -> None:
    """O curso como o hub o usa: uma cópia legível por todos (os arquivos do git) e o ambiente do hub com a
    biblioteca em modo editável apontando para ela (a correção lê ``solutions/`` da pasta do curso)."""
    if CURSO.exists():
        shutil.rmtree(CURSO)
    arquivos = _rodar(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0")
    for nome in filter(None, arquivos):
        origem = ROOT / nome
        if origem.is_file():
            (CURSO / nome).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origem, CURSO / nome)


def _ambiente_do_hub() -> None:
    marca = VENV / ".requirements-hub.txt"
    pedido = (ROOT / "hub" / "requirements-hub.txt").read_text(encoding="utf-8")
    if not (VENV / "bin" / "python").exists() or not marca.exists() or marca.read_text(encoding="utf-8") != pedido:
        _rodar(["/usr/bin/python3", "-m", "venv", "--clear", VENV])
        _rodar([VENV / "bin" / "pip", "install", "--quiet", "-r", ROOT / "hub" / "requirements-hub.txt"])
        (VENV / ".curso-editavel").unlink(missing_ok=True)
        marca.write_text(pedido, encoding="utf-8")
    editavel = VENV / ".curso-editavel"  # a biblioteca aponta para CURSO, que é sempre o mesmo caminho
    if not editavel.exists():
        _rodar([VENV / "bin" / "pip", "install", "--quiet", "--no-deps", "-e", CURSO], cwd=CURSO)
        editavel.write_text(str(CURSO), encoding="utf-8")
    _rodar([VENV / "bin" / "python", "-c", "import sys; sys.path.insert(0, 'scripts'); import preparar_trabalho as p;"
            " p.configure(hub=True)"], cwd=CURSO)
    _rodar(["chmod", "-R", "a+rX", BASE])


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

    def iniciar(self, usuario: str, limite: float = 180) -> float:
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


@pytest.fixture(scope="module")
def turma(tmp_path_factory):  # noqa: PLR0915 — a preparação do hub, passo a passo, num roteiro linear
    if os.geteuid() != 0:
        _falta("o teste do hub cria usuários Unix: rode como root (make test-hub)")
    if not shutil.which("bwrap"):
        _falta("sem o bubblewrap (apt-get install bubblewrap)")
    if not Path("/usr/bin/python3").exists():
        _falta("sem /usr/bin/python3 (o ambiente do hub é criado com ele)")
    proxy = _proxy()
    if not proxy:
        _falta("sem o configurable-http-proxy (npm install -g configurable-http-proxy; o .ci/run instala)")
    BASE.mkdir(parents=True, exist_ok=True)
    _copiar_curso()
    _ambiente_do_hub()
    sufixo = secrets.token_hex(3)
    rajada = int(os.environ.get("CURSO_HUB_RAJADA", "0"))  # alunos a mais, para medir logins simultâneos
    alunos = [f"cha{sufixo}a", f"cha{sufixo}b"] + [f"chr{sufixo}{k:02d}" for k in range(rajada)]
    prof = f"chp{sufixo}"
    criados, processo = [], None
    run = Path(tempfile.mkdtemp(prefix="curso-hub-teste-"))  # fora do basetemp do pytest (0700): o exchange
    exchange = run / "exchange"                                 # precisa ser alcançável por todos
    exchange.mkdir()
    os.chmod(run, 0o755)
    os.chmod(exchange, 0o1777)
    try:
        for u in alunos + [prof]:
            _rodar(["useradd", "-m", "-s", "/bin/bash", u])
            criados.append(u)
        token = secrets.token_hex(24)
        porta, porta_hub, porta_api = _porta(), _porta(), _porta()
        local = run / "local_config.py"
        local.write_text(f"""
c.JupyterHub.port = {porta}
c.JupyterHub.hub_port = {porta_hub}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{porta_api}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{run}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{run}/cookie_secret"
c.JupyterHub.services.append({{"name": "teste", "api_token": {token!r}}})
c.JupyterHub.load_roles.append({{"name": "teste", "services": ["teste"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]}})
""", encoding="utf-8")
        env = dict(os.environ, CURSO_HUB_VENV=str(VENV), CURSO_HUB_CURSO=str(CURSO),
                   CURSO_HUB_ETC=str(CURSO / "hub" / "etc"), CURSO_HUB_EXCHANGE=str(exchange),
                   CURSO_HUB_ALUNOS=",".join(alunos), CURSO_HUB_PROFESSORES=prof, CURSO_HUB_LOCAL=str(local),
                   PATH=f"{VENV / 'bin'}:{Path(proxy).parent}:{os.environ['PATH']}")
        env.pop("JUPYTER_CONFIG_DIR", None)
        log = open(run / "hub.log", "w")
        t0 = time.monotonic()
        processo = subprocess.Popen([VENV / "bin" / "jupyterhub", "-f", CURSO / "hub" / "jupyterhub_config.py"],
                                    cwd=run, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        hub = Hub(f"http://127.0.0.1:{porta}", token)
        while True:
            try:
                hub.pedir("GET", "/hub/api/", esperar=5)
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if processo.poll() is not None or time.monotonic() - t0 > 120:
                    raise AssertionError("o hub não subiu:\n" + (run / "hub.log").read_text()[-4000:]) from None
                time.sleep(0.5)
        yield {"hub": hub, "alunos": alunos, "prof": prof, "exchange": exchange, "run": run,
               "subida_s": time.monotonic() - t0, "env": env}
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
        shutil.rmtree(run, ignore_errors=True)
        sobrou = [u for u in criados if subprocess.run(["id", u], capture_output=True).returncode == 0]
        assert not sobrou, f"usuários que sobraram: {sobrou}"
        assert processo is None or processo.poll() is not None, "o hub ainda roda"


def _como(usuario: str, cmd, env, **kw):
    base = {k: env[k] for k in ("CURSO_HUB_EXCHANGE", "PATH") if k in env}
    return subprocess.run(["runuser", "-u", usuario, "--", "env", "-i", f"HOME=/home/{usuario}",
                           *(f"{k}={v}" for k, v in base.items()), *map(str, cmd)],
                          capture_output=True, text=True, **kw)


def _interface(hub: Hub, usuario: str) -> tuple[set, int]:
    """O que o JupyterLab do usuário desliga (``disabledExtensions`` da página) e o código HTTP do Formgrader."""
    import re

    pagina = hub.pedir("GET", f"/user/{usuario}/lab")
    dados = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', pagina, re.S).group(1))
    try:
        hub.pedir("GET", f"/user/{usuario}/formgrader")
        codigo = 200
    except urllib.error.HTTPError as exc:
        codigo = exc.code
    return set(dados.get("disabledExtensions", [])), codigo


def _resposta_certa() -> dict:
    """As respostas de ``solutions/`` escritas de outra forma (uma cópia das soluções iria para revisão)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo.gerar import a_mao

    return a_mao(json.loads((CURSO / "solutions" / "modulo-06" / AULA / f"{NB}.ipynb").read_text(encoding="utf-8")))


def test_turma_no_hub_de_ponta_a_ponta(turma):  # noqa: PLR0915 — o roteiro de uma turma, em ordem
    hub, env = turma["hub"], turma["env"]
    a_certo, a_adulterado = turma["alunos"][:2]
    prof = turma["prof"]
    # 1. o professor libera a Aula 1 (só o 03-exercicios), com o curso do hub
    curso_py = [VENV / "bin" / "python", CURSO / "curso.py", "--neste-ambiente", "turma"]
    r = _como(prof, [*curso_py, "liberar", AULA, "--notebooks", NB, "--prazo", "2099-01-01 00:00:00 UTC",
                     "--exchange", turma["exchange"]], env, cwd=f"/home/{prof}", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    # 2. os alunos entram (servidores iniciados pela API do hub), buscam, editam e entregam
    tempos = {u: hub.iniciar(u) for u in (a_certo, a_adulterado)}
    # o aluno começa na página do curso, com a lista de tarefas e sem o Formgrader; o professor, com ele
    assert hub.pedir("GET", f"/user/{a_certo}/api/contents/curso/00-comece-aqui.ipynb?content=0")["type"] == "notebook"
    desligadas, formgrader = _interface(hub, a_certo)
    assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"} <= desligadas
    assert "@jupyter/nbgrader:assignment-list" not in desligadas and formgrader == 404
    hub.iniciar(prof)
    desligadas, formgrader = _interface(hub, prof)
    assert not desligadas & {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"}
    assert formgrader == 200
    hub.pedir("DELETE", f"/hub/api/users/{prof}/server")
    for u in (a_certo, a_adulterado):
        lista = hub.nbgrader(u, "fetch", course_id="atencao", assignment_id=AULA)
        assert lista["success"], lista
        caminho = f"atencao/{AULA}/{NB}.ipynb"
        nb = hub.pedir("GET", f"/user/{u}/api/contents/{caminho}")["content"]
        assert any("NotImplementedError" in "".join(c["source"]) for c in nb["cells"])  # o do aluno, em branco
        if u == a_certo:
            nb = _resposta_certa()
        else:  # uma célula que tenta trocar a verificação e mexer no curso do professor (fora da caixa)
            nb = _resposta_certa()
            alvo = f"/home/{prof}/curso-nbgrader"
            nb["cells"].insert(2, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                   "source": "import atencao.checks as _c, os\n"
                                             "_c.__dict__.update({k: (lambda *a, **k: None) for k in dir(_c)})\n"
                                             f"print(os.listdir({alvo!r}))\n"
                                             f"open({alvo!r} + '/adulterado.txt', 'w').write('x')\n"})
        hub.pedir("PUT", f"/user/{u}/api/contents/{caminho}", {"type": "notebook", "format": "json",
                                                               "content": nb})
        entregue = hub.nbgrader(u, "submit", course_id="atencao", assignment_id=AULA)
        assert entregue["success"], entregue
    # 3. o professor corrige com o comando do curso
    t0 = time.monotonic()
    r = _como(prof, [*curso_py, "corrigir", AULA, "--exchange", turma["exchange"]], env, cwd=f"/home/{prof}",
              timeout=600)
    correcao_s = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    pasta = Path(f"/home/{prof}/curso-nbgrader")
    import csv

    with open(pasta / "correcao" / AULA / "notas.csv", encoding="utf-8") as f:
        notas = {ln["aluno"]: ln for ln in csv.DictReader(f)}
    sys.path.insert(0, str(CURSO / "lib"))
    from correcao.catalogo import catalog

    g = catalog(CURSO / "solutions")[(AULA, NB)]
    maximo = sum(p for _, p, _ in g.cells.values())
    assert set(notas) == {a_certo, a_adulterado}
    assert float(notas[a_certo]["total"]) == g.max_auto and float(notas[a_certo]["maximo"]) == maximo
    assert notas[a_adulterado]["situacao"] == "revisar", notas[a_adulterado]
    with open(pasta / "correcao" / AULA / "nao-corrigidos.csv", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["aluno", "arquivo", "motivo"]]  # timestamp.txt e o segredo não aparecem
    assert not (pasta / "adulterado.txt").exists()  # a célula do aluno rodou na caixa: nada chegou ao disco
    # 4. o gradebook (lido como o Formgrader o lê) tem as notas da caixa e o máximo da tarefa
    r = _como(prof, [VENV / "bin" / "python", "-c",
                     "import json, sys; from correcao import hub; "
                     f"print(json.dumps(hub.gradebook_scores(hub.HubCourse({str(pasta)!r}), {AULA!r})))"],
              env, cwd=f"/home/{prof}", timeout=120)
    assert r.returncode == 0, r.stderr
    gradebook = json.loads(r.stdout)
    assert gradebook[a_certo][NB] == [g.max_auto, maximo]
    assert gradebook[a_adulterado][NB] == [float(notas[a_adulterado]["total"]), maximo]
    # 5. cada aluno busca o retorno em pt-BR
    for u in (a_certo, a_adulterado):
        retorno = hub.nbgrader(u, "fetch_feedback", course_id="atencao", assignment_id=AULA)
        assert retorno["success"], retorno
        arquivos = hub.pedir("GET", f"/user/{u}/api/contents/atencao/{AULA}/feedback")["content"]
        pagina = next(a for a in arquivos if a["type"] == "directory")
        html = hub.pedir("GET", f"/user/{u}/api/contents/{pagina['path']}/{NB}.html")["content"]
        assert "Retorno da correção automática" in html and f"Máximo da tarefa: {maximo:g}" in html
        assert u in html and (a_adulterado if u == a_certo else a_certo) not in html
    print(f"\n[hub] subida {turma['subida_s']:.1f} s; servidores prontos em "
          + ", ".join(f"{t:.1f} s" for t in tempos.values()) + f"; correção {correcao_s:.1f} s")


def _memoria_livre_mb() -> float:
    for linha in Path("/proc/meminfo").read_text().splitlines():
        if linha.startswith("MemAvailable:"):
            return int(linha.split()[1]) / 1024
    return float("nan")


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


def test_rajada_de_logins(turma):
    """Com ``CURSO_HUB_RAJADA=N``: N alunos a mais iniciam o servidor ao mesmo tempo (medida para o guia)."""
    rajada = turma["alunos"][2:]
    if not rajada:
        pytest.skip("medida da rajada de logins: CURSO_HUB_RAJADA=10 make test-hub")
    from concurrent.futures import ThreadPoolExecutor

    hub = turma["hub"]
    livre_antes = _memoria_livre_mb()
    with ThreadPoolExecutor(len(rajada)) as pool:
        tempos = list(pool.map(lambda u: hub.iniciar(u, limite=600), rajada))
    livre_depois = _memoria_livre_mb()
    pss = [_pss_mb(u) for u in rajada]
    print(f"\n[rajada] {len(rajada)} servidores; prontos em " + ", ".join(f"{t:.1f}" for t in sorted(tempos))
          + f" s; memória livre da máquina {livre_antes:.0f} -> {livre_depois:.0f} MB; PSS por servidor "
          f"{min(pss):.0f}-{max(pss):.0f} MB")
    assert all(t < 600 for t in tempos)
    for u in rajada:
        hub.pedir("DELETE", f"/hub/api/users/{u}/server")


def test_nada_sobra(turma):
    """Roda depois do de ponta a ponta (mesmo módulo): os servidores param com o hub (conferido na limpeza)."""
    hub = turma["hub"]
    for u in turma["alunos"]:
        hub.pedir("DELETE", f"/hub/api/users/{u}/server")
    limite = time.monotonic() + 60
    while time.monotonic() < limite and any(_pids_de(u) for u in turma["alunos"]):
        time.sleep(0.5)
    assert not any(_pids_de(u) for u in turma["alunos"])
