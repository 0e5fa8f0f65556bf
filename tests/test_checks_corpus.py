"""A contagem dos corpora de respostas: cada verificação de exercício de cada ``atencao/checks/aulaNN.py`` tem pelo
menos 3 respostas válidas e 8 erradas no corpus da sua aula (``tests/test_checks_aulaNN_corpus.py``, o único lugar
onde uma resposta errada e a dica que ela recebe moram; veja ``tests/corpus.py``).
"""

import re
from pathlib import Path

# as respostas que outros testes (as trapaças, os casos sorteados) importam por este módulo: moram no corpus
from test_checks_aula02_corpus import mc_tril, sm_certa, sm_maximo_global

from atencao.checks import aula02
from correcao import catalogo

__all__ = ["mc_tril", "sm_certa", "sm_maximo_global"]


def _verificacoes() -> list:
    """As verificações de exercício de todos os módulos ``atencao/checks/aulaNN.py``: as funções públicas
    criadas pelo decorador ``@check`` (achadas nos módulos, não numa lista escrita aqui)."""
    import importlib
    import pkgutil

    import atencao.checks as pacote
    from atencao.checks import framework

    achadas = []
    for info in sorted(pkgutil.iter_modules(pacote.__path__), key=lambda i: i.name):
        if not re.fullmatch(r"aula\d\d", info.name):
            continue
        mod = importlib.import_module(f"{pacote.__name__}.{info.name}")
        for nome, f in vars(mod).items():
            codigo = getattr(f, "__code__", None)
            if (not nome.startswith("_") and hasattr(f, "__wrapped__") and codigo is not None
                    and codigo.co_filename == framework.__file__ and f.__module__ == mod.__name__):
                achadas.append(f)
    return achadas


def _corpus_completo() -> tuple[dict, dict]:
    """Os corpora de ``tests/test_checks_aulaNN_corpus.py``, um por aula, achados pelo nome do arquivo."""
    import importlib

    validas, erradas = {}, {}
    for arquivo in sorted(Path(__file__).parent.glob("test_checks_aula[0-9][0-9]_corpus.py")):
        mod = importlib.import_module(arquivo.stem)
        validas.update(mod.VALIDAS)
        erradas.update(mod.ERRADAS)
    return validas, erradas


def _faltas(verificacoes: list, validas: dict, erradas: dict) -> list[str]:
    """As verificações com menos de 3 respostas válidas ou 8 erradas no corpus (inclusive as ausentes)."""
    return [f"{v.__module__}.{v.__name__}: {len(validas.get(v, []))} válidas, {len(erradas.get(v, []))} erradas"
            for v in verificacoes if len(validas.get(v, [])) < 3 or len(erradas.get(v, [])) < 8]


def test_o_corpus_tem_3_validas_e_8_erradas_por_exercicio():
    verificacoes = _verificacoes()
    # cada aula achada nas pastas tem verificações, e cada verificação, o seu corpus
    assert {v.__module__.rsplit(".", 1)[1] for v in verificacoes} == {a.module for a in catalogo.lessons()}
    assert len(verificacoes) >= 14, [v.__name__ for v in verificacoes]
    assert not _faltas(verificacoes, *_corpus_completo())


def test_uma_verificacao_sem_entradas_no_corpus_faz_a_contagem_falhar(monkeypatch):
    """Uma verificação nova num módulo ``aulaNN``, sem respostas no corpus, não passa em silêncio."""
    from atencao.checks.framework import check

    def exercicio_9(c, fn):
        c.expect(fn() == 1, "devolve 1")

    exercicio_9.__module__ = aula02.__name__
    nova = check("Exercício 9")(exercicio_9)
    monkeypatch.setattr(aula02, "exercicio_9", nova, raising=False)
    verificacoes = _verificacoes()
    assert nova in verificacoes
    assert _faltas(verificacoes, *_corpus_completo()) == ["atencao.checks.aula02.exercicio_9: 0 válidas, 0 erradas"]
