"""Corpus de respostas da Aula 6 (03-exercicios), como alunos as escreveriam a partir dos enunciados: pelo
menos 3 válidas e 8 erradas por exercício. As válidas passam sem nenhum ❌; as erradas não passam, e a dica
nomeia o engano (o trecho esperado aparece entre as falhas). ``VALIDAS`` e ``ERRADAS`` entram na contagem de
``test_checks_corpus``."""

import corpus
import numpy as np
import pytest

import atencao
from atencao.checks import aula06
from atencao.gpt_backward import cross_entropy, layer_norm_backward, layer_norm_backward_unchecked
from atencao.sampling import next_token_probs
from atencao.schedule import adamw_step


# ---------- exercício 1: a entropia cruzada e o seu gradiente ----------
def ce_certa(logits, targets):
    V = logits.shape[-1]
    Z, y = logits.reshape(-1, V), targets.reshape(-1)
    N = Z.shape[0]
    Zc = Z - Z.max(axis=1, keepdims=True)
    log_p = Zc - np.log(np.exp(Zc).sum(axis=1, keepdims=True))
    loss = -log_p[np.arange(N), y].mean()
    dZ = np.exp(log_p)
    dZ[np.arange(N), y] -= 1
    return loss, (dZ / N).reshape(logits.shape)


def ce_com_onehot_e_softmax_do_curso(logits, targets):
    V = logits.shape[-1]
    P = atencao.softmax(logits)  # a softmax da Aula 2, estável
    Y = np.eye(V)[targets]  # one-hot, forma de logits
    N = targets.size
    m = logits.max(axis=-1, keepdims=True)
    log_soma = np.log(np.exp(logits - m).sum(axis=-1, keepdims=True)) + m
    loss = np.mean(log_soma[..., 0] - np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0])
    return float(loss), (P - Y) / N


def ce_em_lacos(logits, targets):
    V = logits.shape[-1]
    Z, y = logits.reshape(-1, V), targets.reshape(-1)
    N = len(y)
    total, dZ = 0.0, np.zeros_like(Z)
    for i in range(N):
        z = Z[i] - Z[i].max()
        p = np.exp(z) / np.exp(z).sum()
        total += np.log(np.exp(z).sum()) - z[y[i]]  # −log p[y], sem tirar o log de um número que virou 0
        dZ[i] = p
        dZ[i, y[i]] -= 1
    return total / N, (dZ / N).reshape(logits.shape)


def _p(logits):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _perda(logits, targets):
    return -np.log(np.take_along_axis(_p(logits), targets[..., None], axis=-1)).mean()


def ce_sem_onehot(logits, targets):
    return _perda(logits, targets), _p(logits) / targets.size


def ce_sem_dividir(logits, targets):
    return _perda(logits, targets), _p(logits) - np.eye(logits.shape[-1])[targets]


def ce_divide_pelo_lote(logits, targets):
    return _perda(logits, targets), (_p(logits) - np.eye(logits.shape[-1])[targets]) / logits.shape[0]


def ce_sinal_trocado(logits, targets):
    return _perda(logits, targets), (np.eye(logits.shape[-1])[targets] - _p(logits)) / targets.size


def ce_fancy_index(logits, targets):
    V = logits.shape[-1]
    P = _p(logits).reshape(-1, V)
    y = targets.reshape(-1)
    P[:, y] -= 1
    return _perda(logits, targets), (P / len(y)).reshape(logits.shape)


def ce_softmax_ingenua(logits, targets):
    P = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    return (-np.log(np.take_along_axis(P, targets[..., None], axis=-1)).mean(),
            (P - np.eye(logits.shape[-1])[targets]) / targets.size)


def ce_perda_somada(logits, targets):
    return (-np.log(np.take_along_axis(_p(logits), targets[..., None], axis=-1)).sum(),
            (_p(logits) - np.eye(logits.shape[-1])[targets]) / targets.size)


def ce_perda_em_bits(logits, targets):
    return (_perda(logits, targets) / np.log(2), (_p(logits) - np.eye(logits.shape[-1])[targets]) / targets.size)


