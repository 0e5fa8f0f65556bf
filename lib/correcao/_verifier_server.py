"""Dentro da caixa do verificador: o verificador residente, um por processo de correção.

O verificador (:mod:`correcao._veredito`) não roda código do aluno: ele chama as funções do aluno, que rodam no
processo do aluno, e julga os valores que voltam. Por isso ele pode começar uma vez por processo de correção, e
não uma vez por notebook: este processo aplica os limites e troca de usuário (:func:`correcao._caixa.apply_limits`),
importa o verificador e as verificações de todas as aulas e espera pedidos no socket de controle
(``CORRECAO_FD_CONTROLE``, veja :class:`correcao.verifier_server.VerifierServer`). Cada pedido traz quatro
descritores (o pedido JSON, a saída e o par de pipes com o processo do aluno); este processo faz um ``fork``, e o
filho roda :func:`correcao._veredito.main` com eles, como um verificador novo faria. Cada notebook tem o seu filho,
e cada filho nasce deste processo, que nunca julgou nada: o que um notebook deixa num filho (estado, tabelas,
sementes) não passa para o próximo.

Mensagens de controle (JSON, uma por linha): ``{"rodar": true}`` com os descritores → ``{"pid": n}``; depois,
``{"fim": código}`` quando o filho termina; ``{"matar": true}`` mata o filho em andamento. Fim do socket (o processo
de correção acabou): o filho em andamento é morto e este processo sai.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket

from . import _caixa

FDS_PER_REQUEST = 4  # o pedido (leitura), a saída (escrita), o pipe do aluno (leitura) e o pipe para ele (escrita)


def _child(fds: list[int], controle: socket.socket) -> None:
    """No filho: os descritores do pedido nos lugares de um verificador novo, e o verificador."""
    controle.close()
    pedido, saida, ler, escrever = fds
    os.dup2(pedido, 0)
    os.dup2(saida, 1)
    os.close(pedido)
    os.close(saida)
    os.environ["CORRECAO_FD_LER"], os.environ["CORRECAO_FD_ESCREVER"] = str(ler), str(escrever)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        from . import _veredito

        _veredito.main()
    finally:
        os._exit(1)  # main() sai com os._exit(0); chegar aqui é um erro, e o processo de correção o vê


def _send(controle: socket.socket, obj: dict) -> None:
    controle.sendall((json.dumps(obj) + "\n").encode("utf-8"))


def _pidfd(pid: int) -> int | None:
    """Um descritor que fica pronto quando ``pid`` termina; ``None`` num núcleo sem ``pidfd_open`` (antes do 5.3)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _wait_child(controle: socket.socket, pid: int) -> bool:
    """Espera o filho ``pid`` terminar (e manda o código) ou o pedido de matá-lo; ``False`` se o socket fechou
    (o filho é morto)."""
    pidfd = _pidfd(pid)
    try:
        while True:
            esperar = [controle] if pidfd is None else [controle, pidfd]
            prontos, _, _ = select.select(esperar, [], [], 0.05 if pidfd is None else None)
            if controle in prontos:
                dados = controle.recv(4096)
                if not dados or b'"matar"' in dados:
                    os.kill(pid, signal.SIGKILL)
                if not dados:  # o processo de correção acabou
                    os.waitpid(pid, 0)
                    return False
            terminou, status = os.waitpid(pid, os.WNOHANG)
            if terminou:
                _send(controle, {"fim": os.waitstatus_to_exitcode(status)})
                return True
    finally:
        if pidfd is not None:
            os.close(pidfd)


def serve(controle: socket.socket) -> None:
    """Atende os pedidos de ``controle`` um por vez, até o socket fechar."""
    while True:
        try:
            mensagem, fds, _, _ = socket.recv_fds(controle, 4096, FDS_PER_REQUEST)
        except OSError:
            return
        if not mensagem:
            return
        if len(fds) != FDS_PER_REQUEST:
            for fd in fds:
                os.close(fd)
            _send(controle, {"fim": -1})
            continue
        pid = os.fork()
        if pid == 0:
            _child(fds, controle)
        for fd in fds:
            os.close(fd)
        _send(controle, {"pid": pid})
        if not _wait_child(controle, pid):
            return


def main() -> None:
    _caixa.apply_limits()
    controle = socket.socket(fileno=int(os.environ.pop("CORRECAO_FD_CONTROLE")))
    os.environ["MPLBACKEND"] = "Agg"
    from . import _veredito

    _veredito.load_checks()  # os imports das verificações, herdados por cada filho
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    serve(controle)
    os._exit(0)


if __name__ == "__main__":
    main()
