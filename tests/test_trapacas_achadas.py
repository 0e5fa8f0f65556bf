"""Trapaças que passam hoje: respostas erradas (ou que fogem do que o enunciado pede) aprovadas com ✅.

Cada teste reproduz um furo achado ao atacar as verificações e a correção como um aluno desonesto: ele
afirma o comportamento certo (a resposta é recusada, ou não ganha pontos) e **falha enquanto o furo existir**.

Aula 5, exercício 3 (``my_numerical_gradient``): o enunciado pede o gradiente **pelas diferenças centrais**,
"com o ``eps`` recebido", e diz que a verificação confere isso. Hoje ela só compara o resultado com o gradiente
exato (até 1e-7 relativo), e por isso aprova:

- o backward analítico do exercício 2 devolvido como se fosse a régua (nenhuma diferença calculada);
- a derivada pelo passo complexo (exata, sem diferenças centrais);
- as diferenças centrais com um passo fixo de 1e-4, ignorando o ``eps`` recebido (o erro de truncamento,
  da ordem de 1e-8, fica abaixo da tolerância).

Os mesmos três ganham os pontos na correção isolada (testes lentos, com o bwrap). A verificação passou a
chamar a função também com um passo grande (``eps = 0.2``), em que as diferenças centrais se afastam do
gradiente exato; os testes abaixo agora passam.

Na correção: uma função que escreve lixo em todos os descritores abertos do kernel prende a célula além do
limite dela, até o orçamento do notebook (furo aberto, marcado ``xfail`` estrito: quando for resolvido, o
teste avisa).
"""

from __future__ import annotations

import copy
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from atencao.checks import aula05
from correcao import isolamento, motor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_checks_aula05 import att_certo as _backward_analitico  # noqa: E402
from test_checks_aula05 import num_certo  # noqa: E402
from turma_exemplo import gerar  # noqa: E402


def regua_analitica(Q, K, V, dO, mask=None, eps=1e-6):
    """Não calcula diferença nenhuma: devolve o backward analítico (o do exercício 2)."""
    return _backward_analitico(dO, Q, K, V, mask=mask)


def regua_passo_complexo(Q, K, V, dO, mask=None, eps=1e-6):
    """A derivada pelo passo complexo (f(x + ih)/h, parte imaginária): exata, sem diferenças centrais."""
    def perda(Q, K, V):
        S = Q @ K.T / np.sqrt(Q.shape[-1])
        if mask is not None:
            S = np.where(mask, S, -1e300)
        E = np.exp(S - S.real.max(axis=-1, keepdims=True))
        if mask is not None:
            E = np.where(mask, E, 0)
        soma = E.sum(axis=-1, keepdims=True)
        A = np.where(soma != 0, E / np.where(soma != 0, soma, 1), 0)
        return ((A @ V) * dO).sum()

    arrays = [np.asarray(x, dtype=complex) for x in (Q, K, V)]
    grads = []
    for j in range(3):
        g = np.zeros(arrays[j].shape)
        for i in np.ndindex(g.shape):
            movidos = [x.copy() for x in arrays]
            movidos[j][i] += 1e-30j
            g[i] = perda(*movidos).imag / 1e-30
        grads.append(g)
    return tuple(grads)


def regua_eps_fixo(Q, K, V, dO, mask=None, eps=1e-6):
    """Diferenças centrais, mas com o passo 1e-4 no lugar do ``eps`` recebido."""
    return num_certo(Q, K, V, dO, mask=mask, eps=1e-4)


REGUAS_ERRADAS = [regua_analitica, regua_passo_complexo, regua_eps_fixo]


@pytest.mark.parametrize("regua", REGUAS_ERRADAS, ids=lambda f: f.__name__)
def test_aula05_ex3_recusa_a_regua_que_nao_e_a_pedida(regua, capsys):
    resultado = aula05.exercicio_3(regua)
    saida = capsys.readouterr().out
    assert not resultado, f"{regua.__name__} foi aprovada:\n{saida}"
    assert "❌" in saida


# --- na correção isolada ---------------------------------------------------------------------------------------

