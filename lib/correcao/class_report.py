"""O relatório da turma: o que a turma errou, em cada aula e exercício, pelos diagnósticos das verificações.

A correção dá a cada verificação de cada entrega uma categoria (o campo ``diagnoses`` de
:class:`correcao.relatorio.Row`, do verificador isolado): ``ok``, ``not_done`` (⏳), o id do engano que a dica nomeia
(``sin_cos_swapped``, escrito com :func:`atencao.checks.framework.mistake` na tabela de erros típicos da verificação),
uma categoria genérica (:data:`atencao.checks.categories.GENERIC`: exceção do aluno, forma errada...) ou o que a
correção sabe da execução (:data:`atencao.checks.categories.OUTCOMES`: tempo esgotado, execução parada). O id não muda
quando o texto da dica é reescrito, e o relatório continua contando o mesmo engano.

O que sai, ao lado de ``notas.csv`` (:func:`write_class_report`, chamada por
:func:`correcao.relatorio.write_outputs`: na correção de uma turma, :func:`correcao.motor.grade_class`, também a do
Moodle e a do JupyterHub, e na junção das partes, :func:`correcao.partes.join_parts`):

- ``verificacoes.csv``: uma linha por aluno, notebook e verificação (a categoria e o critério que falhou) e uma por
  resposta escrita ainda no esboço ✍️ (categoria ``written_stub``). É o dado do relatório: o comando
  ``python3 curso.py relatorio PASTA`` (:func:`report_from_folder`) refaz o relatório de uma pasta de saída só com ele;
- ``relatorio-turma.html``: por aula e exercício, a distribuição dos resultados (uma figura), os enganos mais comuns
  da turma (outra figura) e, por verificação, quantos alunos caíram em cada engano, com os nomes (só o professor vê
  esta página: ela não vai para os alunos); as respostas escritas ainda no esboço; o tempo até o primeiro ✅;
- ``relatorio-turma.csv``: as mesmas contagens, uma linha por verificação e categoria, com os nomes.

O tempo até o primeiro ✅ não se sabe: o notebook entregue guarda só a última execução de cada célula, sem horário (o
JupyterLab grava os horários só com a opção ``recordTiming``, desligada por padrão), e a correção roda tudo de novo.
O relatório diz isso em vez de um número inventado.
"""

from __future__ import annotations

import ast
import base64
import csv
import functools
import html
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from atencao.checks.categories import GENERIC, OUTCOMES

__all__ = ["CHECKS_CSV", "REPORT_CSV", "REPORT_HTML", "Record", "build_report", "read_checks_csv", "records_from_rows",
           "report_from_folder", "spreadsheet_cell", "summarize", "write_class_report"]

CHECKS_CSV = "verificacoes.csv"
REPORT_HTML = "relatorio-turma.html"
REPORT_CSV = "relatorio-turma.csv"
CHECKS_COLUMNS = ["aluno", "aula", "notebook", "arquivo", "situacao", "verificacao", "categoria", "detalhe"]
CHECKS_DIR = Path(__file__).resolve().parents[1] / "atencao" / "checks"

# a categoria de uma resposta escrita ainda no esboço ✍️ (não é uma verificação: o professor corrige à mão)
WRITTEN_STUB = "written_stub"
# uma entrega que não foi ao kernel (arquivo inválido, grande demais...): nenhuma verificação rodou
NOT_GRADED = "not_graded"
# uma verificação de uma linha revisar com os pontos retidos (Row.em_revisao): nem passou, nem falhou, até o professor
IN_REVIEW = "in_review"
# uma linha corrigida sem o resultado de cada verificação (de um parte.json anterior ao relatório da turma)
NO_DIAGNOSIS = "no_diagnosis"
_KERNEL_STATUSES = frozenset({"ok", "parcial", "zero", "revisar", "tempo_esgotado", "memoria_esgotada",
                              "kernel_morreu"})
