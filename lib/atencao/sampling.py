"""Gerar texto com um GPT: o KV cache da Aula 4, a temperatura e o top-k.

A cada passo o modelo dá os logits do próximo token; daí:

- **guloso** (``temperature=0``): o token de maior logit;
- **temperatura** ``T``: ``softmax(logits / T)``; ``T < 1`` concentra a probabilidade nos tokens mais
  prováveis, ``T > 1`` espalha;
- **top-k**: só os ``k`` logits maiores ficam; os outros viram ``−∞`` **antes** da softmax, e a
  probabilidade se renormaliza entre os ``k``.

O contexto tem no máximo ``block_size`` tokens. Quando ele enche, a geração recomeça com os últimos
``block_size // 2`` tokens (o cache é refeito com eles); com ``use_cache=False`` o modelo é recalculado sobre
esses mesmos tokens, de modo que os dois jeitos fazem a mesma conta.

Fontes: Holtzman et al. (2020), seção 3 (temperatura e top-k); Fan, Lewis e Dauphin (2018), top-k; Módulo 6,
Aula 4 (``04-projeto``, o KV cache) e Aula 6 (``01-teoria`` e ``03-exercicios``).
"""

from __future__ import annotations

import numpy as np

from ._validation import shape_str
from .attention import softmax
from .multihead import merge_heads, split_heads

__all__ = ["next_token_probs", "sample_next", "attend_cached", "generate", "generate_text"]


