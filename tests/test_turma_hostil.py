"""Um aluno nunca derruba nem inunda a correção da turma (issue 38, item 4): nomes com bytes que não são UTF-8,
zips com pastas de tentativas, milhares de notebooks num zip, células que o Excel executaria como fórmula em
todos os CSV gravados e HTML do aluno que imita o quadro da nota no retorno."""

import csv
import io
import json
import os
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from correcao import catalogo, entregas, moodle, motor, relatorio
from correcao.relatorio import Row

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_hub import AULA as AULA_HUB  # noqa: E402
from test_hub import _aula_liberada, _turma_csv, hub, turma  # noqa: E402,F401 - as fixtures do curso no nbgrader
from turma_exemplo import gerar  # noqa: E402

EVERYTHING = catalogo.catalog()
AULA1 = EVERYTHING[("aula-01-self-attention", "03-exercicios")]
NB = AULA1.source.read_bytes()


def _zip_em(path: Path, membros) -> Path:
    """Um zip com ``membros`` (nome, dados); nome em bytes = gravado assim, sem a marca de UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gerar._zip(membros))
    return path


def _graded(plano) -> list[Row]:
    """As linhas que a correção daria ao plano (sem kernel: 0 em tudo), para gravar notas.csv e os retornos."""
    return [relatorio.failed_row(e.student, e.g, e.g.notebook, "zero", "nenhuma verificação passou",
                                 arquivo=e.file) for e in plano]


def _corrigir_sem_kernel(entrada, tmp_path: Path) -> tuple[list[Row], Path]:
    """Lê, planeja e grava ``notas.csv``, ``nao-corrigidos.csv`` e ``retorno/`` como a correção da turma."""
    ent = entregas.read_submissions(entrada, tmp_path / "tmp")
    plano, linhas, fora = motor.plan_class(ent, EVERYTHING, tmp_path / "saneados")
    linhas += _graded(plano)
    saida = tmp_path / "saida"
    relatorio.write_outputs(linhas, EVERYTHING, saida, fora)
    return linhas, saida


def _notas(saida: Path) -> list[dict]:
    with open(saida / "notas.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


# 1. qualquer byte num nome


def test_pasta_e_arquivo_com_nome_em_iso_8859_1_nao_param_a_turma(tmp_path):
    """Antes: ``UnicodeEncodeError`` ao gravar notas.csv (o nome com um byte que não é UTF-8), a turma inteira
    parava com 1 de 3 linhas e sem ``retorno/``."""
    turma_dir = tmp_path / "turma"
    (turma_dir / "ana").mkdir(parents=True)
    (turma_dir / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    jose = os.path.join(os.fsencode(turma_dir), b"Jos\xe9 Lima")
    os.mkdir(jose)
    Path(os.fsdecode(os.path.join(jose, b"03-exercicios.ipynb"))).write_bytes(NB)
    (turma_dir / "bia").mkdir()
    (turma_dir / "bia" / "03-exercicios.ipynb").write_bytes(NB)
    Path(os.fsdecode(os.path.join(os.fsencode(turma_dir), b"bia", b"rascunho\x81\xe7.ipynb"))).write_bytes(NB)

    linhas, saida = _corrigir_sem_kernel(turma_dir, tmp_path)
    notas = _notas(saida)
    assert sorted({n["aluno"] for n in notas}) == ["José Lima", "ana", "bia"]
    assert sorted(n["arquivo"] for n in notas if n["aluno"] == "bia") == ["03-exercicios.ipynb",
                                                                          "rascunho\\x81ç.ipynb"]
    paginas = sorted(p.relative_to(saida / "retorno").as_posix() for p in (saida / "retorno").rglob("*.html"))
    assert len(paginas) == 4 and paginas[0].startswith("José Lima/")


def test_nome_no_zip_em_latin_1_sem_a_marca_de_utf8_aparece_legivel(tmp_path):
    """Um zip de um programa antigo (ISO-8859-1 sem a marca de UTF-8): antes "JosÚ Lima" (lido em cp850)."""
    z = _zip_em(tmp_path / "turma.zip", [(b"Jos\xe9 Lima/03-exercicios.ipynb", NB), ("ana/03-exercicios.ipynb", NB),
                                         (b"Jo\xc6o/03-exercicios.ipynb", NB)])  # cp850 ("João"), como antes
    ent = entregas.read_submissions(z, tmp_path / "t")
    assert sorted(ent.alunos) == sorted(["João", "José Lima", "ana"])


def test_zip_da_turma_com_nome_marcado_utf8_que_nao_e_utf8_para_com_a_mensagem(tmp_path):
    """Um nome marcado como UTF-8 que não é UTF-8: o zipfile não lê o zip. Antes, ``UnicodeDecodeError`` com
    traceback; agora, a mensagem em português (o zip de um aluno assim, dentro da turma, já virava a linha dele)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("ana/03-exercicios.ipynb", NB)
        z.writestr("zé/03-exercicios.ipynb", NB)  # não cabe em cp437: gravado em UTF-8, com a marca
    ruim = tmp_path / "turma.zip"
    ruim.write_bytes(buf.getvalue().replace("zé/".encode(), b"z\xe9\xe9/"))  # o mesmo tamanho, não é UTF-8
    with pytest.raises(SystemExit, match="ENTREGAS: o zip “turma.zip” não abre .*refaça-o"):
        entregas.read_submissions(ruim, tmp_path / "t")


