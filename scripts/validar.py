"""Confere um notebook antes da entrega, com o mesmo motor da correção (``lib/correcao/validar.py``).

Uso: ``python scripts/validar.py CAMINHO.ipynb`` (ou ``make validar NB=CAMINHO.ipynb``). O notebook
original não é alterado. Sai com código 0 se estiver pronto para entregar, 1 caso contrário.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("Uso: make validar NB=caminho/do/notebook.ipynb")
        return 2
    path = Path(args[0])
    if not path.is_file():
        print(f"❌ arquivo não encontrado: {path}")
        return 2
    if path.suffix.lower() != ".ipynb":
        print(f"❌ {path.name} não é um notebook: passe o arquivo .ipynb que você vai entregar.")
        return 2
    from correcao.validar import validate

    ok, lines = validate(path)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
