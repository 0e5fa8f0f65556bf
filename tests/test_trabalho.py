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


def test_curso_ja_aberto_diz_o_endereco_em_vez_de_abrir_outro(monkeypatch, capsys, tmp_path):
    import json

    # o arquivo de estado que um servidor Jupyter escreve na pasta de execução (JUPYTER_RUNTIME_DIR)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    falso = {"root_dir": str(preparar_trabalho.ROOT), "pid": os.getpid(), "port": 8888,
             "url": "http://localhost:8888/", "token": "abc"}
    (tmp_path / "jpserver-123.json").write_text(json.dumps(falso), encoding="utf-8")
    (tmp_path / "jpserver-124.json").write_text("{sendo escrito", encoding="utf-8")  # ilegível: fica de fora
    outro = dict(falso, root_dir=str(tmp_path))  # um servidor de outra pasta não é o curso
    (tmp_path / "jpserver-125.json").write_text(json.dumps(outro), encoding="utf-8")
    assert preparar_trabalho.check_before_opening(8888) == preparar_trabalho.ALREADY_OPEN == 3
    out = capsys.readouterr().out
    assert "já está aberto: http://localhost:8888/lab/tree/trabalho/00-comece-aqui.ipynb?token=abc" in out
    assert "Ctrl+C" in out and "python3 curso.py lab" in out  # sem caminhos do .venv nem só o make
    morto = dict(falso, pid=2**22 + 7)  # um servidor que não existe mais não conta
    (tmp_path / "jpserver-123.json").write_text(json.dumps(morto), encoding="utf-8")
    assert preparar_trabalho.course_servers() == []


def test_com_o_curso_aberto_o_notebook_apagado_volta(monkeypatch, capsys, tmp_path):
    """O README diz: para recomeçar um notebook, apague a cópia em trabalho/ e rode make lab. Com o curso já aberto,
    o make lab só dizia o endereço, e o notebook apagado não voltava até o servidor fechar."""
    import json

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    aberto = {"root_dir": str(preparar_trabalho.ROOT), "pid": os.getpid(), "port": 8888,
              "url": "http://localhost:8888/", "token": "abc"}
    (tmp_path / "run" / "jpserver-1.json").write_text(json.dumps(aberto), encoding="utf-8")
    source = tmp_path / "notebooks"
    (source / "aula").mkdir(parents=True)
    (source / "aula" / "03-exercicios.ipynb").write_text("original")
    (source / "aula" / "04-projeto.ipynb").write_text("original")
    monkeypatch.setattr(preparar_trabalho, "SOURCE", source)
    monkeypatch.setattr(preparar_trabalho, "WORK", tmp_path / "trabalho")
    (tmp_path / "trabalho" / "aula").mkdir(parents=True)
    (tmp_path / "trabalho" / "aula" / "04-projeto.ipynb").write_text("resposta do aluno")
    assert preparar_trabalho.main(["--porta", "8888"]) == preparar_trabalho.ALREADY_OPEN
    out = capsys.readouterr().out
    assert "já está aberto" in out and "1 arquivo(s) novo(s) copiado(s)" in out
    assert (tmp_path / "trabalho" / "aula" / "03-exercicios.ipynb").read_text() == "original"
    assert (tmp_path / "trabalho" / "aula" / "04-projeto.ipynb").read_text() == "resposta do aluno"


def test_curso_ja_aberto_e_respondido_sem_importar_o_servidor(tmp_path):
    """Dizer que o curso já está aberto não importa o jupyter_server (numa máquina ocupada, a importação dele
    levava de 26 s a 30 s; o `make lab` com o curso aberto respondia o endereço e só depois de 29,5 s saía)."""
    import subprocess

    codigo = ("import sys; sys.path.insert(0, 'scripts'); import preparar_trabalho as p; "
              "p.course_servers(); print('jupyter_server' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", codigo], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)})
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_porta_ocupada_sugere_outra(monkeypatch, capsys):
    import socket

    monkeypatch.setattr(preparar_trabalho, "running_servers", lambda runtime_dir=None: [])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        porta = s.getsockname()[1]
        assert preparar_trabalho.check_before_opening(porta) == preparar_trabalho.PORT_IN_USE == 4
    assert f"A porta {porta} está ocupada" in capsys.readouterr().out


