"""A página de similaridade da correção (``correcao.similarity``): quem escreveu o mesmo código que quem.

Os rápidos montam as entregas com o nbformat (o notebook ``04-exercicios`` da Aula 2, com as respostas de
``tests/similaridade/respostas.py``) e chamam :func:`correcao.similarity.compare_class` direto, sem caixas; o lento
corrige uma turma pequena de ponta a ponta (:func:`correcao.motor.grade_class`) e compara as linhas corrigidas.
"""

from __future__ import annotations

import copy
import csv
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from exigir import pular_fora_da_ci
from similaridade import respostas as resp

from correcao import isolamento, similarity
from correcao.catalogo import catalog
from correcao.relatorio import Row, write_outputs

ROOT = Path(__file__).resolve().parents[1]
PAGINA = "similaridade.html"


def _entrega(pasta: Path, aluno: str, respostas: dict, arquivo: str = "04-exercicios.ipynb") -> Row:
    """A linha de um aluno como a correção a deixa: ``autograded`` aponta para o notebook (com as respostas)."""
    (pasta / "corrigidos").mkdir(parents=True, exist_ok=True)
    destino = pasta / "corrigidos" / f"{len(list((pasta / 'corrigidos').iterdir())):05d}.ipynb"
    nbformat.write(resp.notebook(respostas), destino)
    g = catalog()[(resp.AULA, resp.NOTEBOOK)]
    return Row(aluno, resp.AULA, resp.NOTEBOOK, scores={gid: 2.0 for gid in g.checks}, total=2.0 * len(g.checks),
               maximum=g.max_auto, arquivo=arquivo, autograded=destino, corpo="<p>(o notebook)</p>")


def _mistura(base: dict, **trocas) -> dict:
    return {**base, **{f"aula02-{k}-solucao": v for k, v in trocas.items()}}


# dois honestos que escreveram igual as respostas curtas e óbvias (a máscara com np.tri, além da de np.tril da aula),
# e diferente todo o resto
ANA = _mistura(resp.honesto(1), mascara="    return np.tri(n, dtype=bool)")
BIA = _mistura(resp.honesto(2), mascara="    return np.tri(n, dtype=bool)")


def _turma(pasta: Path) -> list[Row]:
    alunos = {"honesto-0": resp.honesto(0), "honesto-3": resp.honesto(3), "ana": ANA, "bia": BIA, "lia": resp.LIA,
              "otavio": resp.OTAVIO}
    return [_entrega(pasta, nome, respostas) for nome, respostas in alunos.items()]


def _pares(rep) -> set:
    return {frozenset((p.a, p.b)) for p in rep.pairs}


def test_a_copia_com_nomes_trocados_e_funcoes_reordenadas_e_apontada_e_os_honestos_nao(tmp_path):
    rows = _turma(tmp_path)
    antes = copy.deepcopy([(r.scores, r.total, r.status, r.reasons, r.em_revisao) for r in rows])
    rep = similarity.compare_class(rows, tmp_path / "saida")
    nomes = [r.student for r in rows]
    assert [{nomes[p.a], nomes[p.b]} for p in rep.pairs] == [{"lia", "otavio"}]
    (par,) = rep.pairs
    assert par.fraction_a >= similarity.THRESHOLD and par.fraction_b >= similarity.THRESHOLD
    assert par.shared >= similarity.MIN_SHARED
    # as duas funções auxiliares da multicabeça, em outra ordem e com outros nomes, estão nos trechos marcados
    otavio = par.code_b if nomes[par.b] == "otavio" else par.code_a
    marcados = par.slices["aula02-ex2-solucao"][1 if nomes[par.b] == "otavio" else 0]
    texto = "".join(otavio["aula02-ex2-solucao"][a:b] for a, b in marcados)
    assert "np.concatenate(list(blocos), axis=-1)" in texto and "np.stack([A[:, h * tam:(h + 1) * tam]" in texto
    # nenhuma nota mudou; só a coluna similaridade
    assert [(r.scores, r.total, r.status, r.reasons, r.em_revisao) for r in rows] == antes
    marcadas = {r.student: r.similaridade for r in rows}
    assert marcadas["lia"] == f"similaridade.html#{par.anchor} (100 % com otavio)"
    assert marcadas["otavio"] == f"similaridade.html#{par.anchor} (100 % com lia)"
    assert all(v == "" for k, v in marcadas.items() if k not in ("lia", "otavio")), marcadas


