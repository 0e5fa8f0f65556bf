"""O que existe para corrigir: os notebooks de ``solutions/``, as células que valem nota e o esboço do aluno.

``solutions/`` é a fonte de tudo: os notebooks de aluno (``scripts/gerar_alunos.py``) e o curso do
nbgrader da correção saem dela com o mesmo esboço (:data:`CODE_STUB`, :data:`TEXT_STUB`).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .entregas import nfc

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
CHECKS = ROOT / "lib" / "atencao" / "checks"

CODE_STUB = "# SEU CÓDIGO AQUI\nraise NotImplementedError(\"Exercício ainda não resolvido\")"
TEXT_STUB = "✍️ *Escreva a sua resposta aqui (dê dois cliques nesta célula para editar).*"


@dataclass
class Gradable:
    """Um notebook corrigível: a aula (tarefa do nbgrader), o nome e o que vale cada célula."""

    assignment: str
    notebook: str
    source: Path
    cells: dict = field(default_factory=dict)  # grade_id -> (tipo, pontos, automática?)

    @property
    def max_auto(self) -> float:
        return sum(p for _, p, auto in self.cells.values() if auto)

    @property
    def checks(self) -> list[str]:
        """``grade_id`` das verificações automáticas, na ordem do notebook."""
        return [gid for gid, (_, _, auto) in self.cells.items() if auto]

    def zero_scores(self) -> dict:
        """Zero em cada verificação automática (entrega que não pôde ser executada)."""
        return {gid: 0.0 for gid in self.checks}


@functools.lru_cache(maxsize=None)  # a varredura pergunta a cada célula: a pasta é lida uma vez
def lesson_modules(checks: Path = CHECKS) -> frozenset[str]:
    """Os nomes dos módulos de verificação de cada aula (``aula01``, ``aula02``, ...), descobertos pelos arquivos
    ``lib/atencao/checks/aulaNN.py`` que existem: uma aula nova entra sem editar nenhuma lista.

    Parameters
    ----------
    checks : Path
        A pasta das verificações (padrão: ``lib/atencao/checks`` deste curso).

    Returns
    -------
    frozenset of str
        Os nomes ``aulaNN`` (vazio se a pasta não existe).
    """
    return frozenset(path.stem for path in checks.glob("aula*.py") if re.fullmatch(r"aula\d{2}", path.stem))


def nbgrader_meta(cell) -> dict:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbg = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return nbg if isinstance(nbg, dict) else {}


def is_check(cell) -> bool:
    """Célula de verificação: código, vale nota, não é resposta do aluno."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def nbgrader_cells(nb: dict) -> dict:
    """grade_id -> (cell_type, pontos, automática?) das células que valem nota."""
    out = {}
    for cell in nb.get("cells", []):
        meta = nbgrader_meta(cell)
        if meta.get("grade"):
            out[meta["grade_id"]] = (cell.get("cell_type"), float(meta.get("points", 0)), is_check(cell))
    return out


