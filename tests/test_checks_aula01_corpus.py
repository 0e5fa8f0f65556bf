"""Corpus de respostas da Aula 1, como alunos as escreveriam: o único lugar onde cada resposta errada e a dica que
ela tem de receber moram. Nenhuma válida leva ❌; cada errada falha no critério esperado, com uma dica em cada ❌
(e, quando a entrada diz, com o trecho da dica que nomeia o engano); a verificação nunca quebra com um erro dela
mesma. As respostas certas que outros testes também usam ficam em ``test_checks_aula01.py``.
"""

import corpus
import numpy as np
import test_checks_aula01 as t1
import test_checks_entradas as te

import atencao
from atencao import softmax
from atencao.checks import aula01


def ex3_sem_mudar():
    return atencao.gato_felino()[1]


def ex3_tudo_igual():  # pulou e alto parecidos... com tudo
    return np.ones((4, 4))


def ex3_so_tres_linhas():
    return t1.ex3_certo()[:3]


def ex3_com_nan():
    E = t1.ex3_certo()
    E[2, 0] = np.nan
    return E


def ex3_estragou_gato():
    E = t1.ex3_certo()
    E[0] = [0, 1, 0, 0]
    return E


def ex4_sem_escala(X, W_q, W_k, W_v):
    Q, K, V = t1._proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T)
    return A @ V, A


def ex4_escala_d_model(X, W_q, W_k, W_v):
    Q, K, V = t1._proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(X.shape[1]))
    return A @ V, A


def ex4_softmax_por_coluna(X, W_q, W_k, W_v):
    Q, K, V = t1._proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(Q.shape[1]), axis=0)
    return A @ V, A


def ex4_trocado(X, W_q, W_k, W_v):
    out, A = t1.ex4_certo(X, W_q, W_k, W_v)
    return A, out


def ex4_sem_projetar_v(X, W_q, W_k, W_v):
    Q, K, _ = t1._proj(X, W_q, W_k, W_v)
    A = softmax(Q @ K.T / np.sqrt(Q.shape[1]))
    return A @ X, A


def ex3_alto_empata():  # muda só um pouco alto: o peso de alto→pulou empata com o de gato
    tokens, E = atencao.gato_felino()
    E[3] = E[3] + 0.1
    return E


def ex4_quebra(X, W_q, W_k, W_v):
    return X @ W_q @ W_k


def ex4_sem_transpor_k(X, W_q, W_k, W_v):  # Q @ K, sem o .T: as formas não encaixam (n, d_k) @ (n, d_k)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = softmax(Q @ K / np.sqrt(K.shape[1]))
    return A @ V, A


def ex4_sem_parametro_w_v(X, W_q, W_k):  # esqueceu W_v no def: a verificação nem consegue chamá-la
    Q, K = X @ W_q, X @ W_k
    return Q, K


def proj_so_figura(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, tokens)
    return tokens, A, t1._destaques(A, tokens)


