"""A turma no JupyterHub: liberar uma aula pelo exchange do nbgrader, coletar, corrigir com a caixa do curso,
gravar as notas no gradebook do nbgrader e devolver o retorno pelo exchange (``python3 curso.py turma ...``).

O ``nbgrader autograde`` executaria o código de cada aluno como o professor, fora de qualquer caixa; aqui a
correção é a do curso (:func:`correcao.motor.grade_class`: cada entrega numa caixa do bubblewrap) e o nbgrader
só guarda as notas e leva os arquivos. :class:`RefuseExecution` é posta no lugar da execução do ``autograde``
na configuração do professor do hub (``hub/etc/professor/nbgrader_config.py``): o botão "Autograde" do
Formgrader e o ``nbgrader autograde`` param com uma mensagem que aponta este comando.

Um só máximo: o da tarefa no gradebook do nbgrader (verificações automáticas mais as respostas escritas, que o
professor corrige no Formgrader). Ele aparece igual na coluna ``maximo`` de ``notas.csv``, em
``turma-<aula>.csv`` e no retorno.

Fonte: a documentação do nbgrader ("Exchanging assignment files", "Using nbgrader with JupyterHub",
"nbgrader.api: Gradebook", ``release_feedback``).
"""

from __future__ import annotations

import csv
import html
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nbconvert.preprocessors import Preprocessor

ROOT = Path(__file__).resolve().parents[2]
# Arquivos que o próprio exchange põe em cada entrega (nunca são do aluno, nunca são "não corrigidos")
EXCHANGE_FILES = frozenset({"timestamp.txt", "submission_secret.txt"})


class RefuseExecution(Preprocessor):
    """Em ``c.Autograde.autograde_preprocessors`` da configuração do professor: recusa executar as entregas
    fora da caixa (o ``nbgrader autograde`` rodaria o código do aluno como o professor)."""

    def preprocess(self, nb, resources):
        raise RuntimeError("neste curso, o nbgrader autograde está desligado: ele executaria o código do aluno "
                           "como o professor, sem isolamento. Use `python3 curso.py turma corrigir AULA`, que "
                           "corrige cada entrega numa caixa e grava as notas no gradebook")


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


def release(turma: HubCourse, aula: str, notebooks: list[str] | None = None, prazo: str | None = None,
            log=print) -> list[str]:
    """Libera ``aula`` pelo exchange: as soluções vão para ``source/``, o ``generate_assignment`` do nbgrader
    registra as células de nota no gradebook, e os notebooks de aluno do curso (os de ``notebooks/``, os mesmos
    do ``make lab``) são os liberados. ``prazo`` (``"2026-03-10 23:59:00 -0300"``) é o prazo da tarefa no
    gradebook (o Formgrader o mostra e muda). Devolve os notebooks liberados.

    Raises
    ------
    ValueError
        Aula ou notebook que não são do curso.
    RuntimeError
        Se o nbgrader falhar (a mensagem dele vem junto).
    """
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
    if prazo:
        from nbgrader.api import Gradebook

        with Gradebook(turma.db_url, turma.curso_id) as gb:
            gb.update_or_create_assignment(aula, duedate=prazo)
    _ok(api.release_assignment(aula), "release_assignment")
    log(f"{aula}: {', '.join(nomes)} liberado(s) no exchange ({turma.exchange}/{turma.curso_id}/outbound)")
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


