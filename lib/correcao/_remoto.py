"""A ponte entre a verificação e o código do aluno, em dois processos (e duas caixas) diferentes.

Na correção, a nota vem de um processo **verificador** em que nenhum código do aluno foi carregado nem
executado (:mod:`correcao._veredito`). As funções do aluno rodam noutro processo, o do **aluno**
(:mod:`correcao._aluno`), e o verificador as chama através de um par de pipes:

- pedido (verificador → aluno): ``{"id", "funcao", "args", "kwargs", "proibidas"}``;
- resposta (aluno → verificador): ``{"id", "retorno"}`` ou ``{"id", "erro"}``, mais o que a chamada
  imprimiu (``impresso``), os dados das figuras que ela desenhou (``figuras``), as funções proibidas que
  ela chamou (``proibidas_usadas``) e as entradas que ela alterou (``alteradas``).

Só passam **dados simples**: ``None``, bool, int, float, str, arrays do NumPy de tipo numérico e listas,
tuplas e dicionários (chaves str) deles, numa linha de JSON (arrays em base64, lidos com
``np.frombuffer``; nada é "despicklado"). Tudo o que chega do lado do aluno é validado aqui
(:func:`decode_value`, com ``objetos=False``): tamanho da linha, profundidade, número de itens, tipos e bytes.
Objetos da biblioteca (uma ``SelfAttention``, o modelo) só vão do verificador para o aluno, descritos
pelos seus dados, e são refeitos do outro lado.

O que o código do aluno fizer no próprio processo (trocar módulos, ``builtins``, o ``json``, o pipe) só
muda os valores que a resposta traz, e esses são julgados pela verificação. O que o lado do aluno
"confessa" (função proibida usada, entrada alterada) só pode tirar pontos, nunca dar.
"""

from __future__ import annotations

import base64
import json
import os
import select
import time

import numpy as np

