"""Varredura do código do aluno: o que mexe na máquina da correção vira a situação ``revisar``.

A conferência independente (:mod:`correcao._veredito`) já impede que uma verificação desligada,
trocada ou silenciada dê pontos. Esta varredura aponta ao professor **quem tentou**, com a linha, para
que uma tentativa nunca passe despercebida (e para cobrir o que só se faz por introspecção, como
procurar objetos da própria correção na memória). Ela lê o código, não o executa.

O que é apontado (em células que o aluno pode editar; as protegidas são as originais):

- importar ou tocar as verificações: ``atencao.checks`` (também como atributo, ``atencao.checks.watcher``),
  ``aula01`` … fora da chamada da verificação;
- atribuir ou apagar atributos de um módulo (``np.allclose = ...``, ``aula01.exercicio_3 = ...``) ou
  usar ``setattr``/``delattr`` nele;
- ``os.environ``, ``os.putenv``/``unsetenv``, ou o nome ``NBGRADER_EXECUTION``;
- a maquinaria do Python e do IPython: ``sys.modules``, ``sys._getframe``, ``builtins``,
  ``__builtins__``, ``__import__``, ``importlib``, ``gc``, ``inspect``, ``ctypes``, ``exec``/``eval``/
  ``compile``, atributos de introspecção (``__globals__``, ``__code__``, ``__dict__``, ``__subclasses__``,
  ``f_back`` …), ``get_ipython()`` (exceto as mágicas comuns, como ``%timeit``);
- processos e sinais: ``subprocess``, ``os.system``, ``os.fork``, ``os.kill``, ``signal``, ``threading``,
  ``multiprocessing``, comandos de shell (``!comando``);
- ``getattr`` num módulo com um nome calculado (``getattr(os, "fo" + "rk")``), ou com um dos nomes acima;
- os ganchos do perfil e do rastreio (``setprofile``, ``settrace``...) e o ``sys`` por outro caminho (``os.sys``,
  ``np.sys``), como atributo ou como texto; os módulos que trocam esses ganchos (``cProfile``, ``trace``, ``pdb``...).
"""

from __future__ import annotations

import ast

from .catalogo import lesson_modules

COMMON_MAGICS = {"timeit", "time", "matplotlib", "precision", "pprint", "who", "whos", "config", "xmode"}
FORBIDDEN_MODULES = {"importlib", "gc", "inspect", "ctypes", "builtins", "subprocess", "signal", "threading",
                     "multiprocessing", "_thread", "pty", "socket", "sys", "resource", "atexit", "code", "codeop",
                     "types", "traceback", "pickle", "marshal", "runpy", "shutil", "zipimport", "pkgutil",
                     "cProfile", "_lsprof", "profile", "trace", "bdb", "pdb", "faulthandler"}
FORBIDDEN_ATTRIBUTES = {"__globals__", "__code__", "__closure__", "__defaults__", "__kwdefaults__", "__dict__",
                        "__subclasses__", "__bases__", "__mro__", "__class__", "__builtins__", "__import__",
                        "__loader__", "__spec__", "__wrapped__", "__self__", "__func__", "__getattribute__",
                        "f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame",
                        "ag_frame", "_getframe"}
# os._exit e os.abort só derrubam o próprio kernel (a situação kernel_morreu, com a célula): não mexem na correção
FORBIDDEN_OS = {"environ", "environb", "putenv", "unsetenv", "system", "popen", "fork", "forkpty", "kill",
                "killpg", "setsid", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                "execlp", "execlpe", "spawnv", "spawnve", "spawnl", "spawnle", "spawnvp", "spawnvpe", "spawnlp",
                "spawnlpe", "posix_spawn", "posix_spawnp",
                "dup2", "setuid", "setgid", "chroot", "register_at_fork", "sched_setaffinity", "nice",
                "setpriority"}
FORBIDDEN_NAMES = {"exec", "eval", "compile", "setattr", "delattr", "globals", "vars", "locals", "__import__",
                   "__builtins__", "breakpoint", "memoryview"}
# os ganchos que a vigilância das funções proibidas usa, e o sys por outro caminho (os.sys, np.sys): como atributo
# ou como texto (operator.attrgetter("sys"), getattr com o nome montado)
HOOK_NAMES = {"setprofile", "settrace", "getprofile", "gettrace", "setprofile_all_threads", "settrace_all_threads"}
_MAGIC_RUNNERS = ("run_line_magic", "run_cell_magic")


