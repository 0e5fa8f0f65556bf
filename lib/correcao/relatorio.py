"""O resultado da correção: uma :class:`Row` por aluno e notebook, ``notas.csv`` e o retorno em HTML."""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import string
from dataclasses import dataclass, field
from pathlib import Path

from atencao.checks.errors import translate

# a célula de planilha protegida mora com o relatório da turma (que não pode importar este módulo, que o chama)
from .catalogo import check_titles
from .class_report import spreadsheet_cell, write_class_report
from .notebook_html import html_exporter, set_language
from .saida import FEEDBACK_DIR, GRADES_CSV, NOT_GRADED_CSV

CSV_FIXED = ["aluno", "aula", "notebook", "arquivo"]
# "similaridade" antes de "total": as oito colunas do fim continuam as mesmas (correcao.similarity a preenche)
CSV_TAIL = ["similaridade", "total", "maximo", "pontos_em_revisao", "correcao_manual_pendente", "situacao",
            "isolamento", "retorno", "motivo"]

STATUSES = {
    "ok": "tudo certo", "parcial": "parcialmente correto", "zero": "nenhuma verificação passou",
    "revisar": "o professor vai revisar esta entrega", "tempo_esgotado": "tempo esgotado",
    "memoria_esgotada": "memória esgotada", "kernel_morreu": "o kernel parou no meio da execução",
    "erro_na_correcao": "não foi possível corrigir", "arquivo_invalido": "arquivo inválido",
    "grande_demais": "notebook grande demais para corrigir",
    "copias_demais": "cópias demais do mesmo notebook: esta não foi corrigida",
    "arquivos_demais": "arquivos demais na entrega: os além do limite não foram lidos nem corrigidos",
    "sem_notebooks": "nenhum notebook entregue",
    "desconhecido": "notebook desconhecido", "fora_de_pasta": "arquivo fora da pasta de um aluno",
    "falha_da_maquina": "a correção falhou na máquina do professor (não é culpa do aluno)",
}


@dataclass
class Row:
    student: str
    assignment: str
    notebook: str
    scores: dict = field(default_factory=dict)
    total: float = 0.0
    maximum: float = 0.0
    manual_pending: int = 0
    status: str = "ok"
    reasons: list = field(default_factory=list)
    isolation: str = ""
    arquivo: str = ""  # o caminho do notebook dentro da entrega do aluno
    retorno: str = ""  # a página de retorno, relativa à saída (preenchida por write_outputs)
    autograded: Path | None = None
    cpu_ratio: float | None = None  # CPU / relógio das caixas do notebook (não vai para o CSV)
    cpu_others: float | None = None  # núcleos ocupados por outros processos enquanto este notebook rodava
    tempo_do_aluno: bool = False  # o tempo perdido foi do aluno (nunca se corrige de novo sozinha)
    peak_memory: int | None = None  # bytes, a soma das caixas do notebook (quando medida)
    corpo: str = ""  # o notebook corrigido em HTML, feito no processo que corrigiu (em paralelo)
    em_revisao: dict = field(default_factory=dict)  # grade_id -> pontos que teria, retidos até o professor revisar
    # grade_id -> (categoria, detalhe) do verificador isolado: o resultado de cada verificação (ok, not_done, o id do
    # engano da dica...), para o relatório da turma (correcao.class_report, verificacoes.csv; não vai para notas.csv)
    diagnoses: dict = field(default_factory=dict)
    similaridade: str = ""  # os pares de similaridade.html em que esta entrega está (correcao.similarity)

    def csv(self, columns: list[str]) -> dict:
        out = {"aluno": spreadsheet_cell(self.student), "aula": self.assignment,
               "notebook": spreadsheet_cell(self.notebook),
               "arquivo": spreadsheet_cell(self.arquivo), "total": format_number(self.total),
               "maximo": format_number(self.maximum),
               "pontos_em_revisao": format_number(sum(self.em_revisao.values())) if self.em_revisao else "",
               "correcao_manual_pendente": self.manual_pending, "situacao": self.status,
               "isolamento": self.isolation, "retorno": spreadsheet_cell(self.retorno),
               "motivo": spreadsheet_cell(strip_paths(" | ".join(self.reasons))),
               "similaridade": spreadsheet_cell(self.similaridade)}
        out.update({c: format_number(self.scores[c]) if c in self.scores else "" for c in columns})
        return out


