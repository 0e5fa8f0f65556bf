"""Dentro de uma caixa: o lado do aluno da conferência. Nada daqui decide pontos.

1. roda as células de código do notebook (as protegidas na versão original, as do aluno como ele
   escreveu; as de verificação, não) num shell do IPython, com tempo limite por célula;
2. antes de cada célula de verificação, avisa o verificador (``{"pronto": grade_id}`` no canal, veja
   :mod:`correcao._remoto`) e atende os pedidos dele até ``{"continuar": true}``, como no notebook: uma
   célula que derruba o processo depois só tira as verificações que vêm depois dela. Cada pedido chama uma
   função do aluno **num processo filho** (``fork``), que o pai mata ao passar do tempo; cada chamada
   começa do mesmo estado (o que uma chamada muda não passa para a próxima).

Pedido (JSON na entrada padrão): ``nonce``, ``celulas`` (``[{"fonte": ...}]`` para as de código e
``{"verificacao": grade_id}`` no lugar de cada verificação), ``tempo_celula`` (s).
O código do aluno roda neste processo: ele pode mudar tudo aqui, inclusive este arquivo já carregado; o
que ele conseguir mudar são só os valores das respostas, e esses o verificador julga.

**Execução única** (``"saidas": true`` no pedido, cada célula com o ``indice`` dela no notebook): este processo
também é o que dá as saídas do retorno, no lugar do kernel. Ele roda as células como um kernel rodaria
(``NBGRADER_EXECUTION`` definida, o matplotlib do kernel), guarda as saídas de cada uma
(:mod:`correcao._capture`) e as manda pela saída padrão, em linhas ``<nonce> <json>``, como
:mod:`correcao._executar`: ``{"kernel_pronto": true}`` antes da primeira célula, ``{"executando": i}`` antes de
cada uma, ``{"celula": i, "outputs": [...], "execution_count": n, "cortada": c}`` depois, e
``{"fim": situacao, "cpu": s, "relogio": s}``. O código do aluno pode escrever linhas falsas ali: elas só mudam o
retorno dele mesmo; as verificações do retorno e os pontos vêm do verificador.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import sys
import time

INICIO = time.monotonic()  # o Python da caixa chegou aqui (só vai na resposta quando o pedido tem "tempos")

from . import _caixa, _remoto  # noqa: E402
from ._executar import CELL_TIMEOUT_ERROR  # noqa: E402

MAX_PRINTED = 64 * 1024  # caracteres do que uma chamada imprime (o resto é cortado)


class TimeExhausted(KeyboardInterrupt):
    """Tempo limite de uma célula: a interrupção que o kernel receberia (um ``except Exception`` não a engole; um
    ``except KeyboardInterrupt`` engole, como no kernel, e o alarme volta: veja :func:`_alarm`)."""


ALARM_RETRIES = 3  # depois do limite da célula, o alarme volta a cada segundo; o código que o engolir 3 vezes acaba
_alarmes = [0]  # quantas vezes o alarme da célula atual já tocou


_EM_ANDAMENTO: dict = {}  # na execução única: a célula em andamento e como mandar as saídas dela (veja _alarm)


def _alarm(signum, frame):
    """O limite da célula: levanta :class:`TimeExhausted`; um ``except BaseException`` do aluno pode engoli-la,
    então o alarme se repete e, passadas :data:`ALARM_RETRIES` repetições, o processo do aluno termina ali (a
    conferência vê o canal fechado e marca as verificações que faltam; na execução única, a célula sai com o que
    já mostrou e o fim diz ``ignorou_interrupcao``)."""
    _alarmes[0] += 1
    if _alarmes[0] > ALARM_RETRIES:
        fim = _EM_ANDAMENTO.get("fim")
        if fim is not None:
            fim()
        os._exit(3)
    raise TimeExhausted()


def _rebuild(nome: str, dados):
    """Um objeto da biblioteca que a verificação passou (refeito aqui com os mesmos dados)."""
    from . import _calculo_remoto

    return _calculo_remoto.rebuild(nome, dados)


def _forbidden(nomes: list) -> tuple:
    """As funções da biblioteca (deste processo) que o enunciado proíbe, por ``modulo:nome``."""
    import importlib

    out = []
    for nome in nomes:
        modulo, _, qual = str(nome).partition(":")
        if not modulo.startswith("atencao"):
            continue
        try:
            obj = importlib.import_module(modulo)
            for parte in qual.split("."):
                obj = getattr(obj, parte)
        except (ImportError, AttributeError):
            continue
        out.append(obj)
    return tuple(out)


def _erro(exc: BaseException) -> dict:
    """A exceção do aluno como dados: tipo, mensagem, a linha do código do aluno e a função que a levantou."""
    from atencao.checks.watcher import is_student_file

    onde, quem, tb = None, None, exc.__traceback__
    while tb is not None:
        codigo = tb.tb_frame.f_code
        if is_student_file(codigo.co_filename):
            onde = [tb.tb_lineno, codigo.co_name]
        quem = codigo.co_name
        tb = tb.tb_next
    return {"tipo": type(exc).__name__[:80], "mensagem": str(exc)[:2000], "onde": onde, "quem": quem}


def _call(ns: dict, pedido: dict) -> dict:
    """Uma chamada, no processo filho: os argumentos refeitos, a vigilância, a saída e as figuras."""
    import numpy as np

    from atencao.checks.figures import figure_data, open_figures
    from atencao.checks.integrity import restore, snapshot
    from atencao.checks.watcher import Watcher, run_watched

    nome = str(pedido.get("funcao", ""))
    fn = ns.get(nome)
    args = _remoto.decode_value(pedido.get("args", []), objetos=True, refazer=_rebuild)
    kwargs = _remoto.decode_value(pedido.get("kwargs", {}), objetos=True, refazer=_rebuild)
    nomes = [str(n) for n in pedido.get("nomes", [])]
    resposta = {"id": pedido.get("id")}
    if fn is None:
        resposta["erro"] = {"tipo": "NameError", "mensagem": f"name '{nome}' is not defined", "onde": None,
                            "quem": None}
        return resposta
    valores = [*args, *kwargs.values()]
    fotos = []
    for k, valor in enumerate(valores):
        if not isinstance(valor, (str, int, float, type(None))):
            tipo = "objeto" if hasattr(valor, "__dict__") and not isinstance(valor, np.ndarray) else "array"
            fotos.append((nomes[k] if k < len(nomes) else f"argumento {k + 1}", valor, snapshot(valor), tipo))
    vigia = Watcher(_forbidden(pedido.get("proibidas", [])))
    antes, impresso = open_figures(), io.StringIO()
    try:
        with contextlib.redirect_stdout(impresso), np.errstate(all="ignore"):
            valor = run_watched(vigia, fn, args, kwargs)
        resposta["retorno"] = _remoto.encode_return(valor)
    except BaseException as exc:  # noqa: BLE001 - a exceção do aluno vai, como dados, para a verificação
        resposta["erro"] = _erro(exc)
    if vigia.codes and _had_children():
        vigia.used.add("outro processo (um processo filho)")
    resposta["impresso"] = impresso.getvalue()[:MAX_PRINTED]
    figuras = figure_data(open_figures() - antes)
    resposta["figuras"] = _remoto.encode_return(figuras)
    resposta["proibidas_usadas"] = sorted(vigia.used)[:20]
    alteradas = []
    for nome_arg, valor, foto, tipo in fotos:
        mudou = restore(valor, foto)
        if mudou:
            alteradas.append([nome_arg, mudou[:8], "modelo" if isinstance(foto.get(mudou[0]), tuple) else tipo])
    resposta["alteradas"] = alteradas
    return resposta


def _had_children() -> bool:
    """Este processo (o filho de uma chamada, que nasce sem filhos) teve um processo filho, por qualquer caminho
    (até por ``ctypes``): algum já esperado (a memória máxima dos filhos esperados passa de zero) ou ainda vivo."""
    import resource

    if resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss > 0:
        return True
    try:
        return os.waitpid(-1, os.WNOHANG) is not None
    except ChildProcessError:
        return False


_AQUECIDO: set = set()  # o que :func:`_warm_up` já carregou neste processo


def _warm_up(aquecer) -> None:
    """Uma vez por processo, antes do primeiro ``fork``: os módulos de cada chamada, os códigos da biblioteca que a
    vigilância conhece e, se a verificação pedir (``"matplotlib"`` em ``aquecer``), a primeira figura. Cada
    chamada é um filho deste processo e herda o que já está carregado; sem isso, cada uma repetiria o trabalho
    sob a vigilância (no projeto da Aula 1, ~3 s por chamada em vez de ~0,3 s)."""
    pedidos = {"base"} | ({"matplotlib"} & set(aquecer if isinstance(aquecer, list) else []))
    if not pedidos - _AQUECIDO:
        return
    with contextlib.redirect_stdout(io.StringIO()):
        from atencao.checks import figures, integrity  # noqa: F401 - carregados para os filhos
        from atencao.checks.watcher import library_code_ids

        if "matplotlib" in pedidos - _AQUECIDO:
            figures.warm_up_matplotlib()
        library_code_ids()  # depois do matplotlib: a biblioteca de desenho já está no conjunto de módulos
    _AQUECIDO.update(pedidos)


def _plain_matplotlib() -> None:
    """No filho de uma chamada da execução única: o matplotlib sem o backend do kernel. Com ele, um ``plt.show()``
    na função do aluno mostraria e fecharia a figura, e a verificação (que lê as figuras abertas no fim da
    chamada, :func:`_call`) não a veria; com o ``agg``, como no processo do aluno da conferência comum."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None and "inline" in str(pyplot.get_backend()):
        pyplot.switch_backend("agg")


