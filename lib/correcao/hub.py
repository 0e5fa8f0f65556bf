"""A turma no JupyterHub: liberar uma aula pelo exchange do nbgrader, coletar, corrigir com a caixa do curso,
gravar as notas no gradebook do nbgrader e devolver o retorno pelo exchange (``python3 curso.py turma ...``).

O ``nbgrader autograde`` executaria o código de cada aluno como o professor, fora de qualquer caixa; aqui a
correção é a do curso (:func:`correcao.motor.grade_class`: cada entrega numa caixa do bubblewrap) e o nbgrader
só guarda as notas e leva os arquivos. Na configuração do professor do hub
(``hub/etc/professor/nbgrader_config.py``), :class:`RefuseAutogradeExporter` (o exportador do ``autograde``) e
:class:`RefuseExecution` (no lugar da execução): o botão "Autograde" do Formgrader e o ``nbgrader autograde``
param com uma mensagem que aponta este comando, sem apagar nada. Para a correção manual das respostas escritas
no Formgrader, :func:`grade` deixa cada notebook entregue em ``autograded/`` (sem executá-lo).

Prazos: :func:`parse_deadline` lê o prazo com o fuso (``-0300``, ``-03:00``, ``America/Sao_Paulo``, ``UTC``);
o ``nbgrader.utils.parse_utc`` lia ``-0300`` como segundos.

Um só máximo: o da tarefa no gradebook do nbgrader (verificações automáticas mais as respostas escritas, que o
professor corrige no Formgrader). Ele aparece igual na coluna ``maximo`` de ``notas.csv``, em
``turma-<aula>.csv`` e no retorno.

Fonte: a documentação do nbgrader ("Exchanging assignment files", "Using nbgrader with JupyterHub",
"nbgrader.api: Gradebook", ``release_feedback``) e o código do nbgrader 0.9 (``converters/autograde.py``,
``converters/base.py``, ``apps/api.py``: ``get_notebook_submissions``, ``get_autograded_students``;
``exchange/abc/exchange.py``: o formato do ``timestamp.txt``).
"""

from __future__ import annotations

import csv
import dataclasses
import html
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from correcao.saida import GRADES_CSV, ROSTER_CSV

ROOT = Path(__file__).resolve().parents[2]
# Arquivos que o próprio exchange põe em cada entrega (nunca são do aluno, nunca são "não corrigidos")
EXCHANGE_FILES = frozenset({"timestamp.txt", "submission_secret.txt"})


AUTOGRADE_RECUSADO = ("neste curso, o nbgrader autograde está desligado: ele executaria o código do aluno como o "
                      "professor, sem isolamento. Use `python3 curso.py turma corrigir AULA`, que corrige cada "
                      "entrega numa caixa e grava as notas no gradebook")


class RefuseExecution(Preprocessor):
    """Em ``c.Autograde.autograde_preprocessors`` da configuração do professor: recusa executar as entregas
    fora da caixa (o ``nbgrader autograde`` rodaria o código do aluno como o professor).

    ``enabled`` é ``True`` por padrão: o nbconvert instancia os pré-processadores registrados por classe com
    ``enabled=False`` herdado de :class:`Preprocessor`, e um pré-processador desligado devolve o notebook sem
    chamar :meth:`preprocess` (o Autograde "dava certo" sem rodar nada e sem mensagem).

    Raises
    ------
    RuntimeError
        Sempre, em :meth:`preprocess`, com :data:`AUTOGRADE_RECUSADO`.
    """

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        raise RuntimeError(AUTOGRADE_RECUSADO)


