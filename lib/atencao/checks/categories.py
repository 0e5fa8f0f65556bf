"""As categorias dos enganos: um id curto e estável (em inglês, ``snake_case``) para cada dica de uma tabela de
erros típicos, e as categorias genéricas das falhas sem dica de tabela.

O aluno lê a dica; o relatório da turma (``correcao.class_report``) conta os alunos pelo id, que não muda quando o
texto da dica é reescrito. Uma dica de tabela é escrita com :func:`mistake`::

    mistakes = [(mistake("no_scale", "parece que faltou dividir as pontuações por sqrt(d_k)."), sem_escala), ...]

:class:`Hint` é um ``str`` (o relatório impresso não muda) que leva o id em ``category``. O
:class:`~.checker.Checker` guarda a categoria de cada ❌ ao lado do critério, e o
:class:`~.framework.CheckResult` a devolve (``categories``, ``category``).
"""

from __future__ import annotations

import re

__all__ = ["Hint", "mistake", "category_of", "GENERIC", "OUTCOMES", "ID_PATTERN"]

ID_PATTERN = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")

# As categorias das falhas sem dica de tabela, com o que cada uma quer dizer (o relatório da turma as mostra assim).
GENERIC = {
    "wrong_values": "valores errados, sem um engano típico reconhecido",
    "wrong_shape": "forma errada do resultado",
    "wrong_return_format": "retorno fora do formato pedido (uma tupla com outros itens, na ordem errada...)",
    "no_return": "a função não devolve nada (faltou o return)",
    "not_an_array": "o retorno não vira um array de números",
    "complex_values": "números complexos no retorno",
    "student_exception": "o código do aluno levantou uma exceção",
    "unreadable_return": "a verificação não conseguiu ler o retorno",
    "wrong_signature": "a função não aceita os argumentos do enunciado (outros parâmetros)",
    "forbidden_function": "usou a função pronta da biblioteca que o enunciado proíbe",
    "input_mutated": "alterou uma entrada no lugar",
    "library_tampered": "trocou funções da biblioteca, do NumPy ou da verificação",
    "not_a_function": "passou à verificação outra coisa que não a função",
    "missing_value_error": "não levanta o ValueError pedido",
    "criterion_failed": "outro critério, sem um engano típico reconhecido",
    "numerical_derivative": "o gradiente calculado numericamente (lento demais num tamanho de verdade), sem a fórmula",
}

# Os resultados de uma verificação que não são um ❌ da própria verificação (a correção os atribui).
OUTCOMES = {
    "ok": "passou",
    "not_done": "não feito (⏳ A FAZER: o esboço ainda levanta NotImplementedError)",
    "timeout": "tempo esgotado (a execução parou antes ou durante a verificação)",
    "stopped": "a execução do notebook parou antes da verificação (erro, memória, kernel parado)",
    "grading_error": "erro da correção (não do aluno)",
}


class Hint(str):
    """Uma dica (o texto que o aluno lê) com a categoria do engano em ``category``.

    É um ``str``: formatar, juntar e imprimir dão o mesmo texto de antes; só quem procura o atributo o vê.
    """

    def __new__(cls, category: str, text: str):
        obj = super().__new__(cls, text)
        obj.category = category
        return obj

    def extended(self, more: str) -> "Hint":
        """A mesma dica, com ``more`` no fim, e a mesma categoria (``+`` daria um ``str`` sem ela)."""
        return Hint(self.category, str(self) + more)

    def __reduce__(self):
        return (Hint, (self.category, str(self)))


def mistake(category: str, text: str) -> Hint:
    """A dica ``text`` de um engano típico, com o id ``category`` (``snake_case``, em inglês).

    Parameters
    ----------
    category : str
        O id estável do engano, único na verificação (``"no_scale"``, ``"softmax_by_column"``).
    text : str
        A dica, como o aluno a lê.

    Returns
    -------
    Hint

    Raises
    ------
    ValueError
        Se ``category`` não é um id ``snake_case`` (letras minúsculas, algarismos e ``_``).
    """
    if not isinstance(category, str) or not ID_PATTERN.fullmatch(category):
        raise ValueError(f"category: esperado um id snake_case (ex.: 'no_scale'), recebido {category!r}")
    return Hint(category, text)


# As dicas fixas do :class:`~.checker.Checker` (o mesmo texto de sempre), já com a categoria genérica.
NO_RETURN_HINT = Hint("no_return", "faltou um `return` na sua função?")
NOT_AN_ARRAY_HINT = Hint("not_an_array", "devolva um ndarray (ou uma lista de listas de números) com a forma pedida.")
COMPLEX_HINT = Hint("complex_values", "a atenção só usa números reais: confira de onde veio o `1j` (ou o np.complex) "
                                      "na conta.")
NOT_A_FUNCTION_HINT = Hint("not_a_function", "passe o nome da função, sem chamá-la: exercicio_1(minha_funcao), e não "
                                             "exercicio_1(minha_funcao(...)) nem o resultado dela.")
FORBIDDEN_HINT = Hint("forbidden_function", "o enunciado pede para escrever a conta você mesmo, com NumPy; use as "
                                            "funções prontas só fora da sua função, para conferir o resultado.")
NUMERICAL_DERIVATIVE_HINT = Hint(
    "numerical_derivative", "neste tamanho, a fórmula do backward leva milissegundos: uma função que leva segundos "
    "parece calcular o gradiente numericamente, mexendo em cada número da entrada (com diferenças ou com o passo "
    "complexo). Isso serve para conferir um gradiente, mas não é o backward que o enunciado pede: escreva a fórmula "
    "(veja a teoria). Na correção, o limite de tempo da célula interromperia a função.")
TAMPERED_HINT = Hint("library_tampered", "não substitua funções de atencao, do NumPy ou das verificações "
                                         "(`modulo.funcao = ...`): a troca foi desfeita. Se foi sem querer, reinicie o "
                                         "kernel e rode o notebook de novo.")


def category_of(hint, default: str) -> str:
    """A categoria de ``hint`` (uma :class:`Hint`) ou ``default`` (uma das :data:`GENERIC`)."""
    return hint.category if isinstance(hint, Hint) else default
