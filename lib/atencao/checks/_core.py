"""Mecânica comum das verificações de exercícios.

Uma verificação roda o trabalho do aluno em vários casos e imprime, em português, uma linha por
critério: ✅ OK quando passa, ❌ FALHOU com o esperado, o obtido e uma dica quando falha. Cada símbolo vem
com uma palavra (:data:`MARCAS`): sem uma fonte de emoji (comum em laboratórios Linux), os três símbolos
aparecem como o mesmo quadrado vazio, e a palavra ainda diz o resultado.

- Exercício ainda não feito (o código do aluno levanta ``NotImplementedError``): imprime ⏳ e **não**
  levanta erro, para o notebook do aluno rodar de cima a baixo.
- Em correção automática (variável de ambiente ``NBGRADER_EXECUTION`` definida, como faz o nbgrader),
  qualquer falha, inclusive exercício não feito, levanta ``AssertionError``.
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import io
import os
import random
import re
import sys
import threading
import types
import warnings
import weakref

import numpy as np

from .._validation import read_only_copy

# O símbolo e a palavra de cada resultado: a palavra é o que fica legível sem uma fonte de emoji. O símbolo vem
# primeiro (a conferência antes da entrega, correcao.validar, reconhece as linhas por ele).
MARCAS = {"ok": "✅ OK", "falhou": "❌ FALHOU", "nao_feito": "⏳ A FAZER", "espera": "⏸️ ESPERANDO"}

# Na conferência da correção (correcao._veredito) os casos são sorteados a cada vez: uma tabela de respostas
# copiada dos casos fixos do notebook não passa. No notebook, os casos são sempre os mesmos.
SORTEAR = False


def semente(fixa: int) -> int:
    """A semente dos casos de uma verificação: ``fixa`` no notebook; sorteada quando ``SORTEAR`` está ligado."""
    return random.SystemRandom().randrange(2**32) if SORTEAR else fixa


def grading() -> bool:
    """``True`` durante a correção automática (o nbgrader define ``NBGRADER_EXECUTION``)."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


class CheckResult:
    """Resultado de uma verificação: ``bool(resultado)`` diz se passou; ``falhas`` lista os critérios.

    No Jupyter não mostra nada como última expressão (o relatório já foi impresso).
    """

    def __init__(self, title: str, passed: bool, status: str, failures: list[str]):
        self.title = title
        self.passed = passed
        self.status = status  # "ok", "falhou" ou "nao_feito"
        self.failures = failures

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult({self.title!r}, status={self.status!r})"

    def _ipython_display_(self):
        """O relatório já foi impresso; nada mais a mostrar."""


class Captura:
    """O que a última chamada da função do aluno imprimiu (``printed``, texto) e desenhou (``figures``: uma
    lista por figura nova, com os arrays das imagens e malhas de cores de cada eixo)."""

    __slots__ = ("printed", "figures")

    def __init__(self, printed: str, figures: list):
        self.printed = printed
        self.figures = figures


class ChamadaExterna:
    """Uma função do aluno que roda em outro processo (na correção: veja ``correcao._remoto``).

    :meth:`Checker.call` passa a ela os argumentos e recebe uma resposta com ``value``, ``error`` (a
    exceção a levantar, ou ``None``), ``printed``, ``figures``, ``forbidden_used`` (nomes) e ``mutated``
    (``(nome, [chaves], tipo)``); a verificação julga só isso."""

    def call_checked(self, args: tuple, kwargs: dict, names: list, forbidden: list):
        raise NotImplementedError


def figure_data(nums) -> list:
    """Os dados desenhados nas figuras ``nums`` do pyplot: para cada figura, a lista de arrays (float) das
    imagens e malhas de cores dos seus eixos (o que um mapa de calor mostra)."""
    plt = sys.modules.get("matplotlib.pyplot")
    out = []
    if plt is None:
        return out
    for num in sorted(nums):
        arrays = []
        for ax in plt.figure(num).get_axes():
            for artista in [*ax.images, *ax.collections]:
                dados = getattr(artista, "get_array", lambda: None)()
                if dados is not None and np.size(dados) <= 1 << 16:
                    try:
                        arrays.append(np.ma.filled(np.ma.asarray(dados, dtype=float), np.nan))
                    except (TypeError, ValueError):
                        continue
        out.append(arrays[:32])
    return out[:16]


def run_watched(vigia: "_Vigia", fn, args, kwargs):
    """``fn(*args, **kwargs)`` com a vigilância ``vigia`` ligada (ela anota as funções proibidas chamadas pelo
    código do aluno em ``vigia.usados``); o resultado como dados comuns (:func:`_materializar`). Chamada daqui,
    da biblioteca: a primeira chamada vista é a da função do aluno (que pode ser uma pronta)."""
    with vigia:
        return _materializar(fn(*args, **kwargs))


class _Parar(Exception):
    """Encerra a verificação depois de um ❌ que já diz tudo (função pronta usada, entrada alterada)."""


