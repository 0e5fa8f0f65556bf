"""O relatório da turma (``correcao.class_report``): as categorias dos enganos nas verificações (um id estável para
cada dica de tabela), as linhas da correção com o resultado de cada verificação, a página e os CSVs.

Os testes rápidos usam linhas montadas à mão; o lento (``lento``), a turma de exemplo corrigida nas caixas
(``turma_corrigida``): cada aluno errado dela aparece sob o engano certo.
"""

from __future__ import annotations

import ast
import csv
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT / "tests"))

from atencao.checks import categories  # noqa: E402
from correcao import class_report  # noqa: E402
from correcao.catalogo import catalog  # noqa: E402
from correcao.relatorio import Row  # noqa: E402

CHECKS = ROOT / "lib" / "atencao" / "checks"
A1, A4 = "aula-01-self-attention", "aula-04-bloco-transformer"


# ---------- as categorias nas verificações ----------
def _is_text(node) -> bool:
    """Uma dica escrita sem :func:`mistake`: uma frase literal (de 30 caracteres ou mais: os rótulos dos casos, como
    ``"sol lua mar"``, são curtos), uma f-string ou ``"...".format(...)``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and len(node.value) >= 30
    if isinstance(node, ast.JoinedStr):
        return sum(len(v.value) for v in node.values if isinstance(v, ast.Constant)) >= 30
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant))


def _tables(tree):
    """As tabelas de erros típicos de um módulo, com a função em que estão: as listas (ou tuplas) de pares ``(dica,
    engano)`` ou ``(reproduz, dica)`` em que algum par tem uma dica com id, e as passadas direto a ``matching_hint``."""
    for func in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Module))):
        tabelas = [c.args[1] for c in ast.walk(func) if isinstance(c, ast.Call) and len(c.args) > 1
                   and getattr(c.func, "id", "") in ("matching_hint", "_match", "_engano")]
        nomes = {t.id for t in tabelas if isinstance(t, ast.Name)}  # mistakes = [...]; matching_hint(got, mistakes)
        direto = {id(t) for t in tabelas} | {id(n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)
                                             and any(getattr(x, "id", None) in nomes for x in n.targets)}
        for node in ast.walk(func):
            if isinstance(node, (ast.List, ast.Tuple)):
                pares = [e for e in node.elts if isinstance(e, ast.Tuple) and len(e.elts) == 2]
                if pares and (id(node) in direto or any(_mistake_id(x) for p in pares for x in p.elts)):
                    yield getattr(func, "name", "<módulo>"), pares


def _mistake_id(node):
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "mistake":
        return node.args[0].value if isinstance(node.args[0], ast.Constant) else None
    return None


@pytest.mark.parametrize("arquivo", sorted(p.name for p in CHECKS.glob("*.py") if p.stem.startswith("aula")
                                            or p.stem == "multihead_hints"))
def test_toda_dica_de_tabela_tem_um_id_unico_na_tabela(arquivo):
    """Nenhuma tabela de erros típicos tem uma dica sem id (um texto solto ao lado do engano), e numa tabela dois
    enganos diferentes nunca têm o mesmo id (o mesmo id só com o mesmo texto: o engano repetido com outra conta)."""
    tree = ast.parse((CHECKS / arquivo).read_text(encoding="utf-8"))
    for funcao, pares in _tables(tree):
        sem_id = [ast.unparse(p)[:80] for p in pares if sum(map(_is_text, p.elts)) == 1]
        assert not sem_id, (arquivo, funcao, sem_id)
        textos: dict = {}
        for par in pares:
            for e in par.elts:
                cid = _mistake_id(e)
                if cid is not None:
                    textos.setdefault(cid, set()).add(ast.unparse(e.args[1]))
        repetidos = {c: t for c, t in textos.items() if len(t) > 1}
        assert not repetidos, (arquivo, funcao, repetidos)


def test_os_ids_sao_snake_case_e_literais():
    """Todo ``mistake(...)`` das verificações tem um id escrito ali (o relatório os acha pelo código) em snake_case,
    e nenhum id é o de uma categoria genérica ou de um resultado da correção."""
    reservados = set(categories.GENERIC) | set(categories.OUTCOMES) | {
        class_report.WRITTEN_STUB, class_report.NOT_GRADED, class_report.NO_DIAGNOSIS}
    vistos = 0
    for arquivo in sorted(CHECKS.glob("*.py")):
        for n in ast.walk(ast.parse(arquivo.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "mistake":
                assert isinstance(n.args[0], ast.Constant), (arquivo.name, n.lineno)
                cid = n.args[0].value
                assert categories.ID_PATTERN.fullmatch(cid) and cid not in reservados, (arquivo.name, n.lineno, cid)
                vistos += 1
    assert vistos > 200  # as tabelas das seis aulas


def test_mistake_recusa_um_id_que_nao_e_snake_case():
    with pytest.raises(ValueError, match="category: esperado um id snake_case"):
        categories.mistake("Sem Escala", "texto")
    dica = categories.mistake("no_scale", "faltou a escala.")
    assert dica == "faltou a escala." and dica.category == "no_scale"
    assert dica.extended(" Mais.").category == "no_scale" and dica.extended(" Mais.") == "faltou a escala. Mais."


def test_cada_errada_dos_corpora_diz_a_categoria():
    """O corpus de cada aula é o único lugar da categoria esperada de uma resposta errada: todas dizem uma."""
    import corpus

    for arquivo in sorted((ROOT / "tests").glob("test_checks_aula*_corpus.py")):
        mod = __import__(arquivo.stem)
        sem = [corpus.nome(e[0]) for es in mod.ERRADAS.values() for e in es if corpus.entrada(e)[0] is None]
        assert not sem, (arquivo.name, sem)


def test_o_check_result_leva_a_categoria_do_primeiro_erro(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    from atencao.checks import aula01

    def sem_escala(X, W_q, W_k, W_v):
        from atencao import softmax

        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        A = softmax(Q @ K.T)
        return A @ V, A

    def nao_feito(X, W_q, W_k, W_v):
        raise NotImplementedError

    assert aula01.exercicio_4(sem_escala).category == "no_scale"
    assert aula01.exercicio_4(nao_feito).category == "not_done"
    assert aula01.exercicio_4(lambda *a: 1 / 0).category == "student_exception"
    capsys.readouterr()


def test_o_tempo_esgotado_e_o_processo_parado_tem_categorias_proprias():
    """Na correção, a função do aluno que passa do tempo (ou o processo dele que para) volta como uma exceção escrita
    pela correção: a categoria é ``timeout`` (ou ``stopped``), não a de uma exceção do aluno."""
    from atencao.checks.errors import student_error

    tempo = RuntimeError("a função passou do tempo limite")
    tempo.mensagem_fixa = True
    parado = RuntimeError("o processo do aluno parou")
    parado.mensagem_fixa = True
    assert [student_error(e)[3].category for e in (tempo, parado, ValueError("x"))] == [
        "timeout", "stopped", "student_exception"]


# ---------- as linhas da correção ----------
def _linha(aluno, diagnoses, status="parcial", reasons=(), notebook="03-exercicios", aula=A1):
    g = catalog()[(aula, notebook)]
    return Row(aluno, aula, notebook, scores=g.zero_scores(), status=status, reasons=list(reasons),
               arquivo=f"{notebook}.ipynb", diagnoses=diagnoses)


EX3, EX4 = "aula01-ex3-verificacao", "aula01-ex4-verificacao"
ESBOCO = ("1 resposta(s) escrita(s) ainda com o esboço ✍️ (valem 0 na correção do professor): "
          "aula01-ex3-resposta")


def _turma() -> list[Row]:
    return [
        _linha("ana", {EX3: ("ok", ""), EX4: ("ok", "")}, status="ok"),
        _linha("bia", {EX3: ("ok", ""), EX4: ("no_scale", "caso 1 de 5: pesos de atenção (n, n) corretos")}),
        _linha("caio", {EX3: ("ok", ""), EX4: ("no_scale", "caso 2 de 5: pesos de atenção (n, n) corretos")},
               reasons=[ESBOCO]),
        _linha("davi", {EX3: ("ok", ""), EX4: ("stopped", "a conferência parou nesta verificação")},
               status="tempo_esgotado"),
        _linha("eva", {EX3: ("not_done", "não resolvido"), EX4: ("not_done", "não resolvido")}, status="zero"),
        _linha("=cmd", {EX3: ("ok", ""), EX4: ("student_exception", "o seu código levantou ZeroDivisionError")}),
        _linha("fred", {}, status="arquivo_invalido"),
        _linha("gil", {}, status="erro_na_correcao"),
    ]


def test_as_linhas_viram_um_resultado_por_verificacao():
    registros = class_report.records_from_rows(_turma(), catalog())
    por = {(r.student, r.grade_id): r.category for r in registros}
    assert por[("bia", EX4)] == por[("caio", EX4)] == "no_scale"
    assert por[("davi", EX4)] == "timeout"  # parada numa linha de tempo esgotado
    assert por[("eva", EX3)] == "not_done"
    assert por[("fred", EX3)] == class_report.NOT_GRADED and por[("gil", EX4)] == "grading_error"
    assert por[("caio", "aula01-ex3-resposta")] == class_report.WRITTEN_STUB
    antiga = class_report.records_from_rows([_linha("ivo", {}, status="ok")], catalog())  # um parte.json antigo
    assert {r.category for r in antiga} == {class_report.NO_DIAGNOSIS}
    solto = class_report.records_from_rows([_linha("", {}, status="fora_de_pasta")], catalog())
    assert {(r.student, r.category) for r in solto} == {(class_report.SEM_PASTA, class_report.NOT_GRADED)}
    # a cópia da solução: o verificador aprovou, mas os pontos estão retidos; o relatório não diz "passou"
    from correcao.relatorio import withhold

    copia = _linha("ivo", {EX3: ("ok", ""), EX4: ("no_scale", "caso 1 de 5: pesos")})
    copia.scores[EX3] = 2.0
    withhold(copia, [EX3], "respostas iguais às de solutions/ (aula01-ex3-solucao): cópia da solução? O professor "
                           "decide")
    (ex3,) = [r for r in class_report.records_from_rows([copia], catalog()) if r.grade_id == EX3]
    assert ex3.category == class_report.IN_REVIEW and class_report.group_of(ex3.category) == "review", ex3
    assert class_report.describe(ex3.category, EX3).startswith("em revisão: os pontos ficam retidos")
    assert ex3.detail == ("respostas iguais às de solutions/ (aula01-ex3-solucao): cópia da solução? "
                          "O professor decide"), ex3.detail
    sem_versao = _linha("hugo", {EX3: ("ok", "")})
    del sem_versao.scores[EX4]  # a versão do curso do aluno não tinha o exercício 4
    assert [r.grade_id for r in class_report.records_from_rows([sem_versao], catalog())] == [EX3]


def test_o_resumo_conta_os_alunos_de_cada_engano():
    checks, escritas = class_report.summarize(class_report.records_from_rows(_turma(), catalog()))
    ex4 = next(s for s in checks if s.grade_id == EX4)
    assert ex4.students["no_scale"] == ["bia", "caio"]
    assert ex4.details["no_scale"] == "pesos de atenção (n, n) corretos"  # sem o "caso k de n"
    assert ex4.by_group() == {"ok": 1, "mistake": 2, "other": 0, "error": 1, "not_done": 1, "timeout": 1,
                              "review": 0, "stopped": 2}
    assert [(s.grade_id, s.students) for s in escritas] == [("aula01-ex3-resposta", {"written_stub": ["caio"]})]


def test_a_pagina_e_os_csvs(tmp_path):
    pagina = class_report.write_class_report(_turma(), catalog(), tmp_path)
    texto = pagina.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in texto and "<script" not in texto
    assert texto.count('<img src="data:image/png;base64,') == 2
    assert re.search(r'alt="Barras empilhadas, uma por verificação: [^"]*aula01-ex4-verificacao', texto)
    assert "parece que faltou dividir as pontuações por sqrt(d_k)." in texto  # a dica que o aluno leu
    assert "bia, caio" in texto and "=cmd" in texto and "Não se sabe" in texto
    with open(tmp_path / class_report.REPORT_CSV, encoding="utf-8") as f:
        linhas = {(d["verificacao"], d["categoria"]): d for d in csv.DictReader(f)}
    assert linhas[(EX4, "no_scale")]["alunos"] == "2" and linhas[(EX4, "no_scale")]["nomes"] == "bia; caio"
    assert linhas[(EX4, "no_scale")]["grupo"] == "mistake"
    assert linhas[("aula01-ex3-resposta", "written_stub")]["nomes"] == "caio"
    assert linhas[(EX4, "student_exception")]["nomes"] == "'=cmd"  # a planilha não a roda como fórmula
    # o verificacoes.csv refaz o mesmo relatório, byte a byte (o comando relatorio)
    antes = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    (tmp_path / class_report.REPORT_HTML).unlink()
    assert class_report.main([str(tmp_path)]) == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == antes
    registros = class_report.read_checks_csv(tmp_path / class_report.CHECKS_CSV)
    assert registros == class_report.records_from_rows(_turma(), catalog())


def test_o_comando_sem_verificacoes_csv_diz_o_que_falta(tmp_path, capsys):
    assert class_report.main([str(tmp_path)]) == 2
    assert "sem verificacoes.csv" in capsys.readouterr().out
    (tmp_path / class_report.CHECKS_CSV).write_text("a,b\n1,2\n", encoding="utf-8")
    assert class_report.main([str(tmp_path)]) == 2
    assert "colunas esperadas" in capsys.readouterr().out
    assert class_report.main([]) == 2


def test_a_descricao_vem_da_dica_da_aula_certa():
    assert "seno e cosseno trocados" in class_report.describe("sin_cos_swapped", "aula04-ex1-verificacao")
    # o mesmo id em duas aulas: a dica da aula da verificação
    assert "sqrt(d_k)" in class_report.describe("no_scale", "aula01-ex4-verificacao")
    assert class_report.describe("not_done") == categories.OUTCOMES["not_done"]
    assert class_report.describe("wrong_shape") == categories.GENERIC["wrong_shape"]


def test_o_parte_json_leva_os_diagnosticos():
    """Numa turma dividida, os diagnósticos de cada linha vão no ``parte.json`` e voltam na junção (o relatório sai
    das linhas juntadas, como numa correção única)."""
    import json

    from correcao.partes import _row_from_json, _row_to_json

    linha = _turma()[1]
    volta = _row_from_json(json.loads(json.dumps(_row_to_json(linha))))
    assert (class_report.records_from_rows([volta], catalog())
            == class_report.records_from_rows([linha], catalog()))


# ---------- a turma de exemplo (lento) ----------
# o aluno errado da turma de exemplo, a verificação e o engano que a dica nomeia (tests/turma_exemplo/gerar.py)
ERRADOS = [
    ("bruno-parcial", "aula01-ex4-verificacao", "no_scale"),
    ("sara-aula-4-errada", "aula04-ex2-verificacao", "stats_over_axis0"),
    ("vini-aula-5-errado", "aula05-ex1-verificacao", "missing_sum_term"),
    ("yago-aula-6-errado", "aula06-ex2-verificacao", "missing_variance_term"),
    ("carla-vazia", "aula01-ex3-verificacao", "not_done"),
    ("davi-laco-infinito", "aula01-ex3-verificacao", "timeout"),  # o laço infinito: a função passou do tempo
    ("elisa-excecao", "aula01-ex4-verificacao", "student_exception"),
]


@pytest.mark.lento
def test_a_turma_de_exemplo_mostra_cada_aluno_errado_sob_o_engano_certo(tmp_path_factory):
    import turma_corrigida

    correcao = turma_corrigida.turma_corrigida(tmp_path_factory)
    saida = correcao["saida"]
    registros = class_report.read_checks_csv(saida / class_report.CHECKS_CSV)
    por = {(r.student, r.grade_id): r.category for r in registros}
    for aluno, gid, categoria in ERRADOS:
        assert por.get((aluno, gid)) == categoria, (aluno, gid, por.get((aluno, gid)))
    with open(saida / class_report.REPORT_CSV, encoding="utf-8") as f:
        linhas = {(d["verificacao"], d["categoria"]): d["nomes"].split("; ") for d in csv.DictReader(f)}
    for aluno, gid, categoria in ERRADOS:
        assert aluno in linhas[(gid, categoria)], (aluno, gid, categoria)
    assert "ana-correta" in linhas[("aula01-ex4-verificacao", "ok")]
    assert "bruno-parcial" in linhas[("aula01-ex1-resposta", class_report.WRITTEN_STUB)]
    pagina = (saida / class_report.REPORT_HTML).read_text(encoding="utf-8")
    assert "sara-aula-4-errada" in pagina and "Relatório da turma" in pagina


def test_cada_aluno_em_revisao_aparece_com_o_proprio_motivo(tmp_path):
    """Dois alunos em revisão por motivos diferentes: a página e o CSV davam o motivo do primeiro aos dois (o
    professor leria "cópia da solução?" ao lado de quem mexeu na correção, ou ao contrário)."""
    from correcao.relatorio import withhold

    copia = _linha("ana", {EX3: ("ok", "")})
    mexeu = _linha("bruno", {EX3: ("ok", "")})
    for r in (copia, mexeu):
        r.scores[EX3] = 2.0
    withhold(copia, [EX3], "respostas iguais às de solutions/ (aula01-ex3-solucao): cópia da solução? O professor "
                           "decide")
    withhold(mexeu, [EX3], "o código mexe na correção (linha 5: importa ctypes)")
    checks, _ = class_report.summarize(class_report.records_from_rows([copia, mexeu], catalog()))
    (ex3,) = [s for s in checks if s.grade_id == EX3]
    assert ex3.students[class_report.IN_REVIEW] == ["ana", "bruno"]
    assert "cópia da solução" in ex3.review_reasons["ana"][0] and "ctypes" not in " ".join(ex3.review_reasons["ana"])
    assert "ctypes" in ex3.review_reasons["bruno"][0] and "cópia" not in " ".join(ex3.review_reasons["bruno"])
    pagina = class_report.build_report(class_report.records_from_rows([copia, mexeu], catalog()), tmp_path)
    texto = pagina.read_text(encoding="utf-8")
    assert re.search(r"<li>ana: respostas iguais às de solutions/[^<]*cópia da solução", texto), texto
    assert re.search(r"<li>bruno: o código mexe na correção \(linha 5: importa ctypes\)</li>", texto)
    assert "critério: respostas iguais" not in texto  # o motivo de um não vira o critério de todos
    with open(tmp_path / class_report.REPORT_CSV, newline="", encoding="utf-8") as f:
        (linha,) = [x for x in csv.DictReader(f) if x["verificacao"] == EX3]
    assert linha["alunos"] == "2" and "bruno (o código mexe na correção" in linha["nomes"], linha


def test_duas_copias_do_mesmo_aluno_contam_um_aluno():
    """Um aluno com duas cópias do notebook, uma certa e uma errada: o título da verificação conta alunos."""
    certa, errada = _linha("joao", {EX4: ("ok", "")}), _linha("joao", {EX4: ("no_scale", "pesos")})
    errada.arquivo = "03-exercicios (1).ipynb"
    checks, _ = class_report.summarize(class_report.records_from_rows([certa, errada, _linha("ana", {})], catalog()))
    (ex4,) = [s for s in checks if s.grade_id == EX4]
    assert ex4.students["ok"] == ["joao"] and ex4.students["no_scale"] == ["joao"]
    assert ex4.total() == 2, ex4.students
