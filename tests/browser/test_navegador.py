"""O explorador de atenção funcionando de verdade: JupyterLab + Chromium sem tela (``make test-browser``).

Abre o notebook de projeto da Aula 1 numa cópia temporária do curso, roda todas as células, espera o
explorador aparecer e, como um aluno faria, digita outra frase, liga a máscara causal, troca de
modo, de cabeça e de consulta. Depois de cada passo confere o que o mapa de calor mostra e salva uma
captura de tela em ``build/navegador/`` para inspeção.
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings

import pytest
from exigir import exigir, pular_fora_da_ci

from .lab import CHROMIUM, ROOT, browser, jupyterlab

pytestmark = pular_fora_da_ci(
    not os.access(CHROMIUM, os.X_OK),
    f"Chromium não encontrado em {CHROMIUM} (o .ci/run instala o pacote `chromium` do Debian)")
playwright = exigir("playwright.sync_api")

NOTEBOOK = "notebooks/modulo-06/aula-01-self-attention/04-projeto.ipynb"
SHOTS = ROOT / "build" / "navegador"
TIMEOUT = 120_000  # ms


def _cells(page):
    """(i, j, peso, bloqueado) de cada célula do primeiro mapa de calor do explorador."""
    return page.eval_on_selector(
        ".atx table.heat",
        "t => [...t.querySelectorAll('td')].map(td => [+td.dataset.i, +td.dataset.j, +td.dataset.w,"
        " td.classList.contains('blocked')])")


def _row_tokens(page):
    return page.eval_on_selector(".atx table.heat", "t => [...t.querySelectorAll('th.row')].map(th => th.textContent)")


def _wait_change(page, before: str):
    page.wait_for_function("b => { const a = document.querySelector('.atx'); return a && a.innerHTML !== b; }",
                           arg=before, timeout=30_000)


def _html(page) -> str:
    return page.eval_on_selector(".atx", "a => a.innerHTML")


def _select(page, label: str, option_text: str):
    box = page.locator(".widget-dropdown", has=page.locator("label", has_text=label))
    box.locator("select").select_option(label=option_text)


def _dialog_text(page) -> str | None:
    """O texto de um diálogo do JupyterLab aberto na frente do notebook (ou None)."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return None
    return " ".join(dialog.first.inner_text().split())


def _dismiss_dialog(page, timeout: float = 90.0) -> None:
    """Fecha, um a um, os diálogos do JupyterLab abertos (ex.: conexão perdida sob carga), registrando o texto
    num aviso. "Select Kernel" é aceito com o kernel sugerido: ele aparece ao abrir um notebook e, se o kernel
    não tiver chegado a tempo, uma vez por célula de um "Run All Cells" — daí a fila de diálogos."""
    deadline = time.monotonic() + timeout
    while (dialog := page.query_selector(".jp-Dialog")) is not None:
        text = " ".join(dialog.inner_text().split())
        if not text.startswith("Select Kernel"):
            warnings.warn(f"diálogo do JupyterLab fechado pelo teste: {text!r}", stacklevel=2)
        accept = dialog.query_selector(".jp-mod-accept")
        if text.startswith("Select Kernel") and accept is not None:
            accept.click()
        else:
            page.keyboard.press("Escape")
        try:  # espera ESTE diálogo sair (o seguinte da fila pode já estar na tela)
            page.wait_for_function("d => !d.isConnected", arg=dialog, timeout=10_000)
        except playwright.TimeoutError:  # sob carga, o clique pode chegar antes de o diálogo aceitar cliques
            if time.monotonic() > deadline:
                raise


