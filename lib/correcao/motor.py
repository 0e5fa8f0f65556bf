"""O motor da correção: nbgrader (no mesmo processo) + caixas do bubblewrap + conferência independente.

Para cada entrega:

1. o nbgrader saneia o notebook (células protegidas e de verificação voltam ao original, ids
   duplicados e metadados conferidos) num curso descartável montado a partir de ``solutions/``;
2. no lugar do executor do nbgrader entra :class:`correcao._preprocessador.ExecutePreprocessor`, que
   a. varre o código do aluno (:mod:`correcao.varredura`);
   b. executa o notebook num kernel dentro de uma caixa (:mod:`correcao._executar`): as saídas
      voltam para o notebook saneado, que fica deste lado (o aluno não consegue trocar o código que
      é mostrado no retorno);
   c. confere cada verificação numa segunda caixa, nova (:mod:`correcao._veredito`);
3. o nbgrader guarda as notas dele (a partir das saídas) e a nota final de cada verificação é a do
   nbgrader **somente se** a conferência independente também passou; divergência, ou código que mexe
   na correção, vira a situação ``revisar`` com o motivo.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

if "jsonschema" not in sys.modules:  # o jsonschema importaria um verificador de IRIs (~3 s) que o nbformat não usa
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from .catalogo import (  # noqa: E402
    CODE_STUB,
    READ_TIMEOUT_S,
    ROOT,
    TEXT_STUB,
    Gradable,
    base_name,
    blank_answers,
    catalog,
    cell_label,
    identify_notebook,
    inspect_notebook,
    is_check,
    nbgrader_meta,
    read_notebook,
    too_large,
)
from .entregas import Submissions, read_submissions, same_student_name
from .isolamento import NotebookBudget, Sandbox, kill_sandbox, remove_cgroups
from .nomes_antigos import recognize_version, translate_ids, version_note
from .politica import GradingPolicy
from .relatorio import Row, failed_row, format_number, notebook_body, readable_error, withhold, write_outputs
from .saneamento import copied_from_solutions, sanitize
from .varredura import imported_modules, scan_cell

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
    changed_modules: list = field(default_factory=list)  # módulos alterados, vistos na conferência
    outcome: str = ""  # "", tempo_esgotado, memoria_esgotada, kernel_morreu, falha_da_maquina
    kernel_started: bool = False  # o kernel da caixa começou e atendeu antes da primeira célula
    machine_error: str = ""  # com falha_da_maquina: o que a caixa disse (o fim do executor), para o professor
    cpu_ratio: float | None = None  # tempo de CPU / tempo de relógio do kernel (None: não informado)
    where: str = ""  # a célula em que a execução parou
    continued: bool = False  # tempo esgotado numa célula só: ela foi interrompida e o resto do notebook rodou
    failed_in_kernel: set = field(default_factory=set)  # verificações que rodaram no kernel e reprovaram
    truncated: list = field(default_factory=list)  # (célula, "celula"/"notebook"): saídas cortadas por excesso
    ignored_interrupt: str = ""  # a célula em que o kernel ignorou a interrupção (e foi encerrado)
    notebook_memory: bool = False  # a soma da memória do notebook passou do limite (não a de um processo)
    killed_by: str = ""  # "tempo"/"memoria": o orçamento do notebook matou as caixas


def _read_messages(stdout: bytes, nonce: str) -> list[dict]:
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


def _box_numbers(numero: int) -> tuple[int, int, int]:
    """Os números das três caixas do trabalhador ``numero`` (o kernel, o lado do aluno e o verificador), com uids
    diferentes: 64 uids por correção (veja :class:`correcao.isolamento.Sandbox`)."""
    uid = numero % 21
    return 3 * uid, 3 * uid + 1, 3 * uid + 2


class Worker:
    """Um curso nbgrader e uma caixa; corrige uma entrega por vez (há um por processo paralelo)."""

    def __init__(self, pasta: Path, gradables: list[Gradable], numero: int, politica: GradingPolicy, marca: str):
        self._boxes(pasta, numero, politica, marca)
        self._nbgrader_course(gradables)

    @classmethod
    def boxes_only(cls, pasta: Path, numero: int, politica: GradingPolicy, marca: str) -> "Worker":
        """Só as três caixas, sem o curso do nbgrader (que custa ~1,5 s de import): :meth:`execute` roda um notebook
        como na correção (usado por :func:`preflight`)."""
        w = cls.__new__(cls)
        w._boxes(pasta, numero, politica, marca)
        return w

    def _boxes(self, pasta: Path, numero: int, politica: GradingPolicy, marca: str) -> None:
        """As três caixas, com os limites de ``politica`` (a da correção: veja :mod:`correcao.politica`)."""
        self.pasta = pasta
        self.course = pasta / "curso-nbgrader"
        self.politica = politica
        self.tempo_celula = politica.cell_timeout
        self.limites = limites = politica.limits()
        isolar = politica.isolate
        # três caixas por trabalhador, com uids diferentes: o kernel, e a conferência (o lado do aluno e o
        # verificador, ligados por um par de pipes) rodam ao mesmo tempo
        kernel, aluno, conferencia = _box_numbers(numero)
        self.caixa = Sandbox(limites, numero=kernel, isolar=isolar, marca=marca)
        self.caixa_aluno = Sandbox(limites, numero=aluno, isolar=isolar, marca=marca)
        self.caixa_conferencia = Sandbox(limites, numero=conferencia, isolar=isolar, marca=marca)
        self.numero = numero
        self.marca = marca
        self.isolar = isolar
        self.grupo: NotebookBudget | None = None  # o orçamento do notebook sendo corrigido (grade_one)
        self.chave = f"{marca}-{numero}"
        self.resultados: dict[str, ExecutionResult] = {}
        self.mpl_cache: Path | None = None
        # Com um dicionário aqui, a correção anota onde vai o tempo (segundos por passo; veja _kernel_times);
        # com None (o padrão), nada é medido nem pedido às caixas
        self.tempos: dict | None = None

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

        WORKERS_BY_KEY[self.chave] = self

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
        c.ExecutePreprocessor.chave = self.chave
        c.Exchange.root = str(self.pasta / "exchange")  # não usada; evita o aviso sobre a pasta do sistema
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
        if "correcao._preprocessador" in sys.modules:
            from ._preprocessador import WORKERS_BY_KEY

            WORKERS_BY_KEY.pop(self.chave, None)

    # ---------- as duas caixas ----------
    def _workdir(self, nome: str, caixa: Sandbox) -> Path:
        work = self.pasta / "caixas" / nome
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
        """Varredura, execução no kernel (as saídas entram em ``nb``) e conferência independente."""
        res = ExecutionResult()
        codigo = [c for c in nb.cells if c.cell_type == "code"]
        modulos = imported_modules([c.source for c in codigo])
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and not nbgrader_meta(cell).get("locked"):
                res.flags += scan_cell(cell.source, modulos, _cell_name(nb, index))
        celulas = self._code_cells(nb)  # lidas antes: a conferência roda ao mesmo tempo que o kernel

        t0 = time.monotonic()
        paralela = threading.Thread(target=self._verify, args=(celulas, ident, res))
        paralela.start()
        self._kernel(nb, ident, res)
        paralela.join()
        if self.tempos is not None:
            self.tempos["execucao"] = time.monotonic() - t0
        self.resultados[ident] = res
        return res

    def _kernel(self, nb, ident: str, res: ExecutionResult) -> None:
        """Executa ``nb`` no kernel da caixa: as saídas entram em ``nb`` e o desfecho (tempo, memória, kernel
        morto) em ``res``. Três passos: ler as mensagens da caixa, classificar o desfecho e marcar as
        verificações que reprovaram ou não rodaram."""
        nonce = secrets.token_hex(16)
        work = self._workdir(f"{ident}-kernel", self.caixa)
        pedido = {"nonce": nonce, "notebook": nb, "tempo_celula": self.tempo_celula,
                  "env": {"NBGRADER_EXECUTION": "autograde"}}
        if self.tempos is not None:
            pedido["tempos"] = True
        lancado = time.monotonic()
        run = self.caixa.run(work, "correcao._executar", json.dumps(pedido).encode("utf-8"))
        voltou = time.monotonic()
        shutil.rmtree(work, ignore_errors=True)
        res.killed_by = run.killed_by
        mensagens = _read_messages(run.stdout, nonce)
        if self.tempos is not None:
            self.tempos.update(_kernel_times(nb, mensagens, lancado, voltou))
        executed, end = _apply_kernel_messages(nb, mensagens, res)
        res.kernel_started = any(m.get("kernel_pronto") is True for m in mensagens)
        group_memory = self.grupo is not None and self.grupo.memory_exhausted()
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
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if is_check(cell):
                celulas.append({"tipo": "verificacao", "grade_id": nbgrader_meta(cell)["grade_id"],
                                "fonte": cell.source})
            else:
                celulas.append({"tipo": "codigo", "fonte": cell.source})
        return celulas

    def _verify(self, celulas: list[dict], ident: str, res: ExecutionResult) -> None:
        """A conferência que dá os pontos: o lado do aluno (:mod:`correcao._aluno`) roda as células de código,
        e o verificador (:mod:`correcao._veredito`, outra caixa, sem código do aluno) chama as funções dele
        por um par de pipes e julga o que volta. Só o verificador fala com este processo."""
        verificacoes = [{"grade_id": c["grade_id"], "fonte": c["fonte"]} for c in celulas if c["tipo"] == "verificacao"]
        pendentes = [v["grade_id"] for v in verificacoes]
        if not pendentes:
            return
        inicio_veredito = time.monotonic()
        from .biblioteca_aluno import lessons_in, student_library

        # o processo do aluno importa uma biblioteca sem as contas que as verificações proíbem: elas são feitas
        # pelo verificador, que sabe qual verificação está rodando (correcao.biblioteca_aluno)
        self.caixa_aluno.biblioteca = student_library(lessons_in(v["fonte"] for v in verificacoes))
        codigo = [{"fonte": c["fonte"]} if c["tipo"] == "codigo" else {"verificacao": c["grade_id"]} for c in celulas]
        nonce = secrets.token_hex(16)
        work_aluno = self._workdir(f"{ident}-aluno", self.caixa_aluno)
        work_ver = self._workdir(f"{ident}-verificador", self.caixa_conferencia)
        pedidos_ler, pedidos_escrever = os.pipe()  # verificador -> aluno
        respostas_ler, respostas_escrever = os.pipe()  # aluno -> verificador
        limite = self.grupo.remaining() if self.grupo is not None else self.limites.relogio_s
        t0 = time.monotonic()
        try:
            aluno = _start_in_sandbox(self.caixa_aluno, work_aluno, "correcao._aluno",
                             {"nonce": secrets.token_hex(16), "celulas": codigo, "tempo_celula": self.tempo_celula},
                             {"CORRECAO_FD_LER": str(pedidos_ler), "CORRECAO_FD_ESCREVER": str(respostas_escrever)},
                             (pedidos_ler, respostas_escrever), subprocess.DEVNULL)
            verificador = _start_in_sandbox(self.caixa_conferencia, work_ver, "correcao._veredito",
                                   {"nonce": nonce, "verificacoes": verificacoes, "tempo_celula": self.tempo_celula,
                                    "tempo_pronto": limite},
                                   {"CORRECAO_FD_LER": str(respostas_ler),
                                    "CORRECAO_FD_ESCREVER": str(pedidos_escrever)},
                                   (respostas_ler, pedidos_escrever), subprocess.PIPE)
        finally:
            for fd in (pedidos_ler, pedidos_escrever, respostas_ler, respostas_escrever):
                os.close(fd)
        lido: list[bytes] = []
        leitor = threading.Thread(target=lambda: lido.append(verificador.stdout.read()), daemon=True)
        leitor.start()
        leitor.join(max(1.0, limite - (time.monotonic() - t0)))
        tempo_esgotado = leitor.is_alive() or (self.grupo is not None and self.grupo.motivo == "tempo")
        for proc, caixa in ((verificador, self.caixa_conferencia), (aluno, self.caixa_aluno)):
            if proc.poll() is None:
                caixa._kill(proc)
        leitor.join(10)  # morto o verificador, o que ele já tinha dito chega ao fim
        self.caixa_conferencia.kill_leftovers()
        self.caixa_aluno.kill_leftovers()
        shutil.rmtree(work_aluno, ignore_errors=True)
        shutil.rmtree(work_ver, ignore_errors=True)
        saida = b"".join(lido)
        iniciada = None
        for msg in _read_messages(saida, nonce):
            if "inicio" in msg:
                iniciada = msg["inicio"]
            elif "grade_id" in msg and msg["grade_id"] in pendentes and msg["grade_id"] not in res.verdicts:
                passou = msg.get("passou")
                res.verdicts[msg["grade_id"]] = (passou is True, str(msg.get("detalhe", ""))[:300])
                iniciada = None
        morta = self.grupo.motivo if self.grupo is not None else ""
        motivo = ("tempo esgotado" if tempo_esgotado else
                  "memória do notebook esgotada" if morta == "memoria" else "o processo parou")
        for gid in pendentes:
            if gid not in res.verdicts:
                onde = "nesta verificação" if gid == iniciada else "antes desta verificação"
                res.verdicts[gid] = (False, f"a conferência parou {onde} ({motivo})")
        if self.tempos is not None:
            self.tempos["veredito"] = time.monotonic() - inicio_veredito


def _kernel_times(nb, mensagens: list[dict], lancado: float, voltou: float) -> dict:
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
        res.outcome, res.where, res.notebook_memory = "memoria_esgotada", _cell_name(nb, last + 1), True
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
    dados = json.dumps(pedido).encode("utf-8")

    def feed():
        try:
            proc.stdin.write(dados)
            proc.stdin.close()
        except OSError:
            pass

    threading.Thread(target=feed, daemon=True).start()
    return proc


# ---------- uma entrega ----------
def _kernel_scores(w: Worker, g: Gradable, ident: str, row: Row) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{w.course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(g.notebook, g.assignment, ident)
        for grade in nb.grades:
            _, points, auto = g.cells[grade.name]
            if auto:
                row.scores[grade.name] = grade.auto_score or 0.0
            elif grade.needs_manual_grade:
                row.manual_pending += 1


@dataclass
class GradingTask:
    """Um notebook a corrigir: quem entregou (como o professor vê), onde estava e a cópia arrumada."""

    student: str
    ident: str  # id seguro no nbgrader, um por arquivo (e00007): nomes de alunos nunca viram caminhos
    g: Gradable
    path: Path  # o notebook arrumado (:func:`correcao.saneamento.sanitize`)
    arquivo: str  # o caminho dentro da entrega do aluno
    notas: list = field(default_factory=list)  # renomeado, células repetidas ou coladas...
    segundos_leitura: float = 0.0  # o que a leitura e o saneamento já gastaram do orçamento do notebook
    ausentes: list = field(default_factory=list)  # verificações que a versão do curso do aluno não tinha
    versao: str = ""  # a versão anterior do curso do notebook ("" = a atual)
    copiadas: tuple = ((), ())  # (respostas iguais às soluções, verificações delas): veja copied_from_solutions


FEEDBACK_RESERVE_S = 15.0  # do orçamento do notebook, o que fica para as notas do nbgrader e o HTML do retorno


def grade_one(w: Worker, e: GradingTask) -> Row:
    """Corrige um notebook (``e.ident`` é o id do nbgrader; ``e.student``, o nome mostrado), dentro do
    orçamento dele (:class:`correcao.isolamento.NotebookBudget`): o prazo das caixas é o orçamento
    (``w.limites.relogio_s``) menos o que a leitura já gastou e a reserva para o retorno."""
    prazo = max(1.0, w.limites.relogio_s - e.segundos_leitura - min(FEEDBACK_RESERVE_S, 0.1 * w.limites.relogio_s))
    with NotebookBudget(f"{w.marca}-p{w.numero}-{e.ident}", w.limites, prazo, isolar=w.isolar) as grupo:
        w.grupo = w.caixa.grupo = w.caixa_aluno.grupo = w.caixa_conferencia.grupo = grupo
        try:
            row = _grade_one(w, e, grupo)
        finally:
            w.grupo = w.caixa.grupo = w.caixa_aluno.grupo = w.caixa_conferencia.grupo = None
    # medidas depois de fechar o grupo (tudo morto, o cgroup lido e removido)
    cpu, decorrido = grupo.cpu_s(), time.monotonic() - grupo.inicio
    if cpu is not None:
        row.cpu_ratio = cpu / max(decorrido, 1e-6)
    row.cpu_others = grupo.cpu_others()
    row.peak_memory = grupo.peak_memory
    return row


def _grade_one(w: Worker, e: GradingTask, grupo: NotebookBudget) -> Row:
    g = e.g
    row = Row(e.student, g.assignment, g.notebook, maximum=g.max_auto, arquivo=e.arquivo, reasons=list(e.notas),
              isolation=f"bwrap+{grupo.tipo}" if w.caixa.isolar else "sem_isolamento")
    dest = w.course / "submitted" / e.ident / g.assignment
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(e.path, dest / f"{g.notebook}.ipynb")
    w.api.coursedir.notebook_id = g.notebook
    t0 = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # avisos internos do SQLAlchemy do nbgrader, sem ação para o professor
        result = w.api.autograde(g.assignment, e.ident, force=True, create=True)
    if w.tempos is not None:
        w.tempos["autograde"] = time.monotonic() - t0
    log = result.get("log", "") + result.get("error", "")
    autograded = w.course / "autograded" / e.ident / g.assignment / f"{g.notebook}.ipynb"
    res = w.resultados.pop(e.ident, None)
    if not result.get("success") or not autograded.exists() or res is None:
        row.status, row.scores = "erro_na_correcao", g.zero_scores()
        row.reasons.append("o nbgrader não conseguiu corrigir: " + _last_error(log))
        if os.environ.get("CORRECAO_DEPURAR"):
            print(log, file=sys.stderr)
        return row
    keep = w.pasta / "corrigidos" / f"{e.ident}.ipynb"  # um por arquivo: nada sobrescreve o retorno de outro
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(autograded, keep)
    row.autograded = keep
    _kernel_scores(w, g, e.ident, row)
    _explain(autograded, g, row, e.path)
    _checks_outside_version(g, row, e.ausentes)
    _apply_verification(g, row, res)
    _solutions_copy(row, *e.copiadas)
    _old_version_failures(g, row, e.versao)
    row.cpu_ratio = res.cpu_ratio
    # o tempo foi do aluno (nunca se corrige de novo): ignorou a interrupção, inundou a saída ou estourou a memória
    row.tempo_do_aluno = bool(res.ignored_interrupt or res.truncated or res.notebook_memory)
    return row


def _old_version_failures(g: Gradable, row: Row, versao: str) -> None:
    """Uma entrega de versão anterior com verificações que não passaram vai para revisão: o enunciado pode ter
    mudado desde então (o projeto da Aula 1 pedia ``atencao.self_attention``, que a verificação de hoje
    proíbe dentro da função do aluno)."""
    if not versao or row.status not in ("parcial", "zero"):
        return
    falhas = [gid for gid in g.checks if gid in row.scores and row.scores[gid] < g.cells[gid][1]]
    if falhas:
        row.status = "revisar"
        row.reasons.append(f"verificações que não passaram numa entrega da {versao} ({', '.join(falhas)}): o "
                           "enunciado pode ter mudado desde aquela versão; o professor decide")

def _checks_outside_version(g: Gradable, row: Row, ausentes: list) -> None:
    """Verificações de exercícios que a versão do curso do aluno não tinha: fora da nota e do máximo."""
    for gid in ausentes:
        row.scores.pop(gid, None)
        row.maximum -= g.cells[gid][1]
    row.reasons = [r for r in row.reasons if not any(r.startswith(f"{gid}: ") for gid in ausentes)]


def _solutions_copy(row: Row, respostas, verificacoes) -> None:
    """Entrega com as respostas iguais às de ``solutions/``: revisar, sem os pontos dessas verificações."""
    if respostas:
        withhold(row, verificacoes, f"respostas iguais às de solutions/ ({', '.join(respostas)}): cópia da solução? "
                                 "O professor decide")


def _last_error(log: str) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and "IPKernelApp" not in ln]
    errors = [ln for ln in lines if "ERROR" in ln or "Error" in ln]
    text = (errors or lines or ["sem detalhes"])[-1][:300]
    return re.sub(r"/\S+", "…", text)  # sem caminhos temporários


def _explain(autograded: Path, g: Gradable, row: Row, submitted: Path) -> None:
    """Motivos legíveis: verificações que falharam, erros (com a célula), células removidas ou alteradas."""
    nb = json.loads(autograded.read_text(encoding="utf-8"))
    present = set()
    for index, cell in enumerate(nb["cells"]):
        gid = nbgrader_meta(cell).get("grade_id")
        present.add(gid)
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            ename, evalue = out.get("ename", ""), out.get("evalue") or ""
            if ename == "NaoExecutada":
                row.reasons.append(f"{gid}: não foi executada (a execução parou antes)")
            elif ename in ("CellTimeoutError", "KeyboardInterrupt", "MemoryError") or (
                    ename == "SaidaExcessiva" and not (gid in g.cells and is_check(cell))):
                continue  # a situação da linha (tempo/memória esgotados) ou a nota da saída cortada já diz onde
            elif ename == "NotImplementedError" and not (gid in g.cells and is_check(cell)):
                continue  # o esboço de um exercício não feito: a verificação dele já diz "não resolvido"
            elif gid in g.cells and is_check(cell):
                row.reasons.append(f"{gid}: {readable_error(ename, evalue, com_nome=False)}")
            else:
                row.reasons.append(f"erro em {cell_label(nb['cells'], index)}: {readable_error(ename, evalue)}")
    for gid in g.checks:
        if gid not in present:
            row.reasons.append(f"{gid}: célula de verificação apagada ou sem os metadados de correção (0 pontos)")
            row.scores[gid] = 0.0


def _apply_verification(g: Gradable, row: Row, res: ExecutionResult) -> None:
    """Os pontos vêm só do verificador isolado (nenhum código do aluno no processo dele); a saída do kernel
    (o que o nbgrader leu) só serve ao retorno, e uma verificação que passou lá e não no verificador vai
    para revisão. Depois, a situação e os motivos."""
    review = _verifier_scores(g, row, res)
    review = _tampering_reasons(row, res) or review
    for index, onde in res.truncated[:5]:
        row.reasons.append(f"saída cortada na célula {index + 1}: "
                           + ("a célula" if onde == "celula" else "o notebook")
                           + " passou do limite de saída; o resto não foi guardado e a célula foi interrompida")
    reason = _outcome_reason(res)
    if reason:
        row.reasons.append(reason)
    if (res.flags or res.changed_modules) and any(v > 0 for v in row.scores.values()):  # o kernel inteiro em dúvida
        withhold(row, list(row.scores), "o código mexe na correção: nenhuma verificação vale até a revisão")
    row.total = sum(row.scores.values())
    if review:
        row.status = "revisar"
    elif res.outcome:
        row.status = res.outcome
    else:
        row.status = "ok" if row.total >= row.maximum else ("parcial" if row.total > 0 else "zero")
    row.reasons = list(dict.fromkeys(row.reasons))


def _verifier_scores(g: Gradable, row: Row, res: ExecutionResult) -> bool:
    """Os pontos de cada verificação pelo veredito do verificador isolado; diz se a linha vai para revisão (o
    kernel e o verificador discordaram)."""
    review = False
    discordam = []
    for gid in g.checks:
        if gid not in row.scores:
            continue
        passou, detalhe = res.verdicts.get(gid, (False, "a conferência não chegou a esta verificação"))
        no_kernel = row.scores[gid]
        row.scores[gid] = float(g.cells[gid][1]) if passou is True else 0.0
        if passou is not True and no_kernel > 0:  # o verificador decide: 0, e a discordância vai para revisão
            row.reasons.append(f"{gid}: passou no notebook, mas falhou na conferência independente"
                               + (f" (não passou: {detalhe})" if detalhe else "") + "; 0 pontos")
            review = True
        elif passou is True and gid in res.failed_in_kernel:
            discordam.append(gid)
    if discordam:  # o kernel reprovou e o verificador aprovou: os pontos esperam o professor
        withhold(row, discordam, "reprovada no notebook, mas aprovada na conferência independente ("
                 + ", ".join(discordam) + "): o professor confere a resposta")
        review = True
    return review


def _tampering_reasons(row: Row, res: ExecutionResult) -> bool:
    """Os motivos da varredura e dos módulos alterados; diz se há algum (a linha vai para revisão)."""
    if res.flags:
        row.reasons.append("o código mexe na correção: " + "; ".join(res.flags[:8])
                           + (f" (e mais {len(res.flags) - 8})" if len(res.flags) > 8 else ""))
    if res.changed_modules:
        row.reasons.append("módulos alterados pelo código do aluno (desfeito na conferência): "
                           + ", ".join(res.changed_modules[:8]))
    return bool(res.flags or res.changed_modules)


def _outcome_reason(res: ExecutionResult) -> str | None:
    """O motivo, em pt-BR, da situação da execução (tempo, memória, kernel morto); ``None`` se ela terminou bem."""
    if res.ignored_interrupt:
        return (f"tempo esgotado em {res.ignored_interrupt}: a célula passou do tempo limite e o kernel não atendeu "
                "à interrupção (ignorou o SIGINT?); ele foi encerrado e o resto do notebook não rodou")
    if res.outcome == "tempo_esgotado" and res.continued:
        return (f"tempo esgotado em {res.where}: a célula passou do tempo limite e foi interrompida "
                "(laço infinito?); o resto do notebook rodou normalmente")
    if res.outcome == "tempo_esgotado":
        return (f"tempo esgotado em {res.where}: o notebook passou do tempo limite e foi interrompido "
                "(laço infinito?); valem os pontos das verificações que terminaram antes")
    if res.outcome == "memoria_esgotada" and res.notebook_memory:
        return (f"memória esgotada em {res.where}: a soma dos processos do notebook (e dos arquivos que "
                "ele gravou) passou do limite do notebook; valem os pontos das verificações que terminaram "
                "antes")
    if res.outcome == "memoria_esgotada":
        return (f"memória esgotada em {res.where} (limite por processo); "
                "valem os pontos das verificações que terminaram antes")
    if res.outcome == "kernel_morreu":
        return (f"o kernel parou em {res.where} (o processo foi encerrado); "
                "valem os pontos das verificações que terminaram antes")
    if res.outcome == "falha_da_maquina":
        return (f"a correção falhou nesta máquina antes de rodar o notebook (o kernel não começou na caixa: "
                f"{res.machine_error}); não é culpa do aluno, e a entrega precisa ser corrigida de novo")
    return None


class MachineFailure(RuntimeError):
    """A correção não pode rodar nesta máquina: a caixa ou o kernel não começaram (nenhum código de aluno rodou).
    A mensagem diz a causa e o que fazer; nada foi escrito na pasta de saída (nem ``notas.csv``, nem a parte)."""


PREFLIGHT = ("aula-01-self-attention", "03-exercicios")  # o notebook de aluno com que :func:`preflight` prova a caixa
PREFLIGHT_S = 120.0  # o prazo mínimo dele (s): numa máquina disputada, o kernel pode levar segundos para começar


def preflight(pasta: Path, politica: GradingPolicy, marca: str, mpl: Path | None = None) -> None:
    """Prova, antes de corrigir a turma, que a correção funciona nesta máquina: o notebook de aluno
    :data:`PREFLIGHT` (sem nada resolvido) roda como numa correção, nas mesmas três caixas: o kernel começa e roda
    as células, e o verificador isolado devolve um veredito para cada verificação (⏳, nenhuma aprovada).

    Raises
    ------
    correcao.isolamento.BwrapMissing
        Sem o bwrap, ou a caixa não começa aqui (a mensagem diz a causa: *user namespaces* bloqueados por um
        perfil seccomp de contêiner, AppArmor...).
    MachineFailure
        A caixa começa, mas o kernel ou o verificador não respondem (a mensagem diz o que a caixa disse).
    """
    import nbformat

    g = catalog()[PREFLIGHT]
    aluno = ROOT / "notebooks" / g.source.relative_to(ROOT / "solutions")
    nb = nbformat.read(aluno, as_version=4)
    # o prazo é o da máquina, e não o orçamento do professor: um orçamento pequeno demais é escolha dele (cada linha
    # sai tempo_esgotado), e não uma máquina quebrada; a memória e os processos são os da correção, e o tempo de cada
    # célula, ao menos o padrão da política
    politica = dataclasses.replace(politica, notebook_timeout=max(politica.notebook_timeout, PREFLIGHT_S),
                                   cell_timeout=max(politica.cell_timeout, GradingPolicy.cell_timeout))
    w = Worker.boxes_only(pasta, 20, politica, marca)
    w.mpl_cache = mpl
    limites = w.limites
    with NotebookBudget(f"{marca}-sonda", limites, limites.relogio_s, isolar=politica.isolate) as grupo:
        w.grupo = w.caixa.grupo = w.caixa_aluno.grupo = w.caixa_conferencia.grupo = grupo
        res = w.execute(nb, "sonda")
    sem_veredito = [gid for gid in g.checks
                    if gid not in res.verdicts or res.verdicts[gid][1].startswith("a conferência parou")]
    if not res.kernel_started or res.outcome or sem_veredito:
        if not res.kernel_started:
            o_que = f"o kernel não começou na caixa ({res.machine_error or res.outcome or 'sem resposta'})"
        elif res.outcome:
            o_que = f"o notebook de teste, em branco, parou em {res.where or 'uma célula'} ({res.outcome})"
        else:
            o_que = (f"o verificador isolado não deu veredito ({', '.join(sem_veredito)}: "
                     f"{res.verdicts.get(sem_veredito[0], (None, 'sem resposta'))[1]})")
        raise MachineFailure(
            f"A correção não funciona nesta máquina: {o_que}. Nenhuma entrega foi corrigida e nada foi escrito.\n"
            f"O teste é o notebook {PREFLIGHT[1]} da {PREFLIGHT[0]}, em branco, nas mesmas caixas da correção "
            "(o resultado dele não depende de nenhum aluno). Confira a memória e o tempo (--memoria, "
            "--tempo-notebook) e veja docs/professor.md, \"Isolamento e limites\".")


# as situações de uma entrega que foi ao kernel (as outras, como arquivo_invalido, nem chegam a uma caixa)
_KERNEL_STATUSES = frozenset({"ok", "parcial", "zero", "revisar", "tempo_esgotado", "memoria_esgotada",
                              "kernel_morreu", "erro_na_correcao", "falha_da_maquina"})


def _machine_failures(rows: list[Row], saida: Path, written: bool) -> None:
    """Levanta :class:`MachineFailure` se alguma entrega não rodou por falha da máquina (o kernel não começou,
    antes de qualquer código de aluno): um zero ali seria injusto. Com ``written=False`` (antes de escrever), só
    quando todas as entregas executadas falharam assim: uma turma inteira que não rodou não é escrita. Com
    ``written=True`` (depois), quando alguma falhou: as outras linhas estão escritas, essas dizem
    ``falha_da_maquina`` (sem pontos, nunca ``zero``), e o comando sai com erro para que sejam corrigidas de novo."""
    falhas = [r for r in rows if r.status == "falha_da_maquina"]
    executadas = [r for r in rows if r.status in _KERNEL_STATUSES]
    if not falhas or (not written and len(falhas) < len(executadas)):
        return
    exemplos = "; ".join(f"{r.student} · {r.notebook}" for r in falhas[:5]) + ("; ..." if len(falhas) > 5 else "")
    disse = next((m for m in falhas[0].reasons if m.startswith("a correção falhou nesta máquina")), "")
    feito = (f"As outras linhas estão em {saida}; essas dizem falha_da_maquina, sem pontos: corrija-as de novo."
             if written else "Nada foi escrito.")
    raise MachineFailure(
        f"A correção não terminou bem: em {len(falhas)} de {len(executadas)} notebook(s) ({exemplos}), o kernel não "
        "começou na caixa desta máquina, antes de qualquer código de aluno (não é culpa dos alunos). "
        f"{feito}\n{disse}\nSe continuar, veja docs/professor.md, \"Isolamento e limites\".")


# ---------- a turma ----------
def _start_matplotlib_cache(pasta: Path) -> tuple[Path, subprocess.Popen]:
    """Começa a gerar, uma vez por correção, o cache de fontes do matplotlib (uma cópia dele vai para cada caixa;
    sem ele, o primeiro import do matplotlib numa caixa leva segundos); devolve a pasta e o processo, que
    :func:`_wait_matplotlib_cache` espera antes do primeiro notebook."""
    cache = pasta / "mpl-cache"
    cache.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["MPLCONFIGDIR"] = str(cache)
    proc = subprocess.Popen([sys.executable, "-c", "import matplotlib.font_manager"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cache, proc


def _wait_matplotlib_cache(proc: subprocess.Popen | None) -> None:
    """Espera o processo de :func:`_start_matplotlib_cache` (até 120 s; depois disso, sem o cache)."""
    if proc is None:
        return
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _matplotlib_cache(pasta: Path) -> Path:
    """O cache de fontes do matplotlib, já pronto (veja :func:`_start_matplotlib_cache`)."""
    cache, proc = _start_matplotlib_cache(pasta)
    _wait_matplotlib_cache(proc)
    return cache


def grade_class(entregas: Path, saida: Path, politica: GradingPolicy | None = None, *, log=print,
                marca: str | None = None, guardar_notebooks: bool = False, parte: tuple[int, int] | None = None,
                anexo_parte: dict | None = None, preflight_check: bool = True, **limites) -> list[Row]:
    """Corrige a turma de ``entregas`` (pasta ou .zip, ou uma lista delas: as partes da mesma turma, juntadas
    por aluno por :func:`correcao.entregas.read_submissions`) e escreve ``notas.csv`` e os retornos em ``saida``.

    ``politica``: os limites e as opções da correção (:class:`correcao.politica.GradingPolicy`; sem ela, a padrão).
    ``limites``: por cima dela, pelos nomes antigos (``cell_timeout``, ``notebook_timeout``, ``workers``,
    ``memoria_mb``, ``memoria_total_mb``, ``disco_mb``, ``isolar``; veja :meth:`GradingPolicy.build`); o orçamento de
    relógio de cada notebook vai da leitura ao retorno (veja :func:`_grade_parallel`); sem isolamento, cada linha
    leva o aviso. ``marca`` identifica os processos desta correção (veja
    :func:`correcao.isolamento.leftover_pids`); ``guardar_notebooks`` guarda os notebooks executados em
    ``saida/notebooks-corrigidos/`` (o :mod:`correcao.validar` os lê). ``parte=(K, N)`` corrige só os alunos da
    parte ``K`` de ``N`` (:func:`correcao.partes.part_of`) e, em vez de ``notas.csv``, grava ``saida/parte.json``
    (com ``anexo_parte``), que :func:`correcao.partes.join_parts` junta às outras partes. Levanta
    :class:`correcao.isolamento.BwrapMissing` se o bwrap faltar ou a caixa não funcionar aqui,
    :class:`MachineFailure` se a correção não rodar nesta máquina (``preflight_check``: antes de tudo, um notebook de
    teste nas caixas, veja :func:`preflight`; e, depois, qualquer entrega cujo kernel não começou: nada é escrito,
    nunca uma turma de zeros) e ``ValueError`` com ``parte`` e ``guardar_notebooks`` juntos.
    """
    if parte is not None and guardar_notebooks:
        raise ValueError("guardar_notebooks: não vale com parte (os notebooks corrigidos ficam em cada máquina)")
    politica = GradingPolicy.build(politica, **limites)
    everything = catalog()
    marca = marca or secrets.token_hex(8)
    if politica.isolate:  # falha cedo, com a mensagem de instalação, sem o bwrap
        Sandbox(politica.limits(), isolar=True, marca=marca)
    saida = Path(saida).resolve()
    with tempfile.TemporaryDirectory(prefix="correcao-") as tmp_name:
        tmp = Path(tmp_name)
        # os processos de correção e o cache de fontes começam já: importam o nbgrader (~1,5 s) e montam o cache
        # enquanto este processo lê e planeja a turma
        pool = _GradingPool(tmp, politica, marca, log)
        try:
            teste = _start_preflight(pool, tmp, preflight_check)
            rows, fora, entregas_lidas = _grade_with_pool(pool, entregas, tmp, everything, parte, log, teste)
        finally:
            pool.close()
        _machine_failures(rows, saida, written=False)
        _mark_copies(rows)
        for r in rows:  # nada de caminhos desta máquina: a mesma turma dá sempre o mesmo notas.csv
            r.reasons = [m.replace(str(tmp), "…") for m in r.reasons]
        rows.sort(key=lambda r: (r.student, r.assignment, r.notebook, r.arquivo))
        kill_sandbox(marca)  # nada do aluno roda quando as notas são escritas
        remove_cgroups(f"{marca}-")
        if parte is not None:
            from .partes import class_fingerprint, write_part

            write_part(saida, parte, rows, fora, class_fingerprint(entregas_lidas), entregas_lidas.alunos,
                       politica.part_options(), anexo_parte)
            _machine_failures(rows, saida, written=True)
            return rows
        write_outputs(rows, everything, saida, fora)
        _machine_failures(rows, saida, written=True)
        if fora:
            log(f"  {len(fora)} arquivo(s) não corrigido(s): veja {saida / 'nao-corrigidos.csv'}")
        if guardar_notebooks:
            for k, r in enumerate(rows):
                if r.autograded and r.autograded.exists():
                    dest = saida / "notebooks-corrigidos" / f"{k:05d}.ipynb"
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(r.autograded, dest)
                    r.autograded = dest
    return rows


def _start_preflight(pool: "_GradingPool", tmp: Path, on: bool):
    """:func:`preflight` numa thread, ao lado da leitura e do plano da turma (espera o cache de fontes do
    matplotlib, como o primeiro notebook); devolve ``espera()``, que levanta o erro dela (ou nada, sem ``on``)."""
    if not on:
        return lambda: None
    erro: list[BaseException] = []

    def rodar() -> None:
        try:
            _wait_matplotlib_cache(pool._mpl_proc)
            preflight(tmp / "sonda", pool.politica, pool.marca, pool.mpl)
        except BaseException as exc:  # noqa: BLE001 - levantado de novo em espera()
            erro.append(exc)

    thread = threading.Thread(target=rodar, daemon=True, name="sonda")
    thread.start()

    def espera() -> None:
        thread.join()
        if erro:
            raise erro[0]

    return espera


def _grade_with_pool(pool: _GradingPool, entregas, tmp: Path, everything: dict, parte, log,
                     preflight_wait=lambda: None) -> tuple[list[Row], list[tuple], Submissions]:
    """O miolo de :func:`grade_class`: lê a turma, começa os processos de ``pool`` (até os ``workers`` da política,
    um por notebook a corrigir), planeja a turma enquanto eles sobem e corrige cada entrega uma vez só. Uma entrega
    com tempo esgotado custa o orçamento dela uma vez e nunca é corrigida de novo (de novo, sozinha, um notebook que
    dorme custaria outro orçamento inteiro a cada cópia); quando o tempo parece ter sido da máquina
    (:func:`_timed_out`), o log diz isso ao professor (:func:`_busy_machine_note`). Devolve as linhas, os não
    corrigidos e as entregas lidas."""
    workers = pool.politica.resolved_workers()
    entregas_lidas = read_submissions(entregas, tmp)  # cópia interna: o nbgrader e o aluno não veem o original
    da_parte = None
    if parte is not None:  # a turma toda foi lida (a impressão digital é dela); só os alunos da parte vão ao kernel
        from .partes import part_of

        da_parte = {a for a in {*entregas_lidas.alunos, "", *(x.aluno for x in entregas_lidas.arquivos)}
                    if part_of(a, parte[1]) == parte[0]}
    candidatos = sum(1 for a in entregas_lidas.arquivos if a.looks_like_notebook
                     and (da_parte is None or a.aluno in da_parte))
    for _ in range(min(workers, candidatos)):  # ler é rápido; o plano (que lê cada notebook) não
        pool.start_worker()
    plan, rows, fora = plan_class(entregas_lidas, everything, tmp / "saneados", alunos=da_parte,
                                  politica=pool.politica)
    if entregas_lidas.lixo:
        log(f"  {len(entregas_lidas.lixo)} resto(s) do macOS/Windows/Jupyter ignorado(s) (__MACOSX, ._*, "
            ".DS_Store, .ipynb_checkpoints...)")
    preflight_wait()  # a correção funciona nesta máquina (senão, nenhuma entrega vai ao kernel)
    graded = _grade_parallel(pool, plan, workers)
    for row in graded:
        if _timed_out(row):
            log(_busy_machine_note(row, pool.politica))
    return rows + graded, fora, entregas_lidas


def _busy_machine_note(row: Row, politica: GradingPolicy) -> str:
    """O aviso, no log da correção, de um tempo esgotado que pode ter sido da máquina (:func:`_timed_out`): a linha
    fica ``tempo_esgotado``, sem outra correção (e ``notas.csv`` não muda com a carga da máquina), e o professor
    decide se corrige de novo esse notebook sozinho."""
    cpu = f"só {row.cpu_ratio:.0%} do tempo" if row.cpu_ratio is not None else "pouco tempo"
    return (f"  {row.student} · {row.notebook} ({row.arquivo}): tempo esgotado com a máquina ocupada: as caixas "
            f"usaram {cpu} em CPU, enquanto outros processos ocupavam a máquina (ou o código dormiu ou esperou); não "
            "foi recorrigida: se o código não dorme nem espera, corrija só este notebook outra vez, com a máquina "
            f"livre (--processos 1) ou com limites maiores que os de agora: --tempo-celula {politica.cell_timeout}, "
            f"--tempo-notebook {politica.notebook_timeout:g}.")


def plan_class(ent: Submissions, everything: dict, pasta: Path, alunos: set[str] | None = None,
               politica: GradingPolicy | None = None) -> tuple[list[GradingTask], list[Row], list[tuple]]:
    """O que corrigir (notebooks reconhecidos, arrumados em ``pasta``), as linhas que não vão ao kernel
    (arquivo inválido, desconhecido, fora da pasta de um aluno, aluno sem notebook) e os arquivos que não são
    notebooks, para ``nao-corrigidos.csv`` (aluno, arquivo, motivo). Com ``alunos``, só os desses alunos
    (``""``: os soltos na raiz), com a mesma numeração interna da turma inteira.

    Cada aluno tem um orçamento (``max_files_per_student`` da ``politica``, :data:`MAX_FILES_PER_STUDENT` na padrão):
    só os primeiros notebooks dele (pela ordem do caminho) são lidos, e só os primeiros outros arquivos vão para
    ``nao-corrigidos.csv``; o resto vira uma linha só, ``arquivos_demais`` (e uma só em ``nao-corrigidos.csv``), com
    quantos eram. Um aluno com 5.000 notebooks minúsculos no zip não enche ``notas.csv`` e ``retorno/`` nem ocupa a
    correção da turma."""
    from collections import Counter

    politica = politica or GradingPolicy()
    max_files = politica.max_files_per_student

    pasta.mkdir(parents=True, exist_ok=True)
    plan: list[GradingTask] = []
    rows: list[Row] = []
    fora: list[tuple] = []
    com_notebook: set[str] = set()
    vistos: Counter = Counter()  # (aluno, é notebook) -> arquivos olhados
    demais: dict[tuple[str, bool], list[str]] = {}  # (aluno, é notebook) -> os caminhos além do orçamento
    for k, a in enumerate(ent.arquivos):
        if alunos is not None and a.aluno not in alunos:
            continue
        chave = (a.aluno, a.looks_like_notebook)
        vistos[chave] += 1
        if a.aluno and a.looks_like_notebook:
            com_notebook.add(a.aluno)
        if a.aluno and vistos[chave] > max_files:
            demais.setdefault(chave, []).append(a.caminho)
            continue
        if not a.looks_like_notebook:
            fora.append((a.aluno, a.caminho, a.motivo or "não é um notebook (.ipynb): não foi corrigido"))
            continue
        t0 = time.monotonic()
        try:
            with _deadline(READ_TIMEOUT_S):
                item = _plan_one(k, a, everything, pasta)
        except _SlowRead:
            item = failed_row(a.aluno, None, base_name(a.nome), "grande_demais",
                              f"a leitura e o saneamento de “{a.caminho}” passaram de {READ_TIMEOUT_S:.0f} s: "
                              "não foi corrigido (notebook grande ou complexo demais)", arquivo=a.caminho)
        except Exception as exc:  # noqa: BLE001 - um notebook que a leitura não previu não derruba a turma
            item = failed_row(a.aluno, None, base_name(a.nome), "arquivo_invalido", _unreadable(a, exc),
                              arquivo=a.caminho)
        if isinstance(item, GradingTask):
            item.segundos_leitura = time.monotonic() - t0
            plan.append(item)
        else:
            rows.append(item)
    plan, rows = _limit_copies(plan, rows, politica.max_copies)
    for (aluno, notebook), caminhos in sorted(demais.items()):
        exemplos = ", ".join(f"“{c}”" for c in caminhos[:3]) + (", ..." if len(caminhos) > 3 else "")
        tipo = "notebooks" if notebook else "outros arquivos"
        motivo = (f"o aluno entregou {max_files + len(caminhos)} {tipo}; só os {max_files} "
                  f"primeiros (pela ordem do caminho) foram olhados, e os outros {len(caminhos)} não foram lidos nem "
                  f"corrigidos ({exemplos}): entregue só os notebooks do curso")
        if notebook:
            rows.append(failed_row(aluno, None, "", "arquivos_demais", motivo,
                                   arquivo=f"({len(caminhos)} arquivos além do limite)"))
        else:
            fora.append((aluno, f"({len(caminhos)} arquivos além do limite)", motivo))
    for nome in ent.inseguros if alunos is None or "" in alunos else ():
        fora.append(("", nome, "caminho que sairia da pasta das entregas (..): não foi lido"))
    for aluno in ent.alunos:
        if aluno not in com_notebook and (alunos is None or aluno in alunos):
            tem = [a.caminho for a in ent.arquivos if a.aluno == aluno]
            rows.append(failed_row(aluno, None, "", "sem_notebooks", "nenhum notebook (.ipynb) na pasta"
                                   + (f" (há: {', '.join(tem[:5])}{'...' if len(tem) > 5 else ''})" if tem else "")))
    return plan, rows, fora


# os padrões da política (correcao.politica), com os nomes de antes: cópias do mesmo notebook corrigidas por aluno (a
# entrega e duas reentregas) e notebooks (e, à parte, outros arquivos) olhados por aluno (as 3 cópias de cada um dos 10
# notebooks do curso, com folga; o resto vira uma linha ``arquivos_demais`` só, nunca uma linha e um retorno para cada)
MAX_COPIES = GradingPolicy.max_copies
MAX_FILES_PER_STUDENT = GradingPolicy.max_files_per_student


def _limit_copies(plan: list[GradingTask], rows: list[Row],
                  max_copies: int = MAX_COPIES) -> tuple[list[GradingTask], list[Row]]:
    """Corrige no máximo ``max_copies`` cópias do mesmo notebook de cada aluno (as primeiras, na ordem do
    plano: a do caminho mais curto primeiro, e por último as que vieram do zip de outro aluno); as outras viram
    linhas ``copias_demais``, sem pontos. Sem isso, um aluno com 40 cópias renomeadas de um notebook que dorme
    ocupava a correção da turma por horas (cada cópia gasta o orçamento inteiro do notebook)."""
    from collections import Counter

    quantas = Counter((e.student, e.g.assignment, e.g.notebook) for e in plan)
    vistas: Counter = Counter()
    mantidas = set()
    # as cópias que vieram do zip de outro aluno (bob.zip/... na linha da ana) vão para o fim da fila: as plantadas
    # nunca tiram da correção a do próprio aluno
    for e in sorted(plan, key=lambda e: _from_another_zip(e.student, e.arquivo)):
        chave = (e.student, e.g.assignment, e.g.notebook)
        vistas[chave] += 1
        if vistas[chave] <= max_copies:
            mantidas.add(id(e))
            continue
        rows.append(failed_row(e.student, e.g, e.g.notebook, "copias_demais",
                               f"o aluno entregou {quantas[chave]} cópias deste notebook e só as {max_copies} "
                               "primeiras (pela ordem do caminho) são corrigidas: esta não foi, e vale 0 (apague as "
                               "cópias que não valem e entregue de novo)", arquivo=e.arquivo))
    return [e for e in plan if id(e) in mantidas], rows


def _from_another_zip(aluno: str, arquivo: str) -> bool:
    """O caminho ``arquivo`` começa pelo zip de outro aluno (``bob.zip/...`` numa linha da ana)."""
    primeiro = arquivo.split("/", 1)[0]
    return ("/" in arquivo and primeiro.lower().endswith(".zip")
            and same_student_name(primeiro[:-4]) != same_student_name(aluno))


def _unreadable(a, exc: Exception) -> str:
    """O motivo de um notebook em JSON válido que a leitura e o saneamento não conseguiram arrumar (células ou
    metadados de tipos inesperados): a estrutura que o nbformat recusa, se for o caso, e o tipo do erro."""
    estrutura = None
    with contextlib.suppress(Exception):
        nb, _ = read_notebook(a.dados.read_bytes())
        estrutura = inspect_notebook(nb) if nb is not None else None
    return (f"“{a.caminho}” não pôde ser arrumado para a correção ({estrutura or 'conteúdo de tipo inesperado'}; "
            f"{type(exc).__name__}): não foi corrigido (abra-o no JupyterLab, salve e entregue de novo)")


class _SlowRead(Exception):
    """A leitura e o saneamento de uma entrega passaram do limite de tempo."""


@contextlib.contextmanager
def _deadline(segundos: float):
    """Interrompe o bloco com :class:`_SlowRead` depois de ``segundos`` (SIGALRM; só na thread
    principal, onde a correção da turma roda; em outra thread, os limites de tamanho e de células bastam)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise _SlowRead

    anterior = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, segundos)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, anterior)


