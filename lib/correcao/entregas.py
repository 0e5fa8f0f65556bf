"""A pasta (ou o ``.zip``) que o professor recebeu: ``<aluno>/<arquivos>``, como chegou.

Uma turma real não chega arrumada: zips do Windows (``carla\\03-exercicios.ipynb``), nomes em UTF-8 sem a
marca de UTF-8 (``jo├úo``), em ISO-8859-1 (a pasta ``b"Jos\\xe9 Lima"``, veja :func:`readable_name`) ou em NFD
(macOS), restos do macOS (``__MACOSX/``, ``._*``, ``.DS_Store``), do
Jupyter (``.ipynb_checkpoints/``), um zip por aluno, zips dentro da pasta do aluno, arquivos soltos na raiz.
Este módulo transforma tudo isso numa lista de :class:`SubmittedFile`: o nome do aluno e o caminho dentro da
entrega como o professor os vê (Unicode NFC, ``/`` como separador) e uma cópia interna com nome seguro
(``arquivos/00007``). Nomes de alunos são dados, nunca caminhos nem padrões: nada aqui (nem no nbgrader,
que só recebe ids como ``e00007``) usa o nome do aluno para montar um caminho.

Nada é alterado no original, e nada dele é seguido às cegas: só arquivos comuns são lidos (até
:data:`MAX_FILE_BYTES` cada); um atalho (link simbólico), um FIFO, um dispositivo, um arquivo grande demais ou
ilegível vira um :class:`SubmittedFile` com ``motivo`` (e, se tiver nome de notebook, uma linha
``arquivo_invalido``), em vez de ser lido (um atalho para ``solutions/`` entregaria as respostas; um FIFO
travaria a correção).
"""

from __future__ import annotations

import functools
import io
import os
import re
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 50 * 2**20  # um notebook de exercício tem dezenas de KB; acima disto não é corrigido

# restos de sistemas e programas, nunca trabalho do aluno
JUNK_DIRS = {"__macosx", ".ipynb_checkpoints", "__pycache__", ".git", ".trash", ".trashes", ".spotlight-v100",
             ".fseventsd", ".temporaryitems", "$recycle.bin"}
JUNK_FILES = {".ds_store", "thumbs.db", "desktop.ini", ".localized", "icon\r",
              "timestamp.txt", "submission_secret.txt"}  # os dois do exchange do nbgrader (submitted/)


@dataclass
class SubmittedFile:
    """Um arquivo da entrega de um aluno."""

    aluno: str  # a pasta do aluno, como o professor a vê (NFC); "" = solto na raiz das entregas
    caminho: str  # dentro da pasta do aluno, com "/" (NFC), ex.: "versao-final/03-exercicios.ipynb"
    dados: Path | None = None  # a cópia interna (só de possíveis notebooks), None se não foi lida
    motivo: str = ""  # por que não pôde ser lido ("" = lido)

    @property
    def nome(self) -> str:
        return self.caminho.rsplit("/", 1)[-1]

    @property
    def looks_like_notebook(self) -> bool:
        """Nome de notebook, mesmo com a extensão em maiúsculas ou um sufixo de download (``.ipynb.txt``)."""
        return ".ipynb" in self.nome.lower()


@dataclass
class Submissions:
    """Tudo o que a pasta tinha: os arquivos, os alunos (mesmo os de pasta vazia) e os restos ignorados."""

    arquivos: list[SubmittedFile] = field(default_factory=list)
    alunos: list[str] = field(default_factory=list)
    lixo: list[str] = field(default_factory=list)  # caminhos ignorados (restos do macOS/Windows/Jupyter)
    inseguros: list[str] = field(default_factory=list)  # nomes no zip que sairiam da pasta (".."): não lidos


def nfc(texto: str) -> str:
    """``texto`` em Unicode NFC (acentos compostos): "João" do macOS (NFD, ``o`` + til combinante) e o digitado
    no Windows ou no Linux (NFC) viram o mesmo aluno; todo nome de aluno e de arquivo passa por aqui (e, antes,
    por :func:`readable_name`)."""
    return unicodedata.normalize("NFC", readable_name(texto))


_UNDECODED_BYTE = re.compile("[\udc80-\udcff]")


def _undecoded_byte(m: re.Match) -> str:
    byte = bytes([ord(m.group()) - 0xDC00])
    try:
        letra = byte.decode("cp1252")
    except UnicodeDecodeError:
        letra = ""
    return letra if letra.isprintable() and letra else f"\\x{byte[0]:02x}"