def test_resposta_curta_e_obvia_igual_nao_basta_pelo_tamanho_minimo(tmp_path):
    """Dois alunos que só fizeram a máscara, com a mesma linha óbvia (que não é a da aula): 100 % do código de cada
    um é igual, mas são poucos caracteres (abaixo de MIN_SHARED). Sem o tamanho mínimo, o par seria apontado."""
    curta = {"aula02-mascara-solucao": "    return np.tri(n, dtype=bool)",
             "aula02-softmax-solucao": "    e = np.exp(z - z.max(axis=axis, keepdims=True))\n"
                                       "    return e / e.sum(axis=axis, keepdims=True)"}
    rows = [_entrega(tmp_path, "caio", curta), _entrega(tmp_path, "duda", curta)]
    assert similarity.compare_class(rows, tmp_path / "saida").pairs == []
    assert [r.similaridade for r in rows] == ["", ""]
    (par,) = similarity.compare_class(rows, tmp_path / "saida", min_shared=0).pairs
    assert par.fraction_a == par.fraction_b == 1.0 and par.shared < similarity.MIN_SHARED


def test_o_codigo_dado_e_a_resposta_de_referencia_nao_contam():
    g = catalog()[(resp.AULA, resp.NOTEBOOK)]
    modelos = similarity.templates_of(g.source)
    nb = json.loads(nbformat.writes(resp.notebook({"aula02-mascara-solucao": resp.MASCARA_OBVIA})))
    # as respostas ainda no esboço ficam de fora; da máscara, só a linha do aluno (sem a assinatura nem comentários)
    assert similarity.answer_code(nb, modelos) == {"aula02-mascara-solucao": resp.MASCARA_OBVIA.strip()}
    # a linha da aula (a resposta de referência, pública em solutions/) não deixa nada para comparar
    (fp,) = similarity._fingerprints([{"m": resp.MASCARA_OBVIA}], ["x"], similarity.given_hashes(g.source))
    assert fp["m"].token_coverage == 0
    # uma célula que o aluno marcou como resposta, com um grade_id que não é do notebook, não conta
    nb["cells"].append({"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade_id": "outra"}},
                        "source": "x = 1\n", "outputs": [], "execution_count": None})
    assert "outra" not in similarity.answer_code(nb, modelos)


def test_trechos_que_muitos_alunos_escreveram_nao_contam():
    """Numa turma de 40, o mesmo trecho em 12 alunos (mais que common_limit(40) = 4) é comum: não aponta ninguém;
    o mesmo trecho em só dois alunos aponta o par."""
    assert [similarity.common_limit(n) for n in (2, 30, 40, 100, 500)] == [3, 3, 4, 10, 10]
    proprio = resp.LIA["aula02-ex2-solucao"]
    outros = [{"aula02-ex2-solucao": v} for v in resp.MULTICABECA] * 7  # 28 alunos, de 4 maneiras (7 em cada)
    docs = [{"aula02-ex2-solucao": proprio}] * 12 + outros
    alunos = [f"a{k:02d}" for k in range(len(docs))]
    assert similarity.compare_documents(docs, alunos) == []
    docs = [{"aula02-ex2-solucao": proprio}] * 2 + [{"aula02-ex2-solucao": v} for v in resp.MULTICABECA]
    assert [(i, j) for i, j, *_ in similarity.compare_documents(docs, alunos[:6])] == [(0, 1)]


def test_duas_copias_do_mesmo_aluno_nunca_sao_um_par(tmp_path):
    rows = [_entrega(tmp_path, "sofia", resp.LIA), _entrega(tmp_path, "tales", resp.honesto(2)),
            _entrega(tmp_path, "sofia", resp.LIA, "versao-final/04-exercicios.ipynb")]
    assert similarity.compare_class(rows, tmp_path / "saida").pairs == []


