"""Por que dividir por sqrt(d_k): uma medida da saturação da softmax.

Com ``q`` e ``k`` de componentes independentes (média 0, variância 1), o produto ``q·k`` tem
variância ``d_k``: quanto maior a dimensão, maiores as pontuações, e a softmax de pontuações grandes
vira quase um vetor "um-quente" (todo o peso numa chave). Nesse regime o gradiente da softmax some,
e o treino empaca. Dividir por ``sqrt(d_k)`` devolve as pontuações à variância 1, em qualquer ``d_k``.

Fonte: Vaswani et al. (2017), seção 3.2.1 (nota de rodapé 4); Módulo 6, Aula 2, ``02-codigo``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_dim
from .attention import softmax_

__all__ = ["softmax_saturation", "plot_softmax_saturation"]

DEFAULT_D_KS = (4, 16, 64, 256, 1024)


def softmax_saturation(d_ks=DEFAULT_D_KS, n_keys: int = 16, n_queries: int = 2000, seed: int = 0) -> dict:
    """Mede, para cada ``d_k``, o quão "um-quente" fica a softmax com e sem a divisão por sqrt(d_k).

    Para cada ``d_k`` sorteia ``n_queries`` consultas e ``n_keys`` chaves normais padrão, calcula as
    pontuações ``q·k`` e aplica a softmax com e sem a escala.

    Parameters
    ----------
    d_ks : sequência de int
        Dimensões testadas (padrão: 4, 16, 64, 256, 1024).
    n_keys : int
        Número de chaves por consulta (16). Com pesos uniformes, o maior peso seria 1/16 ≈ 0.06.
    n_queries : int
        Número de consultas sorteadas por dimensão.
    seed : int

    Returns
    -------
    dict de ndarray, cada um com forma (len(d_ks),)
        ``d_k``; ``max_weight_scaled`` e ``max_weight_unscaled`` (média do maior peso de cada linha,
        entre 1/n_keys e 1); ``entropy_scaled``/``entropy_unscaled`` (média da entropia em nats, de 0,
        um-quente, a ln(n_keys), uniforme); ``grad_scaled``/``grad_unscaled`` (média da norma de
        Frobenius do jacobiano da softmax, ``diag(p) - p pᵀ``, que tende a 0 quando ela satura);
        ``score_std_scaled``/``score_std_unscaled`` (desvio-padrão das pontuações); e ``n_keys``.

    Raises
    ------
    TypeError, ValueError
        Dimensões que não são inteiros ≥ 1.

    Fonte: Módulo 6, Aula 2, ``02-codigo`` (demonstração da escala por sqrt(d_k)).
    """
    d_ks = [check_dim(d, "d_ks") for d in d_ks]
    n_keys, n_queries = check_dim(n_keys, "n_keys"), check_dim(n_queries, "n_queries")
    rng = np.random.default_rng(seed)
    names = ("max_weight", "entropy", "grad", "score_std")
    result = {f"{m}_{s}": np.zeros(len(d_ks)) for m in names for s in ("scaled", "unscaled")}
    result["d_k"] = np.array(d_ks)
    result["n_keys"] = n_keys
    for i, d_k in enumerate(d_ks):
        q = rng.standard_normal((n_queries, 1, d_k))
        k = rng.standard_normal((n_queries, n_keys, d_k))
        scores = (q @ np.swapaxes(k, -1, -2))[:, 0, :]  # (n_queries, n_keys)
        for suffix, s in (("unscaled", scores), ("scaled", scores / np.sqrt(d_k))):
            p = softmax_(s.copy())  # (n_queries, n_keys)
            result[f"score_std_{suffix}"][i] = s.std()
            result[f"max_weight_{suffix}"][i] = p.max(axis=-1).mean()
            plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
            result[f"entropy_{suffix}"][i] = -plogp.sum(axis=-1).mean()
            # ||diag(p) - p pᵀ||_F² = Σ p_i² - 2 Σ p_i³ + (Σ p_i²)²
            s2, s3 = (p ** 2).sum(-1), (p ** 3).sum(-1)
            result[f"grad_{suffix}"][i] = np.sqrt(np.maximum(s2 - 2 * s3 + s2 ** 2, 0.0)).mean()
    return result


def plot_softmax_saturation(result: dict):
    """Três gráficos lado a lado: maior peso, entropia e norma do gradiente, com e sem escala.

    Parameters
    ----------
    result : dict
        Saída de :func:`softmax_saturation`.

    Returns
    -------
    AttentionPlot
        ``fig`` e ``axes`` (array com 3 Axes); não deixa repr no notebook.

    Fonte: Módulo 6, Aula 2, ``02-codigo``.
    """
    from .plotting import AttentionPlot, pyplot

    plt = pyplot()

    d_k = result["d_k"]
    n_keys = result.get("n_keys", 16)
    panels = [
        ("max_weight", "maior peso médio por linha", "1 = toda a atenção numa chave (one-hot)", 1 / n_keys,
         f"uniforme: 1/{n_keys}"),
        ("entropy", "entropia média (nats)", "0 = one-hot (um único peso 1)", np.log(n_keys), f"uniforme: ln {n_keys}"),
        ("grad", "norma do gradiente da softmax", "0 = o gradiente sumiu", None, None),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
    for ax, (key, ylabel, note, ref, ref_label) in zip(axes, panels):
        ax.plot(d_k, result[f"{key}_unscaled"], "o-", color="#d62728", label="sem escala: q·k")
        ax.plot(d_k, result[f"{key}_scaled"], "s-", color="#1f77b4", label="com escala: q·k / √d_k")
        if ref is not None:
            ax.axhline(ref, color="gray", linestyle=":", linewidth=1, label=ref_label)
        ax.set_ylim(bottom=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(d_k, [str(d) for d in d_k])
        ax.set_xlabel("$d_k$ (dimensão de consultas e chaves)")
        ax.set_ylabel(ylabel)
        ax.set_title(note, fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[:2]:
        ax.legend(fontsize=7)
    fig.suptitle(r"Sem dividir por $\sqrt{d_k}$, a softmax satura à medida que $d_k$ cresce")
    return AttentionPlot(fig, axes)
