"""Rodar um notebook nas caixas: as saídas do retorno e a conferência independente (o veredito), numa execução só.

Um :class:`Worker` por processo de correção, com as caixas do bubblewrap (:mod:`correcao.isolamento`) e o curso
descartável do nbgrader, montado a partir de ``solutions/``. :meth:`Worker.execute` varre o código do aluno
(:mod:`correcao.varredura`) e executa o notebook uma vez (:meth:`Worker._single_run`): o processo do aluno
(:mod:`correcao._aluno`) roda as células e manda as saídas de cada uma, que voltam para o notebook saneado (que fica
deste lado), e o verificador isolado (:mod:`correcao._veredito`) chama as funções do aluno naquele processo em cada
célula de verificação, julga e manda o relatório da célula. O processo do aluno é novo a cada notebook, numa caixa
nova; o verificador, que não roda código do aluno, é um filho novo do verificador residente deste trabalhador
(:mod:`correcao.verifier_server`), que já nasce com as verificações importadas. Com
``GradingPolicy(single_run=False)`` (a conferência antiga, que o ``make bench`` compara), as saídas vêm de um kernel
à parte (:mod:`correcao._executar`), que roda o notebook de novo ao lado da conferência. O que as caixas disseram
fica num :class:`ExecutionResult`; quem dá os pontos é :mod:`correcao.scoring`.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ._importacao_rapida import sem_rfc3987

sem_rfc3987()  # o jsonschema importaria um verificador de IRIs (~3 s) que o nbformat não usa

from .catalogo import (  # noqa: E402
    CODE_STUB,
    TEXT_STUB,
    Gradable,
    cell_label,
    is_check,
    nbgrader_meta,
)
from .isolamento import MAX_OUTPUT_BYTES, NotebookBudget, Sandbox, write_in_thread  # noqa: E402
from .politica import GradingPolicy  # noqa: E402
from .varredura import imported_modules, scan_cell  # noqa: E402
from .verifier_server import VerifierServer  # noqa: E402

COURSE_ID = "self-attention-do-zero"


_BINDIR = str(Path(sys.executable).parent)  # o nbgrader chama `alembic` ao criar o banco de notas
if _BINDIR not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BINDIR + os.pathsep + os.environ.get("PATH", "")


@functools.cache
def alembic_head() -> str:
    """A revisão mais nova do banco de notas do nbgrader (``str``, ex.: ``"e43177bfe90b"``), lida das migrações que
    vêm no pacote ``nbgrader`` pela biblioteca do alembic, neste processo e uma vez só.

    É o valor de ``nbgrader.api.get_alembic_version``, que o nbgrader pede ao comando ``alembic`` num processo novo
    a cada banco criado (um por trabalhador da correção): de 1,5 s a 6 s nesta máquina de 2 núcleos, mais que o
    resto de montar o curso do nbgrader. :class:`Worker` troca uma função pela outra; um teste confere que as duas
    dão a mesma revisão."""
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()


@dataclass
class ExecutionResult:
    """O que as duas caixas disseram de um notebook."""

    flags: list = field(default_factory=list)  # motivos da varredura
    verdicts: dict = field(default_factory=dict)  # grade_id -> (passou: bool | None, detalhe)
    categories: dict = field(default_factory=dict)  # grade_id -> categoria do resultado (ok, not_done, id do engano...)
    changed_modules: list = field(default_factory=list)  # módulos alterados, vistos na conferência
    outcome: str = ""  # "", tempo_esgotado, memoria_esgotada, kernel_morreu, falha_da_maquina
    kernel_started: bool = False  # o kernel da caixa começou e atendeu antes da primeira célula
    machine_error: str = ""  # com falha_da_maquina: o que a caixa disse (o fim do executor), para o professor
    cpu_ratio: float | None = None  # tempo de CPU / tempo de relógio do kernel (None: não informado)
    where: str = ""  # a célula em que a execução parou
    continued: bool = False  # tempo ou memória esgotados numa célula só: ela parou e o resto do notebook rodou
    failed_in_kernel: set = field(default_factory=set)  # verificações que rodaram no kernel e reprovaram
    truncated: list = field(default_factory=list)  # (célula, "celula"/"notebook"): saídas cortadas por excesso
    ignored_interrupt: str = ""  # a célula em que o kernel ignorou a interrupção (e foi encerrado)
    notebook_memory: bool = False  # a soma da memória do notebook passou do limite (não a de um processo)
    killed_by: str = ""  # "tempo"/"memoria": o orçamento do notebook matou as caixas
    # os limites desta correção (o motivo de um tempo ou de uma memória esgotada os diz ao aluno): segundos por
    # célula, segundos por notebook, MiB por processo; None quando não informados
    limits: tuple | None = None


def read_messages(stdout: bytes, nonce: str) -> list[dict]:
    """As mensagens ``<nonce> <json>`` da caixa (o resto, que o aluno possa ter escrito, é ignorado)."""
    out = []
    prefix = nonce + " "
    for line in stdout.decode("utf-8", "replace").splitlines():
        if line.startswith(prefix):
            try:
                out.append(json.loads(line[len(prefix):]))
            except json.JSONDecodeError:
                continue
    return out


def _cell_name(nb, index: int) -> str:
    return cell_label(nb.cells, index)


def box_numbers(numero: int) -> tuple[int, int, int]:
    """Os números das três caixas do trabalhador ``numero`` (o kernel da conferência antiga, o lado do aluno e o
    verificador), com uids diferentes: 64 uids por correção (veja :class:`correcao.isolamento.Sandbox`)."""
    uid = numero % 21
    return 3 * uid, 3 * uid + 1, 3 * uid + 2


class Worker:
    """Um curso nbgrader e as três caixas de um processo de correção; corrige uma entrega por vez.

    Atributos: ``folder`` (a pasta do processo), ``policy`` (a :class:`correcao.politica.GradingPolicy` da correção),
    ``limits`` (os das caixas), ``kernel_box``, ``student_box`` e ``verifier_box`` (as caixas), ``budget`` (o
    :class:`correcao.isolamento.NotebookBudget` do notebook sendo corrigido, ou ``None``), ``results`` (o
    :class:`ExecutionResult` de cada entrega executada, até :func:`correcao.grading.grade_one` o ler) e ``timings``
    (``None``, ou um dicionário onde a correção anota os segundos de cada passo: veja :func:`kernel_times`)."""

    def __init__(self, folder: Path, gradables: list[Gradable], number: int, policy: GradingPolicy, tag: str):
        self._boxes(folder, number, policy, tag)
        self._nbgrader_course(gradables)

    @classmethod
    def boxes_only(cls, folder: Path, number: int, policy: GradingPolicy, tag: str) -> "Worker":
        """Só as três caixas, sem o curso do nbgrader (que custa ~1,5 s de import): :meth:`execute` roda um notebook
        como na correção (usado por :func:`correcao.motor.preflight`)."""
        w = cls.__new__(cls)
        w._boxes(folder, number, policy, tag)
        return w

    def _boxes(self, folder: Path, number: int, policy: GradingPolicy, tag: str) -> None:
        """As três caixas, com os limites de ``policy`` (a da correção: veja :mod:`correcao.politica`)."""
        self.folder = folder
        self.course = folder / "curso-nbgrader"
        # a pasta das bibliotecas do aluno de uma correção, a mesma para todos os processos dela (posta pelo pool e
        # pela prova do começo; veja correcao.biblioteca_aluno.student_library); None: uma por processo
        self.libraries: Path | None = None
        self.policy = policy
        self.cell_timeout = policy.cell_timeout
        self.limits = limits = policy.limits()
        isolate = policy.isolate
        # três caixas por trabalhador, com uids diferentes: o kernel, e a conferência (o lado do aluno e o
        # verificador, ligados por um par de pipes) rodam ao mesmo tempo
        kernel, student, verifier = box_numbers(number)
        self.kernel_box = Sandbox(limits, numero=kernel, isolar=isolate, marca=tag)
        self.student_box = Sandbox(limits, numero=student, isolar=isolate, marca=tag)
        self.verifier_box = Sandbox(limits, numero=verifier, isolar=isolate, marca=tag)
        # o verificador não roda código do aluno: uma caixa dele por processo, e um filho dela por notebook
        self.verifier = VerifierServer(self.verifier_box, folder / "caixas" / "verificador-residente")
        self.number = number
        self.tag = tag
        self.isolate = isolate
        self.budget: NotebookBudget | None = None  # o orçamento do notebook sendo corrigido (grade_one)
        self.key = f"{tag}-{number}"
        self.results: dict[str, ExecutionResult] = {}
        self.mpl_cache: Path | None = None
        # Com um dicionário aqui, a correção anota onde vai o tempo (segundos por passo; veja kernel_times);
        # com None (o padrão), nada é medido nem pedido às caixas
        self.timings: dict | None = None

    def _nbgrader_course(self, gradables: list[Gradable]) -> None:
        """O curso descartável do nbgrader, com as tarefas de ``gradables`` geradas de ``solutions/``."""
        import nbgrader.api
        from nbconvert.preprocessors import ClearMetadataPreprocessor
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.preprocessors import (
            AssignLatePenalties,
            CheckCellMetadata,
            IgnorePattern,
            LimitOutput,
            SaveAutoGrades,
        )
        from traitlets.config import Config

        from ._preprocessador import WORKERS_BY_KEY, ExecutePreprocessor

        WORKERS_BY_KEY[self.key] = self

        (self.course / "source").mkdir(parents=True)
        c = Config()
        c.CourseDirectory.course_id = COURSE_ID
        c.CourseDirectory.root = str(self.course)
        c.ClearSolutions.code_stub = {"python": CODE_STUB}
        c.ClearSolutions.text_stub = TEXT_STUB
        c.LimitOutput.max_lines = 200
        c.LimitOutput.max_traceback = 50
        c.Autograde.autograde_preprocessors = [ExecutePreprocessor, IgnorePattern, ClearMetadataPreprocessor,
                                               LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
        c.ExecutePreprocessor.chave = self.key
        c.Exchange.root = str(self.folder / "exchange")  # não usada; evita o aviso sobre a pasta do sistema
        nbgrader.api.get_alembic_version = alembic_head  # o mesmo valor, sem um processo novo (veja alembic_head)
        self.api = NbGraderAPI(coursedir=CourseDirectory(config=c), config=c)
        for assignment in sorted({g.assignment for g in gradables}):
            (self.course / "source" / assignment).mkdir()
            for g in gradables:
                if g.assignment == assignment:
                    shutil.copy(g.source, self.course / "source" / assignment / f"{g.notebook}.ipynb")
            result = self.api.generate_assignment(assignment, force=True)
            if not result.get("success"):
                raise RuntimeError(f"nbgrader generate_assignment falhou para {assignment}:\n"
                                   f"{result.get('error', '')[-2000:]}{result.get('log', '')[-2000:]}")

    def close(self) -> None:
        """Para o verificador residente e tira este trabalhador do registro do pré-processador do nbgrader."""
        self.verifier.stop()
        if "correcao._preprocessador" in sys.modules:
            from ._preprocessador import WORKERS_BY_KEY

            WORKERS_BY_KEY.pop(self.key, None)

    # ---------- as duas caixas ----------
    def _workdir(self, nome: str, caixa: Sandbox) -> Path:
        work = self.folder / "caixas" / nome
        if work.exists():
            shutil.rmtree(work)
        (work / ".config" / "matplotlib").mkdir(parents=True)
        if self.mpl_cache:  # o cache de fontes do matplotlib, feito uma vez (sem ele, cada import leva segundos)
            for f in self.mpl_cache.glob("fontlist-*.json"):
                shutil.copy(f, work / ".config" / "matplotlib" / f.name)
        if caixa.root:
            for path in (work, work / ".config", work / ".config" / "matplotlib", *work.rglob("*.json")):
                os.chown(path, caixa.uid, caixa.uid)
        return work

    def execute(self, nb, ident: str) -> ExecutionResult:
        """Varredura e execução: na execução única (``policy.single_run``), a conferência independente dá também as
        saídas do retorno (:meth:`_single_run`); senão, o kernel dá as saídas e a conferência roda ao lado. As
        saídas entram em ``nb``."""
        res = ExecutionResult(limits=(self.policy.cell_timeout, self.policy.notebook_timeout, self.policy.memory_mb))
        codigo = [c for c in nb.cells if c.cell_type == "code"]
        modulos = imported_modules([c.source for c in codigo])
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and not nbgrader_meta(cell).get("locked"):
                res.flags += scan_cell(cell.source, modulos, _cell_name(nb, index))
        celulas = self._code_cells(nb)  # lidas antes: a conferência roda ao mesmo tempo que o kernel

        t0 = time.monotonic()
        if self.policy.single_run:
            self._single_run(nb, celulas, ident, res)
        else:
            paralela = threading.Thread(target=self._verify, args=(celulas, ident, res))
            paralela.start()
            self._kernel(nb, ident, res)
            paralela.join()
        if self.timings is not None:
            self.timings["execucao"] = time.monotonic() - t0
        self.results[ident] = res
        return res

    def _kernel(self, nb, ident: str, res: ExecutionResult) -> None:
        """Executa ``nb`` no kernel da caixa: as saídas entram em ``nb`` e o desfecho (tempo, memória, kernel
        morto) em ``res``. Três passos: ler as mensagens da caixa, classificar o desfecho e marcar as
        verificações que reprovaram ou não rodaram."""
        nonce = secrets.token_hex(16)
        work = self._workdir(f"{ident}-kernel", self.kernel_box)
        pedido = {"nonce": nonce, "notebook": nb, "tempo_celula": self.cell_timeout,
                  "env": {"NBGRADER_EXECUTION": "autograde"}}
        if self.timings is not None:
            pedido["tempos"] = True
        lancado = time.monotonic()
        run = self.kernel_box.run(work, "correcao._executar", json.dumps(pedido).encode("utf-8"))
        voltou = time.monotonic()
        shutil.rmtree(work, ignore_errors=True)
        res.killed_by = run.killed_by
        mensagens = read_messages(run.stdout, nonce)
        if self.timings is not None:
            self.timings.update(kernel_times(nb, mensagens, lancado, voltou))
        executed, end = _apply_kernel_messages(nb, mensagens, res)
        res.kernel_started = any(m.get("kernel_pronto") is True for m in mensagens)
        group_memory = self.budget is not None and self.budget.memory_exhausted()
        _classify_kernel_outcome(nb, executed, end, run.tempo_esgotado, group_memory, res)
        if not res.kernel_started and res.outcome == "kernel_morreu":
            # nenhum código do aluno rodou: a caixa ou o kernel não começaram nesta máquina
            res.outcome, res.where = "falha_da_maquina", ""
            res.machine_error = str(end or "a caixa não respondeu")[:300]
        _mark_checks(nb, executed, res)


    @staticmethod
    def _code_cells(nb) -> list[dict]:
        """As células de código do notebook saneado, na ordem: verificações (originais) e código."""
        celulas = []
        for indice, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if is_check(cell):
                celulas.append({"tipo": "verificacao", "grade_id": nbgrader_meta(cell)["grade_id"],
                                "fonte": cell.source, "indice": indice})
            else:
                celulas.append({"tipo": "codigo", "fonte": cell.source, "indice": indice})
        return celulas

    def _verify(self, celulas: list[dict], ident: str, res: ExecutionResult) -> None:
        """A conferência que dá os pontos: o lado do aluno (:mod:`correcao._aluno`) roda as células de código,
        e o verificador (:mod:`correcao._veredito`, outra caixa, sem código do aluno) chama as funções dele
        por um par de pipes e julga o que volta. Só o verificador fala com este processo."""
        inicio_veredito = time.monotonic()
        limite = self.budget.remaining() if self.budget is not None else self.limits.relogio_s
        nonce = secrets.token_hex(16)
        caixas = self._start_conference(celulas, ident, secrets.token_hex(16), nonce, limite, single=False)
        if caixas is None:
            return
        aluno, verificador, works = caixas
        lido: list[bytes] = []
        leitor = threading.Thread(target=_read_limited, args=(verificador.stdout, lido, MAX_OUTPUT_BYTES),
                                  daemon=True)
        leitor.start()
        leitor.join(max(1.0, limite - (time.monotonic() - inicio_veredito)))
        tempo_esgotado = leitor.is_alive() or (self.budget is not None and self.budget.motivo == "tempo")
        self._stop_conference(aluno, verificador, works, [leitor])
        self._read_verdicts(read_messages(b"".join(lido), nonce),
                            [c["grade_id"] for c in celulas if c["tipo"] == "verificacao"], tempo_esgotado, res,
                            self.budget is not None and self.budget.motivo == "memoria")
        if self.timings is not None:
            self.timings["veredito"] = time.monotonic() - inicio_veredito

    def _single_run(self, nb, celulas: list[dict], ident: str, res: ExecutionResult) -> None:
        """A execução única: o processo do aluno (:mod:`correcao._aluno`) roda cada célula uma vez, manda as saídas
        dela e atende o verificador (:mod:`correcao._veredito`) nas células de verificação; o verificador julga e
        manda o relatório de cada verificação (com os casos do notebook) para o retorno. As saídas do aluno só
        servem ao retorno; as das verificações e os pontos vêm do verificador."""
        inicio = time.monotonic()
        limite = self.budget.remaining() if self.budget is not None else self.limits.relogio_s
        nonce_aluno, nonce = secrets.token_hex(16), secrets.token_hex(16)
        caixas = self._start_conference(celulas, ident, nonce_aluno, nonce, limite, single=True,
                                        times=self.timings is not None)
        if caixas is None:
            return
        aluno, verificador, works = caixas
        lido_aluno, lido = [], []
        leitores = [threading.Thread(target=_read_limited, args=(aluno.stdout, lido_aluno, _STUDENT_OUTPUT_BYTES),
                                     daemon=True),
                    threading.Thread(target=_read_limited, args=(verificador.stdout, lido, MAX_OUTPUT_BYTES),
                                     daemon=True)]
        for t in leitores:
            t.start()
        tempo_esgotado = False
        for proc in (verificador, aluno):
            try:
                proc.wait(timeout=max(0.01, limite - (time.monotonic() - inicio)))
            except subprocess.TimeoutExpired:
                tempo_esgotado = True
                break
        tempo_esgotado = tempo_esgotado or (self.budget is not None and self.budget.motivo == "tempo")
        self._stop_conference(aluno, verificador, works, leitores)
        res.killed_by = self.budget.motivo if self.budget is not None else ""
        mensagens = read_messages(b"".join(lido_aluno), nonce_aluno)
        veredito = read_messages(b"".join(lido), nonce)
        if self.timings is not None:
            self.timings.update(kernel_times(nb, mensagens, inicio, time.monotonic()))
        executed, end = _apply_kernel_messages(nb, mensagens, res)
        res.kernel_started = any(m.get("kernel_pronto") is True for m in mensagens)
        if end is None:  # o processo parou no meio: em qual célula?
            em_curso = [m["executando"] for m in mensagens if isinstance(m.get("executando"), int)]
            if em_curso and em_curso[-1] not in executed:
                end = f"kernel_morreu:{em_curso[-1]}"
        self._read_verdicts(veredito, [c["grade_id"] for c in celulas if c["tipo"] == "verificacao"],
                            tempo_esgotado, res, self.budget is not None and self.budget.motivo == "memoria")
        relatadas = _apply_check_reports(nb, veredito)
        group_memory = self.budget is not None and self.budget.memory_exhausted()
        _classify_kernel_outcome(nb, executed, end, tempo_esgotado, group_memory, res)
        if not res.kernel_started and res.outcome == "kernel_morreu":
            res.outcome, res.where = "falha_da_maquina", ""
            res.machine_error = "o processo do aluno não começou"
        _mark_checks(nb, relatadas | {i for i in executed if not is_check(nb.cells[i])}, res)
        if self.timings is not None:
            self.timings["veredito"] = time.monotonic() - inicio

    def _start_conference(self, celulas: list[dict], ident: str, nonce_aluno: str, nonce: str, limite: float,
                          single: bool, times: bool = False):
        """Começa as duas caixas da conferência (o lado do aluno e o verificador), ligadas por um par de pipes;
        devolve ``(aluno, verificador, pastas)``, ou ``None`` sem verificações na conferência comum."""
        verificacoes = [{"grade_id": c["grade_id"], "fonte": c["fonte"]} for c in celulas if c["tipo"] == "verificacao"]
        if not verificacoes and not single:
            return None
        from .biblioteca_aluno import checks_in, served_names, student_library

        # o processo do aluno importa uma biblioteca sem as contas que as verificações proíbem: elas são feitas
        # pelo verificador, que sabe qual verificação está rodando (correcao.biblioteca_aluno)
        self.student_box.biblioteca = student_library(tuple(checks_in(v["fonte"] for v in verificacoes).items()),
                                                      self.libraries)
        codigo = [{"fonte": c["fonte"], "indice": c["indice"]} if c["tipo"] == "codigo" else
                  {"verificacao": c["grade_id"], "indice": c["indice"]} for c in celulas]
        work_aluno = self._workdir(f"{ident}-aluno", self.student_box)
        if not self.verifier.workdir.exists():  # o HOME inicial do verificador residente, feito uma vez
            self._workdir(self.verifier.workdir.name, self.verifier_box)
        pedidos_ler, pedidos_escrever = os.pipe()  # verificador -> aluno
        respostas_ler, respostas_escrever = os.pipe()  # aluno -> verificador
        pedido_aluno = {"nonce": nonce_aluno, "celulas": codigo, "tempo_celula": self.cell_timeout}
        pedido_ver = {"nonce": nonce, "verificacoes": verificacoes, "tempo_celula": self.cell_timeout,
                      "tempo_pronto": limite, "servidos": sorted(served_names())}
        if single:
            pedido_aluno["saidas"] = pedido_ver["saidas"] = True
            pedido_aluno["tempos"] = times
        try:
            aluno = _start_in_sandbox(self.student_box, work_aluno, "correcao._aluno", pedido_aluno,
                                      {"CORRECAO_FD_LER": str(pedidos_ler),
                                       "CORRECAO_FD_ESCREVER": str(respostas_escrever)},
                                      (pedidos_ler, respostas_escrever),
                                      subprocess.PIPE if single else subprocess.DEVNULL)
            verificador = self.verifier.start(pedido_ver, respostas_ler, pedidos_escrever)
        finally:
            for fd in (pedidos_ler, pedidos_escrever, respostas_ler, respostas_escrever):
                os.close(fd)
        return aluno, verificador, (work_aluno,)

    def _stop_conference(self, aluno, verificador, works, leitores) -> None:
        """Mata o que ainda vive das duas caixas, espera os leitores e apaga as pastas."""
        verificador.kill()  # o filho do verificador residente (a caixa dele continua para o próximo notebook)
        if aluno.poll() is None:
            self.student_box._kill(aluno)
        self.student_box.kill_leftovers()
        for t in leitores:
            t.join(10)  # mortas as caixas, o que elas já tinham dito chega ao fim
        for work in works:
            shutil.rmtree(work, ignore_errors=True)

    @staticmethod
    def _read_verdicts(mensagens: list[dict], pendentes: list[str], tempo_esgotado: bool, res: ExecutionResult,
                       motivo_memoria: bool = False) -> None:
        """Os vereditos do verificador em ``res`` (o primeiro de cada verificação); uma verificação sem veredito
        reprova, dizendo se a conferência parou nela ou antes dela."""
        iniciada = None
        for msg in mensagens:
            if "inicio" in msg:
                iniciada = msg["inicio"]
            elif "grade_id" in msg and msg["grade_id"] in pendentes and msg["grade_id"] not in res.verdicts:
                passou = msg.get("passou")
                res.verdicts[msg["grade_id"]] = (passou is True, str(msg.get("detalhe", ""))[:300])
                res.categories[msg["grade_id"]] = str(msg.get("categoria", ""))[:60]
                iniciada = None
        motivo = ("tempo esgotado" if tempo_esgotado else
                  "memória do notebook esgotada" if motivo_memoria else "o processo parou")
        for gid in pendentes:
            if gid not in res.verdicts:
                onde = "nesta verificação" if gid == iniciada else "antes desta verificação"
                res.verdicts[gid] = (False, f"a conferência parou {onde} ({motivo})")
                res.categories[gid] = "timeout" if tempo_esgotado else "stopped"


# o que se lê do processo do aluno: 3x o limite de saída do notebook (o resto é descartado)
_STUDENT_OUTPUT_BYTES = 12 * 2**20


def _read_limited(stream, chunks: list, limite: int) -> None:
    """Lê ``stream`` até o fim, guardando em ``chunks`` só os primeiros ``limite`` bytes."""
    lidos = 0
    while True:
        bloco = stream.read1(1 << 16)
        if not bloco:
            break
        if lidos < limite:
            chunks.append(bloco[:limite - lidos])
        lidos += len(bloco)


def _apply_check_reports(nb, veredito: list[dict]) -> set[int]:
    """Põe nas células de verificação de ``nb`` as saídas que o verificador mandou com cada veredito (o relatório
    com os casos do notebook, :func:`correcao._veredito.notebook_report`); devolve os índices dessas células."""
    from nbformat import from_dict

    por_id = {}
    for msg in veredito:
        if isinstance(msg.get("grade_id"), str) and isinstance(msg.get("saidas"), list):
            por_id.setdefault(msg["grade_id"], msg["saidas"])
    feitas = set()
    for indice, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and is_check(cell):
            saidas = por_id.get(nbgrader_meta(cell)["grade_id"])
            if saidas is not None:
                cell.outputs = [from_dict(o) for o in saidas if isinstance(o, dict)]
                feitas.add(indice)
    return feitas


def kernel_times(nb, mensagens: list[dict], lancado: float, voltou: float) -> dict:
    """Os passos da execução no kernel, em segundos, a partir das marcas (``time.monotonic()``, o mesmo relógio
    dentro e fora da caixa) que :mod:`correcao._executar` manda quando o pedido tem ``"tempos"``: o início do
    processo e da caixa (do ``bwrap`` até o Python da caixa pronto, com os limites e o pedido lido), os imports
    (nbformat, nbclient), o início do kernel, cada célula ``(rótulo, id, s)`` e o fim (desligar o kernel e sair
    da caixa). Uma marca que falta (a caixa morreu antes) deixa o passo de fora."""
    marcas = {m["marca"]: m["t"] for m in mensagens if isinstance(m.get("marca"), str)
              and isinstance(m.get("t"), (int, float))}
    celulas = [(_cell_name(nb, m["celula"]), nb.cells[m["celula"]].get("id", ""), m["t1"] - m["t0"])
               for m in mensagens if isinstance(m.get("celula"), int) and 0 <= m["celula"] < len(nb.cells)
               and isinstance(m.get("t0"), (int, float)) and isinstance(m.get("t1"), (int, float))]
    out: dict = {"celulas": celulas}
    anterior = lancado
    for nome, chave in (("processo", "caixa_processo"), ("pronta", "caixa_pronta"), ("imports", "imports"),
                        ("kernel", "kernel_inicio")):
        if nome in marcas:
            out[chave] = marcas[nome] - anterior
            anterior = marcas[nome]
    if "fim" in marcas:
        out["kernel_fim"] = voltou - marcas["fim"]
    out["kernel_caixa"] = voltou - lancado
    return out


def _apply_kernel_messages(nb, messages: list[dict], res: ExecutionResult) -> tuple[set[int], object]:
    """Põe em ``nb`` as saídas que o kernel mandou (``{"celula": i, "outputs": ...}``) e devolve os índices das
    células executadas e a mensagem de fim (``None`` se o kernel não chegou ao fim). Anota em ``res`` a razão
    CPU/relógio e as saídas cortadas por excesso. Mensagens de forma errada são ignoradas."""
    from nbformat import from_dict

    from ._sem_figuras import replace_undrawn

    executed, end = set(), None
    for msg in messages:
        if "fim" in msg:
            end = msg["fim"]
            cpu, clock = msg.get("cpu"), msg.get("relogio")
            if isinstance(cpu, (int, float)) and isinstance(clock, (int, float)) and clock > 0:
                res.cpu_ratio = float(cpu) / float(clock)
            break
        index = msg.get("celula")
        if isinstance(index, int) and 0 <= index < len(nb.cells) and nb.cells[index].cell_type == "code":
            saidas = replace_undrawn([o for o in msg.get("outputs", []) if isinstance(o, dict)])
            nb.cells[index].outputs = [from_dict(o) for o in saidas]
            count = msg.get("execution_count")
            nb.cells[index].execution_count = count if isinstance(count, int) else None
            executed.add(index)
            if msg.get("cortada") in ("celula", "notebook"):
                res.truncated.append((index, msg["cortada"]))
    return executed, end


def _cells_with_error(nb, executed: set[int], *names: str) -> list[int]:
    """As células executadas cuja saída tem um erro de um dos tipos ``names``, em ordem."""
    return sorted({i for i in executed for o in nb.cells[i].outputs
                   if o.get("output_type") == "error" and o.get("ename") in names})


def _classify_kernel_outcome(nb, executed: set[int], end, timed_out: bool, group_memory: bool,
                             res: ExecutionResult) -> None:
    """A situação da execução no kernel (``res.outcome``, ``res.where`` e afins), a partir da mensagem de fim
    ``end``, do tempo da caixa e da memória do notebook inteiro (``group_memory``)."""
    last = max(executed) if executed else -1
    # o nbclient interrompe a célula que passou do tempo: o erro é o KeyboardInterrupt da interrupção
    memory = _cells_with_error(nb, executed, "MemoryError")
    timeout = _cells_with_error(nb, executed, "CellTimeoutError", "KeyboardInterrupt")
    end_text = end if isinstance(end, str) else ""
    if end_text.startswith("ignorou_interrupcao:"):
        index = int(end_text.split(":")[1]) if end_text.split(":")[1].isdigit() else last
        res.outcome, res.where, res.ignored_interrupt = "tempo_esgotado", _cell_name(nb, index), _cell_name(nb, index)
    elif group_memory and (timed_out or end is None or str(end).startswith("kernel_morreu")):
        # a célula em curso, quando o processo a anunciou ("kernel_morreu:K"); senão, a seguinte à última que terminou
        em_curso = end_text.split(":")[1] if end_text.startswith("kernel_morreu:") else ""
        index = int(em_curso) if em_curso.isdigit() else last + 1
        res.outcome, res.where, res.notebook_memory = "memoria_esgotada", _cell_name(nb, index), True
    elif timed_out:
        res.outcome, res.where = "tempo_esgotado", _cell_name(nb, last + 1)
    elif timeout:  # uma célula passou do tempo e foi interrompida; o resto do notebook rodou
        res.outcome, res.where, res.continued = "tempo_esgotado", _cell_name(nb, timeout[0]), True
    elif end_text.startswith("kernel_morreu"):
        index = int(end_text.split(":")[1]) if ":" in end_text else last + 1
        res.outcome, res.where = "kernel_morreu", _cell_name(nb, index)
    elif end is None or end_text.startswith("erro"):
        res.outcome, res.where = "kernel_morreu", _cell_name(nb, last + 1)
    if memory and not res.notebook_memory:
        # um MemoryError numa célula, e nada mais: o processo seguiu, e o resto do notebook rodou
        res.continued = res.outcome == "" or res.continued
        res.outcome = "memoria_esgotada"
        res.where = _cell_name(nb, memory[0])


def _mark_checks(nb, executed: set[int], res: ExecutionResult) -> None:
    """As verificações que rodaram no kernel e reprovaram (no modo de correção, AssertionError) vão para
    ``res.failed_in_kernel``: se o verificador isolado aprovar uma delas, os dois discordam e a linha vai para
    revisão. Uma verificação que não rodou ganha um erro, porque não pode valer ponto (o nbgrader daria, por não
    ter erro)."""
    from nbformat import from_dict

    for index in executed:
        cell = nb.cells[index]
        if is_check(cell) and any(o.get("output_type") == "error" and o.get("ename") == "AssertionError"
                                  for o in cell.outputs):
            res.failed_in_kernel.add(nbgrader_meta(cell)["grade_id"])
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and index not in executed and is_check(cell):
            cell.outputs = [from_dict({"output_type": "error", "ename": "NaoExecutada", "evalue":
                                       "a execução parou antes desta célula", "traceback": []})]


def _start_in_sandbox(caixa: Sandbox, workdir: Path, modulo: str, pedido: dict, env: dict, pass_fds: tuple, saida):
    """Inicia ``modulo`` na caixa (sem esperar) com o ``pedido`` (JSON) na entrada padrão, escrito numa thread."""
    proc = caixa.start(workdir, modulo, env, pass_fds=pass_fds, stdout=saida)
    write_in_thread(proc.stdin, json.dumps(pedido).encode("utf-8"))
    return proc
