"""Os notebooks guardados estão executados de verdade, limpos e sincronizados com as soluções.

O nbval (``make test-lento``, ``make test-minimo``, ``make test-notebooks``) compara as saídas guardadas com
uma nova execução; estes testes garantem que há saídas para comparar e que nada de específico desta máquina
foi salvo.
"""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import gerar_alunos  # noqa: E402

from correcao import catalogo  # noqa: E402
from correcao.nomes_antigos import RENAMED_FUNCTIONS  # noqa: E402

NOTEBOOKS = sorted(p for d in ("notebooks", "solutions") for p in (ROOT / d).rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOKS]
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}|<[^>]* object at 0x")
MACHINE_PATH = re.compile(r"(/root/|/tmp/|/work/|/home/[A-Za-z0-9_.-]+/|/Users/|[A-Z]:\\\\)")
# O que muda de uma máquina para outra e derruba o nbval estrito na CI de outra CPU: um número em notação
# científica com casas (o ruído de arredondamento, como ``2.4e-06``; a tolerância ``1e-5`` não tem casas) e
# um tempo ou tamanho medido (``3.2 ms``, ``41.5 MB``). scripts/outras_cpus.py (make test-cpus) prova o resto.
NOISE = re.compile(r"\b\d\.\d+e[-+]?\d+\b|\b\d+e[-+]?(?:0\d|\d{2,})\b"
                   r"|\b\d+[.,]\d+ ?(?:ms|µs|s|segundos|kB|KB|MB|MiB|GB|GiB)\b")
EMBEDDED_IMAGE = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")
LESSONS = catalogo.lessons()  # achadas nas pastas: uma aula nova entra aqui sozinha


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def _text(output) -> str:
    data = output.get("data", {})
    return "".join(output.get("text", "")) + "".join(data.get("text/plain", "")) + "".join(data.get("text/html", ""))


