"""Máscaras de atenção: **uma única convenção em todo o curso**.

Convenção
---------
Uma máscara é um array **booleano** com forma compatível (broadcast) com as pontuações
``(..., n_q, n_k)``:

- ``True``  = **pode olhar** (a consulta da linha pode prestar atenção na chave da coluna);
- ``False`` = **bloqueado** (a pontuação vira ``-inf`` antes da softmax, ou seja, peso 0).

É a mesma convenção de ``torch.nn.functional.scaled_dot_product_attention`` (``True`` = permitido)
e a **oposta** de ``torch.nn.MultiheadAttention`` (``attn_mask``/``key_padding_mask`` booleanos com
``True`` = não permitido). As funções ``to_torch_*``/``from_torch_*`` abaixo convertem entre elas.

Fonte: Vaswani et al. (2017), seção 3.2.3; Módulo 6, Aula 2 (``04-exercicios``, exercício 1).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_bool_mask, check_dim, shape_str

__all__ = [
    "causal_mask",
    "padding_mask",
    "to_torch_mha_mask",
    "from_torch_mha_mask",
    "to_torch_sdpa_mask",
    "from_torch_sdpa_mask",
]


def causal_mask(n: int, n_k: int | None = None) -> np.ndarray:
    """Máscara causal (de decodificador): cada token olha só para si e para os anteriores.

    Parameters
    ----------
    n : int
        Número de consultas ``n_q``.
    n_k : int, opcional
        Número de chaves (padrão: ``n``).

    Returns
    -------
    ndarray de bool, forma (n, n_k)
        Triangular inferior: ``mask[i, j] = j <= i``. A diagonal é sempre ``True`` (cada token
        sempre olha para si mesmo), então nenhuma linha fica toda bloqueada.

    Raises
    ------
    TypeError, ValueError
        Se ``n`` ou ``n_k`` não forem inteiros ≥ 1.

    Fonte: Vaswani et al. (2017), seção 3.2.3; Módulo 6, Aula 2, ``04-exercicios``.
    """
    n = check_dim(n, "n")
    n_k = n if n_k is None else check_dim(n_k, "n_k")
    return np.tril(np.ones((n, n_k), dtype=bool))


def padding_mask(lengths, n: int | None = None) -> np.ndarray:
    """Máscara de preenchimento (padding) para um lote de frases de tamanhos diferentes.

    Parameters
    ----------
    lengths : sequência de int, forma (batch,)
        Número de tokens reais de cada frase (o resto é preenchimento).
    n : int, opcional
        Comprimento total com preenchimento (padrão: o maior de ``lengths``).

    Returns
    -------
    ndarray de bool, forma (batch, 1, n)
        ``True`` nas chaves reais, ``False`` no preenchimento. O eixo do meio (tamanho 1) faz a
        máscara valer para todas as consultas por broadcast contra ``(batch, n_q, n_k)``.

    Raises
    ------
    TypeError, ValueError
        Se ``lengths`` não for uma lista de inteiros entre 1 e ``n``.

    Fonte: Módulo 6, Aula 2, ``03-uso`` (``key_padding_mask`` do PyTorch).
    """
    arr = np.asarray(lengths)
    if arr.size == 0:
        raise ValueError("`lengths` está vazia: passe o número de tokens de cada frase, ex.: [3, 5].")
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(
            f"`lengths` precisa ser uma lista de inteiros, forma (batch,); recebido dtype {arr.dtype}, "
            f"forma {shape_str(arr.shape)}."
        )
    if arr.min() < 1:
        raise ValueError(f"Cada valor de `lengths` precisa ser ≥ 1 (uma frase tem pelo menos um token); "
                         f"recebido {arr.tolist()}.")
    n = int(arr.max()) if n is None else check_dim(n, "n")
    if arr.max() > n:
        raise ValueError(f"Cada valor de `lengths` precisa estar entre 1 e n={n}; recebido {arr.tolist()}.")
    return (np.arange(n)[None, :] < arr[:, None])[:, None, :]


def to_torch_mha_mask(mask) -> np.ndarray:
    """Converte a máscara do curso (``True`` = pode olhar) para ``nn.MultiheadAttention`` (``True`` =
    bloqueado).

    ``mask``: array_like de bool (ou tensor do PyTorch; inteiros só com 0 e 1 também servem), qualquer forma.
    Devolve um ndarray de bool da mesma forma: ``~mask`` (use ``torch.from_numpy(...)`` para passá-la ao
    PyTorch). Levanta ``TypeError`` se a máscara não for booleana.
    Fonte: Módulo 6, Aula 2, ``03-uso`` (as convenções de máscara do PyTorch).
    """
    return ~as_bool_mask(mask, "mask")


def from_torch_mha_mask(mask) -> np.ndarray:
    """Converte ``attn_mask``/``key_padding_mask`` de ``nn.MultiheadAttention`` (``True`` = bloqueado)
    para a convenção do curso.

    ``mask``: array_like de bool (ou tensor do PyTorch; inteiros só com 0 e 1 também servem), qualquer forma.
    Devolve um ndarray de bool da mesma forma: ``~mask``. Levanta ``TypeError`` se a máscara não for booleana.
    Fonte: Módulo 6, Aula 2, ``03-uso`` (as convenções de máscara do PyTorch).
    """
    return ~as_bool_mask(mask, "mask")


def to_torch_sdpa_mask(mask) -> np.ndarray:
    """Máscara do curso para ``F.scaled_dot_product_attention``: mesma convenção, ``True`` = permitido.

    ``mask``: array_like de bool (ou tensor do PyTorch; inteiros só com 0 e 1 também servem), qualquer forma.
    Devolve um ndarray de bool da mesma forma: uma cópia. Levanta ``TypeError`` se a máscara não for booleana.
    Fonte: Módulo 6, Aula 2, ``03-uso`` (as convenções de máscara do PyTorch).
    """
    return as_bool_mask(mask, "mask").copy()


def from_torch_sdpa_mask(mask) -> np.ndarray:
    """``attn_mask`` booleana de ``F.scaled_dot_product_attention`` para o curso: mesma convenção.

    ``mask``: array_like de bool (ou tensor do PyTorch; inteiros só com 0 e 1 também servem), qualquer forma.
    Devolve um ndarray de bool da mesma forma: uma cópia. Levanta ``TypeError`` se a máscara não for booleana.
    Fonte: Módulo 6, Aula 2, ``03-uso`` (as convenções de máscara do PyTorch).
    """
    return as_bool_mask(mask, "mask").copy()
