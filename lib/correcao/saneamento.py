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
import textwrap

from .catalogo import Gradable, all_ids, cell_source, nbgrader_meta, original_cells
from .nomes_antigos import RENOMEADAS, atualizar_resposta


def _tipo(cell) -> str:
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return "resposta"
    if meta.get("grade"):
        return "verificacao"
    return "protegida"


def _desmarcar(cell: dict) -> None:
    cell.get("metadata", {}).pop("nbgrader", None)


def sanitize(nb: dict, g: Gradable, everything: dict | None = None, versao=None) -> tuple[dict, list[str]]:
    """Devolve (cópia arrumada de ``nb``, notas em pt-BR). ``nb`` é o JSON do notebook (não muda).

    Parameters
    ----------
    nb : dict
        O notebook entregue, como lido do arquivo (já conferido por :func:`catalogo.read_notebook`).
    g : Gradable
        O notebook do curso que ele é (:func:`catalogo.identify`).
    everything : dict, opcional
        O catálogo, para dizer de onde veio uma célula colada de outro notebook.
    versao : correcao.nomes_antigos.Versao, opcional
        A versão anterior do curso de que ``nb`` é (já com os ids de hoje, :func:`nomes_antigos.traduzir_ids`):
        as verificações que ela não tinha não voltam, e os nomes antigos das funções são os dela.
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
    ausentes = set(g.checks) - set(versao.verificacoes) if versao is not None else set()
    notas += _recolocar(nb, {gid: c for gid, c in originais.items() if gid not in ausentes})
    notas += _nomes_antigos(nb, RENOMEADAS | versao.funcoes if versao is not None else RENOMEADAS)
    return nb, notas


def _nomes_antigos(nb: dict, renomeadas: dict) -> list[str]:
    """Respostas com o nome de função de uma versão anterior do curso ganham o nome atual."""
    antigos: list[str] = []
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code" and _tipo(cell) == "resposta" \
                and "nbgrader" in cell.get("metadata", {}):
            fonte, achados = atualizar_resposta(cell_source(cell), renomeadas)
            if achados:
                cell["source"] = fonte
                antigos += achados
    if not antigos:
        return []
    pares = ", ".join(f"{a} → {renomeadas[a]}" for a in antigos)
    return [f"função com o nome de uma versão anterior do curso ({pares}): corrigida com o nome atual, sem perder "
            "ponto"]


def _recolocar(nb: dict, originais: dict) -> list[str]:
    """Metadados perdidos, células protegidas apagadas e linhas acrescentadas a células protegidas."""
    cells, notas = nb["cells"], []

    def presentes() -> dict:
        return {nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(cells) if isinstance(c, dict)
                and isinstance(nbgrader_meta(c).get("grade_id"), str)}

    protegidas = [gid for gid, c in originais.items() if _tipo(c) != "resposta"]
    achadas = presentes()
    voltaram = []
    for gid in protegidas:  # metadados perdidos: a mesma fonte, sem nbgrader
        if gid in achadas:
            continue
        fonte = originais[gid].source.strip()
        for cell in cells:
            if isinstance(cell, dict) and "nbgrader" not in (cell.get("metadata") or {}) \
                    and cell_source(cell) == fonte and cell.get("cell_type") == originais[gid].cell_type:
                cell.setdefault("metadata", {})["nbgrader"] = copy.deepcopy(dict(originais[gid].metadata["nbgrader"]))
                voltaram.append(gid)
                break
    if voltaram:
        notas.append(f"células sem os metadados de correção reconhecidas pelo código ({', '.join(voltaram)}): "
                     "os metadados voltaram")
    ordem = list(originais)
    recolocadas = []
    for k, gid in enumerate(ordem):  # apagadas: de volta depois da célula que vinha antes
        achadas = presentes()
        if gid in achadas or gid not in protegidas:
            continue
        antes = [achadas[g] for g in ordem[:k] if g in achadas]
        pos = max(antes) + 1 if antes else 0
        original = originais[gid]
        cell = {"cell_type": original.cell_type,
                "metadata": {"nbgrader": copy.deepcopy(dict(original.metadata["nbgrader"]))},
                "source": original.source}
        if original.cell_type == "code":
            cell.update(outputs=[], execution_count=None)
        cells.insert(pos, cell)
        recolocadas.append(gid)
    if recolocadas:
        notas.append(f"células protegidas ou de verificação apagadas voltaram, com o código original "
                     f"({', '.join(recolocadas)})")
    tipos, editadas, acrescidas = [], [], []
    for gid, i in sorted(presentes().items(), key=lambda x: -x[1]):  # de baixo para cima: os índices não mudam
        original, cell = originais.get(gid), cells[i]
        if original is None:
            continue
        if cell.get("cell_type") != original.cell_type:  # o nbgrader usaria o tipo original; aqui, às claras
            cell["cell_type"] = original.cell_type
            if original.cell_type == "code":
                cell.update(outputs=[], execution_count=None)
            else:
                cell.pop("outputs", None), cell.pop("execution_count", None)
            tipos.append(gid)
        if _tipo(original) == "resposta" or cell_source(cell) == original.source.strip():
            continue
        editadas.append(gid)
        if _tipo(original) != "protegida" or original.cell_type != "code":
            continue  # numa verificação, nada do que foi mudado conta
        orig_linhas = {ln.strip() for ln in original.source.splitlines()}
        novas = textwrap.dedent("\n".join(ln for ln in cell_source(cell).splitlines()
                                          if ln.strip() and ln.strip() not in orig_linhas))
        if novas and _compila(novas):
            cells.insert(i + 1, {"cell_type": "code", "metadata": {}, "source": novas, "outputs": [],
                                 "execution_count": None})
            acrescidas.append(gid)
    if tipos:
        notas.append("células que tinham mudado de tipo (código/texto) voltaram ao tipo original: "
                     f"{', '.join(sorted(tipos))}")
    if editadas:
        notas.append(f"células protegidas ou de verificação editadas ({', '.join(sorted(editadas))}): a correção "
                     "usou o código original")
    if acrescidas:
        notas.append(f"as linhas acrescentadas a {', '.join(sorted(acrescidas))} rodaram logo depois da célula, como "
                     "código comum")
    return notas


def _compila(fonte: str) -> bool:
    """As linhas soltas formam código Python válido? (só compila; nada roda aqui)"""
    try:
        compile(fonte, "<celula>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True



def iguais_as_solucoes(nb: dict, g: Gradable) -> tuple[list[str], list[str]]:
    """Respostas iguais às de ``solutions/`` (de hoje ou de uma versão anterior do curso): código com a mesma
    árvore sintática (comentários, docstrings e formatação não contam), texto igual sem a formatação.

    Só quando mais da metade das respostas que o aluno preencheu (as que não são o esboço) são iguais às
    soluções: uma resposta curta pode coincidir por acaso; a entrega inteira, não (o próprio notebook de
    ``solutions/`` entregue como está, por exemplo).

    Returns
    -------
    (respostas, verificacoes)
        Os ``grade_id`` das respostas iguais às soluções e das verificações que conferem essas respostas
        (listas vazias se a entrega não é uma cópia das soluções).
    """
    from .catalogo import CODE_STUB, TEXT_STUB, answer_fingerprint, checks_of_answers, solution_fingerprints
    from .nomes_antigos import respostas_de_todas_as_versoes

    conhecidas = respostas_de_todas_as_versoes(g.assignment, g.notebook)
    atuais = solution_fingerprints(g.source)
    originais = original_cells(g.source)
    esbocos = {answer_fingerprint(CODE_STUB), answer_fingerprint(TEXT_STUB, "markdown"), ""}
    preenchidas, iguais, vistas = [], [], set()
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
    if not iguais or 2 * len(iguais) <= len(preenchidas):
        return [], []
    por_resposta = checks_of_answers(g.source)
    return iguais, [c for gid in iguais for c in por_resposta.get(gid, ())]
