"""Atenção multicabeça em NumPy, sem laço em Python sobre cabeças ou tokens.

Cada cabeça ``h`` tem as suas projeções de tamanho ``d_k = d_model / n_heads``; na prática as
``n_heads`` projeções ficam lado a lado nas colunas de uma única matriz ``W_q`` (d_model, d_model),
e "dividir em cabeças" é só um ``reshape``:

    Q = query @ W_q                        # (..., n_q, d_model)
    Q = Q.reshape(..., n_q, n_heads, d_k)  # (..., n_q, n_heads, d_k)
    Q = Q.swapaxes(-2, -3)                 # (..., n_heads, n_q, d_k)

A atenção escalada roda em todas as cabeças de uma vez (o eixo das cabeças vira um eixo de lote), as
saídas são concatenadas de volta para (..., n_q, d_model) e projetadas por ``W_o``.

Fonte: Vaswani et al. (2017), seção 3.2.2; Módulo 6, Aula 2 (``03-uso`` e ``04-exercicios``, ex. 2).
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_float_array,
    check_dim,
    check_layer_inputs,
    check_seed,
    shape_str,
    tensor_to_numpy,
)
from ._weights import project, xavier_normal
from .attention import attend_checked

__all__ = ["MultiHeadAttention", "split_heads", "merge_heads"]


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(..., n, d_model) → (..., n_heads, n, d_k), com ``d_k = d_model / n_heads``.

    Raises
    ------
    ValueError, TypeError
        ``x`` com menos de 2 eixos, ``n_heads`` que não é um inteiro ≥ 1 ou que não divide ``d_model``.

    Fonte: Vaswani et al. (2017), seção 3.2.2; Módulo 6, Aula 2, ``04-exercicios`` (ex. 2).
    """
    n_heads = check_dim(n_heads, "n_heads")
    if np.ndim(x) < 2:
        raise ValueError(f"`x` precisa ter forma (..., n, d_model); recebida {shape_str(np.shape(x))}.")
    *lead, n, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(f"`n_heads`={n_heads} precisa dividir d_model={d_model} (o último eixo de `x`, de forma "
                         f"{shape_str(x.shape)}): cada cabeça fica com d_k = d_model / n_heads colunas.")
    x = x.reshape(*lead, n, n_heads, d_model // n_heads)  # (..., n, n_heads, d_k)
    return np.ascontiguousarray(np.swapaxes(x, -2, -3))  # (..., n_heads, n, d_k)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., n_heads, n, d_k) → (..., n, n_heads · d_k): concatena as cabeças lado a lado.

    Raises
    ------
    ValueError
        ``x`` com menos de 3 eixos.

    Fonte: Vaswani et al. (2017), seção 3.2.2; Módulo 6, Aula 2, ``04-exercicios`` (ex. 2).
    """
    if np.ndim(x) < 3:
        raise ValueError(f"`x` precisa ter forma (..., n_heads, n, d_k); recebida {shape_str(np.shape(x))}.")
    *lead, n_heads, n, d_k = x.shape
    return np.swapaxes(x, -2, -3).reshape(*lead, n, n_heads * d_k)  # (..., n, d_model)


class MultiHeadAttention:
    """Atenção multicabeça: ``n_heads`` atenções escaladas em paralelo, concatenadas e projetadas.

    Parameters
    ----------
    d_model : int
        Dimensão dos embeddings (entrada e saída).
    n_heads : int
        Número de cabeças; precisa dividir ``d_model``. Cada cabeça tem ``d_k = d_model / n_heads``
        e é escalada por ``sqrt(d_k)`` (não por ``sqrt(d_model)``).
    bias : bool
        Se ``True``, cria vieses ``b_q``, ``b_k``, ``b_v``, ``b_o`` (iniciados em zero, como no PyTorch).
    seed : int
        Semente do sorteio dos pesos.
    dtype : dtype do NumPy
        Tipo dos pesos (padrão float64; use ``np.float32`` para velocidade).

    Attributes
    ----------
    W_q, W_k, W_v, W_o : ndarray, forma (d_model, d_model)
        Convenção ``x @ W`` (o PyTorch guarda a transposta e calcula ``x @ W.T``).
        As colunas ``h·d_k : (h+1)·d_k`` de ``W_q``, ``W_k``, ``W_v`` são as projeções da cabeça ``h``.
    b_q, b_k, b_v, b_o : ndarray, forma (d_model,), ou None

    Raises
    ------
    ValueError
        Se ``d_model`` não for divisível por ``n_heads``.
    TypeError
        Dimensões que não são inteiras.

    Fonte: Vaswani et al. (2017), seção 3.2.2; Módulo 6, Aula 2, ``03-uso`` e ``04-exercicios``.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = False, seed: int = 0, dtype=np.float64):
        self._set_sizes(d_model, n_heads)
        self.seed = check_seed(seed)
        rng = np.random.default_rng(seed)
        self.W_q, self.W_k, self.W_v, self.W_o = (xavier_normal(rng, d_model, d_model, dtype) for _ in range(4))
        zeros = (lambda: np.zeros(d_model, dtype=dtype)) if bias else (lambda: None)
        self.b_q, self.b_k, self.b_v, self.b_o = zeros(), zeros(), zeros(), zeros()

    def _set_sizes(self, d_model, n_heads) -> None:
        self.d_model = check_dim(d_model, "d_model")
        self.n_heads = check_dim(n_heads, "n_heads")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"`d_model`={self.d_model} precisa ser divisível por `n_heads`={self.n_heads} "
                f"(cada cabeça fica com d_k = d_model / n_heads); divisores de {self.d_model}: "
                f"{[h for h in range(1, self.d_model + 1) if self.d_model % h == 0]}."
            )
        self.d_k = self.d_model // self.n_heads

    @property
    def bias(self) -> bool:
        return self.b_q is not None

    def __repr__(self) -> str:
        origin = f"seed={self.seed}" if self.seed is not None else "pesos carregados"
        return (f"MultiHeadAttention(d_model={self.d_model}, n_heads={self.n_heads}, d_k={self.d_k}, "
                f"bias={self.bias}, {origin})")

    def _heads(self, x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        """(..., n, d_model) → (..., n_heads, n, d_k): a projeção ``x @ W + b`` dividida em cabeças."""
        return split_heads(project(x, W, b), self.n_heads)

    def forward(self, query, key=None, value=None, mask=None, average_weights: bool = False,
                scale: float | None = None):
        """Calcula a atenção multicabeça: ``concat(cabeças) W_o``, cada cabeça ``softmax(scale · Q Kᵀ) V``.

        Parameters
        ----------
        query : array_like, forma (..., n_q, d_model)
        key : array_like, forma (..., n_k, d_model), opcional (padrão: ``query``, self-attention)
        value : array_like, forma (..., n_k, d_model), opcional (padrão: ``key``)
        mask : array_like de bool, opcional
            Compatível (broadcast) com (..., n_q, n_k), a mesma para todas as cabeças;
            ``True`` = pode olhar (veja :mod:`atencao.masks`). Ex.: ``causal_mask(n)`` ou
            ``padding_mask(lengths)``.
        average_weights : bool
            Se ``True``, devolve os pesos já com a média das cabeças, como o padrão do PyTorch.
        scale : float ou None
            Fator das pontuações de cada cabeça, como em
            :func:`~atencao.attention.scaled_dot_product_attention` (``None``, o padrão, =
            ``1 / sqrt(d_k)`` com o ``d_k`` da cabeça; ``1.0`` = sem escala).

        Returns
        -------
        output : ndarray, forma (..., n_q, d_model)
        weights : ndarray, forma (..., n_heads, n_q, n_k), ou (..., n_q, n_k) com ``average_weights``
            dtype comum das entradas e dos pesos (float32 com float32; float64 caso contrário).

        Raises
        ------
        ValueError
            Último eixo diferente de ``d_model``, ``key``/``value`` com números de tokens diferentes,
            lotes incompatíveis, máscara com forma incompatível, ``NaN``/``inf``, ``scale`` ≤ 0, pontuações
            que estouram o limite do dtype (entradas grandes demais).
        TypeError
            Entradas não numéricas, máscara não booleana ou ``scale`` que não seja número (ou seja bool).
        """
        q, k, v, allowed = check_layer_inputs(self.d_model, self.W_q.dtype, mask, query, key, value)
        if allowed is not None:  # (..., n_q, n_k) -> (..., 1, n_q, n_k): a mesma máscara em toda cabeça
            allowed = allowed[..., None, :, :]
        Q = self._heads(q, self.W_q, self.b_q)  # (..., n_heads, n_q, d_k)
        K = self._heads(k, self.W_k, self.b_k)  # (..., n_heads, n_k, d_k)
        V = self._heads(v, self.W_v, self.b_v)  # (..., n_heads, n_k, d_k)
        # heads: (..., n_heads, n_q, d_k)   weights: (..., n_heads, n_q, n_k)
        heads, weights = attend_checked(Q, K, V, allowed, scale)
        output = project(merge_heads(heads), self.W_o, self.b_o)  # (..., n_q, d_model)
        return output, (weights.mean(axis=-3) if average_weights else weights)  # média: (..., n_q, n_k)

    __call__ = forward

    @classmethod
    def from_weights(cls, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, *,
                     n_heads: int) -> "MultiHeadAttention":
        """Cria a camada com pesos dados (convenção ``x @ W``), por exemplo os de um modelo treinado.

        Parameters
        ----------
        W_q, W_k, W_v, W_o : array_like, forma (d_model, d_model)
        b_q, b_k, b_v, b_o : array_like, forma (d_model,), opcionais (todos ou nenhum)
        n_heads : int

        Raises
        ------
        ValueError
            Formas diferentes de (d_model, d_model) / (d_model,), ``d_model`` não divisível por
            ``n_heads``, ou só alguns vieses dados.
        """
        mats = [np.ascontiguousarray(as_float_array(W, name)) for W, name in
                ((W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v"), (W_o, "W_o"))]
        d = mats[0].shape[0]
        for W, name in zip(mats, ("W_q", "W_k", "W_v", "W_o")):
            if W.shape != (d, d):
                raise ValueError(f"`{name}` precisa ter forma (d_model, d_model) = ({d}, {d}); recebida "
                                 f"{shape_str(W.shape)}.")
        biases = [b_q, b_k, b_v, b_o]
        if any(b is None for b in biases) and not all(b is None for b in biases):
            raise ValueError("Passe os quatro vieses (b_q, b_k, b_v, b_o) ou nenhum.")
        obj = cls.__new__(cls)  # sem sortear pesos que seriam descartados
        obj._set_sizes(d, n_heads)
        obj.seed = None
        obj.W_q, obj.W_k, obj.W_v, obj.W_o = mats
        obj.b_q = obj.b_k = obj.b_v = obj.b_o = None
        if biases[0] is not None:
            bs = [as_float_array(b, name, min_ndim=1) for b, name in zip(biases, ("b_q", "b_k", "b_v", "b_o"))]
            for b, name in zip(bs, ("b_q", "b_k", "b_v", "b_o")):
                if b.shape != (d,):
                    raise ValueError(f"`{name}` precisa ter forma ({d},); recebida {shape_str(b.shape)}.")
            obj.b_q, obj.b_k, obj.b_v, obj.b_o = bs
        return obj

    @classmethod
    def from_torch(cls, module) -> "MultiHeadAttention":
        """Copia os pesos de um ``torch.nn.MultiheadAttention`` (sem depender do PyTorch aqui).

        O PyTorch empilha as projeções de entrada em ``in_proj_weight`` (3·d_model, d_model), nas
        linhas q, k, v, e calcula ``x @ W.T + b``; aqui guardamos as transpostas. O resultado usa
        float64 se o módulo for float64 e float32 caso contrário (float32, float16, ``bfloat16``; os valores
        de float16 e bfloat16 cabem exatamente em float32).

        Atenção ao formato: o módulo do curso sempre recebe (..., n, d_model), ou seja,
        ``batch_first=True``. Com ``batch_first=False`` o PyTorch usa (n, batch, d_model): transponha
        com ``x.swapaxes(0, 1)``. As máscaras booleanas do PyTorch têm ``True`` = bloqueado: converta
        com :func:`atencao.masks.from_torch_mha_mask`.

        Raises
        ------
        ValueError
            Para configurações não suportadas (``kdim``/``vdim`` diferentes, ``add_bias_kv``,
            ``add_zero_attn``).

        Fonte: Módulo 6, Aula 2, ``03-uso``.
        """
        if not getattr(module, "_qkv_same_embed_dim", True) or module.in_proj_weight is None:
            raise ValueError("`module` com kdim/vdim diferentes de embed_dim não é suportado.")
        if module.bias_k is not None or module.add_zero_attn:
            raise ValueError("`module` com add_bias_kv ou add_zero_attn não é suportado.")

        def arr(t):
            return np.array(tensor_to_numpy(t))  # cópia; bfloat16 e float8 chegam como float32

        W_in = arr(module.in_proj_weight)  # (3·d_model, d_model), linhas q, k, v
        dtype = np.float64 if W_in.dtype == np.float64 else np.float32  # float16/bfloat16 -> float32
        d = module.embed_dim
        W_q, W_k, W_v = (W_in[i * d:(i + 1) * d].T.astype(dtype) for i in range(3))  # x @ W.T -> x @ W
        W_o = arr(module.out_proj.weight).T.astype(dtype)
        biases = (None,) * 4
        if module.in_proj_bias is not None:
            b_in = arr(module.in_proj_bias).astype(dtype)
            biases = (b_in[:d], b_in[d:2 * d], b_in[2 * d:], arr(module.out_proj.bias).astype(dtype))
        return cls.from_weights(W_q, W_k, W_v, W_o, *biases, n_heads=module.num_heads)