def readable_name(texto: str) -> str:
    """Um nome que veio do disco como o Python o lê (``os.fsdecode``, com ``surrogateescape``): os bytes que não
    são UTF-8 (``b"Jos\\xe9 Lima"``, uma pasta criada num sistema em ISO-8859-1) viram a letra do Windows-1252
    (que contém o ISO-8859-1 imprimível: ``José Lima``) ou, sem letra, o byte escrito (``\\x81``). Sem isso, o
    nome não pode ser gravado em UTF-8 (``notas.csv``, o retorno) e a turma inteira parava."""
    return _UNDECODED_BYTE.sub(_undecoded_byte, texto) if _UNDECODED_BYTE.search(texto) else texto


def path_parts(nome: str) -> tuple[str, ...] | None:
    """Partes de um caminho de zip ou de pasta: ``\\`` também separa, NFC; ``None`` se sair da pasta (``..``)."""
    pedacos = [p for p in nfc(nome).replace("\\", "/").split("/") if p not in ("", ".")]
    if pedacos and len(pedacos[0]) == 2 and pedacos[0][1] == ":":  # "C:\Users\..." de um zip do Windows
        pedacos = pedacos[1:]
    return None if ".." in pedacos else tuple(pedacos)


def is_junk(p: tuple[str, ...]) -> bool:
    return (any(x.lower() in JUNK_DIRS for x in p[:-1]) or p[-1].lower() in JUNK_FILES
            or p[-1].startswith("._") or p[-1].lower() in JUNK_DIRS)


def zip_member_name(info: zipfile.ZipInfo) -> str:
    """O nome de um membro do zip: sem a marca de UTF-8, o zipfile lê como cp437; aqui tenta UTF-8 (macOS,
    Linux e o 7-Zip gravam assim sem marcar) e depois cp850 (o "Pasta compactada" do Windows em português) ou
    Windows-1252/ISO-8859-1 (programas antigos do Linux e do Windows), o que der mais letras acentuadas do
    português com a caixa da letra anterior (``b"Jos\\xe9"``: "José" em Windows-1252, "JosÚ" em cp850)."""
    if info.flag_bits & 0x800:
        return info.filename
    bruto = info.filename.encode("cp437")
    try:
        return bruto.decode("utf-8")
    except UnicodeDecodeError:
        pass
    candidatos = [bruto.decode("cp850")]
    try:
        candidatos.append(bruto.decode("cp1252"))
    except UnicodeDecodeError:
        pass
    return max(candidatos, key=_portuguese_letters)  # empate: o cp850, o primeiro


_PT_LETTERS = set("áàâãéêíóôõúüçÁÀÂÃÉÊÍÓÔÕÚÜÇ")


def _portuguese_letters(nome: str) -> int:
    """Quantas letras acentuadas do português há em ``nome`` com a mesma caixa da letra anterior (ou no começo
    de uma palavra): ``José`` tem uma, ``JosÚ`` nenhuma."""
    return sum(1 for k, c in enumerate(nome) if c in _PT_LETTERS
               and (k == 0 or not nome[k - 1].isalpha() or nome[k - 1].islower() == c.islower()))


