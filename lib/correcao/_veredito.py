"""Dentro de uma caixa própria: o verificador, o único processo que decide pontos.

Nenhum código do aluno é carregado nem executado aqui. Este processo importa a biblioteca e as
verificações como estão instaladas, liga os casos sorteados (``RANDOMIZE_CASES``: outras sementes a cada
correção, uma tabela de respostas dos casos fixos não passa) e, para cada célula de verificação do
notebook (a versão original, restaurada pelo nbgrader), roda a verificação com:

- no lugar da função do aluno (o 1º argumento da chamada, ex.: ``aula01.exercicio_3(similar_embeddings)``),
  uma :class:`FuncaoRemota`: cada chamada vai, com dados simples, ao processo do aluno
  (:mod:`correcao._aluno`, em outra caixa) e volta como dados simples, validados (:mod:`correcao._remoto`);
- no lugar dos objetos da biblioteca (``encoder``), os desta cópia da biblioteca.

O veredito é o ``CheckResult.passed`` da verificação, calculado aqui.

Pedido (JSON na entrada padrão): ``nonce``, ``verificacoes`` (``[{"grade_id", "fonte"}]``),
``tempo_celula`` (s, o limite de cada chamada), ``tempo_pronto`` (s, a espera pelo lado do aluno).
Resposta: linhas ``<nonce> {...}``: ``{"inicio": grade_id}`` antes de cada verificação, depois
``{"grade_id", "passou", "detalhe", "categoria"}`` (a categoria do resultado, ``CheckResult.category``: ``ok``,
``not_done`` ou o id do engano), e no fim ``{"fim": "ok"}``. Na execução única (``"saidas": true`` no pedido), o
veredito leva também as saídas da célula para o retorno (``"saidas"``: veja :func:`notebook_report`).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import os
import sys
from pathlib import Path

from . import _caixa, _remoto
from ._executar import CELL_TIMEOUT_ERROR
from .biblioteca_aluno import REFUSED_MESSAGE, qualified_name

# as exceções que voltam do lado do aluno com o próprio tipo (as outras viram ErroDoAluno, com o nome)
_EXCEPTIONS = {c.__name__: c for c in (
    ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, AttributeError, NameError, RuntimeError,
    AssertionError, NotImplementedError, ArithmeticError, OverflowError, FloatingPointError, LookupError,
    UnboundLocalError, RecursionError, MemoryError, ImportError, ModuleNotFoundError, OSError, PermissionError,
    FileNotFoundError, StopIteration, UnicodeError, SyntaxError, Exception)}


class StudentError(Exception):
    """Uma exceção do código do aluno de um tipo que não é dos comuns (o nome dela vem em ``tipo_do_aluno`` e no
    começo da mensagem)."""


class StudentProcessStopped(RuntimeError):
    """O processo do aluno não respondeu (parou, ou o canal foi fechado)."""

    mensagem_fixa = True  # escrita pela correção, não pelo caso sorteado: o critério da conferência a cita


class RemoteAnswer:
    """O que voltou de uma chamada (veja :class:`atencao.checks.framework.RemoteCall`)."""

    def __init__(self, value=None, error=None, printed="", figures=(), forbidden_used=(), mutated=()):
        self.value, self.error, self.printed = value, error, printed
        self.figures, self.forbidden_used, self.mutated = list(figures), list(forbidden_used), list(mutated)


def _exception(dados: dict) -> BaseException:
    """A exceção do aluno, refeita: o mesmo tipo (se comum), a mensagem, a linha e quem a levantou."""
    tipo = str(dados.get("tipo", "Exception"))[:80]
    mensagem = str(dados.get("mensagem", ""))[:2000]
    cls = _EXCEPTIONS.get(tipo)
    if tipo == "TempoEsgotado":
        exc = StudentError("a função passou do tempo limite")
        exc.mensagem_fixa = True  # escrita pela correção: o critério a cita (as outras, com o caso sorteado, não)
    elif cls is None:
        exc = StudentError(f"{tipo}: {mensagem}" if mensagem else tipo)
        exc.tipo_do_aluno = tipo  # o critério da conferência diz o tipo, sem a mensagem
    else:
        try:
            exc = cls(mensagem) if cls not in (KeyError,) else cls(mensagem.strip("'\""))
        except Exception:  # noqa: BLE001
            exc = StudentError(f"{tipo}: {mensagem}")
    onde = dados.get("onde")
    if isinstance(onde, list) and len(onde) == 2 and isinstance(onde[0], int) and isinstance(onde[1], str):
        exc.onde_do_aluno = (onde[0], onde[1][:80])
    if isinstance(dados.get("quem"), str):
        exc.quem_levantou = dados["quem"][:80]
    exc.remoto = True  # levantada no processo do aluno (não pela verificação)
    return exc


def _text_list(valor, maximo: int = 20) -> list[str]:
    return [str(v)[:200] for v in valor[:maximo]] if isinstance(valor, list) else []


def _figures(valor) -> list:
    import numpy as np

    if not isinstance(valor, list):
        return []
    return [[a for a in fig if isinstance(a, np.ndarray)] for fig in valor[:16] if isinstance(fig, list)]


def _changed(valor) -> list:
    out = []
    for item in (valor if isinstance(valor, list) else [])[:20]:
        if (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], list)
                and item[1] and item[2] in ("array", "objeto", "modelo")):
            out.append((item[0][:80], [str(k)[:80] for k in item[1][:8]], item[2]))
    return out


class _Context:
    """O que a verificação em curso proíbe (objetos) e o que o processo do aluno pediu disso até agora."""

    def __init__(self, refused: frozenset = frozenset(), demonstrations: bool = False):
        self.forbidden: tuple = ()
        self.used: set[str] = set()
        # fora das verificações (na hora das células): as funções que alguma verificação do notebook proíbe não são
        # feitas (uma tabela pedida na célula, como causal_mask(2500), serviria de resposta depois)
        self.refused = refused
        # na execução única, as células de demonstração rodam no processo do aluno: uma função recusada roda fora
        # das verificações se o pedido traz dados em ponto flutuante (veja _enumerable)
        self.demonstrations = demonstrations


def _float_data(valor, fundo: int = 0) -> bool:
    """``valor`` (os argumentos de um pedido de conta, já refeitos) tem um array de ponto flutuante, solto ou numa
    lista, tupla ou dicionário. Os atributos de um objeto não contam (veja :func:`_enumerable`)."""
    import numpy as np

    if isinstance(valor, np.ndarray):  # dados, e não um número disfarçado de array: ao menos 2 valores
        return valor.ndim >= 1 and valor.size >= 2 and np.issubdtype(valor.dtype, np.floating)
    if fundo > 4:
        return False
    if isinstance(valor, dict):
        return any(_float_data(v, fundo + 1) for v in valor.values())
    if isinstance(valor, (list, tuple)):
        return any(_float_data(v, fundo + 1) for v in valor[:1000])
    return False


def _enumerable(fn, params: dict) -> bool:
    """Uma conta pedida fora das verificações cujas entradas dá para enumerar: nenhum array de ponto flutuante (só
    inteiros, textos, formas). O resultado dela pode virar uma tabela que responde à verificação depois
    (``causal_mask(2500)`` recortada, ``positional_encoding`` de todas as formas), então ela é recusada mesmo na
    execução única, quando devolve alguma coisa (um método que só guarda tamanhos no objeto e devolve ``None``,
    como ``MultiHeadAttention._set_sizes``, roda). Com dados em ponto flutuante, o resultado vale só para aqueles dados,
    conhecidos antes da verificação: os casos dela são sorteados na hora, e uma conta pedida durante a verificação é
    vigiada por ela (:func:`serve_calculation`).

    Os dados contam em qualquer parâmetro da conta (``params``, já ligados aos de ``fn``). Um objeto da biblioteca
    conta pelos arrays dele quando é o dono do método (``self``: os pesos de uma ``MultiHeadAttention``) ou um
    parâmetro sem valor padrão (o ``model`` de ``loss_by_position``); numa opção com valor padrão, não: uma
    ``LayerNorm`` no lugar do ``dtype`` de ``positional_encoding(2000, d, dtype=...)`` não faz a tabela virar uma
    conta sobre dados."""
    import inspect

    parametros = inspect.signature(fn).parameters
    for nome, valor in params.items():
        opcao = nome in parametros and parametros[nome].default is not inspect.Parameter.empty
        if _float_data(valor):
            return False
        if (not opcao and hasattr(valor, "__dict__") and type(valor).__module__.startswith("atencao.")
                and _float_data(dict(vars(valor)))):
            return False
    return True


_CONTEXTO = _Context()


def _resolve(nomes) -> tuple:
    """As funções e classes ``"modulo:qualname"`` desta biblioteca (as que não existem ficam de fora)."""
    out = []
    for nome in nomes:
        modulo, _, qual = str(nome).partition(":")
        if not modulo.startswith("atencao"):
            continue
        try:
            obj = importlib.import_module(modulo)
            for parte in qual.split("."):
                obj = getattr(obj, parte)
        except (ImportError, AttributeError):
            continue
        out.append(obj)
    return tuple(out)


def _served_names() -> frozenset:
    """Os nomes que a biblioteca do aluno de alguma aula troca por pedidos (:mod:`correcao.biblioteca_aluno`):
    só esses o verificador calcula. Vêm no pedido (``"servidos"``, calculados uma vez por processo de correção)
    ou, sem eles, daqui (:func:`correcao.biblioteca_aluno.served_names`)."""
    global _SERVIDOS
    if _SERVIDOS is None:
        from .biblioteca_aluno import served_names

        _SERVIDOS = served_names()
    return _SERVIDOS


_SERVIDOS = None


def _bind(fn, params: dict) -> tuple[list, dict]:
    """Os argumentos de ``fn`` a partir dos parâmetros por nome (os ``locals()`` do começo da função trocada).

    Raises
    ------
    correcao._remoto.InvalidMessage
        Um parâmetro que ``fn`` não tem: a função trocada manda só os dela, e um a mais serviria só para enganar
        :func:`_enumerable` (um array de ponto flutuante que a conta nem recebe)."""
    import inspect

    parametros = inspect.signature(fn).parameters
    sobra = sorted(set(params) - set(parametros))
    if sobra:
        raise _remoto.InvalidMessage(f"parâmetros que a função não tem: {', '.join(map(str, sobra))[:200]}")
    args, kwargs, lacuna = [], {}, False
    for p in parametros.values():
        if p.name not in params:
            lacuna = lacuna or p.kind == p.POSITIONAL_OR_KEYWORD  # os seguintes vão pelo nome (o padrão fica)
            continue
        if p.kind == p.POSITIONAL_ONLY or (p.kind == p.POSITIONAL_OR_KEYWORD and not lacuna):
            args.append(params[p.name])
        elif p.kind == p.POSITIONAL_OR_KEYWORD:
            kwargs[p.name] = params[p.name]
        elif p.kind == p.VAR_POSITIONAL:
            args.extend(params[p.name] if isinstance(params[p.name], (list, tuple)) else ())
        elif p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = params[p.name]
        elif isinstance(params[p.name], dict):
            kwargs.update(params[p.name])
    return args, kwargs


def _state(obj) -> dict:
    import numpy as np

    return {k: (v, v.copy() if isinstance(v, np.ndarray) else None) for k, v in vars(obj).items()}


def _changed_state(obj, antes: dict) -> bool:
    import numpy as np

    agora = vars(obj)
    if agora.keys() != antes.keys():
        return True
    for k, (v, copia) in antes.items():
        atual = agora[k]
        if atual is not v or (copia is not None and not np.array_equal(atual, copia, equal_nan=True)):
            return True
        if hasattr(atual, "__dict__") and type(atual).__module__.startswith("atencao."):
            return True  # um objeto da biblioteca dentro deste (um bloco com a sua atenção): vai de novo
    return False


class _ObjectCache:
    """Refaz os objetos da biblioteca que o processo do aluno manda e guarda os últimos pela impressão digital
    (:func:`correcao._remoto.object_digest`), para a próxima chamada mandar só ela."""

    MAX = 48

    def __init__(self):
        from collections import OrderedDict

        self.guardados: "OrderedDict[str, object]" = OrderedDict()

    def __call__(self, nome: str, dados):
        from . import _calculo_remoto

        return _calculo_remoto.rebuild(nome, dados)

    def store(self, digital: str, obj) -> None:
        self.guardados[digital] = obj
        self.guardados.move_to_end(digital)
        while len(self.guardados) > self.MAX:
            self.guardados.popitem(last=False)

    def lookup(self, digital: str):
        if digital not in self.guardados:
            raise _ObjectUnknown(digital)
        self.guardados.move_to_end(digital)
        return self.guardados[digital]

    def forget(self, obj) -> None:
        for k in [k for k, v in self.guardados.items() if v is obj]:
            del self.guardados[k]


class _ObjectUnknown(Exception):
    """Uma impressão digital que o verificador não guardou (o processo do aluno manda os dados de novo)."""


_OBJETOS = _ObjectCache()


# as tabelas que ainda responderiam a uma verificação do notebook por julgar (veja pending_tables): nome ->
# ``True`` para uma função que revela a resposta sobre quaisquer dados, ``False`` para a própria conta (recusada só
# com entradas enumeráveis)
_TABELAS: dict[str, bool] = {}


def pending_tables(forbidden_per_check) -> dict[str, bool]:
    """As contas que ainda não podem rodar sobre tamanhos: para cada verificação por julgar (a lista do que cada uma
    proíbe), as respostas que dependem só de tamanhos (:data:`atencao.checks.equivalents.SIZE_ONLY`, como a
    ``causal_mask``), recusadas com entradas enumeráveis, e as funções que as revelam
    (:data:`atencao.checks.equivalents.REVEALS`, como a softmax causal da indução), recusadas com quaisquer dados.
    Valem também dentro de outra verificação que as permite: pedida durante a verificação da softmax, a
    ``causal_mask(2500)`` guardada numa memória compartilhada responderia à da máscara, que vem depois."""
    from atencao.checks.equivalents import REVEALS, SIZE_ONLY

    out: dict[str, bool] = {}
    for forbidden in forbidden_per_check:
        for f in forbidden:
            if any(f is g for g in SIZE_ONLY):
                out.setdefault(qualified_name(f), False)
                out.update({qualified_name(r): True for r in REVEALS.get(f, ())})
    return out


_REFUSED = "{nome}: " + REFUSED_MESSAGE + " (o exercício pede a conta escrita por você)"
_REFUSED_TABLE = ("; fora delas, só sobre arrays de ponto flutuante (sem eles, o resultado serviria de tabela de "
                  "respostas)")
_REFUSED_PENDING = ("; antes da verificação que a proíbe, ela não roda sobre tamanhos (o resultado serviria de tabela "
                    "de respostas)")


def _refuse_table(nome: str, classe, fn, params: dict, contexto: _Context, recusada: bool) -> None:
    """Levanta ``RuntimeError`` (a mensagem volta ao aluno) se o resultado de ``fn`` serviria de tabela de
    respostas: uma conta que este notebook proíbe, pedida fora das verificações com entradas enumeráveis
    (:func:`_enumerable`), ou uma das tabelas ainda pendentes (:data:`_TABELAS`, :func:`pending_tables`) fora da
    verificação que a aponta."""
    if recusada and _enumerable(fn, params):
        raise RuntimeError(_REFUSED.format(nome=nome.replace(":", ".")) + _REFUSED_TABLE)
    tabela = _TABELAS.get(nome, _TABELAS.get(classe))
    vigiada = any(fn is f for f in contexto.forbidden)  # a verificação em curso aponta o uso
    if tabela is not None and not vigiada and (tabela or _enumerable(fn, params)):
        raise RuntimeError(_REFUSED.format(nome=nome.replace(":", ".")) + _REFUSED_PENDING)


def serve_calculation(canal: _remoto.Channel, msg: dict, contexto: _Context) -> None:
    """Faz aqui, com a biblioteca de verdade, a conta pronta que o processo do aluno pediu (a biblioteca dele não
    a tem, veja :mod:`correcao.biblioteca_aluno`) e responde. Se a verificação em curso proíbe a função (ou uma
    que ela chama por dentro), o uso fica anotado em ``contexto.used``: a verificação o aponta, seja o que for
    que o processo do aluno diga."""
    from atencao.checks.watcher import Watcher, run_watched

    from . import _calculo_remoto

    nome = str(msg.get("calcular"))[:200]
    try:
        classe = nome.rsplit(".", 1)[0] if "." in nome.partition(":")[2] else None
        if nome not in _served_names() and classe not in _served_names():
            raise _remoto.InvalidMessage(f"conta desconhecida: {nome}")
        recusada = nome in contexto.refused or classe in contexto.refused
        if recusada and not contexto.demonstrations:
            raise RuntimeError(_REFUSED.format(nome=nome.replace(":", ".")))
        (fn,) = _resolve([nome]) or (None,)
        params = _remoto.decode_value(msg.get("params"), objetos=True, refazer=_OBJETOS)
        if fn is None or not isinstance(params, dict):
            raise _remoto.InvalidMessage(f"conta desconhecida: {nome}")
        args, kwargs = _bind(fn, params)
        alvo = params.get("self")
        antes = _state(alvo) if hasattr(alvo, "__dict__") else None
        with contextlib.redirect_stdout(io.StringIO()):
            if contexto.forbidden:
                vigia = Watcher(contexto.forbidden)
                valor = run_watched(vigia, fn, args, kwargs)
                contexto.used |= vigia.used
            else:
                valor = fn(*args, **kwargs)
        if valor is not None:
            _refuse_table(nome, classe, fn, params, contexto, recusada)
        resposta = {"calculado": _remoto.encode_value(valor, objetos=True)}
        if antes is not None and _changed_state(alvo, antes):
            _OBJETOS.forget(alvo)  # guardado com os dados de antes
            resposta["self"] = _remoto.encode_value(dict(vars(alvo)), objetos=True)
    except _ObjectUnknown:
        resposta = {"erro_calculo": {"tipo": _calculo_remoto.REF_UNKNOWN, "mensagem": "objeto desconhecido"}}
    except _remoto.InvalidMessage as exc:
        resposta = {"erro_calculo": {"tipo": "TypeError", "mensagem": f"{nome}: {str(exc)[:300]}"}}
    except Exception as exc:  # noqa: BLE001 - o erro da biblioteca (forma errada...) volta ao aluno
        resposta = {"erro_calculo": {"tipo": type(exc).__name__[:80], "mensagem": str(exc)[:2000]}}
    canal.send(resposta)


def receive_serving(canal: _remoto.Channel, prazo_s: float, contexto: _Context):
    """A próxima mensagem do processo do aluno que não é um pedido de conta (esses são atendidos no caminho,
    por :func:`serve_calculation`); ``None`` se o prazo passou ou o canal fechou."""
    import time

    limite = time.monotonic() + prazo_s
    while True:
        msg = canal.receive(max(0.0, limite - time.monotonic()))
        if not (isinstance(msg, dict) and "calcular" in msg):
            return msg
        serve_calculation(canal, msg, contexto)


def _make_remote_base():  # noqa: C901 — a classe da função remota, com a validação de cada campo da resposta
    from atencao.checks.framework import RemoteCall

    class FuncaoRemota(RemoteCall):
        """A função ``nome`` do notebook do aluno, que roda no processo do aluno; chamá-la manda um pedido."""

        def __init__(self, canal: _remoto.Channel, nome: str, tempo: float):
            self.canal, self.__name__, self.tempo = canal, nome, tempo
            self._proximo = 0
            # o que o relatório do retorno precisa saber (notebook_report): uma chamada passou do tempo, ou o nome
            # não existe no processo do aluno (no kernel, a célula de verificação levantaria NameError)
            self.timed_out = self.undefined = False

        def __repr__(self) -> str:
            return f"<função do aluno {self.__name__}>"

        def call_checked(self, args, kwargs, names, forbidden) -> RemoteAnswer:
            if self.canal.parou:
                raise StudentProcessStopped("o processo do aluno parou numa chamada anterior")
            self._proximo += 1
            pedido = {"id": self._proximo, "funcao": self.__name__, "args": _remoto.encode_value(list(args)),
                      "kwargs": _remoto.encode_value(kwargs), "nomes": list(names), "proibidas": list(forbidden),
                      "tempo": self.tempo, "aquecer": list(self.warm_up)}
            _CONTEXTO.forbidden, _CONTEXTO.used = _resolve(forbidden), set()
            try:
                self.canal.send(pedido)
                dados = receive_serving(self.canal, self.tempo + 10, _CONTEXTO)
            except (OSError, _remoto.InvalidMessage) as exc:
                self.canal.parou = True
                raise StudentProcessStopped(f"resposta inválida do processo do aluno ({exc})") from None
            finally:
                _CONTEXTO.forbidden = ()
            if not isinstance(dados, dict) or dados.get("id") != self._proximo:
                self.canal.parou = True
                raise StudentProcessStopped("o processo do aluno não respondeu a tempo")
            try:
                erro = dados.get("erro")
                resposta = RemoteAnswer(
                    printed=str(dados.get("impresso", ""))[:_remoto.MAX_TEXTO],
                    figures=_figures(_remoto.decode_value(dados.get("figuras", []))),
                    forbidden_used=sorted(_CONTEXTO.used) + _text_list(dados.get("proibidas_usadas")),
                    mutated=_changed(dados.get("alteradas")))
                if isinstance(erro, dict):
                    resposta.error = _exception(erro)
                    self.timed_out |= erro.get("tipo") == "TempoEsgotado"
                    self.undefined |= (erro.get("tipo") == "NameError" and erro.get("onde") is None
                                       and erro.get("mensagem") == f"name '{self.__name__}' is not defined")
                else:
                    resposta.value = _remoto.decode_value(dados.get("retorno"))
            except _remoto.InvalidMessage as exc:
                raise StudentError(f"a resposta da função não é um dado simples ({exc})") from None
            return resposta

        def __call__(self, *args, **kwargs):
            """Chamada direta (a biblioteca chamando a função do aluno, ex.: ``encoder(frase, attention_fn=f)``)."""
            from atencao.checks import watcher

            # chamada pela biblioteca dentro de uma verificação (``c.call(..., encoder.forward, ...,
            # attention_fn=f, forbidden=...)``): valem as proibições dela
            ativa = watcher._ACTIVE[-1] if watcher._ACTIVE else None
            proibidas = [f"{getattr(f, '__module__', '')}:{getattr(f, '__qualname__', '')}"
                         for f in (ativa.forbidden if ativa is not None else ())]
            resposta = self.call_checked(args, kwargs, [f"argumento {i + 1}" for i in range(len(args))], proibidas)
            if ativa is not None and resposta.forbidden_used:
                ativa.used.update(resposta.forbidden_used)  # a verificação em curso aponta
            if resposta.error is not None:
                raise resposta.error
            return resposta.value

    return FuncaoRemota


def load_checks() -> dict:
    """Os módulos de verificação (``aula01``...) desta biblioteca, com os casos sorteados ligados."""
    import atencao
    import atencao.checks.cases as cases

    cases.RANDOMIZE_CASES = True  # antes de os módulos de verificação carregarem
    from correcao.catalogo import lesson_modules

    return {nome: importlib.import_module(f"atencao.checks.{nome}")
            for nome in sorted(lesson_modules(Path(atencao.__file__).parent / "checks"))}


def _library_object(nome: str):
    """Os objetos que uma célula de verificação passa além da função do aluno (os desta biblioteca)."""
    if nome == "encoder":
        from atencao.bert import load_e5

        return load_e5()
    raise NameError(f"argumento desconhecido na célula de verificação: {nome}")


def calls(fonte: str, modulos: dict) -> list[tuple]:
    """As chamadas ``modulo.funcao(nome, ...)`` de uma célula de verificação: (verificação, [nomes])."""
    out = []
    for stmt in ast.parse(fonte).body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id in modulos
                and not call.keywords and call.args and all(isinstance(a, ast.Name) for a in call.args)):
            out.append((getattr(modulos[call.func.value.id], call.func.attr), [a.id for a in call.args]))
    return out


def _judge(celula: dict, modulos: dict, remota, canal, tempo: float) -> tuple:
    """(passou, detalhe, categoria, estados) de uma célula de verificação; ``estados``: ``[[nome, status], ...]``, o
    resultado de cada função verificada (para as demonstrações do processo do aluno, :mod:`correcao._aluno`)."""
    from atencao.checks.framework import CheckResult

    alvos = calls(celula["fonte"], modulos)
    if not alvos:
        return False, "célula sem chamada de verificação conhecida", "grading_error", []
    estados = []
    for func, nomes in alvos:
        args = [remota(canal, nomes[0], tempo), *(_library_object(n) for n in nomes[1:])]
        with contextlib.redirect_stdout(io.StringIO()):
            resultado = func(*args)
        if type(resultado) is CheckResult:
            estados.append([nomes[0], str(resultado.status)])
        if not (type(resultado) is CheckResult and resultado.passed is True):
            return False, ("; ".join(resultado.failures) if type(resultado) is CheckResult
                           else "a verificação não devolveu um resultado"), (
                resultado.category if type(resultado) is CheckResult else "grading_error"), estados
        if canal.parou:
            return False, "o processo do aluno parou durante a verificação", "stopped", estados
    return True, "", "ok", estados


MAX_REPORT = 64 * 1024  # caracteres do relatório de uma célula de verificação no retorno


def notebook_report(celula: dict, modulos: dict, remota, canal, tempo: float) -> tuple[list, bool]:
    """As saídas que a célula de verificação teria no notebook do aluno (para o retorno da execução única): a
    verificação com os casos do notebook (:func:`atencao.checks.cases.fixed_cases`), o relatório impresso e, se
    não passou, o ``AssertionError`` do modo de correção, parando na primeira chamada que não passa, como o
    kernel. Devolve ``(saidas, passou)``. Não vale ponto: o veredito roda depois, com os casos sorteados."""
    from atencao.checks.cases import fixed_cases
    from atencao.checks.framework import CheckResult

    impresso, erro = io.StringIO(), None
    with fixed_cases():
        for func, nomes in calls(celula["fonte"], modulos):
            aluno = remota(canal, nomes[0], tempo)
            args = [aluno, *(_library_object(n) for n in nomes[1:])]
            with contextlib.redirect_stdout(impresso):
                resultado = func(*args)
            if aluno.undefined:  # como no kernel: o nome da célula não existe, e a verificação nem começa
                return [{"output_type": "error", "ename": "NameError", "evalue": f"name '{nomes[0]}' is not defined",
                         "traceback": [f"NameError: name '{nomes[0]}' is not defined"]}], False
            if aluno.timed_out:  # como no kernel: a célula passou do tempo e foi interrompida
                return [dict(CELL_TIMEOUT_ERROR)], False
            if type(resultado) is not CheckResult:
                erro = "a verificação não devolveu um resultado"
            elif resultado.status == "nao_feito":
                erro = f"{resultado.title}: exercício não resolvido."
            elif not resultado.passed:
                erro = f"{resultado.title}: não passou em: " + "; ".join(resultado.failures)
            if erro is not None or canal.parou:
                break
    texto = impresso.getvalue()
    saidas = [{"output_type": "stream", "name": "stdout", "text": texto[:MAX_REPORT]}] if texto else []
    if erro is not None:
        saidas.append({"output_type": "error", "ename": "AssertionError", "evalue": erro[:2000],
                       "traceback": [f"AssertionError: {erro[:2000]}"]})
    return saidas, erro is None and not canal.parou


def _verdict(celula: dict, modulos: dict, remota, canal, tempo: float, saidas: bool) -> tuple[dict, list]:
    """O veredito de uma célula de verificação (a mensagem para a correção) e o resultado de cada função verificada
    (para o processo do aluno); na execução única (``saidas``), antes, o relatório do retorno com os casos do
    notebook (:func:`notebook_report`)."""
    veredito: dict = {"grade_id": celula["grade_id"]}
    if saidas:
        try:
            veredito["saidas"] = notebook_report(celula, modulos, remota, canal, tempo)[0]
        except BaseException as exc:  # noqa: BLE001 - nada do aluno roda aqui; um erro é da conferência
            erro = f"{type(exc).__name__}: {str(exc)[:200]}"
            # a célula mostra o erro (sem saída, ela pareceria aprovada no notebook, e a nota a trataria como trapaça)
            veredito["saidas"] = [{"output_type": "error", "ename": type(exc).__name__[:80], "evalue": str(exc)[:200],
                                   "traceback": [f"a conferência não terminou esta verificação ({erro})"]}]
            veredito["erro_do_relatorio"] = erro
    if any(o.get("ename") == "CellTimeoutError" for o in veredito.get("saidas", [])):
        # a função passou do tempo com os casos do notebook: os sorteados gastariam o limite de novo, e a verificação
        # interrompida não deixa resultado para a demonstração (como no kernel)
        veredito.update(passou=False, detalhe="o seu código passou do tempo limite da célula", categoria="timeout")
        return veredito, []
    estados: list = []
    try:
        passou, detalhe, categoria, estados = _judge(celula, modulos, remota, canal, tempo)
    except BaseException as exc:  # noqa: BLE001 - nada do aluno roda aqui; um erro é da conferência
        passou, detalhe, categoria = False, f"{type(exc).__name__}: {str(exc)[:200]}", "grading_error"
    veredito.update(passou=passou, detalhe=detalhe, categoria=categoria)
    return veredito, estados


def main() -> None:
    pedido, send = _caixa.open_channel()
    canal = _remoto.channel_from_env()
    os.environ["MPLBACKEND"] = "Agg"
    os.environ.pop("NBGRADER_EXECUTION", None)  # o veredito é o CheckResult, não uma exceção
    modulos = load_checks()
    servidos = pedido.get("servidos")
    if isinstance(servidos, list) and all(isinstance(n, str) for n in servidos):
        global _SERVIDOS
        _SERVIDOS = frozenset(servidos)
    remota = _make_remote_base()
    tempo = float(pedido.get("tempo_celula", 20))
    espera = float(pedido.get("tempo_pronto", 600))
    saidas = pedido.get("saidas") is True  # a execução única (veja notebook_report)
    vivo = True
    from .biblioteca_aluno import checks_in, forbidden_of_lesson

    # fora das verificações, recusadas as contas que as verificações DESTE notebook proíbem (uma tabela delas
    # responderia a uma verificação daqui); as que só outro notebook da aula proíbe rodam (a posição da Aula 4 no
    # projeto dela)
    verificacoes = pedido.get("verificacoes", [])
    proibe = [[f for m, nomes in checks_in([c["fonte"]]).items() for f in forbidden_of_lesson(modulos[m], nomes)]
              for c in verificacoes]  # o que cada verificação proíbe, na ordem do notebook
    fora = _Context(frozenset(qualified_name(f) for fs in proibe for f in fs), demonstrations=saidas)
    for k, celula in enumerate(verificacoes):
        _TABELAS.clear()
        _TABELAS.update(pending_tables(proibe[k:]))  # a verificação k e as seguintes ainda não foram julgadas
        gid = celula["grade_id"]
        send({"inicio": gid})
        if vivo:  # o processo do aluno rodou as células até esta verificação?
            try:
                pronto = receive_serving(canal, espera, fora)
            except _remoto.InvalidMessage:
                pronto = None
            vivo = isinstance(pronto, dict) and pronto.get("pronto") == gid
        if not vivo:
            send({"grade_id": gid, "passou": False,
                  "detalhe": "o código do notebook parou antes desta verificação "
                               "(tempo esgotado ou processo parado)", "categoria": "stopped"})
            continue
        veredito, estados = _verdict(celula, modulos, remota, canal, tempo, saidas)
        send(veredito)
        try:
            canal.send({"continuar": True, "estados": estados})
        except OSError:
            vivo = False
    _TABELAS.clear()  # todas julgadas: uma tabela não responde a mais nada
    if saidas and vivo:  # as células depois da última verificação ainda pedem contas (as demonstrações)
        try:
            receive_serving(canal, espera, fora)  # até o processo do aluno dizer que as células acabaram
        except _remoto.InvalidMessage:
            pass
    send({"fim": "ok"})
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
