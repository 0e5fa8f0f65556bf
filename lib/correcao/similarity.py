"""Quem escreveu o mesmo código que quem: a página de similaridade da correção (``similaridade.html``).

Depois de corrigir a turma, o código que cada aluno escreveu nas células de resposta (as células de solução do
nbgrader, ``"solution": true``) é comparado com o dos outros alunos do mesmo notebook da mesma aula. Os pares que
passam do limiar vão para ``similaridade.html``, ao lado de ``notas.csv``, com os trechos em comum lado a lado, e a
coluna ``similaridade`` de ``notas.csv`` aponta para o par. Nenhuma nota muda: quem decide se houve cópia é o
professor, lendo os trechos.

O detector é o ``copydetect`` (PyPI, licença MIT), que implementa o *winnowing* do MOSS (Schleimer, Wilkerson e
Aiken, "Winnowing: local algorithms for document fingerprinting", SIGMOD 2003): o código passa pelo analisador
léxico do Pygments, cada nome de variável ou de função vira ``V`` ou ``F``, cada texto vira ``S`` e comentários e
espaços saem; duas respostas se parecem quando compartilham trechos de ``K_GRAM`` caracteres desse código filtrado.
Por isso, renomear as variáveis, mudar os comentários ou a ordem das funções não esconde uma cópia. Por que ele, e
não outro: é Python puro, com dependências que o curso já tem (NumPy, Pygments, Jinja2, tqdm, matplotlib), e a API
(:class:`copydetect.CodeFingerprint`, :func:`copydetect.compare_files`) compara textos na memória e devolve as
posições dos trechos em comum, que a página mostra. O Dolos (npm) pediria o Node.js na máquina da correção, e o
``compare50`` (PyPI) exige ``attrs<21``, que não convive com o ``jsonschema`` do nbformat (``attrs>=22.2``).

O que não conta como semelhança (a "moldura" do notebook, passada ao ``copydetect`` como *boilerplate*):

- o código que o curso deu: o esboço de cada célula de resposta (a assinatura, os comentários, o
  ``raise NotImplementedError``), a resposta de referência de ``solutions/`` (pública: é a resposta óbvia, e não a de
  um colega; a cópia exata dela já é apontada na correção) e as outras células de código dos notebooks da aula (a
  aula de código, que o aluno pode copiar à vontade). A biblioteca ``atencao`` e as células que não são de resposta
  nem entram na comparação;
- os trechos comuns da turma: o que mais de :data:`COMMON_FRACTION` dos alunos daquele notebook escreveram (no
  mínimo :data:`COMMON_MIN` e no máximo :data:`COMMON_MAX` alunos; o ``-m 10`` do MOSS), que é a resposta óbvia e
  não a de um colega.

Cada resposta é comparada com a mesma resposta (a célula do mesmo ``grade_id``) da outra entrega, e o que é comum
se soma nas respostas do notebook. Um par é apontado quando as duas condições valem (:data:`THRESHOLD` e
:data:`MIN_SHARED`, documentadas no ``docs/professor.md``): os trechos em comum cobrem ao menos :data:`THRESHOLD` do
código de um dos dois (a fração do ``copydetect``, sobre o código filtrado, sem a moldura) e somam ao menos
:data:`MIN_SHARED` caracteres de código filtrado. O tamanho mínimo é o que protege dois alunos honestos que
escreveram a mesma resposta curta e óbvia (``return np.tri(n, dtype=bool)`` na máscara causal): 100 % dela é igual,
mas é pouco código para dizer algo.

Com a janela de *winnowing* 1 (``guarantee_t = noise_t``, o padrão do ``copydetect``), todos os trechos entram e o
resultado não depende do ``hash()`` do Python (que muda a cada processo): a mesma turma dá sempre a mesma página.
"""

from __future__ import annotations

import functools
import html
import io
import json
import math
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .catalogo import ROOT, SOLUTION_MARK, catalog, cell_source, nbgrader_meta, original_cells
from .relatorio import Row, student_text
from .saida import SIMILARITY_PAGE

