"""O texto do relatório de uma verificação: marcas, números, arrays e o que a função do aluno devolveu.

Tudo o que o aluno lê passa por aqui, para que as verificações de todas as aulas falem do mesmo jeito:
números com vírgula decimal no texto (``0,80``), arrays com 3 casas (``0.518``), retornos descritos em palavras.
"""

from __future__ import annotations

import textwrap

import numpy as np

from .categories import Hint

__all__ = ["MARKS", "UNSTABLE_SOFTMAX_HINT", "format_value", "format_number", "describe", "return_hint",
           "wrap_report"]

# O símbolo e a palavra de cada resultado: a palavra é o que fica legível sem uma fonte de emoji (comum em
# laboratórios Linux, onde os símbolos aparecem como o mesmo quadrado vazio). O símbolo vem primeiro (a
# conferência antes da entrega, correcao.validar, reconhece as linhas por ele).
MARKS = {"ok": "✅ OK", "falhou": "❌ FALHOU", "nao_feito": "⏳ A FAZER", "espera": "⏸️ ESPERANDO"}

# A dica para pesos com NaN/inf: a softmax sem subtrair o máximo estoura com pontuações grandes.
UNSTABLE_SOFTMAX_HINT = Hint("unstable_softmax",
                             "apareceram NaN/inf nos pesos com pontuações grandes: np.exp estoura acima de ~709. "
                             "Subtraia o máximo de cada linha antes do exp (a softmax estável) ou use atencao.softmax.")


def format_value(x) -> str:
    """O valor ``x`` como aparece nas linhas "esperado:" e "obtido:" do relatório.

    Parameters
    ----------
    x : ndarray ou qualquer objeto
        Um ``ndarray`` sai com 3 casas em ponto fixo (``0.518``, não ``5.180e-01``), cortado com ``...`` se
        tiver mais de 80 números, e com as linhas de continuação alinhadas ao texto do relatório; qualquer
        outro objeto sai como ``str(x)``.

    Returns
    -------
    str
    """
    if isinstance(x, np.ndarray):
        texto = np.array2string(np.round(x, 3), separator=", ", threshold=80, max_line_width=REPORT_WIDTH,
                                formatter={"float_kind": lambda v: f"{v: .3f}"})  # espaço no lugar do sinal
        return texto.replace("\n", "\n" + " " * 17)
    return str(x)


def format_number(x: float, spec: str = ".2f") -> str:
    """Um número no texto do relatório, com vírgula decimal: ``format_number(0.8) == "0,80"``.

    Parameters
    ----------
    x : float
    spec : str
        O formato do Python (``".2f"``, ``".3f"``) ou ``"g"`` (2 algarismos significativos, ``"1,2e-05"``).

    Returns
    -------
    str
        Os arrays, em :func:`format_value`, seguem o formato do Python (``0.518``); só os números soltos no
        texto usam a vírgula.
    """
    texto = f"{x:.2g}" if spec == "g" else f"{x:{spec}}"
    return texto.replace(".", ",")


def describe(value) -> str:
    """O que a função do aluno devolveu, em palavras, para a linha "obtido:".

    Returns
    -------
    str
        ``"None (nada)"``, ``"uma tupla com 3 itens"``, ``"uma lista com 1 item"``, ``"um array de forma
        (4, 4)"`` ou ``"um valor do tipo float"``.
    """
    if value is None:
        return "None (nada)"
    if isinstance(value, (tuple, list)):
        return (f"uma {'tupla' if isinstance(value, tuple) else 'lista'} com {len(value)} "
                f"{'item' if len(value) == 1 else 'itens'}")
    if isinstance(value, np.ndarray):
        return f"um array de forma {value.shape}"
    return f"um valor do tipo {type(value).__name__}"


def return_hint(value, *names: str) -> str:
    """A dica para um retorno que não é a tupla ``names`` pedida.

    Parameters
    ----------
    value : object
        O que a função devolveu.
    *names : str
        Os nomes dos itens pedidos, na ordem do enunciado (``"saida", "pesos"``).

    Returns
    -------
    str
        Faltou o ``return`` (``value`` é ``None``), número de itens errado (uma tupla ou lista) ou os
        resultados não vieram juntos numa tupla; sempre com o ``return`` certo escrito.
    """
    juntos = f"`return {', '.join(names)}`"
    if value is None:
        return f"faltou um `return` no fim da função: {juntos}."
    if isinstance(value, (tuple, list)):
        return f"devolva exatamente {len(names)} itens, nesta ordem: {juntos}."
    return f"devolva os {len(names)} resultados juntos, numa tupla: {juntos}."


# caracteres por linha do relatório: o que cabe na saída de uma célula do JupyterLab numa janela de 1000 px com o
# navegador de arquivos aberto (560 px de texto, fonte monoespaçada de 13 px, 7,8 px por caractere: 71)
REPORT_WIDTH = 70


def wrap_report(text: str, width: int = REPORT_WIDTH) -> str:
    """Quebra as linhas longas do relatório entre palavras.

    O JupyterLab quebra a saída de uma célula onde a linha acaba, no meio de uma palavra; aqui cada linha maior
    que ``width`` caracteres (padrão: :data:`REPORT_WIDTH`) continua nas linhas seguintes com o recuo da linha
    original mais 5 espaços. Palavras maiores que a largura não são cortadas.
    """
    out = []
    for linha in text.split("\n"):
        if len(linha) <= width:
            out.append(linha)
            continue
        recuo = " " * (len(linha) - len(linha.lstrip()) + 5)
        out.extend(textwrap.wrap(linha, width, subsequent_indent=recuo, break_long_words=False,
                                 break_on_hyphens=False, drop_whitespace=True))
    return "\n".join(out)
