"""Entregas de versões anteriores do curso, cópias de ``solutions/`` e linhas em revisão.

As versões anteriores vêm do histórico do git (``scripts/versoes_antigas.py`` → ``lib/correcao/versoes_antigas.json``;
``tests/turma_exemplo/versoes.py`` → ``tests/versoes-antigas.zip``, o notebook de aluno de cada versão, resolvido).
Os dois ficam guardados: num clone raso, os testes que precisam do histórico dizem isso e são pulados; os outros
usam o que está guardado.
"""

import copy
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import catalogo, entregas, isolamento, motor, nomes_antigos, relatorio, saneamento

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))
import versoes_antigas  # noqa: E402
from turma_exemplo import gerar, versoes  # noqa: E402

EVERYTHING = catalogo.catalog()
A1, A2 = "modulo-06/aula-01-self-attention", "modulo-06/aula-02-auto-atencao-do-zero"
sem_historico = pytest.mark.skipif(versoes.raso(), reason="clone raso: sem o histórico do git para conferir")


def _plano(membros, tmp_path):
    """(plano, linhas) de plan_class para uma turma em zip, sem executar nada."""
    z = tmp_path / "turma.zip"
    z.write_bytes(gerar._zip(membros))
    ent = entregas.read_submissions(z, tmp_path / "tmp")
    plano, linhas, _ = motor.plan_class(ent, EVERYTHING, tmp_path / "saneados")
    return {(e.student, e.file): e for e in plano}, linhas


# ---------- a tabela e o zip guardados ----------
@sem_historico
@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_tabela_das_versoes_em_dia_com_o_git():
    atual = versoes_antigas.table_text(versoes_antigas.build_table())
    assert versoes_antigas.TABLE.read_text(encoding="utf-8") == atual, "rode python scripts/versoes_antigas.py"


@sem_historico
def test_zip_das_versoes_em_dia_com_o_git():
    assert versoes.conteudo() == versoes.ZIP.read_bytes(), "rode make turma-exemplo e commite"


def test_tabela_cobre_as_versoes_com_outros_ids_e_nomes():
    tabela = nomes_antigos.old_versions()
    assert len(tabela) >= 10
    # a primeira versão da Aula 1: ids sem o prefixo da aula e as funções em português
    v1 = next(v for v in tabela if (v.aula, v.notebook) == ("aula-01-self-attention", "03-exercicios"))
    assert v1.mapa_ids["ex3-solucao"] == "aula01-ex3-solucao"
    assert v1.funcoes == {"embeddings_pulou_alto_parecidos": "similar_embeddings",
                          "atencao_com_projecoes": "attention_with_projections"}
    # a Aula 2 antes do aquecimento (softmax e máscara): essas verificações não existiam
    sem_aquecimento = [v for v in tabela if v.notebook == "04-exercicios" and "aula02-softmax-verificacao"
                       not in v.verificacoes]
    assert sem_aquecimento and all("aula02-ex1-verificacao" in v.verificacoes for v in sem_aquecimento)
    assert set(nomes_antigos.RENAMED_FUNCTIONS) >= {a for v in tabela for a in v.funcoes}


def test_cada_versao_guardada_e_reconhecida_e_arrumada(tmp_path):
    """Sem executar: cada notebook de tests/versoes-antigas.zip vira a sua versão, com os ids de hoje, a nota
    e as verificações que a versão não tinha fora da nota."""
    ent = entregas.read_submissions(versoes.ZIP, tmp_path / "tmp")
    plano, linhas, _ = motor.plan_class(ent, EVERYTHING, tmp_path / "saneados")
    assert not linhas and len(plano) == len(nomes_antigos.old_versions()) + len(versoes.ENUNCIADO_MUDOU)
    for e in plano:
        v = _versao_do_aluno(e.student, e.file)
        assert (e.g.assignment, e.g.notebook) == (v.aula, v.notebook)
        assert any(n.startswith("notebook de uma versão anterior do curso") for n in e.notes), e.notes
        assert not any("de outro notebook" in n for n in e.notes), e.notes
        # as células protegidas como eram naquela versão não são "editadas" pelo aluno (a nota diz a versão)
        assert not any(n.startswith("células protegidas ou de verificação editadas") for n in e.notes), e.notes
        assert e.missing_checks == [gid for gid in e.g.checks if gid not in v.verificacoes]
        assert e.copied_answers == ([], [])
        nb = json.loads(e.path.read_text(encoding="utf-8"))
        ids = catalogo.grade_ids(nb)
        assert set(ids) <= set(catalogo.all_ids(e.g.source)), "id antigo que não virou o de hoje"
        assert not set(e.missing_checks) & set(ids), "verificação que a versão não tinha voltou ao notebook"


