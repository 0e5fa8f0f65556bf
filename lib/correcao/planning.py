"""Ler e planejar a turma: cada arquivo entregue vira uma :class:`GradingTask` (o notebook reconhecido e arrumado) ou
uma linha que diz por que não vai às caixas (arquivo inválido, desconhecido, cópias ou arquivos demais...)."""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .catalogo import (
    READ_TIMEOUT_S,
    Gradable,
    base_name,
    blank_answers,
    cell_source,
    identify_notebook,
    inspect_notebook,
    read_notebook,
    shares_course_cells,
    too_large,
)
from .entregas import ZIP_BROKEN, Submissions, same_student_name
from .nomes_antigos import recognize_version, translate_ids, version_note
from .politica import GradingPolicy
from .relatorio import Row, failed_row
from .saneamento import copied_from_solutions, sanitize


@dataclass
class GradingTask:
    """Um notebook a corrigir: quem entregou (como o professor vê), onde estava e a cópia arrumada."""

    student: str
    ident: str  # id seguro no nbgrader, um por arquivo (e00007): nomes de alunos nunca viram caminhos
    g: Gradable
    path: Path  # o notebook arrumado (:func:`correcao.saneamento.sanitize`)
    file: str  # o caminho dentro da entrega do aluno
    notes: list = field(default_factory=list)  # renomeado, células repetidas ou coladas...
    read_seconds: float = 0.0  # o que a leitura e o saneamento já gastaram do orçamento do notebook
    missing_checks: list = field(default_factory=list)  # verificações que a versão do curso do aluno não tinha
    old_version: str = ""  # a versão anterior do curso do notebook ("" = a atual)
    copied_answers: tuple = ((), ())  # (respostas iguais às soluções, verificações delas): copied_from_solutions
    foreign: str = ""  # reconhecido só pelo nome, sem nada do notebook do curso: o motivo (vai para revisar)


@functools.cache
def _warm_up_imports() -> None:
    """O que a leitura de qualquer entrega importa uma vez por processo (o nbformat e o nbgrader, que dá a versão de
    aluno de cada notebook: ~1,5 s numa máquina livre, dezenas de segundos numa disputada) fica fora do prazo de
    leitura de cada entrega (:data:`correcao.catalogo.READ_TIMEOUT_S`): antes, numa máquina ocupada, a primeira
    entrega da turma, honesta, saía ``grande_demais`` por esperar esses imports."""
    from ._importacao_rapida import sem_rfc3987

    sem_rfc3987()
    import nbformat  # noqa: F401

    from .catalogo import catalog, committed_student_copy

    # a versão de aluno vem de notebooks/ quando ele está em dia com solutions/; senão, do nbgrader (importado já)
    if not all(committed_student_copy(g.source) is not None for g in catalog().values()):
        from nbgrader.preprocessors import ClearSolutions  # noqa: F401


