"""Conferência antes da entrega (``make validar NB=...``): o mesmo motor da correção, num notebook só.

O notebook do aluno não muda: uma cópia, com o mesmo nome de arquivo, é corrigida exatamente como o
professor corrigiria (:func:`correcao.motor.grade_class`, com a mesma política da correção,
:class:`correcao.politica.GradingPolicy`: os mesmos tempos por célula e por notebook e a mesma memória; mesma
leitura, mesma arrumação de células repetidas ou coladas, mesma caixa do bwrap se houver; sem ela, no próprio
computador do aluno, o código é dele mesmo). As saídas antigas do notebook não contam: tudo roda de novo. O
relatório diz, em português, quantas verificações passam, o que cada uma disse, onde a execução parou, quais
respostas escritas ainda são o esboço (✍️), que passos ainda levantam ``NotImplementedError`` e o que a correção
vai anotar; "Pronto para entregar" só quando a nota que a correção daria é a toda (todas as verificações passam,
a situação é ``ok``), nenhuma resposta escrita ficou no esboço e nenhum passo do aluno ainda é o esboço
(``raise NotImplementedError``), mesmo um que nenhuma verificação chama (a tarefa ``my_task()`` do projeto da
Aula 5); senão, a última linha diz o que falta.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import shutil
import tempfile
from pathlib import Path

from .catalogo import blank_answers, cell_label, cell_source, is_check, nbgrader_meta
from .politica import GradingPolicy
from .relatorio import STATUSES, strip_paths

CHECK_LINE = re.compile(r"^(✅|❌|⏳) (.+?):")


def _stubs(nb: dict, g) -> list[str]:
    """As respostas escritas ainda com o esboço ✍️ (os exercícios de código já aparecem nas verificações)."""
    return [f"✍️ resposta escrita ainda não respondida: {cell_label(nb['cells'], index)}, vale {pontos:g} "
            "ponto(s) na correção do professor" for _, index, pontos in blank_answers(nb, g)]


def validate(path: Path, politica: GradingPolicy | None = None, **limites) -> tuple[bool, list[str]]:
    """Devolve (pronto para entregar?, linhas do relatório em português).

    Parameters
    ----------
    path : Path
        O notebook do aluno (de preferência a cópia dele em ``trabalho/``). Não é alterado.
    politica : GradingPolicy, optional
        Os limites da correção (sem ela, os padrões: os mesmos do ``corrigir`` do professor).
    **limites
        Por cima da política, pelos nomes antigos (``cell_timeout``, ``notebook_timeout``...; veja
        :meth:`GradingPolicy.build`).
    """
    return validate_many([path], politica, **limites)[0]


def validate_many(paths: list[Path], politica: GradingPolicy | None = None,
                  **limites) -> list[tuple[bool, list[str]]]:
    """:func:`validate` de vários notebooks numa correção só (os ``workers`` da política em paralelo), na mesma
    ordem. A caixa do bwrap é a da política quando esta máquina a tem; sem ela (o computador do aluno), o notebook
    roda sem caixa: o código é do próprio aluno."""
    from .isolamento import bwrap_available
    from .motor import grade_class

    politica = GradingPolicy.build(politica, **limites)
    if politica.isolate and not bwrap_available():
        politica = dataclasses.replace(politica, isolate=False)
    paths = [Path(p) for p in paths]
    with tempfile.TemporaryDirectory(prefix="validar-") as tmp:
        for k, path in enumerate(paths):  # uma "aluna" por notebook; mesmo nome de arquivo (renomeado aparece)
            (Path(tmp) / "entregas" / f"n{k:03d}").mkdir(parents=True)
            shutil.copy(path, Path(tmp) / "entregas" / f"n{k:03d}" / path.name)
        rows = grade_class(Path(tmp) / "entregas", Path(tmp) / "saida", politica=politica, log=lambda *_: None,
                           guardar_notebooks=True, class_reports=False,
                           preflight_check=False)  # um notebook só: a falha da máquina aparece nele mesmo
        out = []
        for k, path in enumerate(paths):
            row = next(r for r in rows if r.student == f"n{k:03d}")
            nb = json.loads(row.autograded.read_text(encoding="utf-8")) if row.autograded else None
            out.append(_report(path, row, nb))
    return out


def _raises_not_implemented(stmt) -> bool:
    """``raise NotImplementedError`` ou ``raise NotImplementedError(...)`` (o esboço de um exercício)."""
    if not isinstance(stmt, ast.Raise) or stmt.exc is None:
        return False
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _stub_body(body: list) -> bool:
    """O bloco chega a um ``raise NotImplementedError`` no próprio nível, antes de qualquer ``return``: ainda é o
    esboço (um ``raise`` dentro de um ``if``, para um caso que a função recusa, não conta)."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            return False
        if _raises_not_implemented(stmt):
            return True
    return False