EX1_CERTO = ("def my_softmax_backward(A, dA):\n"
             "    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))\n")
EX2_CERTO = ("def my_attention_backward(dO, Q, K, V, mask=None):\n"
             "    _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)\n"
             "    d_k = Q.shape[-1]\n"
             "    dA = dO @ V.T\n"
             "    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))\n"
             "    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), A.T @ dO\n")
EX3_ENTREGAS = {
    "regua-analitica": ("def my_numerical_gradient(Q, K, V, dO, mask=None, eps=1e-6):\n"
                        "    return my_attention_backward(dO, Q, K, V, mask=mask)\n"),
    "regua-eps-fixo": ("def my_numerical_gradient(Q, K, V, dO, mask=None, eps=1e-6):\n"
                       "    def perda():\n"
                       "        saida, _ = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)\n"
                       "        return float((saida * dO).sum())\n"
                       "    h = 1e-4\n"
                       "    grads = []\n"
                       "    for x in (Q, K, V):\n"
                       "        g = np.zeros_like(x)\n"
                       "        for i in np.ndindex(x.shape):\n"
                       "            original = x[i]\n"
                       "            x[i] = original + h\n"
                       "            mais = perda()\n"
                       "            x[i] = original - h\n"
                       "            menos = perda()\n"
                       "            x[i] = original\n"
                       "            g[i] = (mais - menos) / (2 * h)\n"
                       "        grads.append(g)\n"
                       "    return tuple(grads)\n"),
}


@pytest.fixture(scope="module")
def turma_das_reguas(tmp_path_factory):
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    pasta = tmp_path_factory.mktemp("reguas")
    for aluno, ex3 in EX3_ENTREGAS.items():
        nb = copy.deepcopy(gerar.student("modulo-06/aula-05-treinando-a-atencao", "03-exercicios"))
        gerar.fill(nb, "aula05-ex1-solucao", EX1_CERTO)
        gerar.fill(nb, "aula05-ex2-solucao", EX2_CERTO)
        gerar.fill(nb, "aula05-ex3-solucao", ex3)
        destino = pasta / "entregas" / aluno / "03-exercicios.ipynb"
        destino.parent.mkdir(parents=True)
        destino.write_text(json.dumps(gerar.clean(nb)), encoding="utf-8")
    motor.grade_class(pasta / "entregas", pasta / "saida", cell_timeout=30, notebook_timeout=180,
                      log=lambda *_: None)
    with open(pasta / "saida" / "notas.csv", encoding="utf-8") as f:
        return {r["aluno"]: r for r in csv.DictReader(f)}


@pytest.mark.lento
@pytest.mark.parametrize("aluno", sorted(EX3_ENTREGAS))
def test_correcao_nao_da_os_pontos_da_regua_a_quem_nao_a_escreveu(turma_das_reguas, aluno):
    linha = turma_das_reguas[aluno]
    assert linha["aula05-ex3-verificacao"] in ("0", ""), (
        f"{aluno}: {linha['aula05-ex3-verificacao']} ponto(s) no exercício 3, situação {linha['situacao']}")



def _corrigir_um(tmp_path, aula: str, grade_id: str, codigo: str) -> tuple[dict, list, float]:
    """Corrige (nas caixas, célula de 10 s, orçamento de 90 s) o 03-exercicios de ``aula`` com ``codigo`` na
    resposta ``grade_id``: (linha de notas.csv, mensagens da correção, segundos)."""
    import time

    nb = copy.deepcopy(gerar.student(aula, "03-exercicios"))
    gerar.fill(nb, grade_id, codigo)
    destino = tmp_path / "entregas" / "hostil" / "03-exercicios.ipynb"
    destino.parent.mkdir(parents=True)
    destino.write_text(json.dumps(gerar.clean(nb)), encoding="utf-8")
    mensagens = []
    inicio = time.monotonic()
    motor.grade_class(tmp_path / "entregas", tmp_path / "saida", cell_timeout=10, notebook_timeout=90,
                      log=mensagens.append)
    duracao = time.monotonic() - inicio
    with open(tmp_path / "saida" / "notas.csv", encoding="utf-8") as f:
        return next(csv.DictReader(f)), mensagens, duracao