def test_a_pagina_escapa_nomes_e_codigo_hostis(tmp_path):
    hostil = '<script>alert("nome")</script>'
    codigo = dict(resp.LIA)
    codigo["aula02-ex3-solucao"] = resp.LIA["aula02-ex3-solucao"].replace(
        '"tamanhos diferentes"', '"</pre><script>alert(1)</script><img src=x onerror=alert(2)>"')
    rows = [_entrega(tmp_path, hostil, codigo, arquivo="<b>x</b>.ipynb"), _entrega(tmp_path, "otavio", resp.OTAVIO)]
    rep = similarity.compare_class(rows, tmp_path / "saida")
    assert len(rep.pairs) == 1
    pagina = (tmp_path / "saida" / "similaridade.html").read_text(encoding="utf-8")
    assert "<script" not in pagina.lower() and "<img" not in pagina.lower() and "<b>x</b>" not in pagina
    assert html.escape(hostil) in pagina and "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in pagina
    assert "default-src 'none'" in pagina  # e a política de segurança bloqueia o resto
    assert str(tmp_path) not in pagina and "/tmp" not in pagina and str(ROOT) not in pagina
    assert f'id="{rep.pairs[0].anchor}"' in pagina and pagina.count("<mark>") >= 5


def test_a_coluna_similaridade_em_notas_csv_aponta_o_par(tmp_path):
    rows = _turma(tmp_path)
    rows.append(_entrega(tmp_path, "=HYPERLINK(1)", resp.OTAVIO))  # um terceiro com o mesmo código, de nome hostil
    similarity.compare_class(rows, tmp_path / "saida")
    write_outputs(rows, catalog(), tmp_path / "saida")
    with open(tmp_path / "saida" / "notas.csv", encoding="utf-8") as f:
        tabela = {r["aluno"]: r for r in csv.DictReader(f)}
    assert list(tabela["lia"])[-9:-8] == ["similaridade"]  # antes de total: as oito colunas do fim continuam
    par = r"similaridade\.html#par-\d \(100 % com (otavio|=HYPERLINK\(1\))\)"
    assert re.fullmatch(f"{par} \\| {par}", tabela["lia"]["similaridade"]), tabela["lia"]["similaridade"]
    assert tabela["ana"]["similaridade"] == tabela["bia"]["similaridade"] == ""
    assert tabela["'=HYPERLINK(1)"]["similaridade"].startswith("similaridade.html#par-")
    paginas = re.findall(r"similaridade\.html#(par-\d+)", " ".join(r["similaridade"] for r in tabela.values()))
    texto = (tmp_path / "saida" / "similaridade.html").read_text(encoding="utf-8")
    assert paginas and all(f'id="{a}"' in texto for a in paginas)


def test_sem_pares_a_pagina_diz_e_o_limiar_esta_nela(tmp_path):
    rows = [_entrega(tmp_path, f"h{k}", resp.honesto(k)) for k in range(4)]
    rep = similarity.compare_class(rows, tmp_path / "saida")
    texto = rep.page.read_text(encoding="utf-8")
    assert rep.pairs == [] and "Nenhum par acima do limiar." in texto and "Nenhuma nota mudou" in texto
    assert f"{round(100 * similarity.THRESHOLD)} %" in texto and f"{similarity.MIN_SHARED} caracteres" in texto
    assert rep.compared == {(resp.AULA, resp.NOTEBOOK): 4}


def test_limiar_e_tamanho_minimo_documentados_no_guia_do_professor():
    guia = " ".join((ROOT / "docs" / "professor.md").read_text(encoding="utf-8").split())
    assert f"{round(100 * similarity.THRESHOLD)} %" in guia and f"{similarity.MIN_SHARED} caracteres" in guia
    assert "similaridade.html" in guia and "copydetect" in guia
    imagens = re.findall(r"!\[[^\]]+\]\((similaridade[^)]*\.png)\)", guia)
    assert imagens and all((ROOT / "docs" / i).exists() for i in imagens)


def test_com_o_codigo_guardado_sem_os_notebooks_o_resultado_e_o_mesmo(tmp_path):
    """A junção das partes de uma turma dividida não tem os notebooks corrigidos (ficam em cada máquina): com o código
    guardado por answers_of em cada parte, compare_class dá os mesmos pares."""
    rows = _turma(tmp_path)
    guardado = json.loads(json.dumps(similarity.answers_of(rows)))  # como num parte.json
    com = similarity.compare_class(rows, tmp_path / "com")
    for r in rows:
        r.autograded, r.similaridade = None, ""
    sem = similarity.compare_class(rows, tmp_path / "sem", respostas=guardado)
    assert [(p.a, p.b, p.shared) for p in sem.pairs] == [(p.a, p.b, p.shared) for p in com.pairs] != []
    assert (tmp_path / "sem" / "similaridade.html").read_bytes() == (tmp_path / "com" / PAGINA).read_bytes()


