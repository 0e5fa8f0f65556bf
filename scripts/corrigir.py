"""Corrige uma turma: ``notas.csv`` e um retorno em HTML por aluno e notebook (o motor é o pacote ``correcao``).

Uso (ou ``make corrigir ENTREGAS=... [SAIDA=...]``):

    python scripts/corrigir.py ENTREGAS [ENTREGAS...] [--saida PASTA] [--tempo-celula S] [--tempo-notebook S]
                               [--memoria MiB] [--processos N] [--sem-isolamento]

Os padrões dos limites estão num lugar só, :class:`correcao.politica.GradingPolicy` (o ``validar`` do aluno usa os
mesmos); cada opção dada muda só o seu limite.

``ENTREGAS`` é uma pasta (ou um ``.zip``) no formato do nbgrader: ``<aluno>/<notebook>.ipynb``; uma turma que
chegou em partes (dois zips, um zip e uma pasta) vai toda de uma vez, e as partes são juntadas por aluno.
Cada entrega roda isolada numa caixa do bubblewrap; veja ``lib/correcao/__init__.py``.

Uma turma grande em várias máquinas (veja ``lib/correcao/partes.py`` e ``docs/professor.md``):

    python scripts/corrigir.py ENTREGAS --parte K/N --saida PASTA_K      # em cada máquina, K = 1..N
    python scripts/corrigir.py --juntar PASTA_1 ... PASTA_N --saida PASTA  # depois, numa delas
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _grade(grade_class, args, politica, parte):
    """Corrige a turma; devolve as linhas, ou o código de saída (com a mensagem já impressa) quando a correção não
    pôde rodar: 3 sem a caixa, 4 com a máquina falhando (ou limites de tempo curtos demais para ela), 2 com uma
    entrada recusada antes de corrigir (ENTREGAS que não existe, vazia ou num zip cortado; SAIDA que não se pode
    escrever)."""
    from correcao.isolamento import BwrapMissing
    from correcao.motor import MachineFailure

    try:
        return grade_class(args.entregas, args.saida, politica=politica, parte=parte)
    except BwrapMissing as exc:
        print(exc, file=sys.stderr)
        return 3
    except MachineFailure as exc:  # nenhuma turma de zeros: nada foi escrito (ou só as linhas que rodaram)
        print(exc, file=sys.stderr)
        return 4
    except ValueError as exc:  # entrada recusada antes de corrigir (o Moodle: um id com dois nomes, outra tarefa)
        print(f"Erro: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # ENTREGAS que não existe, não é pasta nem zip, ou um zip cortado: também o código 2
        if not isinstance(exc.code, str):
            raise
        print(f"Erro: {exc.code}", file=sys.stderr)
        return 2


def _stop_on_sigterm(signum, frame):
    """O SIGTERM (o Kubernetes apagando o pod, um ``kill``) como o Ctrl-C: a correção para pelo mesmo caminho,
    que desliga as caixas e apaga as pastas temporárias."""
    raise KeyboardInterrupt


def main(argv=None) -> int:
    """A linha de comando; devolve o código de saída (130 numa correção interrompida, sem nada escrito)."""
    import signal

    # cada linha do registro sai na hora, também num pipe ou num arquivo (o log do pod, `kubectl logs`), e na ordem
    # certa com as mensagens de erro (stderr)
    sys.stdout.reconfigure(line_buffering=True)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("\nCorreção interrompida (Ctrl-C ou SIGTERM) antes do fim: nenhuma nota foi escrita, e a saída de uma "
              "correção anterior na mesma pasta ficou como estava. Rode o mesmo comando de novo para corrigir a turma "
              "do começo.", file=sys.stderr)
        return 130


def _main(argv=None) -> int:
    from correcao import politica

    parser = politica.PortugueseParser(description="Corrige uma turma com o nbgrader (notas.csv + retorno em HTML).")
    parser.add_argument("entregas", type=Path, nargs="*",
                        help="pasta(s) ou .zip(s) com <aluno>/<notebook>.ipynb (partes da mesma turma)")
    parser.add_argument("--parte", default=None,
                        help="K/N: corrige só a parte K de N da turma (divisão por aluno) e grava SAIDA/parte.json")
    parser.add_argument("--juntar", type=Path, nargs="+", default=None, metavar="PASTA_PARTE",
                        help="junta as pastas das N partes (de --parte) em SAIDA, como uma correção única")
    parser.add_argument("--saida", type=Path, default=ROOT / "build" / "correcao")
    politica.add_arguments(parser)
    parser.add_argument("--moodle-idioma", choices=["pt_br", "en"], default="pt_br",
                        help="download do Moodle: o idioma do Moodle, para os cabeçalhos de moodle-notas.csv")
    parser.add_argument("--planilha-moodle", type=Path, default=None,
                        help="download do Moodle: a planilha baixada dele (\"Baixar planilha de notas\"), preenchida")
    args = parser.parse_args(argv)
    from correcao import exporters, lms, partes
    from correcao.motor import grade_class

    opcoes_ava = {"idioma": args.moodle_idioma, "planilha": args.planilha_moodle}  # as opções dos exportadores

    if args.juntar is not None:
        if args.entregas or args.parte:
            parser.error("--juntar recebe só as pastas das partes (sem ENTREGAS nem --parte)")
        try:
            lms.join_parts_with(exporters.exporters(**opcoes_ava), args.juntar, args.saida)
        except partes.PartsError as exc:
            print(f"Não juntei as partes: {exc}", file=sys.stderr)
            return 2
        return 0
    if not args.entregas:
        parser.error("faltou ENTREGAS (uma pasta ou um .zip com as entregas)")
    parte = None
    if args.parte is not None:
        try:
            parte = partes.parse_part(args.parte)
        except ValueError as exc:
            parser.error(str(exc))

    try:  # as opções dos exportadores (a planilha do Moodle), conferidas antes de corrigir a turma, e não depois
        for exportador in exporters.exporters(**opcoes_ava):
            exportador.check_options()
    except (OSError, ValueError) as exc:
        print(f"--planilha-moodle: {exc}", file=sys.stderr)
        return 2
    exportador = exporters.exporter_for(args.entregas, **opcoes_ava)  # o download de um AVA (o Moodle), ou None
    if exportador is not None:
        grade_class = functools.partial(lms.grade_with, exportador)  # noqa: N806

    t0 = time.perf_counter()
    print(f"Corrigindo {', '.join(str(e) for e in args.entregas)} ...")
    rows = _grade(grade_class, args, politica.from_args(args), parte)
    if isinstance(rows, int):
        return rows
    if parte is not None:
        print(f"parte {parte[0]}/{parte[1]}: {len(rows)} linha(s) em {args.saida / partes.PART_FILE} "
              f"({time.perf_counter() - t0:.0f} s); junte as {parte[1]} partes com --juntar")
        return 0
    print(f"{len(rows)} linha(s) em {args.saida / 'notas.csv'}; retornos em {args.saida / 'retorno'}/ "
          f"({time.perf_counter() - t0:.0f} s)")
    for linha in summary(rows):
        print(linha)
    return 0


def summary(rows) -> list[str]:
    """O fim do registro: quantas linhas em cada situação, o isolamento usado e, quando todas as entregas corrigidas
    ficaram com 0 (sem pontos retidos para revisão), um aviso: a prova do começo passou, então o zero veio das
    entregas, e o professor confere o motivo antes de publicar as notas."""
    from collections import Counter

    from correcao.relatorio import format_number

    if not rows:
        return []
    situacoes = Counter(r.status for r in rows)
    ordem = sorted(situacoes.items(), key=lambda x: (-x[1], x[0]))
    linhas = ["Situações: " + ", ".join(f"{n} {s}" for s, n in ordem)]
    isolamentos = sorted({r.isolation for r in rows if r.isolation})
    if isolamentos:
        linhas.append(f"Isolamento: {', '.join(isolamentos)} (coluna isolamento de notas.csv; veja docs/professor.md)")
    corrigidas = [r for r in rows if r.maximum]
    if corrigidas and all(r.total == 0 and not r.em_revisao for r in corrigidas):
        maximo = format_number(max(r.maximum for r in corrigidas))
        linhas.append(f"ATENÇÃO: todas as {len(corrigidas)} entrega(s) corrigida(s) ficaram com 0 ponto (de até "
                      f"{maximo}). A solução do curso passou na prova do começo, nesta máquina e com estes limites: "
                      "o zero veio das entregas. Confira o motivo de cada uma em notas.csv antes de publicar "
                      "(notebooks sem resolver? o arquivo de outra aula? o download certo do AVA?).")
    return linhas


if __name__ == "__main__":
    sys.exit(main())