# --- atrasar a correção: lixo nos descritores do kernel -----------------------------------------------------------

# a função do aluno escreve bytes quaisquer em todos os descritores abertos do próprio processo (os sockets do
# kernel entre eles): a célula de verificação não volta e as conexões com o kernel ficam sem par. Antes, o envio
# seguinte ao kernel esperava para sempre, o notebook ia até o fim do orçamento e, como a CPU ficou parada, era
# corrigido de novo (o dobro do orçamento); agora o envio tem prazo e o kernel é encerrado ali
LIXO_NOS_DESCRITORES = ("import os\n"
                        "_fds = [int(x) for x in os.listdir('/proc/self/fd')]\n"
                        "def layer_norm(x, weight, bias, eps=1e-5):\n"
                        "    for fd in _fds:\n"
                        "        if fd > 2:\n"
                        "            try:\n"
                        "                os.write(fd, b'{\"id\": 1, \"retorno\": 1.0}\\n')\n"
                        "            except OSError:\n"
                        "                pass\n"
                        "    return np.zeros_like(x)\n")


@pytest.mark.lento
def test_lixo_nos_descritores_nao_prende_a_correcao_alem_do_limite_da_celula(tmp_path):
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    linha, mensagens, duracao = _corrigir_um(tmp_path, "modulo-06/aula-04-bloco-transformer", "aula04-ex2-solucao",
                                             LIXO_NOS_DESCRITORES)
    assert linha["total"] == "0"
    # a célula tem 10 s (mais os 5 s de quem não atende à interrupção); o notebook não deve chegar ao orçamento
    # de 90 s, nem ser corrigido de novo
    assert not any("de novo" in str(m) for m in mensagens), mensagens
    assert duracao < 75, f"a correção de um notebook levou {duracao:.0f} s (motivo: {linha['motivo'][-300:]})"


# --- derrubar a correção da turma inteira com um notebook malformado -----------------------------------------------

def _malformado(como: str) -> dict:
    nb = gerar.clean(copy.deepcopy(gerar.student("modulo-06/aula-01-self-attention", "03-exercicios")))
    if como == "fonte-com-numeros":  # uma célula (mesmo de texto) com a fonte numa lista de números
        next(c for c in nb["cells"] if c["cell_type"] == "markdown")["source"] = [1, 2, 3]
    elif como == "grade-id-lista":  # o grade_id de uma resposta numa lista
        celula = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
        celula["metadata"]["nbgrader"]["grade_id"] = ["a", {"b": 1}]
    elif como == "substituto-isolado":  # "\ud800" é JSON válido, mas não é texto
        gerar.fill(nb, "aula01-ex3-solucao", "def similar_embeddings():\n    return '\ud800'\n")
    return nb


@pytest.mark.parametrize("como", ["fonte-com-numeros", "grade-id-lista", "substituto-isolado"])
def test_notebook_malformado_vira_arquivo_invalido_e_a_turma_segue(tmp_path, como):
    """Achado: cada um destes derrubava a leitura da turma inteira (traceback em inglês, nenhum notas.csv)."""
    from correcao.catalogo import catalog
    from correcao.entregas import read_submissions

    for aluno, nb in (("ana", gerar.clean(gerar.student("modulo-06/aula-01-self-attention", "03-exercicios"))),
                      ("hostil", _malformado(como))):
        (tmp_path / "entregas" / aluno).mkdir(parents=True)
        texto = json.dumps(nb, ensure_ascii=True)  # o \ud800 vai escapado, como no arquivo do achado
        (tmp_path / "entregas" / aluno / "03-exercicios.ipynb").write_text(texto, encoding="utf-8")
    plano, linhas, _ = motor.plan_class(read_submissions(tmp_path / "entregas", tmp_path / "ler"), catalog(),
                                        tmp_path / "saneados")
    assert [t.student for t in plano] == ["ana"]
    (linha,) = linhas
    assert linha.student == "hostil" and linha.status == "arquivo_invalido", linha
    motivo = " ".join(linha.reasons)
    assert "não foi corrigido" in motivo or "texto inválido" in motivo, motivo
    assert "Traceback" not in motivo


