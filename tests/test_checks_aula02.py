"""As verificações da Aula 2 aceitam a resposta certa e rejeitam respostas erradas típicas."""

import corpus
import numpy as np
import pytest

import atencao
from atencao import softmax
from atencao.checks import aula02


def nao_feito(*args, **kwargs):
    raise NotImplementedError


# ---------- exercício 1, passo 1: a máscara causal ----------
def mc_triu_do_pytorch(n):  # a convenção do PyTorch, True = bloqueado: com n = 1, [[False]], como a sem diagonal
    return np.triu(np.ones((n, n), bool), 1)


def mc_sem_diagonal_k_menos_1(n):
    return np.tril(np.ones((n, n), bool), k=-1)


@pytest.mark.parametrize("fn, dica", [
    (mc_triu_do_pytorch, "a máscara está invertida: aqui True = pode olhar"),
    (mc_sem_diagonal_k_menos_1, "a diagonal precisa ser True"),
])
def test_ex1_passo_1_a_dica_nomeia_o_engano(fn, dica, capsys, monkeypatch):
    """A máscara invertida e a sem diagonal dão a mesma [[False]] com n = 1: a dica diz qual das duas é."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    result = aula02.exercicio_1_passo_1(fn)
    out = capsys.readouterr().out
    assert not result and result.status == "falhou", out
    assert dica in " ".join(out.split()), out
    assert not corpus.falhas_sem_dica(out) and "o seu código levantou" not in out, out
    outra = "k=-1" if fn is mc_triu_do_pytorch else "invertida"
    assert outra not in out, out


# ---------- exercício 1: máscara ----------
def _scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])


def mask_certo(Q, K, V, mask=None):
    scores = _scores(Q, K)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    A = softmax(scores)
    return A @ V, A


def mask_invertida(Q, K, V, mask=None):
    return mask_certo(Q, K, V, None if mask is None else ~mask)


def mask_depois_da_softmax(Q, K, V, mask=None):
    A = softmax(_scores(Q, K))
    if mask is not None:
        A = A * mask
    return A @ V, A


def mask_softmax_ingenua(Q, K, V, mask=None):
    scores = _scores(Q, K)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A


def mask_ignorada(Q, K, V, mask=None):
    return mask_certo(Q, K, V)


def mask_quase_zero(Q, K, V, mask=None):
    """Bloqueia com -50 em vez de -inf (e zera à mão as linhas todas bloqueadas): peso ~1e-22, não 0."""
    scores = _scores(Q, K)
    if mask is not None:
        scores = np.where(mask, scores, -50.0)
    A = softmax(scores)
    if mask is not None:
        A[~mask.any(axis=-1)] = 0.0
    return A @ V, A


def test_ex1_aceita_certo():
    assert aula02.exercicio_1(mask_certo)


@pytest.mark.parametrize("fn, dica", [
    (mask_invertida, "invertida"),
    (mask_depois_da_softmax, "ANTES da softmax"),
    (mask_softmax_ingenua, "NaN"),
    (mask_ignorada, "pesos"),
    (mask_quase_zero, "-np.inf"),
])
def test_ex1_rejeita_erros_tipicos(fn, dica, capsys):
    result = aula02.exercicio_1(fn)
    out = capsys.readouterr().out
    assert not result and dica in out, out


# ---------- exercício 2: multicabeça ----------
def _heads(X, W, n_heads):
    n, d = X.shape
    return (X @ W).reshape(n, n_heads, d // n_heads).transpose(1, 0, 2)


def mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=None):
    Q, K, V = (_heads(X, W, n_heads) for W in (W_q, W_k, W_v))
    d_k = d_scale or X.shape[1] // n_heads
    A = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_k))
    concat = (A @ V).transpose(1, 0, 2).reshape(X.shape[0], -1)
    return concat @ W_o, A


def mha_escala_d_model(X, W_q, W_k, W_v, W_o, n_heads):
    return mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=X.shape[1])


def mha_reshape_sem_transpor(X, W_q, W_k, W_v, W_o, n_heads):
    n, d = X.shape
    Q, K, V = ((X @ W).reshape(n_heads, n, d // n_heads) for W in (W_q, W_k, W_v))
    A = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d // n_heads))
    return (A @ V).reshape(n, d) @ W_o, A


def mha_sem_W_o(X, W_q, W_k, W_v, W_o, n_heads):
    out, A = mha_certo(X, W_q, W_k, W_v, W_o, n_heads)
    return out @ np.linalg.inv(W_o), A


def mha_pesos_medios(X, W_q, W_k, W_v, W_o, n_heads):
    out, A = mha_certo(X, W_q, W_k, W_v, W_o, n_heads)
    return out, A.mean(axis=0)


def test_ex2_aceita_certo():
    assert aula02.exercicio_2(mha_certo)


@pytest.mark.parametrize("fn, dica", [
    (mha_escala_d_model, "não por sqrt(d_model)"),
    (mha_reshape_sem_transpor, "transpose"),
    (mha_sem_W_o, "faltou projetar"),
    (mha_pesos_medios, "(n_heads, n, n)"),
])
def test_ex2_rejeita_erros_tipicos(fn, dica, capsys):
    result = aula02.exercicio_2(fn)
    out = capsys.readouterr().out
    assert not result and dica in out, out


# ---------- exercício 3: duas frases ----------
def comparar_certo(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("as frases precisam ter o mesmo número de tokens")
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def comparar_sem_validar(attn, X1, X2):
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean()) if A1.shape == A2.shape else 0.0


def comparar_instancias_diferentes(attn, X1, X2):
    outra = atencao.SelfAttention(attn.d_model, attn.d_k, attn.d_v, seed=7)
    A1, A2 = attn(X1)[1], outra(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def comparar_nova_instancia_padrao(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("tamanhos diferentes")
    nova = atencao.SelfAttention(8, 4, 4)  # ignora a instância recebida
    A1, A2 = nova(X1)[1], nova(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


def comparar_diferenca_com_sinal(attn, X1, X2):
    A1, A2, _ = comparar_certo(attn, X1, X2)
    return A1, A2, float((A1 - A2).mean())


def test_ex3_aceita_certo():
    assert aula02.exercicio_3(comparar_certo)


@pytest.mark.parametrize("fn, trecho", [
    (comparar_sem_validar, "tamanhos diferentes"),
    (comparar_instancias_diferentes, "2ª frase"),
    (comparar_nova_instancia_padrao, "1ª frase"),
    (comparar_diferenca_com_sinal, "diferença média"),
])
def test_ex3_rejeita_erros_tipicos(fn, trecho):
    result = aula02.exercicio_3(fn)
    assert not result and any(trecho in f for f in result.failures), result.failures


# ---------- projeto ----------
def projeto_certo(frase_a, frase_b, mha):
    Xa, Xb = (atencao.embed_hashed(f, d_model=mha.d_model)[1] for f in (frase_a, frase_b))
    if Xa.shape[0] != Xb.shape[0]:
        raise ValueError(f"as frases têm {Xa.shape[0]} e {Xb.shape[0]} tokens; precisam ter o mesmo número")
    Wa, Wb = mha(Xa)[1], mha(Xb)[1]
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))


def projeto_sem_valueerror(frase_a, frase_b, mha):
    Wa = mha(atencao.embed_hashed(frase_a, d_model=mha.d_model)[1])[1]
    Wb = mha(atencao.embed_hashed(frase_b, d_model=mha.d_model)[1])[1]
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))


def projeto_ignora_a_mha(frase_a, frase_b, mha):
    return projeto_certo(frase_a, frase_b, atencao.MultiHeadAttention(16, 4, seed=7))


def projeto_media_global(frase_a, frase_b, mha):
    Wa, Wb, _ = projeto_certo(frase_a, frase_b, mha)
    return Wa, Wb, np.full(mha.n_heads, np.abs(Wa - Wb).mean())


def projeto_pesos_medios(frase_a, frase_b, mha):
    Wa, Wb, d = projeto_certo(frase_a, frase_b, mha)
    return Wa.mean(0), Wb.mean(0), d


def test_projeto_aceita_certo():
    assert aula02.projeto(projeto_certo)


@pytest.mark.parametrize("fn, trecho", [
    (projeto_media_global, "por cabeça"),
    (projeto_pesos_medios, "frase A"),
    (projeto_sem_valueerror, "levantam ValueError"),
    (projeto_ignora_a_mha, "d_model=12, n_heads=3): pesos da frase A"),
])
def test_projeto_rejeita_erros_tipicos(fn, trecho):
    result = aula02.projeto(fn)
    assert not result and any(trecho in f for f in result.failures), result.failures


@pytest.mark.parametrize("check", [aula02.exercicio_1, aula02.exercicio_2, aula02.exercicio_3, aula02.projeto])
def test_nao_feito_avisa_e_na_correcao_levanta(check, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert check(nao_feito).status == "nao_feito"
    assert "⏳" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "1")
    with pytest.raises(AssertionError):
        check(nao_feito)


def comparar_mensagem_com_broadcast(attn, X1, X2):
    if X1.shape[0] != X2.shape[0]:
        raise ValueError("não dá para comparar (nem fazer broadcast de) frases com números de tokens diferentes")
    return comparar_certo(attn, X1, X2)


def test_ex3_mensagem_do_aluno_pode_dizer_broadcast():
    assert aula02.exercicio_3(comparar_mensagem_com_broadcast)


def test_ex3_erro_de_broadcast_do_numpy_nao_conta_como_validacao(capsys):
    result = aula02.exercicio_3(comparar_sem_validar_nem_tratar)
    assert not result and "broadcast do NumPy, um ValueError vazio ou outro tipo de erro não contam" in " ".join(
        capsys.readouterr().out.split())


def comparar_sem_validar_nem_tratar(attn, X1, X2):
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())  # tamanhos diferentes: ValueError de broadcast


def mha_sem_escala(X, W_q, W_k, W_v, W_o, n_heads):
    return mha_certo(X, W_q, W_k, W_v, W_o, n_heads, d_scale=1)


def test_ex2_dica_especifica_para_falta_de_escala(capsys):
    assert not aula02.exercicio_2(mha_sem_escala)
    out = capsys.readouterr().out
    assert "faltou dividir" in out and "mistura tokens" not in out


def test_avisos_do_numpy_nao_vazam_para_o_relatorio(recwarn):
    aula02.exercicio_1(mask_softmax_ingenua)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
