"""O resultado da correção: uma :class:`Row` por aluno e notebook, ``notas.csv`` e o retorno em HTML."""

from __future__ import annotations

import csv
import html
import shutil
from dataclasses import dataclass, field
from pathlib import Path

CSV_FIXED = ["aluno", "aula", "notebook"]
CSV_TAIL = ["total", "maximo", "correcao_manual_pendente", "situacao", "isolamento", "motivo"]

SITUACOES = {
    "ok": "tudo certo", "parcial": "parcialmente correto", "zero": "nenhuma verificação passou",
    "revisar": "o professor vai revisar esta entrega", "tempo_esgotado": "tempo esgotado",
    "memoria_esgotada": "memória esgotada", "kernel_morreu": "o kernel parou no meio da execução",
    "erro_na_correcao": "não foi possível corrigir", "arquivo_invalido": "arquivo inválido",
    "notebook_errado": "notebook de outro exercício", "sem_notebooks": "nenhum notebook entregue",
    "desconhecido": "notebook desconhecido",
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
    autograded: Path | None = None
    cpu_ratio: float | None = None  # CPU / relógio da execução no kernel (não vai para o CSV)

    def csv(self, columns: list[str]) -> dict:
        out = {"aluno": self.student, "aula": self.assignment, "notebook": self.notebook,
               "total": _num(self.total), "maximo": _num(self.maximum),
               "correcao_manual_pendente": self.manual_pending, "situacao": self.status,
               "isolamento": self.isolation, "motivo": " | ".join(self.reasons)}
        out.update({c: _num(self.scores[c]) if c in self.scores else "" for c in columns})
        return out


def _num(x) -> str:
    return "" if x is None else (str(int(x)) if float(x).is_integer() else f"{x:.2f}")


def failed_row(student: str, g, notebook: str, status: str, reason: str) -> Row:
    if g is None:
        return Row(student, "", notebook, status=status, reasons=[reason])
    return Row(student, g.assignment, g.notebook, scores=g.zero_scores(),
               maximum=g.max_auto, status=status, reasons=[reason])


def feedback_html(row: Row, g) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(gid)}</td><td>{_num(row.scores.get(gid))}</td><td>{_num(points)}</td></tr>"
        for gid, (_, points, auto) in (g.cells.items() if g else []) if auto)
    reasons = "".join(f"<li>{esc(r)}</li>" for r in row.reasons) or "<li>Nenhum problema encontrado.</li>"
    manual = (f"<p>{row.manual_pending} resposta(s) escrita(s) aguardam a correção do professor.</p>"
              if row.manual_pending else "")
    body = _notebook_body(row.autograded) if row.autograded and row.autograded.exists() else ""
    return f"""<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>Retorno: {esc(row.student)} · {esc(row.notebook)}</title>
<style>
body {{font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222}}
table {{border-collapse: collapse}} td, th {{border: 1px solid #ccc; padding: .3rem .7rem; text-align: left}}
.resumo {{background: #f4f7fb; border-left: 4px solid #3b6ea8; padding: .5rem 1rem; margin-bottom: 1.5rem}}
.nota {{font-size: 1.4rem; font-weight: bold}}
</style></head><body>
<h1>Retorno da correção automática</h1>
<div class="resumo">
<p><b>Aluno(a):</b> {esc(row.student)} · <b>Aula:</b> {esc(row.assignment or '—')} · <b>Notebook:</b> {esc(row.notebook)}</p>
<p class="nota">Nota automática: {_num(row.total)} de {_num(row.maximum)} · situação: {esc(SITUACOES.get(row.status, row.status))}</p>
{manual}
<table><tr><th>Verificação</th><th>Pontos</th><th>Máximo</th></tr>{rows}</table>
<h3>O que a correção encontrou</h3><ul>{reasons}</ul>
</div>
{body}
</body></html>
"""


def _notebook_body(path: Path) -> str:
    """O notebook corrigido, convertido para HTML pelo nbconvert (saídas das verificações incluídas)."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="basic")
    body, _ = exporter.from_notebook_node(nbformat.read(path, as_version=4))
    return "<h2>O seu notebook, como foi executado na correção</h2>\n" + _sem_scripts(body)


_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3", "h4", "h5",
         "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup",
         "table", "tbody", "td", "th", "thead", "tr", "ul"}
_ATRIBUTOS = {"*": ["class", "id", "title"], "a": ["href", "class", "id"], "img": ["src", "alt", "width", "height"],
              "td": ["align"], "th": ["align"]}


def _sem_scripts(body: str) -> str:
    """O HTML do notebook só com marcações de texto (bleach): o ``<script>``, ``<iframe>``, ``on...=`` ou
    ``javascript:`` que o aluno escreveu aparece como texto, sem rodar no navegador do professor."""
    import bleach

    return bleach.clean(body, tags=_TAGS, attributes=_ATRIBUTOS, protocols={"http", "https", "mailto", "data"},
                        strip=False, strip_comments=True)


def write_outputs(rows: list[Row], everything: dict, saida: Path) -> None:
    """``notas.csv`` (uma linha por aluno e notebook) e ``retorno/<aluno>/<aula>-<notebook>.html``."""
    saida.mkdir(parents=True, exist_ok=True)
    used = {(r.assignment, r.notebook) for r in rows}
    columns = [gid for g in sorted(everything.values(), key=lambda g: (g.assignment, g.notebook))
               if (g.assignment, g.notebook) in used for gid in g.checks]
    with open(saida / "notas.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIXED + columns + CSV_TAIL)
        writer.writeheader()
        for r in rows:
            writer.writerow(r.csv(columns))
    feedback = saida / "retorno"
    if feedback.exists():
        shutil.rmtree(feedback)
    for r in rows:
        g = everything.get((r.assignment, r.notebook))
        dest = feedback / r.student / (f"{r.assignment}-{r.notebook}.html" if r.assignment
                                       else f"{r.notebook or 'sem-notebook'}.html")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(feedback_html(r, g), encoding="utf-8")