def readable_error(ename: str, evalue: str, com_nome: bool = True, limite: int = 600) -> str:
    """A mensagem de erro de uma célula, de uma linha, em português quando é uma das comuns, sem o arquivo
    temporário do IPython: ``SyntaxError: incomplete input (498049566.py, line 2)`` →
    ``SyntaxError: código incompleto (...) (linha 2 da célula)``."""
    primeira = " ".join((evalue or "").split())[:limite]
    linha = re.search(r"\(\S+\.py, line (\d+)\)", primeira)
    primeira = re.sub(r"\s*\(\S+\.py, line \d+\)", "", primeira)
    primeira = translate(primeira)
    if linha:
        primeira += f" (linha {linha.group(1)} da célula)"
    if not com_nome:
        return primeira or ename
    return f"{ename}: {primeira}" if primeira else ename


def format_number(x) -> str:
    return "" if x is None else (str(int(x)) if float(x).is_integer() else f"{x:.2f}")


def withhold(row: Row, gids, motivo: str = "") -> None:
    """Põe a linha ``row`` em revisão: os pontos das verificações ``gids`` saem de ``total`` (0 em cada uma) e
    ficam em ``em_revisao`` (coluna ``pontos_em_revisao`` de ``notas.csv``), para o professor decidir; a
    situação vira ``revisar`` e ``motivo`` (se houver) entra nos motivos, com os pontos retidos."""
    retidos = []
    for gid in gids:
        pontos = row.scores.get(gid) or 0.0
        if pontos > 0:
            row.em_revisao[gid] = row.em_revisao.get(gid, 0.0) + pontos
            row.scores[gid] = 0.0
            retidos.append(f"{gid}: {format_number(pontos)}")
    row.total = sum(row.scores.values())
    row.status = "revisar"
    if motivo:
        row.reasons.append(motivo + (f"; pontos retidos até a revisão do professor ({', '.join(retidos)}; coluna "
                                     "pontos_em_revisao), 0 no total" if retidos else ""))


def failed_row(student: str, g, notebook: str, status: str, reason: str, arquivo: str = "") -> Row:
    if g is None:
        return Row(student, "", notebook, status=status, reasons=[reason], arquivo=arquivo)
    return Row(student, g.assignment, g.notebook, scores=g.zero_scores(),
               maximum=g.max_auto, status=status, reasons=[reason], arquivo=arquivo)


# A página de retorno, com lacunas nomeadas ($nome): :func:`feedback_html` as preenche, cada uma com HTML já escapado
# (o que veio do aluno, só dentro de $body, na moldura dele); quem acrescenta algo ao quadro da correção (o JupyterHub:
# o máximo da tarefa, o atraso) passa o HTML de $assignment_notes, e nunca remenda a página pronta.
FEEDBACK_PAGE = string.Template("""<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>Retorno: $title</title>
<style>
body {font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222}
table {border-collapse: collapse} td, th {border: 1px solid #ccc; padding: .3rem .7rem; text-align: left}
body > .resumo {background: #f4f7fb; border-left: 4px solid #3b6ea8; padding: .5rem 1rem; margin-bottom: 1.5rem}
body > .resumo > .nota {font-size: 1.4rem; font-weight: bold}
bdi.dado-do-aluno {border: 1px dashed #b36b00; background: #fffdf7; padding: 0 .25rem; font-family: monospace;
  font-weight: normal}
body > .conteudo-do-aluno {border: 3px dashed #b36b00; background: #fffdf7; padding: 0 1rem 1rem}
body > .conteudo-do-aluno > .aviso-do-aluno {background: #b36b00; color: #fff; margin: 0 -1rem 1rem;
  padding: .4rem 1rem}
</style></head><body>
<h1>Retorno da correção automática</h1>
<div class="resumo">
$assignment_notes<p><b>Aluno(a):</b> $student · <b>Aula:</b> $assignment · <b>Notebook:</b> $notebook
$file</p>
<p class="nota">Nota automática: $score de $maximum · situação: $status</p>
$review
$manual
<table><tr><th>Verificação</th><th>Pontos</th><th>Máximo</th></tr>$checks</table>
<h3>O que a correção encontrou</h3><ul>$reasons</ul>
</div>
$body
</body></html>
""")


