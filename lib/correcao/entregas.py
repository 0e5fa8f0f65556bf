"""A pasta (ou o ``.zip``) que o professor recebeu: ``<aluno>/<notebook>.ipynb``.

Nada é alterado no original: um ``.zip`` é extraído numa pasta temporária (sem caminhos absolutos nem
``..``) e uma pasta é copiada antes da correção.
"""

from __future__ import annotations

import zipfile
from pathlib import Path


def open_submissions(path: Path, tmp: Path) -> Path:
    """Pasta com ``<aluno>/<notebook>.ipynb``; um .zip é extraído numa pasta temporária."""
    if not path.exists():
        raise SystemExit(f"ENTREGAS não existe: {path}")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SystemExit(f"ENTREGAS precisa ser uma pasta ou um .zip: {path}")
        dest = tmp / "entregas"
        with zipfile.ZipFile(path) as z:
            for member in z.infolist():  # sem caminhos absolutos nem "..": nada sai da pasta
                target = (dest / member.filename).resolve()
                if dest.resolve() not in target.parents and target != dest.resolve():
                    continue
                z.extract(member, dest)
        path = dest
        entries = [p for p in path.iterdir() if not p.name.startswith(("__MACOSX", "."))]
        if len(entries) == 1 and entries[0].is_dir() and not any(entries[0].glob("*.ipynb")):
            path = entries[0]  # zip com uma pasta-raiz (ex.: entregas/aluno/...)
    return path


def students(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def notebooks(student_dir: Path) -> list[Path]:
    return sorted(p for p in student_dir.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
