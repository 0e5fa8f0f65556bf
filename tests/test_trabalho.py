"""`make lab` prepara trabalho/ sem nunca sobrescrever as respostas do aluno."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import preparar_trabalho  # noqa: E402


def test_copia_o_que_falta_e_nao_sobrescreve(tmp_path, monkeypatch):
    source = tmp_path / "notebooks"
    (source / "aula").mkdir(parents=True)
    (source / "aula" / "03-exercicios.ipynb").write_text("original")
    (source / "00-comece-aqui.ipynb").write_text("original")
    monkeypatch.setattr(preparar_trabalho, "SOURCE", source)
    monkeypatch.setattr(preparar_trabalho, "WORK", tmp_path / "trabalho")
    assert len(preparar_trabalho.prepare()) == 2
    answer = tmp_path / "trabalho" / "aula" / "03-exercicios.ipynb"
    answer.write_text("resposta do aluno")
    (source / "aula" / "04-projeto.ipynb").write_text("novo notebook do curso")
    assert preparar_trabalho.prepare() == [tmp_path / "trabalho" / "aula" / "04-projeto.ipynb"]
    assert answer.read_text() == "resposta do aluno"


def test_trabalho_fora_do_git_e_do_pytest():
    assert "trabalho/" in (ROOT / ".gitignore").read_text().splitlines()
    assert "trabalho/00-comece-aqui.ipynb" in (ROOT / "curso.py").read_text(encoding="utf-8")  # make lab abre lá


def test_curso_ja_aberto_diz_o_endereco_em_vez_de_abrir_outro(monkeypatch, capsys):
    import jupyter_server.serverapp as serverapp

    falso = {"root_dir": str(preparar_trabalho.ROOT), "pid": os.getpid(), "port": 8888,
             "url": "http://localhost:8888/", "token": "abc"}
    monkeypatch.setattr(serverapp, "list_running_servers", lambda: iter([falso]))
    assert preparar_trabalho.antes_de_abrir(8888) == 3
    out = capsys.readouterr().out
    assert "já está aberto: http://localhost:8888/lab?token=abc" in out
    assert "Ctrl+C" in out and "python3 curso.py lab" in out  # sem caminhos do .venv nem só o make
    morto = dict(falso, pid=2**22 + 7)  # um servidor que não existe mais não conta
    monkeypatch.setattr(serverapp, "list_running_servers", lambda: iter([morto]))
    assert preparar_trabalho.servidores_do_curso() == []


def test_porta_ocupada_sugere_outra(monkeypatch, capsys):
    import socket

    import jupyter_server.serverapp as serverapp

    monkeypatch.setattr(serverapp, "list_running_servers", lambda: iter([]))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        porta = s.getsockname()[1]
        assert preparar_trabalho.antes_de_abrir(porta) == 3
    assert f"A porta {porta} está ocupada" in capsys.readouterr().out


def test_torch_com_cuda_so_avisa(monkeypatch, capsys):
    import importlib.metadata

    class Dist:
        def __init__(self, name):
            self.metadata = {"Name": name}

    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [Dist("torch"), Dist("nvidia-cublas-cu12")])
    monkeypatch.setattr(preparar_trabalho, "porta_ocupada", lambda porta: False)
    monkeypatch.setattr(preparar_trabalho, "servidores_do_curso", lambda: [])
    assert preparar_trabalho.antes_de_abrir(8888) == 0
    assert "versão com CUDA" in capsys.readouterr().out
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [Dist("torch"), Dist("numpy")])
    assert not preparar_trabalho.torch_com_cuda()


def test_configurar_escreve_as_configuracoes_no_ambiente(tmp_path):
    destino = preparar_trabalho.configurar(tmp_path)  # outro prefixo: só o arquivo, sem mexer nas extensões
    assert destino == tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert destino.read_text(encoding="utf-8") == (ROOT / "scripts" / "overrides.json").read_text(encoding="utf-8")


def test_binder_prepara_o_mesmo_trabalho_e_as_configuracoes(tmp_path):
    """O Binder usa o mesmo passo que o make lab: configurações no postBuild, trabalho/ no start."""
    import os
    import subprocess

    binder = ROOT / "binder"
    assert (binder / "requirements.txt").read_text(encoding="utf-8").split() == ["-r", "../requirements.txt"]
    for nome in ("postBuild", "start"):
        assert os.access(binder / nome, os.X_OK), nome
    assert "scripts/preparar_trabalho.py --configurar" in (binder / "postBuild").read_text(encoding="utf-8")
    start = (binder / "start").read_text(encoding="utf-8")
    assert "scripts/preparar_trabalho.py" in start and start.rstrip().endswith('exec "$@"')
    # o start roda numa cópia do curso: prepara trabalho/ e entrega o comando do Binder
    import shutil

    copia = tmp_path / "curso"
    for pasta in ("scripts", "notebooks", "binder"):
        shutil.copytree(ROOT / pasta, copia / pasta)
    out = subprocess.run(["bash", "binder/start", sys.executable, "-c", "print('jupyter')"], cwd=copia,
                         capture_output=True, text=True, check=True).stdout
    assert "copiado(s) para trabalho/" in out and out.rstrip().endswith("jupyter")
    assert (copia / "trabalho" / "00-comece-aqui.ipynb").exists()
