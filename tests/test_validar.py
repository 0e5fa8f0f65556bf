"""`make validar` (a conferência do aluno antes da entrega) diz a verdade e concorda com `make corrigir`."""

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from correcao import catalogo
from correcao.validar import _report, validate, validate_many

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import turma_corrigida  # noqa: E402
from turma_exemplo.esperado import EXPECTED  # noqa: E402

pytestmark = pytest.mark.lento  # make test-lento: roda notebooks na caixa, como a correção

SOLUCAO = ROOT / "solutions" / "modulo-06" / "aula-01-self-attention"


@pytest.fixture(scope="module")
def turma(tmp_path_factory):
    dest = tmp_path_factory.mktemp("turma")
    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        for info in z.infolist():
            if info.filename.startswith("turma-exemplo/") and "\\" not in info.filename:
                z.extract(info, dest)
    return dest / "turma-exemplo"


def _texto(lines) -> str:
    return "\n".join(lines)


def _cell_text(nb: dict, grade_id: str) -> dict:
    return next(c for c in nb["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == grade_id)


CONCORDANCIA = [
    ("ana-correta", "03-exercicios.ipynb"), ("bruno-parcial", "03-exercicios.ipynb"),
    ("davi-laco-infinito", "03-exercicios.ipynb"), ("rita-renomeados", "exercicios (1).ipynb"),
    ("ulisses-celula-colada", "03-exercicios.ipynb"), ("vera-celula-de-outro-nb", "03-exercicios.ipynb"),
    ("wagner-kernel-morre", "03-exercicios.ipynb"), ("neto-resposta-embaixo", "03-exercicios.ipynb"),
    ("pedro-sem-respostas-escritas", "03-exercicios.ipynb"), ("renata-sem-metadados", "03-exercicios.ipynb"),
    ("heitor-metadados", "03-exercicios.ipynb"),
]


# Estes passam pelo validar de ponta a ponta (uma correção só deles, numa pasta à parte, como o aluno faria);
# os outros usam a correção da turma inteira, já feita uma vez na sessão, com o mesmo relatório do validar.
DE_PONTA_A_PONTA = [("ana-correta", "03-exercicios.ipynb"), ("rita-renomeados", "exercicios (1).ipynb"),
                    ("ulisses-celula-colada", "03-exercicios.ipynb")]


@pytest.fixture(scope="module")
def validados(turma, tmp_path_factory):
    """O relatório do validar para cada notebook de CONCORDANCIA."""
    paths = [turma / aluno / arquivo for aluno, arquivo in DE_PONTA_A_PONTA]
    antes = [p.read_bytes() for p in paths]
    relatorios = dict(zip(DE_PONTA_A_PONTA, validate_many(paths, cell_timeout=20, workers=2)))
    assert [p.read_bytes() for p in paths] == antes  # o notebook do aluno não muda
    rows = turma_corrigida.turma_corrigida(tmp_path_factory)["rows"]
    for aluno, arquivo in CONCORDANCIA:
        if (aluno, arquivo) not in relatorios:
            relatorios[(aluno, arquivo)] = _relatorio_na_turma(rows, turma / aluno / arquivo, aluno, arquivo)
    return relatorios


def _relatorio_na_turma(rows, path, aluno, arquivo):
    """O relatório do validar feito sobre a linha da correção da turma inteira."""
    row = next(r for r in rows if (r.student, r.arquivo) == (aluno, arquivo))
    nb = json.loads(row.autograded.read_text(encoding="utf-8")) if row.autograded else None
    return _report(path, row, nb)


def test_validar_sozinho_e_na_turma_dao_o_mesmo_relatorio(validados, tmp_path_factory):
    """O mesmo notebook, validado sozinho e corrigido com a turma inteira: o mesmo relatório."""
    rows = turma_corrigida.turma_corrigida(tmp_path_factory)["rows"]
    for aluno, arquivo in DE_PONTA_A_PONTA:
        assert validados[(aluno, arquivo)] == _relatorio_na_turma(rows, Path(arquivo), aluno, arquivo), aluno


@pytest.mark.parametrize("aluno, arquivo", CONCORDANCIA)
def test_validar_concorda_com_a_correcao(validados, aluno, arquivo):
    _, _, status, total, maximo, motivo = EXPECTED[(aluno, arquivo)]
    ok, lines = validados[(aluno, arquivo)]
    pronto = status == "ok" and total == maximo and "esboço ✍️" not in motivo
    assert ok == pronto, _texto(lines)
    assert lines[0].endswith(f"{int(total) // 2} de {int(maximo) // 2} verificação(ões) passando."), lines[0]
    if "esboço ✍️" in motivo:  # no validar, uma linha ✍️ por resposta, com a célula e os pontos
        assert "✍️ resposta escrita ainda não respondida" in _texto(lines), _texto(lines)
    elif motivo and not motivo.startswith("aula0"):  # o que a verificação imprime não se repete como nota
        assert motivo.split("(")[0].strip() in _texto(lines), _texto(lines)


def test_saidas_antigas_nao_contam_e_erro_de_sintaxe_diz_a_celula(tmp_path):
    """A solução commitada tem as saídas ✅ de uma execução antiga; com o ex. 3 quebrado, não está pronta."""
    nb = json.loads((SOLUCAO / "03-exercicios.ipynb").read_text(encoding="utf-8"))
    assert any("✅" in json.dumps(c.get("outputs", []), ensure_ascii=False) for c in nb["cells"])
    _cell_text(nb, "aula01-ex3-solucao")["source"] = "def similar_embeddings(:\n    x = (1,"
    path = tmp_path / "03-exercicios.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    ok, lines = validate(path, cell_timeout=20)
    texto = _texto(lines)
    assert not ok and "1 de 2" in lines[0], texto
    assert "erro em célula" in texto and "aula01-ex3-solucao, em “Exercício 3" in texto and "SyntaxError" in texto
    assert ".py, line" not in texto and "Pronto para entregar" not in texto


def test_respostas_escritas_ainda_no_esboco_sao_listadas(tmp_path):
    nb = json.loads((SOLUCAO / "04-projeto.ipynb").read_text(encoding="utf-8"))
    vazias = [c for c in nb["cells"] if c["cell_type"] == "markdown" and catalogo.nbgrader_meta(c).get("solution")]
    assert vazias
    for c in vazias:
        c["source"] = catalogo.TEXT_STUB
    path = tmp_path / "04-projeto.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    ok, lines = validate(path, cell_timeout=20)
    esbocos = [line for line in lines if line.startswith("✍️ resposta escrita ainda não respondida")]
    assert not ok and len(esbocos) == len(vazias), _texto(lines)
    assert all("vale" in line and "ponto" in line for line in esbocos)
    assert "1 de 1" in lines[0]  # a verificação automática passa: só faltam as respostas escritas


def test_arquivo_renomeado_e_celula_colada_como_a_correcao_dira(tmp_path, turma):
    path = tmp_path / "03-exercicios-Copy1.ipynb"
    shutil.copy(turma / "ulisses-celula-colada" / "03-exercicios.ipynb", path)
    ok, lines = validate(path, cell_timeout=20)
    texto = _texto(lines)
    assert ok and "2 de 2" in lines[0], texto
    assert "arquivo renomeado" in texto and "aula01-ex3-verificacao aparecia 2 vezes" in texto


def test_arquivo_invalido_e_desconhecido(turma, tmp_path):
    ok, lines = validate(turma / "joao-arquivos-ruins" / "03-exercicios.ipynb")
    assert not ok and lines[0].startswith("❌ 03-exercicios.ipynb: ") and "arquivo vazio" in lines[0]
    ok, lines = validate(turma / "quico-desconhecido" / "rascunho.ipynb")
    assert not ok and "não é um notebook de exercício" in lines[0]


def test_protegida_editada_e_metadados_perdidos_como_a_correcao_dira(validados):
    ok, lines = validados[("heitor-metadados", "03-exercicios.ipynb")]
    texto = _texto(lines)
    assert "editadas (aula01-ex4-verificacao): a correção usou o código original" in texto, texto
    assert "metadados voltaram" in texto and ok, texto  # o resto estava certo: a nota toda


def test_uma_linha_por_exercicio_nao_feito(tmp_path):
    """Exercício não feito: o ⏳ da verificação, sem repetir a mesma coisa como aviso."""
    aluno = ROOT / "notebooks" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb"
    ok, lines = validate(aluno, cell_timeout=20)
    texto = _texto(lines)
    assert not ok and "0 de 2" in lines[0]
    assert sum("Exercício 3" in line for line in lines) == 1, texto
    assert texto.count("✍️ resposta escrita ainda não respondida") == 3, texto


def test_make_validar_nao_engole_erros(tmp_path):
    """O alvo do Makefile mostra a saída de erro do script (nada vai para /dev/null)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    alvo = makefile[makefile.index("\nvalidar:"):].split("\n\n")[0]
    assert "2>" not in alvo and "/dev/null" not in alvo
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "validar.py"), str(tmp_path / "nao-existe.ipynb")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "arquivo não encontrado" in out.stdout
    (tmp_path / "README.md").write_text("# não é notebook\n", encoding="utf-8")
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "validar.py"), str(tmp_path / "README.md")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "README.md não é um notebook" in out.stdout, out.stdout
    # uma pasta, e o nome sem o .ipynb: o que fazer, e não só "não encontrado"
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "validar.py"), str(tmp_path)], capture_output=True,
                         text=True)
    assert out.returncode == 2 and "é uma pasta: passe o notebook (.ipynb)" in out.stdout, out.stdout
    (tmp_path / "03-exercicios.ipynb").write_text("{}", encoding="utf-8")
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "validar.py"), str(tmp_path / "03-exercicios")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and f"você quis dizer {tmp_path / '03-exercicios.ipynb'}?" in out.stdout, out.stdout


def test_relatorio_mantem_as_linhas_quebradas_da_verificacao():
    """Uma linha ⏳/❌/dica que a verificação quebrou em duas chega inteira; esperado/obtido ficam de fora."""
    from atencao.checks.report import wrap_report
    from correcao.validar import _report_lines

    pendente = wrap_report("⏳ Exercício 2 (atenção multicabeça do zero): ainda não resolvido (o código levanta "
                        "NotImplementedError). Complete a célula do exercício e rode esta verificação de novo.")
    falha = wrap_report("❌ Exercício 1: 1 critério falhou.\n  ❌ caso: pesos\n       esperado: [1, 2]\n"
                     "       obtido:   [3, 4]\n       dica: " + "a máscara foi usada transposta " * 5)
    linhas = _report_lines(pendente + "\n" + falha + "\n  (a verificação para no primeiro caso)")
    assert len(pendente.splitlines()) > 1
    texto = " ".join(linha.strip() for linha in linhas)
    assert "rode esta verificação de novo." in texto and texto.count("transposta") == 5
    assert "esperado" not in texto and "obtido" not in texto and "para no primeiro" not in texto


def test_notebook_que_nao_abre_diz_como_recuperar(tmp_path):
    """Um notebook cortado, vazio ou que não é notebook: o validar dizia só "não é JSON válido", sem o que fazer."""
    from correcao.validar import recovery_advice

    quebrado = tmp_path / "03-exercicios.ipynb"
    quebrado.write_text('{"cells": [', encoding="utf-8")
    sem_salvo = recovery_advice(quebrado)
    assert "Não há uma versão salva que abra" in sem_salvo and "make lab" in sem_salvo, sem_salvo
    salvo = tmp_path / ".ipynb_checkpoints" / "03-exercicios-checkpoint.ipynb"
    salvo.parent.mkdir()
    salvo.write_text("também quebrado", encoding="utf-8")
    assert "Não há uma versão salva que abra" in recovery_advice(quebrado)  # um checkpoint quebrado não serve
    shutil.copy(ROOT / "notebooks" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb", salvo)
    com_salvo = recovery_advice(quebrado)
    assert f"em {salvo}: feche o notebook, copie-a por cima deste arquivo" in com_salvo, com_salvo
    ok, linhas = validate(quebrado)
    assert not ok and linhas[0] == "❌ 03-exercicios.ipynb: o arquivo não é um notebook (não é JSON válido).", linhas
    assert linhas[1] == com_salvo
    assert "entregue de novo" not in " ".join(linhas)  # o conselho do retorno da correção, não o do validar


def test_caminho_relativo_sugere_a_copia_em_trabalho(tmp_path):
    """`make validar NB=03-exercicios.ipynb` dizia "arquivo não encontrado: <curso>/03-exercicios.ipynb", sem dizer
    que o caminho é a partir da pasta do curso e que a cópia do aluno fica em trabalho/."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("validar_script", ROOT / "scripts" / "validar.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    copia = tmp_path / "trabalho" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb"
    copia.parent.mkdir(parents=True)
    copia.write_text("{}", encoding="utf-8")
    dica = script.missing_file_hint(Path("03-exercicios.ipynb"), tmp_path)
    assert dica == (" (o caminho é a partir da pasta do curso, e a sua cópia fica em trabalho/: você quis dizer "
                    "trabalho/modulo-06/aula-01-self-attention/03-exercicios.ipynb?)"), dica
    assert script.missing_file_hint(Path("03-exercicios"), tmp_path) == dica  # sem o .ipynb, também
    assert script.missing_file_hint(Path("04-projeto.ipynb"), tmp_path) == ""
