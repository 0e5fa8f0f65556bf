"""Correção da turma com o nbgrader (make corrigir), cada entrega isolada numa caixa do bubblewrap.

A turma de exemplo (alunos fictícios, tests/turma-exemplo.zip) cobre a entrega correta, a parcial, a
vazia, as quebradas, as trapaças (trabalho errado que tenta enganar a verificação) e os danos (código
que tenta ler as respostas, escrever fora da sua pasta, estragar a cópia de um colega, deixar um
processo rodando, esgotar a memória ou criar processos sem fim); cada uma tem a sua linha esperada.
"""

import csv
import os
import re
import sys
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import isolamento

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import turma_corrigida  # noqa: E402
from turma_exemplo import esperado, gerar  # noqa: E402

# lento (make test-lento): corrige a turma de exemplo inteira na caixa
pytestmark = [pytest.mark.lento,
              pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")]

TURMA = ROOT / "tests" / "turma-exemplo.zip"

NB = esperado.NB
EXPECTED = esperado.EXPECTED


_digest, _repo_digest = turma_corrigida.digest, turma_corrigida.repo_digest


@pytest.fixture(scope="module")
def correcao(tmp_path_factory):
    """A turma corrigida uma vez na sessão (compartilhada com test_validar e test_correcao_extra)."""
    return turma_corrigida.turma_corrigida(tmp_path_factory)


def test_turma_commitada_igual_ao_gerador(tmp_path):
    fresh = gerar.write(tmp_path / "turma.zip")
    assert _digest(fresh) == _digest(TURMA), "rode `make turma-exemplo` e commite"


def test_notas_csv_tem_a_linha_esperada_para_cada_entrega(correcao):
    got = {(r["aluno"], r["arquivo"]): r for r in correcao["table"]}
    assert len(got) == len(correcao["table"]), "duas linhas com o mesmo aluno e arquivo"
    assert set(got) == set(EXPECTED)
    for key, (aula, notebook, status, total, maximum, reason) in EXPECTED.items():
        row = got[key]
        aceitos = total if isinstance(total, tuple) else (total,)
        assert (row["aula"], row["notebook"], row["situacao"], row["maximo"]) == (
            aula, notebook, status, maximum) and row["total"] in aceitos, (key, row)
        assert reason in row["motivo"], (key, row["motivo"])
        if not reason:
            assert row["motivo"] == "", (key, row["motivo"])  # nada de notas a mais (ex.: renomeado)


def test_colunas_de_pontos_por_exercicio(correcao):
    header = list(correcao["table"][0])
    assert header[:4] == ["aluno", "aula", "notebook", "arquivo"]
    assert header[-8:] == ["total", "maximo", "pontos_em_revisao", "correcao_manual_pendente", "situacao",
                           "isolamento", "retorno", "motivo"]
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
    assert all(p in ("notas.csv", "nao-corrigidos.csv", "verificacoes.csv", "relatorio-turma.html",
                     "relatorio-turma.csv", "similaridade.html") or p.startswith(("retorno", "notebooks-corrigidos"))
               for p in correcao["outputs"]), correcao["outputs"]
    assert {"relatorio-turma.html", "similaridade.html"} <= set(correcao["outputs"]), correcao["outputs"]
    assert correcao["sobreviventes"] == []
    assert correcao["cgroups"] == []
    cmdlines = []
    for proc in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdlines.append(proc.read_bytes())
        except OSError:
            continue
    assert not any(b"fantasma-da-turma" in c for c in cmdlines)


def test_toda_linha_corrigida_diz_que_foi_isolada(correcao):
    executed = [r for r in correcao["table"] if r["situacao"] not in ("arquivo_invalido", "desconhecido",
                                                                        "sem_notebooks", "fora_de_pasta")]
    assert executed and all(r["isolamento"].startswith("bwrap+") for r in executed)
    if Path("/sys/fs/cgroup/memory/cgroup.procs").exists() and os.geteuid() == 0:  # como na máquina da CI
        assert all(r["isolamento"] in ("bwrap+cgroup2", "bwrap+cgroup1") for r in executed)


def test_nenhuma_trapaca_ganha_ponto(correcao):
    rows = [r for r in correcao["table"] if r["aluno"].startswith("trapaca-")]
    assert len(rows) >= 6
    for r in rows:
        assert r["total"] == "0", r
        assert r["situacao"] in ("revisar", "zero"), r


def _pagina(correcao, aluno, arquivo) -> str:
    row = next(r for r in correcao["table"] if (r["aluno"], r["arquivo"]) == (aluno, arquivo))
    return (correcao["saida"] / row["retorno"]).read_text(encoding="utf-8")


def test_retorno_html_em_portugues_para_cada_linha(correcao):
    saida = correcao["saida"]
    paginas = [r["retorno"] for r in correcao["table"]]
    assert len(set(paginas)) == len(paginas), "uma página de retorno sobrescreveria outra"
    for row in correcao["table"]:
        page = saida / row["retorno"]
        text = page.read_text(encoding="utf-8")
        assert 'lang="pt-BR"' in text and f"Nota automática: {row['total']} de {row['maximo']}" in text
        assert page.stat().st_size < 2_000_000  # a saída enorme foi truncada
    assert (saida / "retorno" / "bruno-parcial" / "aula-01-self-attention-03-exercicios.html").exists()
    xss = _pagina(correcao, "trapaca-imprime-aprovado", NB)
    assert "Minha resposta" in xss and "&lt;script&gt;alert" in xss  # mostrado como texto
    assert "<script>alert" not in xss and "<iframe" not in xss
    assert not re.search(r'src="https?:', xss), "imagem da internet no retorno (seria carregada ao abrir)"
    assert "Content-Security-Policy" in xss and "default-src 'none'" in xss
    assert "/work/" not in xss and "No description has been provided" not in xss
    assert not re.search(r"checks/\w+\.py:", xss)  # nenhum traceback das verificações
    bruno = _pagina(correcao, "bruno-parcial", NB)
    assert "faltou dividir as pontuações por sqrt(d_k)" in bruno  # a dica da verificação chega ao aluno


def test_cada_retorno_mostra_o_seu_notebook(correcao):
    """Mesmo nome em duas aulas e duas cópias do mesmo notebook: cada página com o seu."""
    aula1 = _pagina(correcao, "tiago-duas-aulas", "aula-01/03-exercicios.ipynb")
    aula3 = _pagina(correcao, "tiago-duas-aulas", "aula-03/03-exercicios.ipynb")
    assert "similar_embeddings" in aula1 and "similar_embeddings" not in aula3
    assert "aula03-" in aula3 and "aula03-" not in aula1
    rascunho = _pagina(correcao, "sofia-duas-copias", NB)
    final = _pagina(correcao, "sofia-duas-copias", "versao-final/03-exercicios.ipynb")
    assert "Nota automática: 2 de 4" in rascunho and "Nota automática: 4 de 4" in final
    assert "versao-final/03-exercicios.ipynb" in final
    sergio = next(r for r in correcao["table"] if r["aluno"].startswith("sérgio"))
    assert sergio["retorno"] == "retorno/sérgio _o brabo_ [A] __$(whoami);'/aula-01-self-attention-03-exercicios.html"


def test_retorno_mostra_a_figura_do_explorador(correcao):
    projeto = _pagina(correcao, "ana-correta", "04-projeto.ipynb")
    depois = projeto[projeto.index('<span class="n">explorar</span>'):][:5000]
    assert re.search(r'<img [^>]*src="data:image/png;base64', depois), "a célula do explorador ficou sem figura"
    assert "widget-view" not in projeto and "<script" not in projeto


def test_arquivos_nao_corrigidos_sao_listados(correcao):
    with open(correcao["saida"] / "nao-corrigidos.csv", encoding="utf-8") as f:
        listados = {(r["aluno"], r["arquivo"]) for r in csv.DictReader(f)}
    assert {("nina-sem-notebooks", "leia-me.txt"), ("quico-desconhecido", "anotacoes.txt")} <= listados
    assert not any("DS_Store" in a or a.startswith("._") or "checkpoint" in a for _, a in listados)


def test_linha_em_revisao_guarda_os_pontos_fora_do_total(correcao):
    """Uma linha "revisar" não soma os pontos em questão: eles ficam em pontos_em_revisao, com o motivo."""
    for r in correcao["table"]:
        key = (r["aluno"], r["arquivo"])
        esperado_ = esperado.EM_REVISAO.get(key, "")
        aceitos = esperado_ if isinstance(esperado_, tuple) else (esperado_,)
        if r["aluno"].startswith("trapaca-"):  # quanto o kernel (enganado) daria depende da trapaça
            assert r["total"] == "0" and (r["pontos_em_revisao"] == "" or r["situacao"] == "revisar"), r
            continue
        assert r["pontos_em_revisao"] in aceitos, (key, r["pontos_em_revisao"], r["motivo"])
        if r["pontos_em_revisao"]:
            assert r["situacao"] == "revisar" and "pontos_em_revisao" in r["motivo"], r
    caio = next(r for r in correcao["table"] if r["aluno"] == "caio-copia-da-solucao")
    assert (caio["aula01-ex3-verificacao"], caio["aula01-ex4-verificacao"], caio["total"]) == ("0", "0", "0")
    assert "Em revisão pelo professor: 4 ponto(s)" in _pagina(correcao, "caio-copia-da-solucao", NB)


def _sem_imagens(texto: str) -> str:
    return re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]+", "", texto)


def test_nenhuma_pagina_de_retorno_mostra_caminhos_da_maquina(correcao):
    """Nem o repositório, nem o venv do corretor, nem a pasta pessoal, nem as temporárias (o SystemExit do IPython
    avisa com o caminho do interactiveshell.py do venv)."""
    import os
    import tempfile

    proibidos = {str(ROOT), sys.prefix, sys.base_prefix, os.path.expanduser("~") + "/", tempfile.gettempdir() + "/",
                 "/tmp/", "site-packages", ".venv/"}
    proibidos |= {os.path.realpath(p) for p in (str(ROOT), sys.prefix)}
    paginas = sorted((correcao["saida"] / "retorno").rglob("*.html"))
    assert len(paginas) == len(correcao["table"])
    for pagina in paginas:
        texto = _sem_imagens(pagina.read_text(encoding="utf-8"))
        achados = sorted(p for p in proibidos if p in texto)
        assert not achados, (pagina.relative_to(correcao["saida"]), achados)
    notas = (correcao["saida"] / "notas.csv").read_text(encoding="utf-8")
    assert not sorted(p for p in proibidos if p in notas)
    sil = _pagina(correcao, "sil-systemexit", NB)
    assert "SystemExit" in sil and "terminei o exercício 3" in sil