def ce_perda_de_todo_o_vocabulario(logits, targets):
    return -np.log(_p(logits)).mean(), (_p(logits) - np.eye(logits.shape[-1])[targets]) / targets.size


def ce_log_softmax_no_gradiente(logits, targets):
    return _perda(logits, targets), (np.log(_p(logits)) - np.eye(logits.shape[-1])[targets]) / targets.size


def ce_biblioteca(logits, targets):
    return cross_entropy(logits, targets)


def ce_float32(logits, targets):
    loss, dZ = ce_certa(logits, targets)
    return loss, dZ.astype(np.float32)


# ---------- exercício 2: o backward da LayerNorm ----------
def ln_certa(dy, x, gamma, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    s = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mu) * s
    g = dy * gamma
    dx = s * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    d = x.shape[-1]
    return dx, (dy * x_hat).reshape(-1, d).sum(axis=0), dy.reshape(-1, d).sum(axis=0)


def ln_tres_caminhos(dy, x, gamma, eps=1e-5):
    # a regra da cadeia por extenso: o caminho direto, o da média e o da variância
    d = x.shape[-1]
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc**2).mean(-1, keepdims=True)
    inv = (var + eps) ** -0.5
    dxhat = dy * gamma
    dvar = (dxhat * xc).sum(-1, keepdims=True) * -0.5 * (var + eps) ** -1.5
    dmu = -(dxhat * inv).sum(-1, keepdims=True) + dvar * (-2 * xc).mean(-1, keepdims=True)
    dx = dxhat * inv + dvar * 2 * xc / d + dmu / d
    dgamma = (dy * xc * inv).reshape(-1, d).sum(axis=0)
    dbeta = np.einsum("nd->d", dy.reshape(-1, d))
    return dx, dgamma, dbeta


def ln_jacobiano_por_linha(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    X, DY = x.reshape(-1, d), dy.reshape(-1, d)
    dx = np.zeros_like(X)
    dgamma, dbeta = np.zeros(d), np.zeros(d)
    for r in range(len(X)):
        s = 1 / np.sqrt(X[r].var() + eps)
        xh = (X[r] - X[r].mean()) * s
        J = s * (np.eye(d) - 1 / d - np.outer(xh, xh) / d)  # J[k, j] = ∂x̂_k/∂x_j
        dx[r] = J.T @ (DY[r] * gamma)
        dgamma += DY[r] * xh
        dbeta += DY[r]
    return dx.reshape(x.shape), dgamma, dbeta


def _ln_base(dy, x, gamma, eps):
    s = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) * s
    return s, x_hat, dy * gamma, x.shape[-1]


def ln_sem_variancia(dy, x, gamma, eps=1e-5):
    s, x_hat, g, d = _ln_base(dy, x, gamma, eps)
    return s * (g - g.mean(-1, keepdims=True)), (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)


def ln_sem_media(dy, x, gamma, eps=1e-5):
    s, x_hat, g, d = _ln_base(dy, x, gamma, eps)
    return (s * (g - x_hat * (g * x_hat).mean(-1, keepdims=True)), (dy * x_hat).reshape(-1, d).sum(0),
            dy.reshape(-1, d).sum(0))


def ln_so_o_caminho_direto(dy, x, gamma, eps=1e-5):
    s, x_hat, g, d = _ln_base(dy, x, gamma, eps)
    return s * g, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)


def ln_sem_gamma(dy, x, gamma, eps=1e-5):
    s, x_hat, _, d = _ln_base(dy, x, gamma, eps)
    g = dy
    dx = s * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))
    return dx, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)


def ln_variancia_amostral(dy, x, gamma, eps=1e-5):
    s = 1 / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) * s
    g, d = dy * gamma, x.shape[-1]
    dx = s * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))
    return dx, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)


def ln_eps_fora_da_raiz(dy, x, gamma, eps=1e-5):
    s = 1 / (x.std(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) * s
    g, d = dy * gamma, x.shape[-1]
    dx = s * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))
    return dx, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)


