"""A caixa do bubblewrap em que roda cada entrega: o que o código do aluno vê e o que consegue fazer lá dentro."""

import json
import os
import secrets
import shutil
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import isolamento

ROOT = Path(__file__).resolve().parents[1]

# lento (make test-lento): processos de verdade na caixa do bwrap
pytestmark = [pytest.mark.lento,
              pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")]

SONDA = textwrap.dedent("""
    import json, os, socket, subprocess, sys, time
    from pathlib import Path
    from correcao._caixa import apply_limits
    apply_limits()  # como os processos de entrada da correção, antes de qualquer código do aluno
    raiz = Path(sys.argv[1])
    r = {"uid": os.getuid(), "home": os.getcwd(), "env": sorted(os.environ)}
    r["ve_repo"] = (raiz / "README.md").exists() or (raiz / "solutions").exists()
    r["ve_lib"] = (raiz / "lib" / "atencao" / "__init__.py").exists()
    try:
        (raiz / "lib" / "INVADIDO.txt").write_text("x"); r["escreve_lib"] = True
    except OSError:
        r["escreve_lib"] = False
    try:
        Path("/tmp/INVADIDO-caixa.txt").write_text("x"); r["tmp_proprio"] = True
    except OSError:
        r["tmp_proprio"] = False
    Path("minha-pasta.txt").write_text("ok")
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2); r["rede"] = True
    except OSError:
        r["rede"] = False
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)  # sobrevivente-da-caixa"],
                     start_new_session=True)
    print(json.dumps(r))
""")


def _rodar(caixa: isolamento.Sandbox, workdir: Path, codigo: str, *args: str) -> subprocess.CompletedProcess:
    cmd, env = caixa.command(workdir, "x")
    cmd = cmd[:cmd.index("-I") + 1] + ["-c", codigo, *args]  # troca a entrada pelo código da sonda
    workdir.mkdir(parents=True, exist_ok=True)
    if caixa.root:
        os.chown(workdir, caixa.uid, caixa.uid)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)


def test_a_caixa_isola_usuario_rede_arquivos_ambiente_e_processos(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGREDO_DO_PROFESSOR", "nao-pode-vazar")
    marca = secrets.token_hex(8)
    caixa = isolamento.Sandbox(isolamento.Limits(), numero=3, marca=marca)
    run = _rodar(caixa, tmp_path / "caixa", SONDA, str(ROOT))
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout.strip().splitlines()[-1])
    if os.geteuid() == 0:
        assert r["uid"] >= isolamento.UID_BASE
    assert r["home"] == isolamento.HOME
    assert "SEGREDO_DO_PROFESSOR" not in r["env"]
    assert r["ve_lib"] and not r["ve_repo"] and not r["escreve_lib"]
    assert r["tmp_proprio"] and not Path("/tmp/INVADIDO-caixa.txt").exists()
    assert not r["rede"]
    assert not (tmp_path / "caixa" / "minha-pasta.txt").exists()  # a pasta de trabalho é um tmpfs: nada no disco
    time.sleep(0.5)
    assert isolamento.leftover_pids(marca) == []  # o processo solto morreu com a caixa
    assert not (ROOT / "lib" / "INVADIDO.txt").exists()


def test_limites_de_memoria_e_de_processos_valem_dentro_da_caixa(tmp_path):
    codigo = textwrap.dedent("""
        import os, resource, time
        from correcao._caixa import apply_limits
        apply_limits()
        try:
            bytearray(3 * 2**30); print("memoria: alocou")
        except MemoryError:
            print("memoria: MemoryError")
        filhos = 0
        try:
            for _ in range(5000):
                if os.fork() == 0:
                    time.sleep(30); os._exit(0)
                filhos += 1
        except OSError:
            pass
        print("processos:", filhos)
    """)
    caixa = isolamento.Sandbox(isolamento.Limits(memoria_mb=1024, processos=64), numero=5)
    run = _rodar(caixa, tmp_path / "caixa", codigo)
    assert "memoria: MemoryError" in run.stdout, run.stdout + run.stderr
    filhos = int(run.stdout.split("processos:")[1])
    assert 0 < filhos < 64


def test_sem_bwrap_a_caixa_recusa_com_instrucao_de_instalacao(monkeypatch):
    monkeypatch.setattr(isolamento.shutil, "which", lambda name: None)
    assert not isolamento.bwrap_available()
    with pytest.raises(isolamento.BwrapMissing, match="sudo apt-get install bubblewrap"):
        isolamento.Sandbox(isolamento.Limits())
    isolamento.Sandbox(isolamento.Limits(), isolar=False)  # sem isolamento: permitido, e só quando pedido


