"""Respostas escritas à mão para os testes da página de similaridade (``tests/test_similaridade.py``) e para a medida
numa turma grande (``tests/similaridade/medir.py``): o notebook ``04-exercicios`` da Aula 2, com quatro maneiras
honestas e independentes de resolver cada exercício, como alunos diferentes as escreveriam, e o par que copiou:
``lia`` escreveu a dela, e ``otavio`` copiou trocando os nomes das variáveis, os comentários e a ordem das funções
auxiliares.

A máscara causal tem uma resposta óbvia de uma linha (``np.tril(np.ones((n, n), dtype=bool))``), que quase todos os
alunos honestos escrevem igual: ela não pode bastar para apontar um par.
"""

from __future__ import annotations

import re

AULA, NOTEBOOK = "aula-02-auto-atencao-do-zero", "04-exercicios"

SOFTMAX = [
    """    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)
    soma = e.sum(axis=axis, keepdims=True)
    return np.divide(e, soma, out=np.zeros_like(e), where=soma > 0)""",
    """    maior = z.max(axis=axis, keepdims=True)
    maior[~np.isfinite(maior)] = 0
    ex = np.exp(z - maior)
    total = np.sum(ex, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = ex / total
    return np.nan_to_num(p)""",
    """    shifted = z - np.max(z, axis=axis, keepdims=True)
    shifted = np.nan_to_num(shifted, nan=-np.inf)
    exps = np.exp(shifted)
    denom = exps.sum(axis=axis, keepdims=True)
    denom = np.where(denom == 0, 1.0, denom)
    return exps / denom""",
    """    if z.size == 0:
        return z.copy()
    mx = np.amax(z, axis=axis, keepdims=True)
    mx = np.where(mx == -np.inf, 0, mx)
    num = np.exp(z - mx)
    den = np.sum(num, axis=axis, keepdims=True)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den != 0)
    return out""",
]

MASCARA_OBVIA = "    return np.tril(np.ones((n, n), dtype=bool))"
MASCARA = [MASCARA_OBVIA, MASCARA_OBVIA, "    return np.tri(n, dtype=bool)",
           "    i = np.arange(n)\n    return i[:, None] >= i[None, :]"]

ATENCAO = [
    """    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (n_q, n_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    pesos = my_softmax(scores)
    saida = pesos @ V
    return saida, pesos""",
    """    escala = 1 / np.sqrt(Q.shape[-1])
    logits = Q.dot(K.T) * escala
    if mask is None:
        mask = np.ones(logits.shape, dtype=bool)
    logits = np.where(mask, logits, -np.inf)
    attn = my_softmax(logits, axis=1)
    return attn.dot(V), attn""",
    """    scores = np.matmul(Q, K.T) / np.sqrt(Q.shape[1])
    if mask is not None:
        scores = scores.copy()
        scores[~mask] = -np.inf
    w = my_softmax(scores)
    out = np.matmul(w, V)
    return out, w""",
    """    n_q, d = Q.shape
    s = np.zeros((n_q, K.shape[0]))
    for i in range(n_q):
        s[i] = K @ Q[i] / d ** 0.5
    if mask is not None:
        s[mask == False] = float("-inf")  # noqa: E712
    a = my_softmax(s, axis=-1)
    return a @ V, a""",
]

