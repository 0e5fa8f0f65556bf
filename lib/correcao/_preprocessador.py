"""O pré-processador do nbgrader que troca o ``Execute`` dele pela execução em caixas (veja :mod:`correcao.execution`).

Fica num módulo à parte para que só os processos de correção importem o nbgrader (~1,5 s): o processo que
planeja a turma e escreve as saídas não precisa dele.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

WORKERS_BY_KEY: dict = {}  # chave (na configuração do nbgrader) -> o correcao.execution.Worker dela


class ExecutePreprocessor(NbGraderPreprocessor):
    """Executa o notebook do aluno pelo :class:`correcao.execution.Worker` desta correção (``chave``)."""

    chave = Unicode("", help="qual Worker desta correção").tag(config=True)

    def preprocess(self, nb, resources):
        trabalhador = WORKERS_BY_KEY[self.chave]
        trabalhador.execute(nb, resources["nbgrader"]["student"])
        return nb, resources
