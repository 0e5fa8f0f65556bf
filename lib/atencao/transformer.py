"""Os blocos do Transformer: atenção, rede feed-forward, conexões residuais e normalização de camada.

Um bloco **codificador** tem duas subcamadas, cada uma com uma conexão residual (He et al., 2016) e uma
normalização de camada (Ba et al., 2016). Há duas ordens:

- **pós-LN** (post-LN, o artigo original e o BERT): ``x = LN(x + subcamada(x))``;
- **pré-LN** (pre-LN, GPT-2 e a maioria dos modelos de hoje): ``x = x + subcamada(LN(x))``.

Bloco codificador (``TransformerEncoderBlock``)::

    pós-LN: x = LN_1(x + MHA(x));            x = LN_2(x + FFN(x))
    pré-LN: x = x + MHA(LN_1(x));            x = x + FFN(LN_2(x))

Bloco decodificador (``TransformerDecoderBlock``): uma autoatenção (em geral com máscara causal), uma
**atenção cruzada** (consultas do decodificador, chaves e valores da saída do codificador, ``memory``) e a
FFN, cada uma com o seu resíduo e a sua normalização (``LN_1``, ``LN_2``, ``LN_3``).

São as mesmas contas de ``torch.nn.TransformerEncoderLayer`` e ``torch.nn.TransformerDecoderLayer`` com
``batch_first=True`` no modo de avaliação (sem dropout): ``norm_first=True`` é o pré-LN. A atenção é a
:class:`~atencao.multihead.MultiHeadAttention` do curso.

Fonte: Vaswani et al. (2017), seções 3.1–3.3; Xiong et al. (2020), pré-LN; Módulo 6, Aula 4 (``01-teoria``,
``02-codigo``, ``03-exercicios``, exercícios 3 e 4, e ``04-projeto``).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_dim, check_embeddings, check_positive, check_seed
from .feedforward import FeedForward, check_activation
from .multihead import MultiHeadAttention
from .normalization import LayerNorm

__all__ = ["TransformerEncoderBlock", "TransformerDecoderBlock", "torch_activation_name"]


def torch_activation_name(module) -> str:
    """``"relu"`` ou ``"gelu"``: a ativação de uma camada ``torch.nn.Transformer*Layer``.

    Raises
    ------
    ValueError
        Outra ativação (uma função própria, por exemplo).
    """
    act = module.activation
    name = getattr(act, "__name__", type(act).__name__).lower()
    if name not in ("relu", "gelu") or getattr(act, "approximate", "none") != "none":
        raise ValueError(f"Só as ativações 'relu' e 'gelu' (a da erf, sem approximate='tanh') são suportadas; a camada "
                         f"usa {act!r}.")
    return name


def _check_block_sizes(d_model, n_heads, d_ff, activation, eps, seed):
    d_model, n_heads, d_ff = check_dim(d_model, "d_model"), check_dim(n_heads, "n_heads"), check_dim(d_ff, "d_ff")
    return d_model, n_heads, d_ff, check_activation(activation), check_positive(eps, "eps"), check_seed(seed)


class TransformerEncoderBlock:
    """Bloco codificador: autoatenção multicabeça e FFN, cada uma com resíduo e normalização de camada.

    Parameters
    ----------
    d_model : int
        Dimensão dos embeddings.
    n_heads : int
        Número de cabeças (precisa dividir ``d_model``).
    d_ff : int
        Dimensão escondida da FFN (em geral 4·d_model).
    activation : {"relu", "gelu"}
    norm_first : bool
        ``False`` (padrão, como no PyTorch): pós-LN, ``x = LN(x + f(x))``; ``True``: pré-LN,
        ``x = x + f(LN(x))``.
    eps : float
        O ``eps`` das normalizações (padrão 1e-5).
    seed : int
        Semente dos pesos (a atenção usa ``seed``, a FFN ``seed + 1``).
    dtype : dtype do NumPy

    Attributes
    ----------
    self_attn : MultiHeadAttention (com vieses)
    ffn : FeedForward
    norm1, norm2 : LayerNorm

    Raises
    ------
    TypeError, ValueError
        Dimensões que não são inteiros ≥ 1, ``d_model`` não divisível por ``n_heads``, ativação desconhecida.

    Fonte: Vaswani et al. (2017), seção 3.1; Xiong et al. (2020); Módulo 6, Aula 4, ``02-codigo``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, activation: str = "relu", norm_first: bool = False,
                 eps: float = 1e-5, seed: int = 0, dtype=np.float64):
        d_model, n_heads, d_ff, activation, eps, seed = _check_block_sizes(d_model, n_heads, d_ff, activation,
                                                                           eps, seed)
        self.norm_first = bool(norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=True, seed=seed, dtype=dtype)
        self.ffn = FeedForward(d_model, d_ff, activation, seed=seed + 1, dtype=dtype)
        self.norm1, self.norm2 = LayerNorm(d_model, eps, dtype), LayerNorm(d_model, eps, dtype)

    @property
    def d_model(self) -> int:
        return self.self_attn.d_model

    def __repr__(self) -> str:
        return (f"TransformerEncoderBlock(d_model={self.d_model}, n_heads={self.self_attn.n_heads}, "
                f"d_ff={self.ffn.d_ff}, activation={self.ffn.activation!r}, "
                f"{'pré-LN' if self.norm_first else 'pós-LN'})")

    def forward(self, x, mask=None, average_weights: bool = False):
        """Passa ``x`` pelo bloco.

        Parameters
        ----------
        x : array_like, forma (..., n, d_model)
        mask : array_like de bool, opcional, compatível com (..., n, n)
            ``True`` = pode olhar (ex.: ``causal_mask(n)``, ``padding_mask(lengths)``).
        average_weights : bool
            Se ``True``, os pesos vêm com a média das cabeças.

        Returns
        -------
        output : ndarray, forma (..., n, d_model)
        weights : ndarray, forma (..., n_heads, n, n), ou (..., n, n) com ``average_weights``
            Os pesos da autoatenção.

        Raises
        ------
        ValueError, TypeError
            Como em :meth:`MultiHeadAttention.forward` (forma de ``x``, máscara incompatível, valores não finitos).
        """
        x = check_embeddings(x, "x", self.d_model)
        if self.norm_first:  # pré-LN: x = x + f(LN(x))
            h = self.norm1(x)
            attn, weights = self.self_attn(h, mask=mask, average_weights=average_weights)
            x = x + attn
            x = x + self.ffn(self.norm2(x))
        else:  # pós-LN: x = LN(x + f(x))
            attn, weights = self.self_attn(x, mask=mask, average_weights=average_weights)
            x = self.norm1(x + attn)
            x = self.norm2(x + self.ffn(x))
        return x, weights  # (..., n, d_model), (..., n_heads, n, n)

    __call__ = forward

    @classmethod
    def from_torch(cls, module) -> "TransformerEncoderBlock":
        """Copia um ``torch.nn.TransformerEncoderLayer`` (pesos, ``norm_first``, ativação, ``eps``).

        O bloco do curso recebe sempre (..., n, d_model), como ``batch_first=True``; com
        ``batch_first=False`` transponha a entrada do PyTorch. As máscaras booleanas do PyTorch têm
        ``True`` = bloqueado: converta com :func:`atencao.masks.from_torch_mha_mask`. O dropout do PyTorch
        só age no treino; compare com o módulo em ``.eval()``.

        Raises
        ------
        ValueError
            Ativação que não seja ReLU ou a GELU da erf (``approximate='tanh'`` é recusada); atenção com
            configuração não suportada.

        Fonte: Módulo 6, Aula 4, ``02-codigo``.
        """
        obj = cls.__new__(cls)
        obj.norm_first = bool(module.norm_first)
        obj.self_attn = MultiHeadAttention.from_torch(module.self_attn)
        obj.ffn = FeedForward.from_torch(module.linear1, module.linear2, torch_activation_name(module))
        obj.norm1, obj.norm2 = LayerNorm.from_torch(module.norm1), LayerNorm.from_torch(module.norm2)
        return obj


