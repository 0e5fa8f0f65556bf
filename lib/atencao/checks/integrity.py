"""As fotos de integridade: as entradas de uma chamada e a biblioteca como foram importadas.

Duas fotos, pela mesma razão (o código do aluno não muda o que a verificação compara):

- das **entradas** de uma chamada (:func:`snapshot`, :func:`restore`): a função do aluno que altera um array
  recebido no lugar (``W_q /= 2``) é apontada, e o array volta ao que era;
- da **biblioteca** (:func:`protect`, :func:`tampered`): os módulos de ``atencao`` (inclusive as verificações),
  o NumPy e as classes do arcabouço, fotografados quando um módulo de verificação termina de carregar; o que o
  código do aluno trocar depois (``np.allclose = ...``, ``Checker.expect.__code__ = ...``) é desfeito e apontado.

Quem escreve uma verificação só chama :func:`.framework.protect` no fim do módulo; o resto é usado por
:class:`.checker.Checker` e pela correção (:mod:`correcao._aluno`).
"""

from __future__ import annotations

import sys
import types

import numpy as np

from . import cases

__all__ = ["private_copy", "arrays_in", "snapshot", "restore", "protect", "tampered"]


def private_copy(value):
    """Cópia de arrays, listas e dicionários de arrays; objetos passam como são (veja
    :meth:`.checker.Checker.call`)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: private_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [private_copy(v) for v in value]
    return value


def arrays_in(value, nome: str = "") -> dict:
    """Os arrays alcançáveis em ``value`` (ele mesmo, itens de listas/dicionários e atributos de objetos)."""
    if isinstance(value, np.ndarray):
        return {nome: value}
    if isinstance(value, (list, tuple)):
        return _arrays_among({f"{nome}[{i}]": v for i, v in enumerate(value)})
    if isinstance(value, dict):
        return _arrays_among({f"{nome}[{k!r}]": v for k, v in value.items()})
    if hasattr(value, "__dict__") and not isinstance(value, type):
        out = {}
        for k, v in vars(value).items():  # um nível a mais nos atributos: os pesos num dicionário
            if isinstance(v, np.ndarray):
                out[f"{nome}.{k}"] = v
            elif isinstance(v, dict):
                out.update(arrays_in(v, f"{nome}.{k}"))
        return out
    return {}


def _arrays_among(itens: dict) -> dict:
    """Os itens de ``itens`` (nome → valor) que são arrays."""
    return {k: v for k, v in itens.items() if isinstance(v, np.ndarray)}


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # arrays sem NaN possível (bool, int, objetos)
        return bool(np.array_equal(a, b))


_LARGE = 1 << 20  # bytes: acima disso, a foto guarda um resumo (hash), não uma cópia


def _digest(a: np.ndarray) -> tuple:
    """Resumo do conteúdo de um array grande (os pesos do modelo: 160 MB). No notebook, crc32 (rápido); na
    conferência da correção, blake2b (um código adversário não acha outro conteúdo com o mesmo resumo)."""
    import hashlib
    import zlib

    dados = memoryview(np.ascontiguousarray(a)).cast("B")
    digesto = hashlib.blake2b(dados, digest_size=16).digest() if cases.RANDOMIZE_CASES else zlib.crc32(dados)
    return ("resumo", a.shape, a.dtype.str, digesto)


def snapshot(value) -> dict:
    """A foto dos arrays alcançáveis em ``value`` (:func:`arrays_in`), antes de entregá-lo à função do aluno:
    ``{caminho: cópia}``; um array maior que 1 MiB (os pesos do modelo) guarda só um resumo (hash), e então
    dá para saber se mudou, mas não para restaurá-lo."""
    return {k: (_digest(a) if a.nbytes > _LARGE else a.copy()) for k, a in arrays_in(value).items()}


def restore(value, foto: dict) -> list[str]:
    """Os arrays de ``value`` que mudaram desde a ``foto`` (voltam ao que eram)."""
    mudou = []
    atuais = arrays_in(value)
    for k, antes in foto.items():
        agora = atuais.get(k)
        if isinstance(antes, tuple):  # array grande: só dá para saber se mudou (não há cópia para restaurar)
            if agora is None or _digest(agora) != antes:
                mudou.append(k)
            continue
        if agora is None or agora.shape != antes.shape or not _equal(agora, antes):
            mudou.append(k)
            if agora is not None and agora.shape == antes.shape and agora.flags.writeable:
                np.copyto(agora, antes)
    return mudou


# ---------- integridade: a verificação e a biblioteca como foram importadas ----------
# O que o código do aluno poderia trocar para a verificação dizer ✅: as funções de referência (módulos de
# ``atencao`` e das verificações), os métodos de Checker/CheckResult e o NumPy. A foto é tirada quando um
# módulo de verificação termina de carregar (na célula de importações, antes do código do aluno); a cada
# verificação e depois de cada chamada da função do aluno, o que mudou é desfeito e vira um ❌. (Na correção
# a conferência independente faz o mesmo com uma cópia privada da biblioteca; isto é para o notebook.)
_SNAPSHOTS: dict = {}


def protect(*classes: type) -> None:
    """Fotografa os módulos de ``atencao`` já carregados, o NumPy e as ``classes`` dadas (idempotente por
    módulo e por classe). Chamada, por :func:`.framework.protect`, no fim de cada módulo de verificação."""
    raiz = __name__.split(".")[0]
    for nome, mod in list(sys.modules.items()):
        if mod is None or nome in _SNAPSHOTS:
            continue
        if nome.split(".")[0] == raiz or nome == "numpy":
            _SNAPSHOTS[nome] = (mod, dict(vars(mod)))
            _snapshot_codes(vars(mod).values(), raiz)
    for cls in classes:
        if f"{cls.__module__}.{cls.__name__}" not in _SNAPSHOTS:
            _SNAPSHOTS[f"{cls.__module__}.{cls.__name__}"] = (cls, dict(vars(cls)))
            _snapshot_codes([cls], raiz)


# id da função -> (função, __code__, __defaults__, __kwdefaults__): trocar o código de uma função no lugar
# (``Checker.close.__code__ = ...``) mantém o mesmo objeto no módulo, então a foto dos atributos não veria
_CODES: dict = {}


def _snapshot_codes(valores, raiz: str) -> None:
    for v in list(valores):
        membros = [v]
        if isinstance(v, type) and (getattr(v, "__module__", "") or "").split(".")[0] in (raiz, "numpy"):
            membros = list(vars(v).values())
        for f in membros:
            f = getattr(f, "__func__", f)
            for g in (f, getattr(f, "fget", None), getattr(f, "fset", None)):
                if isinstance(g, types.FunctionType) and id(g) not in _CODES:
                    _CODES[id(g)] = (g, g.__code__, g.__defaults__, g.__kwdefaults__)


def tampered() -> list[str]:
    """O que mudou desde :func:`protect`, como ``"modulo.nome"`` ordenados (e volta ao que era)."""
    out = []
    for nome, (obj, foto) in _SNAPSHOTS.items():
        out += [f"{nome}.{k}" for k in _restore_names(obj, foto)]
    for f, code, defaults, kwdefaults in list(_CODES.values()):
        if f.__code__ is not code or f.__defaults__ is not defaults or f.__kwdefaults__ is not kwdefaults:
            out.append(f"{f.__module__}.{f.__qualname__} (o código)")
            f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
    return sorted(out)


def _restore_names(obj, foto: dict) -> list[str]:
    """Os nomes de ``obj`` (um módulo ou uma classe) que mudaram desde a ``foto``, cada um já de volta ao que era."""
    trocados, atual = [], vars(obj)
    for k in set(foto) | set(atual):
        if k.startswith("__") and k.endswith("__") and not isinstance(obj, type):
            continue  # __builtins__, __loader__... de um módulo não decidem nada
        antes, agora = foto.get(k, _MISSING), atual.get(k, _MISSING)
        if antes is _MISSING and isinstance(agora, types.ModuleType):
            continue  # um submódulo carregado depois (atencao.checks.aula02) não é uma troca
        if agora is antes:
            continue
        trocados.append(k)
        if isinstance(obj, type):
            if k in foto:
                type.__setattr__(obj, k, foto[k])
            else:
                type.__delattr__(obj, k)
        elif k in foto:
            atual[k] = foto[k]
        else:
            del atual[k]
    return trocados


_MISSING = object()
