"""Um GPT pequeno (só decodificador, pré-LN) feito com as peças do curso, com o caminho de volta inteiro em NumPy.

O modelo (Radford et al., 2018 e 2019), para tokens ``(B, n)``::

    x = E[tokens] + P[:n]                              # (B, n, d_model): token + posição aprendida
    para cada bloco (pré-LN, como o GPT-2):
        x = x + MHA(LN_1(x), máscara causal)           # a MultiHeadAttention da Aula 2
        x = x + FFN(LN_2(x))                           # gelu(x W_1 + b_1) W_2 + b_2
    logits = LN_f(x) @ Eᵀ                              # (B, n, vocab): a mesma E na entrada e na saída

Um bloco é o ``TransformerEncoderBlock`` pré-LN da Aula 4 com a máscara causal (um decodificador sem
codificador não tem atenção cruzada): guarda uma :class:`~atencao.multihead.MultiHeadAttention`, duas
:class:`~atencao.normalization.LayerNorm` e uma :class:`~atencao.feedforward.FeedForward` com a GELU do GPT-2.

Para a figura do fluxo do gradiente, ``GPTConfig(norm_first=False)`` dá o pós-LN (``x = LN(x + f(x))``) e
``GPTConfig(residual=False)`` tira o caminho residual (``x = f(LN(x))``).

Os pesos ficam num dicionário ``model.params`` (nome → ndarray), os **mesmos** arrays dos objetos dos blocos:
o otimizador os altera no lugar e ``model.blocks[0].attn`` vê a mudança.

Fontes: Radford et al. (2018, 2019), GPT e GPT-2; Vaswani et al. (2017); Xiong et al. (2020), pré-LN; Módulo 6,
Aula 4 (``02-codigo``, o bloco) e Aula 6 (``02-codigo``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_dim, check_seed, shape_str
from ._weights import project
from .attention import attend
from .feedforward import FeedForward
from .gpt_backward import (
    affine,
    affine_backward,
    dropout_mask,
    embedding_backward,
    ffn_backward,
    ffn_forward,
    gelu_tanh,
    heads_attention_backward,
    layer_norm,
    layer_norm_backward_unchecked,
)
from .gpt_backward import cross_entropy as _cross_entropy
from .masks import causal_mask
from .multihead import MultiHeadAttention, merge_heads, split_heads
from .normalization import LayerNorm

__all__ = ["GPTConfig", "GPT", "GPTBlock", "GPTFeedForward"]


@dataclass(frozen=True)
class GPTConfig:
    """O tamanho e as escolhas de um :class:`GPT`.

    Attributes
    ----------
    vocab_size : int
        Tamanho do vocabulário (o número de caracteres do tokenizador).
    block_size : int
        O contexto máximo, em tokens (as linhas da tabela de posições ``P``).
    d_model, n_heads, n_layers : int
        Largura, cabeças por bloco (dividem ``d_model``) e número de blocos.
    d_ff : int ou None
        Largura da FFN (``None`` = 4·d_model).
    dropout : float
        Probabilidade do dropout no treino (nos embeddings e na saída de cada subcamada, antes da soma
        residual, como o ``embd_pdrop``/``resid_pdrop`` do GPT-2); 0 desliga.
    norm_first : bool
        ``True`` (padrão): pré-LN, ``x = x + f(LN(x))``; ``False``: pós-LN, ``x = LN(x + f(x))``.
    residual : bool
        ``False`` tira a soma residual (só para a figura do fluxo do gradiente).
    init_std : float
        Desvio dos pesos iniciais (0.02, o do GPT-2).
    scaled_init : bool
        Se ``True``, ``W_o`` e ``W_2`` (as projeções que somam no caminho residual) começam com desvio
        ``init_std / sqrt(2 · n_layers)`` (GPT-2, seção 2.3).
    eps : float
        O ``eps`` das LayerNorm.
    seed : int
        Semente dos pesos.
    dtype : str
        ``"float64"`` (padrão, para conferir gradientes) ou ``"float32"`` (mais rápido no treino).
    """

    vocab_size: int
    block_size: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int | None = None
    dropout: float = 0.0
    norm_first: bool = True
    residual: bool = True
    init_std: float = 0.02
    scaled_init: bool = True
    eps: float = 1e-5
    seed: int = 0
    dtype: str = "float64"

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "d_model", "n_heads", "n_layers"):
            check_dim(getattr(self, name), name)
        if self.d_ff is not None:
            check_dim(self.d_ff, "d_ff")
        if self.d_model % self.n_heads:
            raise ValueError(f"`n_heads`={self.n_heads} precisa dividir `d_model`={self.d_model}.")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"`dropout` precisa estar em [0, 1); recebido {self.dropout!r}.")
        if not float(self.init_std) > 0:
            raise ValueError(f"`init_std` precisa ser > 0; recebido {self.init_std!r}.")
        if np.dtype(self.dtype) not in (np.float32, np.float64):
            raise ValueError(f"`dtype` precisa ser 'float32' ou 'float64'; recebido {self.dtype!r}.")
        check_seed(self.seed)

    @property
    def hidden(self) -> int:
        """A largura da FFN (``d_ff`` ou 4·d_model)."""
        return self.d_ff if self.d_ff is not None else 4 * self.d_model


class GPTFeedForward(FeedForward):
    """A :class:`~atencao.feedforward.FeedForward` da Aula 4 com a GELU do GPT-2 (a forma com tanh).

    Mesmos pesos (``W_1`` (d_model, d_ff), ``b_1``, ``W_2`` (d_ff, d_model), ``b_2``), mesma convenção ``x @ W``.
    Fonte: Radford et al. (2019); Hendrycks e Gimpel (2016).
    """

    activation = "gelu_tanh"

    def __init__(self, W_1, b_1, W_2, b_2):  # noqa: D107 (pesos já sorteados pelo GPT)
        self.d_model, self.d_ff = W_1.shape
        self.seed = None
        self.W_1, self.b_1, self.W_2, self.b_2 = W_1, b_1, W_2, b_2

    def forward(self, x) -> np.ndarray:
        """``gelu_tanh(x W_1 + b_1) W_2 + b_2``: (..., n, d_model) → (..., n, d_model)."""
        return project(gelu_tanh(project(np.asarray(x, self.W_1.dtype), self.W_1, self.b_1)), self.W_2, self.b_2)

    __call__ = forward


class GPTBlock:
    """Um bloco do GPT: autoatenção multicabeça causal e FFN, com resíduo e LayerNorm (pré-LN por padrão).

    Attributes
    ----------
    attn : MultiHeadAttention (com vieses)
    ln1, ln2 : LayerNorm
    ffn : GPTFeedForward
    norm_first, residual : bool

    Fonte: Radford et al. (2019); Módulo 6, Aula 4, ``02-codigo`` (o ``TransformerEncoderBlock`` pré-LN).
    """

    def __init__(self, attn: MultiHeadAttention, ln1: LayerNorm, ln2: LayerNorm, ffn: GPTFeedForward,
                 norm_first: bool = True, residual: bool = True):
        self.attn, self.ln1, self.ln2, self.ffn = attn, ln1, ln2, ffn
        self.norm_first, self.residual = bool(norm_first), bool(residual)

    def __repr__(self) -> str:
        return (f"GPTBlock(d_model={self.attn.d_model}, n_heads={self.attn.n_heads}, d_ff={self.ffn.d_ff}, "
                f"{'pré-LN' if self.norm_first else 'pós-LN'}{'' if self.residual else ', sem resíduo'})")

    def _sublayer(self, x, ln, f):
        s = ln(x) if self.norm_first else x
        out, extra = f(s)
        z = x + out if self.residual else out
        return (z if self.norm_first else ln(z)), extra

    def forward(self, x, mask=None):
        """Passa ``x`` (..., n, d_model) pelo bloco (sem dropout); ``mask`` padrão = causal.

        Returns
        -------
        output : ndarray, forma (..., n, d_model)
        weights : ndarray, forma (..., n_heads, n, n), os pesos da autoatenção
        """
        x = np.asarray(x)
        mask = causal_mask(x.shape[-2]) if mask is None else mask
        x, weights = self._sublayer(x, self.ln1, lambda s: self.attn(s, mask=mask))
        x, _ = self._sublayer(x, self.ln2, lambda s: (self.ffn(s), None))
        return x, weights

    __call__ = forward


class GPT:
    """Um GPT pequeno em NumPy: ida, perda, volta completa e um passo de geração com KV cache.

    Parameters
    ----------
    config : GPTConfig

    Attributes
    ----------
    config : GPTConfig
    E : ndarray, forma (vocab_size, d_model)
        Embeddings dos tokens; também a camada de saída (``logits = h @ Eᵀ``, pesos amarrados).
    P : ndarray, forma (block_size, d_model)
        Embeddings das posições (aprendidos, como no GPT).
    blocks : list[GPTBlock]
    ln_f : LayerNorm
        A normalização final.
    params : dict[str, ndarray]
        Todos os pesos por nome (``"E"``, ``"P"``, ``"blocks.0.attn.W_q"``, …, ``"ln_f.bias"``): os mesmos
        arrays dos atributos acima.

    Fonte: Radford et al. (2019); Módulo 6, Aula 6, ``02-codigo``.
    """

    def __init__(self, config: GPTConfig):
        if not isinstance(config, GPTConfig):
            raise TypeError(f"`config` precisa ser um GPTConfig; recebido {type(config).__name__}.")
        self.config = c = config
        dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(c.seed)
        std = c.init_std
        std_res = std / np.sqrt(2 * c.n_layers) if c.scaled_init else std  # GPT-2, seção 2.3

        def normal(shape, s=std):
            return rng.normal(0.0, s, shape).astype(dtype)

        def zeros(n):
            return np.zeros(n, dtype)

        self.E = normal((c.vocab_size, c.d_model))
        self.P = normal((c.block_size, c.d_model))
        self.blocks = []
        d = c.d_model
        for _ in range(c.n_layers):
            attn = MultiHeadAttention.__new__(MultiHeadAttention)
            attn._set_sizes(d, c.n_heads)
            attn.seed = None
            attn.W_q, attn.W_k, attn.W_v = normal((d, d)), normal((d, d)), normal((d, d))
            attn.W_o = normal((d, d), std_res)  # soma no caminho residual: desvio menor
            attn.b_q, attn.b_k, attn.b_v, attn.b_o = zeros(d), zeros(d), zeros(d), zeros(d)
            ffn = GPTFeedForward(normal((d, c.hidden)), zeros(c.hidden), normal((c.hidden, d), std_res), zeros(d))
            ln1, ln2 = LayerNorm(d, c.eps, dtype), LayerNorm(d, c.eps, dtype)
            self.blocks.append(GPTBlock(attn, ln1, ln2, ffn, c.norm_first, c.residual))
        self.ln_f = LayerNorm(d, c.eps, dtype)
        self.params = self._collect_params()

    # ------------------------------------------------------------------ pesos
    def _collect_params(self) -> dict:
        params = {"E": self.E, "P": self.P}
        for i, b in enumerate(self.blocks):
            p = f"blocks.{i}."
            params.update({p + "ln1.weight": b.ln1.weight, p + "ln1.bias": b.ln1.bias})
            for name in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o"):
                params[p + "attn." + name] = getattr(b.attn, name)
            params.update({p + "ln2.weight": b.ln2.weight, p + "ln2.bias": b.ln2.bias})
            for name in ("W_1", "b_1", "W_2", "b_2"):
                params[p + "ffn." + name] = getattr(b.ffn, name)
        params.update({"ln_f.weight": self.ln_f.weight, "ln_f.bias": self.ln_f.bias})
        return params

    @property
    def n_params(self) -> int:
        """O número de pesos (``E`` contada uma vez, embora sirva à entrada e à saída)."""
        return int(sum(p.size for p in self.params.values()))

    def load_params(self, params: dict) -> None:
        """Copia ``params`` (nome → array, os nomes de :attr:`params`) para dentro do modelo, no lugar.

        Raises
        ------
        KeyError, ValueError
            Falta um peso ou a forma não é a do modelo.
        """
        for name, p in self.params.items():
            if name not in params:
                raise KeyError(f"Falta o peso `{name}` em `params`.")
            new = np.asarray(params[name])
            if new.shape != p.shape:
                raise ValueError(f"O peso `{name}` precisa ter forma {shape_str(p.shape)}; recebida "
                                 f"{shape_str(new.shape)}.")
            p[...] = new

    def __repr__(self) -> str:
        c = self.config
        return (f"GPT(vocab_size={c.vocab_size}, block_size={c.block_size}, d_model={c.d_model}, "
                f"n_heads={c.n_heads}, n_layers={c.n_layers}, d_ff={c.hidden}, "
                f"{self.n_params:,} pesos)".replace(",", ".").replace(". ", ", "))

    # ------------------------------------------------------------------ ida
    def _check_tokens(self, tokens, name: str = "tokens") -> np.ndarray:
        t = np.asarray(tokens)
        if t.dtype.kind not in "iu":
            raise TypeError(f"`{name}` precisa ser um array de inteiros (ids de tokens); recebido dtype {t.dtype}.")
        if t.ndim != 2:
            raise ValueError(f"`{name}` precisa ter forma (B, n); recebida {shape_str(t.shape)}.")
        if not 1 <= t.shape[1] <= self.config.block_size:
            raise ValueError(f"`{name}` precisa ter de 1 a block_size = {self.config.block_size} tokens por "
                             f"sequência; recebida forma {shape_str(t.shape)}.")
        if t.size and (t.min() < 0 or t.max() >= self.config.vocab_size):
            raise ValueError(f"`{name}` precisa ter ids em 0 … {self.config.vocab_size - 1}; recebido de "
                             f"{t.min()} a {t.max()}.")
        return t.astype(np.int64, copy=False)

    def _attn_forward(self, a: MultiHeadAttention, s, allowed):
        d = a.d_model
        W = np.concatenate((a.W_q, a.W_k, a.W_v), axis=1)  # (d_model, 3·d_model): as três projeções de uma vez
        b = np.concatenate((a.b_q, a.b_k, a.b_v))
        qkv = affine(s, W, b)  # (B, n, 3·d_model)
        Q = split_heads(qkv[..., :d], a.n_heads)  # (B, n_heads, n, d_k)
        K = split_heads(qkv[..., d:2 * d], a.n_heads)  # (B, n_heads, n, d_k)
        V = split_heads(qkv[..., 2 * d:], a.n_heads)  # (B, n_heads, n, d_k)
        scale = float(1.0 / np.sqrt(a.d_k))
        heads, A = attend(Q, K, V, np.broadcast_to(allowed, Q.shape[:-1] + (K.shape[-2],)), scale)
        concat = merge_heads(heads)  # (B, n, d_model)
        return affine(concat, a.W_o, a.b_o), {"s": s, "W": W, "Q": Q, "K": K, "V": V, "A": A, "concat": concat}

    def _attn_backward(self, a: MultiHeadAttention, dout, c) -> tuple[np.ndarray, dict]:
        d = a.d_model
        dconcat, dW_o, db_o = affine_backward(dout, c["concat"], a.W_o)  # (B, n, d_model)
        dQ, dK, dV = heads_attention_backward(split_heads(dconcat, a.n_heads), c["Q"], c["K"], c["V"], c["A"],
                                         float(1.0 / np.sqrt(a.d_k)))  # (B, n_heads, n, d_k) cada
        dqkv = np.concatenate((merge_heads(dQ), merge_heads(dK), merge_heads(dV)), axis=-1)  # (B, n, 3·d_model)
        ds, dW, db = affine_backward(dqkv, c["s"], c["W"])  # o mesmo s fez os três papéis: ds já é a soma
        grads = {"W_q": dW[:, :d], "b_q": db[:d], "W_k": dW[:, d:2 * d], "b_k": db[d:2 * d],
                 "W_v": dW[:, 2 * d:], "b_v": db[2 * d:], "W_o": dW_o, "b_o": db_o}
        return ds, grads

    def _sublayer_forward(self, x, ln: LayerNorm, f, drop):
        c = self.config
        s = layer_norm(x, ln.weight, ln.bias, c.eps) if c.norm_first else x
        out, inner = f(s)
        if drop is not None:
            out = out * drop
        z = x + out if c.residual else out
        y = z if c.norm_first else layer_norm(z, ln.weight, ln.bias, c.eps)
        return y, {"x": x, "z": z, "inner": inner, "drop": drop}

    def _sublayer_backward(self, dy, cache, ln: LayerNorm, f_backward, ln_backward):
        c = self.config
        if c.norm_first:
            dz = dy
        else:
            dz, dw, db = ln_backward(dy, cache["z"], ln.weight, c.eps)
        dout = dz * cache["drop"] if cache["drop"] is not None else dz
        ds, grads = f_backward(dout, cache["inner"])
        if c.norm_first:
            dx, dw, db = ln_backward(ds, cache["x"], ln.weight, c.eps)
        else:
            dx = ds
        if c.residual:
            dx = dx + dz
        return dx, grads, dw, db

    def forward(self, tokens, train: bool = False, rng: np.random.Generator | None = None):
        """A ida: ``tokens`` (B, n) → ``logits`` (B, n, vocab_size) e o ``cache`` que :meth:`backward` usa.

        Parameters
        ----------
        tokens : array_like de int, forma (B, n), com 1 ≤ n ≤ block_size
        train : bool
            Com ``True`` e ``config.dropout > 0``, sorteia as máscaras do dropout com ``rng``.
        rng : numpy.random.Generator, opcional
            Obrigatório com ``train=True`` e dropout.

        Returns
        -------
        logits : ndarray, forma (B, n, vocab_size), dtype do modelo
        cache : dict

        Raises
        ------
        TypeError, ValueError
            ``tokens`` que não são inteiros, forma diferente de (B, n), mais de ``block_size`` tokens, ids
            fora do vocabulário; ``train=True`` com dropout e sem ``rng``.
        """
        c = self.config
        tokens = self._check_tokens(tokens)
        p = c.dropout if train else 0.0
        if p > 0 and rng is None:
            raise ValueError("Com `train=True` e dropout > 0, passe `rng` (um np.random.default_rng(semente)).")
        dtype = self.E.dtype
        B, n = tokens.shape
        x = self.E[tokens] + self.P[:n]  # (B, n, d_model)
        drop0 = dropout_mask(rng, x.shape, p, dtype) if p > 0 else None
        if drop0 is not None:
            x = x * drop0
        allowed = causal_mask(n)  # (n, n), True = pode olhar
        caches = []
        for blk in self.blocks:
            d1 = dropout_mask(rng, x.shape, p, dtype) if p > 0 else None
            x, c1 = self._sublayer_forward(x, blk.ln1, lambda s, a=blk.attn: self._attn_forward(a, s, allowed), d1)
            d2 = dropout_mask(rng, x.shape, p, dtype) if p > 0 else None
            x, c2 = self._sublayer_forward(
                x, blk.ln2, lambda s, f=blk.ffn: ffn_forward(s, f.W_1, f.b_1, f.W_2, f.b_2), d2)
            caches.append((c1, c2))
        xf = layer_norm(x, self.ln_f.weight, self.ln_f.bias, c.eps)  # (B, n, d_model)
        logits = xf @ self.E.T  # (B, n, vocab_size)
        return logits, {"tokens": tokens, "drop0": drop0, "blocks": caches, "x_last": x, "xf": xf}

    __call__ = forward

    def loss(self, tokens, targets, cross_entropy=None) -> float:
        """A perda média (nats por token) de prever ``targets`` (B, n) a partir de ``tokens`` (B, n), sem dropout."""
        logits, _ = self.forward(tokens)
        return float((cross_entropy or _cross_entropy)(logits, np.asarray(targets))[0])

    # ------------------------------------------------------------------ volta
    def backward(self, cache: dict, dlogits, layer_norm_backward=None, input_grads: list | None = None) -> dict:
        """A volta inteira: ``dlogits`` (B, n, vocab_size) → gradientes de todos os pesos.

        Parameters
        ----------
        cache : dict
            O de :meth:`forward`.
        dlogits : ndarray, forma (B, n, vocab_size)
            O gradiente da perda em relação aos logits (o segundo valor de :func:`cross_entropy`).
        layer_norm_backward : callable, opcional
            Uma ``layer_norm_backward(dy, x, weight, eps) -> (dx, dweight, dbias)`` no lugar da da biblioteca
            (a do aluno, no projeto).
        input_grads : list, opcional
            Se dada, recebe ``∂L/∂x`` na entrada de cada bloco, (B, n, d_model), do último bloco para o primeiro
            (para a figura do fluxo do gradiente).

        Returns
        -------
        dict
            Os mesmos nomes e formas de :attr:`params`.

        Raises
        ------
        ValueError
            ``dlogits`` com forma diferente da dos logits.
        """
        c = self.config
        ln_backward = layer_norm_backward or layer_norm_backward_unchecked
        tokens, xf = cache["tokens"], cache["xf"]
        dlogits = np.asarray(dlogits, dtype=self.E.dtype)
        expected = tokens.shape + (c.vocab_size,)
        if dlogits.shape != expected:
            raise ValueError(f"`dlogits` precisa ter a forma dos logits, {shape_str(expected)}; recebida "
                             f"{shape_str(dlogits.shape)}.")
        grads = {}
        d = c.d_model
        dE_out = dlogits.reshape(-1, c.vocab_size).T @ xf.reshape(-1, d)  # (vocab, d_model): E como saída
        dxf = dlogits @ self.E  # (B, n, d_model)
        dx, grads["ln_f.weight"], grads["ln_f.bias"] = ln_backward(dxf, cache["x_last"], self.ln_f.weight, c.eps)
        for i in reversed(range(c.n_layers)):
            blk, (c1, c2) = self.blocks[i], cache["blocks"][i]
            p = f"blocks.{i}."
            f = blk.ffn

            def ffn_back(dout, inner, f=f):
                return ffn_backward(dout, inner, f.W_1, f.W_2)

            dx, g, grads[p + "ln2.weight"], grads[p + "ln2.bias"] = self._sublayer_backward(
                dx, c2, blk.ln2, ffn_back, ln_backward)
            grads.update({p + "ffn." + k: v for k, v in g.items()})
            dx, g, grads[p + "ln1.weight"], grads[p + "ln1.bias"] = self._sublayer_backward(
                dx, c1, blk.ln1, lambda dout, inner, a=blk.attn: self._attn_backward(a, dout, inner), ln_backward)
            grads.update({p + "attn." + k: v for k, v in g.items()})
            if input_grads is not None:
                input_grads.append(dx)
        if cache["drop0"] is not None:
            dx = dx * cache["drop0"]
        n = tokens.shape[1]
        grads["E"] = embedding_backward(dx, tokens, c.vocab_size) + dE_out
        grads["P"] = np.zeros_like(self.P)
        grads["P"][:n] = dx.sum(axis=0)
        return {name: grads[name] for name in self.params}

    def loss_and_grads(self, tokens, targets, train: bool = False, rng=None, cross_entropy=None,
                       layer_norm_backward=None) -> tuple[float, dict]:
        """Ida, perda e volta de uma vez: ``(perda em nats, gradientes)``.

        ``cross_entropy(logits, targets) -> (loss, dlogits)`` e ``layer_norm_backward`` podem ser as do aluno.
        Os argumentos ``train`` e ``rng`` são os de :meth:`forward`.
        """
        logits, cache = self.forward(tokens, train=train, rng=rng)
        loss, dlogits = (cross_entropy or _cross_entropy)(logits, np.asarray(targets))
        return float(loss), self.backward(cache, dlogits, layer_norm_backward=layer_norm_backward)

    # ------------------------------------------------------------------ geração
    def empty_cache(self) -> list:
        """Um KV cache vazio: para cada bloco, ``(K, V)`` de forma (n_heads, 0, d_k) (Aula 4, ``04-projeto``)."""
        c = self.config
        d_k = c.d_model // c.n_heads
        return [(np.zeros((c.n_heads, 0, d_k), self.E.dtype), np.zeros((c.n_heads, 0, d_k), self.E.dtype))
                for _ in self.blocks]

    def step(self, token: int, pos: int, kv_cache: list, attend_cached=None) -> np.ndarray:
        """Um token novo pelo modelo, com o KV cache (alterado no lugar): os logits (vocab_size,) do próximo.

        Parameters
        ----------
        token : int
            O id do token na posição ``pos``.
        pos : int
            A posição dele (0 … block_size − 1); o cache precisa ter exatamente ``pos`` tokens.
        kv_cache : list
            O de :meth:`empty_cache`, depois dos passos anteriores.
        attend_cached : callable, opcional
            ``attend_cached(attn, x_new, K_cache, V_cache) -> (saida, K, V)``, a função do projeto da Aula 4;
            padrão: :func:`atencao.sampling.attend_cached`.

        Raises
        ------
        ValueError
            ``pos`` fora do contexto ou diferente do número de tokens no cache.
        """
        from .sampling import attend_cached as _attend_cached

        c = self.config
        attend_fn = attend_cached or _attend_cached
        if not 0 <= pos < c.block_size or kv_cache[0][0].shape[1] != pos:
            raise ValueError(f"`pos` precisa ser o número de tokens já no cache ({kv_cache[0][0].shape[1]}) e menor "
                             f"que block_size = {c.block_size}; recebido {pos}.")
        x = self.E[[int(token)]] + self.P[pos:pos + 1]  # (1, d_model)
        for i, blk in enumerate(self.blocks):
            def attn_f(s, i=i, blk=blk):
                out, K, V = attend_fn(blk.attn, s, *kv_cache[i])
                kv_cache[i] = (K, V)
                return out, None

            x, _ = self._sublayer_forward(x, blk.ln1, attn_f, None)
            x, _ = self._sublayer_forward(x, blk.ln2, lambda s, f=blk.ffn: (f(s), None), None)
        return (layer_norm(x, self.ln_f.weight, self.ln_f.bias, c.eps) @ self.E.T)[0]  # (vocab_size,)
