"""O isolamento de cada entrega: processos em caixas do bubblewrap (``bwrap``), com limites por processo
e um orçamento por notebook (memória, disco, processos e tempo de relógio somando todas as caixas dele).

O código de um aluno é não confiável. Cada execução (o notebook no kernel, e depois a conferência
independente das verificações) roda numa caixa nova, em que:

- o usuário é outro e sem privilégios: como root, um uid só da caixa (sorteado por correção, acima de
  100000, mais o número da caixa: o limite de processos de uma caixa não conta os de outra); como usuário comum,
  um *user namespace* do próprio bwrap;
- não há rede (``--unshare-net``: só a interface de loopback da própria caixa);
- o espaço de processos é novo (``--unshare-pid``): quando o processo principal termina, tudo o que o
  aluno deixou rodando morre junto, e ``--die-with-parent`` mata a caixa se a correção for interrompida;
- o ambiente é limpo (``--clearenv``): nenhuma variável do professor entra;
- o sistema de arquivos só mostra, somente leitura, ``/usr``, o Python do ambiente e a biblioteca
  ``lib/`` do curso. As únicas pastas graváveis são a pasta de trabalho (``/home/aluno``, que também é o
  ``HOME``) e ``/tmp``, cada uma um tmpfs **com tamanho limitado** (``--size``, :attr:`Limits.disco_mb`):
  nada do que o aluno grava toca o disco da máquina (e, com cgroup, a memória do tmpfs conta no limite de
  memória do notebook). O conteúdo da pasta ``workdir`` do corretor entra somente leitura em
  ``/caixa-entrada`` e é copiado para ``/home/aluno`` pelo processo de entrada; o que o corretor precisa de
  volta vem pela saída padrão (linhas ``<nonce> <json>``), nunca por arquivos. O repositório,
  ``solutions/``, o curso do nbgrader, as outras entregas e a pasta de saída não existem lá dentro;
- limites por processo (``resource.setrlimit``, aplicados pelo processo de entrada antes de qualquer código
  do aluno): memória (espaço de endereços, padrão 2 GiB), tempo de CPU, tamanho de arquivo e número de
  processos.

Orçamento por notebook (:class:`NotebookBudget`): todas as caixas de um notebook (o kernel, a conferência, ou o par
verificador/aluno ligado por pipes) entram no mesmo grupo, que impõe

- **memória total**, somando todos os processos e os tmpfs: um cgroup v2 (``memory.max``, ``pids.max``) onde
  houver o controlador de memória delegado; senão um cgroup v1 de memória (``memory.limit_in_bytes`` e
  ``memory.memsw.limit_in_bytes``, mais ``pids`` e ``cpuacct`` se existirem), como root; sem nenhum dos dois,
  a reserva é um limite pequeno de processos por caixa (:attr:`Limits.processos_sem_cgroup`, só como root,
  em que o uid é só da caixa) junto com o limite por processo, e um vigia que soma a memória residente
  dos processos do grupo a cada 0,2 s e mata tudo ao passar do total. :attr:`NotebookBudget.tipo` diz qual rodou
  (``cgroup2``, ``cgroup1``, ``rlimit``) e vai para a coluna ``isolamento`` de ``notas.csv`` (``bwrap+cgroup1``...);
- **tempo de relógio**: um prazo único; ao passar dele, o vigia mata (SIGKILL) todas as caixas do grupo
  de uma vez, sem pedir nada ao kernel;
- **disco**: cada caixa só grava nos seus dois tmpfs limitados.

API (para quem escreve um novo processo de entrada)::

    with NotebookBudget("e00007", limites, relogio_s=180) as grupo:  # o orçamento de um notebook
        a = Sandbox(limites, numero=0, marca=m, grupo=grupo)
        b = Sandbox(limites, numero=1, marca=m, grupo=grupo)
        r, w = os.pipe()
        pa = a.start(work_a, "correcao._veredito", pass_fds=(r,), extra_env={"FD": str(r)})  # tipo Popen
        pb = b.start(work_b, "correcao._aluno", pass_fds=(w,), extra_env={"FD": str(w)})
        os.close(r); os.close(w)
        ...                       # conversar com pa.stdin/pa.stdout; o prazo vale para as duas
    # ao sair do ``with``: tudo morto, cgroup removido; grupo.motivo diz "tempo"/"memoria" se o grupo matou

:meth:`Sandbox.run` (iniciar, mandar a entrada, esperar a saída) continua como antes e respeita o prazo do
grupo da caixa, se houver.

Sem o bwrap (macOS, Windows, ou o pacote não instalado) a correção se recusa a rodar, a menos que o
professor peça ``sem_isolamento=True`` (``--sem-isolamento``): aí cada execução é só um subprocesso com
ambiente limpo, limites e pasta própria (no disco, limitada só por arquivo), e cada linha de ``notas.csv``
diz ``sem_isolamento``.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HOME = "/home/aluno"  # a pasta de trabalho, vista de dentro da caixa
UID_BASE = 100_000  # como root: cada caixa roda com um uid sem nome e sem grupos, a partir daqui

INSTALL_BWRAP = (
    "A correção roda cada entrega isolada com o bubblewrap (bwrap), que não foi encontrado.\n"
    "Instale-o: Debian/Ubuntu `sudo apt-get install bubblewrap`, Fedora `sudo dnf install bubblewrap`,\n"
    "Arch `sudo pacman -S bubblewrap`. No macOS e no Windows não há bwrap: use uma máquina Linux (ou o WSL).\n"
    "Só se você confia em todas as entregas, corrija sem isolamento com --sem-isolamento\n"
    "(make corrigir ... SEM_ISOLAMENTO=1); cada linha de notas.csv dirá 'sem_isolamento'."
)


class BwrapMissing(RuntimeError):
    """O bwrap não está instalado (ou não funciona nesta máquina) e o isolamento não foi dispensado."""


@dataclass(frozen=True)
class Limits:
    """Limites de cada execução e de cada notebook.

    Por processo: ``memoria_mb`` (espaço de endereços, MiB), ``cpu_s`` (tempo de CPU, s), ``processos``
    (processos e threads simultâneos do uid da caixa). Por execução: ``relogio_s`` (tempo de relógio, s).
    Por notebook (:class:`NotebookBudget`): ``memoria_total_mb`` (soma de todos os processos e tmpfs das caixas dele),
    ``processos_total`` (``pids.max`` do cgroup), ``disco_mb`` (tamanho de cada tmpfs gravável: a pasta de
    trabalho e ``/tmp``) e ``processos_sem_cgroup`` (o limite de processos por caixa quando não há cgroup).
    """

    memoria_mb: int = 2048
    cpu_s: int = 180
    processos: int = 256
    relogio_s: float = 180.0
    memoria_total_mb: int = 3072
    processos_total: int = 512
    disco_mb: int = 512
    processos_sem_cgroup: int = 64

    def __post_init__(self):
        for nome in ("memoria_mb", "cpu_s", "processos", "relogio_s", "memoria_total_mb", "processos_total",
                     "disco_mb", "processos_sem_cgroup"):
            valor = getattr(self, nome)
            if not isinstance(valor, (int, float)) or isinstance(valor, bool) or valor <= 0:
                raise ValueError(f"Limits.{nome}: esperado um número positivo, recebido {valor!r}")


@dataclass
class SandboxRun:
    """O que uma execução devolveu: a saída padrão (bytes), o código de saída, se passou do tempo e quanto
    levou. ``killed_by``: ``"tempo"`` ou ``"memoria"`` quando o :class:`NotebookBudget` matou a caixa (o prazo do
    notebook acabou, ou a soma da memória passou do total), ``""`` senão."""

    stdout: bytes
    returncode: int | None
    tempo_esgotado: bool
    segundos: float
    killed_by: str = ""


MAX_OUTPUT_BYTES = 64 * 2**20  # o que o corretor lê da saída padrão de uma caixa; o resto é descartado


# ---------- cgroups ----------
def _own_cgroup() -> dict[str, str]:
    """Controlador (ou ``""`` para o v2) -> caminho do cgroup deste processo, de ``/proc/self/cgroup``."""
    out = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in ctrls.split(",") if ctrls else [""]:
                out[c] = path
    except OSError:
        pass
    return out


def _mounts() -> dict[str, str]:
    """Controlador (ou ``""`` para o v2) -> onde a hierarquia está montada, de ``/proc/self/mountinfo``."""
    out = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            antes, depois = line.split(" - ", 1)
            tipo, _, opcoes = (depois.split() + ["", ""])[:3]
            ponto = antes.split()[4]
            if tipo == "cgroup2":
                out.setdefault("", ponto)
            elif tipo == "cgroup":
                for c in opcoes.split(","):
                    if c in ("memory", "pids", "cpuacct"):
                        out.setdefault(c, ponto)
    except OSError:
        pass
    return out


def _write(path: Path, valor: str) -> None:
    path.write_text(valor)


class _Cgroup:
    """Um cgroup por notebook: ``dirs`` são as pastas (uma no v2; uma por controlador no v1)."""

    def __init__(self, tipo: str, dirs: dict[str, Path]):
        self.tipo = tipo
        self.dirs = dirs

    @classmethod
    def create(cls, nome: str, limites: Limits) -> "_Cgroup | None":  # noqa: C901 — o cgroup v2 e, sem ele, o v1, cada passo com a sua recusa
        """O cgroup ``correcao-<nome>`` com os limites, ou ``None`` se esta máquina não deixa."""
        mont, meu = _mounts(), _own_cgroup()
        memoria = str(limites.memoria_total_mb * 2**20)
        if "" in mont and "" in meu:  # v2: só com o controlador de memória disponível e delegável
            base = Path(mont[""]) / meu[""].lstrip("/")
            try:
                if "memory" in (base / "cgroup.controllers").read_text().split():
                    controle = (base / "cgroup.subtree_control")
                    if "memory" not in controle.read_text().split():
                        _write(controle, "+memory")
                    d = base / f"correcao-{nome}"
                    d.mkdir()
                    grupo = cls("cgroup2", {"": d})
                    try:
                        _write(d / "memory.max", memoria)
                        for arquivo, valor in (("memory.swap.max", "0"), ("pids.max", str(limites.processos_total))):
                            if (d / arquivo).exists():
                                _write(d / arquivo, valor)
                        return grupo
                    except OSError:
                        grupo.remove()
            except OSError:
                pass
        if "memory" in mont and "memory" in meu and os.geteuid() == 0:  # v1, como root
            dirs: dict[str, Path] = {}
            grupo = cls("cgroup1", dirs)
            try:
                for ctrl in ("memory", "pids", "cpuacct"):
                    if ctrl in mont and ctrl in meu:
                        d = Path(mont[ctrl]) / meu[ctrl].lstrip("/") / f"correcao-{nome}"
                        d.mkdir()
                        dirs[ctrl] = d
                _write(dirs["memory"] / "memory.limit_in_bytes", memoria)
                if (dirs["memory"] / "memory.memsw.limit_in_bytes").exists():  # sem fugir para o swap
                    _write(dirs["memory"] / "memory.memsw.limit_in_bytes", memoria)
                if "pids" in dirs:
                    _write(dirs["pids"] / "pids.max", str(limites.processos_total))
                return grupo
            except OSError:
                grupo.remove()
        return None

    def procs(self) -> list[int]:
        pids = set()
        for d in self.dirs.values():
            try:
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(pids)

    def kill(self) -> None:
        d = self.dirs.get("")
        if d is not None and (d / "cgroup.kill").exists():
            try:
                _write(d / "cgroup.kill", "1")
                return
            except OSError:
                pass
        for _ in range(3):  # v1: não há cgroup.kill; um fork no meio da varredura é pego na seguinte
            for pid in self.procs():
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def oom(self) -> bool:
        """O núcleo matou algum processo por falta de memória neste cgroup."""
        for arquivo in ("memory.events", "memory.oom_control"):
            d = self.dirs.get("" if arquivo == "memory.events" else "memory")
            try:
                for line in (d / arquivo).read_text().splitlines():
                    k, _, v = line.partition(" ")
                    if k == "oom_kill" and int(v) > 0:
                        return True
            except (OSError, TypeError, ValueError):
                continue
        return False

    def peak_memory(self) -> int | None:
        for d, arquivo in ((self.dirs.get("memory"), "memory.max_usage_in_bytes"), (self.dirs.get(""), "memory.peak")):
            try:
                return int((d / arquivo).read_text().split()[0])
            except (OSError, TypeError, ValueError, IndexError):
                continue
        return None

    def cpu_s(self) -> float | None:
        """CPU usada por todos os processos do grupo (s), ou ``None`` se não há como medir."""
        try:
            if "cpuacct" in self.dirs:
                return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
            if "" in self.dirs:
                for line in (self.dirs[""] / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def remove(self) -> None:
        """Mata o que restou e apaga as pastas (só sai quando vazio)."""
        for _ in range(100):
            self.kill()
            if not self.procs():
                break
            time.sleep(0.05)
        for d in self.dirs.values():
            for _ in range(40):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


def leftover_cgroups() -> list[Path]:
    """Pastas ``correcao-*`` de cgroup ainda existentes (de qualquer correção): deve ser vazio no fim."""
    mont, meu = _mounts(), _own_cgroup()
    out = []
    for ctrl, ponto in mont.items():
        if ctrl in meu:
            base = Path(ponto) / meu[ctrl].lstrip("/")
            out += sorted(base.glob("correcao-*"))
    return out


def remove_cgroups(prefixo: str) -> list[str]:
    """Mata os processos e apaga os cgroups ``correcao-<prefixo>*`` (de um processo de correção que foi morto
    antes de fechar os seus grupos); devolve os nomes apagados."""
    por_nome: dict[str, dict[str, Path]] = {}
    mont, meu = _mounts(), _own_cgroup()
    for ctrl, ponto in mont.items():
        if ctrl in meu:
            for d in (Path(ponto) / meu[ctrl].lstrip("/")).glob(f"correcao-{prefixo}*"):
                por_nome.setdefault(d.name, {})[ctrl] = d
    for dirs in por_nome.values():
        _Cgroup("", dirs).remove()
    return sorted(por_nome)


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _machine_cpu() -> float:
    """Segundos de CPU ocupada (todos os núcleos) desde o início da máquina, de ``/proc/stat``."""
    try:
        campos = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    ocioso = campos[3] + (campos[4] if len(campos) > 4 else 0)
    return (sum(campos[:8]) - ocioso) / os.sysconf("SC_CLK_TCK")


class NotebookBudget:
    """O orçamento de um notebook: várias caixas sob o mesmo limite de memória, disco e tempo, mortas juntas.

    Parameters
    ----------
    nome : str
        Identifica o grupo (entra no nome do cgroup: ``correcao-<nome>``); só letras, números, ``-``, ``.``.
    limites : Limits
        ``memoria_total_mb``, ``processos_total``, ``processos_sem_cgroup``.
    relogio_s : float
        O prazo do notebook inteiro (s, a partir de agora); ao passar dele, todas as caixas morrem (SIGKILL).
    isolar : bool
        ``False`` (sem bwrap): não cria cgroup; o prazo e o vigia de memória continuam valendo.

    Atributos: ``tipo`` (``cgroup2``, ``cgroup1`` ou ``rlimit``), ``motivo`` (``""``, ``"tempo"`` ou
    ``"memoria"``: por que o grupo matou as caixas), ``peak_memory`` (bytes, quando medido).
    Use como ``with NotebookBudget(...) as g:``; ao sair, :meth:`close` mata tudo e remove o cgroup.

    Raises
    ------
    ValueError
        ``nome`` com caracteres fora de ``[A-Za-z0-9.-]`` ou ``relogio_s`` não positivo.
    """

    INTERVALO_S = 0.2

    def __init__(self, nome: str, limites: Limits, relogio_s: float, isolar: bool = True):
        if not nome or not all(ch.isascii() and (ch.isalnum() or ch in "-.") for ch in nome):
            raise ValueError(f"NotebookBudget: nome esperado com letras, números, '-' e '.', recebido {nome!r}")
        if not isinstance(relogio_s, (int, float)) or relogio_s <= 0:
            raise ValueError(f"NotebookBudget: relogio_s esperado positivo, recebido {relogio_s!r}")
        self.limites = limites
        self.inicio = time.monotonic()
        self.prazo = self.inicio + relogio_s
        self.cgroup = _Cgroup.create(f"{nome}-{secrets.token_hex(3)}", limites) if isolar else None
        self.tipo = self.cgroup.tipo if self.cgroup else "rlimit"
        self.motivo = ""
        self.peak_memory: int | None = None
        self._pico_rss = 0
        self._caixas: list[Sandbox] = []
        self._procs: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._fim = threading.Event()
        self._cpu_maquina0 = _machine_cpu()
        self._medidas: tuple | None = None  # (cpu do grupo, núcleos dos outros), guardadas ao fechar
        self._vigia = threading.Thread(target=self._watch, daemon=True, name=f"grupo-{nome}")
        self._vigia.start()

    def __enter__(self) -> "NotebookBudget":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def remaining(self) -> float:
        """Segundos até o prazo (0 se já passou)."""
        return max(0.0, self.prazo - time.monotonic())

    def cpu_s(self) -> float | None:
        """CPU de todos os processos do grupo até agora (ou até :meth:`close`), em s; ``None`` sem cgroup com
        ``cpuacct``/``cpu.stat``."""
        if self._medidas is not None:
            return self._medidas[0]
        return self.cgroup.cpu_s() if self.cgroup else None

    def cpu_others(self) -> float:
        """Núcleos ocupados, em média, por processos de fora deste grupo desde o início dele até agora (ou até
        :meth:`close`): ``/proc/stat`` menos a CPU do grupo, se medida. Perto de 0, a máquina estava livre;
        perto do número de núcleos, disputada."""
        if self._medidas is not None:
            return self._medidas[1]
        decorrido = max(time.monotonic() - self.inicio, 1e-6)
        total = _machine_cpu() - self._cpu_maquina0
        return max(0.0, (total - (self.cpu_s() or 0.0)) / decorrido)

    def _register(self, caixa: "Sandbox", proc: subprocess.Popen) -> None:
        with self._lock:
            if caixa not in self._caixas:
                self._caixas.append(caixa)
            self._procs.append(proc)
        if self.motivo:  # o grupo já acabou: nada novo roda
            self.kill(self.motivo)

    def _rss_total_kib(self) -> int:
        pids = self.cgroup.procs() if self.cgroup else [p for c in list(self._caixas) for p in c.leftover_pids()]
        return sum(_rss_kib(p) for p in pids)

    def _watch(self) -> None:
        while not self._fim.wait(self.INTERVALO_S):
            if time.monotonic() >= self.prazo:
                self.kill("tempo")
            elif self.cgroup is None and self._procs:
                rss = self._rss_total_kib()
                self._pico_rss = max(self._pico_rss, rss)
                if rss > self.limites.memoria_total_mb * 1024:
                    self.kill("memoria")

    def _alive(self) -> tuple[list, list]:
        """SIGKILL no grupo de processos de cada caixa ainda viva; devolve (processos, caixas) do grupo."""
        with self._lock:
            procs, caixas = list(self._procs), list(self._caixas)
        for proc in procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        return procs, caixas

    def kill(self, motivo: str = "tempo") -> None:
        """Mata (SIGKILL) todas as caixas do grupo agora; ``motivo`` fica em :attr:`motivo`."""
        if not self.motivo:
            self.motivo = motivo
        procs, caixas = self._alive()
        if self.cgroup:
            self.cgroup.kill()
        for caixa in caixas:
            caixa.kill_leftovers()

    def memory_exhausted(self) -> bool:
        """A soma de memória do grupo passou do total (o núcleo matou um processo, ou o vigia matou todos)."""
        return self.motivo == "memoria" or bool(self.cgroup and self.cgroup.oom())

    def close(self) -> None:
        """Mata o que ainda roda, espera os processos e remove o cgroup. Pode ser chamado mais de uma vez."""
        if self._medidas is not None:
            return
        self._fim.set()
        procs, caixas = self._alive()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for caixa in caixas:
            caixa.kill_leftovers()
        self._medidas = (self.cpu_s(), self.cpu_others())
        if self.cgroup:
            self.peak_memory = self.cgroup.peak_memory()
            if self.cgroup.oom() and not self.motivo:
                self.motivo = "memoria"
            self.cgroup.remove()
        else:
            self.peak_memory = self._pico_rss * 1024 or None


def bwrap_available() -> bool:
    """``True`` se o ``bwrap`` existe e uma caixa completa funciona nesta máquina (veja :func:`sandbox_support`)."""
    return sandbox_support().ok


@dataclass(frozen=True)
class SandboxSupport:
    """O que a caixa consegue nesta máquina, provado rodando uma (:func:`sandbox_support`).

    ``ok``: uma caixa completa (a mesma linha de comando da correção) começou, aplicou os limites, leu o pedido e
    respondeu. ``proc``: a caixa monta um ``/proc`` próprio; ``False`` num contêiner (pod do Kubernetes, Docker,
    Podman) que mascara caminhos do ``/proc`` (o núcleo recusa montar outro ``/proc`` num *user namespace*
    quando o de fora tem partes escondidas): a caixa roda então sem ``/proc``, o que esconde ainda mais.
    ``cause``: com ``ok=False``, a causa e o conserto em português, para o professor."""

    ok: bool
    proc: bool = True
    cause: str = ""


# O que o bwrap escreve em cada falha conhecida (a saída de erro dele) -> a causa e o conserto, em pt-BR
_CAUSES = (
    (("No permissions to create", "No permissions to creating", "Creating new namespace failed",
      "setting up uid map", "unshare failed", "Failed to unshare"),
     "o bubblewrap não pode criar os namespaces da caixa (um *user namespace*, sem privilégio) nesta máquina. "
     "Num contêiner ou pod, o perfil seccomp padrão do runtime (RuntimeDefault) bloqueia isso: no Kubernetes, "
     "use o perfil seccomp do curso (hub/seccomp/curso-caixa.json, com `seccompProfile: Localhost`; veja "
     "docs/professor.md, \"Com Kubernetes\"), que só acrescenta ao padrão a criação de user namespaces. Numa "
     "máquina Linux comum: `sysctl user.max_user_namespaces` precisa ser maior que 0 (e, no Debian antigo, "
     "`sysctl kernel.unprivileged_userns_clone=1`; no Ubuntu 24.04, `sysctl "
     "kernel.apparmor_restrict_unprivileged_userns=0` ou um perfil do AppArmor para o bwrap)"),
    (("Failed to make / slave", "Failed to mount tmpfs", "Permission denied"),
     "o bubblewrap criou a caixa, mas o AppArmor ou o SELinux da máquina recusou uma montagem dela. Num contêiner, "
     "o perfil do AppArmor/SELinux do runtime bloqueia montagens; corrija numa máquina (ou VM) Linux comum, ou "
     "peça ao administrador um perfil que permita as montagens do bwrap"),
)


def _diagnose(stderr: str) -> str:
    """A causa (pt-BR) de uma caixa que não começou, pelo que o bwrap escreveu em ``stderr``."""
    ultima = (stderr.strip().splitlines() or ["(o bwrap não disse nada)"])[-1][:300]
    causa = next((c for marcas, c in _CAUSES if any(m in stderr for m in marcas)),
                 "a caixa não começou, por um motivo que o curso não conhece")
    return (f"A correção não começou: a caixa (bubblewrap) que isola cada entrega não funciona nesta máquina, e "
            f"nenhuma entrega foi corrigida (nada de notas zero).\nCausa: {causa}.\nO bwrap disse: {ultima}\n"
            "Só se você confia em todas as entregas, corrija sem isolamento com --sem-isolamento.")


_SUPPORT: SandboxSupport | None = None
_SUPPORT_LOCK = threading.Lock()


def sandbox_support() -> SandboxSupport:
    """Prova, uma vez por processo, que a caixa funciona aqui: roda a mesma linha de comando da correção (uma
    caixa com os limites, a troca de usuário como root e a pasta de entrada) com um processo de entrada mínimo
    (:mod:`correcao._sonda`), que lê um pedido e responde com a senha dele. Se o ``/proc`` próprio não puder ser
    montado (um contêiner que mascara caminhos do ``/proc``), tenta de novo sem ele.

    Devolve um :class:`SandboxSupport`; nunca levanta (sem o bwrap, ``ok=False`` com a mensagem de instalação).
    """
    global _SUPPORT
    if not shutil.which("bwrap"):  # conferido sempre (barato): o bwrap pode ter sido instalado ou removido
        return SandboxSupport(False, cause=INSTALL_BWRAP)
    with _SUPPORT_LOCK:
        if _SUPPORT is None:
            _SUPPORT = _probe_support()
        return _SUPPORT


def _probe_support() -> SandboxSupport:
    import json
    import tempfile

    erro = ""
    for proc in (True, False):
        caixa = Sandbox(Limits(), numero=63, isolar=True, proc=proc)
        nonce = secrets.token_hex(8)
        with tempfile.TemporaryDirectory(prefix="sonda-") as tmp:
            work = Path(tmp) / "caixa"
            work.mkdir()
            if caixa.root:
                os.chown(work, caixa.uid, caixa.uid)
            cmd, env = caixa.command(work, "correcao._sonda")
            try:
                run = subprocess.run(cmd, input=json.dumps({"nonce": nonce}).encode(), capture_output=True,
                                     cwd=work, env=env, timeout=60, start_new_session=True)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return SandboxSupport(False, cause=_diagnose(f"{type(exc).__name__}: {exc}"))
            finally:
                caixa.kill_leftovers()
        if f"{nonce} ".encode() in run.stdout:
            return SandboxSupport(True, proc=proc)
        erro = run.stderr.decode("utf-8", "replace")
        if "Can't mount proc" not in erro:
            break
    return SandboxSupport(False, cause=_diagnose(erro))


def _read_limited(paths) -> list[str]:
    """Argumentos do bwrap que montam ``paths`` somente leitura, no mesmo caminho, com pais legíveis."""
    args, made = [], set()
    for p in sorted({str(Path(p).resolve()) for p in paths}):
        parts = Path(p).parts
        for k in range(2, len(parts)):
            parent = str(Path(*parts[:k]))
            if parent not in made and not parent.startswith("/usr"):
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--ro-bind", p, p]
    return args


def _system_binds() -> list[str]:
    """``/usr`` e os atalhos de um Linux com /usr unificado (ou as pastas reais, se não forem atalhos)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ("/etc/alternatives", "/etc/fonts", "/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", name, name]
    return args


