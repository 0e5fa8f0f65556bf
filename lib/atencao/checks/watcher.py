"""A vigilância: as funções proibidas que o código do aluno chama, vistas com ``sys.setprofile``.

Um exercício "escreva a conta você mesmo" proíbe, dentro da função do aluno, as funções prontas da biblioteca
(``scaled_dot_product_attention``...). :class:`Watcher` anota as chamadas a elas durante a função do aluno,
feitas por ele ou por uma função permitida da biblioteca que as usa por dentro (só o miolo declarado das
funções de :data:`INTERNALS_ALLOWED` não conta), e o que só serve para fugir da vigilância. Quem escreve
uma verificação não usa este módulo: passa ``forbidden=`` a :meth:`.checker.Checker.call`. A correção
(:mod:`correcao._aluno`) usa :func:`run_watched` no processo do aluno.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import types

import numpy as np

__all__ = ["LIBRARY_DIR", "CHECKS_DIR", "Watcher", "run_watched", "is_student_file", "materialize", "library_code_ids",
           "guard_hooks"]

LIBRARY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # lib/atencao

# As funções que ligam e desligam os ganchos do Python, guardadas quando este módulo é carregado: a vigilância usa
# estas, mesmo depois de :func:`guard_hooks` trocar as do ``sys`` e do ``threading``.
_HOOKS = {"sys.setprofile": sys.setprofile, "sys.settrace": sys.settrace,
          "threading.setprofile": threading.setprofile, "threading.settrace": threading.settrace}
_ACTIVE: list = []  # a vigilância ligada agora (uma por vez), para as guardas de :func:`guard_hooks`

# As funções permitidas em todo exercício que não as pede, cujo miolo é uma função que um exercício proíbe: essa
# chamada, feita diretamente por ela, não conta (a ``atencao.softmax`` valida e chama a ``softmax_``, proibida no
# exercício 4 da Aula 4, onde a ``softmax`` é permitida). Só o miolo declarado, e só chamado por ela: qualquer outra
# função proibida que rode dentro da ``softmax`` (por um objeto do aluno que ela converte) conta. Pares
# ``((módulo, nome) permitida, nome do miolo no mesmo módulo)``, lidos quando a vigilância liga.
INTERNALS_ALLOWED = ((("atencao.attention", "softmax"), "softmax_"),)


def _escape_routes() -> dict:
    """O que tira a conta de perto da vigilância, com o nome que o motivo mostra: os ganchos (desligá-los), as
    threads (uma thread nova não tem o gancho) e os processos (um processo filho anota as chamadas só na memória
    dele). Chaves: as funções originais."""
    import _thread

    rotas = {f: (nome, "gancho") for nome, f in _HOOKS.items()}
    for nome in ("start_new_thread", "start_new", "start_joinable_thread"):
        if hasattr(_thread, nome):
            rotas.setdefault(getattr(_thread, nome), (f"_thread.{nome}", "thread"))  # dois nomes: fica o primeiro
    for nome in ("fork", "forkpty", "system", "posix_spawn", "posix_spawnp", "execv", "execve", "fexecve"):
        if hasattr(os, nome):
            rotas.setdefault(getattr(os, nome), (f"os.{nome}", "processo"))
    try:
        import _posixsubprocess

        rotas[_posixsubprocess.fork_exec] = ("_posixsubprocess.fork_exec", "processo")
    except ImportError:  # fora do Linux/macOS
        pass
    return rotas


def _route_label(nome: str, tipo: str) -> str:
    """O que ``Watcher.used`` anota para uma rota de :func:`_escape_routes` (``nome``, ``tipo``)."""
    if tipo == "gancho":
        return f"{nome} (desliga a vigilância da verificação)"
    return f"{'uma thread' if tipo == 'thread' else 'outro processo'} ({nome})"


class Watcher:
    """Registra, enquanto ativo, as chamadas que o código do aluno faz às funções proibidas.

    Usa ``sys.setprofile`` (e ``threading.setprofile``, para threads novas): vê a chamada pelo código
    (arquivo, linha e nome da função), então pegar a função por outro nome (``from atencao import
    scaled_dot_product_attention as f``), de outra cópia da biblioteca (a cópia privada da correção carrega
    os mesmos arquivos) ou rodar o código-fonte dela com ``exec`` (as funções que ela chama por dentro
    também estão na lista) não escapa; uma função proibida conta também quando é uma função permitida da
    biblioteca que a chama por dentro (a conta proibida feita no lugar do aluno; fora as de
    :data:`INTERNALS_ALLOWED`). Também aponta o que só serve para fugir da vigilância ou para usar uma atenção
    pronta de outra biblioteca: desligar o perfil (``sys.setprofile``/``settrace``), mandar a conta para uma
    thread ou processo, ou chamar o PyTorch.

    Parameters
    ----------
    forbidden : tuple de funções ou classes
        O que o enunciado proíbe (de uma classe, todos os métodos). Sem nada proibido, a vigilância não liga.

    Attributes
    ----------
    used : set de str
        Os nomes do que foi chamado (``"atencao.scaled_dot_product_attention"``, ``"o PyTorch (torch)"``...),
        preenchido enquanto o ``with watcher:`` está ativo.
    """

    def __init__(self, forbidden: tuple):
        self.codes, self.contents, self._content_cache = {}, {}, {}
        for f in forbidden:
            for nome, g in ([(f.__name__, f)] if not isinstance(f, type) else
                            [(f"{f.__name__}.{k}", v) for k, v in vars(f).items()]):
                g = getattr(g, "__func__", g)
                code = getattr(getattr(g, "__wrapped__", g), "__code__", None)
                if code is not None:
                    self.codes[_code_key(code)] = nome.replace(".__init__", "").replace(".__call__", "")
                    self.contents[_code_content(code)] = self.codes[_code_key(code)]
        self.used: set[str] = set()
        self.forbidden = tuple(forbidden)  # o que o enunciado proíbe (a correção repassa ao verificador)
        self._previous = None
        self._first = True
        self._student_cache: dict = {}
        self._outside_cache: dict = {}
        self.library = library_code_ids()
        self._escapes = {f: _route_label(nome, tipo) for f, (nome, tipo) in _escape_routes().items()}
        self._internals = {(_code_key(f.__code__), _code_key(g.__code__)) for f, g in _internals_allowed()}

    def _profile(self, frame, event, arg):  # noqa: C901 — o gancho do sys.setprofile: uma função só, por velocidade
        # chamado a cada chamada de função (o matplotlib faz milhares): só consultas a dicionários e conjuntos
        if event == "c_call":
            code = frame.f_code
            if id(code) in self.library or not self._is_student(code.co_filename):
                return  # a biblioteca, o matplotlib, o IPython... usam threads e o perfil por conta própria
            nome = self._escapes.get(arg)
            if nome:
                self.used.add(nome)
            raiz = (getattr(arg, "__module__", None) or "").split(".")[0]
            if raiz in ("torch", "scipy"):  # as funções em C delas não passam por um quadro Python
                self.used.add(_OUTSIDE_NAMES[raiz])
            elif type(getattr(arg, "__self__", None)).__module__ == "_thread":  # lock.acquire: esperar outra thread
                self.used.add("uma thread (_thread)")
            return
        # fora as chamadas da própria vigilância (a função do aluno que falha já na chamada não tem quadro: o
        # primeiro visto seria o __exit__)
        if event != "call" or id(frame.f_code) in _BOOKKEEPING:
            return
        code, de_quem = frame.f_code, frame.f_back.f_code if frame.f_back else None
        do_aluno = de_quem is not None and id(de_quem) not in self.library
        if self._first:  # a chamada direta, feita por Checker.call: a "função do aluno" pode ser uma pronta
            self._first, do_aluno = False, True
        # Uma função proibida conta em qualquer ponto da chamada do aluno, e não só chamada por ele: uma função
        # permitida da biblioteca que a usa por dentro (o TinyAttentionModel.backward roda o attention_backward)
        # faria a conta proibida no lugar do aluno.
        por_dentro = "" if do_aluno else " (por dentro de outra função da biblioteca)"
        if id(code) in self.library:
            nome = self.codes.get(_code_key(code))
            if nome and (do_aluno or self._counts_inside(frame)):
                self.used.add(f"atencao.{nome}{por_dentro}")
            elif do_aluno and code.co_filename.startswith(CHECKS_DIR) and code.co_name not in ("passou", "guarda"):
                self.used.add(f"atencao.checks ({code.co_name}), que é a própria verificação")
            return
        if self.contents:  # uma cópia do código de uma função proibida (exec do código-fonte, __code__ copiado)
            nome = self._content_cache.get(id(code), _MISSING)
            if nome is _MISSING:
                nome = self._content_cache[id(code)] = self.contents.get(_code_content(code))
            if nome:
                self.used.add(f"atencao.{nome} (uma cópia do código dela){por_dentro}")
        if not do_aluno:
            return
        de_fora = self._outside(code.co_filename)
        if de_fora and self._is_student(de_quem.co_filename):
            self.used.add(de_fora)

    def _counts_inside(self, frame) -> bool:
        """A chamada proibida de ``frame``, feita pela biblioteca, conta. Não conta se é o miolo declarado de uma
        função de :data:`INTERNALS_ALLOWED` chamado diretamente por ela, nem se no caminho até o código do aluno há
        outra função proibida (essa já foi anotada: o ``scaled_dot_product_attention`` chamado pelo aluno não
        aponta também o ``attend`` que ele usa por dentro)."""
        if frame.f_back is not None and (_code_key(frame.f_back.f_code), _code_key(frame.f_code)) in self._internals:
            return False
        while frame.f_back is not None and id(frame.f_back.f_code) in self.library:
            frame = frame.f_back
            if _code_key(frame.f_code) in self.codes:
                return False
        return True

    def _is_student(self, arquivo: str) -> bool:
        r = self._student_cache.get(arquivo)
        if r is None:
            r = self._student_cache[arquivo] = is_student_file(arquivo)
        return r

    def _outside(self, arquivo: str):
        if arquivo not in self._outside_cache:
            m = _OUTSIDE.search(arquivo)
            self._outside_cache[arquivo] = next(v for k, v in _OUTSIDE_NAMES.items() if k in m.group(1)) if m else None
        return self._outside_cache[arquivo]

    def __enter__(self):
        if self.codes:
            self._previous = sys.getprofile()
            _HOOKS["threading.setprofile"](self._profile)
            _HOOKS["sys.setprofile"](self._profile)
            _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        if self.codes:
            if self in _ACTIVE:
                _ACTIVE.remove(self)
            if sys.getprofile() != self._profile:  # desligada por fora do Python (ctypes, cProfile...)
                self.used.add("um desligamento da vigilância da verificação")
            _HOOKS["sys.setprofile"](self._previous)
            _HOOKS["threading.setprofile"](None)
        return False


def _internals_allowed() -> list:
    """Os pares ``(função permitida, miolo)`` de :data:`INTERNALS_ALLOWED` (os que não carregam ficam de fora)."""
    import importlib

    out = []
    for (modulo, nome), miolo in INTERNALS_ALLOWED:
        try:
            mod = importlib.import_module(modulo)
            f, g = getattr(mod, nome), getattr(mod, miolo)
        except (ImportError, AttributeError):
            continue
        if all(isinstance(getattr(h, "__code__", None), types.CodeType) for h in (f, g)):
            out.append((f, g))
    return out


def guard_hooks() -> None:
    """Troca, em todos os módulos carregados, as funções que tiram a conta de perto da vigilância por guardas: as
    que desligam o gancho (``sys.setprofile``, ``sys.settrace``, ``threading.setprofile``...), as que começam
    uma thread (``_thread.start_new_thread``, também a cópia ``threading._start_new_thread``) e as que começam
    um processo (``os.fork``, ``os.system``, ``os.posix_spawn``, ``_posixsubprocess.fork_exec``...). Com uma
    :class:`Watcher` ligada, a guarda anota a tentativa em ``used`` e não a faz (um gancho fica como está; uma
    thread ou um processo levanta ``PermissionError``); sem nenhuma, ela repassa a chamada. Chamada pela correção
    (:mod:`correcao._aluno`) antes da primeira célula do aluno. Chamar de novo não faz nada.

    O gancho do perfil só vê as chamadas que o Python faz; uma função em C chamada por outra função em C (como
    ``map(sys.setprofile, [None])`` ou ``map(_thread.start_new_thread, ...)``) não aparece nele. A guarda é uma
    função Python: chamada de qualquer lugar, ela mesma anota. As originais ficam só nesta biblioteca, fora do
    alcance do aluno sem introspecção ou sem tocar ``atencao.checks`` (que a varredura aponta)."""
    if getattr(sys.setprofile, "_guarda_da_vigilancia", False):
        return
    guardas = {}
    for original, (nome, tipo) in _escape_routes().items():

        def guarda(*args, _nome=nome, _tipo=tipo, _original=original, **kwargs):
            if not _ACTIVE:
                return _original(*args, **kwargs)
            _ACTIVE[-1].used.add(_route_label(_nome, _tipo))
            if _tipo == "gancho":
                return None
            raise PermissionError(f"{_nome}: a conta roda aqui, sem {'threads' if _tipo == 'thread' else 'processos'}"
                                  " novos, enquanto a verificação confere a sua função")

        guarda._guarda_da_vigilancia = True
        guarda.__name__ = nome.rsplit(".", 1)[1]
        guardas[id(original)] = guarda
    for modulo in list(sys.modules.values()):  # também as cópias (threading._start_new_thread, from os import fork)
        atributos = getattr(modulo, "__dict__", None)
        if not isinstance(atributos, dict):
            continue
        for chave, valor in list(atributos.items()):
            if id(valor) in guardas:  # a própria função original (as guardas a mantêm viva: o id não se repete)
                atributos[chave] = guardas[id(valor)]


_OUTSIDE_NAMES = {"torch": "o PyTorch (torch)", "scipy": "o SciPy (scipy)",
                  "concurrent": "uma thread (concurrent.futures)",
                  "threading": "uma thread (threading)", "queue": "uma thread (queue)",
                  "multiprocessing": "outro processo (multiprocessing)",
                  "subprocess": "outro processo (subprocess)"}

CHECKS_DIR = os.path.join(LIBRARY_DIR, "checks")


def _not_student_paths() -> tuple:
    import sysconfig

    caminhos = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    # a correção (lib/correcao) também não é do aluno: ela leva as chamadas ao processo do aluno
    correcao = os.path.join(os.path.dirname(LIBRARY_DIR), "correcao")
    return tuple(sorted(c for c in caminhos if c)) + (LIBRARY_DIR, correcao)


_NOT_STUDENT = _not_student_paths()


def is_student_file(arquivo: str) -> bool:
    """O código está num arquivo do aluno (uma célula do notebook, um módulo dele), e não na biblioteca do
    curso, na biblioteca padrão ou num pacote instalado (matplotlib, IPython, NumPy...)?"""
    return not (arquivo.startswith(_NOT_STUDENT) or arquivo.startswith("<frozen") or "site-packages" in arquivo)


_LIBRARY_CODES: dict = {}


def _codes_of(mods: list) -> set:
    """Os objetos de código das funções, métodos e propriedades dos módulos ``mods``, com os das funções aninhadas."""
    codigos: set = set()

    def juntar(code):
        if code not in codigos:
            codigos.add(code)
            for c in code.co_consts:
                if isinstance(c, types.CodeType):
                    juntar(c)

    for m in mods:
        for v in list(vars(m).values()):
            for f in ([v] if not isinstance(v, type) else list(vars(v).values())):
                f = getattr(f, "__func__", f)
                for g in (f, getattr(f, "fget", None), getattr(f, "__wrapped__", None)):
                    if isinstance(getattr(g, "__code__", None), types.CodeType):
                        juntar(g.__code__)
    return codigos


def library_code_ids() -> frozenset:
    """Os ids dos objetos de código das funções da biblioteca carregada (``atencao`` e a cópia privada da correção):
    "quem chamou é a biblioteca" se decide por eles, não pelo nome do arquivo (um código do aluno com o
    ``co_filename`` trocado para o da biblioteca não passa por ela). Calculado uma vez por conjunto de módulos."""
    mods = [m for m in list(sys.modules.values())
            if m is not None and str(getattr(m, "__file__", "") or "").startswith(LIBRARY_DIR)]
    chave = frozenset(id(m) for m in mods)
    if chave not in _LIBRARY_CODES:
        codigos = _codes_of(mods)
        _LIBRARY_CODES.clear()
        _LIBRARY_CODES[chave] = (frozenset(id(c) for c in codigos), codigos)  # os ids; os objetos ficam vivos aqui
    return _LIBRARY_CODES[chave][0]


# O que o código do aluno não chama num exercício "escreva a conta": o PyTorch (a atenção pronta dele) e a
# maquinaria de threads/processos (a conta rodaria fora da vigilância). Quem chama de dentro delas não conta.
_OUTSIDE = re.compile(r"([/\\]torch[/\\]|[/\\]scipy[/\\]|[/\\]concurrent[/\\]futures[/\\]|[/\\]threading\.py$|"
                      r"[/\\]queue\.py$|[/\\]multiprocessing[/\\]|[/\\]subprocess\.py$)")


def materialize(valor, fundo: int = 0):
    """O que a função devolveu, como dados comuns: arrays do NumPy (não subclasses), listas, tuplas, números,
    textos. Um objeto com ``__array__`` vira array aqui, enquanto a vigilância está ligada: um resultado
    "preguiçoso", que só faz a conta quando convertido, não escapa. O que não vira array fica como está
    (listas e tuplas são percorridas até 4 níveis)."""
    if fundo > 4 or valor is None or isinstance(valor, (str, bytes, bool, int, float, complex, np.generic)):
        return valor
    if isinstance(valor, np.ndarray) or hasattr(valor, "__array__"):
        try:
            return np.array(valor, subok=False)
        except Exception:  # noqa: BLE001 - não virou array: a verificação diz o que recebeu
            return valor
    if type(valor) in (list, tuple):
        return type(valor)(materialize(v, fundo + 1) for v in valor)
    return valor


def _code_key(code) -> tuple:
    return (code.co_filename, code.co_firstlineno, code.co_name)


@functools.lru_cache(maxsize=None)  # os códigos proibidos são os mesmos em toda verificação
def _code_content(code) -> tuple:
    """O que o código faz, sem onde nem como se chama: o mesmo para uma cópia recompilada (``exec`` do
    código-fonte da biblioteca com outro nome de arquivo) ou renomeada."""
    consts = tuple(_code_content(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames[:code.co_argcount], consts)


def run_watched(watcher: "Watcher", fn, args, kwargs):
    """``fn(*args, **kwargs)`` com a vigilância ``watcher`` ligada (ela anota as funções proibidas chamadas pelo
    código do aluno em ``watcher.used``); o resultado como dados comuns (:func:`materialize`). Chamada daqui,
    da biblioteca: a primeira chamada vista é a da função do aluno (que pode ser uma pronta)."""
    with watcher:
        return materialize(fn(*args, **kwargs))


def alarm_handler(signum, frame) -> None:
    """O tratador do SIGALRM de um caso de tamanho de verdade (``framework._alarm``): interrompe o código do aluno
    com um ``KeyboardInterrupt``. Se o sinal chega no meio do código das verificações (o gancho da vigilância, que
    roda a cada chamada, ou a arrumação depois da chamada), a interrupção é adiada 5 ms: uma exceção dentro do gancho
    do perfil faz o Python desligá-lo, e a vigilância veria "um desligamento" feito pelo aluno.

    Raises
    ------
    KeyboardInterrupt
        Quando o sinal chega fora do código das verificações.
    """
    if frame is not None and frame.f_code.co_filename.startswith(CHECKS_DIR):
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0.005)
        return
    raise KeyboardInterrupt


_MISSING = object()
# o que a vigilância roda enquanto ligada, além da função do aluno: nunca é "a função do aluno" nem uma chamada dele
# (uma função do aluno com outros parâmetros falha antes de ter um quadro; o primeiro quadro visto seria o __exit__)
_BOOKKEEPING = frozenset(id(f.__code__) for f in (Watcher.__exit__, materialize, alarm_handler))
