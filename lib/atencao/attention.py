"""Atenção por produto escalar escalado, em NumPy.

Vocabulário de formas usado em toda a biblioteca (o ``...`` inicial são eixos de lote opcionais):

- ``n_q``: número de consultas (queries); ``n_k``: número de chaves (keys) e de valores (values);
- ``d_k``: dimensão de consultas e chaves; ``d_v``: dimensão dos valores;
- ``d_model``: dimensão dos embeddings; ``n_heads``: número de cabeças.

Convenção de máscara: veja :mod:`atencao.masks` (``True`` = pode olhar, ``False`` = bloqueado).

Escala das pontuações (argumento ``scale``, o mesmo de ``torch.nn.functional.scaled_dot_product_attention``):
``scale`` é o fator que **multiplica** ``Q Kᵀ`` antes da softmax. ``scale=None`` (o padrão) quer dizer
``1 / sqrt(d_k)``, a atenção do artigo; ``scale=1.0`` não escala (para ver a softmax saturar); qualquer
outro número finito > 0 vale como está. Uma "temperatura" ``T`` (como no explorador) é ``scale = 1 / (T·sqrt(d_k))``.

Fontes: Vaswani et al. (2017), seção 3.2.1; Módulo 6, Aula 1 (``02-codigo``) e Aula 2 (``02-codigo``).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_overflow, check_qkv, check_scale, shape_str

__all__ = ["softmax", "scaled_dot_product_attention", "self_attention"]  # attend, softmax_: internos


def softmax(z, axis: int = -1) -> np.ndarray:
    """Softmax numericamente estável ao longo de ``axis``.

    Subtrai o máximo de cada fatia antes da exponencial (não muda o resultado, evita overflow):
    ``softmax([1000, 1001, 1002]) = [0.09003057, 0.24472847, 0.66524096]``, sem aviso.
    Entradas ``-inf`` recebem peso exatamente 0; uma fatia inteira de ``-inf`` vira só zeros
    (em vez de NaN).

    Parameters
    ----------
    z : array_like, forma (..., n)
        Pontuações (logits). Aceita ``-inf``; rejeita ``NaN`` e ``+inf``.
    axis : int
        Eixo normalizado (padrão: o último, ou seja, cada linha).

    Returns
    -------
    ndarray, mesma forma de ``z``
        Pesos em [0, 1] que somam 1 ao longo de ``axis`` (ou 0, numa fatia toda ``-inf``).
        Mesmo dtype de ``z`` se for ponto flutuante; inteiros viram float64.

    Raises
    ------
    TypeError, ValueError
        Entrada não numérica, vazia, com ``NaN`` ou ``+inf``, ou ``axis`` inexistente.

    Fonte: Módulo 6, Aula 1, ``02-codigo``; Aula 2, ``02-codigo`` (passo 1).
    """
    z = as_float_array(z, "z", min_ndim=1, allow_neg_inf=True, expected="(..., n)")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"`axis` precisa ser um inteiro (ex.: -1 para cada linha); recebido {axis!r}.")
    if not -z.ndim <= axis < z.ndim:
        raise ValueError(f"`axis`={axis} não existe para `z` de forma {shape_str(z.shape)} ({z.ndim} eixo(s)).")
    work = z.astype(np.float32 if z.dtype == np.float16 else z.dtype)  # sempre uma cópia: z não muda
    return softmax_(work, axis=axis).astype(z.dtype, copy=False)


def softmax_(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax **no lugar** (sobrescreve ``z``), sem validação: o núcleo de :func:`softmax`.

    Para uso interno, em arrays já validados de ponto flutuante; evita cópias de matrizes grandes
    de pontuações (..., n_q, n_k). Devolve o próprio ``z``.
    """
    m = z.max(axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0.0  # fatia toda -inf: evita (-inf) - (-inf) = NaN
    z -= m
    np.exp(z, out=z)  # exp(-inf) = 0: posição bloqueada recebe peso 0
    total = z.sum(axis=axis, keepdims=True)
    # multiplicar pelo inverso é mais rápido que dividir; fatia toda bloqueada (soma 0) fica com zeros
    z *= np.reciprocal(total, out=np.zeros_like(total), where=total > 0)
    return z


def scaled_dot_product_attention(Q, K, V, mask=None, scale: float | None = None):
    """Atenção por produto escalar escalado: ``softmax(scale · Q Kᵀ) V``, por padrão ``scale = 1 / sqrt(d_k)``.

    Parameters
    ----------
    Q : array_like, forma (..., n_q, d_k)
        Consultas, uma linha por token que "olha".
    K : array_like, forma (..., n_k, d_k)
        Chaves, uma linha por token que "é olhado".
    V : array_like, forma (..., n_k, d_v)
        Valores, uma linha por chave.
    mask : array_like de bool, opcional, forma compatível (broadcast) com (..., n_q, n_k)
        ``True`` = pode olhar, ``False`` = bloqueado (veja :mod:`atencao.masks`). Posições
        bloqueadas recebem ``-inf`` antes da softmax, ou seja, peso 0. Uma linha com todas as
        chaves bloqueadas devolve pesos 0 e saída 0 (sem NaN, sem aviso); as demais linhas ficam
        idênticas ao cálculo sem máscara.
    scale : float ou None
        Fator que multiplica as pontuações ``Q Kᵀ``, como o ``scale`` de
        ``torch.nn.functional.scaled_dot_product_attention``. ``None`` (padrão) = ``1 / sqrt(d_k)``, a
        atenção do artigo; ``1.0`` = sem escala (experimentos sobre a saturação da softmax); um fator
        menor deixa a softmax mais uniforme, um maior a deixa mais "decidida".

    Returns
    -------
    output : ndarray, forma (..., n_q, d_v)
        Cada linha é a média dos valores ponderada pelos pesos.
    weights : ndarray, forma (..., n_q, n_k)
        Pesos de atenção; cada linha soma 1 (linha = quem olha, coluna = para quem).
        O dtype é o comum das entradas (float32 fica float32, float64 fica float64; inteiros viram
        float64; float16 é calculado em float32 e devolvido em float16).

    Raises
    ------
    ValueError
        Formas incompatíveis (``d_k`` de Q e K diferentes, V com número de linhas diferente de K,
        lotes incompatíveis), entrada 1-D ou vazia, ``NaN``/``inf``, máscara não compatível,
        ``scale`` que não seja um número finito > 0, pontuações que estouram o dtype.
    TypeError
        Entrada não numérica, máscara não booleana, ``scale`` que não seja número (``True``/``False``
        é a API antiga: use ``scale=None`` para dividir por sqrt(d_k) e ``scale=1.0`` para não escalar).

    Fonte: Vaswani et al. (2017), eq. (1); Módulo 6, Aula 1 (``01-teoria``, ``02-codigo``) e Aula 2
    (``02-codigo``, passo 2).
    """
    Q, K, V, allowed, out_dtype = check_qkv(Q, K, V, mask)
    output, weights = attend_checked(Q, K, V, allowed, scale)
    return output.astype(out_dtype, copy=False), weights.astype(out_dtype, copy=False)


def attend_checked(Q: np.ndarray, K: np.ndarray, V: np.ndarray, allowed: np.ndarray | None,
                   scale) -> tuple[np.ndarray, np.ndarray]:
    """:func:`attend` com ``scale`` conferido e o estouro do dtype virando o erro em português (uso interno).

    As entradas já foram validadas pelo chamador (:func:`scaled_dot_product_attention`, ``SelfAttention``,
    ``MultiHeadAttention``): o passo comum aos três, escrito uma vez.
    """
    scale = check_scale(scale)
    with np.errstate(over="ignore", invalid="ignore"):  # um estouro vira a mensagem de check_overflow
        output, weights = attend(Q, K, V, allowed, scale)
    check_overflow(output, weights, Q, K, V)
    return output, weights


def attend(Q: np.ndarray, K: np.ndarray, V: np.ndarray, allowed: np.ndarray | None = None,
           scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Núcleo de :func:`scaled_dot_product_attention`, **sem validação** (uso interno).

    Recebe arrays de ponto flutuante já conferidos: ``Q`` (..., n_q, d_k), ``K`` (..., n_k, d_k),
    ``V`` (..., n_k, d_v), ``allowed`` booleana (..., n_q, n_k) ou ``None``, e ``scale`` já conferido
    (``None`` = ``1 / sqrt(d_k)``). Devolve ``(output, weights)``. É o mesmo cálculo usado por
    :class:`~atencao.multihead.MultiHeadAttention`.
    """
    factor = 1.0 / np.sqrt(Q.shape[-1]) if scale is None else scale
    if factor != 1.0:  # (scale · Q) Kᵀ = scale · Q Kᵀ, mas Q tem n_q·d_k números e Q Kᵀ tem n_q·n_k
        Q = Q * Q.dtype.type(factor)
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., n_q, n_k)
    if allowed is not None:  # bloqueado -> -inf -> peso 0
        if allowed.shape == scores.shape:
            np.copyto(scores, -np.inf, where=~allowed)
        else:  # a máscara tem eixos de lote que Q e K não têm
            scores = np.where(allowed, scores, -np.inf)
    weights = softmax_(scores, axis=-1)  # (..., n_q, n_k), no lugar
    output = weights @ V  # (..., n_q, d_v)
    return output, weights


def self_attention(X, mask=None):
    """Self-attention didática, sem projeções: ``Q = K = V = X``.

    É a versão da Aula 1: cada token compara o próprio embedding com o de todos os outros pelo
    produto escalar (dividido por ``sqrt(d)``), e a saída é a média dos embeddings ponderada
    pelos pesos. Tokens com embeddings parecidos prestam atenção uns nos outros.

    Parameters
    ----------
    X : array_like, forma (..., n, d)
        Embeddings, uma linha por token.
    mask : array_like de bool, opcional, forma compatível com (..., n, n)
        ``True`` = pode olhar (veja :mod:`atencao.masks`).

    Returns
    -------
    output : ndarray, forma (..., n, d)
    weights : ndarray, forma (..., n, n)
        Cada linha soma 1.

    Raises
    ------
    ValueError, TypeError
        Como em :func:`scaled_dot_product_attention` (mensagens citam ``X``).

    Fonte: Módulo 6, Aula 1, ``02-codigo`` (função ``self_attention``).
    """
    X = as_float_array(X, "X")
    return scaled_dot_product_attention(X, X, X, mask=mask)