# ---------- o orçamento por notebook (NotebookBudget): memória somada, disco, prazo, pipes entre caixas ----------
class CaixaDeTeste(isolamento.Sandbox):
    """A caixa de verdade, rodando ``python -c codigo`` no lugar de ``python -m modulo``."""

    codigo = ""

    def command(self, workdir, modulo, extra_env=None):
        cmd, env = super().command(workdir, modulo, extra_env)
        return cmd[:cmd.index("-I") + 1] + ["-c", self.codigo], env


def _caixa(codigo: str, limites, grupo, numero: int, marca: str) -> CaixaDeTeste:
    caixa = CaixaDeTeste(limites, numero=numero, marca=marca, grupo=grupo)
    caixa.codigo = "from correcao._caixa import apply_limits\napply_limits()\n" + textwrap.dedent(codigo)
    return caixa


class Medidor:
    """Amostra, a cada 0,1 s, a memória usada da máquina (MemTotal − MemAvailable), o disco usado nos sistemas
    de arquivos de ``pastas``, o espaço ocupado pelas ``arvores`` (as pastas do corretor) e, com ``caixa`` (a marca
    de uma correção), a soma da memória residente dos processos das caixas dela; guarda o maior valor (ou aumento)
    de cada um. A máquina é dividida: os dois primeiros incluem o que outros processos (outros testes) fazem."""

    def __init__(self, *pastas: Path, arvores: tuple = (), caixa: str | None = None):
        self.pastas = pastas
        self.arvores = arvores  # pastas só do corretor: o que ocupam em disco (a máquina é dividida com outros)
        self.caixa = caixa
        self.mem0, self.disco0 = self._mem(), self._disco()
        self.pico_mem = self.pico_disco = self.pico_arvores = self.pico_caixa = 0
        self._fim = threading.Event()
        self._t = threading.Thread(target=self._rodar, daemon=True)
        self._t.start()

    @staticmethod
    def _mem() -> int:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) * 1024

    def _disco(self) -> int:
        return sum(shutil.disk_usage(p).used for p in {os.stat(p).st_dev: p for p in self.pastas}.values())

    def _ocupado(self) -> int:
        total = 0
        for arvore in self.arvores:
            for raiz, _, arquivos in os.walk(arvore):
                for nome in arquivos:
                    try:
                        total += os.lstat(os.path.join(raiz, nome)).st_blocks * 512
                    except OSError:
                        pass
        return total

    def _residente(self) -> int:
        total = 0
        for pid in isolamento.leftover_pids(self.caixa):
            try:
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, IndexError, ValueError):
                continue
        return total

    def _rodar(self):
        while not self._fim.wait(0.1):
            if self.caixa:
                self.pico_caixa = max(self.pico_caixa, self._residente())
            self.pico_mem = max(self.pico_mem, self._mem() - self.mem0)
            self.pico_disco = max(self.pico_disco, self._disco() - self.disco0)
            self.pico_arvores = max(self.pico_arvores, self._ocupado())

    def parar(self) -> "Medidor":
        self._fim.set()
        self._t.join()
        return self


def _sem_sobras(marca: str) -> None:
    time.sleep(0.3)
    assert isolamento.leftover_pids(marca) == []
    assert [d for d in isolamento.leftover_cgroups() if marca in d.name] == []


FILHOS = """
    import os, time
    filhos = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                dados = b"x" * (600 * 2**20)  # 600 MB tocados de verdade (cada processo cabe no seu limite)
                time.sleep(5)
            finally:
                os._exit(0)
        filhos.append(pid)
    mortos = sum(1 for pid in filhos if os.waitpid(pid, 0)[1] != 0)
    print("mortos", mortos, flush=True)
"""


def test_grupo_limita_a_soma_da_memoria_dos_processos_filhos(tmp_path):
    """Quatro filhos de 600 MB (2 GiB por processo): a soma passa do total do notebook (1 GiB) e o grupo não
    deixa; como root aqui, com cgroup (v2 ou v1)."""
    marca = secrets.token_hex(6)
    limites = isolamento.Limits(memoria_mb=2048, memoria_total_mb=1024)
    medidor = Medidor(tmp_path, caixa=marca)
    t0 = time.monotonic()
    with isolamento.NotebookBudget(f"{marca}-mem", limites, relogio_s=60) as grupo:
        run = _caixa(FILHOS, limites, grupo, 0, marca).run(tmp_path / "w", "x", b"")
    medidor.parar()
    print(f"\n[medida] 4 filhos de 600 MB, total 1 GiB ({grupo.tipo}): pico do grupo "
          f"{(grupo.peak_memory or 0) / 2**20:.0f} MiB, soma dos processos da caixa {medidor.pico_caixa / 2**20:.0f} "
          f"MiB, aumento da máquina {medidor.pico_mem / 2**20:.0f} MiB, {time.monotonic() - t0:.1f} s")
    if os.geteuid() == 0 and Path("/sys/fs/cgroup/memory/cgroup.procs").exists():  # como aqui: v1 como root
        assert grupo.tipo in ("cgroup2", "cgroup1")
    assert grupo.memory_exhausted(), run
    assert grupo.peak_memory is not None and grupo.peak_memory <= 1024 * 2**20 + 2**20
    # medido nos processos da caixa, não na máquina (dividida com os outros testes do pytest -n): sem o grupo, os
    # quatro filhos chegam a ~2,4 GB; com ele, a soma para perto de 1 GiB (a amostra a cada 0,1 s pode ver menos)
    assert 300 * 2**20 < medidor.pico_caixa < 1800 * 2**20, medidor.pico_caixa
    _sem_sobras(marca)


