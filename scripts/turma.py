"""A turma no JupyterHub (veja docs/professor.md, "No JupyterHub"): liberar uma aula e corrigi-la.

Uso (o professor, no terminal do JupyterLab dele no hub, ou ``python3 curso.py turma ...``):

    python scripts/turma.py liberar AULA [--notebooks 03-exercicios ...] [--prazo "2026-03-10 23:59 -0300"]
    python scripts/turma.py corrigir AULA [--saida PASTA] [--memoria MiB] [--tempo-notebook S] [--tempo-celula S]
                                          [--processos N]

Opções comuns: ``--pasta`` (a pasta do curso no nbgrader, padrão ``~/curso-nbgrader``), ``--curso-id``
(padrão ``$CURSO_HUB_ID`` ou ``atencao``) e ``--exchange`` (padrão ``$CURSO_HUB_EXCHANGE`` ou
``/srv/nbgrader/exchange``). ``corrigir`` coleta, corrige cada entrega na caixa do curso, grava as notas no
gradebook do nbgrader e devolve o retorno pelo exchange (:mod:`correcao.hub`), com os limites da correção da linha
de comando (:mod:`correcao.politica`: os mesmos padrões e as mesmas opções de ``scripts/corrigir.py``).

``--prazo`` precisa do fuso: ``"2026-03-10 23:59 -0300"``, ``"2026-03-10 23:59 -03:00"``,
``"2026-03-10 23:59 America/Sao_Paulo"``, ``"2026-03-11 02:59 UTC"`` (ou ``Z``); uma hora sem fuso é recusada
(seria a do relógio do servidor, em geral UTC). ``liberar`` mostra o prazo no fuso digitado e em UTC, e um prazo
inválido para o comando antes de liberar qualquer coisa (:func:`correcao.hub.parse_deadline`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("acao", choices=["liberar", "corrigir"])
    parser.add_argument("aula", help="a aula (tarefa do nbgrader), ex.: aula-01-self-attention")
    parser.add_argument("--pasta", type=Path, default=Path.home() / "curso-nbgrader")
    parser.add_argument("--curso-id", default=os.environ.get("CURSO_HUB_ID", "atencao"))
    parser.add_argument("--exchange", default=os.environ.get("CURSO_HUB_EXCHANGE", "/srv/nbgrader/exchange"))
    parser.add_argument("--notebooks", nargs="*", default=None, help="liberar: só estes notebooks da aula")
    parser.add_argument("--prazo", default=None,
                        help='liberar: o prazo, com o fuso, ex.: "2026-03-10 23:59 -0300" ou '
                             '"2026-03-10 23:59 America/Sao_Paulo"')
    parser.add_argument("--saida", type=Path, default=None, help="corrigir: a pasta de notas.csv e dos retornos")
    from correcao import politica

    politica.add_arguments(parser, prefixo="corrigir: ")
    args = parser.parse_args(argv)
    from correcao import hub
    from correcao.isolamento import BwrapMissing

    turma = hub.HubCourse(args.pasta, args.curso_id, args.exchange)
    try:
        if args.acao == "liberar":
            hub.release(turma, args.aula, args.notebooks, args.prazo)
        else:
            hub.grade(turma, args.aula, args.saida, politica=politica.from_args(args))
    except (ValueError, RuntimeError) as exc:
        print(f"Erro: {exc}", file=sys.stderr)
        return 2
    except BwrapMissing as exc:
        print(exc, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
