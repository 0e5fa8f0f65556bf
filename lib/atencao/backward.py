"""O backward (o caminho de volta, da saída para as entradas) da softmax, da atenção, das projeções e da camada
multicabeça.

Para treinar, precisamos de ``∂L/∂θ`` para cada peso ``θ``, dada a derivada da perda em relação à saída
(``dO = ∂L/∂O``, da mesma forma que ``O``). A regra da cadeia, aplicada passo a passo, de trás para frente,
sobre o forward ``S = scale · Q Kᵀ``, ``A = softmax(S)``, ``O = A V``:

    dV = Aᵀ dO                          # (..., n_k, d_v)
    dA = dO Vᵀ                          # (..., n_q, n_k)
    dS = A ⊙ (dA − Σⱼ dA ⊙ A)           # (..., n_q, n_k), o jacobiano da softmax, linha a linha
    dQ = scale · dS K                   # (..., n_q, d_k)
    dK = scale · dSᵀ Q                  # (..., n_k, d_k)

A máscara não precisa de caso especial: uma posição bloqueada tem ``A = 0``, e então ``dS = 0`` ali
(o fator ``A ⊙`` zera), de modo que nenhum gradiente passa por ela.

Convenção: cada função ``*_backward`` recebe o que o forward calculou (ou as entradas do forward) e o gradiente da
saída, e devolve os gradientes das entradas, com as mesmas formas delas. Nada aqui guarda estado.

Fontes: Rumelhart, Hinton e Williams (1986), a retropropagação; Goodfellow, Bengio e Courville (2016),
cap. 6.5; Vaswani et al. (2017), eq. (1); Módulo 6, Aula 2 (``02-codigo``, o jacobiano da softmax) e
Aula 5 (``01-teoria`` e ``02-codigo``).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_layer_inputs, check_qkv, check_scale, shape_str
from ._weights import project
from .attention import attend
from .multihead import merge_heads, split_heads

__all__ = [
    "softmax_backward", "attention_backward", "linear_backward", "multihead_backward",
    "numerical_gradient", "gradient_check",
]


def _same_shape(a: np.ndarray, name_a: str, b: np.ndarray, name_b: str) -> None:
    if a.shape != b.shape:
        raise ValueError(f"`{name_a}` e `{name_b}` precisam ter a mesma forma: {name_a} {shape_str(a.shape)}, "
                         f"{name_b} {shape_str(b.shape)}.")


def _unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Soma ``grad`` nos eixos de lote que o forward expandiu (broadcast), voltando à forma ``shape`` da entrada."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def softmax_backward(A, dA, axis: int = -1) -> np.ndarray:
    """Gradiente da softmax: ``dZ = A ⊙ (dA − Σⱼ dA ⊙ A)``, dado ``A = softmax(Z)`` e ``dA = ∂L/∂A``.

    É o produto do jacobiano da softmax, ``J = diag(a) − a aᵀ`` (Aula 2, ``02-codigo``), pelo vetor ``dA``,
    feito sem montar ``J``: ``Jᵀ dA = a ⊙ dA − a (aᵀ dA)``. O segundo termo (a soma na linha) vem de cada
    peso depender de **todas** as pontuações da linha; esquecê-lo é o erro mais comum.

    Parameters
    ----------
    A : array_like, forma (..., n)
        A saída da softmax (pesos que somam 1 ao longo de ``axis``; uma fatia toda bloqueada, só zeros).
    dA : array_like, mesma forma de ``A``
        Gradiente da perda em relação a ``A``.
    axis : int
        O eixo que a softmax normalizou (padrão: o último).

    Returns
    -------
    dZ : ndarray, mesma forma de ``A``
        Gradiente em relação às pontuações ``Z``; cada fatia soma 0 ao longo de ``axis`` e é 0 onde ``A = 0``.

    Raises
    ------
    TypeError, ValueError
        Entradas não numéricas, com ``NaN``/``inf``, ou de formas diferentes.

    Fonte: Goodfellow, Bengio e Courville (2016), cap. 6.2.2.3; Módulo 6, Aula 5, ``01-teoria`` (seção 2).
    """
    A = as_float_array(A, "A", min_ndim=1, expected="(..., n)")
    dA = as_float_array(dA, "dA", min_ndim=1, expected="(..., n)")
    _same_shape(A, "A", dA, "dA")
    return A * (dA - (dA * A).sum(axis=axis, keepdims=True))


def attention_backward(dO, Q, K, V, weights, scale: float | None = None):
    """Gradientes da atenção escalada ``O = softmax(scale · Q Kᵀ) V`` em relação a ``Q``, ``K`` e ``V``.

    Parameters
    ----------
    dO : array_like, forma (..., n_q, d_v)
        Gradiente da perda em relação à saída ``O``.
    Q, K, V : array_like, formas (..., n_q, d_k), (..., n_k, d_k), (..., n_k, d_v)
        As entradas do forward.
    weights : array_like, forma (..., n_q, n_k)
        Os pesos ``A`` que o forward devolveu (já com a máscara: bloqueado = 0). A máscara não entra aqui:
        ``A = 0`` já impede que o gradiente passe por uma posição bloqueada.
    scale : float ou None
        O mesmo do forward (``None`` = ``1 / sqrt(d_k)``).

    Returns
    -------
    dQ, dK, dV : ndarray, com as formas de ``Q``, ``K``, ``V``

    Raises
    ------
    TypeError, ValueError
        Como em :func:`~atencao.attention.scaled_dot_product_attention`; ``weights`` ou ``dO`` com a forma
        errada.

    Fonte: Vaswani et al. (2017), eq. (1); Módulo 6, Aula 5, ``01-teoria`` (seção 3) e ``02-codigo``.
    """
    Q, K, V, _, _ = check_qkv(Q, K, V)
    scale = check_scale(scale)
    factor = 1.0 / np.sqrt(Q.shape[-1]) if scale is None else scale
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    A = as_float_array(weights, "weights")
    dO = as_float_array(dO, "dO")
    expected_A, expected_O = batch + (Q.shape[-2], K.shape[-2]), batch + (Q.shape[-2], V.shape[-1])
    if A.shape != expected_A:
        raise ValueError(f"`weights` precisa ter forma (..., n_q, n_k) = {shape_str(expected_A)}; recebida "
                         f"{shape_str(A.shape)}.")
    if dO.shape != expected_O:
        raise ValueError(f"`dO` precisa ter a forma da saída (..., n_q, d_v) = {shape_str(expected_O)}; recebida "
                         f"{shape_str(dO.shape)}.")
    dV = np.swapaxes(A, -1, -2) @ dO  # (..., n_k, d_v)
    dA = dO @ np.swapaxes(V, -1, -2)  # (..., n_q, n_k)
    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (..., n_q, n_k)
    dQ = factor * (dS @ K)  # (..., n_q, d_k)
    dK = factor * (np.swapaxes(dS, -1, -2) @ Q)  # (..., n_k, d_k)
    return _unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape)


def linear_backward(dy, x, W, bias: bool = False):
    """Gradientes da projeção ``y = x W (+ b)``: ``dx = dy Wᵀ``, ``dW = Σ xᵀ dy``, ``db = Σ dy``.

    As somas correm sobre todos os tokens e eixos de lote: o mesmo ``W`` serve a todos eles.

    Parameters
    ----------
    dy : array_like, forma (..., n, d_out)
    x : array_like, forma (..., n, d_in)
    W : array_like, forma (d_in, d_out)
    bias : bool
        Se ``True``, devolve também ``db``.

    Returns
    -------
    dx : ndarray, forma (..., n, d_in)
    dW : ndarray, forma (d_in, d_out)
    db : ndarray, forma (d_out,) (só com ``bias=True``)

    Raises
    ------
    ValueError
        Formas que não combinam.

    Fonte: Goodfellow, Bengio e Courville (2016), cap. 6.5; Módulo 6, Aula 5, ``01-teoria`` (seção 4).
    """
    dy, x, W = as_float_array(dy, "dy"), as_float_array(x, "x"), as_float_array(W, "W")
    if W.ndim != 2 or x.shape[-1] != W.shape[0] or dy.shape != x.shape[:-1] + (W.shape[1],):
        raise ValueError(f"Formas incompatíveis: x {shape_str(x.shape)} (..., n, d_in), W {shape_str(W.shape)} "
                         f"(d_in, d_out), dy {shape_str(dy.shape)} (..., n, d_out).")
    dx = dy @ W.T  # (..., n, d_in)
    dW = x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])  # (d_in, d_out)
    if bias:
        return dx, dW, dy.reshape(-1, dy.shape[-1]).sum(axis=0)
    return dx, dW


def multihead_backward(layer, dout, query, key=None, value=None, mask=None, scale: float | None = None) -> dict:
    """Gradientes de :class:`~atencao.multihead.MultiHeadAttention` (refaz o forward e faz o backward por ela).

    Parameters
    ----------
    layer : MultiHeadAttention
        A camada (os pesos não mudam aqui).
    dout : array_like, forma (..., n_q, d_model)
        Gradiente da perda em relação à saída da camada.
    query, key, value, mask, scale
        Os mesmos argumentos do forward (``key`` ausente = ``query``; ``value`` ausente = ``key``).

    Returns
    -------
    dict
        ``"W_q"``, ``"W_k"``, ``"W_v"``, ``"W_o"`` (e ``"b_q"`` … ``"b_o"`` se a camada tiver vieses), e
        ``"query"``, ``"key"``, ``"value"``: os gradientes das entradas. Em self-attention (``key`` e ``value``
        ausentes), ``"query"`` já é o gradiente total de ``x`` (a soma dos três papéis) e ``"key"``/``"value"``
        não aparecem.

    Raises
    ------
    TypeError, ValueError
        Como em ``MultiHeadAttention.forward``; ``dout`` com forma diferente da saída.

    Fonte: Vaswani et al. (2017), seção 3.2.2; Módulo 6, Aula 5, ``02-codigo`` (seção 3).
    """
    q, k, v, allowed = check_layer_inputs(layer.d_model, layer.W_q.dtype, mask, query, key, value)
    if allowed is not None:
        allowed = allowed[..., None, :, :]  # a mesma máscara em todas as cabeças
    factor = check_scale(scale)
    factor = 1.0 / np.sqrt(layer.d_k) if factor is None else factor
    # forward, guardando o que o backward usa
    Q = split_heads(project(q, layer.W_q, layer.b_q), layer.n_heads)  # (..., n_heads, n_q, d_k)
    K = split_heads(project(k, layer.W_k, layer.b_k), layer.n_heads)  # (..., n_heads, n_k, d_k)
    V = split_heads(project(v, layer.W_v, layer.b_v), layer.n_heads)  # (..., n_heads, n_k, d_k)
    heads, A = attend(Q, K, V, allowed, factor)
    concat = merge_heads(heads)  # (..., n_q, d_model)
    dout = as_float_array(dout, "dout")
    if dout.shape != concat.shape:
        raise ValueError(f"`dout` precisa ter a forma da saída {shape_str(concat.shape)}; recebida "
                         f"{shape_str(dout.shape)}.")
    bias = layer.bias
    grads = {}
    # backward: W_o, depois as cabeças, depois as três projeções
    dconcat, grads["W_o"], *db_o = linear_backward(dout, concat, layer.W_o, bias)
    dQ, dK, dV = attention_backward(split_heads(dconcat, layer.n_heads), Q, K, V, A, scale=factor)
    dq, grads["W_q"], *db_q = linear_backward(merge_heads(dQ), q, layer.W_q, bias)
    dk, grads["W_k"], *db_k = linear_backward(merge_heads(dK), k, layer.W_k, bias)
    dv, grads["W_v"], *db_v = linear_backward(merge_heads(dV), v, layer.W_v, bias)
    if bias:
        grads.update(b_q=db_q[0], b_k=db_k[0], b_v=db_v[0], b_o=db_o[0])
    if key is None and value is None:  # self-attention: x fez os três papéis
        grads["query"] = dq + dk + dv
    elif value is None:  # value = key
        grads.update(query=dq, key=dk + dv)
    else:
        grads.update(query=dq, key=dk, value=dv)
    return grads


def numerical_gradient(f, x, eps: float = 1e-6) -> np.ndarray:
    """Gradiente de ``f`` em ``x`` por **diferenças centrais**: ``(f(x + ε eᵢ) − f(x − ε eᵢ)) / 2ε`` em cada posição.

    O erro do método é da ordem de ``ε²`` (truncamento) mais ``δ/ε`` (arredondamento, ``δ`` ≈ 1e-16 em
    float64): com ``ε`` = 1e-6 em float64, cerca de 1e-10 de erro relativo. Em float32 (``δ`` ≈ 1e-7) o
    arredondamento domina e o resultado não serve para conferir nada: por isso ``x`` precisa ser float64.

    Parameters
    ----------
    f : callable
        ``f(x)`` devolve um número (a perda). É chamada ``2 · x.size`` vezes.
    x : ndarray de float64, qualquer forma
        O ponto. É alterado no lugar durante o cálculo (uma posição de cada vez) e devolvido ao valor original
        no fim. Pode ser uma vista de outro array, contígua ou não (``W.T``, ``W[:, ::2]``): mexer em ``x``
        mexe no array de que ela é vista, que é o que ``f`` costuma ler.
    eps : float
        O passo ``ε`` (padrão 1e-6).

    Returns
    -------
    ndarray de float64, mesma forma de ``x``

    Raises
    ------
    TypeError
        ``f`` que não é uma função, ``x`` que não é um ``ndarray`` de float64 (o passo se perderia no
        arredondamento) ou ``f`` que não devolve um número.
    ValueError
        ``eps`` que não é um número finito > 0, ou ``x`` somente leitura (não dá para mexer nele).

    Fonte: Goodfellow, Bengio e Courville (2016), cap. 11.5; Módulo 6, Aula 5, ``01-teoria`` (seção 6).
    """
    if not callable(f):
        raise TypeError(f"`f` precisa ser uma função (a perda, chamada como f(x)); recebido {type(f).__name__}.")
    if not isinstance(x, np.ndarray) or x.dtype != np.float64:
        got = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
        raise TypeError(f"`x` precisa ser um ndarray de float64 (em float32 o passo some no arredondamento); "
                        f"recebido {got}. Use x.astype(np.float64) e calcule f em float64.")
    if not (isinstance(eps, (int, float, np.floating)) and not isinstance(eps, bool) and np.isfinite(eps)
            and eps > 0):
        raise ValueError(f"`eps` precisa ser um número finito > 0 (ex.: 1e-6); recebido {eps!r}.")
    if not x.flags.writeable:
        raise ValueError("`x` é somente leitura: a régua precisa mexer em cada número dele. Passe um array que "
                         "aceite escrita (por exemplo, x.copy(), e calcule f a partir dessa cópia).")
    grad = np.zeros(x.shape)  # float64, contíguo, mesma forma de x
    for i in np.ndindex(x.shape):  # x[i] escreve no próprio x, mesmo que ele seja uma vista não contígua (W.T)
        original = x[i]
        x[i] = original + eps
        plus = f(x)
        x[i] = original - eps
        minus = f(x)
        x[i] = original  # o valor guardado, e não original + eps - eps (que o arredondamento pode mudar)
        try:
            grad[i] = (float(plus) - float(minus)) / (2 * eps)
        except (TypeError, ValueError):
            raise TypeError(f"`f` precisa devolver um número (a perda); devolveu {type(plus).__name__}.") from None
    return grad


def gradient_check(analytic, numeric) -> float:
    """Erro relativo entre dois gradientes: ``max |a − n| / max(max |a| + max |n|, 1e-300)``.

    Um backward certo, conferido em float64 com ``ε`` = 1e-6, dá algo perto de 1e-9 ou menos; um erro de
    fórmula dá algo perto de 1e-2 a 1. A escala pelo tamanho dos gradientes deixa o número comparável entre
    casos com gradientes grandes e pequenos.

    Parameters
    ----------
    analytic, numeric : array_like, mesma forma

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Formas diferentes.

    Fonte: Módulo 6, Aula 5, ``01-teoria`` (seção 6).
    """
    a = as_float_array(analytic, "analytic", min_ndim=0)
    n = as_float_array(numeric, "numeric", min_ndim=0)
    _same_shape(a, "analytic", n, "numeric")
    return float(np.abs(a - n).max() / max(np.abs(a).max() + np.abs(n).max(), 1e-300))
