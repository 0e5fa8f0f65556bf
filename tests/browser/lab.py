"""JupyterLab de verdade num Chromium sem tela, para testes e capturas de tela.

- O servidor roda em 127.0.0.1, numa porta livre, com token aleatório, servindo uma **cópia
  temporária** do curso (o repositório nunca é modificado) e com diretórios de configuração novos
  (sem pop-up de notícias).
- O Chromium é o do Debian (``/usr/bin/chromium``), dirigido pelo Playwright para Python; nenhum
  navegador é baixado.
- O servidor é sempre encerrado ao sair do ``with``, mesmo em caso de erro.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "trabalho", "__pycache__", ".ipynb_checkpoints",
                                     "*.egg-info")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(timeout: float = 90.0):
    """Sobe o JupyterLab numa cópia do curso; devolve ``(url_base, token, pasta_da_copia)``."""
    tmp = Path(tempfile.mkdtemp(prefix="curso-lab-"))
    course = tmp / "curso"
    shutil.copytree(ROOT, course, ignore=COPY_IGNORE)
    settings = tmp / "settings"
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # sem virtualização: células fora da tela continuam no DOM (o teste procura saídas em qualquer lugar)
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    port, token = free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    # o kernel importa a biblioteca da cópia (e não a instalada em modo editável, que pode ser de outro checkout)
    env["PYTHONPATH"] = os.pathsep.join([str(course / "lib")] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               IPYTHONDIR=str(tmp / "ipython"))
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={course}", "--LabApp.news_url=", "--ServerApp.allow_root=True"]
    log = open(tmp / "lab.log", "w")
    proc = subprocess.Popen(cmd, cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("o JupyterLab não subiu:\n" + (tmp / "lab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield base, token, course
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def browser(viewport=(1400, 1000)):
    """Um contexto persistente do Playwright no Chromium do Debian; devolve a página."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="chromium-perfil-")
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": viewport[0], "height": viewport[1]})
        try:
            yield ctx.pages[0] if ctx.pages else ctx.new_page()
        finally:
            ctx.close()
            shutil.rmtree(profile, ignore_errors=True)
