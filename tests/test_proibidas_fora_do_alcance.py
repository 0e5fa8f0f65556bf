"""As contas prontas que um exercício proíbe não dão pontos, faça o processo do aluno o que fizer consigo mesmo.

Uma aluna que leu o repositório inteiro ganhava os pontos chamando a função pronta e apagando o que o processo
dela "confessava" (a vigilância roda lá): ``%%time`` esconde a célula, a vigilância desligada por
``Watcher.__enter__``, um processo ajudante começado na hora da célula que responde por um pipe, uma cópia do
``__code__`` com uma constante a mais, uma thread começada antes, ``map(torch.softmax, ...)`` em C. Agora o
processo do aluno não tem o código dessas contas (:mod:`correcao.biblioteca_aluno`): quem as faz é o
verificador, que sabe qual verificação está rodando e anota o uso. Cada ataque abaixo, de ponta a ponta na
caixa, dá 0 na verificação e uma situação diferente de ``ok``; a versão honesta da mesma turma ganha tudo.
"""

from __future__ import annotations

import copy
import csv
import json
import sys
from pathlib import Path

import pytest

from correcao import biblioteca_aluno, isolamento, motor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from turma_exemplo import gerar  # noqa: E402

A1, A2, A4, A5, A6 = ("modulo-06/aula-01-self-attention", "modulo-06/aula-02-auto-atencao-do-zero",
                      "modulo-06/aula-04-bloco-transformer", "modulo-06/aula-05-treinando-a-atencao",
                      "modulo-06/aula-06-gpt-pequeno-em-portugues")
REAL_PACKAGE = str(ROOT / "lib" / "atencao")

# ``%%time`` (a célula inteira vira um texto para a mágica) e o registro da vigilância esvaziado pela função
TIME_E_REGISTRO_APAGADO = ("%%time\n"
                           "import gc\n"
                           "def attention_with_projections(X, W_q, W_k, W_v):\n"
                           "    out = atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n"
                           "    for w in gc.get_objects():\n"
                           "        if type(w).__name__ == 'Watcher':\n"
                           "            w.used.clear()\n"
                           "    return out\n")

# a vigilância desligada pela classe (``__enter__``/``__exit__`` que não fazem nada)
VIGILANCIA_NEUTRALIZADA = ("from atencao.checks import watcher as _w\n"
                           "_w.Watcher.__enter__ = lambda self: self\n"
                           "_w.Watcher.__exit__ = lambda self, *a: False\n"
                           "def attention_with_projections(X, W_q, W_k, W_v):\n"
                           "    return atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n")

# um processo ajudante começado na hora da célula (longe de qualquer vigilância) que faz a softmax pronta e
# responde por um pipe
AJUDANTE_POR_PIPE = ("import os, numpy as np\n"
                     "_pedido_r, _pedido_w = os.pipe()\n"
                     "_resp_r, _resp_w = os.pipe()\n"
                     "if os.fork() == 0:\n"
                     "    while True:\n"
                     "        cab = os.read(_pedido_r, 16)\n"
                     "        if not cab:\n"
                     "            os._exit(0)\n"
                     "        n, d = np.frombuffer(cab, dtype=np.int64)\n"
                     "        buf = b''\n"
                     "        while len(buf) < 8 * n * d:\n"
                     "            buf += os.read(_pedido_r, 8 * n * d - len(buf))\n"
                     "        z = np.frombuffer(buf).reshape(n, d)\n"
                     "        os.write(_resp_w, np.ascontiguousarray(atencao.softmax(z, axis=-1)).tobytes())\n"
                     "def my_softmax(z, axis=-1):\n"
                     "    z = np.asarray(z, dtype=float)\n"
                     "    z2 = np.moveaxis(z, axis, -1)\n"
                     "    forma = z2.shape\n"
                     "    m = np.ascontiguousarray(z2.reshape(-1, forma[-1]))\n"
                     "    os.write(_pedido_w, np.array(m.shape, dtype=np.int64).tobytes() + m.tobytes())\n"
                     "    buf = b''\n"
                     "    while len(buf) < m.nbytes:\n"
                     "        buf += os.read(_resp_r, m.nbytes - len(buf))\n"
                     "    return np.moveaxis(np.frombuffer(buf).reshape(forma), -1, axis)\n")

# uma cópia do código da função pronta com uma constante a mais (outro conteúdo, a mesma conta)
CODIGO_CLONADO = ("import types\n"
                  "_c = atencao.positional_encoding.__code__\n"
                  "_pe = types.FunctionType(_c.replace(co_consts=_c.co_consts + ('outra',)),\n"
                  "                         atencao.positional_encoding.__globals__, 'pe',\n"
                  "                         atencao.positional_encoding.__defaults__)\n"
                  "_pe.__kwdefaults__ = atencao.positional_encoding.__kwdefaults__\n"
                  "def positional_encoding(n, d_model):\n"
                  "    return _pe(n, d_model)\n")

# uma thread começada na hora da célula, antes de qualquer vigilância, que faz a conta pronta
THREAD_ANTES = ("import threading, queue\n"
                "_entra, _sai = queue.Queue(), queue.Queue()\n"
                "def _servo():\n"
                "    while True:\n"
                "        Q, K, V = _entra.get()\n"
                "        _sai.put(atencao.scaled_dot_product_attention(Q, K, V))\n"
                "threading.Thread(target=_servo, daemon=True).start()\n"
                "def attention_with_projections(X, W_q, W_k, W_v):\n"
                "    _entra.put((X @ W_q, X @ W_k, X @ W_v))\n"
                "    return _sai.get()\n")