class Checker:
    """Acumula critérios de uma verificação. Use :meth:`expect` e, no fim, :meth:`finish`.

    Sem atributos além destes (``__slots__``): o código avaliado não consegue trocar ``expect`` numa
    instância em uso."""

    __slots__ = ("title", "lines", "failures", "captured", "caso", "n_casos", "caso_com_falha")

    def __init__(self, title: str):
        self.title = title
        self.lines: list[str] = []
        self.failures: list[str] = []
        self.captured = Captura("", [])
        self.caso: int | None = None  # o caso em andamento (1, 2, ...), quando a verificação usa :meth:`casos`
        self.n_casos: int | None = None
        self.caso_com_falha: int | None = None  # o caso do primeiro ❌ (o cabeçalho diz "no caso 2 de 5")

    def casos(self, casos):
        """Percorre os casos de uma verificação, guardando qual está em andamento e quantos são: o cabeçalho
        de uma falha diz então "no caso 2 de 5". Devolve os mesmos itens de ``casos`` (que é lido inteiro
        antes do primeiro caso, para saber quantos são)."""
        casos = list(casos)
        self.n_casos = len(casos)
        for k, caso in enumerate(casos, start=1):
            self.caso = k
            yield caso

    def expect(self, ok: bool, what: str, expected=None, obtained=None, hint: str | None = None) -> bool:
        """Registra um critério. ``what`` descreve o critério; em falha mostra esperado/obtido/dica."""
        ok = bool(ok)
        if ok:
            self.lines.append(f"  {MARCAS['ok']} — {what}")
        else:
            if self.caso_com_falha is None:
                self.caso_com_falha = self.caso
            detail = [f"  {MARCAS['falhou']} — {what}"]
            if expected is not None:
                detail.append(f"       esperado: {_fmt(expected)}")
            if obtained is not None:
                detail.append(f"       obtido:   {_fmt(obtained)}")
            if hint:
                detail.append(f"       dica: {hint}")
            self.lines.extend(detail)
            self.failures.append(what)
        return ok

    def call(self, label: str, fn, *args, names: tuple = (), forbidden: tuple = (), **kwargs):
        """Chama a função do aluno com **cópias** dos arrays (a referência da verificação não muda) e confere
        que ela não alterou as entradas no lugar: um ``W_q /= ...`` dentro da função mudaria os dados de
        quem a chama (no notebook, os valores da demonstração mudariam a cada execução).

        Objetos (uma ``SelfAttention``, o modelo) são passados como são, porque o enunciado pode pedir a
        mesma instância; os arrays deles são fotografados antes e, se mudarem, restaurados e apontados.
        ``names`` dá o nome de cada argumento posicional na mensagem; os nomeados usam a própria chave.
        ``forbidden``: funções ou classes da biblioteca que o enunciado proíbe dentro da função do aluno
        (ex.: ``scaled_dot_product_attention``); uma chamada a elas feita pelo código do aluno (não pela
        biblioteca por dentro) vira um ❌ com o nome do que foi chamado.

        O que a chamada imprimiu e os dados das figuras que ela desenhou ficam em :attr:`captured`
        (:class:`Captura`). Se ``fn`` é uma :class:`ChamadaExterna` (na correção, a função do aluno roda em
        outro processo), a chamada vai para lá só com dados simples, e o que volta é julgado aqui.
        """
        nomes = list(names or [f"argumento {i + 1}" for i in range(len(args))]) + list(kwargs)
        if isinstance(fn, ChamadaExterna):
            return self._call_external(label, fn, args, kwargs, nomes, forbidden)
        pos = [_private(a) for a in args]
        nom = {k: _private(v) for k, v in kwargs.items()}
        pares = list(zip(nomes, [*pos, *nom.values()]))
        fotos = [(nome, valor, _foto(valor)) for nome, valor in pares]
        vigia = _Vigia(forbidden)
        antes, impresso = _open_figures(), io.StringIO()
        self.captured = Captura("", [])
        try:
            with contextlib.redirect_stdout(impresso):
                return run_watched(vigia, fn, pos, nom)
        finally:
            self.captured = Captura(impresso.getvalue(), figure_data(_open_figures() - antes))
            parar = bool(vigia.usados)
            if vigia.usados:
                self._flag_forbidden(label, vigia.usados)
            _apontar_alterados(self, f"trocado durante {label}")
            for nome, valor, foto in fotos:
                mudou = _restaurar(valor, foto)
                if mudou:
                    tipo = ("modelo" if isinstance(foto.get(mudou[0]), tuple) else
                            "objeto" if mudou[0].startswith(".") else "array")
                    self._flag_mutation(label, nome, mudou, tipo)
                    parar = True
            if parar and sys.exc_info()[0] is None:  # o resto dos casos não acrescenta nada: a verificação para aqui
                raise _Parar()

    def _call_external(self, label: str, fn: "ChamadaExterna", args, kwargs, nomes: list, forbidden: tuple):
        """:meth:`call` de uma função do aluno que roda em outro processo: só o que volta é julgado."""
        proibidas = [f"{getattr(f, '__module__', '')}:{getattr(f, '__qualname__', '')}" for f in forbidden]
        resposta = fn.call_checked(tuple(args), dict(kwargs), nomes, proibidas)
        self.captured = Captura(resposta.printed, resposta.figures)
        parar = False
        if resposta.forbidden_used:
            self._flag_forbidden(label, set(resposta.forbidden_used))
            parar = True
        for nome, mudou, tipo in resposta.mutated:
            self._flag_mutation(label, nome, mudou, tipo)
            parar = True
        if resposta.error is not None:
            raise resposta.error
        if parar:
            raise _Parar()
        return resposta.value

    def _flag_forbidden(self, label: str, usados) -> None:
        self.expect(False, f"{label}: a conta é sua, sem a função pronta da biblioteca",
                    "a fórmula escrita com NumPy", f"a sua função chamou {', '.join(sorted(usados))}",
                    "o enunciado pede para escrever a conta você mesmo, com NumPy; use as funções prontas só "
                    "fora da sua função, para conferir o resultado.")

    def _flag_mutation(self, label: str, nome: str, mudou: list, tipo: str) -> None:
        """O ❌ de uma entrada alterada no lugar; ``tipo``: ``array``, ``objeto`` (um atributo do objeto
        recebido) ou ``modelo`` (os pesos do modelo)."""
        alvo = nome + mudou[0]
        dica = (f"não mude {alvo} no lugar (`{alvo} /= ...`, `{alvo} *= ...`, `{alvo}[...] = ...`): "
                f"crie um array novo, por exemplo `{alvo} = {alvo} / 2` (o `=` cria outro array e "
                f"o do notebook fica como estava).")
        if tipo == "modelo":  # os pesos do modelo: não há cópia para restaurar
            dica = (f"não altere {alvo} dentro da função (o modelo ficou alterado: reinicie o kernel "
                    f"e rode o notebook de novo para recarregá-lo).")
        elif tipo == "objeto":  # um atributo do objeto recebido (os pesos da camada)
            dica = (f"não altere {alvo} dentro da função: a camada é a mesma que o notebook usa depois. "
                    f"Faça as contas em arrays novos (por exemplo, `W = {alvo} / 2`).")
        self.expect(False, f"{label}: a função não altera as entradas", f"{nome} igual ao que foi passado",
                    f"{', '.join(nome + k for k in mudou)} foi modificado dentro da função", dica)

    def pair(self, result, label: str, first: str = "saida", second: str = "pesos"):
        """Confere que a função devolveu dois itens, ``(first, second)``, e os converte em arrays de floats;
        registra o ❌ (com a dica do retorno) e devolve ``None`` se não der."""
        dois = isinstance(result, (tuple, list)) and len(result) == 2
        if not self.expect(dois, f"{label}: devolve ({first}, {second})", f"uma tupla ({first}, {second})",
                           _descricao(result), _dica_retorno(result, first, second)):
            return None
        arrays = tuple(self.array(r, f"{label}: {first} e {second} são arrays de números") for r in result)
        return None if any(a is None for a in arrays) else arrays

    def array(self, value, what: str):
        """Converte o que a função do aluno devolveu num array de floats; se não der, registra ❌ e devolve None."""
        if value is None:
            self.expect(False, what, "um array de números", "None", "faltou um `return` na sua função?")
            return None
        if np.iscomplexobj(value) and np.any(np.imag(value) != 0):
            self.expect(False, what, "números reais", "números complexos (com parte imaginária)",
                        "a atenção só usa números reais: confira de onde veio o `1j` (ou o np.complex) na conta.")
            return None
        try:
            return np.asarray(np.real_if_close(value) if np.iscomplexobj(value) else value, dtype=float)
        except (TypeError, ValueError):
            self.expect(False, what, "um array de números", f"{type(value).__name__} que não vira um array de números",
                        "devolva um ndarray (ou uma lista de listas de números) com a forma pedida.")
            return None

    def close(self, a, b, what: str, atol: float = 1e-5, rtol: float = 1e-5, hint: str | None = None) -> bool:
        """Critério de igualdade numérica: formas iguais e ``|a - b| ≤ atol + rtol·|b|`` (aceita float32)."""
        a = self.array(a, what)
        if a is None:
            return False
        b = np.asarray(b, dtype=float)
        if a.shape != b.shape:
            shape = lambda x: "um número" if x.ndim == 0 else f"forma {x.shape}"  # noqa: E731
            return self.expect(False, what, shape(b), shape(a), hint)
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        ok = bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b))) and not np.isnan(a).any()
        return self.expect(ok, what, _fmt(b), f"{_fmt(a)}  (maior diferença {_num(diff, 'g')})", hint)


