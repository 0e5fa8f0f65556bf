"""A pasta que o professor recebe, como chega de verdade (sem executar nada): nomes de zips de três sistemas,
restos do macOS, zips por aluno, arquivos renomeados, células coladas e o que vai para notas.csv."""

import copy
import io
import json
import sys
import unicodedata
import zipfile
from pathlib import Path

import pytest

from correcao import catalogo, entregas, nomes_antigos, relatorio, saneamento

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402

EVERYTHING = catalogo.catalog()
AULA1 = EVERYTHING[("aula-01-self-attention", "03-exercicios")]
SOL1 = json.loads(AULA1.source.read_text(encoding="utf-8"))


def _zip(tmp_path: Path, members) -> Path:
    path = tmp_path / "turma.zip"
    path.write_bytes(gerar._zip(members))
    return path


def _mapa(ent: entregas.Submissions) -> set:
    return {(a.aluno, a.caminho) for a in ent.arquivos}


NB = json.dumps(SOL1).encode()


def test_zip_do_windows_com_barras_invertidas(tmp_path):
    ent = entregas.read_submissions(_zip(tmp_path, [("carla\\03-exercicios.ipynb", NB),
                                                ("davi\\sub\\03-exercicios.ipynb", NB)]), tmp_path)
    assert _mapa(ent) == {("carla", "03-exercicios.ipynb"), ("davi", "sub/03-exercicios.ipynb")}


@pytest.mark.parametrize("codificacao", ["utf-8", "cp850"])
def test_nomes_sem_a_marca_de_utf8(tmp_path, codificacao):
    ent = entregas.read_submissions(_zip(tmp_path, [("joão/03-exercicios.ipynb".encode(codificacao), NB),
                                                ("maria/03-exercicios.ipynb", NB)]), tmp_path)
    assert _mapa(ent) == {("joão", "03-exercicios.ipynb"), ("maria", "03-exercicios.ipynb")}


def test_nfd_do_macos_vira_nfc_e_restos_sao_ignorados(tmp_path):
    nfd = unicodedata.normalize("NFD", "inês")
    assert nfd != "inês"
    ent = entregas.read_submissions(_zip(tmp_path, [
        (f"turma/{nfd}/03-exercicios.ipynb", NB), (f"turma/{nfd}/._03-exercicios.ipynb", b"\0\5\26\7"),
        (f"__MACOSX/turma/{nfd}/._03-exercicios.ipynb", b"\0"), (f"turma/{nfd}/.DS_Store", b"Bud1"),
        (f"turma/{nfd}/.ipynb_checkpoints/03-exercicios-checkpoint.ipynb", NB), ("turma/inês/04-projeto.ipynb", NB),
        ("turma/bruno/03-exercicios.ipynb", NB)]), tmp_path)
    assert _mapa(ent) == {("inês", "03-exercicios.ipynb"), ("inês", "04-projeto.ipynb"),
                          ("bruno", "03-exercicios.ipynb")}
    assert ent.alunos == ["bruno", "inês"] and len(ent.lixo) == 4


def _aviso(ent: entregas.Submissions, aluno: str, nome_zip: str) -> str:
    """O aviso (em ``nao-corrigidos.csv``) do zip ``nome_zip`` de ``aluno`` com pastas com nome de aluno."""
    return next(a.motivo for a in ent.arquivos if (a.aluno, a.caminho) == (aluno, nome_zip) and a.dados is None)


