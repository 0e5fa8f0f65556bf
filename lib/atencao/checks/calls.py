"""O que uma chamada da função do aluno devolve à verificação: o que ela imprimiu e desenhou (:class:`Captured`) e,
na correção, a função que roda em outro processo (:class:`RemoteCall`).

Quem escreve uma verificação os importa de :mod:`.framework` (que os reexporta); :meth:`.checker.Checker.call` os
usa.
"""

from __future__ import annotations

__all__ = ["Captured", "RemoteCall"]


class Captured:
    """O que a última chamada da função do aluno imprimiu (``printed``, texto) e desenhou (``figures``: uma
    lista por figura nova, com os arrays das imagens e malhas de cores de cada eixo)."""

    __slots__ = ("printed", "figures")

    def __init__(self, printed: str, figures: list):
        self.printed = printed
        self.figures = figures


class RemoteCall:
    """Uma função do aluno que roda em outro processo (na correção: veja ``correcao._remoto``).

    :meth:`Checker.call` passa a ela os argumentos e recebe uma resposta com ``value``, ``error`` (a
    exceção a levantar, ou ``None``), ``printed``, ``figures``, ``forbidden_used`` (nomes) e ``mutated``
    (``(nome, [chaves], tipo)``); a verificação julga só isso.

    ``warm_up``: o que o outro processo carrega uma vez, antes das chamadas e fora da vigilância (só
    ``"matplotlib"``, para uma verificação que pede figuras: veja :func:`.figures.warm_up_matplotlib`)."""

    warm_up: tuple = ()

    def call_checked(self, args: tuple, kwargs: dict, names: list, forbidden: list):
        """Chama a função do aluno no outro processo; ``forbidden`` são os nomes ``"modulo:qualname"``.

        Raises
        ------
        NotImplementedError
            Sempre, aqui: a correção (``correcao._veredito.FuncaoRemota``) implementa este método.
        """
        raise NotImplementedError
