"""Otimizadores mínimos: a descida do gradiente (SGD) e o Adam, em poucas linhas cada.

Os dois recebem os pesos num dicionário ``{nome: ndarray}`` e os gradientes num dicionário com os mesmos
nomes e formas (como os de :func:`atencao.backward.multihead_backward`), e **alteram os pesos no lugar**.

Fontes: Robbins e Monro (1951), a descida estocástica; Kingma e Ba (2015), "Adam: A Method for Stochastic
Optimization", algoritmo 1; Módulo 6, Aula 5 (``01-teoria``, seção 1, e ``02-codigo``, seção 4).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_positive, shape_str

__all__ = ["SGD", "Adam"]


def _check_grads(params: dict, grads: dict) -> None:
    for name, p in params.items():
        if name not in grads:
            raise KeyError(f"Falta o gradiente de `{name}` em `grads` (nomes recebidos: {sorted(grads)}).")
        if np.shape(grads[name]) != p.shape:
            raise ValueError(f"O gradiente de `{name}` precisa ter a forma do peso, {shape_str(p.shape)}; "
                             f"recebida {shape_str(np.shape(grads[name]))}.")


class SGD:
    """Descida do gradiente: ``θ ← θ − lr · g``.

    Parameters
    ----------
    params : dict[str, ndarray]
        Os pesos, alterados no lugar por :meth:`step`.
    lr : float
        Taxa de aprendizado (> 0).

    Raises
    ------
    TypeError, ValueError
        ``lr`` que não é um número finito > 0.

    Fonte: Robbins e Monro (1951); Módulo 6, Aula 5, ``01-teoria`` (seção 1).
    """

    def __init__(self, params: dict, lr: float = 0.1):
        self.params, self.lr = params, check_positive(lr, "lr")

    def step(self, grads: dict) -> None:
        """Um passo: cada peso anda ``lr`` vezes o gradiente, no sentido contrário. ``KeyError``/``ValueError``
        se falta um gradiente ou a forma não é a do peso."""
        _check_grads(self.params, grads)
        for name, p in self.params.items():
            p -= self.lr * grads[name]


class Adam:
    """Adam (Kingma e Ba, 2015): passo de tamanho ≈ ``lr`` em cada peso, na direção da média dos gradientes.

    Guarda, para cada peso, médias móveis do gradiente (``m``, o "momento") e do seu quadrado (``v``),
    corrige o viés do começo (as médias partem de zero) e anda ``lr · m̂ / (√v̂ + eps)``::

        m ← β₁ m + (1 − β₁) g          v ← β₂ v + (1 − β₂) g²
        m̂ = m / (1 − β₁ᵗ)              v̂ = v / (1 − β₂ᵗ)
        θ ← θ − lr · m̂ / (√v̂ + eps)

    Parameters
    ----------
    params : dict[str, ndarray]
        Os pesos, alterados no lugar por :meth:`step`.
    lr : float
        Taxa de aprendizado (padrão 1e-3, o do artigo).
    betas : (float, float)
        ``β₁``, ``β₂`` em [0, 1) (padrão (0.9, 0.999)).
    eps : float
        Evita divisão por zero (padrão 1e-8).

    Raises
    ------
    TypeError, ValueError
        ``lr`` ou ``eps`` que não são números finitos > 0; ``betas`` fora de [0, 1).

    Fonte: Kingma e Ba (2015), algoritmo 1 (o mesmo cálculo de ``torch.optim.Adam`` sem ``weight_decay``);
    Módulo 6, Aula 5, ``02-codigo`` (seção 4).
    """

    def __init__(self, params: dict, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
        self.params, self.lr, self.eps = params, check_positive(lr, "lr"), check_positive(eps, "eps")
        b1, b2 = (float(b) for b in betas)
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ValueError(f"`betas` precisam estar em [0, 1); recebido {tuple(betas)!r}.")
        self.beta1, self.beta2, self.t = b1, b2, 0
        self.m = {name: np.zeros_like(p) for name, p in params.items()}
        self.v = {name: np.zeros_like(p) for name, p in params.items()}

    def step(self, grads: dict) -> None:
        """Um passo do Adam em todos os pesos. ``KeyError``/``ValueError`` se falta um gradiente ou a forma
        não é a do peso."""
        _check_grads(self.params, grads)
        self.t += 1
        for name, p in self.params.items():
            g = grads[name]
            self.m[name] = self.beta1 * self.m[name] + (1 - self.beta1) * g
            self.v[name] = self.beta2 * self.v[name] + (1 - self.beta2) * g * g
            m_hat = self.m[name] / (1 - self.beta1 ** self.t)
            v_hat = self.v[name] / (1 - self.beta2 ** self.t)
            p -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
