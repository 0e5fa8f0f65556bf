"""A instalação do curso: dois comandos depois do clone (``make lab`` e ``make test``) e, no Linux, nunca o PyTorch
com CUDA.

O ``curso.py`` instala o PyTorch antes do ``requirements.txt``: sonda o índice de CPU do PyTorch por poucos segundos
e, se ele não responde, segue com o que o pip acha sem ele; nos dois casos, o relatório de um ``pip install
--dry-run`` diz antes o que seria instalado, e a instalação para se for a versão com CUDA. Aqui esse relatório é
pedido ao pip de verdade, com os argumentos que o ``curso.py`` usa nesta máquina, e com pastas de rodas feitas para
o teste (só a versão com CUDA; só a sem CUDA).
"""

import http.server
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
so_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="o PyTorch com CUDA do PyPI é o do Linux")


def _carregar_curso():
    spec = importlib.util.spec_from_file_location("curso_instalacao", ROOT / "curso.py")
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo


curso = _carregar_curso()


class Anotador(curso.Runner):
    """Anota cada comando; roda de verdade só os ``pip install --dry-run`` (que não instalam nada)."""

    def __init__(self):
        super().__init__()
        self.comandos = []

    def run(self, cmd, **kwargs):
        self.comandos.append([str(a) for a in cmd])
        return super().run(cmd, echo=False) if "--dry-run" in cmd else 0


def _instalacoes(anotador: Anotador) -> list:
    return [c for c in anotador.comandos if "--dry-run" not in c]


def _porta_fechada() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # fechada ao sair: conexão recusada


def _roda(pasta: Path, nome: str, versao: str, requer: tuple = ()) -> None:
    """Uma roda mínima (``py3-none-any``) com os metadados que o pip lê: nome, versão e dependências."""
    dist = f"{nome.replace('-', '_')}-{versao}"
    meta = "".join([f"Metadata-Version: 2.1\nName: {nome}\nVersion: {versao}\n",
                    *(f"Requires-Dist: {r}\n" for r in requer)])
    arquivos = {f"{dist}.dist-info/METADATA": meta,
                f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: teste\nRoot-Is-Purelib: true\n"
                                           "Tag: py3-none-any\n"}
    arquivos[f"{dist}.dist-info/RECORD"] = "".join(f"{n},,\n" for n in arquivos) + f"{dist}.dist-info/RECORD,,\n"
    with zipfile.ZipFile(pasta / f"{dist}-py3-none-any.whl", "w") as z:
        for n, texto in arquivos.items():
            z.writestr(n, texto)


