"""O exportador HTML do nbconvert que faz o retorno de cada notebook, um por processo de correção.

Numa turma, a maior parte de um notebook é igual em todas as entregas: o enunciado (Markdown), as células de
código dadas e as de verificação. O modelo ``basic`` do nbconvert passa cada uma por filtros que não dependem da
entrega: o Markdown vira HTML (``markdown2html``), o código ganha cores (``highlight_code``, do Pygments) e o
resultado passa pelo ``clean_html`` (o bleach, com um limpador novo a cada chamada). Aqui esses três filtros
guardam o que já fizeram (``functools.lru_cache``, até :data:`MEMO_SIZE` textos cada), e a mesma célula é
convertida uma vez por processo. O HTML sai igual, byte a byte, ao do exportador sem memória (um teste confere).
"""

from __future__ import annotations

import functools
import json

MEMO_SIZE = 4096  # textos guardados por filtro (a Aula 1 inteira tem cerca de 60 células por notebook)


@functools.lru_cache(maxsize=1)
def html_exporter():
    """O ``HTMLExporter(template_name="basic")`` do nbconvert, com os filtros de texto com memória (veja o módulo).

    Um por processo: criá-lo (e compilar os modelos dele) custa mais que converter um notebook. O realce do código
    usa a linguagem de :func:`set_language`, que :func:`correcao.relatorio.notebook_body` chama com a do notebook
    antes de cada conversão, como o nbconvert faz."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="basic")
    exporter.filters = {**exporter.filters, **_memo_filters(exporter)}
    return exporter


def set_language(exporter, nb) -> None:
    """A linguagem do realce de ``nb`` (``language_info`` dos metadados, como o ``HTMLExporter`` a lê) no
    realçador com memória de ``exporter``."""
    info = nb.metadata.get("language_info", {})
    exporter.filters["highlight_code"].pygments_lexer = info.get("pygments_lexer", info.get("name", None))


def _memo_filters(exporter) -> dict:
    from jinja2 import pass_context
    from nbconvert.filters import Highlight2HTML, clean_html

    @functools.lru_cache(maxsize=8)
    def highlighter(lexer):  # como o HTMLExporter o cria, com a linguagem do notebook
        return Highlight2HTML(pygments_lexer=lexer, parent=exporter)

    @functools.lru_cache(maxsize=MEMO_SIZE)
    def highlight(source: str, language, lexer, metadata: str) -> str:
        return highlighter(lexer)(source, language, json.loads(metadata))

    class MemoHighlight:
        pygments_lexer = None

        def __call__(self, source, language=None, metadata=None):
            return highlight(str(source), language, self.pygments_lexer,
                             json.dumps(metadata or {}, sort_keys=True, default=str))

    @functools.lru_cache(maxsize=MEMO_SIZE)
    def markdown(source: str, path: str) -> str:
        return exporter.markdown2html({"cell": {}, "resources": {"metadata": {"path": path}}}, source)

    @pass_context
    def markdown2html(context, source):
        if context.get("cell", {}).get("attachments"):  # imagens anexadas à célula: sem memória
            return exporter.markdown2html(context, source)
        return markdown(str(source), context.get("resources", {}).get("metadata", {}).get("path", ""))

    return {"highlight_code": MemoHighlight(), "markdown2html": markdown2html,
            "clean_html": functools.lru_cache(maxsize=MEMO_SIZE)(clean_html)}
