"""A rede feed-forward por posição do bloco Transformer: duas camadas lineares com uma ativação no meio.

Cada token passa, **sozinho**, pela mesma rede (Vaswani et al., 2017, seção 3.3)::

    FFN(x) = activation(x W_1 + b_1) W_2 + b_2,    W_1: (d_model, d_ff),  W_2: (d_ff, d_model)

com ``d_ff`` em geral 4·d_model. A atenção mistura os tokens; a FFN transforma cada um.
A ativação é a ReLU no artigo original e a GELU no BERT e no GPT-2.

Fonte: Vaswani et al. (2017), seção 3.3; Hendrycks e Gimpel (2016), GELU; Módulo 6, Aula 4 (``02-codigo``).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_dim, check_embeddings, check_seed, shape_str, tensor_to_numpy
from ._weights import project, xavier_normal

__all__ = ["FeedForward", "relu", "gelu", "ACTIVATIONS"]


def relu(x: np.ndarray) -> np.ndarray:
    """ReLU: ``max(x, 0)``, elemento a elemento (mesmo dtype)."""
    return np.maximum(x, x.dtype.type(0))


def _erf(x: np.ndarray) -> np.ndarray:
    """Função de erro (Abramowitz e Stegun, 7.1.26; erro absoluto < 1.5e-7, abaixo da precisão do float32)."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU pela erf: ``x · Φ(x) = x/2 · (1 + erf(x/√2))`` (a do BERT e a ``"gelu"`` do PyTorch, e não a forma
    com ``tanh`` do GPT-2), mesmo dtype.

    A erf vem da fórmula 7.1.26 de Abramowitz e Stegun (:func:`_erf`), uma aproximação com erro absoluto abaixo
    de 1,5·10⁻⁷: em ``float32``, um erro do tamanho do arredondamento do próprio tipo (por isso o bloco bate com
    o do PyTorch até 1e-5); em ``float64``, a diferença para a erf exata aparece da sétima casa em diante. O
    NumPy não tem a erf, e chamar ``math.erf`` elemento a elemento deixaria a FFN dez vezes mais lenta.
    """
    return (0.5 * x * (1.0 + _erf(x.astype(np.float64) / np.sqrt(2.0)))).astype(x.dtype)


#: As ativações aceitas pelo nome, como o ``activation`` de ``torch.nn.TransformerEncoderLayer``.
ACTIVATIONS = {"relu": relu, "gelu": gelu}


def check_activation(activation) -> str:
    """Confere o nome da ativação (``"relu"`` ou ``"gelu"``)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"`activation` precisa ser um de {sorted(ACTIVATIONS)}; recebido {activation!r}.")
    return activation