def feedback_html(row: Row, g, assignment_notes: str = "") -> str:
    """A página de retorno de ``row``: o quadro da correção (a nota, as verificações, os motivos) e, numa moldura
    à parte, o notebook do aluno como foi executado.

    O que veio do aluno (saídas, respostas escritas) nunca se parece com o quadro da correção: o HTML dele passa
    pelo bleach (:func:`_without_scripts`), que tira ``<style>``, ``style=`` e as classes do quadro
    (:data:`_GRADER_CLASSES`); o CSS da página só vale para filhos diretos de ``<body>`` (``body > .resumo``), e o
    conteúdo do aluno está sempre dentro de ``<section class="conteudo-do-aluno">``, com borda tracejada e o aviso de
    que não é da correção. Sem isso, um ``<div class="resumo"><p class="nota">`` numa saída aparecia como uma
    "Nota automática: 10 de 10" oficial numa página de 0. (Um ``<iframe srcdoc sandbox>`` também isolaria, mas a
    política de segurança da página, ``default-src 'none'``, o bloquearia, o tamanho dele não se ajusta ao conteúdo
    sem JavaScript, e o Moodle e os leitores de e-mail costumam tirar iframes.)

    ``assignment_notes``: HTML (já escapado) da lacuna ``$assignment_notes`` de :data:`FEEDBACK_PAGE`, no alto do
    quadro da correção (o JupyterHub põe ali o máximo da tarefa e o atraso: :func:`correcao.hub.grade`)."""
    esc = html.escape
    titulos = check_titles(g.source) if g else {}  # o título da seção de cada verificação, como no notebook
    rows = "".join(
        f"<tr><td>{esc(titulos.get(gid, ''))} <code>{esc(gid)}</code></td><td>{format_number(row.scores.get(gid))}</td>"
        f"<td>{format_number(points)}</td></tr>"
        for gid, (_, points, auto) in (g.cells.items() if g else []) if auto)
    reasons = "".join(f"<li>{esc(strip_paths(r))}</li>" for r in row.reasons) or "<li>Nenhum problema encontrado.</li>"
    manual = (f"<p>{row.manual_pending} resposta(s) escrita(s) aguardam a correção do professor.</p>"
              if row.manual_pending else "")
    body = row.corpo or (notebook_body(row.autograded) if row.autograded and row.autograded.exists() else "")
    aluno, aula = student_text(row.student) if row.student else "—", esc(row.assignment or "—")
    arquivo = f" · <b>Arquivo:</b> {student_text(row.arquivo)}" if row.arquivo else ""
    notebook = esc(row.notebook) if g is not None or not row.notebook else student_text(row.notebook)  # o arquivo
    situacao = esc(STATUSES.get(row.status, row.status))
    titulo = " · ".join(_shown_name(x) for x in (row.student, row.notebook or row.arquivo) if x)
    revisao = (f"<p>Em revisão pelo professor: {format_number(sum(row.em_revisao.values()))} ponto(s) "
               f"({esc(', '.join(row.em_revisao))}), fora da nota até a revisão.</p>" if row.em_revisao else "")
    if body:  # o que veio do aluno, sempre dentro da moldura dele (veja a docstring)
        body = (f'<section class="conteudo-do-aluno">\n<p class="aviso-do-aluno">Daqui até o fim da moldura, o '
                f'conteúdo é do notebook do aluno (código, saídas e respostas escritas), não da correção: a nota é só '
                f'a do quadro lá em cima.</p>\n{body}\n</section>')
    return FEEDBACK_PAGE.substitute(
        title=esc(titulo or "entrega"), student=aluno, assignment=aula, notebook=notebook, file=arquivo,
        assignment_notes=assignment_notes, score=format_number(row.total), maximum=format_number(row.maximum),
        status=situacao, review=revisao, manual=manual, checks=rows, reasons=reasons, body=body)


