"""O :class:`Checker`: os critérios de uma verificação e a chamada vigiada da função do aluno.

Quem escreve uma verificação recebe um ``Checker`` do decorador :func:`.framework.check` e o importa de
:mod:`.framework` (que o reexporta). Veja o guia em ``checks/README.md``.
"""

from __future__ import annotations

import contextlib
import io
import reprlib
import sys

import numpy as np

from . import cases, categories, equivalents, integrity
from .calls import Captured, RemoteCall
from .errors import is_numpy_shape_error
from .figures import figure_data, open_figures
from .report import MARKS, describe, format_number, format_value, return_hint
from .watcher import Watcher, run_watched

__all__ = ["Checker", "StopCheck"]


class StopCheck(Exception):  # noqa: N818 - não é um erro: encerra a verificação
    """Encerra a verificação depois de um ❌ que já diz tudo.

    :func:`.framework.check` a trata como o fim normal da verificação (o relatório sai com o que já foi
    registrado). Quem a levanta é o :class:`Checker`: um critério com ``stop=True`` (ou :meth:`Checker.require`,
    :meth:`Checker.fail`) que falha, o fim de um caso de :meth:`Checker.cases` com um ❌, uma função pronta usada
    ou uma entrada alterada. Uma verificação escrita assim não precisa de ``if ...: return`` depois de cada
    critério."""


