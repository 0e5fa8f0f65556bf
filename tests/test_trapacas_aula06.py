"""Trapaças na Aula 6 (``03-exercicios`` e ``04-projeto``), escritas por um aluno que leu o repositório inteiro.

Cada teste afirma o comportamento certo: a resposta que foge do enunciado é recusada (❌ no notebook, 0 na
correção) ou, se é uma cópia de ``solutions/``, vai para revisão.

Furos achados e fechados (o ataque ganhava ✅ no notebook e, menos o último, os pontos na correção isolada):

- exercício 1: a entropia cruzada do modelo de indução (``atencao.induction._cross_entropy``, a mesma conta da
  resposta): saiu da biblioteca, a conta mora dentro do modelo;
- exercícios 1 e 2: o gradiente pelas diferenças centrais da biblioteca, ``atencao.backward.numerical_gradient``
  (com um passo relativo à escala da entrada), no lugar das fórmulas: agora proibido nos dois;
- exercício 3: o Adam pronto da Aula 5, ``atencao.optim.Adam``, mais uma linha com o decaimento: proibido (o
  treino de indução tem o Adam escrito nele);
- exercício 3: ``betas`` e ``eps`` fixos no código (ignorando os recebidos): um caso novo usa outros, com a dica;
- projeto: a verificação não proibia nada; agora a vigilância liga (a referência da própria verificação, o
  PyTorch e a pontuação pronta da Aula 5, ``atencao.training.pattern_score`` num recorte dos pesos);
- a cópia de ``solutions/`` com as variáveis locais renomeadas, ou com as quatro funções do passo 1 do projeto em
  outra ordem: a impressão digital das respostas agora troca os nomes criados pela resposta e ordena as funções.

Fechados, com um teste de regressão: as respostas prontas que a verificação já proíbe (``cross_entropy``,
``TinyAttentionModel.loss``, ``layer_norm_backward_unchecked``, ``schedule.AdamW``, ``next_token_probs``, as
referências da verificação nos exercícios, o PyTorch) e o ε fixo na LayerNorm. Os controles: respostas honestas
escritas de outro jeito passam em tudo e não são tomadas por cópia.
"""

from __future__ import annotations

import copy
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import atencao
from atencao.checks import aula06
from correcao import catalogo, isolamento, motor, saneamento

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402

A6 = gerar.AULA6
G6 = catalogo.catalog()[("aula-06-gpt-pequeno-em-portugues", "03-exercicios")]


# ---------- respostas honestas, escritas de outro jeito que a solução ----------
CE_HONESTA = '''def my_cross_entropy(logits, targets):
    forma = logits.shape
    logits = logits.reshape(-1, forma[-1])
    alvos = targets.ravel()
    linhas = np.arange(alvos.size)
    m = logits.max(axis=1)
    lse = m + np.log(np.sum(np.exp(logits - m[:, None]), axis=1))
    perda = np.mean(lse - logits[linhas, alvos])
    probs = np.exp(logits - lse[:, None])
    alvo = np.zeros_like(probs)
    alvo[linhas, alvos] = 1.0
    return perda, ((probs - alvo) / alvos.size).reshape(forma)
'''
LN_HONESTA = '''def my_layer_norm_backward(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    xc = x - np.mean(x, axis=-1, keepdims=True)
    var = np.mean(xc ** 2, axis=-1, keepdims=True)
    inv = (var + eps) ** -0.5
    xn = xc * inv
    dxn = dy * gamma
    dvar = np.sum(dxn * xc, axis=-1, keepdims=True) * -0.5 * inv ** 3
    dmu = -np.sum(dxn * inv, axis=-1, keepdims=True) - 2.0 * dvar * np.mean(xc, axis=-1, keepdims=True)
    dx = dxn * inv + dvar * 2.0 * xc / d + dmu / d
    flat = lambda a: a.reshape(-1, d)
    return dx, np.sum(flat(dy) * flat(xn), axis=0), np.sum(flat(dy), axis=0)
'''
ADAM_HONESTA = '''def my_adamw_step(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m_novo = m + (1 - b1) * (grad - m)
    v_novo = v + (1 - b2) * (grad * grad - v)
    passo = (m_novo / (1 - b1 ** t)) / (np.sqrt(v_novo / (1 - b2 ** t)) + eps)
    return param * (1 - lr * weight_decay) - lr * passo, m_novo, v_novo
'''
AMOSTRA_HONESTA = '''def my_sampling_distribution(logits, temperature=1.0, top_k=None):
    logits = np.asarray(logits, dtype=float)
    V = logits.size
    if temperature == 0:
        return (np.arange(V) == np.argmax(logits)).astype(float)
    manter = np.ones(V, dtype=bool)
    if top_k is not None and top_k < V:
        ordem = np.argsort(-logits, kind="stable")
        manter = logits >= logits[ordem[top_k - 1]]
    z = np.where(manter, logits / temperature, -np.inf)
    e = np.exp(z - z[manter].max())
    return e / e.sum()
'''
INDUCAO_HONESTA = '''def my_induction_scores(weights, half):
    B, H, n, _ = weights.shape
    total = np.zeros(H)
    for i in range(half, n):
        total += weights[:, :, i, i - half + 1].sum(axis=0)
    return total / (B * half)
'''
HONESTAS = {"aula06-ex1-solucao": CE_HONESTA, "aula06-ex2-solucao": LN_HONESTA, "aula06-ex3-solucao": ADAM_HONESTA,
            "aula06-ex4-solucao": AMOSTRA_HONESTA}

