"""Dentro da caixa: executa o notebook do aluno num kernel ``python3`` (nbclient), célula por célula.

Pedido (JSON na entrada padrão): ``nonce``, ``notebook`` (o notebook já saneado pelo nbgrader),
``tempo_celula`` (s) e ``env`` (variáveis só para o kernel, como ``NBGRADER_EXECUTION``).

Resposta: uma linha ``<nonce> {"celula": i, "outputs": [...], "execution_count": n, "cortada": c}`` por
célula de código executada, assim que termina (se a caixa for morta por tempo, o que já rodou não se perde),
antes delas ``<nonce> {"kernel_pronto": true}`` (o kernel começou e atende: um kernel que nunca chega aqui é uma
falha da máquina, nunca do aluno, porque nenhum código dele rodou ainda), e no fim
``<nonce> {"fim": situacao, "cpu": s, "relogio": s}`` com ``ok``, ``kernel_morreu``,
``ignorou_interrupcao:<i>`` ou ``erro: ...``.

Limites daqui (além dos da caixa):

- **saída**: no máximo :data:`MAX_CELL_OUTPUT` bytes por célula e :data:`MAX_NOTEBOOK_OUTPUT` no
  notebook inteiro; o que passa é descartado, a célula ganha uma saída dizendo que foi cortada
  (``"cortada": "celula"``/``"notebook"``) e, se ainda está rodando, é interrompida (uma enxurrada de
  ``print`` não ocupa o tempo do notebook inteiro);
- **interrupção ignorada**: depois de uma célula interrompida (tempo da célula ou saída demais), o kernel
  tem :data:`INTERRUPT_WAIT_S` segundos para voltar a responder; um kernel que ignora o SIGINT é
  encerrado ali (``ignorou_interrupcao``), e o resto do notebook não roda: sem isso, cada célula seguinte
  esperaria o tempo dela inteiro na fila de um kernel ocupado;
- **kernel inalcançável**: um kernel que corrompe as próprias conexões (bytes quaisquer escritos nos
  descritores dele) deixa os sockets deste lado sem par, e um envio do ZeroMQ esperaria para sempre; cada
  envio tem :data:`SEND_TIMEOUT_MS` e, passado esse tempo, o kernel é tratado como o que ignora a interrupção
  (depois de uma célula interrompida) ou como morto (no começo de uma célula), e o resto do notebook não roda.

Nada daqui decide pontos: as saídas do kernel só servem ao retorno e à nota do nbgrader, que a
conferência independente (:mod:`correcao._veredito`) limita.
"""

from __future__ import annotations

import os
import resource
import time

INICIO = time.monotonic()  # o Python da caixa chegou aqui (só vai na resposta quando o pedido tem "tempos")

from . import _caixa  # noqa: E402

SEND_TIMEOUT_MS = 5000  # um envio ao kernel é imediato; esperar mais é um kernel sem conexão (veja o módulo)


def _error_without_output(client, cell) -> None:
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


# a saída de uma célula que passou do tempo: a do nbclient aqui, e a mesma na execução única (correcao._aluno) e
# no relatório de uma verificação interrompida (correcao._veredito)
# a mensagem vai também no evalue: numa célula de verificação, o retorno mostra só "nome: evalue" (sem o traceback)
CELL_TIMEOUT_ERROR = {"output_type": "error", "ename": "CellTimeoutError",
                      "evalue": "a célula passou do tempo limite e foi interrompida (o que ela calculava não terminou)",
                      "traceback": ["CellTimeoutError: a célula passou do tempo limite e foi interrompida"]}
MAX_CELL_OUTPUT = 1 * 2**20  # bytes de saída de uma célula (a maior do curso tem ~400 KB, uma figura)
MAX_NOTEBOOK_OUTPUT = 4 * 2**20  # bytes de saída do notebook inteiro (o maior do curso tem ~1,1 MB)
INTERRUPT_WAIT_S = 5.0  # quanto um kernel interrompido tem para voltar a responder
# O kernel da correção: sem histórico em disco, sem desenhar as figuras (correcao._sem_figuras: nenhuma verificação
# lê a imagem) e com a saída de texto de cada célula limitada já no kernel (correcao._saida_limitada).
KERNEL_ARGUMENTS = ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.extensions=correcao._sem_figuras",
                    "--IPKernelApp.extensions=correcao._saida_limitada"]