MULTICABECA = [
    """    n, d_model = X.shape
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} não é divisível por n_heads={n_heads}.")
    d_k = d_model // n_heads

    def split_heads(M):
        return M.reshape(n, n_heads, d_k).transpose(1, 0, 2)

    Q = split_heads(X @ W_q)
    K = split_heads(X @ W_k)
    V = split_heads(X @ W_v)
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    pesos = my_softmax(scores)
    concat = (pesos @ V).transpose(1, 0, 2).reshape(n, d_model)
    return concat @ W_o, pesos""",
    """    n, d_model = X.shape
    assert d_model % n_heads == 0
    d_k = d_model // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    saidas, todos = [], []
    for h in range(n_heads):
        sl = slice(h * d_k, (h + 1) * d_k)
        out_h, w_h = attention_with_mask(Q[:, sl], K[:, sl], V[:, sl])
        saidas.append(out_h)
        todos.append(w_h)
    concat = np.concatenate(saidas, axis=-1)
    return concat @ W_o, np.stack(todos)""",
    """    n = X.shape[0]
    d_model = X.shape[1]
    if d_model % n_heads != 0:
        raise ValueError("d_model precisa ser divisível por n_heads")
    dk = d_model // n_heads
    q = (X @ W_q).reshape(n, n_heads, dk).swapaxes(0, 1)
    k = (X @ W_k).reshape(n, n_heads, dk).swapaxes(0, 1)
    v = (X @ W_v).reshape(n, n_heads, dk).swapaxes(0, 1)
    att = my_softmax(np.einsum("hid,hjd->hij", q, k) / np.sqrt(dk))
    ctx = np.einsum("hij,hjd->hid", att, v)
    ctx = ctx.swapaxes(0, 1).reshape(n, d_model)
    return ctx @ W_o, att""",
    """    n, d = X.shape
    hd = d // n_heads
    heads = []
    pesos = np.zeros((n_heads, n, n))
    for i in range(n_heads):
        cols = slice(i * hd, (i + 1) * hd)
        q = X @ W_q[:, cols]
        k = X @ W_k[:, cols]
        v = X @ W_v[:, cols]
        p = my_softmax(q @ k.T / np.sqrt(hd))
        pesos[i] = p
        heads.append(p @ v)
    return np.hstack(heads) @ W_o, pesos""",
]

COMPARA = [
    """    if X1.shape[0] != X2.shape[0]:
        raise ValueError("As frases precisam ter o mesmo número de tokens.")
    _, pesos1 = attn(X1)
    _, pesos2 = attn(X2)
    return pesos1, pesos2, float(np.abs(pesos1 - pesos2).mean())""",
    """    _, p1 = attn(X1)
    _, p2 = attn(X2)
    if p1.shape != p2.shape:
        raise ValueError("as frases têm tamanhos diferentes")
    return p1, p2, float(np.mean(np.abs(p1 - p2)))""",
    """    if len(X1) != len(X2):
        raise ValueError("mesmo número de tokens, por favor")
    w1 = attn(X1)[1]
    w2 = attn(X2)[1]
    diff = np.abs(w1 - w2).mean()
    return w1, w2, float(diff)""",
    """    if len(X1) != len(X2):
        raise ValueError(f"{len(X1)} tokens contra {len(X2)}")
    resultados = [attn(X)[1] for X in (X1, X2)]
    media = sum(np.abs(resultados[0] - resultados[1]).ravel()) / resultados[0].size
    return resultados[0], resultados[1], float(media)""",
]

VARIANTES = {"aula02-softmax-solucao": SOFTMAX, "aula02-mascara-solucao": MASCARA, "aula02-ex1-solucao": ATENCAO,
             "aula02-ex2-solucao": MULTICABECA, "aula02-ex3-solucao": COMPARA}

# lia escreveu a sua (uma multicabeça com duas funções auxiliares, uma softmax com o próprio jeito); otavio copiou:
# outros nomes, outros comentários, as funções auxiliares em outra ordem, a mesma máscara óbvia
LIA = {
    "aula02-softmax-solucao": """    # tiro o máximo de cada linha para a exponencial não estourar
    topo = np.max(z, axis=axis, keepdims=True)
    topo = np.where(np.isneginf(topo), 0.0, topo)
    expo = np.exp(z - topo)
    acumulado = np.sum(expo, axis=axis, keepdims=True)
    acumulado[acumulado == 0] = 1.0
    return expo / acumulado""",
    "aula02-mascara-solucao": MASCARA_OBVIA,
    "aula02-ex1-solucao": """    profundidade = Q.shape[-1]
    brutos = np.einsum("qd,kd->qk", Q, K) / np.sqrt(profundidade)
    if mask is not None:
        brutos = np.where(mask, brutos, -np.inf)
    distrib = my_softmax(brutos, axis=-1)
    return np.einsum("qk,kv->qv", distrib, V), distrib""",
    "aula02-ex2-solucao": """    linhas, largura = X.shape
    if largura % n_heads:
        raise ValueError("largura não divide por n_heads")
    fatia = largura // n_heads

    def quebrar(M):
        return np.stack([M[:, c * fatia:(c + 1) * fatia] for c in range(n_heads)])

    def juntar(T):
        return np.concatenate(list(T), axis=-1)

    qs, ks, vs = quebrar(X @ W_q), quebrar(X @ W_k), quebrar(X @ W_v)
    notas = np.einsum("hqd,hkd->hqk", qs, ks) / np.sqrt(fatia)
    distrib = my_softmax(notas, axis=-1)
    return juntar(np.einsum("hqk,hkd->hqd", distrib, vs)) @ W_o, distrib""",
    "aula02-ex3-solucao": """    if X1.shape[0] != X2.shape[0]:
        raise ValueError("tamanhos diferentes")
    _, primeira = attn(X1)
    _, segunda = attn(X2)
    return primeira, segunda, float(np.abs(primeira - segunda).mean())""",
}