def test_ha_os_notebooks_de_cada_secao_e_as_solucoes():
    """Exatamente os notebooks esperados: a página inicial, as seções de cada aula e uma solução para cada
    notebook de exercícios ou projeto (um notebook perdido não passa despercebido pelo nbval), cada aula com o
    seu módulo de verificações."""
    assert LESSONS, "nenhuma aula em notebooks/modulo-*/aula-NN-*/"
    esperados = {"notebooks/00-comece-aqui.ipynb"}
    for lesson in LESSONS:
        for secao in lesson.sections:
            esperados.add(f"notebooks/modulo-06/{lesson.folder}/{secao}.ipynb")
            if "exercicios" in secao or "projeto" in secao:
                esperados.add(f"solutions/modulo-06/{lesson.folder}/{secao}.ipynb")
        assert (ROOT / "lib" / "atencao" / "checks" / f"{lesson.module}.py").exists(), lesson
        assert sorted(lesson.max_points) == [s for s in lesson.sections if "exercicios" in s or "projeto" in s]
    assert set(IDS) == esperados


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_executado_em_ordem_sem_erros(path):
    nb = _load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    cells = _code_cells(nb)
    counts = [c["execution_count"] for c in cells]
    assert None not in counts, "há células nunca executadas: rode `make executar`"
    assert counts == list(range(1, len(cells) + 1)), f"execução fora de ordem: {counts}"
    for cell in cells:
        tags = cell.get("metadata", {}).get("tags", [])
        for out in cell["outputs"]:
            if out["output_type"] == "error":
                assert "raises-exception" in tags, f"erro guardado: {out['ename']}: {out['evalue']}"
            assert out.get("name") != "stderr" or "Warning" not in _text(out), _text(out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_sem_enderecos_nem_caminhos_da_maquina(path):
    for cell in _code_cells(_load(path)):
        for out in cell["outputs"]:
            text = _text(out)
            assert not ADDRESS.search(text), text[:200]
            assert not MACHINE_PATH.search(text), text[:200]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_sem_ruido_de_ponto_flutuante_nem_tempos(path):
    """Nenhuma saída guardada imprime a diferença de arredondamento em si ou um tempo: imprima o veredito
    contra a tolerância (``≤ 1e-5? ✅``) ou arredonde ao que é estável."""
    for cell in _code_cells(_load(path)):
        for out in cell["outputs"]:
            text = EMBEDDED_IMAGE.sub("", _text(out))
            achado = NOISE.search(text)
            assert not achado, f"saída que depende da máquina: {text[max(0, achado.start() - 60):achado.end()]!r}"


def test_o_padrao_de_ruido_pega_o_que_ja_derrubou_a_ci():
    assert NOISE.search("maior diferença nas atenções (12 camadas × 12 cabeças): 2.4e-06")
    assert NOISE.search("redesenho em 3.2 ms") and NOISE.search("memória: 41.5 MB")
    assert not NOISE.search("maior diferença nas atenções (12 camadas × 12 cabeças) ≤ 1e-5? ✅")
    assert not NOISE.search("pesos: [0.659 0.242 0.099]\nsoma:  1.0") and not NOISE.search("eps=1e-5)")
    # o que o :g e o repr do Python imprimem (expoente com zero ou com dois dígitos) muda de forma com o valor
    assert NOISE.search("eps=1e-05)") and NOISE.search("≤ 1e-10: True") and NOISE.search("eps = 1e-06")


def test_alunos_sincronizados_com_solucoes():
    assert gerar_alunos.stale() == []


def test_a_correcao_le_as_celulas_de_aluno_de_notebooks_iguais_as_do_nbgrader():
    """A correção lê a versão de aluno de notebooks/ (sem o nbgrader, ~1,5 s de import por correção) enquanto a
    impressão digital da solução bate; as células são as mesmas que o nbgrader daria."""
    import nbformat

    def campos(celulas: dict) -> dict:
        return {gid: (c.cell_type, c.get("id"), c.source, c.metadata.get("nbgrader"), c.get("outputs"))
                for gid, c in celulas.items()}

    for g in catalogo.catalog().values():
        copia = catalogo.committed_student_copy(g.source)
        assert copia is not None, f"{g.source}: rode `make alunos`"
        pelo_nbgrader = catalogo.student_version(nbformat.read(g.source, as_version=4))
        por_id = {c.metadata["nbgrader"]["grade_id"]: c for c in pelo_nbgrader.cells if "nbgrader" in c.metadata}
        assert campos(catalogo.original_cells(g.source)) == campos(por_id), g.source


def test_solucao_editada_depois_do_make_alunos_volta_ao_nbgrader(tmp_path, monkeypatch):
    """Uma solução mudada sem o `make alunos` (outra impressão digital): a versão de aluno vem do nbgrader, e não do
    notebooks/ antigo."""
    g = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
    rel = g.source.relative_to(catalogo.SOLUTIONS)
    for pasta in ("solutions", "notebooks"):
        destino = tmp_path / pasta / rel
        destino.parent.mkdir(parents=True)
        destino.write_bytes((ROOT / pasta / rel).read_bytes())
    monkeypatch.setattr(catalogo, "ROOT", tmp_path)
    monkeypatch.setattr(catalogo, "SOLUTIONS", tmp_path / "solutions")
    solucao = tmp_path / "solutions" / rel
    assert catalogo.committed_student_copy.__wrapped__(solucao) is not None
    nb = json.loads(solucao.read_text(encoding="utf-8"))
    celula = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("locked"))
    celula["source"] = "".join(celula["source"]) + "\n# uma linha nova do professor"
    solucao.write_text(json.dumps(nb), encoding="utf-8")
    assert catalogo.committed_student_copy.__wrapped__(solucao) is None


def test_solucoes_passam_em_todas_as_verificacoes_e_alunos_rodam_ate_o_fim():
    pairs = list(gerar_alunos.pairs())
    assert pairs, "nenhum notebook de solução"
    for sol, stu in pairs:
        sol_out = "".join(_text(o) for c in _code_cells(_load(sol)) for o in c["outputs"])
        stu_out = "".join(_text(o) for c in _code_cells(_load(stu)) for o in c["outputs"])
        n_checks = sol_out.count("tudo certo!")
        assert n_checks >= 1 and "❌" not in sol_out and "⏳" not in sol_out, sol
        assert stu_out.count("⏳") >= n_checks, f"{stu}: as verificações deveriam dizer 'ainda não resolvido'"
        assert "### BEGIN SOLUTION" not in json.dumps(_load(stu)), stu