def output_size(content: dict) -> int:
    """Bytes de uma saída (texto e dados), medidos sem montar a saída."""
    total = 0
    for chave in ("text", "data", "traceback", "evalue"):
        valor = content.get(chave)
        if isinstance(valor, str):
            total += len(valor)
        elif isinstance(valor, dict):
            total += sum(len(v) if isinstance(v, str) else len(str(v)) for v in valor.values())
        elif isinstance(valor, list):
            total += sum(len(str(v)) for v in valor)
    return total + 64


def _client(nb, pedido):
    """Um ``NotebookClient`` do nbclient com as saídas limitadas (veja o módulo)."""
    import asyncio

    from nbclient import NotebookClient
    from nbformat import from_dict

    class Cliente(NotebookClient):
        def output(self, outs, msg, display_id, cell_index):
            tamanho = output_size(msg.get("content", {}))
            usado = self._por_celula.get(cell_index, 0)
            if cell_index in self._cortadas or usado + tamanho > MAX_CELL_OUTPUT \
                    or self._total + tamanho > MAX_NOTEBOOK_OUTPUT:
                if cell_index not in self._cortadas:
                    onde = "celula" if usado + tamanho > MAX_CELL_OUTPUT else "notebook"
                    self._cortadas[cell_index] = onde
                    limite = MAX_CELL_OUTPUT if onde == "celula" else MAX_NOTEBOOK_OUTPUT
                    outs.append(from_dict({"output_type": "stream", "name": "stderr", "text":
                                           f"[saída cortada pela correção: passou de {limite // 2**20} MB "
                                           f"{'nesta célula' if onde == 'celula' else 'no notebook'}; "
                                           "o resto não foi guardado e a célula foi interrompida]\n"}))
                    self._interromper = asyncio.get_running_loop().create_task(self.km.interrupt_kernel())
                return None
            self._por_celula[cell_index] = usado + tamanho
            self._total += tamanho
            return super().output(outs, msg, display_id, cell_index)

    client = Cliente(
        nb, timeout=int(pedido.get("tempo_celula", 20)), kernel_name="python3", allow_errors=True,
        interrupt_on_timeout=True, record_timing=False, startup_timeout=60,
        error_on_timeout={k: v for k, v in CELL_TIMEOUT_ERROR.items() if k != "output_type"},
        extra_arguments=KERNEL_ARGUMENTS,
        resources={"metadata": {"path": os.getcwd()}})
    client._por_celula, client._total, client._cortadas, client._interromper = {}, 0, {}, None
    client.shutdown_kernel = "immediate"  # pedir o desligamento esperaria um kernel que pode não atender
    client.on_cell_executed = lambda **kw: setattr(client, "_ultima_resposta", kw.get("execute_reply"))
    return client


async def _responde(client, espera: float) -> bool:
    """O kernel voltou a atender pedidos (um ``kernel_info`` pelo canal shell, que fica na fila atrás da
    célula interrompida) em até ``espera`` segundos."""
    from queue import Empty

    import zmq

    try:
        msg_id = client.kc.kernel_info()
    except zmq.Again:  # o envio passou de SEND_TIMEOUT_MS: o kernel perdeu as conexões
        return False
    fim = time.monotonic() + espera
    while (resta := fim - time.monotonic()) > 0:
        try:
            msg = await client.kc.get_shell_msg(timeout=resta)
        except Empty:
            return False
        if msg.get("parent_header", {}).get("msg_id") == msg_id:
            return True
    return False


def _limit_sends(client) -> None:
    """Põe :data:`SEND_TIMEOUT_MS` em cada socket que manda mensagens ao kernel (o ZeroMQ levanta ``zmq.Again``
    em vez de esperar um par que não volta)."""
    import zmq

    sockets = [getattr(client.kc, f"{nome}_channel").socket for nome in ("shell", "control", "stdin")]
    sockets.append(getattr(client.km, "_control_socket", None))
    for sock in sockets:
        if sock is not None:
            sock.setsockopt(zmq.SNDTIMEO, SEND_TIMEOUT_MS)


def _marker(send, on: bool):
    """``marca(nome)``: manda ``{"marca": nome, "t": time.monotonic()}`` se ``on``; senão, nada. Com ``on``, manda
    logo as duas primeiras: ``processo`` (:data:`INICIO`) e ``pronta`` (agora: limites aplicados, pedido lido)."""
    if not on:
        return lambda nome: None
    send({"marca": "processo", "t": INICIO})
    send({"marca": "pronta", "t": time.monotonic()})
    return lambda nome: send({"marca": nome, "t": time.monotonic()})