def _serve(ns: dict, canal: _remoto.Channel, pedido: dict, tempo: float) -> None:
    """Roda o pedido num processo filho e manda a resposta dele (ou a do tempo esgotado)."""
    try:
        _warm_up(pedido.get("aquecer", []))
    except Exception:  # noqa: BLE001 - o aluno pode ter estragado o matplotlib: a chamada mostra o erro dela
        pass
    ler, escrever = os.pipe()
    pid = os.fork()
    if pid == 0:  # o filho: a chamada, e a resposta pelo pipe
        os.close(ler)
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            _plain_matplotlib()
            resposta = _call(ns, pedido)
        except BaseException as exc:  # noqa: BLE001 - argumentos que não deu para refazer
            resposta = {"id": pedido.get("id"), "erro": {"tipo": "ErroNaCorrecao", "mensagem": str(exc)[:300],
                                                         "onde": None, "quem": None}}
        try:
            _remoto.Channel(-1, escrever).send(resposta)
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
    os.close(escrever)
    filho = _remoto.Channel(ler, -1)
    try:
        resposta = filho.receive(tempo)
    except _remoto.InvalidMessage:
        resposta = None
    os.close(ler)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    if resposta is None:
        resposta = {"id": pedido.get("id"), "erro": {"tipo": "TempoEsgotado", "mensagem":
                                                     "a função passou do tempo limite (ou o processo dela parou)",
                                                     "onde": None, "quem": None}}
    canal.send(resposta)