# o PyTorch chamado de C (``map``): nenhum quadro Python
TORCH_POR_MAP = ("import numpy as np\n"
                 "import torch\n"
                 "def my_softmax(z, axis=-1):\n"
                 "    t = torch.from_numpy(np.asarray(z, dtype=float))\n"
                 "    return next(map(torch.softmax, [t], [axis])).numpy()\n")

TORCH_BACKWARD_POR_MAP = ("import numpy as np\n"
                          "import torch\n"
                          "def my_softmax_backward(A, dA):\n"
                          "    a, g = torch.from_numpy(np.asarray(A, float)), torch.from_numpy(np.asarray(dA, float))\n"
                          "    return next(map(torch._softmax_backward_data, [g], [a], [-1], [a.dtype])).numpy()\n")

# o código-fonte da biblioteca de verdade lido do disco e rodado
FONTE_DO_DISCO = ("import importlib, importlib.util, sys\n"
                  f"_spec = importlib.util.spec_from_file_location('atencao_real', {REAL_PACKAGE + '/__init__.py'!r},\n"
                  f"    submodule_search_locations=[{REAL_PACKAGE!r}])\n"
                  "_m = importlib.util.module_from_spec(_spec)\n"
                  "sys.modules['atencao_real'] = _m\n"
                  "_spec.loader.exec_module(_m)\n"
                  "def attention_with_projections(X, W_q, W_k, W_v):\n"
                  "    return _m.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)\n")

# a conta pronta pedida ao verificador na hora da célula (fora das verificações), e a resposta recortada dela
MASCARA_PEDIDA_NA_CELULA = ("import atencao as _a\n"
                            "_GRANDE = _a.causal_mask(2500)\n"
                            "def my_causal_mask(n):\n"
                            "    return _GRANDE[:n, :n].copy()\n")

# o bloco do decodificador (o mesmo bloco, com a atenção cruzada desligada) no lugar do bloco do codificador
BLOCO_DO_DECODIFICADOR = ("from atencao.transformer import TransformerDecoderBlock\n"
                          "def encoder_block(x, attn, ffn, norm1, norm2, norm_first, mask=None):\n"
                          "    b = TransformerDecoderBlock(x.shape[-1], 1, 1)\n"
                          "    b.norm_first, b.self_attn, b.ffn = bool(norm_first), attn, ffn\n"
                          "    b.norm1, b.norm3 = norm1, norm2\n"
                          "    b.cross_attn = lambda q, k, v, mask=None, average_weights=False: (0.0, None)\n"
                          "    b.norm2 = lambda h: h\n"
                          "    out, (w, _) = b.forward(x, x, mask=mask)\n"
                          "    return out, w\n")

# a conta pronta pedida fora das verificações sobre dados conhecidos antes (a execução única a faz, para as
# demonstrações) e guardada para responder depois: os casos da verificação são sorteados na hora, e não estão lá
CONTA_SOBRE_DADOS_CONHECIDOS = ("import atencao as _a\n"
                                "_GUARDADAS = {}\n"
                                "_rng = np.random.default_rng(0)\n"
                                "for _n, _d, _dk, _dv in ((6, 8, 2, 4), (4, 4, 3, 5), (1, 5, 3, 2), (5, 16, 16, 3)):\n"
                                "    _X, _Wq, _Wk, _Wv = (_rng.normal(size=s) for s in ((_n, _d), (_d, _dk), (_d, _dk),"
                                " (_d, _dv)))\n"
                                "    _GUARDADAS[_X.shape, _Wq.shape, _Wv.shape] = _a.scaled_dot_product_attention(\n"
                                "        _X @ _Wq, _X @ _Wk, _X @ _Wv)\n"
                                "def attention_with_projections(X, W_q, W_k, W_v):\n"
                                "    return _GUARDADAS[X.shape, W_q.shape, W_v.shape]\n")

# outras funções da biblioteca que refazem a conta proibida por extenso (atencao.checks.equivalents): a LayerNorm
# do GPT da Aula 6 no exercício da Aula 4, o backward da atenção do GPT (K = V = identidade, escala 1) no lugar
# do backward da softmax, a softmax causal da indução com os valores numa linha só, e a atenção com cache da
# biblioteca (a resposta do projeto da Aula 4)
LAYER_NORM_DO_GPT = ("from atencao.gpt_backward import layer_norm as _ln_pronta\n"
                     "def layer_norm(x, weight, bias, eps=1e-5):\n"
                     "    return _ln_pronta(np.asarray(x, dtype=float), weight, bias, eps)\n")
BACKWARD_DA_ATENCAO_DO_GPT = ("from atencao.gpt_backward import heads_attention_backward as _hab\n"
                              "def my_softmax_backward(A, dA):\n"
                              "    A = np.asarray(A, dtype=float); dA = np.asarray(dA, dtype=float)\n"
                              "    n = A.shape[-1]; A2, dA2 = A.reshape(-1, n), dA.reshape(-1, n); I = np.eye(n)\n"
                              "    dQ, _, _ = _hab(dA2, np.zeros((len(A2), 1)), I, I, A2, 1.0)\n"
                              "    return dQ.reshape(A.shape)\n")
SOFTMAX_DA_INDUCAO = ("from atencao.induction import _softmax_causal as _sc\n"
                      "def my_softmax(z, axis=-1):\n"
                      "    z = np.asarray(z, dtype=float); zz = np.moveaxis(z, axis, -1); n = zz.shape[-1]\n"
                      "    S = np.zeros(zz.shape[:-1] + (n, n)); S[..., -1, :] = zz\n"
                      "    return np.moveaxis(np.nan_to_num(_sc(S)[..., -1, :], nan=0.0), -1, axis)\n")
