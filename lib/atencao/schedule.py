"""A prática do treino de um GPT em poucas linhas: AdamW, aquecimento com decaimento e recorte do gradiente.

- **AdamW** (Loshchilov e Hutter, 2019): o Adam da Aula 5 com o decaimento dos pesos **separado** do gradiente,
  ``θ ← θ − lr · λ · θ`` antes do passo do Adam (no Adam com ``weight_decay``, o ``λ θ`` entra no gradiente e
  é dividido por ``√v̂``, o que enfraquece o decaimento justo nos pesos de gradiente grande);
- **aquecimento + decaimento** (Vaswani et al., 2017, seção 5.3; Loshchilov e Hutter, 2017): a taxa sobe em
  linha reta nos primeiros passos, quando o Adam ainda tem médias ruins, e depois desce em cosseno até ``min_lr``;
- **recorte do gradiente pela norma** (Pascanu, Mikolov e Bengio, 2013): se ``‖g‖ > max_norm``, todos os
  gradientes são multiplicados por ``max_norm / ‖g‖`` (a direção fica, o tamanho do passo é limitado).

Fonte: Módulo 6, Aula 6 (``01-teoria``, a prática do treino, e ``03-exercicios``, o passo do AdamW).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import check_positive, shape_str

__all__ = ["adamw_step", "AdamW", "lr_schedule", "clip_grad_norm", "decay_mask"]


def adamw_step(param, grad, m, v, t: int, lr: float, betas=(0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 0.0):
    """Um passo do AdamW num peso: devolve ``(param_novo, m_novo, v_novo)`` (as entradas não mudam).

    ::

        θ ← θ − lr · λ · θ                              # decaimento separado, nos pesos
        m ← β₁ m + (1 − β₁) g        v ← β₂ v + (1 − β₂) g²
        m̂ = m / (1 − β₁ᵗ)            v̂ = v / (1 − β₂ᵗ)
        θ ← θ − lr · m̂ / (√v̂ + eps)

    Parameters
    ----------
    param, grad, m, v : ndarray, mesma forma
        O peso, o gradiente e as médias móveis (zeros antes do primeiro passo).
    t : int
        O número do passo, começando em 1 (para a correção do viés).
    lr, betas, eps, weight_decay
        Como em ``torch.optim.AdamW``.

    Returns
    -------
    param, m, v : ndarray

    Fonte: Loshchilov e Hutter (2019), algoritmo 2; Kingma e Ba (2015), algoritmo 1; Módulo 6, Aula 6.
    """
    b1, b2 = betas
    param = param * (1.0 - lr * weight_decay)
    m = b1 * m + (1.0 - b1) * grad
    v = b2 * v + (1.0 - b2) * grad * grad
    m_hat = m / (1.0 - b1 ** t)
    v_hat = v / (1.0 - b2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def decay_mask(params: dict) -> dict:
    """``{nome: bool}``: quais pesos recebem decaimento (as matrizes, ``ndim ≥ 2``; nunca vieses e LayerNorm).

    É a divisão do nanoGPT (e do GPT-2): os embeddings e as matrizes das projeções decaem.
    """
    return {name: np.ndim(p) >= 2 for name, p in params.items()}


class AdamW:
    """AdamW sobre um dicionário de pesos, alterados no lugar; decaimento só nas matrizes (:func:`decay_mask`).

    Parameters
    ----------
    params : dict[str, ndarray]
    lr : float
        Taxa inicial; :meth:`step` aceita outra a cada passo (a do cronograma).
    betas : (float, float)
    eps : float
    weight_decay : float
        ``λ`` (≥ 0).
    step_fn : callable, opcional
        Uma ``adamw_step`` com a mesma assinatura (a do aluno, no projeto).

    Raises
    ------
    ValueError, TypeError
        ``lr`` ou ``eps`` que não são números > 0, ``betas`` fora de [0, 1), ``weight_decay`` < 0.

    Fonte: Loshchilov e Hutter (2019); ``torch.optim.AdamW``; Módulo 6, Aula 6, ``02-codigo``.
    """

    def __init__(self, params: dict, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, step_fn=None):
        self.params, self.lr, self.eps = params, check_positive(lr, "lr"), check_positive(eps, "eps")
        b1, b2 = (float(b) for b in betas)
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ValueError(f"`betas` precisam estar em [0, 1); recebido {tuple(betas)!r}.")
        if not weight_decay >= 0:
            raise ValueError(f"`weight_decay` precisa ser ≥ 0; recebido {weight_decay!r}.")
        self.betas, self.weight_decay, self.t = (b1, b2), float(weight_decay), 0
        self.step_fn = step_fn or adamw_step
        self.decays = decay_mask(params)
        self.m = {name: np.zeros_like(p) for name, p in params.items()}
        self.v = {name: np.zeros_like(p) for name, p in params.items()}

    def step(self, grads: dict, lr: float | None = None) -> None:
        """Um passo em todos os pesos (com ``lr`` dado, ou o de :attr:`lr`). ``KeyError``/``ValueError`` se falta
        um gradiente ou a forma não é a do peso."""
        lr = self.lr if lr is None else lr
        self.t += 1
        for name, p in self.params.items():
            if name not in grads:
                raise KeyError(f"Falta o gradiente de `{name}` em `grads`.")
            g = grads[name]
            if np.shape(g) != p.shape:
                raise ValueError(f"O gradiente de `{name}` precisa ter a forma do peso, {shape_str(p.shape)}; "
                                 f"recebida {shape_str(np.shape(g))}.")
            wd = self.weight_decay if self.decays[name] else 0.0
            new, self.m[name], self.v[name] = self.step_fn(p, g, self.m[name], self.v[name], self.t, lr,
                                                           self.betas, self.eps, wd)
            p[...] = new


def lr_schedule(step: int, max_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0) -> float:
    """A taxa do passo ``step`` (0, 1, …): aquecimento linear e depois decaimento em cosseno até ``min_lr``.

    ::

        step < warmup:           lr = max_lr · (step + 1) / warmup
        warmup ≤ step < total:   lr = min_lr + (max_lr − min_lr) · (1 + cos(π · frac)) / 2,
                                 frac = (step − warmup) / (total − warmup)
        step ≥ total:            lr = min_lr

    Fonte: Vaswani et al. (2017), seção 5.3 (o aquecimento); Loshchilov e Hutter (2017), SGDR (o cosseno);
    Módulo 6, Aula 6, ``01-teoria``.
    """
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step >= total_steps:
        return min_lr
    frac = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return min_lr + (max_lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * frac))


def clip_grad_norm(grads: dict, max_norm: float) -> float:
    """Recorta os gradientes pela norma total (no lugar) e devolve a norma **antes** do recorte.

    ``‖g‖ = sqrt(Σ ‖gᵢ‖²)`` sobre todos os pesos; se ``‖g‖ > max_norm``, cada gradiente é multiplicado por
    ``max_norm / (‖g‖ + 1e-6)`` (as mesmas contas de ``torch.nn.utils.clip_grad_norm_``).

    Fonte: Pascanu, Mikolov e Bengio (2013), algoritmo 1; Módulo 6, Aula 6, ``01-teoria``.
    """
    total = math.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for g in grads.values():
            g *= coef
    return total
