"""O laço de treino do GPT da Aula 6: lotes sorteados do corpus, AdamW com cronograma, recorte, treino × validação.

Cada passo::

    tokens, alvos = get_batch(treino)                 # (B, n) e (B, n): o alvo é o caractere seguinte
    perda, grads = model.loss_and_grads(tokens, alvos, train=True, rng=rng)
    norma = clip_grad_norm(grads, grad_clip)
    optimizer.step(grads, lr=lr_schedule(passo, ...))

e a cada ``eval_every`` passos, a perda média em lotes **fixos** do treino e da validação (sem dropout): a
curva de validação subindo enquanto a de treino desce é o sobreajuste.

Fonte: Radford et al. (2019); Karpathy, nanoGPT (o laço); Módulo 6, Aula 6 (``02-codigo`` e ``04-projeto``).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ._validation import shape_str
from .schedule import AdamW, clip_grad_norm, lr_schedule

__all__ = ["quick_run", "TrainConfig", "TrainingHistory", "get_batch", "fixed_batches", "estimate_loss", "train_gpt",
           "SHORT", "DEFAULT"]


@dataclass(frozen=True)
class TrainConfig:
    """Os hiperparâmetros do treino.

    Attributes
    ----------
    steps : int
        Passos do otimizador.
    batch_size : int
        Sequências por lote (cada uma com ``block_size`` tokens do modelo).
    lr, min_lr : float
        A taxa máxima (depois do aquecimento) e a do fim do cosseno.
    warmup_steps : int
    weight_decay : float
        O ``λ`` do AdamW (só nas matrizes).
    betas : (float, float)
    grad_clip : float ou None
        A norma máxima do gradiente (``None`` = sem recorte).
    eval_every : int
        De quantos em quantos passos medir treino e validação (e no último passo).
    eval_batches : int
        Quantos lotes fixos em cada medida.
    sample_every : int ou None
        De quantos em quantos passos guardar uma amostra (``None`` = nunca).
    sample_prompt : str
    sample_len : int
    seed : int
        A semente dos lotes, do dropout e das amostras.
    """

    steps: int = 2000
    batch_size: int = 32
    lr: float = 3e-3
    min_lr: float = 3e-4
    warmup_steps: int = 100
    weight_decay: float = 0.1
    betas: tuple = (0.9, 0.99)
    grad_clip: float | None = 1.0
    eval_every: int = 100
    eval_batches: int = 8
    sample_every: int | None = None
    sample_prompt: str = "A atenção "
    sample_len: int = 200
    seed: int = 0


#: O treino padrão (o de ``make bench``): 2000 passos, uns 2 min numa máquina de 2 núcleos (em float32).
DEFAULT = TrainConfig()
#: O curto (o do navegador e da CI): 300 passos com a taxa maior, uns 20 s; a validação já fica abaixo da linha
#: de base de bigramas, mas as amostras ainda são quase só sílabas.
SHORT = TrainConfig(steps=300, lr=6e-3, warmup_steps=30, eval_every=100, eval_batches=4, sample_len=120)


def quick_run() -> bool:
    """``True`` quando o treino do notebook deve ser o curto: no navegador (Pyodide, em que o Python é bem mais
    lento) e na correção automática (``NBGRADER_EXECUTION`` definida, em que cada célula tem um limite de tempo e a
    nota vem só das verificações). Fora deles, ``False``.

    Fonte: Módulo 6, Aula 6, ``04-projeto`` (passo 2, o treino).
    """
    return sys.platform == "emscripten" or bool(os.environ.get("NBGRADER_EXECUTION"))


@dataclass
class TrainingHistory:
    """O que o treino registrou.

    Attributes
    ----------
    steps : list[int]
        Os passos em que houve medida (``eval_every``).
    train_loss, val_loss : list[float]
        A perda média (nats por token) nos lotes fixos de treino e validação, em cada medida.
    batch_loss, lr, grad_norm : list[float]
        A perda do lote, a taxa e a norma do gradiente (antes do recorte), em cada passo.
    samples : list[tuple[int, str]]
        ``(passo, texto)`` a cada ``sample_every`` passos.
    seconds : float
        O tempo do treino (sem as medidas e as amostras).
    """

    steps: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    val_loss: list = field(default_factory=list)
    batch_loss: list = field(default_factory=list)
    lr: list = field(default_factory=list)
    grad_norm: list = field(default_factory=list)
    samples: list = field(default_factory=list)
    seconds: float = 0.0


def get_batch(ids, batch_size: int, block_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Sorteia ``batch_size`` trechos de ``block_size`` tokens; o alvo de cada posição é o token seguinte.

    Returns
    -------
    tokens, targets : ndarray de int64, forma (batch_size, block_size)
        ``targets[b, i] = ids[início_b + i + 1]``.

    Raises
    ------
    ValueError
        ``ids`` que não é um vetor ou tem menos de ``block_size + 1`` tokens.
    """
    ids = np.asarray(ids)
    if ids.ndim != 1 or len(ids) < block_size + 1:
        raise ValueError(f"`ids` precisa ser um vetor com pelo menos block_size + 1 = {block_size + 1} tokens; "
                         f"recebida forma {shape_str(ids.shape)}.")
    starts = rng.integers(0, len(ids) - block_size, size=batch_size)  # (B,)
    offsets = np.arange(block_size)  # (n,)
    tokens = ids[starts[:, None] + offsets]  # (B, n)
    targets = ids[starts[:, None] + offsets + 1]  # (B, n)
    return tokens.astype(np.int64), targets.astype(np.int64)