class RefuseAutogradeExporter(NotebookExporter):
    """Em ``c.Autograde.exporter_class`` da configuração do professor: o ``nbgrader autograde`` (e o botão
    "Autograde" do Formgrader) cria o exportador antes de tocar em qualquer pasta; criá-lo falha com
    :data:`AUTOGRADE_RECUSADO`. Sem isto, o autograde com ``force`` (o do Formgrader) apagaria
    ``autograded/<aluno>/<aula>/`` (os notebooks que ``turma corrigir`` escreve para a correção manual) antes de
    chegar a :class:`RefuseExecution`.

    Raises
    ------
    RuntimeError
        Sempre, ao ser criado, com :data:`AUTOGRADE_RECUSADO`.
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError(AUTOGRADE_RECUSADO)


@dataclass
class HubCourse:
    """A pasta do curso do professor no nbgrader (``source/``, ``release/``, ``submitted/``, ``feedback/``,
    ``gradebook.db``), o id do curso e a raiz do exchange."""

    pasta: Path
    curso_id: str = "atencao"
    exchange: str = "/srv/nbgrader/exchange"

    def api(self):
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config

        c = Config()
        c.CourseDirectory.root = str(Path(self.pasta).resolve())
        c.CourseDirectory.course_id = self.curso_id
        c.Exchange.root = self.exchange
        c.Exchange.path_includes_course = True
        return NbGraderAPI(coursedir=CourseDirectory(config=c), config=c)

    @property
    def db_url(self) -> str:
        return f"sqlite:///{Path(self.pasta).resolve() / 'gradebook.db'}"


def _ok(resultado: dict, o_que: str) -> None:
    if not resultado.get("success"):
        erro = (resultado.get("error") or resultado.get("log") or "").strip().splitlines()
        raise RuntimeError(f"{o_que} falhou no nbgrader: {erro[-1] if erro else 'sem mensagem'}")


def _aula(aula: str):
    from correcao.catalogo import catalog

    tudo = catalog()
    notebooks = {g.notebook: g for (a, _), g in tudo.items() if a == aula}
    if not notebooks:
        aulas = sorted({a for a, _ in tudo})
        raise ValueError(f"AULA: esperada uma de {aulas}, recebido {aula!r}")
    return notebooks


def assignment_max_points(g) -> float:
    """O máximo de um notebook: os pontos das verificações automáticas mais os das respostas escritas (o mesmo
    ``max_score`` que o gradebook do nbgrader calcula das células de ``source/``)."""
    return sum(p for _, p, _ in g.cells.values())


PRAZO_EXEMPLOS = ('"2026-03-10 23:59 -0300", "2026-03-10 23:59 -03:00", "2026-03-10 23:59 America/Sao_Paulo", '
                  '"2026-03-11 02:59 UTC", "2026-03-11T02:59Z" ou "10/03/2026 23:59 -0300"')
_PRAZO = re.compile(r"\s*(?P<data>\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4})(?:\s+|T)"
                    r"(?P<hora>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?P<fuso>.*?)\s*")
_DESLOCAMENTO = re.compile(r"(?P<sinal>[+-])(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?")


def _zone(fuso: str):
    """O fuso de um texto: ``-0300``, ``-03:00``, ``-03`` ou ``-3`` (o deslocamento da ISO 8601, negativo a oeste
    de UTC), ``UTC``, ``GMT`` ou ``Z``, ou um nome da base de fusos da IANA (``America/Sao_Paulo``, lido pelo
    :mod:`zoneinfo`). ``None`` se o texto for vazio; ``ValueError`` (só o motivo) se não for um fuso."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not fuso:
        return None
    m = _DESLOCAMENTO.fullmatch(fuso)
    if m:
        h, mi = int(m["h"]), int(m["m"] or 0)
        if h > 14 or mi > 59:
            raise ValueError(f"deslocamento {fuso!r} fora de -14:00 a +14:00")
        return timezone((-1 if m["sinal"] == "-" else 1) * timedelta(hours=h, minutes=mi))
    if fuso.upper() in ("Z", "UTC", "GMT"):
        return timezone.utc
    try:
        return ZoneInfo(fuso)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"fuso desconhecido {fuso!r} (use o deslocamento, como -0300, ou um nome da base da "
                         "IANA, como America/Sao_Paulo; siglas como BRT não valem)") from None


