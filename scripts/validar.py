"""Confere um notebook antes da entrega: roda uma cópia e mostra quais verificações passam.

Uso: ``python scripts/validar.py CAMINHO.ipynb`` (ou ``make validar NB=CAMINHO.ipynb``).

O notebook original não é alterado: uma cópia roda numa pasta temporária, como na correção. Sai com
código 0 se todas as verificações passarem, 1 caso contrário.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corrigir  # noqa: E402
import gerar_alunos  # noqa: E402

CHECK_LINE = re.compile(r"^(✅|❌|⏳) (.+?):")


def validate(path: Path, cell_timeout: int = 60) -> tuple[bool, list[str]]:
    """Devolve (tudo passou?, linhas do relatório em português)."""
    import nbformat
    from nbclient import NotebookClient

    everything = corrigir.catalog()
    g = corrigir.identify(everything, path.resolve())
    if g is None:
        names = sorted({g.notebook for g in everything.values()})
        return False, [f"❌ “{path.name}” não é um notebook de exercício ou projeto do curso "
                       f"(conhecidos: {', '.join(names)})."]
    problem = corrigir.inspect_file(path, g, everything)
    if problem:
        return False, [f"❌ {problem}."]
    report = []
    submitted = nbformat.read(path, as_version=4)
    original = gerar_alunos.student_version(nbformat.read(g.source, as_version=4))
    protected = {c.metadata["nbgrader"]["grade_id"]: c.source for c in original.cells
                 if c.get("metadata", {}).get("nbgrader", {}).get("locked")}
    seen = {}
    for c in submitted.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid:
            seen[gid] = c
    for gid, source in protected.items():
        if gid not in seen:
            report.append(f"⚠️ a célula protegida {gid} foi apagada ou perdeu os metadados: "
                          "na correção ela vale 0 ponto. Recupere-a do notebook original.")
        elif seen[gid].source != source:
            report.append(f"⚠️ a célula protegida {gid} foi editada: na correção ela volta ao original.")
    with tempfile.TemporaryDirectory(prefix="validar-") as tmp:
        copy = Path(tmp) / path.name
        shutil.copy(path, copy)
        nb = nbformat.read(copy, as_version=4)
        env_backup = os.environ.pop("NBGRADER_EXECUTION", None)
        try:
            NotebookClient(nb, timeout=cell_timeout, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": tmp}}).execute()
        except Exception as exc:  # noqa: BLE001 - tempo esgotado, kernel morto...
            report.append(f"❌ a execução parou: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        finally:
            if env_backup is not None:
                os.environ["NBGRADER_EXECUTION"] = env_backup
    checks, errors = [], []
    for c in nb.cells:
        for out in c.get("outputs", []):
            if out.get("output_type") == "stream":
                checks += [line for line in out.get("text", "").splitlines()
                           if CHECK_LINE.match(line) or line.startswith("  ❌") or line.strip().startswith("dica:")]
            elif out.get("output_type") == "error":
                errors.append(f"❌ erro numa célula: {out.get('ename')}: {(out.get('evalue') or '')[:200]}")
    expected = sum(1 for gid, (_, _, auto) in g.cells.items() if auto)
    passed = sum(1 for line in checks if line.startswith("✅"))
    report = [f"Notebook {path.name} ({g.assignment}): {passed} de {expected} verificação(ões) passando.",
              *checks, *errors, *report]
    ok = passed == expected and not errors
    report.append("Pronto para entregar! ✅" if ok else "Ainda há o que resolver antes de entregar.")
    return ok, report


def main(argv=None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("Uso: make validar NB=caminho/do/notebook.ipynb")
        return 2
    path = Path(args[0])
    if not path.is_file():
        print(f"❌ arquivo não encontrado: {path}")
        return 2
    ok, lines = validate(path)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