_PACOTE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # lib/atencao


class _Vigia:
    """Registra, enquanto ativo, as chamadas que o código do aluno faz às funções proibidas.

    Usa ``sys.setprofile`` (e ``threading.setprofile``, para threads novas): vê a chamada pelo código
    (arquivo, linha e nome da função), então pegar a função por outro nome (``from atencao import
    scaled_dot_product_attention as f``), de outra cópia da biblioteca (a cópia privada da correção carrega
    os mesmos arquivos) ou rodar o código-fonte dela com ``exec`` (as funções que ela chama por dentro
    também estão na lista) não escapa; chamadas feitas pela própria biblioteca por dentro (quem chama está
    em ``lib/atencao``) não contam. Também aponta o que só serve para fugir da vigilância ou para usar uma
    atenção pronta de outra biblioteca: desligar o perfil (``sys.setprofile``/``settrace``), mandar a conta
    para uma thread ou processo, ou chamar o PyTorch.
    """

    def __init__(self, forbidden: tuple):
        self.codigos, self.conteudos, self._cache_conteudo = {}, {}, {}
        for f in forbidden:
            for nome, g in ([(f.__name__, f)] if not isinstance(f, type) else
                            [(f"{f.__name__}.{k}", v) for k, v in vars(f).items()]):
                g = getattr(g, "__func__", g)
                code = getattr(getattr(g, "__wrapped__", g), "__code__", None)
                if code is not None:
                    self.codigos[_chave(code)] = nome.replace(".__init__", "").replace(".__call__", "")
                    self.conteudos[_conteudo(code)] = self.codigos[_chave(code)]
        self.usados: set[str] = set()
        self._antes = None
        self._primeira = True
        self._cache_aluno: dict = {}
        self._cache_fora: dict = {}
        self.biblioteca = _codigos_da_biblioteca()
        self._fugas = {f: f"{n} (desliga a vigilância da verificação)" for f, n in (
            (sys.setprofile, "sys.setprofile"), (sys.settrace, "sys.settrace"),
            (threading.setprofile, "threading.setprofile"), (threading.settrace, "threading.settrace"))}
        for nome in ("start_new_thread", "start_new", "start_joinable_thread"):
            if hasattr(_thread, nome):
                self._fugas[getattr(_thread, nome)] = f"uma thread (_thread.{nome})"
        for nome in ("fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "execv", "execve"):
            if hasattr(os, nome):
                self._fugas[getattr(os, nome)] = f"outro processo (os.{nome})"

    def _perfil(self, frame, event, arg):
        # chamado a cada chamada de função (o matplotlib faz milhares): só consultas a dicionários e conjuntos
        if event == "c_call":
            code = frame.f_code
            if id(code) in self.biblioteca or not self._do_aluno(code.co_filename):
                return  # a biblioteca, o matplotlib, o IPython... usam threads e o perfil por conta própria
            nome = self._fugas.get(arg)
            if nome:
                self.usados.add(nome)
            raiz = (getattr(arg, "__module__", None) or "").split(".")[0]
            if raiz in ("torch", "scipy"):  # as funções em C delas não passam por um quadro Python
                self.usados.add(_NOMES_DE_FORA[raiz])
            elif type(getattr(arg, "__self__", None)).__module__ == "_thread":  # lock.acquire: esperar outra thread
                self.usados.add("uma thread (_thread)")
            return
        if event != "call":
            return
        code, de_quem = frame.f_code, frame.f_back.f_code if frame.f_back else None
        do_aluno = de_quem is not None and id(de_quem) not in self.biblioteca
        if self._primeira:  # a chamada direta, feita por Checker.call: a "função do aluno" pode ser uma pronta
            self._primeira, do_aluno = False, True
        if not do_aluno:
            return
        if id(code) in self.biblioteca:
            nome = self.codigos.get(_chave(code))
            if nome:
                self.usados.add(f"atencao.{nome}")
            elif code.co_filename.startswith(_VERIFICACOES) and code.co_name != "passou":
                self.usados.add(f"atencao.checks ({code.co_name}), que é a própria verificação")
            return
        if self.conteudos:  # uma cópia do código de uma função proibida (exec do código-fonte, __code__ copiado)
            nome = self._cache_conteudo.get(id(code), _AUSENTE)
            if nome is _AUSENTE:
                nome = self._cache_conteudo[id(code)] = self.conteudos.get(_conteudo(code))
            if nome:
                self.usados.add(f"atencao.{nome} (uma cópia do código dela)")
        de_fora = self._de_fora(code.co_filename)
        if de_fora and self._do_aluno(de_quem.co_filename):
            self.usados.add(de_fora)

    def _do_aluno(self, arquivo: str) -> bool:
        r = self._cache_aluno.get(arquivo)
        if r is None:
            r = self._cache_aluno[arquivo] = _do_aluno(arquivo)
        return r

    def _de_fora(self, arquivo: str):
        if arquivo not in self._cache_fora:
            m = _DE_FORA.search(arquivo)
            self._cache_fora[arquivo] = next(v for k, v in _NOMES_DE_FORA.items() if k in m.group(1)) if m else None
        return self._cache_fora[arquivo]

    def __enter__(self):
        if self.codigos:
            self._antes = sys.getprofile()
            threading.setprofile(self._perfil)
            sys.setprofile(self._perfil)
        return self

    def __exit__(self, *exc):
        if self.codigos:
            if sys.getprofile() != self._perfil:  # desligada por fora do Python (ctypes: PyEval_SetProfile)
                self.usados.add("um desligamento da vigilância da verificação")
            sys.setprofile(self._antes)
            threading.setprofile(None)
        return False


_NOMES_DE_FORA = {"torch": "o PyTorch (torch)", "scipy": "o SciPy (scipy)",
                  "concurrent": "uma thread (concurrent.futures)",
                  "threading": "uma thread (threading)", "queue": "uma thread (queue)",
                  "multiprocessing": "outro processo (multiprocessing)",
                  "subprocess": "outro processo (subprocess)"}

_VERIFICACOES = os.path.join(_PACOTE, "checks")


def _fora_do_aluno() -> tuple:
    import sysconfig

    caminhos = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    # a correção (lib/correcao) também não é do aluno: ela leva as chamadas ao processo do aluno
    return tuple(sorted(c for c in caminhos if c)) + (_PACOTE, os.path.join(os.path.dirname(_PACOTE), "correcao"))


_FORA_DO_ALUNO = _fora_do_aluno()


def _do_aluno(arquivo: str) -> bool:
    """O código está num arquivo do aluno (uma célula do notebook, um módulo dele), e não na biblioteca do
    curso, na biblioteca padrão ou num pacote instalado (matplotlib, IPython, NumPy...)?"""
    return not (arquivo.startswith(_FORA_DO_ALUNO) or arquivo.startswith("<frozen") or "site-packages" in arquivo)


_BIBLIOTECA: dict = {}


def _codigos_da_biblioteca() -> frozenset:
    """Os ids dos objetos de código das funções da biblioteca carregada (``atencao`` e a cópia privada da correção):
    "quem chamou é a biblioteca" se decide por eles, não pelo nome do arquivo (um código do aluno com o
    ``co_filename`` trocado para o da biblioteca não passa por ela). Calculado uma vez por conjunto de módulos."""
    mods = [m for m in list(sys.modules.values())
            if m is not None and str(getattr(m, "__file__", "") or "").startswith(_PACOTE)]
    chave = frozenset(id(m) for m in mods)
    if chave not in _BIBLIOTECA:
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
        _BIBLIOTECA.clear()
        _BIBLIOTECA[chave] = (frozenset(id(c) for c in codigos), codigos)  # os ids; os objetos ficam vivos aqui
    return _BIBLIOTECA[chave][0]


# O que o código do aluno não chama num exercício "escreva a conta": o PyTorch (a atenção pronta dele) e a
# maquinaria de threads/processos (a conta rodaria fora da vigilância). Quem chama de dentro delas não conta.
_DE_FORA = re.compile(r"([/\\]torch[/\\]|[/\\]scipy[/\\]|[/\\]concurrent[/\\]futures[/\\]|[/\\]threading\.py$|"
                      r"[/\\]queue\.py$|[/\\]multiprocessing[/\\]|[/\\]subprocess\.py$)")


def _erro_do_aluno(exc: BaseException) -> tuple[str, None, None, str]:
    """(critério, esperado, obtido, dica) para um erro levantado pelo código do aluno: a mensagem em
    português quando é uma das comuns, a linha da função do aluno onde aconteceu e a mensagem original."""
    from ._erros import traduzir

    original = " ".join(str(exc).split())[:300]
    traduzida = traduzir(original)
    onde, tb = getattr(exc, "onde_do_aluno", None), exc.__traceback__  # de outro processo: (linha, função)
    while tb is not None:  # o último quadro que não é da biblioteca nem do Python/NumPy: o código do aluno
        if _do_aluno(tb.tb_frame.f_code.co_filename):
            onde = (tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    if onde is None and _da_verificacao(exc):  # nenhum quadro do aluno: a verificação não entendeu o retorno
        return ("a verificação não conseguiu ler o que a sua função devolveu",
                "o formato pedido no enunciado", f"{type(exc).__name__}: {original[:120]}",
                "confira a ordem e o tipo de cada item do `return` (o enunciado diz o que devolver, nessa ordem).")
    criterio = f"o seu código levantou {type(exc).__name__}: {traduzida or original}"
    if onde:
        criterio += f" (linha {onde[0]} de {onde[1]})" if onde[1] != "<module>" else f" (linha {onde[0]})"
    dica = "rode a sua função sozinha numa célula para ver o erro completo."
    if "contém infinito" in original or "contém NaN" in original:
        dica = ("um array que você passou à biblioteca tem -inf ou NaN. Se você pôs -np.inf num pedaço da matriz "
                "(na diagonal, para achar o outro máximo, por exemplo), faça isso numa cópia: pesos[i] é uma vista, "
                "e mudar a vista muda a matriz; use linha = pesos[i].copy(). " + dica)
    if traduzida != original:
        dica = f"mensagem original: “{original}”; " + dica
    return criterio, None, None, dica


def _da_verificacao(exc: BaseException) -> bool:
    """O erro aconteceu no código das verificações (e não no do aluno nem numa biblioteca chamada por ele)?"""
    if getattr(exc, "remoto", False):  # veio do processo do aluno (correção)
        return False
    tb, ultimo = exc.__traceback__, ""
    while tb is not None:
        arquivo = tb.tb_frame.f_code.co_filename
        if not ("site-packages" in arquivo or os.sep + "python3" in arquivo or arquivo.startswith("<frozen")):
            ultimo = arquivo
        tb = tb.tb_next
    return ultimo.startswith(os.path.join(_PACOTE, "checks"))


def _materializar(valor, fundo: int = 0):
    """O que a função devolveu, como dados comuns: arrays do NumPy (não subclasses), listas, tuplas, números,
    textos. Um objeto com ``__array__`` vira array aqui, enquanto a vigilância está ligada: um resultado
    "preguiçoso", que só faz a conta quando convertido, não escapa. O que não vira array fica como está."""
    if fundo > 4 or valor is None or isinstance(valor, (str, bytes, bool, int, float, complex, np.generic)):
        return valor
    if isinstance(valor, np.ndarray) or hasattr(valor, "__array__"):
        try:
            return np.array(valor, subok=False)
        except Exception:  # noqa: BLE001 - não virou array: a verificação diz o que recebeu
            return valor
    if type(valor) in (list, tuple):
        return type(valor)(_materializar(v, fundo + 1) for v in valor)
    return valor


def _chave(code) -> tuple:
    return (code.co_filename, code.co_firstlineno, code.co_name)


@functools.lru_cache(maxsize=None)  # os códigos proibidos são os mesmos em toda verificação
def _conteudo(code) -> tuple:
    """O que o código faz, sem onde nem como se chama: o mesmo para uma cópia recompilada (``exec`` do
    código-fonte da biblioteca com outro nome de arquivo) ou renomeada."""
    consts = tuple(_conteudo(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames[:code.co_argcount], consts)


def _private(value):
    """Cópia de arrays, listas e dicionários de arrays; objetos passam como são (veja :meth:`Checker.call`)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _private(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_private(v) for v in value]
    return value


def _arrays(value, nome: str = "") -> dict:
    """Os arrays alcançáveis em ``value`` (ele mesmo, itens de listas/dicionários e atributos de objetos)."""
    if isinstance(value, np.ndarray):
        return {nome: value}
    out = {}
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if isinstance(v, np.ndarray):
                out[f"{nome}[{i}]"] = v
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, np.ndarray):
                out[f"{nome}[{k!r}]"] = v
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        for k, v in vars(value).items():
            if isinstance(v, np.ndarray):
                out[f"{nome}.{k}"] = v
            elif isinstance(v, dict):
                out.update(_arrays(v, f"{nome}.{k}"))
    return out


def _iguais(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # arrays sem NaN possível (bool, int, objetos)
        return bool(np.array_equal(a, b))


_GRANDE = 1 << 20  # bytes: acima disso, a foto guarda um resumo (hash), não uma cópia


def _resumo(a: np.ndarray) -> tuple:
    """Resumo do conteúdo de um array grande (os pesos do modelo: 160 MB). No notebook, crc32 (rápido); na
    conferência da correção, blake2b (um código adversário não acha outro conteúdo com o mesmo resumo)."""
    import hashlib
    import zlib

    dados = memoryview(np.ascontiguousarray(a)).cast("B")
    digesto = hashlib.blake2b(dados, digest_size=16).digest() if SORTEAR else zlib.crc32(dados)
    return ("resumo", a.shape, a.dtype.str, digesto)


def _foto(value) -> dict:
    return {k: (_resumo(a) if a.nbytes > _GRANDE else a.copy()) for k, a in _arrays(value).items()}


def _restaurar(value, foto: dict) -> list[str]:
    """Os arrays de ``value`` que mudaram desde a ``foto`` (voltam ao que eram)."""
    mudou = []
    atuais = _arrays(value)
    for k, antes in foto.items():
        agora = atuais.get(k)
        if isinstance(antes, tuple):  # array grande: só dá para saber se mudou (não há cópia para restaurar)
            if agora is None or _resumo(agora) != antes:
                mudou.append(k)
            continue
        if agora is None or agora.shape != antes.shape or not _iguais(agora, antes):
            mudou.append(k)
            if agora is not None and agora.shape == antes.shape and agora.flags.writeable:
                np.copyto(agora, antes)
    return mudou


def _quebrar(texto: str, largura: int = 100) -> str:
    """Quebra as linhas longas entre palavras (a saída do JupyterLab quebraria no meio de uma palavra),
    com o recuo da linha original mais 5 espaços nas continuações."""
    import textwrap

    out = []
    for linha in texto.split("\n"):
        if len(linha) <= largura:
            out.append(linha)
            continue
        recuo = " " * (len(linha) - len(linha.lstrip()) + 5)
        out.extend(textwrap.wrap(linha, largura, subsequent_indent=recuo, break_long_words=False,
                                 break_on_hyphens=False, drop_whitespace=True))
    return "\n".join(out)


def _congelar(a) -> np.ndarray:
    """Cópia imutável (:func:`atencao._validation.read_only_copy`) das entradas de um caso. As referências
    da verificação são calculadas depois da chamada do aluno, a partir destas cópias: antes, elas ficariam
    visíveis nos quadros da pilha durante a chamada; depois, a partir de arrays mutáveis, a função do aluno
    poderia alterá-los pela pilha."""
    return read_only_copy(a)


def _fmt(x) -> str:
    """Arrays com 3 casas, em ponto fixo (0.518, não 5.180e-01), cortados se grandes."""
    if isinstance(x, np.ndarray):
        texto = np.array2string(np.round(x, 3), separator=", ", threshold=80, max_line_width=100,
                                formatter={"float_kind": lambda v: f"{v: .3f}"})  # espaço no lugar do sinal
        return texto.replace("\n", "\n" + " " * 17)
    return str(x)


DICA_INSTAVEL = ("apareceram NaN/inf nos pesos com pontuações grandes: np.exp estoura acima de ~709. Subtraia o "
                 "máximo de cada linha antes do exp (a softmax estável) ou use atencao.softmax.")


def _num(x: float, formato: str = ".2f") -> str:
    """Um número no texto, com vírgula decimal (``0,80``); os arrays seguem o formato do Python (``0.518``)."""
    texto = f"{x:.2g}" if formato == "g" else f"{x:{formato}}"
    return texto.replace(".", ",")


def _descricao(valor) -> str:
    """O que a função devolveu, em palavras: ``None``, ``uma tupla com 3 itens``, ``um array de forma (4, 4)``."""
    if valor is None:
        return "None (nada)"
    if isinstance(valor, (tuple, list)):
        return f"uma {'tupla' if isinstance(valor, tuple) else 'lista'} com {len(valor)} item(ns)"
    if isinstance(valor, np.ndarray):
        return f"um array de forma {valor.shape}"
    return f"um valor do tipo {type(valor).__name__}"


def _dica_retorno(valor, *nomes: str) -> str:
    """Dica para um retorno que não é a tupla pedida."""
    juntos = f"`return {', '.join(nomes)}`"
    if valor is None:
        return f"faltou um `return` no fim da função: {juntos}."
    if isinstance(valor, (tuple, list)):
        return f"devolva exatamente {len(nomes)} itens, nesta ordem: {juntos}."
    return f"devolva os {len(nomes)} resultados juntos, numa tupla: {juntos}."


def check(title: str):
    """Decorador: transforma ``f(checker, *args)`` numa verificação completa.

    Cuida do relatório, do exercício não feito, de exceções no código do aluno e do modo de correção.
    """

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs) -> CheckResult:
            checker = Checker(title)
            status, nao_feito = "ok", None
            _apontar_alterados(checker, "trocado antes da verificação")
            figs_before = _open_figures()
            try:
                # o que a função do aluno imprime (e os avisos do NumPy) não polui o relatório
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    func(checker, *args, **kwargs)
            except _Parar:
                pass
            except NotImplementedError as exc:
                nao_feito = exc
                if checker.lines:  # já passou por casos: não é "não feito", é um erro num caso (ex.: com máscara)
                    checker.expect(False, *_erro_do_aluno(exc))
                else:
                    status = "nao_feito"
            except (Exception, SystemExit, GeneratorExit) as exc:  # noqa: BLE001 - o erro do aluno vira um ❌
                checker.expect(False, *_erro_do_aluno(exc))
            finally:
                _close_new_figures(figs_before)
            if status == "nao_feito":
                quem = _quem_falta(nao_feito, args[0] if args else None)
                print(_quebrar(f"{MARCAS['nao_feito']} — {title}: ainda não resolvido (o código levanta "
                               "NotImplementedError). Complete a célula do exercício e rode esta verificação de novo."
                               if not quem else
                               f"{MARCAS['nao_feito']} — {title}: a sua função usa {quem}, que ainda não foi "
                               f"resolvida (levanta NotImplementedError). Resolva {quem} antes e rode esta "
                               "verificação de novo."))
                _registrar(args[0] if args else None, status)
                if grading():
                    raise AssertionError(f"{title}: exercício não resolvido.")
                return CheckResult(title, False, status, ["não resolvido"])
            if type(checker.failures) is not list or type(checker.lines) is not list:  # noqa: E721
                checker.failures = ["o relatório da verificação foi alterado durante a execução"]
            passed = not checker.failures
            status = "ok" if passed else "falhou"
            _registrar(args[0] if args else None, status)
            linhas = [_cabecalho(checker, passed), *checker.lines]
            if not passed and checker.caso_com_falha is not None and checker.caso_com_falha < (checker.n_casos or 0):
                linhas.append("  (a verificação para no primeiro caso que falha: corrija-o e rode de novo para ver os "
                              "próximos)")
            print(_quebrar("\n".join(linhas)))
            if grading() and not passed:
                raise AssertionError(f"{title}: não passou em: " + "; ".join(checker.failures))
            return CheckResult(title, passed, status, checker.failures)

        return wrapper

    return decorator


def _cabecalho(checker: Checker, passed: bool) -> str:
    """A primeira linha do relatório: ``✅ OK — título: tudo certo!`` ou ``❌ FALHOU — título: 2 critérios
    falharam no caso 1 de 3.`` (o caso só quando a verificação percorre casos com :meth:`Checker.casos`)."""
    if passed:
        return f"{MARCAS['ok']} — {checker.title}: tudo certo!"
    n_fail = len(checker.failures)
    texto = "1 critério falhou" if n_fail == 1 else f"{n_fail} critérios falharam"
    caso, n_casos = checker.caso_com_falha, checker.n_casos
    if isinstance(caso, int) and isinstance(n_casos, int) and n_casos > 1:
        texto += f" no caso {caso} de {n_casos}"
    return f"{MARCAS['falhou']} — {checker.title}: {texto}."


# o último resultado de cada função verificada (a função do aluno é a chave; se ela for redefinida, a nova
# ainda não foi verificada): é o que :func:`passou` consulta antes de uma demonstração
_ULTIMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _registrar(fn, status: str) -> None:
    try:
        _ULTIMO[fn] = status
    except TypeError:  # um objeto sem referência fraca: a demonstração pede para verificar de novo
        pass


# ---------- integridade: a verificação e a biblioteca como foram importadas ----------
# O que o código do aluno poderia trocar para a verificação dizer ✅: as funções de referência (módulos de
# ``atencao`` e das verificações), os métodos de Checker/CheckResult e o NumPy. A foto é tirada quando um
# módulo de verificação termina de carregar (na célula de importações, antes do código do aluno); a cada
# verificação e depois de cada chamada da função do aluno, o que mudou é desfeito e vira um ❌. (Na correção
# a conferência independente faz o mesmo com uma cópia privada da biblioteca; isto é para o notebook.)
_FOTOS: dict = {}


def proteger() -> None:
    """Fotografa os módulos de ``atencao`` já carregados, o NumPy e as classes deste módulo (idempotente por
    módulo). Chamada no fim de cada módulo de verificação."""
    raiz = __name__.split(".")[0]
    for nome, mod in list(sys.modules.items()):
        if mod is None or nome in _FOTOS:
            continue
        if nome.split(".")[0] == raiz or nome == "numpy":
            _FOTOS[nome] = (mod, dict(vars(mod)))
            _fotografar_codigos(vars(mod).values(), raiz)
    for cls in (Checker, CheckResult):
        if f"{__name__}.{cls.__name__}" not in _FOTOS:
            _FOTOS[f"{__name__}.{cls.__name__}"] = (cls, dict(vars(cls)))
            _fotografar_codigos([cls], raiz)


# id da função -> (função, __code__, __defaults__, __kwdefaults__): trocar o código de uma função no lugar
# (``Checker.close.__code__ = ...``) mantém o mesmo objeto no módulo, então a foto dos atributos não veria
_CODIGOS: dict = {}


def _fotografar_codigos(valores, raiz: str) -> None:
    for v in list(valores):
        membros = [v]
        if isinstance(v, type) and (getattr(v, "__module__", "") or "").split(".")[0] in (raiz, "numpy"):
            membros = list(vars(v).values())
        for f in membros:
            f = getattr(f, "__func__", f)
            for g in (f, getattr(f, "fget", None), getattr(f, "fset", None)):
                if isinstance(g, types.FunctionType) and id(g) not in _CODIGOS:
                    _CODIGOS[id(g)] = (g, g.__code__, g.__defaults__, g.__kwdefaults__)


def _alterados() -> list[str]:
    """O que mudou desde :func:`proteger` (e volta ao que era)."""
    out = []
    for nome, (obj, foto) in _FOTOS.items():
        atual = vars(obj)
        for k in set(foto) | set(atual):
            if k.startswith("__") and k.endswith("__") and not isinstance(obj, type):
                continue  # __builtins__, __loader__... de um módulo não decidem nada
            antes, agora = foto.get(k, _AUSENTE), atual.get(k, _AUSENTE)
            if antes is _AUSENTE and isinstance(agora, types.ModuleType):
                continue  # um submódulo carregado depois (atencao.checks.aula02) não é uma troca
            if agora is not antes:
                out.append(f"{nome}.{k}")
                if isinstance(obj, type):
                    if k in foto:
                        type.__setattr__(obj, k, foto[k])
                    else:
                        type.__delattr__(obj, k)
                elif k in foto:
                    atual[k] = foto[k]
                else:
                    del atual[k]
    for f, code, defaults, kwdefaults in list(_CODIGOS.values()):
        if f.__code__ is not code or f.__defaults__ is not defaults or f.__kwdefaults__ is not kwdefaults:
            out.append(f"{f.__module__}.{f.__qualname__} (o código)")
            f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
    return sorted(out)


_AUSENTE = object()


def _apontar_alterados(checker: "Checker", quando: str) -> None:
    alterados = _alterados()
    if alterados:
        checker.expect(False, "a biblioteca e a verificação estão como foram importadas",
                       "nenhuma função da biblioteca, do NumPy ou da verificação trocada",
                       f"{quando}: {', '.join(alterados[:6])}" + (" …" if len(alterados) > 6 else ""),
                       "não substitua funções de atencao, do NumPy ou das verificações (`modulo.funcao = ...`): a "
                       "troca foi desfeita. Se foi sem querer, reinicie o kernel e rode o notebook de novo.")


def passou(fn, avisar: bool = True) -> bool:
    """``True`` se a última verificação rodada com a função ``fn`` (o mesmo objeto) deu ✅.

    As células de demonstração dos exercícios começam com ``if aula02.passou(sua_funcao):`` e só usam a
    função do aluno depois do ✅, em vez de quebrar com um erro de dentro da biblioteca. Quando não
    passou, imprime o que falta (resolver, corrigir ou rodar a verificação) e devolve ``False``.

    Parâmetros
    ----------
    fn : callable
        A função do aluno, a mesma passada à verificação. Se a célula da função rodou de novo depois da
        verificação, é outra função: a verificação precisa rodar de novo.
    avisar : bool
        Se ``False``, não imprime nada (para escolher entre a função do aluno e a da biblioteca).
    """
    nome = getattr(fn, "__name__", "a sua função")
    try:
        status = _ULTIMO.get(fn)
    except TypeError:
        status = None
    if status == "ok":
        return True
    if not avisar:
        return False
    if status == "nao_feito":
        print(_quebrar(f"{MARCAS['nao_feito']} — a demonstração aparece quando {nome} estiver pronta e a verificação "
                       f"acima der {MARCAS['ok']}."))
    elif status == "falhou":
        print(_quebrar(f"{MARCAS['espera']} — a demonstração espera o {MARCAS['ok']}: corrija {nome} (a verificação "
                       "acima diz o que falta) e rode de novo a célula da função, a verificação e esta célula."))
    else:
        print(_quebrar(f"{MARCAS['espera']} — rode antes a verificação acima: a demonstração usa {nome} só depois "
                       f"do {MARCAS['ok']} (se você mudou a função, verifique de novo)."))
    return False


def _quem_falta(exc, fn) -> str | None:
    """O nome da função (outra que não ``fn``) que levantou o ``NotImplementedError``: a resposta do aluno
    pode estar pronta e usar outra ainda em esboço (por exemplo, ``my_softmax``)."""
    tb, nome = getattr(exc, "__traceback__", None), getattr(exc, "quem_levantou", None)
    while tb is not None:
        nome = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    alvo = getattr(fn, "__name__", None)
    return nome if nome and alvo and nome != alvo and not nome.startswith("<") else None


def _open_figures() -> set:
    plt = sys.modules.get("matplotlib.pyplot")
    return set(plt.get_fignums()) if plt else set()


def _close_new_figures(before: set) -> None:
    """Fecha as figuras que o código do aluno abriu durante a verificação (não polui a saída)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt:
        for num in set(plt.get_fignums()) - before:
            plt.close(num)
