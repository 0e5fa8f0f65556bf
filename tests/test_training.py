"""Aula 5, 04-projeto: o modelo mínimo aprende o padrão de cada tarefa, o backward dele confere com as
diferenças centrais, e o mesmo treino no PyTorch (autograd + torch.optim.Adam) dá a mesma curva de perda."""

import re

import numpy as np
import pytest
from exigir import exigir

from atencao.backward import gradient_check, numerical_gradient
from atencao.training import TASKS, TinyAttentionModel, make_task, pattern_score, train, train_torch


@pytest.mark.parametrize("name", sorted(TASKS))
def test_backward_do_modelo_confere_com_diferencas_centrais(name):
    task = TASKS[name]
    model = TinyAttentionModel(vocab=5, d_model=4, d_k=3, seed=1)
    tokens, targets = task.batch(np.random.default_rng(0), 3, 5)
    logits, cache = model.forward(tokens, task.mask())
    _, dlogits = model.loss(logits, targets)
    grads = model.backward(cache, dlogits)
    for pname, p in model.params.items():
        num = numerical_gradient(lambda _: model.loss(model.forward(tokens, task.mask())[0], targets)[0], p)
        assert gradient_check(grads[pname], num) <= 1e-5, pname  # gradientes pequenos (1e-4): ruído ~1e-7


@pytest.mark.parametrize("name", sorted(TASKS))
def test_o_treino_faz_surgir_o_padrao(name):
    task = TASKS[name]
    run = train(TinyAttentionModel(seed=0), task, steps=150)
    assert pattern_score(run.snapshots[0], task) < 0.4  # começa perto da uniforme
    assert pattern_score(run.snapshots[-1], task) > 0.95
    assert run.losses[-1] < 0.05 < 1.5 < run.losses[0]


@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_mesma_curva_no_pytorch():
    exigir("torch")
    task = TASKS["anterior"]
    model = TinyAttentionModel(seed=0)
    rng = np.random.default_rng(3)
    batches = [task.batch(rng, 32, model.vocab) for _ in range(50)]
    start = {k: v.copy() for k, v in model.params.items()}
    theirs = train_torch(start, task, batches)
    ours = train(model, task, steps=50, batches=batches).losses
    assert np.abs(np.array(ours) - np.array(theirs)).max() <= 1e-9
    assert ours[0] > ours[-1] + 1  # e a perda caiu de verdade


def test_tarefa_propria_e_erros():
    task = make_task("dois atrás", "o token de duas posições antes", [0, 1, 0, 1, 2, 3, 4, 5], causal=True)
    assert task.expected_pattern()[4, 2] == 1 and task.expected_pattern().sum() == 8
    with pytest.raises(ValueError, match="causal"):
        make_task("x", "", [1, 0], causal=True)
    with pytest.raises(ValueError, match="source"):
        make_task("x", "", [0, 5])
    with pytest.raises(ValueError, match="n=8"):
        train(TinyAttentionModel(n=8), make_task("x", "", [0, 0, 0]))
    with pytest.raises(ValueError, match="tokens"):
        TinyAttentionModel().forward(np.zeros((2, 3), int))


def test_per_example_e_a_vista_do_treino():
    """O backward de uma sequência, adaptado ao lote, dá os mesmos gradientes da biblioteca; a vista desenha
    a atenção e a curva, o resumo diz o peso no padrão com o ponto decimal (a figura, com a vírgula)."""
    import atencao
    from atencao.backward import attention_backward
    from atencao.training import per_example
    from atencao.training_view import TrainingReplay, draw_training

    def por_sequencia(dO, Q, K, V, mask=None):
        _, A = atencao.scaled_dot_product_attention(Q, K, V, mask=mask)
        return attention_backward(dO, Q, K, V, A)

    task = TASKS["anterior"]
    model = TinyAttentionModel(seed=2)
    tokens, targets = task.batch(np.random.default_rng(1), 4, model.vocab)
    logits, cache = model.forward(tokens, task.mask())
    _, dlogits = model.loss(logits, targets)
    ours = model.backward(cache, dlogits, per_example(por_sequencia, task.mask()))
    ref = model.backward(cache, dlogits)
    assert all(np.abs(ours[k] - ref[k]).max() <= 1e-12 for k in ref)

    run = train(model, task, steps=6, every=3)
    # o último passo guardado é o da última perda: a figura e a curva falam do mesmo modelo (antes, "passo 6"
    # com as perdas acabando no passo 5)
    assert run.steps == [0, 3, 5] and len(run.snapshots) == 3 and len(run.losses) == 6
    assert run.steps[-1] == len(run.losses) - 1
    from matplotlib.figure import Figure

    fig = Figure()
    draw_training(fig, run, 1)
    # a atenção, a barra de cores dela e a curva de perda
    assert len(fig.axes) == 3 and "passo 3" in fig.axes[0].get_title()
    assert fig.axes[0].images[0].colorbar is not None
    assert fig.axes[0].images[0].colorbar.ax.get_ylabel() == "peso de atenção"
    resumo = TrainingReplay(run).summary()
    # o texto que a célula imprime usa o ponto decimal, como os print do notebook; a vírgula fica na figura
    assert re.search(r"peso no padrão \d\.\d\d no passo 0 → \d\.\d\d no passo 5 ", resumo), resumo
    assert "," not in resumo.split("(")[0]
    assert "," in fig.axes[0].get_title()
    with pytest.raises(TypeError, match="train"):
        TrainingReplay([])