def test_nome_legivel_ou_escrito():
    assert entregas.readable_name("Jos\udce9 Lima") == "José Lima"
    assert entregas.readable_name("a\udc81b") == "a\\x81b"  # sem letra no Windows-1252: o byte escrito
    assert entregas.readable_name("João") == "João"


# 2. tentativas dentro do zip de um aluno


def test_zip_com_pastas_de_tentativas_e_de_um_aluno_so(tmp_path):
    """``kleber.zip`` com ``kleber/tentativa-1/`` e ``kleber/tentativa-2/``: antes, os alunos "tentativa-1" e
    "tentativa-2", e nenhuma linha do kleber."""
    turma_dir = tmp_path / "turma"
    (turma_dir / "ana").mkdir(parents=True)
    (turma_dir / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    _zip_em(turma_dir / "kleber.zip", [("kleber/tentativa-1/03-exercicios.ipynb", NB),
                                       ("kleber/tentativa-2/03-exercicios.ipynb", NB)])
    _zip_em(turma_dir / "lia.zip", [("tentativa-1/03-exercicios.ipynb", NB), ("tentativa-2/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(turma_dir, tmp_path / "t")
    assert ent.alunos == ["ana", "kleber", "lia"]
    assert sorted(c for a, c in {(a.aluno, a.caminho) for a in ent.arquivos} if a == "kleber") == [
        "kleber.zip/tentativa-1/03-exercicios.ipynb", "kleber.zip/tentativa-2/03-exercicios.ipynb"]
    plano, linhas, _ = motor.plan_class(ent, EVERYTHING, tmp_path / "s")
    assert sorted(e.student for e in plano) == ["ana", "kleber", "kleber", "lia", "lia"] and not linhas


def test_zip_de_um_aluno_com_muitas_pastas_nao_inventa_alunos(tmp_path):
    """``bob.zip`` com dez pastas numa turma entregue aluno por aluno: antes, dez alunos inventados, cada um
    corrigido por inteiro; agora, a entrega do bob (três cópias corrigidas, as outras ``copias_demais``)."""
    turma_dir = tmp_path / "turma"
    _zip_em(turma_dir / "ana.zip", [("03-exercicios.ipynb", NB)])
    _zip_em(turma_dir / "bob.zip", [(f"pasta{k}/03-exercicios.ipynb", NB) for k in range(10)])
    ent = entregas.read_submissions(turma_dir, tmp_path / "t")
    assert ent.alunos == ["ana", "bob"]
    plano, linhas, _ = motor.plan_class(ent, EVERYTHING, tmp_path / "s")
    assert sorted(e.student for e in plano) == ["ana", "bob", "bob", "bob"]
    assert {(r.student, r.status) for r in linhas} == {("bob", "copias_demais")}


def test_lote_da_turma_ao_lado_de_pastas_de_alunos_continua_parte_da_turma(tmp_path):
    """O que não muda: ``lote-2.zip`` (nome de lote) com os atrasados, ao lado das pastas dos outros alunos."""
    turma_dir = tmp_path / "turma"
    (turma_dir / "ana").mkdir(parents=True)
    (turma_dir / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    _zip_em(turma_dir / "lote-2.zip", [("bia/03-exercicios.ipynb", NB), ("caio/03-exercicios.ipynb", NB)])
    _zip_em(turma_dir / "lote-3.zip", [("lote-3/dani/03-exercicios.ipynb", NB), ("lote-3/edu/03-exercicios.ipynb", NB)])
    assert entregas.read_submissions(turma_dir, tmp_path / "t").alunos == ["ana", "bia", "caio", "dani", "edu"]


# 3. um orçamento por aluno


def test_cinco_mil_notebooks_de_um_aluno_viram_uma_linha(tmp_path):
    """``carol.zip`` com 5.000 notebooks minúsculos (546 KB): antes, 5.000 linhas em notas.csv e 5.000 retornos."""
    minusculo = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    turma_dir = tmp_path / "turma"
    (turma_dir / "ana").mkdir(parents=True)
    (turma_dir / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    _zip_em(turma_dir / "carol.zip", [("03-exercicios.ipynb", NB)]
            + [(f"lixo/{k:04d}.ipynb", minusculo) for k in range(5000)]
            + [(f"lixo/{k:04d}.pdf", b"%PDF") for k in range(200)])
    linhas, saida = _corrigir_sem_kernel(turma_dir, tmp_path)
    carol = [n for n in _notas(saida) if n["aluno"] == "carol"]
    assert len(carol) <= 51  # antes, 5.001
    limite = motor.MAX_FILES_PER_STUDENT
    assert len(carol) == limite + 1  # os olhados e uma linha para o resto
    assert "carol.zip/03-exercicios.ipynb" in {n["arquivo"] for n in carol}  # o notebook dela é corrigido
    demais = [n for n in carol if n["situacao"] == "arquivos_demais"]
    assert len(demais) == 1 and f"os outros {5001 - limite} não foram lidos" in demais[0]["motivo"]
    assert len(list((saida / "retorno").rglob("*.html"))) == limite + 2  # as da carol e a da ana
    with open(saida / "nao-corrigidos.csv", encoding="utf-8", newline="") as f:
        fora = [ln for ln in csv.DictReader(f) if ln["aluno"] == "carol"]
    resumo = [ln for ln in fora if ln["arquivo"] == f"({200 - limite} arquivos além do limite)"]
    assert len(fora) == limite + 1 and f"os outros {200 - limite} não foram lidos" in resumo[0]["motivo"]
    assert relatorio.STATUSES["arquivos_demais"]


# 4. nenhuma célula de CSV vira fórmula


@pytest.mark.parametrize("texto, esperado", [
    ("=2+3", "'=2+3"), ("+1", "+1"), ("+1 | b", "'+1 | b"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("-1", "-1"), ("+2,5", "+2,5"), ("-", "-"), ("Ana", "Ana"), (7.5, 7.5),
    ("", ""),
    # de uma aluna que leu o código: os sinais de largura cheia e o que a planilha ignora antes do sinal
    ("＝1+1", "'＝1+1"), ("＋1", "'＋1"), ("－1", "'－1"), ("＠SUM(A1)", "'＠SUM(A1)"), (" =1+1", "' =1+1"),
    ("\xa0=1+1", "'\xa0=1+1"), ("\ufeff=1+1", "'\ufeff=1+1"), ("\n=1+1", "'\n=1+1"), ("\x0b=1", "'\x0b=1"),
    ("José Lima", "José Lima")])
def test_celula_de_planilha(texto, esperado):
    assert relatorio.spreadsheet_cell(texto) == esperado


def test_notas_e_nao_corrigidos_sem_formulas(tmp_path):
    turma_dir = tmp_path / "turma"
    (turma_dir / "=2+3").mkdir(parents=True)
    (turma_dir / "=2+3" / "03-exercicios.ipynb").write_bytes(NB)
    (turma_dir / "=2+3" / "@x.pdf").write_bytes(b"%PDF")
    _, saida = _corrigir_sem_kernel(turma_dir, tmp_path)
    assert [n["aluno"] for n in _notas(saida)] == ["'=2+3"]
    with open(saida / "nao-corrigidos.csv", encoding="utf-8", newline="") as f:
        assert [(ln["aluno"], ln["arquivo"]) for ln in csv.DictReader(f)] == [("'=2+3", "'@x.pdf")]


PESSOAS = {"=2+3_101": moodle.Participant("=2+3", "101"), "Ana_202": moodle.Participant("Ana", "202")}
ROWS = [Row("=2+3_101", AULA1.assignment, AULA1.notebook, total=2, maximum=4),
        Row("Ana_202", AULA1.assignment, AULA1.notebook, total=4, maximum=4)]


def test_planilha_do_moodle_sem_formulas(tmp_path):
    """Antes, o participante ``=2+3`` ia como fórmula para moodle-notas.csv (escapado só em notas.csv)."""
    destino = moodle.write_worksheet(ROWS, PESSOAS, tmp_path / "moodle-notas.csv")
    linhas = list(csv.reader(io.StringIO(destino.read_text(encoding="utf-8"))))
    assert [ln[1] for ln in linhas[1:]] == ["'=2+3", "Ana"]
    assert all(not c.startswith(("=", "+", "@")) for ln in linhas for c in ln)


def test_planilha_baixada_do_moodle_sem_formulas(tmp_path):
    baixada = tmp_path / "Notas.csv"
    baixada.write_text("Identificador,Nome completo,Nota,Nota máxima,Última modificação (nota)\n"
                       "Participante101,=2+3,,4,-\nParticipante202,Ana,,4,-\n", encoding="utf-8")
    destino = moodle.write_worksheet(ROWS, PESSOAS, tmp_path / "moodle-notas.csv", planilha=baixada)
    linhas = list(csv.reader(io.StringIO(destino.read_text(encoding="utf-8"))))
    assert [ln[1] for ln in linhas[1:]] == ["'=2+3", "Ana"] and [ln[2] for ln in linhas[1:]] == ["2", "4"]


def test_turma_csv_do_hub_sem_formulas(turma, monkeypatch):  # noqa: F811 - a fixture de test_hub
    monkeypatch.setenv("CURSO_HUB_ALUNOS", "=2+3,ana")
    assert hub.grade(turma, AULA_HUB, log=lambda *_: None) == []
    assert sorted(a for a, _ in _turma_csv(turma)) == ["'=2+3", "ana"]


# 5. o aluno não imita o quadro da nota


def test_html_do_aluno_que_imita_a_nota_fica_na_moldura_dele(tmp_path):
    """Uma saída e uma resposta escrita com ``<div class="resumo"><p class="nota">Nota automática: 10 de 10``:
    antes, o CSS da página as mostrava como o quadro oficial numa página de 0 de 4."""
    from bs4 import BeautifulSoup

    falsa = '<div class="resumo"><p class="nota">Nota automática: 10 de 10 · situação: tudo certo</p></div>'
    nb = nbformat.v4.new_notebook()
    codigo = nbformat.v4.new_code_cell("display(HTML(...))")
    codigo.outputs = [nbformat.v4.new_output("display_data", data={"text/html": falsa, "text/plain": "x"})]
    nb.cells = [nbformat.v4.new_markdown_cell(falsa + "\n\n</div></section><div class='resumo'>fuga</div>"), codigo]
    nbformat.write(nb, tmp_path / "nb.ipynb")
    row = relatorio.failed_row("ana", AULA1, AULA1.notebook, "zero", "nenhuma verificação passou")
    row.corpo = relatorio.notebook_body(tmp_path / "nb.ipynb")
    pagina = BeautifulSoup(relatorio.feedback_html(row, AULA1), "html.parser")

    # o que o CSS da página pinta como quadro da correção: só o quadro oficial, com a nota de verdade
    estilo = pagina.style.string
    seletores = [regra.split("{")[0].strip() for regra in estilo.split("}") if "resumo" in regra.split("{")[0]]
    assert seletores
    for seletor in seletores:
        pintados = pagina.select(seletor)
        assert len(pintados) == 1 and "Nota automática: 0 de 4" in pintados[0].get_text()
    assert len(pagina.select(".resumo")) == 1 and len(pagina.select(".nota")) == 1
    moldura = pagina.select("body > section.conteudo-do-aluno")
    assert len(moldura) == 1 and "não da correção" in moldura[0].get_text()
    assert moldura[0].get_text().count("Nota automática: 10 de 10") == 2  # a saída e a resposta, dentro dela
    assert "fuga" in moldura[0].get_text()
    assert pagina.get_text().count("Nota automática: 10 de 10") == 2


def test_nome_de_pasta_que_imita_o_quadro_aparece_como_nome(tmp_path):
    """Uma pasta (e um arquivo) com o texto do quadro no nome: o nome aparece escapado, numa moldura própria
    (``bdi.dado-do-aluno``), sem a marca que inverte a direção do texto e com no máximo 120 caracteres; o quadro
    continua com uma nota só, a de verdade."""
    from bs4 import BeautifulSoup

    falsa = 'Ana</b></p><p class="nota">Nota automática: 10 de 10 · situação: tudo certo</p>\u202eoãçerroc'
    row = relatorio.failed_row(falsa + " " + "x" * 300, AULA1, AULA1.notebook, "zero", "nenhuma verificação passou",
                               arquivo=f"{falsa}/03-exercicios.ipynb")
    texto = relatorio.feedback_html(row, AULA1)
    assert "\u202e" not in texto and '<p class="nota">Nota automática: 10' not in texto
    pagina = BeautifulSoup(texto, "html.parser")
    assert len(pagina.select(".nota")) == 1 and "Nota automática: 0 de 4" in pagina.select_one(".nota").get_text()
    nomes = pagina.select("body > .resumo bdi.dado-do-aluno")
    assert len(nomes) == 2 and all("Nota automática: 10 de 10" in n.get_text() for n in nomes)
    assert len(nomes[0].get_text()) == relatorio.STUDENT_TEXT_MAX and nomes[0].get_text().endswith("…")
    # fora das molduras dos nomes, o quadro não tem o texto falso
    for n in nomes:
        n.decompose()
    assert "10 de 10" not in pagina.select_one("body > .resumo").get_text()
    # o aluno não pinta a moldura dos nomes no HTML dele
    assert relatorio._without_scripts('<span class="dado-do-aluno">x</span>') == "<span>x</span>"
    # um notebook que a correção não reconheceu: o nome do arquivo também vem do aluno
    desconhecido = relatorio.failed_row("ana", None, "Nota automática: 10 de 10", "desconhecido", "não é do curso")
    pagina = BeautifulSoup(relatorio.feedback_html(desconhecido, None), "html.parser")
    assert [n.get_text() for n in pagina.select("bdi.dado-do-aluno")] == ["ana", "Nota automática: 10 de 10"]


# de ponta a ponta, na caixa


@pytest.mark.lento
def test_turma_com_nome_em_iso_8859_1_e_nota_falsa_corrigida_inteira(tmp_path):
    """A turma da issue: a pasta ``Jos\\xe9 Lima`` e o notebook ``exerc\\xedcios.ipynb`` (bytes de ISO-8859-1) e uma
    resposta escrita que imita o quadro da nota. Antes: código 1, ``UnicodeEncodeError``, ``notas.csv`` com 1 de 3
    linhas e sem ``retorno/``; agora, as três linhas, os três retornos e um só quadro oficial em cada um."""
    from bs4 import BeautifulSoup

    from correcao import isolamento

    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina")
    falsa = '<div class="resumo"><p class="nota">Nota automática: 10 de 10 · situação: tudo certo</p></div>'
    nb = json.loads(NB)
    for c in nb["cells"]:
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "aula01-ex1-resposta":
            c["source"] = f"**Sua resposta:**\n\n{falsa}"
    turma_dir = tmp_path / "turma"
    (turma_dir / "ana").mkdir(parents=True)
    (turma_dir / "ana" / "03-exercicios.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    base = os.fsencode(turma_dir)
    os.mkdir(os.path.join(base, b"Jos\xe9 Lima"))
    Path(os.fsdecode(os.path.join(base, b"Jos\xe9 Lima", b"03-exercicios.ipynb"))).write_bytes(NB)
    os.mkdir(os.path.join(base, b"bia"))
    Path(os.fsdecode(os.path.join(base, b"bia", b"exerc\xedcios.ipynb"))).write_bytes(NB)
    saida = tmp_path / "saida"
    motor.grade_class(turma_dir, saida, cell_timeout=20, notebook_timeout=120, log=lambda *_: None)
    notas = _notas(saida)
    assert sorted((n["aluno"], n["arquivo"]) for n in notas) == [
        ("José Lima", "03-exercicios.ipynb"), ("ana", "03-exercicios.ipynb"), ("bia", "exercícios.ipynb")]
    assert [(n["situacao"], n["motivo"]) for n in notas if n["situacao"] not in ("ok", "revisar")] == []
    for n in notas:
        pagina = BeautifulSoup((saida / n["retorno"]).read_text(encoding="utf-8"), "html.parser")
        assert len(pagina.select(".resumo")) == 1 and len(pagina.select("body > section.conteudo-do-aluno")) == 1
    pagina = BeautifulSoup((saida / next(n["retorno"] for n in notas if n["aluno"] == "ana")).read_text("utf-8"),
                           "html.parser")
    assert "Nota automática: 10 de 10" in pagina.select_one("body > section.conteudo-do-aluno").get_text()


# 6. o zip de uma aluna é dela: as pastas de dentro nunca são colegas


def test_zip_de_uma_aluna_nao_planta_linhas_numa_colega(tmp_path):
    """``ana.zip`` com ``bia/`` (em branco) e ``carla/``: antes, uma parte da turma: a cópia em branco tomava a
    página de retorno principal da Bia, a Carla era inventada e a Ana sumia da turma."""
    turma_dir = tmp_path / "turma"
    (turma_dir / "bia").mkdir(parents=True)
    (turma_dir / "bia" / "03-exercicios.ipynb").write_bytes(NB)
    _zip_em(turma_dir / "ana.zip", [("bia/03-exercicios.ipynb", NB), ("carla/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(turma_dir, tmp_path / "t")
    assert ent.alunos == ["ana", "bia"]
    assert {a.aluno for a in ent.arquivos if a.caminho.startswith("ana.zip/")} == {"ana"}
    assert [a.caminho for a in ent.arquivos if a.aluno == "bia"] == ["03-exercicios.ipynb"]
    linhas, saida = _corrigir_sem_kernel(turma_dir, tmp_path)
    assert sorted((r.student, r.arquivo) for r in linhas) == [
        ("ana", "ana.zip/bia/03-exercicios.ipynb"), ("ana", "ana.zip/carla/03-exercicios.ipynb"),
        ("bia", "03-exercicios.ipynb")]
    with open(saida / "nao-corrigidos.csv", encoding="utf-8", newline="") as f:
        (aviso,) = list(csv.DictReader(f))
    assert (aviso["aluno"], aviso["arquivo"]) == ("ana", "ana.zip")
    assert "pastas com nome de aluno (bia, carla): é a entrega de “ana” só" in aviso["motivo"]


def test_zip_de_uma_aluna_com_uma_colega_nao_inventa_sessenta_alunos(tmp_path):
    """A pasta de uma colega de verdade ao lado de sessenta inventadas: antes, sessenta alunos corrigidos, cada um
    com o orçamento inteiro, contornando o limite de arquivos por aluno."""
    turma_dir = tmp_path / "turma"
    (turma_dir / "bia").mkdir(parents=True)
    (turma_dir / "bia" / "03-exercicios.ipynb").write_bytes(NB)
    _zip_em(turma_dir / "ana.zip", [("bia/leia.txt", b"oi")]
            + [(f"aluno{k:03d}/03-exercicios.ipynb", NB) for k in range(60)])
    ent = entregas.read_submissions(turma_dir, tmp_path / "t")
    assert ent.alunos == ["ana", "bia"]
    plano, linhas, _ = motor.plan_class(ent, EVERYTHING, tmp_path / "s")
    assert {e.student for e in plano} == {"ana", "bia"} and sum(e.student == "ana" for e in plano) == motor.MAX_COPIES


@pytest.mark.parametrize("nome", ["turma.zip", "lote-2.zip"])
def test_zip_de_lote_com_milhares_de_pastas_custa_um_aluno(tmp_path, nome):
    """Um zip com nome de lote e 3.000 pastas inventadas numa turma entregue aluno por aluno: antes, 3.000 alunos,
    cada um com o orçamento inteiro. Agora, a entrega de um aluno só (o nome do zip), com o limite de arquivos de
    um aluno e um aviso que diz por quê; um lote de verdade (os atrasados) continua parte da turma."""
    turma_dir = tmp_path / "turma"
    for aluno in ("ana", "bia"):
        (turma_dir / aluno).mkdir(parents=True)
        (turma_dir / aluno / "03-exercicios.ipynb").write_bytes(NB)
    minusculo = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    _zip_em(turma_dir / nome, [(f"aluno{k:04d}/03-exercicios.ipynb", minusculo) for k in range(3000)]
            + [("bia/03-exercicios.ipynb", NB)])
    stem = nome[:-4]
    ent = entregas.read_submissions(turma_dir, tmp_path / "t")
    assert ent.alunos == sorted(["ana", "bia", stem])
    assert [a.caminho for a in ent.arquivos if a.aluno == "bia"] == ["03-exercicios.ipynb"]
    linhas, saida = _corrigir_sem_kernel(turma_dir, tmp_path)
    do_zip = [n for n in _notas(saida) if n["aluno"] == stem]
    assert len(do_zip) == motor.MAX_FILES_PER_STUDENT + 1  # o orçamento de um aluno, e uma linha para o resto
    assert sum(n["situacao"] == "arquivos_demais" for n in do_zip) == 1
    assert {n["aluno"] for n in _notas(saida)} == {"ana", "bia", stem}
    with open(saida / "nao-corrigidos.csv", encoding="utf-8", newline="") as f:
        (aviso,) = [ln for ln in csv.DictReader(f) if ln["aluno"] == stem]
    assert aviso["arquivo"] == nome
    assert (f"o zip “{nome}” tem pastas de 3000 alunos que não aparecem no resto da turma (aluno0000, aluno0001, "
            "aluno0002, aluno0003, aluno0004, ...), mais que o limite de 50") in aviso["motivo"]
    assert f"tratado como a entrega de um aluno só, “{stem}”" in aviso["motivo"]
    # os atrasados num zip de lote: continuam parte da turma
    (turma_dir / nome).unlink()
    _zip_em(turma_dir / nome, [(f"atrasado{k}/03-exercicios.ipynb", NB) for k in range(5)])
    ent = entregas.read_submissions(turma_dir, tmp_path / "t2")
    assert ent.alunos == ["ana", "atrasado0", "atrasado1", "atrasado2", "atrasado3", "atrasado4", "bia"]