# o nome de quem entregou um notebook solto na raiz das entregas, fora da pasta de um aluno (situação fora_de_pasta)
SEM_PASTA = "(fora da pasta de um aluno)"
# as situações de uma linha em que a correção falhou, e não o aluno
_GRADING_FAILED = frozenset({"erro_na_correcao", "falha_da_maquina"})
_STUB_REASON = re.compile(r"resposta\(s\) escrita\(s\) ainda com o esboço ✍️ .*?: (.+)$")

# Os grupos de resultados, na ordem das barras, com a cor (a paleta de Okabe e Ito, segura para daltônicos) e o
# rótulo (sem emoji: a fonte das figuras não os tem); cada categoria cai num grupo (:func:`group_of`).
GROUPS = {
    "ok": ("#009E73", "passou"),
    "mistake": ("#D55E00", "falhou: engano reconhecido pela dica"),
    "other": ("#E69F00", "falhou: outro critério (sem engano típico)"),
    "error": ("#CC79A7", "falhou: erro no código do aluno"),
    "not_done": ("#56B4E9", "não feito"),
    "timeout": ("#0072B2", "tempo esgotado"),
    "review": ("#000000", "em revisão (pontos retidos até o professor decidir)"),
    "stopped": ("#999999", "sem resultado (execução parada, erro da correção, arquivo inválido)"),
}
_ERROR = frozenset({"student_exception", "unreadable_return", "wrong_signature"})
_STOPPED = frozenset({"stopped", "grading_error", NOT_GRADED, NO_DIAGNOSIS})


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠")  # também as de largura cheia
_BLANK_START = " \xa0\ufeff\x0b\x0c"  # o que a planilha pode ignorar antes do sinal
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)|[+-]")


def spreadsheet_cell(texto):
    """Uma célula de qualquer CSV que a correção grava (``notas.csv``, ``nao-corrigidos.csv``, ``moodle-notas.csv``,
    ``turma-<aula>.csv``, ``verificacoes.csv``, ``relatorio-turma.csv``): texto que começa com ``=``, ``+``, ``-``,
    ``@``, tabulação ou CR o LibreOffice/Excel executaria como fórmula (``=2+3``, ``=HYPERLINK(...)``,
    ``@SUM(...)``; também depois de espaços, do espaço sem quebra ou da marca BOM, e os sinais de largura cheia
    ``＝ ＋ － ＠``), e um apóstrofo na frente evita. Um número simples (``-1``, ``+2,5``) ou um sinal sozinho (o ``-``
    do Moodle sem nota) não é fórmula e fica como está; o que não é texto (números, ``None``) também. Mora aqui, e
    :mod:`correcao.relatorio` a reexporta: o relatório da turma não importa aquele módulo, que o chama."""
    if (not isinstance(texto, str) or not texto.lstrip(_BLANK_START).startswith(_FORMULA_START)
            or _PLAIN_NUMBER.fullmatch(texto)):
        return texto
    return "'" + texto


@dataclass(frozen=True)
class Record:
    """O resultado de uma verificação (ou de uma resposta escrita) de uma entrega: uma linha de ``verificacoes.csv``."""

    student: str
    assignment: str
    notebook: str
    arquivo: str
    status: str  # a situação da linha em notas.csv
    grade_id: str
    category: str
    detail: str = ""


def group_of(category: str) -> str:
    """O grupo (:data:`GROUPS`) da categoria ``category``."""
    if category in ("ok", "not_done", "timeout"):
        return category
    if category == IN_REVIEW:
        return "review"
    if category in _ERROR:
        return "error"
    if category in _STOPPED:
        return "stopped"
    return "other" if category in GENERIC else "mistake"


