"""Prepara a pasta ``trabalho/``: a cópia dos notebooks onde o aluno escreve as respostas.

``notebooks/`` guarda os originais (versionados e testados); o aluno trabalha em ``trabalho/``, que
o git ignora. Assim, atualizar o curso (``git pull``), ``make test`` e ``make alunos`` nunca apagam
uma resposta. Só copia o que ainda não existe em ``trabalho/``: nada já copiado é sobrescrito.

Uso: ``python scripts/preparar_trabalho.py`` (``make lab`` chama sozinho).
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE, WORK = ROOT / "notebooks", ROOT / "trabalho"


def prepare() -> list[Path]:
    """Copia para ``trabalho/`` os arquivos de ``notebooks/`` que faltam; devolve os copiados."""
    copied = []
    for src in sorted(SOURCE.rglob("*")):
        if src.is_dir() or ".ipynb_checkpoints" in src.parts:
            continue
        dest = WORK / src.relative_to(SOURCE)
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            copied.append(dest)
    return copied


if __name__ == "__main__":
    new = prepare()
    if new:
        print(f"{len(new)} arquivo(s) novo(s) copiado(s) para trabalho/ (as suas respostas ficam lá).")
    else:
        print("trabalho/ já está em dia: nada foi sobrescrito.")
