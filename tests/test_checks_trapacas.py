"""Respostas que trapaceiam (escritas por quem só leu os enunciados): nenhuma leva ✅ nas verificações do
notebook, e a mensagem diz o que foi visto. Mais respostas válidas que antes levavam ❌ (empates, ordem do
retorno, uma diferença arredondada)."""

import contextlib
import io
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import test_checks_aula01 as t1
import test_checks_aula02 as t2
import test_checks_corpus as tc

import atencao
from atencao.attention import attend
from atencao.checks import aula01, aula02, aula03, cases, framework
from atencao.multihead import merge_heads, split_heads


def _texto(capsys) -> str:
    return " ".join(capsys.readouterr().out.split())


def _falha(resultado, capsys, *trechos):
    out = _texto(capsys)
    assert not resultado, out
    for t in trechos:
        assert t in out, out
    return out


# ---------- a atenção pronta por outro caminho ----------
def ex4_attend(X, W_q, W_k, W_v):
    return attend(X @ W_q, X @ W_k, X @ W_v)


def mask_attend(Q, K, V, mask=None):
    return attend(Q, K, V, mask)


def mha_attend(X, W_q, W_k, W_v, W_o, n_heads):
    out, w = attend(*(split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v)))
    return merge_heads(out) @ W_o, w


def ex4_numa_thread(X, W_q, W_k, W_v):
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(atencao.scaled_dot_product_attention, X @ W_q, X @ W_k, X @ W_v).result()


def ex4_desliga_a_vigilancia(X, W_q, W_k, W_v):
    antes = sys.getprofile()
    sys.setprofile(None)
    try:
        return atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
    finally:
        sys.setprofile(antes)


def ex4_torch(X, W_q, W_k, W_v):
    import torch

    Q, K, V = (torch.tensor(X @ W) for W in (W_q, W_k, W_v))
    out = torch.nn.functional.scaled_dot_product_attention(Q[None], K[None], V[None])[0]
    A = torch.softmax(Q @ K.T / Q.shape[-1] ** 0.5, dim=-1)
    return out.numpy(), A.numpy()


