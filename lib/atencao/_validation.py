"""Validação de entradas com mensagens em português (uso interno da biblioteca).

Cada função recebe o **nome do argumento** como o aluno o escreveu, para que a mensagem de erro
aponte exatamente o que corrigir, com a forma (shape) esperada e a recebida.
"""

from __future__ import annotations

import re

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


def compact_float(x: float) -> str:
    """``x`` curto, como um literal do Python sem zeros no expoente: ``1e-05`` → ``"1e-5"``, ``0.5`` → ``"0.5"``
    (o ``repr`` de um ``eps`` e os rótulos das verificações, iguais em qualquer máquina)."""
    return re.sub(r"e([-+])0+(\d)", r"e\1\2", f"{x:g}")


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


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """A máscara como array booleano: aceita bool, tensor do PyTorch e inteiros só com 0 e 1; erro claro nos outros."""
    m = np.asarray(tensor_to_numpy(mask))
    if m.dtype != np.bool_:
        if m.dtype.kind in "iu" and np.isin(m, (0, 1)).all():
            return m.astype(bool)
        raise TypeError(
            f"`{name}` precisa ser booleana (True = pode olhar, False = bloqueado); recebido dtype {m.dtype}."
        )
    return m


def broadcast_mask(mask, scores_shape: tuple, name: str = "mask") -> np.ndarray:
    """Valida uma máscara booleana e a expande para a forma das pontuações ``(..., n_q, n_k)``.

    Raises
    ------
    TypeError
        Se a máscara não for booleana.
    ValueError
        Se a forma não puder ser expandida (broadcast) para ``scores_shape``.
    """
    m = as_bool_mask(mask, name)
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