def parse_deadline(texto: str, argumento: str = "--prazo") -> datetime:
    """O prazo que o professor digita, como um ``datetime`` com fuso (o fuso digitado; ``.astimezone(UTC)`` dá
    o instante que o gradebook do nbgrader guarda).

    Aceita a data ``AAAA-MM-DD`` (ou ``DD/MM/AAAA``), a hora ``HH:MM[:SS]`` e o fuso: ``-0300``, ``-03:00``,
    ``-03``, ``-3``, ``UTC``/``GMT``/``Z`` ou um nome da IANA (``America/Sao_Paulo``); exemplos em
    :data:`PRAZO_EXEMPLOS`. O deslocamento é o da ISO 8601 (``-0300`` = três horas a oeste de UTC): o
    ``nbgrader.utils.parse_utc`` lia ``-0300`` como -300 *segundos* e guardava ``23:59 -0300`` como 00:04 UTC.

    Uma hora sem fuso é recusada: "23:59" sozinho seria o fuso da máquina do hub (em geral UTC num servidor,
    três horas antes do que um professor no Brasil quis dizer) e o erro só apareceria nas entregas marcadas
    como atrasadas; pedir o fuso custa uma palavra.

    Raises
    ------
    ValueError
        Texto que não é um prazo, hora sem fuso, fuso desconhecido, data ou hora que não existem (também a hora
        pulada na mudança para o horário de verão): a mensagem nomeia ``argumento``, o valor recebido e os
        formatos aceitos.
    """
    def erro(motivo: str) -> ValueError:
        return ValueError(f"{argumento}: {motivo}; recebido {texto!r}. Formatos aceitos, por exemplo: "
                          f"{PRAZO_EXEMPLOS}")

    m = _PRAZO.fullmatch(str(texto))
    if not m:
        raise erro("esperada uma data e hora com fuso")
    try:
        fuso = _zone(m["fuso"])
    except ValueError as exc:
        raise erro(str(exc)) from None
    if fuso is None:
        raise erro("falta o fuso (a hora sozinha seria a do relógio do servidor, em geral UTC); acrescente, por "
                   "exemplo, -0300 ou America/Sao_Paulo")
    data = m["data"]
    if "/" in data:
        d, mes, a = data.split("/")
        data = f"{a}-{int(mes):02d}-{int(d):02d}"
    hora = m["hora"] if len(m["hora"].split(":")[0]) == 2 else "0" + m["hora"]
    try:
        local = datetime.fromisoformat(f"{data}T{hora}")
    except ValueError:
        raise erro("essa data ou hora não existe") from None
    quando = local.replace(tzinfo=fuso)
    if quando.astimezone(timezone.utc).astimezone(fuso).replace(tzinfo=None) != local:
        raise erro("essa hora não existe nesse fuso (é pulada na mudança para o horário de verão)")
    return quando


def describe_deadline(quando: datetime) -> str:
    """O prazo no fuso em que foi digitado e em UTC: ``2026-03-10 23:59 (-03:00, America/Sao_Paulo) =
    2026-03-11 02:59 UTC``."""
    deslocamento = quando.strftime("%z")
    deslocamento = f"{deslocamento[:3]}:{deslocamento[3:5]}"
    nome = getattr(quando.tzinfo, "key", None)
    if not quando.utcoffset():
        fuso = "UTC"
    else:
        fuso = f"{deslocamento}, {nome}" if nome else deslocamento
    utc = quando.astimezone(timezone.utc)
    return f"{quando:%Y-%m-%d %H:%M} ({fuso}) = {utc:%Y-%m-%d %H:%M} UTC"


def parse_submission_timestamp(texto: str) -> datetime:
    """O horário de uma entrega (o ``timestamp.txt`` que o exchange do nbgrader grava), em UTC sem fuso, como o
    gradebook guarda.

    O exchange grava ``datetime.now(Exchange.timezone).strftime(Exchange.timestamp_format)``; com os padrões
    (``UTC`` e ``"%Y-%m-%d %H:%M:%S.%f %Z"``), ``2026-03-11 01:59:00.000000 UTC``. Com outro
    ``Exchange.timezone``, o ``%Z`` vira ``-03`` (``America/Sao_Paulo``), e um ``timestamp_format`` com ``%z``
    dá ``-0300``: ``nbgrader.utils.parse_utc`` lê os dois como segundos; aqui são horas (ISO 8601). Sem fuso,
    o horário é UTC (a convenção do nbgrader).

    Raises
    ------
    ValueError
        Texto que não é um horário, ou fuso desconhecido (a mensagem diz o texto recebido).
    """
    m = re.fullmatch(r"\s*(?P<quando>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?P<fuso>.*?)\s*",
                     str(texto))
    if not m:
        raise ValueError(f"timestamp.txt: esperado um horário como '2026-03-11 01:59:00.000000 UTC', recebido "
                         f"{texto!r}")
    try:
        fuso = _zone(m["fuso"]) or timezone.utc
    except ValueError as exc:
        from dateutil.tz import gettz  # siglas da base de fusos (EST, CET...), como o nbgrader as lê

        fuso = gettz(m["fuso"]) if re.fullmatch(r"[A-Za-z]{2,6}", m["fuso"]) else None
        if fuso is None:
            raise ValueError(f"timestamp.txt: {exc}; recebido {texto!r}") from None
    quando = datetime.fromisoformat(m["quando"].replace(" ", "T")).replace(tzinfo=fuso)
    return quando.astimezone(timezone.utc).replace(tzinfo=None)


