"""O caminho de volta das peças de um GPT que a Aula 5 ainda não tinha: perda, LayerNorm, GELU, FFN e embeddings.

A Aula 5 escreveu o backward da softmax, da atenção e das projeções (:mod:`atencao.backward`); aqui está o
resto do bloco e da perda, na mesma convenção: cada ``*_backward`` recebe as entradas da ida (ou o que ela
guardou) e o gradiente da saída, e devolve os gradientes das entradas e dos pesos, com as formas deles.

- entropia cruzada com a softmax: ``dlogits = (softmax(logits) − one_hot(alvo)) / N``;
- LayerNorm: ``dx = (dx̂ − média(dx̂) − x̂ · média(dx̂ ⊙ x̂)) / σ``, com ``dx̂ = dy ⊙ weight``;
- GELU (a forma com tanh do GPT-2) e a FFN ``gelu(x W_1 + b_1) W_2 + b_2``;
- embeddings: cada linha de ``E`` recebe a soma dos gradientes das posições em que o seu token apareceu.

Fontes: Goodfellow, Bengio e Courville (2016), cap. 6.5; Ba, Kiros e Hinton (2016), LayerNorm; Hendrycks e
Gimpel (2016), GELU; Radford et al. (2019), GPT-2; Módulo 6, Aula 6 (``01-teoria``, seções do backward).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_positive, shape_str

__all__ = [
    "cross_entropy", "layer_norm", "layer_norm_backward", "gelu_tanh", "gelu_tanh_backward",
    "ffn_forward", "ffn_backward", "embedding_backward", "dropout_mask",
]

_GELU_C = float(np.sqrt(2.0 / np.pi))  # a constante da aproximação com tanh (float do Python: não promove float32)
_GELU_A = 0.044715


def cross_entropy(logits, targets) -> tuple[float, np.ndarray]:
    """Entropia cruzada média (em nats) e o seu gradiente em relação aos logits.

    ``perda = −(1/N) Σᵢ log softmax(logitsᵢ)[alvoᵢ]`` e ``dlogits = (softmax(logits) − one_hot(alvo)) / N``,
    em que ``N`` é o número de posições (todas as posições de todas as sequências do lote).

    Parameters
    ----------
    logits : array_like de float, forma (..., vocab)
    targets : array_like de int, forma (...) (a forma de ``logits`` sem o último eixo), valores em
        ``0 … vocab−1``

    Returns
    -------
    loss : float
        A média em nats (divida por ``ln 2`` para bits por token).
    dlogits : ndarray, forma de ``logits``, mesmo dtype

    Raises
    ------
    ValueError, TypeError
        Formas que não combinam, alvos fora do vocabulário ou não inteiros, logits não finitos.

    Fonte: Goodfellow, Bengio e Courville (2016), cap. 6.2.2.3; Módulo 6, Aula 6, ``01-teoria``.
    """
    logits = as_float_array(logits, "logits", min_ndim=1)
    targets = np.asarray(targets)
    if targets.dtype.kind not in "iu":
        raise TypeError(f"`targets` precisa ser de inteiros (ids de tokens); recebido dtype {targets.dtype}.")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"`targets` precisa ter a forma de `logits` sem o último eixo, {shape_str(logits.shape[:-1])}"
                         f"; recebida {shape_str(targets.shape)} (logits {shape_str(logits.shape)}).")
    vocab = logits.shape[-1]
    if targets.size and (targets.min() < 0 or targets.max() >= vocab):
        raise ValueError(f"`targets` precisa ter ids em 0 … {vocab - 1} (vocab = último eixo de `logits`); "
                         f"recebido de {targets.min()} a {targets.max()}.")
    flat = logits.reshape(-1, vocab)  # (N, vocab)
    t = targets.reshape(-1)  # (N,)
    n = flat.shape[0]
    shifted = flat - flat.max(axis=-1, keepdims=True)  # softmax estável
    exp = np.exp(shifted)
    total = exp.sum(axis=-1, keepdims=True)  # (N, 1)
    rows = np.arange(n)
    loss = float(np.mean(np.log(total[:, 0]) - shifted[rows, t]))
    dlogits = exp / total  # softmax, (N, vocab)
    dlogits[rows, t] -= 1.0  # − one_hot
    dlogits /= n  # a perda é uma média
    return loss, dlogits.reshape(logits.shape)


def layer_norm(x, weight, bias, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm no último eixo, as mesmas contas de :class:`atencao.normalization.LayerNorm`, sem validação.

    ``x`` (..., d) → (..., d). Fonte: Ba, Kiros e Hinton (2016); Módulo 6, Aula 4, ``02-codigo``.
    """
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centered = x - mean  # (..., d)
    var = (centered * centered).mean(axis=-1, keepdims=True)  # (..., 1), populacional
    return centered / np.sqrt(var + eps) * weight + bias


