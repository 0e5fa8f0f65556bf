"""Dentro da caixa: executa o notebook do aluno num kernel ``python3`` (nbclient), célula por célula.

Pedido (JSON na entrada padrão): ``nonce``, ``notebook`` (o notebook já saneado pelo nbgrader),
``tempo_celula`` (s) e ``env`` (variáveis só para o kernel, como ``NBGRADER_EXECUTION``).

Resposta: uma linha ``<nonce> {"celula": i, "outputs": [...], "execution_count": n}`` por célula de
código executada, assim que termina (se a caixa for morta por tempo, o que já rodou não se perde), e
no fim ``<nonce> {"fim": situacao}`` com ``ok``, ``kernel_morreu`` ou ``erro: ...``.

Nada daqui decide pontos: as saídas do kernel só servem ao retorno e à nota do nbgrader, que a
conferência independente (:mod:`correcao._veredito`) limita.
"""

from __future__ import annotations

import os
import resource
import time

from . import _caixa


def _erro_sem_saida(client, cell) -> None:
    """Como o ``Execute`` do nbgrader: se o kernel respondeu erro e nenhuma saída de erro foi mostrada
    (ex.: o aluno desligou a exibição de tracebacks), a saída de erro é acrescentada."""
    reply = getattr(client, "_ultima_resposta", None)
    if reply and reply.get("content", {}).get("status") == "error":
        if not any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            from nbformat import from_dict

            content = reply["content"]
            cell.outputs.append(from_dict({"output_type": "error", "ename": content.get("ename", "Erro"),
                                           "evalue": content.get("evalue", ""),
                                           "traceback": content.get("traceback") or [f"{content.get('ename')}"]}))


def main() -> None:
    pedido, enviar = _caixa.abrir()

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.from_dict(pedido["notebook"])
    os.environ.update(pedido.get("env", {}))
    client = NotebookClient(
        nb, timeout=int(pedido.get("tempo_celula", 20)), kernel_name="python3", allow_errors=True,
        interrupt_on_timeout=True, record_timing=False, startup_timeout=60,
        error_on_timeout={"ename": "CellTimeoutError", "evalue": "",
                          "traceback": ["CellTimeoutError: a célula passou do tempo limite e foi interrompida"]},
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
        resources={"metadata": {"path": os.getcwd()}},
        on_cell_executed=lambda **kw: setattr(client, "_ultima_resposta", kw.get("execute_reply")))
    fim = "ok"
    inicio = time.perf_counter()
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                    _erro_sem_saida(client, cell)
                except DeadKernelError:
                    fim = f"kernel_morreu:{index}"
                    enviar({"celula": index, "outputs": cell.get("outputs", []),
                            "execution_count": cell.get("execution_count")})
                    break
                enviar({"celula": index, "outputs": cell.get("outputs", []),
                        "execution_count": cell.get("execution_count")})
    except DeadKernelError:
        fim = "kernel_morreu"
    except Exception as exc:  # noqa: BLE001 - vira a situação da linha, nunca um traceback sem dono
        fim = f"erro: {type(exc).__name__}: {str(exc)[:200]}"
    uso = [resource.getrusage(r) for r in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in uso)  # este processo e o kernel (já encerrado)
    enviar({"fim": fim, "cpu": cpu, "relogio": time.perf_counter() - inicio})
    os._exit(0)


if __name__ == "__main__":
    main()
