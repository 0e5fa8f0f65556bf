"""A forma do código: as aulas descobertas (nenhuma lista escrita à mão), nenhum ciclo de imports entre os módulos
da biblioteca e do corretor, e toda referência ``:mod:``/``:func:``/``:class:`` nos docstrings aponta para algo
que existe."""

import ast
import importlib
import re
from pathlib import Path

import pytest

from correcao import catalogo, varredura

ROOT = Path(__file__).resolve().parents[1]
PACOTES = {"atencao": ROOT / "lib" / "atencao", "correcao": ROOT / "lib" / "correcao"}
REFERENCIA = re.compile(r":(?:mod|func|class|data|attr|meth|exc):`~?((?:atencao|correcao)\.[\w.]+)`")


def test_as_aulas_sao_os_modulos_de_verificacao_que_existem(tmp_path):
    assert catalogo.lesson_modules() == {p.stem for p in (PACOTES["atencao"] / "checks").glob("aula[0-9][0-9].py")}
    assert {"aula01", "aula02", "aula03"} <= catalogo.lesson_modules()
    for nome in ("aula01.py", "aula07.py", "_core.py", "aula1.py", "aula07_extra.py", "aulas.py"):
        (tmp_path / nome).write_text("")
    assert catalogo.lesson_modules(tmp_path) == {"aula01", "aula07"}
    assert catalogo.lesson_modules(tmp_path / "nao-existe") == frozenset()


def test_a_varredura_aponta_a_troca_do_modulo_de_uma_aula_nova(monkeypatch):
    """Trocar o nome de um módulo de verificação é apontado para qualquer aula que exista, não só as de uma lista."""
    codigo = "from atencao.checks import aula07\naula07 = None"
    assert not any("troca o nome" in m for m in varredura.scan_cell(codigo, {"aula07"}))
    monkeypatch.setattr(varredura, "lesson_modules", lambda: frozenset({"aula07"}))
    assert "célula, linha 2: troca o nome aula07" in varredura.scan_cell(codigo, {"aula07"})
    assert varredura.scan_cell("aula07 = 3", set()) == []  # o nome não é um módulo importado: nada a apontar


def _imports_internos(pacote: str, path: Path) -> set[str]:
    """Os módulos do mesmo pacote que ``path`` importa, em qualquer lugar do arquivo (também dentro de funções)."""
    nomes = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            alvos = [node.module] if node.module else [a.name for a in node.names]
            nomes |= {alvo.split(".")[0] for alvo in alvos}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(pacote + "."):
            nomes.add(node.module.split(".")[1])
    return {n for n in nomes if (path.parent / f"{n}.py").exists()}


@pytest.mark.parametrize("pacote", sorted(PACOTES))
def test_nenhum_ciclo_de_imports(pacote):
    pasta = PACOTES[pacote]
    grafo = {p.stem: _imports_internos(pacote, p) - {p.stem} for p in pasta.glob("*.py")}
    visitando, prontos = [], set()

    def visitar(modulo):
        if modulo in prontos:
            return
        assert modulo not in visitando, f"ciclo de imports em {pacote}: {' → '.join(visitando + [modulo])}"
        visitando.append(modulo)
        for outro in sorted(grafo.get(modulo, ())):
            visitar(outro)
        visitando.pop()
        prontos.add(modulo)

    for modulo in sorted(grafo):
        visitar(modulo)


def _resolve(referencia: str) -> bool:
    partes = referencia.split(".")
    for n in range(len(partes), 0, -1):
        try:
            alvo = importlib.import_module(".".join(partes[:n]))
        except ImportError:
            continue
        for nome in partes[n:]:
            if not hasattr(alvo, nome):
                return False
            alvo = getattr(alvo, nome)
        return True
    return False


def test_as_referencias_dos_docstrings_existem():
    """Uma referência a um módulo, função ou classe que mudou de nome ou saiu é um defeito do docstring."""
    arquivos = [*PACOTES["atencao"].glob("*.py"), *PACOTES["correcao"].glob("*.py"), *(ROOT / "scripts").glob("*.py"),
                ROOT / "curso.py"]
    quebradas = sorted({(p.relative_to(ROOT).as_posix(), r) for p in arquivos
                        for r in REFERENCIA.findall(p.read_text(encoding="utf-8")) if not _resolve(r.rstrip("."))})
    assert quebradas == []
