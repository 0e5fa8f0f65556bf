"""Um modelo mínimo de atenção treinado em NumPy, em tarefas de brinquedo de padrão conhecido (Aula 5).

O modelo tem um bloco de atenção de uma cabeça, sem camada feed-forward e sem conexão residual, para que a
resposta só possa vir da atenção:

    x = E[tokens] + P                    # (B, n, d_model): embedding do token + posição aprendida
    Q, K, V = x W_q, x W_k, x W_v        # (B, n, d_k)
    O, A = atenção(Q, K, V, máscara)     # O: (B, n, d_k), A: (B, n, n)
    logits = O W_out                     # (B, n, vocab)
    perda = entropia cruzada média de logits contra o token-alvo de cada posição

Em cada tarefa o alvo da posição ``i`` é o token de uma posição ``j(i)`` conhecida de antemão (a anterior, a
espelhada, a primeira...). Como ``O`` é uma média dos valores, o modelo só acerta se a linha ``i`` da matriz de
atenção puser o peso em ``j(i)``: o padrão "certo" é conhecido, e dá para vê-lo surgir.

Fontes: Vaswani et al. (2017); Olsson et al. (2022), para a ideia de ler o que o treino escreve nas matrizes
de atenção; Módulo 6, Aula 5, ``04-projeto``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ._validation import check_dim, check_seed, shape_str
from .attention import attend
from .backward import attention_backward as _library_attention_backward
from .masks import causal_mask
from .optim import Adam

__all__ = ["Task", "TASKS", "make_task", "TinyAttentionModel", "train", "train_torch", "TrainingRun", "pattern_score",
           "per_example"]


@dataclass(frozen=True)
class Task:
    """Uma tarefa de brinquedo: o alvo da posição ``i`` é o token da posição ``source[i]``.

    Attributes
    ----------
    name : str
        Nome curto (ex.: ``"anterior"``).
    description : str
        Uma frase em português.
    source : tuple[int, ...]
        ``source[i]`` = a posição de onde vem o alvo da posição ``i`` (o padrão de atenção esperado).
    causal : bool
        Se ``True``, o modelo usa a máscara causal (cada posição só olha para trás); então
        ``source[i] ≤ i`` para todo ``i``.
    """

    name: str
    description: str
    source: tuple
    causal: bool = False

    @property
    def n(self) -> int:
        return len(self.source)

    def expected_pattern(self) -> np.ndarray:
        """A matriz de atenção esperada (n, n): 1 em ``(i, source[i])``, 0 no resto."""
        pattern = np.zeros((self.n, self.n))
        pattern[np.arange(self.n), self.source] = 1.0
        return pattern

    def mask(self) -> np.ndarray | None:
        return causal_mask(self.n) if self.causal else None

    def batch(self, rng: np.random.Generator, batch_size: int, vocab: int) -> tuple[np.ndarray, np.ndarray]:
        """Sorteia ``batch_size`` sequências de tokens em ``0 … vocab−1``; devolve ``(tokens, targets)``,
        as duas de forma (batch_size, n) e tipo inteiro."""
        tokens = rng.integers(0, vocab, size=(batch_size, self.n))
        return tokens, tokens[:, list(self.source)]


def make_task(name: str, description: str, source, causal: bool = False) -> Task:
    """Cria uma :class:`Task` conferindo ``source`` (posições válidas; com ``causal``, nada à frente).

    Raises
    ------
    TypeError
        ``source`` que não é uma lista (ou tupla, ou array) de posições inteiras: texto, ``None``, números
        quebrados.
    ValueError
        ``source`` vazio, com posição fora de ``0 … n−1`` ou, com ``causal=True``, com ``source[i] > i``.
    """
    source = _positions(source)
    n = len(source)
    if n == 0 or any(not 0 <= j < n for j in source):
        raise ValueError(f"`source` precisa ter posições entre 0 e n−1 = {n - 1}; recebido {list(source)}.")
    frente = [(i, j) for i, j in enumerate(source) if j > i]
    if causal and frente:
        i, j = frente[0]
        raise ValueError(f"Com `causal=True`, cada posição só pode olhar para trás (source[i] ≤ i), mas source[{i}] = "
                         f"{j} olha para a frente; recebido {list(source)}. Use causal=False para olhar para os dois "
                         "lados.")
    return Task(name, description, source, causal)


def _positions(source) -> tuple:
    """``source`` como uma tupla de posições inteiras, ou ``TypeError`` dizendo o que veio."""
    import numbers

    if isinstance(source, (str, bytes)) or not hasattr(source, "__iter__"):
        raise TypeError("`source` precisa ser uma lista de posições inteiras (ex.: [0, 0, 1, 2, 3, 4, 5, 6]); "
                        f"recebido {type(source).__name__} {source!r:.60}.")
    source = list(source)
    quebrados = [j for j in source if isinstance(j, bool) or not isinstance(j, numbers.Integral)]
    if quebrados:
        raise TypeError(f"`source` precisa ter só posições inteiras (de 0 a n−1); recebido {quebrados[0]!r} entre "
                        f"elas.")
    return tuple(int(j) for j in source)


class _Tasks(dict):
    """As tarefas prontas; um nome desconhecido diz quais existem."""

    def __missing__(self, nome):
        raise KeyError(f"tarefa desconhecida: {nome!r}; as prontas são {', '.join(map(repr, self))} (ou crie uma "
                       "com make_task)")


def _tasks(n: int = 8) -> dict:
    return _Tasks({
        "anterior": make_task("anterior", "o alvo de cada posição é o token anterior (a primeira repete o seu)",
                              [0] + list(range(n - 1)), causal=True),
        "inverter": make_task("inverter", "o alvo da posição i é o token da posição n−1−i (a sequência ao contrário)",
                              list(range(n - 1, -1, -1))),
        "primeiro": make_task("primeiro", "o alvo de toda posição é o primeiro token", [0] * n, causal=True),
    })


#: As tarefas prontas, com n = 8 posições.
TASKS = _tasks()


class TinyAttentionModel:
    """Embedding + posições aprendidas + uma cabeça de atenção + leitura linear (veja o topo do módulo).

    Parameters
    ----------
    vocab : int
        Número de tokens diferentes.
    n : int
        Comprimento das sequências (número de posições aprendidas).
    d_model, d_k : int
        Dimensões do embedding e da cabeça.
    seed : int
        Semente do sorteio dos pesos.

    Attributes
    ----------
    params : dict[str, ndarray de float64]
        ``E`` (vocab, d_model), ``P`` (n, d_model), ``W_q``, ``W_k``, ``W_v`` (d_model, d_k), ``W_out``
        (d_k, vocab). ``W_q`` e ``W_k`` começam pequenos (desvio 0,01), de modo que a atenção começa
        quase uniforme.

    Raises
    ------
    TypeError, ValueError
        Dimensões que não são inteiros ≥ 1; semente que não é inteiro ≥ 0.

    Fonte: Módulo 6, Aula 5, ``04-projeto``.
    """

    def __init__(self, vocab: int = 8, n: int = 8, d_model: int = 16, d_k: int = 16, seed: int = 0):
        self.vocab, self.n = check_dim(vocab, "vocab"), check_dim(n, "n")
        self.d_model, self.d_k = check_dim(d_model, "d_model"), check_dim(d_k, "d_k")
        rng = np.random.default_rng(check_seed(seed))
        self.params = {
            "E": rng.normal(0, 1, (vocab, d_model)),
            "P": rng.normal(0, 1, (n, d_model)),
            "W_q": rng.normal(0, 0.01, (d_model, d_k)),
            "W_k": rng.normal(0, 0.01, (d_model, d_k)),
            "W_v": rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_k)),
            "W_out": rng.normal(0, 1 / np.sqrt(d_k), (d_k, vocab)),
        }

    def __repr__(self) -> str:
        return f"TinyAttentionModel(vocab={self.vocab}, n={self.n}, d_model={self.d_model}, d_k={self.d_k})"

    def _check_tokens(self, tokens) -> np.ndarray:
        tokens = np.asarray(tokens)
        if tokens.ndim != 2 or tokens.shape[1] != self.n or not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError(f"`tokens` precisa ser uma matriz de inteiros (batch, n={self.n}); recebida forma "
                             f"{shape_str(tokens.shape)}, tipo {tokens.dtype}.")
        if tokens.min() < 0 or tokens.max() >= self.vocab:
            raise ValueError(f"`tokens` precisam estar entre 0 e vocab−1 = {self.vocab - 1}.")
        return tokens

    def forward(self, tokens, mask=None) -> tuple[np.ndarray, dict]:
        """``tokens`` (B, n) inteiros → ``logits`` (B, n, vocab) e o ``cache`` do forward (com ``cache["A"]``,
        os pesos de atenção (B, n, n))."""
        tokens = self._check_tokens(tokens)
        p = self.params
        x = p["E"][tokens] + p["P"]  # (B, n, d_model)
        Q, K, V = x @ p["W_q"], x @ p["W_k"], x @ p["W_v"]  # (B, n, d_k)
        allowed = None if mask is None else np.broadcast_to(mask, Q.shape[:-1] + (self.n,))
        out, A = attend(Q, K, V, allowed)  # out: (B, n, d_k), A: (B, n, n)
        logits = out @ p["W_out"]  # (B, n, vocab)
        return logits, {"tokens": tokens, "x": x, "Q": Q, "K": K, "V": V, "O": out, "A": A}

    @staticmethod
    def loss(logits: np.ndarray, targets) -> tuple[float, np.ndarray]:
        """Entropia cruzada média e o seu gradiente em relação aos ``logits``: ``(softmax − one-hot) / (B·n)``."""
        z = logits - logits.max(axis=-1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # (B, n, vocab)
        targets = np.asarray(targets)
        picked = np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # (B, n)
        dlogits = np.exp(logp)
        np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], -1) - 1, -1)
        return float(-picked.mean()), dlogits / picked.size

    def backward(self, cache: dict, dlogits: np.ndarray,
                 attention_backward: Callable = _library_attention_backward) -> dict:
        """Gradientes de todos os ``params`` dado ``dlogits`` (B, n, vocab).

        ``attention_backward(dO, Q, K, V, weights)`` é a função que atravessa a atenção; o padrão é a da
        biblioteca, e o ``04-projeto`` passa a do aluno.
        """
        p = self.params
        grads = {"W_out": cache["O"].reshape(-1, self.d_k).T @ dlogits.reshape(-1, self.vocab)}
        dO = dlogits @ p["W_out"].T  # (B, n, d_k)
        dQ, dK, dV = attention_backward(dO, cache["Q"], cache["K"], cache["V"], cache["A"])
        flat_x = cache["x"].reshape(-1, self.d_model)  # (B·n, d_model)
        dx = np.zeros_like(cache["x"])
        for name, dY in (("W_q", dQ), ("W_k", dK), ("W_v", dV)):
            dY = np.asarray(dY, dtype=np.float64)
            grads[name] = flat_x.T @ dY.reshape(-1, self.d_k)
            dx += dY @ p[name].T  # x fez os três papéis: os três gradientes se somam
        grads["P"] = dx.sum(axis=0)  # a mesma posição em todo o lote
        grads["E"] = np.zeros_like(p["E"])
        np.add.at(grads["E"], cache["tokens"], dx)  # cada token recebe o gradiente de onde apareceu
        return grads


def pattern_score(weights, task: Task) -> float:
    """Peso médio que a atenção põe na posição esperada: 1 = o padrão perfeito; ≈ 1/n no começo (uniforme).

    ``weights`` tem forma (..., n, n). Fonte: Módulo 6, Aula 5, ``04-projeto``.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape[-2:] != (task.n, task.n):
        raise ValueError(f"`weights` precisa ter forma (..., {task.n}, {task.n}); recebida {shape_str(weights.shape)}.")
    return float(weights[..., np.arange(task.n), list(task.source)].mean())