class TransformerDecoderBlock:
    """Bloco decodificador: autoatenção, atenção cruzada sobre ``memory`` e FFN, cada uma com resíduo e LN.

    Parameters
    ----------
    d_model, n_heads, d_ff, activation, norm_first, eps, dtype
        Como em :class:`TransformerEncoderBlock`.
    seed : int
        Semente dos pesos (autoatenção ``seed``, atenção cruzada ``seed + 1``, FFN ``seed + 2``).

    Attributes
    ----------
    self_attn, cross_attn : MultiHeadAttention (com vieses)
    ffn : FeedForward
    norm1, norm2, norm3 : LayerNorm

    Raises
    ------
    TypeError, ValueError
        Como em :class:`TransformerEncoderBlock`.

    Fonte: Vaswani et al. (2017), seções 3.1 e 3.2.3; Módulo 6, Aula 4, ``02-codigo``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, activation: str = "relu", norm_first: bool = False,
                 eps: float = 1e-5, seed: int = 0, dtype=np.float64):
        d_model, n_heads, d_ff, activation, eps, seed = _check_block_sizes(d_model, n_heads, d_ff, activation,
                                                                           eps, seed)
        self.norm_first = bool(norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=True, seed=seed, dtype=dtype)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, bias=True, seed=seed + 1, dtype=dtype)
        self.ffn = FeedForward(d_model, d_ff, activation, seed=seed + 2, dtype=dtype)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model, eps, dtype) for _ in range(3))

    @property
    def d_model(self) -> int:
        return self.self_attn.d_model

    def __repr__(self) -> str:
        return (f"TransformerDecoderBlock(d_model={self.d_model}, n_heads={self.self_attn.n_heads}, "
                f"d_ff={self.ffn.d_ff}, activation={self.ffn.activation!r}, "
                f"{'pré-LN' if self.norm_first else 'pós-LN'})")

    def forward(self, x, memory, mask=None, memory_mask=None, average_weights: bool = False):
        """Passa ``x`` (o lado do decodificador) pelo bloco, consultando ``memory`` (a saída do codificador).

        Parameters
        ----------
        x : array_like, forma (..., n_q, d_model)
            Os tokens do decodificador (as consultas da atenção cruzada).
        memory : array_like, forma (..., n_k, d_model)
            A saída do codificador (as chaves e os valores da atenção cruzada); ``n_k`` pode ser diferente
            de ``n_q``.
        mask : array_like de bool, opcional, compatível com (..., n_q, n_q)
            Máscara da autoatenção (em geral ``causal_mask(n_q)``); ``True`` = pode olhar.
        memory_mask : array_like de bool, opcional, compatível com (..., n_q, n_k)
            Máscara da atenção cruzada (por exemplo, o preenchimento da frase de origem).
        average_weights : bool
            Se ``True``, os pesos vêm com a média das cabeças.

        Returns
        -------
        output : ndarray, forma (..., n_q, d_model)
        weights : tuple (self_weights, cross_weights)
            ``self_weights`` de forma (..., n_heads, n_q, n_q) e ``cross_weights`` de forma
            (..., n_heads, n_q, n_k) (sem o eixo das cabeças com ``average_weights``).

        Raises
        ------
        ValueError, TypeError
            Formas ou máscaras incompatíveis, valores não finitos, entradas não numéricas.
        """
        x = check_embeddings(x, "x", self.d_model)
        memory = check_embeddings(memory, "memory", self.d_model)
        avg = average_weights
        if self.norm_first:  # pré-LN: x = x + f(LN(x))
            h = self.norm1(x)
            attn, self_w = self.self_attn(h, mask=mask, average_weights=avg)
            x = x + attn
            cross, cross_w = self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask, average_weights=avg)
            x = x + cross
            x = x + self.ffn(self.norm3(x))
        else:  # pós-LN: x = LN(x + f(x))
            attn, self_w = self.self_attn(x, mask=mask, average_weights=avg)
            x = self.norm1(x + attn)
            # consultas do decodificador (x), chaves e valores do codificador (memory)
            cross, cross_w = self.cross_attn(x, memory, memory, mask=memory_mask, average_weights=avg)
            x = self.norm2(x + cross)
            x = self.norm3(x + self.ffn(x))
        return x, (self_w, cross_w)  # (..., n_q, d_model), ((..., n_heads, n_q, n_q), (..., n_heads, n_q, n_k))

    __call__ = forward

    @classmethod
    def from_torch(cls, module) -> "TransformerDecoderBlock":
        """Copia um ``torch.nn.TransformerDecoderLayer`` (pesos, ``norm_first``, ativação, ``eps``).

        As mesmas observações de :meth:`TransformerEncoderBlock.from_torch` (``batch_first``, máscaras com
        ``True`` = bloqueado no PyTorch, ``.eval()``). ``multihead_attn`` do PyTorch vira ``cross_attn``.

        Raises
        ------
        ValueError
            Ativação que não seja ReLU ou a GELU da erf (``approximate='tanh'`` é recusada); atenção com
            configuração não suportada.

        Fonte: Módulo 6, Aula 4, ``02-codigo``.
        """
        obj = cls.__new__(cls)
        obj.norm_first = bool(module.norm_first)
        obj.self_attn = MultiHeadAttention.from_torch(module.self_attn)
        obj.cross_attn = MultiHeadAttention.from_torch(module.multihead_attn)
        obj.ffn = FeedForward.from_torch(module.linear1, module.linear2, torch_activation_name(module))
        obj.norm1, obj.norm2, obj.norm3 = (LayerNorm.from_torch(getattr(module, f"norm{i}")) for i in (1, 2, 3))
        return obj