def library_dir() -> str:
    """A pasta ``lib/`` (com ``atencao/`` e ``correcao/``) que este processo importou: a caixa monta e importa
    esta mesma, e não a que o ambiente instalou (uma cópia do curso corrige com as verificações dela)."""
    import atencao

    return str(Path(atencao.__file__).resolve().parents[1])


def sandbox_python() -> tuple[str, list[str]]:
    """O interpretador a usar dentro da caixa e as pastas que ele precisa ver (ambiente e biblioteca)."""
    needed = {sys.prefix, sys.base_prefix, library_dir()}
    return sys.executable, sorted(needed)


# ``python -I`` ignora PYTHONPATH: o processo de entrada põe a biblioteca montada no começo do caminho e roda o
# módulo como ``-m`` rodaria (o kernel, sem ``-I``, acha a mesma biblioteca pelo PYTHONPATH do ambiente limpo)
_BOOT = ("import runpy, sys; lib, mod = sys.argv[1:3]; del sys.argv[1:3]; sys.path.insert(0, lib); "
         "runpy.run_module(mod, run_name='__main__', alter_sys=True)")


INBOX = "/caixa-entrada"  # o conteúdo de ``workdir``, somente leitura, copiado para HOME ao entrar


class Sandbox:
    """Roda comandos de entrada (``python -I -m correcao._algo``) isolados.

    Parameters
    ----------
    limites : Limits
        Os limites por processo e, com ``grupo``, os do notebook.
    numero : int
        Distingue as caixas que rodam ao mesmo tempo (uid próprio, como root).
    isolar : bool
        ``False``: sem bwrap (só com o pedido explícito do professor).
    marca : str, opcional
        Variável de ambiente posta em todo processo de toda caixa desta correção: depois de cada execução,
        :meth:`leftover_pids` procura processos com ela (deve ser nenhum).
    grupo : NotebookBudget, opcional
        O orçamento do notebook a que esta caixa pertence (memória total, prazo); pode ser trocado entre
        notebooks (``caixa.grupo = outro``).
    proc : bool, opcional
        Montar um ``/proc`` próprio na caixa; ``None`` (o padrão): o que :func:`sandbox_support` provou que
        funciona aqui.

    Raises
    ------
    BwrapMissing
        ``isolar=True`` e o bwrap não existe ou não funciona aqui (a mensagem diz a causa e o conserto).
    """

    def __init__(self, limites: Limits, numero: int = 0, isolar: bool = True, marca: str | None = None,
                 grupo: NotebookBudget | None = None, proc: bool | None = None):
        if isolar and proc is None:
            support = sandbox_support()
            if not support.ok:
                raise BwrapMissing(support.cause)
            proc = support.proc
        self.proc = bool(proc)  # a caixa monta um /proc próprio (veja SandboxSupport)
        self.limites = limites
        self.numero = numero
        self.isolar = isolar
        self.grupo = grupo
        marca = marca or secrets.token_hex(8)
        self.marca = f"{marca}.{numero}"  # a correção inteira, e esta caixa
        self.root = os.geteuid() == 0 and isolar  # sem caixa, não há como trocar de usuário e ainda ver o Python
        # correções simultâneas não dividem uids
        base = UID_BASE + 64 * (int(hashlib.sha256(marca.encode()).hexdigest()[:8], 16) % 1_000_000)
        self.uid = base + numero if self.root else os.geteuid()
        self.python, self._paths = sandbox_python()
        # a biblioteca que esta caixa monta e importa (padrão: a de library_dir()); a do processo do aluno, na
        # conferência, é uma cópia sem as contas proibidas (correcao.biblioteca_aluno), posta pelo Worker
        self.biblioteca: str | None = None

    # ---------- ambiente ----------
    def environment(self, home: str, extra: dict | None = None) -> dict:
        processos = self.limites.processos
        # sem cgroup, como root (um uid só da caixa): poucos processos por caixa. Como usuário comum o limite
        # contaria também os processos do professor, e fica o de sempre (o vigia de memória ainda vale)
        if self.grupo is not None and self.grupo.cgroup is None and self.root:
            processos = min(processos, self.limites.processos_sem_cgroup)
        env = {
            "HOME": home, "USER": "aluno", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PATH": f"{Path(self.python).parent}:/usr/local/bin:/usr/bin:/bin",
            "TMPDIR": "/tmp" if self.isolar else home,
            "MPLCONFIGDIR": f"{home}/.config/matplotlib", "IPYTHONDIR": f"{home}/.ipython",
            "JUPYTER_RUNTIME_DIR": f"{home}/.runtime", "JUPYTER_CONFIG_DIR": f"{home}/.jupyter",
            "JUPYTER_DATA_DIR": f"{home}/.jupyter-data", "PYTHONDONTWRITEBYTECODE": "1",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "MALLOC_ARENA_MAX": "2", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "CORRECAO_CAIXA": self.marca, "PYTHONPATH": self.biblioteca or library_dir(),
            "CORRECAO_LIMITES": f"{self.limites.memoria_mb},{self.limites.cpu_s},{processos}",
        }
        if self.isolar:
            env["CORRECAO_ENTRADA"] = INBOX
        if self.root:
            env["CORRECAO_UID"] = str(self.uid)
        for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # fazem o NumPy calcular certo em alguns processadores
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(extra or {})
        return env

    def command(self, workdir: Path, modulo: str, extra_env: dict | None = None) -> tuple[list[str], dict | None]:
        """A linha de comando (e o ambiente, fora da caixa) que roda ``python -I -m modulo``; ``workdir`` entra
        somente leitura em ``/caixa-entrada`` e vira o conteúdo inicial do HOME (um tmpfs limitado)."""
        py = [self.python, "-I", "-c", _BOOT, self.biblioteca or library_dir(), modulo]
        if not self.isolar:
            return py, self.environment(str(workdir), extra_env)
        disco = str(self.limites.disco_mb * 2**20)
        # /tmp em memória antes das montagens do ambiente: se o ambiente estiver em /tmp, ele fica visível
        # só três lugares graváveis, cada um com o limite de disco: HOME, /tmp e /dev/shm (os semáforos do
        # multiprocessing); a raiz e o /dev da caixa (tmpfs sem limite, graváveis quando a caixa roda sem root, num
        # pod) ficam somente leitura, e um aluno grava ou falha igual com e sem root
        args = ["bwrap", *_system_binds(), *(["--proc", "/proc"] if self.proc else []), "--dev", "/dev",
                "--perms", "1777", "--size", disco, "--tmpfs", "/dev/shm",
                "--perms", "1777", "--size", disco, "--tmpfs", "/tmp",
                *_read_limited(self._mounted()), *self._masks(),
                "--perms", "0755", "--dir", "/home", "--perms", "0777", "--size", disco, "--tmpfs", HOME,
                "--ro-bind", str(workdir), INBOX, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", HOME,
                "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--hostname", "caixa", "--clearenv"]
        if self.root:  # o processo de entrada troca para o uid da caixa antes de tudo (e perde estas capacidades)
            args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        for k, v in self.environment(HOME, extra_env).items():
            args += ["--setenv", k, v]
        return args + py, None

    def _mounted(self) -> list[str]:
        """As pastas que a caixa vê (somente leitura): o ambiente e a biblioteca desta caixa."""
        if not self.biblioteca:
            return self._paths
        return sorted({p for p in self._paths if p != library_dir()} | {self.biblioteca})

    def _masks(self) -> list[str]:
        """Com a biblioteca do aluno: a biblioteca de verdade tapada (se estiver dentro do ambiente montado) e os
        pacotes com contas prontas (:data:`correcao.biblioteca_aluno.MASKED`) trocados por um que levanta
        ``ImportError``."""
        if not self.biblioteca:
            return []
        from .biblioteca_aluno import masked_packages

        args = []
        real = Path(library_dir())
        montadas = [Path(p).resolve() for p in self._mounted() if p != self.biblioteca] + [Path("/usr")]
        for pacote in ("atencao", "correcao"):
            pasta = (real / pacote).resolve()
            if any(m == pasta or m in pasta.parents for m in montadas):
                args += ["--tmpfs", str(pasta)]
        for pasta, nome in sorted(masked_packages().items()):
            if any(m in Path(pasta).parents for m in montadas):
                args += ["--ro-bind", str(Path(self.biblioteca) / "_tapados" / nome), pasta]
        return args

    # ---------- execução ----------
    def start(self, workdir: Path, modulo: str, extra_env: dict | None = None, pass_fds=(),
              stdin=subprocess.PIPE, stdout=subprocess.PIPE, in_group: bool = True) -> subprocess.Popen:
        """Inicia ``python -I -m modulo`` na caixa e volta sem esperar: um :class:`subprocess.Popen`.

        ``pass_fds``: descritores que entram na caixa com o mesmo número (ex.: uma ponta de um
        :func:`os.pipe` para outra caixa; diga o número ao processo por ``extra_env``). ``stdin``/``stdout``:
        como no ``Popen`` (padrão: pipes); a saída de erro vai para ``/dev/null``. Com :attr:`grupo`, o
        processo entra no cgroup do grupo antes do ``exec`` do bwrap (nada escapa) e morre com o prazo dele;
        ``in_group=False``: fora do grupo (o verificador residente, que vive entre os notebooks).

        Raises
        ------
        ValueError
            ``pass_fds`` com algo que não é um descritor aberto.
        """
        for fd in pass_fds:
            if not isinstance(fd, int) or isinstance(fd, bool):
                raise ValueError(f"pass_fds: esperados descritores (int), recebido {fd!r}")
            try:
                os.fstat(fd)
            except OSError:
                raise ValueError(f"pass_fds: o descritor {fd} não está aberto") from None
        workdir.mkdir(parents=True, exist_ok=True)
        if self.root:
            os.chown(workdir, self.uid, self.uid)
        cmd, env = self.command(workdir, modulo, extra_env)
        grupo = self.grupo if in_group else None
        if grupo is not None and grupo.cgroup is not None:  # entra no cgroup antes de existir qualquer filho
            dirs = [str(d) for d in grupo.cgroup.dirs.values()]
            entrar = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; '
                      'shift; n=$((n-1)); done; exec "$@"')
            cmd = ["/bin/sh", "-c", entrar, "sh", str(len(dirs)), *dirs, *cmd]
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL, cwd=workdir, env=env,
                                start_new_session=True, pass_fds=tuple(pass_fds))
        proc.inicio = time.monotonic()  # type: ignore[attr-defined]
        if grupo is not None:
            grupo._register(self, proc)
        return proc

    def run(self, workdir: Path, modulo: str, entrada: bytes, extra_env: dict | None = None,  # noqa: C901 — começar a caixa, vigiar os prazos e ler o desfecho, em ordem
            relogio_s: float | None = None) -> SandboxRun:
        """Roda ``modulo`` na caixa, com ``entrada`` na entrada padrão; mata tudo ao passar de ``relogio_s``
        (padrão: ``limites.relogio_s``) ou do prazo do :attr:`grupo`, o que vier antes. A saída padrão lida
        é limitada a 64 MiB (:data:`MAX_OUTPUT_BYTES`)."""
        limit = relogio_s if relogio_s is not None else self.limites.relogio_s
        t0 = time.perf_counter()
        if self.grupo is not None:
            limit = min(limit, self.grupo.remaining())
            if limit <= 0:
                return SandboxRun(b"", None, True, 0.0, killed_by="tempo")
        proc = self.start(workdir, modulo, extra_env)
        chunks: list[bytes] = []

        def ler() -> None:
            lidos = 0
            while True:
                bloco = proc.stdout.read1(1 << 16)
                if not bloco:
                    break
                if lidos < MAX_OUTPUT_BYTES:
                    chunks.append(bloco[:MAX_OUTPUT_BYTES - lidos])
                lidos += len(bloco)

        leitor = threading.Thread(target=ler, daemon=True)
        leitor.start()
        escritor = write_in_thread(proc.stdin, entrada)
        timed_out = False
        try:
            proc.wait(timeout=max(limit - (time.perf_counter() - t0), 0.01))
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if proc.poll() is None:
                self._kill(proc)
        leitor.join(timeout=10)
        escritor.join(timeout=10)
        self.kill_leftovers()
        morta = self.grupo.motivo if self.grupo is not None else ""
        if morta == "tempo":
            timed_out = True
        return SandboxRun(b"".join(chunks), proc.returncode, timed_out, time.perf_counter() - t0, killed_by=morta)

    def _kill(self, proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()

    def leftover_pids(self) -> list[int]:
        return leftover_pids(self.marca)

    def kill_leftovers(self) -> None:
        kill_sandbox(self.marca)


def write_in_thread(arquivo, dados: bytes) -> threading.Thread:
    """Escreve ``dados`` em ``arquivo`` (binário) e o fecha, numa thread já começada, que é devolvida: um processo
    que não lê a entrada não trava quem o começou (os erros de escrita, de um processo que já saiu, são ignorados)."""

    def escrever() -> None:
        try:
            arquivo.write(dados)
        except OSError:
            pass
        finally:
            try:
                arquivo.close()
            except OSError:
                pass

    escritor = threading.Thread(target=escrever, daemon=True)
    escritor.start()
    return escritor


def leftover_pids(marca: str) -> list[int]:
    """PIDs de processos ainda vivos da caixa ``marca`` (``<correção>.<n>``) ou, com só ``<correção>``, de
    qualquer caixa dela; deve ser sempre vazio."""
    found, tag = [], f"CORRECAO_CAIXA={marca}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if any(v == tag or v.startswith(tag + b".") for v in (entry / "environ").read_bytes().split(b"\0")):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def kill_sandbox(marca: str) -> None:
    """Garante que nada do aluno sobreviveu (sem isolamento, um processo que mudou de sessão pode)."""
    for _ in range(50):
        pids = leftover_pids(marca)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
