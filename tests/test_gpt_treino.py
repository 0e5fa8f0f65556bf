"""Aula 6: AdamW, cronograma e recorte iguais aos do PyTorch; a mesma curva de perda do mesmo modelo treinado em
PyTorch (float64, ≤ 1e-6 relativo nos primeiros 50 passos); a geração com o KV cache igual à recalculada;
temperatura e top-k; o corpus e o tokenizador; a figura do fluxo do gradiente."""

import math

import numpy as np
import pytest
from exigir import exigir

from atencao.corpus import (
    CORPUS_PATH,
    CharTokenizer,
    bigram_bits_per_char,
    bits_per_char,
    corpus_words,
    load_corpus,
    split_train_val,
    word_share,
)
from atencao.gpt import GPT, GPTConfig
from atencao.gpt_training import SHORT, TrainConfig, get_batch, train_gpt
from atencao.sampling import generate, generate_text, next_token_probs, sample_next
from atencao.schedule import AdamW, adamw_step, clip_grad_norm, lr_schedule

torch = exigir("torch")


@pytest.fixture(scope="module")
def corpus():
    text = load_corpus()
    tok = CharTokenizer(text)
    train, val = split_train_val(tok.encode(text))
    return text, tok, train, val


# ---------------------------------------------------------------- otimizador


def test_adamw_igual_ao_torch_com_decaimento_so_nas_matrizes():
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    tparams = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in params.items()}
    opt = AdamW(params, lr=0.05, betas=(0.9, 0.99), weight_decay=0.1)
    topt = torch.optim.AdamW([{"params": [tparams["W"]], "weight_decay": 0.1},
                              {"params": [tparams["b"]], "weight_decay": 0.0}], lr=0.05, betas=(0.9, 0.99))
    for step in range(6):
        grads = {k: rng.normal(size=v.shape) for k, v in params.items()}
        lr = lr_schedule(step, 0.05, 2, 6, 0.005)
        opt.step(grads, lr=lr)
        for g in topt.param_groups:
            g["lr"] = lr
        for k, t in tparams.items():
            t.grad = torch.tensor(grads[k])
        topt.step()
        for k in params:
            assert np.abs(params[k] - tparams[k].detach().numpy()).max() <= 1e-12, (step, k)
    assert opt.decays == {"W": True, "b": False}


def test_adamw_step_decai_os_pesos_e_nao_o_gradiente():
    p, g = np.array([2.0]), np.array([0.0])
    new, m, v = adamw_step(p, g, np.zeros(1), np.zeros(1), 1, lr=0.1, weight_decay=0.5)
    assert np.allclose(new, 2.0 * (1 - 0.1 * 0.5))  # gradiente zero: só o decaimento age
    assert p[0] == 2.0 and not m.any() and not v.any()  # as entradas não mudam


def test_cronograma_aquece_e_decai_em_cosseno():
    lrs = [lr_schedule(s, 1.0, 10, 110, 0.1) for s in range(120)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a < b for a, b in zip(lrs[:10], lrs[1:10]))  # sobe no aquecimento
    assert all(a >= b for a, b in zip(lrs[10:110], lrs[11:110]))  # desce no cosseno
    assert lrs[60] == pytest.approx(0.1 + 0.9 * 0.5)  # metade do caminho: o meio entre max e min
    assert lrs[110] == lrs[119] == 0.1


def test_recorte_igual_ao_torch():
    rng = np.random.default_rng(1)
    grads = {"a": rng.normal(size=(3, 3)) * 5, "b": rng.normal(size=4) * 5}
    ts = [torch.zeros(3, 3, dtype=torch.float64, requires_grad=True), torch.zeros(4, dtype=torch.float64,
                                                                                 requires_grad=True)]
    for t, g in zip(ts, grads.values()):
        t.grad = torch.tensor(g.copy())
    ref = float(torch.nn.utils.clip_grad_norm_(ts, 1.0))
    norm = clip_grad_norm(grads, 1.0)
    assert abs(norm - ref) <= 1e-12 * ref and norm > 1.0
    for t, g in zip(ts, grads.values()):
        assert np.abs(g - t.grad.numpy()).max() <= 1e-15
    assert math.sqrt(sum(float(np.sum(g * g)) for g in grads.values())) == pytest.approx(1.0, abs=1e-5)
    small = {"a": np.full(2, 0.1)}
    assert clip_grad_norm(small, 1.0) == pytest.approx(math.sqrt(0.02)) and np.all(small["a"] == 0.1)


# ---------------------------------------------------------------- a curva de perda


