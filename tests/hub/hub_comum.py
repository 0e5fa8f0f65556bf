"""O que os dois testes de servidor de verdade (``test_hub_ponta_a_ponta`` e ``test_pod_simulado``) fazem igual:
pular (ou falhar, na CI) sem o que a máquina precisa, rodar um comando que tem de dar certo e copiar o curso para
uma pasta legível por outros usuários."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NA_CI = bool(os.environ.get("CI"))


def falta(motivo: str):
    """Sem o que o teste precisa: falha na CI (que instala tudo), pula fora dela."""
    if NA_CI:
        pytest.fail(motivo)
    pytest.skip(motivo)


def rodar(cmd, **kw) -> subprocess.CompletedProcess:
    """Roda ``cmd`` e confere que deu certo (a saída vai na mensagem, se não)."""
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}: {r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


def copiar_curso(destino: Path) -> None:
    """O clone do curso em ``destino`` (os arquivos que o git tem ou teria: os versionados e os novos que ele não
    ignora)."""
    if destino.exists():
        shutil.rmtree(destino)
    arquivos = rodar(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout
    for nome in filter(None, arquivos.split("\0")):
        origem = ROOT / nome
        if origem.is_file():
            (destino / nome).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origem, destino / nome)
