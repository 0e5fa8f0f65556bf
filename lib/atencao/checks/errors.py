"""Os erros do código do aluno, em português.

:func:`translate` traduz as mensagens de erro mais comuns do Python e do NumPy (o nome do erro e a mensagem
original continuam à vista, para buscar); usada pelas verificações, pela correção
(``correcao.relatorio.readable_error``) e pelo explorador. :func:`student_error` monta o ❌ de uma exceção
levantada pelo código do aluno; :func:`is_numpy_shape_error` separa o erro de formas do NumPy de um
``ValueError`` levantado de propósito pelo aluno.

Na conferência da correção (casos sorteados, :data:`.cases.RANDOMIZE_CASES`), o critério de um erro do aluno
cita só o tipo e a linha, não a mensagem: ela costuma trazer valores do caso sorteado (a chave ``b'\\x1f[…'`` que
faltou numa tabela, um array, um índice), outros a cada correção, e o critério entra no motivo de ``notas.csv`` e
no retorno, que precisam sair iguais, byte a byte, para a mesma turma.
"""

from __future__ import annotations

import os
import re

from . import cases
from .categories import Hint
from .watcher import CHECKS_DIR, is_student_file

__all__ = ["translate", "student_error", "is_numpy_shape_error"]

_TRANSLATIONS = [
    (r"^incomplete input", "código incompleto (faltou fechar um parêntese, colchete ou aspas?)"),
    (r"^invalid syntax\. Perhaps you forgot a comma\?", "sintaxe inválida (faltou uma vírgula?)"),
    (r"^invalid syntax\. Maybe you meant '==' or ':=' instead of '='\?", "sintaxe inválida (quis dizer '=='?)"),
    (r"^invalid syntax", "sintaxe inválida"),
    (r"^unexpected indent", "indentação inesperada"),
    (r"^expected an indented block.*", "faltou indentar o bloco"),
    (r"^unindent does not match any outer indentation level", "a indentação não bate com a das linhas de cima"),
    (r"^unterminated string literal.*", "texto (string) sem as aspas de fechamento"),
    (r"^expected ':'", "faltou ':'"),
    (r"^'(.)' was never closed", r"'\1' aberto e nunca fechado"),
    (r"^unmatched '(.)'", r"'\1' fechado sem ter sido aberto"),
    (r"^invalid decimal literal", "número mal escrito"),
    (r"^'return' outside function", "'return' fora de uma função"),
    (r"^name '(\w+)' is not defined", r"o nome '\1' não está definido (a célula que o cria não rodou antes?)"),
    (r"^No module named '([\w.]+)'", r"não existe o módulo '\1' neste ambiente"),
    (r"^module '([\w.]+)' has no attribute '(\w+)'", r"o módulo '\1' não tem '\2'"),
    (r"^'(\w+)' object has no attribute '(\w+)'", r"um objeto do tipo '\1' não tem o atributo '\2'"),
    (r"^division by zero", "divisão por zero"),
    (r"^index (-?\d+) is out of bounds for axis (\d+) with size (\d+)",
     r"índice \1 fora dos limites do eixo \2 (tamanho \3)"),
    (r"^list index out of range", "índice fora da lista"),
    (r"^(.+) is not in list$", r"\1 não está na lista (list.index não achou o item)"),
    (r"^(tuple|list)\.index\(x\): x not in (?:tuple|list)$", r"\1.index não achou o item"),
    (r"^(\w+)\(\) missing (\d+) required positional arguments?: (.+)",
     r"\1() precisa de \2 argumento(s) que faltaram: \3"),
    (r"^(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:was|were) given",
     r"\1() recebe \2 argumento(s), mas recebeu \3"),
    (r"^(\w+)\(\) takes from (\d+) to (\d+) positional arguments? but (\d+) (?:was|were) given",
     r"\1() recebe de \2 a \3 argumentos, mas recebeu \4"),
    (r"^(\w+)\(\) got an unexpected keyword argument '(\w+)'", r"\1() não tem o parâmetro '\2'"),
    (r"^matmul: Input operand \d has a mismatch in its core dimension \d.*\(size (\d+) is different from (\d+)\)",
     r"multiplicação de matrizes (@) com formas incompatíveis (tamanho \1 diferente de \2)"),
    (r"^operands could not be broadcast together with shapes (.+)", r"formas incompatíveis para a operação: \1"),
    (r"^raw_input was called, but this frontend does not support input requests\.?",
     "input() não funciona aqui (ninguém digita a resposta na correção nem no validar): ponha o valor no código"),
    (r"^setting an array element with a sequence.*",
     "o NumPy tentou transformar em array uma sequência de partes com formas diferentes (uma tupla como "
     "(saida, pesos) usada inteira numa conta?)"),
    (r"^(?:output array|assignment destination) is read-only",
     "o array é só de leitura (os pesos do modelo, por exemplo): não o mude no lugar; crie um array novo"),
    (r"^\[Errno 13\] Permission denied: (.+)", r"sem permissão para gravar ou ler \1 (a correção só deixa gravar na "
                                              r"pasta do notebook)"),
    (r"^\[Errno 30\] Read-only file system: (.+)", r"sem permissão para gravar em \1 (a correção só deixa gravar "
                                                 r"na pasta do notebook)"),
    (r"^Unable to allocate (.+?) for an array with shape (.+?) and data type (\w+)",
     r"sem memória para um array de \1 (forma \2, \3): o processo passou do limite de memória"),
    (r"^\[Errno 2\] No such file or directory: (.+)", r"arquivo ou pasta não encontrado: \1"),
    (r"^\[Errno 17\] File exists: (.+)", r"já existe um arquivo com este nome, e a pasta não pode ser criada: \1"),
    (r"^\[Errno 20\] Not a directory: (.+)", r"um arquivo está no caminho onde deveria haver uma pasta: \1"),
]