def layer_norm_backward(dy, x, weight, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradientes da LayerNorm ``y = x̂ ⊙ weight + bias``, com ``x̂ = (x − μ) / sqrt(σ² + eps)``.

    Com ``dx̂ = dy ⊙ weight`` e ``σ̃ = sqrt(σ² + eps)``, por linha (``d`` números)::

        dx = (dx̂ − média(dx̂) − x̂ ⊙ média(dx̂ ⊙ x̂)) / σ̃
        dweight = Σ dy ⊙ x̂        dbias = Σ dy         (somas sobre todas as linhas)

    O termo ``média(dx̂)`` vem de ``μ`` depender de ``x``; o termo com ``x̂`` vem de ``σ²`` depender de ``x``.

    Parameters
    ----------
    dy : array_like, forma (..., d)
        Gradiente da perda em relação à saída.
    x : array_like, forma (..., d)
        A entrada da ida.
    weight : array_like, forma (d,)
    eps : float
        O mesmo da ida.

    Returns
    -------
    dx : ndarray, forma (..., d)
    dweight, dbias : ndarray, forma (d,)

    Raises
    ------
    ValueError
        Formas que não combinam; ``eps`` que não é um número finito > 0.

    Fonte: Ba, Kiros e Hinton (2016); Módulo 6, Aula 6, ``01-teoria`` (o backward da LayerNorm).
    """
    dy, x = as_float_array(dy, "dy", min_ndim=1), as_float_array(x, "x", min_ndim=1)
    weight = as_float_array(weight, "weight", min_ndim=1)
    eps = check_positive(eps, "eps")
    if dy.shape != x.shape or weight.shape != x.shape[-1:]:
        raise ValueError(f"Formas incompatíveis: `dy` {shape_str(dy.shape)} e `x` {shape_str(x.shape)} precisam "
                         f"ser iguais, (..., d), e `weight` {shape_str(weight.shape)} precisa ser (d,).")
    return layer_norm_backward_unchecked(dy, x, weight, eps)


def layer_norm_backward_unchecked(dy, x, weight, eps):
    """:func:`layer_norm_backward` sem a validação das entradas (o caminho do treino)."""
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    rstd = 1.0 / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + eps)  # 1/σ̃, (..., 1)
    xhat = centered * rstd  # (..., d)
    dxhat = dy * weight  # (..., d)
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    d = x.shape[-1]
    dweight = (dy * xhat).reshape(-1, d).sum(axis=0)
    dbias = dy.reshape(-1, d).sum(axis=0)
    return dx, dweight, dbias


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU na forma com tanh do GPT-2: ``x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))``, mesmo dtype.

    É a ``torch.nn.GELU(approximate="tanh")``; difere da GELU pela erf (``x Φ(x)``) em menos de 1e-3.
    Fonte: Hendrycks e Gimpel (2016), seção 2; Radford et al. (2019), o código do GPT-2.
    """
    return 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + _GELU_A * x * x * x)))


def gelu_tanh_backward(dy: np.ndarray, x: np.ndarray, t: np.ndarray | None = None) -> np.ndarray:
    """Gradiente da :func:`gelu_tanh`: ``dy ⊙ gelu'(x)``, com
    ``gelu'(x) = (1 + t)/2 + x/2 · (1 − t²) · √(2/π) (1 + 3·0.044715 x²)`` e ``t = tanh(√(2/π) (x + 0.044715 x³))``.

    ``dy`` e ``x`` de mesma forma; devolve a forma deles. ``t``, se dado, é o ``tanh`` que a ida já calculou.
    Fonte: Módulo 6, Aula 6, ``01-teoria``.
    """
    if t is None:
        t = np.tanh(_GELU_C * (x + _GELU_A * x * x * x))
    x2 = x * x
    grad = 1.0 - t * t  # 1 − t²
    grad *= x
    grad *= 1.0 + (3.0 * _GELU_A) * x2
    grad *= _GELU_C  # x (1 − t²) √(2/π) (1 + 3a x²)
    grad += 1.0
    grad += t
    grad *= 0.5  # (1 + t)/2 + x/2 · (1 − t²) √(2/π) (1 + 3a x²)
    grad *= dy
    return grad


