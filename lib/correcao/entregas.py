"""A pasta (ou o ``.zip``) que o professor recebeu: ``<aluno>/<notebook>.ipynb``.

Nada é alterado no original, e nada dele é seguido às cegas: de um ``.zip`` só saem arquivos comuns
(sem caminhos absolutos nem ``..``, até :data:`LIMITE_BYTES` cada), e de uma pasta só são copiados
arquivos comuns: um atalho (link simbólico), um FIFO ou um dispositivo com nome de notebook vira uma
linha ``arquivo_invalido`` com o motivo, em vez de ser lido (um atalho para ``solutions/`` entregaria as
respostas; um FIFO travaria a correção).
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from pathlib import Path

LIMITE_BYTES = 50 * 2**20  # um notebook de exercício tem dezenas de KB; acima disto não é corrigido


def open_submissions(path: Path, tmp: Path) -> Path:
    """Pasta com ``<aluno>/<notebook>.ipynb``; um .zip é extraído numa pasta temporária."""
    if not path.exists():
        raise SystemExit(f"ENTREGAS não existe: {path}")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SystemExit(f"ENTREGAS precisa ser uma pasta ou um .zip: {path}")
        dest = tmp / "entregas"
        dest.mkdir(parents=True)
        with zipfile.ZipFile(path) as z:
            for member in z.infolist():  # sem caminhos absolutos nem "..": nada sai da pasta
                target = (dest / member.filename).resolve()
                if dest.resolve() not in target.parents or member.is_dir():
                    continue
                if stat.S_ISLNK(member.external_attr >> 16):
                    continue
                if member.file_size > LIMITE_BYTES:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(b"")
                    (target.parent / (target.name + ".grande-demais")).write_bytes(b"")
                    continue
                z.extract(member, dest)
        path = dest
        entries = [p for p in path.iterdir() if not p.name.startswith(("__MACOSX", "."))]
        if len(entries) == 1 and entries[0].is_dir() and not any(entries[0].glob("*.ipynb")):
            path = entries[0]  # zip com uma pasta-raiz (ex.: entregas/aluno/...)
    return path


def copy_submissions(src: Path, dst: Path) -> dict[str, str]:
    """Copia só arquivos comuns de ``src`` para ``dst``. Devolve, por caminho relativo, o motivo de cada
    notebook que não pôde ser copiado (no lugar dele fica um arquivo vazio, para virar uma linha)."""
    ignored: dict[str, str] = {}
    for root, dirs, files in os.walk(src, followlinks=False):
        rel_root = Path(root).relative_to(src)
        (dst / rel_root).mkdir(parents=True, exist_ok=True)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in files:
            if name.endswith(".grande-demais"):
                continue
            source, rel = Path(root) / name, rel_root / name
            info = os.lstat(source)
            motivo = None
            if stat.S_ISLNK(info.st_mode):
                motivo = "o arquivo é um atalho (link simbólico): não foi lido nem corrigido"
            elif not stat.S_ISREG(info.st_mode):
                motivo = "não é um arquivo comum (FIFO, dispositivo...): não foi lido nem corrigido"
            elif info.st_size > LIMITE_BYTES or (Path(root) / (name + ".grande-demais")).exists():
                motivo = f"arquivo grande demais (mais de {LIMITE_BYTES // 2**20} MB): não foi corrigido"
            if motivo is None:
                shutil.copyfile(source, dst / rel)
            elif name.lower().endswith(".ipynb"):
                (dst / rel).write_bytes(b"")
                ignored[str(rel)] = motivo
    return ignored


def students(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def notebooks(student_dir: Path) -> list[Path]:
    return sorted(p for p in student_dir.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