@pytest.fixture
def so_a_pasta(tmp_path, monkeypatch):
    """O pip sem configuração nenhuma e sem índice: só acha as rodas da pasta devolvida."""
    pasta = tmp_path / "rodas"
    pasta.mkdir()
    for var in [v for v in os.environ if v.startswith("PIP_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # nem /etc/pip.conf nem o do usuário
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(pasta))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return pasta


def test_o_pino_do_torch_e_o_dos_requirements():
    for arquivo in ("requirements.txt", "requirements-min.txt"):
        linhas = [ln.split("#")[0].strip() for ln in (ROOT / arquivo).read_text(encoding="utf-8").splitlines()]
        torch = [Requirement(ln) for ln in linhas if ln.startswith("torch")]
        assert [str(r) for r in torch] == [curso.TORCH], arquivo


@so_linux
def test_a_instalacao_nesta_maquina_nunca_escolhe_cuda(tmp_path):
    """O relatório do pip, com os argumentos que o curso.py usa aqui (o índice de CPU, se ele responde; senão, o
    PyPI e as rodas da configuração do pip), escolhe o torch sem CUDA, e a instalação de verdade usa os mesmos
    argumentos."""
    relatorio = tmp_path / "pip-torch.json"
    anotador = Anotador()
    assert curso.install_cpu_torch(anotador, Path(sys.executable), report=relatorio) == 0
    escolhidos = {i["metadata"]["name"].lower(): i["metadata"]["version"]
                  for i in json.loads(relatorio.read_text(encoding="utf-8"))["install"]}
    assert escolhidos["torch"].startswith("2.13.0")
    assert curso.cuda_packages(json.loads(relatorio.read_text(encoding="utf-8"))) == []
    assert not any(nome.startswith("nvidia-") or nome == "triton" for nome in escolhidos), escolhidos
    (simulado,) = [c for c in anotador.comandos if "--dry-run" in c]
    (instalacao,) = _instalacoes(anotador)
    argumentos = simulado[simulado.index(curso.TORCH):]
    assert instalacao == [sys.executable, "-m", "pip", "install", "--quiet", *argumentos]


@so_linux
def test_so_a_versao_com_cuda_disponivel_para_a_instalacao(so_a_pasta, tmp_path, capsys):
    """O índice de CPU não responde e o pip só acha o torch que depende dos pacotes nvidia-* (como o do PyPI no
    Linux): o curso diz que não achou o índice, para antes de instalar e explica o que fazer."""
    _roda(so_a_pasta, "torch", "2.13.0", ('nvidia-cublas-cu12==12.8.4.1; platform_system == "Linux"',))
    _roda(so_a_pasta, "nvidia-cublas-cu12", "12.8.4.1")
    anotador = Anotador()
    indice = f"http://127.0.0.1:{_porta_fechada()}/whl/cpu"
    codigo = curso.install_cpu_torch(anotador, Path(sys.executable), index=indice, report=tmp_path / "r.json")
    saida = capsys.readouterr().out
    assert codigo == 1 and _instalacoes(anotador) == []
    assert f"O índice do PyTorch sem CUDA ({indice}) não respondeu" in saida
    assert "Instalação parada" in saida and "nvidia-cublas-cu12 12.8.4.1" in saida and "torch 2.13.0" in saida
    assert "PIP_FIND_LINKS" in saida
    (simulado,) = anotador.comandos
    assert "--index-url" not in simulado  # na queda, o pip não volta a tentar o índice que não respondeu


@so_linux
def test_sem_o_indice_a_roda_sem_cuda_que_o_pip_acha_serve(so_a_pasta, tmp_path, capsys):
    """A queda rápida: o índice não responde, o pip acha a roda +cpu (numa pasta de PIP_FIND_LINKS, como a de
    quem baixou a roda à mão) ao lado da com CUDA, e a instalação segue com ela."""
    _roda(so_a_pasta, "torch", "2.13.0", ('nvidia-cublas-cu12==12.8.4.1; platform_system == "Linux"',))
    _roda(so_a_pasta, "nvidia-cublas-cu12", "12.8.4.1")
    _roda(so_a_pasta, "torch", "2.13.0+cpu")
    anotador = Anotador()
    relatorio = tmp_path / "r.json"
    indice = f"http://127.0.0.1:{_porta_fechada()}/whl/cpu"
    assert curso.install_cpu_torch(anotador, Path(sys.executable), index=indice, report=relatorio) == 0
    assert "não respondeu" in capsys.readouterr().out
    instalar = json.loads(relatorio.read_text(encoding="utf-8"))["install"]
    assert [(i["metadata"]["name"], i["metadata"]["version"]) for i in instalar] == [("torch", "2.13.0+cpu")]
    assert _instalacoes(anotador) == [[sys.executable, "-m", "pip", "install", "--quiet", curso.TORCH]]


class _IndiceFalso(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):  # noqa: N802 (o nome que o http.server chama)
        self.send_response(200 if self.path == "/whl/cpu/torch/" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_com_o_indice_no_ar_o_pytorch_vem_dele(capsys):
    servidor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _IndiceFalso)
    threading.Thread(target=servidor.serve_forever, daemon=True).start()
    try:
        indice = f"http://127.0.0.1:{servidor.server_address[1]}/whl/cpu"
        assert curso.probe_index(indice, timeout=5) is None
        assert curso.probe_index(indice + "/nada", timeout=5) == "HTTP 404"
        mostrar = curso.Runner(dry_run=True)  # só imprime os comandos
        assert curso.install_cpu_torch(mostrar, Path("py"), index=indice, platform="linux") == 0
    finally:
        servidor.shutdown()
        servidor.server_close()
    linhas = capsys.readouterr().out.splitlines()
    assert linhas == [f"py -m pip install --dry-run --ignore-installed --quiet --report pip-torch.json "
                      f"torch==2.13.0 --index-url {indice}",
                      f"py -m pip install --quiet torch==2.13.0 --index-url {indice}"]
    assert curso.torch_index_args(None) == ["--index-url", "https://download.pytorch.org/whl/cpu"]


def test_a_sondagem_desiste_rapido():
    """Um índice que aceita a conexão e nunca responde: a sondagem desiste no tempo dado (o do curso é de poucos
    segundos), e a conexão recusada é um motivo também. Quanto tempo a queda leva é medida, não teste."""
    assert 0 < curso.PROBE_TIMEOUT_S <= 5
    with socket.socket() as mudo:
        mudo.bind(("127.0.0.1", 0))
        mudo.listen(1)  # o sistema aceita a conexão; ninguém lê nem responde
        motivo = curso.probe_index(f"http://127.0.0.1:{mudo.getsockname()[1]}/whl/cpu", timeout=0.5)
    assert motivo and "timed out" in motivo
    assert curso.probe_index(f"http://127.0.0.1:{_porta_fechada()}/whl/cpu", timeout=0.5)


def test_fora_do_linux_o_pypi_ja_e_sem_cuda():
    for sistema in ("win32", "darwin"):
        anotador = Anotador()
        assert curso.install_cpu_torch(anotador, Path("py"), platform=sistema) == 0 and anotador.comandos == []


def test_pacotes_com_cuda_no_relatorio():
    def item(nome, versao, requer=None):
        return {"metadata": {"name": nome, "version": versao, "requires_dist": requer}}

    assert curso.cuda_packages({"install": [item("torch", "2.13.0+cpu", ["sympy>=1.13.3"]),
                                            item("sympy", "1.14.0")]}) == []
    assert curso.cuda_packages({"install": []}) == []
    assert curso.cuda_packages({"install": [item("torch", "2.13.0", ['nvidia-cudnn-cu12==9.1; platform_system == '
                                                                     '"Linux"'])]}) == ["torch 2.13.0"]
    assert curso.cuda_packages({"install": [item("torch", "2.13.0+cu126"), item("nvidia_nccl_cu12", "2.27"),
                                            item("triton", "3.5.0")]}) == [
        "torch 2.13.0+cu126", "nvidia-nccl-cu12 2.27", "triton 3.5.0"]
    assert curso.cuda_packages({"install": [item("torch", "2.13.0+rocm6.4")]}) == ["torch 2.13.0+rocm6.4"]


def test_instalar_poe_o_pytorch_antes_do_requirements(tmp_path):
    """Num clone novo (sem .venv), o ``instalar`` que o ``make lab`` chama: no Linux, o PyTorch sem CUDA antes do
    ``requirements.txt`` (que o acha instalado); nos outros sistemas, o requirements.txt direto."""
    (tmp_path / "curso.py").write_bytes((ROOT / "curso.py").read_bytes())
    out = subprocess.run([sys.executable, "curso.py", "instalar", "--mostrar"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    requirements = out.index(".venv/bin/python -m pip install --quiet -r requirements.txt")
    torch = [k for k, linha in enumerate(out) if linha.startswith(".venv/bin/python -m pip install")
             and "torch==2.13.0" in linha]
    if sys.platform.startswith("linux"):
        assert len(torch) == 2 and max(torch) < requirements and "--dry-run" in out[torch[0]]
    else:
        assert torch == []
    assert not (tmp_path / ".venv").exists()


def _comandos_de_instalacao(readme: str) -> list:
    """Os comandos dos blocos ``bash`` da seção "Comece aqui" do README, sem os comentários."""
    secao = readme.split("\n## Comece aqui\n", 1)[1].split("\n## ", 1)[0]
    blocos = re.findall(r"```bash\n(.*?)```", secao, flags=re.S)
    linhas = [ln.split("#", 1)[0].strip() for bloco in blocos for ln in bloco.splitlines()]
    return [ln for ln in linhas if ln]


def test_o_readme_mostra_dois_comandos_depois_do_clone():
    comandos = _comandos_de_instalacao((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(comandos) == 3, comandos
    assert comandos[0].startswith("git clone ") and comandos[1:] == ["make lab", "make test"]
    assert _comandos_de_instalacao("x\n## Comece aqui\n```bash\ngit clone a && cd a\nmake lab  # abre\n```\n"
                                   "texto\n```bash\npip install torch\nmake test\n```\n## Outra\n```bash\nls\n```"
                                   ) == ["git clone a && cd a", "make lab", "pip install torch", "make test"]