def test_sem_cgroup_o_vigia_ainda_limita_a_soma(tmp_path, monkeypatch):
    """A reserva sem cgroup (``rlimit``): poucos processos por caixa e um vigia que soma a memória residente."""
    monkeypatch.setattr(isolamento._Cgroup, "create", classmethod(lambda cls, nome, limites: None))
    marca = secrets.token_hex(6)
    limites = isolamento.Limits(memoria_mb=2048, memoria_total_mb=1024, processos_sem_cgroup=32)
    t0 = time.monotonic()
    with isolamento.NotebookBudget(f"{marca}-rss", limites, relogio_s=60) as grupo:
        run = _caixa(FILHOS, limites, grupo, 1, marca).run(tmp_path / "w", "x", b"")
    assert grupo.tipo == "rlimit"
    assert grupo.motivo == "memoria" and run.killed_by == "memoria", run
    assert time.monotonic() - t0 < 20
    _sem_sobras(marca)


def test_pastas_graváveis_tem_tamanho_e_nao_tocam_o_disco(tmp_path):
    """1,6 GB gravados na pasta de trabalho, em /tmp e no HOME: cada tmpfs para no seu tamanho, e o disco da
    máquina não muda."""
    codigo = """
        import errno, json, os
        r = {}
        for nome, pasta in (("trabalho", os.getcwd()), ("tmp", "/tmp"), ("home", os.path.expanduser("~/sub"))):
            os.makedirs(pasta, exist_ok=True)
            n = 0
            try:
                with open(os.path.join(pasta, "grande.bin"), "wb") as f:
                    for _ in range(1600):
                        f.write(b"\\0" * 2**20)
                        n += 1
                    f.flush()
                r[nome] = [n, 0]
            except OSError as exc:
                r[nome] = [n, exc.errno]
            os.remove(os.path.join(pasta, "grande.bin"))
        print(json.dumps(r), flush=True)
    """
    marca = secrets.token_hex(6)
    limites = isolamento.Limits(disco_mb=64)
    medidor = Medidor(tmp_path, Path("/tmp"), Path("/"))
    with isolamento.NotebookBudget(f"{marca}-disco", limites, relogio_s=60) as grupo:
        caixa = _caixa(codigo, limites, grupo, 2, marca)
        cmd, env = caixa.command(tmp_path / "w", "x")
        (tmp_path / "w").mkdir()
        if caixa.root:
            os.chown(tmp_path / "w", caixa.uid, caixa.uid)
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    medidor.parar()
    r = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"\n[medida] 1,6 GB em cada pasta, tmpfs de 64 MiB: {r}; aumento do disco da máquina "
          f"{medidor.pico_disco / 2**20:.0f} MiB, da memória {medidor.pico_mem / 2**20:.0f} MiB")
    for nome in ("trabalho", "tmp", "home"):
        n, erro = r[nome]
        assert erro == 28 and 32 <= n <= 64, (nome, r)  # ENOSPC perto de 64 MiB
    assert medidor.pico_disco < 100 * 2**20
    assert list((tmp_path / "w").iterdir()) == []
    _sem_sobras(marca)


def test_prazo_do_grupo_mata_todas_as_caixas_de_uma_vez_mesmo_ignorando_sinais(tmp_path):
    """Duas caixas iniciadas sem esperar (``start``), que ignoram SIGINT e SIGTERM: no prazo, as duas
    morrem juntas (SIGKILL)."""
    codigo = """
        import signal, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("pronto", flush=True)
        while True:
            time.sleep(0.1)
    """
    marca = secrets.token_hex(6)
    limites = isolamento.Limits()
    t0 = time.monotonic()
    with isolamento.NotebookBudget(f"{marca}-prazo", limites, relogio_s=3) as grupo:
        procs = [_caixa(codigo, limites, grupo, n, marca).start(tmp_path / f"w{n}", "x") for n in (3, 4)]
        for proc in procs:
            proc.stdin.close()
            assert proc.stdout.readline().strip() == b"pronto"
        for proc in procs:
            proc.wait(timeout=15)
        decorrido = time.monotonic() - t0
    assert grupo.motivo == "tempo"
    assert 2.5 <= decorrido < 6, decorrido
    assert all(proc.returncode == -9 for proc in procs), [p.returncode for p in procs]
    _sem_sobras(marca)