def _unfinished_steps(nb: dict) -> list[tuple[int, str | None]]:
    """Os passos do aluno ainda no esboço: ``(índice da célula, nome da função)`` de cada função de uma célula de
    resposta (``solution`` do nbgrader) que ainda levanta ``NotImplementedError``, ou ``(índice, None)`` para a
    própria célula, quando ela levanta no nível de cima. Uma célula com erro de sintaxe fica de fora (o erro já
    aparece no relatório)."""
    out = []
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code" or not nbgrader_meta(cell).get("solution"):
            continue
        try:
            tree = ast.parse(cell_source(cell))
        except (SyntaxError, ValueError):
            continue
        if _stub_body(tree.body):
            out.append((index, None))
        out += [(index, stmt.name) for stmt in tree.body
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _stub_body(stmt.body)]
    return out


def _unfinished_lines(nb: dict, failing: set) -> tuple[list[str], list[str]]:
    """As linhas ⏳ dos passos ainda no esboço que nenhuma verificação reprovada já mostra (uma verificação que chama
    a função já imprimiu o seu ⏳) e os nomes deles para o resumo. Sem nenhum passo no esboço e sem verificação
    reprovada, uma célula que parou num ``NotImplementedError`` (um passo chamado de outro jeito) também conta."""
    fontes = " ".join(cell_source(c) for c in nb.get("cells", [])
                      if is_check(c) and nbgrader_meta(c).get("grade_id") in failing)
    linhas, nomes = [], []
    for index, nome in _unfinished_steps(nb):
        if nome is not None and re.search(rf"\b{re.escape(nome)}\b", fontes):
            continue  # a verificação reprovada dessa função já diz "⏳ ... ainda não resolvido"
        o_que = f"{nome}() ainda levanta NotImplementedError" if nome else "a célula ainda levanta NotImplementedError"
        linhas.append(f"⏳ passo ainda não feito: {o_que} (o esboço), em {cell_label(nb['cells'], index)}: "
                      "complete-o e rode o notebook de novo")
        nomes.append(f"{nome}()" if nome else cell_label(nb["cells"], index))
    if not linhas and not failing:
        for index, cell in enumerate(nb.get("cells", [])):
            if cell.get("cell_type") == "code" and not is_check(cell) and any(
                    o.get("output_type") == "error" and o.get("ename") == "NotImplementedError"
                    for o in cell.get("outputs", [])):
                rotulo = cell_label(nb["cells"], index)
                linhas.append(f"⏳ passo ainda não feito: {rotulo} parou num NotImplementedError (um passo ainda "
                              "no esboço)")
                nomes.append(rotulo)
    return linhas, nomes


def _report_lines(text: str) -> list[str]:
    """As linhas de resultado (✅/❌/⏳), de critério que falhou e de dica de uma saída, com as continuações
    que a verificação quebrou (recuo da linha + 5 espaços); esperado/obtido ficam de fora (estão no notebook)."""
    linhas, recuo = [], None
    for line in text.splitlines():
        corpo = line.lstrip()
        if CHECK_LINE.match(line) or line.startswith("  ❌") or corpo.startswith("dica:"):
            linhas.append(line)
            recuo = len(line) - len(corpo) + 5
        elif recuo is not None and corpo and len(line) - len(corpo) == recuo and not corpo.startswith(
                ("esperado:", "obtido:")):
            linhas.append(line)  # continuação de uma linha quebrada
        else:
            recuo = None
    return linhas