def plan_class(ent: Submissions, everything: dict, pasta: Path, alunos: set[str] | None = None,  # noqa: C901 — o orçamento de arquivos por aluno e as linhas de quem não vai às caixas
               politica: GradingPolicy | None = None) -> tuple[list[GradingTask], list[Row], list[tuple]]:
    """O que corrigir (notebooks reconhecidos, arrumados em ``pasta``), as linhas que não vão ao kernel
    (arquivo inválido, desconhecido, fora da pasta de um aluno, aluno sem notebook) e os arquivos que não são
    notebooks, para ``nao-corrigidos.csv`` (aluno, arquivo, motivo). Com ``alunos``, só os desses alunos
    (``""``: os soltos na raiz), com a mesma numeração interna da turma inteira.

    Cada aluno tem um orçamento (``max_files_per_student`` da ``politica``, :data:`MAX_FILES_PER_STUDENT` na padrão):
    só os primeiros notebooks dele (pela ordem do caminho) são lidos, e só os primeiros outros arquivos vão para
    ``nao-corrigidos.csv``; o resto vira uma linha só, ``arquivos_demais`` (e uma só em ``nao-corrigidos.csv``), com
    quantos eram. Um aluno com 5.000 notebooks minúsculos no zip não enche ``notas.csv`` e ``retorno/`` nem ocupa a
    correção da turma."""
    from collections import Counter

    politica = politica or GradingPolicy()
    max_files = politica.max_files_per_student

    pasta.mkdir(parents=True, exist_ok=True)
    plan: list[GradingTask] = []
    rows: list[Row] = []
    fora: list[tuple] = []
    com_notebook: set[str] = set()
    vistos: Counter = Counter()  # (aluno, é notebook) -> arquivos olhados
    demais: dict[tuple[str, bool], list[str]] = {}  # (aluno, é notebook) -> os caminhos além do orçamento
    for k, a in enumerate(ent.arquivos):
        if alunos is not None and a.aluno not in alunos:
            continue
        chave = (a.aluno, a.looks_like_notebook)
        vistos[chave] += 1
        if a.aluno and a.looks_like_notebook:
            com_notebook.add(a.aluno)
        if a.aluno and vistos[chave] > max_files:
            demais.setdefault(chave, []).append(a.caminho)
            continue
        if not a.looks_like_notebook:
            fora.append((a.aluno, a.caminho, a.motivo or "não é um notebook (.ipynb): não foi corrigido"))
            continue
        _warm_up_imports()  # uma vez, antes do prazo da primeira entrega
        t0 = time.monotonic()
        try:
            with _deadline(READ_TIMEOUT_S):
                item = _plan_one(k, a, everything, pasta)
        except _SlowRead:
            item = failed_row(a.aluno, None, base_name(a.nome), "grande_demais",
                              f"a leitura e o saneamento de “{a.caminho}” passaram de {READ_TIMEOUT_S:.0f} s: "
                              "não foi corrigido (notebook grande ou complexo demais)", arquivo=a.caminho)
        except Exception as exc:  # noqa: BLE001 - um notebook que a leitura não previu não derruba a turma
            item = failed_row(a.aluno, None, base_name(a.nome), "arquivo_invalido", _unreadable(a, exc),
                              arquivo=a.caminho)
        if isinstance(item, GradingTask):
            item.read_seconds = time.monotonic() - t0
            plan.append(item)
        else:
            rows.append(item)
    plan, rows = limit_copies(plan, rows, politica.max_copies)
    for (aluno, notebook), caminhos in sorted(demais.items()):
        exemplos = ", ".join(f"“{c}”" for c in caminhos[:3]) + (", ..." if len(caminhos) > 3 else "")
        tipo = "notebooks" if notebook else "outros arquivos"
        motivo = (f"o aluno entregou {max_files + len(caminhos)} {tipo}; só os {max_files} "
                  f"primeiros (pela ordem do caminho) foram olhados, e os outros {len(caminhos)} não foram lidos nem "
                  f"corrigidos ({exemplos}): entregue só os notebooks do curso")
        if notebook:
            rows.append(failed_row(aluno, None, "", "arquivos_demais", motivo,
                                   arquivo=f"({len(caminhos)} arquivos além do limite)"))
        else:
            fora.append((aluno, f"({len(caminhos)} arquivos além do limite)", motivo))
    for nome in ent.inseguros if alunos is None or "" in alunos else ():
        fora.append(("", nome, "caminho que sairia da pasta das entregas (..): não foi lido"))
    rows += _no_notebook_rows(ent, [a for a in ent.alunos if a not in com_notebook and (alunos is None or a in alunos)])
    return plan, rows, fora


# os padrões da política (correcao.politica), com os nomes de antes: cópias do mesmo notebook corrigidas por aluno (a
# entrega e duas reentregas) e notebooks (e, à parte, outros arquivos) olhados por aluno (as 3 cópias de cada um dos 10
# notebooks do curso, com folga; o resto vira uma linha ``arquivos_demais`` só, nunca uma linha e um retorno para cada)
MAX_COPIES = GradingPolicy.max_copies


MAX_FILES_PER_STUDENT = GradingPolicy.max_files_per_student


