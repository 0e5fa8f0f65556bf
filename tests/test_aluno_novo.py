"""O que um aluno novo encontra antes de tudo: o relatório legível sem fonte de emoji, o cabeçalho que diz o
caso que falhou, a dica certa do ex. 3 da Aula 1, o NameError de uma célula fora de ordem em português, as
soluções marcadas e somente leitura, e as primeiras frases que ele digita (emoji, "Olá, mundo!")."""

from __future__ import annotations

import asyncio
import re

import nbformat
import numpy as np
import pytest

import atencao
from atencao.checks import aula01, framework

SIMBOLOS = ("✅", "❌", "⏳", "⏸️")


def _ex3(mudar):
    def embeddings():
        _, E = atencao.gato_felino()
        mudar(E)
        return E
    return embeddings


def _ex4_certo(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = atencao.softmax(Q @ K.T / np.sqrt(K.shape[1]))
    return A @ V, A


def _ex4_erra_com_um_token(X, W_q, W_k, W_v):
    saida, A = _ex4_certo(X, W_q, W_k, W_v)
    return (saida * 2, A) if X.shape[0] == 1 else (saida, A)  # só o caso de borda (um token) sai errado


def _ex4_sem_escala(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = atencao.softmax(Q @ K.T)
    return A @ V, A


def _nao_feito(*args):
    raise NotImplementedError


@pytest.fixture(scope="module")
def saidas():
    """A saída de cada desfecho: ok, falhou, não feito e as três mensagens de uma demonstração."""
    import contextlib
    import io

    out = {}
    for nome, chamada in (("ok", lambda: aula01.exercicio_4(_ex4_certo)),
                          ("falhou", lambda: aula01.exercicio_4(_ex4_sem_escala)),
                          ("nao_feito", lambda: aula01.exercicio_4(_nao_feito)),
                          ("demo_falhou", lambda: aula01.passou(_ex4_sem_escala)),
                          ("demo_nao_feito", lambda: aula01.passou(_nao_feito)),
                          ("demo_sem_verificar", lambda: aula01.passou(lambda: None))):
        with contextlib.redirect_stdout(io.StringIO()) as texto:
            chamada()
        out[nome] = texto.getvalue()
    return out


# ---------- a. cada símbolo com uma palavra ----------
def test_cada_simbolo_do_relatorio_vem_com_uma_palavra(saidas):
    palavras = {"✅": "OK", "❌": "FALHOU", "⏳": "A FAZER", "⏸️": "ESPERANDO"}
    vistos = set()
    for texto in saidas.values():
        for linha in texto.splitlines():
            corpo = linha.strip()
            for simbolo in SIMBOLOS:
                if corpo.startswith(simbolo):
                    vistos.add(simbolo)
                    assert corpo.startswith(f"{simbolo} {palavras[simbolo]} — "), linha
    assert vistos == set(SIMBOLOS)


def test_sem_fonte_de_emoji_os_desfechos_continuam_distintos(saidas):
    """Sem uma fonte de emoji, os símbolos viram o mesmo quadrado vazio: a primeira linha de cada desfecho
    ainda se distingue, e cada critério diz se passou."""

    def quadrado(texto):
        return re.sub("|".join(SIMBOLOS), "□", texto)

    primeiras = {nome: quadrado(texto.splitlines()[0]).split(" — ")[0] for nome, texto in saidas.items()}
    assert primeiras["ok"] == "□ OK" and primeiras["falhou"] == "□ FALHOU" and primeiras["nao_feito"] == "□ A FAZER"
    criterios = [linha for linha in quadrado(saidas["falhou"]).splitlines()[1:] if linha.startswith("  □")]
    assert criterios and all(c.startswith(("  □ OK — ", "  □ FALHOU — ")) for c in criterios), criterios


# ---------- c. o cabeçalho diz qual caso falhou ----------
def _cabecalho(out: str) -> str:
    """A primeira frase do relatório (até a linha do primeiro critério), numa linha só."""
    return " ".join(re.split(r"\n  (?=\S)", out)[0].split())


def test_cabecalho_diz_o_caso_que_falhou(capsys):
    assert not aula01.exercicio_4(_ex4_erra_com_um_token)
    out = capsys.readouterr().out
    primeira = _cabecalho(out)
    assert primeira.endswith("1 critério falhou no caso 3 de 5."), primeira  # o caso 3 tem um token só
    assert "primeiro caso com erro" not in out
    assert "corrija-o e rode de novo para ver os próximos" in " ".join(out.split())  # faltam os casos 4 e 5


def test_excecao_num_caso_diz_o_caso_sem_falar_em_erro_de_outros(capsys):
    def levanta(X, W_q, W_k, W_v):
        raise ValueError("algo deu errado")

    assert not aula01.exercicio_4(levanta)
    primeira = _cabecalho(capsys.readouterr().out)
    assert primeira.endswith("1 critério falhou no caso 1 de 5."), primeira


def test_verificacao_sem_casos_nao_fala_em_caso(capsys):
    assert not aula01.exercicio_3(_ex3(lambda E: E.__setitem__(3, [1.0, 0.0, 3.0, 0.0])))
    out = capsys.readouterr().out
    primeira = out.splitlines()[0]
    assert primeira.endswith(": 1 critério falhou."), primeira
    assert "caso" not in primeira and "para no primeiro caso" not in out


def test_checker_casos_conta_e_numera():
    from atencao.checks.checker import StopCheck

    c = framework.Checker("t")
    vistos = []
    with pytest.raises(StopCheck):  # o caso que falhou vai até o fim; o próximo não começa
        for item in c.cases(x for x in "abc"):  # um gerador: lido inteiro antes, para saber quantos são
            vistos.append((c.case, c.n_cases, item))
            if item == "b":
                c.expect(False, "falhou")
            else:
                c.expect(True, "passou")
    assert vistos == [(1, 3, "a"), (2, 3, "b")]
    assert c.failed_case == 2 and c.header(False).endswith("1 critério falhou no caso 2 de 3.")


# ---------- d. ex. 3 da Aula 1: mudar só alto (ou só pulou) para perto de gato ----------
@pytest.mark.parametrize("linha, nome", [(3, "alto"), (2, "pulou")])
def test_ex3_mudar_so_um_para_perto_de_gato_tem_a_dica_certa(capsys, linha, nome):
    outro = 5 - linha  # pulou (2) <-> alto (3)

    def mudar(E):
        E[linha] = [1.0, 0.0, 0.0, 0.0]
        E[linha, outro] = 3.0  # parecido com o outro (cosseno ≥ 0,8), mas com a coordenada de gato

    assert not aula01.exercicio_3(_ex3(mudar))
    out = " ".join(capsys.readouterr().out.split())
    assert "só pede para mudar pulou e alto" not in out, out
    assert f"o vetor de {nome} ficou parecido com o de gato" in out and f"gato·{nome} = 1,00" in out, out
    assert "duas primeiras coordenadas" in out


def test_ex3_mexer_em_gato_tem_a_dica_de_so_mudar_pulou_e_alto(capsys):
    assert not aula01.exercicio_3(_ex3(lambda E: E.__imul__(2)))
    out = " ".join(capsys.readouterr().out.split())
    assert "pede para mudar só pulou e alto" in out and "ficou parecido com o de gato" not in out, out


# ---------- b. NameError de uma célula rodada fora de ordem ----------
def test_dica_do_name_error_diz_a_celula_que_falta():
    from atencao.dicas import dica_name_error

    assert "célula de importações" in dica_name_error(NameError("name 'aula01' is not defined"))
    dica = dica_name_error(NameError("name 'minha_mascara' is not defined"))
    assert "`def minha_mascara`" in dica and "erro de sintaxe" in dica
    assert "erro de digitação" in dica_name_error(NameError("name 'Q' is not defined"), "minha_funcao")
    assert dica_name_error(ValueError("x")) is None


def _rodar_no_kernel(celulas: list[str], env: dict) -> list[dict]:
    """Roda as células num kernel novo do ambiente do curso (como o JupyterLab o inicia) e devolve as saídas."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in celulas])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=120).execute(env=env)
    return [o for c in nb.cells for o in c.outputs]


@pytest.fixture(scope="module")
def saidas_do_kernel():
    import os

    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    celulas = [
        "aula01.exercicio_3(similar_embeddings)",  # depois de reiniciar o kernel, antes da de importações
        "import atencao\nfrom atencao.checks import aula02",
        "def minha_mascara(n:\n    return None",  # a célula da função com erro de sintaxe
        "M = minha_mascara(4) if aula02.passou(minha_mascara) else atencao.causal_mask(4)",  # a demonstração
    ]
    return (_rodar_no_kernel(celulas, env),
            _rodar_no_kernel(celulas[:1], {**env, "NBGRADER_EXECUTION": "autograde"}))


def test_kernel_do_curso_explica_o_name_error_em_portugues(saidas_do_kernel):
    saidas, _ = saidas_do_kernel
    erros = [o for o in saidas if o.output_type == "error"]
    assert [e.ename for e in erros] == ["NameError", "SyntaxError", "NameError"]
    antes_da_importacao, demonstracao = erros[0], erros[2]
    assert antes_da_importacao.evalue == "name 'aula01' is not defined"  # o erro original continua
    assert "célula de importações" in antes_da_importacao.traceback[-1]
    assert "`def minha_mascara`" in demonstracao.traceback[-1] and "erro de sintaxe" in demonstracao.traceback[-1]


def test_na_correcao_o_kernel_nao_acrescenta_dicas(saidas_do_kernel):
    _, na_correcao = saidas_do_kernel
    (erro,) = [o for o in na_correcao if o.output_type == "error"]
    assert erro.ename == "NameError" and not any("Dica" in linha for linha in erro.traceback)


# ---------- f. as soluções: faixa SOLUÇÃO, título e somente leitura ----------
@pytest.fixture
def gerenciador(tmp_path, monkeypatch):
    from atencao.solucoes import EDITAVEIS, SolucoesSomenteLeitura

    monkeypatch.delenv(EDITAVEIS, raising=False)
    for pasta in ("solutions/aula", "notebooks/aula"):
        (tmp_path / pasta).mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Aula 1 — Exercícios\n## 03"),
                                             nbformat.v4.new_code_cell("x = 1")])
        nbformat.write(nb, tmp_path / pasta / "03-exercicios.ipynb")
    return SolucoesSomenteLeitura(root_dir=str(tmp_path))


def test_solucao_abre_marcada_e_somente_leitura(gerenciador, tmp_path):
    from tornado.web import HTTPError

    antes = (tmp_path / "solutions/aula/03-exercicios.ipynb").read_bytes()
    modelo = asyncio.run(gerenciador.get("solutions/aula/03-exercicios.ipynb"))
    assert modelo["writable"] is False
    faixa, titulo, codigo = modelo["content"].cells
    assert faixa.source.startswith("> # SOLUÇÃO (somente leitura)")
    assert "trabalho/aula/03-exercicios.ipynb" in faixa.source  # onde ficam as respostas do aluno
    assert titulo.source.startswith("# SOLUÇÃO · Aula 1 — Exercícios")
    assert all(c.metadata["editable"] is False for c in (faixa, titulo, codigo))
    with pytest.raises(HTTPError) as erro:
        asyncio.run(gerenciador.save({"type": "notebook", "format": "json", "content": modelo["content"]},
                                     "solutions/aula/03-exercicios.ipynb"))
    assert erro.value.status_code == 403 and "somente leitura" in erro.value.log_message
    assert (tmp_path / "solutions/aula/03-exercicios.ipynb").read_bytes() == antes  # o arquivo não mudou


def test_notebook_do_aluno_abre_como_sempre(gerenciador):
    modelo = asyncio.run(gerenciador.get("notebooks/aula/03-exercicios.ipynb"))
    assert modelo["writable"] is True and modelo["content"].cells[0].source.startswith("# Aula 1")
    asyncio.run(gerenciador.save({"type": "notebook", "format": "json", "content": modelo["content"]},
                                 "notebooks/aula/03-exercicios.ipynb"))


def test_quem_mantem_o_curso_edita_as_solucoes_com_a_variavel(gerenciador, monkeypatch):
    from atencao.solucoes import EDITAVEIS

    monkeypatch.setenv(EDITAVEIS, "1")
    modelo = asyncio.run(gerenciador.get("solutions/aula/03-exercicios.ipynb"))
    assert modelo["writable"] is True and modelo["content"].cells[0].source.startswith("# Aula 1")


def test_todo_link_terminou_aponta_uma_solucao_que_existe():
    """Os links "Terminou?" dos notebooks abrem os arquivos que o gerenciador marca como solução."""
    from pathlib import Path

    from atencao.solucoes import e_solucao

    raiz = Path(__file__).resolve().parents[1]
    links = 0
    for nb_path in sorted((raiz / "notebooks").rglob("*.ipynb")):
        for cell in nbformat.read(nb_path, as_version=4).cells:
            for alvo in re.findall(r"\]\(([^)]*solutions/[^)]*\.ipynb)\)", cell.source):
                destino = (nb_path.parent / alvo).resolve()
                assert destino.exists(), (nb_path, alvo)
                assert e_solucao(destino.relative_to(raiz).as_posix()), alvo
                links += 1
    assert links >= 3


# ---------- g. as primeiras frases: emoji e "Olá, mundo!" ----------
@pytest.mark.parametrize("frase, tokens", [
    ("Oi 😀!", ["oi", "😀"]),
    ("Olá, mundo! Tudo bem? 👍🏽", ["olá", "mundo", "tudo", "bem", "👍🏽"]),
    ("família 👨‍👩‍👧 no 🇧🇷", ["família", "👨‍👩‍👧", "no", "🇧🇷"]),
    ("eu ❤️ você", ["eu", "❤️", "você"]),
    ("O coração não esquece!", ["o", "coração", "não", "esquece"]),  # a pontuação continua de fora
])
def test_nenhum_emoji_some_da_frase(frase, tokens):
    assert atencao.tokenize(frase) == tokens


def test_explorador_mostra_o_emoji():
    from atencao.views import explorer_view

    view = explorer_view("Oi 😀 tudo bem")
    assert "😀" in view.tokens and view.weights.shape[-1] == 4


@pytest.mark.parametrize("frase", ["Olá, mundo! Tudo bem?", "Oi, tudo bem com você?", "Eu gosto de você",
                                   "Bom dia, mundo!", "O gato é muito feliz"])
def test_embed_cobre_uma_primeira_frase(frase):
    tokens, X = atencao.embed(frase)
    assert X.shape == (len(tokens), len(atencao.FEATURES)) and np.isfinite(X).all()


def test_embed_de_um_emoji_diz_como_acrescentar_o_vetor():
    with pytest.raises(KeyError, match=r"Sem vetor para \['😀'\]\. Passe os seus: embed\(frase, vectors="):
        atencao.embed("Oi 😀")
    tokens, X = atencao.embed("Oi 😀", vectors={"😀": [0, 0.5, 0, 0, 2, 0]})
    assert tokens == ["oi", "😀"] and X[1, 4] == 2