def release(turma: HubCourse, aula: str, notebooks: list[str] | None = None,
            prazo: str | datetime | None = None, log=print) -> list[str]:
    """Libera ``aula`` pelo exchange: as soluções vão para ``source/``, o ``generate_assignment`` do nbgrader
    registra as células de nota no gradebook, e os notebooks de aluno do curso (os de ``notebooks/``, os mesmos
    do ``make lab``) são os liberados. ``prazo`` é o prazo da tarefa no gradebook (o Formgrader o mostra e
    muda): um texto lido por :func:`parse_deadline` (``"2026-03-10 23:59 -0300"``,
    ``"2026-03-10 23:59 America/Sao_Paulo"``...) ou um ``datetime`` com fuso; o gradebook guarda o instante em
    UTC, e ``log`` o mostra no fuso digitado e em UTC. Devolve os notebooks liberados.

    Raises
    ------
    ValueError
        Prazo inválido ou sem fuso (antes de qualquer coisa ser liberada), aula ou notebook que não são do
        curso.
    RuntimeError
        Se o nbgrader falhar (a mensagem dele vem junto).
    """
    if isinstance(prazo, datetime):
        if prazo.utcoffset() is None:
            raise ValueError(f"prazo: esperado um datetime com fuso, recebido {prazo!r} (sem fuso)")
        quando = prazo
    elif prazo is not None:
        quando = parse_deadline(prazo)
    else:
        quando = None
    todos = _aula(aula)
    nomes = notebooks or sorted(todos)
    desconhecidos = [n for n in nomes if n not in todos]
    if desconhecidos:
        raise ValueError(f"notebooks: esperados alguns de {sorted(todos)}, recebidos {desconhecidos}")
    pasta = Path(turma.pasta)
    origem = pasta / "source" / aula
    origem.mkdir(parents=True, exist_ok=True)
    for n in nomes:
        shutil.copy(todos[n].source, origem / f"{n}.ipynb")
    api = turma.api()
    _ok(api.generate_assignment(aula, force=True, create=True), "generate_assignment")
    release = pasta / "release" / aula
    for n in nomes:  # o notebook do aluno do curso (gerado das soluções por make alunos), com as saídas dele
        aluno = ROOT / "notebooks" / todos[n].source.relative_to(ROOT / "solutions")
        shutil.copy(aluno, release / f"{n}.ipynb")
    if quando is not None:
        from nbgrader.api import Gradebook

        with Gradebook(turma.db_url, turma.curso_id) as gb:  # o nbgrader guarda o instante em UTC, sem fuso
            gb.update_or_create_assignment(aula, duedate=quando.astimezone(timezone.utc).replace(tzinfo=None))
    _ok(api.release_assignment(aula), "release_assignment")
    log(f"{aula}: {', '.join(nomes)} liberado(s) no exchange ({turma.exchange}/{turma.curso_id}/outbound)")
    if quando is not None:
        log(f"{aula}: prazo {describe_deadline(quando)}")
    return nomes


def _entregas(submitted: Path, aula: str, destino: Path) -> dict[str, dict]:
    """Copia ``submitted/<aluno>/<aula>/`` para ``destino/<aluno>/<aula>/`` sem os arquivos do exchange e devolve,
    por aluno, o horário da entrega (``timestamp.txt``) e a pasta coletada."""
    alunos = {}
    for pasta in sorted(submitted.glob(f"*/{aula}")):
        aluno = pasta.parent.name
        for arq in sorted(pasta.rglob("*")):
            rel = arq.relative_to(pasta)
            if arq.is_file() and not arq.is_symlink() and str(rel) not in EXCHANGE_FILES:
                alvo = destino / aluno / aula / rel
                alvo.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(arq, alvo)
        quando = pasta / "timestamp.txt"
        alunos[aluno] = {"pasta": pasta, "timestamp": quando.read_text().strip() if quando.exists() else None}
    return alunos