def limit_copies(plan: list[GradingTask], rows: list[Row],
                  max_copies: int = MAX_COPIES) -> tuple[list[GradingTask], list[Row]]:
    """Corrige no máximo ``max_copies`` cópias do mesmo notebook de cada aluno (as primeiras, na ordem do
    plano: a do caminho mais curto primeiro, e por último as que vieram do zip de outro aluno); as outras viram
    linhas ``copias_demais``, sem pontos. Sem isso, um aluno com 40 cópias renomeadas de um notebook que dorme
    ocupava a correção da turma por horas (cada cópia gasta o orçamento inteiro do notebook)."""
    from collections import Counter

    quantas = Counter((e.student, e.g.assignment, e.g.notebook) for e in plan)
    vistas: Counter = Counter()
    mantidas = set()
    # as cópias que vieram do zip de outro aluno (bob.zip/... na linha da ana) vão para o fim da fila: as plantadas
    # nunca tiram da correção a do próprio aluno
    for e in sorted(plan, key=lambda e: _from_another_zip(e.student, e.file)):
        chave = (e.student, e.g.assignment, e.g.notebook)
        vistas[chave] += 1
        if vistas[chave] <= max_copies:
            mantidas.add(id(e))
            continue
        rows.append(failed_row(e.student, e.g, e.g.notebook, "copias_demais",
                               f"o aluno entregou {quantas[chave]} cópias deste notebook e só as {max_copies} "
                               "primeiras (pela ordem do caminho) são corrigidas: esta não foi, e vale 0 (apague as "
                               "cópias que não valem e entregue de novo)", arquivo=e.file))
    return [e for e in plan if id(e) in mantidas], rows


def _from_another_zip(aluno: str, arquivo: str) -> bool:
    """O caminho ``arquivo`` começa pelo zip de outro aluno (``bob.zip/...`` numa linha da ana)."""
    primeiro = arquivo.split("/", 1)[0]
    return ("/" in arquivo and primeiro.lower().endswith(".zip")
            and same_student_name(primeiro[:-4]) != same_student_name(aluno))


def _unreadable(a, exc: Exception) -> str:
    """O motivo de um notebook em JSON válido que a leitura e o saneamento não conseguiram arrumar (células ou
    metadados de tipos inesperados): a estrutura que o nbformat recusa, se for o caso, e o tipo do erro."""
    estrutura = None
    with contextlib.suppress(Exception):
        nb, _ = read_notebook(a.dados.read_bytes())
        estrutura = inspect_notebook(nb) if nb is not None else None
    return (f"“{a.caminho}” não pôde ser arrumado para a correção ({estrutura or 'conteúdo de tipo inesperado'}; "
            f"{type(exc).__name__}): não foi corrigido (abra-o no JupyterLab, salve e entregue de novo)")


class _SlowRead(Exception):
    """A leitura e o saneamento de uma entrega passaram do limite de tempo."""