STUDENT_TEXT_MAX = 120  # caracteres de um nome de pasta ou de arquivo mostrados no quadro da correção


def student_text(texto: str, limite: int = STUDENT_TEXT_MAX) -> str:
    """Um nome que veio do aluno (a pasta, o caminho do arquivo), para o quadro da correção: escapado, numa
    moldura própria (``<bdi class="dado-do-aluno">``, com a borda tracejada do conteúdo do aluno), sem caracteres
    de controle nem de formatação (uma marca de direção do texto, ``U+202E``, invertia o resto da linha) e com no
    máximo ``limite`` caracteres. Uma pasta chamada ``Nota automática: 10 de 10 · situação: tudo certo`` aparece
    como o nome que é, e não como uma linha do quadro."""
    return f'<bdi class="dado-do-aluno">{html.escape(_shown_name(texto, limite))}</bdi>'


def _shown_name(texto: str, limite: int = STUDENT_TEXT_MAX) -> str:
    """``texto`` sem caracteres de controle nem de formatação (viram ``�``) e com no máximo ``limite`` caracteres."""
    import unicodedata

    limpo = "".join("\ufffd" if unicodedata.category(c) in ("Cc", "Cf") else c for c in str(texto))
    return limpo[:limite - 1] + "…" if len(limpo) > limite else limpo


def notebook_body(path: Path) -> str:
    """O notebook corrigido, convertido para HTML pelo nbconvert (saídas das verificações incluídas)."""
    import nbformat
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    # a mesma saída chega do kernel em um ou em dois pedaços, conforme o momento em que ele a descarregou: juntos,
    # o retorno é o mesmo a cada correção (e sem uma caixa vazia a mais no meio do texto)
    nb, _ = CoalesceStreamsPreprocessor().preprocess(nbformat.read(path, as_version=4), {})
    for cell in nb.cells:  # o explorador: a figura estática, não o widget (que precisa de um kernel vivo)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data and len(data) > 1:
                del data["application/vnd.jupyter.widget-view+json"]
            html = data.get("text/html")
            if html and "atx-static" in "".join(html):  # a regra CSS da figura só serve no JupyterLab
                data["text/html"] = re.sub(r"<style>.*?</style>", "", "".join(html), flags=re.S)
        for out in cell.get("outputs", []):  # erros: sem caminhos desta máquina; nas verificações, só a mensagem
            if out.get("output_type") == "error":
                meta = cell.get("metadata", {}).get("nbgrader", {})
                if meta.get("grade") and not meta.get("solution"):
                    out["traceback"] = [strip_paths(f"{out.get('ename', '')}: {out.get('evalue', '')}")]
                else:
                    out["traceback"] = [strip_paths(str(line)) for line in out.get("traceback", [])]
            _clean_output(out)
    nb.metadata.pop("widgets", None)
    exporter = html_exporter()
    set_language(exporter, nb)
    body, _ = exporter.from_notebook_node(nb)
    body = body.replace('alt="No description has been provided for this image"', 'alt="figura gerada pelo notebook"')
    return "<h2>O seu notebook, como foi executado na correção</h2>\n" + _without_scripts(body)