def records_from_rows(rows, everything: dict) -> list[Record]:
    """Os :class:`Record` das linhas da correção ``rows`` (:class:`correcao.relatorio.Row`), com as verificações de cada
    notebook tiradas do catálogo ``everything`` (:func:`correcao.catalogo.catalog`).

    Uma verificação com diagnóstico leva a categoria dele (``stopped`` vira ``timeout`` numa linha ``tempo_esgotado``);
    sem diagnóstico, ``grading_error`` quando a correção falhou, :data:`NOT_GRADED` quando a entrega nem foi ao
    kernel e :data:`NO_DIAGNOSIS` numa linha corrigida sem eles (de um ``parte.json`` anterior ao relatório); com os
    pontos retidos para revisão (``Row.em_revisao``), :data:`IN_REVIEW`, seja qual for o diagnóstico. As
    respostas escritas no esboço vêm do motivo da linha (a nota que a leitura da entrega escreve)."""
    out = []
    for r in rows:
        g = everything.get((r.assignment, r.notebook))
        if g is None:
            continue
        base = dict(student=r.student or SEM_PASTA, assignment=r.assignment, notebook=r.notebook, arquivo=r.arquivo,
                    status=r.status)
        diagnoses = r.diagnoses or {}
        for gid in g.checks:
            if gid in diagnoses:
                category, detail = diagnoses[gid]
                if category == "stopped" and r.status == "tempo_esgotado":
                    category = "timeout"
            elif gid not in r.scores:  # uma verificação que a versão do curso do aluno não tinha
                continue
            else:
                category = ("grading_error" if r.status in _GRADING_FAILED else
                            NO_DIAGNOSIS if r.status in _KERNEL_STATUSES else NOT_GRADED)
                detail = ""
            if gid in (r.em_revisao or {}):  # os pontos retidos: o relatório não diz "passou" antes do professor
                category, detail = IN_REVIEW, _in_review_reason(r)
            out.append(Record(**base, grade_id=gid, category=category, detail=detail))
        for motivo in r.reasons:
            achou = _STUB_REASON.search(motivo)
            if achou:
                out += [Record(**base, grade_id=gid.strip(), category=WRITTEN_STUB)
                        for gid in achou.group(1).split(",") if gid.strip()]
    return out


def _in_review_reason(r) -> str:
    """O motivo da revisão da linha ``r`` (o que reteve os pontos, sem a conta deles), em até 200 caracteres."""
    motivo = next((m for m in r.reasons if "pontos retidos" in m), "o professor revisa esta entrega")
    return motivo.split("; pontos retidos")[0][:200]


