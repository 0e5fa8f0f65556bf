"""Quanto custa a página de similaridade numa turma de 500 notebooks (o número do ``docs/professor.md``).

    .venv/bin/python tests/similaridade/medir.py [--entregas 500] [--pior-caso]

Sem opção, as 500 entregas são cópias dos notebooks da turma de exemplo (``tests/turma-exemplo.zip``), com o código
de cada resposta variado: os nomes das variáveis trocados, ao acaso, em cada cópia (o que o filtro do detector
desfaz: é o caso em que muitos alunos têm código igual). Com ``--pior-caso``, as 500 são do mesmo notebook (o
``04-exercicios`` da Aula 2, o de mais respostas), cada resposta uma das quatro maneiras honestas de
``respostas.py``, também com nomes trocados: 124.750 pares no mesmo notebook, muitos com trechos em comum.

Mede só :func:`correcao.similarity.compare_class` (ler os notebooks, comparar, escrever a página), com o tempo do
relógio e da CPU; a correção dos mesmos notebooks leva de 1,1 s a 2,9 s por notebook (``docs/professor.md``,
``python scripts/bench.py turma-grande``).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


class _Renomear(ast.NodeTransformer):
    def __init__(self, nomes: dict):
        self.nomes = nomes

    def visit_Name(self, node):  # noqa: N802 - o nome do método é o do ast
        if node.id in self.nomes:
            node.id = self.nomes[node.id]
        return node


def variar(codigo: str, sorteio: random.Random) -> str:
    """``codigo`` com cada variável atribuída nele trocada por um nome sorteado (e reescrito pelo ``ast.unparse``);
    o que não compila fica como está."""
    try:
        arvore = ast.parse(codigo)
    except SyntaxError:
        return codigo
    atribuidos = {n.id for n in ast.walk(arvore) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    nomes = {n: f"{sorteio.choice(['x', 'val', 'tmp', 'aux', 'res'])}_{sorteio.randrange(10**6)}" for n in atribuidos}
    return ast.unparse(_Renomear(nomes).visit(arvore))


def _da_turma_de_exemplo() -> list[tuple[dict, str]]:
    """Os notebooks da turma de exemplo que o catálogo reconhece, com o caminho de cada um."""
    from correcao.catalogo import catalog, identify_notebook

    everything = catalog()
    achados = []
    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        for nome in sorted(z.namelist()):
            if not nome.endswith(".ipynb") or "checkpoint" in nome or "/._" in nome or nome.startswith("__MACOSX"):
                continue
            try:
                nb = json.loads(z.read(nome).decode("utf-8-sig"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            g, _ = identify_notebook(everything, nb, nome)
            if g is not None:
                achados.append((nb, f"{g.assignment}/{g.notebook}"))
    return achados


def _do_pior_caso(k: int, sorteio: random.Random) -> tuple[dict, str]:
    import nbformat

    from similaridade import respostas

    escolha = {gid: sorteio.choice(v) for gid, v in respostas.VARIANTES.items()}
    nb = json.loads(nbformat.writes(respostas.notebook(escolha)))
    return nb, f"{respostas.AULA}/{respostas.NOTEBOOK}"


def montar(pasta: Path, n: int, pior_caso: bool) -> list:
    """As ``n`` entregas (linhas com ``autograded`` apontando para o notebook variado de cada uma)."""
    from correcao.catalogo import nbgrader_meta
    from correcao.relatorio import Row

    sorteio = random.Random(2026)
    bases = [] if pior_caso else _da_turma_de_exemplo()
    rows = []
    for k in range(n):
        nb, chave = _do_pior_caso(k, sorteio) if pior_caso else bases[k % len(bases)]
        nb = json.loads(json.dumps(nb))
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code" and nbgrader_meta(cell).get("solution"):
                fonte = cell.get("source", "")
                cell["source"] = variar("".join(fonte) if isinstance(fonte, list) else fonte, sorteio)
        destino = pasta / f"{k:05d}.ipynb"
        destino.write_text(json.dumps(nb), encoding="utf-8")
        aula, notebook = chave.split("/")
        rows.append(Row(f"aluno-{k:03d}", aula, notebook, autograded=destino))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entregas", type=int, default=500)
    parser.add_argument("--pior-caso", action="store_true")
    args = parser.parse_args(argv)
    from correcao import similarity
    from correcao.catalogo import catalog, original_cells

    for g in catalog().values():  # o que a correção já deixou pronto antes (o esboço de cada notebook, no plano)
        original_cells(g.source)
    with tempfile.TemporaryDirectory() as tmp:
        rows = montar(Path(tmp), args.entregas, args.pior_caso)
        t0, c0 = time.perf_counter(), time.process_time()
        rep = similarity.compare_class(rows, Path(tmp) / "saida")
        relogio, cpu = time.perf_counter() - t0, time.process_time() - c0
        tamanho = rep.page.stat().st_size
    grupos = ", ".join(f"{a} {b}: {n}" for (a, b), n in sorted(rep.compared.items()))
    print(f"{args.entregas} entregas ({'pior caso' if args.pior_caso else 'turma de exemplo'}; {grupos})")
    print(f"compare_class: {relogio:.1f} s no relógio, {cpu:.1f} s de CPU, {relogio / args.entregas * 1000:.0f} ms "
          f"por notebook; {len(rep.pairs)} par(es) na página ({tamanho / 1024:.0f} KiB), "
          f"{sum(rep.omitted.values())} fora dela")
    for segundos in (1.1, 2.9):
        print(f"  contra a correção a {segundos} s por notebook ({segundos * args.entregas:.0f} s): "
              f"{100 * relogio / (segundos * args.entregas):.1f} %")


if __name__ == "__main__":
    main()