def ffn_forward(x, W_1, b_1, W_2, b_2) -> tuple[np.ndarray, dict]:
    """A FFN do GPT, ``gelu_tanh(x W_1 + b_1) W_2 + b_2``, e o que a volta precisa.

    ``x`` (..., n, d_model) → saída (..., n, d_model) e ``cache`` com ``x``, ``u = x W_1 + b_1`` e
    ``g = gelu(u)`` (as duas de forma (..., n, d_ff)). Fonte: Vaswani et al. (2017), eq. (2); Radford et al. (2019).
    """
    u = affine(x, W_1, b_1)  # (..., n, d_ff)
    t = np.tanh(_GELU_C * (u + _GELU_A * u * u * u))
    g = 0.5 * u * (1.0 + t)  # gelu_tanh(u), guardando o tanh para a volta
    return affine(g, W_2, b_2), {"x": x, "u": u, "t": t, "g": g}  # (..., n, d_model)


def ffn_backward(dout, cache: dict, W_1, W_2) -> tuple[np.ndarray, dict]:
    """Gradientes da FFN: devolve ``dx`` (..., n, d_model) e ``{"W_1", "b_1", "W_2", "b_2"}``.

    ``cache`` é o de :func:`ffn_forward`. Volta pela segunda projeção, pela GELU e pela primeira
    (:func:`atencao.backward.linear_backward`). Fonte: Módulo 6, Aula 6, ``01-teoria``.
    """
    dg, dW_2, db_2 = affine_backward(dout, cache["g"], W_2)  # dg: (..., n, d_ff)
    du = gelu_tanh_backward(dg, cache["u"], cache.get("t"))
    dx, dW_1, db_1 = affine_backward(du, cache["x"], W_1)  # dx: (..., n, d_model)
    return dx, {"W_1": dW_1, "b_1": db_1, "W_2": dW_2, "b_2": db_2}


def affine(x, W, b):
    """``x @ W + b`` com uma multiplicação 2-D para todos os tokens: (..., d_in) → (..., d_out)."""
    y = x.reshape(-1, x.shape[-1]) @ W
    y += b
    return y.reshape(*x.shape[:-1], W.shape[1])


def affine_backward(dy, x, W):
    """As contas de :func:`atencao.backward.linear_backward` (com viés), sem a validação: o caminho do treino."""
    dy2 = dy.reshape(-1, dy.shape[-1])  # (N, d_out)
    dx = (dy2 @ W.T).reshape(*dy.shape[:-1], W.shape[0])  # (..., d_in)
    return dx, x.reshape(-1, x.shape[-1]).T @ dy2, dy2.sum(axis=0)


def heads_attention_backward(dO, Q, K, V, A, scale: float):
    """As contas de :func:`atencao.backward.attention_backward`, sem a validação: o caminho do treino."""
    dV = np.swapaxes(A, -1, -2) @ dO  # (..., n_k, d_v)
    dA = dO @ np.swapaxes(V, -1, -2)  # (..., n_q, n_k)
    dA -= (dA * A).sum(axis=-1, keepdims=True)
    dA *= A  # dS = A ⊙ (dA − Σⱼ dA ⊙ A)
    dQ = (dA @ K) * scale  # (..., n_q, d_k)
    dK = (np.swapaxes(dA, -1, -2) @ Q) * scale  # (..., n_k, d_k)
    return dQ, dK, dV


def embedding_backward(dx, tokens, vocab_size: int) -> np.ndarray:
    """Gradiente da tabela de embeddings ``E`` (vocab, d) na ida ``x = E[tokens]``.

    Cada linha ``E[v]`` recebe a **soma** de ``dx`` em todas as posições em que o token ``v`` apareceu (um token
    repetido soma; um token ausente fica com gradiente zero).

    Parameters
    ----------
    dx : ndarray, forma (..., d)
    tokens : ndarray de int, forma (...)
    vocab_size : int

    Returns
    -------
    ndarray, forma (vocab_size, d)

    Fonte: Módulo 6, Aula 5, ``training.py`` (o mesmo ``np.add.at``); Aula 6, ``01-teoria``.
    """
    dE = np.zeros((vocab_size, dx.shape[-1]), dtype=dx.dtype)
    np.add.at(dE, np.asarray(tokens).reshape(-1), dx.reshape(-1, dx.shape[-1]))
    return dE


def dropout_mask(rng: np.random.Generator, shape: tuple, p: float, dtype=np.float64) -> np.ndarray | None:
    """A máscara do dropout invertido: 0 com probabilidade ``p``, ``1/(1−p)`` no resto (``None`` se ``p = 0``).

    Multiplicar por ela no treino mantém a média do sinal; na avaliação não se multiplica nada.
    A volta multiplica o gradiente pela mesma máscara. Fonte: Srivastava et al. (2014), seção 10.
    """
    if p <= 0.0:
        return None
    return ((rng.random(shape) >= p) / (1.0 - p)).astype(dtype)
