"""O curso no navegador de ponta a ponta, sem internet (``make test-lento``; precisa do npm e do Chromium).

Constrói o site (``make site``), serve-o sob um subcaminho em 127.0.0.1 e abre num Chromium em que toda
requisição para fora de 127.0.0.1 é abortada: o teste falha se alguma for tentada. Como um aluno: abre a página
inicial, vê a faixa de progresso enquanto o Python carrega (e a interface em português), roda de cima a baixo um
notebook de cada aula (a Aula 2 pelo ``03-uso``, o do PyTorch, que mostra as saídas guardadas com a nota),
escreve uma resposta errada e depois a certa num exercício das Aulas 1, 4 e 5 (❌ e depois ✅), mexe em dois
controles do explorador, recarrega a página e acha a edição, baixa o notebook e o passa no ``validar``. Nenhuma
saída pode dizer que o matplotlib refez o cache de fontes (ele vem pronto do site). Os outros testes abrem cada
notebook das aulas e comparam o texto de cada saída guardada na tela com o do arquivo; abrem o ``03-exercicios``
das Aulas 1 e 4 lado a lado (um kernel para cada), rodam uma célula antes de o kernel existir (ela espera com
[*]), conferem a faixa com o download, o texto impresso e o F5; e rodam cada solução de ``solutions/`` de cima a
baixo (toda verificação ✅; no projeto da Aula 5, o PyTorch com a saída guardada e a nota).
As capturas de tela ficam em ``build/navegador/site-*.png``.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import time

import pytest
import test_checks_aula04_corpus as aula04_corpus
from exigir import exigir, pular_fora_da_ci

from .lab import CHROMIUM, ROOT
from .site import Lite, offline, servir, site_construido

pytestmark = [
    pytest.mark.lento,
    pular_fora_da_ci(not os.access(CHROMIUM, os.X_OK),
                     f"Chromium não encontrado em {CHROMIUM} (o .ci/run instala o pacote `chromium` do Debian)"),
]
playwright = exigir("playwright.sync_api")

SHOTS = ROOT / "build" / "navegador"
AULA1 = "modulo-06/aula-01-self-attention"
AULA2 = "modulo-06/aula-02-auto-atencao-do-zero"
AULA3 = "modulo-06/aula-03-atencao-num-transformer-real"
AULA4 = "modulo-06/aula-04-bloco-transformer"
AULA5 = "modulo-06/aula-05-treinando-a-atencao"
# as respostas do corpus da Aula 4, com o nome do exercício, digitadas no notebook do navegador
PE_TROCADA, PE_CERTA = (inspect.getsource(f).replace(f"def {f.__name__}(", "def positional_encoding(")
                        for f in (aula04_corpus.pe_seno_cosseno_trocados, aula04_corpus.pe_certo))
SOFTMAX_SEM_SOMA = """def my_softmax_backward(A, dA):
    return A * dA  # esqueceu o termo da soma: errado de propósito
"""
SOFTMAX_CERTA = """def my_softmax_backward(A, dA):
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))
"""
ERRADA = """def similar_embeddings():
    tokens, E = atencao.gato_felino()
    E[3] = [0.9, 0.1, 0.0, 0.0]  # alto parecido com gato: errado de propósito
    return E
"""
CERTA = """def similar_embeddings():
    tokens, E = atencao.gato_felino()
    E[3] = [0.0, 0.0, 0.8, 0.2]  # resposta do aluno no navegador: alto parecido com pulou
    return E