def test_notebook_atual_com_exercicios_apagados_continua_o_atual():
    """Apagar os exercícios novos não faz um notebook de hoje passar por uma versão antiga (que valia menos)."""
    nb = gerar.clean(gerar.solution(A2, "04-exercicios"))
    fora = ("aula02-softmax-solucao", "aula02-softmax-verificacao", "aula02-mascara-solucao",
            "aula02-mascara-verificacao")
    nb["cells"] = [c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") not in fora]
    assert nomes_antigos.recognize_version(nb, EVERYTHING) is None
    assert nomes_antigos.recognize_version(gerar.clean(gerar.solution(A2, "04-exercicios")), EVERYTHING) is None


def test_nomes_antigos_vem_da_versao():
    fonte = "def heads_onde_olha(A, k=3):\n    return A[:k]\n"
    novo, achados = nomes_antigos.update_answer(fonte, {"heads_onde_olha": "top_heads"})
    assert achados == ["heads_onde_olha"] and novo.rstrip().endswith("top_heads = heads_onde_olha  # nome da versão "
                                                                     "anterior do curso")
    assert nomes_antigos.update_answer("def top_heads(A):\n    return A\n", {"heads_onde_olha": "top_heads"}) \
        == ("def top_heads(A):\n    return A\n", [])
    assert nomes_antigos.defined_functions("import numpy as np\ndef a():\n    pass\nasync def b():\n    pass\n") \
        == ["a", "b"]


def _versao_do_aluno(aluno: str, arquivo: str) -> nomes_antigos.OldVersion:
    if aluno == versoes.COMO_ERA:
        commit, caminho = next(iter(versoes.ENUNCIADO_MUDOU))
        return next(v for v in nomes_antigos.old_versions() if (v.commits[1], v.caminho) == (commit, caminho))
    return next(v for v in nomes_antigos.old_versions()
                if (versoes.aluno(v), f"{v.notebook}.ipynb") == (aluno, arquivo))


# ---------- cópias de solutions/ ----------
def test_entrega_igual_as_solucoes_vai_para_revisao(tmp_path):
    sol = (ROOT / "solutions" / A1 / "03-exercicios.ipynb").read_bytes()
    reformatado = json.loads(sol)  # a mesma resposta com outros comentários e sem as marcas BEGIN/END SOLUTION
    for c in reformatado["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c["cell_type"] == "code":
            c["source"] = "\n".join(ln.split("#")[0].rstrip() + ("  # eu que fiz" if ln.strip() else "")
                                    for ln in "".join(c["source"]).splitlines() if "SOLUTION" not in ln)
    uma_so = gerar.clean(gerar.solution(A1, "03-exercicios"))  # só o exercício 3 igual à solução: coincidência
    gerar.fill(uma_so, "aula01-ex3-solucao", "".join(gerar.cell(json.loads(sol), "aula01-ex3-solucao")["source"]))
    honesto = gerar.clean(gerar.solution(A1, "03-exercicios"))
    plano, _ = _plano([("t/copia/03-exercicios.ipynb", sol), ("t/reformatado/03-exercicios.ipynb",
                                                               gerar._bytes(reformatado)),
                       ("t/honesto/03-exercicios.ipynb", gerar._bytes(honesto)),
                       ("t/uma-so/03-exercicios.ipynb", gerar._bytes(uma_so)),
                       ("t/vazio/03-exercicios.ipynb", (ROOT / "notebooks" / A1 / "03-exercicios.ipynb").read_bytes())],
                      tmp_path)
    checks = EVERYTHING[("aula-01-self-attention", "03-exercicios")].checks  # as verificações de hoje, das soluções
    assert plano[("copia", "03-exercicios.ipynb")].copied_answers[1] == checks
    assert plano[("reformatado", "03-exercicios.ipynb")].copied_answers[1] == checks
    for aluno in ("honesto", "uma-so", "vazio"):
        assert plano[(aluno, "03-exercicios.ipynb")].copied_answers == ([], []), aluno


def test_copia_da_solucao_de_uma_versao_anterior_tambem_e_copia():
    v = next(v for v in nomes_antigos.old_versions()
             if (v.aula, v.notebook) == ("aula-01-self-attention", "03-exercicios"))
    nb = versoes.guardado(versoes.aluno(v), "03-exercicios.ipynb")
    g = EVERYTHING[("aula-01-self-attention", "03-exercicios")]
    resolvido = nomes_antigos.translate_ids(nb, v)
    assert saneamento.copied_from_solutions(resolvido, g) == ([], [])
    # as mesmas células com as respostas das soluções daquela versão (as impressões digitais da tabela)
    if _resposta_da_versao(v, "aula01-ex3-solucao") is None:
        pytest.skip("clone raso: sem as soluções antigas")
    copia = copy.deepcopy(resolvido)
    for c in copia["cells"]:
        if catalogo.nbgrader_meta(c).get("solution"):
            c["source"] = _resposta_da_versao(v, catalogo.nbgrader_meta(c)["grade_id"])
    assert saneamento.copied_from_solutions(copia, g)[1] == g.checks


def _resposta_da_versao(v, gid):
    antigo = next(a for a, n in {**{x: x for x in v.ids}, **v.mapa_ids}.items() if n == gid)
    try:
        sol = json.loads(subprocess.run(["git", "show", f"{v.commits[1]}:solutions/{v.caminho}"], cwd=ROOT,
                                        capture_output=True, text=True, check=True).stdout)
    except subprocess.CalledProcessError:
        return None
    return "".join(next(c for c in sol["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == antigo)["source"])


def test_reter_guarda_os_pontos_e_zera_o_total():
    row = relatorio.Row("ana", "aula-01-self-attention", "03-exercicios", scores={"a": 2.0, "b": 2.0, "c": 0.0},
                        total=4.0, maximum=6.0)
    relatorio.withhold(row, ["a", "c"], "respostas iguais às de solutions/ (x)")
    assert (row.scores, row.total, row.status, row.em_revisao) == ({"a": 0.0, "b": 2.0, "c": 0.0}, 2.0, "revisar",
                                                                    {"a": 2.0})
    assert "pontos retidos até a revisão do professor (a: 2; coluna pontos_em_revisao)" in row.reasons[0]
    linha = row.csv(["a", "b", "c"])
    assert (linha["total"], linha["pontos_em_revisao"], linha["a"]) == ("2", "2", "0")
    assert relatorio.Row("b", "", "").csv([])["pontos_em_revisao"] == ""


def test_sem_caminhos_da_maquina():
    venv = sys.prefix + "/lib/python3.11/site-packages/IPython/core/interactiveshell.py:3585: UserWarning: To exit"
    assert relatorio.strip_paths(venv) == "interactiveshell.py:3585: UserWarning: To exit"
    for caminho in (str(ROOT / "lib" / "dados.txt"), tempfile.gettempdir() + "/correcao-x/e00001.ipynb",
                    str(Path.home() / ".cache" / "x")):
        assert relatorio.strip_paths(f"veja {caminho}, ok") == "veja …, ok"
    imagem = '<img src="data:image/png;base64,AAAA/tmp/BBBB==">'  # o base64 também tem "/": fica como está
    assert relatorio.strip_paths(imagem) == imagem


# ---------- de verdade, na caixa (make test-lento) ----------
@pytest.mark.lento
@pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")
def test_cada_versao_anterior_resolvida_tira_a_nota_cheia(tmp_path):
    rows = motor.grade_class(versoes.ZIP, tmp_path / "saida", log=lambda *_: None)  # os tempos padrão do professor
    assert len(rows) == len(nomes_antigos.old_versions()) + len(versoes.ENUNCIADO_MUDOU)
    for r in rows:
        v = _versao_do_aluno(r.student, r.arquivo)
        pontos = sum(EVERYTHING[(v.aula, v.notebook)].cells[gid][1] for gid in v.verificacoes)
        assert any(m.startswith(f"notebook de uma versão anterior do curso (de {v.datas[0]}") for m in r.reasons)
        if r.student == versoes.COMO_ERA:  # a resposta como a versão pedia, que a verificação de hoje recusa
            assert (r.status, r.total, r.maximum) == ("revisar", 0, pontos), (r.student, r.reasons)
            assert any("o enunciado pode ter mudado desde aquela versão" in m for m in r.reasons), r.reasons
            continue
        # tudo certo: ok, a não ser que a versão não tivesse um exercício de hoje (revisar, com os pontos dela)
        faltam = [gid for gid in EVERYTHING[(v.aula, v.notebook)].checks if gid not in v.verificacoes]
        assert (r.status, r.total, r.maximum) == ("revisar" if faltam else "ok", pontos, pontos), (r.student, r.reasons)
        assert not faltam or any("o professor decide se os exercícios novos contam" in m for m in r.reasons)
    with zipfile.ZipFile(versoes.ZIP) as z:
        assert len([n for n in z.namelist() if n.endswith(".ipynb")]) == len(rows)


def test_erro_da_verificacao_no_retorno_sem_caminhos_da_maquina(tmp_path):
    """Achado: numa célula de verificação, o retorno mostra só ``Erro: mensagem``; a mensagem (que pode trazer o
    texto de uma exceção do aluno, como o ``sys.argv`` do kernel) saía com os caminhos desta máquina."""
    import nbformat

    venv = sys.prefix + "/lib/python3.11/site-packages/ipykernel_launcher.py"
    temporario = tempfile.gettempdir() + "/tmpk45puxte.json"
    celula = nbformat.v4.new_code_cell("aula01.projeto(visualize_attention)", id="verificacao")
    celula.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "aula01-projeto-verificacao",
                                   "points": 4}
    celula.outputs = [nbformat.v4.new_output("error", ename="AssertionError", traceback=["tb"],
                                             evalue=f"o seu código levantou RuntimeError: argv ['{venv}', '-f', "
                                                    f"'{temporario}']")]
    nbformat.write(nbformat.v4.new_notebook(cells=[celula]), tmp_path / "nb.ipynb")
    pagina = relatorio.notebook_body(tmp_path / "nb.ipynb")
    assert "AssertionError: o seu código levantou RuntimeError" in pagina
    assert sys.prefix not in pagina and temporario not in pagina and "ipykernel_launcher.py" in pagina
