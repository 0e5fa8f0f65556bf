"""Acidentes de edição que não podem custar a nota: o notebook é arrumado antes de ir para o nbgrader.

O nbgrader exige um ``grade_id`` por célula e recusa o notebook inteiro (0 ponto, com "…use an old
version") quando um id aparece duas vezes ou quando há células de outro notebook. Isso acontece sem má
intenção: no JupyterLab, copiar e colar uma célula copia também os metadados; colar uma célula de outro
notebook traz o id de lá. Aqui, antes da correção:

- **verificação repetida**: vale a última cópia (é a que vê mais código do aluno; colar acima de tudo é o
  acidente comum) e as outras saem; o nbgrader ainda restaura o código original dela;
- **resposta repetida**: a primeira é a resposta; as outras continuam no notebook como células comuns (o
  código roda na mesma ordem em que roda para o aluno);
- **célula protegida repetida**: fica a primeira;
- **célula de outro notebook** (id que não é deste notebook): verificações e células protegidas saem;
  respostas ficam como células comuns;
- metadados do nbgrader sem ``grade_id`` válido saem (a célula fica);
- **metadados perdidos** (uma célula protegida ou de verificação com o código original, mas sem os
  metadados, como quando se copia o notebook célula por célula): voltam;
- **célula protegida ou de verificação apagada**: volta, com o código original, logo depois da célula
  que vinha antes dela no notebook do curso (ela não pode ser mudada pelo aluno, então recolocá-la só
  devolve o que a correção já usaria);
- **nomes de uma versão anterior do curso** (as funções dos exercícios tinham nomes em português): a resposta
  ganha ``nome_atual = nome_antigo`` no fim (veja :mod:`correcao.nomes_antigos`);
- **linhas acrescentadas a uma célula protegida** (ex.: um ``import math`` na célula de importações): o
  nbgrader volta a célula ao original; as linhas novas rodam logo depois, numa célula comum (são código
  do aluno, varrido e conferido como qualquer outro). Numa verificação, nada do que foi mudado conta.

Cada arrumação vira uma nota, em pt-BR, na linha de ``notas.csv`` e no ``validar``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import textwrap

from .catalogo import Gradable, all_ids, cell_source, nbgrader_meta, original_cells
from .nomes_antigos import RENAMED_FUNCTIONS, update_answer


def _kind(cell) -> str:
    """``"resposta"``, ``"verificacao"`` ou ``"protegida"``, pelos metadados do nbgrader da célula."""
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return "resposta"
    if meta.get("grade"):
        return "verificacao"
    return "protegida"


def _unmark(cell: dict) -> None:
    cell.get("metadata", {}).pop("nbgrader", None)


def sanitize(nb: dict, g: Gradable, everything: dict | None = None, versao=None) -> tuple[dict, list[str]]:
    """Devolve (cópia arrumada de ``nb``, notas em pt-BR). ``nb`` é o JSON do notebook (não muda).

    Parameters
    ----------
    nb : dict
        O notebook entregue, como lido do arquivo (já conferido por :func:`catalogo.read_notebook`).
    g : Gradable
        O notebook do curso que ele é (:func:`catalogo.identify_notebook`).
    everything : dict, opcional
        O catálogo, para dizer de onde veio uma célula colada de outro notebook.
    versao : correcao.nomes_antigos.OldVersion, opcional
        A versão anterior do curso de que ``nb`` é (já com os ids de hoje, :func:`nomes_antigos.translate_ids`):
        as verificações que ela não tinha não voltam, e os nomes antigos das funções são os dela.
    """
    nb = copy.deepcopy(nb)
    originals = original_cells(g.source)
    cells = nb["cells"]
    occurrences, notes = _grade_ids_in(cells)
    remove, foreign, duplicate_notes = _resolve_duplicates(cells, occurrences, originals)
    notes += duplicate_notes
    if foreign:
        notes.append(_foreign_cells_note(foreign, g, everything))
    nb["cells"] = [c for i, c in enumerate(cells) if i not in remove]
    missing = set(g.checks) - set(versao.verificacoes) if versao is not None else set()
    notes += _restore(nb, {gid: c for gid, c in originals.items() if gid not in missing}, versao is not None)
    notes += _rename_old_functions(nb, RENAMED_FUNCTIONS | versao.funcoes if versao is not None else RENAMED_FUNCTIONS)
    _unique_ids(nb["cells"])
    return nb, notes


def _unique_ids(cells: list) -> None:
    """Num notebook com ids de célula (nbformat 4.5), uma célula sem id ou com o id de outra (colada duas vezes)
    ganha um id estável (:func:`_stable_id`): o nbformat sortearia um a cada correção, e o retorno mudaria."""
    if not any(isinstance(c, dict) and "id" in c for c in cells):
        return
    vistos: set = set()
    for i, cell in enumerate(cells):
        if isinstance(cell, dict):
            if not isinstance(cell.get("id"), str) or cell["id"] in vistos:
                cell.update(_stable_id(cells, f"celula:{i}"))
            vistos.add(cell["id"])


def _grade_ids_in(cells: list) -> tuple[dict[str, list[int]], list[str]]:
    """``grade_id`` -> índices das células que o têm; metadados sem ``grade_id`` válido saem (com uma nota) e as
    saídas de uma execução antiga são apagadas."""
    occurrences: dict[str, list[int]] = {}
    notes: list[str] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        meta = cell.get("metadata")
        if isinstance(meta, dict) and "nbgrader" in meta:
            gid = nbgrader_meta(cell).get("grade_id")
            if not isinstance(gid, str) or not gid:
                _unmark(cell)
                notes.append(f"célula {i + 1}: metadados de correção incompletos (sem grade_id), ignorados")
                continue
            occurrences.setdefault(gid, []).append(i)
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None  # nada de uma execução antiga conta
    return occurrences, notes


def _resolve_duplicates(cells: list, occurrences: dict, originals: dict) -> tuple[set[int], list[str], list[str]]:
    """Ids repetidos e células de outro notebook (veja o docstring do módulo). Devolve os índices a remover, os
    ``grade_id`` de outro notebook e as notas das repetições."""
    remove: set[int] = set()
    foreign: list[str] = []
    notes: list[str] = []
    for gid, idx in occurrences.items():
        if gid not in originals:
            for i in idx:
                if _kind(cells[i]) == "resposta":
                    _unmark(cells[i])
                else:
                    remove.add(i)
            foreign.append(gid)
            continue
        if len(idx) == 1:
            continue
        kind = _kind(originals[gid])
        if kind == "verificacao":
            remove.update(idx[:-1])
            notes.append(f"a verificação {gid} aparecia {len(idx)} vezes (célula colada de novo?): "
                         "valeu a última cópia, as outras foram ignoradas")
        elif kind == "resposta":
            for i in idx[1:]:
                _unmark(cells[i])
            notes.append(f"a resposta {gid} aparecia {len(idx)} vezes (célula colada de novo?): vale a primeira; "
                         "as outras ficaram como células comuns")
        else:
            remove.update(idx[1:])
            notes.append(f"a célula protegida {gid} aparecia {len(idx)} vezes: as cópias foram ignoradas")
    return remove, foreign, notes


def _foreign_cells_note(foreign: list[str], g: Gradable, everything: dict | None) -> str:
    """A nota das células coladas de outro notebook, com o notebook de onde vieram (se ``everything`` o diz)."""
    origin = ""
    if everything:
        owners = {gid: g2 for g2 in everything.values() if g2 is not g for gid in all_ids(g2.source)}
        sources = sorted({f"{owners[gid].notebook} ({owners[gid].assignment})" for gid in foreign if gid in owners})
        origin = f", de {', '.join(sources)}" if sources else ""
    return (f"células de outro notebook coladas aqui ({', '.join(foreign)}{origin}): ignoradas na "
            "correção (respostas coladas ficaram como células comuns)")


def _rename_old_functions(nb: dict, renamed: dict) -> list[str]:
    """Respostas com o nome de função de uma versão anterior do curso ganham o nome atual."""
    old: list[str] = []
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code" and _kind(cell) == "resposta" \
                and "nbgrader" in cell.get("metadata", {}):
            source, found = update_answer(cell_source(cell), renamed)
            if found:
                cell["source"] = source
                old += found
    if not old:
        return []
    pairs = ", ".join(f"{a} → {renamed[a]}" for a in old)
    return [f"função com o nome de uma versão anterior do curso ({pairs}): corrigida com o nome atual, sem perder "
            "ponto"]


def _restore(nb: dict, originals: dict, old_version: bool = False) -> list[str]:
    """Metadados perdidos, células protegidas apagadas e linhas acrescentadas a células protegidas, em três
    passadas (cada uma vê o resultado da anterior); devolve as notas em pt-BR. Numa entrega de uma versão anterior
    (``old_version``), as células protegidas diferentes das de hoje são as daquela versão, e a nota diz isso."""
    cells = nb["cells"]
    protected = [gid for gid, c in originals.items() if _kind(c) != "resposta"]
    notes = []
    restored = _restore_metadata(cells, originals, protected)
    if restored:
        notes.append(f"células sem os metadados de correção reconhecidas pelo código ({', '.join(restored)}): "
                     "os metadados voltaram")
    reinserted = _reinsert_deleted(cells, originals, protected)
    if reinserted:
        notes.append(f"células protegidas ou de verificação apagadas voltaram, com o código original "
                     f"({', '.join(reinserted)})")
    retyped, edited, appended = _undo_edits(cells, originals)
    if retyped:
        notes.append("células que tinham mudado de tipo (código/texto) voltaram ao tipo original: "
                     f"{', '.join(sorted(retyped))}")
    if edited and old_version:
        notes.append(f"células protegidas ou de verificação diferentes das de hoje ({', '.join(sorted(edited))}), "
                     "como eram naquela versão (ou editadas): a correção usou o código de hoje")
    elif edited:
        notes.append(f"células protegidas ou de verificação editadas ({', '.join(sorted(edited))}): a correção "
                     "usou o código original")
    if appended:
        notes.append(f"as linhas acrescentadas a {', '.join(sorted(appended))} rodaram logo depois da célula, como "
                     "código comum")
    return notes


def _present(cells: list) -> dict[str, int]:
    """``grade_id`` -> índice das células que têm metadados do nbgrader com um ``grade_id``."""
    return {nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(cells) if isinstance(c, dict)
            and isinstance(nbgrader_meta(c).get("grade_id"), str)}


def _nbgrader_copy(original) -> dict:
    return copy.deepcopy(dict(original.metadata["nbgrader"]))


def _restore_metadata(cells: list, originals: dict, protected: list[str]) -> list[str]:
    """Primeira passada, metadados perdidos: uma célula sem nbgrader com a mesma fonte e o mesmo tipo de uma
    protegida ausente recebe os metadados dela. Devolve os ``grade_id`` que voltaram."""
    found, restored = _present(cells), []
    for gid in protected:
        if gid in found:
            continue
        original = originals[gid]
        source = original.source.strip()
        for cell in cells:
            if isinstance(cell, dict) and "nbgrader" not in (cell.get("metadata") or {}) \
                    and cell_source(cell) == source and cell.get("cell_type") == original.cell_type:
                cell.setdefault("metadata", {})["nbgrader"] = _nbgrader_copy(original)
                restored.append(gid)
                break
    return restored


def _stable_id(cells: list, semente: str, preferido: str | None = None) -> dict:
    """``{"id": ...}`` para uma célula nova, o mesmo a cada correção da mesma entrega (o nbformat sortearia um, e o
    retorno mudaria de uma correção para outra): ``preferido`` (o id da célula no curso) se estiver livre, senão os
    8 primeiros hex do SHA-256 de ``semente``, com um sufixo se já houver um igual. ``{}`` num notebook sem ids
    (nbformat < 4.5), em que um id seria inválido."""
    usados = {c.get("id") for c in cells if isinstance(c, dict)}
    if not any(isinstance(c, dict) and "id" in c for c in cells):
        return {}
    if isinstance(preferido, str) and preferido and preferido not in usados:
        return {"id": preferido}
    base = hashlib.sha256(semente.encode("utf-8")).hexdigest()[:8]
    novo, k = base, 2
    while novo in usados:
        novo, k = f"{base}-{k}", k + 1
    return {"id": novo}


def _reinsert_deleted(cells: list, originals: dict, protected: list[str]) -> list[str]:
    """Segunda passada, células protegidas apagadas: voltam, com o código original, logo depois da célula que
    vinha antes delas no notebook do curso. Devolve os ``grade_id`` recolocados."""
    order = list(originals)
    reinserted = []
    for k, gid in enumerate(order):
        found = _present(cells)
        if gid in found or gid not in protected:
            continue
        before = [found[g] for g in order[:k] if g in found]
        original = originals[gid]
        cell = {**_stable_id(cells, f"recolocada:{gid}", original.get("id")), "cell_type": original.cell_type,
                "metadata": {"nbgrader": _nbgrader_copy(original)}, "source": original.source}
        if original.cell_type == "code":
            cell.update(outputs=[], execution_count=None)
        cells.insert(max(before) + 1 if before else 0, cell)
        reinserted.append(gid)
    return reinserted


def _undo_edits(cells: list, originals: dict) -> tuple[list[str], list[str], list[str]]:
    """Terceira passada, de baixo para cima (os índices não mudam): o tipo original volta, as células protegidas
    ou de verificação editadas são apontadas (o nbgrader usa o código original) e as linhas acrescentadas a uma
    célula protegida de código vão para uma célula comum logo depois. Devolve os ``grade_id`` de cada caso."""
    retyped, edited, appended = [], [], []
    for gid, i in sorted(_present(cells).items(), key=lambda x: -x[1]):
        original, cell = originals.get(gid), cells[i]
        if original is None:
            continue
        if _restore_type(cell, original):
            retyped.append(gid)
        if _kind(original) == "resposta" or cell_source(cell) == original.source.strip():
            continue
        edited.append(gid)
        if _kind(original) != "protegida" or original.cell_type != "code":
            continue  # numa verificação, nada do que foi mudado conta
        new_lines = _appended_lines(cell_source(cell), original.source)
        if new_lines and _compiles(new_lines):
            cells.insert(i + 1, {**_stable_id(cells, f"acrescentada:{gid}"), "cell_type": "code", "metadata": {},
                                 "source": new_lines, "outputs": [], "execution_count": None})
            appended.append(gid)
    return retyped, edited, appended


def _restore_type(cell: dict, original) -> bool:
    """Volta ``cell`` ao tipo (código/texto) de ``original``; diz se ele tinha mudado. O nbgrader usaria o tipo
    original; aqui, às claras."""
    if cell.get("cell_type") == original.cell_type:
        return False
    cell["cell_type"] = original.cell_type
    if original.cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    else:
        cell.pop("outputs", None), cell.pop("execution_count", None)
    return True


def _appended_lines(source: str, original: str) -> str:
    """As linhas de ``source`` que não estão em ``original`` (sem indentação comum), na ordem."""
    original_lines = {ln.strip() for ln in original.splitlines()}
    return textwrap.dedent("\n".join(ln for ln in source.splitlines()
                                     if ln.strip() and ln.strip() not in original_lines))


def _compiles(source: str) -> bool:
    """As linhas soltas formam código Python válido? (só compila; nada roda aqui)"""
    try:
        compile(source, "<celula>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True



def copied_from_solutions(nb: dict, g: Gradable) -> tuple[list[str], list[str]]:
    """Respostas iguais às de ``solutions/`` (de hoje ou de uma versão anterior do curso): código com a mesma
    árvore sintática (comentários, docstrings e formatação não contam), texto igual sem a formatação.

    Cada resposta de código igual à solução conta sozinha, sejam quais forem as outras respostas: copiar os dois
    exercícios de código e escrever as respostas de texto com as próprias palavras não esconde a cópia. A exceção
    são as respostas curtas, que podem coincidir por acaso: as de texto (uma frase curta) e as de código em que a
    parte do aluno é uma instrução só (``return np.tril(np.ones((n, n), dtype=bool))``, a forma de sempre de
    escrever a máscara causal; veja :func:`_short_answers`). Uma resposta curta igual à solução só conta junto
    com outras: quando a entrega já tem uma resposta de código longa igual à solução, ou quando mais da metade
    das respostas que o aluno preencheu (as que não são o esboço) são iguais às soluções (o próprio notebook de
    ``solutions/`` entregue como está, por exemplo).

    Returns
    -------
    (respostas, verificacoes)
        Os ``grade_id`` das respostas iguais às soluções, na ordem do notebook, e das verificações que conferem
        as de código (listas vazias se nenhuma resposta conta como cópia).
    """
    from .catalogo import CODE_STUB, TEXT_STUB, answer_fingerprint, checks_of_answers, solution_fingerprints
    from .nomes_antigos import answers_of_all_versions

    conhecidas = answers_of_all_versions(g.assignment, g.notebook)
    atuais = solution_fingerprints(g.source)
    originais = original_cells(g.source)
    curtas = _short_answers(g.source)
    esbocos = {answer_fingerprint(CODE_STUB), answer_fingerprint(TEXT_STUB, "markdown"), ""}
    preenchidas, iguais, longas, vistas = [], [], [], set()
    for cell in nb.get("cells", []):
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id")
        if not meta.get("solution") or gid not in atuais or gid in vistas:
            continue
        vistas.add(gid)
        tipo = cell.get("cell_type", "code")
        digital = answer_fingerprint(cell_source(cell), tipo)
        original = originais.get(gid)
        if digital in esbocos or (original is not None and digital == answer_fingerprint(original.source, tipo)):
            continue
        preenchidas.append(gid)
        if digital == atuais[gid] or digital in conhecidas.get(gid, ()):
            iguais.append(gid)
            if tipo == "code" and gid not in curtas:
                longas.append(gid)
    if not longas and 2 * len(iguais) <= len(preenchidas):
        return [], []
    por_resposta = checks_of_answers(g.source)
    return iguais, [c for gid in iguais for c in por_resposta.get(gid, ())]


@functools.lru_cache(maxsize=None)
def _short_answers(source) -> frozenset:
    """As respostas de ``solutions/`` (``source``) que podem coincidir por acaso com a de um aluno honesto: as de
    texto e as de código cuja parte do aluno (entre ``### BEGIN SOLUTION`` e ``### END SOLUTION``, ou a célula
    inteira se não há marcas) tem até duas instruções simples (atribuições, um ``return``; nunca um ``def``, um
    laço ou um ``if``): sem os nomes das variáveis (:func:`catalogo.answer_fingerprint`), duas linhas como
    ``i = np.arange(half, 2 * half)`` e o ``return`` coincidem por acaso."""
    import ast
    import json
    from pathlib import Path

    from .catalogo import SOLUTION_MARK

    curtas = set()
    for cell in json.loads(Path(source).read_text(encoding="utf-8"))["cells"]:
        meta = nbgrader_meta(cell)
        if not meta.get("solution") or not meta.get("grade_id"):
            continue
        if cell.get("cell_type") != "code":
            curtas.add(meta["grade_id"])
            continue
        linhas = cell_source(cell).splitlines()
        marcas = [k for k, ln in enumerate(linhas) if SOLUTION_MARK.match(ln)]
        partes = [linhas[a + 1:b] for a, b in zip(marcas[::2], marcas[1::2])] or [linhas]
        try:
            corpo = [st for parte in partes for st in ast.parse(textwrap.dedent("\n".join(parte))).body]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if len(corpo) <= 2 and not any(hasattr(st, "body") for st in corpo):
            curtas.add(meta["grade_id"])
    return frozenset(curtas)
