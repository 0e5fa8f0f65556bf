"""Importar o nbformat sem o ``rfc3987_syntax``.

O ``jsonschema`` (importado pelo ``nbformat``) carrega o ``rfc3987_syntax`` só para conferir o formato "iri",
que nada do curso usa; só esse import compila uma gramática do ``lark`` e custa cerca de 3 s de CPU em cada
processo. Marcado como ausente, o ``jsonschema`` segue sem ele. A caixa da correção faz isto antes de cada
kernel (:func:`correcao._caixa.apply_limits`), e os testes, antes de carregar o nbval (``-p`` em pyproject.toml).
"""

import sys


def sem_rfc3987() -> None:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]


sem_rfc3987()