def recovery_advice(path: Path) -> str:
    """Como o aluno recupera um notebook que não abre (``path``): a última versão que o JupyterLab salvou em
    ``.ipynb_checkpoints/``, se ela abre; senão, uma cópia nova do curso pelo ``make lab``."""
    from .catalogo import read_notebook

    salvo = path.parent / ".ipynb_checkpoints" / f"{path.stem}-checkpoint{path.suffix}"
    try:
        abre = salvo.is_file() and read_notebook(salvo.read_bytes())[0] is not None
    except OSError:
        abre = False
    if abre:
        return (f"↩️ O JupyterLab guardou a última versão salva (o checkpoint) em {salvo}: feche o notebook, copie-a "
                f"por cima deste arquivo (cp \"{salvo}\" \"{path}\"; no JupyterLab, File → Revert Notebook to "
                "Checkpoint faz o mesmo) e confira de novo.")
    return ("↩️ Não há uma versão salva que abra (.ipynb_checkpoints/). Se você baixou uma cópia antes (Download), "
            "use-a; senão, renomeie este arquivo (para não perdê-lo) e rode make lab (ou python3 curso.py lab): uma "
            "cópia nova do notebook do curso volta para trabalho/, e as respostas precisam ser refeitas nela.")


def _report(path: Path, row, nb: dict | None) -> tuple[bool, list[str]]:  # noqa: C901 — uma mensagem por situação da entrega, para o aluno
    if row.status == "arquivo_invalido":  # o conselho da correção ("entregue de novo") dá lugar ao de recuperar
        from .planning import INVALID_FILE_ADVICE

        return False, [f"❌ {path.name}: {' | '.join(r.replace(INVALID_FILE_ADVICE, '') for r in row.reasons)}.",
                       recovery_advice(path)]
    if row.status in ("desconhecido", "sem_notebooks"):
        return False, [f"❌ {path.name}: {' | '.join(row.reasons)}."]
    from .catalogo import catalog

    g = catalog()[(row.assignment, row.notebook)]
    nb = nb or {"cells": []}
    checks, com_linha = [], set()  # com_linha: verificações que imprimiram o seu ✅/❌/⏳
    for c in nb["cells"]:
        for out in c.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                linhas = _report_lines(text)
                checks += linhas
                if any(CHECK_LINE.match(line) for line in linhas):
                    com_linha.add(nbgrader_meta(c).get("grade_id"))
    points = {gid: p for gid, (_, p, auto) in g.cells.items() if auto}
    # passa o que o verificador aprovou, mesmo com os pontos retidos para a revisão do professor (o aviso diz por quê)
    failing = {gid for gid, p in points.items() if row.scores.get(gid, 0) + row.em_revisao.get(gid, 0) < p}
    passed = len(points) - len(failing)
    notas = []
    for r in row.reasons:  # o que a correção vai anotar (o que a verificação já imprimiu não se repete)
        gid = next((gid for gid in points if r.startswith(f"{gid}: ")), None)
        # a linha que o kernel imprimiu não se repete, a menos que o verificador isolado tenha discordado dela
        if ((gid is None or gid not in com_linha or "conferência independente" in r)
                and "resposta(s) escrita(s) ainda com o esboço" not in r):
            notas.append(f"⚠️ {strip_paths(r)}")
    esbocos = _stubs(nb, g)
    passos, nomes = _unfinished_lines(nb, failing)
    report = [f"Notebook {path.name} ({g.assignment}, {g.notebook}): {passed} de {len(points)} verificação(ões) "
              "passando.", *checks, *notas, *passos, *esbocos]
    faltas = []  # o que falta, para a última linha
    if failing:
        faltas.append(f"{len(failing)} de {len(points)} verificação(ões) sem passar")
    if nomes:
        faltas.append(f"{len(nomes)} passo(s) ainda no esboço, levantando NotImplementedError ({', '.join(nomes)})")
    if esbocos:
        faltas.append(f"{len(esbocos)} resposta(s) escrita(s) ainda no esboço ✍️")
    if row.status not in ("ok", "parcial", "zero"):
        situacao = f"{STATUSES.get(row.status, row.status)} ({row.status})"
        report.append(f"❌ situação na correção: {situacao}; veja os avisos acima.")
        faltas.append(f"a situação na correção seria {situacao}")
    ok = not faltas and row.status == "ok"  # a nota toda; erros soltos são avisos
    if ok:
        report.append("Pronto para entregar! ✅")
    else:
        report.append("Ainda há o que resolver antes de entregar" + (f": {'; '.join(faltas)}." if faltas else "."))
    return ok, report