def _atraso(segundos: float) -> str:
    if segundos <= 0:
        return ""
    h, resto = divmod(int(round(segundos)), 3600)
    m, s = divmod(resto, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


def grade(turma: HubCourse, aula: str, saida: Path | None = None, log=print, politica=None, **kwargs) -> list:
    """Coleta as entregas de ``aula`` (``nbgrader collect``), corrige cada uma na caixa do curso
    (:func:`correcao.motor.grade_class`, com a ``politica`` da correção, :class:`correcao.politica.GradingPolicy`,
    montada uma vez aqui: sem ela, a padrão, com os ``kwargs`` de nome antigo por cima; os outros ``kwargs`` vão
    para ela), grava as notas das verificações no gradebook (a melhor cópia, quando o aluno entregou duas do mesmo
    notebook) e devolve o retorno em pt-BR pelo exchange
    (``release_feedback``).

    As respostas escritas ficam para o Formgrader (*Manual Grading*): o notebook entregue vai para
    ``autograded/<aluno>/<aula>/<notebook>.ipynb`` como o ``nbgrader autograde`` o deixaria antes de executá-lo
    (saídas apagadas, células de nota e travadas restauradas do gradebook: :func:`_autograded`), com o
    ``timestamp.txt``, e cada resposta escrita fica sem nota automática e marcada para correção manual (como o
    ``SaveAutoGrades`` do nbgrader). O horário da entrega vem de :func:`parse_submission_timestamp`.

    Escreve em ``saida`` (padrão ``<pasta do curso>/correcao/<aula>``) ``notas.csv`` (com ``maximo`` = o
    máximo da tarefa), ``turma-<aula>.csv`` (uma linha por aluno e notebook liberado: entregue em, atraso em
    segundos pelo prazo do gradebook, total automático, máximo, situação; os alunos conhecidos que não
    entregaram, os do gradebook e os de ``$CURSO_HUB_ALUNOS``, separados por vírgula, entram com 0 e a
    situação ``sem entrega``) e os retornos. Devolve as linhas de :class:`Row`.

    Raises
    ------
    ValueError
        Aula que não é do curso, ou que não foi liberada (não está no gradebook).
    RuntimeError
        Se o nbgrader falhar ao coletar ou ao devolver o retorno.
    """
    from nbgrader.api import Gradebook, MissingEntry

    from correcao.motor import grade_class
    from correcao.politica import LEGACY_NAMES, GradingPolicy
    from correcao.relatorio import CSV_FIXED, CSV_TAIL

    politica = GradingPolicy.build(politica, **{k: kwargs.pop(k) for k in list(kwargs) if k in LEGACY_NAMES})

    gs = _aula(aula)
    pasta = Path(turma.pasta).resolve()
    saida = Path(saida or pasta / "correcao" / aula).resolve()
    api = turma.api()
    _ok(api.collect(aula, update=True), "collect")
    with tempfile.TemporaryDirectory(prefix="turma-") as tmp:
        alunos = _entregas(pasta / "submitted", aula, Path(tmp) / "entregas")
        rows = grade_class(Path(tmp) / "entregas", saida, politica=politica, log=log, **kwargs) if alunos else []
    maximos = {n: assignment_max_points(g) for n, g in gs.items()}
    for r in rows:  # um só máximo: o da tarefa (automático + escrito), como no gradebook
        if r.assignment == aula and r.notebook in maximos:
            r.maximum += maximos[r.notebook] - gs[r.notebook].max_auto
    if rows:
        _reescrever_notas(rows, saida, CSV_FIXED, CSV_TAIL)
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        try:
            tarefa = gb.find_assignment(aula)
        except MissingEntry:
            raise ValueError(f"AULA: {aula!r} não está no gradebook de {turma.pasta} (libere-a antes com "
                             f"`turma liberar {aula}`)") from None
        liberados = sorted(nb.name for nb in tarefa.notebooks if nb.name in gs)
        linhas = []
        for aluno, info in alunos.items():
            linhas += _record_student(gb, turma, aula, aluno, info, rows, liberados, maximos, saida, log,
                                      gs=gs, pasta=pasta)
        ausentes = sorted(known_students(gb) - set(alunos))
        linhas += [_no_submission(aluno, nome, maximos[nome]) for aluno in ausentes for nome in liberados]
        prazo = tarefa.duedate
    _write_roster(saida, aula, linhas)
    if not alunos:
        log(f"{aula}: nenhuma entrega coletada; {len(ausentes)} aluno(s) sem entrega em {ROSTER_CSV.format(aula=aula)}")
        return []
    _ok(api.release_feedback(aula), "release_feedback")
    log(f"{aula}: {len(alunos)} aluno(s) corrigido(s), {len(ausentes)} sem entrega; notas no gradebook, "
        "retorno no exchange" + (f" (prazo {prazo:%Y-%m-%d %H:%M} UTC)" if prazo else " (sem prazo no gradebook)"))
    return rows


def _record_student(gb, turma: HubCourse, aula: str, aluno: str, info: dict, rows: list, liberados: list[str],
                    maximos: dict, saida: Path, log, *, gs: dict, pasta: Path) -> list[dict]:
    """Um aluno que entregou, no gradebook (``gb``) e no exchange: a entrega com o horário dela, as notas da melhor
    cópia de cada notebook (:func:`_save_grades`), o notebook para o Formgrader (:func:`_autograded`) e o retorno
    (:func:`_retorno`). Devolve as linhas dele em ``turma-<aula>.csv`` (os liberados que ele não entregou, com 0).
    ``gs``: os notebooks da aula (:func:`_aula`); ``pasta``: a pasta do curso, já resolvida."""
    from nbgrader.api import MissingEntry

    gb.update_or_create_student(aluno)
    quando = _submission_time(aluno, info, log)
    try:
        sub = gb.find_submission(aula, aluno)
        if quando is not None:
            sub.timestamp = quando
    except MissingEntry:
        with gb.db.no_autoflush:  # sem o SAWarning do SQLAlchemy 2 (o nbgrader faz o db.add ele mesmo)
            sub = gb.add_submission(aula, aluno, timestamp=quando)
    melhores = _best_copies(rows, aluno, aula, gs)
    _save_grades(gb, aula, aluno, liberados, melhores, gs)
    for nome in liberados:
        if nome in melhores:
            _autograded(turma, aula, aluno, nome, melhores[nome], info, log)
    atraso, linhas = sub.total_seconds_late, []
    for nome, r in sorted(melhores.items()):
        linhas.append({"aluno": aluno, "notebook": nome, "entregue_em": info["timestamp"] or "",
                       "atraso_s": f"{atraso:.0f}" if sub.timestamp else "", "total_automatico": r.total,
                       "maximo": maximos[nome], "situacao": r.status})
        _retorno(r, saida, pasta, aula, info, atraso, maximos[nome], gs[nome])
    return linhas + [_no_submission(aluno, nome, maximos[nome], info["timestamp"] or "")
                     for nome in liberados if nome not in melhores]


def _best_copies(rows: list, aluno: str, aula: str, gs: dict) -> dict:
    """A linha de maior total de cada notebook de ``aula`` que ``aluno`` entregou (duas cópias do mesmo notebook:
    vale a melhor), por nome do notebook."""
    melhores: dict = {}
    for r in rows:
        if r.student == aluno and r.assignment == aula and r.notebook in gs:
            if r.notebook not in melhores or r.total > melhores[r.notebook].total:
                melhores[r.notebook] = r
    return melhores


def _write_roster(saida: Path, aula: str, linhas: list[dict]) -> None:
    """``turma-<aula>.csv``: uma linha por aluno e notebook liberado, em ordem; nenhuma célula vira fórmula."""
    from correcao.relatorio import spreadsheet_cell

    saida.mkdir(parents=True, exist_ok=True)
    with open(saida / ROSTER_CSV.format(aula=aula), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["aluno", "notebook", "entregue_em", "atraso_s", "total_automatico",
                                          "maximo", "situacao"])
        w.writeheader()
        w.writerows({k: spreadsheet_cell(v) for k, v in x.items()}  # nenhuma célula vira fórmula (aluno "=2+3")
                    for x in sorted(linhas, key=lambda x: (x["aluno"], x["notebook"])))


def _save_grades(gb, aula: str, aluno: str, liberados: list[str], melhores: dict, gs: dict) -> None:
    """As notas de cada notebook liberado no gradebook (``gb``): as verificações com os pontos da caixa (a
    melhor cópia, ``melhores``), as respostas escritas sem nota automática e marcadas para correção manual
    (como o ``SaveAutoGrades`` do nbgrader), e um notebook não entregue com 0 (como o ``nbgrader autograde``)."""
    from nbgrader.api import MissingEntry

    for nome in liberados:
        r = melhores.get(nome)
        try:
            nb = gb.find_submission_notebook(nome, aula, aluno)
        except MissingEntry:  # entrega registrada antes de o notebook entrar na tarefa
            continue
        for grade in nb.grades:
            if r is None:
                grade.auto_score, grade.needs_manual_grade = 0.0, False
            elif grade.name in gs[nome].checks:
                grade.auto_score = float(r.scores.get(grade.name, 0.0))
                grade.needs_manual_grade = grade.name in r.em_revisao
            else:
                grade.auto_score, grade.needs_manual_grade = None, True
    gb.db.commit()


def known_students(gb) -> set[str]:
    """Os alunos do curso: os do gradebook do nbgrader (``gb``, um ``nbgrader.api.Gradebook`` aberto) e os de
    ``$CURSO_HUB_ALUNOS`` (os usuários do hub, separados por vírgula, como em ``hub/jupyterhub_config.py``)."""
    do_hub = {u.strip() for u in os.environ.get("CURSO_HUB_ALUNOS", "").split(",") if u.strip()}
    return {s.id for s in gb.students} | do_hub


def _no_submission(aluno: str, notebook: str, maximo: float, entregue_em: str = "") -> dict:
    """A linha de ``turma-<aula>.csv`` de um notebook liberado que o aluno não entregou: 0 pontos."""
    return {"aluno": aluno, "notebook": notebook, "entregue_em": entregue_em, "atraso_s": "",
            "total_automatico": 0, "maximo": maximo, "situacao": "sem entrega"}


def _submission_time(aluno: str, info: dict, log) -> datetime | None:
    """O horário da entrega em UTC (:func:`parse_submission_timestamp`), ou ``None`` (com um aviso) se o
    ``timestamp.txt`` faltar ou não for um horário: o atraso dessa entrega fica em branco, sem parar a turma.
    Avisa também quando o ``nbgrader.utils.parse_utc`` lê o mesmo texto de outro jeito (``Exchange.timezone``
    que não é UTC): o atraso aqui está certo, mas o Formgrader, que compara os dois, pode se confundir."""
    if not info["timestamp"]:
        return None
    try:
        quando = parse_submission_timestamp(info["timestamp"])
    except ValueError as exc:
        log(f"aviso: {aluno}: {exc}; o atraso desta entrega não foi calculado")
        return None
    from nbgrader.utils import parse_utc

    try:
        do_nbgrader = parse_utc(info["timestamp"])
    except (ValueError, OverflowError):
        do_nbgrader = None
    if do_nbgrader != quando:  # o Formgrader compara o horário do gradebook com o que ele lê do timestamp.txt
        log(f"aviso: {aluno}: o horário {info['timestamp']!r} não está em UTC, e o nbgrader o lê errado "
            f"({do_nbgrader}); o atraso aqui usa {quando:%Y-%m-%d %H:%M:%S} UTC, mas o Formgrader pode mostrar a "
            "entrega como não corrigida. Deixe c.Exchange.timezone = 'UTC' (o padrão) na configuração dos alunos")
    return quando


def _autograded(turma: HubCourse, aula: str, aluno: str, nome: str, r, info: dict, log) -> None:
    """O notebook entregue (a cópia que valeu, ``r.arquivo``) em ``autograded/<aluno>/<aula>/<nome>.ipynb``,
    com o ``timestamp.txt`` da entrega: é dali que o Formgrader mostra a entrega na correção manual
    (``NbGraderAPI.get_notebook_submissions`` só lista as entregas com esse arquivo). Passa pelos
    pré-processadores com que o ``nbgrader autograde`` limpa uma entrega antes de executá-la (``ClearOutput``,
    ``DeduplicateIds``, ``OverwriteKernelspec``, ``OverwriteCells``, ``CheckCellMetadata``): as saídas que o
    aluno gravou não aparecem, e as células de nota e travadas voltam a ser as do gradebook. Nada é executado.
    Um notebook que não se lê fica fora do Formgrader, com um aviso em ``log``."""
    import nbformat
    from nbgrader import preprocessors as pre

    entregue = Path(info["pasta"])
    origem = entregue.parent / r.arquivo if r.arquivo else entregue / f"{nome}.ipynb"
    if (origem.is_symlink() or not origem.is_file()
            or not origem.resolve().is_relative_to(entregue.resolve())):
        origem = entregue / f"{nome}.ipynb"
    destino = Path(turma.pasta).resolve() / "autograded" / aluno / aula
    try:
        if origem.is_symlink():
            raise ValueError("o arquivo entregue é um link simbólico")
        nb = nbformat.read(origem, as_version=4)
        recursos = {"nbgrader": {"db_url": turma.db_url, "assignment": aula, "notebook": nome, "student": aluno}}
        for passo in (pre.ClearOutput, pre.DeduplicateIds, pre.OverwriteKernelspec, pre.OverwriteCells,
                      pre.CheckCellMetadata):
            nb, recursos = passo().preprocess(nb, recursos)
    except Exception as exc:  # noqa: BLE001 — o notebook é do aluno: qualquer defeito só o tira do Formgrader
        log(f"aviso: {aluno}: {nome} não foi para a correção manual do Formgrader ({type(exc).__name__}: {exc})")
        (destino / f"{nome}.ipynb").unlink(missing_ok=True)  # nem fica a entrega anterior no lugar desta
        return
    destino.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, destino / f"{nome}.ipynb")
    if (entregue / "timestamp.txt").is_file():
        shutil.copyfile(entregue / "timestamp.txt", destino / "timestamp.txt")