def _to_python(source: str) -> str:
    """O código Python de uma célula (mágicas do IPython viram chamadas, como o kernel faria)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - sem IPython, lê a fonte como está
        return source


_CTYPES = ("ctypes", "ctypeslib")


def _has_attribute(node: ast.AST, names: tuple) -> bool:
    """Se a cadeia de atributos ``node`` (``a.b.c``) tem um atributo com um dos ``names``."""
    while isinstance(node, ast.Attribute):
        if node.attr in names:
            return True
        node = node.value
    return False


def _root(node: ast.AST) -> str | None:
    """O nome no começo de ``a.b[c].d(...)`` (``a``), ou ``None`` se a expressão não começa por um nome."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def imported_modules(sources: list[str]) -> set[str]:
    """Nomes ligados a módulos por ``import`` em qualquer célula (ex.: ``np``, ``atencao``, ``aula01``)."""
    names = set()
    for source in sources:
        try:
            tree = ast.parse(_to_python(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names |= {a.asname or a.name for a in node.names}
    return names


def _is_get_ipython_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_ipython"


class _Scanner(ast.NodeVisitor):
    """Percorre a árvore de uma célula e anota ``(linha, motivo)`` para cada coisa apontada; um ``visit_*`` por
    tipo de nó (o que cada um procura está no docstring do módulo)."""

    def __init__(self, modules: set[str]):
        self.modules = modules
        self.lessons = lesson_modules()
        self.findings: set[tuple[int, str]] = set()

    def flag(self, node: ast.AST, text: str) -> None:
        self.findings.add((getattr(node, "lineno", 0), text))

    def _flag_module_change(self, node: ast.Attribute | ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _root(node) in self.modules:
            self.flag(node, f"altera o módulo {_root(node)} ({ast.unparse(node)})")

    def _check_import(self, node: ast.Import | ast.ImportFrom, base: str) -> None:
        names = [a.name for a in node.names]
        for name in ([base] if base else []) + names:
            full = f"{base}.{name}" if base and name != base else name
            if "checks" in full.split(".") or name in ("_core",):
                self.flag(node, f"importa as verificações ({full})")
            elif name.split(".")[0] in FORBIDDEN_MODULES or base.split(".")[0] in FORBIDDEN_MODULES:
                self.flag(node, f"importa {full}")
            elif base == "os" and name in FORBIDDEN_OS:
                self.flag(node, f"importa os.{name}")

    def visit_Import(self, node: ast.Import) -> None:
        self._check_import(node, "")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._check_import(node, node.module or "")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_get_ipython_call(node.value) and node.attr not in _MAGIC_RUNNERS:
            self.flag(node, "comando de shell (!)" if node.attr in ("system", "getoutput")
                      else f"usa get_ipython().{node.attr}")
        self._flag_module_change(node)
        if node.attr in FORBIDDEN_ATTRIBUTES:
            self.flag(node, f"usa introspecção ({node.attr})")
        if _root(node) == "os" and node.attr in FORBIDDEN_OS:
            self.flag(node, f"usa os.{node.attr}")
        if isinstance(node.value, ast.Name) and node.value.id in ("sys", "builtins"):
            self.flag(node, f"usa {node.value.id}.{node.attr}")
        elif node.attr == "sys":
            self.flag(node, f"usa o sys por outro caminho ({ast.unparse(node)})")
        if node.attr in HOOK_NAMES:
            self.flag(node, f"mexe nos ganchos do Python ({node.attr})")
        if node.attr == "checks" and _root(node) in self.modules:
            self.flag(node, f"toca as verificações ({ast.unparse(node)})")
        if node.attr in _CTYPES and not _has_attribute(node.value, _CTYPES):  # o ctypes sem import (np.ctypeslib)
            self.flag(node, f"usa ctypes ({ast.unparse(node)})")  # uma vez só: no atributo mais interno
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._flag_module_change(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES:
            self.flag(node, f"usa {node.id}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "NBGRADER" in node.value:
            self.flag(node, "menciona NBGRADER_EXECUTION")
        elif isinstance(node.value, str) and (node.value.strip() == "sys" or any(h in node.value for h in HOOK_NAMES)):
            self.flag(node, f"menciona {node.value.strip()[:40]!r} num texto")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            self._check_getattr(node)
        elif isinstance(node.func, ast.Attribute) and _root(node.func) == "get_ipython":
            self._check_magic(node)
        self.generic_visit(node)

    def _check_getattr(self, node: ast.Call) -> None:
        name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
        if not isinstance(name, str) and _root(node.args[0]) in self.modules:
            self.flag(node, f"usa getattr no módulo {_root(node.args[0])} com um nome calculado")
        elif name in FORBIDDEN_ATTRIBUTES or name in FORBIDDEN_OS or name in FORBIDDEN_NAMES or name == "checks":
            self.flag(node, f"usa getattr(..., {name!r})")

    def _check_magic(self, node: ast.Call) -> None:
        magic = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if node.func.attr in _MAGIC_RUNNERS and magic not in COMMON_MAGICS:
            self.flag(node, f"usa a mágica %{magic}")

    def _check_rebinding(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id in self.modules and target.id in self.lessons:
                self.flag(node, f"troca o nome {target.id}")

    def visit_Assign(self, node: ast.Assign) -> None:
        self._check_rebinding(node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_rebinding(node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_rebinding(node)
        self.generic_visit(node)


def scan_cell(source: str, modules: set[str], cell: str = "célula") -> list[str]:
    """Motivos (em português, com a linha) para revisar ``source``; lista vazia se nada foi encontrado.

    Parameters
    ----------
    source : str
        O código de uma célula (com as mágicas do IPython, que viram chamadas como no kernel).
    modules : set of str
        Os nomes ligados a módulos no notebook (:func:`imported_modules`).
    cell : str
        Como a célula aparece no motivo (``"célula 14 (...)"``).

    Returns
    -------
    list of str
        ``"<cell>, linha N: <motivo>"``, em ordem de linha; uma célula com erro de sintaxe não dá motivos (o erro
        aparece na execução).
    """
    try:
        tree = ast.parse(_to_python(source))
    except SyntaxError:
        return []  # o erro de sintaxe aparece na execução
    scanner = _Scanner(modules)
    scanner.visit(tree)
    return [f"{cell}, linha {line}: {text}" for line, text in sorted(scanner.findings)]
