"""O arcabouço das verificações: o que quem escreve uma verificação usa.

Uma verificação é uma função decorada com :func:`check` que recebe um :class:`Checker` e a função do aluno,
roda-a em vários casos (:meth:`Checker.cases`, :meth:`Checker.call`) e registra critérios
(:meth:`Checker.expect`, :meth:`Checker.close`, :meth:`Checker.returns`...). O relatório impresso tem uma
linha por critério: ✅ OK quando passa, ❌ FALHOU com o esperado, o obtido e uma dica quando falha. Cada
símbolo vem com uma palavra (:data:`MARKS`): sem uma fonte de emoji (comum em laboratórios Linux), os três
símbolos aparecem como o mesmo quadrado vazio, e a palavra ainda diz o resultado.

- Exercício ainda não feito (o código do aluno levanta ``NotImplementedError``): imprime ⏳ e **não**
  levanta erro, para o notebook do aluno rodar de cima a baixo.
- Em correção automática (variável de ambiente ``NBGRADER_EXECUTION`` definida, como faz o nbgrader),
  qualquer falha, inclusive exercício não feito, levanta ``AssertionError``.

Este módulo também reexporta os ajudantes de texto (:mod:`.report`) e de casos (:mod:`.cases`): um módulo
de verificação importa tudo daqui. O guia "como escrever uma verificação" está em ``checks/README.md``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import warnings

import numpy as np

from .._validation import read_only_copy
from . import integrity
from .calls import Captured, RemoteCall
from .cases import case_seed
from .categories import NUMERICAL_DERIVATIVE_HINT, Hint, mistake
from .checker import Checker, StopCheck
from .errors import is_numpy_shape_error, student_error
from .figures import close_new_figures, open_figures, warm_up_matplotlib
from .report import (
    MARKS,
    UNSTABLE_SOFTMAX_HINT,
    describe,
    format_number,
    format_value,
    return_hint,
    wrap_report,
)
from .status import grading, passou, record
from .watcher import alarm_handler

__all__ = [
    # o arcabouço
    "Checker", "check", "CheckResult", "Captured", "RemoteCall", "StopCheck", "passou", "grading", "protect",
    "frozen_copy", "call_frozen", "matching_hint", "Hint", "mistake", "REAL_SIZE_SECONDS",
    "within_seconds", "call_within_seconds",
    # reexportados: casos, texto do relatório, figuras e erros
    "case_seed", "MARKS", "UNSTABLE_SOFTMAX_HINT", "describe", "format_number",
    "format_value", "return_hint", "wrap_report", "open_figures", "close_new_figures", "warm_up_matplotlib",
    "is_numpy_shape_error", "student_error",
]



class CheckResult:
    """Resultado de uma verificação: ``bool(resultado)`` diz se passou; ``failures`` lista os critérios que
    falharam e ``categories``, a categoria de cada um (o id do engano da dica, :mod:`.categories`).

    No Jupyter não mostra nada como última expressão (o relatório já foi impresso).
    """

    def __init__(self, title: str, passed: bool, status: str, failures: list[str], categories: list[str] | None = None):
        self.title = title
        self.passed = passed
        self.status = status  # "ok", "falhou" ou "nao_feito"
        self.failures = failures
        self.categories = list(categories or [])

    @property
    def category(self) -> str:
        """A categoria do resultado: ``"ok"``, ``"not_done"`` (⏳) ou a do primeiro ❌ (a que encerrou a
        verificação, com a dica que o aluno leu primeiro)."""
        if self.status == "ok":
            return "ok"
        if self.status == "nao_feito":
            return "not_done"
        return self.categories[0] if self.categories else "criterion_failed"

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult({self.title!r}, status={self.status!r})"

    def _ipython_display_(self):
        """O relatório já foi impresso; nada mais a mostrar."""


def check(title: str):
    """Decorador: transforma ``f(checker, fn, *args)`` numa verificação completa.

    Parameters
    ----------
    title : str
        O título do relatório (``"Exercício 4 (projeções Q, K, V)"``).

    Returns
    -------
    callable
        Um decorador. A verificação decorada recebe a função do aluno (e o que mais a célula passar), cria
        um :class:`Checker` e o passa como 1º argumento a ``f``; imprime o relatório e devolve um
        :class:`CheckResult`. Cuida do exercício não feito (``NotImplementedError`` vira ⏳), das exceções do
        código do aluno (viram um ❌ com a linha dele, :func:`.errors.student_error`), das figuras abertas
        (fechadas no fim), das trocas na biblioteca (:meth:`Checker.report_tampering`) e do modo de correção.
        Um critério que falha encerra ``f`` levantando :class:`StopCheck` (``stop=True``, :meth:`Checker.require`,
        :meth:`Checker.fail`, o fim de um caso de :meth:`Checker.cases` com um ❌), que o decorador trata como o fim
        normal da verificação; um ``return`` também encerra.

    Raises
    ------
    AssertionError
        Só no modo de correção (:func:`grading`), quando a verificação não passa ou o exercício não foi feito.
    """

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs) -> CheckResult:
            checker = Checker(title)
            fn = args[0] if args else None
            checker.report_tampering("trocado antes da verificação")
            nao_feito = _run_criteria(checker, func, args, kwargs)
            if nao_feito is not None:
                return _not_done_result(title, nao_feito, fn)
            return _finished_result(checker, title, fn)

        return wrapper

    return decorator


def _run_criteria(checker: Checker, func, args: tuple, kwargs: dict) -> NotImplementedError | None:
    """Roda os critérios de ``func`` no ``checker``: o ``NotImplementedError`` de um exercício não feito volta (antes de
    qualquer caso); o de depois e toda outra exceção do código do aluno viram um ❌ (:func:`.errors.student_error`);
    ``StopCheck`` é o fim normal. As figuras que o aluno abriu são fechadas."""
    figs_before = open_figures()
    try:
        # o que a função do aluno imprime (e os avisos do NumPy) não polui o relatório
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            func(checker, *args, **kwargs)
    except StopCheck:
        pass
    except NotImplementedError as exc:
        if not checker.lines:
            return exc
        checker.expect(False, *student_error(exc))  # já passou por casos: é um erro num caso (ex.: com máscara)
    except (Exception, SystemExit, GeneratorExit) as exc:  # noqa: BLE001 - o erro do aluno vira um ❌
        checker.expect(False, *student_error(exc))
    finally:
        close_new_figures(figs_before)
    return None


def _not_done_result(title: str, nao_feito: NotImplementedError, fn) -> CheckResult:
    """O ⏳ de um exercício ainda em esboço (ou que usa outra função em esboço): impresso, registrado e devolvido."""
    quem = _unfinished_helper(nao_feito, fn)
    print(wrap_report(f"{MARKS['nao_feito']} — {title}: ainda não resolvido (o código levanta "
                      "NotImplementedError). Complete a célula do exercício e rode esta verificação de novo."
                      if not quem else
                      f"{MARKS['nao_feito']} — {title}: a sua função usa {quem}, que ainda não foi "
                      f"resolvida (levanta NotImplementedError). Resolva {quem} antes e rode esta "
                      "verificação de novo."))
    record(fn, "nao_feito")
    if grading():
        raise AssertionError(f"{title}: exercício não resolvido.")
    return CheckResult(title, False, "nao_feito", ["não resolvido"], ["not_done"])


def _finished_result(checker: Checker, title: str, fn) -> CheckResult:
    """O relatório de uma verificação que rodou até o fim (ou até o primeiro ❌): impresso, registrado e devolvido."""
    if type(checker.failures) is not list or type(checker.lines) is not list:  # noqa: E721
        checker.failures = ["o relatório da verificação foi alterado durante a execução"]
        checker.categories = ["library_tampered"]
    passed = not checker.failures
    status = "ok" if passed else "falhou"
    record(fn, status)
    linhas = [checker.header(passed), *checker.lines]
    if not passed and checker.failed_case is not None and checker.failed_case < (checker.n_cases or 0):
        linhas.append("  (a verificação para no primeiro caso que falha: corrija-o e rode de novo para ver os "
                      "próximos)")
    print(wrap_report("\n".join(linhas)))
    if grading() and not passed:
        raise AssertionError(f"{title}: não passou em: " + "; ".join(checker.failures))
    categorias = checker.categories if type(checker.categories) is list else []  # noqa: E721
    return CheckResult(title, passed, status, checker.failures, categorias)


# ---------- integridade: a verificação e a biblioteca como foram importadas ----------




def _unfinished_helper(exc, fn) -> str | None:
    """O nome da função (outra que não ``fn``) que levantou o ``NotImplementedError``: a resposta do aluno
    pode estar pronta e usar outra ainda em esboço (por exemplo, ``my_softmax``)."""
    tb, nome = getattr(exc, "__traceback__", None), getattr(exc, "quem_levantou", None)
    if getattr(exc, "remoto", False):  # levantada no processo do aluno (correção, validar): os quadros daqui são
        tb = None                      # os da chamada remota, e quem a levantou vem de lá
    while tb is not None:
        nome = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    alvo = getattr(fn, "__name__", None)
    return nome if nome and alvo and nome != alvo and not nome.startswith("<") else None


def protect() -> None:
    """A foto de integridade da biblioteca e das verificações, antes do código do aluno.

    Chame no fim de cada módulo de verificação (``aulaNN.py``): fotografa os módulos de ``atencao`` já
    carregados (inclusive o que acabou de carregar), o NumPy e as classes :class:`Checker` e
    :class:`CheckResult` (:func:`.integrity.protect`). Idempotente.
    """
    integrity.protect(Checker, CheckResult)


def frozen_copy(a) -> np.ndarray:
    """Cópia imutável de ``a`` (:func:`atencao._validation.read_only_copy`: nem ``setflags(write=True)`` a
    libera), para as entradas de um caso.

    As referências da verificação são calculadas **depois** da chamada do aluno, a partir destas cópias:
    antes, elas ficariam visíveis nos quadros da pilha durante a chamada; depois, a partir de arrays mutáveis,
    a função do aluno poderia alterá-los pela pilha. Uso::

        congelados = [frozen_copy(a) for a in (X, W_q)]
        got = c.pair(c.call(label, fn, X, W_q, names=("X", "W_q")), label)
        X, W_q = congelados  # a referência vem das cópias imutáveis
    """
    return read_only_copy(a)


def call_frozen(c: Checker, label: str, fn, *args, returns: tuple = ("saida", "pesos"), names: tuple = (),
                forbidden: tuple = (), **kwargs):
    """Congelar, chamar e desempacotar: o começo de cada caso de uma verificação que compara arrays.

    Congela os arrays de ``args`` (:func:`frozen_copy`), chama a função do aluno com :meth:`Checker.call` (com
    ``names``, ``forbidden`` e ``**kwargs``) e desempacota o retorno nos itens ``returns``: dois itens viram
    arrays de floats (:meth:`Checker.pair`); outro número de itens fica como veio (:meth:`Checker.returns`);
    ``returns=()`` devolve o resultado sem conferir. Um retorno fora do formato encerra a verificação
    (:class:`StopCheck`). Uso::

        (saida, pesos), (X, W_q) = call_frozen(c, label, fn, X, W_q, names=("X", "W_q"), forbidden=_FORBIDDEN)
        ref_saida, ref_pesos = referencia(X, W_q)  # das cópias imutáveis, calculada só agora

    Returns
    -------
    tuple
        ``(itens, congelados)``: os itens do retorno e os argumentos, os arrays como cópias imutáveis. A referência
        vem dos congelados, calculada **depois** da chamada (veja :func:`frozen_copy`).
    """
    congelados = tuple(frozen_copy(a) if isinstance(a, np.ndarray) else a for a in args)
    result = c.call(label, fn, *args, names=names, forbidden=forbidden, **kwargs)
    if len(returns) == 2:
        return c.pair(result, label, *returns, stop=True), congelados
    return (c.returns(result, label, *returns, stop=True) if returns else result), congelados


# o tempo de uma chamada no caso de tamanho de verdade do backward da atenção (:func:`within_seconds`): a fórmula
# leva milissegundos, e o gradiente calculado numericamente, entrada por entrada, minutos (o limite da célula, na
# correção, é 30 s)
REAL_SIZE_SECONDS = 10.0


@contextlib.contextmanager
def _alarm(segundos: float):
    """Interrompe o bloco depois de ``segundos`` com um ``KeyboardInterrupt`` (SIGALRM, com
    :func:`.watcher.alarm_handler`, que a vigilância não confunde com a verificação chamada pelo aluno e que não
    interrompe a própria vigilância), só na thread principal e onde há ``signal.setitimer`` (no navegador, não há: a
    chamada vai até o fim)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    anterior = signal.getsignal(signal.SIGALRM)
    try:
        signal.signal(signal.SIGALRM, alarm_handler)
        signal.setitimer(signal.ITIMER_REAL, segundos)
    except (OSError, ValueError, AttributeError, TypeError):  # sem alarmes (o Pyodide): a chamada vai até o fim
        with contextlib.suppress(OSError, ValueError, AttributeError, TypeError):
            signal.signal(signal.SIGALRM, anterior)
        yield
        return
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, anterior)


