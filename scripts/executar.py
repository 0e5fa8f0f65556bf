"""Executa notebooks e salva as saídas no próprio arquivo (o que o nbval depois compara).

Regenera antes os notebooks de aluno (scripts/gerar_alunos.py). Cada notebook roda com o kernel
``python3`` no seu próprio diretório, sem registrar horários nas células.

Uso:
    python scripts/executar.py                 # todos de notebooks/ e solutions/
    python scripts/executar.py caminho.ipynb   # só estes
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gerar_alunos  # noqa: E402

ROOT = gerar_alunos.ROOT
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = KERNELSPEC
    client = NotebookClient(nb, kernel_name="python3", timeout=600, record_timing=False, store_widget_state=False,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
        for out in cell.get("outputs", []):
            # o widget vivo não sobrevive no arquivo (o id do modelo muda a cada execução): guardamos só a
            # imagem estática e o texto, que qualquer visualizador mostra; rodar a célula traz o widget de volta
            out.get("data", {}).pop("application/vnd.jupyter.widget-view+json", None)
    nbformat.write(nb, path)
    return time.perf_counter() - t0


def all_notebooks() -> list[Path]:
    found = [p for d in ("notebooks", "solutions") for p in sorted((ROOT / d).rglob("*.ipynb"))]
    return [p for p in found if ".ipynb_checkpoints" not in p.parts]


if __name__ == "__main__":
    os.environ.pop("MPLBACKEND", None)  # Agg faria as figuras sumirem dos notebooks
    gerar_alunos.generate()
    targets = [Path(a).resolve() for a in sys.argv[1:]] or all_notebooks()
    for nb_path in targets:
        print(f"{execute(nb_path):6.1f} s  {nb_path.relative_to(ROOT)}", flush=True)
