"""Dentro de uma segunda caixa, nova: a conferência independente das verificações.

O kernel do aluno é dele: lá, qualquer linha pode trocar a função de verificação, desligar o modo de
correção ou apagar ``NBGRADER_EXECUTION``, e a saída da célula mente. Por isso os pontos não vêm de lá.
Este processo:

1. carrega, **antes** de qualquer código do aluno, uma cópia privada da biblioteca com outro nome
   (``_atencao_privada``: as verificações e as referências que elas usam), que o código do aluno não
   referencia;
2. fotografa os módulos compartilhados (``builtins``, ``numpy``, ``math``, ``atencao`` e a cópia
   privada) para perceber e desfazer alterações;
3. roda as células de código do notebook (as protegidas na versão original, as do aluno como ele
   escreveu) num shell do IPython, com tempo limite por célula;
4. em cada célula de verificação, avalia os argumentos da chamada original (ex.:
   ``aula01.exercicio_3(minha_funcao)``) e chama a verificação **privada**, com os casos sorteados
   (``SORTEAR``: outras sementes a cada correção); o veredito é o ``CheckResult.passed`` dela, não o que
   foi impresso nem uma exceção.

Resposta: linhas ``<nonce> {...}``: ``{"inicio": grade_id}`` antes de cada verificação, depois
``{"grade_id", "passou", "detalhe", "alteracoes"}``, e no fim ``{"fim": "ok"}``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import signal
import sys
import types
from pathlib import Path

from . import _caixa

MODULOS_VIGIADOS = ("builtins", "math", "numpy", "atencao", "_atencao_privada")
IGNORAR = {("builtins", "_"), ("builtins", "__"), ("builtins", "___")}


class TempoEsgotado(BaseException):
    """Tempo limite de uma célula ou verificação (``BaseException``: um ``except Exception`` não engole)."""


def _alarme(signum, frame):
    raise TempoEsgotado()


def _estado(obj) -> tuple:
    """O que, numa função, decide o que ela faz: código, padrões e o conteúdo do fechamento (closure)."""
    celulas = []
    for cell in obj.__closure__ or ():
        try:
            celulas.append(cell.cell_contents)
        except ValueError:  # célula vazia
            celulas.append(None)
    return (obj.__code__, obj.__defaults__, obj.__kwdefaults__, *celulas)


def _mesmo(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class Guarda:
    """Fotografa os módulos vigiados (dicionários, funções e classes deles); aponta e desfaz alterações.

    Pega troca de atributo de módulo (``np.allclose = ...``), de método de classe (``Checker.expect = ...``),
    de código de função (``f.__code__ = ...``) e do conteúdo do fechamento de uma função (o decorador das
    verificações guarda nele a função verdadeira).
    """

    def __init__(self):
        self.modulos = {name: mod for name, mod in list(sys.modules.items())
                        if mod is not None and name.split(".")[0] in MODULOS_VIGIADOS}
        self.fotos = {name: dict(vars(mod)) for name, mod in self.modulos.items()}
        self.funcoes, self.classes = [], []
        for name, mod in self.modulos.items():
            for key, value in list(vars(mod).items()):
                if getattr(value, "__module__", None) != name:
                    continue
                if isinstance(value, types.FunctionType):
                    self.funcoes.append((f"{name}.{key}", value, _estado(value)))
                elif isinstance(value, type) and name.split(".")[0] != "numpy":
                    self.classes.append((f"{name}.{key}", value, dict(vars(value))))
                    for k, v in vars(value).items():
                        if isinstance(v, types.FunctionType):
                            self.funcoes.append((f"{name}.{key}.{k}", v, _estado(v)))

    def alteracoes(self, desfazer: bool = True) -> list[str]:
        found = []
        for name, foto in self.fotos.items():
            if sys.modules.get(name) is not self.modulos[name]:
                found.append(f"sys.modules[{name!r}]")
                if desfazer:
                    sys.modules[name] = self.modulos[name]
            atual = vars(self.modulos[name])
            for key, value in foto.items():
                if (name, key) in IGNORAR:
                    continue
                if key not in atual or atual[key] is not value:
                    found.append(f"{name}.{key}")
                    if desfazer:
                        atual[key] = value
        for nome, cls, foto in self.classes:
            atual = dict(vars(cls))
            for key in set(foto) | set(atual):
                if foto.get(key, _FALTA) is not atual.get(key, _FALTA):
                    found.append(f"{nome}.{key}")
                    if desfazer:
                        if key in foto:
                            type.__setattr__(cls, key, foto[key])
                        else:
                            type.__delattr__(cls, key)
        for nome, func, foto in self.funcoes:
            if not _mesmo(_estado(func), foto):
                found.append(f"{nome} (código ou fechamento trocado)")
                if desfazer:
                    func.__code__, func.__defaults__, func.__kwdefaults__ = foto[:3]
                    for cell, value in zip(func.__closure__ or (), foto[3:]):
                        cell.cell_contents = value
        return found


_FALTA = object()


def carregar_privado() -> dict:
    """A cópia privada de ``atencao`` e os módulos de verificação dela, por nome (``aula01`` ...)."""
    spec = importlib.util.find_spec("atencao")
    pasta = Path(spec.origin).parent
    privado_spec = importlib.util.spec_from_file_location(
        "_atencao_privada", pasta / "__init__.py", submodule_search_locations=[str(pasta)])
    privado = importlib.util.module_from_spec(privado_spec)
    sys.modules["_atencao_privada"] = privado
    privado_spec.loader.exec_module(privado)
    # casos sorteados (uma tabela de respostas dos casos fixos do notebook não passa): ligado antes de os
    # módulos de verificação carregarem, porque cada um fotografa a biblioteca ao carregar
    importlib.import_module("_atencao_privada.checks._core").SORTEAR = True
    modulos = {}
    for arquivo in sorted((pasta / "checks").glob("aula*.py")):
        modulos[arquivo.stem] = importlib.import_module(f"_atencao_privada.checks.{arquivo.stem}")
    return modulos


def chamadas(fonte: str, modulos: dict) -> list[tuple]:
    """As chamadas ``modulo.funcao(args)`` de uma célula de verificação original: (função privada, args)."""
    out = []
    for stmt in ast.parse(fonte).body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id in modulos):
            out.append((getattr(modulos[call.func.value.id], call.func.attr), call.args, call.keywords))
    return out


def main() -> None:
    pedido, enviar = _caixa.abrir()

    os.environ["MPLBACKEND"] = "Agg"
    os.environ.pop("NBGRADER_EXECUTION", None)
    modulos = carregar_privado()
    core = sys.modules["_atencao_privada.checks._core"]
    CheckResult = core.CheckResult
    import math  # noqa: F401 - vigiado

    import numpy  # noqa: F401 - vigiado
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    guarda = Guarda()
    limite = float(pedido.get("tempo_celula", 20))
    pular = set(pedido.get("pular", []))
    signal.signal(signal.SIGALRM, _alarme)
    ns = shell.user_ns
    run_cell = shell.run_cell

    for celula in pedido["celulas"]:
        if celula["tipo"] == "codigo":
            try:
                signal.setitimer(signal.ITIMER_REAL, limite)
                run_cell(celula["fonte"], store_history=False)
            except BaseException:  # noqa: BLE001 - o código do aluno não derruba a conferência
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            continue
        gid = celula["grade_id"]
        if gid in pular:
            continue
        antes = guarda.alteracoes()  # o que as células do aluno trocaram (desfeito agora)
        enviar({"inicio": gid})
        passou, detalhe = False, ""
        try:
            alvos = chamadas(celula["fonte"], modulos)
            passou = True if alvos else None
            if not alvos:
                detalhe = "célula sem chamada de verificação conhecida"
            for func, args, kwargs in alvos:
                valores = [eval(compile(ast.Expression(a), "<verificação>", "eval"), ns) for a in args]  # noqa: S307
                nomeados = {k.arg: eval(compile(ast.Expression(k.value), "<verificação>", "eval"), ns)  # noqa: S307
                            for k in kwargs}
                signal.setitimer(signal.ITIMER_REAL, limite)
                try:
                    resultado = func(*valores, **nomeados)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                if not (type(resultado) is CheckResult and resultado.passed is True):
                    passou = False
                    detalhe = ("; ".join(resultado.failures) if type(resultado) is CheckResult
                               else "a verificação não devolveu um resultado")
                    break
        except TempoEsgotado:
            passou, detalhe = False, "tempo esgotado na verificação"
        except NameError as exc:
            passou, detalhe = False, f"nome não definido: {exc}"
        except BaseException as exc:  # noqa: BLE001
            passou, detalhe = False, f"{type(exc).__name__}: {str(exc)[:200]}"
        depois = guarda.alteracoes()
        if depois:
            passou = False
            detalhe = (detalhe + "; " if detalhe else "") + "o código alterou módulos durante a verificação"
        enviar({"grade_id": gid, "passou": passou, "detalhe": detalhe, "alteracoes": sorted(set(antes + depois))})
    enviar({"fim": "ok"})
    os._exit(0)


if __name__ == "__main__":
    main()