CACHE_DA_BIBLIOTECA = ("from atencao.sampling import attend_cached as _pronta\n"
                       "def attend_cached(attn, x_new, K_cache, V_cache):\n"
                       "    return _pronta(attn, x_new, K_cache, V_cache)\n")
# a tabela da máscara pedida fora das verificações com um parâmetro a mais, um array de ponto flutuante que a conta
# nem recebe, para parecer uma conta sobre dados (a regra das demonstrações, em correcao._veredito._enumerable)
MASCARA_COM_PARAMETRO_A_MAIS = ("from correcao import _calculo_remoto as _cr\n"
                                "_T = _cr.call('atencao.masks:causal_mask', {'n': 2500, '_x': np.array([0.0, 1.0])})\n"
                                "def my_causal_mask(n):\n"
                                "    return _T[:n, :n].copy()\n")

# o modelo só de atenção da indução (Aula 6) como calculadora: sem camadas (``n_layers = 0`` depois de criado) e com a
# tabela de saída igual aos logits, a perda e o gradiente dele são a entropia cruzada, e o gradiente, a softmax
# menos o alvo; o backward dele, com um cache montado à mão (x = identidade), dá o backward da atenção
MODELO_DA_INDUCAO = ("from atencao.induction import AttentionOnlyModel as _AOM\n"
                     "def _entropia(Z, y):\n"
                     "    N, V = Z.shape\n"
                     "    m = _AOM(V, N + 1, d_model=N + 1, n_heads=1, n_layers=1)\n"
                     "    m.n_layers = 0\n"
                     "    m.params = {'E': np.zeros((V, N + 1)), 'P': np.eye(N + 1),\n"
                     "                'U': np.vstack([Z, np.zeros((1, V))])}\n"
                     "    perda, g = m.loss_and_grads(np.concatenate([[0], y]).astype(np.int64)[None])\n"
                     "    return perda, g['U'][:N]\n")
ENTROPIA_DA_INDUCAO = MODELO_DA_INDUCAO + ("def my_cross_entropy(logits, targets):\n"
                                           "    Z = np.asarray(logits, dtype=float)\n"
                                           "    perda, dZ = _entropia(Z.reshape(-1, Z.shape[-1]), "
                                           "np.asarray(targets).reshape(-1))\n"
                                           "    return perda, dZ.reshape(Z.shape)\n")
SOFTMAX_DO_MODELO_DA_INDUCAO = MODELO_DA_INDUCAO + (
    "def my_softmax(z, axis=-1):\n"
    "    z = np.asarray(z, dtype=float); zz = np.moveaxis(z, axis, -1); Z = zz.reshape(-1, zz.shape[-1])\n"
    "    vazias = ~np.isfinite(Z).any(axis=-1) if Z.size else np.zeros(len(Z), bool)\n"
    "    Z2 = np.hstack([np.nan_to_num(Z, neginf=-1e300), np.full((len(Z), 1), -1e300)])\n"
    "    _, dZ = _entropia(Z2, np.full(len(Z), Z.shape[-1]))\n"
    "    p = dZ[:, :-1] * len(Z); p[vazias] = 0.0\n"
    "    return np.moveaxis(p.reshape(zz.shape), -1, axis)\n")
BACKWARD_DO_MODELO_DA_INDUCAO = (
    "from atencao.induction import AttentionOnlyModel as _AOM\n"
    "def _bw(dO, Q, K, V, A, scale):\n"
    "    nq, dk = Q.shape; nk, dv = V.shape; M = max(nq, nk, dk, dv)\n"
    "    def pad(a):\n"
    "        z = np.zeros((M, M)); z[:a.shape[0], :a.shape[1]] = a; return z[None, None]\n"
    "    I = np.eye(M); m = _AOM(M, M, d_model=M, n_heads=1, n_layers=1)\n"
    "    m.params.update({'U': I, '0.W_o': I}); c = scale * np.sqrt(M)\n"
    "    cache = {'tokens': np.zeros((1, M), dtype=np.int64), 'keep': np.ones((1, 1)), 'xs': [I[None], I[None]],\n"
    "             'weights': [pad(A)], 'heads': [(c * pad(Q), c * pad(K), pad(V), np.zeros((1, 1, M, M)))]}\n"
    "    g = m.backward(cache, pad(dO)[0])\n"
    "    return g['0.W_q'][:nq, :dk], g['0.W_k'][:nk, :dk], g['0.W_v'][:nk, :dv]\n"
    "def my_softmax_backward(A, dA):\n"
    "    A = np.asarray(A, dtype=float); dA = np.asarray(dA, dtype=float)\n"
    "    n = A.shape[-1]; A2, dA2 = A.reshape(-1, n), dA.reshape(-1, n)\n"
    "    dS, _, _ = _bw(dA2, np.zeros((len(A2), n)), np.eye(n), np.eye(n), A2, 1.0)\n"
    "    return dS.reshape(A.shape)\n")
# o backward da LayerNorm do GPT, linha por linha, com dy = 1: o gradiente de weight é a entrada normalizada
LAYER_NORM_PELO_BACKWARD = ("from atencao.gpt_backward import layer_norm_backward as _lnb\n"
                            "def layer_norm(x, weight, bias, eps=1e-5):\n"
                            "    x = np.asarray(x, dtype=float); d = x.shape[-1]\n"
                            "    xhat = np.array([_lnb(np.ones((1, d)), r[None], np.ones(d), eps)[1]\n"
                            "                     for r in x.reshape(-1, d)]).reshape(x.shape)\n"
                            "    return xhat * weight + bias\n")
