"""A biblioteca que o processo do aluno vê na correção: sem as contas prontas que os exercícios proíbem.

Um exercício "escreva a conta você mesmo" proíbe funções prontas (``scaled_dot_product_attention``,
``causal_mask``, ``LayerNorm``...). Na correção, o processo do aluno (:mod:`correcao._aluno`) não recebe o
código delas: esta é uma cópia de ``lib/`` em que

- cada função proibida em alguma verificação do notebook, mais as que refazem a mesma conta
  (:mod:`atencao.checks.equivalents`), e cada método de uma classe proibida (fora
  ``__init__``, ``__repr__``, os ``classmethod`` e as ``property``) tem o corpo trocado por um pedido ao
  verificador (:func:`correcao._calculo_remoto.call`): a conta é feita lá, com a biblioteca de verdade, e o
  verificador, que sabe qual verificação está rodando, anota o uso se ela proíbe aquela função. Nenhum código
  do aluno chega ao verificador; só dados simples (:mod:`correcao._remoto`);
- as verificações (``atencao.checks.aulaNN``, ``framework``, ``checker``, ``multihead_hints``) viram módulos
  vazios: as referências delas (``aula03._top_heads``...) não existem no processo do aluno;
- as bibliotecas com atenção ou softmax prontas que o ambiente tiver (PyTorch, SciPy, JAX...) são tapadas por
  um pacote que levanta ``ImportError`` (:func:`masked_packages`).

Assim, o que o processo do aluno fizer consigo mesmo (apagar a vigilância, threads, processos, chamadas em C,
cópias do ``__code__``) não produz a conta proibida: ela não está lá. Copiar o código de outro lugar para a
resposta é plágio, e não um atalho técnico: :func:`correcao.saneamento.copied_from_solutions` aponta as
respostas iguais às de ``solutions/``.
"""

from __future__ import annotations

import ast
import compileall
import functools
import importlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["forbidden_of_lesson", "proxied_names", "served_names", "build_student_library", "student_library",
           "masked_packages", "MASKED", "checks_in", "qualified_name"]

# métodos que ficam como estão numa classe proibida: criam o objeto ou o descrevem (nenhuma conta da aula)
_KEPT_METHODS = {"__init__", "__repr__", "__new__", "__init_subclass__"}
# módulos de atencao.checks que o processo do aluno usa (as fotos, as figuras, os erros em português)
# e o que as células de demonstração chamam (``aulaNN.passou``, ``aula05.pronto_para_treinar``), com o resultado que
# o verificador manda (correcao._aluno)
_CHECKS_KEPT = {"figures.py", "integrity.py", "watcher.py", "cases.py", "errors.py", "report.py", "status.py",
                "demos.py", "categories.py"}
# bibliotecas com softmax ou atenção prontas, tapadas no processo do aluno (só as que existirem)
MASKED = ("torch", "functorch", "torchgen", "scipy", "sklearn", "jax", "jaxlib", "flax", "tensorflow", "keras",
          "transformers", "tokenizers", "onnxruntime", "numba", "mlx", "cupy", "tinygrad", "autograd")

_STUB_CHECKS = '''"""Indisponível na correção: as verificações rodam no verificador, e não no processo do aluno."""


def __getattr__(nome):
    raise AttributeError(f"atencao.checks.{__name__.rsplit('.', 1)[-1]}.{nome}: as verificações não rodam no "
                         "processo do aluno durante a correção")
'''

# o que o processo do aluno vê ao importar um pacote tapado, e ao pedir uma conta proibida fora das verificações
# (correcao._veredito): um erro numa célula de demonstração com uma destas frases não é do aluno
# (correcao.scoring.explain_outputs não o põe nos motivos; o retorno o mostra, com a explicação)
MASKED_MESSAGE = "este pacote não está disponível na correção"
REFUSED_MESSAGE = "na correção, esta função pronta só roda dentro das verificações que a permitem"

_STUB_PACKAGE = ('"""Tapado na correção."""\n'
                 'raise ImportError("{nome}: ' + MASKED_MESSAGE
                 + ' (os exercícios pedem a conta escrita por você, com o NumPy)")\n')


