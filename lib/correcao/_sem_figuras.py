"""As figuras do matplotlib que o kernel da correção não desenha.

Desenhar uma figura de demonstração (ex.: ``plot_attention_heads`` com os números em cada célula) custa
~0,9 s, mais que o resto da célula; nenhuma verificação lê a imagem, e a nota vem da conferência
(:mod:`correcao._veredito`), que nunca desenha. O código do aluno roda inteiro (a figura é criada, com os
mesmos erros que ele veria); só a imagem PNG do retorno dá lugar a uma linha explicando que a figura não
foi desenhada na correção.

- :func:`load_ipython_extension`: no kernel da correção (:mod:`correcao._executar` o carrega com
  ``--IPKernelApp.extensions=correcao._sem_figuras``), sem formatos de imagem para as figuras: cada uma sai só
  com o texto do matplotlib, ``<Figure size 640x480 with 1 Axes>``;
- :func:`replace_undrawn`: deste lado (o processo da correção), esse texto vira :data:`AVISO`. A troca é feita
  aqui, e não no kernel, porque o momento em que o backend inline se configura muda entre versões do ipykernel.
"""

from __future__ import annotations

import re

AVISO = "[figura não desenhada na correção: rode a célula no seu notebook para vê-la]"
_FIGURA = re.compile(r"<Figure size \d+(?:\.\d+)?x\d+(?:\.\d+)? with \d+ Axes>")


def load_ipython_extension(ip) -> None:
    """Deixa vazio ``InlineBackend.figure_formats`` (lido quando o backend inline nasce, sem importar o matplotlib
    agora). ``ip``: o shell do kernel."""
    ip.config.InlineBackend.figure_formats = set()


def replace_undrawn(outputs: list) -> list:
    """Troca por :data:`AVISO` o texto de cada figura sem imagem nas saídas ``outputs`` (dicionários do nbformat,
    mudados no lugar e devolvidos): um ``display_data`` ou ``execute_result`` cujo único dado é o
    ``text/plain`` ``<Figure size ... with N Axes>``. Um ``print`` com o mesmo texto fica como está."""
    for out in outputs:
        data = out.get("data") if isinstance(out, dict) else None
        if out.get("output_type") in ("display_data", "execute_result") and isinstance(data, dict) \
                and list(data) == ["text/plain"] and isinstance(data["text/plain"], str) \
                and _FIGURA.fullmatch(data["text/plain"]):
            data["text/plain"] = AVISO
    return outputs