def _plan_one(k: int, a, everything: dict, pasta: Path):
    """Uma entrega: a :class:`GradingTask` arrumada para corrigir, ou a :class:`Row` que diz por que não."""
    dados = None if (a.motivo or a.dados is None) else a.dados.read_bytes()
    excesso = too_large(len(dados)) if dados is not None else None
    if excesso:
        return failed_row(a.aluno, None, base_name(a.nome), "grande_demais", excesso, arquivo=a.caminho)
    nb, problema = (None, a.motivo) if dados is None else read_notebook(dados)
    excesso = too_large(len(dados), nb) if nb is not None else None
    if excesso:
        return failed_row(a.aluno, None, base_name(a.nome), "grande_demais", excesso, arquivo=a.caminho)
    versao = recognize_version(nb, everything) if problema is None else None
    if versao is not None:  # uma versão anterior do curso: os ids antigos viram os de hoje
        nb = translate_ids(nb, versao)
    g, nota = identify_notebook(everything, nb, a.caminho)
    if g is None or (versao is not None and (g.assignment, g.notebook) != (versao.aula, versao.notebook)):
        versao = None
    rotulo = g.notebook if g else base_name(a.nome)
    if not a.aluno:
        return failed_row("", g, rotulo, "fora_de_pasta",
                          f"“{a.caminho}” está solto na raiz das entregas, fora da pasta de um aluno: não foi "
                          "corrigido (ponha-o em <aluno>/ e corrija de novo)", arquivo=a.caminho)
    if problema is None and g is not None:
        problema = inspect_notebook(nb)
    if problema:
        return failed_row(a.aluno, g, rotulo, "arquivo_invalido", problema, arquivo=a.caminho)
    if g is None:
        return failed_row(a.aluno, None, rotulo, "desconhecido",
                          f"“{a.caminho}” não é um notebook de exercício ou projeto do curso", arquivo=a.caminho)
    ausentes = [gid for gid in g.checks if gid not in versao.verificacoes] if versao else []
    copiadas = copied_from_solutions(nb, g)
    arrumado, notas = sanitize(nb, g, everything, versao=versao)
    if versao is not None:
        notas.insert(0, version_note(versao, ausentes))
    em_branco = blank_answers(arrumado, g)
    if em_branco:
        notas.append(f"{len(em_branco)} resposta(s) escrita(s) ainda com o esboço ✍️ (valem 0 na correção do "
                     f"professor): {', '.join(gid for gid, _, _ in em_branco)}")
    path = pasta / f"e{k:05d}.ipynb"
    path.write_text(json.dumps(arrumado, ensure_ascii=False), encoding="utf-8")
    return GradingTask(a.aluno, f"e{k:05d}", g, path, a.caminho, ([nota] if nota else []) + notas, ausentes=ausentes,
                       versao=f"versão anterior do curso ({versao.descricao})" if versao else "", copiadas=copiadas)