# --- a atenção pronta por um ajudante interno da biblioteca ------------------------------------------------------

def proj_por_attend_checked(X, W_q, W_k, W_v):
    """Achado: attend_checked (o passo comum das prontas) não estava na lista do proibido: 2/2 na Aula 1."""
    from atencao.attention import attend_checked

    return attend_checked(X @ W_q, X @ W_k, X @ W_v, None, None)


def mascara_por_attend_checked(Q, K, V, mask=None):
    from atencao.attention import attend_checked

    return attend_checked(Q, K, V, mask, None)


def backward_por_multihead_backward(dO, Q, K, V, mask=None):
    """Uma camada de uma cabeça com projeções identidade: a volta dela dá dQ, dK e dV."""
    from atencao import MultiHeadAttention
    from atencao.backward import multihead_backward

    eye = np.eye(Q.shape[-1])
    camada = MultiHeadAttention.from_weights(eye, eye, eye, eye, n_heads=1)
    g = multihead_backward(camada, dO, Q, K, V, mask=mask)
    return g["query"], g["key"], g["value"]


@pytest.mark.parametrize("verificacao, resposta, nome", [
    ("aula01.exercicio_4", proj_por_attend_checked, "attend_checked"),
    ("aula02.exercicio_1", mascara_por_attend_checked, "attend_checked"),
    ("aula05.exercicio_2", backward_por_multihead_backward, "multihead_backward"),
])
def test_atencao_pronta_por_ajudante_interno_e_recusada(capsys, verificacao, resposta, nome):
    import importlib

    modulo, funcao = verificacao.split(".")
    check = getattr(importlib.import_module(f"atencao.checks.{modulo}"), funcao)
    assert not check(resposta)
    assert nome in capsys.readouterr().out


# --- engolir o limite da célula na conferência ---------------------------------------------------------------------

# o limite da célula, no lado do aluno da conferência, é uma exceção (BaseException); um laço que a engole seguia
# rodando, e a conferência esperava o resto do orçamento do notebook (165 s de 180 no achado)
ENGOLE_O_LIMITE = ("import time\n"
                   "while True:\n"
                   "    try:\n"
                   "        while True:\n"
                   "            time.sleep(0.5)\n"
                   "    except BaseException:\n"
                   "        pass\n")


@pytest.mark.lento
def test_laco_que_engole_o_limite_da_celula_termina_logo_depois_dele(tmp_path):
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    linha, mensagens, duracao = _corrigir_um(tmp_path, "modulo-06/aula-01-self-attention", "aula01-ex3-solucao",
                                             gerar.EX3_OK + "\n" + ENGOLE_O_LIMITE)
    assert linha["situacao"] == "tempo_esgotado", linha
    assert not any("de novo" in str(m) for m in mensagens), mensagens
    # a célula tem 10 s; o kernel espera mais 5 s pela interrupção e o alarme da conferência se repete por 3 s
    assert duracao < 60, f"a correção de um notebook levou {duracao:.0f} s (motivo: {linha['motivo'][-300:]})"


# --- desligar a vigilância das funções proibidas por uma chamada em C --------------------------------------------

# Achado: ``map(sys.setprofile, [None])`` desliga o gancho do perfil sem passar por ele (uma função em C chamada por
# outra função em C não gera evento), a conta usa a função pronta e outro ``map`` religa o gancho: o exercício 4 e
# o projeto da Aula 1 saíam com a nota cheia, ``ok``. O ``os.sys`` também escapava da varredura.
PERFIL_DESLIGADO_POR_MAP = ("import os\n"
                            "_s = os.sys\n"
                            "def attention_with_projections(X, W_q, W_k, W_v):\n"
                            "    p = _s.getprofile()\n"
                            "    list(map(_s.setprofile, [None]))\n"
                            "    r = atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n"
                            "    list(map(_s.setprofile, [p]))\n"
                            "    return r\n")

