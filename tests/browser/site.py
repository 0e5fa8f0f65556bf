"""O curso no navegador (``make site``) servido em 127.0.0.1 e aberto num Chromium sem tela e sem internet.

- :func:`site_construido` constrói ``build/site/`` uma vez por execução (``python3 curso.py site``); com
  ``CURSO_SITE_PRONTO=1``, usa o que já está lá.
- :func:`servir` serve o site **sob um subcaminho** (``/curso/``), como numa hospedagem estática qualquer.
- :func:`offline` guarda em ``fora`` toda requisição para fora de 127.0.0.1 (o teste falha se houver alguma), e
  o Chromium não a deixa sair: nenhum outro nome resolve (``--host-resolver-rules``) e o que não é loopback vai
  para um proxy morto (``--proxy-server``), inclusive endereços IP.
- :class:`Lite` dirige o JupyterLite pela API do JupyterLab (``window.jupyterapp``, ligada no
  ``site/jupyter-lite.json``): abrir, rodar tudo, trocar o código de uma célula, ler saídas.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from .lab import CHROMIUM, CHROMIUM_FLAGS, ROOT, free_port

SITE = ROOT / "build" / "site"
SUBCAMINHO = "curso"
TIMEOUT = 240_000  # ms: o primeiro kernel do Pyodide, numa máquina de 2 núcleos ocupada
_construido = False


def site_construido() -> Path:
    """``build/site/``, construído uma vez nesta execução (ou o já pronto, com ``CURSO_SITE_PRONTO=1``)."""
    global _construido
    if not _construido and not (os.environ.get("CURSO_SITE_PRONTO") and (SITE / "index.html").exists()):
        inicio = time.monotonic()
        resultado = subprocess.run([sys.executable, str(ROOT / "curso.py"), "site"], cwd=ROOT, capture_output=True,
                                   text=True)
        assert resultado.returncode == 0, f"make site falhou:\n{resultado.stdout[-3000:]}\n{resultado.stderr[-3000:]}"
        print(f"site construído em {time.monotonic() - inicio:.0f} s")
    _construido = True
    return SITE


@contextlib.contextmanager
def servir(site: Path):
    """Serve ``site`` em ``http://127.0.0.1:PORTA/curso/`` com o ``http.server`` do Python; devolve a URL."""
    raiz = Path(tempfile.mkdtemp(prefix="curso-site-raiz-"))
    (raiz / SUBCAMINHO).symlink_to(site.resolve(), target_is_directory=True)
    porta = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "-d", str(raiz), str(porta)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{porta}/{SUBCAMINHO}/"
    try:
        prazo = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base, timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > prazo:
                    raise RuntimeError("o http.server não subiu") from None
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(raiz, ignore_errors=True)


@contextlib.contextmanager
def offline(viewport=(1400, 1000)):
    """Um Chromium do Debian sem tela em que só 127.0.0.1 responde; devolve ``(página, fora, contexto)``,
    ``fora`` a lista das URLs de fora que foram tentadas (e abortadas)."""
    from playwright.sync_api import sync_playwright

    perfil = tempfile.mkdtemp(prefix="chromium-site-")
    fora: list[str] = []
    # Nada sai da máquina: nenhum nome resolve (só 127.0.0.1) e tudo o que não é loopback vai para um proxy morto.
    # (O page.route do Playwright não serve aqui: com ele o service worker do JupyterLite não sobe.)
    flags = [*CHROMIUM_FLAGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             "--proxy-server=http://127.0.0.1:9"]
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            perfil, executable_path=CHROMIUM, args=flags, headless=True, accept_downloads=True,
            viewport={"width": viewport[0], "height": viewport[1]})

        def anotar(req):
            partes = urllib.parse.urlsplit(req.url)
            if partes.scheme in ("http", "https", "ws", "wss") and partes.hostname != "127.0.0.1":
                fora.append(req.url)

        ctx.on("request", anotar)  # inclui as do service worker do JupyterLite
        try:
            yield (ctx.pages[0] if ctx.pages else ctx.new_page()), fora, ctx
        finally:
            ctx.close()
            shutil.rmtree(perfil, ignore_errors=True)


