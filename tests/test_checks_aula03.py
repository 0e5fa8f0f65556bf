"""As respostas certas da Aula 3 que outros testes usam (os casos sorteados), com os nomes de sempre. As respostas,
certas e erradas, e as dicas que elas recebem moram só no corpus da aula (``test_checks_aula03_corpus.py``)."""

from test_checks_aula03_corpus import d2_certa as distancia_certa
from test_checks_aula03_corpus import e3_certo as especiais_certo
from test_checks_aula03_corpus import h1_certo_argsort as heads_certo
from test_checks_aula03_corpus import p_certo as linha_certa

__all__ = ["distancia_certa", "especiais_certo", "heads_certo", "linha_certa"]