def _mark_copies(rows: list[Row]) -> None:
    """Duas cópias do mesmo notebook na entrega de um aluno: cada uma tem a sua linha (coluna ``arquivo``) e
    a nota diz quais são as outras; o professor decide qual vale."""
    grupos: dict[tuple, list[Row]] = {}
    for r in rows:
        if r.assignment:
            grupos.setdefault((r.student, r.assignment, r.notebook), []).append(r)
    for grupo in grupos.values():
        if len(grupo) > 1:
            for r in grupo:
                outras = sorted(o.arquivo for o in grupo if o is not r)
                # o mesmo caminho duas vezes: no original, o nome estava escrito de dois jeitos (NFC e NFD, \ e /)
                mesmo = ("; o mesmo nome escrito de dois jeitos no original, como acentos compostos e decompostos "
                         "(NFC/NFD)" if r.arquivo in outras else "")
                r.reasons.append(f"o aluno entregou {len(grupo)} cópias deste notebook (esta: “{r.arquivo}”; "
                                 f"outras: {', '.join(f'“{x}”' for x in outras)}{mesmo}): o professor decide qual vale")


_WORKER: Worker | None = None  # um por processo de correção
BUDGET_MARGIN_S = 5.0  # depois do orçamento, o processo de correção inteiro é morto (SIGKILL)