def ln_dgamma_com_x(dy, x, gamma, eps=1e-5):
    dx, _, dbeta = ln_certa(dy, x, gamma, eps)
    return dx, (dy * x).reshape(-1, x.shape[-1]).sum(0), dbeta


def ln_soma_so_no_eixo_0(dy, x, gamma, eps=1e-5):
    s, x_hat, g, d = _ln_base(dy, x, gamma, eps)
    dx = s * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))
    return dx, (dy * x_hat).sum(axis=0), dy.sum(axis=0)


def ln_dbeta_media(dy, x, gamma, eps=1e-5):
    dx, dgamma, _ = ln_certa(dy, x, gamma, eps)
    return dx, dgamma, dy.reshape(-1, x.shape[-1]).mean(0)


def ln_biblioteca(dy, x, gamma, eps=1e-5):
    return layer_norm_backward(dy, x, gamma, eps=eps)


def ln_biblioteca_sem_validar(dy, x, gamma, eps=1e-5):  # o miolo da pronta, que o treino do GPT usa
    return layer_norm_backward_unchecked(dy, x, gamma, eps)


# ---------- exercício 3: um passo do AdamW ----------
def adamw_certo(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad**2
    m_hat = m / (1 - b1**t)
    v_hat = v / (1 - b2**t)
    param = param - lr * (m_hat / (np.sqrt(v_hat) + eps) + weight_decay * param)
    return param, m, v


def adamw_decai_primeiro(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    # como o torch.optim.AdamW: encolhe os pesos, depois o passo do Adam
    b1, b2 = betas
    novo = param * (1 - lr * weight_decay)
    m_novo = b1 * m + (1 - b1) * grad
    v_novo = b2 * v + (1 - b2) * grad * grad
    passo = (m_novo / (1 - b1**t)) / (np.sqrt(v_novo / (1 - b2**t)) + eps)
    return novo - lr * passo, m_novo, v_novo


def adamw_passo_corrigido_junto(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = m.copy()
    v = v.copy()
    m *= b1
    m += (1 - b1) * grad
    v *= b2
    v += (1 - b2) * np.square(grad)
    bc1, bc2 = 1 - b1**t, 1 - b2**t
    param = param - lr * weight_decay * param - lr * (m / bc1) / (np.sqrt(v / bc2) + eps)
    return param, m, v


def adam_com_l2(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adamw_certo(param, grad + weight_decay * param, m, v, t, lr, betas, eps, 0.0)


def adamw_sem_correcao(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad**2
    return param - lr * (m / (np.sqrt(v) + eps) + weight_decay * param), m, v


def adamw_t_mais_1(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adamw_certo(param, grad, m, v, t + 1, lr, betas, eps, weight_decay)


def adamw_decaimento_sem_lr(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad**2
    passo = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return param - lr * passo - weight_decay * param, m, v


def adamw_betas_trocados(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adamw_certo(param, grad, m, v, t, lr, (betas[1], betas[0]), eps, weight_decay)


def adamw_eps_na_raiz(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad**2
    passo = (m / (1 - b1**t)) / np.sqrt(v / (1 - b2**t) + eps)
    return param - lr * (passo + weight_decay * param), m, v


def adamw_sem_decaimento(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adamw_certo(param, grad, m, v, t, lr, betas, eps, 0.0)


def adamw_betas_fixos(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adamw_certo(param, grad, m, v, t, lr, (0.9, 0.999), 1e-8, weight_decay)  # ignora os recebidos


def adamw_devolve_m_v_antigos(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    novo, _, _ = adamw_certo(param, grad, m, v, t, lr, betas, eps, weight_decay)
    return novo, m, v


def adamw_m_e_v_trocados(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    novo, m2, v2 = adamw_certo(param, grad, m, v, t, lr, betas, eps, weight_decay)
    return novo, v2, m2


def adamw_sinal_trocado(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    novo, m2, v2 = adamw_certo(param, grad, m, v, t, lr, betas, eps, weight_decay)
    return 2 * param - novo, m2, v2


def adamw_biblioteca(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adamw_step(param, grad, m, v, t, lr, betas=betas, eps=eps, weight_decay=weight_decay)


# ---------- exercício 4: a distribuição da amostragem ----------
def amostra_certa(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        p = np.zeros(len(logits))
        p[np.argmax(logits)] = 1.0
        return p
    z = logits / temperature
    if top_k is not None and top_k < len(logits):
        corte = np.sort(logits)[-top_k]
        z = np.where(logits >= corte, z, -np.inf)
    return atencao.softmax(z)


def amostra_potencia_das_probabilidades(logits, temperature=1.0, top_k=None):
    # p^(1/T) normalizado é softmax(z/T): a temperatura também pode entrar assim
    if temperature == 0:
        return (np.arange(len(logits)) == np.argmax(logits)).astype(float)
    p = np.exp(logits - logits.max())
    p = p / p.sum()
    if top_k is not None and top_k < len(p):
        p[np.argsort(p)[:-top_k]] = 0.0  # fora dos k maiores
    p = p ** (1 / temperature)
    return p / p.sum()


def amostra_com_argsort(logits, temperature=1.0, top_k=None):
    V = len(logits)
    if temperature == 0:
        return np.eye(V)[np.argmax(logits)]
    z = logits / temperature
    if top_k is not None:
        fora = np.argsort(-z)[min(top_k, V):]
        z = z.copy()
        z[fora] = -np.inf
    e = np.exp(z - z.max())
    return e / e.sum()


def _sm(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def _greedy(logits):
    return np.eye(len(logits))[np.argmax(logits)]


def amostra_temperatura_depois(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits.copy()
    if top_k is not None and top_k < len(z):
        z = np.where(z >= np.sort(z)[-top_k], z, -np.inf)
    p = _sm(z) / temperature
    return p / p.sum()


def amostra_temperatura_multiplica(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits * temperature
    if top_k is not None and top_k < len(z):
        z = np.where(logits >= np.sort(logits)[-top_k], z, -np.inf)
    return _sm(z)


def amostra_k_menos_1(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits / temperature
    if top_k is not None and top_k < len(z):
        z = np.where(logits > np.sort(logits)[-top_k], z, -np.inf)
    return _sm(z)


def amostra_sem_renormalizar(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    p = _sm(logits / temperature)
    if top_k is not None and top_k < len(p):
        p = np.where(logits >= np.sort(logits)[-top_k], p, 0.0)
    return p


def amostra_k_menores(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits / temperature
    if top_k is not None and top_k < len(z):
        z = np.where(logits <= np.sort(logits)[top_k - 1], z, -np.inf)
    return _sm(z)


def amostra_sem_top_k_maior_que_v(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits / temperature
    if top_k is not None:
        z = np.where(logits >= np.sort(logits)[-top_k], z, -np.inf)  # IndexError com k > V
    return _sm(z)


def amostra_softmax_ingenua(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits / temperature
    if top_k is not None and top_k < len(z):
        z = np.where(logits >= np.sort(logits)[-top_k], z, -np.inf)
    return np.exp(z) / np.exp(z).sum()


def amostra_divide_por_zero(logits, temperature=1.0, top_k=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        z = logits / temperature
        if top_k is not None and top_k < len(z):
            z = np.where(logits >= np.sort(logits)[-top_k], z, -np.inf)
        return _sm(z)


def amostra_devolve_logits(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return _greedy(logits)
    z = logits / temperature
    if top_k is not None and top_k < len(z):
        z = np.where(logits >= np.sort(logits)[-top_k], z, -np.inf)
    return z


def amostra_biblioteca(logits, temperature=1.0, top_k=None):
    return next_token_probs(logits, temperature, top_k)


# ---------- projeto: a pontuação de indução ----------
def inducao_certa(weights, half):
    i = np.arange(half, 2 * half)
    return weights[:, :, i, i - half + 1].mean(axis=(0, 2))


def inducao_diagonal(weights, half):
    # a diagonal deslocada de −(half − 1), só nas linhas da segunda metade
    diag = np.diagonal(weights, offset=-(half - 1), axis1=2, axis2=3)  # (B, H, half + 1)
    return diag[..., 1:].mean(axis=(0, 2))


def inducao_em_lacos(weights, half):
    B, H, n, _ = weights.shape
    scores = np.zeros(H)
    for h in range(H):
        total = 0.0
        for b in range(B):
            for i in range(half, n):
                total += weights[b, h, i, i - half + 1]
        scores[h] = total / (B * half)
    return scores


def _cols(weights, linhas, colunas):
    return weights[:, :, linhas, colunas]


def inducao_token_repetido(weights, half):
    i = np.arange(half, 2 * half)
    return _cols(weights, i, i - half).mean(axis=(0, 2))


def inducao_menos_1(weights, half):
    i = np.arange(half, 2 * half)
    return _cols(weights, i, i - half - 1).mean(axis=(0, 2))


def inducao_token_anterior(weights, half):
    j = np.arange(1, 2 * half)
    return _cols(weights, j, j - 1).mean(axis=(0, 2))


def inducao_todas_as_linhas(weights, half):
    j = np.arange(2 * half)
    return _cols(weights, j, j - half + 1).mean(axis=(0, 2))


def inducao_eixo_errado(weights, half):
    i = np.arange(half, 2 * half)
    return _cols(weights, i, i - half + 1).mean(axis=(0, 1))


def inducao_maximo(weights, half):
    i = np.arange(half, 2 * half)
    return _cols(weights, i, i - half + 1).max(axis=(0, 2))


def inducao_soma(weights, half):
    i = np.arange(half, 2 * half)
    return _cols(weights, i, i - half + 1).sum(axis=2).mean(axis=0)


def inducao_media_de_tudo(weights, half):
    i = np.arange(half, 2 * half)
    return np.full(weights.shape[1], _cols(weights, i, i - half + 1).mean())


def inducao_so_o_primeiro_exemplo(weights, half):
    i = np.arange(half, 2 * half)
    return weights[0][:, i, i - half + 1].mean(axis=-1)


VALIDAS = {
    aula06.exercicio_1: [ce_certa, ce_com_onehot_e_softmax_do_curso, ce_em_lacos],
    aula06.exercicio_2: [ln_certa, ln_tres_caminhos, ln_jacobiano_por_linha],
    aula06.exercicio_3: [adamw_certo, adamw_decai_primeiro, adamw_passo_corrigido_junto],
    aula06.exercicio_4: [amostra_certa, amostra_potencia_das_probabilidades, amostra_com_argsort],
    aula06.projeto: [inducao_certa, inducao_diagonal, inducao_em_lacos],
}

ERRADAS = {
    aula06.exercicio_1: [
        ("missing_one_hot", ce_sem_onehot, "dlogits"), ("missing_mean", ce_sem_dividir, "dlogits"),
        ("divided_by_batch", ce_divide_pelo_lote, "dlogits"),
        ("sign_flipped", ce_sinal_trocado, "dlogits"), ("one_hot_all_targets", ce_fancy_index, "dlogits"),
        ("unstable_softmax", ce_softmax_ingenua, "logits grandes"),
        ("loss_sum_instead_of_mean", ce_perda_somada, "a perda média"),
        ("loss_in_bits", ce_perda_em_bits, "a perda média"),
        ("loss_over_vocabulary", ce_perda_de_todo_o_vocabulario, "a perda média"),
        ("log_softmax_instead", ce_log_softmax_no_gradiente, "dlogits"),
        ("forbidden_function", ce_biblioteca, "a conta é sua"), ("float32", ce_float32, "dlogits"),
    ],
    aula06.exercicio_2: [
        ("missing_variance_term", ln_sem_variancia, "dx igual"), ("missing_mean_term", ln_sem_media, "dx igual"),
        ("missing_mean_and_variance_terms", ln_so_o_caminho_direto, "dx igual"),
        ("missing_gamma", ln_sem_gamma, "dx igual"), ("var_ddof1", ln_variancia_amostral, "dx igual"),
        ("eps_outside_sqrt", ln_eps_fora_da_raiz, "dx igual"),
        ("x_instead_of_x_hat", ln_dgamma_com_x, "dgamma"),
        ("sum_over_first_axis_only", ln_soma_so_no_eixo_0, "lote (2, 4, 6)"),
        ("mean_instead_of_sum", ln_dbeta_media, "dbeta"),
        ("forbidden_function", ln_biblioteca, "a conta é sua"),
        ("forbidden_function", ln_biblioteca_sem_validar, "a conta é sua"),
    ],
    aula06.exercicio_3: [
        ("l2_instead_of_decoupled_decay", adam_com_l2, "o novo param"),
        ("missing_bias_correction", adamw_sem_correcao, "o novo param"),
        ("bias_correction_exponent", adamw_t_mais_1, "o novo param"),
        ("decay_without_lr", adamw_decaimento_sem_lr, "o novo param"), ("betas_swapped", adamw_betas_trocados,
         "o novo"),
        ("eps_inside_sqrt", adamw_eps_na_raiz, "o novo param"),
        ("missing_weight_decay", adamw_sem_decaimento, "o novo param"),
        ("ignored_betas_eps", adamw_betas_fixos, "o novo param"),
        ("moment_not_updated", adamw_devolve_m_v_antigos, "o novo m"), ("m_v_swapped", adamw_m_e_v_trocados,
         "o novo m"),
        ("wrong_values", adamw_sinal_trocado, "o novo param"), ("forbidden_function", adamw_biblioteca,
         "a conta é sua"),
    ],
    aula06.exercicio_4: [
        ("temperature_after_softmax", amostra_temperatura_depois, "T = 0,5"),
        ("temperature_multiplied", amostra_temperatura_multiplica, "T = 0,5"),
        ("top_k_off_by_one_fewer", amostra_k_menos_1, "top-k = 3"),
        ("top_k_not_renormalized", amostra_sem_renormalizar, "top-k = 3"),
        ("top_k_smallest", amostra_k_menores, "top-k = 3"),
        ("student_exception", amostra_sem_top_k_maior_que_v, "levantou IndexError"),
        ("sampling_not_finite", amostra_softmax_ingenua, "logits grandes"),
        ("sampling_not_finite", amostra_divide_por_zero, "T = 0"),
        ("logits_returned", amostra_devolve_logits, "T = 1"),
        ("forbidden_function", amostra_biblioteca, "a conta é sua"),
    ],
    aula06.projeto: [
        ("repeated_token_column", inducao_token_repetido, "a pontuação"),
        ("column_off_by_two", inducao_menos_1, "a pontuação"),
        ("previous_token_column", inducao_token_anterior, "a pontuação"),
        ("first_half_rows", inducao_todas_as_linhas, "a pontuação"),
        ("mean_wrong_axis", inducao_eixo_errado, "a pontuação"), ("max_instead_of_mean", inducao_maximo, "a pontuação"),
        ("sum_instead_of_mean", inducao_soma, "a pontuação"),
        ("wrong_values", inducao_media_de_tudo, "a pontuação"),
        ("wrong_values", inducao_so_o_primeiro_exemplo, "a pontuação"),
    ],
}

# (verificação, resposta errada, trecho da dica que nomeia o engano)
DICAS = [
    (aula06.exercicio_1, ce_sem_onehot, "faltou subtrair o one-hot"),
    (aula06.exercicio_1, ce_sem_dividir, "faltou dividir pelo número de posições"),
    (aula06.exercicio_1, ce_divide_pelo_lote, "dividiu pelo número de sequências"),
    (aula06.exercicio_1, ce_sinal_trocado, "o sinal está trocado"),
    (aula06.exercicio_1, ce_fancy_index, "P[:, y] -= 1"),
    (aula06.exercicio_1, ce_softmax_ingenua, "np.exp estoura"),
    (aula06.exercicio_1, ce_perda_somada, "não a soma"),
    (aula06.exercicio_1, ce_perda_em_bits, "nats"),
    (aula06.exercicio_1, ce_perda_de_todo_o_vocabulario, "só a probabilidade do ALVO"),
    (aula06.exercicio_1, ce_log_softmax_no_gradiente, "log da softmax"),
    (aula06.exercicio_1, ce_float32, "float32"),
    (aula06.exercicio_2, ln_sem_variancia, "faltou o termo da variância"),
    (aula06.exercicio_2, ln_sem_media, "faltou o termo da média"),
    (aula06.exercicio_2, ln_so_o_caminho_direto, "faltaram os termos da média e da variância"),
    (aula06.exercicio_2, ln_sem_gamma, "faltou multiplicar dy por γ"),
    (aula06.exercicio_2, ln_variancia_amostral, "ddof=0"),
    (aula06.exercicio_2, ln_eps_fora_da_raiz, "DENTRO da raiz"),
    (aula06.exercicio_2, ln_dgamma_com_x, "x NORMALIZADO"),
    (aula06.exercicio_2, ln_soma_so_no_eixo_0, "TODAS as linhas"),
    (aula06.exercicio_2, ln_dbeta_media, "não a média"),
    (aula06.exercicio_3, adam_com_l2, "Adam com L2"),
    (aula06.exercicio_3, adamw_sem_correcao, "faltou a correção de viés"),
    (aula06.exercicio_3, adamw_t_mais_1, "expoente errado"),
    (aula06.exercicio_3, adamw_decaimento_sem_lr, "multiplicado pela taxa"),
    (aula06.exercicio_3, adamw_betas_trocados, "β₁ e β₂ trocados"),
    (aula06.exercicio_3, adamw_eps_na_raiz, "FORA da raiz"),
    (aula06.exercicio_3, adamw_sem_decaimento, "o decaimento de peso ficou de fora"),
    (aula06.exercicio_3, adamw_devolve_m_v_antigos, "voltou igual ao que entrou"),
    (aula06.exercicio_3, adamw_m_e_v_trocados, "m e v trocados"),
    (aula06.exercicio_4, amostra_temperatura_depois, "DEPOIS da softmax"),
    (aula06.exercicio_4, amostra_temperatura_multiplica, "multiplica os logits"),
    (aula06.exercicio_4, amostra_k_menos_1, "k − 1"),
    (aula06.exercicio_4, amostra_sem_renormalizar, "sem renormalizar"),
    (aula06.exercicio_4, amostra_k_menores, "k MENORES"),
    (aula06.exercicio_4, amostra_softmax_ingenua, "subtraia o máximo"),
    (aula06.exercicio_4, amostra_divide_por_zero, "não divida por T"),
    (aula06.exercicio_4, amostra_devolve_logits, "devolveu os logits"),
    (aula06.projeto, inducao_token_repetido, "MESMO token"),
    (aula06.projeto, inducao_menos_1, "não i − half − 1"),
    (aula06.projeto, inducao_token_anterior, "token anterior"),
    (aula06.projeto, inducao_todas_as_linhas, "SEGUNDA metade"),
    (aula06.projeto, inducao_eixo_errado, "forma (n_heads,)"),
    (aula06.projeto, inducao_maximo, "não o máximo"),
    (aula06.projeto, inducao_soma, "não a soma"),
]

test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)


def _dica_aparece(check, fn, trecho, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    result = check(fn)
    out = " ".join(capsys.readouterr().out.split())
    assert not result, out
    assert trecho in out, out


@pytest.mark.parametrize("check, fn, trecho", DICAS, ids=[f"{corpus.nome(f)}" for _, f, _ in DICAS])
def test_a_dica_nomeia_o_engano(check, fn, trecho, capsys, monkeypatch):
    _dica_aparece(check, fn, trecho, capsys, monkeypatch)
