"""O isolamento de cada entrega: um processo numa caixa do bubblewrap (``bwrap``), com limites.

O código de um aluno é não confiável. Cada execução (o notebook no kernel, e depois a conferência
independente das verificações, em :mod:`correcao.conferencia`) roda numa caixa nova, em que:

- o usuário é outro e sem privilégios: como root, um uid só da caixa (sorteado por correção, acima de
  100000, mais o número da caixa: o limite de processos de uma caixa não conta os de outra); como usuário comum,
  um *user namespace* do próprio bwrap;
- não há rede (``--unshare-net``: só a interface de loopback da própria caixa);
- o espaço de processos é novo (``--unshare-pid``): quando o processo principal termina, tudo o que o
  aluno deixou rodando morre junto, e ``--die-with-parent`` mata a caixa se a correção for interrompida;
- o ambiente é limpo (``--clearenv``): nenhuma variável do professor entra;
- o sistema de arquivos só mostra, somente leitura, ``/usr``, o Python do ambiente e a biblioteca
  ``lib/`` do curso; a única pasta gravável é a pasta de trabalho vazia desta execução (``/home/aluno``),
  mais um ``/tmp`` em memória. O repositório, ``solutions/``, o curso do nbgrader (``source/``,
  ``release/``, ``gradebook.db``), as outras entregas e a pasta de saída não existem lá dentro;
- limites (``resource.setrlimit``, aplicados pelo processo de entrada antes de qualquer código do
  aluno): memória (espaço de endereços, padrão 2 GiB), tempo de CPU e número de processos; o tempo de
  relógio é controlado daqui (o processo é morto ao passar do limite).

Sem o bwrap (macOS, Windows, ou o pacote não instalado) a correção se recusa a rodar, a menos que o
professor peça ``sem_isolamento=True`` (``--sem-isolamento``): aí cada execução é só um subprocesso com
ambiente limpo, limites e pasta própria, e cada linha de ``notas.csv`` diz ``sem_isolamento``.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HOME = "/home/aluno"  # a pasta de trabalho, vista de dentro da caixa
UID_BASE = 100_000  # como root: cada caixa roda com um uid sem nome e sem grupos, a partir daqui

INSTALAR_BWRAP = (
    "A correção roda cada entrega isolada com o bubblewrap (bwrap), que não foi encontrado.\n"
    "Instale-o: Debian/Ubuntu `sudo apt-get install bubblewrap`, Fedora `sudo dnf install bubblewrap`,\n"
    "Arch `sudo pacman -S bubblewrap`. No macOS e no Windows não há bwrap: use uma máquina Linux (ou o WSL).\n"
    "Só se você confia em todas as entregas, corrija sem isolamento com --sem-isolamento\n"
    "(make corrigir ... SEM_ISOLAMENTO=1); cada linha de notas.csv dirá 'sem_isolamento'."
)


class SemBwrap(RuntimeError):
    """O bwrap não está instalado (ou não funciona nesta máquina) e o isolamento não foi dispensado."""


@dataclass(frozen=True)
class Limites:
    """Limites de cada execução. ``memoria_mb``: espaço de endereços por processo (MiB); ``cpu_s``: tempo
    de CPU por processo (s); ``processos``: processos e threads simultâneos; ``relogio_s``: tempo de
    relógio da execução inteira (s)."""

    memoria_mb: int = 2048
    cpu_s: int = 180
    processos: int = 256
    relogio_s: float = 180.0


@dataclass
class Execucao:
    """O que uma execução devolveu: a saída padrão (bytes), o código de saída e se passou do tempo."""

    stdout: bytes
    returncode: int | None
    tempo_esgotado: bool
    segundos: float


def bwrap_disponivel() -> bool:
    """``True`` se o ``bwrap`` existe e consegue criar uma caixa nesta máquina."""
    exe = shutil.which("bwrap")
    if not exe:
        return False
    try:
        run = subprocess.run([exe, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "true"],
                             capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0


def _leitura(paths) -> list[str]:
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


def _sistema() -> list[str]:
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


def python_da_caixa() -> tuple[str, list[str]]:
    """O interpretador a usar dentro da caixa e as pastas que ele precisa ver (ambiente e biblioteca)."""
    import atencao

    lib = Path(atencao.__file__).resolve().parents[1]  # lib/, com atencao/ e correcao/
    needed = {sys.prefix, sys.base_prefix, str(lib)}
    return sys.executable, sorted(needed)


class Caixa:
    """Roda comandos de entrada (``python -I -m correcao._algo``) isolados, um por vez por caixa.

    ``numero`` distingue as caixas que rodam em paralelo (uid próprio, como root). ``marca`` é uma
    variável de ambiente posta em todo processo de toda caixa desta correção: depois de cada execução,
    :meth:`restantes` procura processos com ela (deve ser nenhum).
    """

    def __init__(self, limites: Limites, numero: int = 0, isolar: bool = True, marca: str | None = None):
        if isolar and not bwrap_disponivel():
            raise SemBwrap(INSTALAR_BWRAP)
        self.limites = limites
        self.numero = numero
        self.isolar = isolar
        marca = marca or secrets.token_hex(8)
        self.marca = f"{marca}.{numero}"  # a correção inteira, e esta caixa
        self.root = os.geteuid() == 0 and isolar  # sem caixa, não há como trocar de usuário e ainda ver o Python
        # correções simultâneas não dividem uids
        base = UID_BASE + 64 * (int(hashlib.sha256(marca.encode()).hexdigest()[:8], 16) % 1_000_000)
        self.uid = base + numero if self.root else os.geteuid()
        self.python, self._paths = python_da_caixa()

    # ---------- ambiente ----------
    def ambiente(self, home: str, extra: dict | None = None) -> dict:
        env = {
            "HOME": home, "USER": "aluno", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PATH": f"{Path(self.python).parent}:/usr/local/bin:/usr/bin:/bin",
            "TMPDIR": "/tmp" if self.isolar else home,
            "MPLCONFIGDIR": f"{home}/.config/matplotlib", "IPYTHONDIR": f"{home}/.ipython",
            "JUPYTER_RUNTIME_DIR": f"{home}/.runtime", "JUPYTER_CONFIG_DIR": f"{home}/.jupyter",
            "JUPYTER_DATA_DIR": f"{home}/.jupyter-data", "PYTHONDONTWRITEBYTECODE": "1",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "MALLOC_ARENA_MAX": "2", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "CORRECAO_CAIXA": self.marca,
            "CORRECAO_LIMITES": f"{self.limites.memoria_mb},{self.limites.cpu_s},{self.limites.processos}",
        }
        if self.root:
            env["CORRECAO_UID"] = str(self.uid)
        for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # fazem o NumPy calcular certo em alguns processadores
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(extra or {})
        return env

    def comando(self, workdir: Path, modulo: str, extra_env: dict | None = None) -> tuple[list[str], dict | None]:
        """A linha de comando (e o ambiente, fora da caixa) que roda ``python -I -m modulo`` em ``workdir``."""
        py = [self.python, "-I", "-m", modulo]
        if not self.isolar:
            return py, self.ambiente(str(workdir), extra_env)
        # /tmp em memória antes das montagens do ambiente: se o ambiente estiver em /tmp, ele fica visível
        args = ["bwrap", *_sistema(), "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
                *_leitura(self._paths),
                "--perms", "0755", "--dir", "/home", "--bind", str(workdir), HOME, "--chdir", HOME,
                "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--hostname", "caixa", "--clearenv"]
        if self.root:  # o processo de entrada troca para o uid da caixa antes de tudo (e perde estas capacidades)
            args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        for k, v in self.ambiente(HOME, extra_env).items():
            args += ["--setenv", k, v]
        return args + py, None

    # ---------- execução ----------
    def rodar(self, workdir: Path, modulo: str, entrada: bytes, extra_env: dict | None = None,
              relogio_s: float | None = None) -> Execucao:
        """Roda ``modulo`` na caixa, com ``entrada`` na entrada padrão; mata tudo ao passar de ``relogio_s``."""
        workdir.mkdir(parents=True, exist_ok=True)
        if self.root:
            os.chown(workdir, self.uid, self.uid)
        cmd, env = self.comando(workdir, modulo, extra_env)
        limit = relogio_s if relogio_s is not None else self.limites.relogio_s
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=workdir, env=env, start_new_session=True)
        timed_out = False
        try:
            out, _ = proc.communicate(entrada, timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._matar(proc)
            out, _ = proc.communicate()
        finally:
            if proc.poll() is None:
                self._matar(proc)
        self.encerrar_restantes()
        return Execucao(out or b"", proc.returncode, timed_out, time.perf_counter() - t0)

    def iniciar(self, workdir: Path, modulo: str, entrada: bytes, extra_env: dict | None = None,
                pass_fds: tuple = (), saida=subprocess.PIPE) -> subprocess.Popen:
        """Inicia ``modulo`` na caixa sem esperar: ``entrada`` vai para a entrada padrão (numa thread) e
        ``pass_fds`` (descritores, como as pontas de um pipe entre duas caixas) entram na caixa. Quem chama
        espera, lê ``stdout`` e, no fim, chama :meth:`_matar` e :meth:`encerrar_restantes`."""
        import threading

        workdir.mkdir(parents=True, exist_ok=True)
        if self.root:
            os.chown(workdir, self.uid, self.uid)
        cmd, env = self.comando(workdir, modulo, extra_env)
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=saida, stderr=subprocess.DEVNULL, cwd=workdir,
                                env=env, start_new_session=True, pass_fds=pass_fds)

        def alimentar():
            try:
                proc.stdin.write(entrada)
                proc.stdin.close()
            except OSError:
                pass

        threading.Thread(target=alimentar, daemon=True).start()
        return proc

    def _matar(self, proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()

    def restantes(self) -> list[int]:
        return restantes(self.marca)

    def encerrar_restantes(self) -> None:
        encerrar(self.marca)


def restantes(marca: str) -> list[int]:
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


def encerrar(marca: str) -> None:
    """Garante que nada do aluno sobreviveu (sem isolamento, um processo que mudou de sessão pode)."""
    for _ in range(50):
        pids = restantes(marca)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