def call_within_seconds(c: Checker, label: str, fn, chamar, *args, limite: float | None = None, **kwargs):
    """``chamar(*args, **kwargs)`` (que chama a função do aluno ``fn`` por :meth:`Checker.call`) num caso de
    tamanho de verdade: no notebook, interrompida depois de ``limite`` s (padrão :data:`REAL_SIZE_SECONDS`), e o
    critério de :func:`within_seconds` falha; na correção (``fn`` é uma :class:`RemoteCall`), o limite da célula
    interrompe o processo do aluno, e o tempo da resposta é conferido aqui. Devolve o que ``chamar`` devolveu."""
    import time

    limite = REAL_SIZE_SECONDS if limite is None else limite
    inicio, resultado, interrompida = time.perf_counter(), None, False
    try:
        with contextlib.nullcontext() if isinstance(fn, RemoteCall) else _alarm(limite):
            resultado = chamar(*args, **kwargs)
    except KeyboardInterrupt:
        if time.perf_counter() - inicio < limite:  # o aluno interrompeu a célula antes do alarme
            raise
        interrompida = True
    within_seconds(c, label, time.perf_counter() - inicio, limite, interrompida)
    return resultado


def within_seconds(c: Checker, label: str, segundos: float, limite: float | None = None,
                   interrompida: bool = False) -> None:
    """O critério "a função responde em poucos segundos" de um caso de tamanho de verdade, só quando falha (um ❌
    com a dica :data:`.categories.NUMERICAL_DERIVATIVE_HINT`, que encerra a verificação): ``segundos`` é o tempo
    da chamada, ``interrompida`` diz se ela foi parada no limite. ``limite``: :data:`REAL_SIZE_SECONDS` se não for
    dado. Sem linha ✅ (o tempo varia de máquina para máquina e não vai para o relatório)."""
    limite = REAL_SIZE_SECONDS if limite is None else limite
    if interrompida or segundos > limite:
        c.fail(f"{label}: a função responde em poucos segundos", f"até {limite:g} s",
               f"interrompida depois de {limite:g} s" if interrompida else f"{segundos:.1f} s",
               hint=NUMERICAL_DERIVATIVE_HINT)


