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
- metadados do nbgrader sem ``grade_id`` válido saem (a célula fica).

Cada arrumação vira uma nota, em pt-BR, na linha de ``notas.csv`` e no ``validar``.
"""

from __future__ import annotations

import copy

from .catalogo import Gradable, all_ids, nbgrader_meta, original_cells


def _tipo(cell) -> str:
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return "resposta"
    if meta.get("grade"):
        return "verificacao"
    return "protegida"


def _desmarcar(cell: dict) -> None:
    cell.get("metadata", {}).pop("nbgrader", None)


def sanitize(nb: dict, g: Gradable, everything: dict | None = None) -> tuple[dict, list[str]]:
    """Devolve (cópia arrumada de ``nb``, notas em pt-BR). ``nb`` é o JSON do notebook (não muda).

    Parameters
    ----------
    nb : dict
        O notebook entregue, como lido do arquivo (já conferido por :func:`catalogo.read_notebook`).
    g : Gradable
        O notebook do curso que ele é (:func:`catalogo.identify`).
    everything : dict, opcional
        O catálogo, para dizer de onde veio uma célula colada de outro notebook.
    """
    nb = copy.deepcopy(nb)
    originais = original_cells(g.source)
    cells = nb["cells"]
    ocorrencias: dict[str, list[int]] = {}
    notas: list[str] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        meta = cell.get("metadata")
        if isinstance(meta, dict) and "nbgrader" in meta:
            gid = nbgrader_meta(cell).get("grade_id")
            if not isinstance(gid, str) or not gid:
                _desmarcar(cell)
                notas.append(f"célula {i + 1}: metadados de correção incompletos (sem grade_id), ignorados")
                continue
            ocorrencias.setdefault(gid, []).append(i)
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None  # nada de uma execução antiga conta

    remover: set[int] = set()
    estranhas: list[str] = []
    for gid, idx in ocorrencias.items():
        if gid not in originais:
            for i in idx:
                if _tipo(cells[i]) == "resposta":
                    _desmarcar(cells[i])
                else:
                    remover.add(i)
            estranhas.append(gid)
            continue
        if len(idx) == 1:
            continue
        tipo = _tipo(originais[gid])
        if tipo == "verificacao":
            remover.update(idx[:-1])
            notas.append(f"a verificação {gid} aparecia {len(idx)} vezes (célula colada de novo?): "
                         "valeu a última cópia, as outras foram ignoradas")
        elif tipo == "resposta":
            for i in idx[1:]:
                _desmarcar(cells[i])
            notas.append(f"a resposta {gid} aparecia {len(idx)} vezes (célula colada de novo?): vale a primeira; "
                         "as outras ficaram como células comuns")
        else:
            remover.update(idx[1:])
            notas.append(f"a célula protegida {gid} aparecia {len(idx)} vezes: as cópias foram ignoradas")
    if estranhas:
        origem = ""
        if everything:
            donos = {gid: g2 for g2 in everything.values() if g2 is not g for gid in all_ids(g2.source)}
            de = sorted({f"{donos[gid].notebook} ({donos[gid].assignment})" for gid in estranhas if gid in donos})
            origem = f", de {', '.join(de)}" if de else ""
        notas.append(f"células de outro notebook coladas aqui ({', '.join(estranhas)}{origem}): ignoradas na "
                     "correção (respostas coladas ficaram como células comuns)")
    nb["cells"] = [c for i, c in enumerate(cells) if i not in remover]
    return nb, notas