def fixed_batches(ids, n_batches: int, batch_size: int, block_size: int, seed: int = 1234) -> list:
    """``n_batches`` lotes de :func:`get_batch` sorteados uma vez (a mesma régua em toda medida)."""
    rng = np.random.default_rng(seed)
    return [get_batch(ids, batch_size, block_size, rng) for _ in range(n_batches)]


def estimate_loss(model, batches, cross_entropy=None) -> float:
    """A perda média (nats por token) do modelo, sem dropout, nos lotes dados (de :func:`fixed_batches`)."""
    return float(np.mean([model.loss(t, y, cross_entropy) for t, y in batches]))


def train_gpt(model, train_ids, val_ids, config: TrainConfig = DEFAULT, tokenizer=None, callback=None,
              cross_entropy=None, layer_norm_backward=None, adamw_step=None, max_seconds: float | None = None,
              ) -> TrainingHistory:
    """Treina ``model`` (um :class:`~atencao.gpt.GPT`, no lugar) e devolve o histórico.

    Parameters
    ----------
    model : GPT
    train_ids, val_ids : ndarray de int, forma (N,)
        O corpus codificado, separado por :func:`atencao.corpus.split_train_val`.
    config : TrainConfig
        :data:`DEFAULT` (o treino de ``make bench``) ou :data:`SHORT` (segundos).
    tokenizer : CharTokenizer, opcional
        Necessário para as amostras (``config.sample_every``).
    callback : callable, opcional
        ``callback(passo, history)`` depois de cada medida.
    cross_entropy, layer_norm_backward, adamw_step : callable, opcionais
        As peças do aluno no lugar das da biblioteca (mesmas assinaturas de :mod:`atencao.gpt_backward` e
        :func:`atencao.schedule.adamw_step`).
    max_seconds : float, opcional
        Para antes, se o treino passar desse tempo (medido no relógio; a curva fica mais curta).

    Returns
    -------
    TrainingHistory

    Fonte: Módulo 6, Aula 6, ``02-codigo`` e ``04-projeto``.
    """
    from .sampling import generate_text

    c, block = config, model.config.block_size
    rng = np.random.default_rng(c.seed)
    opt = AdamW(model.params, lr=c.lr, betas=c.betas, weight_decay=c.weight_decay, step_fn=adamw_step)
    train_eval = fixed_batches(train_ids, c.eval_batches, c.batch_size, block, seed=c.seed + 1)
    val_eval = fixed_batches(val_ids, c.eval_batches, c.batch_size, block, seed=c.seed + 2)
    hist = TrainingHistory()
    elapsed = 0.0

    def measure(step):
        hist.steps.append(step)
        hist.train_loss.append(estimate_loss(model, train_eval, cross_entropy))
        hist.val_loss.append(estimate_loss(model, val_eval, cross_entropy))
        if callback is not None:
            callback(step, hist)

    for step in range(c.steps):
        if step % c.eval_every == 0:
            measure(step)
        if c.sample_every and tokenizer is not None and step % c.sample_every == 0:
            hist.samples.append((step, generate_text(model, tokenizer, c.sample_prompt, c.sample_len,
                                                     temperature=0.8, top_k=10, seed=c.seed)))
        t0 = time.perf_counter()
        tokens, targets = get_batch(train_ids, c.batch_size, block, rng)
        loss, grads = model.loss_and_grads(tokens, targets, train=True, rng=rng, cross_entropy=cross_entropy,
                                           layer_norm_backward=layer_norm_backward)
        norm = clip_grad_norm(grads, c.grad_clip) if c.grad_clip else clip_grad_norm(grads, np.inf)
        lr = lr_schedule(step, c.lr, c.warmup_steps, c.steps, c.min_lr)
        opt.step(grads, lr=lr)
        elapsed += time.perf_counter() - t0
        hist.batch_loss.append(loss)
        hist.lr.append(lr)
        hist.grad_norm.append(norm)
        if max_seconds is not None and elapsed > max_seconds:
            break
    hist.seconds = elapsed
    measure(len(hist.batch_loss))
    if c.sample_every and tokenizer is not None:
        hist.samples.append((len(hist.batch_loss), generate_text(model, tokenizer, c.sample_prompt, c.sample_len,
                                                                 temperature=0.8, top_k=10, seed=c.seed)))
    return hist
