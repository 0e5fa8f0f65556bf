"""Correção da turma com o nbgrader (make corrigir), cada entrega isolada numa caixa do bubblewrap.

A turma de exemplo (alunos fictícios, tests/turma-exemplo.zip) cobre a entrega correta, a parcial, a
vazia, as quebradas, as trapaças (trabalho errado que tenta enganar a verificação) e os danos (código
que tenta ler as respostas, escrever fora da sua pasta, estragar a cópia de um colega, deixar um
processo rodando, esgotar a memória ou criar processos sem fim); cada uma tem a sua linha esperada.
"""

import csv
import hashlib
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from correcao import isolamento, motor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402

pytestmark = pytest.mark.skipif(not isolamento.bwrap_disponivel() and not __import__("os").environ.get("CI"),
                                reason="sem bubblewrap nesta máquina (o CI instala e não pula)")

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
    # a caixa não deixa escrever fora da pasta: o código do aluno falha no que tentou, e só nele
    ("marina-mexe-em-arquivos", "03-exercicios"): ("parcial", "2", "4", "Permission denied"),
    ("nina-sem-notebooks", ""): ("sem_notebooks", "0", "0", "nenhum notebook"),
    ("olga-aula-3", "03-exercicios"): ("ok", "6", "6", ""),
    # trapaças (trabalho errado): nunca ganham ponto; quem mexe na correção vai para revisão
    ("trapaca-religa-verificacao", "03-exercicios"): ("revisar", "0", "4", "altera o módulo aula01"),
    ("trapaca-desliga-correcao", "03-exercicios"): ("revisar", "0", "4", "importa as verificações"),
    ("trapaca-apaga-variavel", "03-exercicios"): ("revisar", "0", "4", "os.environ"),
    ("trapaca-comparacao", "03-exercicios"): ("revisar", "0", "4", "falhou na conferência independente"),
    ("trapaca-engole-excecao", "03-exercicios"): ("revisar", "0", "4", "get_ipython().set_custom_exc"),
    ("trapaca-numpy", "03-exercicios"): ("revisar", "0", "4", "altera o módulo np"),
    ("trapaca-sys-modules", "03-exercicios"): ("revisar", "0", "4", "sys.modules"),
    ("trapaca-esconde-traceback", "03-exercicios"): ("revisar", "0", "4", "get_ipython().showtraceback"),
    ("trapaca-troca-o-nome", "03-exercicios"): ("revisar", "0", "4", "troca o nome aula01"),
    ("trapaca-imprime-aprovado", "03-exercicios"): ("zero", "0", "4", "Exercício 4"),
    ("trapaca-introspeccao", "03-exercicios"): ("revisar", "0", "4", "Checker.expect"),
    ("trapaca-troca-codigo", "03-exercicios"): ("revisar", "0", "4", "_reference_projected"),
    # danos: nada acontece fora da caixa; o trabalho certo continua valendo
    ("dano-le-respostas", "03-exercicios"): ("zero", "0", "4", "não resolvido"),
    ("dano-escreve-fora", "03-exercicios"): ("ok", "4", "4", ""),
    ("dano-estraga-colega", "03-exercicios"): ("ok", "4", "4", ""),
    ("dano-processo-fantasma", "03-exercicios"): ("revisar", "4", "4", "importa subprocess"),
    ("dano-memoria", "03-exercicios"): ("memoria_esgotada", "2", "4", "memória esgotada em célula"),
    ("dano-muitos-processos", "03-exercicios"): ("revisar", "0", "4", "os.fork"),
}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _repo_digest() -> dict:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True).stdout.split(b"\0")
    return {f: _digest(ROOT / f.decode()) for f in files if f and (ROOT / f.decode()).is_file()}