# ---------- os ataques, como o aluno os escreveria na célula ----------
CE_DA_INDUCAO = '''def my_cross_entropy(logits, targets):
    from atencao.induction import _cross_entropy
    return _cross_entropy(logits, targets)
'''
CE_NUMERICA = '''from atencao.backward import numerical_gradient

def my_cross_entropy(logits, targets):
    V = logits.shape[-1]
    def perda(Z):
        Z2, y = Z.reshape(-1, V), targets.reshape(-1)
        Zc = Z2 - Z2.max(axis=-1, keepdims=True)
        log_p = Zc - np.log(np.exp(Zc).sum(axis=-1, keepdims=True))
        return -log_p[np.arange(y.size), y].mean()
    return perda(logits), numerical_gradient(perda, np.array(logits, dtype=float), eps=3e-5)
'''
LN_NUMERICA = '''from atencao.backward import numerical_gradient

def my_layer_norm_backward(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    def f(xx):
        mu = xx.mean(-1, keepdims=True)
        return float((dy * gamma * (xx - mu) / np.sqrt(xx.var(-1, keepdims=True) + eps)).sum())
    x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    h = 1e-4 * np.sqrt(x.var() + eps)  # o passo na escala da entrada
    # a extrapolação de Richardson com dois passos: o erro de truncamento cai de h² para h⁴
    dx = (4 * numerical_gradient(f, np.array(x, dtype=float), eps=h / 2)
          - numerical_gradient(f, np.array(x, dtype=float), eps=h)) / 3
    return dx, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
'''
ADAM_DA_AULA5 = '''from atencao.optim import Adam

def my_adamw_step(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    pesos = {"w": np.array(param, dtype=float)}
    opt = Adam(pesos, lr=lr, betas=betas, eps=eps)
    opt.m["w"], opt.v["w"], opt.t = np.array(m, dtype=float), np.array(v, dtype=float), t - 1
    opt.step({"w": np.asarray(grad, dtype=float)})
    return pesos["w"] - lr * weight_decay * param, opt.m["w"], opt.v["w"]
'''
ADAM_BETAS_FIXOS = '''def my_adamw_step(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    m = 0.9 * m + 0.1 * grad  # betas e eps escritos no código: os recebidos ficam sem uso
    v = 0.999 * v + 0.001 * grad**2
    passo = (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return param - lr * (passo + weight_decay * param), m, v
'''
INDUCAO_PELO_PATTERN_SCORE = '''from atencao.training import make_task, pattern_score

def my_induction_scores(weights, half):
    diagonal = make_task("inducao", "a diagonal do recorte", range(half))
    recorte = weights[:, :, half:, 1:half + 1]  # a posição de indução vira a diagonal do recorte
    return np.array([pattern_score(recorte[:, h], diagonal) for h in range(weights.shape[1])])
'''
# a solução com as variáveis locais renomeadas, linha por linha a mesma conta
SOLUCAO_RENOMEADA = {
    "aula06-ex1-solucao": '''def my_cross_entropy(logits, targets):
    vocab = logits.shape[-1]
    L, t = logits.reshape(-1, vocab), targets.reshape(-1)
    n = L.shape[0]
    Lc = L - L.max(axis=-1, keepdims=True)
    lp = Lc - np.log(np.exp(Lc).sum(axis=-1, keepdims=True))
    perda = -lp[np.arange(n), t].mean()
    g = np.exp(lp)
    g[np.arange(n), t] -= 1
    return perda, (g / n).reshape(logits.shape)
''',
    "aula06-ex2-solucao": '''def my_layer_norm_backward(dy, x, gamma, eps=1e-5):
    dim = x.shape[-1]
    inv = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xn = (x - x.mean(axis=-1, keepdims=True)) * inv
    gg = dy * gamma
    grad_x = inv * (gg - gg.mean(axis=-1, keepdims=True)
                    - xn * (gg * xn).mean(axis=-1, keepdims=True))
    grad_gamma = (dy * xn).reshape(-1, dim).sum(axis=0)
    grad_beta = dy.reshape(-1, dim).sum(axis=0)
    return grad_x, grad_gamma, grad_beta
''',
    "aula06-ex3-solucao":
    '''def my_adamw_step(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad**2
    mh = m / (1 - b1**t)
    vh = v / (1 - b2**t)
    param = param - lr * (mh / (np.sqrt(vh) + eps) + weight_decay * param)
    return param, m, v
''',
    "aula06-ex4-solucao": '''def my_sampling_distribution(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        p = np.zeros(len(logits))
        p[np.argmax(logits)] = 1.0
        return p
    zz = logits / temperature
    if top_k is not None and top_k < len(logits):
        limite = np.sort(logits)[-top_k]
        zz = np.where(logits >= limite, zz, -np.inf)
    return atencao.softmax(zz)
''',
}