def test_o_zip_de_um_aluno_nao_poe_notebooks_no_nome_de_outro(tmp_path):
    """Uma turma entregue em um zip por aluno: o zip de bob com uma pasta ana/ dentro (uma cópia da solução, para
    a ana parecer ter copiado) é a entrega do bob, e não uma parte da turma, com ou sem a pasta bob/ dentro; um
    aviso em nao-corrigidos.csv diz que as pastas com nome de colegas contam como do bob."""
    pasta = tmp_path / "turma"
    _zip_em(pasta / "ana.zip", [("03-exercicios.ipynb", NB)])
    _zip_em(pasta / "bob.zip", [("bob/03-exercicios.ipynb", NB), ("ana/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t")
    assert _mapa(ent) == {("ana", "ana.zip/03-exercicios.ipynb"), ("bob", "bob.zip/bob/03-exercicios.ipynb"),
                          ("bob", "bob.zip/ana/03-exercicios.ipynb"), ("bob", "bob.zip")}
    assert "o zip “bob.zip” tem pastas com nome de aluno (ana): é a entrega de “bob” só" \
        in _aviso(ent, "bob", "bob.zip")
    # sem a pasta do bob dentro (antes, uma parte da turma, como um lote-1.zip): continua a entrega do bob
    (pasta / "bob.zip").unlink()
    _zip_em(pasta / "bob.zip", [("ana/03-exercicios.ipynb", NB), ("carla/03-exercicios.ipynb", NB)])
    _zip_em(pasta / "carla.zip", [("03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t2")
    assert _mapa(ent) == {("ana", "ana.zip/03-exercicios.ipynb"), ("bob", "bob.zip/ana/03-exercicios.ipynb"),
                          ("bob", "bob.zip/carla/03-exercicios.ipynb"), ("carla", "carla.zip/03-exercicios.ipynb"),
                          ("bob", "bob.zip")}
    assert ent.alunos == ["ana", "bob", "carla"]
    assert "pastas com nome de aluno (ana, carla)" in _aviso(ent, "bob", "bob.zip")
    # só a pasta de uma colega, sem mais nada: também do bob (antes, a reentrega da ana)
    (pasta / "bob.zip").unlink()
    _zip_em(pasta / "bob.zip", [("ana/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t4")
    assert {c for a, c in _mapa(ent) if a == "ana"} == {"ana.zip/03-exercicios.ipynb"}
    assert ("bob", "bob.zip/03-exercicios.ipynb") in _mapa(ent)
    # uma pasta de aluno com o nome do zip: o zip é dele
    (pasta / "davi").mkdir()
    (pasta / "davi" / "04-projeto.ipynb").write_bytes(NB)
    _zip_em(pasta / "davi.zip", [("ana/03-exercicios.ipynb", NB), ("carla/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t3")
    assert ("davi", "davi.zip/ana/03-exercicios.ipynb") in _mapa(ent)


def test_reentrega_num_zip_com_nome_de_lote_ou_de_tentativa_continua_do_aluno(tmp_path):
    """O zip com a pasta de um aluno da turma e nada mais é a reentrega dele quando o nome do zip não pode ser o de
    outro aluno: um lote, uma tentativa ou o nome do próprio aluno."""
    pasta = tmp_path / "turma"
    (pasta / "bruno").mkdir(parents=True)
    (pasta / "bruno" / "03-exercicios.ipynb").write_bytes(NB)
    for k, nome in enumerate(("lote-2.zip", "reentrega.zip", "bruno-v2.zip", "Reentrega Bruno.zip", "Bruno.zip")):
        _zip_em(pasta / nome, [("bruno/03-exercicios.ipynb", NB)])
        ent = entregas.read_submissions(pasta, tmp_path / f"t{k}")
        assert ent.alunos == ["bruno"] and (nome, "bruno") in {(a.caminho.split("/")[0], a.aluno)
                                                               for a in ent.arquivos}, nome
        (pasta / nome).unlink()


def test_zip_com_o_nome_em_maiusculas_e_colegas_inventados_continua_do_aluno(tmp_path):
    """Ataques de uma segunda aluna hostil: ``bob.zip`` com ``Bob/`` (maiúscula) e três cópias na pasta ``carla/``
    tiravam da correção o notebook da carla (as cópias plantadas vinham antes, e só 3 são corrigidas) e a
    apontavam por código suspeito; e vinte colegas inventados multiplicavam as cópias corrigidas."""
    pasta = tmp_path / "turma"
    _zip_em(pasta / "carla.zip", [("03-exercicios.ipynb", NB)])
    _zip_em(pasta / "bob.zip", [("Bob/03-exercicios.ipynb", NB)] + [(f"carla/03-exercicios ({k}).ipynb", NB)
                                                                     for k in range(3)])
    ent = entregas.read_submissions(pasta, tmp_path / "t")
    assert {c for a, c in _mapa(ent) if a == "carla"} == {"carla.zip/03-exercicios.ipynb"}
    assert all(a in ("bob", "carla") for a, _ in _mapa(ent))
    plano, linhas, _ = motor_plan(ent, tmp_path)
    assert [e.file for e in plano if e.student == "carla"] == ["carla.zip/03-exercicios.ipynb"]
    # sem a pasta Bob/: as três cópias na pasta carla/ continuam do bob (antes, plantadas na carla)
    (pasta / "bob.zip").unlink()
    _zip_em(pasta / "bob.zip", [(f"carla/03-exercicios ({k}).ipynb", NB) for k in range(3)]
            + [("dani/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t3")
    assert ent.alunos == ["bob", "carla"]
    plano, linhas, fora = motor_plan(ent, tmp_path / "p3")
    assert [e.file for e in plano if e.student == "carla"] == ["carla.zip/03-exercicios.ipynb"]
    assert [(r.student, r.arquivo) for r in linhas if r.status == "copias_demais"] == [
        ("bob", "bob.zip/dani/03-exercicios.ipynb")]
    assert [(a, c) for a, c, _ in fora] == [("bob", "bob.zip")]
    (pasta / "bob.zip").unlink()
    _zip_em(pasta / "bob.zip", [("Bob/03-exercicios.ipynb", NB)] + [(f"colega{k:02d}/03-exercicios.ipynb", NB)
                                                                     for k in range(20)])
    ent = entregas.read_submissions(pasta, tmp_path / "t2")
    assert ent.alunos == ["bob", "carla"]
    plano, linhas, _ = motor_plan(ent, tmp_path / "p2")
    assert sum(e.student == "bob" for e in plano) == 3 and sum(r.status == "copias_demais" for r in linhas) == 18


def test_zip_por_aluno_zip_dentro_da_pasta_e_arquivo_solto(tmp_path):
    interno = gerar._zip([("03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(_zip(tmp_path, [
        ("turma/ana.zip", interno), ("turma/bruno/entrega.zip", interno), ("turma/03-exercicios.ipynb", NB),
        ("turma/carla/03-exercicios.ipynb", NB), ("turma/carla/notas.pdf", b"%PDF")]), tmp_path)
    assert _mapa(ent) == {("ana", "ana.zip/03-exercicios.ipynb"), ("bruno", "entrega.zip/03-exercicios.ipynb"),
                          ("", "03-exercicios.ipynb"), ("carla", "03-exercicios.ipynb"), ("carla", "notas.pdf")}
    pdf = next(a for a in ent.arquivos if a.caminho == "notas.pdf")
    assert pdf.dados is None and not pdf.looks_like_notebook  # não é lido: só listado


def test_pasta_raiz_dentro_do_zip_do_aluno_sai_do_caminho(tmp_path):
    interno = gerar._zip([("Letícia/04-projeto.ipynb", NB), ("Letícia/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(_zip(tmp_path, [("Letícia.zip", interno), ("bruno.zip", interno)]), tmp_path)
    assert _mapa(ent) == {("Letícia", "Letícia.zip/04-projeto.ipynb"), ("Letícia", "Letícia.zip/03-exercicios.ipynb"),
                          ("bruno", "bruno.zip/04-projeto.ipynb"), ("bruno", "bruno.zip/03-exercicios.ipynb")}


def test_pasta_e_zip_do_mesmo_aluno_dao_linhas_distintas(tmp_path):
    interno = gerar._zip([("03-exercicios.ipynb", NB)])
    arquivos = [("turma/vitor.zip", interno), ("turma/vitor/03-exercicios.ipynb", NB), ("turma/ana/x.ipynb", NB)]
    ent = entregas.read_submissions(_zip(tmp_path, arquivos), tmp_path)
    assert _mapa(ent) == {("vitor", "vitor.zip/03-exercicios.ipynb"), ("vitor", "03-exercicios.ipynb"),
                          ("ana", "x.ipynb")}
    assert ent.alunos == ["ana", "vitor"]


def test_zip_de_um_aluno_so_nao_perde_o_nome(tmp_path):
    ent = entregas.read_submissions(_zip(tmp_path, [("ana/03-exercicios.ipynb", NB),
                                                ("ana/versao-final/03-exercicios.ipynb", NB)]), tmp_path)
    assert _mapa(ent) == {("ana", "03-exercicios.ipynb"), ("ana", "versao-final/03-exercicios.ipynb")}


def test_zip_hostil_nao_sai_da_pasta_nem_le_atalhos(tmp_path):
    path = tmp_path / "hostil.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ana/../../fora.ipynb", NB)
        z.writestr("/etc/ana/03-exercicios.ipynb", NB)
        link = zipfile.ZipInfo("bruno/03-exercicios.ipynb")
        link.external_attr = (0o120777 << 16)
        z.writestr(link, "/work/solutions/x.ipynb")
    ent = entregas.read_submissions(path, tmp_path / "x")
    assert not (tmp_path / "fora.ipynb").exists()
    por = {(a.aluno, a.caminho): a for a in ent.arquivos}
    assert set(por) == {("etc", "ana/03-exercicios.ipynb"), ("bruno", "03-exercicios.ipynb")}
    assert "atalho" in por[("bruno", "03-exercicios.ipynb")].motivo


def test_pasta_com_nomes_especiais(tmp_path):
    nome = 'sérgio "o brabo" [A] *?$(whoami);\''
    (tmp_path / "e" / nome).mkdir(parents=True)
    (tmp_path / "e" / nome / "03-exercicios.ipynb").write_bytes(NB)
    (tmp_path / "e" / "vazia").mkdir()
    ent = entregas.read_submissions(tmp_path / "e", tmp_path / "t")
    assert _mapa(ent) == {(nome, "03-exercicios.ipynb")} and ent.alunos == sorted([nome, "vazia"])


@pytest.mark.parametrize("nome", ["03-exercicios-Copy1.ipynb", "03-exercicios (1).ipynb", "03-Exercicios.ipynb",
                                  "exercicios.ipynb", "03-exercicios.IPYNB", "Cópia de 03-exercicios.ipynb",
                                  "03-exercicios.ipynb.txt", "qualquer-nome.ipynb"])
def test_renomeado_reconhecido_pelas_celulas(nome):
    g, nota = catalogo.identify_notebook(EVERYTHING, SOL1, nome)
    assert g is AULA1 and "arquivo renomeado" in nota and "pelas células" in nota


def test_mesmo_nome_em_duas_aulas_pelo_conteudo():
    aula3 = EVERYTHING[("aula-03-atencao-num-transformer-real", "03-exercicios")]
    nb3 = json.loads(aula3.source.read_text(encoding="utf-8"))
    assert catalogo.identify_notebook(EVERYTHING, nb3, "03-exercicios.ipynb") == (aula3, "")
    assert catalogo.identify_notebook(EVERYTHING, nb3, "aula-01/03-exercicios.ipynb") == (aula3, "")
    assert catalogo.identify_notebook(EVERYTHING, SOL1, "03-exercicios.ipynb") == (AULA1, "")


@pytest.mark.parametrize("nome, esperado", [("03-exercicios-Copy2.ipynb", "03-exercicios"),
                                            ("04-Projeto (3).ipynb", "04-projeto"), ("rascunho.ipynb", None)])
def test_sem_ids_pelo_nome(nome, esperado):
    g, _ = catalogo.identify_notebook(EVERYTHING, None, nome)
    assert (g.notebook if g else None) == esperado
    if g:
        assert g.assignment == "aula-01-self-attention"  # empate entre aulas: a primeira


def _gids(nb) -> list:
    return [catalogo.nbgrader_meta(c).get("grade_id") for c in nb["cells"]]


def test_verificacao_colada_duas_vezes_vale_a_ultima():
    nb = copy.deepcopy(SOL1)
    check = next(c for c in nb["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == "aula01-ex3-verificacao")
    nb["cells"].insert(0, copy.deepcopy(check))  # colada no topo, antes de tudo
    antes = copy.deepcopy(nb)
    limpo, notas = saneamento.sanitize(nb, AULA1, EVERYTHING)
    assert nb == antes  # a entrada não muda
    assert _gids(limpo).count("aula01-ex3-verificacao") == 1
    assert _gids(limpo).index("aula01-ex3-verificacao") == _gids(SOL1).index("aula01-ex3-verificacao")
    assert len(limpo["cells"]) == len(SOL1["cells"]) and "aparecia 2 vezes" in notas[0]
    assert all(c.get("outputs") == [] for c in limpo["cells"] if c["cell_type"] == "code")


def test_resposta_repetida_fica_como_celula_comum_e_celula_de_outro_notebook_sai():
    nb = copy.deepcopy(SOL1)
    sol = next(i for i, c in enumerate(nb["cells"])
               if catalogo.nbgrader_meta(c).get("grade_id") == "aula01-ex3-solucao")
    nb["cells"].insert(sol + 1, copy.deepcopy(nb["cells"][sol]))
    outro = json.loads(EVERYTHING[("aula-02-auto-atencao-do-zero", "04-exercicios")].source.read_text(encoding="utf-8"))
    nb["cells"] += [c for c in outro["cells"] if catalogo.nbgrader_meta(c).get("grade_id") in
                    ("aula02-ex1-solucao", "aula02-ex1-verificacao")]
    nb["cells"].append({"cell_type": "code", "metadata": {"nbgrader": {"grade": True}}, "source": "x = 1",
                        "outputs": [], "execution_count": None})
    limpo, notas = saneamento.sanitize(nb, AULA1, EVERYTHING)
    assert _gids(limpo).count("aula01-ex3-solucao") == 1
    assert len(limpo["cells"]) == len(SOL1["cells"]) + 3  # a resposta repetida, a de outro notebook e x = 1
    assert "aula02-ex1-verificacao" not in _gids(limpo) and "aula02-ex1-solucao" not in _gids(limpo)
    texto = " | ".join(notas)
    assert "vale a primeira" in texto and "04-exercicios (aula-02-auto-atencao-do-zero)" in texto
    assert "sem grade_id" in texto


def test_nomes_de_arquivo_do_retorno_seguros_e_unicos():
    assert relatorio.safe_name('a:b*?"<>|c') == "a_b______c" and relatorio.safe_name("CON") == "_CON"
    assert relatorio.safe_name("..") == "_" and relatorio.safe_name("fim. ") == "fim"
    rows = [relatorio.Row("a:b", "aula", "nb"), relatorio.Row("a?b", "aula", "nb"), relatorio.Row("a?b", "aula", "nb"),
            relatorio.Row("", "", "solto")]
    assert relatorio._feedback_pages(rows) == ["a_b/aula-nb.html", "a_b-2/aula-nb.html", "a_b-2/aula-nb-copia-2.html",
                                               "_fora-das-pastas/solto.html"]


def test_texto_do_aluno_nao_vira_formula_na_planilha():
    row = relatorio.Row("=HYPERLINK(\"http://x\")", "aula", "nb", reasons=["+1", "b"], arquivo="@x.ipynb")
    out = row.csv([])
    assert out["aluno"].startswith("'=") and out["arquivo"] == "'@x.ipynb" and out["motivo"] == "'+1 | b"


@pytest.mark.parametrize("ename, evalue, esperado", [
    ("SyntaxError", "incomplete input (498049566.py, line 2)",
     "SyntaxError: código incompleto (faltou fechar um parêntese, colchete ou aspas?) (linha 2 da célula)"),
    ("SyntaxError", "'(' was never closed (123.py, line 1)",
     "SyntaxError: '(' aberto e nunca fechado (linha 1 da célula)"),
    ("NameError", "name 'f' is not defined",
     "NameError: o nome 'f' não está definido (a célula que o cria não rodou antes?)"),
    ("IndentationError", "unexpected indent (123.py, line 3)",
     "IndentationError: indentação inesperada (linha 3 da célula)"),
    ("ZeroDivisionError", "division by zero", "ZeroDivisionError: divisão por zero"),
    ("KeyError", "'x'", "KeyError: 'x'"),
    ("StdinNotImplementedError", "raw_input was called, but this frontend does not support input requests.",
     "StdinNotImplementedError: input() não funciona aqui (ninguém digita a resposta na correção nem no validar): "
     "ponha o valor no código"),
])
def test_erro_legivel(ename, evalue, esperado):
    assert relatorio.readable_error(ename, evalue) == esperado
    assert ".py" not in relatorio.readable_error(ename, evalue)


def test_rotulo_da_celula_diz_o_exercicio():
    index = _gids(SOL1).index("aula01-ex3-verificacao")
    rotulo = catalogo.cell_label(SOL1["cells"], index)
    assert rotulo.startswith(f"célula {index + 1} (aula01-ex3-verificacao, em “Exercício 3")


def test_zip_da_turma_de_exemplo_tem_os_tres_sistemas():
    with zipfile.ZipFile(io.BytesIO(gerar._zip(gerar.files()))) as z:
        infos = z.infolist()
    assert any("\\" in i.filename for i in infos)  # Windows
    assert any(not i.flag_bits & 0x800 and not i.filename.isascii() for i in infos)  # sem a marca de UTF-8
    assert any(i.filename.startswith("__MACOSX/") for i in infos)  # macOS


def _sem(nb: dict, gid: str) -> dict:
    nb = copy.deepcopy(nb)
    nb["cells"] = [c for c in nb["cells"] if catalogo.nbgrader_meta(c).get("grade_id") != gid]
    return nb


def test_metadados_perdidos_voltam_pelo_codigo_e_o_notebook_e_reconhecido():
    nb = copy.deepcopy(SOL1)
    for c in nb["cells"]:
        c.get("metadata", {}).pop("nbgrader", None)
    g, nota = catalogo.identify_notebook(EVERYTHING, nb, "meu-notebook.ipynb")
    assert g is AULA1 and "pelo código das células protegidas" in nota
    limpo, notas = saneamento.sanitize(nb, AULA1, EVERYTHING)
    protegidas = [gid for gid, c in catalogo.original_cells(AULA1.source).items() if c.metadata["nbgrader"]["locked"]]
    assert set(protegidas) <= set(_gids(limpo)) and "os metadados voltaram" in " ".join(notas)


def test_verificacao_e_importacoes_apagadas_voltam_no_lugar():
    nb = _sem(_sem(SOL1, "aula01-ex4-verificacao"), "aula01-03-exercicios-importacoes")
    limpo, notas = saneamento.sanitize(nb, AULA1, EVERYTHING)
    gids = _gids(limpo)
    assert gids.index("aula01-ex4-verificacao") == gids.index("aula01-ex4-solucao") + 1
    assert gids.index("aula01-03-exercicios-importacoes") < gids.index("aula01-ex3-solucao")
    assert "apagadas voltaram" in " ".join(notas)


def test_linhas_acrescentadas_a_celula_protegida_rodam_depois_dela():
    nb = copy.deepcopy(SOL1)
    imports = next(c for c in nb["cells"]
                   if catalogo.nbgrader_meta(c).get("grade_id") == "aula01-03-exercicios-importacoes")
    imports["source"] = "".join(imports["source"]) + "\nimport math\n    "
    verif = next(c for c in nb["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == "aula01-ex3-verificacao")
    verif["source"] = "print('✅ tudo certo')"  # numa verificação, nada do que mudou conta
    limpo, notas = saneamento.sanitize(nb, AULA1, EVERYTHING)
    i = _gids(limpo).index("aula01-03-exercicios-importacoes")
    assert limpo["cells"][i + 1]["source"] == "import math" and catalogo.nbgrader_meta(limpo["cells"][i + 1]) == {}
    assert "print('✅" not in json.dumps([c["source"] for c in limpo["cells"] if not catalogo.nbgrader_meta(c)])
    texto = " | ".join(notas)
    assert "editadas (aula01-03-exercicios-importacoes, aula01-ex3-verificacao)" in texto
    assert "linhas acrescentadas a aula01-03-exercicios-importacoes" in texto


def test_tipo_trocado_volta_ao_original():
    nb = copy.deepcopy(SOL1)
    sol = next(c for c in nb["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == "aula01-ex3-solucao")
    sol["cell_type"] = "markdown"
    sol.pop("outputs"), sol.pop("execution_count")
    limpo, notas = saneamento.sanitize(nb, AULA1, EVERYTHING)
    volta = next(c for c in limpo["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == "aula01-ex3-solucao")
    assert volta["cell_type"] == "code" and volta["outputs"] == [] and "mudado de tipo" in " ".join(notas)


def test_respostas_escritas_em_branco():
    aluno = json.loads((ROOT / "notebooks" / AULA1.source.relative_to(ROOT / "solutions")).read_text(encoding="utf-8"))
    assert [gid for gid, _, _ in catalogo.blank_answers(aluno, AULA1)] == [
        "aula01-ex1-resposta", "aula01-ex2-resposta", "aula01-ex5-resposta"]
    assert catalogo.blank_answers(SOL1, AULA1) == []


def test_nomes_antigos_das_funcoes_ganham_o_nome_atual():
    """Uma entrega feita com a versão anterior do curso (``minha_softmax``...): a resposta ganha o nome atual,
    com a nota; a célula de verificação recolocada chama o nome atual e encontra a função."""
    aula2 = EVERYTHING[("aula-02-auto-atencao-do-zero", "04-exercicios")]
    antigo = gerar.versao_antiga(gerar.clean(gerar.solution(gerar.AULA2, "04-exercicios")))
    limpo, notas = saneamento.sanitize(antigo, aula2, EVERYTHING)
    fontes = {catalogo.nbgrader_meta(c).get("grade_id"): catalogo.cell_source(c) for c in limpo["cells"]}
    assert "my_softmax = minha_softmax" in fontes["aula02-softmax-solucao"]
    assert "my_causal_mask = mascara_causal" in fontes["aula02-mascara-solucao"]
    assert "minha_softmax → my_softmax" in " ".join(notas)
    # a entrega de hoje não muda; uma resposta que já define o nome novo também não
    atual = gerar.clean(gerar.solution(gerar.AULA2, "04-exercicios"))
    limpo, notas = saneamento.sanitize(atual, aula2, EVERYTHING)
    assert "versão anterior" not in " ".join(notas)
    fonte = "def minha_softmax(z, axis=-1):\n    return z\n\ndef my_softmax(z, axis=-1):\n    return z\n"
    assert nomes_antigos.update_answer(fonte) == (fonte, [])


def _zip_em(path: Path, members) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gerar._zip(members))
    return path


def test_turma_em_dois_zips_na_linha_de_comando_juntada_por_aluno(tmp_path):
    """O caso do professor: um zip com dois alunos e outro com a reentrega de um deles. Os alunos são os das
    pastas (nunca os nomes dos zips), e a reentrega é uma segunda cópia do notebook de quem reentregou."""
    lote1 = _zip_em(tmp_path / "turma-a.zip", [("turma-a/ana/03-exercicios.ipynb", NB),
                                               ("turma-a/bruno/03-exercicios.ipynb", NB)])
    lote2 = _zip_em(tmp_path / "reentrega.zip", [("bruno/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions([lote1, lote2], tmp_path / "t")
    assert _mapa(ent) == {("ana", "03-exercicios.ipynb"), ("bruno", "turma-a.zip/03-exercicios.ipynb"),
                          ("bruno", "reentrega.zip/03-exercicios.ipynb")}
    assert ent.alunos == ["ana", "bruno"]
    # uma pasta e um zip de um aluno só (os notebooks soltos): o aluno tem o nome do zip
    pasta = tmp_path / "pasta"
    (pasta / "carla").mkdir(parents=True)
    (pasta / "carla" / "03-exercicios.ipynb").write_bytes(NB)
    davi = _zip_em(tmp_path / "davi.zip", [("03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions([pasta, davi], tmp_path / "t2")
    assert _mapa(ent) == {("carla", "03-exercicios.ipynb"), ("davi", "davi.zip/03-exercicios.ipynb")}


def test_dois_zips_da_turma_dentro_da_pasta_das_entregas(tmp_path):
    """Os dois zips da turma baixados na mesma pasta: nenhum vira aluno."""
    pasta = tmp_path / "entregas"
    _zip_em(pasta / "lote-1.zip", [("ana/03-exercicios.ipynb", NB), ("bruno/03-exercicios.ipynb", NB)])
    _zip_em(pasta / "lote-2.zip", [("bruno/03-exercicios.ipynb", NB)])
    _zip_em(pasta / "lote-3.zip", [("Downloads/turma-b/carla/03-exercicios.ipynb", NB),
                                   ("Downloads/turma-b/davi/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t")
    assert _mapa(ent) == {("ana", "03-exercicios.ipynb"), ("bruno", "03-exercicios.ipynb"),
                          ("bruno", "lote-2.zip/03-exercicios.ipynb"), ("carla", "03-exercicios.ipynb"),
                          ("davi", "03-exercicios.ipynb")}
    assert ent.alunos == ["ana", "bruno", "carla", "davi"]
    plano, linhas, _ = motor_plan(ent, tmp_path)
    assert sorted((e.student, e.file) for e in plano) == [("ana", "03-exercicios.ipynb"),
                                                              ("bruno", "03-exercicios.ipynb"),
                                                              ("bruno", "lote-2.zip/03-exercicios.ipynb"),
                                                              ("carla", "03-exercicios.ipynb"),
                                                              ("davi", "03-exercicios.ipynb")]
    assert not linhas


def test_o_aluno_do_zip_que_nao_abre_tem_uma_linha(tmp_path):
    """frank.zip que não é zip: antes, o frank sumia de notas.csv (só um arquivo sem aluno em nao-corrigidos.csv)."""
    pasta = tmp_path / "turma"
    (pasta / "ana").mkdir(parents=True)
    (pasta / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    (pasta / "frank.zip").write_text("não sou um zip", encoding="utf-8")
    ent = entregas.read_submissions(pasta, tmp_path / "t")
    assert "frank" in ent.alunos and ("frank", "frank.zip") in _mapa(ent)
    plano, linhas, fora = motor_plan(ent, tmp_path)
    assert [(r.student, r.status) for r in linhas] == [("frank", "sem_notebooks")]
    assert fora == [("frank", "frank.zip", entregas.ZIP_BROKEN)] and "BadZipFile" not in entregas.ZIP_BROKEN
    # a linha dele diz o que fazer (antes: só "nenhum notebook na pasta (há: frank.zip)")
    assert linhas[0].reasons[-1].endswith("o zip frank.zip não abre (incompleto ou danificado): peça ao aluno que o "
                                          "envie de novo"), linhas[0].reasons


def test_copias_demais_do_mesmo_notebook_nao_vao_ao_kernel(tmp_path):
    """Um aluno com cinco cópias renomeadas do mesmo notebook: três são corrigidas, duas viram ``copias_demais``
    (sem rodar); outro notebook dele e o colega não perdem nada."""
    pasta = tmp_path / "turma"
    (pasta / "fabio").mkdir(parents=True)
    (pasta / "gil").mkdir()
    for k in range(5):
        (pasta / "fabio" / f"03-exercicios ({k}).ipynb").write_bytes(NB)
    (pasta / "gil" / "03-exercicios.ipynb").write_bytes(NB)
    plano, linhas, _ = motor_plan(entregas.read_submissions(pasta, tmp_path / "t"), tmp_path)
    assert sorted((e.student, e.file) for e in plano) == [
        ("fabio", "03-exercicios (0).ipynb"), ("fabio", "03-exercicios (1).ipynb"),
        ("fabio", "03-exercicios (2).ipynb"), ("gil", "03-exercicios.ipynb")]
    assert sorted((r.student, r.arquivo, r.status, r.total) for r in linhas) == [
        ("fabio", "03-exercicios (3).ipynb", "copias_demais", 0.0),
        ("fabio", "03-exercicios (4).ipynb", "copias_demais", 0.0)]
    assert all("entregou 5 cópias deste notebook e só as 3 primeiras" in r.reasons[0] for r in linhas)


def motor_plan(ent, tmp_path):
    from correcao import motor

    return motor.plan_class(ent, EVERYTHING, tmp_path / "saneados")


@pytest.mark.parametrize("membros, esperado", [
    # o zip de um aluno só, com uma pasta por aula: as pastas não são alunos
    ([("ana/aula-01-self-attention/03-exercicios.ipynb", NB), ("ana/aula-02-auto-atencao-do-zero/04-exercicios.ipynb",
                                                                 NB)],
     {("ana", "aula-01-self-attention/03-exercicios.ipynb"),
      ("ana", "aula-02-auto-atencao-do-zero/04-exercicios.ipynb")}),
    ([("ana/Aula 1/03-exercicios.ipynb", NB)], {("ana", "Aula 1/03-exercicios.ipynb")}),
    # sem a pasta do aluno: a pasta de aula não é um aluno; o aluno é o do zip
    ([("aula-01-self-attention/03-exercicios.ipynb", NB)],
     {("ana", "ana.zip/aula-01-self-attention/03-exercicios.ipynb")}),
    ([("03-exercicios/03-exercicios.ipynb", NB), ("modulo-06/04-projeto.ipynb", NB)],
     {("ana", "ana.zip/03-exercicios/03-exercicios.ipynb"), ("ana", "ana.zip/modulo-06/04-projeto.ipynb")}),
    # a turma organizada por aula: os alunos estão dentro da pasta da aula
    ([("turma/aula-01-self-attention/carla/03-exercicios.ipynb", NB),
      ("turma/aula-01-self-attention/davi/03-exercicios.ipynb", NB),
      ("turma/aula-02-auto-atencao-do-zero/davi/04-exercicios.ipynb", NB)],
     {("carla", "03-exercicios.ipynb"), ("davi", "03-exercicios.ipynb"), ("davi", "04-exercicios.ipynb")}),
])
def test_pasta_com_nome_de_aula_ou_de_notebook_nunca_e_aluno(tmp_path, membros, esperado):
    ent = entregas.read_submissions(_zip_em(tmp_path / "ana.zip", membros), tmp_path / "t")
    assert _mapa(ent) == esperado
    assert not {a for a in ent.alunos if entregas.course_notebook_name(a)}


def test_nomes_do_curso():
    for nome in ("aula-01-self-attention", "Aula 1", "aula_02", "modulo-06", "Módulo 6", "03-exercicios",
                 "04-Projeto", "exercicios", "notebooks", "trabalho"):
        assert entregas.course_notebook_name(nome), nome
    for nome in ("ana", "aula-de-reforço-ana", "joão-aula", "tiago-duas-aulas", "03-exercicios-da-ana"):
        assert not entregas.course_notebook_name(nome), nome


def test_aviso_do_zip_de_um_aluno_que_tambem_esta_num_lote(tmp_path):
    """A pasta da ana, o zip dela com pastas de colegas e um lote com a reentrega dela: tudo é da ana, cada cópia com
    o seu caminho, e o aviso tem o caminho do zip (sem o nome da parte na frente: ``ana.zip``, e não
    ``ana.zip/ana.zip``)."""
    pasta = tmp_path / "turma"
    (pasta / "ana").mkdir(parents=True)
    (pasta / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    _zip_em(pasta / "ana.zip", [("bia/03-exercicios.ipynb", NB), ("carla/03-exercicios.ipynb", NB)])
    _zip_em(pasta / "lote-2.zip", [("ana/03-exercicios.ipynb", NB), ("dani/03-exercicios.ipynb", NB)])
    ent = entregas.read_submissions(pasta, tmp_path / "t")
    assert ent.alunos == ["ana", "dani"]
    assert {c for a, c in _mapa(ent) if a == "ana"} == {
        "03-exercicios.ipynb", "lote-2.zip/03-exercicios.ipynb", "ana.zip/bia/03-exercicios.ipynb",
        "ana.zip/carla/03-exercicios.ipynb", "ana.zip"}
    assert "pastas com nome de aluno (bia, carla)" in _aviso(ent, "ana", "ana.zip")