_JS_CELULAS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.map(c => ({
    tipo: c.model.type,
    id: (c.model.getMetadata('nbgrader') || {}).grade_id || null,
    fonte: c.model.sharedModel.getSource(),
    contagem: c.model.type === 'code' ? c.model.executionCount : null,
    saidas: c.model.type === 'code' ? c.model.outputs.toJSON() : [],
  }));
}"""


_JS_SAIDAS = """async i => {
  const celula = window.jupyterapp.shell.currentWidget.content.widgets[i];
  await new Promise(r => setTimeout(r, 30));
  const nos = Array.from(celula.node.querySelectorAll('.jp-OutputArea-child .jp-OutputArea-output'));
  return {id: celula.model.id, exibidos: nos.map(n => n.innerText)};
}"""


class Lite:
    """Um aluno no JupyterLite, pela API do JupyterLab."""

    def __init__(self, page, base: str):
        self.page, self.base = page, base

    def abrir(self, caminho: str) -> dict:
        """Abre ``caminho`` e espera o kernel ficar pronto; devolve os tempos (s) da interface e do kernel."""
        inicio = time.monotonic()
        self.page.goto(f"{self.base}lab/index.html?path={caminho}")
        return self.esperar_kernel(inicio)

    def esperar_kernel(self, inicio: float) -> dict:
        """Espera a interface e o kernel do notebook aberto; tempos (s) contados de ``inicio`` (``time.monotonic``)."""
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                                    "&& window.jupyterapp.shell.currentWidget.content", timeout=TIMEOUT)
        interface = time.monotonic() - inicio
        self.page.wait_for_function(
            "() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
            " return s.session && s.session.kernel && s.session.kernel.status === 'idle'; }", timeout=TIMEOUT)
        return {"interface": interface, "kernel": time.monotonic() - inicio}

    def abrir_aqui(self, caminho: str, modo: str | None = None) -> None:
        """Abre ``caminho`` na página já aberta (``modo``: ``"split-right"`` para ao lado) e espera o notebook (não o
        kernel) ficar pronto."""
        self.page.evaluate("async ([p, m]) => { await window.jupyterapp.commands.execute('docmanager:open',"
                           " {path: p, options: m ? {mode: m} : {}}); }", [caminho, modo])
        self.page.wait_for_function(
            "p => { const w = window.jupyterapp.shell.currentWidget; return w && w.context && w.context.path === p"
            " && w.context.isReady && w.content && w.content.widgets.length > 0; }", arg=caminho, timeout=TIMEOUT)

    def fechar_todos(self) -> None:
        """Fecha os notebooks abertos sem salvar (abrir um notebook no site já o marca como mudado: o kernel do
        Pyodide troca o ``kernelspec`` dos metadados)."""
        self.page.evaluate(
            "async () => { for (const w of Array.from(window.jupyterapp.shell.widgets('main')))"
            " { if (w.context) w.context.model.dirty = false; }"
            " await window.jupyterapp.commands.execute('application:close-all'); }")
        self.page.wait_for_timeout(500)

    def kernels(self) -> list[dict]:
        """Os notebooks abertos: caminho, id e estado do kernel de cada um."""
        return self.page.evaluate(
            "() => Array.from(window.jupyterapp.shell.widgets('main')).filter(w => w.sessionContext).map(w => {"
            " const k = w.sessionContext.session && w.sessionContext.session.kernel;"
            " return {caminho: w.context.path, kernel: k ? k.id : null, estado: k ? k.status : null}; })")

    def ativar(self, caminho: str) -> None:
        """Põe em foco o notebook aberto ``caminho``."""
        self.page.evaluate(
            "p => { const w = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.context"
            " && w.context.path === p); window.jupyterapp.shell.activateById(w.id); }", caminho)
        self.page.wait_for_function("p => window.jupyterapp.shell.currentWidget.context.path === p", arg=caminho)

    def saidas_exibidas(self) -> dict[str, list[str]]:
        """O texto que o JupyterLab mostra em cada saída de cada célula de código do notebook aberto (id da célula ->
        textos, na ordem). Rola até cada célula (só as que estão à vista ficam na página)."""
        n = self.page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
        achadas = {}
        for i in range(n):
            tipo = self.page.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.type", i)
            if tipo != "code":
                continue
            self.page.evaluate("async i => { await window.jupyterapp.shell.currentWidget.content.scrollToItem(i, "
                               "'start'); }", i)
            celula = self.page.evaluate(_JS_SAIDAS, i)
            achadas[celula["id"]] = celula["exibidos"]
        return achadas

    def executar(self, comando: str) -> None:
        self.page.evaluate("c => window.jupyterapp.commands.execute(c)", comando)

    def esperar_ocioso(self, timeout=TIMEOUT) -> None:
        """Espera todas as células de código pedidas terminarem (nenhuma na fila, kernel ocioso)."""
        self.page.wait_for_timeout(300)
        self.page.wait_for_function(
            "() => { const p = window.jupyterapp.shell.currentWidget;"
            " const k = p.sessionContext.session.kernel;"
            " return k.status === 'idle' && !p.content.widgets.some(c => c.model.type === 'code'"
            " && c.promptNode && c.promptNode.textContent.includes('*')); }", timeout=timeout)

    def rodar_tudo(self, timeout=TIMEOUT) -> float:
        inicio = time.monotonic()
        self.executar("notebook:run-all-cells")
        self.esperar_ocioso(timeout)
        return time.monotonic() - inicio

    def celulas(self) -> list[dict]:
        return self.page.evaluate(_JS_CELULAS)

    def indice(self, grade_id: str) -> int:
        return next(i for i, c in enumerate(self.celulas()) if c["id"] == grade_id)

    def trocar_e_rodar(self, i: int, fonte: str, *seguintes: int) -> None:
        """Troca o código da célula ``i`` por ``fonte`` e roda ela e as células ``seguintes``."""
        self.page.evaluate("([i, f]) => window.jupyterapp.shell.currentWidget.content.widgets[i].model"
                           ".sharedModel.setSource(f)", [i, fonte])
        for j in (i, *seguintes):
            self.page.evaluate("j => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = j; }", j)
            self.executar("notebook:run-cell")
            self.esperar_ocioso()

    def texto(self, i: int) -> str:
        partes = []
        for saida in self.celulas()[i]["saidas"]:
            texto = saida.get("text") or saida.get("data", {}).get("text/plain", "")
            partes.append("".join(texto) if isinstance(texto, list) else texto)
        return "".join(partes)

    def textos(self) -> str:
        """Todo o texto das saídas do notebook aberto (para procurar avisos que não são erros)."""
        return "\n".join(self.texto(i) for i in range(len(self.celulas())))

    def erros(self) -> list[str]:
        """As saídas de erro do notebook (nome: mensagem, com o começo do código da célula)."""
        return [f"{s.get('ename')}: {s.get('evalue')} (célula {c['fonte'][:60]!r})"
                for c in self.celulas() for s in c["saidas"] if s.get("output_type") == "error"]
