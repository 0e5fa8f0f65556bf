"""Verificações da Aula 6 (Módulo 6): ``03-exercicios`` (o backward da entropia cruzada e da LayerNorm, um
passo do AdamW, a distribuição da amostragem com temperatura e top-k) e ``04-projeto`` (a pontuação de indução).

Cada função recebe a **função** escrita pelo aluno, roda-a em vários casos, compara com uma referência
calculada aqui (as contas da teoria, ``01-teoria``) e imprime o relatório, com a dica do engano típico que
reproduz a resposta. Os casos saem de ``case_seed``: fixos no notebook, sorteados na correção.
"""

from __future__ import annotations

import numpy as np

from ..attention import softmax
from ..backward import numerical_gradient, softmax_backward
from ..gpt_backward import cross_entropy, layer_norm_backward, layer_norm_backward_unchecked
from ..optim import Adam
from ..sampling import next_token_probs
from ..schedule import adamw_step
from ..training import TinyAttentionModel, pattern_score
from .framework import Checker, call_frozen, case_seed, check, frozen_copy, mistake, passou, protect

__all__ = ["passou", "exercicio_1", "exercicio_2", "exercicio_3", "exercicio_4", "projeto"]

# o enunciado de cada exercício: a conta é do aluno; as respostas prontas da biblioteca servem só para conferir.
# Só as respostas em si: na correção, uma função proibida em alguma verificação da aula também é recusada fora
# das verificações, e o GPT, o treino e a geração dos notebooks usam a LayerNorm, o AdamW (com o passo do aluno),
# o Adam e a geração (com a distribuição do aluno) por dentro.
_PRONTAS_CE = (cross_entropy, softmax_backward, TinyAttentionModel, numerical_gradient)
_PRONTAS_LN = (layer_norm_backward, layer_norm_backward_unchecked,  # o miolo também (o treino o usa)
               numerical_gradient)  # as diferenças centrais da Aula 5 ficam dentro da tolerância
_PRONTAS_ADAM = (adamw_step, Adam)  # o Adam da Aula 5 mais uma linha de decaimento é o AdamW
_PRONTAS_AMOSTRA = (next_token_probs,)
_PRONTAS_INDUCAO = (pattern_score,)  # num recorte dos pesos, a pontuação da Aula 5 é a de indução


def _match(got: np.ndarray, candidates, ref, atol: float, rtol: float = 1e-9) -> str | None:
    """A dica do primeiro engano que reproduz ``got`` (como :func:`matching_hint`, mas sem a tolerância relativa
    de 1e-5 do ``np.allclose``: alguns enganos daqui, como o ε no lugar errado, mudam o resultado em menos que
    isso). Um candidato igual à resposta certa (o engano não muda nada neste caso) é pulado."""
    ref = np.asarray(ref, dtype=float)
    for dica, cand in candidates:
        cand = np.asarray(cand, dtype=float)
        if cand.shape != got.shape:
            continue
        tol = atol + rtol * np.abs(cand)
        if np.all(np.abs(got - cand) <= tol) and not (cand.shape == ref.shape and np.all(np.abs(cand - ref) <= tol)):
            return dica
    return None


def _float32(valor) -> bool:
    """O que a função devolveu é um array de precisão menor que float64 (float32, float16)?"""
    tipo = getattr(valor, "dtype", None)
    return tipo is not None and np.issubdtype(tipo, np.floating) and np.finfo(tipo).bits < 64


_FLOAT32 = (mistake("float32", "o resultado veio em float32: a conta parece certa, mas o float32 guarda só uns 7 "
                    "algarismos, e a verificação pede 1e-9. Mantenha tudo em float64 (sem .astype(np.float32))."))