OTAVIO = {
    "aula02-softmax-solucao": """    pico = np.max(z, axis=axis, keepdims=True)
    pico = np.where(np.isneginf(pico), 0.0, pico)
    exps = np.exp(z - pico)  # estabilidade numérica
    s = np.sum(exps, axis=axis, keepdims=True)
    s[s == 0] = 1.0
    return exps / s""",
    "aula02-mascara-solucao": MASCARA_OBVIA,
    "aula02-ex1-solucao": """    dim = Q.shape[-1]
    sc = np.einsum("qd,kd->qk", Q, K) / np.sqrt(dim)
    if mask is not None:
        sc = np.where(mask, sc, -np.inf)
    att = my_softmax(sc, axis=-1)
    return np.einsum("qk,kv->qv", att, V), att""",
    "aula02-ex2-solucao": """    n, d = X.shape
    if d % n_heads:
        raise ValueError("d não é múltiplo de n_heads")
    tam = d // n_heads

    def unir(blocos):  # cabeças lado a lado
        return np.concatenate(list(blocos), axis=-1)

    def separar(A):  # uma fatia de colunas por cabeça
        return np.stack([A[:, h * tam:(h + 1) * tam] for h in range(n_heads)])

    q, k, v = separar(X @ W_q), separar(X @ W_k), separar(X @ W_v)
    sc = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(tam)
    att = my_softmax(sc, axis=-1)
    return unir(np.einsum("hqk,hkd->hqd", att, v)) @ W_o, att""",
    "aula02-ex3-solucao": """    if X1.shape[0] != X2.shape[0]:
        raise ValueError("as frases não têm o mesmo tamanho")
    _, a = attn(X1)
    _, b = attn(X2)
    return a, b, float(np.abs(a - b).mean())""",
}

_STUB = re.compile(r"^[ \t]*# SEU CÓDIGO AQUI\n[ \t]*raise NotImplementedError\(.*\)[ \t]*$", re.M)


def notebook(respostas: dict):
    """O notebook ``04-exercicios`` da Aula 2 como o aluno o entregaria, com ``respostas`` (``grade_id`` -> o corpo
    da função, indentado) no lugar do esboço de cada célula de resposta (as que faltam ficam no esboço)."""
    import nbformat

    from correcao.catalogo import catalog, nbgrader_meta, student_version

    g = catalog()[(AULA, NOTEBOOK)]
    nb = student_version(nbformat.read(g.source, as_version=4))
    for cell in nb.cells:
        gid = nbgrader_meta(cell).get("grade_id")
        if cell.cell_type == "code" and gid in respostas:
            novo, trocas = _STUB.subn(lambda _, corpo=respostas[gid]: corpo, cell.source)
            assert trocas == 1, gid
            cell.source = novo
    return nb


def honesto(k: int) -> dict:
    """As respostas do aluno honesto ``k``: em cada exercício, uma das quatro maneiras, escolhidas de modo que dois
    alunos de ``k`` diferentes (de 0 a 3) só escrevem igual a máscara óbvia (e, entre 0 e 1, a máscara inteira)."""
    return {gid: variantes[k % len(variantes)] for gid, variantes in VARIANTES.items()}