_VIGIAR = """
import json, sys
import numpy as np
import atencao
from atencao.checks.watcher import Watcher, guard_hooks, run_watched
if sys.argv[1] == "com-guarda":
    guard_hooks()
    guard_hooks()  # de novo: nada muda
ns = {"atencao": atencao}
exec(compile(sys.stdin.read(), "<celula do aluno>", "exec"), ns)
vigia = Watcher((atencao.scaled_dot_product_attention,))
X = np.eye(3)
try:
    run_watched(vigia, ns["attention_with_projections"], (X, X, X, X), {})
    erro = None
except Exception as exc:
    erro = type(exc).__name__
registro = []
sys.setprofile(lambda *a: registro.append(a[1]))  # sem vigilância ligada, a guarda repassa a chamada
(lambda: None)()
sys.setprofile(None)
print(json.dumps({"usadas": sorted(vigia.used), "perfil_fora": "call" in registro, "perfil": sys.getprofile() is None,
                  "erro": erro}))
"""


def _vigiar(codigo: str, guarda: str = "com-guarda") -> dict:
    import os
    import subprocess

    r = subprocess.run([sys.executable, "-c", _VIGIAR, guarda], input=codigo, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "lib")}, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("guarda", ["com-guarda", "sem-guarda"])
def test_vigilancia_ve_o_perfil_desligado_por_map(guarda):
    """Com as guardas de ``guard_hooks`` (a correção as põe antes da primeira célula do aluno), desligar o perfil
    por ``map`` fica anotado e a função pronta também; sem elas, a chamada escaparia (o furo que o teste mostra)."""
    resultado = _vigiar(PERFIL_DESLIGADO_POR_MAP, guarda)
    assert resultado["perfil_fora"] and resultado["perfil"] and resultado["erro"] is None
    if guarda == "com-guarda":
        assert set(resultado["usadas"]) == {"sys.setprofile (desliga a vigilância da verificação)",
                                            "atencao.scaled_dot_product_attention"}, resultado
    else:
        assert resultado["usadas"] == [], resultado


# Achados do ataque seguinte: a conta numa thread começada por ``map`` (o ``_thread`` pego como atributo de
# outro módulo, com o nome montado) ou num processo filho (``tempfile._os.fork`` por ``map``), fora do gancho.
THREAD_POR_MAP = ("import dataclasses, operator\n"
                  "_m = operator.attrgetter('_th' + 'read')(dataclasses)\n"
                  "_novo = operator.attrgetter('start_new_' + 'th' + 'read')(_m)\n"
                  "def attention_with_projections(X, W_q, W_k, W_v):\n"
                  "    caixa = []\n"
                  "    def tarefa():\n"
                  "        caixa.append(atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v))\n"
                  "    list(map(_novo, [tarefa], [()]))\n"
                  "    while not caixa:\n"
                  "        pass\n"
                  "    return caixa[0]\n")
COPIA_DO_THREADING = ("import logging, operator\n"  # a cópia que o threading guarda: threading._start_new_thread
                      "_novo = operator.attrgetter('_start_new_' + 'th' + 'read')(operator.attrgetter('th' + "
                      "'reading')(logging))\n" + THREAD_POR_MAP.split("\n", 3)[3])
FORK_POR_MAP = ("import tempfile, operator\n"
                "_o = operator.attrgetter('_' + 'o' + 's')(tempfile)\n"
                "_bifurca = operator.attrgetter('fo' + 'rk')(_o)\n"
                "def attention_with_projections(X, W_q, W_k, W_v):\n"
                "    pid = next(iter(_bifurca, object()))\n"
                "    if pid == 0:\n"
                "        atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n"
                "        _o._exit(0)\n"
                "    return atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n")


@pytest.mark.parametrize("codigo, anotada", [(THREAD_POR_MAP, "uma thread (_thread.start_new_thread)"),
                                             (COPIA_DO_THREADING, "uma thread (_thread.start_new_thread)"),
                                             (FORK_POR_MAP, "outro processo (os.fork)")],
                         ids=["thread-por-map", "copia-do-threading", "fork-por-map"])
