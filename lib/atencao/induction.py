"""A cabeça de indução num modelo de duas camadas só de atenção (Aula 6, ``04-projeto``).

O modelo é o menor em que o circuito de Olsson et al. (2022) aparece: embeddings de token e de posição
aprendidos, duas camadas de atenção multicabeça causal somadas ao fluxo residual (sem FFN e sem LayerNorm,
como os modelos "só de atenção" de Elhage et al., 2021) e uma leitura linear para o vocabulário::

    x₀ = E[tokens] + P[:n]                  (B, n, d_model)
    xₗ₊₁ = xₗ + Atenção_causalₗ(xₗ)         duas camadas, n_heads cabeças cada
    logits = x₂ U                           (B, n, vocab)

Treina em sequências aleatórias cuja segunda metade repete a primeira (:func:`repeated_sequences`): a
primeira metade é imprevisível (perda ≈ ln vocab), a segunda pode ser copiada do contexto, se o modelo
aprender a procurar "o que veio depois da última vez que este token apareceu". A volta (``backward``) é a da
Aula 5 (atenção) e a da Aula 6 (entropia cruzada, embeddings), escrita aqui por inteiro, como o otimizador (o Adam
de :class:`atencao.optim.Adam`): as prontas da biblioteca são respostas proibidas nos exercícios 1 e 3 da aula e,
na correção, nem rodam fora das verificações.

Fonte: Olsson et al. (2022), "In-context Learning and Induction Heads", seções 2 e 3; Elhage et al. (2021),
"A Mathematical Framework for Transformer Circuits"; Módulo 6, Aula 6, ``01-teoria`` (seção 6) e ``04-projeto``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._validation import check_dim, check_seed, shape_str

__all__ = ["repeated_sequences", "AttentionOnlyModel", "InductionRun", "train_induction", "loss_by_position"]


def repeated_sequences(rng: np.random.Generator, batch_size: int, half: int, vocab_size: int) -> np.ndarray:
    """Um lote de sequências ``[a₁ … a_half a₁ … a_half]``, com os ``a`` sorteados uniformemente.

    Parameters
    ----------
    rng : numpy.random.Generator
    batch_size, half, vocab_size : int
        Quantas sequências, o tamanho de cada metade e o vocabulário (ids ``0 … vocab_size − 1``).

    Returns
    -------
    ndarray de int64, forma (batch_size, 2·half)

    Raises
    ------
    ValueError
        Um tamanho que não é inteiro positivo.

    Fonte: Olsson et al. (2022), seção 3 (as sequências de tokens aleatórios repetidos).
    """
    for valor, nome in ((batch_size, "batch_size"), (half, "half"), (vocab_size, "vocab_size")):
        check_dim(valor, nome)
    first = rng.integers(0, vocab_size, size=(batch_size, half))
    return np.concatenate([first, first], axis=1).astype(np.int64)


def _softmax_causal(S: np.ndarray) -> np.ndarray:
    """Softmax do último eixo de ``S`` (..., n, n) com a máscara causal (o futuro fica com peso 0)."""
    n = S.shape[-1]
    S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class AttentionOnlyModel:
    """Um transformer de ``n_layers`` camadas só de atenção (sem FFN, sem LayerNorm), em NumPy, float64.

    Parameters
    ----------
    vocab_size, n_ctx : int
        O vocabulário e o contexto máximo (as linhas de ``P``).
    d_model, n_heads : int
        A largura do fluxo residual e as cabeças por camada (``n_heads`` divide ``d_model``).
    n_layers : int
        Quantas camadas de atenção (2 no projeto).
    seed : int
        A semente dos pesos iniciais (normais com desvio 0,1 nos embeddings e 1/√d_model nas matrizes).

    Attributes
    ----------
    params : dict
        ``"E"`` (vocab, d_model), ``"P"`` (n_ctx, d_model), ``"U"`` (d_model, vocab) e, para cada camada ``l``,
        ``"l.W_q"``, ``"l.W_k"``, ``"l.W_v"`` (d_model, d_model) e ``"l.W_o"`` (d_model, d_model).

    Raises
    ------
    ValueError
        Tamanhos que não são inteiros positivos, ou ``n_heads`` que não divide ``d_model``.

    Fonte: Elhage et al. (2021), os modelos só de atenção; Módulo 6, Aula 6, ``04-projeto``.
    """

    def __init__(self, vocab_size: int, n_ctx: int, d_model: int = 32, n_heads: int = 4, n_layers: int = 2,
                 seed: int = 0):
        for valor, nome in ((vocab_size, "vocab_size"), (n_ctx, "n_ctx"), (d_model, "d_model"),
                            (n_heads, "n_heads"), (n_layers, "n_layers")):
            check_dim(valor, nome)
        if d_model % n_heads:
            raise ValueError(f"`n_heads`={n_heads} precisa dividir `d_model`={d_model}.")
        check_seed(seed)
        self.vocab_size, self.n_ctx, self.d_model = vocab_size, n_ctx, d_model
        self.n_heads, self.n_layers, self.d_head = n_heads, n_layers, d_model // n_heads
        rng = np.random.default_rng(seed)
        s = 1 / np.sqrt(d_model)
        self.params = {"E": 0.1 * rng.normal(size=(vocab_size, d_model)),
                       "P": 0.1 * rng.normal(size=(n_ctx, d_model))}
        for layer in range(n_layers):
            for nome in ("W_q", "W_k", "W_v", "W_o"):
                self.params[f"{layer}.{nome}"] = s * rng.normal(size=(d_model, d_model))
        self.params["U"] = s * rng.normal(size=(d_model, vocab_size))

    def __repr__(self) -> str:
        return (f"AttentionOnlyModel(vocab_size={self.vocab_size}, n_ctx={self.n_ctx}, d_model={self.d_model}, "
                f"n_heads={self.n_heads}, n_layers={self.n_layers})")

    def _check_tokens(self, tokens) -> np.ndarray:
        tokens = np.asarray(tokens)
        if tokens.ndim != 2 or tokens.dtype.kind not in "iu":
            raise ValueError(f"`tokens` precisa ser uma matriz (B, n) de ids inteiros; recebida forma "
                             f"{shape_str(tokens.shape)}, dtype {tokens.dtype}.")
        if not 2 <= tokens.shape[1] <= self.n_ctx:
            raise ValueError(f"`tokens` precisa ter de 2 a n_ctx = {self.n_ctx} colunas; recebida forma "
                             f"{shape_str(tokens.shape)}.")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(f"`tokens` precisa ter ids em 0 … {self.vocab_size - 1}; recebido de {tokens.min()} "
                             f"a {tokens.max()}.")
        return tokens

    def _heads(self, x: np.ndarray) -> np.ndarray:
        B, n, _ = x.shape
        return x.reshape(B, n, self.n_heads, self.d_head).transpose(0, 2, 1, 3)  # (B, H, n, d_head)

    def forward(self, tokens, ablate=()) -> tuple[np.ndarray, dict]:
        """A ida: ``logits`` (B, n, vocab) e o ``cache`` da volta, com os pesos de atenção de cada camada.

        Parameters
        ----------
        tokens : array_like de int, forma (B, n), n ≤ n_ctx
        ablate : iterável de (camada, cabeça)
            As cabeças desligadas: a saída delas vira zero antes de ``W_o`` (a ablação do projeto).

        Returns
        -------
        logits : ndarray, forma (B, n, vocab)
        cache : dict
            ``cache["weights"][l]``: os pesos da camada ``l``, forma (B, n_heads, n, n).

        Raises
        ------
        ValueError
            ``tokens`` fora do formato, do contexto ou do vocabulário; uma cabeça de ``ablate`` que não existe.
        """
        tokens = self._check_tokens(tokens)
        keep = self._keep_mask(ablate)
        p = self.params
        n = tokens.shape[1]
        x = p["E"][tokens] + p["P"][:n]  # (B, n, d_model)
        cache = {"tokens": tokens, "keep": keep, "xs": [x], "weights": [], "heads": []}
        for layer in range(self.n_layers):
            q, k, v = (self._heads(x @ p[f"{layer}.{w}"]) for w in ("W_q", "W_k", "W_v"))  # (B, H, n, d_head)
            A = _softmax_causal(q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.d_head))  # (B, H, n, n)
            o = (A @ v) * keep[layer][:, None, None]  # (B, H, n, d_head), cabeças desligadas = 0
            B = x.shape[0]
            x = x + o.transpose(0, 2, 1, 3).reshape(B, n, self.d_model) @ p[f"{layer}.W_o"]
            cache["xs"].append(x)
            cache["weights"].append(A)
            cache["heads"].append((q, k, v, o))
        return x @ p["U"], cache

    def _keep_mask(self, ablate) -> np.ndarray:
        keep = np.ones((self.n_layers, self.n_heads))
        for item in ablate:
            layer, head = item
            if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
                raise ValueError(f"`ablate`: a cabeça {(layer, head)} não existe (camadas 0 … {self.n_layers - 1}, "
                                 f"cabeças 0 … {self.n_heads - 1}).")
            keep[layer, head] = 0.0
        return keep

    def loss(self, tokens, ablate=()) -> float:
        """A perda média (nats) de prever ``tokens[:, 1:]`` a partir de cada posição anterior."""
        tokens = self._check_tokens(tokens)
        logits, _ = self.forward(tokens, ablate=ablate)
        Z = logits[:, :-1]
        Zc = Z - Z.max(axis=-1, keepdims=True)
        log_p = Zc - np.log(np.exp(Zc).sum(axis=-1, keepdims=True))  # (B, n − 1, V)
        return float(-np.take_along_axis(log_p, tokens[:, 1:, None], axis=-1).mean())

    def loss_and_grads(self, tokens, ablate=()) -> tuple[float, dict]:
        """A perda média (nats) do próximo token e os gradientes de todos os pesos (os nomes de :attr:`params`)."""
        logits, cache = self.forward(tokens, ablate=ablate)
        tokens = cache["tokens"]
        # a entropia cruzada do próximo token, escrita aqui dentro: uma função solta com a conta (logits, alvos)
        # seria a resposta pronta do exercício 1 (a de gpt_backward é proibida ali e, na correção, nem roda fora
        # das verificações; o modelo de indução do projeto treina com esta)
        V = logits.shape[-1]
        Z, y = logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1)  # (N, V), (N,)
        N = Z.shape[0]
        Zc = Z - Z.max(axis=-1, keepdims=True)
        log_p = Zc - np.log(np.exp(Zc).sum(axis=-1, keepdims=True))
        dZ = np.exp(log_p)
        dZ[np.arange(N), y] -= 1.0
        loss = float(-log_p[np.arange(N), y].mean())
        dlogits = np.zeros_like(logits)
        dlogits[:, :-1] = (dZ / N).reshape(logits[:, :-1].shape)  # a última posição não tem alvo
        return loss, self.backward(cache, dlogits)

    def backward(self, cache: dict, dlogits: np.ndarray) -> dict:
        """A volta inteira: ``dlogits`` (B, n, vocab) → os gradientes de :attr:`params` (mesmos nomes e formas).

        Cada camada: ``dW_o = Oᵀ dx``; a atenção pela Aula 5 (``dV = Aᵀ dO``, ``dS = A ⊙ (dA − Σ dA ⊙ A)``,
        ``dQ = dS K/√d``, ``dK = dSᵀ Q/√d``); ``dx`` soma o caminho residual e os três caminhos de ``x``.
        """
        p, tokens, keep = self.params, cache["tokens"], cache["keep"]
        B, n = tokens.shape
        g = {"U": cache["xs"][-1].reshape(-1, self.d_model).T @ dlogits.reshape(-1, self.vocab_size)}
        dx = dlogits @ p["U"].T  # (B, n, d_model)
        for layer in reversed(range(self.n_layers)):
            x = cache["xs"][layer]
            A = cache["weights"][layer]
            q, k, v, o = cache["heads"][layer]
            merged = o.transpose(0, 2, 1, 3).reshape(B, n, self.d_model)
            g[f"{layer}.W_o"] = merged.reshape(-1, self.d_model).T @ dx.reshape(-1, self.d_model)
            do = self._heads(dx @ p[f"{layer}.W_o"].T) * keep[layer][:, None, None]  # (B, H, n, d_head)
            dv = A.transpose(0, 1, 3, 2) @ do
            dA = do @ v.transpose(0, 1, 3, 2)
            dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
            dq = dS @ k / np.sqrt(self.d_head)
            dk = dS.transpose(0, 1, 3, 2) @ q / np.sqrt(self.d_head)
            xf = x.reshape(-1, self.d_model)
            dx_new = dx.copy()  # o caminho residual: o gradiente passa inteiro
            for nome, dh in (("W_q", dq), ("W_k", dk), ("W_v", dv)):
                dflat = dh.transpose(0, 2, 1, 3).reshape(B, n, self.d_model)
                g[f"{layer}.{nome}"] = xf.T @ dflat.reshape(-1, self.d_model)
                dx_new += dflat @ p[f"{layer}.{nome}"].T
            dx = dx_new
        g["E"] = np.zeros_like(p["E"])
        np.add.at(g["E"], tokens, dx)  # cada token recebe a soma das posições em que apareceu
        g["P"] = np.zeros_like(p["P"])
        g["P"][:n] = dx.sum(axis=0)
        return {nome: g[nome] for nome in p}


def loss_by_position(model: AttentionOnlyModel, tokens, ablate=()) -> np.ndarray:
    """A perda média (nats) de cada posição, sobre o lote: a entrada ``t`` é a perda de prever ``tokens[:, t + 1]``.

    Returns
    -------
    ndarray, forma (n − 1,)

    Fonte: Olsson et al. (2022), seção 2 (a perda por posição no contexto, a "pontuação de aprendizagem em
    contexto").
    """
    logits, cache = model.forward(tokens, ablate=ablate)
    tokens = cache["tokens"]
    Z = logits[:, :-1]
    Zc = Z - Z.max(axis=-1, keepdims=True)
    log_p = Zc - np.log(np.exp(Zc).sum(axis=-1, keepdims=True))  # (B, n − 1, V)
    alvo = np.take_along_axis(log_p, tokens[:, 1:, None], axis=-1)[..., 0]  # (B, n − 1)
    return -alvo.mean(axis=0)


@dataclass
class InductionRun:
    """O histórico de :func:`train_induction`: a perda de cada passo e a atenção de um lote fixo, guardada
    a cada ``every`` passos (``snapshots[i]``: a lista de pesos por camada, cada um (n_heads, n, n), a média
    do lote fixo)."""

    steps: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    snapshot_steps: list = field(default_factory=list)
    snapshots: list = field(default_factory=list)


def train_induction(model: AttentionOnlyModel, steps: int = 600, batch_size: int = 32, half: int = 10,
                    lr: float = 0.01, seed: int = 0, every: int = 50) -> InductionRun:
    """Treina ``model`` com o Adam em lotes de :func:`repeated_sequences`, com a perda do próximo token.

    Parameters
    ----------
    model : AttentionOnlyModel
        Treinado no lugar (``2·half ≤ n_ctx``).
    steps, batch_size, half : int
    lr : float
        A taxa do Adam.
    seed : int
        A semente dos lotes (os pesos iniciais são os do modelo).
    every : int
        De quantos em quantos passos guardar a atenção média de um lote fixo de 64 sequências.

    Returns
    -------
    InductionRun

    Raises
    ------
    ValueError
        Tamanhos que não são inteiros positivos, ou ``2·half`` maior que o contexto do modelo.

    Fonte: Olsson et al. (2022), seção 3; Kingma e Ba (2015), o Adam.
    """
    for valor, nome in ((steps, "steps"), (batch_size, "batch_size"), (half, "half"), (every, "every")):
        check_dim(valor, nome)
    if 2 * half > model.n_ctx:
        raise ValueError(f"`half`={half}: as sequências têm 2·half = {2 * half} tokens, mais que o contexto do "
                         f"modelo, n_ctx = {model.n_ctx}.")
    check_seed(seed)
    rng = np.random.default_rng(seed)
    fixed = repeated_sequences(np.random.default_rng(seed + 1), 64, half, model.vocab_size)
    # o Adam (Kingma e Ba, 2015) escrito aqui, com as contas de atencao.optim.Adam: o pronto é proibido no exercício 3
    b1, b2, eps = 0.9, 0.999, 1e-8
    m = {name: np.zeros_like(p) for name, p in model.params.items()}
    v = {name: np.zeros_like(p) for name, p in model.params.items()}
    run = InductionRun()
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            _, cache = model.forward(fixed)
            run.snapshot_steps.append(step)
            run.snapshots.append([A.mean(axis=0) for A in cache["weights"]])
        if step == steps:
            break
        loss, grads = model.loss_and_grads(repeated_sequences(rng, batch_size, half, model.vocab_size))
        for name, p in model.params.items():
            g = grads[name]
            m[name] = b1 * m[name] + (1 - b1) * g
            v[name] = b2 * v[name] + (1 - b2) * g * g
            m_hat = m[name] / (1 - b1 ** (step + 1))
            v_hat = v[name] / (1 - b2 ** (step + 1))
            p -= lr * m_hat / (np.sqrt(v_hat) + eps)
        run.steps.append(step)
        run.losses.append(loss)
    return run
