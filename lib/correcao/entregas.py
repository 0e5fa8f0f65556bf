"""A pasta (ou o ``.zip``) que o professor recebeu: ``<aluno>/<arquivos>``, como chegou.

Uma turma real não chega arrumada: zips do Windows (``carla\\03-exercicios.ipynb``), nomes em UTF-8 sem a
marca de UTF-8 (``jo├úo``) ou em NFD (macOS), restos do macOS (``__MACOSX/``, ``._*``, ``.DS_Store``), do
Jupyter (``.ipynb_checkpoints/``), um zip por aluno, zips dentro da pasta do aluno, arquivos soltos na raiz.
Este módulo transforma tudo isso numa lista de :class:`Arquivo`: o nome do aluno e o caminho dentro da
entrega como o professor os vê (Unicode NFC, ``/`` como separador) e uma cópia interna com nome seguro
(``arquivos/00007``). Nomes de alunos são dados, nunca caminhos nem padrões: nada aqui (nem no nbgrader,
que só recebe ids como ``e00007``) usa o nome do aluno para montar um caminho.

Nada é alterado no original, e nada dele é seguido às cegas: só arquivos comuns são lidos (até
:data:`LIMITE_BYTES` cada); um atalho (link simbólico), um FIFO, um dispositivo, um arquivo grande demais ou
ilegível vira um :class:`Arquivo` com ``motivo`` (e, se tiver nome de notebook, uma linha
``arquivo_invalido``), em vez de ser lido (um atalho para ``solutions/`` entregaria as respostas; um FIFO
travaria a correção).
"""

from __future__ import annotations

import io
import os
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

LIMITE_BYTES = 50 * 2**20  # um notebook de exercício tem dezenas de KB; acima disto não é corrigido

# restos de sistemas e programas, nunca trabalho do aluno
PASTAS_LIXO = {"__macosx", ".ipynb_checkpoints", "__pycache__", ".git", ".trash", ".trashes", ".spotlight-v100",
               ".fseventsd", ".temporaryitems", "$recycle.bin"}
ARQUIVOS_LIXO = {".ds_store", "thumbs.db", "desktop.ini", ".localized", "icon\r"}


@dataclass
class Arquivo:
    """Um arquivo da entrega de um aluno."""

    aluno: str  # a pasta do aluno, como o professor a vê (NFC); "" = solto na raiz das entregas
    caminho: str  # dentro da pasta do aluno, com "/" (NFC), ex.: "versao-final/03-exercicios.ipynb"
    dados: Path | None = None  # a cópia interna (só de possíveis notebooks), None se não foi lida
    motivo: str = ""  # por que não pôde ser lido ("" = lido)

    @property
    def nome(self) -> str:
        return self.caminho.rsplit("/", 1)[-1]

    @property
    def parece_notebook(self) -> bool:
        """Nome de notebook, mesmo com a extensão em maiúsculas ou um sufixo de download (``.ipynb.txt``)."""
        return ".ipynb" in self.nome.lower()


@dataclass
class Entregas:
    """Tudo o que a pasta tinha: os arquivos, os alunos (mesmo os de pasta vazia) e os restos ignorados."""

    arquivos: list[Arquivo] = field(default_factory=list)
    alunos: list[str] = field(default_factory=list)
    lixo: list[str] = field(default_factory=list)  # caminhos ignorados (restos do macOS/Windows/Jupyter)
    inseguros: list[str] = field(default_factory=list)  # nomes no zip que sairiam da pasta (".."): não lidos


def nfc(texto: str) -> str:
    """``texto`` em Unicode NFC (acentos compostos): "João" do macOS (NFD, ``o`` + til combinante) e o digitado
    no Windows ou no Linux (NFC) viram o mesmo aluno; todo nome de aluno e de arquivo passa por aqui."""
    return unicodedata.normalize("NFC", texto)


def partes(nome: str) -> tuple[str, ...] | None:
    """Partes de um caminho de zip ou de pasta: ``\\`` também separa, NFC; ``None`` se sair da pasta (``..``)."""
    pedacos = [p for p in nfc(nome).replace("\\", "/").split("/") if p not in ("", ".")]
    if pedacos and len(pedacos[0]) == 2 and pedacos[0][1] == ":":  # "C:\Users\..." de um zip do Windows
        pedacos = pedacos[1:]
    return None if ".." in pedacos else tuple(pedacos)


def e_lixo(p: tuple[str, ...]) -> bool:
    return (any(x.lower() in PASTAS_LIXO for x in p[:-1]) or p[-1].lower() in ARQUIVOS_LIXO
            or p[-1].startswith("._") or p[-1].lower() in PASTAS_LIXO)


