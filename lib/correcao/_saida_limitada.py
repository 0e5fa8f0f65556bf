"""A saída de texto que o kernel da correção guarda de cada célula, limitada já dentro do kernel.

O ipykernel junta o que a célula imprime num buffer e o manda a cada ~0,2 s. Um laço de ``print`` enche esse
buffer mais depressa do que ele é mandado, e tanto mais quanto mais ocupada a máquina: a memória do notebook
podia se esgotar antes de :mod:`correcao._executar` ler o primeiro MB e cortar a saída (o desfecho mudava
conforme a máquina). Com esta extensão (:mod:`correcao._executar` a carrega com
``--IPKernelApp.extensions``), cada execução guarda no máximo :data:`LIMITE` caracteres de ``stdout`` e
``stderr`` somados; o resto é descartado ali mesmo. O limite é o dobro do corte de :mod:`correcao._executar`,
que continua sendo quem corta (com o aviso no retorno) e interrompe a célula.

Só para a correção: o aluno no JupyterLab não carrega esta extensão. O limite é para o laço de ``print``,
não para quem o procura contornar: trocar o ``sys.stdout`` por outro objeto, chamar o ``write`` da classe ou
disparar o ``pre_execute`` de dentro da célula escapam dele, e a memória gasta é a do aluno (o limite de
memória da caixa vale do mesmo jeito, e a nota não muda).
"""

from __future__ import annotations

import sys
import threading

from ._executar import MAX_CELL_OUTPUT

LIMITE = 2 * MAX_CELL_OUTPUT  # caracteres de stdout + stderr por execução


def load_ipython_extension(ip) -> None:
    """Limita a :data:`LIMITE` caracteres o que ``sys.stdout`` e ``sys.stderr`` do kernel guardam a cada execução
    (o contador volta a zero no evento ``pre_execute``). ``ip``: o shell do kernel."""
    usado, trava = [0], threading.Lock()

    def zerar() -> None:
        with trava:
            usado[0] = 0

    ip.events.register("pre_execute", zerar)
    for stream in (sys.stdout, sys.stderr):
        stream.write = _limited(stream.write, usado, trava, LIMITE)


def _limited(write, usado: list, trava, limite: int):
    """O ``write`` de um stream que só repassa os primeiros ``limite - usado[0]`` caracteres (``usado``: o contador
    comum aos dois streams, protegido por ``trava``, porque a thread que lê a saída dos descritores do kernel
    também escreve) e diz que escreveu tudo, como o original."""

    def limitado(texto):
        if not isinstance(texto, str):
            return write(texto)  # o mesmo TypeError do original
        with trava:
            resta = limite - usado[0]
            usado[0] += len(texto)
        if resta <= 0:
            return len(texto)
        write(texto if len(texto) <= resta else texto[:resta])
        return len(texto)

    return limitado