def test_a_mesma_curva_de_perda_do_pytorch_em_50_passos(corpus):
    """O modelo padrão (só o lote menor), float64, AdamW + cronograma + recorte: ≤ 1e-6 relativo por passo."""
    from atencao.gpt_torch import train_torch

    _, tok, train, val = corpus
    cfg = TrainConfig(steps=50, batch_size=4, warmup_steps=10, eval_every=50, eval_batches=1, grad_clip=1.0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, dtype="float64", seed=7))
    start = GPT(GPTConfig(vocab_size=tok.vocab_size, dtype="float64", seed=7))
    hist = train_gpt(model, train, val, cfg)
    rng = np.random.default_rng(cfg.seed)  # os mesmos lotes que o treino sorteou (sem dropout, só eles usam rng)
    batches = [get_batch(train, cfg.batch_size, model.config.block_size, rng) for _ in range(cfg.steps)]
    ref = train_torch(start, batches, cfg)
    ours = np.array(hist.batch_loss)
    assert len(ours) == 50
    assert np.max(np.abs(ours - ref) / np.abs(ref)) <= 1e-6
    assert ours[-1] < ours[0] - 0.5  # e a perda caiu de verdade
    assert max(hist.grad_norm) > 1.0  # o recorte agiu em algum passo (senão o teste não o confere)


@pytest.mark.lento  # uns 20 s numa máquina livre: fica para o make test-lento
def test_treino_curto_cai_abaixo_dos_bigramas(corpus):
    _, tok, train, val = corpus
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, dtype="float32"))
    hist = train_gpt(model, train, val, SHORT, tokenizer=tok)
    assert hist.val_loss[-1] < hist.val_loss[0] - 2.0
    assert bits_per_char(hist.val_loss[-1]) < bigram_bits_per_char(train, val, tok.vocab_size) - 0.1
    assert len(hist.steps) == len(hist.val_loss) == len(hist.train_loss) >= 2
    assert len(hist.lr) == len(hist.batch_loss) == SHORT.steps


# ---------------------------------------------------------------- geração


def _tiny(seed=0, **kw):
    return GPT(GPTConfig(vocab_size=12, block_size=8, d_model=16, n_heads=4, n_layers=2, init_std=0.5, seed=seed,
                         **kw))


@pytest.mark.parametrize("kw", [{"temperature": 0}, {"temperature": 1.3, "top_k": 4}, {"temperature": 0.7}])
def test_com_cache_igual_a_recalculando(kw):
    model = _tiny()
    a, la = generate(model, [1, 2, 3], 30, seed=4, use_cache=True, return_logits=True, **kw)  # passa do contexto
    b, lb = generate(model, [1, 2, 3], 30, seed=4, use_cache=False, return_logits=True, **kw)
    assert np.array_equal(a, b) and len(a) == 33
    assert np.abs(la - lb).max() <= 1e-12
    if kw.get("temperature") != 0:
        assert len(set(a[3:].tolist())) > 2  # sorteou de verdade


def test_cache_com_a_attend_cached_da_aula_4_e_probs_do_aluno():
    model = _tiny(1)
    calls = []

    def minha_attend_cached(attn, x_new, K, V):
        calls.append(K.shape[1])
        from atencao.sampling import attend_cached
        return attend_cached(attn, x_new, K, V)

    def minhas_probs(logits, temperature, top_k):
        return next_token_probs(logits, temperature, top_k)

    out = generate(model, [0], 5, attend_cached=minha_attend_cached, probs_fn=minhas_probs, temperature=0.9, seed=2)
    assert np.array_equal(out, generate(model, [0], 5, temperature=0.9, seed=2))
    assert calls[:3] == [0, 0, 1] and len(calls) == 2 * 5  # 2 blocos × 5 passos


def test_next_token_probs_temperatura_e_top_k():
    z = np.array([2.0, 1.0, 0.0, -1.0, 3.0])
    p = next_token_probs(z)
    assert np.allclose(p, np.exp(z) / np.exp(z).sum())
    frio, quente = next_token_probs(z, 0.5), next_token_probs(z, 2.0)
    assert np.allclose(frio, np.exp(2 * z) / np.exp(2 * z).sum()) and frio.max() > p.max() > quente.max()
    k2 = next_token_probs(z, 1.0, top_k=2)  # só 3.0 e 2.0, renormalizados entre os dois
    assert np.count_nonzero(k2) == 2 and k2.sum() == pytest.approx(1.0)
    assert k2[4] == pytest.approx(np.exp(3) / (np.exp(3) + np.exp(2)))
    assert np.array_equal(next_token_probs(z, 0), np.eye(5)[4])  # guloso
    assert np.allclose(next_token_probs(z, 1.0, top_k=99), p)
    assert np.allclose(next_token_probs(z, 0.7, top_k=1), np.eye(5)[4])


def test_sample_next_segue_as_probabilidades():
    rng = np.random.default_rng(0)
    z = np.log(np.array([0.5, 0.3, 0.2, 1e-9]))
    counts = np.bincount([sample_next(z, rng, 1.0, top_k=3) for _ in range(20000)], minlength=4)
    assert counts[3] == 0 and np.allclose(counts[:3] / 20000, [0.5, 0.3, 0.2], atol=0.015)


@pytest.mark.parametrize("kw, trecho", [
    ({"temperature": -1.0}, "temperature"), ({"top_k": 0}, "top_k"), ({"top_k": 1.5}, "top_k"),
])
def test_amostragem_entrada_errada(kw, trecho):
    with pytest.raises(ValueError, match=trecho):
        next_token_probs(np.zeros(4), **kw)


