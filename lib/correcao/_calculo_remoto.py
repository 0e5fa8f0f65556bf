"""No processo do aluno, na correção: as contas prontas que a aula proíbe são feitas pelo verificador.

A biblioteca do aluno (:mod:`correcao.biblioteca_aluno`) troca o corpo de cada função proibida por
``call("modulo:qualname", locals())``. Este módulo manda o pedido pelo canal do verificador
(:mod:`correcao._remoto`) e devolve o resultado, ou levanta a exceção que a biblioteca de verdade levantou.
Quem decide se a chamada vale é o verificador, que sabe qual verificação está rodando; nada daqui é confiado.

Pedido: ``{"calcular": nome, "params": {...}}`` (os parâmetros da função, ``self`` incluído, como dados simples;
os objetos da biblioteca pelos seus dados). Resposta: ``{"calculado": valor}`` (mais ``"self"``, os dados novos
do objeto, se o método os mudou) ou ``{"erro_calculo": {"tipo", "mensagem"}}``.
"""

from __future__ import annotations

from . import _remoto

CANAL: "_remoto.Channel | None" = None  # posto por correcao._aluno antes da primeira célula
_ENVIADOS: set = set()  # impressões digitais dos objetos que o verificador já recebeu (_remoto.object_digest)
REF_UNKNOWN = "ObjetoDesconhecido"  # a resposta do verificador a uma impressão que ele não guardou

# as exceções que voltam com o próprio tipo (as outras viram RuntimeError, com o nome)
_TIPOS = {c.__name__: c for c in (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, AttributeError,
                                   NotImplementedError, ArithmeticError, OverflowError, FloatingPointError,
                                   LookupError, RecursionError, MemoryError, RuntimeError)}


def rebuild(nome: str, dados):
    """Um objeto da biblioteca deste processo, refeito dos seus dados (``"modulo:Classe"``)."""
    import importlib

    if nome == _remoto.ENCODER:  # o modelo da Aula 3 (ou um recorte dele, com as primeiras camadas)
        import dataclasses

        from atencao.bert import BertEncoder, load_e5

        encoder = load_e5()
        n_layers = dados.get("n_layers") if isinstance(dados, dict) else None
        if isinstance(n_layers, int) and 0 < n_layers < encoder.config.n_layers:
            config = dataclasses.replace(encoder.config, n_layers=n_layers)
            encoder = BertEncoder(config, encoder.weights, encoder.tokenizer)
        return encoder
    if ":" not in str(nome) and nome in _remoto.CLASSES:  # os nomes curtos que a verificação manda
        nome = f"{_remoto.CLASSES[nome]}:{nome}"
    modulo, _, qual = str(nome).partition(":")
    if not modulo.startswith("atencao.") or modulo.startswith("atencao.checks") or not isinstance(dados, dict):
        raise _remoto.InvalidMessage(f"objeto desconhecido: {nome}")
    cls = importlib.import_module(modulo)
    for parte in qual.split("."):
        cls = getattr(cls, parte)
    if not isinstance(cls, type):
        raise _remoto.InvalidMessage(f"objeto desconhecido: {nome}")
    obj = cls.__new__(cls)
    vars(obj).update(dados)
    return obj


def call(nome: str, params: dict):
    """A função ``nome`` da biblioteca de verdade, no verificador, com ``params`` (os ``locals()`` do começo da
    função trocada: os parâmetros por nome)."""
    canal = CANAL
    if canal is None or canal.parou:
        raise RuntimeError(f"{nome.replace(':', '.')}: indisponível aqui (na correção, esta conta é feita pelo "
                           "verificador, e ele não está respondendo)")
    alvo = params.get("self")
    params = {k: v for k, v in params.items() if k != "__class__"}
    for tentativa in (1, 2):
        try:
            pedido = {"calcular": nome, "params": _remoto.encode_value(params, objetos=True, refs=_ENVIADOS)}
        except _remoto.InvalidMessage as exc:
            raise TypeError(f"{nome.replace(':', '.')}: argumento que não é um dado simples ({exc})") from None
        canal.send(pedido)
        try:
            resposta = canal.receive(None)
        except _remoto.InvalidMessage:
            resposta = None
        if not isinstance(resposta, dict):
            canal.parou = True
            raise RuntimeError(f"{nome.replace(':', '.')}: o verificador não respondeu")
        erro = resposta.get("erro_calculo")
        if not (isinstance(erro, dict) and erro.get("tipo") == REF_UNKNOWN and tentativa == 1):
            break
        _ENVIADOS.clear()  # o verificador esqueceu algum objeto: vão todos de novo, com os dados
    if isinstance(erro, dict):
        cls = _TIPOS.get(str(erro.get("tipo")), RuntimeError)
        mensagem = str(erro.get("mensagem", ""))
        raise cls(mensagem if cls is not RuntimeError else f"{erro.get('tipo')}: {mensagem}")
    valor = _remoto.decode_value(resposta.get("calculado"), objetos=True, refazer=rebuild)
    if alvo is not None and "self" in resposta:
        novos = _remoto.decode_value(resposta["self"], objetos=True, refazer=rebuild)
        if isinstance(novos, dict):
            vars(alvo).clear()
            vars(alvo).update(novos)
    return valor


__all__ = ["CANAL", "call", "rebuild"]
