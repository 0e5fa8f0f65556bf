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
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys

from . import _caixa, _remoto

MAX_PRINTED = 64 * 1024  # caracteres do que uma chamada imprime (o resto é cortado)


class TimeExhausted(BaseException):
    """Tempo limite de uma célula (``BaseException``: um ``except Exception`` não engole)."""


ALARM_RETRIES = 3  # depois do limite da célula, o alarme volta a cada segundo; o código que o engolir 3 vezes acaba
_alarmes = [0]  # quantas vezes o alarme da célula atual já tocou


def _alarm(signum, frame):
    """O limite da célula: levanta :class:`TimeExhausted`; um ``except BaseException`` do aluno pode engoli-la,
    então o alarme se repete e, passadas :data:`ALARM_RETRIES` repetições, o processo do aluno termina ali (a
    conferência vê o canal fechado e marca as verificações que faltam)."""
    _alarmes[0] += 1
    if _alarmes[0] > ALARM_RETRIES:
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


def _serve_until_continue(ns: dict, canal: _remoto.Channel, limite: float) -> bool:
    """Atende os pedidos do verificador até ele mandar ``{"continuar": true}`` (``True``) ou fechar o canal."""
    while True:
        try:
            pedido = canal.receive(None)
        except _remoto.InvalidMessage:
            return False
        if not isinstance(pedido, dict):
            return False
        if pedido.get("continuar") is True:
            return True
        try:
            _serve(ns, canal, pedido, float(pedido.get("tempo", limite)))
        except BaseException:  # noqa: BLE001 - o canal fechou: a conferência acabou
            return False


def main() -> None:
    pedido, _enviar = _caixa.open_channel()
    canal = _remoto.channel_from_env()
    from . import _calculo_remoto

    _calculo_remoto.CANAL = canal  # as contas prontas da aula (ausentes daqui) vão ao verificador
    os.environ["MPLBACKEND"] = "Agg"
    os.environ.pop("NBGRADER_EXECUTION", None)
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    limite = float(pedido.get("tempo_celula", 20))
    from atencao.checks.watcher import guard_hooks

    guard_hooks()  # antes da primeira célula: o aluno nunca vê as funções que desligam a vigilância
    ns = shell.user_ns
    for celula in pedido.get("celulas", []):
        if "verificacao" in celula:  # tudo o que vem antes desta verificação já rodou: o verificador julga agora
            sys.stdout.flush()
            canal.send({"pronto": celula["verificacao"]})
            if not _serve_until_continue(ns, canal, limite):
                break
            continue
        signal.signal(signal.SIGALRM, _alarm)
        _alarmes[0] = 0
        try:
            signal.setitimer(signal.ITIMER_REAL, limite, 1.0)
            shell.run_cell(celula["fonte"], store_history=False)
        except BaseException:  # noqa: BLE001 - o código do aluno não derruba a conferência
            pass
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
    os._exit(0)


if __name__ == "__main__":
    main()