def _reescrever_notas(rows, saida: Path, fixed, tail) -> None:
    """``notas.csv`` de novo, com o máximo da tarefa (as outras colunas como :func:`write_outputs` escreveu)."""
    caminho = saida / GRADES_CSV
    with open(caminho, encoding="utf-8", newline="") as f:
        leitor = csv.reader(f)
        cab = next(leitor)
    colunas = [c for c in cab if c not in fixed and c not in tail]
    with open(caminho, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cab)
        w.writeheader()
        for r in rows:
            w.writerow(r.csv(colunas))


def _retorno(r, saida: Path, pasta: Path, aula: str, info: dict, atraso: float, maximo: float, g) -> None:
    """A página de retorno do curso em ``feedback/<aluno>/<aula>/<notebook>.html``, com o máximo da tarefa e o
    atraso, e os arquivos do exchange que o ``release_feedback`` lê (a página vai para o aluno que a entregou)."""
    escritas = maximo - g.max_auto
    extra = (f'<p class="tarefa">Máximo da tarefa: {_num(maximo)} ponto(s): {_num(g.max_auto)} das verificações '
             f"automáticas e {_num(escritas)} das respostas escritas, corrigidas pelo professor no Formgrader.</p>")
    if atraso > 0:
        extra += f'<p class="atraso">Entregue com {html.escape(_atraso(atraso))} de atraso.</p>'
    # a página de novo, pela lacuna do quadro (nunca remendando o HTML pronto); a nota automática, de 0 ao máximo das
    # verificações (o de r é o da tarefa, com as respostas escritas: veja grade)
    from correcao.relatorio import feedback_html

    pagina = feedback_html(dataclasses.replace(r, maximum=r.maximum - escritas), g, assignment_notes=extra)
    (saida / r.retorno).write_text(pagina, encoding="utf-8")
    destino = pasta / "feedback" / r.student / aula
    destino.mkdir(parents=True, exist_ok=True)
    nome = Path(r.arquivo).stem if r.arquivo else r.notebook
    (destino / f"{nome}.html").write_text(pagina, encoding="utf-8")
    for arq in EXCHANGE_FILES:
        if (info["pasta"] / arq).exists():
            shutil.copyfile(info["pasta"] / arq, destino / arq)


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def gradebook_scores(turma: HubCourse, aula: str) -> dict:
    """``{aluno: {notebook: (pontos automáticos, máximo)}}`` lidos do gradebook (para o professor e os testes)."""
    from nbgrader.api import Gradebook

    out: dict = {}
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        for sub in gb.assignment_submissions(aula):
            for nb in sub.notebooks:
                out.setdefault(sub.student.id, {})[nb.name] = (nb.code_score, nb.max_score)
    return out


__all__ = ["AUTOGRADE_RECUSADO", "EXCHANGE_FILES", "PRAZO_EXEMPLOS", "HubCourse", "RefuseAutogradeExporter",
           "RefuseExecution", "assignment_max_points", "describe_deadline", "grade", "gradebook_scores",
           "known_students", "parse_deadline", "parse_submission_timestamp", "release"]
