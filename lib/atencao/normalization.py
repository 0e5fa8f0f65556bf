"""Normalização de camada (layer normalization): cada token centrado e reescalado nas suas ``d_model`` colunas.

Para cada linha ``x`` (um token) de ``d_model`` números::

    LayerNorm(x) = (x - média(x)) / sqrt(variância(x) + eps) * weight + bias

A média e a variância são do **último eixo** (as características do token, não os tokens da frase nem o
lote), a variância é a populacional (divide por ``d_model``) e ``eps`` fica **dentro** da raiz.
``weight`` (começa em 1) e ``bias`` (começa em 0) são aprendidos.

Fonte: Ba, Kiros e Hinton (2016), Layer Normalization; ``torch.nn.LayerNorm``; Módulo 6, Aula 4
(``01-teoria``, ``02-codigo`` e ``03-exercicios``, exercício 2).
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_float_array,
    check_dim,
    check_embeddings,
    check_positive,
    compact_float,
    shape_str,
    tensor_to_numpy,
)

__all__ = ["LayerNorm"]


class LayerNorm:
    """Normalização de camada sobre o último eixo, com ganho ``weight`` e viés ``bias`` (como ``torch.nn.LayerNorm``).

    Parameters
    ----------
    d_model : int
        Tamanho do último eixo normalizado.
    eps : float
        Somado à variância, dentro da raiz (padrão 1e-5, o do PyTorch; o BERT usa 1e-12).
    dtype : dtype do NumPy
        Tipo de ``weight`` e ``bias`` (padrão float64).

    Attributes
    ----------
    weight, bias : ndarray, forma (d_model,)
        Começam em 1 e 0 (a camada começa como a normalização pura).

    Raises
    ------
    TypeError, ValueError
        ``d_model`` que não é inteiro ≥ 1, ``eps`` que não é um número finito > 0.

    Fonte: Ba, Kiros e Hinton (2016), seção 3; Módulo 6, Aula 4, ``02-codigo``.
    """

    def __init__(self, d_model: int, eps: float = 1e-5, dtype=np.float64):
        self.d_model = check_dim(d_model, "d_model")
        self.eps = check_positive(eps, "eps")
        self.weight = np.ones(self.d_model, dtype=dtype)
        self.bias = np.zeros(self.d_model, dtype=dtype)

    def __repr__(self) -> str:
        return f"LayerNorm(d_model={self.d_model}, eps={compact_float(self.eps)})"

    def forward(self, x) -> np.ndarray:
        """Normaliza cada token (cada linha) de ``x``.

        Parameters
        ----------
        x : array_like, forma (..., n, d_model)

        Returns
        -------
        ndarray, forma (..., n, d_model)
            Com ``weight = 1`` e ``bias = 0``, cada linha tem média 0 e variância ``var / (var + eps)`` ≈ 1.
            dtype comum de ``x`` e dos pesos.

        Raises
        ------
        ValueError, TypeError
            ``x`` com último eixo diferente de ``d_model``, menos de 2 eixos, ``NaN``/``inf`` ou não numérico.
        """
        x = check_embeddings(x, "x", self.d_model)
        x = x.astype(np.result_type(x, self.weight), copy=False)
        mean = x.mean(axis=-1, keepdims=True)  # (..., n, 1)
        centered = x - mean  # (..., n, d_model)
        var = (centered * centered).mean(axis=-1, keepdims=True)  # (..., n, 1), divide por d_model
        return centered / np.sqrt(var + x.dtype.type(self.eps)) * self.weight + self.bias

    __call__ = forward

    @classmethod
    def from_weights(cls, weight, bias, eps: float = 1e-5) -> "LayerNorm":
        """Cria a camada com ``weight`` e ``bias`` dados, ambos de forma (d_model,).

        Raises
        ------
        ValueError, TypeError
            Formas diferentes de (d_model,), valores não finitos, ``eps`` inválido.
        """
        w = np.array(as_float_array(weight, "weight", min_ndim=1, expected="(d_model,)"))
        b = np.array(as_float_array(bias, "bias", min_ndim=1, expected="(d_model,)"))
        if w.ndim != 1 or b.shape != w.shape:
            raise ValueError(f"`weight` e `bias` precisam ter a mesma forma (d_model,); recebidas "
                             f"{shape_str(w.shape)} e {shape_str(b.shape)}.")
        obj = cls(w.shape[0], eps=eps, dtype=w.dtype)
        obj.weight, obj.bias = w, b.astype(w.dtype)
        return obj

    @classmethod
    def from_torch(cls, module) -> "LayerNorm":
        """Copia um ``torch.nn.LayerNorm`` (forma normalizada de um eixo só; sem ganho ou viés vira 1 e 0).

        Raises
        ------
        ValueError
            ``normalized_shape`` com mais de um eixo.

        Fonte: Módulo 6, Aula 4, ``02-codigo``.
        """
        shape = tuple(module.normalized_shape)
        if len(shape) != 1:
            raise ValueError(f"Só a normalização do último eixo é suportada; `normalized_shape` = {shape}.")
        d = shape[0]
        w = np.array(tensor_to_numpy(module.weight)) if module.weight is not None else np.ones(d, np.float32)
        b = np.array(tensor_to_numpy(module.bias)) if getattr(module, "bias", None) is not None else np.zeros_like(w)
        return cls.from_weights(w, b, eps=module.eps)