def _funcao(codigo: str):
    """A função que ``codigo`` define, rodado como a célula do aluno (com ``np``, ``atencao`` e ``aula06``)."""
    ns = {"np": np, "atencao": atencao, "aula06": aula06}
    exec(compile(codigo, "<celula do aluno>", "exec"), ns)
    return next(v for k, v in ns.items() if k.startswith("my_") and callable(v))


def _recusada(check, fn, monkeypatch, capsys) -> str:
    """Roda ``check(fn)`` em modo de correção; falha (``pytest.fail``) se a resposta foi aprovada."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    try:
        resultado = check(fn)
    except AssertionError:
        return " ".join(capsys.readouterr().out.split())
    pytest.fail(f"aprovada ({resultado!r}):\n{capsys.readouterr().out[-1500:]}")


# ---------- controles: as honestas passam e não são cópia ----------
@pytest.mark.parametrize("check, codigo", [
    (aula06.exercicio_1, CE_HONESTA), (aula06.exercicio_2, LN_HONESTA), (aula06.exercicio_3, ADAM_HONESTA),
    (aula06.exercicio_4, AMOSTRA_HONESTA), (aula06.projeto, INDUCAO_HONESTA),
], ids=["ex1", "ex2", "ex3", "ex4", "projeto"])
def test_resposta_honesta_escrita_de_outro_jeito_passa(check, codigo, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert check(_funcao(codigo)), capsys.readouterr().out


def test_resposta_honesta_escrita_de_outro_jeito_nao_e_copia():
    nb = gerar.clean(copy.deepcopy(gerar.student(A6, "03-exercicios")))
    for gid, codigo in HONESTAS.items():
        gerar.fill(nb, gid, codigo)
    assert saneamento.copied_from_solutions(nb, G6) == ([], [])


def test_pontuacao_de_inducao_de_duas_linhas_com_outros_nomes_nao_e_copia():
    """A forma natural de escrever a pontuação (duas instruções, os nomes do aluno) não vai para revisão: uma regra
    de cópia que ignore os nomes precisa tratá-la como resposta curta, que só conta ao lado de outra cópia."""
    g = catalogo.catalog()[("aula-06-gpt-pequeno-em-portugues", "04-projeto")]
    nb = gerar.clean(copy.deepcopy(gerar.student(A6, "04-projeto")))
    gerar.fill(nb, "aula06-projeto-pecas", "\n\n".join(HONESTAS.values()))
    gerar.fill(nb, "aula06-projeto-inducao", "def my_induction_scores(weights, half):\n"
                                             "    pos = np.arange(half, 2 * half)\n"
                                             "    return weights[:, :, pos, pos - half + 1].mean(axis=(0, 2))\n")
    assert saneamento.copied_from_solutions(nb, g) == ([], [])


# ---------- fechados: as prontas que a verificação já proíbe ----------
def _ln_unchecked(dy, x, gamma, eps=1e-5):
    from atencao.gpt_backward import layer_norm_backward_unchecked

    return layer_norm_backward_unchecked(dy, x, gamma, eps)


def _adamw_da_classe(param, grad, m, v, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    from atencao.schedule import AdamW

    forma = (1, -1) if np.ndim(param) == 1 else np.shape(param)  # a classe só decai as matrizes
    pesos = {"w": np.array(param, dtype=float).reshape(forma)}
    opt = AdamW(pesos, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
    opt.m["w"], opt.v["w"] = np.reshape(m, forma).astype(float), np.reshape(v, forma).astype(float)
    opt.t = t - 1
    opt.step({"w": np.reshape(grad, forma).astype(float)})
    return tuple(a.reshape(np.shape(param)) for a in (pesos["w"], opt.m["w"], opt.v["w"]))


def _amostra_torch(logits, temperature=1.0, top_k=None):
    import torch

    z = torch.tensor(np.asarray(logits, dtype=float))
    if temperature == 0:
        return (np.arange(z.numel()) == int(z.argmax())).astype(float)
    if top_k is not None and top_k < z.numel():
        z = torch.where(z >= torch.topk(z, top_k).values[-1], z, torch.tensor(-float("inf"), dtype=z.dtype))
    return torch.softmax(z / temperature, dim=-1).numpy()


def _ln_eps_fixo(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    s = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)  # o eps recebido fica sem uso
    x_hat = (x - x.mean(axis=-1, keepdims=True)) * s
    g = dy * gamma
    dx = s * (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True))
    return dx, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)


@pytest.mark.parametrize("check, fn, visto", [
    (aula06.exercicio_1, lambda logits, targets: atencao.gpt_backward.cross_entropy(logits, targets),
     "cross_entropy"),
    (aula06.exercicio_1, lambda logits, targets: atencao.training.TinyAttentionModel.loss(logits, targets),
     "TinyAttentionModel"),
    (aula06.exercicio_1, lambda logits, targets: aula06._ce_reference(logits, targets), "própria verificação"),
    (aula06.exercicio_2, _ln_unchecked, "layer_norm_backward_unchecked"),
    (aula06.exercicio_2, lambda dy, x, gamma, eps=1e-5: aula06._ln_reference(dy, x, gamma, eps),
     "própria verificação"),
    (aula06.exercicio_3, _adamw_da_classe, "adamw_step"),
    (aula06.exercicio_4, lambda logits, temperature=1.0, top_k=None: atencao.sampling.next_token_probs(
        logits, temperature, top_k), "next_token_probs"),
    (aula06.exercicio_4, _amostra_torch, "PyTorch"),
    (aula06.exercicio_2, _ln_eps_fixo, "eps = 1e-3"),
], ids=["ce-pronta", "tiny-loss", "ce-referencia", "ln-miolo", "ln-referencia", "adamw-classe", "probs-pronta",
        "amostra-torch", "ln-eps-fixo"])
def test_resposta_pronta_ja_proibida_continua_recusada(check, fn, visto, monkeypatch, capsys):
    assert visto in _recusada(check, fn, monkeypatch, capsys)


# ---------- furos fechados, no notebook (as verificações chamadas direto, em modo de correção) ----------
def test_ex1_entropia_cruzada_do_modelo_de_inducao_e_recusada(monkeypatch, capsys):
    assert "_cross_entropy" in _recusada(aula06.exercicio_1, _funcao(CE_DA_INDUCAO), monkeypatch, capsys)


@pytest.mark.parametrize("check, codigo", [(aula06.exercicio_1, CE_NUMERICA), (aula06.exercicio_2, LN_NUMERICA)],
                         ids=["ex1", "ex2"])
def test_gradiente_pelas_diferencas_centrais_da_biblioteca_e_recusado(check, codigo, monkeypatch, capsys):
    assert "numerical_gradient" in _recusada(check, _funcao(codigo), monkeypatch, capsys)


def test_ex3_adam_pronto_da_aula_5_e_recusado(monkeypatch, capsys):
    assert "Adam" in _recusada(aula06.exercicio_3, _funcao(ADAM_DA_AULA5), monkeypatch, capsys)


def test_ex3_betas_e_eps_fixos_no_codigo_sao_recusados(monkeypatch, capsys):
    saida = _recusada(aula06.exercicio_3, _funcao(ADAM_BETAS_FIXOS), monkeypatch, capsys)
    assert "❌" in saida


def _inducao_pela_referencia(weights, half):
    return aula06._induction_reference(weights, half)


def _inducao_torch(weights, half):
    import torch

    i = torch.arange(half, 2 * half)
    return torch.tensor(weights)[:, :, i, i - half + 1].mean(dim=(0, 2)).numpy()


@pytest.mark.parametrize("fn, visto", [(_inducao_pela_referencia, "própria verificação"),
                                       (_inducao_torch, "PyTorch"),
                                       (_funcao(INDUCAO_PELO_PATTERN_SCORE), "pattern_score")],
                         ids=["referencia-da-verificacao", "torch", "pattern-score"])
def test_projeto_pontuacao_pronta_e_recusada(fn, visto, monkeypatch, capsys):
    assert visto in _recusada(aula06.projeto, fn, monkeypatch, capsys)


def test_copia_da_solucao_com_as_variaveis_renomeadas_vai_para_revisao():
    nb = gerar.clean(copy.deepcopy(gerar.student(A6, "03-exercicios")))
    for gid, codigo in SOLUCAO_RENOMEADA.items():
        gerar.fill(nb, gid, codigo)
    respostas, verificacoes = saneamento.copied_from_solutions(nb, G6)
    assert respostas == list(SOLUCAO_RENOMEADA) and verificacoes == G6.checks, respostas


def test_copia_das_pecas_da_solucao_em_outra_ordem_vai_para_revisao():
    """O passo 1 do projeto pede as quatro funções numa célula: as da solução coladas de trás para a frente."""
    import ast

    g = catalogo.catalog()[("aula-06-gpt-pequeno-em-portugues", "04-projeto")]
    fonte = "".join(gerar.cell(gerar.load("solutions", A6, "04-projeto"), "aula06-projeto-pecas")["source"])
    funcoes = [ast.get_source_segment(fonte, n) for n in ast.parse(fonte).body]
    nb = gerar.clean(copy.deepcopy(gerar.student(A6, "04-projeto")))
    gerar.fill(nb, "aula06-projeto-pecas", "\n\n\n".join(funcoes[::-1]) + "\n")
    respostas, verificacoes = saneamento.copied_from_solutions(nb, g)
    assert respostas == ["aula06-projeto-pecas"], respostas
    assert verificacoes == ["aula06-projeto-pecas-verificacao"], verificacoes


def test_a_copia_renomeada_e_a_mesma_conta_da_solucao(monkeypatch, capsys):
    """O controle do teste acima: a cópia renomeada passa nas verificações (o que ela ganha hoje são os pontos)."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    for check, gid in zip((aula06.exercicio_1, aula06.exercicio_2, aula06.exercicio_3, aula06.exercicio_4),
                          SOLUCAO_RENOMEADA):
        assert check(_funcao(SOLUCAO_RENOMEADA[gid])), capsys.readouterr().out