def test_thread_ou_processo_comecado_por_map_e_anotado_e_recusado(codigo, anotada):
    """Com as guardas, a thread ou o processo novo não começa (``PermissionError`` na função do aluno) e a tentativa
    fica anotada; sem elas, a conta saía da vigilância."""
    com, sem = _vigiar(codigo), _vigiar(codigo, "sem-guarda")
    assert anotada in com["usadas"] and com["erro"] == "PermissionError", com
    assert anotada not in sem["usadas"], sem


@pytest.mark.parametrize("codigo", [
    # achado: os.spawnlp rodava um shell e o notebook saía ok, sem revisar (a família com "p" faltava)
    "import os\nos.spawnlp(os.P_WAIT, 'sh', 'sh', '-c', 'exit 7')\n",
    "import os\nos.spawnvp(os.P_WAIT, 'sh', ['sh', '-c', 'exit 7'])\n",
    "import os\nos.spawnlpe(os.P_WAIT, 'sh', 'sh', '-c', 'exit 7', {})\n",
    "import os\nos.spawnvpe(os.P_WAIT, 'sh', ['sh'], {})\n",
    # achado: o sys por outro caminho e os ganchos desligavam a vigilância
    "import os\n_s = os.sys\n",
    "import numpy as np\nnp.sys.setprofile(None)\n",
    "import numpy as np\nimport operator\noperator.attrgetter('sys')(np)\n",
    "f = lambda: None\nalvo = getattr(f, 'settrace')\n",
    "import cProfile\n",
    "from trace import Trace\n",
    # as funções originais que a guarda esconde, pela biblioteca carregada
    "import atencao\nlist(map(atencao.checks.watcher._HOOKS['sys.setprofile'], [None]))\n",
    "import atencao\nw = getattr(atencao, 'checks')\n",
    "import numpy as np\nlibc = np.ctypeslib.ctypes.CDLL(None)\n",
])
def test_varredura_aponta_as_fugas_achadas(codigo):
    from correcao import varredura

    assert varredura.scan_cell(codigo, varredura.imported_modules([codigo])), codigo


def test_varredura_aponta_o_ctypes_de_dentro_de_outro_atributo_uma_vez():
    """``np.ctypeslib.ctypes`` é um uso do ctypes, não dois: a linha aparece uma vez no aviso."""
    from correcao import varredura

    codigo = "import numpy as np\nlibc = np.ctypeslib.ctypes.CDLL(None)\n"
    achados = varredura.scan_cell(codigo, varredura.imported_modules([codigo]))
    assert achados == ["célula, linha 2: usa ctypes (np.ctypeslib)"]


# o ataque do processo filho como foi achado: a conta no filho, o resultado de volta por um pipe
FORK_COM_PIPE = ("import tempfile, operator\n"
                 "_o = operator.attrgetter('_' + 'o' + 's')(tempfile)\n"
                 "def _c(f, *a):\n"
                 "    return next(map(f, *([x] for x in a))) if a else next(iter(f, object()))\n"
                 "def attention_with_projections(X, W_q, W_k, W_v):\n"
                 "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                 "    r, w = _c(operator.attrgetter('pi' + 'pe')(_o))\n"
                 "    pid = _c(operator.attrgetter('fo' + 'rk')(_o))\n"
                 "    if pid == 0:\n"
                 "        s, p = atencao.scaled_dot_product_attention(Q, K, V)\n"
                 "        _c(_o.write, w, np.concatenate([s.ravel(), p.ravel()]).tobytes())\n"
                 "        _c(operator.attrgetter('_ex' + 'it')(_o), 0)\n"
                 "    _c(_o.close, w)\n"
                 "    dados = b''.join(iter(lambda: _o.read(r, 1 << 16), b''))\n"
                 "    _c(operator.attrgetter('wait' + 'pid')(_o), pid, 0)\n"
                 "    v = np.frombuffer(dados)\n"
                 "    n, d = Q.shape[0], V.shape[1]\n"
                 "    return v[:n * d].reshape(n, d), v[n * d:].reshape(n, n)\n")