@pytest.mark.parametrize("check, fn, visto", [
    (aula01.exercicio_4, ex4_attend, "atencao.attend"),
    (aula02.exercicio_1, mask_attend, "atencao.attend"),
    (aula02.exercicio_2, mha_attend, "atencao.split_heads"),
    (aula01.exercicio_4, ex4_numa_thread, "uma thread"),
    (aula01.exercicio_4, ex4_desliga_a_vigilancia, "sys.setprofile"),
    (aula01.exercicio_4, ex4_torch, "PyTorch"),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_atencao_pronta_por_outro_caminho(check, fn, visto, capsys):
    _falha(check(fn), capsys, "sem a função pronta", visto)


# ---------- ler as respostas da verificação pela pilha ----------
def _roubar(*nomes):
    f = sys._getframe(2)
    while f is not None:
        if all(n in f.f_locals for n in nomes):
            return [f.f_locals[n] for n in nomes]
        f = f.f_back
    raise LookupError("as respostas não estão na pilha")


def mha_rouba(X, W_q, W_k, W_v, W_o, n_heads):
    return tuple(_roubar("ref_out", "ref_A"))


def comparar_rouba(attn, X1, X2):
    if len(X1) != len(X2):
        raise ValueError("tamanhos diferentes")
    r1, r2 = _roubar("ref1", "ref2")
    return r1, r2, float(np.abs(r1 - r2).mean())


def projeto_rouba(frase_a, frase_b, mha):
    if len(frase_a.split()) != len(frase_b.split()):
        raise ValueError("tamanhos diferentes")
    a, b = _roubar("ref_a", "ref_b")
    return a, b, np.abs(a - b).mean(axis=(1, 2))


def mha_estraga_a_referencia_pela_pilha(X, W_q, W_k, W_v, W_o, n_heads):
    for nome in ("congelados",):  # as cópias da referência: imutáveis
        for a in _roubar(nome)[0]:
            a[...] = 0
    return t2.mha_certo(X, W_q, W_k, W_v, W_o, n_heads)


@pytest.mark.parametrize("check, fn", [(aula02.exercicio_2, mha_rouba), (aula02.exercicio_3, comparar_rouba),
                                       (aula02.projeto, projeto_rouba),
                                       (aula02.exercicio_2, mha_estraga_a_referencia_pela_pilha)],
                         ids=lambda x: getattr(x, "__name__", str(x)))
def test_respostas_nao_estao_na_pilha(check, fn, capsys):
    _falha(check(fn), capsys, "levantou")


# ---------- trocar a referência, a verificação ou o NumPy ----------
def mask_troca_a_referencia(Q, K, V, mask=None):
    original = atencao.scaled_dot_product_attention
    aula02.scaled_dot_product_attention = lambda Q, K, V, mask=None, **kw: original(Q, K, V, mask=mask, scale=1.0)
    s = Q @ K.T  # sem sqrt(d_k): a referência trocada concorda
    A = atencao.softmax(np.where(mask, s, -np.inf) if mask is not None else s)
    return A @ V, A


def ex4_troca_o_checker(X, W_q, W_k, W_v):
    framework.Checker.expect = lambda self, ok, *a, **k: True
    framework.Checker.close = lambda self, *a, **k: True
    return np.zeros((1, 1)), np.zeros((1, 1))


def test_trocar_a_referencia_ou_o_checker_e_desfeito_e_apontado(capsys):
    _falha(aula02.exercicio_1(mask_troca_a_referencia), capsys, "atencao.checks.aula02.scaled_dot_product_attention")
    assert aula02.scaled_dot_product_attention is atencao.scaled_dot_product_attention  # desfeito
    _falha(aula01.exercicio_4(ex4_troca_o_checker), capsys, "Checker.expect")
    assert aula01.exercicio_4(t1.ex4_certo)  # o Checker voltou ao que era


def test_exemplo_trocado_antes_da_verificacao(capsys, monkeypatch):
    _, E = atencao.gato_felino()
    E[0], E[1] = [5, 0, 0, 0], [5, 0.5, 0, 0]  # gato e felino mexidos (o enunciado proíbe)
    E[3] = E[2]
    aula01.gato_felino = lambda: (["gato", "felino", "pulou", "alto"], E.copy())
    _falha(aula01.exercicio_3(lambda: E.copy()), capsys, "trocado antes da verificação", "gato_felino")


# ---------- uma tabela de respostas dos casos fixos ----------
@pytest.mark.lento  # pesado para o make test; a CI o roda no make test-lento
def test_tabela_de_respostas_nao_passa_com_casos_sorteados(monkeypatch):
    vistos = {}

    def espia(X, W_q, W_k, W_v):
        return t1.ex4_certo(X, W_q, W_k, W_v)

    def tabela(X, W_q, W_k, W_v):
        return vistos[X.tobytes()]

    with contextlib.redirect_stdout(io.StringIO()):
        for X, W_q, W_k, W_v in aula01._cases():
            vistos[X.tobytes()] = atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
        assert aula01.exercicio_4(tabela)  # no notebook os casos são fixos: a tabela "passa"...
        monkeypatch.setattr(cases, "RANDOMIZE_CASES", True)  # ...na conferência da correção, não
        assert not aula01.exercicio_4(tabela)
        assert aula01.exercicio_4(espia)  # e a resposta certa continua certa com casos sorteados
        assert aula02.exercicio_1(t2.mask_certo) and aula02.exercicio_2(t2.mha_certo)
        assert aula02.exercicio_3(t2.comparar_certo) and aula02.projeto(t2.projeto_certo)
        assert aula01.projeto(t1.proj_certo)


# ---------- o projeto da Aula 1: o mapa e o resumo de verdade ----------
def proj_figura_qualquer(frase, vectors=None):
    import matplotlib.pyplot as plt

    tokens, A, h = t1.proj_sem_figura_nem_texto(frase, vectors)
    plt.figure()
    print(".")
    return tokens, A, h


def test_projeto_uma_figura_qualquer_nao_e_o_mapa(capsys):
    _falha(aula01.projeto(proj_figura_qualquer), capsys, "mapa de calor: não", "resumo impresso: falta a linha de")


def proj_empate_pelo_outro_lado(frase, vectors=None):
    tokens, A, _ = t1.proj_certo(frase, vectors)
    destaques = []
    for i, t in enumerate(tokens):
        outros = [j for j in range(len(tokens)) if j != i]
        j = sorted(outros, key=lambda j: A[i, j])[-1]  # num empate, o último
        destaques.append((t, tokens[j], float(A[i, j])))
    return tokens, A, destaques


def proj_ordem_trocada(frase, vectors=None):
    tokens, A, h = t1.proj_certo(frase, vectors)
    return A, tokens, h


def test_projeto_empate_vale_qualquer_um_e_ordem_trocada_tem_dica(capsys):
    assert aula01.projeto(proj_empate_pelo_outro_lado), _texto(capsys)
    out = _falha(aula01.projeto(proj_ordem_trocada), capsys, "a ordem do return é (tokens, pesos, destaques)")
    assert "o seu código levantou" not in out


# ---------- erros e mensagens ----------
def ex4_sai(X, W_q, W_k, W_v):
    raise SystemExit(0)


def comparar_valueerror_vazio(attn, X1, X2):
    if len(X1) != len(X2):
        raise ValueError
    return t2.comparar_certo(attn, X1, X2)


def comparar_typeerror(attn, X1, X2):
    if len(X1) != len(X2):
        raise TypeError("tamanhos")
    return t2.comparar_certo(attn, X1, X2)


def comparar_arredondado(attn, X1, X2):
    A1, A2, d = t2.comparar_certo(attn, X1, X2)
    return A1, A2, round(d, 3)


def comparar_pesos_trocados(attn, X1, X2):
    A1, A2, d = t2.comparar_certo(attn, X1, X2)
    return A2, A1, d


def comparar_devolve_a_saida(attn, X1, X2):
    if len(X1) != len(X2):
        raise ValueError("tamanhos diferentes")
    (o1, A1), (o2, A2) = attn(X1), attn(X2)
    return o1, o2, float(np.abs(A1 - A2).mean())


def projeto_frases_trocadas(frase_a, frase_b, mha):
    Wa, Wb, d = t2.projeto_certo(frase_a, frase_b, mha)
    return Wb, Wa, d


def mask_ignora(Q, K, V, mask=None):
    return t2.mask_certo(Q, K, V)


def mask_raiz_de_n_k(Q, K, V, mask=None):
    s = Q @ K.T / np.sqrt(K.shape[0])
    A = atencao.softmax(np.where(mask, s, -np.inf) if mask is not None else s)
    return A @ V, A


def test_mensagens_especificas(capsys):
    _falha(aula01.exercicio_4(ex4_sai), capsys, "SystemExit")
    _falha(aula02.exercicio_3(comparar_valueerror_vazio), capsys, "ValueError sem mensagem")
    _falha(aula02.exercicio_3(comparar_typeerror), capsys, "TypeError: tamanhos", "outro tipo de erro")
    assert aula02.exercicio_3(comparar_arredondado), _texto(capsys)
    _falha(aula02.exercicio_3(comparar_pesos_trocados), capsys, "estão trocados")
    _falha(aula02.exercicio_3(comparar_devolve_a_saida), capsys, "devolveu a saída da camada")
    _falha(aula02.projeto(projeto_frases_trocadas), capsys, "estão trocados")
    _falha(aula02.exercicio_1(mask_ignora), capsys, "a máscara foi ignorada")
    _falha(aula02.exercicio_1(mask_raiz_de_n_k), capsys, "raiz do número de chaves")


# ---------- Aula 3: o codificador da verificação, não o da célula ----------
class _Ajeitado:
    """Embrulha o codificador verdadeiro e deixa toda linha de atenção uniforme."""

    def __init__(self, enc):
        self._enc = enc

    def __call__(self, frase):
        out = self._enc(frase)
        out.attentions[...] = 1.0 / out.attentions.shape[-1]
        return out

    def __getattr__(self, nome):
        return getattr(self._enc, nome)


@pytest.mark.lento  # a verificação roda o modelo de 12 camadas (make test-lento)
def test_aula03_codificador_ajeitado_nao_muda_a_referencia(enc, capsys):
    ajeitado = _Ajeitado(enc)

    def massa(encoder, frase):
        n = len(enc(frase).tokens)
        return np.full(enc.config.n_layers, 2 / n)  # o que daria com atenção uniforme

    def cabecas(encoder, frase, origem, destino, k=5):
        return [(c, h) for c in range(12) for h in range(12)][:k]

    def linha(encoder, frase, camada, cabeca, palavra):
        tokens = enc(frase).tokens
        return tokens, np.full(len(tokens), 1 / len(tokens))

    _falha(aula03.exercicio_3(massa, ajeitado), capsys, "fração por camada")
    _falha(aula03.exercicio_1(cabecas, ajeitado), capsys)
    _falha(aula03.projeto(linha, ajeitado), capsys, "linha de atenção")


def test_aula03_projeto_sem_return_tem_dica(enc, capsys):
    _falha(aula03.projeto(lambda *a: None, enc), capsys, "faltou um `return`")


# ---------- segunda rodada: o resultado preguiçoso, as referências da verificação, o código disfarçado ----------
class _Preguicoso:
    """Só faz a conta quando vira array (depois da chamada, fora da vigilância, se ela não olhasse)."""

    def __init__(self, conta, i):
        self.conta, self.i = conta, i

    def __array__(self, dtype=None, copy=None):
        r = self.conta()[self.i]
        return r if dtype is None else r.astype(dtype)


def mask_preguicosa(Q, K, V, mask=None):
    def conta():
        return atencao.scaled_dot_product_attention(Q, K, V, mask=mask)

    return _Preguicoso(conta, 0), _Preguicoso(conta, 1)


def ex4_referencia_da_verificacao(X, W_q, W_k, W_v):
    return aula01._reference_projected(X, W_q, W_k, W_v)


def mha_referencia_da_verificacao(X, W_q, W_k, W_v, W_o, n_heads):
    return aula02._mha_reference(X, W_q, W_k, W_v, W_o, n_heads)


def _disfarcado():
    import types

    def f(Q, K, V, mask=None):
        return atencao.scaled_dot_product_attention(Q, K, V, mask=mask)

    codigo = f.__code__.replace(co_filename=atencao.attention.__file__)
    return types.FunctionType(codigo, globals(), "attention_with_mask")


def ex4_subprocesso(X, W_q, W_k, W_v):
    import subprocess

    subprocess.run([sys.executable, "-c", "pass"], check=True)  # a conta "de verdade" iria para fora
    return t1.ex4_certo(X, W_q, W_k, W_v)


@pytest.mark.parametrize("check, fn, visto", [
    (aula02.exercicio_1, mask_preguicosa, "atencao.scaled_dot_product_attention"),
    (aula01.exercicio_4, ex4_referencia_da_verificacao, "própria verificação"),
    (aula02.exercicio_2, mha_referencia_da_verificacao, "própria verificação"),
    (aula02.exercicio_1, _disfarcado(), "atencao.scaled_dot_product_attention"),
    (aula01.exercicio_4, ex4_subprocesso, "outro processo"),
], ids=["preguicoso", "ref-aula01", "ref-aula02", "disfarcado", "subprocesso"])
def test_segunda_rodada_de_trapacas(check, fn, visto, capsys):
    _falha(check(fn), capsys, "sem a função pronta", visto)


def test_aula03_referencias_da_verificacao_nao_passam(enc, capsys):
    def cabecas(encoder, frase, origem, destino, k=5):
        out = encoder(frase)
        i, j = aula03._token_index(out.tokens, origem), aula03._token_index(out.tokens, destino)
        return aula03._top_heads(out.attentions, i, j, k)

    _falha(aula03.exercicio_1(cabecas, enc), capsys, "própria verificação")


def mask_complexa(Q, K, V, mask=None):
    out, A = t2.mask_certo(Q, K, V, mask)
    return out.astype(complex) + 1j, A.astype(complex)


def ex4_generatorexit(X, W_q, W_k, W_v):
    raise GeneratorExit


class _Ainda(NotImplementedError):
    pass


def mask_so_sem_mascara(Q, K, V, mask=None):
    if mask is not None:
        raise _Ainda("máscara ainda não")
    return t2.mask_certo(Q, K, V)


def test_complexos_generatorexit_e_notimplemented_no_meio(capsys):
    _falha(aula02.exercicio_1(mask_complexa), capsys, "números complexos")
    _falha(aula01.exercicio_4(ex4_generatorexit), capsys, "GeneratorExit")
    r = aula02.exercicio_1(mask_so_sem_mascara)
    assert r.status == "falhou"
    _falha(r, capsys, "_Ainda")


# ---------- terceira rodada (as verificações novas: softmax, máscara, visualizador, ex. 4 da Aula 3) ----------
def _zeros(z, axis=-1):
    return np.zeros(np.shape(z))


def test_trocar_o_codigo_de_um_metodo_da_verificacao_e_desfeito(capsys):
    """``Checker.close.__code__ = ...`` mantém o mesmo objeto no módulo: a foto do código vê a troca."""
    originais = framework.Checker.close.__code__, framework.Checker.expect.__code__
    try:
        framework.Checker.close.__code__ = (lambda self, *a, **k: True).__code__
        framework.Checker.expect.__code__ = (lambda self, *a, **k: True).__code__
        _falha(aula02.aquecimento_softmax(_zeros), capsys, "como foram importadas", "Checker.close (o código)")
    finally:
        framework.Checker.close.__code__, framework.Checker.expect.__code__ = originais
    assert aula02.aquecimento_softmax(tc.sm_certa)


def test_trocar_o_codigo_da_referencia_e_desfeito(capsys):
    originais = atencao.attention.softmax.__code__, atencao.attention.softmax_.__code__
    try:
        atencao.attention.softmax.__code__ = atencao.attention.softmax_.__code__ = _zeros.__code__
        _falha(aula02.aquecimento_softmax(_zeros), capsys, "atencao.attention.softmax (o código)")
    finally:
        atencao.attention.softmax.__code__, atencao.attention.softmax_.__code__ = originais
    assert aula02.aquecimento_softmax(tc.sm_certa)


def softmax_desliga_por_ctypes(z, axis=-1):
    import ctypes

    ctypes.pythonapi.PyEval_SetProfile(None, None)
    return atencao.softmax(z, axis=axis)


def softmax_em_thread_crua(z, axis=-1):
    import _thread
    import time

    caixa = []
    _thread.start_new_thread(lambda: caixa.append(atencao.softmax(z, axis=axis)), ())
    while not caixa:
        time.sleep(0.001)
    return caixa[0]


def _copia_da_biblioteca():
    import inspect

    ns = {"__name__": "atencao.meu", "__package__": "atencao"}
    exec(compile(inspect.getsource(atencao.attention), "/tmp/meu.py", "exec"), ns)  # noqa: S102
    return ns["softmax"]


def softmax_copiada(z, axis=-1):
    return _copia_da_biblioteca()(z, axis=axis)


@pytest.mark.parametrize("fn, visto", [
    (softmax_desliga_por_ctypes, "desligamento da vigilância"),
    (softmax_em_thread_crua, "_thread"),
    (softmax_copiada, "uma cópia do código dela"),
    (tc.sm_maximo_global, "o de cada linha"),
])
def test_terceira_rodada_softmax(fn, visto, capsys):
    _falha(aula02.aquecimento_softmax(fn), capsys, visto)


def test_thread_iniciada_antes_e_alimentada_por_fila(capsys):
    """A conta feita numa thread que já existia antes da verificação, recebendo o trabalho por uma fila."""
    import queue
    import threading

    entrada, saida = queue.Queue(), queue.Queue()

    def trabalhador():
        while True:
            z, axis = entrada.get()
            saida.put(atencao.softmax(z, axis=axis))

    threading.Thread(target=trabalhador, daemon=True).start()

    def pela_fila(z, axis=-1):
        entrada.put((z, axis))
        return saida.get()

    _falha(aula02.aquecimento_softmax(pela_fila), capsys, "uma thread (queue)")


def test_mascara_tabela_dos_casos_fixos_nao_passa_com_n_sorteado(monkeypatch, capsys):
    tabela = {n: np.tril(np.ones((n, n), dtype=bool)) for n in (1, 2, 5, 7)}
    monkeypatch.setattr(cases, "RANDOMIZE_CASES", True)
    resultados = [bool(aula02.exercicio_1_passo_1(lambda n: tabela.get(n, np.ones((n, n), dtype=bool))))
                  for _ in range(3)]
    assert not any(resultados)


def test_mascara_em_lista_tem_dica(capsys):
    _falha(aula02.exercicio_1_passo_1(lambda n: np.tril(np.ones((n, n), dtype=bool)).tolist()), capsys, "não uma lista")


def test_ex1_em_float32_e_valido(capsys):
    def em_float32(Q, K, V, mask=None):
        return t2.mask_certo(*(np.asarray(a, dtype=np.float32) for a in (Q, K, V)), mask)

    assert aula02.exercicio_1(em_float32), _texto(capsys)