def test_pipe_entre_duas_caixas_do_mesmo_grupo(tmp_path):
    """``pass_fds``: uma ponta de um pipe em cada caixa (como o verificador e o processo do aluno)."""
    marca = secrets.token_hex(6)
    limites = isolamento.Limits()
    r, w = os.pipe()
    with isolamento.NotebookBudget(f"{marca}-pipe", limites, relogio_s=60) as grupo:
        escreve = _caixa("import os\nos.write(int(os.environ['FD']), b'ola da outra caixa')\n",
                         limites, grupo, 5, marca)
        le = _caixa("import os\nprint(os.read(int(os.environ['FD']), 100).decode(), flush=True)\n",
                    limites, grupo, 6, marca)
        pa = escreve.start(tmp_path / "a", "x", extra_env={"FD": str(w)}, pass_fds=(w,))
        pb = le.start(tmp_path / "b", "x", extra_env={"FD": str(r)}, pass_fds=(r,))
        os.close(r)
        os.close(w)
        out, _ = pb.communicate(b"", timeout=60)
        pa.communicate(b"", timeout=60)
    assert out.decode().strip() == "ola da outra caixa"
    with pytest.raises(ValueError, match="pass_fds"):
        escreve.start(tmp_path / "c", "x", pass_fds=(987,))
    _sem_sobras(marca)


def test_limites_e_grupo_recusam_valores_errados():
    with pytest.raises(ValueError, match="memoria_total_mb"):
        isolamento.Limits(memoria_total_mb=0)
    with pytest.raises(ValueError, match="relogio_s"):
        isolamento.NotebookBudget("ok", isolamento.Limits(), relogio_s=-1, isolar=False)
    with pytest.raises(ValueError, match="nome"):
        isolamento.NotebookBudget("../fora", isolamento.Limits(), relogio_s=5, isolar=False)


GRAVA = """for p in / /home /dev /caixa-entrada /dev/shm /tmp "$HOME"; do
  if (echo x > "$p/gravou") 2>/dev/null; then echo "sim $p"; else echo "nao $p"; fi
done
head -c $(( $1 * 1048576 + 1048576 )) /dev/zero > /dev/shm/grande 2>/dev/null || echo "shm cheia"
"""


@pytest.mark.parametrize("como", ["usuario-da-correcao", "sem-root-como-num-pod"])
def test_a_caixa_so_grava_em_home_tmp_e_shm_com_limite(tmp_path, como):
    """A raiz e o /dev da caixa são tmpfs sem limite; sem root (num pod), eles eram graváveis pelo aluno: um
    notebook que gravava em ``../../`` passava no pod e falhava como root. Agora, nos dois modos, só HOME, /tmp e
    /dev/shm aceitam escrita, cada um com o limite de disco."""
    if como == "sem-root-como-num-pod" and os.geteuid() != 0:
        pytest.skip("já roda sem root: o outro caso é este")
    limites = isolamento.Limits(disco_mb=2)
    caixa = isolamento.Sandbox(limites, numero=4, marca=secrets.token_hex(8))
    if como == "sem-root-como-num-pod":
        caixa.root = False  # a linha de comando de quem não é root (--unshare-user), rodada como nobody
    cmd, env = caixa.command(tmp_path, "x")
    cmd = cmd[:cmd.index(caixa.python)] + ["/bin/sh", "-c", GRAVA, "sh", "2"]
    if como == "sem-root-como-num-pod":
        tmp_path.chmod(0o755)
        # o ambiente Python pode estar num lugar que nobody não lê (/root): a sonda é o sh, e essas montagens saem
        k = 0
        while k < len(cmd):
            if cmd[k].startswith("--ro-bind") and any(not d.stat().st_mode & 0o001 for d in Path(cmd[k + 1]).parents
                                                       if d.exists()):
                del cmd[k:k + 3]
            else:
                k += 1
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    linhas = run.stdout.split("\n")
    assert [ln for ln in linhas if ln.startswith("sim ")] == ["sim /dev/shm", "sim /tmp", f"sim {isolamento.HOME}"], \
        run.stdout + run.stderr
    assert "shm cheia" in linhas, run.stdout + run.stderr
