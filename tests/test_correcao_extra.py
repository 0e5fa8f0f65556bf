"""Correção com o nbgrader: entrada em .zip, repetição, fonte do nbgrader, metadados e `make validar`.

(Separado de test_correcao.py para rodar em paralelo com a correção da turma inteira.)
"""

import json
import sys
import zipfile

import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import corrigir  # noqa: E402
import validar  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402


@pytest.fixture(scope="module")
def turma(tmp_path_factory):
    """A turma de exemplo extraída numa pasta temporária (para validar notebooks soltos)."""
    dest = tmp_path_factory.mktemp("turma")
    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        z.extractall(dest)
    return dest / "turma-exemplo"


def test_zip_e_repeticao_dao_o_mesmo_resultado(tmp_path, turma):
    pacote = tmp_path / "turma.zip"
    with zipfile.ZipFile(pacote, "w") as z:
        for aluno in ("bruno-parcial", "joao-arquivos-ruins"):
            for f in (turma / aluno).iterdir():
                z.write(f, f"entregas/{aluno}/{f.name}")
        z.writestr("../fora.txt", "tentativa de sair da pasta")
    results = []
    for k in range(2):
        saida = tmp_path / f"saida{k}"
        corrigir.grade_class(pacote, saida, cell_timeout=5, log=lambda *_: None)
        results.append((saida / "notas.csv").read_text(encoding="utf-8"))
    assert results[0] == results[1]
    assert "bruno-parcial" in results[0] and "arquivo_invalido" in results[0]
    assert not (tmp_path.parent / "fora.txt").exists()


def test_solucoes_servem_de_fonte_ao_nbgrader_sem_edicao(tmp_path):
    """generate_assignment do nbgrader sobre solutions/ dá exatamente os notebooks de aluno do curso."""
    everything = corrigir.catalog()
    course = corrigir.build_course(tmp_path, list(everything.values()), cell_timeout=5)
    for g in everything.values():
        release = json.loads((course / "release" / g.assignment / f"{g.notebook}.ipynb").read_text(encoding="utf-8"))
        ours = json.loads((ROOT / "notebooks" / g.source.relative_to(ROOT / "solutions")).read_text(encoding="utf-8"))
        assert ["".join(c["source"]) for c in release["cells"]] == ["".join(c["source"]) for c in ours["cells"]]


def test_ids_de_correcao_unicos_no_curso_e_metadados_completos():
    seen = {}
    for g in corrigir.catalog().values():
        nb = json.loads(g.source.read_text(encoding="utf-8"))
        kinds = set()
        for cell in nb["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader")
            if not meta:
                continue
            gid = meta["grade_id"]
            assert gid not in seen, f"grade_id repetido: {gid} em {g.notebook} e {seen[gid]}"
            seen[gid] = g.notebook
            if meta["grade"] and not meta["solution"]:
                kinds.add("teste")
                assert meta["locked"] and meta["points"] > 0 and cell["cell_type"] == "code"
            elif meta["solution"]:
                kinds.add("resposta" if cell["cell_type"] == "markdown" else "solucao")
            elif meta["locked"]:
                kinds.add("protegida")
        assert {"teste", "solucao", "protegida"} <= kinds, (g.notebook, kinds)


def test_validar_mostra_o_que_passa_e_o_que_falta(turma):
    ok, lines = validar.validate(turma / "bruno-parcial" / "03-exercicios.ipynb")
    text = "\n".join(lines)
    assert not ok and "1 de 2" in text and "faltou dividir" in text
    ok, lines = validar.validate(turma / "ana-correta" / "03-exercicios.ipynb")
    assert ok and "Pronto para entregar" in lines[-1]
    ok, lines = validar.validate(turma / "heitor-metadados" / "03-exercicios.ipynb")
    assert not ok and any("foi editada" in line for line in lines)
    ok, lines = validar.validate(turma / "joao-arquivos-ruins" / "03-exercicios.ipynb")
    assert not ok and "arquivo vazio" in lines[0]
