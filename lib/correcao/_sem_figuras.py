"""Extensão do IPython para o kernel da correção: as figuras do matplotlib não são desenhadas.

Desenhar uma figura de demonstração (ex.: ``plot_attention_heads`` com os números em cada célula) custa
~0,9 s, mais que o resto da célula; nenhuma verificação lê a imagem, e a nota vem da conferência
(:mod:`correcao._veredito`), que nunca desenha. O código do aluno roda inteiro (a figura é criada, com os
mesmos erros que ele veria); só a imagem PNG do retorno dá lugar a uma linha explicando que a figura não
foi desenhada na correção.

Carregada por :mod:`correcao._executar` com ``--IPKernelApp.extensions=correcao._sem_figuras``.
"""

from __future__ import annotations

AVISO = "[figura não desenhada na correção: rode a célula no seu notebook para vê-la]"


def load_ipython_extension(ip) -> None:
    """Tira os formatos de imagem das figuras (``InlineBackend.figure_formats`` vazio) e troca o texto delas
    por :data:`AVISO`. ``ip``: o shell do kernel."""
    # na configuração do shell, lida quando o backend inline nasce (sem importar o matplotlib agora)
    ip.config.InlineBackend.figure_formats = set()
    texto = ip.display_formatter.formatters["text/plain"]

    def registrar(*_):
        texto.for_type_by_name("matplotlib.figure", "Figure", lambda fig, p, cycle: p.text(AVISO))

    registrar()
    # o backend inline, ao nascer (no 1º import do pyplot), tira de todos os formatos o que for da Figure; depois
    # de cada célula o texto volta, antes de o backend mostrar as figuras abertas (o evento dele é posterior)
    ip.events.register("post_execute", registrar)
