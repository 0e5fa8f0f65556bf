"""O verificador residente (correcao.verifier_server): uma caixa do verificador por processo de correção, um filho
dela por notebook. Os vereditos são os de um verificador novo a cada notebook, nenhum filho sobra depois do
notebook, a caixa que morre é começada de novo no notebook seguinte e nada sobra depois de ``Worker.close``."""

from __future__ import annotations

import os
import signal
import time

import nbformat
import pytest

from correcao import motor
from correcao.catalogo import catalog, is_check, nbgrader_meta
from correcao.isolamento import NotebookBudget, bwrap_available, leftover_pids
from correcao.politica import GradingPolicy
from correcao.pool import STUDENT_LIBRARIES, matplotlib_cache


def _execute(w, nb, ident):
    with NotebookBudget(f"teste-{ident}", w.limits, w.limits.relogio_s, isolar=w.isolate) as grupo:
        w.budget = w.kernel_box.grupo = w.student_box.grupo = w.verifier_box.grupo = grupo
        try:
            return w.execute(nb, ident)
        finally:
            w.budget = w.kernel_box.grupo = w.student_box.grupo = w.verifier_box.grupo = None


def _verdicts(res) -> dict:
    return {gid: passou for gid, (passou, _) in res.verdicts.items()}


def _resident_processes(w) -> list[int]:
    """Os processos vivos com a marca da caixa do verificador (o residente; nunca um filho dele)."""
    time.sleep(0.2)
    return leftover_pids(w.verifier_box.marca)


@pytest.mark.lento  # executa notebooks nas caixas (make test-lento)
def test_um_residente_por_processo_vereditos_de_cada_notebook_e_recomeco(tmp_path):
    g = catalog()[motor.PREFLIGHT]
    solucao = nbformat.read(g.source, as_version=4)
    errado = nbformat.read(g.source, as_version=4)
    primeira = next(c for c in errado.cells if c.cell_type == "code" and nbgrader_meta(c).get("solution"))
    primeira.source = "raise NotImplementedError()"  # o esboço de volta na primeira resposta
    checks = [nbgrader_meta(c)["grade_id"] for c in solucao.cells if is_check(c)]

    w = motor.Worker.boxes_only(tmp_path / "w", 0, GradingPolicy(isolate=bwrap_available()), "residente")
    w.mpl_cache = matplotlib_cache(tmp_path)
    w.libraries = tmp_path / STUDENT_LIBRARIES
    try:
        res = _execute(w, solucao, "a1")
        assert _verdicts(res) == dict.fromkeys(checks, True), res.verdicts
        residente = w.verifier._proc.pid
        assert len(_resident_processes(w)) == 1  # o filho do notebook já acabou; só o residente

        res = _execute(w, errado, "a2")  # o estado do notebook anterior não passa para o próximo
        assert _verdicts(res)[checks[0]] is False and not all(_verdicts(res).values()), res.verdicts
        res = _execute(w, solucao, "a3")
        assert _verdicts(res) == dict.fromkeys(checks, True), res.verdicts
        assert w.verifier._proc.pid == residente  # a mesma caixa para os três notebooks
        assert len(_resident_processes(w)) == 1

        os.killpg(residente, signal.SIGKILL)  # a caixa residente morre entre dois notebooks
        res = _execute(w, solucao, "a4")
        assert _verdicts(res) == dict.fromkeys(checks, True), res.verdicts
        assert w.verifier._proc.pid != residente
    finally:
        w.close()
    assert _resident_processes(w) == []


def test_pedido_sem_os_quatro_descritores_e_recusado_e_o_fim_do_socket_encerra(tmp_path):
    """O lado de dentro (sem caixa): um pedido sem os quatro descritores volta ``{"fim": -1}`` sem ``fork``; os
    descritores que vieram são fechados; o socket fechado encerra o laço."""
    import json
    import socket
    import threading

    from correcao import _verifier_server

    nosso, dela = socket.socketpair()
    laco = threading.Thread(target=_verifier_server.serve, args=(dela,), daemon=True)
    laco.start()
    ler, escrever = os.pipe()
    socket.send_fds(nosso, [b'{"rodar": true}\n'], [ler])
    os.close(ler)
    assert json.loads(nosso.makefile("rb").readline()) == {"fim": -1}
    os.close(escrever)
    nosso.close()
    laco.join(5)
    assert not laco.is_alive()


def test_leitor_termina_sem_traceback_quando_a_caixa_morre_com_um_pedido_nao_lido(monkeypatch):
    """A caixa residente que morre sem ler o pedido: o socket deste lado dá ``ConnectionResetError``; o leitor
    termina calado (o notebook em andamento termina com -1) e nenhum traceback vai para a saída de erro."""
    import socket
    import threading
    from pathlib import Path

    from correcao.verifier_server import VerifierRun, VerifierServer

    erros = []
    monkeypatch.setattr(threading, "excepthook", lambda args: erros.append(args.exc_type))
    server = VerifierServer(box=None, workdir=Path("."))
    nosso, dela = socket.socketpair()
    run = server._atual = VerifierRun(server, None)
    nosso.sendall(b'{"rodar": true}\n')  # o pedido que a caixa não chega a ler
    dela.close()
    leitor = threading.Thread(target=server._read, args=(nosso,))
    leitor.start()
    leitor.join(5)
    assert not leitor.is_alive() and erros == []
    assert run.poll() == -1
