"""O que os exploradores mostram, calculado sem gráfico e sem widget (a camada testável sozinha).

- :func:`explorer_view` — Aulas 1 e 2: frase + controles → :class:`ExplorerView`, com os embeddings de
  :func:`explorer_embeddings` e a atenção do curso (sem projeções, uma cabeça ou multicabeça);
- :func:`model_view` — Aula 3: a saída do multilingual-e5-small + camada, cabeça e consulta → a mesma
  :class:`ExplorerView`.

Quem desenha é :mod:`atencao.rendering`; quem liga os controles é :mod:`atencao.explorer_widget`.

Embeddings para qualquer frase (:func:`explorer_embeddings`): palavras do vocabulário feito à mão
(:data:`atencao.HAND_MADE_VECTORS`) usam os seus 6 números; as demais ganham um vetor
pseudoaleatório fixo (:func:`atencao.embeddings.word_vector`) nas outras coordenadas, com o mesmo
comprimento típico. Assim palavras conhecidas mostram similaridades de verdade e palavras novas não
criam semelhanças falsas com elas.

Fonte: Módulo 6, Aula 1 (``04-projeto``), Aula 2 (``05-projeto``) e Aula 3 (``04-projeto``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._validation import check_dim, check_positive, nfc
from .attention import scaled_dot_product_attention
from .embeddings import FEATURES, HAND_MADE_VECTORS, VECTOR_SCALE, tokenize, word_vector
from .masks import causal_mask
from .multihead import MultiHeadAttention
from .positional import positional_encoding
from .projections import SelfAttention

__all__ = ["MODES", "ExplorerView", "explorer_embeddings", "explorer_view", "model_view"]

#: Modos do explorador: chave → rótulo mostrado no botão.
MODES = {
    "aula1": "Aula 1: sem projeções",
    "cabeca": "Aula 2: uma cabeça (Q, K, V)",
    "multi": "Multicabeça",
}

_N_FEATURES = len(FEATURES)


@dataclass
class ExplorerView:
    """Tudo o que um explorador mostra, já calculado.

    Attributes
    ----------
    tokens : list of str
    weights : ndarray, forma (n_heads, n, n)
        Pesos de todas as cabeças (uma só nos modos sem multicabeça).
    shown : ndarray, forma (n, n) ou (n_heads, n, n)
        O que vai para o mapa de calor: uma cabeça, a média, ou todas.
    query : int
        Índice do token em foco; ``row`` (n,) é a linha dele em ``shown`` (média, se forem todas).
    top : list of (str, float)
        Os ``top_k`` tokens mais atendidos pela consulta (nenhum bloqueado pela máscara).
    output : ndarray, forma (d,)
        O vetor que a consulta produz: a soma dos valores ponderada por ``row`` (no modo
        multicabeça, a saída final depois de W_o; no modelo, o estado oculto da camada).
    title : str
    allowed : ndarray de bool, forma (n, n), ou None
        A máscara usada (``True`` = pode olhar); ``None`` sem máscara.
    settings : dict
        Os argumentos que produziram esta visão (os valores dos controles).
    """

    tokens: list
    weights: np.ndarray
    shown: np.ndarray
    query: int
    row: np.ndarray
    top: list
    output: np.ndarray
    title: str
    allowed: np.ndarray | None = None
    settings: dict = field(default_factory=dict)

    @property
    def blocked_rows(self) -> np.ndarray:
        """bool, forma (n,): linhas em que a máscara bloqueia **todas** as chaves.

        Uma linha assim (por exemplo, a consulta de um token de preenchimento) tem pesos 0 e saída 0
        (veja :func:`atencao.scaled_dot_product_attention`): não há "maior peso" a destacar.
        """
        if self.allowed is None:
            return np.zeros(len(self.tokens), dtype=bool)
        return ~np.asarray(self.allowed, dtype=bool).any(axis=-1)


def explorer_embeddings(tokens, d_model: int = 16, seed: int = 0) -> np.ndarray:
    """Embeddings (n, d_model) para qualquer lista de tokens (veja a docstring do módulo).

    Raises
    ------
    ValueError
        Se ``d_model`` for menor que 7 (6 coordenadas feitas à mão + pelo menos 1 pseudoaleatória).
    """
    d_model = check_dim(d_model, "d_model")
    if d_model <= _N_FEATURES:
        raise ValueError(f"`d_model` precisa ser maior que {_N_FEATURES}; recebido {d_model}.")
    X = np.zeros((len(tokens), d_model))
    d_rest = d_model - _N_FEATURES
    for i, t in enumerate(nfc(str(t)) for t in tokens):  # "não" decomposto (NFD) acha o vetor de "não"
        if t in HAND_MADE_VECTORS:
            X[i, :_N_FEATURES] = HAND_MADE_VECTORS[t]
        else:
            X[i, _N_FEATURES:] = word_vector(t, d_rest, seed) * (VECTOR_SCALE / np.sqrt(d_rest))
    return X


def top_tokens(tokens: list, row: np.ndarray, k: int, allowed=None) -> list:
    """Os ``k`` tokens de maior peso numa linha de atenção, ``[(token, peso), ...]``; os bloqueados
    pela máscara (``allowed`` falso) não entram."""
    order = [j for j in np.argsort(-row, kind="stable") if allowed is None or allowed[j]]
    return [(tokens[j], float(row[j])) for j in order[:k]]


def _check_query(query, n: int) -> None:
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < n:
        raise ValueError(f"`query` precisa ser um índice de 0 a {n - 1} (a frase tem {n} tokens); recebido {query!r}.")


def _explorer_layer(mode: str, d_model: int, n_heads: int, seed: int) -> tuple:
    """A camada de um modo do explorador: ``(camada ou None, d_k, rótulo)``; ``None`` é a Aula 1 (Q = K = V = X)."""
    if mode == "aula1":
        return None, d_model, "sem projeções (Q = K = V = X)"
    if mode == "cabeca":
        layer = SelfAttention(d_model, d_model // 2, seed=seed)
        return layer, layer.d_k, f"uma cabeça, d_k = {layer.d_k}"
    layer = MultiHeadAttention(d_model, n_heads, seed=seed)
    return layer, layer.d_k, f"{n_heads} cabeças, d_k = {layer.d_k}"


def _shown_heads(W: np.ndarray, mode: str, head) -> tuple[np.ndarray, str]:
    """Os pesos mostrados (``W``: (n_heads, n, n)) e o rótulo deles: a média, todas as cabeças ou uma só.

    Raises
    ------
    ValueError
        ``head`` que não seja ``"media"``, ``"todas"`` nem o número de uma cabeça.
    """
    n_h = W.shape[0]
    if mode != "multi" or head == "media":
        return W.mean(axis=0), ("média das cabeças" if mode == "multi" else "")
    if head == "todas":
        return W, "todas as cabeças"
    if isinstance(head, (int, np.integer)) and not isinstance(head, bool) and 0 <= head < n_h:
        return W[head], f"cabeça {head}"
    raise ValueError(f"`head` precisa ser 'media', 'todas' ou um número de 0 a {n_h - 1}; recebido {head!r}.")


def explorer_view(sentence: str, mode: str = "aula1", causal: bool = False, sqrt_dk: bool = True,
                  temperature: float = 1.0, head="media", query: int = 0, top_k: int = 3, n_heads: int = 4,
                  d_model: int = 16, seed: int = 0, positions: bool = False) -> ExplorerView:
    """Calcula o estado do explorador das Aulas 1, 2 e 4 (a função por trás de todos os controles).

    Parameters
    ----------
    sentence : str
        Qualquer frase; os tokens saem de :func:`atencao.tokenize`.
    mode : {"aula1", "cabeca", "multi"}
        Sem projeções (Q = K = V = X); uma cabeça com W_q, W_k, W_v; ou ``n_heads`` cabeças.
    causal : bool
        Aplica :func:`atencao.causal_mask` (cada token só olha para si e para os anteriores).
    sqrt_dk : bool
        A caixa "dividir por √d_k": divide as pontuações por sqrt(d_k) (desligue para ver a softmax saturar).
    temperature : float
        Divide as pontuações (0.1 a 10 no controle deslizante). Os dois controles viram o ``scale`` da
        atenção num lugar só: ``scale = 1 / (temperature · sqrt(d_k))`` (ou ``1 / temperature`` sem a divisão).
    head : int, "media" ou "todas"
        No modo multicabeça: uma cabeça, a média das cabeças, ou todas lado a lado.
    query : int
        Índice do token em foco (0 a n-1).
    top_k : int
        Quantos tokens mais atendidos listar.
    n_heads, d_model, seed : int
        Tamanho e semente dos pesos (sorteados, não treinados).
    positions : bool
        A caixa "somar posições": soma :func:`atencao.positional_encoding` (n, d_model) aos embeddings antes
        da atenção (Aula 4). Sem ela, duas palavras iguais têm linhas de atenção iguais.

    Returns
    -------
    ExplorerView

    Raises
    ------
    ValueError
        Frase sem palavras, modo ou cabeça inexistentes, consulta fora da frase, temperatura ≤ 0.
    TypeError
        ``temperature`` que não seja número, ``sqrt_dk`` ou ``positions`` que não sejam ``True``/``False``.

    Fonte: Módulo 6, Aula 1 (``04-projeto``), Aula 2 (``05-projeto``) e Aula 4 (``02-codigo``, seção 2).
    """
    if mode not in MODES:
        raise ValueError(f"`mode` precisa ser um de {list(MODES)}; recebido {mode!r}.")
    tokens = tokenize(sentence)
    n = len(tokens)
    _check_query(query, n)
    temperature = check_positive(temperature, "temperature")
    for name, value in (("sqrt_dk", sqrt_dk), ("positions", positions)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"`{name}` precisa ser True ou False; recebido {value!r}.")
    top_k = check_dim(top_k, "top_k")
    X = explorer_embeddings(tokens, d_model, seed)  # (n, d_model)
    if positions:
        X = X + positional_encoding(n, X.shape[1])  # a mesma palavra em outra posição vira outro vetor
    mask = causal_mask(n) if causal else None
    layer, d_k, label = _explorer_layer(mode, d_model, n_heads, seed)
    # os dois controles viram o fator das pontuações aqui, e só aqui: scale = 1 / (temperatura · √d_k)
    scale = 1.0 / (temperature * (np.sqrt(d_k) if sqrt_dk else 1.0))
    if layer is None:
        out, W = scaled_dot_product_attention(X, X, X, mask=mask, scale=scale)
    else:
        out, W = layer(X, mask=mask, scale=scale)
    W = W.reshape(-1, n, n)  # (n_heads, n, n): uma cabeça só, fora do modo multicabeça
    shown, head_label = _shown_heads(W, mode, head)
    row = (shown if shown.ndim == 2 else shown.mean(axis=0))[query]
    top = top_tokens(tokens, row, top_k, None if mask is None else mask[query])
    parts = [label] + ([head_label] if head_label else [])
    parts += ["com posições (PE)"] if positions else []
    parts += ["máscara causal"] if causal else []
    parts += [] if sqrt_dk else ["SEM ÷√d_k"]
    parts += [f"temperatura {temperature:.2g}"] if temperature != 1 else []
    settings = dict(sentence=sentence, mode=mode, causal=causal, sqrt_dk=sqrt_dk, temperature=temperature, head=head,
                    query=query, top_k=top_k, n_heads=n_heads, d_model=d_model, seed=seed, positions=bool(positions))
    return ExplorerView(tokens, W, shown, query, row, top, out[query], " · ".join(parts), mask, settings)


def model_view(encoder, sentence: str, layer: int = 0, head="media", query: int = 0, top_k: int = 3,
               output=None) -> ExplorerView:
    """Estado do explorador para uma camada e uma cabeça do modelo da Aula 3.

    Parameters
    ----------
    encoder : atencao.bert.BertEncoder
    sentence : str
    layer : int
        0 a n_layers − 1.
    head : int ou "media"
    query : int
        Índice do token em foco (as peças incluem ``<s>`` e ``</s>``).
    top_k : int
    output : atencao.bert.EncoderOutput, opcional
        Resultado já calculado de ``encoder(sentence)`` (evita recalcular).

    Returns
    -------
    ExplorerView
        ``weights`` (n_heads, n, n) da camada; ``output`` é o estado oculto da consulta depois dela
        (float32, ``d_model`` coordenadas).

    Raises
    ------
    ValueError
        Camada, cabeça ou consulta fora do intervalo.

    Fonte: Módulo 6, Aula 3, ``04-projeto``.
    """
    out = output if output is not None else encoder(sentence)
    n_layers, n_heads, n, _ = out.attentions.shape
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n_layers:
        raise ValueError(f"`layer` precisa ser de 0 a {n_layers - 1}; recebido {layer!r}.")
    _check_query(query, n)
    W = out.attentions[layer]  # (n_heads, n, n)
    if head == "media":
        shown, label = W.mean(axis=0), "média das cabeças"
    elif isinstance(head, (int, np.integer)) and 0 <= head < n_heads:
        shown, label = W[head], f"cabeça {head}"
    else:
        raise ValueError(f"`head` precisa ser 'media' ou de 0 a {n_heads - 1}; recebido {head!r}.")
    row = shown[query]
    top = top_tokens(out.tokens, row, check_dim(top_k, "top_k"))
    title = f"multilingual-e5-small · camada {layer} · {label}"
    settings = dict(sentence=sentence, layer=layer, head=head, query=query, top_k=top_k)
    return ExplorerView(out.tokens, W, shown, query, row, top, out.hidden_states[layer + 1][query], title, None,
                        settings)