# o bloco do GPT (pré-LN ou pós-LN) no lugar do bloco do codificador, com a máscara toda True
BLOCO_DO_GPT = ("from atencao.gpt import GPTBlock as _GB\n"
                "def encoder_block(x, attn, ffn, norm1, norm2, norm_first, mask=None):\n"
                "    x = np.asarray(x, dtype=float); n = x.shape[-2]\n"
                "    if mask is None:\n"
                "        mask = np.ones((n, n), dtype=bool)\n"
                "    return _GB(attn, norm1, norm2, ffn, norm_first=norm_first).forward(x, mask=mask)\n")
# os destaques do visualizador (o token mais atendido, fora ele mesmo) pelos k maiores do explorador
DESTAQUES_DO_EXPLORADOR = ("from atencao.views import top_tokens as _top\n"
                           "def visualize_attention(frase, vectors=None):\n"
                           "    tokens, X = atencao.embed(frase, vectors)\n"
                           "    _, pesos = atencao.self_attention(X)\n"
                           "    n = len(tokens)\n"
                           "    destaques = []\n"
                           "    for i in range(n):\n"
                           "        outro, peso = _top(tokens, pesos[i], 1, allowed=np.arange(n) != i)[0]\n"
                           "        destaques.append((tokens[i], outro, peso))\n"
                           "        print(f'{tokens[i]} → {outro} ({peso:.2f})')\n"
                           "    atencao.plot_attention(pesos, tokens, title=frase)\n"
                           "    return tokens, pesos, destaques\n")

# a máscara de preenchimento com os comprimentos 1 … n é a máscara causal
MASCARA_DE_PREENCHIMENTO = ("from atencao.masks import padding_mask as _pm\n"
                            "def my_causal_mask(n):\n"
                            "    return _pm(np.arange(1, n + 1), n)[:, 0, :]\n")
# a softmax causal da indução sobre zeros (dados de ponto flutuante), pedida na célula: > 0 é a tabela das máscaras
TABELA_DA_SOFTMAX_CAUSAL = ("from atencao.induction import _softmax_causal as _sc\n"
                            "_T = _sc(np.zeros((2500, 2500), dtype=np.float32)) > 0\n"
                            "def my_causal_mask(n):\n"
                            "    return _T[:n, :n].copy()\n")
# a máscara pedida durante a verificação da softmax (que a permite), guardada numa memória compartilhada criada antes
# (cada chamada é um processo filho) e recortada na verificação da máscara, que vem depois
# a softmax escrita à mão (o corpo da resposta honesta da Aula 2)
CORPO_DA_SOFTMAX = ("    z = np.asarray(z, dtype=float)\n"
                    "    topo = np.nan_to_num(z.max(axis=axis, keepdims=True), neginf=0.0)\n"
                    "    e = np.exp(z - topo)\n"
                    "    s = e.sum(axis=axis, keepdims=True)\n"
                    "    return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)\n")
SOFTMAX_QUE_GUARDA_A_MASCARA = ("import mmap\n"
                                "_N = 2500\n"
                                "_SH = mmap.mmap(-1, 1 + _N * _N)\n"
                                "def my_softmax(z, axis=-1):\n"
                                "    if _SH[0] == 0:\n"
                                "        _SH[1:] = atencao.causal_mask(_N).tobytes(); _SH[0] = 1\n"
                                + CORPO_DA_SOFTMAX)
MASCARA_DA_MEMORIA = ("def my_causal_mask(n):\n"
                      "    T = np.frombuffer(_SH, dtype=bool, count=_N * _N, offset=1).reshape(_N, _N)\n"
                      "    return T[:n, :n].copy()\n")

ATAQUES = {
    "mascara-de-preenchimento": (A2, "aula02-mascara-solucao", "aula02-mascara-verificacao", MASCARA_DE_PREENCHIMENTO),
    "tabela-da-softmax-causal": (A2, "aula02-mascara-solucao", "aula02-mascara-verificacao", TABELA_DA_SOFTMAX_CAUSAL),
    "mascara-guardada-na-softmax": (A2, {"aula02-softmax-solucao": SOFTMAX_QUE_GUARDA_A_MASCARA,
                                         "aula02-mascara-solucao": MASCARA_DA_MEMORIA},
                                    "aula02-mascara-verificacao", MASCARA_DA_MEMORIA),
    "entropia-do-modelo-da-inducao": (A6, "aula06-ex1-solucao", "aula06-ex1-verificacao", ENTROPIA_DA_INDUCAO),
    "softmax-do-modelo-da-inducao": (A2, "aula02-softmax-solucao", "aula02-softmax-verificacao",
                                     SOFTMAX_DO_MODELO_DA_INDUCAO),
    "backward-do-modelo-da-inducao": (A5, "aula05-ex1-solucao", "aula05-ex1-verificacao",
                                      BACKWARD_DO_MODELO_DA_INDUCAO),
    "layer-norm-pelo-backward": (A4, "aula04-ex2-solucao", "aula04-ex2-verificacao", LAYER_NORM_PELO_BACKWARD),
    "bloco-do-gpt": (A4, "aula04-ex3-solucao", "aula04-ex3-verificacao", BLOCO_DO_GPT),
    "destaques-do-explorador": (A1, "aula01-projeto-solucao", "aula01-projeto-verificacao", DESTAQUES_DO_EXPLORADOR),
    "layer-norm-do-gpt": (A4, "aula04-ex2-solucao", "aula04-ex2-verificacao", LAYER_NORM_DO_GPT),
    "backward-da-atencao-do-gpt": (A5, "aula05-ex1-solucao", "aula05-ex1-verificacao", BACKWARD_DA_ATENCAO_DO_GPT),
    "softmax-da-inducao": (A2, "aula02-softmax-solucao", "aula02-softmax-verificacao", SOFTMAX_DA_INDUCAO),
    "cache-da-biblioteca": (A4, "aula04-projeto-solucao", "aula04-projeto-verificacao", CACHE_DA_BIBLIOTECA),
    "mascara-com-parametro-a-mais": (A2, "aula02-mascara-solucao", "aula02-mascara-verificacao",
                                     MASCARA_COM_PARAMETRO_A_MAIS),
    "conta-sobre-dados-conhecidos": (A1, "aula01-ex4-solucao", "aula01-ex4-verificacao", CONTA_SOBRE_DADOS_CONHECIDOS),
    "mascara-pedida-na-celula": (A2, "aula02-mascara-solucao", "aula02-mascara-verificacao", MASCARA_PEDIDA_NA_CELULA),
    "bloco-do-decodificador": (A4, "aula04-ex3-solucao", "aula04-ex3-verificacao", BLOCO_DO_DECODIFICADOR),
    "time-e-registro": (A1, "aula01-ex4-solucao", "aula01-ex4-verificacao", TIME_E_REGISTRO_APAGADO),
    "vigilancia-neutralizada": (A1, "aula01-ex4-solucao", "aula01-ex4-verificacao", VIGILANCIA_NEUTRALIZADA),
    "thread-antes": (A1, "aula01-ex4-solucao", "aula01-ex4-verificacao", THREAD_ANTES),
    "fonte-do-disco": (A1, "aula01-ex4-solucao", "aula01-ex4-verificacao", FONTE_DO_DISCO),
    "ajudante-por-pipe": (A2, "aula02-softmax-solucao", "aula02-softmax-verificacao", AJUDANTE_POR_PIPE),
    "torch-por-map": (A2, "aula02-softmax-solucao", "aula02-softmax-verificacao", TORCH_POR_MAP),
    "codigo-clonado": (A4, "aula04-ex1-solucao", "aula04-ex1-verificacao", CODIGO_CLONADO),
    "torch-backward-por-map": (A5, "aula05-ex1-solucao", "aula05-ex1-verificacao", TORCH_BACKWARD_POR_MAP),
}