_PATH = re.compile(r"(/[^\s:'\"()]+/)([^/\s:'\"()]+\.py)")


def _machine_prefixes() -> list[str]:
    """Pastas desta máquina que não podem aparecer num retorno: o repositório, o ambiente Python (venv e o
    Python de base), a pasta pessoal e as temporárias, cada uma também com os atalhos resolvidos."""
    import sys
    import tempfile

    raiz = Path(__file__).resolve().parents[2]
    pastas = {str(raiz), sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.expanduser("~"),
              tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"}
    pastas |= {os.path.realpath(x) for x in list(pastas)}
    return sorted((x.rstrip("/") for x in pastas if x and x.rstrip("/")), key=len, reverse=True)


_PREFIXES: list[str] = []


def strip_paths(texto: str) -> str:
    """``texto`` (uma saída do notebook, um motivo) sem os caminhos desta máquina: ``/home/prof/curso/.venv/lib/
    python3.11/site-packages/IPython/core/interactiveshell.py:3585: UserWarning`` → ``interactiveshell.py:3585:
    UserWarning``; o que sobra de uma pasta conhecida (repositório, venv, pasta pessoal, temporárias) vira ``…``."""
    if not isinstance(texto, str) or "/" not in texto:
        return texto
    if not _PREFIXES:
        _PREFIXES.extend(_machine_prefixes())
    pieces = _DATA_URI.split(texto)  # imagens embutidas (base64, que também tem "/") ficam como estão
    for k in range(0, len(pieces), 2):
        parte = _PATH.sub(r"\2", pieces[k])
        for prefixo in _PREFIXES:
            parte = re.sub(re.escape(prefixo) + r"(?=[/\s'\":),]|$)[^\s'\":),<]*", "…", parte)
        pieces[k] = parte
    return "".join(pieces)


_DATA_URI = re.compile(r"(data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]+)")


def _clean_output(out) -> None:
    """Os textos de uma saída de célula sem caminhos desta máquina (imagens ficam como estão)."""
    if "text" in out:
        texto = out["text"]
        out["text"] = strip_paths("".join(texto) if isinstance(texto, list) else texto)
    if "evalue" in out:
        out["evalue"] = strip_paths(str(out["evalue"]))
    data = out.get("data", {})
    for mime in ("text/plain", "text/html", "text/markdown", "text/latex"):
        if mime in data:
            valor = data[mime]
            data[mime] = strip_paths("".join(valor) if isinstance(valor, list) else valor)


_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3", "h4", "h5",
         "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup",
         "table", "tbody", "td", "th", "thead", "tr", "ul"}
_ATTRIBUTES = {"*": ["class", "id", "title"], "a": ["href", "class", "id"], "img": ["src", "alt", "width", "height"],
               "td": ["align"], "th": ["align"]}


# as classes dos quadros da própria correção: no HTML do aluno, o atributo class que tiver uma delas sai
_GRADER_CLASSES = frozenset({"resumo", "nota", "conteudo-do-aluno", "aviso-do-aluno", "dado-do-aluno"})


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    """Atributos permitidos; imagens só embutidas (``data:image/...``): uma imagem da internet no retorno
    seria carregada ao abrir a página (um "pixel espião"); links só para http(s)/mailto; nenhuma classe dos
    quadros da correção (:data:`_GRADER_CLASSES`)."""
    if name not in _ATTRIBUTES.get(tag, []) and name not in _ATTRIBUTES["*"]:
        return False
    if name == "class" and _GRADER_CLASSES & set(value.split()):
        return False
    if tag == "img" and name == "src":
        return value.startswith("data:image/")
    if tag == "a" and name == "href":
        return not value.strip().lower().startswith("data:")
    return True