class FeedForward:
    """Rede feed-forward por posição: ``activation(x W_1 + b_1) W_2 + b_2``, aplicada a cada token.

    Parameters
    ----------
    d_model : int
        Dimensão de entrada e de saída.
    d_ff : int
        Dimensão da camada escondida (em geral 4·d_model; 2048 no artigo, com d_model = 512).
    activation : {"relu", "gelu"}
    seed : int
        Semente do sorteio dos pesos (os vieses começam em zero).
    dtype : dtype do NumPy
        Tipo dos pesos (padrão float64).

    Attributes
    ----------
    W_1 : ndarray, forma (d_model, d_ff)
    b_1 : ndarray, forma (d_ff,)
    W_2 : ndarray, forma (d_ff, d_model)
    b_2 : ndarray, forma (d_model,)
        Convenção ``x @ W`` (o ``torch.nn.Linear`` guarda a transposta).

    Raises
    ------
    TypeError, ValueError
        Dimensões que não são inteiros ≥ 1; ativação desconhecida.

    Fonte: Vaswani et al. (2017), seção 3.3, eq. (2); Módulo 6, Aula 4, ``02-codigo``.
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", seed: int = 0, dtype=np.float64):
        self.d_model, self.d_ff = check_dim(d_model, "d_model"), check_dim(d_ff, "d_ff")
        self.activation = check_activation(activation)
        self.seed = check_seed(seed)
        rng = np.random.default_rng(seed)
        self.W_1 = xavier_normal(rng, self.d_model, self.d_ff, dtype)
        self.W_2 = xavier_normal(rng, self.d_ff, self.d_model, dtype)
        self.b_1, self.b_2 = np.zeros(self.d_ff, dtype), np.zeros(self.d_model, dtype)

    def __repr__(self) -> str:
        return f"FeedForward(d_model={self.d_model}, d_ff={self.d_ff}, activation={self.activation!r})"

    def forward(self, x) -> np.ndarray:
        """Aplica a rede a cada token.

        Parameters
        ----------
        x : array_like, forma (..., n, d_model)

        Returns
        -------
        ndarray, forma (..., n, d_model)

        Raises
        ------
        ValueError, TypeError
            Último eixo diferente de ``d_model``, ``NaN``/``inf``, entrada não numérica.
        """
        x = check_embeddings(x, "x", self.d_model)
        x = x.astype(np.result_type(x, self.W_1), copy=False)
        hidden = ACTIVATIONS[self.activation](project(x, self.W_1, self.b_1))  # (..., n, d_ff)
        return project(hidden, self.W_2, self.b_2)  # (..., n, d_model)

    __call__ = forward

    @classmethod
    def from_weights(cls, W_1, b_1, W_2, b_2, activation: str = "relu") -> "FeedForward":
        """Cria a rede com pesos dados (convenção ``x @ W``).

        Raises
        ------
        ValueError
            Formas que não combinam: ``W_1`` (d_model, d_ff), ``b_1`` (d_ff,), ``W_2`` (d_ff, d_model),
            ``b_2`` (d_model,).
        """
        W_1, W_2 = (np.ascontiguousarray(as_float_array(W, name)) for W, name in ((W_1, "W_1"), (W_2, "W_2")))
        d_model, d_ff = W_1.shape
        if W_2.shape != (d_ff, d_model):
            raise ValueError(f"`W_2` precisa ter forma (d_ff, d_model) = ({d_ff}, {d_model}), a transposta da de "
                             f"`W_1` {shape_str(W_1.shape)}; recebida {shape_str(W_2.shape)}.")
        b_1, b_2 = (np.array(as_float_array(b, name, min_ndim=1)) for b, name in ((b_1, "b_1"), (b_2, "b_2")))
        for b, name, size in ((b_1, "b_1", d_ff), (b_2, "b_2", d_model)):
            if b.shape != (size,):
                raise ValueError(f"`{name}` precisa ter forma ({size},); recebida {shape_str(b.shape)}.")
        obj = cls.__new__(cls)  # sem sortear pesos que seriam descartados
        obj.d_model, obj.d_ff = d_model, d_ff
        obj.activation = check_activation(activation)
        obj.seed = None
        obj.W_1, obj.b_1, obj.W_2, obj.b_2 = W_1, b_1.astype(W_1.dtype), W_2, b_2.astype(W_1.dtype)
        return obj

    @classmethod
    def from_torch(cls, linear1, linear2, activation: str = "relu") -> "FeedForward":
        """Copia duas camadas ``torch.nn.Linear`` (``linear1``: d_model → d_ff, ``linear2``: d_ff → d_model).

        Linear sem viés vira viés zero. Fonte: Módulo 6, Aula 4, ``02-codigo``.
        """
        def weight_and_bias(linear):
            W = np.array(tensor_to_numpy(linear.weight)).T  # x @ W.T -> x @ W
            b = np.zeros(W.shape[1], W.dtype) if linear.bias is None else np.array(tensor_to_numpy(linear.bias))
            return W, b

        (W_1, b_1), (W_2, b_2) = weight_and_bias(linear1), weight_and_bias(linear2)
        return cls.from_weights(W_1, b_1, W_2, b_2, activation=activation)