def _stub_checks(fonte: str) -> str:
    """O módulo de verificação vazio que substitui ``fonte`` na cópia: só o que ele importa dos módulos que ficam
    (:data:`_CHECKS_KEPT`: ``from .demos import sua_tarefa``...) e :func:`atencao.checks.status.passou`, para as
    células de demonstração rodarem como no notebook; o resto levanta ``AttributeError``."""
    linhas = ["from .status import passou  # noqa: F401"]
    for node in ast.parse(fonte).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and f"{node.module}.py" in _CHECKS_KEPT:
            linhas.append(f"from .{node.module} import {', '.join(a.name for a in node.names)}  # noqa: F401")
    return _STUB_CHECKS.replace("\n\n\ndef __getattr__", "\n\n" + "\n".join(linhas) + "\n\n\ndef __getattr__", 1)


def forbidden_of_lesson(module, checks=None) -> list:
    """As funções e classes que alguma verificação de ``module`` (``atencao.checks.aulaNN``) proíbe: cada
    expressão ``forbidden=...`` do código do módulo, avaliada no espaço de nomes dele, mais as funções que refazem a
    mesma conta (:func:`atencao.checks.equivalents.expand`).

    Parameters
    ----------
    module : module
        O módulo de verificações da aula.
    checks : iterable de str, opcional
        Só estas verificações (nomes de funções do módulo, como ``"projeto"``) e as funções do módulo que elas
        chamam; sem ele (ou com um nome que não é uma função do módulo), o módulo inteiro.

    Raises
    ------
    ValueError
        Uma expressão ``forbidden=`` que não dá para avaliar só com os nomes do módulo (uma variável local):
        escreva-a com nomes do módulo (uma tupla ``_FORBIDDEN`` no topo, por exemplo).
    """
    from atencao.checks.equivalents import expand

    nos = _check_functions(_module_tree(module.__file__), checks)
    out, vistos = [], set()
    for node in (n for raiz in nos for n in ast.walk(raiz)):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg != "forbidden":
                continue
            try:
                valor = eval(compile(ast.Expression(kw.value), module.__file__, "eval"), vars(module))  # noqa: S307
            except Exception as exc:  # noqa: BLE001
                raise ValueError(f"{module.__name__}: forbidden={ast.unparse(kw.value)} (linha {kw.lineno}) não se "
                                 f"avalia com os nomes do módulo ({type(exc).__name__})") from None
            for f in expand(valor):  # e as funções de outras aulas que refazem a mesma conta
                if id(f) not in vistos:
                    vistos.add(id(f))
                    out.append(f)
    return out


@functools.lru_cache(maxsize=None)
def _module_tree(arquivo: str) -> ast.Module:
    """A árvore do código de ``arquivo``, lida uma vez por processo (o verificador a consulta a cada célula de
    verificação; não a mude)."""
    return ast.parse(Path(arquivo).read_text(encoding="utf-8"))


def _check_functions(arvore: ast.Module, checks) -> list:
    """Os nós de ``arvore`` onde procurar ``forbidden=``: as funções ``checks`` e as do módulo que elas usam (as
    dicas, os casos...), ou o módulo inteiro (sem ``checks``, ou com um nome que não é uma função do módulo)."""
    funcoes = {n.name: n for n in arvore.body if isinstance(n, ast.FunctionDef)}
    if checks is None or not all(c in funcoes for c in checks):
        return [arvore]
    vistas, pilha = set(), list(checks)
    while pilha:
        nome = pilha.pop()
        if nome not in vistas:
            vistas.add(nome)
            pilha += [n.id for n in ast.walk(funcoes[nome]) if isinstance(n, ast.Name) and n.id in funcoes]
    return [funcoes[n] for n in sorted(vistas)]


def qualified_name(f) -> str:
    """``"modulo:qualname"`` de uma função, classe ou método da biblioteca (o nome dos pedidos ao verificador)."""
    f = getattr(f, "__func__", f)
    return f"{f.__module__}:{f.__qualname__}"


def proxied_names(module, checks=None) -> tuple[str, ...]:
    """Os nomes ``"modulo:qualname"`` que a biblioteca do aluno desta aula troca por pedidos ao verificador:
    as proibições de :func:`forbidden_of_lesson` (só as das verificações ``checks``, se dadas) e, para cada miolo
    proibido de uma função permitida (:data:`atencao.checks.watcher.INTERNALS_ALLOWED`, como a ``softmax`` que chama
    a ``softmax_``), a função permitida também (senão ela chamaria o miolo proibido)."""
    from atencao.checks.watcher import INTERNALS_ALLOWED

    nomes = {qualified_name(f) for f in forbidden_of_lesson(module, checks)}
    for (modulo, nome), miolo in INTERNALS_ALLOWED:
        if f"{modulo}:{miolo}" in nomes:
            nomes.add(f"{modulo}:{nome}")
    return tuple(sorted(n for n in nomes if n.startswith("atencao.") and not n.startswith("atencao.checks")))


