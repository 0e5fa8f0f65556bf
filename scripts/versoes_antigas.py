"""Gera ``lib/correcao/versoes_antigas.json``: as versões anteriores dos notebooks do curso, tiradas do git.

Um aluno pode entregar o notebook que baixou meses atrás: ids de célula antigos (``ex3-solucao`` antes de
``aula01-ex3-solucao``), funções com os nomes antigos (``minha_softmax`` antes de ``my_softmax``) e, às
vezes, sem os exercícios que vieram depois. A correção (:mod:`correcao.nomes_antigos`) reconhece essas
versões por esta tabela, guardada no repositório: o clone da CI pode ser raso (sem o histórico).

Cada versão é um grupo de commits em que o notebook tinha os mesmos ids de correção e os mesmos nomes de
função nas respostas. Para cada uma, a tabela guarda o caminho, o primeiro e o último commit (e as datas),
os ids antigos e o id atual de cada um, os nomes antigos das funções e o atual, as verificações que a
versão tinha, as impressões digitais das células do notebook de aluno (para distinguir a versão antiga da
atual quando os ids são os mesmos) e as das respostas de ``solutions/`` (uma entrega igual às soluções de
qualquer versão vai para revisão). A versão atual não entra (a correção a lê de ``solutions/``): a tabela só
muda quando os ids ou os nomes das funções de um notebook mudam.

Uso (depois de mudar os ids ou os nomes das funções de um notebook de ``solutions/``)::

    python scripts/versoes_antigas.py            # reescreve a tabela
    python scripts/versoes_antigas.py --conferir # só confere se a tabela está em dia (código 1 se não)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "lib" / "correcao" / "versoes_antigas.json"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _meta(cell: dict) -> dict:
    nbg = (cell.get("metadata") or {}).get("nbgrader") or {}
    return nbg if isinstance(nbg, dict) else {}


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _signature(nb: dict) -> tuple:
    """O que muda a correção: os ids, na ordem, e os nomes das funções das respostas."""
    from correcao.nomes_antigos import defined_functions

    ids = tuple(_meta(c)["grade_id"] for c in nb["cells"] if _meta(c).get("grade_id"))
    funcoes = tuple(tuple(defined_functions(_source(c))) for c in nb["cells"]
                    if _meta(c).get("solution") and c.get("cell_type") == "code")
    return ids, funcoes


def _map_id(antigo: str, atuais: list[str], aula: str) -> str | None:
    """O id atual de um id antigo: o mesmo, ou o mesmo com o prefixo da aula (``ex3-solucao`` →
    ``aula01-ex3-solucao``)."""
    if antigo in atuais:
        return antigo
    prefixo = "aula" + aula.split("-")[1]  # aula-01-self-attention -> aula01
    if f"{prefixo}-{antigo}" in atuais:
        return f"{prefixo}-{antigo}"
    sufixo = [a for a in atuais if a.endswith("-" + antigo)]
    return sufixo[0] if len(sufixo) == 1 else None


def build_table() -> dict:
    """A tabela (veja o módulo). Levanta ``SystemExit`` num clone raso (sem o histórico)."""
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        raise SystemExit("o clone é raso (sem o histórico do git): rode `git fetch --unshallow` antes")
    atuais = {}
    for path in sorted((ROOT / "solutions").rglob("*.ipynb")):
        rel = path.relative_to(ROOT / "solutions").as_posix()
        atuais[rel] = json.loads(path.read_text(encoding="utf-8"))
    versoes = []
    for (rel, assinatura), g in _history_groups(atuais).items():
        if assinatura != _signature(atuais[rel]):  # a versão atual, a correção a conhece por solutions/
            versoes.append(_old_version(rel, g, atuais[rel]))
    versoes.sort(key=lambda v: (v["caminho"], v["datas"][0], v["commits"][0]))
    return {"gerado_por": "scripts/versoes_antigas.py", "versoes": versoes}


def _history_groups(atuais: dict) -> dict[tuple, dict]:
    """As versões de cada notebook no histórico do git, agrupadas por (caminho, assinatura dos ids): o primeiro e
    o último commit de cada uma, as fontes do notebook do aluno e as respostas das soluções."""
    from correcao.catalogo import answer_fingerprint, cell_fingerprint

    commits = _git("log", "--format=%H %cs", "--", "solutions/", "notebooks/").split("\n")
    commits = [c.split() for c in reversed(commits) if c.strip()]
    grupos: dict[tuple, dict] = {}
    for h, data in commits:
        arquivos = _git("ls-tree", "-r", "--name-only", h, "--", "solutions/").split("\n")
        for arquivo in arquivos:
            rel = arquivo.removeprefix("solutions/")
            if not arquivo.endswith(".ipynb") or rel not in atuais:
                continue
            sol = json.loads(_git("show", f"{h}:{arquivo}"))
            try:
                aluno = json.loads(_git("show", f"{h}:notebooks/{rel}"))
            except subprocess.CalledProcessError:
                continue
            chave = (rel, _signature(sol))
            g = grupos.setdefault(chave, {"caminho": rel, "commits": [h[:12], h[:12]], "datas": [data, data],
                                          "ids": list(chave[1][0]), "fontes": set(), "respostas": {},
                                          "_sol": sol})
            g["commits"][1], g["datas"][1], g["_sol"] = h[:12], data, sol
            g["fontes"].update(cell_fingerprint(c) for c in aluno["cells"])
            for c in sol["cells"]:
                if _meta(c).get("solution") and _meta(c).get("grade_id"):
                    g["respostas"].setdefault(_meta(c)["grade_id"], set()).add(
                        answer_fingerprint(_source(c), c.get("cell_type", "code")))
    return grupos


def _old_version(rel: str, g: dict, atual: dict) -> dict:
    """A entrada da tabela para uma versão anterior ``g`` do notebook ``rel`` (``atual``: o de hoje)."""
    from correcao.catalogo import nbgrader_cells

    aula = rel.split("/")[-2]
    ids_atuais = [_meta(c)["grade_id"] for c in atual["cells"] if _meta(c).get("grade_id")]
    mapa = {a: _map_id(a, ids_atuais, aula) for a in g["ids"]}
    sem_par = sorted(a for a, n in mapa.items() if n is None)
    if sem_par:
        raise SystemExit(f"{rel} ({g['commits'][0]}): ids antigos sem o id atual correspondente: {sem_par}")
    checks = [gid for gid, (_, _, auto) in nbgrader_cells(atual).items() if auto]
    presentes = set(mapa.values())
    return {
        "caminho": rel, "aula": aula, "notebook": Path(rel).stem,
        "commits": g["commits"], "datas": g["datas"], "ids": g["ids"],
        "mapa_ids": {a: n for a, n in mapa.items() if a != n},
        "funcoes": _renamed_functions(g["_sol"], atual, mapa),
        "verificacoes": [gid for gid in checks if gid in presentes],
        "fontes": sorted(g["fontes"]),
        "respostas": {mapa.get(gid, gid): sorted(v) for gid, v in sorted(g["respostas"].items())},
    }


def _renamed_functions(sol: dict, atual: dict, mapa: dict) -> dict[str, str]:
    """nome antigo -> nome atual das funções definidas nas respostas (na mesma ordem, na mesma célula)."""
    from correcao.nomes_antigos import defined_functions

    funcoes = {}
    fontes_atuais = {_meta(c)["grade_id"]: _source(c) for c in atual["cells"] if _meta(c).get("grade_id")}
    for c in sol["cells"]:
        gid = _meta(c).get("grade_id")
        if _meta(c).get("solution") and c.get("cell_type") == "code" and mapa.get(gid) in fontes_atuais:
            for velho, novo in zip(defined_functions(_source(c)), defined_functions(fontes_atuais[mapa[gid]])):
                if velho != novo:
                    funcoes[velho] = novo
    return funcoes


def table_text(tabela: dict) -> str:
    return json.dumps(tabela, ensure_ascii=False, indent=1) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conferir", action="store_true", help="só confere se a tabela guardada está em dia")
    args = parser.parse_args(argv)
    novo = table_text(build_table())
    if args.conferir:
        if TABLE.exists() and TABLE.read_text(encoding="utf-8") == novo:
            print("versoes_antigas.json em dia")
            return 0
        print("versoes_antigas.json desatualizada: rode python scripts/versoes_antigas.py", file=sys.stderr)
        return 1
    TABLE.write_text(novo, encoding="utf-8")
    print(f"{TABLE.relative_to(ROOT)}: {len(json.loads(novo)['versoes'])} versões anteriores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