def _notebook_de(aula: str, grade_id, codigo: str) -> tuple[dict, str]:
    """O notebook de exercícios de ``aula`` em branco, com ``codigo`` na resposta ``grade_id`` (ou, com um
    dicionário ``{grade_id: código}`` no lugar de ``grade_id``, em cada resposta dele)."""
    respostas = grade_id if isinstance(grade_id, dict) else {grade_id: codigo}
    nome = ("04-projeto" if any("projeto" in g for g in respostas) else "04-exercicios" if aula == A2
            else "03-exercicios")
    nb = copy.deepcopy(gerar.student(aula, nome))
    for gid, fonte in respostas.items():
        gerar.fill(nb, gid, fonte)
    return nb, nome


# as mesmas respostas, escritas à mão (a conta por extenso): ganham os pontos na mesma turma
HONESTAS = {
    "honesta-aula01": (A1, "aula01-ex4-solucao", "aula01-ex4-verificacao",
                       "def attention_with_projections(X, W_q, W_k, W_v):\n"
                       "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                       "    S = Q @ K.T / np.sqrt(K.shape[-1])\n"
                       "    P = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                       "    P = P / P.sum(axis=-1, keepdims=True)\n"
                       "    return P @ V, P\n"),
    "honesta-aula02": (A2, "aula02-softmax-solucao", "aula02-softmax-verificacao",
                       "def my_softmax(z, axis=-1):\n" + CORPO_DA_SOFTMAX),
    "honesta-aula04": (A4, "aula04-ex1-solucao", "aula04-ex1-verificacao",
                       "def positional_encoding(n, d_model):\n"
                       "    pos = np.arange(n)[:, None]\n"
                       "    i = np.arange(d_model)[None, :]\n"
                       "    ang = pos / 10000 ** (2 * (i // 2) / d_model)\n"
                       "    return np.where(i % 2 == 0, np.sin(ang), np.cos(ang))\n"),
    "honesta-aula04-projeto": (A4, "aula04-projeto-solucao", "aula04-projeto-verificacao",
                               "def attend_cached(attn, x_new, K_cache, V_cache):\n"
                               "    h = attn.n_heads\n"
                               "    def cabecas(M):\n"
                               "        return M.reshape(M.shape[0], h, -1).transpose(1, 0, 2)\n"
                               "    q = cabecas(x_new @ attn.W_q + attn.b_q)\n"
                               "    K = np.concatenate([K_cache, cabecas(x_new @ attn.W_k + attn.b_k)], axis=1)\n"
                               "    V = np.concatenate([V_cache, cabecas(x_new @ attn.W_v + attn.b_v)], axis=1)\n"
                               "    S = q @ K.transpose(0, 2, 1) / np.sqrt(q.shape[-1])\n"
                               "    P = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                               "    P = P / P.sum(axis=-1, keepdims=True)\n"
                               "    saida = (P @ V).transpose(1, 0, 2).reshape(1, -1) @ attn.W_o + attn.b_o\n"
                               "    return saida, K, V\n"),
    "honesta-aula05": (A5, "aula05-ex1-solucao", "aula05-ex1-verificacao",
                       "def my_softmax_backward(A, dA):\n"
                       "    return A * (dA - (A * dA).sum(axis=-1, keepdims=True))\n"),
}


@pytest.fixture(scope="module")
def turma_hostil(tmp_path_factory):
    if not isolamento.bwrap_available():
        pytest.skip("sem bubblewrap nesta máquina (o CI instala)")
    base = tmp_path_factory.mktemp("proibidas")
    for aluno, (aula, gid, _, codigo) in {**ATAQUES, **HONESTAS}.items():
        nb, nome = _notebook_de(aula, gid, codigo)
        destino = base / "entregas" / aluno / f"{nome}.ipynb"
        destino.parent.mkdir(parents=True)
        destino.write_text(json.dumps(gerar.clean(nb)), encoding="utf-8")
    motor.grade_class(base / "entregas", base / "saida", cell_timeout=20, notebook_timeout=120, log=lambda m: None)
    with open(base / "saida" / "notas.csv", encoding="utf-8") as f:
        return {linha["aluno"]: linha for linha in csv.DictReader(f)}


