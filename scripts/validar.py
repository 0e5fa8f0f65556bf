"""Confere um notebook antes da entrega, com o mesmo motor da correção (``lib/correcao/validar.py``).

Uso: ``python scripts/validar.py CAMINHO.ipynb`` (ou ``make validar NB=CAMINHO.ipynb``). O notebook
original não é alterado. Os limites são os da correção do professor (:mod:`correcao.politica`), e as mesmas opções
de ``scripts/corrigir.py`` os mudam (``--tempo-celula``, ``--tempo-notebook``, ``--memoria``...): para conferir com
os limites que o professor anunciou, se forem outros. Sai com código 0 se estiver pronto para entregar, 1 caso
contrário, 2 no uso errado e 3 quando a conferência não roda nesta máquina (a caixa ou o kernel não começaram).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def missing_file_hint(path: Path, raiz: Path) -> str:
    """A sugestão para um notebook que não existe em ``path``: o mesmo nome com ``.ipynb``, ou a cópia do aluno com
    esse nome em ``raiz/trabalho/`` (o caminho é a partir da pasta do curso ``raiz``); ``""`` sem sugestão."""
    com_ipynb = path.with_name(path.name + ".ipynb")
    if com_ipynb.is_file():
        return f" (você quis dizer {com_ipynb}?)"
    trabalho = raiz / "trabalho"
    nome = path.name if path.suffix.lower() == ".ipynb" else path.name + ".ipynb"
    achados = sorted(trabalho.glob(f"**/{nome}")) if not path.is_absolute() and trabalho.is_dir() else []
    if not achados:
        return ""
    opcoes = " ou ".join(str(a.relative_to(raiz)) for a in achados[:3])
    return f" (o caminho é a partir da pasta do curso, e a sua cópia fica em trabalho/: você quis dizer {opcoes}?)"


def main(argv=None) -> int:
    from correcao import politica

    parser = argparse.ArgumentParser(description="Confere um notebook antes da entrega, com o motor da correção.")
    parser.add_argument("notebook", nargs="?", default=None, help="o notebook (a sua cópia em trabalho/)")
    politica.add_arguments(parser)
    args = parser.parse_args(argv)
    if not args.notebook:
        print("Uso: make validar NB=caminho/do/notebook.ipynb")
        return 2
    path = Path(args.notebook)
    if path.is_dir():
        print(f"❌ {path} é uma pasta: passe o notebook (.ipynb) que você vai entregar, por exemplo "
              "trabalho/modulo-06/aula-01-self-attention/03-exercicios.ipynb")
        return 2
    if not path.is_file():
        print(f"❌ arquivo não encontrado: {path}{missing_file_hint(path, Path(__file__).resolve().parents[1])}")
        return 2
    if path.suffix.lower() != ".ipynb":
        print(f"❌ {path.name} não é um notebook: passe o arquivo .ipynb que você vai entregar.")
        return 2
    from correcao.isolamento import BwrapMissing
    from correcao.motor import MachineFailure
    from correcao.validar import validate

    try:
        ok, lines = validate(path, politica.from_args(args))
    except (BwrapMissing, MachineFailure) as exc:  # a máquina, e não o notebook: nada a dizer dele
        print(f"❌ Não consegui conferir o notebook nesta máquina: {exc}")
        return 3
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    if notebooks in path.resolve().parents:
        lines.insert(0, f"⚠️ {path} é o original do curso (notebooks/), e não a sua cópia: as suas respostas ficam em "
                        "trabalho/ (a mesma pasta e o mesmo nome).")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