# ---------- exercício 1: a entropia cruzada e o seu gradiente ----------
def _softmax_rows(Z: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(Z - Z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _ce_reference(Z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """A perda média (nats) e ``dZ = (P − onehot) / N``, ``N`` = todas as posições."""
    V = Z.shape[-1]
    Zf, yf = Z.reshape(-1, V), y.reshape(-1)
    N = Zf.shape[0]
    Zc = Zf - Zf.max(axis=-1, keepdims=True)
    log_p = Zc - np.log(np.exp(Zc).sum(axis=-1, keepdims=True))
    P = np.exp(log_p)
    one_hot = np.zeros_like(P)
    one_hot[np.arange(N), yf] = 1.0
    return float(-log_p[np.arange(N), yf].mean()), ((P - one_hot) / N).reshape(Z.shape)


def _ce_grad_mistakes(Z: np.ndarray, y: np.ndarray) -> list:
    """Os enganos típicos do gradiente da entropia cruzada, cada um com o dZ que ele produz."""
    V = Z.shape[-1]
    Zf, yf = Z.reshape(-1, V), y.reshape(-1)
    N = Zf.shape[0]
    P = _softmax_rows(Zf)
    Y = np.zeros_like(P)
    Y[np.arange(N), yf] = 1.0
    todos_os_alvos = P.copy()
    todos_os_alvos[:, yf] -= 1.0  # P[:, y] -= 1: cada linha perde 1 em TODAS as colunas-alvo do lote
    formula = "dZ = (P - onehot(y)) / N, com N = o número de posições (todas as linhas de todas as sequências)"
    enganos = [
        (mistake("missing_one_hot",
         f"faltou subtrair o one-hot do alvo: o gradiente é a probabilidade MENOS 1 na coluna do alvo, {formula}."),
         P / N),
        (mistake("missing_mean",
         f"faltou dividir pelo número de posições N: a perda é a média, então {formula}."), P - Y),
        (mistake("sign_flipped",
         f"o sinal está trocado: é P menos o one-hot, e não o contrário; {formula}."), (Y - P) / N),
        (mistake("one_hot_all_targets", "P[:, y] -= 1 subtrai 1 em todas as colunas-alvo do lote, em cada linha. "
                 "Subtraia só na linha i, coluna y[i]: P[np.arange(N), y] -= 1."), todos_os_alvos / N),
        (mistake("softmax_wrong_axis",
         f"a softmax normalizou o eixo errado: cada posição (linha) tem a sua distribuição sobre o vocabulário "
         f"(o último eixo, axis=-1); {formula}."), (_softmax_rows(Zf, axis=0) - Y) / N),
        (mistake("log_softmax_instead",
         f"você usou o log da softmax no lugar da softmax: o gradiente de −log p_y em relação aos logits é "
         f"p − onehot; {formula}."), (np.log(P) - Y) / N),
    ]
    if Z.ndim == 3:
        enganos.append((mistake("divided_by_batch",
                        f"você dividiu pelo número de sequências ({Z.shape[0]}), e não pelo de posições: a média é "
                        f"sobre todas as B·n = {N} posições; {formula}."), (P - Y) / Z.shape[0]))
        enganos.append((mistake("divided_by_length",
                        f"você dividiu pelo comprimento das sequências ({Z.shape[1]}), e não pelo número de posições: "
                        f"a média é sobre todas as B·n = {N} posições; {formula}."), (P - Y) / Z.shape[1]))
    return [(dica, g.reshape(Z.shape)) for dica, g in enganos]


def _ce_loss_mistakes(Z: np.ndarray, y: np.ndarray) -> list:
    """Os enganos típicos da perda: a soma no lugar da média, os bits, o log de todas as probabilidades."""
    V = Z.shape[-1]
    Zf, yf = Z.reshape(-1, V), y.reshape(-1)
    N = Zf.shape[0]
    log_p = np.log(_softmax_rows(Zf))
    certa = -log_p[np.arange(N), yf]
    return [
        (mistake("loss_sum_instead_of_mean", "a perda é a MÉDIA de −log "
                 "p(alvo) sobre as posições, não a soma."), np.asarray(certa.sum())),
        (mistake("loss_in_bits", "a perda vai em nats (logaritmo natural, np.log); bits são só para mostrar, dividindo "
                 "por ln 2 depois."),
         np.asarray(certa.mean() / np.log(2))),
        (mistake("loss_over_vocabulary", "a perda usa só a probabilidade do ALVO de cada posição, −log p[i, y[i]], e "
                 "não a média de −log p de todo o vocabulário."), np.asarray(-log_p.mean())),
        (mistake("loss_sign_flipped", "faltou o sinal de menos: a "
                 "perda é −log p(alvo), um número positivo."), np.asarray(-certa.mean())),
    ]


def _ce_cases(rng: np.random.Generator) -> list:
    grandes = 300 * rng.normal(size=(3, 5))
    grandes[np.arange(3), rng.integers(0, 5, size=3)] = 800 + 50 * rng.random(3)  # exp(800) estoura: sem o máximo, NaN
    return [
        ("N = 4 posições, V = 6", rng.normal(size=(4, 6)), rng.integers(0, 6, size=4)),
        ("lote (B, n, V) = (2, 3, 7)", 2 * rng.normal(size=(2, 3, 7)), rng.integers(0, 7, size=(2, 3))),
        ("N = 3, logits grandes (±300)", grandes, rng.integers(0, 5, size=3)),
        ("N = 5, o mesmo alvo repetido", rng.normal(size=(5, 4)), np.array([2, 2, 0, 2, 3])),
    ]


def _ce_grad_hint(got: np.ndarray, ref: np.ndarray, Z, y, baixa: bool) -> str:
    if not np.isfinite(got).all():
        return (mistake("unstable_softmax", "apareceram NaN/inf: com logits grandes, np.exp estoura. Subtraia o máximo "
                        "de cada linha antes do exp (o truque da Aula 2): e = np.exp(Z - Z.max(axis=-1, "
                        "keepdims=True))."))
    if baixa and np.allclose(got, ref, rtol=1e-5, atol=1e-7):
        return _FLOAT32
    return (_match(got, _ce_grad_mistakes(Z, y), ref, atol=1e-12)
            or "dZ = (P - onehot(y)) / N: a softmax de cada linha, menos 1 na coluna do alvo, dividido pelo número "
               "de posições.")


@check("Exercício 1 (a entropia cruzada e o seu gradiente)")
def exercicio_1(c: Checker, cross_entropy_fn):
    """Confere ``cross_entropy_fn(logits, targets) -> (loss, dlogits)``: a perda média em nats e
    ``dlogits = (softmax(logits) − onehot(targets)) / N`` (a forma de ``logits``), ``N`` = todas as posições.

    Casos: (N, V); um lote (B, n, V); logits grandes (±300, a softmax ingênua estoura); um alvo repetido.
    Reconhece: o one-hot esquecido, a divisão por N esquecida (ou só por B, ou só por n), o sinal trocado,
    ``P[:, y] -= 1``, a softmax no eixo errado, o log da softmax, NaN (sem subtrair o máximo), a soma no lugar
    da média, a perda em bits, float32. Fonte: Aula 6, ``01-teoria`` (seções 2 e 3.1).
    """
    rng = np.random.default_rng(case_seed(61))
    for label, Z, y in c.cases(_ce_cases(rng)):
        Z, y = frozen_copy(Z), frozen_copy(y)
        got = c.returns(c.call(label, cross_entropy_fn, Z, y, names=("logits", "targets"), forbidden=_PRONTAS_CE),
                        label, "loss", "dlogits", stop=True)
        loss_ref, dZ_ref = _ce_reference(Z, y)
        loss = c.array(got[0], f"{label}: a perda é um número", stop=True)
        dica = (mistake("loss_not_scalar", "a perda é um número só "
                        "(a média), não um array: use .mean().") if loss.size != 1 else
                _match(loss.reshape(()), _ce_loss_mistakes(Z, y), np.asarray(loss_ref), atol=1e-12)
                or "perda = −(1/N) Σ log p[i, y[i]], em nats, com a softmax estável.")
        if not np.isfinite(loss).all():
            dica = (mistake("unstable_softmax", "a perda deu NaN/inf: com logits grandes, np.exp estoura. Use log p = "
                            "(Z − máx) − log Σ exp(Z − máx), linha a linha."))
        c.close(loss.reshape(-1) if loss.size == 1 else loss, np.asarray([loss_ref]),
                f"{label}: a perda média, em nats", atol=1e-9, rtol=1e-9, hint=dica, stop=True)
        dZ = c.array(got[1], f"{label}: dlogits é um array de números", stop=True)
        hint = (f"dlogits tem a forma de logits, {Z.shape}." if dZ.shape != Z.shape
                else _ce_grad_hint(dZ, dZ_ref, Z, y, _float32(got[1])))
        c.close(dZ, dZ_ref, f"{label}: dlogits = (P − onehot) / N", atol=1e-10, rtol=1e-9, hint=hint)


# ---------- exercício 2: o backward da LayerNorm ----------
def _ln_parts(x: np.ndarray, dy: np.ndarray, gamma: np.ndarray, eps: float, ddof: int = 0, eps_fora=False):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=ddof)
    s = 1 / (np.sqrt(var) + eps) if eps_fora else 1 / np.sqrt(var + eps)
    return (x - mu) * s, s, dy * gamma


def _ln_reference(dy, x, gamma, eps):
    x_hat, s, g = _ln_parts(x, dy, gamma, eps)
    dx = s * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    d = x.shape[-1]
    return dx, (dy * x_hat).reshape(-1, d).sum(axis=0), dy.reshape(-1, d).sum(axis=0)


def _ln_dx_mistakes(dy, x, gamma, eps) -> list:
    x_hat, s, g = _ln_parts(x, dy, gamma, eps)
    media, var_termo = g.mean(axis=-1, keepdims=True), x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    formula = "dx = s * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))"
    enganos = [
        (mistake("missing_variance_term",
         "faltou o termo da variância: σ² também depende de x, e o caminho por ela dá − x̂ ⊙ média(g ⊙ x̂). "
         f"{formula}."), s * (g - media)),
        (mistake("missing_mean_term",
         f"faltou o termo da média: μ depende de x, e o caminho por ela dá − média(g). {formula}."),
         s * (g - var_termo)),
        (mistake("missing_mean_and_variance_terms",
         f"faltaram os termos da média e da variância: μ e σ² dependem de x. {formula}."), s * g),
        (mistake("missing_gamma",
         f"faltou multiplicar dy por γ: o gradiente que chega em x̂ é g = dy * gamma. {formula}."),
         s * (dy - dy.mean(axis=-1, keepdims=True) - x_hat * (dy * x_hat).mean(axis=-1, keepdims=True))),
        (mistake("missing_s_factor", f"faltou o fator s = 1/√(σ² + ε) na frente. {formula}."), g - media - var_termo),
        (mistake("wrong_axis",
         f"as médias foram sobre o eixo errado: a LayerNorm normaliza cada linha (o último eixo, axis=-1). {formula}."),
         s * (g - g.mean(axis=0, keepdims=True) - x_hat * (g * x_hat).mean(axis=0, keepdims=True))),
        (mistake("variance_sign_flipped",
         f"o sinal do termo da variância está trocado: é MENOS x̂ ⊙ média(g ⊙ x̂). {formula}."),
         s * (g - media + var_termo)),
    ]
    for ddof, eps_fora, dica in ((1, False, mistake("var_ddof1", "a variância da LayerNorm divide por d (np.var "
                                                    "padrão, ddof=0), não por d − 1.")),
                                 (0, True, mistake("eps_outside_sqrt", "o ε vai DENTRO da raiz: s = 1 / np.sqrt(var + "
                                                   "eps), não 1 / (np.sqrt(var) + eps)."))):
        xh, ss, gg = _ln_parts(x, dy, gamma, eps, ddof=ddof, eps_fora=eps_fora)
        enganos.append((dica, ss * (gg - gg.mean(axis=-1, keepdims=True)
                                    - xh * (gg * xh).mean(axis=-1, keepdims=True))))
    return enganos


def _ln_param_mistakes(dy, x, gamma, eps, nome: str) -> list:
    x_hat, _, _ = _ln_parts(x, dy, gamma, eps)
    d = x.shape[-1]
    soma = "a soma é sobre TODAS as linhas (todas as posições de todas as sequências): reshape(-1, d).sum(axis=0)"
    if nome == "dgamma":
        return [(mistake("x_instead_of_x_hat", "dgamma = Σ dy ⊙ x̂: use o "
                         "x NORMALIZADO (x̂), não o x da entrada."), (dy * x).reshape(-1, d).sum(0)),
                (mistake("missing_x_hat", "dgamma = Σ dy ⊙ x̂ (faltou multiplicar por x̂)."), dy.reshape(-1, d).sum(0)),
                (mistake("sum_over_first_axis_only", f"dgamma: {soma}."), (dy * x_hat).sum(axis=0)),
                (mistake("mean_instead_of_sum", "dgamma: a soma é sobre "
                         "as linhas, não a média."), (dy * x_hat).reshape(-1, d).mean(0))]
    return [(mistake("x_hat_in_dbeta", "dbeta = Σ dy (sem x̂: β só é somado)."), (dy * x_hat).reshape(-1, d).sum(0)),
            (mistake("sum_over_first_axis_only", f"dbeta: {soma}."), dy.sum(axis=0)),
            (mistake("mean_instead_of_sum", "dbeta: a soma é sobre "
                     "as linhas, não a média."), dy.reshape(-1, d).mean(0))]


def _ln_cases(rng: np.random.Generator) -> list:
    pequena = 0.01 * rng.normal(size=(4, 6))  # variância ~1e-4: o ε pesa, e o lugar dele aparece
    return [
        ("x (3, 5), eps = 1e-5", rng.normal(size=(3, 5)), 1e-5),
        ("lote (2, 4, 6), eps = 1e-5", 1 + 2 * rng.normal(size=(2, 4, 6)), 1e-5),
        ("x (4, 6) de variância pequena, eps = 1e-3", pequena, 1e-3),
    ]


@check("Exercício 2 (o backward da LayerNorm)")
def exercicio_2(c: Checker, layer_norm_backward_fn):
    """Confere ``layer_norm_backward_fn(dy, x, gamma, eps=1e-5) -> (dx, dgamma, dbeta)``, a LayerNorm
    ``y = gamma ⊙ (x − μ)/√(σ² + eps) + beta`` no último eixo (``dx`` com a forma de ``x``; ``dgamma`` e ``dbeta``
    de forma (d,), somados sobre todas as linhas).

    Casos: (3, 5); um lote (2, 4, 6); linhas de variância pequena com ``eps = 1e-3`` (o lugar do ε conta).
    Reconhece: o termo da variância ou o da média esquecidos, γ esquecido, s esquecido, o eixo errado, o sinal
    trocado, a variância com d − 1, o ε fora da raiz; em ``dgamma``/``dbeta``: x no lugar de x̂, a soma só no
    eixo 0, a média no lugar da soma. Fonte: Aula 6, ``01-teoria`` (seção 3.2).
    """
    rng = np.random.default_rng(case_seed(62))
    for label, x, eps in c.cases(_ln_cases(rng)):
        dy, gamma = rng.normal(size=x.shape), 1 + 0.5 * rng.normal(size=x.shape[-1])
        got, (dy, x, gamma) = call_frozen(c, label, layer_norm_backward_fn, dy, x, gamma, eps=eps,
                                          returns=("dx", "dgamma", "dbeta"), names=("dy", "x", "gamma"),
                                          forbidden=_PRONTAS_LN)
        refs = dict(zip(("dx", "dgamma", "dbeta"), _ln_reference(dy, x, gamma, eps)))
        for k, nome in enumerate(("dx", "dgamma", "dbeta")):
            g = c.array(got[k], f"{label}: {nome} é um array de números", stop=True)
            enganos = (_ln_dx_mistakes(dy, x, gamma, eps) if nome == "dx"
                       else _ln_param_mistakes(dy, x, gamma, eps, nome))
            forma = "a forma de x" if nome == "dx" else "forma (d,)"
            if g.shape != refs[nome].shape:
                hint = next((dica for dica, cand in enganos if cand.shape == g.shape and np.allclose(g, cand)),
                            f"{nome} tem {forma}, {refs[nome].shape}.")
            elif _float32(got[k]) and np.allclose(g, refs[nome], rtol=1e-5, atol=1e-6):
                hint = _FLOAT32
            else:
                hint = _match(g, enganos, refs[nome], atol=1e-12) or _LN_FORMULAS[nome]
            c.close(g, refs[nome], f"{label}: {nome} igual ao da teoria", atol=1e-9, rtol=1e-8, hint=hint, stop=True)


_LN_FORMULAS = {
    "dx": "com x̂ = (x − μ)·s, s = 1/√(σ² + ε) e g = dy ⊙ γ: dx = s·(g − média(g) − x̂ ⊙ média(g ⊙ x̂)), as médias "
          "no último eixo.",
    "dgamma": "dgamma = Σ dy ⊙ x̂, somado sobre todas as linhas.",
    "dbeta": "dbeta = Σ dy, somado sobre todas as linhas.",
}


# ---------- exercício 3: um passo do AdamW ----------
def _adamw(theta, g, m, v, t, lr, betas, eps, wd, *, l2=False, bias=True, decay_lr=True, swap=False,
           eps_in=False, t_shift=0):
    """Um passo do AdamW (ou de um engano típico, com as chaves)."""
    b1, b2 = (betas[1], betas[0]) if swap else betas
    g = g + wd * theta if l2 else g
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    tt = t + t_shift
    m_hat, v_hat = (m / (1 - b1**tt), v / (1 - b2**tt)) if bias else (m, v)
    passo = m_hat / (np.sqrt(v_hat + eps) if eps_in else np.sqrt(v_hat) + eps)
    decai = 0.0 if l2 else (lr * wd * theta if decay_lr else wd * theta)
    return theta - lr * passo - decai, m, v


def _adam_mistakes(theta, g, m, v, t, lr, betas, eps, wd) -> list:
    """(dica, (theta, m, v)) dos enganos típicos de um passo do AdamW."""
    base = (theta, g, m, v, t, lr, betas, eps, wd)
    return [
        (mistake("l2_instead_of_decoupled_decay", "o decaimento de peso foi somado ao GRADIENTE (g + λθ): isso é o "
                 "Adam com L2, em que o decaimento passa pela divisão por √v̂. No AdamW ele se aplica aos PESOS, fora "
                 "das médias: θ − lr·(m̂/(√v̂ + ε) + λθ)."),
         _adamw(*base, l2=True)),
        (mistake("missing_bias_correction", "faltou a correção de viés: m̂ = m / (1 − β₁ᵗ) e v̂ = v / (1 − β₂ᵗ). Sem "
                 "ela, os primeiros passos saem do tamanho "
                 "errado (no passo 1, uns 3 vezes maiores)."), _adamw(*base, bias=False)),
        (mistake("bias_correction_exponent", "a correção de viés usou o expoente errado: no passo t (contado a partir "
                 "de 1), divida por 1 − β₁ᵗ e 1 − β₂ᵗ, "
                 "com o t recebido (não t − 1 nem t + 1)."), _adamw(*base, t_shift=1)),
        (mistake("bias_correction_exponent", "a correção de viés usou o expoente errado: no passo t (contado a partir "
                 "de 1), divida por 1 − β₁ᵗ e 1 − β₂ᵗ, "
                 "com o t recebido (não t − 1 nem t + 1)."), _adamw(*base, t_shift=-1) if t > 1 else None),
        (mistake("decay_without_lr", "o decaimento de peso também é multiplicado pela "
                 "taxa: θ − lr·λ·θ (e não θ − λ·θ)."),
         _adamw(*base, decay_lr=False)),
        (mistake("betas_swapped", "β₁ e β₂ trocados: β₁ (0,9) é da média do gradiente m, β₂ (0,999) é da média do "
                 "quadrado v."),
         _adamw(*base, swap=True)),
        (mistake("eps_inside_sqrt", "o ε vai FORA da raiz: m̂ / (√v̂ + ε)."), _adamw(*base, eps_in=True)),
        (mistake("missing_weight_decay", "o decaimento de peso ficou de fora: o AdamW soma lr·λ·θ ao passo (o "
                 "weight_decay recebido)."),
         _adamw(theta, g, m, v, t, lr, betas, eps, 0.0)),
        (mistake("ignored_betas_eps", "use os betas e o eps RECEBIDOS (os argumentos da função), e não os valores "
                 "padrão escritos no código: o projeto treina com betas = (0.9, 0.99)."),
         _adamw(theta, g, m, v, t, lr, (0.9, 0.999), 1e-8, wd) if (tuple(betas), eps) != ((0.9, 0.999), 1e-8)
         else None),
    ]


def _adam_cases() -> list:
    shape = (3, 4)
    padrao = ((0.9, 0.999), 1e-8)
    return [("passo t = 5, com m e v de passos anteriores, lr = 0,05, λ = 0,5", (5,), 5, 0.05, 0.5, False, padrao),
            ("passo t = 1 (m = v = 0), lr = 0,01, λ = 0,1", shape, 1, 0.01, 0.1, True, padrao),
            ("passo t = 2, lr = 0,1, λ = 0", shape, 2, 0.1, 0.0, False, padrao),
            ("passo t = 3, gradientes minúsculos (~1e-6): o ε pesa", shape, 3, 0.01, 0.1, "pequeno", padrao),
            ("passo t = 4, betas = (0,8, 0,95) e eps = 1e-3, os recebidos", shape, 4, 0.05, 0.1, False,
             ((0.8, 0.95), 1e-3))]


_ADAM_NOMES = ("param", "m", "v")


@check("Exercício 3 (um passo do AdamW)")
def exercicio_3(c: Checker, adamw_step_fn):
    """Confere ``adamw_step_fn(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01) ->
    (param, m, v)``, os três novos (as formas de ``param``), sem alterar as entradas no lugar.

    Casos: um passo t = 5 com médias de passos anteriores; o primeiro passo (m = v = 0); um passo sem
    decaimento; um com gradientes minúsculos (o lugar do ε pesa); um com outros betas e outro ε (os recebidos).
    Reconhece: o decaimento no gradiente (Adam com L2), a correção de viés esquecida ou com o expoente errado, o
    decaimento sem a taxa, β₁ e β₂ trocados, ε dentro da raiz, o decaimento esquecido, m e v devolvidos sem
    atualizar ou trocados, os betas e o ε padrão escritos no código. Proíbe o ``adamw_step`` e o ``Adam`` da
    Aula 5 prontos. Fonte: Aula 6,
    ``01-teoria`` (seção 4.1); Loshchilov e Hutter (2019), algoritmo 2.
    """
    rng = np.random.default_rng(case_seed(63))
    for label, shape, t, lr, wd, inicio, (betas, eps) in c.cases(_adam_cases()):
        escala = 1e-6 if inicio == "pequeno" else 1.0  # gradientes minúsculos: √v̂ perto de ε
        theta, g = rng.normal(size=shape), escala * rng.normal(size=shape)
        m = np.zeros(shape) if inicio is True else 0.1 * escala * rng.normal(size=shape)
        v = np.zeros(shape) if inicio is True else escala**2 * (0.01 * rng.random(size=shape) + 0.005)
        got, (theta, g, m, v, t, lr) = call_frozen(c, label, adamw_step_fn, theta, g, m, v, t, lr, returns=_ADAM_NOMES,
                                                   names=("param", "grad", "m", "v", "t", "lr"),
                                                   forbidden=_PRONTAS_ADAM, betas=betas, eps=eps, weight_decay=wd)
        ref = _adamw(theta, g, m, v, t, lr, betas, eps, wd)
        enganos = [(dica, r) for dica, r in _adam_mistakes(theta, g, m, v, t, lr, betas, eps, wd) if r is not None]
        for k, nome in enumerate(_ADAM_NOMES):
            arr = c.array(got[k], f"{label}: o novo {nome} é um array de números", stop=True)
            hint = _adam_hint(arr, k, nome, ref, enganos, (theta, m, v))
            c.close(arr, ref[k], f"{label}: o novo {nome}", atol=1e-12, rtol=1e-10, hint=hint, stop=True)


def _adam_hint(arr, k, nome, ref, enganos, antigos) -> str:
    if arr.shape != ref[k].shape:
        return f"o novo {nome} tem a forma de param, {ref[k].shape}."
    if k > 0 and np.allclose(arr, antigos[k], rtol=0, atol=1e-14):
        return mistake("moment_not_updated", f"{nome} voltou igual ao que entrou: atualize e devolva a média nova, "
                       + ("m = β₁·m + (1 − β₁)·g." if nome == "m" else "v = β₂·v + (1 − β₂)·g²."))
    if k == 1 and np.allclose(arr, ref[2], rtol=1e-12, atol=0):
        return mistake("m_v_swapped", "m e v trocados na tupla: devolva (param, m, v).")
    candidatos = [(dica, r[k]) for dica, r in enganos]
    return (_match(arr, candidatos, ref[k], atol=1e-15, rtol=1e-12)
            or ("m = β₁m + (1 − β₁)g; v = β₂v + (1 − β₂)g²; m̂ = m/(1 − β₁ᵗ); v̂ = v/(1 − β₂ᵗ); "
                "param − lr·(m̂/(√v̂ + ε) + λ·param)."))


# ---------- exercício 4: a distribuição da amostragem (temperatura e top-k) ----------
def _sampling_reference(z: np.ndarray, temperature: float, top_k) -> np.ndarray:
    """A distribuição de onde se sorteia: gulosa com T = 0; senão, softmax(z/T) só entre os k maiores logits."""
    if temperature == 0:
        p = np.zeros_like(z)
        p[np.argmax(z)] = 1.0
        return p
    zz = z / temperature
    if top_k is not None and top_k < z.size:
        zz = np.where(z >= np.sort(z)[-top_k], zz, -np.inf)
    return softmax(zz)


def _sampling_mistakes(z: np.ndarray, temperature: float, top_k) -> list:
    T = temperature if temperature else 1.0
    out = [
        (mistake("temperature_after_softmax", "a temperatura entrou DEPOIS da softmax: dividir as probabilidades por T "
                 "e normalizar de novo devolve as mesmas probabilidades. Divida os LOGITS: softmax(logits / T)."),
         _sampling_reference(z, 1.0, top_k)),
        (mistake("temperature_multiplied", "a temperatura multiplica os logits no lugar de dividir: use softmax(logits "
                 "/ T)."),
         _sampling_reference(z * T * T, T, top_k)),
        (mistake("logits_returned", "a função devolveu os logits (ou os logits divididos por T): devolva as "
                 "probabilidades, que somam 1."),
         z / T),
    ]
    if top_k is not None and top_k < z.size:
        ordem = np.sort(z)
        dentro = z >= ordem[-top_k]
        todos = softmax(z / T)
        out += [
            (mistake("top_k_off_by_one_fewer",
             f"o top-k guardou k − 1 = {top_k - 1} tokens: mantenha os logits MAIORES OU IGUAIS ao k-ésimo maior "
             "(np.sort(logits)[-k]), com >=."), _kept(z, T, z > ordem[-top_k])),
            (mistake("top_k_off_by_one_more",
             f"o top-k guardou k + 1 = {top_k + 1} tokens: o corte é o k-ésimo maior logit, np.sort(logits)[-k]."),
             _kept(z, T, z >= ordem[-top_k - 1])),
            (mistake("top_k_not_renormalized", "o top-k zerou os tokens de fora depois da softmax de todos, sem "
                     "renormalizar: as probabilidades dos k guardados precisam somar 1 (dê −inf aos logits de fora e "
                     "faça a softmax, ou divida pela soma dos k)."),
             np.where(dentro, todos, 0.0)),
            (mistake("top_k_smallest", "o top-k guardou os k MENORES logits: mantenha os maiores (np.sort(logits)[-k] "
                     "é o k-ésimo maior)."),
             _kept(z, T, z <= ordem[top_k - 1])),
        ]
    return out


def _kept(z, T, mantidos) -> np.ndarray:
    return softmax(np.where(mantidos, z / T, -np.inf)) if mantidos.any() else np.zeros_like(z)


def _big(z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``z`` com um logit entre 40 e 50: dividido por T = 0,05, passa de 800, e o exp sem o máximo estoura."""
    z = np.array(z)
    z[rng.integers(0, z.size)] = 40 + 10 * rng.random()
    return frozen_copy(z)


def _sampling_cases(rng: np.random.Generator) -> list:
    V = 8
    z = lambda escala=2.0: frozen_copy(escala * rng.normal(size=V))  # noqa: E731
    return [
        ("T = 1, sem top-k", z(), 1.0, None),
        ("T = 0,5, sem top-k", z(), 0.5, None),
        ("T = 2, top-k = 3", z(), 2.0, 3),
        ("T = 0,7, top-k = 5", z(), 0.7, 5),
        ("T = 1, top-k = 1", z(), 1.0, 1),
        ("T = 1, top-k = 20 (mais que o vocabulário)", z(), 1.0, 20),
        ("T = 0,05, logits grandes (±50): a softmax estável", _big(z(20.0), rng), 0.05, None),
        ("T = 0 (gulosa)", z(), 0.0, None),
    ]


@check("Exercício 4 (a distribuição da amostragem: temperatura e top-k)")
def exercicio_4(c: Checker, sampling_distribution_fn):
    """Confere ``sampling_distribution_fn(logits, temperature=1.0, top_k=None) -> probs``: a distribuição de
    onde se sorteia o próximo token (forma (V,), soma 1). Com ``temperature = 0``, a gulosa (1 no maior logit);
    senão ``softmax(logits / T)`` entre os logits maiores ou iguais ao k-ésimo maior (todos, se ``top_k`` é
    ``None`` ou ≥ V), e 0 nos outros.

    Casos: T = 1, 0,5, 2 e 0,7; top-k de 1, 3, 5 e maior que o vocabulário; logits grandes com T pequeno;
    T = 0. Reconhece: a temperatura depois da softmax ou multiplicando, os logits devolvidos, o top-k com k − 1
    ou k + 1 tokens, sem renormalizar ou com os k menores, NaN (a softmax sem o máximo, ou T = 0 dividindo).
    Fonte: Aula 6, ``01-teoria`` (seção 5); Fan, Lewis e Dauphin (2018); Hinton, Vinyals e Dean (2015).
    """
    rng = np.random.default_rng(case_seed(64))
    for label, z, T, k in c.cases(_sampling_cases(rng)):
        got = c.call(label, sampling_distribution_fn, z, names=("logits",), forbidden=_PRONTAS_AMOSTRA,
                     temperature=T, top_k=k)
        p = c.array(got, f"{label}: devolve um array de probabilidades", stop=True)
        ref = _sampling_reference(z, T, k)
        if p.shape != ref.shape:
            hint = "devolva um array de forma (V,): uma probabilidade por token do vocabulário."
        elif not np.isfinite(p).all():
            hint = (mistake("sampling_not_finite",
                    "apareceram NaN/inf: " + ("com T = 0, não divida por T; a gulosa dá probabilidade 1 ao maior "
                                              "logit (np.argmax) e 0 aos outros." if T == 0 else
                                              "com logits grandes e T pequeno, np.exp estoura; subtraia o máximo "
                                              "antes (ou use atencao.softmax).")))
        else:
            hint = (_match(p, _sampling_mistakes(z, T, k), ref, atol=1e-12)
                    or "com T > 0: softmax(logits / T), dando −inf antes aos logits menores que o k-ésimo maior.")
        c.close(p, ref, f"{label}: as probabilidades", atol=1e-10, rtol=1e-8, hint=hint)


# ---------- projeto: a pontuação de indução ----------
def _induction_reference(A: np.ndarray, half: int) -> np.ndarray:
    """Para cada cabeça, a média (lote e posições i = half … 2·half − 1) de A[..., i, i − half + 1]."""
    i = np.arange(half, 2 * half)
    return A[..., i, i - half + 1].mean(axis=(0, 2))


def _induction_mistakes(A: np.ndarray, half: int) -> list:
    i = np.arange(half, 2 * half)
    n = 2 * half
    todas = np.arange(1, n)
    por = lambda linhas, colunas: A[..., linhas, colunas].mean(axis=(0, 2))  # noqa: E731
    return [
        (mistake("repeated_token_column", "você mediu a atenção para a posição i − half, a ocorrência anterior do "
                 "MESMO token (a de uma cabeça de \"token repetido\"). A cabeça de indução olha para o token que veio "
                 "DEPOIS dela: a coluna i − half + 1."),
         por(i, i - half)),
        (mistake("column_off_by_two", "a coluna é i − half + 1 (o token depois da ocorrência anterior), não i − half − "
                 "1."), por(i, i - half - 1)),
        (mistake("previous_token_column", "você mediu a atenção para o token anterior (coluna i − 1): essa é a cabeça "
                 "de token anterior. A de indução olha para a coluna i − half + 1."), por(todas, todas - 1)),
        (mistake("first_half_rows", "as linhas são só as da SEGUNDA metade, i = half … 2·half − 1: na primeira, o "
                 "token ainda não apareceu antes (e i − half "
                 "+ 1 sai negativo, dando a volta no array)."), por(np.arange(n), np.arange(n) - half + 1)),
        (mistake("mean_wrong_axis", "a média é sobre o lote e as posições, uma pontuação por cabeça: o resultado tem "
                 "forma (n_heads,)."),
         A[..., i, i - half + 1].mean(axis=(0, 1))),
        (mistake("max_instead_of_mean", "use a média, não o máximo: a pontuação é o peso médio que a cabeça põe na "
                 "posição de indução."),
         A[..., i, i - half + 1].max(axis=(0, 2))),
        (mistake("sum_instead_of_mean", "a pontuação é a média das linhas i = half … 2·half − 1 (half linhas), não a "
                 "soma."),
         A[..., i, i - half + 1].sum(axis=2).mean(axis=0)),
    ]


def _random_attention(rng: np.random.Generator, B: int, H: int, n: int) -> np.ndarray:
    return _softmax_rows(np.where(np.tril(np.ones((n, n), dtype=bool)), 2 * rng.normal(size=(B, H, n, n)), -np.inf))


@check("Projeto (a pontuação de indução de cada cabeça)")
def projeto(c: Checker, induction_scores_fn):
    """Confere ``induction_scores_fn(weights, half) -> scores``: com ``weights`` (B, n_heads, n, n) os pesos de
    uma camada em sequências de ``n = 2·half`` tokens cuja segunda metade repete a primeira, a pontuação de cada
    cabeça é a média, sobre o lote e as posições ``i = half … n − 1``, de ``weights[b, h, i, i − half + 1]``.

    Casos: pesos causais sorteados de formas (4, 2, 10, 10), (3, 4, 16, 16) e (1, 3, 6, 6), e uma camada em que
    a cabeça 1 é uma cabeça de indução perfeita. Reconhece: a coluna i − half (o token repetido), i − half − 1 ou
    i − 1 (a cabeça de token anterior), as linhas da primeira metade, a média no eixo errado, o máximo ou a soma
    no lugar da média. Proíbe a ``pattern_score`` da Aula 5 pronta (num recorte dos pesos, é a mesma conta).
    Fonte: Olsson et al. (2022), seção 3; Aula 6, ``04-projeto``.
    """
    rng = np.random.default_rng(case_seed(65))
    perfeita = _random_attention(rng, 2, 3, 12)
    i = np.arange(6, 12)
    perfeita[:, 1, 6:, :] = 0.0
    perfeita[:, 1, i, i - 5] = 1.0  # a cabeça 1 só olha para o token depois da ocorrência anterior
    casos = [("pesos (4, 2, 10, 10), half = 5", _random_attention(rng, 4, 2, 10), 5),
             ("pesos (3, 4, 16, 16), half = 8", _random_attention(rng, 3, 4, 16), 8),
             ("pesos (1, 3, 6, 6), half = 3", _random_attention(rng, 1, 3, 6), 3),
             ("pesos (2, 3, 12, 12), half = 6, a cabeça 1 é de indução", perfeita, 6)]
    for label, A, half in c.cases(casos):
        A = frozen_copy(A)
        got = c.array(c.call(label, induction_scores_fn, A, half, names=("weights", "half"),
                             forbidden=_PRONTAS_INDUCAO),
                      f"{label}: devolve um array de pontuações", stop=True)
        ref = _induction_reference(A, half)
        if got.shape != ref.shape:
            hint = next((dica for dica, cand in _induction_mistakes(A, half) if np.shape(cand) == got.shape),
                        "uma pontuação por cabeça: forma (n_heads,).")
        else:
            hint = (_match(got, _induction_mistakes(A, half), ref, atol=1e-12)
                    or "para cada cabeça, a média de weights[b, h, i, i − half + 1] sobre o lote e i = half … n − 1.")
        c.close(got, ref, f"{label}: a pontuação de cada cabeça", atol=1e-12, rtol=1e-10, hint=hint)


protect()
