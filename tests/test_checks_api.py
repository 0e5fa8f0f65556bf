"""A API de quem escreve uma verificação (``atencao.checks``): nenhum nome privado atravessa módulos, e os nomes
públicos do arcabouço dizem o que fazem (docstring)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "lib" / "atencao" / "checks"
PACOTE = "atencao.checks"

# os módulos do arcabouço (o que não é uma aula nem o __init__)
ARCABOUCO = sorted(p.stem for p in CHECKS.glob("*.py") if not p.stem.startswith(("aula", "_")))


def _modulo_absoluto(arquivo: Path, node: ast.ImportFrom) -> str:
    """O nome absoluto do módulo de ``from ... import`` em ``arquivo`` (resolve os imports relativos)."""
    if not node.level:
        return node.module or ""
    try:  # o pacote do arquivo, pelo caminho (lib/atencao/checks/aula01.py: atencao.checks)
        partes = list(arquivo.relative_to(ROOT / "lib").parts[:-1])
    except ValueError:  # fora de lib/ (um teste): não é um pacote
        partes = []
    if node.level > 1:
        partes = partes[: len(partes) - (node.level - 1)]
    return ".".join([*partes, *([node.module] if node.module else [])])


def importacoes_privadas(arquivo: Path, texto: str | None = None) -> list[str]:
    """As importações de nomes privados em ``arquivo``: ``from M import _x`` com ``M`` do pacote ``atencao`` (ou
    relativo), e qualquer importação de um módulo privado das verificações (``atencao.checks._x``)."""
    tree = ast.parse(texto if texto is not None else arquivo.read_text(encoding="utf-8"))
    achados = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modulo = _modulo_absoluto(arquivo, node)
            if not (node.level or modulo.split(".")[0] == "atencao"):
                continue
            for alias in node.names:
                alvo = f"{modulo}.{alias.name}"
                privado = alias.name.startswith("_") or (
                    alvo.startswith(PACOTE + ".") and any(p.startswith("_") for p in alvo.split(".")[2:]))
                if privado:
                    achados.append(f"{arquivo.name}:{node.lineno}: from {modulo} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACOTE + ".") and any(p.startswith("_") for p in alias.name.split(".")[2:]):
                    achados.append(f"{arquivo.name}:{node.lineno}: import {alias.name}")
    return achados


def _arquivos_python() -> list[Path]:
    arquivos = [*CHECKS.glob("*.py"), *(ROOT / "lib").rglob("*.py"), *(ROOT / "scripts").rglob("*.py"),
                ROOT / "curso.py", *(ROOT / "tests").rglob("*.py")]
    return sorted({p for p in arquivos if ".venv" not in p.parts and p != Path(__file__).resolve()})


def test_nenhum_nome_privado_importado_de_outro_modulo():
    """Dentro de ``lib/atencao/checks/`` nenhum módulo importa ``_x`` de outro; fora, ninguém (biblioteca,
    correção, testes, scripts, ``curso.py``) importa um nome privado ou um módulo privado das verificações."""
    achados = [a for p in _arquivos_python() if p.parent == CHECKS for a in importacoes_privadas(p)]
    assert achados == []
    de_fora = [a for p in _arquivos_python() if p.parent != CHECKS for a in importacoes_privadas(p)
               if PACOTE in a]
    assert de_fora == []


@pytest.mark.parametrize("codigo, esperado", [
    ("from ._core import check", ["aula09.py:1: from atencao.checks._core import check"]),
    ("from .framework import _Stop", ["aula09.py:1: from atencao.checks.framework import _Stop"]),
    ("from . import _erros", ["aula09.py:1: from atencao.checks import _erros"]),
    ("from .report import describe as _d", []),  # o nome importado é público; o apelido é deste módulo
    ("import atencao.checks._core as c", ["aula09.py:1: import atencao.checks._core"]),
    ("from atencao.checks.watcher import _library_code_ids", ["aula09.py:1: from atencao.checks.watcher import "
                                                                "_library_code_ids"]),
    ("from .framework import check, describe\nfrom ..attention import softmax", []),
    ("from __future__ import annotations\nfrom os import _exit", []),  # fora do pacote atencao: não é conosco
])
def test_a_regra_pega_as_importacoes_privadas(codigo, esperado):
    """O teste acima não passa por não achar nada: a mesma função aponta cada forma de importar um nome privado."""
    assert importacoes_privadas(CHECKS / "aula09.py", codigo) == esperado


def _publicos(modulo) -> list[tuple[str, object]]:
    """Os nomes de ``__all__`` definidos no próprio módulo (funções e classes) e os métodos públicos das classes."""
    out = []
    for nome in modulo.__all__:
        obj = getattr(modulo, nome)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != modulo.__name__:
            continue  # constantes e nomes reexportados (a docstring está no módulo de origem)
        out.append((nome, obj))
        if inspect.isclass(obj):
            out += [(f"{nome}.{k}", v) for k, v in vars(obj).items()
                    if not k.startswith("_") and inspect.isfunction(v)]
    return out


@pytest.mark.parametrize("nome", ARCABOUCO)
def test_os_nomes_publicos_do_arcabouco_tem_docstring(nome):
    modulo = importlib.import_module(f"{PACOTE}.{nome}")
    assert modulo.__doc__ and modulo.__doc__.strip(), f"{nome} sem docstring de módulo"
    assert isinstance(modulo.__all__, list) and modulo.__all__, f"{nome} sem __all__"
    for publico in modulo.__all__:
        assert hasattr(modulo, publico), f"{nome}.__all__ cita {publico}, que não existe"
        assert not publico.startswith("_")
    sem = [n for n, obj in _publicos(modulo) if not (inspect.getdoc(obj) or "").strip()]
    assert sem == [], f"{nome}: sem docstring: {sem}"


def test_o_teste_de_docstring_pega_um_nome_sem_docstring(monkeypatch):
    from atencao.checks import report

    def sem_docstring():
        return None

    sem_docstring.__module__ = report.__name__
    monkeypatch.setattr(report, "sem_docstring", sem_docstring, raising=False)
    monkeypatch.setattr(report, "__all__", [*report.__all__, "sem_docstring"])
    assert [n for n, obj in _publicos(report) if not (inspect.getdoc(obj) or "").strip()] == ["sem_docstring"]


def test_o_arcabouco_tem_os_modulos_por_assunto():
    """O arcabouço (o que quem escreve uma verificação importa), a vigilância e as fotos de integridade ficam
    em módulos separados, e nenhum é grande demais para ler de uma vez."""
    assert {"framework", "checker", "watcher", "integrity", "report", "cases"} <= set(ARCABOUCO)
    assert not (CHECKS / "_core.py").exists()
    for nome in ARCABOUCO:
        linhas = len((CHECKS / f"{nome}.py").read_text(encoding="utf-8").splitlines())
        assert linhas <= 400, f"{nome}.py tem {linhas} linhas"


def test_as_verificacoes_das_aulas_importam_so_do_arcabouco_publico():
    """Os módulos ``aulaNN`` importam o arcabouço por ``from .framework import ...`` (e as dicas comuns de
    ``multihead_hints``), nunca dos módulos internos da vigilância e das fotos."""
    for arquivo in sorted(CHECKS.glob("aula*.py")):
        tree = ast.parse(arquivo.read_text(encoding="utf-8"))
        internos = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
        assert internos <= {"framework", "multihead_hints"}, (arquivo.name, internos)