@functools.lru_cache(maxsize=1)
def served_names() -> frozenset:
    """Os nomes ``"modulo:qualname"`` que a biblioteca do aluno de alguma aula troca por pedidos ao verificador
    (:func:`proxied_names` de todas as aulas): só esses o verificador calcula. Uma vez por processo."""
    from .catalogo import lesson_modules

    checks = Path(importlib.import_module("atencao").__file__).parent / "checks"
    return frozenset(n for m in sorted(lesson_modules(checks))
                     for n in proxied_names(importlib.import_module(f"atencao.checks.{m}")))


# ---------- a reescrita ----------
def _stub_body(nome: str, doc: ast.stmt | None) -> list:
    chamada = ast.parse(f"return __import__('correcao._calculo_remoto', fromlist=['call']).call({nome!r}, locals())"
                        ).body
    return ([doc] if doc is not None else []) + chamada


def _docstring(fn) -> ast.stmt | None:
    first = fn.body[0] if fn.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def _decorators(fn) -> set:
    return {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in fn.decorator_list}


def _rewrite_function(fn, nome: str) -> None:
    if isinstance(fn, ast.AsyncFunctionDef):
        raise ValueError(f"{nome}: função assíncrona proibida (não suportada na correção)")
    fn.body = _stub_body(nome, _docstring(fn))


def _rewrite_module(fonte: str, modulo: str, quais: set) -> str:
    """O código de ``modulo`` com as funções/classes/métodos ``quais`` (qualnames) trocados por pedidos."""
    arvore = ast.parse(fonte)
    achados = set()
    for node in arvore.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in quais:
            _rewrite_function(node, f"{modulo}:{node.name}")
            achados.add(node.name)
        elif isinstance(node, ast.ClassDef):
            inteira = node.name in quais
            for item in node.body:
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                qual = f"{node.name}.{item.name}"
                if qual in quais or (inteira and item.name not in _KEPT_METHODS
                                     and not _decorators(item) & {"classmethod", "property"}
                                     and not any("setter" in ast.unparse(d) for d in item.decorator_list)):
                    _rewrite_function(item, f"{modulo}:{qual}")
                    achados.add(qual)
            if inteira:
                achados.add(node.name)
    faltam = quais - achados
    if faltam:
        raise ValueError(f"{modulo}: não achei {', '.join(sorted(faltam))} no código-fonte")
    return ast.unparse(ast.fix_missing_locations(arvore)) + "\n"


def _copy_tree(origem: Path, destino: Path) -> None:
    shutil.copytree(origem, destino, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))


def build_student_library(dest: Path, nomes: tuple[str, ...], lib: Path | None = None) -> Path:  # noqa: C901 — os passos da cópia da biblioteca, em ordem
    """Escreve em ``dest`` a biblioteca do aluno (``atencao/`` e ``correcao/``) com ``nomes`` trocados por
    pedidos ao verificador e as verificações vazias; pastas 0755 e arquivos 0644 (o uid da caixa lê).

    Parameters
    ----------
    dest : Path
        Pasta nova (não pode existir).
    nomes : tuple de str
        ``"atencao.modulo:qualname"`` (de :func:`proxied_names`).
    lib : Path, opcional
        A pasta ``lib/`` de origem (padrão: a que este processo importou).

    Returns
    -------
    Path
        ``dest``.
    """
    import atencao

    lib = Path(lib) if lib is not None else Path(atencao.__file__).resolve().parents[1]
    dest = Path(dest)
    dest.mkdir(parents=True)
    for pacote in ("atencao", "correcao"):
        _copy_tree(lib / pacote, dest / pacote)
    por_modulo: dict[str, set] = {}
    for nome in nomes:
        modulo, _, qual = nome.partition(":")
        por_modulo.setdefault(modulo, set()).add(qual)
    for modulo, quais in por_modulo.items():
        arquivo = dest / Path(*modulo.split(".")).with_suffix(".py")
        arquivo.write_text(_rewrite_module(arquivo.read_text(encoding="utf-8"), modulo, quais), encoding="utf-8")
    checks = dest / "atencao" / "checks"
    for arquivo in checks.iterdir():
        if arquivo.suffix == ".py" and arquivo.name not in _CHECKS_KEPT:
            arquivo.write_text(_stub_checks(arquivo.read_text(encoding="utf-8")) if arquivo.name != "__init__.py"
                               else '"""Verificações: indisponíveis na correção."""\n', encoding="utf-8")
        elif arquivo.suffix != ".py":
            if arquivo.is_dir():
                shutil.rmtree(arquivo)
            else:
                arquivo.unlink()
    for nome in MASKED:
        stub = dest / "_tapados" / nome
        stub.mkdir(parents=True)
        (stub / "__init__.py").write_text(_STUB_PACKAGE.format(nome=nome), encoding="utf-8")
    # os .pyc feitos aqui, uma vez: a caixa não escreve nesta pasta, e cada processo do aluno compilaria de novo os
    # módulos que importa (~0,1 s de CPU por notebook)
    compileall.compile_dir(str(dest), quiet=2, workers=1)
    for raiz, _pastas, arquivos in os.walk(dest):
        os.chmod(raiz, 0o755)
        for a in arquivos:
            os.chmod(os.path.join(raiz, a), 0o644)
    return dest


