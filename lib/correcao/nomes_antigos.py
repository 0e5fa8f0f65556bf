"""Entregas feitas com uma versão anterior do curso: outros ids de célula, outros nomes de função e, às vezes,
menos exercícios.

As versões publicadas estão em ``versoes_antigas.json``, gerada do histórico do git por
``scripts/versoes_antigas.py`` e guardada no repositório (o clone da CI pode ser raso). Para cada versão de
cada notebook: os ids de correção de então e o id atual de cada um (``ex3-solucao`` → ``aula01-ex3-solucao``),
os nomes antigos das funções das respostas e o atual (``minha_softmax`` → ``my_softmax``), as verificações
que ela tinha e as impressões digitais das células do notebook de aluno daquela versão.

Antes da correção (:func:`recognize_version`, :func:`translate_ids`, :func:`update_answer`):

- a versão é reconhecida pelos ids e pelo texto das células (empate: a versão atual);
- os ids antigos viram os atuais (sem isso, as células seriam "de outro notebook" e ignoradas);
- cada resposta que define a função só com o nome antigo ganha, no fim da própria célula, a linha
  ``nome_novo = nome_antigo`` (as verificações do curso atual chamam o nome novo);
- as verificações de exercícios que a versão não tinha não contam (nem no total nem no máximo).

A linha de ``notas.csv`` diz tudo isso. :data:`RENAMED_FUNCTIONS` é a lista de todos os nomes antigos (o teste
``test_funcoes_dos_exercicios_com_nomes_em_ingles`` a usa).
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

TABLE = Path(__file__).with_name("versoes_antigas.json")


@dataclass(frozen=True)
class OldVersion:
    """Uma versão anterior de um notebook do curso (uma linha de ``versoes_antigas.json``)."""

    caminho: str  # modulo-06/<aula>/<notebook>.ipynb
    aula: str
    notebook: str
    commits: tuple  # (primeiro, último) commit em que o notebook era assim
    datas: tuple  # (primeira, última) data, AAAA-MM-DD
    ids: frozenset
    mapa_ids: dict = field(hash=False, compare=False)  # id antigo -> id atual (só os que mudaram)
    funcoes: dict = field(hash=False, compare=False)  # nome antigo -> nome atual
    verificacoes: tuple = ()  # as verificações atuais que a versão já tinha
    fontes: frozenset = frozenset()  # impressões digitais das células do notebook de aluno
    respostas: dict = field(default_factory=dict, hash=False, compare=False)  # id atual -> impressões

    @property
    def descricao(self) -> str:
        de, ate = self.datas
        quando = f"de {de} a {ate}" if de != ate else f"de {de}"
        commits = (f"commits {self.commits[0][:8]} a {self.commits[1][:8]}" if self.commits[0] != self.commits[1]
                   else f"commit {self.commits[0][:8]}")
        return f"{quando}, {commits}"


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    if not TABLE.exists():
        return {"versoes": []}
    return json.loads(TABLE.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def old_versions() -> tuple[OldVersion, ...]:
    """As versões anteriores de todos os notebooks, da tabela guardada."""
    return tuple(OldVersion(v["caminho"], v["aula"], v["notebook"], tuple(v["commits"]), tuple(v["datas"]),
                            frozenset(v["ids"]), dict(v["mapa_ids"]), dict(v["funcoes"]), tuple(v["verificacoes"]),
                            frozenset(v["fontes"]), {k: frozenset(x) for k, x in v["respostas"].items()})
                 for v in _table()["versoes"])


def answers_of_all_versions(aula: str, notebook: str) -> dict[str, frozenset]:
    """id atual da resposta -> impressões digitais das respostas de ``solutions/`` nas versões anteriores
    desse notebook (a atual vem de ``solutions/``: :func:`catalogo.solution_fingerprints`)."""
    out: dict[str, set] = {}
    for v in old_versions():
        if (v.aula, v.notebook) == (aula, notebook):
            for gid, x in v.respostas.items():
                out.setdefault(gid, set()).update(x)
    return {k: frozenset(x) for k, x in out.items()}


# nome antigo -> nome atual, de todas as versões (mais os nomes dos notebooks da versão anterior ao git)
_BEFORE_TABLE = {
    "embeddings_pulou_alto_parecidos": "similar_embeddings",
    "atencao_com_projecoes": "attention_with_projections",
    "visualizar_atencao": "visualize_attention",
    "minha_softmax": "my_softmax",
    "mascara_causal": "my_causal_mask",
    "minha_atencao_multicabeca": "my_multi_head_attention",
    "heads_onde_olha": "top_heads",
    "distancia_media": "mean_attention_distance",
    "massa_especiais": "special_token_mass",
    "linha_de_atencao": "attention_row",
}
RENAMED_FUNCTIONS = _BEFORE_TABLE | {a: n for v in old_versions() for a, n in v.funcoes.items()}


def defined_functions(fonte: str) -> list[str]:
    """Os nomes das funções definidas no nível de cima de ``fonte`` (código de uma célula), na ordem."""
    limpo = "\n".join(ln for ln in fonte.splitlines() if not ln.lstrip().startswith(("%", "!")))
    try:
        arvore = ast.parse(limpo)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", fonte, flags=re.M)
    return [n.name for n in arvore.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _defines(fonte: str, nome: str) -> bool:
    return re.search(rf"^\s*(def\s+{nome}\s*\(|{nome}\s*=(?!=))", fonte, flags=re.M) is not None


def update_answer(fonte: str, renomeadas: dict | None = None) -> tuple[str, list[str]]:
    """A célula de resposta ``fonte`` com ``novo = antigo`` no fim para cada função definida só com o nome
    antigo (de ``renomeadas``, padrão :data:`RENAMED_FUNCTIONS`); devolve (fonte, nomes antigos encontrados)."""
    renomeadas = RENAMED_FUNCTIONS if renomeadas is None else renomeadas
    achados = [antigo for antigo, novo in renomeadas.items() if _defines(fonte, antigo) and not _defines(fonte, novo)]
    if not achados:
        return fonte, []
    linhas = "\n".join(f"{renomeadas[a]} = {a}  # nome da versão anterior do curso" for a in achados)
    return fonte.rstrip("\n") + "\n" + linhas + "\n", achados


def _cell_ids(nb: dict) -> set[str]:
    from .catalogo import grade_ids

    return set(grade_ids(nb))


@functools.lru_cache(maxsize=None)
def _current_sources(source: Path) -> frozenset:
    """Impressões digitais das células do notebook de aluno atual (gerado de ``source``, em ``solutions/``)."""
    from .catalogo import ROOT, SOLUTIONS, cell_fingerprint

    try:
        aluno = ROOT / "notebooks" / Path(source).resolve().relative_to(SOLUTIONS)
    except ValueError:
        return frozenset()
    if not aluno.exists():
        return frozenset()
    return frozenset(cell_fingerprint(c) for c in json.loads(aluno.read_text(encoding="utf-8")).get("cells", []))


def recognize_version(nb: dict | None, everything: dict) -> OldVersion | None:
    """A versão anterior do curso de que ``nb`` é o notebook de aluno, ou ``None`` (a atual, ou nenhuma).

    Ganha quem tem mais ids de correção em comum com ``nb``; empatados, quem tem mais células com o mesmo
    texto; empate dos dois, a versão atual. Um notebook atual com células apagadas continua sendo o atual (o
    texto das outras células é o de agora).
    """
    from .catalogo import all_ids, cell_fingerprint

    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None
    ids = _cell_ids(nb)
    if not ids:
        return None
    fontes = {cell_fingerprint(c) for c in nb["cells"] if isinstance(c, dict)}
    melhor, escolhida = (0, 0, 0), None
    for g in everything.values():
        nota = (len(ids & set(all_ids(g.source))), len(fontes & _current_sources(g.source)), 1)
        if nota > melhor:
            melhor, escolhida = nota, None
    for v in old_versions():
        if (v.aula, v.notebook) not in everything:
            continue
        nota = (len(ids & v.ids), len(fontes & v.fontes), 0)
        if nota > melhor:
            melhor, escolhida = nota, v
    return escolhida


def translate_ids(nb: dict, versao: OldVersion) -> dict:
    """Cópia de ``nb`` com os ids de correção da ``versao`` trocados pelos atuais."""
    from .catalogo import nbgrader_meta

    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id")
        if isinstance(gid, str) and gid in versao.mapa_ids:
            meta["grade_id"] = versao.mapa_ids[gid]
    return nb


def version_note(versao: OldVersion, ausentes: list[str]) -> str:
    """O que a linha de ``notas.csv`` diz de uma entrega de uma versão anterior."""
    parts = [f"notebook de uma versão anterior do curso ({versao.descricao}), reconhecido e corrigido com as "
             "verificações de hoje, sem perder ponto"]
    if versao.mapa_ids:
        trocas = list(versao.mapa_ids.items())
        parts.append("ids de célula antigos trocados pelos atuais (" + ", ".join(f"{a} → {n}" for a, n in trocas[:3])
                     + (f" e mais {len(trocas) - 3}" if len(trocas) > 3 else "") + ")")
    if ausentes:
        parts.append(f"exercícios que essa versão não tinha não contam ({', '.join(ausentes)})")
    return "; ".join(parts)