def _grading_process(conn, tmp: Path, politica: GradingPolicy, marca: str, k: int, mpl: Path) -> None:
    """Um processo de correção: importa o nbgrader, recebe a lista de :class:`Gradable` da turma (ou ``None``:
    não há o que corrigir), monta o seu curso nbgrader e as suas caixas, avisa ``("pronto", None)`` e corrige cada
    :class:`GradingTask` recebida (responde ``("linha", (row, segundos))``) até receber ``None``."""
    global _WORKER
    try:
        from . import _preprocessador  # noqa: F401 - o nbgrader, enquanto o processo principal planeja a turma

        gradables = conn.recv()
        if gradables is None:
            os._exit(0)
        _WORKER = Worker(tmp / f"processo-{k}", gradables, k, politica, marca)
        _WORKER.mpl_cache = mpl
    except Exception as exc:  # noqa: BLE001 - o processo principal mostra o erro
        conn.send(("erro", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("pronto", None))
    while True:
        item = conn.recv()
        if item is None:  # sem a faxina do interpretador (~0,5 s): o processo principal encerra caixas e cgroups
            os._exit(0)
        conn.send(("linha", _task(item)))


def _timed_out(row: Row) -> bool:
    """Tempo esgotado que pode ter sido da máquina, e não do aluno: o log diz isso (:func:`_busy_machine_note`), mas
    a entrega não é corrigida de novo (as medidas não separam um notebook que dorme de um que esperou pela CPU, e
    cada recorreção custaria outro orçamento inteiro).

    Só quando há as duas medidas e as duas apontam a máquina: as caixas do notebook usaram menos da metade
    do tempo em CPU (um laço infinito de verdade usa quase todo) **e** outros processos ocuparam pelo menos
    meio núcleo no mesmo período (CPU disputada). Nunca quando o tempo foi do aluno (``row.tempo_do_aluno``:
    um kernel que ignorou a interrupção, saída cortada por excesso, memória do notebook esgotada), nem sem
    medida."""
    esgotou = row.status == "tempo_esgotado" or any("tempo esgotado" in r for r in row.reasons)
    return (esgotou and not row.tempo_do_aluno and row.cpu_ratio is not None and row.cpu_ratio < 0.5
            and row.cpu_others is not None and row.cpu_others >= 0.5)


def _task(e: GradingTask) -> tuple[Row, float]:
    t0 = time.perf_counter()
    try:
        row = grade_one(_WORKER, e)
        t_html = time.perf_counter()
        if row.autograded and row.autograded.exists():  # o HTML do retorno, aqui: os processos rodam em paralelo
            row.corpo = notebook_body(row.autograded)
        if _WORKER.tempos is not None:
            _WORKER.tempos["nota"] = t_html - t0
            _WORKER.tempos["retorno_html"] = time.perf_counter() - t_html
    except Exception as exc:  # noqa: BLE001 - uma entrega nunca derruba a correção da turma
        row = failed_row(e.student, e.g, e.g.notebook, "erro_na_correcao",
                         f"erro interno da correção ({type(exc).__name__})", arquivo=e.arquivo)
    return row, time.perf_counter() - t0


def _grade_parallel(pool: _GradingPool, plan: list, workers: int) -> list[Row]:
    """Corrige o plano (na mesma ordem) em ``workers`` processos de ``pool`` (cada um com o seu curso nbgrader,
    que muda de pasta e de variáveis de ambiente durante a correção: por isso processos, e não threads); os que
    já foram começados contam. Quem chama encerra ``pool``.

    Cada notebook tem um orçamento de ``notebook_timeout`` s contado daqui, do envio ao processo de correção
    até a linha voltar (o processo já pronto: montar o curso nbgrader não conta). Dentro dele, o
    :class:`correcao.isolamento.NotebookBudget` mata as caixas no prazo; se ainda assim a linha não volta até
    ``notebook_timeout`` + :data:`BUDGET_MARGIN_S`, o processo de correção inteiro morre (SIGKILL), com as
    caixas e os cgroups dele, a linha diz ``tempo_esgotado`` e outro processo assume o resto."""
    if not plan:
        return []
    quantos = max(1, min(workers, len(plan)))
    pool.start(plan, quantos)
    while len(pool.estado) < quantos:
        pool.start_worker()
    while pool.busy():
        pool.dispatch()
        pool.collect()
        pool.kill_overdue()
    return pool.rows


class _GradingPool:
    """Os processos de correção de :func:`_grade_parallel`: cada um recebe uma entrega por vez; o estado de cada
    um (por conexão) é ``{"proc", "k", "pronto", "tarefa", "t0"}``."""

    def __init__(self, tmp: Path, politica: GradingPolicy, marca: str, log, mpl: Path | None = None):
        import multiprocessing
        from collections import deque

        self.tmp, self.politica, self.marca, self.log = tmp, politica, marca, log
        self.notebook_timeout, self.isolar = politica.notebook_timeout, politica.isolate
        self.plan: list = []
        self.gradables: list | None = None  # None até start(): os processos começados antes esperam a lista
        self.ctx = multiprocessing.get_context("spawn")
        # o cache de fontes é feito ao lado (outro processo); o primeiro notebook espera por ele (dispatch)
        self.mpl, self._mpl_proc = (mpl, None) if mpl is not None else _start_matplotlib_cache(tmp)
        self.rows: list = []
        self.pendentes = deque()
        self.estado: dict = {}  # conexão -> {"proc", "k", "pronto", "tarefa", "t0"}
        self.proximo = 0
        self.limite_duro = politica.notebook_timeout + BUDGET_MARGIN_S

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

    def busy(self) -> bool:
        return bool(self.pendentes) or any(st["tarefa"] is not None for st in self.estado.values())

    def start_worker(self) -> None:
        a, b = self.ctx.Pipe()
        k = self.proximo
        self.proximo += 1
        proc = self.ctx.Process(target=_grading_process, daemon=True,
                                args=(b, self.tmp, self.politica, self.marca, k, self.mpl))
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
        for numero in _box_numbers(st["k"]):  # as três caixas dele, e não as de outro processo ainda corrigindo
            kill_sandbox(f"{self.marca}.{numero}")
        remove_cgroups(f"{self.marca}-p{st['k']}-")

    def replace(self, conn) -> None:
        """Encerra o processo de ``conn`` e, se ainda há entregas, começa outro no lugar dele."""
        self.finish(conn)
        if self.pendentes:
            self.start_worker()

    def record(self, k: int, row: Row, seconds: float) -> None:
        self.log(f"  {row.student} · {row.notebook}: {format_number(row.total)}/{format_number(row.maximum)} "
                 f"{row.status} ({seconds:.1f} s)")
        self.rows[k] = row

    def dispatch(self) -> None:
        """Uma entrega para cada processo pronto e livre."""
        for conn, st in self.estado.items():
            if st["pronto"] and st["tarefa"] is None and self.pendentes:
                _wait_matplotlib_cache(self._mpl_proc)  # antes do orçamento do notebook (t0)
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
                                                 "o processo de correção parou", arquivo=e.arquivo),
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
                                 arquivo=e.arquivo)
                row.isolation = "bwrap" if self.isolar else "sem_isolamento"  # o grupo morreu junto com o processo
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