def catalog(solutions: Path = SOLUTIONS) -> dict[tuple, Gradable]:
    """Todos os notebooks de ``solutions/``, por (aula, notebook)."""
    found: dict[tuple, Gradable] = {}
    for path in sorted(solutions.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            nb = json.loads(path.read_text(encoding="utf-8"))
            found[(path.parent.name, path.stem)] = Gradable(path.parent.name, path.stem, path, nbgrader_cells(nb))
    return found


def grade_ids(nb: dict) -> list[str]:
    """Os ``grade_id`` das células, na ordem (com repetições), só os que são texto."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    out = []
    for c in cells if isinstance(cells, list) else []:
        gid = nbgrader_meta(c).get("grade_id") if isinstance(c, dict) else None
        if isinstance(gid, str) and gid:
            out.append(gid)
    return out


_COPY_SUFFIX = re.compile(
    r"(-copy\d*|\s*\(\d+\)|\s*-\s*c[oó]pia(\s*\(\d+\))?|\s*\(c[oó]pia\)|-checkpoint|_\d+|\s+\d+)$")


def base_name(nome: str) -> str:
    """O nome de um arquivo sem as marcas de cópia ou download, em minúsculas: ``03-Exercicios-Copy1.ipynb``,
    ``03-exercicios (1).ipynb``, ``Cópia de 03-exercicios.ipynb``, ``03-exercicios.ipynb.txt`` → ``03-exercicios``."""
    n = nfc(nome).lower().strip()
    n = n[: n.index(".ipynb")] if ".ipynb" in n else n.rsplit(".", 1)[0]
    n = re.sub(r"^(c[oó]pia de|copy of)\s+", "", n)
    while True:
        menor = _COPY_SUFFIX.sub("", n).strip()
        if menor == n:
            break
        n = menor
    return re.sub(r"[\s_]+", "-", n)


def _without_number(nome: str) -> str:
    return re.sub(r"^\d+[-_ ]*", "", nome)


def identify_notebook(everything: dict[tuple, Gradable], nb: dict | None, caminho: str) -> tuple[Gradable | None, str]:
    """Qual notebook do curso é o arquivo ``caminho`` (dentro da entrega) de conteúdo ``nb``.

    Pelas células: os ``grade_id`` são únicos no curso, então o notebook com mais ids em comum é ele, seja
    qual for o nome do arquivo (``03-exercicios-Copy1.ipynb``, ``exercicios.ipynb``, o ``03-exercicios`` da
    Aula 3). Sem ids (arquivo vazio, quebrado ou sem metadados), pelo nome sem as marcas de cópia e, se o
    nome existe em várias aulas, pela pasta da aula no caminho; empate: a primeira aula.

    Returns
    -------
    (Gradable ou None, nota)
        ``nota`` diz, em pt-BR, que o arquivo foi reconhecido com outro nome ("" se o nome é o do curso).
    """
    nome = caminho.rsplit("/", 1)[-1]
    base = base_name(nome)
    pastas = set(caminho.split("/")[:-1])
    ids = set(grade_ids(nb)) if nb is not None else set()
    todos = sorted(everything.values(), key=lambda g: (g.assignment, g.notebook))

    def preference(g: Gradable) -> tuple:
        return (g.notebook == base, g.assignment in pastas)

    comum = {id(g): len(ids & set(all_ids(g.source))) for g in todos}
    como = "pelas células"
    if not any(comum.values()) and nb is not None:  # sem metadados: pelo código das células protegidas
        fontes = {cell_source(c) for c in nb.get("cells", [])} - {""}
        comum = {id(g): len(fontes & _protected_sources(g.source)) for g in todos}
        comum = {k: (v if v >= 2 else 0) for k, v in comum.items()}
        como = "pelo código das células protegidas"
    melhor = max(comum.values(), default=0)
    if melhor:
        candidatos = [g for g in todos if comum[id(g)] == melhor]
        pelas_celulas = True
    else:
        candidatos = ([g for g in todos if g.notebook == base]
                      or [g for g in todos if _without_number(g.notebook) == _without_number(base)])
        pelas_celulas = False
    if not candidatos:
        return None, ""
    g = max(candidatos, key=preference)  # max devolve o primeiro entre os empatados
    if nome == f"{g.notebook}.ipynb":
        return g, ""
    como = como if pelas_celulas else "pelo nome"
    return g, (f"arquivo renomeado: “{caminho}” foi reconhecido {como} como {g.notebook} "
               f"({g.assignment}) e corrigido como tal")


def cell_source(cell) -> str:
    """O código/texto de uma célula lida do JSON (``source`` em texto ou em lista de linhas), sem espaços nas pontas."""
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    return ("".join(src) if isinstance(src, list) else str(src)).strip()


def shares_course_cells(g: Gradable, nb: dict) -> bool:
    """Se ``nb`` tem algo do notebook ``g`` do curso: um ``grade_id`` dele ou o código de uma célula protegida.
    Sem nada disso, ele foi reconhecido só pelo nome (:func:`identify_notebook`) e pode ser outro notebook."""
    if set(grade_ids(nb)) & set(all_ids(g.source)):
        return True
    return bool({cell_source(c) for c in nb.get("cells", [])} & _protected_sources(g.source))


@functools.lru_cache(maxsize=None)
def _protected_sources(source: Path) -> frozenset:
    """O código das células protegidas e de verificação de ``source`` (que o aluno não muda)."""
    return frozenset(c.source.strip() for c in original_cells(source).values()
                     if nbgrader_meta(c).get("locked") and c.source.strip())


@functools.lru_cache(maxsize=None)
def check_titles(source: Path) -> dict[str, str]:
    """O título da seção de cada célula com ``grade_id`` do notebook ``source``: o último cabeçalho markdown antes
    dela, sem os ``#`` e a ênfase, em até 80 caracteres ("Exercício 3 (prático): pulou e alto parecidos"); o
    retorno mostra cada verificação com ele, como o aluno a vê no notebook."""
    titulos, atual = {}, ""
    for c in json.loads(Path(source).read_text(encoding="utf-8")).get("cells", []):
        if c.get("cell_type") == "markdown":
            for linha in cell_source(c).splitlines():
                if linha.startswith("#"):
                    atual = linha.lstrip("#").replace("*", "").replace("`", "").strip()
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid:
            titulos[gid] = atual if len(atual) <= 80 else atual[:79] + "…"
    return titulos


@functools.lru_cache(maxsize=None)
def all_ids(source: Path) -> tuple[str, ...]:
    """Todos os ``grade_id`` do notebook de solução ``source`` (também os das células só protegidas)."""
    return tuple(grade_ids(json.loads(source.read_text(encoding="utf-8"))))


MAX_NOTEBOOK_BYTES = 20 * 2**20  # o maior notebook do curso, com as saídas, tem ~1,1 MB
MAX_CELLS = 500  # o maior notebook do curso tem 39 células
READ_TIMEOUT_S = 20.0  # leitura, identificação e saneamento de uma entrega


def too_large(tamanho: int, nb: dict | None = None) -> str | None:
    """Motivo em pt-BR para recusar, antes de qualquer trabalho, uma entrega grande demais para ser um
    notebook do curso (``tamanho`` em bytes; ``nb`` já lido, para contar as células), ou ``None``.

    Os limites (:data:`MAX_NOTEBOOK_BYTES`, :data:`MAX_CELLS`) são folgados para qualquer notebook
    do curso, com as saídas; sem eles, um notebook de 60 000 células vazias (3,5 MB) levava mais de 20 min
    só no saneamento, fora da caixa."""
    if tamanho > MAX_NOTEBOOK_BYTES:
        return (f"notebook grande demais ({tamanho / 2**20:.1f} MB; o limite é {MAX_NOTEBOOK_BYTES // 2**20} MB): "
                "não foi corrigido (apague as saídas grandes e entregue de novo)")
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        return (f"notebook com células demais ({len(cells)}; o limite é {MAX_CELLS}): não foi corrigido "
                "(os notebooks do curso têm menos de 50; apague as células vazias ou repetidas)")
    return None


def read_notebook(dados: bytes) -> tuple[dict | None, str | None]:
    """(notebook, None) ou (None, motivo em pt-BR para não corrigir: vazio, não JSON, não notebook)."""
    if not dados.strip():
        return None, "arquivo vazio"
    try:
        nb = json.loads(dados.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # JSON inválido, aninhado ou com números enormes de propósito
        return None, "o arquivo não é um notebook (não é JSON válido)"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None, "o arquivo é JSON, mas não é um notebook do Jupyter"
    try:  # "\ud800" é JSON válido, mas não é texto: nada adiante (hash, HTML, CSV) o aceitaria
        json.dumps(nb, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return None, ("o arquivo tem texto inválido (um caractere substituto isolado, como \\ud800, que não existe "
                      "em UTF-8)")
    except RecursionError:
        return None, "o arquivo não é um notebook (não é JSON válido)"
    return nb, None


def inspect_notebook(nb: dict) -> str | None:
    """Motivo para não corrigir um notebook já lido (estrutura que o nbformat recusa), ou ``None``."""
    try:
        import warnings

        import nbformat

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # avisos do nbformat sobre ids de células: não são do professor
            nbformat.validate(nbformat.from_dict(nb))
    except Exception as exc:  # noqa: BLE001
        return f"notebook com estrutura inválida ({type(exc).__name__})"
    return None


def cell_label(cells: list, index: int) -> str:
    """Como o aluno acha a célula ``index``: ``célula 14 (aula01-ex3-verificacao, em “Exercício 3 — ...”)``,
    com o título da seção mais próxima acima dela."""
    if not 0 <= index < len(cells):
        return "o fim do notebook"
    gid = nbgrader_meta(cells[index]).get("grade_id")
    titulo = ""
    for cell in reversed(cells[:index + 1]):
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            linhas = [ln.lstrip("#").strip() for ln in src.splitlines() if ln.startswith("#")]
            if linhas:
                titulo = linhas[-1][:70]
                break
    detalhes = [x for x in (gid if isinstance(gid, str) else "", f"em “{titulo}”" if titulo else "") if x]
    return f"célula {index + 1}" + (f" ({', '.join(detalhes)})" if detalhes else "")


def blank_answers(nb: dict, g: Gradable) -> list[tuple[str, int, float]]:
    """Respostas escritas (corrigidas pelo professor) ainda iguais ao esboço que o aluno recebeu (o ✍️):
    ``(grade_id, índice da célula, pontos)``. O nbgrader dá 0 a elas sem perguntar ao professor."""
    originais = original_cells(g.source)
    out = []
    for index, cell in enumerate(nb.get("cells", [])):
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id")
        original = originais.get(gid) if isinstance(gid, str) else None
        if original is None or not meta.get("solution") or not meta.get("grade") or cell.get("cell_type") != "markdown":
            continue
        if cell_source(cell) in (original.source.strip(), TEXT_STUB.strip()):
            pontos = original.metadata["nbgrader"].get("points", 0)
            out.append((gid, index, float(pontos) if isinstance(pontos, (int, float)) else 0.0))
    return out


def student_version(solution):
    """Versão de aluno de um notebook de solução (cópia; o original não muda), com o esboço do curso."""
    import nbformat
    from nbgrader.preprocessors import ClearSolutions

    nb = nbformat.from_dict(solution)
    pre = ClearSolutions(code_stub={"python": CODE_STUB}, text_stub=TEXT_STUB, enforce_metadata=True)
    nb, _ = pre.preprocess(nb, {})
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


DIGEST_KEY = "solucao"  # em metadata["curso"] do notebook de aluno: a solution_digest da solução de onde ele veio


def solution_digest(nb) -> str:
    """A impressão digital do que a versão de aluno de um notebook de solução ``nb`` (dict ou ``NotebookNode``) tira
    dele: o tipo, o id, o texto, os metadados do nbgrader e as tags de cada célula (as saídas não contam: executar a
    solução de novo não a muda). 16 dígitos hexadecimais (SHA-256)."""
    import hashlib

    celulas = [[c.get("cell_type"), c.get("id"), cell_source(c), c.get("metadata", {}).get("nbgrader"),
                c.get("metadata", {}).get("tags")] for c in nb.get("cells", [])]
    return hashlib.sha256(json.dumps(celulas, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def committed_student_copy(source: Path):
    """O notebook de aluno de ``notebooks/`` que ``scripts/gerar_alunos.py`` escreveu a partir da solução ``source``
    como ela está agora (a :func:`solution_digest` dela anotada nele), sem as saídas; ``None`` se ele não existe ou
    veio de outra versão da solução (editada depois do ``make alunos``). Evita o nbgrader (~1,5 s de import) na
    leitura das entregas."""
    import nbformat

    source = Path(source).resolve()
    try:
        aluno = ROOT / "notebooks" / source.relative_to(SOLUTIONS.resolve())
        nb = nbformat.read(aluno, as_version=4)
        solucao = json.loads(source.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return None
    if nb.metadata.get("curso", {}).get(DIGEST_KEY) != solution_digest(solucao):
        return None
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


@functools.lru_cache(maxsize=None)
def original_cells(source: Path) -> dict:
    """Células da versão de aluno de ``source`` (a que o aluno recebeu), por ``grade_id``: a de ``notebooks/``, se
    ela veio desta solução (:func:`committed_student_copy`), ou a que :func:`student_version` faz agora."""
    import nbformat

    nb = committed_student_copy(source)
    if nb is None:
        nb = student_version(nbformat.read(source, as_version=4))
    return {nbgrader_meta(c).get("grade_id"): c for c in nb.cells if nbgrader_meta(c).get("grade_id")}


def _without_no_ops(tree):
    """``tree`` sem as instruções que não fazem nada: docstrings e outras expressões soltas que são só uma constante,
    um nome ou um atributo (``...``, ``0``, ``x``, ``np.pi``) e os ``pass`` (um bloco que fica vazio ganha um
    ``pass``). A cópia de ``solutions/`` com um ``pass`` ou um ``...`` a mais tem a mesma impressão digital."""
    import ast

    def inutil(node) -> bool:
        return isinstance(node, ast.Pass) or (isinstance(node, ast.Expr)
                                              and isinstance(node.value, (ast.Constant, ast.Name, ast.Attribute)))

    for node in ast.walk(tree):
        for campo in ("body", "orelse", "finalbody"):
            bloco = getattr(node, campo, None)
            if isinstance(bloco, list) and bloco and all(isinstance(n, ast.stmt) for n in bloco):
                setattr(node, campo, [n for n in bloco if not inutil(n)] or
                        ([ast.Pass()] if campo == "body" and not isinstance(node, ast.Module) else []))
    return tree


def _local_names(tree):
    """``tree`` com os nomes que a resposta cria (atribuições, laços, ``with``, parâmetros) trocados por ``_0``,
    ``_1``... na ordem em que aparecem: a cópia de ``solutions/`` com as variáveis renomeadas tem a mesma impressão
    digital. Os nomes de fora (``np``, ``atencao``, as funções chamadas) e os atributos ficam como estão."""
    import ast

    criados = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    criados |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    novos: dict[str, str] = {}

    class _Trocar(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in criados:
                node.id = novos.setdefault(node.id, f"_{len(novos)}")
            return node

        def visit_arg(self, node):
            if node.arg in criados:
                node.arg = novos.setdefault(node.arg, f"_{len(novos)}")
            self.generic_visit(node)
            return node

    return _Trocar().visit(tree)


SOLUTION_MARK = re.compile(r"^\s*#+\s*(BEGIN|END) SOLUTION\s*$")


def answer_fingerprint(fonte: str, cell_type: str = "code") -> str:
    """Impressão digital de uma resposta, para achar uma entrega igual às soluções: o código sem comentários,
    docstrings, linhas em branco, formatação e instruções que não fazem nada (a árvore sintática do Python, sem
    ``pass`` nem expressões soltas: :func:`_without_no_ops`); um texto sem a formatação, os
    espaços e as maiúsculas. Duas respostas com a mesma impressão são a mesma resposta (a cópia de
    ``solutions/`` com outros comentários, outra indentação ou as marcas ``### BEGIN SOLUTION``).

    Returns
    -------
    str
        16 dígitos hexadecimais (SHA-256), ``""`` para uma resposta vazia.
    """
    import ast
    import hashlib

    fonte = "\n".join(ln for ln in str(fonte).splitlines() if not SOLUTION_MARK.match(ln))
    if cell_type == "code":
        try:
            arvore = _without_no_ops(ast.parse(fonte))
            # as funções de uma célula em qualquer ordem (as quatro peças do passo 1 do projeto da Aula 6), e
            # as variáveis da resposta com qualquer nome
            arvore.body.sort(key=lambda n: (isinstance(n, ast.FunctionDef), getattr(n, "name", "")))
            normal = ast.dump(_local_names(arvore), annotate_fields=False)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            normal = "\n".join(ln.split("#", 1)[0].strip() for ln in fonte.splitlines() if ln.split("#", 1)[0].strip())
        if normal in ("Module([], [])", ""):
            return ""
    else:
        normal = " ".join(re.sub(r"[*_`#>]+", " ", nfc(fonte)).lower().split())
        if not normal:
            return ""
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()[:16]


def cell_fingerprint(cell) -> str:
    """Impressão digital de uma célula (tipo e texto sem espaços nas pontas), para reconhecer a versão do curso."""
    import hashlib

    tipo = cell.get("cell_type", "") if isinstance(cell, dict) else ""
    return hashlib.sha256(f"{tipo}\0{cell_source(cell)}".encode("utf-8")).hexdigest()[:12]


@functools.lru_cache(maxsize=None)
def checks_of_answers(source: Path) -> dict[str, tuple[str, ...]]:
    """Resposta de código -> as verificações que a conferem (as que vêm depois dela, até a próxima resposta de
    código), no notebook de solução ``source``."""
    out: dict[str, list] = {}
    atual = None
    for cell in json.loads(Path(source).read_text(encoding="utf-8"))["cells"]:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.get("cell_type") == "code":
            atual = meta.get("grade_id")
            out.setdefault(atual, [])
        elif is_check(cell) and atual:
            out[atual].append(meta["grade_id"])
    return {k: tuple(v) for k, v in out.items()}


@functools.lru_cache(maxsize=None)
def solution_fingerprints(source: Path) -> dict[str, str]:
    """Resposta (``grade_id``) -> impressão digital da resposta de ``solutions/`` (:func:`answer_fingerprint`)."""
    out = {}
    for cell in json.loads(Path(source).read_text(encoding="utf-8"))["cells"]:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and meta.get("grade_id"):
            out[meta["grade_id"]] = answer_fingerprint(cell_source(cell), cell.get("cell_type", "code"))
    return out


@dataclass(frozen=True)
class Lesson:
    """Uma aula do curso, achada nas pastas (nunca numa lista escrita à mão).

    ``folder`` é o nome da pasta (``aula-01-self-attention``), igual em ``notebooks/modulo-NN/`` e em
    ``solutions/modulo-NN/``; ``module`` é o módulo das verificações (``aula01`` →
    ``lib/atencao/checks/aula01.py``); ``sections`` são os notebooks do aluno, na ordem do número
    (``01-teoria``...); ``max_points`` dá, para cada notebook corrigível, o máximo das verificações automáticas.
    """

    folder: str
    module: str
    sections: tuple[str, ...]
    max_points: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def number(self) -> int:
        return int(self.module[len("aula"):])


_PASTA_DE_AULA = re.compile(r"aula-(\d{2})(?:-[a-z0-9-]+)?")


def lessons(root: Path = ROOT) -> list[Lesson]:
    """As aulas de ``notebooks/modulo-*/aula-NN-*/``, na ordem do número, com as seções, o módulo de
    verificações e o máximo de cada notebook de ``solutions/`` (o mesmo :func:`catalog` da correção)."""
    gradable = catalog(root / "solutions")
    found = []
    for folder in sorted((root / "notebooks").glob("modulo-*/aula-*")):
        m = _PASTA_DE_AULA.fullmatch(folder.name)
        if not folder.is_dir() or not m:
            continue
        sections = tuple(sorted(p.stem for p in folder.glob("*.ipynb")))
        points = {nb: g.max_auto for (aula, nb), g in gradable.items() if aula == folder.name}
        found.append(Lesson(folder.name, f"aula{m.group(1)}", sections, points))
    return sorted(found, key=lambda lesson: lesson.number)
