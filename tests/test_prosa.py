"""A prosa dos notebooks diz o que as saídas mostram, sem decalques do inglês, e as figuras se leem.

Cada teste pega um tipo de defeito que já apareceu numa leitura do curso: um número no texto que a saída não tem
(o texto dizia "bem mais peso em todas as linhas" e a figura mostrava 0,24 contra 0,26), termos proibidos
("Resposta modelo", "até o arredondamento", cache "rolante"), um diagrama com subgrafos que o Mermaid empilha em
colunas de 1.700 px e um eixo logarítmico com marcas "3×10¹".
"""

import functools
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for d in ("notebooks", "solutions") for p in (ROOT / d).rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)
# termo proibido na prosa → o que usar no lugar
FORBIDDEN = {
    "Resposta modelo": "Resposta de referência",
    "Resposta-modelo": "Resposta de referência",
    "até o arredondamento": "'a menos do arredondamento' não: diga 'só por arredondamento' ou explique a diferença",
    "rolante": "cache circular (*rolling buffer*)",
    "mudança de fase": "transição (ou descreva o que muda)",
    "surgiu porque ajuda": "diga o que se mediu: que apareceu no treino não prova que ajuda",
    "passagem para a frente": "*forward* (explicado na primeira vez)",
    "passagem para trás": "*backward* (explicado na primeira vez)",
    "caminho de ida": "*forward* (explicado na primeira vez)",
    "GELU exata": "a GELU pela erf (a biblioteca usa uma aproximação da erf)",
}

# Números com vírgula decimal que a prosa cita sem que a saída os imprima: cada um com o motivo.
NUMBERS_NOT_FROM_OUTPUTS = {
    ("aula-01-self-attention/02-codigo", "0,43"): "soma de dois pesos impressos (gato e felino)",
    ("aula-01-self-attention/03-exercicios", "0,8"): "limiar do enunciado",
    ("aula-01-self-attention/04-projeto", "0,13"): "exemplo de leitura de um mapa, não uma saída",
    ("aula-01-self-attention/04-projeto", "0,55"): "exemplo de leitura de um mapa, não uma saída",
    ("aula-02-auto-atencao-do-zero/01-teoria", "1,3"): "exemplo de conta no texto",
    ("aula-03-atencao-num-transformer-real/02-codigo", "2,8"): "lido na figura das diferenças por coordenada",
    ("aula-04-bloco-transformer/01-teoria", "0,1"): "taxa de dropout do artigo (seção 5.4)",
}
_DECIMAL = re.compile(r"(?<![\d,.])\d+,\d+(?![\d,])")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.S)


def _param(path: Path):
    return pytest.param(path, id=str(path.relative_to(ROOT)))


def _joined(value):
    return value if isinstance(value, str) else "".join(value)


@functools.lru_cache(maxsize=None)
def _read(path: Path):
    """As células do notebook, com cada ``source`` (e cada texto de saída) numa string só; sem validar (só lemos)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for cell in data["cells"]:
        outputs = [{**out, "text": _joined(out["text"])} if "text" in out else out for out in cell.get("outputs", [])]
        cells.append({**cell, "source": _joined(cell["source"]), "outputs": outputs})
    return cells


def _is_answer(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))


def _outputs_and_code(cells) -> str:
    parts = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        parts.append(cell["source"])
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            parts.append(text if isinstance(text, str) else "".join(text))
    return "\n".join(parts)


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_sem_decalques_nem_termos_trocados(path):
    cells = _read(path)
    text = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    found = {term: fix for term, fix in FORBIDDEN.items() if term.lower() in text.lower()}
    assert not found, f"{path.relative_to(ROOT)}: termos a trocar (termo → o que usar): {found}"


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS if p.parent.parent.name == "modulo-06"])
def test_numero_citado_na_prosa_e_o_que_o_notebook_imprime(path):
    """Um número decimal no texto (fora das fórmulas e das respostas escritas) aparece numa saída ou no código do
    notebook, com ponto ou com vírgula: o texto descreve o que a célula mostra, e não uma execução antiga."""
    cells = _read(path)
    printed = _outputs_and_code(cells)
    key = f"{path.parent.name}/{path.stem}"
    missing = []
    for cell in cells:
        if cell["cell_type"] != "markdown" or _is_answer(cell):
            continue
        for number in _DECIMAL.findall(_MATH.sub(" ", cell["source"])):
            if number not in printed and number.replace(",", ".") not in printed \
                    and (key, number) not in NUMBERS_NOT_FROM_OUTPUTS:
                missing.append(number)
    assert not missing, (f"{path.relative_to(ROOT)}: números do texto que nenhuma saída imprime: {missing} "
                         f"(imprima-os, corrija o texto ou, se não vêm de uma saída, explique em "
                         f"NUMBERS_NOT_FROM_OUTPUTS)")


def test_o_padrao_de_numero_pega_o_que_deve():
    assert _DECIMAL.findall("pesos 0,24 e 0,26; a lista [1, 2] e 3,5,7 não") == ["0,24", "0,26"]
    assert _DECIMAL.findall(_MATH.sub(" ", "a fórmula $0{,}5$ e $$x = 1,5$$ ficam de fora")) == []


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_diagrama_com_subgrafos_diz_a_direcao_de_cada_um(path):
    """Sem ``direction`` dentro de cada subgrafo, o Mermaid desenha cada um de cima para baixo, e um
    ``flowchart LR`` de dois subgrafos vira duas colunas de 1.700 px."""
    cells = _read(path)
    for cell in cells:
        for block in re.findall(r"```mermaid\n(.*?)```", cell["source"], re.S):
            subgraphs = re.findall(r"^\s*subgraph\b(.*?)^\s*end\b", block, re.S | re.M)
            undirected = [s.splitlines()[0].strip() for s in subgraphs if not re.search(r"^\s*direction\s", s, re.M)]
            assert not undirected, f"{path.relative_to(ROOT)}: subgrafos sem `direction`: {undirected}"


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_eixo_logaritmico_com_marcas_escolhidas(path):
    """Um eixo x logarítmico com poucos pontos ganha marcas secundárias "3×10¹"; a célula que o desenha diz as
    marcas (``set_xticks``)."""
    cells = _read(path)
    for cell in cells:
        if cell["cell_type"] == "code" and re.search(r"\.(loglog|semilogx)\(|set_xscale\(\s*['\"]log", cell["source"]):
            assert "set_xticks" in cell["source"], (
                f"{path.relative_to(ROOT)}: eixo x logarítmico sem set_xticks:\n{cell['source'][:300]}")


@pytest.mark.parametrize("path", sorted((ROOT / "lib").rglob("*.py")) + [ROOT / "docs" / "professor.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_sem_decalques_na_biblioteca_nem_no_guia(path):
    """As docstrings e mensagens da biblioteca (e o guia do professor) seguem os mesmos termos dos notebooks."""
    text = path.read_text(encoding="utf-8").lower()
    found = {term: fix for term, fix in FORBIDDEN.items() if term.lower() in text}
    assert not found, f"{path.relative_to(ROOT)}: termos a trocar (termo → o que usar): {found}"