@contextlib.contextmanager
def _deadline(segundos: float):
    """Interrompe o bloco com :class:`_SlowRead` depois de ``segundos`` (SIGALRM; só na thread
    principal, onde a correção da turma roda; em outra thread, os limites de tamanho e de células bastam)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise _SlowRead

    anterior = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, segundos)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, anterior)


def _no_notebook_rows(ent: Submissions, sem_notebook: list[str]) -> list[Row]:
    """As linhas ``sem_notebooks`` dos alunos ``sem_notebook`` (os arquivos da turma lidos uma vez só)."""
    arquivos_de: dict[str, list] = {aluno: [] for aluno in sem_notebook}
    for a in ent.arquivos:
        if a.aluno in arquivos_de:
            arquivos_de[a.aluno].append(a)
    return [_no_notebook_row(aluno, arquivos_de[aluno]) for aluno in sem_notebook]


def _no_notebook_row(aluno: str, arquivos: list) -> Row:
    """A linha ``sem_notebooks`` de ``aluno``: o que havia na pasta dele (``arquivos``, os itens de
    ``Submissions.arquivos`` dele) e, se um zip dele não abriu, o que fazer."""
    tem = [a.caminho for a in arquivos]
    quebrados = [a.caminho for a in arquivos if a.motivo == ZIP_BROKEN]
    return failed_row(aluno, None, "", "sem_notebooks", "nenhum notebook (.ipynb) na pasta"
                      + (f" (há: {', '.join(tem[:5])}{'...' if len(tem) > 5 else ''})" if tem else "")
                      + (f"; o zip {', '.join(quebrados[:3])} não abre (incompleto ou danificado): peça ao aluno "
                         "que o envie de novo" if quebrados else ""))


def foreign_reason(nb: dict, g: Gradable, caminho: str) -> str:
    """O motivo de revisar um notebook com código que tem o nome de ``g`` mas nada dele (nenhum ``grade_id``,
    nenhuma célula protegida): outro notebook (de outra disciplina, um rascunho) ou o do curso refeito do zero,
    sem metadados; a correção o corrige como ``g``, mas a nota não vale sem o professor. ``""`` para um notebook do
    curso ou sem código (vazio: o zero dele é certo)."""
    if shares_course_cells(g, nb) or not any(c.get("cell_type") == "code" and cell_source(c)
                                            for c in nb.get("cells", [])):
        return ""
    return (f"“{caminho}” tem o nome de {g.notebook} ({g.assignment}), mas nenhuma célula desse notebook do curso "
            "(nem os metadados, nem o código das células protegidas): pode ser outro notebook; o professor decide")


# o que o aluno faz com um arquivo que não abre (vai no motivo e no retorno dele)
INVALID_FILE_ADVICE = ("; abra o notebook no JupyterLab (se ele não abrir, refaça-o a partir do notebook do curso), "
                       "salve e entregue de novo o .ipynb (o arquivo de notebook, não um PDF nem uma cópia de texto)")


def _plan_one(k: int, a, everything: dict, pasta: Path):  # noqa: C901 — uma recusa por passo da leitura de uma entrega
    """Uma entrega: a :class:`GradingTask` arrumada para corrigir, ou a :class:`Row` que diz por que não."""
    dados = None if (a.motivo or a.dados is None) else a.dados.read_bytes()
    excesso = too_large(len(dados)) if dados is not None else None
    if excesso:
        return failed_row(a.aluno, None, base_name(a.nome), "grande_demais", excesso, arquivo=a.caminho)
    nb, problema = (None, a.motivo) if dados is None else read_notebook(dados)
    excesso = too_large(len(dados), nb) if nb is not None else None
    if excesso:
        return failed_row(a.aluno, None, base_name(a.nome), "grande_demais", excesso, arquivo=a.caminho)
    versao = recognize_version(nb, everything) if problema is None else None
    if versao is not None:  # uma versão anterior do curso: os ids antigos viram os de hoje
        nb = translate_ids(nb, versao)
    g, nota = identify_notebook(everything, nb, a.caminho)
    if g is None or (versao is not None and (g.assignment, g.notebook) != (versao.aula, versao.notebook)):
        versao = None
    rotulo = g.notebook if g else base_name(a.nome)
    if not a.aluno:
        return failed_row("", g, rotulo, "fora_de_pasta",
                          f"“{a.caminho}” está solto na raiz das entregas, fora da pasta de um aluno: não foi "
                          "corrigido (ponha-o em <aluno>/ e corrija de novo)", arquivo=a.caminho)
    if problema is None and g is not None:
        problema = inspect_notebook(nb)
    if problema:
        return failed_row(a.aluno, g, rotulo, "arquivo_invalido", problema + INVALID_FILE_ADVICE, arquivo=a.caminho)
    if g is None:
        return failed_row(a.aluno, None, rotulo, "desconhecido",
                          f"“{a.caminho}” não é um notebook de exercício ou projeto do curso", arquivo=a.caminho)
    ausentes = [gid for gid in g.checks if gid not in versao.verificacoes] if versao else []
    copiadas = copied_from_solutions(nb, g)
    outro = foreign_reason(nb, g, a.caminho)
    arrumado, notas = sanitize(nb, g, everything, versao=versao)
    if versao is not None:
        notas.insert(0, version_note(versao, ausentes))
    em_branco = blank_answers(arrumado, g)
    if em_branco:
        notas.append(f"{len(em_branco)} resposta(s) escrita(s) ainda com o esboço ✍️ (valem 0 na correção do "
                     f"professor): {', '.join(gid for gid, _, _ in em_branco)}")
    path = pasta / f"e{k:05d}.ipynb"
    path.write_text(json.dumps(arrumado, ensure_ascii=False), encoding="utf-8")
    return GradingTask(a.aluno, f"e{k:05d}", g, path, a.caminho, ([nota] if nota else []) + notas,
                       missing_checks=ausentes, copied_answers=copiadas, foreign=outro,
                       old_version=f"versão anterior do curso ({versao.descricao})" if versao else "")
