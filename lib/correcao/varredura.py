"""Varredura do código do aluno: o que mexe na máquina da correção vira a situação ``revisar``.

A conferência independente (:mod:`correcao._veredito`) já impede que uma verificação desligada,
trocada ou silenciada dê pontos. Esta varredura aponta ao professor **quem tentou**, com a linha, para
que uma tentativa nunca passe despercebida (e para cobrir o que só se faz por introspecção, como
procurar objetos da própria correção na memória). Ela lê o código, não o executa.

O que é apontado (em células que o aluno pode editar; as protegidas são as originais):

- importar ou tocar as verificações: ``atencao.checks``, ``aula01`` … fora da chamada da verificação;
- atribuir ou apagar atributos de um módulo (``np.allclose = ...``, ``aula01.exercicio_3 = ...``) ou
  usar ``setattr``/``delattr`` nele;
- ``os.environ``, ``os.putenv``/``unsetenv``, ou o nome ``NBGRADER_EXECUTION``;
- a maquinaria do Python e do IPython: ``sys.modules``, ``sys._getframe``, ``builtins``,
  ``__builtins__``, ``__import__``, ``importlib``, ``gc``, ``inspect``, ``ctypes``, ``exec``/``eval``/
  ``compile``, atributos de introspecção (``__globals__``, ``__code__``, ``__dict__``, ``__subclasses__``,
  ``f_back`` …), ``get_ipython()`` (exceto as mágicas comuns, como ``%timeit``);
- processos e sinais: ``subprocess``, ``os.system``, ``os.fork``, ``os.kill``, ``signal``, ``threading``,
  ``multiprocessing``, comandos de shell (``!comando``);
- ``getattr`` num módulo com um nome calculado (``getattr(os, "fo" + "rk")``), ou com um dos nomes acima.
"""

from __future__ import annotations

import ast

MAGICAS_COMUNS = {"timeit", "time", "matplotlib", "precision", "pprint", "who", "whos", "config", "xmode"}
MODULOS_PROIBIDOS = {"importlib", "gc", "inspect", "ctypes", "builtins", "subprocess", "signal", "threading",
                     "multiprocessing", "_thread", "pty", "socket", "sys", "resource", "atexit", "code", "codeop",
                     "types", "traceback", "pickle", "marshal", "runpy", "shutil", "zipimport", "pkgutil"}
ATRIBUTOS_PROIBIDOS = {"__globals__", "__code__", "__closure__", "__defaults__", "__kwdefaults__", "__dict__",
                       "__subclasses__", "__bases__", "__mro__", "__class__", "__builtins__", "__import__",
                       "__loader__", "__spec__", "__wrapped__", "__self__", "__func__", "__getattribute__",
                       "f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame",
                       "ag_frame", "_getframe"}
# os._exit e os.abort só derrubam o próprio kernel (a situação kernel_morreu, com a célula): não mexem na correção
OS_PROIBIDOS = {"environ", "environb", "putenv", "unsetenv", "system", "popen", "fork", "forkpty", "kill",
                "killpg", "setsid", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                "execlp", "execlpe", "spawnv", "spawnve", "spawnl", "spawnle", "posix_spawn", "posix_spawnp",
                "dup2", "setuid", "setgid", "chroot", "register_at_fork", "sched_setaffinity", "nice",
                "setpriority"}
NOMES_PROIBIDOS = {"exec", "eval", "compile", "setattr", "delattr", "globals", "vars", "locals", "__import__",
                   "__builtins__", "breakpoint", "memoryview"}


def _transformar(fonte: str) -> str:
    """O código Python de uma célula (mágicas do IPython viram chamadas, como o kernel faria)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(fonte)
    except Exception:  # noqa: BLE001 - sem IPython, lê a fonte como está
        return fonte


def _raiz(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def modulos_importados(fontes: list[str]) -> set[str]:
    """Nomes ligados a módulos por ``import`` em qualquer célula (ex.: ``np``, ``atencao``, ``aula01``)."""
    nomes = set()
    for fonte in fontes:
        try:
            tree = ast.parse(_transformar(fonte))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                nomes |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                nomes |= {a.asname or a.name for a in node.names}
    return nomes


def varrer(fonte: str, modulos: set[str], celula: str = "célula") -> list[str]:
    """Motivos (em português, com a linha) para revisar ``fonte``; lista vazia se nada foi encontrado."""
    try:
        tree = ast.parse(_transformar(fonte))
    except SyntaxError:
        return []  # o erro de sintaxe aparece na execução
    achados: list[tuple[int, str]] = []

    def achar(node, texto):
        achados.append((getattr(node, "lineno", 0), texto))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            nomes = [a.name for a in node.names]
            base = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            for nome in ([base] if base else []) + nomes:
                completo = f"{base}.{nome}" if base and nome != base else nome
                if "checks" in completo.split(".") or nome in ("_core",):
                    achar(node, f"importa as verificações ({completo})")
                elif nome.split(".")[0] in MODULOS_PROIBIDOS or base.split(".")[0] in MODULOS_PROIBIDOS:
                    achar(node, f"importa {completo}")
                elif base == "os" and nome in OS_PROIBIDOS:
                    achar(node, f"importa os.{nome}")
        elif isinstance(node, ast.Attribute):
            if (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                    and node.value.func.id == "get_ipython" and node.attr not in ("run_line_magic", "run_cell_magic")):
                achar(node, "comando de shell (!)" if node.attr in ("system", "getoutput")
                      else f"usa get_ipython().{node.attr}")
            if isinstance(node.ctx, (ast.Store, ast.Del)) and _raiz(node) in modulos:
                achar(node, f"altera o módulo {_raiz(node)} ({ast.unparse(node)})")
            if node.attr in ATRIBUTOS_PROIBIDOS:
                achar(node, f"usa introspecção ({node.attr})")
            if _raiz(node) == "os" and node.attr in OS_PROIBIDOS:
                achar(node, f"usa os.{node.attr}")
            if isinstance(node.value, ast.Name) and node.value.id in ("sys", "builtins"):
                achar(node, f"usa {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and _raiz(node) in modulos:
            achar(node, f"altera o módulo {_raiz(node)} ({ast.unparse(node)})")
        elif isinstance(node, ast.Name) and node.id in NOMES_PROIBIDOS:
            achar(node, f"usa {node.id}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "NBGRADER" in node.value:
            achar(node, "menciona NBGRADER_EXECUTION")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2):
            nome = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
            if not isinstance(nome, str) and _raiz(node.args[0]) in modulos:
                achar(node, f"usa getattr no módulo {_raiz(node.args[0])} com um nome calculado")
            elif nome in ATRIBUTOS_PROIBIDOS or nome in OS_PROIBIDOS or nome in NOMES_PROIBIDOS:
                achar(node, f"usa getattr(..., {nome!r})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _raiz(node.func) == "get_ipython":
            metodo = node.func.attr
            magica = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            if metodo in ("run_line_magic", "run_cell_magic") and magica not in MAGICAS_COMUNS:
                achar(node, f"usa a mágica %{magica}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            alvos = node.targets if isinstance(node, ast.Assign) else [node.target]
            for alvo in alvos:
                if (isinstance(alvo, ast.Name) and alvo.id in modulos
                        and alvo.id in {"aula01", "aula02", "aula03", "aula04", "aula05"}):
                    achar(node, f"troca o nome {alvo.id}")
    motivos = []
    for linha, texto in sorted(set(achados)):
        motivos.append(f"{celula}, linha {linha}: {texto}")
    return motivos