def grade(turma: HubCourse, aula: str, saida: Path | None = None, log=print, **kwargs) -> list:  # noqa: PLR0915 — os passos do nbgrader em ordem (coletar, corrigir, gradebook, retorno), um roteiro linear
    """Coleta as entregas de ``aula`` (``nbgrader collect``), corrige cada uma na caixa do curso
    (:func:`correcao.motor.grade_class`, ``kwargs`` vão para ela), grava as notas das verificações no gradebook
    (a melhor cópia, quando o aluno entregou duas do mesmo notebook; as respostas escritas ficam para o
    Formgrader) e devolve o retorno em pt-BR pelo exchange (``release_feedback``).

    Escreve em ``saida`` (padrão ``<pasta do curso>/correcao/<aula>``) ``notas.csv`` (com ``maximo`` = o
    máximo da tarefa), ``turma-<aula>.csv`` (uma linha por aluno e notebook: entregue em, atraso pelo prazo do
    gradebook, total automático, máximo, situação) e os retornos. Devolve as linhas de :class:`Row`.

    Raises
    ------
    ValueError
        Aula que não é do curso.
    RuntimeError
        Se o nbgrader falhar ao coletar ou ao devolver o retorno.
    """
    from nbgrader.api import Gradebook, MissingEntry

    from correcao.motor import grade_class
    from correcao.relatorio import CSV_FIXED, CSV_TAIL

    gs = _aula(aula)
    pasta = Path(turma.pasta).resolve()
    saida = Path(saida or pasta / "correcao" / aula).resolve()
    api = turma.api()
    _ok(api.collect(aula, update=True), "collect")
    with tempfile.TemporaryDirectory(prefix="turma-") as tmp:
        alunos = _entregas(pasta / "submitted", aula, Path(tmp) / "entregas")
        if not alunos:
            log(f"{aula}: nenhuma entrega coletada")
            return []
        rows = grade_class(Path(tmp) / "entregas", saida, log=log, **kwargs)
    maximos = {n: assignment_max_points(g) for n, g in gs.items()}
    for r in rows:  # um só máximo: o da tarefa (automático + escrito), como no gradebook
        if r.assignment == aula and r.notebook in maximos:
            r.maximum += maximos[r.notebook] - gs[r.notebook].max_auto
    _reescrever_notas(rows, saida, CSV_FIXED, CSV_TAIL)
    linhas = []
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        tarefa = gb.find_assignment(aula)
        for aluno, info in alunos.items():
            gb.update_or_create_student(aluno)
            try:
                sub = gb.find_submission(aula, aluno)
                if info["timestamp"]:
                    from nbgrader.utils import parse_utc

                    sub.timestamp = parse_utc(info["timestamp"])
            except MissingEntry:
                sub = gb.add_submission(aula, aluno, timestamp=info["timestamp"])
            melhores = {}
            for r in rows:
                if r.student == aluno and r.assignment == aula and r.notebook in gs:
                    if r.notebook not in melhores or r.total > melhores[r.notebook].total:
                        melhores[r.notebook] = r
            for nome, r in melhores.items():
                try:
                    nb = gb.find_submission_notebook(nome, aula, aluno)
                except MissingEntry:  # notebook da aula que não foi liberado nesta tarefa
                    continue
                for grade in nb.grades:
                    if grade.name in gs[nome].checks:
                        grade.auto_score = float(r.scores.get(grade.name, 0.0))
                        grade.needs_manual_grade = grade.name in r.em_revisao
            gb.db.commit()
            atraso = sub.total_seconds_late
            for nome, r in sorted(melhores.items()):
                linhas.append({"aluno": aluno, "notebook": nome, "entregue_em": info["timestamp"] or "",
                               "atraso_s": f"{atraso:.0f}", "total_automatico": r.total,
                               "maximo": maximos[nome], "situacao": r.status})
                _retorno(r, saida, pasta, aula, info, atraso, maximos[nome], gs[nome])
        prazo = tarefa.duedate
    with open(saida / f"turma-{aula}.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["aluno", "notebook", "entregue_em", "atraso_s", "total_automatico",
                                          "maximo", "situacao"])
        w.writeheader()
        w.writerows(linhas)
    _ok(api.release_feedback(aula), "release_feedback")
    log(f"{aula}: {len(alunos)} aluno(s) corrigido(s); notas no gradebook, retorno no exchange"
        + (f" (prazo {prazo:%Y-%m-%d %H:%M} UTC)" if prazo else " (sem prazo no gradebook)"))
    return rows


def _reescrever_notas(rows, saida: Path, fixed, tail) -> None:
    """``notas.csv`` de novo, com o máximo da tarefa (as outras colunas como :func:`write_outputs` escreveu)."""
    caminho = saida / "notas.csv"
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
    pagina = re.sub(r'<p class="(?:tarefa|atraso)">.*?</p>', "", (saida / r.retorno).read_text(encoding="utf-8"))
    escritas = maximo - g.max_auto
    extra = (f'<p class="tarefa">Máximo da tarefa: {_num(maximo)} ponto(s): {_num(g.max_auto)} das verificações '
             f"automáticas e {_num(escritas)} das respostas escritas, corrigidas pelo professor no Formgrader.</p>")
    if atraso > 0:
        extra += f'<p class="atraso">Entregue com {html.escape(_atraso(atraso))} de atraso.</p>'
    pagina = pagina.replace('<div class="resumo">\n', '<div class="resumo">\n' + extra, 1)
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


__all__ = ["EXCHANGE_FILES", "HubCourse", "RefuseExecution", "assignment_max_points", "grade", "gradebook_scores",
           "release"]