class _Reader:
    """Junta os arquivos de zips e pastas numa lista, com cópias internas numeradas."""

    def __init__(self, destino: Path):
        self.destino = destino
        self.itens: list[tuple[tuple[str, ...], Path | None, str]] = []  # (partes, dados, motivo)
        self.pastas: set[tuple[str, ...]] = set()
        self.lixo: list[str] = []
        self.inseguros: list[str] = []  # nomes com ".." (sairiam da pasta): não lidos, mas listados
        self.raiz_tirada: dict[tuple[str, ...], str] = {}  # zip interno -> a pasta-raiz tirada do caminho
        destino.mkdir(parents=True, exist_ok=True)

    def _store(self, dados: bytes) -> Path:
        alvo = self.destino / f"{len(self.itens):05d}"
        alvo.write_bytes(dados)
        return alvo

    def _add(self, p: tuple[str, ...], dados: bytes | None, motivo: str = "") -> None:
        self.itens.append((p, self._store(dados) if dados is not None else None, motivo))

    def zip(self, arquivo, prefixo: tuple[str, ...] = (), profundidade: int = 0) -> None:  # noqa: C901 — cada recusa de um membro do zip (caminho, tamanho, zip dentro de zip)
        """Lê um zip (caminho ou bytes); um zip dentro dele é aberto também (um nível)."""
        with zipfile.ZipFile(arquivo) as z:
            for info in z.infolist():
                nome = zip_member_name(info)
                p = path_parts(nome)
                if p is None:
                    self.inseguros.append(nome)
                    continue
                if not p:
                    continue
                p = prefixo + p
                if is_junk(p):
                    self.lixo.append("/".join(p))
                    continue
                if nome.endswith(("/", "\\")) or info.is_dir():
                    self.pastas.add(p)
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):
                    self.itens.append((p, None, "o arquivo é um atalho (link simbólico): não foi lido nem corrigido"))
                    continue
                if not _relevant(p[-1]):
                    self.itens.append((p, None, ""))
                    continue
                if info.file_size > MAX_FILE_BYTES:
                    self.itens.append((p, None, _TOO_BIG))
                    continue
                try:
                    with z.open(info) as f:
                        dados = f.read(MAX_FILE_BYTES + 1)
                except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
                    self.itens.append((p, None, f"não foi possível tirar do zip ({type(exc).__name__})"))
                    continue
                if len(dados) > MAX_FILE_BYTES:
                    self.itens.append((p, None, _TOO_BIG))
                elif p[-1].lower().endswith(".zip") and profundidade == 0:
                    self._inner_zip(p, dados)
                else:
                    self._add(p, dados)

    def _inner_zip(self, p: tuple[str, ...], dados: bytes) -> None:
        prefixo = p  # "ana.zip" solto na raiz é a entrega da aluna "ana" (veja _de_quem)
        self.pastas.add(prefixo)
        inicio = len(self.itens)
        try:
            self.zip(io.BytesIO(dados), prefixo, profundidade=1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            self.itens.append((p, None, ZIP_BROKEN))
            return
        novos, n = self.itens[inicio:], len(prefixo)
        raizes = {q[n] for q, _, _ in novos if len(q) > n + 1}
        if novos and len(raizes) == 1 and all(len(q) > n + 1 for q, _, _ in novos):
            # o zip da aluna tem uma pasta-raiz (ana.zip → ana/03-exercicios.ipynb): fora do caminho mostrado
            self.itens[inicio:] = [(q[:n] + q[n + 1:], d, m) for q, d, m in novos]
            self.raiz_tirada[prefixo] = raizes.pop()

    def pasta(self, raiz: Path, prefixo: tuple[str, ...] = ()) -> None:  # noqa: C901 — cada recusa de um arquivo da pasta, como em zip
        for atual, dirs, files in os.walk(raiz, followlinks=False):
            base = Path(atual).relative_to(raiz).parts
            p_base = prefixo + tuple(nfc(x) for x in base)
            if p_base:
                self.pastas.add(p_base)
            for d in list(dirs):
                if os.path.islink(os.path.join(atual, d)):
                    dirs.remove(d)
                    self.itens.append((p_base + (nfc(d),), None, "a pasta é um atalho (link simbólico): não foi lida"))
                elif is_junk(p_base + (nfc(d),)):
                    dirs.remove(d)
                    self.lixo.append("/".join(p_base + (nfc(d),)) + "/")
            for nome in sorted(files):
                p = p_base + (nfc(nome),)
                if is_junk(p):
                    self.lixo.append("/".join(p))
                    continue
                fonte = Path(atual) / nome
                info = os.lstat(fonte)
                if stat.S_ISLNK(info.st_mode):
                    self.itens.append((p, None, "o arquivo é um atalho (link simbólico): não foi lido nem corrigido"))
                elif not stat.S_ISREG(info.st_mode):
                    self.itens.append((p, None, "não é um arquivo comum (FIFO, dispositivo...): "
                                                "não foi lido nem corrigido"))
                elif not _relevant(nome):
                    self.itens.append((p, None, ""))
                elif info.st_size > MAX_FILE_BYTES:
                    self.itens.append((p, None, _TOO_BIG))
                elif nome.lower().endswith(".zip"):
                    self._inner_zip(p, fonte.read_bytes())
                else:
                    self._add(p, fonte.read_bytes())


_TOO_BIG = f"arquivo grande demais (mais de {MAX_FILE_BYTES // 2**20} MB): não foi corrigido"


def _relevant(nome: str) -> bool:
    """Só possíveis notebooks (e zips) são lidos; o resto (PDFs, imagens, vídeos) só é listado."""
    nome = nome.lower()
    return ".ipynb" in nome or nome.endswith(".zip")


_FIXED_COURSE_NAMES = {"notebooks", "solutions", "trabalho", "source", "submitted", "autograded", "release",
                       "exercicios", "exercícios", "projeto", "projetos", "teoria", "codigo", "código"}
_LESSON_DIR = re.compile(r"^(aula|m[oó]dulo|lesson|module)[-_ ]*\d+$")


@functools.lru_cache(maxsize=1)
def _course_names() -> frozenset:
    """Os nomes de pasta do próprio curso: aulas (``aula-01-self-attention``), módulos (``modulo-06``) e
    notebooks (``03-exercicios``), de ``solutions/`` e ``notebooks/``, em minúsculas."""
    raiz = Path(__file__).resolve().parents[2]
    nomes = set(_FIXED_COURSE_NAMES)
    for pasta in ("solutions", "notebooks"):
        for nb in (raiz / pasta).rglob("*.ipynb"):
            rel = nb.relative_to(raiz / pasta)
            nomes.update(x.lower() for x in rel.parts[:-1])
            nomes.add(nb.stem.lower())
            nomes.add(re.sub(r"^\d+[-_ ]*", "", nb.stem.lower()))
    return frozenset(nomes)


def course_notebook_name(nome: str) -> bool:
    """``nome`` (de uma pasta) é o de uma aula, de um módulo ou de um notebook do curso (``aula-01-self-attention``,
    ``Aula 1``, ``modulo-06``, ``03-exercicios``)? Uma pasta assim nunca é um aluno: é como o aluno (ou o
    professor) organizou as entregas."""
    n = nfc(nome).strip().lower()
    if ".ipynb" in n:
        n = n[: n.index(".ipynb")]
    return (n in _course_names() or _LESSON_DIR.match(n) is not None
            or _LESSON_DIR.match(n.split("-self")[0]) is not None)


def _first_folder(pastas: tuple[str, ...]) -> str:
    return next((x for x in pastas if not course_notebook_name(x)), "")


def _common_root(arquivos: list[tuple[str, ...]], pastas: list[tuple[str, ...]]) -> int:
    """Quantas pastas-raiz de embrulho tirar (``turma.zip`` → ``turma/<aluno>/...``): enquanto tudo estiver
    numa pasta só que tem subpastas e, se tiver notebooks direto nela (soltos na raiz), mais de uma subpasta
    (uma pasta com notebooks e uma subpasta só é a entrega de um aluno). Subpastas com nome de aula ou de
    notebook do curso não contam: ``ana/aula-01/...`` e ``ana/aula-02/...`` são a entrega de "ana"."""
    tirar = 0
    while True:
        resto = [c[tirar:] for c in arquivos if len(c) > tirar]
        dirs = [c[tirar:] for c in pastas if len(c) > tirar]
        if not resto or len({c[0] for c in resto + dirs}) != 1:
            return tirar
        # a primeira pasta, abaixo desta, que não é de aula nem de notebook (turma/aula-01/carla/...: carla)
        subpastas = {x for x in (_first_folder(c[1:-1]) for c in resto) if x} | \
                    {x for x in (_first_folder(c[1:]) for c in dirs) if x}
        direto = any(len(c) == 2 and _relevant(c[-1]) for c in resto)
        if not subpastas or (direto and len(subpastas) < 2):
            return tirar
        tirar += 1


def _owner(p: tuple[str, ...]) -> tuple[str, str]:
    """(aluno, caminho dentro da entrega) de um caminho já sem a pasta-raiz de embrulho. Um zip solto na raiz
    (``vitor.zip/03-exercicios.ipynb``) é a entrega de "vitor"; o caminho guarda o nome do zip, para
    distinguir do que veio na pasta ``vitor/``. Pastas com nome de aula ou de notebook antes do aluno
    (``aula-01-self-attention/ana/03-exercicios.ipynb``) ficam de fora: nunca são um aluno."""
    k = 0
    while k < len(p) - 1 and course_notebook_name(p[k]):
        k += 1
    if len(p) - k == 1:
        return "", "/".join(x for x in p if x)
    if p[k].lower().endswith(".zip"):
        return p[k][:-4], "/".join(x for x in p[k:] if x)
    return p[k], "/".join(x for x in p[k + 1:] if x)


def _one_line(exc: Exception) -> str:
    """A mensagem de ``exc`` em uma linha, sem bytes que não se imprimem."""
    return " ".join(readable_name(str(exc)).split())[:200]


# o motivo de um zip de aluno que não abre (cortado no meio, ou que não é zip), em nao-corrigidos.csv e na linha dele
ZIP_BROKEN = ("zip que não abre: incompleto ou danificado (o download parou no meio?) ou não é um zip; peça ao aluno "
              "que o envie de novo")


def _starts_like_zip(path: Path) -> bool:
    """Se ``path`` começa como um zip (a assinatura de um membro, ``PK\\x03\\x04``) ou tem o nome de um."""
    with open(path, "rb") as f:
        return f.read(4) == b"PK\x03\x04" or path.suffix.lower() == ".zip"


def _read_one(leitor: _Reader, path: Path, marca: str) -> int:
    """Lê uma entrada (pasta ou .zip) no ``leitor``, com os caminhos começando por ``marca``; devolve quantas
    pastas-raiz de embrulho tirar dela."""
    if not path.exists():
        raise SystemExit(f"ENTREGAS: “{nfc(path.name)}” não existe (esperado: uma pasta ou um .zip com as entregas)")
    inicio = len(leitor.itens)
    if path.is_file():
        if not zipfile.is_zipfile(path):
            if _starts_like_zip(path):  # o começo de um zip, sem o índice do fim: um download que parou no meio
                raise SystemExit(f"ENTREGAS: o zip “{nfc(path.name)}” está incompleto ou danificado (o download "
                                 "parou no meio?): baixe-o de novo e corrija de novo; nada foi corrigido")
            raise SystemExit(f"ENTREGAS precisa ser uma pasta ou um .zip: “{nfc(path.name)}” não é nenhum dos dois")
        antes = set(leitor.pastas)
        try:
            leitor.zip(path, (marca,))
        except (zipfile.BadZipFile, UnicodeDecodeError, EOFError, NotImplementedError) as exc:
            # um nome marcado como UTF-8 que não é UTF-8: o zipfile não lê nenhum membro do zip
            raise SystemExit(f"ENTREGAS: o zip “{nfc(path.name)}” não abre ({type(exc).__name__}: "
                             f"{_one_line(exc)}); refaça-o (o “Compactar” do sistema, ou 7-Zip) e corrija "
                             "de novo") from None
        pastas = sorted(q[1:] for q in leitor.pastas - antes if q[:1] == (marca,))
        return _common_root([q[1:] for q, _, _ in leitor.itens[inicio:]], pastas)
    leitor.pasta(path, (marca,))
    return 0


def input_paths(path: Path | str | list | tuple) -> list[Path]:
    """As entradas de uma correção como lista: ``path`` é uma pasta ou um ``.zip``, ou uma lista (ou tupla) deles."""
    return [Path(x) for x in path] if isinstance(path, (list, tuple)) else [Path(path)]


def read_submissions(path: Path | list[Path], tmp: Path) -> Submissions:
    """Todos os arquivos de ``path`` (pasta ou ``.zip``, ou uma lista delas), por aluno. As cópias internas
    ficam em ``tmp``.

    Uma turma pode chegar em várias partes: vários zips ou pastas na linha de comando, ou zips da turma
    dentro da pasta das entregas (``lote-1.zip`` com dois alunos, ``lote-2.zip`` com a reentrega de um
    deles). Tudo é juntado por aluno: um zip de lote (com nome de lote, ``lote-2.zip``, ``turma-b.zip``) com
    pastas de alunos é uma parte da turma, não um aluno; qualquer outro zip solto entre as entregas é a entrega
    do aluno com o nome do zip, e as pastas dentro dele são tentativas ou cópias desse aluno, nunca outros
    alunos (veja :func:`_class_parts_in_zips`). Quando um aluno aparece em
    mais de uma parte, o caminho de cada arquivo dele começa pelo nome da parte (``lote-2.zip/...``), e a
    reentrega é uma segunda cópia do notebook (o professor decide qual vale). Uma entrada ``.zip`` só com
    notebooks soltos (sem pasta de aluno) é a entrega do aluno com o nome do zip (``ana.zip`` → "ana").

    Raises
    ------
    SystemExit
        Se uma entrada não existir ou não for pasta nem zip (mensagem em pt-BR, sem o caminho completo).
    """
    paths = input_paths(path)
    if not paths:
        raise SystemExit("ENTREGAS: nenhuma pasta ou .zip informado")
    leitor = _Reader(tmp / "arquivos")
    # (aluno, caminho, dados, motivo, parte): parte = de onde veio (a entrada ou o zip da turma lá dentro)
    lidos: list[tuple[str, str, Path | None, str, str]] = []
    pastas_alunos: set[str] = set()  # alunos com pasta própria (não um zip com o nome deles)
    zips: dict[tuple[str, ...], list] = {}  # zip interno (solto na raiz de uma entrada) -> seus itens
    for k, entrada in enumerate(paths):
        _read_input(leitor, k, entrada, len(paths) > 1, lidos, pastas_alunos, zips)
    turma_em_zips, avisos = _class_parts_in_zips(zips, lidos, pastas_alunos)
    alunos_de_zip = _student_zips({c: i for c, i in zips.items() if c not in turma_em_zips}, lidos, pastas_alunos,
                                  avisos)
    out = Submissions(lixo=sorted(leitor.lixo), inseguros=sorted(leitor.inseguros))
    out.arquivos = _files_by_student(lidos)
    out.alunos = sorted(pastas_alunos | alunos_de_zip | {aluno for aluno, *_ in lidos if aluno})
    out.arquivos.sort(key=lambda a: (a.aluno, a.caminho.count("/"), a.caminho))
    return out


def _read_input(leitor: _Reader, k: int, entrada: Path, several: bool, lidos: list, pastas_alunos: set,
                zips: dict) -> None:
    """Lê a entrada ``k`` (pasta ou zip): os arquivos com aluno vão para ``lidos``, as pastas de aluno para
    ``pastas_alunos`` e os zips soltos na raiz para ``zips`` (decididos depois, por
    :func:`_class_parts_in_zips` e :func:`_student_zips`)."""
    marca = f"\0{k}"
    tirar = _read_one(leitor, entrada, marca)
    parte = nfc(entrada.name)
    itens = [(q[1 + tirar:], d, m) for q, d, m in leitor.itens if q[:1] == (marca,)]
    pastas = [q[1 + tirar:] for q in leitor.pastas if q[:1] == (marca,) and len(q) > 1 + tirar]
    raizes = {q[1 + tirar:]: r for q, r in leitor.raiz_tirada.items() if q[:1] == (marca,)}
    entrada_zip = entrada.is_file()
    com_aluno = [q for q, _, _ in itens if q and _owner(q)[0] and not q[0].lower().endswith(".zip")]
    for q in pastas:
        aluno = _owner(q + ("",))[0]
        if aluno and not q[0].lower().endswith(".zip"):
            pastas_alunos.add(aluno)
    for q, d, m in itens:
        if not q:
            continue
        if q[0].lower().endswith(".zip") and len(q) > 1:  # um zip solto na raiz: decidido depois
            zips.setdefault((parte, q[0], raizes.get(q[:1], "")), []).append((q, d, m))
            continue
        if len(q) == 1 and q[0].lower().endswith(".zip") and d is None and m:
            # o zip de um aluno que não abre: o aluno tem uma linha (sem notebooks), e não some da correção
            lidos.append((nfc(q[0][:-4]), q[0], d, m, parte))
            continue
        aluno, caminho = _owner(q)
        if not aluno and not com_aluno and (entrada_zip or several):
            # a entrada inteira é de um aluno só (ana.zip com os notebooks soltos ou em pastas de aula)
            aluno, caminho = (nfc(entrada.stem) if entrada_zip else parte), "/".join((parte, *q))
        lidos.append((aluno, caminho, d, m, parte))


def _class_parts_in_zips(zips: dict, lidos: list, pastas_alunos: set) -> tuple[set, dict]:
    """Os zips soltos que são partes da turma: os arquivos deles vão para ``lidos`` por aluno. Devolve as chaves
    desses zips e, para os outros (que :func:`_student_zips` dá a um aluno), o aviso a mostrar em
    ``nao-corrigidos.csv`` quando há pastas com nome de aluno dentro deles.

    Um zip solto entre as entregas só é uma parte da turma quando é claramente uma exportação da turma: tem nome de
    lote (``lote-2.zip``, ``turma-b.zip``, ``entregas.zip``, ``2026-03-10.zip``; :data:`_BATCH_NAME`) ou de uma
    aula ou notebook do curso (``aula-01-self-attention.zip``), e pastas de dois ou mais alunos. Qualquer outro zip
    é a entrega do aluno com o nome dele: as pastas de dentro são tentativas ou cópias desse aluno, nunca outros
    alunos. Sem isso, ``ana.zip`` com ``bia/`` (em branco) e ``carla/`` punha uma linha na Bia (que tomava a página
    de retorno dela), inventava a Carla e tirava a Ana da turma; e sessenta pastas inventadas contornavam o limite
    de arquivos por aluno (``correcao.motor.MAX_FILES_PER_STUDENT``). Pastas com nome de tentativa ou de versão
    (``tentativa-1``, ``versao-final``, ``v2``) nunca são alunos.

    Um zip de lote também não inventa uma turma: numa turma entregue aluno por aluno (pastas de aluno, ou zips de
    um aluno só), ele traz no máximo :data:`MAX_NEW_STUDENTS_PER_ZIP` alunos que não aparecem no resto da turma, ou
    tantos quantos a turma já tem, se forem mais; fora disso, no máximo :data:`MAX_STUDENTS_PER_ZIP`. Um zip
    acima do limite é tratado como a entrega de um aluno só (o do nome do zip), com o orçamento de um aluno e um
    aviso que diz por quê. O arquivo de uma parte da turma que cai num aluno com zip próprio leva no caminho o zip
    de onde veio (e a cópia dele, a do próprio zip, é corrigida antes: veja ``correcao.planning.limit_copies``)."""
    turma_em_zips: set = set()
    avisos: dict = {}
    nomes_de_zip = {same_student_name(nome_zip[:-4]) for _, nome_zip, _ in zips}
    colegas = {same_student_name(a) for a in pastas_alunos}
    dentro = {chave: _folders_inside(itens) for chave, itens in zips.items()}
    # a turma chegou aluno por aluno: pastas de aluno, ou zips (sem nome de lote) com os notebooks soltos ou na
    # pasta com o nome do zip
    por_aluno = bool(colegas) or any(
        not _class_export_name(nome_zip[:-4])
        and (same_student_name(raiz) == same_student_name(nome_zip[:-4])
             or (not raiz and any(len(q) == 1 for q in internos)))
        for (_, nome_zip, raiz), (internos, _) in dentro.items())
    lotes = {chave for chave in zips if len(dentro[chave][1]) >= 2 and _class_export_name(chave[1][:-4])
             and not {same_student_name(chave[1][:-4])} & (set(dentro[chave][1]) | colegas)}
    # os alunos que a turma já tem sem os zips de lote: as pastas e os zips de um aluno (e a pasta dentro deles)
    conhecidos = colegas | {same_student_name(c[1][:-4]) for c in zips if c not in lotes} \
        | {same_student_name(c[2]) for c in zips if c[2] and c not in lotes}
    limite = max(MAX_NEW_STUDENTS_PER_ZIP, len(conhecidos)) if por_aluno else MAX_STUDENTS_PER_ZIP
    for chave, itens in zips.items():
        internos, alunos_dentro = dentro[chave]
        stem, nome_zip = same_student_name(chave[1][:-4]), chave[1]
        if chave not in lotes:
            outros = sorted(a for s, a in alunos_dentro.items() if s != stem)
            if len(outros) >= 2 or any(s != stem and s in conhecidos | nomes_de_zip for s in alunos_dentro):
                avisos[chave] = (f"o zip “{nome_zip}” tem pastas com nome de aluno ({_some(outros)}): é a entrega de "
                                 f"“{chave[1][:-4]}” só, e as pastas contam como tentativas ou cópias desse aluno, "
                                 "nunca como outros alunos. Um zip solto entre as entregas só é uma parte da turma com "
                                 "nome de lote (lote-2.zip, turma-b.zip, entregas.zip); se este é uma parte da turma, "
                                 "renomeie-o assim e corrija de novo")
            continue
        novos = sorted(a for s, a in alunos_dentro.items() if s not in conhecidos)
        if len(novos) > limite:
            avisos[chave] = (f"o zip “{nome_zip}” tem pastas de {len(novos)} alunos que não aparecem no resto da "
                             f"turma ({_some(novos)}), mais que o limite de {limite} para um zip solto entre as "
                             f"entregas: foi tratado como a entrega de um aluno só, “{chave[1][:-4]}” (só os primeiros "
                             "arquivos são olhados), e não como uma parte da turma. Se é mesmo uma parte da turma, "
                             f"tire-o da pasta das entregas e passe-o na linha de comando (corrigir {nome_zip} ...)")
            continue
        turma_em_zips.add(chave)
        for (q, d, m), interno in zip(itens, internos):
            aluno, caminho = _owner(interno)
            if aluno:
                pastas_alunos.add(aluno)
                if same_student_name(aluno) in nomes_de_zip - {stem}:  # o aluno tem zip próprio: diz de onde veio
                    caminho = f"{nome_zip}/{caminho}"
            lidos.append((aluno, caminho if aluno else "/".join(q), d, m, nome_zip))
    return turma_em_zips, avisos


# um zip de lote solto entre as entregas, numa turma entregue aluno por aluno, traz no máximo este número de alunos
# que não aparecem no resto da turma (os atrasados, a metade da turma que um monitor recolheu), ou tantos quantos a
# turma já tem; numa pasta só com zips de lote, no máximo MAX_STUDENTS_PER_ZIP. Acima disso, o zip é de um aluno só
MAX_NEW_STUDENTS_PER_ZIP = 50
MAX_STUDENTS_PER_ZIP = 1000


def _folders_inside(itens: list) -> tuple[list, dict]:
    """(caminhos dentro do zip sem as pastas de embrulho, ``Downloads/turma/<aluno>/...``; as pastas de dentro com
    cara de aluno, nome comparável -> nome como está). Pastas de aula, de notebook, de tentativa ou de versão e
    zips não contam."""
    internos = [q[1:] for q, _, _ in itens]
    embrulho = _common_root(internos, [])
    internos = [q[embrulho:] if len(q) > embrulho else q for q in internos]
    alunos = {}
    for q in internos:
        aluno = _owner(q)[0] if len(q) > 1 else ""
        if aluno and not aluno.lower().endswith(".zip") and not _ATTEMPT_DIR.match(same_student_name(aluno)):
            alunos.setdefault(same_student_name(aluno), aluno)
    return internos, alunos


def _some(nomes: list, n: int = 5) -> str:
    """Os primeiros ``n`` nomes, e "..." se há mais."""
    return ", ".join(nomes[:n]) + (", ..." if len(nomes) > n else "")


def _class_export_name(stem: str) -> bool:
    """O nome de um zip (sem ``.zip``) é o de uma exportação da turma, e não o de um aluno: um lote
    (:data:`_BATCH_NAME`) ou uma aula, um módulo ou um notebook do curso."""
    return bool(_BATCH_NAME.search(same_student_name(stem))) or course_notebook_name(stem)


# pastas de tentativas e versões dentro da entrega de um aluno (nunca um aluno): tentativa-1, versao final, v2...
_ATTEMPT_DIR = re.compile(r"^(tentativa|attempt|try|vers[aã]o|version|v|entrega|envio|reentrega|submiss[aã]o|"
                          r"submission|rascunho|draft|final|antig[oa]|old|nov[oa]|new|c[oó]pia|copy|backup|bkp)"
                          r"[-_ .]*(\d+|final|nov[oa]|antig[oa])?$")
# nomes de zip que são um lote da turma, e não um aluno: lote-2.zip, turma-b.zip, entregas.zip, 2026-03-10.zip,
# nbgrader-export.zip
_BATCH_NAME = re.compile(r"(^|[-_ .])(lote|lotes|turma|parte|part|entregas|envios|submissions?|submitted|batch|class|"
                         r"downloads?|alunos|todos|moodle|nbgrader|export|exporta[cç][aã]o|reentregas|atrasad[oa]s)"
                         r"([-_ .\d]|$)|^[\d\W_]+$")


def same_student_name(nome: str) -> str:
    """O nome de um aluno para comparar zips, pastas e caminhos: ``Bob``, ``bob`` e ``BOB`` são o mesmo (NFC,
    sem diferença entre maiúsculas e minúsculas)."""
    return nfc(nome).casefold().strip()


def _resubmission_of(raiz: str, stem: str) -> bool:
    """O zip ``stem``.zip, com a pasta ``raiz`` (de um aluno da turma) e nada mais, é a reentrega desse aluno, e
    não a entrega de um aluno com o nome do zip? Só quando o nome do zip não pode ser o de outro aluno: um lote ou
    uma aula (:func:`_class_export_name`), uma tentativa (``reentrega.zip``, ``v2.zip``) ou um nome com o do
    próprio aluno (``Bruno.zip``, ``bruno-reentrega.zip``)."""
    r, s = same_student_name(raiz), same_student_name(stem)
    return (_class_export_name(stem) or _ATTEMPT_DIR.match(s) is not None
            or re.search(rf"(^|[-_ .]){re.escape(r)}([-_ .]|$)", s) is not None)


def _student_zips(zips: dict, lidos: list, pastas_alunos: set, avisos: dict) -> set[str]:
    """Os outros zips soltos são de um aluno: a reentrega de um aluno da turma (a pasta dentro do zip tem o nome
    dele, e o nome do zip não é o de outro aluno: :func:`_resubmission_of`) ou a entrega do aluno com o nome do
    zip, com o aviso de :func:`_class_parts_in_zips` (se houver) numa linha de ``nao-corrigidos.csv``. Devolve
    os alunos que só existem pelo nome de um zip."""
    alunos_de_zip: set[str] = set()
    for chave, itens in zips.items():
        _, nome_zip, raiz = chave
        stem = nome_zip[:-4]
        if raiz and raiz in pastas_alunos and not course_notebook_name(raiz) and _resubmission_of(raiz, stem):
            # lote-2.zip (ou Bruno.zip) → bruno/03-exercicios.ipynb, e "bruno" é um aluno da turma: a reentrega dele
            lidos += [(raiz, "/".join(q), d, m, nome_zip) for q, d, m in itens]
            continue
        # o zip de um aluno (ana.zip): o aluno tem o nome do zip
        alunos_de_zip.add(stem)
        if chave in avisos:
            lidos.append((stem, nome_zip, None, avisos[chave], nome_zip))
        lidos += [(stem, "/".join(q), d, m, nome_zip) for q, d, m in itens]
    return alunos_de_zip


def _files_by_student(lidos: list) -> list[SubmittedFile]:
    """Os arquivos lidos; quando um aluno aparece em mais de uma parte da turma, o caminho de cada arquivo dele
    começa pela parte de onde veio (o aviso sobre o próprio zip, com o caminho ``ana.zip``, já diz de onde veio)."""
    def diz_a_parte(caminho: str, parte: str) -> bool:
        return caminho == parte or caminho.startswith(parte + "/")

    partes_do_aluno: dict[str, set] = {}
    for aluno, caminho, _, _, parte in lidos:
        if aluno and not diz_a_parte(caminho, parte):  # o caminho ainda não diz de qual parte veio
            partes_do_aluno.setdefault(aluno, set()).add(parte)
    arquivos = []
    for aluno, caminho, dados, motivo, parte in lidos:
        if aluno and len(partes_do_aluno.get(aluno, ())) > 1 and not diz_a_parte(caminho, parte):
            caminho = f"{parte}/{caminho}"  # o aluno está em mais de uma parte da turma: de qual veio
        arquivos.append(SubmittedFile(aluno, caminho, dados, motivo))
    return arquivos