@pytest.mark.lento
@pytest.mark.parametrize("ataque", sorted(ATAQUES))
def test_conta_pronta_escondida_nao_da_pontos(turma_hostil, ataque):
    linha = turma_hostil[ataque]
    verificacao = ATAQUES[ataque][2]
    assert linha[verificacao] in ("0", "0.0"), linha
    assert ATAQUES[ataque][3] and linha["situacao"] != "ok", linha


@pytest.mark.lento
@pytest.mark.parametrize("aluno", sorted(HONESTAS))
def test_a_mesma_conta_escrita_a_mao_ganha_os_pontos(turma_hostil, aluno):
    """O controle: na mesma turma, a conta escrita por extenso ganha os pontos da mesma verificação (o 0 dos
    ataques vem da conta pronta, e não do notebook em branco ou da caixa)."""
    linha = turma_hostil[aluno]
    assert float(linha[HONESTAS[aluno][2]]) > 0, linha
    # as demonstrações rodam: uma conta que só OUTRO notebook da aula proíbe (a positional_encoding(2048, 32) do
    # projeto da Aula 4, de entradas enumeráveis) é feita pelo verificador, e nenhuma célula para com um erro
    assert "erro em célula" not in linha["motivo"], linha


def test_biblioteca_do_aluno_nao_tem_as_contas_proibidas(tmp_path):
    """A cópia que o processo do aluno importa: as funções proibidas são pedidos ao verificador (nenhuma linha
    da conta), as verificações estão vazias e o PyTorch levanta ``ImportError``."""
    import importlib
    import importlib.util

    from atencao.checks import aula01, aula04

    nomes = biblioteca_aluno.proxied_names(aula04)
    assert "atencao.positional:positional_encoding" in nomes and "atencao.normalization:LayerNorm" in nomes
    assert "atencao.attention:softmax" in nomes  # a softmax permitida chama o miolo proibido: vai junto
    lib = biblioteca_aluno.build_student_library(tmp_path / "lib", nomes + biblioteca_aluno.proxied_names(aula01))
    fonte = (lib / "atencao" / "positional.py").read_text(encoding="utf-8")
    real = (ROOT / "lib" / "atencao" / "positional.py").read_text(encoding="utf-8")
    assert "np.sin" in real and "np.sin" not in fonte and "_calculo_remoto" in fonte
    assert "exp(" not in (lib / "atencao" / "attention.py").read_text(encoding="utf-8").split("def softmax_")[1][:600]
    assert "_top_heads" not in (lib / "atencao" / "checks" / "aula03.py").read_text(encoding="utf-8")
    assert (lib / "_tapados" / "torch" / "__init__.py").read_text(encoding="utf-8").count("ImportError")
    # os .pyc já feitos (a caixa não os grava), da cópia reescrita, legíveis por todos e graváveis só pelo dono
    pyc = lib / "atencao" / importlib.util.cache_from_source("positional.py")
    assert pyc.exists() and pyc.stat().st_mode & 0o777 == 0o644
    sys.path.insert(0, str(lib))
    try:
        for nome in [m for m in sys.modules if m == "atencao" or m.startswith(("atencao.", "correcao."))]:
            sys.modules[f"_guardado_{nome}"] = sys.modules.pop(nome)
        copia = importlib.import_module("atencao")
        assert Path(copia.__file__).resolve().is_relative_to(lib.resolve())
        with pytest.raises(RuntimeError, match="verificador"):
            copia.positional_encoding(4, 8)  # fora da correção: sem canal, a conta não existe aqui
        with pytest.raises(AttributeError, match="não rodam"):
            importlib.import_module("atencao.checks.aula03")._top_heads  # noqa: B018
    finally:
        sys.path.remove(str(lib))
        for nome in [m for m in sys.modules if m == "atencao" or m.startswith(("atencao.", "correcao."))]:
            del sys.modules[nome]
        for nome in [m for m in sys.modules if m.startswith("_guardado_")]:
            sys.modules[nome[len("_guardado_"):]] = sys.modules.pop(nome)


def test_toda_proibicao_das_aulas_se_avalia_com_os_nomes_do_modulo():
    """``forbidden=`` de toda verificação é uma expressão com nomes do módulo (a biblioteca do aluno depende
    disso para saber o que tirar)."""
    import importlib

    from correcao.catalogo import lesson_modules

    for nome in sorted(lesson_modules()):
        proibidas = biblioteca_aluno.forbidden_of_lesson(importlib.import_module(f"atencao.checks.{nome}"))
        assert proibidas, nome


# --- o verificador, que faz as contas pedidas: o que ele aponta, recusa e guarda ------------------------------------
class _Canal:
    def __init__(self):
        self.enviado: list = []

    def send(self, obj):
        self.enviado.append(obj)


def _pedir(nome: str, contexto, refs: set | None = None, **params):
    from correcao import _remoto, _veredito

    canal = _Canal()
    msg = {"calcular": nome, "params": _remoto.encode_value(params, objetos=True, refs=refs)}
    _veredito.serve_calculation(canal, json.loads(json.dumps(msg)), contexto)
    assert len(canal.enviado) == 1
    return canal.enviado[-1]