def _wait_kernel(page) -> None:
    """Fecha os diálogos e espera o kernel do notebook ligado e ocioso (o nome dele na barra, e não "No Kernel");
    sem kernel, um "Run All Cells" abriria um diálogo por célula."""
    for attempt in range(3):
        _dismiss_dialog(page)
        try:
            page.wait_for_function(
                "() => { const k = document.querySelector("
                "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar-kernelName');"
                " return k && k.textContent.includes('Python 3'); }", timeout=TIMEOUT // 2)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=TIMEOUT)
            return
        except playwright.TimeoutError:
            if attempt == 2:
                raise


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def lab():
    """Um JupyterLab (numa cópia do curso) para os testes deste arquivo."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    original = _digest(ROOT / NOTEBOOK)
    with jupyterlab() as server:
        yield server
    assert _digest(ROOT / NOTEBOOK) == original, "o teste não pode modificar o repositório"


def _run(page, course, steps, shot: str):
    """Roda os passos; se falharem, guarda a tela e junta o diálogo aberto e o fim do log do JupyterLab."""
    try:
        steps()
    except Exception as err:
        page.screenshot(path=SHOTS / shot)  # para entender o que o navegador mostrava
        text = _dialog_text(page)
        log = (course.parent / "lab.log").read_text(errors="replace")[-3000:]
        raise AssertionError(f"diálogo aberto: {text!r}\nfim do log do JupyterLab:\n{log}") from err


def test_explorador_no_jupyterlab(lab):
    base, token, course = lab
    with browser() as page:
        _run(page, course, lambda: (_drive(page, base, token), _save_and_reopen(page, base, token, course)),
             "falha.png")


def _drive(page, base, token):  # noqa: PLR0915 — os passos de um aluno, em sequência: um roteiro linear
    """Os passos de um aluno, com as conferências depois de cada um."""
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=TIMEOUT)
    for attempt in range(3):  # com a máquina carregada, o menu pode ainda estar desativado no 1º clique
        _wait_kernel(page)
        page.keyboard.press("Escape")  # fecha um menu que tenha ficado aberto
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_selector(".atx table.heat", state="attached", timeout=TIMEOUT // 2)
            break
        except playwright.TimeoutError:
            if attempt == 2:
                raise
    page.locator(".atx").first.scroll_into_view_if_needed()
    page.wait_for_selector(".atx table.heat", timeout=30_000)
    page.screenshot(path=SHOTS / "1-inicial.png")
    assert page.locator(".atx").count() == 1, "o explorador deveria aparecer uma única vez"

    # 1) outra frase: os tokens do mapa são refeitos
    before = _html(page)
    box = page.locator(".widget-text", has=page.locator("label", has_text="Frase:")).locator("input")
    box.fill("A menina abraçou o cachorro no sofá")
    box.press("Enter")
    _wait_change(page, before)
    assert _row_tokens(page) == ["a", "menina", "abraçou", "o", "cachorro", "no", "sofá"]
    page.screenshot(path=SHOTS / "2-nova-frase.png")

    # 2) máscara causal: triângulo superior vazio (bloqueado), linhas ainda somam 1
    before = _html(page)
    page.locator(".widget-checkbox", has_text="máscara causal").locator("input").check()
    _wait_change(page, before)
    cells = _cells(page)
    assert all(blocked == (j > i) for i, j, _, blocked in cells)
    for i in range(7):
        assert abs(sum(w for r, _, w, _ in cells if r == i) - 1) < 1e-3
    page.screenshot(path=SHOTS / "3-mascara-causal.png")

    # 3) modo multicabeça e outra cabeça: o título e os pesos mudam
    before = _html(page)
    page.get_by_role("button", name="Multicabeça").click()
    _wait_change(page, before)
    before = _html(page)
    _select(page, "Cabeça:", "cabeça 1")
    _wait_change(page, before)
    assert "cabeça 1" in page.inner_text(".atx .title")
    assert all(blocked == (j > i) for i, j, _, blocked in _cells(page))
    before = _html(page)
    _select(page, "Cabeça:", "todas")
    _wait_change(page, before)
    assert page.locator(".atx table.heat").count() == 4
    page.screenshot(path=SHOTS / "4-todas-as-cabecas.png")

    # 4) outra consulta: as barras passam a ser desse token
    before = _html(page)
    _select(page, "Consulta:", "4: cachorro")
    _wait_change(page, before)
    assert "“cachorro” olha para…" in page.inner_text(".atx .bars")
    page.screenshot(path=SHOTS / "5-consulta.png")

    # 5) erro num callback aparece no widget, em português
    box.fill("?!")
    box.press("Enter")
    page.wait_for_selector("text=nenhuma palavra", timeout=30_000)
    page.screenshot(path=SHOTS / "6-erro.png")


def _open(page, base, token, path):
    """Abre um notebook (sem rodar nada), num espaço de trabalho novo, e espera o kernel ficar ocioso."""
    workspace = hashlib.sha256(path.encode()).hexdigest()[:8]
    page.goto(f"{base}/lab/workspaces/w{workspace}/tree/{path}?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=TIMEOUT)
    _wait_kernel(page)


def _save_and_reopen(page, base, token, course):
    """Salva o notebook com o explorador vivo e o reabre (cópia confiável e não confiável) sem rodar nada:
    a célula mostra a figura estática, não o "Error displaying widget: model not found" do JupyterLab."""
    import json

    saved = course / NOTEBOOK
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while "atx-static" not in saved.read_text(encoding="utf-8") or "widget-view+json" not in saved.read_text(
            encoding="utf-8"):
        assert time.monotonic() < deadline, "o notebook não foi salvo com o widget e a figura estática"
        time.sleep(0.5)
    time.sleep(1)  # o servidor assina o notebook logo depois de gravar
    nb = json.loads(saved.read_text(encoding="utf-8"))
    (course / "reaberto.ipynb").write_text(json.dumps(nb), encoding="utf-8")  # a mesma assinatura: confiável
    nb["metadata"]["copiado"] = True  # conteúdo diferente da assinatura: o JupyterLab não confia
    (course / "reaberto-nao-confiavel.ipynb").write_text(json.dumps(nb), encoding="utf-8")

    for name, trusted in (("reaberto.ipynb", True), ("reaberto-nao-confiavel.ipynb", False)):
        _open(page, base, token, name)
        static = page.locator(".atx-static img")
        static.first.wait_for(state="visible", timeout=30_000)
        if trusted:  # o JupyterLab tenta o widget, não acha o modelo e escreve o erro (que fica escondido)
            page.wait_for_function("[...document.querySelectorAll('.jp-OutputArea-output')].some("
                                   "o => o.textContent.includes('model not found'))", timeout=30_000)
        static.first.scroll_into_view_if_needed()
        page.screenshot(path=SHOTS / f"7-reaberto{'' if trusted else '-nao-confiavel'}.png")
        assert static.count() == 1 and static.first.is_visible()
        assert static.first.evaluate("img => img.naturalWidth") > 500
        for text in ("model not found", "Error displaying widget", "No renderer", "Loading widget"):
            hits = page.get_by_text(text)
            assert not any(hits.nth(i).is_visible() for i in range(hits.count())), f"{text!r} visível ({name})"
        assert page.locator(".atx").count() == 0  # nenhum widget vivo: só a figura


LONG_SENTENCE = " ".join(
    "Era uma vez um gato que morava numa casa velha perto do rio e todas as manhãs ele subia no telhado para olhar "
    "os barcos que passavam devagar enquanto o cão dormia no sofá da sala e a menina lia um livro sobre viagens por "
    "terras distantes onde o mar encontra as montanhas e o vento canta canções antigas que ninguém lembra".split())
LAYOUT_CELLS = {  # nome → código; o que um aluno viu cortado numa tela de 1280 px
    "todas-8": 'atencao.explorar("O gato dormiu no sofá da sala hoje", mode="multi", head="todas")',
    "todas-9": 'atencao.explorar("O gato dormiu no sofá da sala com ele", mode="multi", head="todas")',
    "longa": f'atencao.explorar("{LONG_SENTENCE}")',
    "vazia": 'e = atencao.explorar("o gato")\ne.update(sentence="")\ne',
}

_GEOMETRY = """atx => {
  const area = atx.closest('.jp-OutputArea-output').getBoundingClientRect();
  const clipped = el => {  // cortado por algum ancestral com overflow, ou além da largura da saída
    const r = el.getBoundingClientRect();
    if (r.left < area.left - 1 || r.right > area.right + 1) return true;
    for (let a = el.parentElement; a && !a.classList.contains('jp-OutputArea'); a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) return true;
    }
    return false;
  };
  const textWidth = el => {
    const g = document.createRange(); g.selectNodeContents(el); return g.getBoundingClientRect().width;
  };
  const walker = document.createTreeWalker(atx, NodeFilter.SHOW_TEXT);
  let node = walker.nextNode();
  while (node && !node.textContent.includes('coordenadas')) node = walker.nextNode();
  const word = document.createRange();
  if (node) { const at = node.textContent.indexOf('coordenadas'); word.setStart(node, at); word.setEnd(node, at + 11); }
  return {
    tables: atx.querySelectorAll('table.heat').length,
    clippedTables: [...atx.querySelectorAll('table.heat')].filter(clipped).length,
    clippedBars: [...atx.querySelectorAll('.bars, .bar .v')].filter(clipped).length,
    scrollBoxes: [...atx.querySelectorAll('*')].filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowY)
                     || ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).length,
    tightNumbers: [...atx.querySelectorAll('td.max')].filter(td => td.textContent && textWidth(td) > td.clientWidth - 4)
                  .map(td => td.textContent),
    coordLines: node ? new Set([...word.getClientRects()].map(r => Math.round(r.top))).size : 0,
  };
}"""


def _run_all(page, count: int):
    for attempt in range(3):  # com a máquina carregada, o menu pode ainda estar desativado no 1º clique
        _wait_kernel(page)
        page.keyboard.press("Escape")
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(f"document.querySelectorAll('.atx').length >= {count}", timeout=TIMEOUT // 2)
            return
        except playwright.TimeoutError:
            if attempt == 2:
                raise


def test_layout_do_explorador_numa_tela_de_1280px(lab):
    """Numa tela de 1280 px (com o navegador de arquivos aberto): números inteiros nas molduras, todas as
    cabeças à vista (em linhas, sem caixa de rolagem), barras inteiras numa frase longa, "coordenadas" sem
    quebra, controles deslizantes com largura útil e o erro nomeando o campo "Frase"."""
    import nbformat

    base, token, course = lab
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("import atencao")] + [nbformat.v4.new_code_cell(c)
                                                                 for c in LAYOUT_CELLS.values()]
    nbformat.write(nb, course / "layout.ipynb")
    with browser(viewport=(1280, 1000)) as page:
        def steps():
            _open(page, base, token, "layout.ipynb")
            _run_all(page, len(LAYOUT_CELLS))
            page.wait_for_selector("text=não tem nenhuma palavra", timeout=30_000)
            explorers = page.locator(".atx")
            results = {}
            for k, name in enumerate(LAYOUT_CELLS):
                explorers.nth(k).scroll_into_view_if_needed()
                explorers.nth(k).screenshot(path=SHOTS / f"layout-{name}.png")
                results[name] = explorers.nth(k).evaluate(_GEOMETRY)
            for name, r in results.items():
                assert r["clippedTables"] == 0 and r["clippedBars"] == 0 and r["scrollBoxes"] == 0, (name, r)
                assert r["tightNumbers"] == [] and r["coordLines"] == 1, (name, r)
            assert results["todas-8"]["tables"] == results["todas-9"]["tables"] == 4
            sliders = page.eval_on_selector_all(".widget-hslider .slider-container",
                                                "s => s.map(e => e.getBoundingClientRect().width)")
            assert sliders and min(sliders) >= 100, sliders
            message = page.locator(".widget-html", has_text="nenhuma palavra").inner_text()
            assert "“Frase” não tem nenhuma palavra" in message and "sentence" not in message
        _run(page, course, steps, "falha-layout.png")


def test_controle_do_treino_visivel(lab):
    """A vista do treino da Aula 5 (``replay``, no ``04-projeto``): a figura estática e, com o kernel vivo, o
    controle "passo" visível. A regra que esconde o widget morto de um notebook reaberto escondia também este,
    vivo, e o controle nunca aparecia. Com o widget vivo, a figura estática sai de cena (a figura aparece uma vez
    só), e mexer no controle troca a imagem."""
    import nbformat

    base, token, course = lab
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell(
        "from atencao.training import TASKS, TinyAttentionModel, train\nfrom atencao.training_view import replay\n"
        "r = train(TinyAttentionModel(seed=0), TASKS['anterior'], steps=8, lr=0.005, every=4)\nreplay(r)")]
    nbformat.write(nb, course / "treino.ipynb")
    with browser(viewport=(1280, 1000)) as page:
        def steps():
            _open(page, base, token, "treino.ipynb")
            _run_all(page, 1)  # a caixa do controle tem a classe dos widgets vivos
            slider = page.locator(".widget-hslider", has=page.locator("label", has_text="passo"))
            slider.first.wait_for(state="visible", timeout=30_000)
            image = page.locator(".atx img")
            before = image.first.get_attribute("src")
            slider.first.scroll_into_view_if_needed()
            page.screenshot(path=SHOTS / "treino.png")
            assert not page.locator(".atx-static img").first.is_visible()  # a figura aparece uma vez só
            slider.first.locator(".noUi-handle, .slider-handle, [role='slider']").first.focus()
            page.keyboard.press("Home")  # o primeiro passo guardado
            page.wait_for_function("b => document.querySelector('.atx img').getAttribute('src') !== b", arg=before,
                                   timeout=30_000)
        _run(page, course, steps, "falha-treino.png")