def test_as_secoes_de_cada_aula_sao_numeradas_sem_buracos():
    """``01-...``, ``02-...``, sem número faltando nem repetido: uma seção apagada ou renomeada aparece."""
    for lesson in LESSONS:
        numeros = [int(re.match(r"(\d+)-", s).group(1)) if re.match(r"\d+-", s) else None for s in lesson.sections]
        assert numeros == list(range(1, len(numeros) + 1)), (lesson.folder, lesson.sections)


def test_links_relativos_dos_notebooks_existem():
    """Todo link relativo de um notebook de aluno leva a um arquivo que existe, a partir da pasta dele (a cópia
    em ``trabalho/`` tem a mesma profundidade, então os mesmos links valem lá)."""
    import re

    quebrados = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        for cell in _load(path)["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for alvo in re.findall(r"\]\(([^)\s]+)\)", "".join(cell["source"])):
                if re.match(r"^[a-z]+:", alvo) or alvo.startswith("#"):
                    continue
                if not (path.parent / alvo.split("#")[0]).exists():
                    quebrados.append(f"{path.relative_to(ROOT)}: {alvo}")
    assert not quebrados, quebrados


# Nomes antigos das funções dos exercícios (em português ou misturados); a regra da casa é código em inglês.
# A lista é a da correção, que aceita entregas feitas com eles.
NOMES_ANTIGOS = tuple(RENAMED_FUNCTIONS)


def test_funcoes_dos_exercicios_com_nomes_em_ingles():
    """Nenhum nome antigo de função de exercício sobra nos notebooks, nas soluções nem na biblioteca (enunciados,
    dicas, verificações e saídas guardadas)."""
    padrao = re.compile(r"\b(" + "|".join(NOMES_ANTIGOS) + r")\b")
    arquivos = [p for d in ("notebooks", "solutions", "lib") for p in sorted((ROOT / d).rglob("*"))
                if p.suffix in {".py", ".ipynb", ".md"} and ".ipynb_checkpoints" not in p.parts]
    # a busca vê as soluções de exercícios de todas as aulas
    assert ({f"{p.parent.name}/{p.stem}" for p in arquivos if p.parts[-4] == "solutions" and "-exercicios" in p.name}
            == {f"{a.folder}/{s}" for a in LESSONS for s in a.max_points if "-exercicios" in s})
    sobras = [f"{p.relative_to(ROOT)}: {m}" for p in arquivos if p.name != "nomes_antigos.py"
              for linha in p.read_text(encoding="utf-8").splitlines() if "versão anterior do curso" not in linha
              for m in sorted(set(padrao.findall(linha)))]
    assert not sobras, sobras


def test_o_readme_e_a_pagina_inicial_listam_cada_aula():
    """A tabela de aulas do README, a página inicial e a do site acompanham as pastas: uma aula nova que não
    aparece nelas (ou uma seção que falta na tabela) faz este teste falhar."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    inicio = json.dumps(_load(ROOT / "notebooks" / "00-comece-aqui.ipynb"), ensure_ascii=False)
    site = (ROOT / "site" / "index.html").read_text(encoding="utf-8")
    for lesson in LESSONS:
        linha = next((li for li in readme.splitlines() if f"notebooks/modulo-06/{lesson.folder}/" in li), "")
        assert linha, f"README.md: falta a linha da aula {lesson.folder} na tabela de aulas"
        faltam = [s for s in lesson.sections if f"`{s}`" not in linha]
        assert not faltam, f"README.md, linha da aula {lesson.folder}: faltam as seções {faltam}"
        assert f"modulo-06/{lesson.folder}/" in inicio, f"00-comece-aqui.ipynb: falta o link da aula {lesson.folder}"
        faltam = [s for s in lesson.sections if f"path=modulo-06/{lesson.folder}/{s}.ipynb" not in site]
        assert not faltam, f"site/index.html (a página do curso no navegador), aula {lesson.folder}: faltam {faltam}"