def translate(mensagem: str) -> str:
    """A mensagem de erro ``mensagem`` (``str(exc)``) em português, se for uma das comuns; senão, a mesma
    mensagem (sem erro: uma mensagem desconhecida passa como está)."""
    for padrao, traducao in _TRANSLATIONS:
        novo, n = re.subn(padrao, traducao, mensagem)
        if n:
            return novo
    return mensagem


def student_error(exc: BaseException) -> tuple[str, None, None, str]:
    """Os argumentos de :meth:`.checker.Checker.expect` para um erro levantado pelo código do aluno.

    Returns
    -------
    tuple
        ``(critério, None, None, dica)``: o critério diz o erro (a mensagem em português quando é uma das
        comuns, :func:`translate`) e a linha da função do aluno onde aconteceu; a dica traz a mensagem
        original. Um erro sem nenhum quadro do aluno, dentro das verificações, vira "a verificação não
        conseguiu ler o que a sua função devolveu". Na conferência da correção (casos sorteados), o critério
        diz só o tipo do erro e a linha, e a mensagem passa para a dica (veja o começo deste módulo); uma
        exceção com ``mensagem_fixa`` (a do tempo esgotado, escrita pela correção, não pelo caso) a mantém.
    """
    original = " ".join(str(exc).split())[:300]
    traduzida = translate(original)
    onde, tb = getattr(exc, "onde_do_aluno", None), exc.__traceback__  # de outro processo: (linha, função)
    while tb is not None:  # o último quadro que não é da biblioteca nem do Python/NumPy: o código do aluno
        if is_student_file(tb.tb_frame.f_code.co_filename):
            onde = (tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    if onde is None and isinstance(exc, TypeError) and _SIGNATURE.match(original) and _failed_at_call(exc):
        # a função do aluno nem começou: os parâmetros dela não são os do enunciado
        return ("a sua função aceita os argumentos com que o enunciado a chama",
                "os parâmetros do enunciado", traduzida,
                Hint("wrong_signature", "confira a linha do `def`: os parâmetros, na ordem e com os nomes do "
                     f"enunciado (mensagem original: “{original}”)."))
    if onde is None and _raised_in_checks(exc):  # nenhum quadro do aluno: a verificação não entendeu o retorno
        return ("a verificação não conseguiu ler o que a sua função devolveu",
                "o formato pedido no enunciado", f"{type(exc).__name__}: {original[:120]}",
                Hint("unreadable_return", "confira a ordem e o tipo de cada item do `return` (o enunciado diz o que "
                     "devolver, nessa ordem)."))
    sorteado = cases.randomized() and not getattr(exc, "mensagem_fixa", False)
    categoria = "student_exception"
    if getattr(exc, "mensagem_fixa", False):  # escrita pela correção: a função passou do tempo, ou o processo parou
        categoria = "timeout" if "tempo limite" in original else "stopped"
    return (_criterion(exc, original, traduzida, sorteado, onde), None, None,
            Hint(categoria, _hint_text(original, traduzida, sorteado)))


def _criterion(exc: BaseException, original: str, traduzida: str, sorteado: bool, onde) -> str:
    """O critério de um erro do aluno: o tipo, a mensagem (fora dos casos sorteados) e a linha dele."""
    # de outro processo, um tipo que não é dos comuns chega como StudentError, com o nome original à parte
    tipo = getattr(exc, "tipo_do_aluno", None) if sorteado else None
    criterio = f"o seu código levantou {tipo or type(exc).__name__}"
    if getattr(exc, "mensagem_fixa", False):  # escrita pela correção (o tempo, o processo parado): só ela, sem tipo
        criterio = traduzida or original
    elif not sorteado:
        criterio += f": {traduzida or original}"
    if onde:
        criterio += f" (linha {onde[0]} de {onde[1]})" if onde[1] != "<module>" else f" (linha {onde[0]})"
    return criterio


def _hint_text(original: str, traduzida: str, sorteado: bool) -> str:
    """A dica de um erro do aluno: rodar a função sozinha, com a mensagem original quando o critério não a traz."""
    dica = "rode a sua função sozinha numa célula para ver o erro completo."
    if original.startswith("matmul: Input operand"):  # a forma errada de um dos lados do @ (um .T esquecido?)
        dica = ("as formas dos dois lados do @ não encaixam: A @ B pede A de forma (m, k) e B de forma (k, p), com o "
                "mesmo k. Imprima o .shape de cada um; lembre que Q Kᵀ é Q (n, d_k) vezes K transposta, (d_k, n); "
                + dica)
    if "contém infinito" in original or "contém NaN" in original:
        dica = ("um array que você passou à biblioteca tem -inf ou NaN. Se você pôs -np.inf num pedaço da matriz "
                "(na diagonal, para achar o outro máximo, por exemplo), faça isso numa cópia: pesos[i] é uma vista, "
                "e mudar a vista muda a matriz; use linha = pesos[i].copy(). " + dica)
    if traduzida != original:
        dica = f"mensagem original: “{original}”; " + dica
    if sorteado and original:  # a mensagem, fora do critério, ainda aparece no relatório impresso
        dica = f"mensagem: “{traduzida}”; " + dica
    return dica


# o TypeError de uma chamada com outros parâmetros (argumentos a mais, a menos ou com outro nome)
_SIGNATURE = re.compile(r"\w+\(\) (?:takes (?:from \d+ to )?\d+ positional arguments? but \d+ |missing \d+ required "
                        r"(?:positional|keyword-only) arguments?|got an unexpected keyword argument|"
                        r"got multiple values for argument)")


def _failed_at_call(exc: BaseException) -> bool:
    """O erro saiu da própria chamada da função do aluno pela vigilância (``watcher.run_watched``), antes de o código
    dela começar: no kernel, o último quadro; na correção, quem o processo do aluno diz que levantou."""
    if getattr(exc, "remoto", False):
        return getattr(exc, "quem_levantou", None) == "run_watched"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name == "run_watched" \
        and tb.tb_frame.f_code.co_filename.startswith(CHECKS_DIR)


def _raised_in_checks(exc: BaseException) -> bool:
    """O erro aconteceu no código das verificações (e não no do aluno nem numa biblioteca chamada por ele)?"""
    if getattr(exc, "remoto", False):  # veio do processo do aluno (correção)
        return False
    tb, ultimo = exc.__traceback__, ""
    while tb is not None:
        arquivo = tb.tb_frame.f_code.co_filename
        if not ("site-packages" in arquivo or os.sep + "python3" in arquivo or arquivo.startswith("<frozen")):
            ultimo = arquivo
        tb = tb.tb_next
    return ultimo.startswith(CHECKS_DIR)


_NUMPY_SHAPES = re.compile(r"operands could not be broadcast together|mismatch in its core dimension|shapes .+ not "
                           r"aligned|could not broadcast input array|all the input array dimensions .* must match")


def is_numpy_shape_error(message: str) -> bool:
    """O ``ValueError`` de mensagem ``message`` veio do NumPy (formas incompatíveis numa conta), não de uma
    validação do aluno? Pela mensagem do NumPy, não por uma palavra: "broadcast" na mensagem do próprio aluno
    não conta contra ele."""
    return bool(_NUMPY_SHAPES.search(message))
