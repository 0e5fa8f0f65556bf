"""O mesmo GPT da Aula 6 em PyTorch, com os mesmos pesos: a régua do backward e da curva de perda.

Só os testes, ``make bench`` e a seção de conferência do ``02-codigo`` usam este módulo; o PyTorch é importado
só quando uma função daqui é chamada (a biblioteca funciona sem ele).

Fonte: ``torch.nn.functional`` (``layer_norm``, ``gelu(approximate="tanh")``, ``cross_entropy``) e
``torch.optim.AdamW``; Módulo 6, Aula 6, ``02-codigo``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["to_torch", "torch_loss", "torch_grads", "train_torch"]


def to_torch(model, requires_grad: bool = True) -> dict:
    """Os pesos de ``model`` como tensores do PyTorch (cópias, mesmo dtype), com os nomes de ``model.params``."""
    import torch

    return {name: torch.tensor(np.array(p), requires_grad=requires_grad) for name, p in model.params.items()}


def torch_logits(params: dict, config, tokens):
    """A ida do GPT em PyTorch: ``tokens`` (B, n) → logits (B, n, vocab). Sem dropout."""
    import torch
    from torch.nn import functional

    c = config
    tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
    B, n = tokens.shape
    H, d = c.n_heads, c.d_model
    x = params["E"][tokens] + params["P"][:n]  # (B, n, d)
    allowed = torch.tril(torch.ones(n, n, dtype=torch.bool))

    def ln(z, prefix):
        return functional.layer_norm(z, (d,), params[prefix + ".weight"], params[prefix + ".bias"], c.eps)

    def attn(s, p):
        def heads(W, b):
            return (s @ params[p + W] + params[p + b]).view(B, n, H, d // H).transpose(1, 2)  # (B, H, n, d_k)

        Q, K, V = heads("W_q", "b_q"), heads("W_k", "b_k"), heads("W_v", "b_v")
        scores = (Q @ K.transpose(-1, -2)) / math.sqrt(d // H)
        A = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (A @ V).transpose(1, 2).reshape(B, n, d)
        return out @ params[p + "W_o"] + params[p + "b_o"]

    def ffn(s, p):
        hidden = functional.gelu(s @ params[p + "W_1"] + params[p + "b_1"], approximate="tanh")  # (B, n, d_ff)
        return hidden @ params[p + "W_2"] + params[p + "b_2"]

    for i in range(c.n_layers):
        p = f"blocks.{i}."
        sublayers = ((lambda s, p=p: attn(s, p + "attn."), p + "ln1"), (lambda s, p=p: ffn(s, p + "ffn."), p + "ln2"))
        for f, norm in sublayers:
            if c.norm_first:
                x = x + f(ln(x, norm)) if c.residual else f(ln(x, norm))
            else:
                x = ln(x + f(x), norm) if c.residual else ln(f(x), norm)
    return ln(x, "ln_f") @ params["E"].T  # (B, n, vocab)


def torch_loss(params: dict, config, tokens, targets):
    """A perda média (tensor escalar) do GPT em PyTorch, com ``F.cross_entropy``."""
    import torch
    from torch.nn import functional

    logits = torch_logits(params, config, tokens)
    t = torch.as_tensor(np.asarray(targets), dtype=torch.long)
    return functional.cross_entropy(logits.reshape(-1, config.vocab_size), t.reshape(-1))


def torch_grads(model, tokens, targets) -> tuple[float, dict]:
    """Perda e gradientes do ``torch.autograd`` para os pesos atuais de ``model`` (nomes de ``model.params``)."""
    params = to_torch(model)
    loss = torch_loss(params, model.config, tokens, targets)
    loss.backward()
    return float(loss.detach()), {name: t.grad.numpy() for name, t in params.items()}


def train_torch(model, batches, config) -> list:
    """O mesmo treino de :func:`atencao.gpt_training.train_gpt` em PyTorch, a partir dos pesos de ``model``.

    Parameters
    ----------
    model : GPT
        Só os pesos iniciais e a configuração são lidos (o modelo não muda).
    batches : list[(tokens, targets)]
        Os lotes de cada passo, na ordem (os mesmos que o treino em NumPy sorteou).
    config : TrainConfig
        ``lr``, ``min_lr``, ``warmup_steps``, ``steps`` (o cronograma), ``betas``, ``weight_decay``,
        ``grad_clip``. Sem dropout.

    Returns
    -------
    list[float]
        A perda de cada lote, antes do passo.
    """
    import torch

    from .schedule import lr_schedule

    params = to_torch(model)
    decay = [t for name, t in params.items() if t.ndim >= 2]
    no_decay = [t for name, t in params.items() if t.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=config.lr, betas=config.betas, eps=1e-8)
    losses = []
    for step, (tokens, targets) in enumerate(batches):
        lr = lr_schedule(step, config.lr, config.warmup_steps, config.steps, config.min_lr)
        for group in opt.param_groups:
            group["lr"] = lr
        opt.zero_grad()
        loss = torch_loss(params, model.config, tokens, targets)
        loss.backward()
        if config.grad_clip:
            torch.nn.utils.clip_grad_norm_(list(params.values()), config.grad_clip)
        opt.step()
        losses.append(float(loss.detach()))
    return losses
