"""A política da correção: todos os limites e opções de uma correção, com os padrões escritos uma vez só, aqui.

Uma :class:`GradingPolicy` é montada uma vez, por quem começa a correção (a linha de comando de
``scripts/corrigir.py``, ``scripts/validar.py`` e ``scripts/turma.py``, por :func:`from_args`; o JupyterHub, em
:func:`correcao.hub.grade`; cada parte de uma turma dividida, que a grava em ``parte.json`` por
:meth:`GradingPolicy.part_options`), e passada adiante sem mudar: :func:`correcao.motor.grade_class`, os
processos de correção, o :class:`correcao.execution.Worker` e :func:`correcao.validar.validate`. O ``validar`` do aluno
usa a mesma política do professor: o que passa nele passa na correção, com os mesmos tempos e a mesma memória.

Este módulo só usa a biblioteca padrão (os limites da caixa, :class:`correcao.isolamento.Limits`, são montados
por :meth:`GradingPolicy.limits`, sob demanda).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from dataclasses import dataclass

# sem ``workers``, as correções em paralelo: até este número (os núcleos da máquina, se forem menos)
DEFAULT_WORKERS = 2
# os nomes antigos dos argumentos de grade_class (e de validate) -> o campo da política
LEGACY_NAMES = {
    "cell_timeout": "cell_timeout",
    "notebook_timeout": "notebook_timeout",
    "memoria_mb": "memory_mb",
    "memoria_total_mb": "notebook_memory_mb",
    "disco_mb": "disk_mb",
    "workers": "workers",
    "isolar": "isolate",
}


@dataclass(frozen=True)
class GradingPolicy:
    """Os limites e as opções de uma correção (o ``validar`` do aluno inclusive).

    Attributes
    ----------
    cell_timeout : int
        Segundos por célula (no kernel e em cada chamada da conferência independente).
    notebook_timeout : float
        Orçamento de relógio de cada notebook, em segundos, da leitura ao retorno; é também o tempo de CPU de
        cada processo do aluno. Uma entrega que o esgota custa esse orçamento uma vez só (nunca é corrigida de novo).
    memory_mb : int
        Memória por processo do aluno (MiB).
    notebook_memory_mb : int
        Memória somada de todos os processos e pastas em memória das caixas de um notebook (MiB).
    disk_mb : int
        Tamanho de cada pasta gravável da caixa (a de trabalho e ``/tmp``, em memória), em MiB.
    workers : int | None
        Correções em paralelo; ``None``: até :data:`DEFAULT_WORKERS` (os núcleos da máquina, se forem menos).
    isolate : bool
        Cada entrega numa caixa do bubblewrap (``False``: sem caixa, só para entregas em que se confia).
    max_copies : int
        Cópias do mesmo notebook corrigidas por aluno (a entrega e as reentregas, pela ordem do caminho).
    max_files_per_student : int
        Notebooks (e, à parte, outros arquivos) olhados por aluno; o resto vira uma linha ``arquivos_demais``.
    single_run : bool
        Cada notebook executado uma vez só: o processo do aluno da conferência dá também as saídas do retorno, e o
        verificador, o relatório das verificações (``True``); ``False``: as saídas vêm de um kernel à parte, que
        roda o notebook de novo (:meth:`correcao.execution.Worker.execute`).
    """

    cell_timeout: int = 30
    notebook_timeout: float = 180.0
    memory_mb: int = 2048
    notebook_memory_mb: int = 3072
    disk_mb: int = 512
    workers: int | None = None
    isolate: bool = True
    max_copies: int = 3
    max_files_per_student: int = 40
    single_run: bool = True

    def __post_init__(self):
        for f in dataclasses.fields(self):
            valor = getattr(self, f.name)
            if f.name in ("isolate", "single_run"):
                if not isinstance(valor, bool):
                    raise ValueError(f"GradingPolicy.{f.name}: esperado True ou False, recebido {valor!r}")
            elif f.name == "workers" and valor is None:
                continue
            elif not isinstance(valor, (int, float)) or isinstance(valor, bool) or not valor > 0:
                raise ValueError(f"GradingPolicy.{f.name}: esperado um número maior que zero, recebido {valor!r}")
        object.__setattr__(self, "notebook_timeout", float(self.notebook_timeout))

    @classmethod
    def build(cls, policy: GradingPolicy | None = None, **legacy) -> GradingPolicy:
        """``policy`` (ou a padrão) com os argumentos de nome antigo (``cell_timeout``, ``memoria_mb``...) que não
        são ``None`` aplicados por cima.

        Raises
        ------
        TypeError
            Um argumento que não é da política, ou ``policy`` que não é uma :class:`GradingPolicy`.
        """
        if policy is None:
            policy = cls()
        if not isinstance(policy, GradingPolicy):
            raise TypeError(f"esperada uma GradingPolicy, recebido {type(policy).__name__}")
        desconhecidos = sorted(set(legacy) - set(LEGACY_NAMES))
        if desconhecidos:
            raise TypeError(f"argumento(s) que não são da política da correção: {', '.join(desconhecidos)}")
        mudar = {LEGACY_NAMES[k]: v for k, v in legacy.items() if v is not None}
        return dataclasses.replace(policy, **mudar) if mudar else policy

    def resolved_workers(self) -> int:
        """Quantas correções em paralelo: ``workers``, ou até :data:`DEFAULT_WORKERS` (os núcleos da máquina, se
        forem menos)."""
        return self.workers or min(DEFAULT_WORKERS, os.cpu_count() or 1)

    def limits(self):
        """Os limites das caixas (:class:`correcao.isolamento.Limits`): os desta política; os de processos são os
        padrões de lá."""
        from .isolamento import Limits

        return Limits(memoria_mb=self.memory_mb, cpu_s=int(self.notebook_timeout), relogio_s=self.notebook_timeout,
                      memoria_total_mb=self.notebook_memory_mb, disco_mb=self.disk_mb)

    def part_options(self) -> dict:
        """O que mexe na nota, gravado em ``parte.json`` (:func:`correcao.partes.write_part`): partes corrigidas com
        opções diferentes não se juntam. Os processos em paralelo ficam de fora (cada máquina tem os seus)."""
        return {"tempo_celula": self.cell_timeout, "tempo_notebook": self.notebook_timeout,
                "memoria_mb": self.memory_mb, "memoria_total_mb": self.notebook_memory_mb, "disco_mb": self.disk_mb,
                "isolar": self.isolate, "copias_max": self.max_copies,
                "arquivos_por_aluno": self.max_files_per_student}


DEFAULT = GradingPolicy()


class PortugueseParser(argparse.ArgumentParser):
    """Um ``ArgumentParser`` que diz os erros de opção em português (``uso:``, ``opção --x: ...``), e não com o
    ``usage:``/``error:`` do argparse: o professor chama ``scripts/corrigir.py`` pelo ``make corrigir``."""

    def format_usage(self) -> str:
        return re.sub(r"^usage:", "uso:", super().format_usage())

    def format_help(self) -> str:
        return re.sub(r"^usage:", "uso:", super().format_help())

    def error(self, message: str):
        message = re.sub(r"\bargument (\S+): ", r"opção \1: ", message)
        message = re.sub(r"unrecognized arguments: ", "opções desconhecidas: ", message)
        message = re.sub(r"the following arguments are required: ", "faltam: ", message)
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: erro: {message}\n")


def positive(tipo):
    """Um tipo do argparse: número maior que zero, com a mensagem em português (um tempo de célula 0 ou negativo
    reprovava alunos certos com "a função passou do tempo limite")."""
    def converter(texto: str):
        try:
            valor = tipo(texto)
        except ValueError:
            inteiro = " inteiro (sem casas decimais)" if tipo is int else ""
            raise argparse.ArgumentTypeError(f"esperado um número{inteiro}, recebido {texto!r}") from None
        if not valor > 0:
            raise argparse.ArgumentTypeError(f"esperado um número maior que zero, recebido {texto}")
        return valor

    return converter


def add_arguments(parser: argparse.ArgumentParser, prefixo: str = "") -> None:
    """As opções da política na linha de comando (``--tempo-celula``, ``--tempo-notebook``, ``--memoria``,
    ``--processos``, ``--sem-isolamento``), todas com o padrão ``None``: quem não as dá recebe o da política.
    ``prefixo`` vai no começo de cada ajuda (``"corrigir: "`` no ``scripts/turma.py``)."""
    parser.add_argument("--tempo-celula", type=positive(int), default=None,
                        help=f"{prefixo}segundos por célula (padrão {DEFAULT.cell_timeout})")
    parser.add_argument("--tempo-notebook", type=positive(float), default=None,
                        help=f"{prefixo}segundos por notebook, da leitura ao retorno (padrão "
                             f"{DEFAULT.notebook_timeout:g})")
    parser.add_argument("--memoria", type=positive(int), default=None,
                        help=f"{prefixo}MiB de memória por processo do aluno (padrão {DEFAULT.memory_mb})")
    parser.add_argument("--processos", type=positive(int), default=None,
                        help=f"{prefixo}correções em paralelo (padrão: {DEFAULT_WORKERS}, ou os núcleos da máquina "
                             "se forem menos)")
    parser.add_argument("--sem-isolamento", action="store_true",
                        help=f"{prefixo}corrige sem a caixa do bubblewrap (só para entregas em que você confia)")


def from_args(args: argparse.Namespace, policy: GradingPolicy | None = None) -> GradingPolicy:
    """A política das opções de :func:`add_arguments` (as que faltam ficam as de ``policy``, ou as padrão)."""
    return GradingPolicy.build(policy, cell_timeout=args.tempo_celula, notebook_timeout=args.tempo_notebook,
                               memoria_mb=args.memoria, workers=args.processos,
                               isolar=False if args.sem_isolamento else None)
