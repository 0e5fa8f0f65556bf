"""Gera a turma de exemplo (alunos fictícios) usada pelos testes da correção e pelo exemplo do README.

Cada aluno exercita um caso: entrega correta, parcial, vazia, e vários tipos de entrega quebrada.
Os notebooks partem das soluções e dos notebooks de aluno do próprio curso, com alterações feitas
aqui em código (nada de editar à mão).

A turma fica guardada como um ``.zip`` (``tests/turma-exemplo.zip``, no formato que o professor recebe):
assim os notebooks quebrados de propósito nunca são confundidos com notebooks do curso.

Uso: ``python tests/turma_exemplo/gerar.py [ARQUIVO.zip]`` (padrão: ``tests/turma-exemplo.zip``).
"""

from __future__ import annotations

import copy
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AULA1 = "modulo-06/aula-01-self-attention"
AULA2 = "modulo-06/aula-02-auto-atencao-do-zero"
AULA3 = "modulo-06/aula-03-atencao-num-transformer-real"
DEFAULT = ROOT / "tests" / "turma-exemplo.zip"


def load(kind: str, lesson: str, name: str) -> dict:
    return json.loads((ROOT / kind / lesson / f"{name}.ipynb").read_text(encoding="utf-8"))


def solution(lesson, name):
    return load("solutions", lesson, name)


def student(lesson, name):
    return load("notebooks", lesson, name)


def cell(nb: dict, grade_id: str) -> dict:
    return next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def fill(nb: dict, grade_id: str, code: str) -> dict:
    """Troca o esboço do aluno por ``code`` na célula de solução ``grade_id``."""
    c = cell(nb, grade_id)
    c["source"] = code
    return nb


def clean(nb: dict) -> dict:
    """Como um aluno entregaria: sem saídas (o nbgrader executa de novo)."""
    nb = copy.deepcopy(nb)
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
    return nb


EX3_OK = '''def embeddings_pulou_alto_parecidos():
    tokens, E = atencao.gato_felino()
    E[3] = [0.0, 0.0, 0.9, 0.1]
    return E'''

EX4_SEM_ESCALA = '''def atencao_com_projecoes(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    pesos = atencao.softmax(Q @ K.T)   # esqueceu de dividir por sqrt(d_k)
    return pesos @ V, pesos'''


def cases() -> dict[str, dict[str, object]]:
    """aluno -> {nome do arquivo: notebook (dict) ou bytes}."""
    sol1, sol_proj = solution(AULA1, "03-exercicios"), solution(AULA1, "04-projeto")
    stu1 = student(AULA1, "03-exercicios")

    parcial = clean(stu1)
    ex3_src = "".join(cell(sol1, "aula01-ex3-solucao")["source"])
    fill(parcial, "aula01-ex3-solucao", ex3_src)
    fill(parcial, "aula01-ex4-solucao", EX4_SEM_ESCALA)

    laco = clean(stu1)
    fill(laco, "aula01-ex3-solucao", "def embeddings_pulou_alto_parecidos():\n    while True:\n        pass")
    fill(laco, "aula01-ex4-solucao", "".join(cell(sol1, "aula01-ex4-solucao")["source"]))

    excecao = clean(sol1)
    fill(excecao, "aula01-ex4-solucao", "print(1 / 0)  # erro fora da função\n" + "".join(cell(sol1, "aula01-ex4-solucao")["source"]))

    sintaxe = clean(sol1)
    fill(sintaxe, "aula01-ex3-solucao", "def embeddings_pulou_alto_parecidos(:\n    return None")

    apagadas = clean(sol1)
    apagadas["cells"] = [c for c in apagadas["cells"]
                         if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") != "aula01-ex4-verificacao"]
    apagadas["cells"][1], apagadas["cells"][2] = apagadas["cells"][2], apagadas["cells"][1]  # reordenadas

    sem_metadados = clean(sol1)
    cell(sem_metadados, "aula01-ex3-verificacao")["metadata"].pop("nbgrader")
    editada = cell(sem_metadados, "aula01-ex4-verificacao")
    editada["source"] = "print('✅ tudo certo!')  # tentativa de burlar a verificação"

    tipo_trocado = clean(sol1)
    c = cell(tipo_trocado, "aula01-ex3-solucao")
    c["cell_type"] = "markdown"
    c.pop("outputs"), c.pop("execution_count")

    saida_enorme = clean(sol1)
    fill(saida_enorme, "aula01-ex4-solucao", "for i in range(20_000):\n    print('linha', i)\n"
         + "".join(cell(sol1, "aula01-ex4-solucao")["source"]))

    arquivos = clean(sol1)
    fill(arquivos, "aula01-ex3-solucao", "import os, pathlib\npathlib.Path('../../INVADIDO.txt').write_text('oi')\n"
         "for p in pathlib.Path('.').glob('*.ipynb'):\n    os.remove(p)\n" + ex3_src)

    return {
        "ana-correta": {"03-exercicios.ipynb": clean(sol1), "04-projeto.ipynb": clean(sol_proj),
                        "04-exercicios.ipynb": clean(solution(AULA2, "04-exercicios"))},
        "bruno-parcial": {"03-exercicios.ipynb": parcial},
        "carla-vazia": {"03-exercicios.ipynb": clean(stu1), "04-projeto.ipynb": clean(student(AULA1, "04-projeto"))},
        "davi-laco-infinito": {"03-exercicios.ipynb": laco},
        "elisa-excecao": {"03-exercicios.ipynb": excecao},
        "fabio-sintaxe": {"03-exercicios.ipynb": sintaxe},
        "gabi-celulas-apagadas": {"03-exercicios.ipynb": apagadas},
        "heitor-metadados": {"03-exercicios.ipynb": sem_metadados},
        "iris-tipo-trocado": {"03-exercicios.ipynb": tipo_trocado},
        "joao-arquivos-ruins": {"03-exercicios.ipynb": b"", "04-projeto.ipynb": b"isto nao e um notebook {"},
        "karla-outra-aula": {"03-exercicios.ipynb": clean(solution(AULA2, "04-exercicios"))},
        "leo-saida-enorme": {"03-exercicios.ipynb": saida_enorme},
        "marina-mexe-em-arquivos": {"03-exercicios.ipynb": arquivos},
        "nina-sem-notebooks": {"leia-me.txt": b"esqueci de anexar\n"},
        # mesmo nome de arquivo da Aula 1 (03-exercicios): a correção reconhece a Aula 3 pelas células
        "olga-aula-3": {"03-exercicios.ipynb": clean(solution(AULA3, "03-exercicios"))},
    }


def files() -> dict[str, bytes]:
    """Caminho dentro do zip (``turma-exemplo/<aluno>/<arquivo>``) → conteúdo."""
    out = {}
    for name, entries in cases().items():
        for fname, content in entries.items():
            out[f"turma-exemplo/{name}/{fname}"] = content if isinstance(content, bytes) else (
                json.dumps(content, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    return out


def write(dest: Path = DEFAULT) -> Path:
    """Escreve o zip com data fixa em cada arquivo: o mesmo conteúdo dá sempre os mesmos bytes."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in sorted(files().items()):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return dest


if __name__ == "__main__":
    print(write(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT))