MAX_LINHA = 96 * 2**20  # bytes de uma linha de resposta (arrays em base64 incluídos)
MAX_BYTES_ARRAYS = 64 * 2**20  # soma dos bytes dos arrays de uma mensagem
MAX_ITENS = 200_000  # valores numa mensagem (contando itens de listas e dicionários)
MAX_FUNDO = 12  # aninhamento de listas/tuplas/dicionários
MAX_TEXTO = 2**20  # caracteres de uma string
TIPOS_ARRAY = {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"}
# objetos da biblioteca que a verificação passa à função do aluno (refeitos do lado do aluno)
CLASSES = {"SelfAttention": "atencao.projections", "MultiHeadAttention": "atencao.multihead",
           "LayerNorm": "atencao.normalization", "FeedForward": "atencao.feedforward"}
ENCODER = "BertEncoder"


class InvalidMessage(ValueError):
    """Uma mensagem do lado do aluno fora do formato (tipo não permitido, grande demais, malformada)."""


class UnsupportedValue:
    """O lugar de um valor que a função do aluno devolveu e que não é um dado simples (um objeto, um
    conjunto...): a verificação o vê como "um valor do tipo X" e o recusa com a dica do formato pedido."""

    def __init__(self, tipo: str):
        self.tipo = str(tipo)[:80]

    def __repr__(self) -> str:
        return f"<{self.tipo}>"


# ---------- codificação ----------
def _dtype(a: np.ndarray) -> str:
    return a.dtype.kind + str(a.dtype.itemsize) if a.dtype.kind != "b" else "b1"


def object_digest(obj, fundo: int = 0) -> str | None:
    """Uma impressão digital dos dados de um objeto da biblioteca (a classe e cada atributo: arrays pelo tipo,
    forma e bytes), ou ``None`` se ele tem algo que não é dado simples. O verificador guarda os objetos que já
    recebeu por ela, e o processo do aluno manda só a impressão da segunda vez em diante (os pesos de um modelo
    não viajam a cada chamada)."""
    import hashlib

    if fundo > MAX_FUNDO:
        return None
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{type(obj).__module__}:{type(obj).__qualname__}".encode())
    for k, v in vars(obj).items():
        h.update(b"\x00" + str(k).encode())
        if isinstance(v, np.ndarray):
            if v.dtype.hasobject:
                return None
            h.update(f"{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif v is None or type(v) in (bool, int, float, str):
            h.update(f"{type(v).__name__}:{v!r}".encode())
        elif hasattr(v, "__dict__") and (type(v).__module__ or "").startswith("atencao."):
            dentro = object_digest(v, fundo + 1)
            if dentro is None:
                return None
            h.update(dentro.encode())
        else:
            return None
    return h.hexdigest()


def encode_value(valor, fundo: int = 0, objetos: bool = False, refs: set | None = None):  # noqa: C901 — um ramo por tipo do formato do canal (a tabela dos tipos aceitos, lida de cima a baixo)
    """``valor`` como JSON (veja o módulo). Levanta :class:`InvalidMessage` para o que não é dado simples
    (o lado do aluno troca o retorno por ``{"__tipo__": nome}``, veja :func:`encode_return`).

    ``objetos=True`` (as contas que o verificador faz para o processo do aluno, :mod:`correcao._calculo_remoto`):
    qualquer objeto de uma classe de ``atencao`` (fora ``atencao.checks``) vai pelos seus dados, com o nome
    ``"modulo:Classe"``, e os dados podem ter outros objetos assim."""
    if fundo > MAX_FUNDO:
        raise InvalidMessage("aninhamento fundo demais")
    if valor is None or isinstance(valor, (bool, str)):
        return valor
    if isinstance(valor, (int, float)) and type(valor) in (int, float, bool):
        return valor if not isinstance(valor, float) or np.isfinite(valor) else {"__float__": repr(valor)}
    if isinstance(valor, np.generic):
        return {"__escalar__": encode_value(np.asarray(valor), fundo + 1)}
    if isinstance(valor, np.ndarray):
        a = valor if valor.flags.c_contiguous else valor.copy(order="C")  # (ascontiguousarray perderia a forma 0-d)
        codigo = _dtype(a)
        if codigo not in TIPOS_ARRAY:
            raise InvalidMessage(f"array de tipo {a.dtype}")
        return {"__nd__": codigo, "forma": list(a.shape), "dados": base64.b64encode(a.tobytes()).decode("ascii")}
    if type(valor) in (list, tuple):
        itens = [encode_value(v, fundo + 1, objetos, refs) for v in valor]
        return itens if type(valor) is list else {"__tupla__": itens}
    if type(valor) is dict:
        if not all(isinstance(k, str) for k in valor):
            raise InvalidMessage("dicionário com chaves que não são strings")
        return {"__dict__": {k: encode_value(v, fundo + 1, objetos, refs) for k, v in valor.items()}}
    if objetos and _dtype_name(valor) is not None:  # dtype=np.float64 (o padrão de muitas funções da biblioteca)
        return {"__dtype__": _dtype_name(valor)}
    nome = type(valor).__name__
    modulo = getattr(type(valor), "__module__", "") or ""
    if (objetos and nome != ENCODER and modulo.startswith("atencao.") and not modulo.startswith("atencao.checks")
            and hasattr(valor, "__dict__") and not isinstance(valor, type)):
        return _encode_object(valor, fundo, refs)
    if nome in CLASSES and type(valor).__module__ == CLASSES[nome]:
        dados = {k: v for k, v in vars(valor).items()
                 if v is None or isinstance(v, (np.ndarray, int, float, str, bool))}
        return {"__objeto__": nome, "dados": encode_value(dados, fundo + 1)}
    if nome == ENCODER:  # o modelo (ou um recorte dele, com as primeiras camadas): refeito do outro lado
        return {"__objeto__": ENCODER, "dados": encode_value({"n_layers": int(valor.config.n_layers)}, fundo + 1)}
    raise InvalidMessage(f"um valor do tipo {nome}")


def _encode_object(valor, fundo: int, refs: set | None) -> dict:
    """Um objeto de ``atencao`` pelos seus dados (``"modulo:Classe"``); com ``refs``, só a impressão digital se o
    outro lado já o recebeu (:func:`object_digest`)."""
    digital = object_digest(valor) if refs is not None else None
    if digital is not None and digital in refs:
        return {"__ref__": digital}
    codificado = {"__objeto__": f"{type(valor).__module__}:{type(valor).__qualname__}",
                  "dados": encode_value({k: v for k, v in vars(valor).items() if k != "__class__"}, fundo + 1, True,
                                        refs)}
    if digital is not None:
        codificado["ref"] = digital
        refs.add(digital)
    return codificado


_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
           "float64", "complex64", "complex128")


def _dtype_name(valor) -> str | None:
    """O nome de um tipo numérico (``np.float64``, ``np.dtype("float32")``, ``float``), ou ``None``."""
    if not isinstance(valor, (np.dtype, type)):
        return None
    try:
        nome = np.dtype(valor).name
    except TypeError:
        return None
    return nome if nome in _DTYPES else None


def encode_return(valor):
    """Como :func:`encode_value`, mas um valor que não é dado simples vira ``{"__tipo__": nome}``."""
    try:
        return encode_value(valor)
    except (InvalidMessage, RecursionError):
        return {"__tipo__": type(valor).__name__}


class _Contador:
    def __init__(self):
        self.itens = 0
        self.bytes = 0

    def item(self, n: int = 1) -> None:
        self.itens += n
        if self.itens > MAX_ITENS:
            raise InvalidMessage(f"mais de {MAX_ITENS} valores")


def decode_value(dados, objetos: bool = False, refazer=None, _fundo: int = 0, _conta: _Contador | None = None):
    """O valor descrito por ``dados`` (JSON já lido), validado. ``objetos=False`` (o que vem do lado do
    aluno) recusa objetos; ``refazer(nome, dados)`` refaz um objeto da biblioteca (só do lado do aluno).
    Levanta :class:`InvalidMessage`."""
    conta = _conta or _Contador()
    conta.item()
    if _fundo > MAX_FUNDO:
        raise InvalidMessage("aninhamento fundo demais")
    if dados is None or isinstance(dados, (bool, int, float, str)):
        return _decode_simple(dados)
    if isinstance(dados, list):
        return [decode_value(v, objetos, refazer, _fundo + 1, conta) for v in dados]
    if not isinstance(dados, dict) or len(dados) > 3:
        raise InvalidMessage("valor fora do formato")
    return _decode_tagged(dados, objetos, refazer, _fundo, conta)


def _decode_simple(dados):
    """``None``, um booleano, um número ou um texto, dentro dos limites."""
    if isinstance(dados, int) and not isinstance(dados, bool) and abs(dados) > 2**63:
        raise InvalidMessage("inteiro grande demais")
    if isinstance(dados, str) and len(dados) > MAX_TEXTO:
        raise InvalidMessage("texto grande demais")
    return dados


def _decode_tagged(dados: dict, objetos: bool, refazer, _fundo: int, conta: _Contador):  # noqa: C901 — um ramo por marca do formato do canal, o inverso de encode_value
    """Um dicionário com uma marca (``__nd__``, ``__escalar__``, ``__float__``, ``__tupla__``, ``__dict__``,
    ``__tipo__``, ``__objeto__``): o valor que ele descreve."""
    if "__nd__" in dados:
        return _decode_array(dados, conta)
    if "__escalar__" in dados:
        a = decode_value(dados["__escalar__"], False, None, _fundo + 1, conta)
        if not isinstance(a, np.ndarray) or a.ndim != 0:
            raise InvalidMessage("escalar fora do formato")
        return a[()]
    if "__float__" in dados:
        texto = dados["__float__"]
        if texto not in ("nan", "inf", "-inf"):
            raise InvalidMessage("float fora do formato")
        return float(texto)
    if "__tupla__" in dados and isinstance(dados["__tupla__"], list):
        return tuple(decode_value(v, objetos, refazer, _fundo + 1, conta) for v in dados["__tupla__"])
    if "__dict__" in dados and isinstance(dados["__dict__"], dict):
        conta.item(len(dados["__dict__"]))
        return {str(k)[:200]: decode_value(v, objetos, refazer, _fundo + 1, conta)
                for k, v in dados["__dict__"].items()}
    if "__dtype__" in dados and objetos:
        if dados["__dtype__"] not in _DTYPES:
            raise InvalidMessage("tipo numérico fora do formato")
        return np.dtype(dados["__dtype__"])
    if "__tipo__" in dados and isinstance(dados["__tipo__"], str):
        return UnsupportedValue(dados["__tipo__"])
    if "__ref__" in dados and objetos and hasattr(refazer, "lookup"):  # um objeto que o verificador já recebeu
        return refazer.lookup(str(dados["__ref__"])[:64])
    if "__objeto__" in dados and objetos and refazer is not None:
        interno = decode_value(dados.get("dados"), objetos, refazer, _fundo + 1, conta)
        obj = refazer(str(dados["__objeto__"]), interno)
        if isinstance(dados.get("ref"), str) and hasattr(refazer, "store"):
            refazer.store(dados["ref"][:64], obj)
        return obj
    raise InvalidMessage("valor fora do formato")


def _decode_array(dados: dict, conta: _Contador) -> np.ndarray:
    codigo, forma, texto = dados.get("__nd__"), dados.get("forma"), dados.get("dados")
    if codigo not in TIPOS_ARRAY or not isinstance(forma, list) or not isinstance(texto, str):
        raise InvalidMessage("array fora do formato")
    if len(forma) > 32 or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 2**31 for n in forma):
        raise InvalidMessage("forma de array inválida")
    dtype = np.dtype("?" if codigo == "b1" else f"<{codigo[0]}{codigo[1:]}")
    tamanho = int(np.prod(forma, dtype=np.int64)) * dtype.itemsize
    conta.bytes += tamanho
    if conta.bytes > MAX_BYTES_ARRAYS or len(texto) > (tamanho + 2) * 4 // 3 + 4:
        raise InvalidMessage("arrays grandes demais")
    try:
        bruto = base64.b64decode(texto.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as exc:
        raise InvalidMessage("array fora do formato") from exc
    if len(bruto) != tamanho:
        raise InvalidMessage("array com o número de bytes errado")
    return np.frombuffer(bruto, dtype=dtype).reshape(forma).copy()


# ---------- o canal (um par de pipes, linhas de JSON) ----------
class Channel:
    """Linhas de JSON num par de descritores (``entrada`` para ler, ``saida`` para escrever)."""

    def __init__(self, entrada: int, saida: int):
        self.entrada, self.saida = entrada, saida
        self._sobra = b""
        self.parou = False  # o outro lado parou de responder: nenhuma chamada nova é feita

    def send(self, obj) -> None:
        dados = (json.dumps(obj, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")
        vista = memoryview(dados)
        while vista:
            n = os.write(self.saida, vista)
            vista = vista[n:]

    def receive(self, prazo_s: float | None):
        """A próxima linha, como JSON; ``None`` se o prazo passou ou o outro lado fechou. Levanta
        :class:`InvalidMessage` para uma linha longa demais ou que não é JSON."""
        limite = None if prazo_s is None else time.monotonic() + prazo_s
        while b"\n" not in self._sobra:
            if len(self._sobra) > MAX_LINHA:
                raise InvalidMessage("mensagem grande demais")
            espera = None if limite is None else max(0.0, limite - time.monotonic())
            prontos, _, _ = select.select([self.entrada], [], [], espera)
            if not prontos:
                return None
            bloco = os.read(self.entrada, 1 << 20)
            if not bloco:
                return None
            self._sobra += bloco
        linha, _, self._sobra = self._sobra.partition(b"\n")
        if len(linha) > MAX_LINHA:
            raise InvalidMessage("mensagem grande demais")
        try:
            return json.loads(linha.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # aninhamento sem fim também
            raise InvalidMessage("mensagem que não é JSON (ou aninhada demais)") from exc


def channel_from_env() -> Channel:
    """O canal cujos descritores vêm nas variáveis ``CORRECAO_FD_LER``/``CORRECAO_FD_ESCREVER`` (retiradas do
    ambiente, para o código do aluno não as herdar num subprocesso)."""
    ler = int(os.environ.pop("CORRECAO_FD_LER"))
    escrever = int(os.environ.pop("CORRECAO_FD_ESCREVER"))
    for fd in (ler, escrever):
        os.set_inheritable(fd, False)
    return Channel(ler, escrever)
