"""Correção da turma com o nbgrader (make corrigir) e validação antes da entrega (make validar).

A turma de exemplo (alunos fictícios, tests/turma-exemplo.zip) cobre a entrega correta, a parcial, a
vazia e as quebradas; cada uma tem a sua linha esperada em notas.csv.
"""

import csv
import hashlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))
import corrigir  # noqa: E402
from turma_exemplo import gerar  # noqa: E402

TURMA = ROOT / "tests" / "turma-exemplo.zip"

# aluno, notebook -> (situação, total, máximo, trecho obrigatório do motivo)
EXPECTED = {
    ("ana-correta", "03-exercicios"): ("ok", "4", "4", ""),
    ("ana-correta", "04-projeto"): ("ok", "4", "4", ""),
    ("ana-correta", "04-exercicios"): ("ok", "6", "6", ""),
    ("bruno-parcial", "03-exercicios"): ("parcial", "2", "4", "aula01-ex4-verificacao: Exercício 4"),
    ("carla-vazia", "03-exercicios"): ("zero", "0", "4", "não resolvido"),
    ("carla-vazia", "04-projeto"): ("zero", "0", "4", "não resolvido"),
    ("davi-laco-infinito", "03-exercicios"): ("parcial", "2", "4", "tempo esgotado"),
    ("elisa-excecao", "03-exercicios"): ("parcial", "2", "4", "ZeroDivisionError"),
    ("fabio-sintaxe", "03-exercicios"): ("parcial", "2", "4", "SyntaxError"),
    ("gabi-celulas-apagadas", "03-exercicios"): ("parcial", "2", "4", "aula01-ex4-verificacao: célula de verificação apagada"),
    ("heitor-metadados", "03-exercicios"): ("parcial", "2", "4", "aula01-ex3-verificacao: célula de verificação apagada"),
    ("iris-tipo-trocado", "03-exercicios"): ("ok", "4", "4", "foram alteradas"),
    ("joao-arquivos-ruins", "03-exercicios"): ("arquivo_invalido", "0", "4", "arquivo vazio"),
    ("joao-arquivos-ruins", "04-projeto"): ("arquivo_invalido", "0", "4", "não é JSON"),
    ("karla-outra-aula", "03-exercicios"): ("notebook_errado", "0", "4", "parece ser 04-exercicios de aula-02"),
    ("leo-saida-enorme", "03-exercicios"): ("ok", "4", "4", ""),
    ("marina-mexe-em-arquivos", "03-exercicios"): ("ok", "4", "4", ""),
    ("nina-sem-notebooks", ""): ("sem_notebooks", "0", "0", "nenhum notebook"),
    ("olga-aula-3", "03-exercicios"): ("ok", "6", "6", ""),
}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def correcao(tmp_path_factory):
    """Corrige a turma de exemplo uma vez (é a parte demorada: ~1 min em 2 núcleos)."""
    saida = tmp_path_factory.mktemp("correcao")
    before = _digest(TURMA)
    rows = corrigir.grade_class(TURMA, saida, cell_timeout=10, notebook_timeout=120, log=lambda *_: None)
    with open(saida / "notas.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    return dict(saida=saida, rows=rows, table=table, before=before)


def test_turma_commitada_igual_ao_gerador(tmp_path):
    fresh = gerar.write(tmp_path / "turma.zip")
    assert _digest(fresh) == _digest(TURMA), "rode `make turma-exemplo` e commite"


def test_notas_csv_tem_a_linha_esperada_para_cada_entrega(correcao):
    got = {(r["aluno"], r["notebook"]): r for r in correcao["table"]}
    assert set(got) == set(EXPECTED)
    assert got[("olga-aula-3", "03-exercicios")]["aula"] == "aula-03-atencao-num-transformer-real"
    for key, (status, total, maximum, reason) in EXPECTED.items():
        row = got[key]
        assert (row["situacao"], row["total"], row["maximo"]) == (status, total, maximum), (key, row)
        assert reason in row["motivo"], (key, row["motivo"])


def test_colunas_de_pontos_por_exercicio(correcao):
    header = list(correcao["table"][0])
    assert header[:3] == ["aluno", "aula", "notebook"]
    assert header[-5:] == ["total", "maximo", "correcao_manual_pendente", "situacao", "motivo"]
    row = next(r for r in correcao["table"] if r["aluno"] == "bruno-parcial")
    assert (row["aula01-ex3-verificacao"], row["aula01-ex4-verificacao"]) == ("2", "0")
    ana = next(r for r in correcao["table"] if r["aluno"] == "ana-correta" and r["notebook"] == "03-exercicios")
    assert ana["correcao_manual_pendente"] == "3"  # as três respostas conceituais ficam para o professor


def test_entregas_nao_sao_modificadas_e_nada_escapa_da_pasta_temporaria(correcao):
    assert _digest(TURMA) == correcao["before"]
    assert not list(ROOT.rglob("INVADIDO.txt"))


def test_retorno_html_em_portugues_para_cada_linha(correcao):
    saida = correcao["saida"]
    for row in correcao["table"]:
        name = f"{row['aula']}-{row['notebook']}" if row["aula"] else (row["notebook"] or "sem-notebook")
        page = saida / "retorno" / row["aluno"] / f"{name}.html"
        text = page.read_text(encoding="utf-8")
        assert 'lang="pt-BR"' in text and f"Nota automática: {row['total']} de {row['maximo']}" in text
        assert page.stat().st_size < 2_000_000  # a saída enorme foi truncada
    bruno = (saida / "retorno" / "bruno-parcial" / "aula-01-self-attention-03-exercicios.html").read_text(encoding="utf-8")
    assert "faltou dividir as pontuações por sqrt(d_k)" in bruno  # a dica da verificação chega ao aluno
