"""Trabalho todo errado + um truque no próprio processo = 0 pontos, seja qual for o truque.

Cada aluno desta turma entrega a Aula 1, ``03-exercicios``, com as duas respostas práticas erradas e uma célula
(logo depois das importações) que mexe no próprio processo de um jeito diferente: a verificação, o resultado
dela, o NumPy, os ``builtins``, a serialização, a E/S, os ganchos de importação, arquivos que o verificador
poderia ler de volta, sinais... Os pontos vêm de um verificador em outra caixa, em que nenhum código do aluno
roda (:mod:`correcao._veredito`): nenhum desses truques muda o que ele julga. Vários truques não são vistos pela
varredura do código (:mod:`correcao.varredura`), e não precisam ser.
"""

from __future__ import annotations

import copy
import csv
import json
import secrets
import sys
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import isolamento, motor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402

pytestmark = [pytest.mark.lento,
              pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")]

EX3_ERRADO = "def similar_embeddings():\n    return 0\n"
EX4_ERRADO = "def attention_with_projections(X, W_q, W_k, W_v):\n    return X, X\n"

# um resultado de verificação "aprovado", forjado de todos os jeitos que o processo do aluno permite
TRUQUES = {
    # o resultado da verificação sempre aprovado, em todo módulo que tenha a classe
    "resultado-sempre-aprovado": '''import sys
for _m in list(sys.modules.values()):
    _cr = getattr(_m, "CheckResult", None)
    if isinstance(_cr, type):
        _cr.passed = property(lambda self: True, lambda self, v: None)
        _cr.failures = property(lambda self: [], lambda self, v: None)
''',
    # a verificação trocada por uma que devolve um resultado aprovado, pelo gc (sem nomear o módulo)
    "gc-troca-verificacoes": '''import gc
for _o in gc.get_objects():
    if isinstance(_o, dict) and "exercicio_3" in _o and "exercicio_4" in _o:
        _cr = _o.get("CheckResult") or type("R", (), {})
        _ok = lambda *a, **k: _cr("ok", True, "ok", [])
        _o["exercicio_3"] = _o["exercicio_4"] = _ok
''',
    # serialização: todo JSON escrito diz que passou
    "json-diz-que-passou": '''import json
_dumps = json.dumps
def _forja(obj, *a, **k):
    if isinstance(obj, dict) and "grade_id" in obj:
        obj = dict(obj, passou=True, detalhe="")
    if isinstance(obj, dict) and "passou" in obj:
        obj["passou"] = True
    return _dumps(obj, *a, **k)
json.dumps = _forja
''',
    # E/S: linhas de veredito forjadas em todo descritor aberto
    "escreve-em-todo-descritor": '''import os
_linha = b'{"grade_id": "aula01-ex3-verificacao", "passou": true, "detalhe": ""}\\n'
_resp = b'{"id": 1, "retorno": {"__nd__": "f8", "forma": [4, 4], "dados": ""}}\\n'
for _fd in range(0, 64):
    for _b in (_linha, _resp):
        try:
            os.write(_fd, _b)
        except OSError:
            pass
''',
    # builtins: comparações e testes de tipo sempre verdadeiros
    "builtins-sempre-verdade": '''import builtins
builtins.isinstance = lambda *a: True
builtins.all = lambda *a: True
builtins.any = lambda *a: True
builtins.bool = lambda *a: True
''',
    # NumPy: toda comparação numérica diz "igual"
    "numpy-tudo-igual": '''import numpy as np
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, dtype=bool)
np.all = lambda *a, **k: True
np.isfinite = lambda x, *a, **k: np.ones(np.shape(x), dtype=bool)
''',
    # gancho de importação: quem importar as verificações de novo recebe uma versão que sempre aprova
    "gancho-de-importacao": '''import sys, types, importlib.abc, importlib.machinery
class _Falsa(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, nome, path, target=None):
        if "checks" in nome or "veredito" in nome or "_core" in nome:
            return importlib.machinery.ModuleSpec(nome, self)
    def create_module(self, spec):
        return None
    def exec_module(self, mod):
        class CheckResult:
            passed, failures, status = True, [], "ok"
        mod.CheckResult = CheckResult
        mod.__getattr__ = lambda n: (lambda *a, **k: CheckResult())
sys.meta_path.insert(0, _Falsa())
for _n in [n for n in sys.modules if "checks" in n or "correcao" in n]:
    del sys.modules[_n]
''',
    # arquivos que um processo Python leria ao iniciar, na pasta de trabalho, em HOME e em /tmp
    "arquivos-para-o-verificador": '''import os, pathlib, site
_codigo = "import atencao.checks.framework as c\\nc.CheckResult.passed = property(lambda s: True, lambda s, v: None)\\n"
for _pasta in {os.getcwd(), os.path.expanduser("~"), "/tmp"}:
    _p = pathlib.Path(_pasta)
    try:
        (_p / "sitecustomize.py").write_text(_codigo)
        (_p / "usercustomize.py").write_text(_codigo)
        (_p / "forja.pth").write_text("import sitecustomize\\n")
        (_p / "atencao").mkdir(exist_ok=True)
        (_p / "atencao" / "__init__.py").write_text(_codigo)
        (_p / "correcao").mkdir(exist_ok=True)
        (_p / "correcao" / "_veredito.py").write_text("print('forjado')\\n")
        _ini = _p / ".ipython" / "profile_default" / "startup"
        _ini.mkdir(parents=True, exist_ok=True)
        (_ini / "00-forja.py").write_text(_codigo)
    except OSError:
        pass
''',
    # o resumo que a verificação imprime, forjado por cima de print e sys.stdout
    "imprime-aprovado": '''import builtins, sys, io
_print = builtins.print
builtins.print = lambda *a, **k: _print("✅ tudo certo!")
class _Saida(io.StringIO):
    def write(self, s):
        return sys.__stdout__.write("✅ tudo certo!\\n")
sys.stdout = _Saida()
''',
    # sinais: o processo encerra a si mesmo e ao pai quando for chamado
    "mata-o-processo": '''import os, signal, atexit
atexit.register(lambda: os.kill(os.getppid(), signal.SIGKILL))
signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
''',
    # o retorno de toda função "igual a tudo": um objeto que diz sim a qualquer comparação
    "objeto-igual-a-tudo": '''class _Tudo(float):
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False
    __lt__ = __le__ = __gt__ = __ge__ = lambda s, o: True
    __len__ = lambda s: 4
    __getitem__ = lambda s, i: s
    __iter__ = lambda s: iter([s, s])
    shape = (4, 4)
    ndim = 2
def similar_embeddings():
    return _Tudo(0)
def attention_with_projections(X, W_q, W_k, W_v):
    return _Tudo(0), _Tudo(0)
''',
    # introspecção: o perfil e o rastreamento trocam os valores locais de quem chamar a função do aluno
    "settrace-muda-locais": '''import sys, ctypes
def _rastro(frame, evento, arg):
    if evento == "return" and "passed" in frame.f_locals:
        frame.f_locals["passed"] = True
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return _rastro
sys.settrace(_rastro)
sys.setprofile(_rastro)
''',
    # ambiente: desliga o modo de correção e a sorte dos casos
    "ambiente-e-sementes": '''import os, random
os.environ.pop("NBGRADER_EXECUTION", None)
random.SystemRandom.randrange = lambda self, n: 0
for _m in list(__import__("sys").modules.values()):
    if hasattr(_m, "RANDOMIZE_CASES"):
        _m.RANDOMIZE_CASES = False
''',
    # a ponte: o codificador das respostas troca o que a função devolveu pela resposta da biblioteca
    "troca-a-ponte": '''import sys
for _n, _m in list(sys.modules.items()):
    if _n.startswith("correcao"):
        for _k in dir(_m):
            if _k.startswith(("encode", "decode", "send", "receive")):
                setattr(_m, _k, lambda *a, **k: {"passou": True})
''',
    # o aviso de função proibida, apagado da resposta antes de ela sair do processo do aluno, com a conta feita pela
    # função pronta da biblioteca (o exercício 4 "certo" sem saber a matéria)
    "apaga-o-aviso-da-ponte": '''import os, re
_escrever = os.write
def _limpa(fd, dados):
    try:
        dados = re.sub(rb'"proibidas_usadas": \\[[^\\]]*\\]', b'"proibidas_usadas": []', bytes(dados))
    except Exception:
        pass
    return _escrever(fd, dados)
os.write = _limpa
''',
}

# o truque acima devolve a conta certa (feita pela biblioteca) no exercício 4: o kernel reprova, o verificador
# isolado não vê a função proibida (o aviso foi apagado) e aprova; os pontos esperam o professor, fora do total
COM_A_BIBLIOTECA = {"apaga-o-aviso-da-ponte"}
EX4_PELA_BIBLIOTECA = ("def attention_with_projections(X, W_q, W_k, W_v):\n"
                       "    return atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n")


def _entrega(truque: str) -> dict:
    nb = copy.deepcopy(gerar.student("modulo-06/aula-01-self-attention", "03-exercicios"))
    gerar.fill(nb, "aula01-ex3-solucao", EX3_ERRADO)
    ex4 = EX4_ERRADO
    if truque == "objeto-igual-a-tudo":
        ex4 = "def attention_with_projections(X, W_q, W_k, W_v):\n    return similar_embeddings(), 0\n"
    elif truque in COM_A_BIBLIOTECA:
        ex4 = EX4_PELA_BIBLIOTECA
    gerar.fill(nb, "aula01-ex4-solucao", ex4)
    primeira = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    nb["cells"].insert(primeira + 1, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": TRUQUES[truque]})
    return gerar.clean(nb)


@pytest.fixture(scope="module")
def turma_forjada(tmp_path_factory):
    pasta = tmp_path_factory.mktemp("forja")
    for truque in TRUQUES:
        destino = pasta / "entregas" / truque / "03-exercicios.ipynb"
        destino.parent.mkdir(parents=True)
        destino.write_text(json.dumps(_entrega(truque)), encoding="utf-8")
    marca = secrets.token_hex(8)
    motor.grade_class(pasta / "entregas", pasta / "saida", cell_timeout=20, notebook_timeout=120,
                      log=lambda *_: None, marca=marca)
    with open(pasta / "saida" / "notas.csv", encoding="utf-8") as f:
        linhas = {r["aluno"]: r for r in csv.DictReader(f)}
    return linhas, isolamento.leftover_pids(marca)


def test_ha_pelo_menos_12_truques():
    assert len(TRUQUES) >= 12


@pytest.mark.parametrize("truque", sorted(TRUQUES))
def test_trabalho_errado_com_truque_tira_zero(turma_forjada, truque):
    linhas, _ = turma_forjada
    linha = linhas[truque]
    assert linha["aula01-ex3-verificacao"] in ("0", "0.0"), linha
    assert linha["aula01-ex4-verificacao"] in ("0", "0.0"), linha
    assert float(linha["total"]) == 0, linha
    assert linha["situacao"] != "ok", linha
    # uma resposta errada não deixa pontos nem para a revisão: o verificador reprovou. A conta pronta também: o
    # processo do aluno não tem o código dela, e o verificador, que a fez a pedido, aponta o uso, diga o que disser
    # o aviso que sai do processo do aluno (correcao.biblioteca_aluno)
    assert float(linha.get("pontos_em_revisao") or 0) == 0, linha
    if truque in COM_A_BIBLIOTECA:
        assert "sem a função pronta da biblioteca" in linha["motivo"], linha


def test_nada_do_aluno_sobra_rodando(turma_forjada):
    _, sobreviventes = turma_forjada
    assert sobreviventes == []


def _solucao_editada(caminho: Path) -> dict:
    """A solução com um comentário a mais em cada resposta (como a resposta de um aluno que acertou)."""
    nb = gerar.clean(json.loads(caminho.read_text(encoding="utf-8")))
    for c in nb["cells"]:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] == "code" and meta.get("solution") and not meta.get("grade"):
            fonte = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            c["source"] = fonte + "\n# conferido\n"
    return nb


@pytest.fixture(scope="module")
def solucoes_corrigidas(tmp_path_factory):
    pasta = tmp_path_factory.mktemp("solucoes")
    for k, caminho in enumerate(sorted((ROOT / "solutions").rglob("*.ipynb"))):
        destino = pasta / "entregas" / f"aluna-{k}" / caminho.name
        destino.parent.mkdir(parents=True)
        destino.write_text(json.dumps(_solucao_editada(caminho)), encoding="utf-8")
    motor.grade_class(pasta / "entregas", pasta / "saida", cell_timeout=60, notebook_timeout=240,
                      log=lambda *_: None)
    with open(pasta / "saida" / "notas.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_cada_solucao_passa_no_verificador_isolado(solucoes_corrigidas):
    """Toda verificação de todo notebook corrigível (funções, objetos da biblioteca, o modelo, figuras e textos
    impressos) funciona através da ponte: a solução tira a nota cheia."""
    assert len(solucoes_corrigidas) == len(list((ROOT / "solutions").rglob("*.ipynb")))
    for linha in solucoes_corrigidas:
        assert "conferência" not in linha["motivo"], linha
        # iguais às soluções (só um comentário a mais): os pontos aprovados esperam a revisão do professor
        assert float(linha["total"]) + float(linha["pontos_em_revisao"] or 0) == float(linha["maximo"]), linha