# um processo filho pela libc, sem passar por nenhuma função do Python (a conta, honesta, fica no pai): a correção
# vê que o processo da chamada teve um filho
FORK_PELA_LIBC = ("import numpy as np\n"
                  "_libc = np.ctypeslib.ctypes.CDLL(None)\n"
                  "def attention_with_projections(X, W_q, W_k, W_v):\n"
                  "    if _libc.fork() == 0:\n"
                  "        _libc._exit(0)\n"
                  "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                  "    S = Q @ K.T / np.sqrt(K.shape[-1])\n"
                  "    P = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                  "    P = P / P.sum(axis=-1, keepdims=True)\n"
                  "    return P @ V, P\n")


@pytest.mark.lento
@pytest.mark.parametrize("codigo", [PERFIL_DESLIGADO_POR_MAP, THREAD_POR_MAP, FORK_COM_PIPE, FORK_PELA_LIBC],
                         ids=["perfil-desligado", "thread", "processo-filho", "processo-pela-libc"])
def test_fuga_da_vigilancia_nao_da_os_pontos(tmp_path, codigo):
    """De ponta a ponta, na caixa: a função pronta chamada longe do gancho (perfil desligado, outra thread, outro
    processo) não dá os pontos do exercício 4."""
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    linha, _, _ = _corrigir_um(tmp_path, "modulo-06/aula-01-self-attention", "aula01-ex4-solucao", codigo)
    assert linha["aula01-ex4-verificacao"] in ("0", "0.0") and linha["situacao"] != "ok", linha


# --- o backward pelo passo complexo (ou por diferenças escritas à mão) ----------------------------------------------

# Achado ao atacar a correção: no backward da atenção (Aula 5, exercício 2, e o projeto, que usa a mesma
# verificação), a derivada pelo passo complexo, f(x + ih)/h entrada por entrada, é exata e passava em todos os casos
# pequenos, com os pontos e "tudo certo! ✅", sem fórmula nenhuma. Agora a verificação tem um caso de tamanho de
# verdade (n = 320, d_k = 64): a fórmula leva milissegundos; um gradiente numérico precisa de n·d_k perturbações de K,
# cada uma com as n² exponenciais da softmax (minutos). A chamada que passa de REAL_SIZE_SECONDS é um ❌ com a dica
# numerical_derivative; na correção, o limite da célula a interrompe antes.


def _lenta_no_tamanho_de_verdade(fn, atraso: float):
    """``fn`` (certa), que dorme ``atraso`` segundos quando a entrada é grande (o tempo de um gradiente numérico)."""
    import time

    def lenta(*args, **kwargs):
        if max(np.asarray(a).size for a in args) >= 320 * 64:
            time.sleep(atraso)
        return fn(*args, **kwargs)

    return lenta


def test_backward_da_atencao_lento_no_tamanho_de_verdade_e_recusado(capsys, monkeypatch):
    assert aula05.exercicio_2(_backward_analitico), capsys.readouterr().out  # a certa, no tempo dela, passa
    assert "tamanho de verdade" in capsys.readouterr().out
    # um limite curto (e a foto da verificação com ele: trocar o módulo depois da foto seria uma adulteração)
    from atencao.checks import framework, integrity

    monkeypatch.setattr(framework, "REAL_SIZE_SECONDS", 0.2)
    monkeypatch.setitem(integrity._SNAPSHOTS[framework.__name__][1], "REAL_SIZE_SECONDS", 0.2)
    resultado = aula05.exercicio_2(_lenta_no_tamanho_de_verdade(_backward_analitico, 0.4))
    saida = capsys.readouterr().out
    assert not resultado and resultado.category == "numerical_derivative", saida
    texto = " ".join(saida.split())
    assert "a função responde em poucos segundos" in texto and "passo complexo" in texto, saida
    assert texto.count("✅") >= 4 * 4, saida  # os quatro casos pequenos passaram: só o grande a recusa