def nome_no_zip(info: zipfile.ZipInfo) -> str:
    """O nome de um membro do zip: sem a marca de UTF-8, o zipfile lê como cp437; aqui tenta UTF-8 (macOS,
    Linux e o 7-Zip gravam assim sem marcar) e depois cp850 (o "Pasta compactada" do Windows em português)."""
    if info.flag_bits & 0x800:
        return info.filename
    bruto = info.filename.encode("cp437")
    try:
        return bruto.decode("utf-8")
    except UnicodeDecodeError:
        return bruto.decode("cp850")


class _Leitor:
    """Junta os arquivos de zips e pastas numa lista, com cópias internas numeradas."""

    def __init__(self, destino: Path):
        self.destino = destino
        self.itens: list[tuple[tuple[str, ...], Path | None, str]] = []  # (partes, dados, motivo)
        self.pastas: set[tuple[str, ...]] = set()
        self.lixo: list[str] = []
        self.inseguros: list[str] = []  # nomes com ".." (sairiam da pasta): não lidos, mas listados
        destino.mkdir(parents=True, exist_ok=True)

    def _guardar(self, dados: bytes) -> Path:
        alvo = self.destino / f"{len(self.itens):05d}"
        alvo.write_bytes(dados)
        return alvo

    def _acrescentar(self, p: tuple[str, ...], dados: bytes | None, motivo: str = "") -> None:
        self.itens.append((p, self._guardar(dados) if dados is not None else None, motivo))

    def zip(self, arquivo, prefixo: tuple[str, ...] = (), profundidade: int = 0) -> None:
        """Lê um zip (caminho ou bytes); um zip dentro dele é aberto também (um nível)."""
        with zipfile.ZipFile(arquivo) as z:
            for info in z.infolist():
                nome = nome_no_zip(info)
                p = partes(nome)
                if p is None:
                    self.inseguros.append(nome)
                    continue
                if not p:
                    continue
                p = prefixo + p
                if e_lixo(p):
                    self.lixo.append("/".join(p))
                    continue
                if nome.endswith(("/", "\\")) or info.is_dir():
                    self.pastas.add(p)
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):
                    self.itens.append((p, None, "o arquivo é um atalho (link simbólico): não foi lido nem corrigido"))
                    continue
                if not _interessa(p[-1]):
                    self.itens.append((p, None, ""))
                    continue
                if info.file_size > LIMITE_BYTES:
                    self.itens.append((p, None, _GRANDE))
                    continue
                try:
                    with z.open(info) as f:
                        dados = f.read(LIMITE_BYTES + 1)
                except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
                    self.itens.append((p, None, f"não foi possível tirar do zip ({type(exc).__name__})"))
                    continue
                if len(dados) > LIMITE_BYTES:
                    self.itens.append((p, None, _GRANDE))
                elif p[-1].lower().endswith(".zip") and profundidade == 0:
                    self._zip_interno(p, dados)
                else:
                    self._acrescentar(p, dados)

    def _zip_interno(self, p: tuple[str, ...], dados: bytes) -> None:
        prefixo = p  # "ana.zip" solto na raiz é a entrega da aluna "ana" (veja _de_quem)
        self.pastas.add(prefixo)
        inicio = len(self.itens)
        try:
            self.zip(io.BytesIO(dados), prefixo, profundidade=1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            self.itens.append((p, None, f"zip que não abre ({type(exc).__name__})"))
            return
        novos, n = self.itens[inicio:], len(prefixo)
        raizes = {q[n] for q, _, _ in novos if len(q) > n + 1}
        if novos and len(raizes) == 1 and all(len(q) > n + 1 for q, _, _ in novos):
            # o zip da aluna tem uma pasta-raiz (ana.zip → ana/03-exercicios.ipynb): fora do caminho mostrado
            self.itens[inicio:] = [(q[:n] + q[n + 1:], d, m) for q, d, m in novos]

    def pasta(self, raiz: Path) -> None:
        for atual, dirs, files in os.walk(raiz, followlinks=False):
            base = Path(atual).relative_to(raiz).parts
            p_base = tuple(nfc(x) for x in base)
            if p_base:
                self.pastas.add(p_base)
            for d in list(dirs):
                if os.path.islink(os.path.join(atual, d)):
                    dirs.remove(d)
                    self.itens.append((p_base + (nfc(d),), None, "a pasta é um atalho (link simbólico): não foi lida"))
                elif e_lixo(p_base + (nfc(d),)):
                    dirs.remove(d)
                    self.lixo.append("/".join(p_base + (nfc(d),)) + "/")
            for nome in sorted(files):
                p = p_base + (nfc(nome),)
                if e_lixo(p):
                    self.lixo.append("/".join(p))
                    continue
                fonte = Path(atual) / nome
                info = os.lstat(fonte)
                if stat.S_ISLNK(info.st_mode):
                    self.itens.append((p, None, "o arquivo é um atalho (link simbólico): não foi lido nem corrigido"))
                elif not stat.S_ISREG(info.st_mode):
                    self.itens.append((p, None, "não é um arquivo comum (FIFO, dispositivo...): "
                                                "não foi lido nem corrigido"))
                elif not _interessa(nome):
                    self.itens.append((p, None, ""))
                elif info.st_size > LIMITE_BYTES:
                    self.itens.append((p, None, _GRANDE))
                elif nome.lower().endswith(".zip"):
                    self._zip_interno(p, fonte.read_bytes())
                else:
                    self._acrescentar(p, fonte.read_bytes())


_GRANDE = f"arquivo grande demais (mais de {LIMITE_BYTES // 2**20} MB): não foi corrigido"


def _interessa(nome: str) -> bool:
    """Só possíveis notebooks (e zips) são lidos; o resto (PDFs, imagens, vídeos) só é listado."""
    nome = nome.lower()
    return ".ipynb" in nome or nome.endswith(".zip")


def _raiz_comum(arquivos: list[tuple[str, ...]], pastas: list[tuple[str, ...]]) -> int:
    """Quantas pastas-raiz de embrulho tirar (``turma.zip`` → ``turma/<aluno>/...``): enquanto tudo estiver
    numa pasta só que tem subpastas e, se tiver notebooks direto nela (soltos na raiz), mais de uma subpasta
    (uma pasta com notebooks e uma subpasta só é a entrega de um aluno)."""
    tirar = 0
    while True:
        resto = [c[tirar:] for c in arquivos if len(c) > tirar]
        dirs = [c[tirar:] for c in pastas if len(c) > tirar]
        if not resto or len({c[0] for c in resto + dirs}) != 1:
            return tirar
        subpastas = {c[1] for c in resto if len(c) > 2} | {c[1] for c in dirs if len(c) > 1}
        direto = any(len(c) == 2 and _interessa(c[-1]) for c in resto)
        if not subpastas or (direto and len(subpastas) < 2):
            return tirar
        tirar += 1


def _de_quem(p: tuple[str, ...]) -> tuple[str, str]:
    """(aluno, caminho dentro da entrega) de um caminho já sem a pasta-raiz de embrulho. Um zip solto na raiz
    (``vitor.zip/03-exercicios.ipynb``) é a entrega de "vitor"; o caminho guarda o nome do zip, para
    distinguir do que veio na pasta ``vitor/``."""
    if len(p) == 1:
        return "", p[0]
    if p[0].lower().endswith(".zip"):
        return p[0][:-4], "/".join(x for x in p if x)
    return p[0], "/".join(x for x in p[1:] if x)


def ler_entregas(path: Path, tmp: Path) -> Entregas:
    """Todos os arquivos de ``path`` (pasta ou ``.zip``), por aluno. As cópias internas ficam em ``tmp``.

    Raises
    ------
    SystemExit
        Se ``path`` não existir ou não for pasta nem zip (mensagem em pt-BR).
    """
    path = Path(path)
    if not path.exists():
        raise SystemExit(f"ENTREGAS não existe: {path}")
    leitor = _Leitor(tmp / "arquivos")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SystemExit(f"ENTREGAS precisa ser uma pasta ou um .zip: {path}")
        leitor.zip(path)
        tirar = _raiz_comum([p for p, _, _ in leitor.itens], sorted(leitor.pastas))
    else:
        leitor.pasta(path)
        tirar = 0
    out = Entregas(lixo=sorted(leitor.lixo), inseguros=sorted(leitor.inseguros))
    alunos = set()
    for p in sorted(leitor.pastas):
        if len(p) > tirar:
            alunos.add(_de_quem(p[tirar:] + ("",))[0])
    for p, dados, motivo in leitor.itens:
        p = p[tirar:]
        if not p:
            continue
        aluno, caminho = _de_quem(p)
        if aluno:
            alunos.add(aluno)
        out.arquivos.append(Arquivo(aluno, caminho, dados, motivo))
    out.alunos = sorted(alunos)
    out.arquivos.sort(key=lambda a: (a.aluno, a.caminho.count("/"), a.caminho))
    return out
