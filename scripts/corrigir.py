"""Corrige uma turma: ``notas.csv`` e um retorno em HTML por aluno e notebook (o motor é o pacote ``correcao``).

Uso (ou ``make corrigir ENTREGAS=... [SAIDA=...]``):

    python scripts/corrigir.py ENTREGAS [ENTREGAS...] [--saida PASTA] [--tempo-celula S] [--tempo-notebook S]
                               [--memoria MiB] [--processos N] [--sem-isolamento]

``ENTREGAS`` é uma pasta (ou um ``.zip``) no formato do nbgrader: ``<aluno>/<notebook>.ipynb``; uma turma que
chegou em partes (dois zips, um zip e uma pasta) vai toda de uma vez, e as partes são juntadas por aluno.
Cada entrega roda isolada numa caixa do bubblewrap; veja ``lib/correcao/__init__.py``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Corrige uma turma com o nbgrader (notas.csv + retorno em HTML).")
    parser.add_argument("entregas", type=Path, nargs="+",
                        help="pasta(s) ou .zip(s) com <aluno>/<notebook>.ipynb (partes da mesma turma)")
    parser.add_argument("--saida", type=Path, default=ROOT / "build" / "correcao")
    parser.add_argument("--tempo-celula", type=int, default=30, help="segundos por célula (padrão 30)")
    parser.add_argument("--tempo-notebook", type=float, default=180, help="segundos por notebook (padrão 180)")
    parser.add_argument("--memoria", type=int, default=2048, help="MiB de memória por processo do aluno (padrão 2048)")
    parser.add_argument("--processos", type=int, default=None, help="correções em paralelo (padrão: 2)")
    parser.add_argument("--sem-isolamento", action="store_true",
                        help="corrige sem a caixa do bubblewrap (só para entregas em que você confia)")
    parser.add_argument("--moodle-idioma", choices=["pt_br", "en"], default="pt_br",
                        help="download do Moodle: o idioma do Moodle, para os cabeçalhos de moodle-notas.csv")
    parser.add_argument("--planilha-moodle", type=Path, default=None,
                        help="download do Moodle: a planilha baixada dele (\"Baixar planilha de notas\"), preenchida")
    args = parser.parse_args(argv)
    from correcao import moodle
    from correcao.isolamento import BwrapMissing
    from correcao.motor import grade_class

    if any(moodle.is_moodle_download(e) for e in args.entregas):  # o zip do "Baixar todas as tarefas" do Moodle
        grade_class = functools.partial(moodle.grade_moodle, idioma=args.moodle_idioma,  # noqa: N806
                                        planilha=args.planilha_moodle)

    t0 = time.perf_counter()
    print(f"Corrigindo {', '.join(str(e) for e in args.entregas)} ...")
    try:
        rows = grade_class(args.entregas, args.saida, args.tempo_celula, args.tempo_notebook, args.processos,
                           memoria_mb=args.memoria, isolar=not args.sem_isolamento)
    except BwrapMissing as exc:
        print(exc, file=sys.stderr)
        return 3
    print(f"{len(rows)} linha(s) em {args.saida / 'notas.csv'}; retornos em {args.saida / 'retorno'}/ "
          f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