@dataclass
class TrainingRun:
    """O registro de um treino: a perda de cada passo e a matriz de atenção média em alguns passos."""

    task: Task
    losses: list = field(default_factory=list)  # losses[k]: a perda do lote do passo k, antes da atualização dele
    steps: list = field(default_factory=list)  # os passos em que a atenção foi guardada (o último: len(losses) − 1)
    snapshots: list = field(default_factory=list)  # (n, n) cada: a atenção média no lote fixo, no passo steps[i]


def train(model: TinyAttentionModel, task: Task, steps: int = 300, batch_size: int = 32, lr: float = 0.03,
          seed: int = 0, every: int = 10, attention_backward: Callable = _library_attention_backward,
          batches=None) -> TrainingRun:
    """Treina ``model`` em ``task`` com Adam e devolve o :class:`TrainingRun`.

    Parameters
    ----------
    model : TinyAttentionModel
    task : Task
        ``task.n`` precisa ser ``model.n``.
    steps, batch_size : int
    lr : float
        Taxa do Adam.
    seed : int
        Semente dos lotes sorteados (o mesmo ``seed``, os mesmos lotes).
    every : int
        Guarda a atenção média (sobre um lote fixo de 64 sequências) a cada ``every`` passos, a partir do passo 0,
        e no último passo (``steps − 1``). A atenção guardada no passo ``k`` é a do modelo que calculou
        ``losses[k]`` (antes da atualização desse passo): a figura e a curva de perda falam do mesmo modelo.
    attention_backward : callable
        O backward pela atenção (padrão: o da biblioteca).
    batches : lista de (tokens, targets), opcional
        Lotes prontos (um por passo), em vez de sorteá-los.

    Raises
    ------
    TypeError
        ``model`` que não é um :class:`TinyAttentionModel`, ou ``task`` que não é uma :class:`Task` (o nome
        ``"anterior"`` em vez de ``TASKS["anterior"]``).
    ValueError
        ``task.n`` diferente de ``model.n``; dimensões inválidas; a perda virou NaN ou infinito (um backward que
        devolve NaN, ou ``lr`` grande demais): o treino para no passo em que isso aconteceu.

    Fonte: Módulo 6, Aula 5, ``04-projeto``.
    """
    if not isinstance(model, TinyAttentionModel):
        raise TypeError(f"`model` precisa ser um TinyAttentionModel; recebido {type(model).__name__}.")
    if not isinstance(task, Task):
        pronta = isinstance(task, str) and task in TASKS
        dica = f" (use TASKS[{task!r}])" if pronta else " (use TASKS[...] ou make_task)"
        raise TypeError(f"`task` precisa ser uma tarefa{dica}; recebido {type(task).__name__} {task!r:.60}.")
    if task.n != model.n:
        raise ValueError(f"A tarefa tem n={task.n} posições e o modelo, n={model.n}: precisam ser iguais.")
    steps, batch_size, every = check_dim(steps, "steps"), check_dim(batch_size, "batch_size"), check_dim(every, "every")
    rng = np.random.default_rng(check_seed(seed))
    probe, _ = task.batch(np.random.default_rng(12345), 64, model.vocab)
    mask = task.mask()
    optimizer = Adam(model.params, lr=lr)
    run = TrainingRun(task)
    for step in range(steps):
        tokens, targets = batches[step] if batches is not None else task.batch(rng, batch_size, model.vocab)
        if step % every == 0 or step == steps - 1:
            run.steps.append(step)
            run.snapshots.append(model.forward(probe, mask)[1]["A"].mean(axis=0))
        logits, cache = model.forward(tokens, mask)
        loss, dlogits = model.loss(logits, targets)
        if not np.isfinite(loss):
            raise ValueError(f"a perda virou {loss} no passo {step}: o backward devolveu NaN/inf, ou a taxa `lr` = "
                             f"{lr} é grande demais. Confira os gradientes da sua função num exemplo pequeno.")
        run.losses.append(loss)
        optimizer.step(model.backward(cache, dlogits, attention_backward))
    return run


