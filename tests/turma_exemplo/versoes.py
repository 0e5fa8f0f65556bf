"""Cada versão anterior de cada notebook do curso, resolvida por um aluno honesto: ``tests/versoes-antigas.zip``.

As versões são as de ``lib/correcao/versoes_antigas.json`` (``scripts/versoes_antigas.py``). Para cada uma,
o notebook de aluno do último commit daquela versão (``git show <commit>:notebooks/...``), com as respostas
das soluções do mesmo commit escritas com outra forma (:func:`gerar.resposta_a_mao`). O zip fica guardado no
repositório: o clone da CI pode ser raso, sem o histórico. ``make turma-exemplo`` o regenera (com o histórico).
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

from turma_exemplo import gerar

from correcao import nomes_antigos

ROOT = Path(__file__).resolve().parents[2]
ZIP = ROOT / "tests" / "versoes-antigas.zip"


def raso() -> bool:
    """O clone não tem o histórico do git (CI com ``--depth``)?"""
    out = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True)
    return out.returncode != 0 or out.stdout.strip() != "false"


def _show(commit: str, caminho: str) -> dict:
    texto = subprocess.run(["git", "show", f"{commit}:{caminho}"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout
    return json.loads(texto)


def aluno(versao: nomes_antigos.OldVersion) -> str:
    """O "aluno" de uma versão no zip: o commit e a aula (``6b382f60-aula-02``)."""
    return f"{versao.commits[1][:8]}-{versao.aula[:7]}"


# Exercícios cujo enunciado mudou desde a versão: o projeto da Aula 1, na primeira versão, pedia a conta com
# ``atencao.self_attention``; a verificação de hoje proíbe a função pronta dentro da função do aluno. Para essas
# versões, o aluno "resolvido" escreve a conta com NumPy (a resposta de hoje, com o nome antigo da função), o que
# a versão dele também aceitava; a resposta como era fica num aluno à parte (COMO_ERA), que vai para revisão.
ENUNCIADO_MUDOU = {("012b9fa271f4", "modulo-06/aula-01-self-attention/04-projeto.ipynb"): "projeto-solucao"}
COMO_ERA = "012b9fa2-aula-01-como-era"


def _resolver(v: nomes_antigos.OldVersion, como_era: bool = False) -> dict:
    commit = v.commits[1]
    nb = copy.deepcopy(_show(commit, f"notebooks/{v.caminho}"))
    sol = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
           for c in _show(commit, f"solutions/{v.caminho}")["cells"]}
    mudou = None if como_era else ENUNCIADO_MUDOU.get((commit, v.caminho))
    hoje = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c
            for c in json.loads((ROOT / "solutions" / v.caminho).read_text(encoding="utf-8"))["cells"]}
    for c in nb["cells"]:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if not c.get("metadata", {}).get("nbgrader", {}).get("solution") or gid not in sol:
            continue
        fonte = "".join(sol[gid]["source"])
        if gid == mudou:
            fonte = "".join(hoje[v.mapa_ids.get(gid, gid)]["source"])
            for antigo, novo in v.funcoes.items():
                fonte = fonte.replace(f"def {novo}(", f"def {antigo}(")
        c["source"] = gerar.resposta_a_mao(fonte, c["cell_type"])
    return gerar.clean(nb)


def resolvidos() -> dict[tuple[str, str], dict]:
    """(aluno, arquivo) -> o notebook de aluno de cada versão anterior, resolvido (precisa do histórico), mais
    a resposta como era de cada exercício de ENUNCIADO_MUDOU (aluno COMO_ERA)."""
    out = {}
    for v in nomes_antigos.old_versions():
        out[(aluno(v), f"{v.notebook}.ipynb")] = _resolver(v)
        if (v.commits[1], v.caminho) in ENUNCIADO_MUDOU:
            out[(COMO_ERA, f"{v.notebook}.ipynb")] = _resolver(v, como_era=True)
    return out


def conteudo() -> bytes:
    membros = [(f"versoes-antigas/{a}/{arquivo}", gerar._bytes(nb))
               for (a, arquivo), nb in sorted(resolvidos().items())]
    return gerar._zip(membros)


def guardado(a: str, arquivo: str) -> dict:
    """Um notebook do zip guardado (sem precisar do histórico do git)."""
    import zipfile

    with zipfile.ZipFile(ZIP) as z:
        return json.loads(z.read(f"versoes-antigas/{a}/{arquivo}"))


def write(dest: Path = ZIP) -> Path:
    dest.write_bytes(conteudo())
    return dest
