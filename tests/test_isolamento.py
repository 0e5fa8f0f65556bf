"""A caixa do bubblewrap em que roda cada entrega: o que o código do aluno vê e o que consegue fazer lá dentro."""

import json
import os
import secrets
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import isolamento

ROOT = Path(__file__).resolve().parents[1]

# lento (make test-lento): processos de verdade na caixa do bwrap
pytestmark = [pytest.mark.lento,
              pular_fora_da_ci(not isolamento.bwrap_disponivel(), "sem bubblewrap nesta máquina (o CI instala)")]

SONDA = textwrap.dedent("""
    import json, os, socket, subprocess, sys, time
    from pathlib import Path
    from correcao._caixa import limitar
    limitar()  # como os processos de entrada da correção, antes de qualquer código do aluno
    raiz = Path(sys.argv[1])
    r = {"uid": os.getuid(), "home": os.getcwd(), "env": sorted(os.environ)}
    r["ve_repo"] = (raiz / "README.md").exists() or (raiz / "solutions").exists()
    r["ve_lib"] = (raiz / "lib" / "atencao" / "__init__.py").exists()
    try:
        (raiz / "lib" / "INVADIDO.txt").write_text("x"); r["escreve_lib"] = True
    except OSError:
        r["escreve_lib"] = False
    try:
        Path("/tmp/INVADIDO-caixa.txt").write_text("x"); r["tmp_proprio"] = True
    except OSError:
        r["tmp_proprio"] = False
    Path("minha-pasta.txt").write_text("ok")
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2); r["rede"] = True
    except OSError:
        r["rede"] = False
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)  # sobrevivente-da-caixa"],
                     start_new_session=True)
    print(json.dumps(r))
""")


def _rodar(caixa: isolamento.Caixa, workdir: Path, codigo: str, *args: str) -> subprocess.CompletedProcess:
    cmd, env = caixa.comando(workdir, "x")
    cmd = cmd[:-2] + ["-c", codigo, *args]  # troca "-m x" pelo código da sonda
    workdir.mkdir(parents=True, exist_ok=True)
    if caixa.root:
        os.chown(workdir, caixa.uid, caixa.uid)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)


def test_a_caixa_isola_usuario_rede_arquivos_ambiente_e_processos(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGREDO_DO_PROFESSOR", "nao-pode-vazar")
    marca = secrets.token_hex(8)
    caixa = isolamento.Caixa(isolamento.Limites(), numero=3, marca=marca)
    run = _rodar(caixa, tmp_path / "caixa", SONDA, str(ROOT))
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout.strip().splitlines()[-1])
    if os.geteuid() == 0:
        assert r["uid"] >= isolamento.UID_BASE
    assert r["home"] == isolamento.HOME
    assert "SEGREDO_DO_PROFESSOR" not in r["env"]
    assert r["ve_lib"] and not r["ve_repo"] and not r["escreve_lib"]
    assert r["tmp_proprio"] and not Path("/tmp/INVADIDO-caixa.txt").exists()
    assert not r["rede"]
    assert (tmp_path / "caixa" / "minha-pasta.txt").read_text() == "ok"
    time.sleep(0.5)
    assert isolamento.restantes(marca) == []  # o processo solto morreu com a caixa
    assert not (ROOT / "lib" / "INVADIDO.txt").exists()


def test_limites_de_memoria_e_de_processos_valem_dentro_da_caixa(tmp_path):
    codigo = textwrap.dedent("""
        import os, resource, time
        from correcao._caixa import limitar
        limitar()
        try:
            bytearray(3 * 2**30); print("memoria: alocou")
        except MemoryError:
            print("memoria: MemoryError")
        filhos = 0
        try:
            for _ in range(5000):
                if os.fork() == 0:
                    time.sleep(30); os._exit(0)
                filhos += 1
        except OSError:
            pass
        print("processos:", filhos)
    """)
    caixa = isolamento.Caixa(isolamento.Limites(memoria_mb=1024, processos=64), numero=5)
    run = _rodar(caixa, tmp_path / "caixa", codigo)
    assert "memoria: MemoryError" in run.stdout, run.stdout + run.stderr
    filhos = int(run.stdout.split("processos:")[1])
    assert 0 < filhos < 64


def test_sem_bwrap_a_caixa_recusa_com_instrucao_de_instalacao(monkeypatch):
    monkeypatch.setattr(isolamento.shutil, "which", lambda name: None)
    assert not isolamento.bwrap_disponivel()
    with pytest.raises(isolamento.SemBwrap, match="sudo apt-get install bubblewrap"):
        isolamento.Caixa(isolamento.Limites())
    isolamento.Caixa(isolamento.Limites(), isolar=False)  # sem isolamento: permitido, e só quando pedido