def test_verificador_faz_a_conta_e_aponta_quando_a_verificacao_em_curso_a_proibe():
    import numpy as np

    import atencao
    from correcao import _remoto, _veredito

    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(4, 3)) for _ in range(3))
    livre = _veredito._Context()
    resposta = _pedir("atencao.attention:scaled_dot_product_attention", livre, Q=Q, K=K, V=V)
    out, pesos = _remoto.decode_value(resposta["calculado"])
    esperado = atencao.scaled_dot_product_attention(Q, K, V)
    assert np.allclose(out, esperado[0]) and np.allclose(pesos, esperado[1]) and not livre.used
    proibida = _veredito._Context()
    proibida.forbidden = (atencao.scaled_dot_product_attention,)
    _pedir("atencao.attention:scaled_dot_product_attention", proibida, Q=Q, K=K, V=V)
    assert proibida.used == {"atencao.scaled_dot_product_attention"}
    # por dentro de outra função pedida: a self_attention chama a scaled_dot_product_attention
    por_dentro = _veredito._Context()
    por_dentro.forbidden = (atencao.scaled_dot_product_attention,)
    _pedir("atencao.attention:self_attention", por_dentro, X=Q)
    assert any("scaled_dot_product_attention" in u for u in por_dentro.used), por_dentro.used
    # a softmax permitida (exercício 4 da Aula 4) com o miolo proibido: não conta
    from atencao.attention import softmax_

    miolo = _veredito._Context()
    miolo.forbidden = (softmax_,)
    resposta = _pedir("atencao.attention:softmax", miolo, z=np.arange(3.0), axis=-1)
    assert not miolo.used and np.allclose(_remoto.decode_value(resposta["calculado"]).sum(), 1.0)


def test_fora_das_verificacoes_a_demonstracao_roda_sobre_arrays_e_a_conta_enumeravel_e_recusada():
    """Na execução única, as células de demonstração rodam no processo do aluno e pedem contas proibidas fora das
    verificações: o verificador as faz sobre arrays de ponto flutuante (o resultado vale para aqueles dados, e os
    casos da verificação são sorteados na hora), e recusa as de entradas enumeráveis (só inteiros, textos, um número
    disfarçado de array), que virariam uma tabela de respostas. Na conferência antiga, recusa todas."""
    import numpy as np

    from correcao import _remoto, _veredito

    recusadas = frozenset({"atencao.masks:causal_mask", "atencao.attention:self_attention",
                           "atencao.positional:positional_encoding"})
    X = np.random.default_rng(0).normal(size=(4, 3))
    demo = _veredito._Context(recusadas, demonstrations=True)
    out, pesos = _remoto.decode_value(_pedir("atencao.attention:self_attention", demo, X=X)["calculado"])
    assert out.shape == (4, 3) and np.allclose(pesos.sum(axis=-1), 1.0) and not demo.used
    for nome, params in (("atencao.masks:causal_mask", {"n": 2500}),
                         ("atencao.positional:positional_encoding", {"n": 64, "d_model": 16}),
                         ("atencao.attention:self_attention", {"X": np.array(7.0)}),
                         ("atencao.attention:self_attention", {"X": np.array([[7.0]])})):
        resposta = _pedir(nome, demo, **params)
        assert "calculado" not in resposta, (nome, params)
    resposta = _pedir("atencao.masks:causal_mask", demo, n=2500)
    assert "tabela de respostas" in resposta["erro_calculo"]["mensagem"], resposta
    # um array de ponto flutuante num parâmetro que a função não tem não faz a conta parecer uma conta sobre dados
    resposta = _pedir("atencao.masks:causal_mask", demo, n=2500, _x=np.array([0.0, 1.0]))
    assert "calculado" not in resposta and "_x" in resposta["erro_calculo"]["mensagem"], resposta
    # nem um objeto da biblioteca (com pesos em ponto flutuante) num parâmetro que não é o dono do método
    import atencao

    norma = atencao.LayerNorm(4)
    norma.dtype = np.dtype("float64")
    resposta = _pedir("atencao.positional:positional_encoding", demo, n=64, d_model=16, dtype=norma)
    assert "tabela de respostas" in resposta["erro_calculo"]["mensagem"], resposta
    antiga = _veredito._Context(recusadas)
    resposta = _pedir("atencao.attention:self_attention", antiga, X=X)
    assert "só roda dentro das verificações" in resposta["erro_calculo"]["mensagem"], resposta


def test_verificador_recusa_o_que_nao_e_uma_conta_da_aula_e_devolve_os_erros_da_biblioteca():
    import numpy as np

    from correcao import _veredito

    contexto = _veredito._Context()
    for nome in ("atencao.e5_file:read_e5", "atencao.checks.aula03:_top_heads", "os:system", "atencao.attention"):
        resposta = _pedir(nome, contexto, x=1)
        assert "conta desconhecida" in resposta["erro_calculo"]["mensagem"], resposta
    resposta = _pedir("atencao.attention:scaled_dot_product_attention", contexto, Q=np.ones((2, 3)), K=np.ones((4, 2)),
                      V=np.ones((4, 2)))
    assert resposta["erro_calculo"]["tipo"] == "ValueError" and "forma" in resposta["erro_calculo"]["mensagem"]