# ---------- na correção isolada (bwrap) ----------
def _nb03(**respostas) -> dict:
    nb = copy.deepcopy(gerar.student(A6, "03-exercicios"))
    for gid, codigo in respostas.items():
        gerar.fill(nb, gid, codigo)
    return gerar.clean(nb)


def _nb04(pecas: str, inducao: str) -> dict:
    nb = copy.deepcopy(gerar.student(A6, "04-projeto"))
    gerar.fill(nb, "aula06-projeto-pecas", pecas)
    gerar.fill(nb, "aula06-projeto-inducao", inducao)
    return gerar.clean(nb)


# cada aluno junta ataques de verificações diferentes (cada correção do furo muda uma verificação só); a honesta e
# as peças honestas do projeto são os controles de que a caixa corrige a Aula 6. As diferenças centrais no
# exercício 1 ficam só no teste do notebook: na correção, o caso de logits ±300 (o arredondamento de uma perda de
# centenas de nats dividido pelo passo) às vezes passa da tolerância, e o ataque ganharia os pontos só às vezes
TURMA = {
    "honesta": ("03-exercicios", lambda: _nb03(**HONESTAS)),
    "inducao-e-betas": ("03-exercicios", lambda: _nb03(**{**HONESTAS, "aula06-ex1-solucao": CE_DA_INDUCAO,
                                                          "aula06-ex3-solucao": ADAM_BETAS_FIXOS})),
    "numerica-e-adam": ("03-exercicios", lambda: _nb03(**{**HONESTAS, "aula06-ex2-solucao": LN_NUMERICA,
                                                          "aula06-ex3-solucao": ADAM_DA_AULA5})),
    "renomeada": ("03-exercicios", lambda: _nb03(**SOLUCAO_RENOMEADA)),
    "projeto-pattern-score": ("04-projeto", lambda: _nb04("\n\n".join(HONESTAS.values()),
                                                          INDUCAO_PELO_PATTERN_SCORE)),
}