def _record_statuses(ns: dict, estados) -> None:
    """Guarda o resultado que o verificador deu a cada função verificada (``[[nome, status], ...]``), para as
    células de demonstração (``aulaNN.passou``) rodarem como no notebook."""
    if not isinstance(estados, list):
        return
    from atencao.checks.status import record

    for item in estados[:20]:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
            nome, status = item
            if nome in ns:
                record(ns[nome], status)


def _serve_until_continue(ns: dict, canal: _remoto.Channel, limite: float) -> bool:
    """Atende os pedidos do verificador até ele mandar ``{"continuar": true}`` (``True``, com o resultado de cada
    função verificada: :func:`_record_statuses`) ou fechar o canal."""
    while True:
        try:
            pedido = canal.receive(None)
        except _remoto.InvalidMessage:
            return False
        if not isinstance(pedido, dict):
            return False
        if pedido.get("continuar") is True:
            try:
                _record_statuses(ns, pedido.get("estados"))
            except Exception:  # noqa: BLE001 - o aluno pode ter estragado a biblioteca: só a demonstração perde
                pass
            return True
        try:
            _serve(ns, canal, pedido, float(pedido.get("tempo", limite)))
        except BaseException:  # noqa: BLE001 - o canal fechou: a conferência acabou
            return False


def _shell(saidas: bool):
    """O shell do IPython das células: com as saídas guardadas (:mod:`correcao._capture`) na execução única."""
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.HistoryManager.enabled = False
    if saidas:
        from ._capture import capture_shell

        return capture_shell(config)
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance(config=config)


def _run_cell(shell, fonte: str, limite: float, saidas: bool) -> None:
    """Uma célula, com o tempo limite (:func:`_alarm`); o que o código do aluno levantar fica com ele."""
    signal.signal(signal.SIGALRM, _alarm)
    _alarmes[0] = 0
    try:
        signal.setitimer(signal.ITIMER_REAL, limite, 1.0)
        shell.run_cell(fonte, store_history=saidas)
        if saidas:  # as figuras da célula, se ela importou o matplotlib (dentro do tempo dela)
            from ._capture import show_inline_figures

            show_inline_figures(shell)
    except BaseException:  # noqa: BLE001 - o código do aluno não derruba a conferência
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


_FLOOD_ERROR = {"output_type": "error", "ename": "SaidaExcessiva", "traceback": [],
                "evalue": "a célula produziu saída demais e foi interrompida pela correção"}


