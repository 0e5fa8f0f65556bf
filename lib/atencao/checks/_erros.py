"""As mensagens de erro mais comuns do Python e do NumPy, em português (o nome do erro e a mensagem original
continuam à vista, para buscar). Usadas pelas verificações (erro no código do aluno) e pela correção
(``correcao.relatorio.erro_legivel``)."""

from __future__ import annotations

import re

_TRADUCOES = [
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
    (r"^matmul: Input operand \d has a mismatch in its core dimension \d.*\(size (\d+) is different from (\d+)\)",
     r"multiplicação de matrizes (@) com formas incompatíveis (tamanho \1 diferente de \2)"),
    (r"^operands could not be broadcast together with shapes (.+)", r"formas incompatíveis para a operação: \1"),
    (r"^(?:output array|assignment destination) is read-only",
     "o array é só de leitura (os pesos do modelo, por exemplo): não o mude no lugar; crie um array novo"),
    (r"^\[Errno 13\] Permission denied: (.+)", r"sem permissão para gravar ou ler \1 (a correção só deixa gravar na "
                                              r"pasta do notebook)"),
    (r"^\[Errno 2\] No such file or directory: (.+)", r"arquivo ou pasta não encontrado: \1"),
    (r"^\[Errno 17\] File exists: (.+)", r"já existe um arquivo com este nome, e a pasta não pode ser criada: \1"),
    (r"^\[Errno 20\] Not a directory: (.+)", r"um arquivo está no caminho onde deveria haver uma pasta: \1"),
]


def traduzir(mensagem: str) -> str:
    """A mensagem em português, se for uma das comuns; senão, a mesma mensagem."""
    for padrao, traducao in _TRADUCOES:
        novo, n = re.subn(padrao, traducao, mensagem)
        if n:
            return novo
    return mensagem
