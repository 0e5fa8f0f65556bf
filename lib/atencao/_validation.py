"""Validação de entradas com mensagens em português (uso interno da biblioteca).

Cada função recebe o **nome do argumento** como o aluno o escreveu, para que a mensagem de erro
aponte exatamente o que corrigir, com a forma (shape) esperada e a recebida.
"""

from __future__ import annotations

# ligado na importação: trocar ``unicodedata.normalize`` depois (numa célula do aluno) não muda nada aqui
from unicodedata import normalize as _normalize

import numpy as np

#: dtypes de ponto flutuante do PyTorch que o NumPy representa; os outros (bfloat16, float8...) viram float32.
_NUMPY_FLOATS = {"torch.float16", "torch.float32", "torch.float64"}


def nfc(text: str) -> str:
    """O texto na forma normal **NFC** (Unicode): acentos compostos num caractere só (``ã`` = U+00E3).

    Texto colado do macOS, de PDFs e de alguns teclados chega **decomposto** (NFD: ``a`` + U+0303, o til
    combinante); sem normalizar, ``"não"`` digitado de um jeito e de outro seriam tokens diferentes. Toda
    entrada de texto da biblioteca passa por aqui (frases, tokens, rótulos, chaves de vetores); quem chama
    já conferiu que ``text`` é ``str``.
    """
    return _normalize("NFC", text)


def tensor_to_numpy(t):
    """Tensor do PyTorch → ``ndarray`` (na CPU, sem gradiente); qualquer outra coisa passa sem mudar.

    float16, float32 e float64 mantêm o dtype; os formatos de ponto flutuante sem equivalente no NumPy
    (``bfloat16``, ``float8_*``) viram float32 (todo valor deles cabe exatamente em float32), em vez do
    ``TypeError: Got unsupported ScalarType BFloat16`` do PyTorch.
    """
    if not (hasattr(t, "detach") and hasattr(t, "is_floating_point")):
        return t
    t = t.detach().cpu()
    if t.is_floating_point() and str(t.dtype) not in _NUMPY_FLOATS:
        t = t.float()
    return t.numpy()


def read_only_copy(a) -> np.ndarray:
    """Cópia **imutável** de um array: os dados ficam sobre um ``bytes``, e nem ``setflags(write=True)`` a
    libera. Usada para entregar pesos a código de fora (a função do aluno) sem que ele os altere no lugar."""
    a = np.asarray(tensor_to_numpy(a))
    return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


def shape_str(shape) -> str:
    """Forma de um array como texto, por exemplo ``(4, 8)``."""
    return "(" + ", ".join(str(s) for s in shape) + (",)" if len(shape) == 1 else ")")


def as_float_array(x, name: str, min_ndim: int = 2, allow_neg_inf: bool = False,
                   expected: str | None = None) -> np.ndarray:
    """Converte ``x`` num array de ponto flutuante, validando forma e valores.

    Parameters
    ----------
    x : array_like
        Entrada do aluno (lista, array NumPy, tensor do PyTorch etc.; um tensor ``bfloat16`` vira float32).
    name : str
        Nome do argumento, usado nas mensagens de erro.
    min_ndim : int
        Número mínimo de eixos (2 para matrizes como ``Q``, ``K``, ``V``).
    allow_neg_inf : bool
        Se ``True``, aceita ``-inf`` (usado por ``softmax``, onde ``-inf`` significa peso 0).
    expected : str, opcional
        Forma esperada, para a mensagem (padrão: ``(n, d)`` quando ``min_ndim`` = 2).

    Returns
    -------
    ndarray
        Mesmo dtype se já for ponto flutuante (float16/32/64); inteiros e booleanos viram float64.

    Raises
    ------
    TypeError
        Se ``x`` não for numérico (texto, objetos, números complexos).
    ValueError
        Se tiver eixos de menos, algum eixo vazio, ``NaN`` ou ``inf``.
    """
    try:
        arr = np.asarray(tensor_to_numpy(x))
    except Exception as exc:  # noqa: BLE001 - qualquer falha de conversão vira uma mensagem clara
        raise TypeError(f"`{name}` precisa ser um array numérico; não foi possível converter ({exc}).") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TypeError(
            f"`{name}` precisa ser um array de números reais; recebido um array de tipo {arr.dtype} "
            "(linhas com tamanhos diferentes ou valores que não são números?)."
        )
    if arr.dtype.kind == "c":
        raise TypeError(f"`{name}` precisa ter números reais; recebido tipo complexo {arr.dtype}.")
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        esperado = expected or ("(n, d)" if min_ndim == 2 else f"com pelo menos {min_ndim} eixos")
        raise ValueError(
            f"`{name}` precisa ter pelo menos {min_ndim} eixo(s), forma {esperado}; "
            f"recebida forma {shape_str(arr.shape)}."
            + (" Um vetor de um token só? Use x[None, :] para virar uma matriz (1, d)."
               if arr.ndim == 1 and expected is None else "")
        )
    if arr.size == 0:
        raise ValueError(f"`{name}` está vazio: forma {shape_str(arr.shape)}. Cada eixo precisa ter tamanho ≥ 1.")
    if np.isnan(arr).any():
        raise ValueError(f"`{name}` contém NaN (forma {shape_str(arr.shape)}); confira de onde vieram esses valores.")
    infs = np.isinf(arr)
    if infs.any():
        if not allow_neg_inf or np.isposinf(arr).any():
            raise ValueError(
                f"`{name}` contém infinito (forma {shape_str(arr.shape)}); "
                + ("apenas -inf é aceito aqui (peso 0)." if allow_neg_inf else "use valores finitos.")
            )
    return arr