def write_checks_csv(records: list[Record], path: Path) -> None:
    """``verificacoes.csv``: uma linha por :class:`Record` (:data:`CHECKS_COLUMNS`), em UTF-8."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CHECKS_COLUMNS)
        for x in records:
            w.writerow([spreadsheet_cell(v) for v in (x.student, x.assignment, x.notebook, x.arquivo, x.status,
                                                      x.grade_id, x.category, x.detail)])


def read_checks_csv(path: Path) -> list[Record]:
    """Os :class:`Record` de um ``verificacoes.csv`` (o apóstrofo que protege uma célula da planilha sai).

    Raises
    ------
    ValueError
        Se o arquivo não tem as colunas :data:`CHECKS_COLUMNS` (esperadas vs. recebidas).
    """
    with open(path, newline="", encoding="utf-8") as f:
        leitor = csv.DictReader(f)
        if leitor.fieldnames != CHECKS_COLUMNS:
            raise ValueError(f"{path}: colunas esperadas {CHECKS_COLUMNS}, recebidas {leitor.fieldnames}")
        linhas = list(leitor)

    def limpo(v: str) -> str:
        return v[1:] if v.startswith("'") and spreadsheet_cell(v[1:]) == v else v

    return [Record(limpo(d["aluno"]), d["aula"], limpo(d["notebook"]), limpo(d["arquivo"]), d["situacao"],
                   d["verificacao"], d["categoria"], limpo(d["detalhe"])) for d in linhas]


@dataclass
class CheckSummary:
    """Uma verificação na turma: para cada categoria, os alunos (nomes em ordem, sem repetir) e um critério típico."""

    assignment: str
    notebook: str
    grade_id: str
    students: dict  # categoria -> lista de nomes
    details: dict  # categoria -> o critério que falhou (o do primeiro aluno, sem o "caso k de n")
    # os pontos retidos: aluno -> o motivo dele (cada um tem o seu; o do primeiro não vale para os outros)
    review_reasons: dict = field(default_factory=dict)

    def total(self) -> int:
        """Quantos alunos (um aluno com duas cópias do notebook, em duas categorias, conta uma vez)."""
        return len({nome for nomes in self.students.values() for nome in nomes})

    def by_group(self) -> dict:
        out = dict.fromkeys(GROUPS, 0)
        for cat, nomes in self.students.items():
            out[group_of(cat)] += len(nomes)
        return out


def summarize(records: list[Record]) -> tuple[list[CheckSummary], list[CheckSummary]]:
    """As verificações (na ordem das aulas, notebooks e ids) e as respostas escritas no esboço, cada uma com os alunos
    por categoria. Um aluno com duas cópias do mesmo notebook conta uma vez por categoria."""
    checks: dict = {}
    escritas: dict = {}
    for x in records:
        alvo = escritas if x.category == WRITTEN_STUB else checks
        s = alvo.setdefault((x.assignment, x.notebook, x.grade_id),
                            CheckSummary(x.assignment, x.notebook, x.grade_id, defaultdict(list), {}))
        if x.student not in s.students[x.category]:
            s.students[x.category].append(x.student)
        if x.category == IN_REVIEW:
            motivos = s.review_reasons.setdefault(x.student, [])
            if x.detail and x.detail not in motivos:
                motivos.append(x.detail)
        elif x.detail and x.category not in s.details:
            s.details[x.category] = re.sub(r"^caso \d+ de \d+: ", "", x.detail.split("; ")[0])
    for s in (*checks.values(), *escritas.values()):
        s.students = {c: sorted(v) for c, v in sorted(s.students.items())}
    return [checks[k] for k in sorted(checks)], [escritas[k] for k in sorted(escritas)]


@functools.cache
def _hint_texts() -> dict:
    """O texto de cada dica de tabela, pelo id: ``{(módulo, id): texto}``, lido das chamadas ``mistake("id", ...)``
    das verificações (as partes calculadas de uma f-string viram "…")."""
    out = {}
    for arquivo in sorted(CHECKS_DIR.glob("*.py")):
        for n in ast.walk(ast.parse(arquivo.read_text(encoding="utf-8"))):
            if (isinstance(n, ast.Call) and getattr(n.func, "id", "") == "mistake" and len(n.args) == 2
                    and isinstance(n.args[0], ast.Constant)):
                out.setdefault((arquivo.stem, n.args[0].value), _literal_text(n.args[1]))
    return out


def _literal_text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + _literal_text(node.right)
    return "…"


def describe(category: str, grade_id: str = "") -> str:
    """O que a categoria quer dizer: a dica da tabela (o texto que o aluno leu, da verificação da aula de ``grade_id``)
    ou a descrição de uma categoria genérica."""
    if category in OUTCOMES:
        return OUTCOMES[category]
    if category in GENERIC:
        return GENERIC[category]
    if category == NOT_GRADED:
        return "a entrega não foi corrigida (arquivo inválido, grande demais...)"
    if category == IN_REVIEW:
        return "em revisão: os pontos ficam retidos até você decidir (coluna pontos_em_revisao de notas.csv)"
    if category == NO_DIAGNOSIS:
        return "corrigida sem o resultado de cada verificação (uma parte corrigida antes do relatório da turma)"
    textos = _hint_texts()
    modulo = grade_id.split("-")[0]
    texto = textos.get((modulo, category)) or next((t for (_, c), t in sorted(textos.items()) if c == category), "")
    return texto or "engano sem descrição (o id não está nas tabelas das verificações desta versão)"


# ---------- as figuras ----------
def _figure_png(fig) -> str:
    """A figura em PNG (base64), sem a versão do matplotlib nos metadados: a mesma turma, os mesmos bytes."""
    from atencao.rendering import render_png

    return base64.b64encode(render_png(fig, dpi=100, metadata={"Software": None})).decode("ascii")


def _distribution_figure(checks: list[CheckSummary]) -> tuple[str, str]:
    """As barras empilhadas (uma por verificação) dos grupos de resultados: (PNG em base64, texto alternativo)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 2.4 + 0.42 * len(checks)), layout="constrained")
    ax = fig.subplots()
    nomes = [s.grade_id for s in checks][::-1]
    esquerda = [0] * len(checks)
    for grupo, (cor, rotulo) in GROUPS.items():
        valores = [s.by_group()[grupo] for s in checks][::-1]
        if not any(valores):
            continue
        barras = ax.barh(nomes, valores, left=esquerda, color=cor, label=rotulo, edgecolor="white")
        ax.bar_label(barras, labels=[str(v) if v else "" for v in valores], label_type="center", fontsize=10,
                     color="white" if grupo in ("mistake", "timeout") else "black")
        esquerda = [a + b for a, b in zip(esquerda, valores)]
    ax.set_xlabel("alunos (entregas)", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.set_title("O resultado de cada verificação na turma", fontsize=13)
    fig.legend(loc="outside lower center", ncol=2, fontsize=10, frameon=False)
    alt = "Barras empilhadas, uma por verificação: " + "; ".join(
        f"{s.grade_id}: " + ", ".join(f"{n} {GROUPS[g][1]}" for g, n in s.by_group().items() if n) for s in checks)
    return _figure_png(fig), alt


def _top_mistakes(checks: list[CheckSummary], limite: int = 15) -> list[tuple[int, str, str]]:
    """Os enganos mais comuns da turma: ``(alunos, verificação, categoria)``, do maior para o menor."""
    itens = [(len(nomes), s.grade_id, cat) for s in checks for cat, nomes in s.students.items()
             if group_of(cat) in ("mistake", "other", "error")]
    return sorted(itens, key=lambda x: (-x[0], x[1], x[2]))[:limite]


def _mistakes_figure(top: list[tuple[int, str, str]]) -> tuple[str, str]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 1.4 + 0.4 * len(top)), layout="constrained")
    ax = fig.subplots()
    rotulos = [f"{gid} · {cat}" for _, gid, cat in top][::-1]
    valores = [n for n, _, _ in top][::-1]
    cores = [GROUPS[group_of(cat)][0] for _, _, cat in top][::-1]
    barras = ax.barh(rotulos, valores, color=cores)
    ax.bar_label(barras, fontsize=10, padding=3)
    ax.set_xlabel("alunos", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.set_title("Os enganos mais comuns (o que retomar na próxima aula)", fontsize=13)
    ax.xaxis.get_major_locator().set_params(integer=True)
    alt = "Barras horizontais dos enganos mais comuns: " + "; ".join(f"{gid}, {cat}: {n} aluno(s)"
                                                                        for n, gid, cat in top)
    return _figure_png(fig), alt


# ---------- a página e o CSV ----------
PAGE = """<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>Relatório da turma</title>
<style>
body {{font-family: system-ui, sans-serif; max-width: 64rem; margin: 2rem auto; padding: 0 1rem; color: #222}}
table {{border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem}}
th, td {{border: 1px solid #ccc; padding: .3rem .5rem; text-align: left; vertical-align: top}}
th {{background: #f2f2f2}} td.n {{text-align: right; white-space: nowrap}}
code {{background: #f4f4f4; padding: 0 .2rem}} img {{max-width: 100%}}
.g {{display: inline-block; width: .9rem; height: .9rem; margin-right: .3rem; vertical-align: middle}}
.nota {{color: #555}}
</style></head><body>
<h1>Relatório da turma</h1>
<p class="nota">Só para o professor: os nomes dos alunos aparecem ao lado de cada engano. Os dados vêm de
<code>verificacoes.csv</code> (o resultado de cada verificação, dado pelo verificador isolado da correção); a categoria
de cada falha (❌ FALHOU) é o id do engano que a dica nomeia, e continua a mesma quando o texto da dica muda.</p>
{corpo}
</body></html>
"""


def _swatch(cat: str) -> str:
    return f'<span class="g" style="background:{GROUPS[group_of(cat)][0]}"></span>'


def _check_table(s: CheckSummary) -> str:
    linhas = []
    ordem = sorted(s.students.items(), key=lambda kv: (list(GROUPS).index(group_of(kv[0])), -len(kv[1]), kv[0]))
    for cat, nomes in ordem:
        detalhe = s.details.get(cat, "")
        descricao = html.escape(describe(cat, s.grade_id)) + (
            f"<br><span class='nota'>critério: {html.escape(detalhe)}</span>" if detalhe and group_of(cat) != "ok"
            else "")
        alunos = ("" if cat == "ok" else
                  f"<details><summary>ver os nomes</summary>{html.escape(', '.join(nomes))}</details>")
        if cat == IN_REVIEW:  # o motivo de cada um: o de um aluno não vale para os outros
            alunos = ("<details><summary>ver os nomes e o motivo de cada um</summary><ul>" + "".join(
                f"<li>{html.escape(nome)}: {html.escape(' · '.join(s.review_reasons.get(nome, [])) or '—')}</li>"
                for nome in nomes) + "</ul></details>")
        linhas.append(f"<tr><td>{_swatch(cat)}<code>{html.escape(cat)}</code></td><td>{descricao}</td>"
                      f"<td class='n'>{len(nomes)}</td><td>{alunos}</td></tr>")
    return ("<table><tr><th>categoria</th><th>o que é (a dica que o aluno leu)</th><th>alunos</th><th>quem</th></tr>"
            + "".join(linhas) + "</table>")


def _page(checks: list[CheckSummary], escritas: list[CheckSummary], n_alunos: int, n_notebooks: int) -> str:
    partes = [f"<p>{n_alunos} aluno(s), {n_notebooks} notebook(s) corrigido(s), {len(checks)} verificação(ões).</p>"]
    if checks:
        png, alt = _distribution_figure(checks)
        partes.append(f'<h2>O resultado de cada verificação</h2><img src="data:image/png;base64,{png}" '
                      f'alt="{html.escape(alt)}">')
        top = _top_mistakes(checks)
        if top:
            png, alt = _mistakes_figure(top)
            partes.append(f'<h2>Os enganos mais comuns</h2><img src="data:image/png;base64,{png}" '
                          f'alt="{html.escape(alt)}">')
    partes.append("<h2>O tempo até o primeiro ✅</h2><p>Não se sabe, e por isso não há um número aqui: o notebook "
                  "entregue guarda só a última execução de cada célula, sem horário (o JupyterLab grava os horários só "
                  "com a opção <code>recordTiming</code>, desligada por padrão), e a correção roda o notebook inteiro "
                  "de novo.</p>")
    atual = None
    for s in checks:
        if (s.assignment, s.notebook) != atual:
            atual = (s.assignment, s.notebook)
            partes.append(f"<h2>{html.escape(s.assignment)} · {html.escape(s.notebook)}</h2>")
        partes.append(f"<h3><code>{html.escape(s.grade_id)}</code> ({s.total()} aluno(s))</h3>{_check_table(s)}")
    partes.append("<h2>Respostas escritas ainda no esboço ✍️</h2>")
    if escritas:
        partes.append("<table><tr><th>aula · notebook</th><th>resposta</th><th>alunos</th><th>quem</th></tr>" + "".join(
            f"<tr><td>{html.escape(s.assignment)} · {html.escape(s.notebook)}</td><td><code>{html.escape(s.grade_id)}"
            f"</code></td><td class='n'>{s.total()}</td><td>{html.escape(', '.join(s.students[WRITTEN_STUB]))}</td>"
            "</tr>" for s in escritas) + "</table>")
    else:
        partes.append("<p>Nenhuma.</p>")
    return PAGE.format(corpo="\n".join(partes))


def _write_report_csv(checks: list[CheckSummary], escritas: list[CheckSummary], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["aula", "notebook", "verificacao", "grupo", "categoria", "descricao", "alunos", "nomes"])
        for s in (*checks, *escritas):
            for cat, nomes in s.students.items():
                grupo = "esboco" if cat == WRITTEN_STUB else group_of(cat)
                descricao = "resposta escrita ainda no esboço ✍️" if cat == WRITTEN_STUB else describe(cat, s.grade_id)
                quem = [f"{n} ({' · '.join(s.review_reasons.get(n, []))})" if s.review_reasons.get(n) else n
                        for n in nomes] if cat == IN_REVIEW else nomes
                w.writerow([spreadsheet_cell(v) for v in (s.assignment, s.notebook, s.grade_id, grupo, cat, descricao,
                                                          len(nomes), "; ".join(quem))])


def build_report(records: list[Record], saida: Path) -> Path:
    """Escreve ``relatorio-turma.html`` e ``relatorio-turma.csv`` em ``saida`` a partir de ``records``; devolve o
    caminho da página."""
    checks, escritas = summarize(records)
    alunos = {x.student for x in records}
    notebooks = {(x.student, x.assignment, x.notebook, x.arquivo) for x in records}
    saida = Path(saida)
    pagina = saida / REPORT_HTML
    pagina.write_text(_page(checks, escritas, len(alunos), len(notebooks)), encoding="utf-8")
    _write_report_csv(checks, escritas, saida / REPORT_CSV)
    return pagina


def write_class_report(rows, everything: dict, saida: Path) -> Path:
    """``verificacoes.csv``, ``relatorio-turma.html`` e ``relatorio-turma.csv`` de uma turma corrigida, em ``saida``
    (ao lado de ``notas.csv``); devolve o caminho da página."""
    records = records_from_rows(rows, everything)
    write_checks_csv(records, Path(saida) / CHECKS_CSV)
    return build_report(records, saida)


def report_from_folder(pasta: Path) -> Path:
    """Refaz o relatório de uma pasta de saída da correção a partir do ``verificacoes.csv`` dela.

    Raises
    ------
    FileNotFoundError
        Se ``pasta`` não tem ``verificacoes.csv`` (uma correção anterior a ele: corrija a turma de novo).
    ValueError
        Se o ``verificacoes.csv`` não tem as colunas esperadas.
    """
    pasta = Path(pasta)
    arquivo = pasta / CHECKS_CSV
    if not arquivo.is_file():
        raise FileNotFoundError(f"{pasta}: sem {CHECKS_CSV}. Esperada a pasta de saída de uma correção (com notas.csv "
                                f"e {CHECKS_CSV}); uma correção feita antes do relatório da turma não o tem: corrija a "
                                "turma de novo")
    return build_report(read_checks_csv(arquivo), pasta)


def main(argv: list[str] | None = None) -> int:
    """``python -m correcao.class_report PASTA`` (o ``python3 curso.py relatorio PASTA``): refaz o relatório da turma
    de uma pasta de saída da correção. Código de saída 0 com o relatório escrito, 2 sem a pasta ou sem
    ``verificacoes.csv``."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("Uso: python3 curso.py relatorio PASTA (a pasta de saída de uma correção, com notas.csv e "
              f"{CHECKS_CSV})")
        return 2
    try:
        pagina = report_from_folder(Path(argv[0]))
    except (FileNotFoundError, ValueError) as exc:
        print(f"relatorio: {exc}")
        return 2
    print(f"Relatório da turma: {pagina} (e {pagina.with_name(REPORT_CSV).name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