@pytest.mark.parametrize("n", [2, 4, 5])  # com 4 e 5 partes, lia e otavio ficam em partes diferentes
def test_a_turma_em_partes_juntada_da_a_mesma_pagina(tmp_path, n):
    """Cada parte guarda o código das suas respostas no parte.json (grade_class com parte=); a junção compara os
    alunos de todas as partes: a mesma página e a mesma coluna de uma correção única, com a cópia achada mesmo quando
    lia e otavio caem em partes diferentes."""
    from correcao import partes

    rows = _turma(tmp_path / "turma")
    rows.sort(key=lambda r: (r.student, r.assignment, r.notebook, r.arquivo))
    unica = similarity.compare_class(rows, tmp_path / "unica")
    respostas = similarity.answers_of(rows)
    alunos = sorted({r.student for r in rows})
    pastas = []
    for k in range(1, n + 1):
        meus = [(r, a) for r, a in zip(rows, respostas) if partes.part_of(r.student, n) == k]
        pasta = tmp_path / f"parte-{k}"
        partes.write_part(pasta, (k, n), [r for r, _ in meus], [], "turma", alunos, {}, None,
                          respostas=[a for _, a in meus])
        pastas.append(pasta)
    if n > 2:
        assert partes.part_of("lia", n) != partes.part_of("otavio", n)
    juntas, _ = partes.join_parts(pastas[::-1], tmp_path / "juntas", log=lambda *_: None)
    assert (tmp_path / "juntas" / PAGINA).read_bytes() == (tmp_path / "unica" / PAGINA).read_bytes()
    nomes = {frozenset((rows[par.a].student, rows[par.b].student)) for par in unica.pairs}
    assert frozenset(("lia", "otavio")) in nomes, nomes
    assert [r.similaridade for r in juntas] == [r.similaridade for r in rows]


def test_uma_resposta_enorme_e_cortada(tmp_path):
    enorme = dict(resp.LIA)
    enorme["aula02-ex3-solucao"] += "\n" + "    x = [1, 2, 3]\n" * 100_000  # 1,7 MB numa célula
    rows = [_entrega(tmp_path, "lia", enorme), _entrega(tmp_path, "otavio", resp.OTAVIO)]
    (codigo, _) = similarity.answers_of(rows)
    assert len(codigo["aula02-ex3-solucao"]) == similarity.MAX_ANSWER_CHARS
    assert len(similarity.compare_class(rows, tmp_path / "saida").pairs) == 1


def test_entrada_errada_da_erro_claro():
    with pytest.raises(ValueError, match=r"students: esperado um aluno por entrega \(2\), recebidos 1"):
        similarity.compare_documents([{}, {}], ["a"])
    with pytest.raises(ValueError, match=r"threshold: esperado um número em \(0, 1\], recebido 1.5"):
        similarity.compare_documents([], [], threshold=1.5)
    with pytest.raises(ValueError, match="min_shared: esperado um inteiro ≥ 0, recebido -1"):
        similarity.compare_class([], Path("."), min_shared=-1)
    with pytest.raises(ValueError, match=r"respostas: esperada uma por linha \(0\), recebidas 1"):
        similarity.compare_class([], Path("."), respostas=[{}])