def proj_mapa_de_outra_matriz(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(np.eye(len(tokens)), tokens)  # um mapa n × n, mas não o da atenção
    t1._resumo(t1._destaques(A, tokens))
    return tokens, A, t1._destaques(A, tokens)


def proj_so_os_tokens(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print(tokens)  # imprime algo com todos os tokens, mas não o resumo
    return tokens, A, h


def proj_setas_ao_contrario(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print("\n".join(f"{o} ← {t} ({w:.2f})" for t, o, w in h))  # o alvo antes do token
    return tokens, A, h


def proj_tabela(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print(f"{'token':<10} {'mais atenção':<14} peso")
    for t, o, w in h:
        print(f"{t:<10} {o:<14} {w:.3f}")
    return tokens, A, h


def proj_setas_sem_os_pesos(frase, vectors=None):
    """Achado: imshow dos pesos e o resumo sem o peso de cada destaque (o enunciado pede ``gato → felino (0.41)``)."""
    import matplotlib.pyplot as plt

    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    plt.figure().add_subplot().imshow(A)
    h = t1._destaques(A, tokens)
    print("\n".join(f"{t} {o}" for t, o, _ in h))
    return tokens, A, h


def proj_peso_de_outra_linha(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    print("\n".join(f"{t} → {o} ({h[-1 - k][2] + 0.05:.2f})" for k, (t, o, _) in enumerate(h)))
    return tokens, A, h


def proj_pesos_com_virgula_e_porcentagem(frase, vectors=None):
    tokens, A, h = proj_so_figura(frase, vectors)
    for k, (t, o, w) in enumerate(h):
        print(f"{t} → {o}: {w * 100:.1f}%" if k % 2 else f"{t} olha mais para {o}, peso {w:.2f}".replace(".", ","))
    return tokens, A, h


def proj_conta_o_proprio(frase, vectors=None):
    tokens, A, _ = t1.proj_certo(frase, vectors)
    return tokens, A, t1._destaques(A, tokens, ignorar_o_proprio=False)


def proj_sem_escala(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    A = softmax(X @ X.T)
    atencao.plot_attention(A, tokens)
    t1._resumo(t1._destaques(A, tokens))
    return tokens, A, t1._destaques(A, tokens)


def proj_ignora_vetores(frase, vectors=None):
    return t1.proj_certo(frase)


def proj_usa_as_prontas(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    atencao.plot_attention(A, tokens)
    print(atencao.attention_summary(A, tokens, ignore_self=True))
    return tokens, A, atencao.strongest_attention(A, tokens, ignore_self=True)


def proj_sem_copia(frase, vectors=None):
    """Põe -inf na diagonal da própria matriz (pesos[i] é uma vista) e depois desenha: a figura recusa o -inf."""
    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i]  # sem .copy()
        linha[i] = -np.inf
        j = int(np.argmax(linha))
        destaques.append((t, tokens[j], float(A[i, j])))
    atencao.plot_attention(A, tokens)
    t1._resumo(destaques)
    return tokens, A, destaques


def proj_usa_o_ajudante(frase, vectors=None):
    """O ajudante privado das prontas (text._strongest), que acha o destaque de cada linha: passava com 4 de 4."""
    from atencao.text import _strongest

    tokens, X = atencao.embed(frase, vectors)
    _, A = atencao.self_attention(X)
    best, _ = _strongest(A, True)
    destaques = [(t, tokens[int(j)], float(A[i, int(j)])) for i, (t, j) in enumerate(zip(tokens, best))]
    atencao.plot_attention(A, tokens)
    t1._resumo(destaques)
    return tokens, A, destaques


def proj_pares(frase, vectors=None):
    tokens, A, hl = t1.proj_certo(frase, vectors)
    return tokens, A, [(q, k) for q, k, _ in hl]


def proj_pesos_inventados(frase, vectors=None):
    tokens, A, hl = t1.proj_certo(frase, vectors)
    return tokens, A, [(q, k, 0.999) for q, k, _ in hl]


def proj_indice_no_lugar_do_token(frase, vectors=None):
    """Um aluno novo: (t, j, peso) em vez de (t, tokens[j], peso); a dica falava da diagonal, já ignorada."""
    tokens, X = atencao.embed(frase, vectors)
    A = softmax(X @ X.T / np.sqrt(X.shape[1]))
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        linha[i] = -np.inf
        j = int(np.argmax(linha))
        destaques.append((t, j, float(A[i, j])))
    atencao.plot_attention(A, tokens)
    t1._resumo([(t, tokens[j], w) for t, j, w in destaques])
    return tokens, A, destaques


def proj_peso_da_diagonal(frase, vectors=None):
    tokens, X = atencao.embed(frase, vectors)
    A = softmax(X @ X.T / np.sqrt(X.shape[1]))
    destaques = [(t, k, float(A[i, i])) for (i, t), (_, k, _) in zip(enumerate(tokens), t1._destaques(A, tokens))]
    atencao.plot_attention(A, tokens)
    t1._resumo(destaques)
    return tokens, A, destaques


def ex3_copia_a_linha():
    _, E = atencao.gato_felino()
    E[3] = E[2]  # alto igual a pulou
    return E


def ex3_lista_float32():
    return t1.ex3_certo().astype(np.float32).tolist()


def ex3_muda_pulou_para_gato():  # pulou parecido com gato, não com alto
    _, E = atencao.gato_felino()
    E[2] = E[0]
    return E


def ex3_cosseno_baixo():
    _, E = atencao.gato_felino()
    E[3] = E[2] * 0.5 + np.array([0.0, 0.0, 0.0, 0.6])
    return E


def ex4_lacos(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    n, d_k = Q.shape
    A = np.zeros((n, n))
    for i in range(n):
        s = np.array([Q[i] @ K[j] for j in range(n)]) / d_k ** 0.5
        e = np.exp(s - s.max())
        A[i] = e / e.sum()
    return A @ V, A


def ex4_escala_em_W_q(X, W_q, W_k, W_v):
    Q = X @ (W_q / np.sqrt(W_q.shape[1]))  # a escala dentro da projeção: a mesma conta
    A = softmax(Q @ (X @ W_k).T)
    return [A @ (X @ W_v), A]


def ex4_pesos_transpostos(X, W_q, W_k, W_v):
    out, A = t1.ex4_certo(X, W_q, W_k, W_v)
    return A.T @ (X @ W_v), A.T


def ex4_esquece_softmax(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ K.T / np.sqrt(K.shape[1])
    return S @ V, S


def ex4_devolve_so_saida(X, W_q, W_k, W_v):
    return t1.ex4_certo(X, W_q, W_k, W_v)[0]


def ex4_softmax_ingenua(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = corpus.softmax_ingenua(Q @ K.T / np.sqrt(K.shape[1]))
    return A @ V, A


def proj_a_mao(frase, vectors=None):
    import matplotlib.pyplot as plt

    tokens, X = atencao.embed(frase, vectors)
    A = corpus.softmax_a_mao(X @ X.T / np.sqrt(X.shape[1]))
    fig, ax = plt.subplots()
    ax.imshow(A, cmap="viridis")
    destaques = []
    for i, t in enumerate(tokens):
        linha = A[i].copy()
        linha[i] = -1
        j = int(np.argmax(linha))
        destaques.append([t, tokens[j], float(A[i, j])])
        print(f"{t} → {tokens[j]} ({A[i, j]:.2f})")
    return tuple(tokens), A.astype(np.float32), destaques


def proj_tabela_de_texto(frase, vectors=None):
    tokens, A, destaques = t1.proj_certo(frase, vectors)
    print(atencao.format_weights(A, tokens))
    return tokens, A.tolist(), destaques


def proj_destaque_por_coluna(frase, vectors=None):
    tokens, A, _ = t1.proj_certo(frase, vectors)
    B = A.copy()
    np.fill_diagonal(B, -1)
    return tokens, A, [(tokens[j], tokens[int(np.argmax(B[:, j]))], A[int(np.argmax(B[:, j])), j])
                       for j in range(len(tokens))]


def proj_transposto(frase, vectors=None):
    tokens, A, _ = t1.proj_certo(frase, vectors)
    return tokens, A.T, t1._destaques(A.T, tokens)


def proj_tokens_da_frase_crua(frase, vectors=None):
    tokens, A, h = t1.proj_certo(frase, vectors)
    return frase.split(), A, h


def ex4_escala_d_v(X, W_q, W_k, W_v):  # divide pela raiz da dimensão de V
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    A = softmax(Q @ K.T / np.sqrt(V.shape[1]))
    return A @ V, A


def ex4_softmax_com_keepdims_a_mao(X, W_q, W_k, W_v):  # válida: tudo escrito, softmax por linha
    S = (X @ W_q) @ (X @ W_k).T / np.sqrt(W_k.shape[1])
    E = np.exp(S - S.max(axis=1).reshape(-1, 1))
    A = E / E.sum(axis=1).reshape(-1, 1)
    return (A @ (X @ W_v), A)


def proj_segundo_maior_com_argsort(frase, vectors=None):  # válida: o 2º da ordem quando o 1º é o próprio token
    import matplotlib.pyplot as plt

    tokens, X = atencao.embed(frase, vectors)
    A = atencao.self_attention(X)[1]
    plt.figure()
    plt.imshow(A)
    destaques = []
    for i, t in enumerate(tokens):
        ordem = [j for j in np.argsort(-A[i], kind="stable") if j != i]
        destaques.append((t, tokens[ordem[0]], float(A[i, ordem[0]])))
        print(t, "→", tokens[ordem[0]], round(float(A[i, ordem[0]]), 2))
    return tokens, A, destaques


def ex3_devolve_a_tupla():
    return atencao.gato_felino()  # (tokens, E): o enunciado pede só E


def ex3_sem_return():
    _, E = atencao.gato_felino()
    E[3] = E[2]


# ---------- o corpus ----------
VALIDAS = {
    aula01.exercicio_3: [t1.ex3_certo, te.ex3_quinta_coordenada, ex3_copia_a_linha, ex3_lista_float32],
    aula01.exercicio_4: [t1.ex4_certo, t1.ex4_float32_einsum, ex4_lacos, ex4_escala_em_W_q,
                         ex4_softmax_com_keepdims_a_mao],
    aula01.projeto: [t1.proj_certo, proj_a_mao, proj_tabela_de_texto, proj_segundo_maior_com_argsort, proj_tabela,
                     proj_pesos_com_virgula_e_porcentagem],
}

# (resposta errada, trecho do critério que falha[, trecho da dica que nomeia o engano[, trecho que não aparece]])
ERRADAS = {
    aula01.exercicio_3: [
        ("criterion_failed", ex3_sem_mudar, "foi modificado"),
        ("criterion_failed", ex3_tudo_igual, "gato e felino continuam"),
        ("criterion_failed", ex3_so_tres_linhas, "4 linhas"), ("criterion_failed", ex3_com_nan, "finitos"),
        ("criterion_failed", ex3_estragou_gato, "gato e felino continuam"),
        ("criterion_failed", te.ex3_escala_tudo, "gato e felino"),
        ("criterion_failed", ex3_muda_pulou_para_gato, "pulou e alto são parecidos"),
        ("criterion_failed", ex3_cosseno_baixo, "pulou e alto são parecidos"),
        ("criterion_failed", ex3_alto_empata, "alto presta mais atenção em pulou", "(empate)"),
        ("criterion_failed", ex3_devolve_a_tupla, "só a matriz E", "devolva apenas E"),
        ("no_return", ex3_sem_return, "matriz de números", "faltou um `return`"),
    ],
    aula01.exercicio_4: [
        ("no_scale", ex4_sem_escala, "pesos", "faltou dividir"),
        ("scale_by_d_model", ex4_escala_d_model, "pesos", "o certo é sqrt(d_k)"),
        ("softmax_by_column", ex4_softmax_por_coluna, "pesos", "por coluna"),
        ("return_order_swapped", ex4_trocado, "ordem do retorno", "primeiro a saída"),
        ("wrong_shape", ex4_sem_projetar_v, "saída", "V = X @ W_v"),
        ("student_exception", ex4_quebra, "levantou ValueError"),
        ("student_exception", ex4_sem_transpor_k, "levantou ValueError: multiplicação de matrizes (@) com formas",
         "Q Kᵀ é Q (n, d_k) vezes K transposta"),
        ("wrong_signature", ex4_sem_parametro_w_v, "aceita os argumentos", "linha do `def`", "própria verificação"),
        ("scale_by_n", te.ex4_escala_por_n, "pesos"),
        ("input_mutated", te.ex4_escala_W_q_no_lugar, "não altera as entradas"),
        ("forbidden_function", te.ex4_chama_a_biblioteca, "sem a função pronta"),
        ("weights_transposed", ex4_pesos_transpostos, "pesos", "estão transpostos"),
        ("missing_softmax", ex4_esquece_softmax, "pesos", "faltou a softmax"),
        ("wrong_return_format", ex4_devolve_so_saida, "devolve (saida"),
        ("unstable_softmax", ex4_softmax_ingenua, "caso 5", "ubtraia o máximo de cada linha"),
        ("scale_by_d_v", ex4_escala_d_v, "pesos", "dividiu por sqrt(d_v)"),
    ],
    aula01.projeto: [
        ("criterion_failed", t1.proj_sem_figura_nem_texto, "desenha",
         "mapa de calor: não (nenhuma figura nova mostra esta matriz); resumo impresso: não"),
        ("criterion_failed", proj_so_figura, "desenha", "mapa de calor: sim; resumo impresso: não"),
        ("criterion_failed", proj_mapa_de_outra_matriz, "desenha",
         "mapa de calor: não (nenhuma figura nova mostra esta matriz)"),
        ("criterion_failed", proj_so_os_tokens, "desenha", "resumo impresso: falta a linha de"),
        ("criterion_failed", proj_setas_ao_contrario, "desenha", "resumo impresso: falta a linha de"),
        ("criterion_failed", proj_setas_sem_os_pesos, "desenha",
         "mapa de calor: sim; resumo impresso: falta a linha de"),
        ("criterion_failed", proj_peso_de_outra_linha, "desenha", "resumo impresso: falta a linha de"),
        ("diagonal_not_ignored", proj_conta_o_proprio, "OUTRO token", "ignore a diagonal"),
        ("wrong_values", proj_sem_escala, "matriz de atenção"),
        ("student_exception", proj_ignora_vetores, "levantou"),
        ("student_exception", proj_sem_copia, "levantou", "pesos[i].copy()"),
        ("forbidden_function", proj_usa_as_prontas, "sem a função pronta",
         "atencao.attention_summary, atencao.strongest_attention"),
        ("forbidden_function", proj_usa_o_ajudante, "sem a função pronta", "atencao._strongest"),
        # o ajudante das prontas também
        ("criterion_failed", proj_pares, "(token, outro token, peso)"),
        ("criterion_failed", proj_pesos_inventados, "peso de cada destaque"),
        ("criterion_failed", proj_destaque_por_coluna, "destaque"),
        ("wrong_values", proj_transposto, "matriz de atenção"),
        ("criterion_failed", proj_tokens_da_frase_crua, "tokens"),
        ("index_instead_of_token", proj_indice_no_lugar_do_token, "OUTRO token", "não o índice j", "ignore a diagonal"),
        ("criterion_failed", proj_peso_da_diagonal, "peso de cada destaque", "esperado: [0.346, 0.126",
         "0.39452669963935794"),
    ],
}

test_validas_passam, test_erradas_falham_com_dica = corpus.testes(VALIDAS, ERRADAS)