def _cell_outputs(capture) -> list[dict]:
    """As saídas da célula que acabou, com os erros da correção como o kernel os daria: o tempo limite vira o
    ``CellTimeoutError`` do nbclient, e a interrupção por saída demais, ``SaidaExcessiva``."""
    saidas = capture.stop()
    if any(o.get("output_type") == "error" and o.get("ename") == "TimeExhausted" for o in saidas):
        saidas = [o for o in saidas if not (o.get("output_type") == "error" and o.get("ename") == "TimeExhausted")]
        saidas.append(dict(CELL_TIMEOUT_ERROR))
    if capture.cut:
        saidas = [o for o in saidas if not (o.get("output_type") == "error" and o.get("ename") == "OutputFlood")]
        saidas.append(dict(_FLOOD_ERROR))
    return saidas


def _run_with_outputs(shell, fonte: str, indice, limite: float, enviar, tempos: bool) -> None:
    """Uma célula da execução única: avisa que ela começou, roda e manda as saídas dela. Se o código do aluno
    engolir o limite da célula até o processo terminar (:func:`_alarm`), as saídas vão antes, com o fim
    ``ignorou_interrupcao``."""
    enviar({"executando": indice})
    numero, t0 = shell.execution_count, time.monotonic()
    shell.capture.start(numero)

    def fim_da_celula(ignorou: bool = True) -> None:
        msg = {"celula": indice, "outputs": _cell_outputs(shell.capture), "execution_count": numero,
               "cortada": shell.capture.cut}
        enviar({**msg, "t0": t0, "t1": time.monotonic()} if tempos else msg)
        if ignorou:
            enviar({"fim": f"ignorou_interrupcao:{indice}"})

    _EM_ANDAMENTO["fim"] = fim_da_celula
    _run_cell(shell, fonte, limite, True)
    _EM_ANDAMENTO.pop("fim", None)
    fim_da_celula(ignorou=False)


def main() -> None:  # noqa: C901 — as células em ordem: código, verificação (atender o verificador), saídas
    pedido, enviar = _caixa.open_channel()
    inicio = time.perf_counter()
    tempos = pedido.get("tempos") is True  # marcas de time.monotonic() para correcao.execution.kernel_times
    if tempos:
        enviar({"marca": "processo", "t": INICIO})
        enviar({"marca": "pronta", "t": time.monotonic()})
    canal = _remoto.channel_from_env()
    from . import _calculo_remoto

    _calculo_remoto.CANAL = canal  # as contas prontas da aula (ausentes daqui) vão ao verificador
    saidas = pedido.get("saidas") is True
    if saidas:  # a execução única: como o kernel da correção
        os.environ["NBGRADER_EXECUTION"] = "autograde"
    else:
        os.environ["MPLBACKEND"] = "Agg"
        os.environ.pop("NBGRADER_EXECUTION", None)
    shell = _shell(saidas)
    limite = float(pedido.get("tempo_celula", 20))
    from atencao.checks.watcher import guard_hooks

    guard_hooks()  # antes da primeira célula: o aluno nunca vê as funções que desligam a vigilância
    ns = shell.user_ns
    if saidas:
        enviar({"kernel_pronto": True})  # antes de qualquer célula: daqui em diante, o que parar é do aluno
        for marca in ("imports", "kernel") if tempos else ():
            enviar({"marca": marca, "t": time.monotonic()})
    for celula in pedido.get("celulas", []):
        indice = celula.get("indice")
        if "verificacao" in celula:  # tudo o que vem antes desta verificação já rodou: o verificador julga agora
            sys.stdout.flush()
            canal.send({"pronto": celula["verificacao"]})
            if not _serve_until_continue(ns, canal, limite):
                break
            if saidas:  # as saídas desta célula vêm do verificador; o número de execução, daqui
                shell.execution_count += 1
                enviar({"celula": indice, "outputs": [], "execution_count": shell.execution_count - 1, "cortada": ""})
            continue
        if saidas:
            _run_with_outputs(shell, celula["fonte"], indice, limite, enviar, tempos)
        else:
            _run_cell(shell, celula["fonte"], limite, saidas)
    if saidas:
        try:
            canal.send({"celulas_acabaram": True})  # o verificador, que atendia as contas das demonstrações, termina
        except OSError:
            pass
        if tempos:
            enviar({"marca": "fim", "t": time.monotonic()})
        uso = [resource.getrusage(r) for r in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        enviar({"fim": "ok", "cpu": sum(u.ru_utime + u.ru_stime for u in uso), "relogio": time.perf_counter() - inicio})
    os._exit(0)


if __name__ == "__main__":
    main()