def train_torch(params: dict, task: Task, batches, lr: float = 0.03) -> list:
    """O mesmo treino em PyTorch (autograd e ``torch.optim.Adam``), a partir dos mesmos pesos ``params``
    e dos mesmos ``batches``: devolve a lista de perdas, uma por lote. Calcula em float64.

    Serve para conferir o backward escrito à mão: as curvas de perda precisam coincidir (nos testes, até
    1e-9 nos 50 primeiros passos). ``params`` não é alterado.

    Raises
    ------
    ModuleNotFoundError
        Sem o PyTorch instalado.

    Fonte: Módulo 6, Aula 5, ``04-projeto``.
    """
    import torch

    weights = {name: torch.nn.Parameter(torch.tensor(np.array(p, dtype=np.float64))) for name, p in params.items()}
    optimizer = torch.optim.Adam(weights.values(), lr=lr)
    d_k = weights["W_q"].shape[1]
    blocked = None if task.mask() is None else torch.tensor(~task.mask())
    losses = []
    for tokens, targets in batches:
        x = weights["E"][torch.as_tensor(tokens)] + weights["P"]  # (B, n, d_model)
        Q, K, V = x @ weights["W_q"], x @ weights["W_k"], x @ weights["W_v"]
        S = Q @ K.transpose(-1, -2) / np.sqrt(d_k)  # (B, n, n)
        if blocked is not None:
            S = S.masked_fill(blocked, float("-inf"))
        logits = torch.softmax(S, dim=-1) @ V @ weights["W_out"]  # (B, n, vocab)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.as_tensor(targets).reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def per_example(attention_backward_2d: Callable, mask=None) -> Callable:
    """Adapta um backward escrito para uma sequência, ``f(dO, Q, K, V, mask=None) -> (dQ, dK, dV)`` com
    matrizes (n, d) (o do ``03-exercicios``), ao lote do treino: chama ``f`` uma vez por sequência do lote,
    com a ``mask`` da tarefa, e empilha os resultados. Os pesos ``A`` do forward não são passados: ``f`` refaz o
    forward com a máscara.

    Fonte: Módulo 6, Aula 5, ``04-projeto``.
    """
    def backward(dO, Q, K, V, weights):
        grads = [attention_backward_2d(dO[b], Q[b], K[b], V[b], mask=mask) for b in range(len(Q))]
        return tuple(np.stack([np.asarray(g[k], dtype=np.float64) for g in grads]) for k in range(3))

    return backward