def matching_hint(got: np.ndarray, candidates, ref=None, atol: float = 1e-5) -> str | None:
    """A dica do primeiro engano comum que reproduz ``got``.

    Parameters
    ----------
    got : ndarray
        O que a função do aluno devolveu (já convertido por :meth:`Checker.array`).
    candidates : iterável de (Hint, array)
        A tabela dos erros típicos: pares ``(dica, resultado do engano)``, na ordem de prioridade; cada dica é escrita
        com :func:`mistake` (o texto e o id estável do engano, que o relatório da turma conta) e cada resultado é
        a conta feita com o engano (sem a escala, softmax no eixo errado...), calculada pela verificação (``None``:
        um engano que não se aplica ao caso, pulado).
    ref : array, opcional
        A resposta certa: um candidato igual a ela é pulado (o engano não muda nada neste caso).
    atol : float
        Tolerância de ``np.allclose``.

    Returns
    -------
    Hint ou None
        A dica do primeiro candidato com a forma de ``got`` e igual a ele (com a categoria dele); ``None`` se nenhum
        bate.
    """
    for dica, cand in candidates:
        if cand is None:  # um engano que não se aplica a este caso
            continue
        cand = np.asarray(cand, dtype=float)
        if cand.shape == got.shape and np.allclose(got, cand, atol=atol) and not (
                ref is not None and cand.shape == np.shape(ref) and np.allclose(cand, ref, atol=atol)):
            return dica
    return None