class Checker:
    """Acumula os critérios de uma verificação (o :func:`check` cria um e o passa à função decorada).

    Sem atributos além destes (``__slots__``): o código avaliado não consegue trocar ``expect`` numa
    instância em uso."""

    __slots__ = ("title", "lines", "failures", "categories", "captured", "case", "n_cases", "failed_case", "labels",
                 "case_start")

    def __init__(self, title: str):
        self.title = title
        self.lines: list[str] = []
        self.failures, self.categories = [], []  # os critérios que falharam e a categoria de cada um (categories.py)
        self.captured = Captured("", [])
        self.case: int | None = None  # o caso em andamento (1, 2, ...), quando a verificação usa :meth:`cases`
        self.n_cases: int | None = None
        self.failed_case: int | None = None  # o caso do primeiro ❌ (o cabeçalho diz "no caso 2 de 5")
        self.labels: list[str] = []  # os rótulos passados a :meth:`call` (veja :meth:`_failure_text`)
        self.case_start = 0  # quantas falhas havia quando o caso em andamento começou

    def cases(self, items):
        """Percorre os casos de uma verificação, guardando qual está em andamento e quantos são: o cabeçalho
        de uma falha diz então "no caso 2 de 5". Devolve os mesmos itens de ``items`` (um iterável, lido
        inteiro antes do primeiro caso, para saber quantos são).

        A verificação para no primeiro caso que falha: um caso que registrou um ❌ (e seguiu até o fim, para
        mostrar todos os critérios dele) não deixa o próximo começar (:class:`StopCheck`).
        """
        items = list(items)
        self.n_cases = len(items)
        for k, item in enumerate(items, start=1):
            self.case, self.case_start = k, len(self.failures)
            yield item
            self.stop_if_failed()

    def stop_if_failed(self) -> None:
        """Encerra a verificação (:class:`StopCheck`) se o caso em andamento (fora de :meth:`cases`, a verificação)
        já registrou um ❌: os critérios que não param sozinhos ficam todos no relatório, e o resto não roda."""
        if len(self.failures) > self.case_start:
            raise StopCheck()

    def require(self, ok: bool, what: str, expected=None, obtained=None, hint: str | None = None) -> None:
        """:meth:`expect` que encerra a verificação quando falha (:class:`StopCheck`): a pré-condição de um
        caso (o tipo, a forma), sem a qual os outros critérios não têm o que comparar."""
        self.expect(ok, what, expected, obtained, hint, stop=True)

    def fail(self, what: str, expected=None, obtained=None, hint: str | None = None):
        """Registra um ❌ e encerra a verificação (:class:`StopCheck`): o engano já reconhecido (o retorno na
        ordem trocada, um erro que tem a sua dica). Não registra nada quando não é chamado: sem linha ✅."""
        self.expect(False, what, expected, obtained, hint, stop=True)

    def expect(self, ok: bool, what: str, expected=None, obtained=None, hint: str | None = None, *,
               stop: bool = False, category: str = "criterion_failed") -> bool:
        """Registra um critério (uma linha do relatório).

        Parameters
        ----------
        ok : bool
            Se o critério passou (qualquer valor vira ``bool``).
        what : str
            O critério, do ponto de vista do aluno (``"caso 1: pesos (n, n) corretos"``).
        expected, obtained : object, opcional
            Mostrados numa falha, com :func:`format_value` (um ``ndarray`` com 3 casas); ``None`` omite a linha.
        hint : str, opcional
            A dica numa falha: o que fazer para acertar.
        stop : bool
            Se ``True``, uma falha encerra a verificação (:class:`StopCheck`), como :meth:`require`.
        category : str
            A categoria da falha (:data:`.categories.GENERIC`) quando ``hint`` não é uma :class:`.categories.Hint`.

        Returns
        -------
        bool
            ``ok``. Numa falha, ``what`` entra em :attr:`failures` (na conferência da correção, sem o rótulo do
            caso: :meth:`_failure_text`) e a categoria, em :attr:`categories`.
        """
        ok = bool(ok)
        if ok:
            self.lines.append(f"  {MARKS['ok']} — {what}")
        else:
            self.failed_case = self.case if self.failed_case is None else self.failed_case  # o 1º caso que falhou
            detail = [f"  {MARKS['falhou']} — {what}"]
            if expected is not None:
                detail.append(f"       esperado: {format_value(expected)}")
            if obtained is not None:
                detail.append(f"       obtido:   {format_value(obtained)}")
            if hint:
                detail.append(f"       dica: {hint}")
            self.lines.extend(detail)
            self.failures.append(self._failure_text(what))
            self.categories.append(getattr(hint, "category", category))
            if stop:
                raise StopCheck()
        return ok

    def _failure_text(self, what: str) -> str:
        """O critério ``what`` como entra em :attr:`failures`, que a conferência da correção devolve e que vira o
        motivo em ``notas.csv`` e no retorno.

        No notebook, ``what`` como está. Na conferência (casos sorteados, :data:`.cases.RANDOMIZE_CASES`), o
        rótulo do caso passado a :meth:`call` (no começo de ``what``) pode citar um valor sorteado (``n = 13``,
        uma forma), outro a cada correção: ele dá lugar ao número do caso (``caso 5 de 5: ...``), e um critério
        sem rótulo ganha o número na frente. A mesma turma dá então o mesmo motivo, byte a byte.
        """
        if not cases.randomized() or not isinstance(self.case, int):
            return what
        caso = f"caso {self.case} de {self.n_cases}"
        for label in sorted(self.labels, key=len, reverse=True):
            if what == label or what.startswith(label + ":"):
                return caso + what[len(label):]
        return f"{caso}: {what}"

    def call(self, label: str, fn, *args, names: tuple = (), forbidden: tuple = (), mutation_hint: str | None = None,
             **kwargs):
        """Chama a função do aluno com **cópias** dos arrays (a referência da verificação não muda) e confere
        que ela não alterou as entradas no lugar: um ``W_q /= ...`` dentro da função mudaria os dados de
        quem a chama (no notebook, os valores da demonstração mudariam a cada execução).

        Objetos (uma ``SelfAttention``, o modelo) são passados como são, porque o enunciado pode pedir a
        mesma instância; os arrays deles são fotografados antes e, se mudarem, restaurados e apontados.
        ``names`` dá o nome de cada argumento posicional na mensagem; os nomeados usam a própria chave.
        ``mutation_hint``: a dica de uma entrada alterada no lugar, quando o enunciado pede outra coisa que a
        padrão (``{alvo}`` vira o nome da entrada).
        ``forbidden``: funções ou classes da biblioteca que o enunciado proíbe dentro da função do aluno (ex.:
        ``scaled_dot_product_attention``), mais as que refazem a mesma conta (:mod:`.equivalents`); uma chamada a
        elas feita pelo código do aluno (não pela biblioteca por dentro) vira um ❌ com o nome do que foi chamado.

        O que a chamada imprimiu e os dados das figuras que ela desenhou ficam em :attr:`captured`
        (:class:`Captured`). Se ``fn`` é uma :class:`RemoteCall` (na correção, a função do aluno roda em
        outro processo), a chamada vai para lá só com dados simples, e o que volta é julgado aqui.
        """
        nomes = list(names or [f"argumento {i + 1}" for i in range(len(args))]) + list(kwargs)
        forbidden = equivalents.expand(forbidden)
        if label not in self.labels:
            self.labels.append(label)
        if not isinstance(fn, RemoteCall) and not callable(fn):
            self.expect(False, f"{label}: a verificação recebeu uma função", expected="uma função (def ...)",
                        obtained=f"{type(fn).__name__}: {reprlib.repr(fn)}",
                        hint=categories.NOT_A_FUNCTION_HINT)
            raise StopCheck()
        if isinstance(fn, RemoteCall):
            return self._call_remote(label, fn, args, kwargs, nomes, forbidden, mutation_hint)
        pos = [integrity.private_copy(a) for a in args]
        nom = {k: integrity.private_copy(v) for k, v in kwargs.items()}
        pares = list(zip(nomes, [*pos, *nom.values()]))
        fotos = [(nome, valor, integrity.snapshot(valor)) for nome, valor in pares]
        vigia = Watcher(forbidden)
        antes, impresso = open_figures(), io.StringIO()
        self.captured = Captured("", [])
        try:
            with contextlib.redirect_stdout(impresso):
                return run_watched(vigia, fn, pos, nom)
        finally:
            self.captured = Captured(impresso.getvalue(), figure_data(open_figures() - antes))
            parar = bool(vigia.used)
            if vigia.used:
                self._flag_forbidden(label, vigia.used)
            self.report_tampering(f"trocado durante {label}")
            for nome, valor, foto in fotos:
                mudou = integrity.restore(valor, foto)
                if mudou:
                    tipo = ("modelo" if isinstance(foto.get(mudou[0]), tuple) else
                            "objeto" if mudou[0].startswith(".") else "array")
                    self._flag_mutation(label, nome, mudou, tipo, mutation_hint)
                    parar = True
            if parar and sys.exc_info()[0] is None:  # o resto dos casos não acrescenta nada: a verificação para
                raise StopCheck()

    def _call_remote(self, label: str, fn: "RemoteCall", args, kwargs, nomes: list, forbidden: tuple,
                     mutation_hint: str | None = None):
        """:meth:`call` de uma função do aluno que roda em outro processo: só o que volta é julgado."""
        proibidas = [f"{getattr(f, '__module__', '')}:{getattr(f, '__qualname__', '')}" for f in forbidden]
        resposta = fn.call_checked(tuple(args), dict(kwargs), nomes, proibidas)
        self.captured = Captured(resposta.printed, resposta.figures)
        parar = False
        if resposta.forbidden_used:
            self._flag_forbidden(label, set(resposta.forbidden_used))
            parar = True
        for nome, mudou, tipo in resposta.mutated:
            self._flag_mutation(label, nome, mudou, tipo, mutation_hint)
            parar = True
        if resposta.error is not None:
            raise resposta.error
        if parar:
            raise StopCheck()
        return resposta.value

    def _flag_forbidden(self, label: str, usados) -> None:
        self.expect(False, f"{label}: a conta é sua, sem a função pronta da biblioteca",
                    "a fórmula escrita com NumPy", f"a sua função chamou {', '.join(sorted(usados))}",
                    categories.FORBIDDEN_HINT)

    def _flag_mutation(self, label: str, nome: str, mudou: list, tipo: str, hint: str | None = None) -> None:
        """O ❌ de uma entrada alterada no lugar; ``tipo``: ``array``, ``objeto`` (um atributo do objeto
        recebido) ou ``modelo`` (os pesos do modelo); ``hint`` troca a dica do array (``{alvo}``: o nome)."""
        alvo = nome + mudou[0]
        dica = (f"não mude {alvo} no lugar (`{alvo} /= ...`, `{alvo} *= ...`, `{alvo}[...] = ...`): "
                f"crie um array novo, por exemplo `{alvo} = {alvo} / 2` (o `=` cria outro array e "
                f"o do notebook fica como estava).")
        if hint is not None and tipo == "array":
            dica = hint.format(alvo=alvo)
        elif tipo == "modelo":  # os pesos do modelo: não há cópia para restaurar
            dica = (f"não altere {alvo} dentro da função (o modelo ficou alterado: reinicie o kernel "
                    f"e rode o notebook de novo para recarregá-lo).")
        elif tipo == "objeto":  # um atributo do objeto recebido (os pesos da camada)
            dica = (f"não altere {alvo} dentro da função: a camada é a mesma que o notebook usa depois. "
                    f"Faça as contas em arrays novos (por exemplo, `W = {alvo} / 2`).")
        self.expect(False, f"{label}: a função não altera as entradas", f"{nome} igual ao que foi passado",
                    f"{', '.join(nome + k for k in mudou)} foi modificado dentro da função",
                    categories.Hint("input_mutated", dica))

    def returns(self, result, label: str, *names: str, stop: bool = False):
        """Critério "devolve (a, b, ...)": ``result`` é uma tupla (ou lista) com um item por nome de ``names``.

        Parameters
        ----------
        result : object
            O que a função do aluno devolveu.
        label : str
            O caso, no começo do critério (``"caso 1: X (4, 8)"`` → ``"caso 1: X (4, 8): devolve (saida,
            pesos)"``).
        *names : str
            Os nomes dos itens pedidos, na ordem do enunciado.
        stop : bool
            Se ``True``, o ❌ encerra a verificação (:class:`StopCheck`) em vez de devolver ``None``.

        Returns
        -------
        tuple ou None
            Os itens de ``result`` (como tupla), ou ``None`` depois de registrar o ❌, com o obtido em palavras
            (:func:`describe`) e a dica do ``return`` certo (:func:`return_hint`).
        """
        juntos = ", ".join(names)
        pedido = f"uma tupla ({juntos})" if len(names) == 2 else f"uma tupla com {len(names)} itens"
        if not self.expect(isinstance(result, (tuple, list)) and len(result) == len(names),
                           f"{label}: devolve ({juntos})", pedido, describe(result), return_hint(result, *names),
                           stop=stop, category="wrong_return_format"):
            return None
        return tuple(result)

    def pair(self, result, label: str, first: str = "saida", second: str = "pesos", stop: bool = False):
        """Critério "devolve (saida, pesos)" com os dois itens convertidos em arrays de floats (:meth:`array`).

        Returns
        -------
        tuple de dois ndarray ou None
            ``(first, second)`` como arrays float; ``None`` depois de registrar o ❌ se ``result`` não é uma
            tupla de dois itens (:meth:`returns`) ou se um dos itens não vira array de números (com
            ``stop=True``, o ❌ encerra a verificação).
        """
        itens = self.returns(result, label, first, second, stop=stop)
        if itens is None:
            return None
        arrays = tuple(self.array(r, f"{label}: {first} e {second} são arrays de números") for r in itens)
        if any(a is None for a in arrays):
            if stop:
                raise StopCheck()
            return None
        return arrays

    def array(self, value, what: str, stop: bool = False):
        """Converte o que a função do aluno devolveu num array de floats.

        Returns
        -------
        ndarray ou None
            O array (float; números complexos com parte imaginária nula viram reais); ``None`` depois de
            registrar o ❌ ``what`` quando ``value`` é ``None`` (faltou o ``return``), tem números complexos ou
            não vira um array de números (com ``stop=True``, o ❌ encerra a verificação).
        """
        if value is None:
            self.expect(False, what, "um array de números", "None", categories.NO_RETURN_HINT, stop=stop)
            return None
        if np.iscomplexobj(value) and np.any(np.imag(value) != 0):
            self.expect(False, what, "números reais", "números complexos (com parte imaginária)",
                        categories.COMPLEX_HINT, stop=stop)
            return None
        try:
            return np.asarray(np.real_if_close(value) if np.iscomplexobj(value) else value, dtype=float)
        except (TypeError, ValueError):
            self.expect(False, what, "um array de números", f"{type(value).__name__} que não vira um array de números",
                        categories.NOT_AN_ARRAY_HINT, stop=stop)
            return None

    def close(self, a, b, what: str, atol: float = 1e-5, rtol: float = 1e-5, hint: str | None = None, *,
              stop: bool = False) -> bool:
        """Critério de igualdade numérica: ``a`` (o do aluno) tem a forma de ``b`` (a referência) e
        ``|a - b| ≤ atol + rtol·|b|`` em toda posição, sem NaN (aceita float32).

        Numa falha, o esperado é ``b``, o obtido é ``a`` com a maior diferença, e ``hint`` a dica (em formas
        diferentes, esperado e obtido são as formas). ``a`` passa antes por :meth:`array`. Devolve se passou;
        com ``stop=True``, uma falha encerra a verificação (:class:`StopCheck`).
        """
        a = self.array(a, what, stop=stop)
        if a is None:
            return False
        b = np.asarray(b, dtype=float)
        if a.shape != b.shape:
            shape = lambda x: "um número" if x.ndim == 0 else f"forma {x.shape}"  # noqa: E731
            return self.expect(False, what, shape(b), shape(a), hint, stop=stop, category="wrong_shape")
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        ok = bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b))) and not np.isnan(a).any()
        obtido = f"{format_value(a)}  (maior diferença {format_number(diff, 'g')})"
        return self.expect(ok, what, format_value(b), obtido, hint, stop=stop, category="wrong_values")

    def expect_value_error(self, label: str, fn, *args, names: tuple = (), what: str, hint: str,
                           expected: str = "ValueError levantado pela sua função", with_message: bool = False,
                           **kwargs) -> bool:
        """Critério "a função levanta o SEU ``ValueError``": chama ``fn(*args, **kwargs)`` com :meth:`call` e
        espera um ``ValueError`` levantado pelo aluno, não o erro de formas do NumPy
        (:func:`is_numpy_shape_error`) nem outro tipo de erro.

        Parameters
        ----------
        label, fn, *args, names, **kwargs
            Como em :meth:`call` (``label`` também aparece nos ❌ de função pronta ou entrada alterada).
        what : str
            O critério, como aparece no relatório.
        hint : str
            A dica quando a função não levanta o erro pedido.
        expected : str
            O texto da linha "esperado:".
        with_message : bool
            Se ``True``, o ``ValueError`` precisa ter uma mensagem (um ``raise ValueError()`` vazio não conta;
            o obtido diz "ValueError sem mensagem").

        Returns
        -------
        bool
            Se passou. O obtido é ``"nenhum erro"`` ou ``"Tipo: mensagem"`` (até 120 caracteres).
        """
        obtido, mensagem = "nenhum erro", ""
        try:
            self.call(label, fn, *args, names=names, **kwargs)
        except ValueError as exc:
            obtido, mensagem = f"ValueError: {exc}", str(exc).strip()
        except Exception as exc:  # noqa: BLE001 - outro erro (ex.: o de broadcast do NumPy) não é o pedido
            obtido = f"{type(exc).__name__}: {exc}"
        proprio = obtido.startswith("ValueError") and not is_numpy_shape_error(obtido)
        if with_message and proprio and not mensagem:
            return self.expect(False, what, expected, "ValueError sem mensagem", hint, category="missing_value_error")
        return self.expect(proprio, what, expected, obtido[:120], hint, category="missing_value_error")

    def header(self, passed: bool) -> str:
        """A primeira linha do relatório: ``✅ OK — título: tudo certo!`` ou ``❌ FALHOU — título: 2 critérios
        falharam no caso 1 de 3.`` (o caso só quando a verificação percorre casos com :meth:`cases`)."""
        if passed:
            return f"{MARKS['ok']} — {self.title}: tudo certo!"
        n_fail = len(self.failures)
        texto = "1 critério falhou" if n_fail == 1 else f"{n_fail} critérios falharam"
        caso, n_casos = self.failed_case, self.n_cases
        if isinstance(caso, int) and isinstance(n_casos, int) and n_casos > 1:
            texto += f" no caso {caso} de {n_casos}"
        return f"{MARKS['falhou']} — {self.title}: {texto}."

    def report_tampering(self, when: str) -> None:
        """Desfaz o que o código do aluno trocou na biblioteca, no NumPy ou nas verificações desde
        :func:`protect` (:func:`.integrity.tampered`) e, se houve troca, registra o ❌ que diz o quê
        (``when`` diz quando: ``"trocado durante caso 1"``)."""
        alterados = integrity.tampered()
        if alterados:
            self.expect(False, "a biblioteca e a verificação estão como foram importadas",
                        "nenhuma função da biblioteca, do NumPy ou da verificação trocada",
                        f"{when}: {', '.join(alterados[:6])}" + (" …" if len(alterados) > 6 else ""),
                        categories.TAMPERED_HINT)