@pytest.fixture(scope="module")
def turma_aula06(tmp_path_factory):
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    base = tmp_path_factory.mktemp("trapacas-aula06")
    for aluno, (nome, montar) in TURMA.items():
        destino = base / "entregas" / aluno / f"{nome}.ipynb"
        destino.parent.mkdir(parents=True)
        destino.write_text(json.dumps(montar()), encoding="utf-8")
    motor.grade_class(base / "entregas", base / "saida", cell_timeout=30, notebook_timeout=180, log=lambda m: None)
    with open(base / "saida" / "notas.csv", encoding="utf-8") as f:
        return {linha["aluno"]: linha for linha in csv.DictReader(f)}


def _zero(valor: str) -> bool:
    return valor in ("0", "0.0", "")


@pytest.mark.lento
@pytest.mark.parametrize("aluno, verificacao, pontos", [
    ("honesta", "aula06-ex1-verificacao", 2), ("honesta", "aula06-ex2-verificacao", 3),
    ("honesta", "aula06-ex3-verificacao", 2), ("honesta", "aula06-ex4-verificacao", 2),
    ("projeto-pattern-score", "aula06-projeto-pecas-verificacao", 2),
])
def test_correcao_da_os_pontos_da_resposta_honesta(turma_aula06, aluno, verificacao, pontos):
    linha = turma_aula06[aluno]
    assert float(linha[verificacao]) == pontos, linha


@pytest.mark.lento
@pytest.mark.parametrize("aluno, verificacao", [
    ("inducao-e-betas", "aula06-ex1-verificacao"), ("inducao-e-betas", "aula06-ex3-verificacao"),
    ("numerica-e-adam", "aula06-ex2-verificacao"),
    ("numerica-e-adam", "aula06-ex3-verificacao"), ("projeto-pattern-score", "aula06-projeto-inducao-verificacao"),
], ids=lambda x: x)
def test_correcao_nao_da_os_pontos_do_atalho(turma_aula06, aluno, verificacao):
    linha = turma_aula06[aluno]
    assert _zero(linha[verificacao]), f"{aluno}: {linha[verificacao]} ponto(s) em {verificacao} ({linha['situacao']})"


@pytest.mark.lento
def test_correcao_manda_a_copia_renomeada_para_revisao(turma_aula06):
    linha = turma_aula06["renomeada"]
    assert linha["situacao"] == "revisar" and "solutions/" in linha["motivo"], linha