def test_o_passo_complexo_e_interrompido_no_limite_e_nao_depois_de_minutos(capsys, monkeypatch):
    """No notebook, a chamada de tamanho de verdade é interrompida no limite (o passo complexo levaria minutos)."""
    import time

    from atencao.checks import framework, integrity

    monkeypatch.setattr(framework, "REAL_SIZE_SECONDS", 1.0)
    monkeypatch.setitem(integrity._SNAPSHOTS[framework.__name__][1], "REAL_SIZE_SECONDS", 1.0)

    def passo_complexo(dO, Q, K, V, mask=None):
        return regua_passo_complexo(Q, K, V, dO, mask=mask)

    inicio = time.monotonic()
    resultado = aula05.exercicio_2(passo_complexo)
    saida = capsys.readouterr().out
    assert not resultado and resultado.category == "numerical_derivative", saida
    assert "interrompida depois de 1 s" in saida and time.monotonic() - inicio < 30, saida


def test_o_passo_complexo_e_exato_nos_casos_pequenos():
    """Por que só o tamanho de verdade o recusa: nos casos pequenos, ele é o gradiente exato."""
    rng = np.random.default_rng(0)
    Q, K, V, dO = (rng.normal(size=(4, 3)) for _ in range(4))
    for g, ref in zip(regua_passo_complexo(Q, K, V, dO), _backward_analitico(dO, Q, K, V)):
        np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-13)


EX2_PASSO_COMPLEXO = ("def my_attention_backward(dO, Q, K, V, mask=None):\n"
                      "    def perda(Qc, Kc, Vc):\n"
                      "        S = Qc @ Kc.T / np.sqrt(Q.shape[-1])\n"
                      "        if mask is not None:\n"
                      "            S = np.where(mask, S, -1e300)\n"
                      "        E = np.exp(S - S.real.max(axis=-1, keepdims=True))\n"
                      "        if mask is not None:\n"
                      "            E = np.where(mask, E, 0)\n"
                      "        soma = E.sum(axis=-1, keepdims=True)\n"
                      "        return ((E / np.where(soma == 0, 1, soma)) @ Vc * dO).sum()\n"
                      "    base = [np.asarray(x, dtype=complex) for x in (Q, K, V)]\n"
                      "    grads = []\n"
                      "    for k in range(3):\n"
                      "        g = np.zeros(base[k].shape)\n"
                      "        for i in np.ndindex(g.shape):\n"
                      "            movidos = [x.copy() for x in base]\n"
                      "            movidos[k][i] += 1e-30j\n"
                      "            g[i] = perda(*movidos).imag / 1e-30\n"
                      "        grads.append(g)\n"
                      "    return tuple(grads)\n")


@pytest.mark.lento
def test_passo_complexo_nao_ganha_os_pontos_na_correcao(tmp_path):
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    linha, _, _ = _corrigir_um(tmp_path, "modulo-06/aula-05-treinando-a-atencao", "aula05-ex2-solucao",
                               EX2_PASSO_COMPLEXO)
    assert linha["aula05-ex2-verificacao"] == "0", (linha["aula05-ex2-verificacao"], linha["motivo"][-400:])


def test_o_alarme_do_tamanho_de_verdade_nao_interrompe_a_propria_vigilancia():
    """O SIGALRM que chega no gancho da vigilância (que roda a cada chamada) é adiado: uma exceção dentro do gancho
    faz o Python desligá-lo, e a vigilância acusava o aluno de "um desligamento da vigilância" (visto com a máquina
    ocupada). No código do aluno, o alarme interrompe."""
    import signal
    import types

    from atencao.checks import watcher

    def quadro(arquivo):
        return types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename=arquivo))

    anterior = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        assert watcher.alarm_handler(signal.SIGALRM, quadro(watcher.__file__)) is None
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 0.005  # adiado, não esquecido
        signal.setitimer(signal.ITIMER_REAL, 0)
        with pytest.raises(KeyboardInterrupt):
            watcher.alarm_handler(signal.SIGALRM, quadro("/tmp/ipykernel_1/123.py"))
        with pytest.raises(KeyboardInterrupt):
            watcher.alarm_handler(signal.SIGALRM, None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, anterior)