@pytest.fixture(scope="module")
def correcao(tmp_path_factory):
    """Corrige a turma de exemplo uma vez (é a parte demorada: ~2 min em 2 núcleos)."""
    saida = tmp_path_factory.mktemp("correcao")
    before, repo_before = _digest(TURMA), _repo_digest()
    marca = secrets.token_hex(8)
    rows = motor.grade_class(TURMA, saida, cell_timeout=10, notebook_timeout=120, log=lambda *_: None, marca=marca)
    sobreviventes = isolamento.restantes(marca)
    notas = (saida / "notas.csv").read_bytes()
    outputs = sorted(str(p.relative_to(saida)) for p in saida.rglob("*"))
    time.sleep(3)  # um processo fantasma teria tempo de reescrever notas.csv
    with open(saida / "notas.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    return dict(saida=saida, rows=rows, table=table, before=before, repo_before=repo_before, notas=notas,
                outputs=outputs, sobreviventes=sobreviventes)


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
    assert header[-6:] == ["total", "maximo", "correcao_manual_pendente", "situacao", "isolamento", "motivo"]
    row = next(r for r in correcao["table"] if r["aluno"] == "bruno-parcial")
    assert (row["aula01-ex3-verificacao"], row["aula01-ex4-verificacao"]) == ("2", "0")
    ana = next(r for r in correcao["table"] if r["aluno"] == "ana-correta" and r["notebook"] == "03-exercicios")
    assert ana["correcao_manual_pendente"] == "3"  # as três respostas conceituais ficam para o professor


def test_entregas_repo_e_saida_intactos_e_nenhum_processo_sobra(correcao):
    assert _digest(TURMA) == correcao["before"]
    assert _repo_digest() == correcao["repo_before"]
    assert not list(ROOT.glob("INVADIDO.txt")) and not Path("/tmp/INVADIDO.txt").exists()
    saida = correcao["saida"]
    assert (saida / "notas.csv").read_bytes() == correcao["notas"], "algo reescreveu notas.csv depois da correção"
    assert all(p == "notas.csv" or p.startswith("retorno") for p in correcao["outputs"]), correcao["outputs"]
    assert correcao["sobreviventes"] == []
    cmdlines = []
    for proc in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdlines.append(proc.read_bytes())
        except OSError:
            continue
    assert not any(b"fantasma-da-turma" in c for c in cmdlines)


def test_toda_linha_corrigida_diz_que_foi_isolada(correcao):
    executed = [r for r in correcao["table"] if r["situacao"] not in ("arquivo_invalido", "notebook_errado",
                                                                        "sem_notebooks")]
    assert executed and all(r["isolamento"] == "bwrap" for r in executed)


def test_nenhuma_trapaca_ganha_ponto(correcao):
    rows = [r for r in correcao["table"] if r["aluno"].startswith("trapaca-")]
    assert len(rows) >= 6
    for r in rows:
        assert r["total"] == "0", r
        assert r["situacao"] in ("revisar", "zero"), r


def test_retorno_html_em_portugues_para_cada_linha(correcao):
    saida = correcao["saida"]
    for row in correcao["table"]:
        name = f"{row['aula']}-{row['notebook']}" if row["aula"] else (row["notebook"] or "sem-notebook")
        page = saida / "retorno" / row["aluno"] / f"{name}.html"
        text = page.read_text(encoding="utf-8")
        assert 'lang="pt-BR"' in text and f"Nota automática: {row['total']} de {row['maximo']}" in text
        assert page.stat().st_size < 2_000_000  # a saída enorme foi truncada
    xss = (saida / "retorno" / "trapaca-imprime-aprovado" / "aula-01-self-attention-03-exercicios.html").read_text(
        encoding="utf-8")
    assert "Minha resposta" in xss and "&lt;script&gt;alert" in xss  # mostrado como texto
    assert "<script>alert" not in xss and "<iframe" not in xss
    bruno = (saida / "retorno" / "bruno-parcial" / "aula-01-self-attention-03-exercicios.html").read_text(encoding="utf-8")
    assert "faltou dividir as pontuações por sqrt(d_k)" in bruno  # a dica da verificação chega ao aluno