def _package_dirs() -> list[Path]:
    """As pastas de pacotes que a caixa pode ver: as do ambiente, as do Python de base (montado inteiro) e as do
    sistema (``/usr``, ``/usr/local``)."""
    import glob
    import sys

    padroes = [f"{raiz}/lib/python3*/{tipo}-packages" for raiz in {sys.prefix, sys.base_prefix, "/usr", "/usr/local"}
               for tipo in ("site", "dist")] + ["/usr/lib/python3/dist-packages"]
    return sorted({Path(p).resolve() for padrao in padroes for p in glob.glob(padrao) if os.path.isdir(p)})


def masked_packages() -> dict[str, str]:
    """Os pacotes de :data:`MASKED` em qualquer pasta de pacotes que a caixa vê (:func:`_package_dirs`):
    caminho da pasta -> nome (a caixa tapa cada uma)."""
    out = {}
    for base in _package_dirs():
        for nome in MASKED:
            pasta = base / nome
            if pasta.is_dir():
                out[str(pasta)] = nome
    return out


@functools.lru_cache(maxsize=None)
def student_library(checks: tuple, pasta: Path | None = None) -> str:
    """A biblioteca do aluno para as verificações ``checks`` (``(("aula04", ("projeto",)),)``: as que as células
    de verificação do notebook chamam, por módulo, como em :func:`checks_in`), feita uma vez por processo. Só as
    contas que essas verificações proíbem saem dela: as que só outro notebook da aula proíbe continuam no processo do
    aluno (o treino do projeto da Aula 6 não passa pelo verificador a cada passo).

    Com ``pasta`` (a mesma para todos os processos de uma correção), ela é feita uma vez por correção, em
    ``pasta/<impressão digital dos nomes>/lib``: o primeiro processo que a pede a monta ao lado e a põe no lugar de
    uma vez (``rename``); os outros usam essa. Sem ``pasta``, numa pasta temporária apagada na saída do processo.
    Legível por todos (o uid da caixa a lê)."""
    import atexit
    import hashlib

    nomes = tuple(sorted({n for m, nomes_m in checks
                          for n in proxied_names(importlib.import_module(f"atencao.checks.{m}"), nomes_m)}))
    if pasta is None:
        base = Path(tempfile.mkdtemp(prefix="curso-lib-aluno-"))
        os.chmod(base, 0o755)
        atexit.register(shutil.rmtree, base, True)
        return str(build_student_library(base / "lib", nomes))
    final = Path(pasta) / hashlib.sha256("\n".join(nomes).encode()).hexdigest()[:16]
    if not (final / "lib").is_dir():
        Path(pasta).mkdir(parents=True, exist_ok=True)
        montando = Path(tempfile.mkdtemp(prefix=".montando-", dir=pasta))
        os.chmod(montando, 0o755)
        build_student_library(montando / "lib", nomes)
        try:
            os.rename(montando, final)
        except OSError:  # outro processo da correção a pôs no lugar antes: vale a dele (igual a esta)
            shutil.rmtree(montando, ignore_errors=True)
    return str(final / "lib")


def checks_in(fontes) -> dict[str, tuple[str, ...]]:
    """As verificações que as células ``fontes`` chamam, por módulo: ``{"aula04": ("projeto",)}`` para
    ``aula04.projeto(attend_cached)``."""
    import re

    from .catalogo import lesson_modules

    achados: dict[str, set] = {}
    for fonte in fontes:
        for modulo, nome in re.findall(r"\b(aula\d\d)\.([A-Za-z_]\w*)\s*\(", fonte):
            achados.setdefault(modulo, set()).add(nome)
    return {m: tuple(sorted(achados[m])) for m in sorted(achados) if m in set(lesson_modules())}