"""


@pytest.fixture(scope="module")
def site():
    SHOTS.mkdir(parents=True, exist_ok=True)
    return site_construido()


def _sem_erros(lite: Lite, nome: str) -> None:
    erros = lite.erros()
    assert not erros, f"{nome}: saídas de erro no navegador:\n" + "\n".join(erros)
    # o cache de fontes do matplotlib vem pronto do site: o navegador não o refaz na primeira figura
    assert "building the font cache" not in lite.textos(), f"{nome}: o matplotlib refez o cache de fontes"


def _errada_e_certa(lite: Lite, page, grade_id: str, errada: str, certa: str, foto: str) -> None:
    """Roda o notebook aberto (⏳ na verificação), depois a resposta ``errada`` (❌) e a ``certa`` (✅)."""
    lite.rodar_tudo(timeout=600_000)
    _sem_erros(lite, grade_id)
    i = lite.indice(grade_id)
    assert lite.texto(i + 1).startswith("⏳"), lite.texto(i + 1)
    lite.trocar_e_rodar(i, errada, i + 1)
    assert lite.texto(i + 1).startswith("❌"), lite.texto(i + 1)
    lite.trocar_e_rodar(i, certa, i + 1)
    assert lite.texto(i + 1).startswith("✅"), lite.texto(i + 1)
    page.screenshot(path=SHOTS / foto)


def test_curso_no_navegador_sem_internet(site, tmp_path):  # noqa: PLR0915 — o roteiro de um aluno no site, em ordem
    with servir(site) as base, offline() as (page, fora, ctx):
        lite = Lite(page, base)
        page.goto(base)
        page.wait_for_selector("#abrir")
        texto = page.inner_text("body")
        for trecho in ("armazenamento deste navegador", "Download", "validar", "Recomeçar"):
            assert trecho in texto, f"a página inicial deveria falar de {trecho!r}"
        page.screenshot(path=SHOTS / "site-1-inicio.png", full_page=True)

        # a primeira visita: a faixa do curso mostra o progresso enquanto o Python carrega, e some quando fica pronto
        inicio = time.monotonic()
        page.goto(f"{base}lab/index.html?path={AULA1}/03-exercicios.ipynb")
        page.wait_for_selector("#curso-carregando", state="visible", timeout=120_000)
        assert "Carregando o Python no seu navegador" in page.inner_text("#curso-carregando")
        page.screenshot(path=SHOTS / "site-1b-carregando.png")
        lite.esperar_kernel(inicio)
        page.wait_for_selector("#curso-carregando", state="hidden", timeout=10_000)
        assert page.locator(".jp-FileBrowser").get_by_text("Nome", exact=True).count(), "a interface em português"

        # Aula 1: o exercício 3 errado (❌) e certo (✅)
        lite.rodar_tudo()
        _sem_erros(lite, "Aula 1, 03-exercicios")
        i = lite.indice("aula01-ex3-solucao")
        assert lite.texto(i + 1).startswith("⏳"), lite.texto(i + 1)
        lite.trocar_e_rodar(i, ERRADA, i + 1)
        assert lite.texto(i + 1).startswith("❌"), lite.texto(i + 1)
        page.screenshot(path=SHOTS / "site-2-errada.png")
        lite.trocar_e_rodar(i, CERTA, i + 1)
        assert lite.texto(i + 1).startswith("✅"), lite.texto(i + 1)
        page.screenshot(path=SHOTS / "site-3-certa.png")
        lite.executar("docmanager:save")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)

        # recarregar: a edição continua lá (armazenamento do navegador)
        lite.abrir(f"{AULA1}/03-exercicios.ipynb")
        assert "resposta do aluno no navegador" in lite.celulas()[i]["fonte"]

        # baixar o notebook e passá-lo no validar, sem mudar nada nele
        with page.expect_download(timeout=60_000) as baixado:
            lite.executar("docmanager:download")
        arquivo = tmp_path / "03-exercicios.ipynb"
        baixado.value.save_as(arquivo)
        baixado_nb = json.loads(arquivo.read_text(encoding="utf-8"))
        fontes = ["".join(c["source"]) for c in baixado_nb["cells"]]
        assert any("resposta do aluno no navegador" in f for f in fontes), "o notebook baixado sem a edição"
        # o texto que o navegador imprimiu e gravou é o do kernel local (sem as vírgulas de antes), célula a célula
        local = _esperadas(_site_py().juntar_linhas(json.loads(
            (ROOT / "notebooks" / AULA1 / "03-exercicios.ipynb").read_text(encoding="utf-8"))))
        mudadas = {baixado_nb["cells"][i]["id"], baixado_nb["cells"][i + 1]["id"]}
        no_navegador = _esperadas(_site_py().juntar_linhas(baixado_nb))
        comparadas = [k for k in local if k not in mudadas and any(local[k])]
        assert len(comparadas) >= 4
        for k in comparadas:  # os textos (uma figura a mais ou a menos não é texto impresso)
            textos = [t for t in no_navegador[k] if t is not None]
            assert textos == [t for t in local[k] if t is not None], f"célula {k}: {no_navegador[k]} != {local[k]}"
        validar = subprocess.run([sys.executable, str(ROOT / "scripts" / "validar.py"), str(arquivo)], cwd=ROOT,
                                 capture_output=True, text=True, timeout=600)
        assert validar.returncode in (0, 1), validar.stdout + validar.stderr
        linhas = [linha for linha in validar.stdout.splitlines() if "Exercício 3" in linha]
        assert linhas and all("✅" in linha for linha in linhas), validar.stdout

        # recomeçar: apagar o notebook do armazenamento do navegador traz de volta o original do site
        caminho = f"{AULA1}/03-exercicios.ipynb"
        original = page.evaluate(
            """async p => { const c = window.jupyterapp.serviceManager.contents;
                          await c.delete(p); const m = await c.get(p, {content: true});
                          return m.content.cells.map(x => Array.isArray(x.source) ? x.source.join('') : x.source); }""",
            caminho)
        assert not any("resposta do aluno no navegador" in f for f in original)
        assert any("raise NotImplementedError" in f for f in original)

        # Aula 1, o explorador: dois controles mudam o mapa de calor
        lite.abrir(f"{AULA1}/04-projeto.ipynb")
        lite.rodar_tudo()
        _sem_erros(lite, "Aula 1, 04-projeto")
        page.wait_for_selector(".atx table.heat", state="attached", timeout=60_000)
        # fora da tela, a célula fica oculta (o JupyterLab só desenha o que está à vista): rola até ela
        page.evaluate("() => { const p = window.jupyterapp.shell.currentWidget.content;"
                      " p.scrollToItem(p.widgets.findIndex(c => c.node.querySelector('.atx'))); }")
        page.wait_for_selector(".atx table.heat", timeout=60_000)
        page.screenshot(path=SHOTS / "site-4-explorador.png")
        antes = page.eval_on_selector(".atx", "a => a.innerHTML")
        page.locator(".widget-checkbox", has_text="máscara causal").locator("input").check()
        page.wait_for_function("b => document.querySelector('.atx').innerHTML !== b", arg=antes, timeout=60_000)
        bloqueadas = page.eval_on_selector(".atx table.heat", "t => t.querySelectorAll('td.blocked').length")
        assert bloqueadas > 0, "a máscara causal deveria bloquear o triângulo superior"
        antes = page.eval_on_selector(".atx", "a => a.innerHTML")
        caixa = page.locator(".widget-dropdown", has=page.locator("label", has_text="Consulta:")).locator("select")
        opcao = caixa.locator("option").nth(1).inner_text()
        caixa.select_option(label=opcao)
        page.wait_for_function("b => document.querySelector('.atx').innerHTML !== b", arg=antes, timeout=60_000)
        token = opcao.split(":", 1)[-1].strip()  # "1:\xa0gato" -> "gato"
        assert f"“{token}” olha para" in page.inner_text(".atx .bars")
        page.screenshot(path=SHOTS / "site-5-explorador-mexido.png")

        # Aula 2, 03-uso: sem PyTorch, cada célula mostra a saída guardada com a nota, sem erro
        lite.abrir(f"{AULA2}/03-uso.ipynb")
        lite.rodar_tudo()
        _sem_erros(lite, "Aula 2, 03-uso")
        codigo = [j for j, c in enumerate(lite.celulas())
                  if c["tipo"] == "code" and "torch" in c["fonte"] and "sem_pytorch()" not in c["fonte"]]
        assert codigo and all("NO NAVEGADOR" in lite.texto(j) for j in codigo)
        assert any(len(lite.texto(j)) > 200 for j in codigo), "as saídas guardadas deveriam aparecer"
        page.evaluate("j => window.jupyterapp.shell.currentWidget.content.scrollToItem(j)", codigo[1])
        page.wait_for_timeout(500)
        page.screenshot(path=SHOTS / "site-6-aula2-uso.png")

        # Aula 3: o modelo de verdade, servido pelo site, lido pelo codificador NumPy do curso
        lite.abrir(f"{AULA3}/02-codigo.ipynb")
        lite.rodar_tudo(timeout=600_000)
        _sem_erros(lite, "Aula 3, 02-codigo")
        assert "BertEncoder" in "".join(lite.texto(j) for j in range(len(lite.celulas())))
        page.screenshot(path=SHOTS / "site-7-aula3.png")

        # Aula 4, 02-codigo: só as células do PyTorch mostram a saída guardada; o resto roda, inclusive o
        # explorador, e a caixa «somar posições (PE)» muda o mapa de calor
        lite.abrir(f"{AULA4}/02-codigo.ipynb")
        lite.rodar_tudo(timeout=600_000)
        _sem_erros(lite, "Aula 4, 02-codigo")
        celulas = lite.celulas()
        guardadas = [j for j, c in enumerate(celulas) if "NO NAVEGADOR" in lite.texto(j)]
        assert guardadas and all("torch" in celulas[j]["fonte"] for j in guardadas), guardadas
        vivas = [j for j, c in enumerate(celulas) if c["tipo"] == "code" and j not in guardadas]
        assert len(vivas) > 2 * len(guardadas) and all(celulas[j]["contagem"] for j in vivas)
        page.evaluate("() => { const p = window.jupyterapp.shell.currentWidget.content;"
                      " p.scrollToItem(p.widgets.findIndex(c => c.node.querySelector('.atx'))); }")
        page.wait_for_selector(".atx table.heat", timeout=60_000)
        assert "com posições (PE)" in page.inner_text(".atx")
        antes = page.eval_on_selector(".atx", "a => a.innerHTML")
        page.locator(".widget-checkbox", has_text="somar posições (PE)").locator("input").uncheck()
        page.wait_for_function("b => document.querySelector('.atx').innerHTML !== b", arg=antes, timeout=60_000)
        assert "com posições (PE)" not in page.inner_text(".atx")
        page.screenshot(path=SHOTS / "site-8-aula4-posicoes.png")

        # Aulas 4 e 5: os exercícios de cima a baixo (⏳), e um deles errado (❌) e certo (✅)
        lite.abrir(f"{AULA4}/03-exercicios.ipynb")
        _errada_e_certa(lite, page, "aula04-ex1-solucao", PE_TROCADA, PE_CERTA, "site-9-aula4.png")
        lite.abrir(f"{AULA5}/03-exercicios.ipynb")
        _errada_e_certa(lite, page, "aula05-ex1-solucao", SOFTMAX_SEM_SOMA, SOFTMAX_CERTA, "site-10-aula5.png")

    assert not fora, "o site tentou buscar fora de 127.0.0.1:\n" + "\n".join(sorted(set(fora)))


def _site_py():
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_construcao", ROOT / "scripts" / "site.py")
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo


def _esperadas(nb: dict) -> dict[str, list[str | None]]:
    """Por célula de código (id): o texto salvo de cada saída como o JupyterLab a guarda (fluxos seguidos de mesmo
    nome juntados); ``None`` para uma saída que não é só texto (figura, HTML, erro)."""
    esperadas = {}
    for celula in nb["cells"]:
        if celula["cell_type"] != "code":
            continue
        saidas = []
        for saida in celula.get("outputs", []):
            texto = None
            if saida["output_type"] == "stream":
                texto = saida["text"]
                if saidas and isinstance(saidas[-1], tuple) and saidas[-1][0] == saida["name"]:
                    saidas[-1] = (saida["name"], saidas[-1][1] + texto)
                    continue
                saidas.append((saida["name"], texto))
                continue
            if set(saida.get("data", {})) == {"text/plain"}:
                texto = saida["data"]["text/plain"]
            saidas.append(texto)
        esperadas[celula["id"]] = [s[1] if isinstance(s, tuple) else s for s in saidas]
    return esperadas


def test_saidas_guardadas_aparecem_como_no_local(site):
    """Cada notebook das Aulas 1 a 5 (e a página inicial) aberto no site, sem rodar: toda saída de texto guardada
    aparece na tela com o mesmo texto do arquivo (nbformat guarda o texto como lista de linhas; servida assim, o
    JupyterLite punha uma vírgula no começo de cada linha)."""
    construcao = _site_py()
    notebooks = sorted((ROOT / "notebooks").rglob("*.ipynb"))
    aulas = {p.parent.name for p in notebooks if p.parent.name.startswith("aula-")}
    assert len(aulas) >= 5
    comparadas = 0
    with servir(site) as base, offline(viewport=(1280, 800)) as (page, fora, _):
        lite = Lite(page, base)
        lite.abrir("00-comece-aqui.ipynb")
        for caminho in notebooks:
            relativo = caminho.relative_to(ROOT / "notebooks").as_posix()
            lite.fechar_todos()
            lite.abrir_aqui(relativo)
            exibidas = lite.saidas_exibidas()
            esperadas = _esperadas(construcao.juntar_linhas(json.loads(caminho.read_text(encoding="utf-8"))))
            for id_, textos in esperadas.items():
                assert id_ in exibidas, f"{relativo}: a célula {id_} não aparece"
                assert len(exibidas[id_]) == len(textos), f"{relativo}, célula {id_}: {exibidas[id_]}"
                for salvo, exibido in zip(textos, exibidas[id_]):
                    if salvo is not None:
                        assert exibido.rstrip("\n") == salvo.rstrip("\n"), (
                            f"{relativo}, célula {id_}:\nsalvo:\n{salvo}\nna tela:\n{exibido}")
                        comparadas += 1
            if relativo == f"{AULA1}/03-exercicios.ipynb":
                page.screenshot(path=SHOTS / "site-11-saidas-guardadas.png")
    assert comparadas > 100, comparadas
    assert not fora, "o site tentou buscar fora de 127.0.0.1:\n" + "\n".join(sorted(set(fora)))


def test_dois_notebooks_de_mesmo_nome_celula_antes_do_kernel_e_recarregar(site):
    """O 03-exercicios das Aulas 1 e 4 abertos lado a lado: cada um com o seu kernel, e uma verificação roda em
    cada. Uma célula rodada antes de o kernel existir mostra [*] e roda quando ele fica pronto; a faixa mostra o
    download; o texto impresso sai como no kernel local; recarregar (F5) volta ao notebook aberto."""
    um, quatro = f"{AULA1}/03-exercicios.ipynb", f"{AULA4}/03-exercicios.ipynb"
    with servir(site) as base, offline(viewport=(1280, 800)) as (page, fora, _):
        lite = Lite(page, base)
        inicio = time.monotonic()
        page.goto(f"{base}lab/index.html?path={um}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.content"
                               " && window.jupyterapp.shell.currentWidget.content.widgets.length > 3", timeout=240_000)
        i = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets"
                          ".findIndex(c => c.model.type === 'code')")
        sem_kernel = page.evaluate("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                                   " return !(s.session && s.session.kernel); }")
        page.evaluate("j => { const p = window.jupyterapp.shell.currentWidget.content; p.activeCellIndex = j;"
                      " window.jupyterapp.commands.execute('notebook:run-cell'); }", i)
        if sem_kernel:  # a célula espera na fila, com [*], em vez de sumir
            page.wait_for_timeout(500)
            assert "*" in page.evaluate("j => window.jupyterapp.shell.currentWidget.content.widgets[j]"
                                        ".promptNode.textContent", i)
        faixas = set()
        while not page.evaluate("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                                " return !!(s.session && s.session.kernel && s.session.kernel.status === 'idle'); }"):
            if page.locator("#curso-carregando").is_visible():
                faixas.add(page.inner_text("#curso-carregando"))
            assert time.monotonic() - inicio < 300, "o kernel não ficou pronto em 5 min"
            page.wait_for_timeout(500)
        tempo_kernel = time.monotonic() - inicio
        assert any("baixados" in f and " MB" in f for f in faixas), faixas
        lite.esperar_ocioso()
        assert lite.celulas()[i]["contagem"] == 1 and lite.texto(i).strip(), "a célula rodada antes do kernel"
        lite.trocar_e_rodar(i, 'print("x\\ny", "zz")\nprint("fim", end="")')
        assert lite.texto(i) == "x\ny zz\nfim"

        lite.abrir_aqui(quatro, "split-right")
        lite.esperar_kernel(time.monotonic())
        kernels = lite.kernels()
        assert len(kernels) == 2 and len({k["kernel"] for k in kernels}) == 2, kernels
        for caminho, grade_id in ((quatro, "aula04-ex1-solucao"), (um, "aula01-ex3-solucao")):
            lite.ativar(caminho)
            j = lite.indice(grade_id)
            for k in range(j + 2):  # de cima até a verificação
                page.evaluate("k => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = k; }", k)
                lite.executar("notebook:run-cell")
            lite.esperar_ocioso()
            assert lite.texto(j + 1).startswith("⏳"), f"{caminho}: {lite.texto(j + 1)}"
            assert not lite.erros(), lite.erros()
        assert all(k["estado"] == "idle" for k in lite.kernels()), lite.kernels()
        page.screenshot(path=SHOTS / "site-12-lado-a-lado.png")

        page.reload()
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.context", timeout=240_000)
        assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path") in (um, quatro)
    print(f"kernel pronto em {tempo_kernel:.1f} s (primeira visita)")
    assert not fora, "o site tentou buscar fora de 127.0.0.1:\n" + "\n".join(sorted(set(fora)))


def test_notebooks_resolvidos_rodam_no_navegador(site):
    """Cada solução (``solutions/``, servida pelo site) roda de cima a baixo no navegador sem erro, e toda
    verificação diz ✅; no projeto da Aula 5, a comparação com o PyTorch mostra a saída guardada com a nota."""
    from atencao import navegador

    solucoes = sorted((ROOT / "solutions").rglob("*.ipynb"))
    with servir(site) as base, offline(viewport=(1280, 800)) as (page, fora, _):
        lite = Lite(page, base)
        lite.abrir("00-comece-aqui.ipynb")
        for caminho in solucoes:
            relativo = "solutions/" + caminho.relative_to(ROOT / "solutions").as_posix()
            lite.fechar_todos()
            lite.abrir_aqui(relativo)
            lite.esperar_kernel(time.monotonic())
            lite.rodar_tudo(timeout=900_000)
            _sem_erros(lite, relativo)
            celulas = lite.celulas()
            verificacoes = [j for j, c in enumerate(celulas) if (c["id"] or "").endswith("verificacao")]
            assert verificacoes, relativo
            for j in verificacoes:
                assert lite.texto(j).startswith("✅"), f"{relativo}, {celulas[j]['id']}: {lite.texto(j)[:300]}"
            if "aula-05" in relativo and relativo.endswith("04-projeto.ipynb"):
                j = next(j for j, c in enumerate(celulas) if "train_torch(" in c["fonte"])
                assert lite.texto(j).startswith(navegador.NOTA_SOLUCAO), lite.texto(j)[:300]
                page.evaluate("j => window.jupyterapp.shell.currentWidget.content.scrollToItem(j)", j)
                page.wait_for_timeout(500)
                page.screenshot(path=SHOTS / "site-13-aula5-projeto-pytorch.png")
    assert not fora, "o site tentou buscar fora de 127.0.0.1:\n" + "\n".join(sorted(set(fora)))