K_GRAM = 20  # caracteres de código filtrado de cada trecho comparado (o noise_t do copydetect)
THRESHOLD = 0.5  # fração do código (filtrado, sem a moldura) de um dos dois alunos que está em trechos em comum
MIN_SHARED = 120  # caracteres de código filtrado em comum, no mínimo (uma linha filtrada tem de 10 a 30)
COMMON_FRACTION = 0.10  # um trecho escrito por mais que esta fração dos alunos do notebook não conta...
COMMON_MIN = 3  # ... e o limite nunca fica abaixo de 3 alunos (um par, ou um trio, continua contando)...
COMMON_MAX = 10  # ... nem acima de 10 (o -m 10 do MOSS): numa turma de 500, 11 alunos com o trecho já é "comum"
MAX_ANSWER_CHARS = 20_000  # de cada resposta, comparados (a maior de solutions/ tem ~2.000): o resto não entra
MAX_PAIRS = 200  # pares listados por notebook (os mais parecidos); a página diz quantos ficaram de fora
PAGE = SIMILARITY_PAGE


@dataclass
class SimilarPair:
    """Um par de entregas do mesmo notebook com código em comum acima do limiar.

    ``a`` e ``b`` são os índices das linhas em ``rows`` (:func:`compare_class`); ``fraction_a`` e ``fraction_b``, a
    fração do código de cada um que está em trechos em comum (de 0 a 1); ``shared``, os caracteres de código
    filtrado em comum; ``code_a`` e ``code_b``, o código de cada resposta (``grade_id`` -> código, o que foi
    comparado); ``slices``, os trechos em comum de cada resposta (``grade_id`` -> (trechos de A, trechos de B), cada
    trecho um par ``(início, fim)`` de posições no código); ``anchor``, a âncora do par na página (``par-3``)."""

    assignment: str
    notebook: str
    a: int
    b: int
    fraction_a: float
    fraction_b: float
    shared: int
    code_a: dict
    code_b: dict
    slices: dict
    anchor: str = ""

    @property
    def score(self) -> float:
        return max(self.fraction_a, self.fraction_b)


@dataclass
class SimilarityReport:
    """O resultado de :func:`compare_class`: os pares apontados, quantos ficaram de fora da página
    (:data:`MAX_PAIRS`), quantas entregas de cada notebook foram comparadas e a página escrita."""

    pairs: list
    omitted: dict
    compared: dict
    page: Path | None


def answer_code(nb: dict, templates: dict[str, str]) -> dict[str, str]:
    """O código que o aluno escreveu em cada célula de resposta de ``nb``, na ordem do notebook.

    Parameters
    ----------
    nb : dict
        O notebook (JSON lido, como o nbformat o grava).
    templates : dict of str to str
        ``grade_id`` -> o esboço da célula de resposta, como o aluno a recebeu (:func:`templates_of`). Só as células
        de resposta com um destes ``grade_id`` contam (uma célula que o aluno marcou como resposta não conta).

    Returns
    -------
    dict of str to str
        ``grade_id`` -> código, na ordem do notebook, sem as linhas iguais a uma linha do esboço daquela célula (a
        assinatura, os comentários dados, ``raise NotImplementedError``) nem as marcas ``### BEGIN/END SOLUTION``;
        as células em que nada sobra (a resposta ainda é o esboço) ficam de fora; uma resposta colada duas vezes
        conta uma vez (a primeira); de uma resposta enorme, só os primeiros :data:`MAX_ANSWER_CHARS` caracteres
        (o analisador léxico levaria minutos numa célula de megabytes).
    """
    out: dict[str, str] = {}
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id")
        if cell.get("cell_type") != "code" or not meta.get("solution") or not isinstance(gid, str) \
                or gid not in templates:
            continue
        dadas = {ln.strip() for ln in templates[gid].splitlines() if ln.strip()}
        linhas = [ln.rstrip() for ln in cell_source(cell).splitlines()
                  if ln.strip() not in dadas and not SOLUTION_MARK.match(ln)]
        codigo = textwrap.dedent("\n".join(linhas)).strip("\n")[:MAX_ANSWER_CHARS]  # sem o recuo da função
        if gid not in out and any(ln.strip() and not ln.strip().startswith("#") for ln in linhas):
            out[gid] = codigo
    return out


