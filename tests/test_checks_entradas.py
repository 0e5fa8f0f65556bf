"""Issue das verificações, o tipo "mudar as entradas": uma resposta que altera no lugar os arrays (ou o
objeto) que recebeu não passa, a mensagem diz qual argumento, e a referência da verificação não é afetada
(inclusive a resposta que escala ``W_q`` no lugar e ainda divide de novo, que passava porque a referência
era calculada depois, com os pesos já alterados)."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
from test_checks_aula01 import ex4_certo  # a resposta certa é uma só

import atencao
from atencao.checks import aula01, aula02, aula03


def _falha(resultado, capsys, *trechos):
    out = " ".join(capsys.readouterr().out.split())  # as linhas longas do relatório são quebradas
    assert not resultado and "não altera as entradas" in out, out
    for t in trechos:
        assert t in out, out
    return out


# ---------- Aula 1, exercício 4 ----------
def ex4_escala_W_q_no_lugar(X, W_q, W_k, W_v):
    W_q /= np.sqrt(W_q.shape[1])  # "escala" no lugar...
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = atencao.softmax(Q @ K.T)  # ...e por isso não divide aqui: o resultado está certo
    return A @ V, A


def ex4_escala_Q_no_lugar_e_de_novo(X, W_q, W_k, W_v):
    W_q /= np.sqrt(W_q.shape[1])
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = atencao.softmax(Q @ K.T / np.sqrt(K.shape[1]))  # divide duas vezes
    return A @ V, A


def test_aula01_ex4_entrada_alterada(capsys):
    _falha(aula01.exercicio_4(ex4_escala_W_q_no_lugar), capsys, "W_q foi modificado", "crie um array novo")
    _falha(aula01.exercicio_4(ex4_escala_Q_no_lugar_e_de_novo), capsys, "W_q foi modificado")
    assert aula01.exercicio_4(ex4_certo)  # a referência não ficou estragada pelas chamadas anteriores


# ---------- Aula 2 ----------
def mask_escala_Q_no_lugar(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])
    return atencao.scaled_dot_product_attention(Q, K, V, mask=mask, scale=1.0)


def comparar_X1_no_lugar(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("as frases precisam ter o mesmo número de tokens")
    X1 *= 1.0
    X1[0] += 1.0
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def comparar_muda_a_instancia(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("as frases precisam ter o mesmo número de tokens")
    attn.W_q *= 2.0
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def projeto_muda_mha(frase_a, frase_b, mha):
    mha.W_o[...] = 0.0
    A = mha(atencao.embed_hashed(frase_a, d_model=mha.d_model)[1])[1]
    B = mha(atencao.embed_hashed(frase_b, d_model=mha.d_model)[1])[1]
    return A, B, np.abs(A - B).mean(axis=(1, 2))


def test_aula02_entradas_alteradas(capsys):
    _falha(aula02.exercicio_1(mask_escala_Q_no_lugar), capsys, "Q foi modificado")
    _falha(aula02.exercicio_3(comparar_X1_no_lugar), capsys, "X1 foi modificado")
    _falha(aula02.exercicio_3(comparar_muda_a_instancia), capsys, "attn.W_q foi modificado")
    _falha(aula02.projeto(projeto_muda_mha), capsys, "mha.W_o foi modificado")


def test_aula02_ex2_escala_no_lugar_nao_estraga_a_referencia(capsys):
    """O caso do issue: W_q escalado no lugar + divisão de novo passava (a referência usava o W_q alterado)."""
    def mha(X, W_q, W_k, W_v, W_o, n_heads):
        d_k = X.shape[-1] // n_heads
        W_q /= np.sqrt(d_k)
        n = X.shape[0]
        Q, K, V = ((X @ W).reshape(n, n_heads, d_k).transpose(1, 0, 2) for W in (W_q, W_k, W_v))
        A = atencao.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k))
        return np.swapaxes(A @ V, 0, 1).reshape(n, -1) @ W_o, A

    out = _falha(aula02.exercicio_2(mha), capsys, "W_q foi modificado")
    assert "✅ OK — n=6, d_model=8, n_heads=2: pesos por cabeça" not in out  # a verificação para no primeiro ❌


# ---------- Aula 3, exercício 2 ----------
def test_aula03_ex2_atencoes_alteradas(capsys):
    def distancia(attentions):
        n = attentions.shape[-1]
        attentions *= np.abs(np.arange(n)[:, None] - np.arange(n))  # no lugar
        return attentions.sum(axis=-1).mean(axis=(1, 2))

    class ModeloFalso:  # o caso 3 usa as atenções do modelo; aqui, sorteadas (o teste não precisa do modelo)
        def __call__(self, frase):
            return SimpleNamespace(attentions=np.random.default_rng(0).dirichlet(np.ones(5), size=(3, 2, 5)))

    _falha(aula03.exercicio_2(distancia, ModeloFalso()), capsys, "attentions foi modificado")


@pytest.mark.parametrize("valor", [np.arange(3.0), {"a": np.ones(2)}, [np.zeros(2)], 3, "texto", None])
def test_copias_privadas(valor):
    from atencao.checks.integrity import arrays_in, private_copy

    copia = private_copy(valor)
    for k, a in arrays_in(copia).items():
        assert a is not arrays_in(valor)[k]


# ---------- chamar a biblioteca em vez de escrever a conta ----------
def ex4_chama_a_biblioteca(X, W_q, W_k, W_v):
    return atencao.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def ex4_chama_com_outro_nome(X, W_q, W_k, W_v):
    from atencao.attention import scaled_dot_product_attention as f
    return f(X @ W_q, X @ W_k, X @ W_v)


def ex4_usa_a_classe(X, W_q, W_k, W_v):
    return atencao.SelfAttention.from_weights(W_q, W_k, W_v)(X)


def test_aula01_ex4_biblioteca_pronta(capsys):
    for fn in (ex4_chama_a_biblioteca, ex4_chama_com_outro_nome):
        out = capsys.readouterr() and None
        assert not aula01.exercicio_4(fn)
        out = capsys.readouterr().out
        assert "chamou atencao.scaled_dot_product_attention" in " ".join(out.split()), out
    if hasattr(atencao.SelfAttention, "from_weights"):
        assert not aula01.exercicio_4(ex4_usa_a_classe)
        assert "chamou atencao.SelfAttention" in capsys.readouterr().out
    assert aula01.exercicio_4(ex4_certo)  # a fórmula escrita, com atencao.softmax, passa


def test_aula02_biblioteca_pronta(capsys):
    def mask_pronta(Q, K, V, mask=None):
        return atencao.scaled_dot_product_attention(Q, K, V, mask=mask)

    def mha_pronta(X, W_q, W_k, W_v, W_o, n_heads):
        return atencao.MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, n_heads=n_heads)(X)

    assert not aula02.exercicio_1(mask_pronta)
    assert "chamou atencao.scaled_dot_product_attention" in " ".join(capsys.readouterr().out.split())
    assert not aula02.exercicio_2(mha_pronta)
    assert "chamou atencao.MultiHeadAttention" in capsys.readouterr().out


def test_referencias_da_aula03_nao_sao_publicas():
    for nome in ("top_heads", "mean_attention_distance", "special_token_mass", "token_index"):
        assert not hasattr(aula03, nome) and nome not in aula03.__all__


def test_na_correcao_a_funcao_do_aluno_roda_em_outro_processo_e_a_proibida_e_vista_la(tmp_path, capsys):
    """Na correção, a verificação roda num processo sem código do aluno e chama a função dele no processo do aluno
    (correcao._aluno, aqui sem a caixa) pela ponte: a conta certa passa, a chamada proibida é vista lá, e um
    truque que o aluno roda no próprio processo (aqui: o resultado da verificação sempre aprovado) não muda nada."""
    import inspect
    import os
    import subprocess
    import sys

    from correcao import _remoto, _veredito

    celulas = [{"fonte": "import numpy as np\nimport atencao\nfrom atencao.checks import aula01"},
               {"fonte": "def certo(X, W_q, W_k, W_v):\n"
                         "    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                         "    S = Q @ K.T / np.sqrt(K.shape[-1])\n"
                         "    A = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                         "    A = A / A.sum(axis=-1, keepdims=True)\n"
                         "    return A @ V, A\n"},
               {"fonte": inspect.getsource(ex4_chama_a_biblioteca).replace("def ex4_chama_a_biblioteca", "def pronta")},
               {"fonte": "def errada(X, W_q, W_k, W_v):\n    return X, X\n"
                         "import atencao.checks.framework as c\n"
                         "c.CheckResult.passed = property(lambda s: True, lambda s, v: None)"},
               {"verificacao": "v1"}]
    pedidos_ler, pedidos_escrever = os.pipe()
    respostas_ler, respostas_escrever = os.pipe()
    env = {**os.environ, "CORRECAO_FD_LER": str(pedidos_ler), "CORRECAO_FD_ESCREVER": str(respostas_escrever),
           "HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / "mpl")}
    aluno = subprocess.Popen([sys.executable, "-m", "correcao._aluno"], stdin=subprocess.PIPE, env=env, cwd=tmp_path,
                             pass_fds=(pedidos_ler, respostas_escrever), stdout=subprocess.DEVNULL)
    os.close(pedidos_ler)
    os.close(respostas_escrever)
    try:
        aluno.communicate(json.dumps({"nonce": "x", "celulas": celulas, "tempo_celula": 60}).encode(), timeout=0.1)
    except subprocess.TimeoutExpired:
        pass
    canal = _remoto.Channel(respostas_ler, pedidos_escrever)
    try:
        assert canal.receive(120) == {"pronto": "v1"}
        remota = _veredito._make_remote_base()
        assert aula01.exercicio_4(remota(canal, "certo", 60))
        assert not aula01.exercicio_4(remota(canal, "pronta", 60))
        assert "chamou atencao.scaled_dot_product_attention" in " ".join(capsys.readouterr().out.split())
        assert not aula01.exercicio_4(remota(canal, "errada", 60))
        assert not aula01.exercicio_3(remota(canal, "nao_existe", 60))
        assert not canal.parou
    finally:
        aluno.kill()
        aluno.wait()
        os.close(respostas_ler)
        os.close(pedidos_escrever)


# ---------- comportamento pedido e variantes válidas (Aula 1, exercício 3) ----------
def ex3_escala_tudo():
    _, E = atencao.gato_felino()
    E = E * 3.0  # muda gato e felino também
    E[3] = E[2]
    return E


def ex3_quinta_coordenada():
    _, E = atencao.gato_felino()
    E = np.hstack([E, np.zeros((4, 1))])
    E[2, -1] = E[3, -1] = 3.0  # pulou e alto ganham uma coordenada só deles
    return E


def test_aula01_ex3_nao_mexer_em_gato_e_felino_e_quinta_coordenada(capsys):
    assert not aula01.exercicio_3(ex3_escala_tudo)
    assert "as linhas de gato e felino continuam as do exemplo" in capsys.readouterr().out
    resultado = aula01.exercicio_3(ex3_quinta_coordenada)  # válido pelo enunciado: não pode quebrar a verificação
    out = capsys.readouterr().out
    assert resultado and "levantou" not in out, out


# ---------- dicas que apontam o engano certo (Aula 1, exercício 4) ----------
def ex4_escala_por_n(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = atencao.softmax(Q @ K.T / np.sqrt(X.shape[0]))
    return A @ V, A


def ex4_escala_por_d(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = atencao.softmax(Q @ K.T / np.sqrt(X.shape[1]))
    return A @ V, A


def test_aula01_ex4_dica_de_escala_certa(capsys):
    assert not aula01.exercicio_4(ex4_escala_por_n)
    out = capsys.readouterr().out
    assert "número de tokens" in out and "do embedding" not in out, out
    assert not aula01.exercicio_4(ex4_escala_por_d)
    out = capsys.readouterr().out
    assert "do embedding" in out and "número de tokens" not in out, out


# ---------- erro no código do aluno: em português, com a linha e a mensagem original ----------
def test_erro_do_aluno_em_portugues_com_a_linha(capsys):
    def ex4_formas_erradas(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        A = atencao.softmax(Q @ K / np.sqrt(K.shape[1]))  # esqueceu o .T
        return A @ V, A

    assert not aula01.exercicio_4(ex4_formas_erradas)
    out = " ".join(capsys.readouterr().out.split())  # sem as quebras de linha do relatório
    assert "multiplicação de matrizes (@) com formas incompatíveis" in out, out
    assert "de ex4_formas_erradas)" in out and "mensagem original: “matmul: Input operand" in out, out


def test_tupla_inteira_numa_conta_em_portugues(capsys):
    """A tupla (saida, pesos) somada a um array: o ValueError do NumPy ("setting an array element with a sequence")
    em português, em qualquer exercício."""
    def ex4_soma_a_tupla(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        return np.array([Q @ K.T, V]) + 1.0, None

    assert not aula01.exercicio_4(ex4_soma_a_tupla)
    out = " ".join(capsys.readouterr().out.split())
    assert "o NumPy tentou transformar em array uma sequência de partes com formas diferentes" in out, out


# ---------- retorno errado: o que veio e como devolver ----------
def test_retorno_errado_tem_dica(capsys):
    def so_pesos(X, W_q, W_k, W_v):
        Q, K = X @ W_q, X @ W_k
        return atencao.softmax(Q @ K.T / np.sqrt(K.shape[1]))

    assert not aula01.exercicio_4(so_pesos)
    out = capsys.readouterr().out
    assert "obtido:   um array de forma (6, 6)" in out and "`return saida, pesos`" in " ".join(out.split()), out
    assert not aula01.exercicio_4(lambda X, W_q, W_k, W_v: None)
    assert "faltou um `return` no fim da função" in capsys.readouterr().out


def test_matrizes_em_ponto_fixo():
    from atencao.checks.report import format_value

    texto = format_value(np.array([[0.518, 0.0001], [12.5, -3.0]]))
    assert "e-" not in texto and "0.518" in texto and "12.500" in texto


# ---------- dicas específicas da máscara (Aula 2, exercício 1) ----------
def _mask_com(Q, K, V, mask=None, escala=True, preenche=-np.inf, axis=-1, sem_softmax=False):
    S = Q @ K.T / (np.sqrt(K.shape[-1]) if escala else 1.0)
    if mask is not None:
        S = np.where(mask, S, preenche)
    A = S if sem_softmax else atencao.softmax(S, axis=axis)
    return np.nan_to_num(A) @ V, A


@pytest.mark.parametrize("kw, dica", [
    (dict(escala=False), "faltou dividir as pontuações por sqrt(d_k)"),
    (dict(axis=0), "por coluna"),
    (dict(preenche=0.0), "receberam um número finito (0, por exemplo) em vez de -np.inf"),
    (dict(sem_softmax=True), "faltou a softmax"),
])
def test_aula02_ex1_dicas_especificas(kw, dica, capsys):
    assert not aula02.exercicio_1(lambda Q, K, V, mask=None: _mask_com(Q, K, V, mask, **kw))
    assert dica in " ".join(capsys.readouterr().out.split())


def test_aula02_ex2_dica_da_saida_so_quando_os_pesos_estao_certos(capsys):
    def mha_sem_escala(X, W_q, W_k, W_v, W_o, n_heads):
        n, d = X.shape
        d_k = d // n_heads
        Q, K, V = ((X @ W).reshape(n, n_heads, d_k).transpose(1, 0, 2) for W in (W_q, W_k, W_v))
        A = atencao.softmax(Q @ np.swapaxes(K, -1, -2))
        return np.swapaxes(A @ V, 0, 1).reshape(n, d) @ W_o, A

    assert not aula02.exercicio_2(mha_sem_escala)
    out = capsys.readouterr().out
    assert "faltou dividir" in out and "concatene as cabeças" not in out, out


def test_verificacao_que_recebe_algo_que_nao_e_funcao_diz_isso(capsys):
    """``aula05.exercicio_1(3)`` (o resultado no lugar da função): um ❌ que diz o que era esperado, sem
    traceback do Python nem a verificação culpando a si mesma."""
    from atencao.checks import aula05

    aula05.exercicio_1(3)
    out = capsys.readouterr().out
    assert "❌" in out and "a verificação recebeu uma função" in out and "int: 3" in out, out
    assert "Traceback" not in out and "atencao.checks" not in out, out
