"""Dicas em português para o ``NameError`` de uma célula rodada antes da que ela precisa.

Depois de reiniciar o kernel, uma célula de verificação (``aula01.exercicio_3(...)``) rodada antes da célula de
importações, ou uma demonstração rodada quando a célula ``def`` do aluno deu erro (de sintaxe, por exemplo, e a
função não foi criada), levanta um ``NameError`` em inglês, sem dica. Esta extensão do IPython mantém o erro
(o mesmo tipo e a mesma mensagem, para buscar) e acrescenta ao fim do rastro uma linha em português que diz
qual célula rodar antes.

O curso a carrega em todo kernel do ambiente: ``scripts/preparar_trabalho.py`` (``configurar``, o passo que
``make lab``, o conda e o Binder rodam) escreve ``<ambiente>/etc/ipython/ipython_kernel_config.py``, que o
IPython lê ao iniciar um kernel. Na correção automática (``NBGRADER_EXECUTION`` definida) ela não é carregada.
Para usar num kernel qualquer: ``%load_ext atencao.dicas``.

Fonte: Módulo 6, todos os notebooks de exercícios e projetos (as células de verificação e de demonstração).
"""

from __future__ import annotations

import re

__all__ = ["dica_name_error", "load_ipython_extension", "unload_ipython_extension"]

# Os nomes que as células de importações dos notebooks criam: sem eles, a célula de importações não rodou.
# (os módulos de verificação de cada aula, ``aula01``, ``aula02``..., pelo padrão do nome: ver _MODULO_DE_AULA)
NOMES_DA_IMPORTACAO = frozenset({"atencao", "np", "plt", "load_e5", "encoder", "attn", "frase_gato", "out_gato"})
_MODULO_DE_AULA = re.compile(r"aula\d{2}")

_NOME = re.compile(r"name '(\w+)' is not defined")


def dica_name_error(exc: BaseException, funcao: str | None = None) -> str | None:
    """A dica, em português, para um ``NameError`` (``None`` para outros erros).

    Parameters
    ----------
    exc : BaseException
        O erro levantado pela célula.
    funcao : str ou None
        O nome da função em que o erro aconteceu (``None`` quando foi no corpo da célula): dentro de uma
        função, o nome que falta é, quase sempre, um erro de digitação ou uma variável de outra célula.

    Returns
    -------
    str ou None
    """
    if not isinstance(exc, NameError):
        return None
    achado = _NOME.search(str(exc))
    nome = getattr(exc, "name", None) or (achado.group(1) if achado else None)
    if not nome:
        return None
    if funcao:
        return (f"Dica: dentro de {funcao}, o nome '{nome}' não existe. Confira se ele está escrito igual ao "
                f"lugar em que foi criado (erro de digitação?) e se a célula que o cria já rodou neste kernel.")
    if nome in NOMES_DA_IMPORTACAO or _MODULO_DE_AULA.fullmatch(nome):
        return (f"Dica: '{nome}' é criado pela célula de importações, no começo do notebook, que ainda não rodou "
                "neste kernel (depois de reiniciar o kernel, nada do que rodou antes existe mais). Rode o notebook "
                "de cima até aqui: menu Run > Run All Above Selected Cell, e depois esta célula.")
    return (f"Dica: '{nome}' ainda não existe neste kernel. A célula que o cria (a do `def {nome}` ou do "
            f"`{nome} = ...`, mais acima) não rodou ou deu erro, e aí ele não foi criado: um erro de sintaxe na "
            "célula da sua função, por exemplo. Rode essa célula, corrija o erro que ela mostrar e rode esta de "
            "novo (depois de reiniciar o kernel: menu Run > Run All Above Selected Cell).")


def _onde(tb) -> str | None:
    """O nome da função mais interna do rastro, se o erro aconteceu dentro de uma (não no corpo da célula)."""
    nome = None
    while tb is not None:
        nome = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    return None if nome is None or nome.startswith("<") else nome


def _handler(shell, etype, value, tb, tb_offset=None):
    """O rastro de sempre, com a dica em português na última linha."""
    stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    dica = dica_name_error(value, _onde(tb))
    if dica:
        stb = [*stb, dica]
    shell._showtraceback(etype, value, stb)
    return stb


def load_ipython_extension(ipython) -> None:
    """Registra a dica para ``NameError`` no IPython (``%load_ext atencao.dicas``)."""
    ipython.set_custom_exc((NameError,), _handler)


def unload_ipython_extension(ipython) -> None:
    """Tira a dica (``%unload_ext atencao.dicas``)."""
    ipython.set_custom_exc((), None)