def check_seed(seed) -> int:
    """Confere a semente do sorteio dos pesos (um inteiro ≥ 0)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"`seed` precisa ser um inteiro ≥ 0 (a semente do sorteio); recebido {seed!r}.")
    return int(seed)


def check_positive(value, name: str) -> float:
    """Confere que ``value`` (``temperature``, ``scale``...) é um número finito > 0 e o devolve como ``float``.

    Raises
    ------
    TypeError
        Se não for um número (texto, lista...).
    ValueError
        Se for 0, negativo, ``inf`` ou ``NaN``.
    """
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` precisa ser um número; recebido {value!r}.") from None
    if not np.isfinite(number) or number <= 0:
        raise ValueError(f"`{name}` precisa ser um número finito maior que 0; recebido {value!r}.")
    return number


def check_scale(scale) -> float | None:
    """Confere o fator ``scale`` das pontuações: ``None`` (quer dizer 1/sqrt(d_k)) ou um número finito > 0.

    Raises
    ------
    TypeError
        Se for ``True``/``False`` (a API antiga: ``scale`` agora é o fator, como no PyTorch) ou não for número.
    ValueError
        Se for 0, negativo, ``inf`` ou ``NaN``.
    """
    if scale is None:
        return None
    if isinstance(scale, (bool, np.bool_)):
        raise TypeError(
            f"`scale` agora é o fator que multiplica as pontuações Q Kᵀ (como no PyTorch), não True/False; "
            f"recebido {scale!r}. Use scale=None (o padrão) para dividir por sqrt(d_k) e scale=1.0 para não escalar."
        )
    return check_positive(scale, "scale")


def check_qkv(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.dtype]:
    """Valida as entradas de :func:`~atencao.attention.scaled_dot_product_attention`.

    Returns
    -------
    Q, K, V : ndarray
        Em ponto flutuante, no dtype do cálculo (o comum das três; float16 vira float32).
    allowed : ndarray de bool, forma (..., n_q, n_k), ou None
        A máscara expandida (broadcast) para a forma das pontuações.
    out_dtype : dtype
        O dtype comum das entradas, o da saída.

    Raises
    ------
    TypeError, ValueError
        Como em :func:`as_float_array` e :func:`broadcast_mask`; ``d_k`` de Q e K diferentes, V com
        número de linhas diferente de K, lotes incompatíveis.
    """
    Q, K, V = as_float_array(Q, "Q"), as_float_array(K, "K"), as_float_array(V, "V")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q e K precisam ter a mesma dimensão d_k (último eixo): Q tem forma {shape_str(Q.shape)} "
            f"(d_k={Q.shape[-1]}), K tem forma {shape_str(K.shape)} (d_k={K.shape[-1]})."
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K e V precisam ter o mesmo número de linhas n_k (uma chave por valor): K tem forma "
            f"{shape_str(K.shape)} (n_k={K.shape[-2]}), V tem forma {shape_str(V.shape)} (n_k={V.shape[-2]})."
        )
    batch = batch_shape(Q=Q, K=K, V=V)
    dtype, out_dtype = compute_dtype(Q, K, V), np.result_type(Q, K, V)
    Q, K, V = (a.astype(dtype, copy=False) for a in (Q, K, V))
    allowed = None if mask is None else broadcast_mask(mask, batch + (Q.shape[-2], K.shape[-2]))
    return Q, K, V, allowed, out_dtype


def check_overflow(output: np.ndarray, weights: np.ndarray, Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    """Erro claro (em vez de NaN em silêncio) se as pontuações estouraram o limite do dtype do cálculo."""
    if not (np.isfinite(weights).all() and np.isfinite(output).all()):
        raise ValueError(
            f"As pontuações Q Kᵀ estouraram o limite do tipo {Q.dtype} (valores grandes demais em Q, K ou V: "
            f"maior |valor| = {max(np.abs(a).max() for a in (Q, K, V)):.3g}). Use entradas de escala razoável."
        )


def check_layer_inputs(d_model: int, dtype, mask, query, key=None, value=None,
                       names=("query", "key", "value")) -> tuple:
    """Valida as entradas de uma camada de atenção: ``X`` (SelfAttention) ou ``query, key, value`` (multicabeça).

    ``key`` ausente vira ``query`` (self-attention) e ``value`` ausente vira ``key``; ``names`` são os
    nomes dos argumentos nas mensagens.

    Returns
    -------
    q, k, v : ndarray, formas (..., n_q, d_model), (..., n_k, d_model), (..., n_k, d_model)
        No dtype comum das entradas e de ``dtype`` (o dos pesos).
    allowed : ndarray de bool, forma (..., n_q, n_k), ou None
        A máscara expandida (broadcast) para a forma das pontuações de uma cabeça.

    Raises
    ------
    ValueError
        Último eixo diferente de ``d_model``, ``key`` e ``value`` com números de tokens diferentes, lotes
        incompatíveis, máscara incompatível, ``NaN``/``inf``.
    TypeError
        Entradas não numéricas ou máscara não booleana.
    """
    q = check_embeddings(query, names[0], d_model)
    k = q if key is None else check_embeddings(key, names[1], d_model)
    v = k if value is None else check_embeddings(value, names[2], d_model)
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"`{names[1]}` e `{names[2]}` precisam ter o mesmo número de tokens n_k: {names[1]} "
            f"{shape_str(k.shape)}, {names[2]} {shape_str(v.shape)}."
        )
    batch = batch_shape(**{names[0]: q, names[1]: k, names[2]: v})
    allowed = None if mask is None else broadcast_mask(mask, batch + (q.shape[-2], k.shape[-2]))
    dtype = np.result_type(q, k, v, dtype)
    return (*(a.astype(dtype, copy=False) for a in (q, k, v)), allowed)


def check_embeddings(x, name: str, d_model: int) -> np.ndarray:
    """``x`` como array (..., n, d_model) de ponto flutuante; erro claro se o último eixo não for ``d_model``."""
    x = as_float_array(x, name, expected="(..., n, d_model)")
    if x.shape[-1] != d_model:
        raise ValueError(
            f"`{name}` precisa ter forma (..., n, d_model={d_model}); recebida forma {shape_str(x.shape)}."
        )
    return x