def next_token_probs(logits, temperature: float = 1.0, top_k: int | None = None) -> np.ndarray:
    """As probabilidades do próximo token: ``softmax(logits / T)`` só entre os ``top_k`` maiores logits.

    Parameters
    ----------
    logits : array_like, forma (vocab,)
    temperature : float
        ``T > 0``; ``T = 0`` dá o guloso (probabilidade 1 no maior logit; no empate, o de menor id).
    top_k : int ou None
        Quantos tokens ficam (``None`` ou ≥ vocab = todos). No empate na fronteira, ficam todos os empatados.

    Returns
    -------
    ndarray de float64, forma (vocab,), somando 1

    Raises
    ------
    ValueError, TypeError
        ``logits`` que não são um vetor finito, ``temperature`` < 0, ``top_k`` < 1.

    Fonte: Holtzman et al. (2020), seção 3; Módulo 6, Aula 6, ``03-exercicios``.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)):
        raise ValueError(f"`logits` precisa ser um vetor (vocab,) de números finitos; recebida forma "
                         f"{shape_str(z.shape)}.")
    if isinstance(temperature, bool) or not temperature >= 0:
        raise ValueError(f"`temperature` precisa ser ≥ 0 (0 = guloso); recebido {temperature!r}.")
    if top_k is not None and (isinstance(top_k, bool) or int(top_k) != top_k or top_k < 1):
        raise ValueError(f"`top_k` precisa ser um inteiro ≥ 1 ou None; recebido {top_k!r}.")
    if temperature == 0:
        probs = np.zeros_like(z)
        probs[int(np.argmax(z))] = 1.0
        return probs
    if top_k is not None and top_k < z.size:
        kth = np.partition(z, -int(top_k))[-int(top_k)]  # o k-ésimo maior logit
        z = np.where(z >= kth, z, -np.inf)  # os outros saem antes da softmax
    return softmax(z / temperature)


def sample_next(logits, rng: np.random.Generator, temperature: float = 1.0, top_k: int | None = None,
                probs_fn=None) -> int:
    """Sorteia o próximo token com as probabilidades de :func:`next_token_probs` (ou de ``probs_fn``).

    ``probs_fn(logits, temperature, top_k) -> probs`` pode ser a do aluno. Com ``temperature=0``, devolve o
    maior logit sem sortear. O sorteio usa um número de ``rng`` e a soma acumulada (o mesmo número dá o
    mesmo token). Fonte: Módulo 6, Aula 6, ``02-codigo``.
    """
    probs = np.asarray((probs_fn or next_token_probs)(logits, temperature, top_k), dtype=np.float64)
    if temperature == 0:
        return int(np.argmax(probs))
    u = rng.random() * probs.sum()
    return int(min(np.searchsorted(np.cumsum(probs), u, side="right"), probs.size - 1))


def attend_cached(attn, x_new, K_cache, V_cache):
    """A atenção de **um** token novo com o KV cache (a função do projeto da Aula 4).

    Parameters
    ----------
    attn : MultiHeadAttention
    x_new : ndarray, forma (1, d_model)
        A entrada da atenção para o token novo (já normalizada pelo bloco).
    K_cache, V_cache : ndarray, forma (n_heads, t, d_k)
        As chaves e os valores dos ``t`` tokens anteriores.

    Returns
    -------
    saida : ndarray, forma (1, d_model)
    K, V : ndarray, forma (n_heads, t + 1, d_k)
        Os caches com o token novo no fim.

    Fonte: Módulo 6, Aula 4, ``04-projeto`` (seção 2).
    """
    q = split_heads(x_new @ attn.W_q + attn.b_q, attn.n_heads)  # (n_heads, 1, d_k)
    k = split_heads(x_new @ attn.W_k + attn.b_k, attn.n_heads)  # (n_heads, 1, d_k)
    v = split_heads(x_new @ attn.W_v + attn.b_v, attn.n_heads)  # (n_heads, 1, d_k)
    K = np.concatenate([K_cache, k], axis=1)  # (n_heads, t + 1, d_k)
    V = np.concatenate([V_cache, v], axis=1)  # (n_heads, t + 1, d_k)
    weights = softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(attn.d_k))  # (n_heads, 1, t + 1)
    return merge_heads(weights @ V) @ attn.W_o + attn.b_o, K, V  # (1, d_model)


def _check_prompt(model, prompt_ids) -> list:
    ids = [int(i) for i in np.asarray(prompt_ids).reshape(-1)]
    if not ids:
        raise ValueError("`prompt_ids` precisa ter pelo menos um token.")
    if min(ids) < 0 or max(ids) >= model.config.vocab_size:
        raise ValueError(f"`prompt_ids` precisa ter ids em 0 … {model.config.vocab_size - 1}.")
    return ids


def generate(model, prompt_ids, n_new: int, temperature: float = 1.0, top_k: int | None = None, seed: int = 0,
             use_cache: bool = True, attend_cached=None, probs_fn=None, return_logits: bool = False):
    """Gera ``n_new`` tokens depois de ``prompt_ids``, um por vez.

    Parameters
    ----------
    model : GPT
    prompt_ids : sequência de int
        O começo (pelo menos um token). Só os últimos ``block_size`` entram no contexto.
    n_new : int
        Quantos tokens gerar (≥ 0).
    temperature, top_k
        Como em :func:`next_token_probs` (``temperature=0`` = guloso).
    seed : int
        A semente do sorteio (a mesma semente dá o mesmo texto).
    use_cache : bool
        ``True``: o KV cache da Aula 4 (:meth:`GPT.step`); ``False``: recalcula o modelo sobre o contexto
        inteiro a cada token. Os dois dão os mesmos tokens.
    attend_cached, probs_fn : callable, opcionais
        A ``attend_cached`` da Aula 4 e a ``next_token_probs`` do aluno, no lugar das da biblioteca.
    return_logits : bool
        Se ``True``, devolve também os logits de cada passo, (n_new, vocab).

    Returns
    -------
    ids : ndarray de int64, forma (len(prompt) + n_new,)
    logits : ndarray, forma (n_new, vocab) (só com ``return_logits``)

    Raises
    ------
    ValueError
        Prompt vazio ou com ids fora do vocabulário; ``n_new`` < 0; ``temperature``/``top_k`` inválidos.

    Fonte: Módulo 6, Aula 4 (``04-projeto``) e Aula 6 (``02-codigo``).
    """
    ids = _check_prompt(model, prompt_ids)
    if isinstance(n_new, bool) or int(n_new) != n_new or n_new < 0:
        raise ValueError(f"`n_new` precisa ser um inteiro ≥ 0; recebido {n_new!r}.")
    block = model.config.block_size
    rng = np.random.default_rng(seed)
    start = max(0, len(ids) - block)  # o contexto começa aqui
    kv, filled = None, 0  # com cache: quantos tokens de ids[start:] já estão no cache
    all_logits = []
    for _ in range(int(n_new)):
        if len(ids) - start > block:  # o contexto encheu: recomeça com a metade final
            start = len(ids) - block // 2
            kv = None
        context = ids[start:]
        if use_cache:
            if kv is None:
                kv, filled = model.empty_cache(), 0
            while filled < len(context):
                logits = model.step(context[filled], filled, kv, attend_cached)
                filled += 1
        else:
            logits = model.forward(np.array([context]))[0][0, -1]
        all_logits.append(logits)
        ids.append(sample_next(logits, rng, temperature, top_k, probs_fn))
    out = np.array(ids, dtype=np.int64)
    if return_logits:
        return out, (np.array(all_logits) if all_logits else np.zeros((0, model.config.vocab_size)))
    return out


def generate_text(model, tokenizer, prompt: str, n_new: int, **kwargs) -> str:
    """:func:`generate` com texto: codifica ``prompt`` com ``tokenizer`` e devolve o texto inteiro (com o prompt).

    Os outros argumentos vão para :func:`generate`. Fonte: Módulo 6, Aula 6, ``02-codigo``.
    """
    return tokenizer.decode(generate(model, tokenizer.encode(prompt), n_new, **kwargs))