def compute_dtype(*arrays: np.ndarray) -> np.dtype:
    """Dtype comum de ponto flutuante das entradas (float16 é promovido a float32 no cálculo)."""
    dtype = np.result_type(*arrays)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


def broadcast_mask(mask, scores_shape: tuple, name: str = "mask") -> np.ndarray:
    """Valida uma máscara booleana e a expande para a forma das pontuações ``(..., n_q, n_k)``.

    Raises
    ------
    TypeError
        Se a máscara não for booleana.
    ValueError
        Se a forma não puder ser expandida (broadcast) para ``scores_shape``.
    """
    m = np.asarray(tensor_to_numpy(mask))
    if m.dtype != np.bool_:
        if m.dtype.kind in "iu" and np.isin(m, (0, 1)).all():
            m = m.astype(bool)
        else:
            raise TypeError(
                f"`{name}` precisa ser booleana (True = pode olhar, False = bloqueado); recebido dtype {m.dtype}."
            )
    try:
        return np.broadcast_to(m, scores_shape)
    except ValueError:
        raise ValueError(
            f"`{name}` com forma {shape_str(m.shape)} não é compatível (broadcast) com as pontuações "
            f"de forma {shape_str(scores_shape)} = (..., n_q, n_k)."
        ) from None


def check_tokens(tokens, n: int, name: str, axis_desc: str, weights_shape: tuple) -> list[str]:
    """Confere que há um rótulo por linha/coluna e devolve os tokens como lista de ``str`` em NFC (:func:`nfc`).

    Raises
    ------
    TypeError
        Se ``tokens`` for um texto único em vez de uma lista de tokens.
    ValueError
        Se o número de tokens for diferente de ``n``.
    """
    if tokens is None or not hasattr(tokens, "__iter__"):
        raise TypeError(f"`{name}` precisa ser uma lista de tokens (ex.: ['o', 'gato']); recebido {tokens!r}.")
    if isinstance(tokens, str):
        raise TypeError(
            f"`{name}` precisa ser uma lista de tokens (ex.: ['o', 'gato']), não um texto único; "
            "use atencao.tokenize(frase) para separar."
        )
    tokens = [nfc(str(t)) for t in tokens]
    if len(tokens) != n:
        raise ValueError(
            f"`{name}` tem {len(tokens)} token(s), mas os pesos têm {n} {axis_desc} "
            f"(forma {shape_str(weights_shape)}): é preciso um token por {axis_desc[:-1]}."
        )
    return tokens


def check_dim(value, name: str) -> int:
    """Confere que uma dimensão ou contagem (``d_model``, ``d_k``, ``n_heads``, ``n``...) é um inteiro ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` precisa ser um inteiro; recebido {type(value).__name__} ({value!r}).")
    if value < 1:
        raise ValueError(f"`{name}` precisa ser ≥ 1; recebido {value}.")
    return int(value)


def batch_shape(**arrays) -> tuple:
    """Eixos de lote comuns (tudo antes dos dois últimos) de arrays nomeados; erro claro se não combinam."""
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{name} {shape_str(a.shape)}" for name, a in arrays.items())
        raise ValueError(f"Os eixos de lote (antes dos dois últimos) não são compatíveis: {shapes}.") from None
