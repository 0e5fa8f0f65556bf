"""O verificador residente, visto do processo de correção: uma caixa do verificador por processo de correção, e não
uma por notebook (o lado de dentro está em :mod:`correcao._verifier_server`).

O verificador não roda código do aluno; o que custava a cada notebook era começar um Python novo na caixa e
importar o NumPy, a biblioteca e as verificações (cerca de 0,2 s de CPU). :class:`VerifierServer` começa a caixa uma
vez, e cada notebook ganha um filho dela, que nasce já com tudo importado (:meth:`VerifierServer.start` devolve um
:class:`VerifierRun`, com a mesma cara de um ``subprocess.Popen``: ``stdout``, ``poll``, ``wait`` e ``kill``). O
processo do aluno continua novo a cada notebook, na sua própria caixa.

Se a caixa residente morre (a máquina, um ``kill``), o próximo notebook começa outra.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

from .isolamento import Sandbox, write_in_thread

MODULE = "correcao._verifier_server"


class VerifierRun:
    """Um notebook no verificador residente: a saída (``stdout``, para ler até o fim) e o filho que o julga.

    ``returncode``: ``None`` enquanto o filho roda; depois, o código de saída dele (``-9`` se foi morto, ``-1`` se a
    caixa residente parou antes de responder)."""

    def __init__(self, server: "VerifierServer", stdout):
        self.server = server
        self.stdout = stdout
        self.pid: int | None = None  # o do filho, quando a caixa responde
        self.returncode: int | None = None
        self._fim = threading.Event()

    def _finished(self, codigo: int) -> None:
        if self.returncode is None:
            self.returncode = codigo
        self._fim.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Espera o filho terminar; ``subprocess.TimeoutExpired`` depois de ``timeout`` segundos."""
        if not self._fim.wait(timeout):
            raise subprocess.TimeoutExpired(MODULE, timeout)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        """Mata o filho (SIGKILL) e espera o fim; se a caixa residente não responde, ela inteira é morta."""
        if self._fim.is_set():
            return
        self.server._send({"matar": True})
        if not self._fim.wait(5):
            self.server.stop()
            self._finished(-9)


class VerifierServer:
    """A caixa do verificador residente de um processo de correção.

    Parameters
    ----------
    box : Sandbox
        A caixa do verificador (uid, limites e marca próprios); nenhum cgroup de notebook: o residente vive
        entre os notebooks, e cada filho dele termina com o notebook (:meth:`VerifierRun.kill`).
    workdir : Path
        O conteúdo inicial do HOME da caixa (o cache de fontes do matplotlib).
    """

    def __init__(self, box: Sandbox, workdir: Path):
        self.box, self.workdir = box, workdir
        self._proc: subprocess.Popen | None = None
        self._controle: socket.socket | None = None
        self._atual: VerifierRun | None = None
        self._chegou = threading.Condition()  # avisa a chegada do pid do filho em self._atual
        self._leitor: threading.Thread | None = None

    # ---------- a caixa ----------
    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._controle is not None

    def ensure(self) -> None:
        """Começa a caixa residente, se ela não está rodando (o primeiro notebook, ou depois de ela morrer)."""
        if self._alive():
            return
        self.stop()
        nosso, dela = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = self.box.start(self.workdir, MODULE, {"CORRECAO_FD_CONTROLE": str(dela.fileno())},
                                        pass_fds=(dela.fileno(),), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, in_group=False)
        finally:
            dela.close()
        self._controle = nosso
        self._leitor = threading.Thread(target=self._read, args=(nosso,), daemon=True, name="verificador-residente")
        self._leitor.start()

    def _read(self, controle: socket.socket) -> None:
        """Lê as respostas da caixa: ``{"pid": n}`` e ``{"fim": código}`` do notebook em andamento."""
        try:
            for linha in controle.makefile("rb"):
                self._received(linha)
        except (OSError, ValueError):  # a caixa morreu, ou stop() fechou o socket no meio da leitura
            pass
        atual = self._atual  # a caixa parou: o notebook em andamento termina aqui
        if atual is not None:
            atual._finished(-1)
        with self._chegou:
            self._chegou.notify_all()

    def _received(self, linha: bytes) -> None:
        try:
            msg = json.loads(linha)
        except ValueError:
            return
        atual = self._atual
        if not isinstance(msg, dict) or atual is None:
            return
        if "fim" in msg:
            atual._finished(msg["fim"] if isinstance(msg["fim"], int) else -1)
        elif isinstance(msg.get("pid"), int):
            with self._chegou:
                atual.pid = msg["pid"]
                self._chegou.notify_all()

    def _send(self, obj: dict, fds: tuple = ()) -> None:
        if self._controle is None:
            return
        try:
            socket.send_fds(self._controle, [(json.dumps(obj) + "\n").encode("utf-8")], list(fds))
        except OSError:
            pass

    def stop(self) -> None:
        """Para a caixa residente (e o filho em andamento)."""
        if self._controle is not None:
            try:
                self._controle.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._controle.close()
            self._controle = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self.box._kill(self._proc)
            self._proc = None
        if self._leitor is not None:
            self._leitor.join(5)
            self._leitor = None

    # ---------- um notebook ----------
    def start(self, pedido: dict, ler: int, escrever: int) -> VerifierRun:
        """Julga um notebook: o ``pedido`` (o JSON que um verificador novo leria na entrada padrão) e o par de pipes
        com o processo do aluno (``ler``, ``escrever``; os dois continuam deste lado, e quem chamou os fecha). Se a
        caixa residente não responde, ela é começada de novo, uma vez."""
        for tentativa in range(2):
            self.ensure()
            run = self._request(pedido, ler, escrever)
            if run.pid is not None or tentativa:
                return run
            run.stdout.close()
            self.stop()
        return run

    def _request(self, pedido: dict, ler: int, escrever: int) -> VerifierRun:
        pedido_ler, pedido_escrever = os.pipe()
        saida_ler, saida_escrever = os.pipe()
        run = self._atual = VerifierRun(self, os.fdopen(saida_ler, "rb"))
        try:
            self._send({"rodar": True}, (pedido_ler, saida_escrever, ler, escrever))
        finally:
            os.close(pedido_ler)
            os.close(saida_escrever)
        if not self._wait_pid(run):
            os.close(pedido_escrever)
            run._finished(-1)
            return run
        write_in_thread(os.fdopen(pedido_escrever, "wb"), json.dumps(pedido).encode("utf-8"))
        return run

    def _wait_pid(self, run: VerifierRun, timeout: float = 30.0) -> bool:
        """Espera a caixa dizer o pid do filho de ``run`` (``False``: ela parou ou não respondeu em ``timeout`` s)."""
        prazo = time.monotonic() + timeout
        with self._chegou:
            while run.pid is None:
                restante = prazo - time.monotonic()
                if restante <= 0 or not self._alive():
                    return False
                self._chegou.wait(min(restante, 0.5))
        return True