def _send_cell(send, client, index: int, cell, t0: float | None, morreu: bool = False) -> None:
    """Manda as saídas da célula ``index``; com ``t0`` (o começo dela), também ``t0`` e ``t1`` (agora). Na célula em
    que o kernel morreu (``morreu``), sem o número de execução: se ele chegou antes da queda ou não, depende do
    momento, e o retorno mudaria de uma correção para outra."""
    msg = {"celula": index, "outputs": cell.get("outputs", []),
           "execution_count": None if morreu else cell.get("execution_count"),
           "cortada": client._cortadas.get(index, "")}
    if t0 is not None:
        msg.update(t0=t0, t1=time.monotonic())
    send(msg)


def _run_cells(client, nb, send, tempos: bool) -> str:
    """Executa as células de código de ``nb`` em ordem, mandando as saídas de cada uma; devolve a situação do fim
    (``ok``, ``kernel_morreu:<i>`` ou ``ignorou_interrupcao:<i>``)."""
    import nbformat
    import zmq
    from jupyter_core.utils import run_sync
    from nbclient.exceptions import DeadKernelError

    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        client._ultima_resposta, client._interromper = None, None
        t_celula = time.monotonic() if tempos else None
        try:
            client.execute_cell(cell, index)
            _error_without_output(client, cell)
        except (DeadKernelError, zmq.Again) as exc:  # zmq.Again: o pedido não chegou (veja SEND_TIMEOUT_MS)
            _send_cell(send, client, index, cell, t_celula, morreu=True)
            if isinstance(exc, zmq.Again):
                run_sync(client.km.shutdown_kernel)(now=True)
            return f"kernel_morreu:{index}"
        reply = (client._ultima_resposta or {}).get("content", {})
        interrompida = reply.get("ename") == "CellTimeoutError" or client._interromper is not None
        if client._interromper is not None:  # saída demais: a interrupção foi pedida aqui, não pelo aluno
            cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "error"
                                                            and o.get("ename") == "KeyboardInterrupt")]
            cell.outputs.append(nbformat.from_dict({
                "output_type": "error", "ename": "SaidaExcessiva", "traceback": [],
                "evalue": "a célula produziu saída demais e foi interrompida pela correção"}))
        if interrompida and not run_sync(_responde)(client, INTERRUPT_WAIT_S):
            _send_cell(send, client, index, cell, t_celula)
            run_sync(client.km.shutdown_kernel)(now=True)  # sem pedir: ele não atende
            return f"ignorou_interrupcao:{index}"
        _send_cell(send, client, index, cell, t_celula)
    return "ok"


def main() -> None:
    pedido, send = _caixa.open_channel()
    # com "tempos" no pedido, marcas de time.monotonic() (o relógio do sistema, o mesmo fora da caixa) para
    # correcao.execution.kernel_times; sem ele, nada é medido
    tempos = bool(pedido.get("tempos"))
    marca = _marker(send, tempos)  # já manda as marcas do início do processo e da caixa pronta

    import nbformat
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.from_dict(pedido["notebook"])
    os.environ.update(pedido.get("env", {}))
    client = _client(nb, pedido)
    marca("imports")
    inicio = time.perf_counter()
    try:
        with client.setup_kernel():
            try:
                _limit_sends(client)
                send({"kernel_pronto": True})  # antes de qualquer célula: daqui em diante, o que parar é do aluno
                marca("kernel")
                fim = _run_cells(client, nb, send, tempos)
            finally:
                # sem os canais, a limpeza do nbclient só encerra o kernel: ela esperaria a thread do heartbeat,
                # presa num envio a um kernel que perdeu as conexões (o processo sai logo depois, com os._exit)
                client.kc = None
    except DeadKernelError:
        fim = "kernel_morreu"
    except Exception as exc:  # noqa: BLE001 - vira a situação da linha, nunca um traceback sem dono
        fim = f"erro: {type(exc).__name__}: {str(exc)[:200]}"
    marca("fim")
    uso = [resource.getrusage(r) for r in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in uso)  # este processo e o kernel (já encerrado)
    send({"fim": fim, "cpu": cpu, "relogio": time.perf_counter() - inicio})
    os._exit(0)


if __name__ == "__main__":
    main()