def test_torch_com_cuda_so_avisa(monkeypatch, capsys):
    import importlib.metadata

    class Dist:
        def __init__(self, name):
            self.metadata = {"Name": name}

    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [Dist("torch"), Dist("nvidia-cublas-cu12")])
    monkeypatch.setattr(preparar_trabalho, "port_in_use", lambda porta: False)
    monkeypatch.setattr(preparar_trabalho, "course_servers", lambda: [])
    assert preparar_trabalho.check_before_opening(8888) == 0
    assert "versão com CUDA" in capsys.readouterr().out
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [Dist("torch"), Dist("numpy")])
    assert not preparar_trabalho.torch_has_cuda()


def test_configurar_escreve_as_configuracoes_no_ambiente(tmp_path):
    destino = preparar_trabalho.configure(tmp_path)  # outro prefixo: só o arquivo, sem mexer nas extensões
    assert destino == tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert destino.read_text(encoding="utf-8") == (ROOT / "scripts" / "overrides.json").read_text(encoding="utf-8")
    kernel = (tmp_path / "etc" / "ipython" / "ipython_kernel_config.py").read_text(encoding="utf-8")
    assert kernel == preparar_trabalho.KERNEL_CONFIG and '"atencao.dicas"' in kernel
    servidor = (tmp_path / "etc" / "jupyter" / "jupyter_server_config.py").read_text(encoding="utf-8")
    assert servidor == preparar_trabalho.SERVER_CONFIG and "SolucoesSomenteLeitura" in servidor


def test_configuracoes_do_servidor_e_do_kernel_valem_no_ambiente_do_curso():
    """Os arquivos que o `configure` escreve são lidos de verdade: o servidor Jupyter deste ambiente usa o
    gerenciador das soluções, e o IPython de um kernel carrega as dicas (fora da correção)."""
    from jupyter_server.serverapp import ServerApp
    from traitlets.config import Config

    from atencao.solucoes import SolucoesSomenteLeitura

    app = ServerApp()
    app.load_config_file()
    assert app.contents_manager_class is SolucoesSomenteLeitura
    with open(Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py", encoding="utf-8") as f:
        fonte = f.read()
    for cpu_environment, carrega in (({}, True), ({"NBGRADER_EXECUTION": "autograde"}, False)):
        c = Config()
        antes = dict(os.environ)
        os.environ.pop("NBGRADER_EXECUTION", None)
        os.environ.update(cpu_environment)
        try:
            exec(compile(fonte, "ipython_kernel_config.py", "exec"), {"c": c})
        finally:
            os.environ.clear()
            os.environ.update(antes)
        extensoes = c.InteractiveShellApp.extensions
        valor = extensoes.get_value([]) if hasattr(extensoes, "get_value") else extensoes
        assert ("atencao.dicas" in list(valor)) is carrega, (cpu_environment, valor)


def test_overrides_sao_configuracoes_que_o_jupyterlab_conhece():
    """Cada configuração de scripts/overrides.json existe no esquema do plugin instalado (um nome errado seria
    ignorado em silêncio): inclusive as linhas longas de código quebradas na largura da célula."""
    import json

    overrides = json.loads((ROOT / "scripts" / "overrides.json").read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/notebook-extension:tracker"]["codeCellConfig"]["lineWrap"] is True
    esquemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    for plugin, valores in overrides.items():
        pacote, nome = plugin.split(":")
        esquema = json.loads((esquemas / pacote / f"{nome}.json").read_text(encoding="utf-8"))
        for chave in valores:
            assert chave in esquema["properties"], (plugin, chave)


def test_binder_prepara_o_mesmo_trabalho_e_as_configuracoes(tmp_path):
    """O Binder usa o mesmo passo que o make lab: configurações no postBuild, trabalho/ no start."""
    import os
    import subprocess

    binder = ROOT / "binder"
    linhas = [ln for ln in (binder / "requirements.txt").read_text(encoding="utf-8").splitlines()
              if ln and not ln.startswith("#")]  # o índice de CPU do PyTorch ao lado do PyPI (tests/test_ambiente.py)
    assert linhas == ["--extra-index-url https://download.pytorch.org/whl/cpu", "-r ../requirements.txt"]
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