def test_objeto_da_biblioteca_vai_uma_vez_e_depois_so_a_impressao_digital():
    import numpy as np

    import atencao
    from correcao import _calculo_remoto, _remoto, _veredito

    _veredito._OBJETOS.guardados.clear()
    m, x, refs = atencao.MultiHeadAttention(8, 2, seed=1), np.arange(24.0).reshape(3, 8) / 10, set()
    primeira = _pedir("atencao.multihead:MultiHeadAttention.forward", _veredito._Context(), refs, self=m, query=x)
    assert "calculado" in primeira, primeira
    assert refs and _remoto.encode_value({"self": m}, objetos=True, refs=refs)["__dict__"]["self"] == {
        "__ref__": next(iter(refs))}
    segunda = _pedir("atencao.multihead:MultiHeadAttention.forward", _veredito._Context(), refs, self=m, query=x)
    assert segunda["calculado"] == primeira["calculado"]
    m.W_v = m.W_v * 2  # outros pesos, outra impressão: os dados vão de novo
    terceira = _pedir("atencao.multihead:MultiHeadAttention.forward", _veredito._Context(), refs, self=m, query=x)
    assert np.allclose(_remoto.decode_value(terceira["calculado"])[0], m(x)[0])
    _veredito._OBJETOS.guardados.clear()  # o verificador esqueceu: pede os dados de novo
    quarta = _pedir("atencao.multihead:MultiHeadAttention.forward", _veredito._Context(), refs, self=m, query=x)
    assert quarta["erro_calculo"]["tipo"] == _calculo_remoto.REF_UNKNOWN


def test_pacotes_com_contas_prontas_sao_tapados_em_toda_pasta_que_a_caixa_ve(monkeypatch, tmp_path):
    """O SciPy do Python de base (montado inteiro na caixa) também é tapado, e não só o do ambiente: a caixa
    monta um pacote que levanta ``ImportError`` por cima de cada um."""
    base = tmp_path / "base" / "lib" / "python3.11" / "site-packages"
    (base / "scipy").mkdir(parents=True)
    monkeypatch.setattr(biblioteca_aluno, "_package_dirs", lambda: [base])
    assert biblioteca_aluno.masked_packages() == {str(base / "scipy"): "scipy"}
    caixa = isolamento.Sandbox(isolamento.Limits(), isolar=False)
    caixa.biblioteca = str(tmp_path / "lib")
    caixa._paths = [str(tmp_path / "base")]
    args = caixa._masks()
    assert ["--ro-bind", str(tmp_path / "lib" / "_tapados" / "scipy"), str(base / "scipy")] == args[-3:], args


def test_proibir_uma_conta_proibe_as_funcoes_que_a_refazem_por_extenso():
    """:func:`atencao.checks.equivalents.expand`: a LayerNorm proibida leva a ``layer_norm`` do GPT, a softmax leva a
    softmax causal da indução e a entropia cruzada, os backwards da Aula 5 levam o da atenção do GPT. Num sentido
    só: proibir a entropia cruzada (Aula 6) não proíbe a softmax. A biblioteca do aluno tira o código de todas."""
    import importlib

    from atencao import attention, backward, gpt_backward, induction, normalization
    from atencao.checks.equivalents import expand

    assert gpt_backward.layer_norm in expand((normalization.LayerNorm,))
    assert {induction._softmax_causal, gpt_backward.cross_entropy} <= set(expand((attention.softmax,)))
    assert gpt_backward.heads_attention_backward in expand((backward.attention_backward,))
    assert attention.softmax not in expand((gpt_backward.cross_entropy,))
    assert expand((attention.softmax, attention.softmax_)).count(induction._softmax_causal) == 1
    nomes = {aula: biblioteca_aluno.proxied_names(importlib.import_module(f"atencao.checks.{aula}"))
             for aula in ("aula02", "aula04", "aula05")}
    assert "atencao.induction:_softmax_causal" in nomes["aula02"]
    assert {"atencao.gpt_backward:layer_norm", "atencao.sampling:attend_cached"} <= set(nomes["aula04"])
    assert "atencao.gpt_backward:heads_attention_backward" in nomes["aula05"]
    # por notebook: só o que as verificações dele proíbem (o projeto da Aula 4 usa a positional_encoding pronta)
    projeto = biblioteca_aluno.proxied_names(importlib.import_module("atencao.checks.aula04"), ("projeto",))
    assert "atencao.sampling:attend_cached" in projeto and "atencao.positional:positional_encoding" not in projeto
    assert biblioteca_aluno.checks_in(["aula04.projeto(attend_cached)\n", "x = aula02.mascara(f)"]) == {
        "aula02": ("mascara",), "aula04": ("projeto",)}


def test_antes_da_verificacao_que_a_proibe_a_tabela_nao_sai_nem_de_outra_verificacao():
    """As respostas que dependem só de tamanhos (a ``causal_mask``) não saem do verificador antes da verificação que
    as proíbe, nem de dentro de outra verificação que as permite (a da softmax, antes): com tamanhos, a própria
    conta é recusada; as funções que a revelam (a softmax causal da indução), com quaisquer dados. Na verificação
    que a proíbe, a conta roda e o uso é apontado; depois de julgada, roda."""
    import numpy as np

    from atencao import induction, masks
    from correcao import _veredito

    tabelas = _veredito.pending_tables([[masks.causal_mask]])
    assert tabelas == {"atencao.masks:causal_mask": False, "atencao.induction:_softmax_causal": True,
                       "atencao.masks:padding_mask": True}
    _veredito._TABELAS.update(tabelas)
    try:
        softmax = _veredito._Context()  # a verificação da softmax, que não proíbe a máscara
        for nome, params in (("atencao.masks:causal_mask", {"n": 2500}),
                             ("atencao.induction:_softmax_causal", {"S": np.zeros((50, 50))})):
            resposta = _pedir(nome, softmax, **params)
            assert "antes da verificação que a proíbe" in resposta["erro_calculo"]["mensagem"], resposta
        mascara = _veredito._Context()
        mascara.forbidden = (masks.causal_mask, induction._softmax_causal)
        assert "calculado" in _pedir("atencao.masks:causal_mask", mascara, n=5) and mascara.used
    finally:
        _veredito._TABELAS.clear()
    assert "calculado" in _pedir("atencao.masks:causal_mask", _veredito._Context(), n=5)