def test_o_controle_do_treino_nao_e_escondido_pela_regra_da_figura_estatica():
    """A figura estática leva uma regra CSS que esconde a saída seguinte sem a classe dos widgets vivos (o widget
    morto de um notebook reaberto). O widget do treino não tinha essa classe: no JupyterLab, o controle "passo"
    ficava escondido (display: none) com o kernel vivo."""
    import re

    from atencao.rendering import static_bundle
    from atencao.training_view import TrainingReplay

    regra = re.search(r":not\(:has\(\.([\w-]+)\)\)", static_bundle(b"", "", "")["text/html"])
    assert regra is not None
    run = train(TinyAttentionModel(seed=2), TASKS["anterior"], steps=2, every=1)
    caixa = TrainingReplay(run).widget(first_png=b"")
    assert regra.group(1) in caixa._dom_classes


def test_numeros_do_eixo_da_perda_em_portugues():
    """A curva de perda, em escala log, sem ``2.2×10⁰`` nos números do eixo: decimais com vírgula."""
    from matplotlib.figure import Figure

    from atencao.training_view import draw_training

    for steps, lr in ((8, 0.005), (60, 0.05)):  # sem cruzar uma década, e cruzando várias
        run = train(TinyAttentionModel(seed=0), TASKS["anterior"], steps=steps, lr=lr, every=4)
        fig = Figure()
        draw_training(fig, run)
        fig.canvas.draw()
        eixo = fig.axes[1].yaxis  # a curva de perda (o eixo 2 é a barra de cores da atenção)
        textos = [t.get_text() for t in eixo.get_ticklabels() + eixo.get_ticklabels(minor=True) if t.get_text()]
        assert textos and not any("10^" in t or "×" in t or "$" in t or "." in t for t in textos), textos


@pytest.mark.parametrize("source, erro, trecho", [
    ("01234567", TypeError, "lista de posições inteiras"),
    (None, TypeError, "recebido NoneType"),
    ([0.5] * 8, TypeError, "recebido 0.5"),
    ([True] * 8, TypeError, "recebido True"),
    ([], ValueError, "entre 0 e n−1"),
    ([0, 9], ValueError, "entre 0 e n−1"),
])
def test_make_task_diz_o_que_veio_errado(source, erro, trecho):
    """Entradas que antes viravam outra tarefa em silêncio ([0.5] * 8 → zeros; "01234567" aceito) ou um erro do
    Python em inglês (None)."""
    from atencao.training import make_task

    with pytest.raises(erro, match=trecho):
        make_task("t", "d", source)
    assert make_task("t", "d", np.arange(8)).source == tuple(range(8))  # um array de inteiros serve


def test_train_com_entradas_erradas_e_perda_nan():
    """O nome da tarefa no lugar dela, uma tarefa desconhecida e um backward que devolve NaN: erros em português,
    e o treino não segue com a perda NaN."""
    model = TinyAttentionModel(seed=0)
    with pytest.raises(TypeError, match=r"use TASKS\['anterior'\]"):
        train(model, "anterior", steps=2)
    with pytest.raises(TypeError, match="TinyAttentionModel"):
        train("modelo", TASKS["anterior"], steps=2)
    with pytest.raises(KeyError, match="tarefa desconhecida: 'inverte'; as prontas são 'anterior', 'inverter'"):
        TASKS["inverte"]

    def nan(dO, Q, K, V, mask=None):
        return tuple(np.full_like(x, np.nan) for x in (Q, K, V))

    from atencao.training import per_example

    with pytest.raises(ValueError, match="a perda virou nan no passo 1"):
        train(model, TASKS["anterior"], steps=5, attention_backward=per_example(nan, TASKS["anterior"].mask()))