def test_generate_entrada_errada():
    model = _tiny()
    with pytest.raises(ValueError, match="prompt_ids"):
        generate(model, [], 3)
    with pytest.raises(ValueError, match="0 … 11"):
        generate(model, [12], 3)
    with pytest.raises(ValueError, match="n_new"):
        generate(model, [1], -1)


# ---------------------------------------------------------------- corpus


def test_o_corpus_padrao_e_prosa_do_curso(corpus):
    text, tok, train, val = corpus
    assert len(text) > 100_000 and CORPUS_PATH.is_file()
    for lixo in ("```", "http", "$", "import ", "<div", "BEGIN SOLUTION"):
        assert lixo not in text, lixo
    words = corpus_words(text)
    assert {"atenção", "consulta", "chave", "valor", "máscara", "treino"} <= words
    assert len(train) + len(val) == len(text) and len(val) == pytest.approx(0.1 * len(text), abs=1)


def test_o_script_gera_o_corpus_a_partir_dos_notebooks():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "corpus_aula06.py"
    spec = importlib.util.spec_from_file_location("corpus_aula06", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert all("aula-06" not in str(p) for p in mod.notebooks()) and len(mod.notebooks()) >= 15
    paras = mod.clean("# Título\n\nA conta `softmax` é $n$ vezes maior. Veja $\\sqrt{d_k}$ aqui, ok sim.\n\n"
                      "Uma frase comum com [um link](https://exemplo.org) no meio dela.")
    assert paras == ["A conta softmax é n vezes maior.", "Uma frase comum com um link no meio dela."]


def test_tokenizador_por_caractere():
    tok = CharTokenizer("banana e maçã")
    assert tok.vocab_size == len(set("banana e maçã")) and tok.chars == sorted(set("banana e maçã"))
    ids = tok.encode("maçã na banana")
    assert ids.dtype == np.int64 and tok.decode(ids) == "maçã na banana"
    with pytest.raises(ValueError, match="'xz'"):
        tok.encode("xaz")
    with pytest.raises(ValueError, match="ids fora"):
        tok.decode([99])


def test_corpus_do_aluno(tmp_path):
    f = tmp_path / "meu.txt"
    f.write_text("o rato roeu a roupa do rei de roma. " * 40, encoding="utf-8")
    assert load_corpus(f).startswith("o rato")
    (tmp_path / "curto.txt").write_text("pouco", encoding="utf-8")
    with pytest.raises(ValueError, match="1000"):
        load_corpus(tmp_path / "curto.txt")
    with pytest.raises(FileNotFoundError):
        load_corpus(tmp_path / "nao-existe.txt")


def test_bigramas_e_fracao_de_palavras():
    rng = np.random.default_rng(0)
    uniforme = rng.integers(0, 4, 5000)
    assert bigram_bits_per_char(uniforme[:4000], uniforme[4000:], 4) == pytest.approx(2.0, abs=0.02)
    ciclo = np.tile([0, 1, 2, 3], 1000)  # o próximo é sempre previsível pelo anterior
    assert bigram_bits_per_char(ciclo[:3000], ciclo[3000:], 4) < 0.01
    assert bits_per_char(math.log(2)) == pytest.approx(1.0)
    words = corpus_words("A atenção olha para trás; o guarda-chuva fica.")
    assert "guarda-chuva" in words and "atenção" in words
    assert word_share("atenção olha xyzq para", words) == pytest.approx(2 / 3)  # a última pode estar cortada
    assert word_share("atenção xyzq para trás.", words) == pytest.approx(3 / 4)
    assert math.isnan(word_share("123", words))


def test_gerar_texto_com_o_tokenizador(corpus):
    _, tok, _, _ = corpus
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, d_model=16, n_heads=2, n_layers=1, block_size=16))
    out = generate_text(model, tok, "A atenção ", 20, temperature=0.8, top_k=5, seed=1)
    assert out.startswith("A atenção ") and len(out) == len("A atenção ") + 20


# ---------------------------------------------------------------- fluxo do gradiente


def test_fluxo_do_gradiente_sem_residuo_some_perto_da_entrada(corpus):
    from atencao.gpt_plots import gradient_flow

    _, tok, train, _ = corpus
    batches = [get_batch(train, 4, 32, np.random.default_rng(0))]
    cfg = dict(vocab_size=tok.vocab_size, block_size=32, d_model=32, n_heads=4, n_layers=12)
    norms = gradient_flow(cfg, batches, seeds=(0,))
    pre, pos, sem = norms.values()
    assert all(v.shape == (12,) for v in norms.values())
    # sem o resíduo, o gradiente que chega ao bloco 1 é centenas de vezes menor que o do último; com o resíduo
    # pré-LN, ele chega do mesmo tamanho a todos os blocos
    assert sem[0] / sem[-1] < 1e-2
    assert 0.5 < pre[0] / pre[-1] < 2 and pre.max() / pre.min() < 1.5
    params = gradient_flow(cfg, batches, seeds=(0,), what="params")
    assert all(np.all(v > 0) for v in params.values())
    with pytest.raises(ValueError, match="what"):
        gradient_flow(cfg, batches, seeds=(0,), what="pesos")
