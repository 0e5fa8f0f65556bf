"""Cópia de ``solutions/`` resposta a resposta: cada resposta de código igual à solução vai para revisão, com os
pontos das verificações dela retidos, sejam quais forem as outras respostas da entrega.

Antes, só a entrega com mais da metade das respostas iguais às soluções ia para revisão: uma aluna que copiava os
dois exercícios de código e escrevia as três respostas de texto com as próprias palavras tirava 4 de 4, ``ok``,
sem motivo nenhum. Nada aqui executa um notebook: a correção de verdade dá os pontos; aqui, a linha começa com os
pontos todos e recebe a cópia como a correção faria (:func:`correcao.scoring.withhold_solution_copies`)."""

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from correcao import catalogo, entregas, motor, nomes_antigos, relatorio, saneamento, scoring

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402

EVERYTHING = catalogo.catalog()
A1, A2 = "modulo-06/aula-01-self-attention", "modulo-06/aula-02-auto-atencao-do-zero"
G1 = EVERYTHING[("aula-01-self-attention", "03-exercicios")]
G2 = EVERYTHING[("aula-02-auto-atencao-do-zero", "04-exercicios")]
SOL1 = json.loads(G1.source.read_text(encoding="utf-8"))
SOL2 = json.loads(G2.source.read_text(encoding="utf-8"))


def _da_solucao(sol: dict, gid: str) -> str:
    return "".join(gerar.cell(sol, gid)["source"])


def _honesta(aula: str = A1, nome: str = "03-exercicios") -> dict:
    """A entrega de uma aluna honesta: as respostas de ``solutions/`` escritas de outra forma (e o texto com as
    palavras dela)."""
    return gerar.clean(gerar.solution(aula, nome))


def _com(nb: dict, sol: dict, *gids: str) -> dict:
    """``nb`` com as respostas ``gids`` copiadas de ``sol`` como estão."""
    for gid in gids:
        gerar.fill(nb, gid, _da_solucao(sol, gid))
    return nb