def test_o_resultado_nao_depende_do_hash_do_python():
    """O hash() do Python muda a cada processo (PYTHONHASHSEED): noutro processo, com outra semente, o resultado é o
    mesmo deste (com a janela 1, todos os trechos entram, seja qual for o valor do hash de cada um)."""
    alunos = [resp.honesto(k) for k in range(4)] + [resp.LIA, resp.OTAVIO]
    aqui = json.loads(json.dumps(similarity.compare_documents(alunos, [str(k) for k in range(6)], threshold=0.05,
                                                               min_shared=10)))
    semente = str(int(os.environ["PYTHONHASHSEED"]) + 1) if os.environ.get("PYTHONHASHSEED", "random") != "random" \
        else "0"  # este processo sorteou a dele; 0 desliga o sorteio (outro hash, com certeza)
    programa = ("import json, sys; sys.path.insert(0, 'tests'); from similaridade import respostas as r; "
                "from correcao.similarity import compare_documents; "
                "alunos = [r.honesto(k) for k in range(4)] + [r.LIA, r.OTAVIO]; "
                "print(json.dumps(compare_documents(alunos, [str(k) for k in range(6)], threshold=0.05, "
                "min_shared=10)))")
    feito = subprocess.run([sys.executable, "-c", programa], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": semente, "MPLBACKEND": "Agg"})
    assert hash("similaridade") != int(subprocess.run(
        [sys.executable, "-c", "print(hash('similaridade'))"], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": semente}).stdout)  # o outro processo tem mesmo outro hash
    assert json.loads(feito.stdout) == aqui and len(aqui) >= 3


_LENTO = [pytest.mark.lento,
          pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")]


def _lento(fn):
    for marca in reversed(_LENTO):
        fn = marca(fn)
    return fn


@_lento
def test_de_ponta_a_ponta_num_download_do_moodle(tmp_path):
    """Um download do Moodle ("Baixar todas as tarefas") corrigido nas caixas, com os notebooks guardados: o par que
    copiou é apontado, pelos nomes do Moodle, os honestos não, e nenhuma nota de notas.csv muda."""
    import zipfile

    from correcao.moodle import grade_moodle

    alunos = {"Ana Souza_101": ANA, "Bia Lima_202": BIA, "Lia Reis_303": resp.LIA, "Otávio Dias_404": resp.OTAVIO}
    zipado = tmp_path / "Curso-Tarefa 2-77.zip"
    with zipfile.ZipFile(zipado, "w") as z:
        for nome, respostas in alunos.items():
            z.writestr(f"{nome}_assignsubmission_file_/04-exercicios.ipynb", nbformat.writes(resp.notebook(respostas)))
    saida = tmp_path / "saida"
    rows = grade_moodle([zipado], saida, cell_timeout=30, log=lambda *_: None, guardar_notebooks=True)
    notas = (saida / "notas.csv").read_bytes()
    assert {r.student: r.status for r in rows} == dict.fromkeys(alunos, "ok"), [(r.student, r.reasons) for r in rows]
    rep = similarity.compare_class(rows, saida)
    assert [{rows[p.a].student, rows[p.b].student} for p in rep.pairs] == [{"Lia Reis_303", "Otávio Dias_404"}]
    assert (saida / "notas.csv").read_bytes() == notas
    assert {r.student for r in rows if r.similaridade} == {"Lia Reis_303", "Otávio Dias_404"}
    pagina = (saida / "similaridade.html").read_text(encoding="utf-8")
    assert "Otávio Dias_404" in pagina and str(tmp_path) not in pagina


@_lento
def test_na_turma_de_exemplo_corrigida(tmp_path_factory, tmp_path):
    """A turma de exemplo (corrigida uma vez na sessão, com os notebooks guardados): cada aluno é comparado só com os
    do mesmo notebook, as cópias de solutions/ (a resposta de referência, que é pública) não viram pares entre si, e
    as notas não mudam."""
    import turma_corrigida

    dados = turma_corrigida.turma_corrigida(tmp_path_factory)
    rows = dados["rows"]
    antes = [(r.student, r.total, r.status, dict(r.scores)) for r in rows]
    rep = similarity.compare_class(rows, tmp_path)
    assert [(r.student, r.total, r.status, dict(r.scores)) for r in rows] == antes
    assert rep.compared[("aula-01-self-attention", "03-exercicios")] >= 20
    nomes = {frozenset((rows[p.a].student, rows[p.b].student)) for p in rep.pairs}
    assert frozenset(("ana-correta", "caio-copia-da-solucao")) not in nomes
    assert all((rows[p.a].assignment, rows[p.a].notebook) == (rows[p.b].assignment, rows[p.b].notebook)
               and rows[p.a].student != rows[p.b].student for p in rep.pairs)
    pagina = (tmp_path / "similaridade.html").read_text(encoding="utf-8")
    assert "<script" not in pagina.lower() and "/tmp" not in pagina


def test_sem_o_copydetect_a_correcao_escreve_as_notas_e_diz_por_que(tmp_path, monkeypatch):
    """A página é um relatório à parte: sem o copydetect (um ambiente antigo, o do hub sem ele), a correção não
    perde as notas; o log diz o que falta e como instalar."""
    from correcao import motor

    def sem_pacote(*_a, **_k):
        raise ModuleNotFoundError("No module named 'copydetect'", name="copydetect")

    monkeypatch.setattr(motor, "compare_class", sem_pacote)
    log: list[str] = []
    motor._similarity(_turma(tmp_path), tmp_path / "saida", log.append)
    assert len(log) == 1 and "copydetect" in log[0] and "pip install" in log[0] and "as notas não mudam" in log[0]
    assert not (tmp_path / "saida" / PAGINA).exists()
