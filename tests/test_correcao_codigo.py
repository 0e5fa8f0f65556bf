"""Regras da casa no código da biblioteca, da correção e dos programas: nenhum nome privado (``_nome``) importado de
outro módulo. Um nome que outro módulo usa é público (sem o ``_``), com a docstring de um nome público; um módulo
privado inteiro (``from . import _caixa``, ``from correcao import _remoto``) é outra coisa, e vale. Os testes ficam
de fora: eles testam também o que é privado."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASTAS = ("lib", "scripts", "hub")
# nomes privados ainda importados de outro módulo, com o motivo: nenhum hoje; um novo só entra aqui com uma razão
AINDA_PRIVADOS: set = set()


def _is_module(path: Path, node: ast.ImportFrom, nome: str) -> bool:
    """``nome`` é um módulo (ou pacote) de ``lib/``: ``from . import _caixa``, ``from correcao import _remoto``."""
    if node.level:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
    else:
        base = ROOT / "lib"
    base = base.joinpath(*(node.module or "").split(".")) if node.module else base
    return (base / f"{nome}.py").exists() or (base / nome / "__init__.py").exists()


def _private_imports(path: Path) -> list[tuple[int, str, str]]:
    """``(linha, módulo, nome)`` de cada ``from módulo import _nome`` de ``path`` (fora os módulos privados
    importados inteiros e os dunders)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            nome = alias.name
            if not nome.startswith("_") or nome.startswith("__"):
                continue
            modulo = "." * node.level + (node.module or "")
            if not _is_module(path, node, nome):
                out.append((node.lineno, modulo, nome))
    return out


def test_nenhum_nome_privado_importado_de_outro_modulo():
    achados = []
    for pasta in PASTAS:
        for path in sorted((ROOT / pasta).rglob("*.py")):
            if "__pycache__" in path.parts or ".venv" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            for linha, modulo, nome in _private_imports(path):
                if (rel, nome) not in AINDA_PRIVADOS:
                    achados.append(f"{rel}:{linha}: from {modulo} import {nome}")
    assert not achados, "nomes privados importados de outro módulo (torne-os públicos):\n" + "\n".join(achados)


def test_a_busca_acha_um_nome_privado_importado(tmp_path):
    exemplo = tmp_path / "x.py"
    (tmp_path / "_caixa.py").write_text("", encoding="utf-8")
    exemplo.write_text("from . import _caixa\nfrom .catalogo import _MARCA, publico\nfrom os import __all__\n"
                       "from correcao import _remoto, _nao_existe\n", encoding="utf-8")
    assert _private_imports(exemplo) == [(2, ".catalogo", "_MARCA"), (4, "correcao", "_nao_existe")]