def templates_of(source: Path) -> dict[str, str]:
    """``grade_id`` -> o esboço de cada célula de resposta de código do notebook de solução ``source``."""
    return {gid: c.source for gid, c in original_cells(source).items()
            if c.cell_type == "code" and nbgrader_meta(c).get("solution")}


@functools.lru_cache(maxsize=None)
def _given_code(source: Path) -> str:
    """O código que o curso dá, para o notebook de solução ``source``: o esboço e a resposta de referência de cada
    célula de resposta (``solutions/`` é público: a resposta de referência é a resposta óbvia, e não a de um colega)
    e as outras células de código dos notebooks de aluno da mesma aula (a aula de código, que o aluno pode copiar à
    vontade)."""
    import nbformat

    partes = [c.source for c in original_cells(source).values() if c.cell_type == "code"]
    solucao = nbformat.read(source, as_version=4)
    partes += [c.source for c in solucao.cells if c.cell_type == "code" and nbgrader_meta(c).get("solution")]
    aula = ROOT / "notebooks" / source.parent.relative_to(ROOT / "solutions")
    for path in sorted(aula.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        partes += [c.source for c in nb.cells if c.cell_type == "code" and not nbgrader_meta(c).get("solution")]
    return "\n\n".join(partes)


def _fingerprint(code: str, boilerplate=None):
    from copydetect import CodeFingerprint

    # janela 1: todos os trechos de K_GRAM caracteres (veja a docstring do módulo)
    return CodeFingerprint("resposta.py", K_GRAM, 1, boilerplate, language="python", fp=io.StringIO(code))


@functools.lru_cache(maxsize=None)
def given_hashes(source: Path) -> frozenset:
    """As impressões digitais do código dado pelo curso para o notebook de solução ``source`` (:func:`_given_code`),
    que não contam na comparação."""
    return frozenset(int(h) for h in _fingerprint(_given_code(source)).hashes)


def common_limit(n_students: int) -> int:
    """Quantos alunos podem ter o mesmo trecho antes de ele virar "comum" (e sair da comparação):
    :data:`COMMON_FRACTION` de ``n_students``, entre :data:`COMMON_MIN` e :data:`COMMON_MAX`."""
    return int(min(COMMON_MAX, max(COMMON_MIN, math.floor(COMMON_FRACTION * n_students))))


def _fingerprints(docs: list[dict], students: list[str], given: frozenset) -> list[dict]:
    """A impressão digital de cada resposta de cada entrega, sem o código dado (``given``) nem os trechos comuns da
    turma (:func:`common_limit`)."""
    import numpy as np

    moldura = np.array(sorted(given), dtype=np.int64)
    fps = [{gid: _fingerprint(code, moldura) for gid, code in d.items()} for d in docs]
    quantos: dict[int, set] = {}
    for por_celula, aluno in zip(fps, students):
        for fp in por_celula.values():
            for h in fp.hashes:
                quantos.setdefault(h, set()).add(aluno)
    limite = common_limit(len(set(students)))
    comuns = {h for h, alunos in quantos.items() if len(alunos) > limite}
    if comuns:
        moldura = np.union1d(moldura, np.array(sorted(comuns), dtype=np.int64))
        fps = [{gid: _fingerprint(d[gid], moldura) if fp.hashes & comuns else fp for gid, fp in por_celula.items()}
               for d, por_celula in zip(docs, fps)]
    return fps


def _compare_pair(fa: dict, fb: dict) -> tuple[float, float, dict] | None:
    """Compara duas entregas, resposta com resposta (a mesma célula): ``(em comum de A, em comum de B, trechos)``,
    em caracteres de código filtrado, com ``trechos[grade_id] = (trechos de A, trechos de B)``; ``None`` se nada
    é comum."""
    from copydetect import compare_files

    comum_a = comum_b = 0.0
    trechos = {}
    for gid in [g for g in fa if g in fb]:  # na ordem do notebook (a de um set mudaria com o hash() do processo)
        a, b = fa[gid], fb[gid]
        if not a.hashes & b.hashes:
            continue
        shared, (fra, frb), (sa, sb) = compare_files(a, b)
        if shared <= 0:
            continue
        comum_a += fra * a.token_coverage
        comum_b += frb * b.token_coverage
        trechos[gid] = ([(int(x), int(y)) for x, y in zip(*sa)], [(int(x), int(y)) for x, y in zip(*sb)])
    return (comum_a, comum_b, trechos) if trechos else None


def compare_documents(docs: list[dict], students: list[str], given: frozenset = frozenset(), *,
                      threshold: float = THRESHOLD, min_shared: int = MIN_SHARED) -> list[tuple]:
    """Os pares de entregas do mesmo notebook acima do limiar.

    Cada resposta é comparada com a mesma resposta (a célula do mesmo ``grade_id``) da outra entrega; a fração de
    cada aluno é o código dele que está em trechos em comum, somado nas respostas, sobre todo o código que ele
    escreveu (filtrado, sem o código dado nem os trechos comuns da turma).

    Parameters
    ----------
    docs : list of dict
        O código de cada entrega: ``grade_id`` -> o código da resposta (:func:`answer_code`).
    students : list of str
        O aluno de cada entrega (duas entregas do mesmo aluno nunca formam um par).
    given : frozenset
        As impressões digitais do código dado pelo curso (:func:`given_hashes`), que não contam.
    threshold, min_shared
        :data:`THRESHOLD` e :data:`MIN_SHARED`.

    Returns
    -------
    list of tuple
        ``(i, j, fração_i, fração_j, caracteres_em_comum, trechos)``, com ``i < j`` e
        ``trechos[grade_id] = (trechos de i, trechos de j)``, listas de ``(início, fim)`` no código de cada resposta.

    Raises
    ------
    ValueError
        Se ``docs`` e ``students`` tiverem tamanhos diferentes, ou ``threshold`` não estiver em (0, 1].
    """
    if len(docs) != len(students):
        raise ValueError(f"students: esperado um aluno por entrega ({len(docs)}), recebidos {len(students)}")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold: esperado um número em (0, 1], recebido {threshold!r}")
    fps = _fingerprints(docs, students, given)
    total = [sum(fp.token_coverage for fp in d.values()) for d in fps]
    pares = []
    for i in range(len(docs)):
        for j in range(i + 1, len(docs)):
            if students[i] == students[j] or not total[i] or not total[j]:
                continue
            achado = _compare_pair(fps[i], fps[j])
            if achado is None:
                continue
            comum_i, comum_j, trechos = achado
            fi, fj = comum_i / total[i], comum_j / total[j]
            if min(comum_i, comum_j) >= min_shared and max(fi, fj) >= threshold:
                pares.append((i, j, float(fi), float(fj), int(round(min(comum_i, comum_j))), trechos))
    return pares


def answers_of(rows: list[Row]) -> list[dict]:
    """O código das respostas de cada linha (:func:`answer_code` do notebook corrigido, ``Row.autograded``), na
    ordem de ``rows``; ``{}`` para uma linha sem notebook corrigido ou de um notebook que não é do curso. É o que
    uma parte de uma turma dividida guarda para a junção comparar (o notebook corrigido fica na máquina da parte)."""
    everything = catalog()
    out = []
    for r in rows:
        g = everything.get((r.assignment, r.notebook))
        if g is None or r.autograded is None or not Path(r.autograded).exists():
            out.append({})
            continue
        out.append(answer_code(json.loads(Path(r.autograded).read_text(encoding="utf-8")), templates_of(g.source)))
    return out


def compare_class(rows: list[Row], saida: Path, *, threshold: float = THRESHOLD, min_shared: int = MIN_SHARED,
                  respostas: list[dict] | None = None) -> SimilarityReport:
    """Compara o código escrito por cada aluno com o dos colegas do mesmo notebook e escreve
    ``saida/similaridade.html``; preenche ``Row.similaridade`` (a coluna ``similaridade`` de ``notas.csv``) das
    linhas apontadas. Nenhuma nota muda.

    Chame-a dentro de :func:`correcao.motor.grade_class`, antes de
    :func:`correcao.relatorio.write_outputs`, enquanto ``Row.autograded`` (o notebook corrigido, na pasta temporária)
    existe. As linhas sem notebook corrigido (arquivo inválido, tempo esgotado antes do nbgrader...) ficam de fora.

    Parameters
    ----------
    rows : list of Row
        As linhas da correção (todas as aulas e notebooks; os pares são sempre do mesmo notebook da mesma aula).
    saida : Path
        A pasta de ``notas.csv``; a página vai para ``saida/similaridade.html``.
    threshold : float
        A fração mínima do código de um dos dois que está no trecho em comum (:data:`THRESHOLD`).
    min_shared : int
        Os caracteres de código filtrado em comum, no mínimo (:data:`MIN_SHARED`).
    respostas : list of dict, optional
        O código das respostas de cada linha, na ordem de ``rows`` (:func:`answers_of`), quando os notebooks
        corrigidos não estão mais nesta máquina (a junção das partes de uma turma dividida); sem ele, o código é lido
        de ``Row.autograded``.

    Returns
    -------
    SimilarityReport
        Os pares apontados (os listados na página) e a página escrita.

    Raises
    ------
    ValueError
        Se ``threshold`` não estiver em (0, 1], ``min_shared`` for negativo ou ``respostas`` não tiver uma entrada
        por linha.
    """
    if min_shared < 0:
        raise ValueError(f"min_shared: esperado um inteiro ≥ 0, recebido {min_shared!r}")
    if respostas is not None and len(respostas) != len(rows):
        raise ValueError(f"respostas: esperada uma por linha ({len(rows)}), recebidas {len(respostas)}")
    everything = catalog()
    grupos: dict[tuple, list[tuple[int, dict]]] = {}
    for k, (r, celulas) in enumerate(zip(rows, answers_of(rows) if respostas is None else respostas)):
        if celulas and (r.assignment, r.notebook) in everything:
            grupos.setdefault((r.assignment, r.notebook), []).append((k, celulas))
    pares, fora, comparados, alunos = [], {}, {}, {}
    for chave in sorted(grupos):
        membros = grupos[chave]
        comparados[chave] = len(membros)
        alunos[chave] = len({rows[k].student for k, _ in membros})
        if alunos[chave] < 2:
            continue
        achados = compare_documents([d for _, d in membros], [rows[k].student for k, _ in membros],
                                    given_hashes(everything[chave].source), threshold=threshold,
                                    min_shared=min_shared)
        achados.sort(key=lambda p: (-max(p[2], p[3]), -p[4], rows[membros[p[0]][0]].student,
                                    rows[membros[p[1]][0]].student))
        if len(achados) > MAX_PAIRS:
            fora[chave] = len(achados) - MAX_PAIRS
        for i, j, fi, fj, shared, trechos in achados[:MAX_PAIRS]:
            pares.append(SimilarPair(chave[0], chave[1], membros[i][0], membros[j][0], fi, fj, shared,
                                     membros[i][1], membros[j][1], trechos, anchor=f"par-{len(pares) + 1}"))
    _mark_rows(rows, pares)
    saida = Path(saida)
    saida.mkdir(parents=True, exist_ok=True)
    pagina = saida / PAGE
    pagina.write_text(similarity_html(rows, pares, fora, comparados, alunos, threshold, min_shared), encoding="utf-8")
    return SimilarityReport(pares, fora, comparados, pagina)


MAX_IN_CELL = 3  # pares citados na célula de notas.csv de uma linha (os outros, "e mais N")


def _mark_rows(rows: list[Row], pares: list[SimilarPair]) -> None:
    """``Row.similaridade`` de cada linha de um par: ``similaridade.html#par-1 (87 % com bruno)``, os mais
    parecidos primeiro; vazia nas outras."""
    por_linha: dict[int, list[tuple[SimilarPair, int]]] = {}
    for p in pares:
        por_linha.setdefault(p.a, []).append((p, p.b))
        por_linha.setdefault(p.b, []).append((p, p.a))
    for k, r in enumerate(rows):
        citados = por_linha.get(k, [])
        partes = [f"{PAGE}#{p.anchor} ({round(100 * p.score)} % com {rows[outro].student})"
                  for p, outro in citados[:MAX_IN_CELL]]
        if len(citados) > MAX_IN_CELL:
            partes.append(f"e mais {len(citados) - MAX_IN_CELL} par(es) na página")
        r.similaridade = " | ".join(partes)


def _highlighted(code: str, slices: list) -> str:
    """``code`` escapado, com cada trecho em comum dentro de ``<mark>``."""
    out, atual = [], 0
    for ini, fim in sorted(slices):
        ini, fim = max(ini, atual), min(fim, len(code))
        if fim <= ini:
            continue
        out += [html.escape(code[atual:ini]), "<mark>", html.escape(code[ini:fim]), "</mark>"]
        atual = fim
    out.append(html.escape(code[atual:]))
    return "".join(out)


PAGE_HEAD = """<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Similaridade entre as entregas</title>
<style>
body {font-family: system-ui, sans-serif; max-width: 80rem; margin: 2rem auto; padding: 0 1rem; color: #222}
table {border-collapse: collapse} td, th {border: 1px solid #ccc; padding: .3rem .6rem; text-align: left}
td:first-child {white-space: nowrap}
.aviso {background: #f4f7fb; border-left: 4px solid #3b6ea8; padding: .5rem 1rem}
section.par {border-top: 2px solid #3b6ea8; margin-top: 2rem}
.lado-a-lado {display: grid; grid-template-columns: 1fr 1fr; gap: 1rem}
pre {background: #fafafa; border: 1px solid #ddd; padding: .5rem; overflow-x: auto; font-size: .85rem;
  white-space: pre-wrap; overflow-wrap: anywhere}
mark {background: #ffd27a; color: #000}
.cabecalho {position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ccc; padding: .3rem 0}
h4 {margin: 1rem 0 .2rem; font-family: monospace}
bdi.dado-do-aluno {border: 1px dashed #b36b00; background: #fffdf7; padding: 0 .25rem; font-family: monospace}
</style></head><body>
"""


def similarity_html(rows: list[Row], pares: list[SimilarPair], fora: dict, comparados: dict, alunos: dict,
                    threshold: float, min_shared: int) -> str:
    """A página ``similaridade.html``: o aviso (nenhuma nota mudou), os parâmetros, a tabela dos pares e, para cada
    par, o código dos dois lado a lado com os trechos em comum marcados. Tudo o que veio do aluno (o nome, o código)
    é escapado; o nome vai na moldura de :func:`correcao.relatorio.student_text`."""
    esc = html.escape
    partes = [PAGE_HEAD, "<h1>Similaridade entre as entregas</h1>",
              '<div class="aviso"><p><b>Nenhuma nota mudou.</b> Esta página lista os pares de alunos cujo código, '
              "no mesmo notebook, tem trechos em comum acima do limiar. Código parecido não prova cópia: leia os "
              "trechos marcados e decida.</p>",
              f"<p>Limiar: um par aparece quando o trecho em comum cobre ao menos {round(100 * threshold)} % do código "
              f"de um dos dois e tem ao menos {min_shared} caracteres de código filtrado (nomes trocados por "
              "<code>V</code>, sem comentários nem espaços). Cada resposta é comparada com a mesma resposta do outro "
              "aluno. Não contam: o código dado pelo curso (o esboço de cada resposta, a resposta de referência de "
              "<code>solutions/</code>, que é pública, e as outras células de código da aula) e os trechos comuns da "
              f"turma, escritos por mais de {round(100 * COMMON_FRACTION)} % dos alunos do notebook (o limite fica "
              f"entre {COMMON_MIN} e {COMMON_MAX} alunos: a tabela abaixo diz o de cada notebook). Detector: "
              "copydetect (winnowing, como o MOSS).</p></div>"]
    partes.append("<h2>Notebooks comparados</h2><table><tr><th>Aula</th><th>Notebook</th><th>Entregas com código</th>"
                  "<th>Trecho comum (não conta): escrito por mais de</th><th>Pares acima do limiar</th></tr>")
    for (aula, nb), n in comparados.items():
        achados = sum(1 for p in pares if (p.assignment, p.notebook) == (aula, nb)) + fora.get((aula, nb), 0)
        partes.append(f"<tr><td>{esc(aula)}</td><td>{esc(nb)}</td><td>{n}</td>"
                      f"<td>{common_limit(alunos[(aula, nb)])} alunos</td><td>{achados}</td></tr>")
    partes.append("</table>")
    if not pares:
        partes.append("<p>Nenhum par acima do limiar.</p>")
    else:
        partes.append("<h2>Pares</h2><table><tr><th>Par</th><th>Aula · notebook</th><th>Aluno A</th><th>Aluno B</th>"
                      "<th>Do código de A</th><th>Do código de B</th><th>Em comum</th></tr>")
        for p in pares:
            partes.append(f'<tr><td><a href="#{p.anchor}">{p.anchor}</a></td><td>{esc(p.assignment)} · '
                          f"{esc(p.notebook)}</td><td>{student_text(rows[p.a].student)}</td>"
                          f"<td>{student_text(rows[p.b].student)}</td><td>{round(100 * p.fraction_a)} %</td>"
                          f"<td>{round(100 * p.fraction_b)} %</td><td>{p.shared} caracteres</td></tr>")
        partes.append("</table>")
    for (aula, nb), n in fora.items():
        partes.append(f"<p>{esc(aula)} · {esc(nb)}: mais {n} par(es) acima do limiar, menos parecidos, não "
                      f"listados (a página mostra os {MAX_PAIRS} mais parecidos de cada notebook).</p>")
    for p in pares:
        partes.append(_pair_section(rows, p))
    partes.append("</body></html>\n")
    return "\n".join(partes)


def _file(r: Row) -> str:
    return f" · {student_text(r.arquivo)}" if r.arquivo else ""


def _pair_section(rows: list[Row], p: SimilarPair) -> str:
    """Um par: o código das duas entregas lado a lado, uma linha por resposta (a mesma célula), com os trechos em
    comum marcados."""
    a, b = rows[p.a], rows[p.b]
    linhas = []
    for gid in [*p.code_a, *(g for g in p.code_b if g not in p.code_a)]:
        sa, sb = p.slices.get(gid, ([], []))
        lados = [f"<pre>{_highlighted(code[gid], fatias)}</pre>" if gid in code else "<p>(sem resposta)</p>"
                 for code, fatias in ((p.code_a, sa), (p.code_b, sb))]
        linhas.append(f'<h4>{html.escape(gid)}</h4><div class="lado-a-lado"><div>{lados[0]}</div>'
                      f"<div>{lados[1]}</div></div>")
    return (f'<section class="par" id="{p.anchor}"><h3>{p.anchor}: {student_text(a.student)} e '
            f"{student_text(b.student)} ({html.escape(p.assignment)} · {html.escape(p.notebook)})</h3>"
            f"<p>Em comum: {p.shared} caracteres de código filtrado, {round(100 * p.fraction_a)} % do código de A e "
            f"{round(100 * p.fraction_b)} % do de B. Os trechos em comum estão marcados.</p>"
            f'<div class="lado-a-lado cabecalho"><div><b>A: {student_text(a.student)}{_file(a)}</b></div>'
            f"<div><b>B: {student_text(b.student)}{_file(b)}</b></div></div>"
            + "".join(linhas) + "</section>")


__all__ = ["COMMON_FRACTION", "COMMON_MAX", "COMMON_MIN", "K_GRAM", "MAX_ANSWER_CHARS", "MAX_PAIRS", "MIN_SHARED",
           "PAGE", "THRESHOLD", "SimilarPair", "SimilarityReport", "answer_code", "answers_of", "common_limit",
           "compare_class", "compare_documents", "given_hashes", "similarity_html", "templates_of"]
