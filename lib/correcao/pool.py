"""Os processos de correção e o orçamento de cada notebook: :class:`GradingPool` começa os processos (cada um
com o seu :class:`correcao.execution.Worker`), manda uma entrega por vez a cada um, mata o que passar do orçamento
mais :data:`BUDGET_MARGIN_S` e põe outro no lugar; :func:`grade_parallel` corrige um plano inteiro."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .execution import Worker, box_numbers
from .grading import grade_one
from .isolamento import kill_sandbox, remove_cgroups
from .planning import GradingTask
from .politica import GradingPolicy
from .relatorio import Row, failed_row, format_number, notebook_body

STUDENT_LIBRARIES = "bibliotecas-aluno"  # na pasta temporária da correção: as bibliotecas do aluno, feitas uma vez
BUDGET_MARGIN_S = 5.0  # depois do orçamento, o processo de correção inteiro é morto (SIGKILL)


def start_matplotlib_cache(pasta: Path) -> tuple[Path, subprocess.Popen]:
    """Começa a gerar, uma vez por correção, o cache de fontes do matplotlib (uma cópia dele vai para cada caixa;
    sem ele, o primeiro import do matplotlib numa caixa leva segundos); devolve a pasta e o processo, que
    :func:`wait_matplotlib_cache` espera antes do primeiro notebook."""
    cache = pasta / "mpl-cache"
    cache.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["MPLCONFIGDIR"] = str(cache)
    proc = subprocess.Popen([sys.executable, "-c", "import matplotlib.font_manager"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cache, proc


def wait_matplotlib_cache(proc: subprocess.Popen | None) -> None:
    """Espera o processo de :func:`start_matplotlib_cache` (até 120 s; depois disso, sem o cache)."""
    if proc is None:
        return
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def matplotlib_cache(pasta: Path) -> Path:
    """O cache de fontes do matplotlib, já pronto (veja :func:`start_matplotlib_cache`)."""
    cache, proc = start_matplotlib_cache(pasta)
    wait_matplotlib_cache(proc)
    return cache


def _grading_process(conn, tmp: Path, policy: GradingPolicy, tag: str, k: int, mpl: Path) -> None:
    """Um processo de correção: importa o nbgrader, recebe a lista de :class:`Gradable` da turma (ou ``None``:
    não há o que corrigir), monta o seu curso nbgrader e as suas caixas, avisa ``("pronto", None)`` e corrige cada
    :class:`GradingTask` recebida (responde ``("linha", (row, segundos))``) até receber ``None``. O Ctrl-C do
    terminal (que chega a todo o grupo de processos) fica com o processo principal, que encerra este."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        from . import _preprocessador  # noqa: F401 - o nbgrader, enquanto o processo principal planeja a turma

        gradables = conn.recv()
        if gradables is None:
            os._exit(0)
        worker = Worker(tmp / f"processo-{k}", gradables, k, policy, tag)
        worker.mpl_cache = mpl
        worker.libraries = tmp / STUDENT_LIBRARIES
    except Exception as exc:  # noqa: BLE001 - o processo principal mostra o erro
        conn.send(("erro", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("pronto", None))
    while True:
        item = conn.recv()
        if item is None:  # sem a faxina do interpretador (~0,5 s): o processo principal encerra caixas e cgroups
            os._exit(0)
        conn.send(("linha", run_task(worker, item)))


def log_line(row: Row, detalhe: str) -> str:
    """A linha de uma entrega no log da correção: ``  aluno · notebook: total/máximo situação (detalhe)``."""
    return (f"  {row.student or '(fora da pasta de um aluno)'} · {row.notebook or row.arquivo or 'sem notebook'}: "
            f"{format_number(row.total)}/{format_number(row.maximum)} {row.status} ({detalhe})")


def run_task(worker: Worker, e: GradingTask) -> tuple[Row, float]:
    """Corrige ``e`` com ``worker`` e escreve o HTML do retorno; devolve a linha e os segundos gastos. Uma exceção
    vira a linha ``erro_na_correcao``: uma entrega nunca derruba a correção da turma."""
    t0 = time.perf_counter()
    try:
        row = grade_one(worker, e)
        t_html = time.perf_counter()
        if row.autograded and row.autograded.exists():  # o HTML do retorno, aqui: os processos rodam em paralelo
            row.corpo = notebook_body(row.autograded)
        if worker.timings is not None:
            worker.timings["nota"] = t_html - t0
            worker.timings["retorno_html"] = time.perf_counter() - t_html
    except Exception as exc:  # noqa: BLE001 - uma entrega nunca derruba a correção da turma
        row = failed_row(e.student, e.g, e.g.notebook, "erro_na_correcao",
                         f"erro interno da correção ({type(exc).__name__})", arquivo=e.file)
    return row, time.perf_counter() - t0


def grade_parallel(pool: GradingPool, plan: list, workers: int, check=lambda: None) -> list[Row]:
    """Corrige o plano (na mesma ordem) em ``workers`` processos de ``pool`` (cada um com o seu curso nbgrader,
    que muda de pasta e de variáveis de ambiente durante a correção: por isso processos, e não threads); os que
    já foram começados contam. Quem chama encerra ``pool``.

    Cada notebook tem um orçamento de ``notebook_timeout`` s contado daqui, do envio ao processo de correção
    até a linha voltar (o processo já pronto: montar o curso nbgrader não conta). Dentro dele, o
    :class:`correcao.isolamento.NotebookBudget` mata as caixas no prazo; se ainda assim a linha não volta até
    ``notebook_timeout`` + :data:`BUDGET_MARGIN_S`, o processo de correção inteiro morre (SIGKILL), com as
    caixas e os cgroups dele, a linha diz ``tempo_esgotado`` e outro processo assume o resto.

    ``check()`` é chamada a cada volta (a cada 0,5 s, no máximo): uma exceção dela para a correção ali (a prova do
    começo que falhou, :class:`correcao.motor.Preflight`)."""
    if not plan:
        return []
    quantos = max(1, min(workers, len(plan)))
    pool.start(plan, quantos)
    while len(pool.estado) < quantos:
        pool.start_worker()
    while pool.busy():
        check()
        pool.dispatch()
        pool.collect()
        pool.kill_overdue()
    return pool.rows


class GradingPool:
    """Os processos de correção de :func:`grade_parallel`: cada um recebe uma entrega por vez; o estado de cada
    um (por conexão) é ``{"proc", "k", "pronto", "tarefa", "t0"}``."""

    def __init__(self, tmp: Path, policy: GradingPolicy, tag: str, log, mpl: Path | None = None):
        import multiprocessing
        from collections import deque

        self.tmp, self.policy, self.tag, self.log = tmp, policy, tag, log
        self.notebook_timeout, self.isolate = policy.notebook_timeout, policy.isolate
        self.plan: list = []
        self.gradables: list | None = None  # None até start(): os processos começados antes esperam a lista
        self.ctx = multiprocessing.get_context("spawn")
        # o cache de fontes é feito ao lado (outro processo); o primeiro notebook espera por ele (dispatch)
        self.mpl, self._mpl_proc = (mpl, None) if mpl is not None else start_matplotlib_cache(tmp)
        self.rows: list = []
        self.pendentes = deque()
        self.estado: dict = {}  # conexão -> {"proc", "k", "pronto", "tarefa", "t0"}
        self.proximo = 0
        self.limite_duro = policy.notebook_timeout + BUDGET_MARGIN_S

    def start(self, plan: list, workers: int) -> None:
        """O plano a corrigir: a lista de :class:`Gradable` vai aos processos já começados (e aos que vierem); os
        que passam de ``workers`` (a turma tinha menos notebooks corrigíveis que arquivos) terminam."""
        from collections import deque

        self.plan, self.rows, self.pendentes = plan, [None] * len(plan), deque(enumerate(plan))
        self.gradables = sorted({id(e.g): e.g for e in plan}.values(), key=lambda g: (g.assignment, g.notebook))
        for k, conn in enumerate(list(self.estado)):
            with contextlib.suppress(OSError):  # um processo que já caiu aparece em collect (_crashed)
                conn.send(self.gradables if k < workers else None)
            if k >= workers:
                self.finish(conn)

    def wait_matplotlib(self) -> None:
        """Espera o cache de fontes do matplotlib desta correção ficar pronto (veja :func:`start_matplotlib_cache`)."""
        wait_matplotlib_cache(self._mpl_proc)

    def busy(self) -> bool:
        """Ainda há entregas na fila ou em algum processo."""
        return bool(self.pendentes) or any(st["tarefa"] is not None for st in self.estado.values())

    def start_worker(self) -> None:
        """Começa mais um processo de correção (ele recebe a lista de notebooks assim que houver um plano)."""
        a, b = self.ctx.Pipe()
        k = self.proximo
        self.proximo += 1
        proc = self.ctx.Process(target=_grading_process, daemon=True,
                                args=(b, self.tmp, self.policy, self.tag, k, self.mpl))
        proc.start()
        b.close()
        self.estado[a] = {"proc": proc, "k": k, "pronto": False, "tarefa": None, "t0": 0.0}
        if self.gradables is not None:
            with contextlib.suppress(OSError):  # um processo que já caiu aparece em collect (_crashed)
                a.send(self.gradables)

    def finish(self, conn) -> None:
        """Encerra o processo de ``conn``, com as caixas e os cgroups dele."""
        st = self.estado.pop(conn)
        if st["proc"].is_alive():
            st["proc"].kill()
        st["proc"].join(10)
        conn.close()
        for numero in box_numbers(st["k"]):  # as três caixas dele, e não as de outro processo ainda corrigindo
            kill_sandbox(f"{self.tag}.{numero}")
        remove_cgroups(f"{self.tag}-p{st['k']}-")

    def replace(self, conn) -> None:
        """Encerra o processo de ``conn`` e, se ainda há entregas, começa outro no lugar dele."""
        self.finish(conn)
        if self.pendentes:
            self.start_worker()

    def record(self, k: int, row: Row, seconds: float) -> None:
        """Guarda a linha da entrega ``k`` do plano e a anota no log."""
        self.log(log_line(row, f"{seconds:.1f} s"))
        self.rows[k] = row

    def dispatch(self) -> None:
        """Uma entrega para cada processo pronto e livre."""
        for conn, st in self.estado.items():
            if st["pronto"] and st["tarefa"] is None and self.pendentes:
                wait_matplotlib_cache(self._mpl_proc)  # antes do orçamento do notebook (t0)
                self._mpl_proc = None
                k, e = self.pendentes.popleft()
                st["tarefa"], st["t0"] = k, time.monotonic()
                conn.send(e)

    def collect(self) -> None:
        """O que os processos mandaram em até 0,5 s: pronto, uma linha corrigida, ou a queda de um deles."""
        from multiprocessing.connection import wait

        for conn in wait(list(self.estado), timeout=0.5):
            st = self.estado[conn]
            try:
                tipo, dado = conn.recv()
            except (EOFError, OSError):  # o processo de correção caiu
                self._crashed(conn, st)
                continue
            if tipo == "erro":
                raise RuntimeError(f"um processo de correção não conseguiu começar: {dado}")
            if tipo == "pronto":
                st["pronto"] = True
            else:
                row, _ = dado
                self.record(st["tarefa"], row, time.monotonic() - st["t0"])
                st["tarefa"] = None

    def _crashed(self, conn, st: dict) -> None:
        if st["tarefa"] is not None:
            e = self.plan[st["tarefa"]]
            self.record(st["tarefa"], failed_row(e.student, e.g, e.g.notebook, "erro_na_correcao",
                                                 "o processo de correção parou", arquivo=e.file),
                        time.monotonic() - st["t0"])
        elif not st["pronto"]:
            raise RuntimeError("um processo de correção parou antes de começar") from None
        self.replace(conn)

    def kill_overdue(self) -> None:
        """Um notebook que passou do orçamento mais a margem: o processo inteiro morre e a linha diz
        ``tempo_esgotado``."""
        agora = time.monotonic()
        for conn, st in list(self.estado.items()):
            if st["tarefa"] is not None and agora - st["t0"] > self.limite_duro:
                e = self.plan[st["tarefa"]]
                row = failed_row(e.student, e.g, e.g.notebook, "tempo_esgotado",
                                 f"a correção deste notebook passou do orçamento de {self.notebook_timeout:.0f} s "
                                 "(leitura, saneamento, execução e retorno) e foi interrompida; 0 pontos",
                                 arquivo=e.file)
                row.isolation = "bwrap" if self.isolate else "sem_isolamento"  # o grupo morreu junto com o processo
                row.tempo_do_aluno = True
                self.record(st["tarefa"], row, agora - st["t0"])
                self.replace(conn)

    def close(self) -> None:
        """Pede a cada processo que termine e encerra todos (de novo, nada: já não há processos)."""
        if self._mpl_proc is not None:
            self._mpl_proc.kill()
            self._mpl_proc.wait()
            self._mpl_proc = None
        for conn in list(self.estado):
            try:
                conn.send(None)
            except OSError:
                pass
        for conn, st in list(self.estado.items()):
            st["proc"].join(30)
            self.finish(conn)