def _without_scripts(body: str) -> str:
    """O HTML do notebook só com marcações de texto (bleach): o ``<script>``, ``<iframe>``, ``on...=`` ou
    ``javascript:`` que o aluno escreveu aparece como texto, sem rodar no navegador do professor, e nada é
    carregado da internet (a página ainda tem uma política de segurança, CSP, que bloqueia o resto)."""
    import bleach

    return bleach.clean(body, tags=_TAGS, attributes=_allowed_attribute,
                        protocols={"http", "https", "mailto", "data"}, strip=False, strip_comments=True)


_FORBIDDEN_CHARS = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_RESERVED_NAMES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def safe_name(nome: str) -> str:
    """Nome de pasta/arquivo que abre em Linux, macOS e Windows (o professor vai zipar e mandar os
    retornos): sem ``<>:"/\\|?*`` nem caracteres de controle, sem ponto ou espaço no fim, nem ``CON``."""
    limpo = _FORBIDDEN_CHARS.sub("_", nome).rstrip(". ").lstrip()[:100] or "_"
    return "_" + limpo if limpo.split(".")[0].lower() in _RESERVED_NAMES or limpo.startswith(".") else limpo


def _feedback_pages(rows: list[Row]) -> list[str]:
    """O caminho de cada página de retorno: ``<aluno>/<aula>-<notebook>.html``, únicos mesmo com duas cópias
    do mesmo notebook ou dois alunos cujos nomes só diferem em caracteres proibidos."""
    pastas: dict[str, str] = {}
    usadas: set[str] = set()
    for aluno in sorted({r.student for r in rows}):
        base = safe_name(aluno) if aluno else "_fora-das-pastas"
        nome, k = base, 2
        while nome.lower() in usadas:
            nome, k = f"{base}-{k}", k + 1
        usadas.add(nome.lower())
        pastas[aluno] = nome
    paginas, vistas = [], set()
    for r in rows:
        base = safe_name(f"{r.assignment}-{r.notebook}" if r.assignment else (r.notebook or "sem-notebook"))
        nome, k = f"{pastas[r.student]}/{base}.html", 2
        while nome.lower() in vistas:
            nome, k = f"{pastas[r.student]}/{base}-copia-{k}.html", k + 1
        vistas.add(nome.lower())
        paginas.append(nome)
    return paginas


def write_outputs(rows: list[Row], everything: dict, saida: Path, fora: list | tuple = (), *,
                  class_report: bool = True) -> None:
    """``notas.csv`` (uma linha por aluno e notebook), ``retorno/<aluno>/<aula>-<notebook>.html``,
    ``nao-corrigidos.csv`` (aluno, arquivo, motivo: o que foi entregue mas não é notebook) e, com ``class_report``,
    o relatório da turma (:func:`correcao.class_report.write_class_report`: ``verificacoes.csv``,
    ``relatorio-turma.html`` e ``.csv``)."""
    saida.mkdir(parents=True, exist_ok=True)
    for r, pagina in zip(rows, _feedback_pages(rows)):
        r.retorno = f"{FEEDBACK_DIR}/{pagina}"
    used = {(r.assignment, r.notebook) for r in rows}
    columns = [gid for g in sorted(everything.values(), key=lambda g: (g.assignment, g.notebook))
               if (g.assignment, g.notebook) in used for gid in g.checks]
    with open(saida / GRADES_CSV, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIXED + columns + CSV_TAIL)
        writer.writeheader()
        for r in rows:
            writer.writerow(r.csv(columns))
    with open(saida / NOT_GRADED_CSV, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["aluno", "arquivo", "motivo"])
        for aluno, arquivo, motivo in sorted(fora):
            writer.writerow([spreadsheet_cell(aluno), spreadsheet_cell(arquivo), spreadsheet_cell(motivo)])
    feedback = saida / FEEDBACK_DIR
    if feedback.exists():
        shutil.rmtree(feedback)
    for r in rows:
        g = everything.get((r.assignment, r.notebook))
        dest = saida / r.retorno
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(feedback_html(r, g), encoding="utf-8")
    if class_report:
        write_class_report(rows, everything, saida)