def _corrigida(nb: dict, g: catalogo.Gradable, tmp_path: Path, aluno: str = "ana") -> tuple[dict, Path]:
    """Planeja a entrega de ``aluno`` como a correção da turma, dá a ela os pontos todos (como se todas as
    verificações passassem), aplica a cópia e grava ``notas.csv`` e o retorno. Devolve (linha de notas.csv,
    pasta de saída)."""
    pasta = tmp_path / "turma" / aluno
    pasta.mkdir(parents=True)
    (pasta / f"{g.notebook}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    ent = entregas.read_submissions(tmp_path / "turma", tmp_path / "ler")
    plano, linhas, _ = motor.plan_class(ent, EVERYTHING, tmp_path / "saneados")
    assert not linhas and len(plano) == 1
    e = plano[0]
    row = relatorio.Row(e.student, g.assignment, g.notebook, arquivo=e.file, maximum=g.max_auto,
                        scores={gid: g.cells[gid][1] for gid in g.checks}, total=g.max_auto)
    scoring.withhold_solution_copies(row, *e.copied_answers)
    saida = tmp_path / "saida"
    relatorio.write_outputs([row], EVERYTHING, saida)
    with open(saida / "notas.csv", encoding="utf-8", newline="") as f:
        (linha,) = list(csv.DictReader(f))
    return linha, saida


def test_dois_exercicios_de_codigo_copiados_e_texto_proprio_vao_para_revisao(tmp_path):
    """O ataque: os dois exercícios de código copiados de solutions/ como estão, as três respostas de texto com as
    palavras da aluna. Antes: 4 de 4, ok, motivo vazio."""
    nb = _com(_honesta(), SOL1, "aula01-ex3-solucao", "aula01-ex4-solucao")
    assert saneamento.copied_from_solutions(nb, G1) == (
        ["aula01-ex3-solucao", "aula01-ex4-solucao"], ["aula01-ex3-verificacao", "aula01-ex4-verificacao"])
    linha, saida = _corrigida(nb, G1, tmp_path)
    assert (linha["situacao"], linha["total"], linha["pontos_em_revisao"]) == ("revisar", "0", "4")
    assert "respostas iguais às de solutions/ (aula01-ex3-solucao, aula01-ex4-solucao)" in linha["motivo"]
    assert "aula01-ex3-verificacao: 2, aula01-ex4-verificacao: 2" in linha["motivo"]
    pagina = (saida / linha["retorno"]).read_text(encoding="utf-8")
    assert "aula01-ex3-solucao, aula01-ex4-solucao" in pagina and "Em revisão pelo professor: 4 ponto(s)" in pagina


def test_um_exercicio_copiado_retem_so_os_pontos_dele(tmp_path):
    nb = _com(_honesta(), SOL1, "aula01-ex4-solucao")
    assert saneamento.copied_from_solutions(nb, G1) == (["aula01-ex4-solucao"], ["aula01-ex4-verificacao"])
    linha, _ = _corrigida(nb, G1, tmp_path)
    assert (linha["situacao"], linha["pontos_em_revisao"]) == ("revisar", "2")
    assert (linha["aula01-ex3-verificacao"], linha["aula01-ex4-verificacao"], linha["total"]) == ("2", "0", "2")
    assert "respostas iguais às de solutions/ (aula01-ex4-solucao)" in linha["motivo"]
    assert "aula01-ex3" not in linha["motivo"]


def test_respostas_honestas_parecidas_com_a_solucao_nao_sao_copia(tmp_path):
    """O mesmo cálculo com outro código (``resultado = ...; return resultado``), em todos os notebooks do curso."""
    for g in EVERYTHING.values():
        rel = g.source.relative_to(ROOT / "solutions")
        nb = _honesta(str(rel.parent), rel.stem)
        assert saneamento.copied_from_solutions(nb, g) == ([], []), rel
    linha, _ = _corrigida(_honesta(), G1, tmp_path)
    assert (linha["situacao"], linha["total"], linha["motivo"]) == ("ok", "4", "")


def test_copia_reformatada_e_com_outros_comentarios_continua_copia():
    nb = _honesta()
    fonte = _da_solucao(SOL1, "aula01-ex4-solucao")
    outra = "\n".join(ln.split("#")[0].rstrip().replace("    ", "\t") + ("  # fui eu que fiz" if ln.strip() else "")
                      for ln in fonte.splitlines() if "SOLUTION" not in ln)
    outra = '"""Minha atenção."""\n\n\n' + outra.replace("X @ W_q", "X@W_q")
    assert outra != fonte
    gerar.fill(nb, "aula01-ex4-solucao", outra)
    assert saneamento.copied_from_solutions(nb, G1) == (["aula01-ex4-solucao"], ["aula01-ex4-verificacao"])


def test_copia_com_instrucoes_que_nao_fazem_nada_continua_copia():
    """Achado ao atacar a correção: a solução com um ``pass`` antes do ``return`` saía 4/4 ``ok``, sem motivo."""
    fonte = _da_solucao(SOL1, "aula01-ex4-solucao")
    linhas = fonte.splitlines()
    k = next(i for i, ln in enumerate(linhas) if ln.strip().startswith("return"))
    recuo = linhas[k][: len(linhas[k]) - len(linhas[k].lstrip())]
    for enfeite in ("pass", "...", "0", "X", "np.pi", "'uma frase solta'"):
        nb = _honesta()
        gerar.fill(nb, "aula01-ex4-solucao", "\n".join([*linhas[:k], recuo + enfeite, *linhas[k:]]))
        assert saneamento.copied_from_solutions(nb, G1) == (["aula01-ex4-solucao"], ["aula01-ex4-verificacao"]), enfeite
    # uma instrução que faz algo muda a resposta: não é a mesma impressão digital (a similaridade compara o resto)
    com_print = fonte.replace("return", "print(1)\n" + recuo + "return", 1)
    assert catalogo.answer_fingerprint(fonte) != catalogo.answer_fingerprint(com_print)


def test_resposta_curta_sozinha_pode_coincidir_acompanhada_nao():
    """A parte do aluno com uma instrução só (``return np.tril(np.ones((n, n), dtype=bool))``, a máscara causal
    como todo mundo a escreve) pode coincidir por acaso: sozinha, não é cópia; junto de uma resposta longa copiada,
    é."""
    assert "aula02-mascara-solucao" in saneamento._short_answers(G2.source)
    assert "aula02-ex1-solucao" not in saneamento._short_answers(G2.source)
    nb = _com(_honesta(A2, "04-exercicios"), SOL2, "aula02-mascara-solucao")
    assert saneamento.copied_from_solutions(nb, G2) == ([], [])
    nb = _com(nb, SOL2, "aula02-ex1-solucao")
    respostas, verificacoes = saneamento.copied_from_solutions(nb, G2)
    assert respostas == ["aula02-mascara-solucao", "aula02-ex1-solucao"]
    checagens = catalogo.checks_of_answers(G2.source)
    assert verificacoes == [*checagens["aula02-mascara-solucao"], *checagens["aula02-ex1-solucao"]]
    # o exercício 3 da Aula 1 (uma atribuição só) também
    assert saneamento.copied_from_solutions(_com(_honesta(), SOL1, "aula01-ex3-solucao"), G1) == ([], [])


def test_texto_igual_so_conta_com_outras_copias():
    """Uma resposta de texto igual à solução, com o resto próprio: não é cópia (uma frase curta coincide); junto de
    um exercício de código copiado, ela aparece no motivo (sem pontos: o texto é corrigido pelo professor)."""
    nb = _com(_honesta(), SOL1, "aula01-ex1-resposta")
    assert saneamento.copied_from_solutions(nb, G1) == ([], [])
    nb = _com(nb, SOL1, "aula01-ex4-solucao")
    assert saneamento.copied_from_solutions(nb, G1) == (["aula01-ex1-resposta", "aula01-ex4-solucao"],
                                                        ["aula01-ex4-verificacao"])
    # o texto todo copiado (3 de 5 respostas iguais) e o código próprio: a regra da entrega inteira
    nb = _com(_honesta(), SOL1, "aula01-ex1-resposta", "aula01-ex2-resposta", "aula01-ex5-resposta")
    assert saneamento.copied_from_solutions(nb, G1) == (
        ["aula01-ex1-resposta", "aula01-ex2-resposta", "aula01-ex5-resposta"], [])


def test_o_notebook_de_solutions_como_esta_continua_copia():
    respostas, verificacoes = saneamento.copied_from_solutions(SOL1, G1)
    assert respostas == ["aula01-ex1-resposta", "aula01-ex2-resposta", "aula01-ex3-solucao", "aula01-ex4-solucao",
                         "aula01-ex5-resposta"]
    assert verificacoes == G1.checks


def test_um_exercicio_copiado_da_solucao_de_uma_versao_anterior():
    v = next(v for v in nomes_antigos.old_versions()
             if (v.aula, v.notebook) == ("aula-01-self-attention", "03-exercicios") and v.mapa_ids)
    antigo = next(a for a, n in v.mapa_ids.items() if n == "aula01-ex4-solucao")
    try:
        sol = json.loads(subprocess.run(["git", "show", f"{v.commits[1]}:solutions/{v.caminho}"], cwd=ROOT,
                                        capture_output=True, text=True, check=True).stdout)
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("clone raso: sem as soluções antigas")
    fonte = _da_solucao(sol, antigo)
    assert catalogo.answer_fingerprint(fonte) != catalogo.solution_fingerprints(G1.source)["aula01-ex4-solucao"]
    nb = copy.deepcopy(_honesta())
    gerar.fill(nb, "aula01-ex4-solucao", fonte)
    assert saneamento.copied_from_solutions(nb, G1) == (["aula01-ex4-solucao"], ["aula01-ex4-verificacao"])
