"""Verificações da Aula 1 (Módulo 6): ``03-exercicios`` e ``04-projeto``.

Cada função recebe a **função** escrita pelo aluno (não o resultado), roda-a em vários casos e
imprime o relatório. Devolve um :class:`~atencao.checks.CheckResult`.
"""

from __future__ import annotations

import numpy as np

from .. import text
from .._validation import nfc
from ..attention import attend, attend_checked, scaled_dot_product_attention, self_attention, softmax
from ..embeddings import HAND_MADE_VECTORS, PROJECT_SENTENCES, embed, gato_felino
from ..multihead import MultiHeadAttention
from ..projections import SelfAttention
from ..text import attention_summary, strongest_attention
from .framework import (
    UNSTABLE_SOFTMAX_HINT,
    Checker,
    RemoteCall,
    call_frozen,
    case_seed,
    check,
    describe,
    format_number,
    format_value,
    matching_hint,
    mistake,
    passou,
    protect,
    warm_up_matplotlib,
)

__all__ = ["passou", "exercicio_3", "exercicio_4", "projeto"]

GATO, FELINO, PULOU, ALTO = range(4)


def _cosine(a, b) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0


@check("Exercício 3 (pulou e alto parecidos)")
def exercicio_3(c: Checker, embeddings_fn):
    """Confere ``embeddings_fn() -> E`` (4, d): pulou e alto parecidos, e a atenção refletindo isso.

    Critérios: forma (4, d) com valores finitos; cosseno(pulou, alto) ≥ 0,8; na matriz de
    ``self_attention(E)``, pulou dá a alto mais peso do que a gato e a felino, e vice-versa;
    gato e felino continuam parecidos e atentos um ao outro.
    """
    result = embeddings_fn()
    if isinstance(result, tuple):
        c.fail("a função devolve só a matriz E", "E, forma (4, d)", f"uma tupla com {len(result)} itens",
               "devolva apenas E (não os tokens).")
    E = c.array(result, "a função devolve uma matriz de números", stop=True)
    tokens, original = gato_felino()
    d = original.shape[1]
    c.require(E.ndim == 2 and E.shape[0] == 4, "E tem uma linha por token (4 linhas: gato, felino, pulou, alto)",
              "forma (4, d)", f"forma {E.shape}", "devolva a matriz inteira, com as 4 linhas.")
    c.require(np.isfinite(E).all(), "E só tem valores finitos", "números finitos", "NaN ou inf",
              "troque os NaN/inf por números: cada linha de E é um vetor comum (por exemplo, [0.0, 0.0, 0.9, 0.1]).")
    c.require(E.shape[1] >= d, f"E tem pelo menos as {d} coordenadas do exemplo", f"forma (4, ≥ {d})",
              f"forma {E.shape}", "mude os valores das linhas de pulou e alto; não tire coordenadas.")
    c.require(E.shape != original.shape or not np.allclose(E, original),
              "E foi modificado em relação ao exemplo da aula", "pulou e alto alterados", "a matriz original",
              "mude a linha de pulou e/ou a de alto.")
    extra = E[[GATO, FELINO], d:]  # uma coordenada nova é permitida; para gato e felino, ela fica 0
    c.require(np.allclose(E[[GATO, FELINO], :d], original[[GATO, FELINO]]) and np.allclose(extra, 0),
              "as linhas de gato e felino continuam as do exemplo",
              format_value(original[[GATO, FELINO]]), format_value(E[[GATO, FELINO]]),
              "o exercício pede para mudar só pulou e alto: deixe gato e felino como estavam (numa coordenada "
              "nova, use 0 para eles). Multiplicar a matriz inteira também muda gato e felino.")
    cos_pa = _cosine(E[PULOU], E[ALTO])
    c.expect(cos_pa >= 0.8, "pulou e alto são parecidos (cosseno ≥ 0,8)", "≥ 0,8", format_number(cos_pa),
             "aproxime os vetores de pulou e de alto (por exemplo, valores altos na mesma coordenada).")
    _, A = self_attention(E)
    for q, k, nome_q, nome_k in ((PULOU, ALTO, "pulou", "alto"), (ALTO, PULOU, "alto", "pulou")):
        outros = max(A[q, GATO], A[q, FELINO])
        empate = abs(A[q, k] - outros) <= 1e-9
        # pesos diferentes que as 3 casas igualam aparecem com 6: "0,210 > 0,210" não diria a diferença
        casas = ".3f" if empate or format_number(A[q, k], ".3f") != format_number(outros, ".3f") else ".6f"
        obtido = format_number(A[q, k], casas) + (", o mesmo peso que o maior entre gato e felino (empate)"
                                                  if empate else "")
        c.expect(A[q, k] > outros + 1e-9,
                 f"{nome_q} presta mais atenção em {nome_k} do que em gato e felino",
                 f"peso({nome_q}→{nome_k}) > {format_number(outros, casas)}", obtido,
                 f"{nome_q} e {nome_k} precisam ser mais parecidos entre si do que com gato e felino.")
    cos_gf = _cosine(E[GATO], E[FELINO])
    c.expect(cos_gf >= 0.8 and A[GATO, FELINO] > max(A[GATO, PULOU], A[GATO, ALTO]),
             "gato e felino continuam parecidos e atentos um ao outro",
             "cosseno(gato, felino) ≥ 0,8 e gato→felino acima de gato→pulou/alto",
             f"cosseno {format_number(cos_gf)}, pesos da linha de gato {np.round(A[GATO], 3)}",
             _cat_hint(E, A) if cos_gf >= 0.8 else "o exercício só pede para mudar pulou e alto.")


def _cat_hint(E: np.ndarray, A: np.ndarray) -> str:
    """Gato e felino não mudaram, mas pulou ou alto ganhou a coordenada de gato: na linha de gato, ele recebe
    tanto peso quanto felino (ou mais). A dica diz qual e de quanto é o produto escalar."""
    nomes = {PULOU: "pulou", ALTO: "alto"}
    quem = max((PULOU, ALTO), key=lambda k: A[GATO, k])
    nome = nomes[quem]
    return (f"gato e felino estão como no exemplo, mas o vetor de {nome} ficou parecido com o de gato: "
            f"gato·{nome} = {format_number(E[GATO] @ E[quem])}, contra gato·felino = "
            f"{format_number(E[GATO] @ E[FELINO])} e gato·gato = {format_number(E[GATO] @ E[GATO])}, então, na "
            f"linha de gato, {nome} recebe {format_number(A[GATO, quem], '.3f')} e felino só "
            f"{format_number(A[GATO, FELINO], '.3f')}. Deixe pulou e alto com "
            "valores pequenos (ou 0) nas duas primeiras coordenadas, as de gato e felino, e aproxime-os numa "
            "das outras.")


# o enunciado: "escreva a fórmula você mesmo, sem usar atencao.scaled_dot_product_attention"
_FORBIDDEN = (scaled_dot_product_attention, attend, attend_checked, self_attention, SelfAttention, MultiHeadAttention)


def _reference_projected(X, W_q, W_k, W_v, scale="d_k", axis=-1):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    d = {"d_k": W_q.shape[1], "d_model": X.shape[1], "n": X.shape[0], "d_v": W_v.shape[1], "none": 1}[scale]
    A = softmax(Q @ K.T / np.sqrt(d), axis=axis)
    return A @ V, A


def _cases():
    rng = np.random.default_rng(case_seed(2017))
    _, E = gato_felino()
    # o primeiro caso tem n ≠ d ≠ d_k: cada engano de escala (sqrt(n), sqrt(d), nenhuma) dá um resultado diferente
    # e a dica aponta o engano certo; depois, o exemplo da aula (n = d = 4), um token só e d_k = d
    X1 = rng.normal(size=(6, 8))
    # o último tem pontuações na casa dos milhares: uma softmax sem subtrair o máximo dá NaN
    shapes = [(X1, 2, 4), (E, 3, 5), (rng.normal(size=(1, 5)), 3, 2), (rng.normal(size=(5, 16)), 16, 3),
              (40 * rng.normal(size=(4, 6)), 3, 3)]
    for X, d_k, d_v in shapes:
        d = X.shape[1]
        yield X, rng.normal(size=(d, d_k)), rng.normal(size=(d, d_k)), rng.normal(size=(d, d_v))


@check("Exercício 4 (projeções Q, K, V)")
def exercicio_4(c: Checker, attention_fn):
    """Confere ``attention_fn(X, W_q, W_k, W_v) -> (saida, pesos)`` contra a referência.

    Casos: o exemplo da aula com d_k ≠ d_v, uma frase de 6 tokens, um único token (caso de borda),
    d_k = d e pontuações grandes (a softmax precisa ser estável). Reconhece erros típicos (sem escala,
    escala por sqrt(d) em vez de sqrt(d_k), softmax no eixo errado, pesos e saída trocados, V sem
    projeção) e dá uma dica específica (:func:`_weights_hint`).
    """
    for n_case, (X, W_q, W_k, W_v) in enumerate(c.cases(_cases()), start=1):
        label = f"caso {n_case}: X {X.shape}, d_k={W_q.shape[1]}, d_v={W_v.shape[1]}"
        (out, A), (X, W_q, W_k, W_v) = call_frozen(c, label, attention_fn, X, W_q, W_k, W_v,
                                                   names=("X", "W_q", "W_k", "W_v"), forbidden=_FORBIDDEN)
        ref_out, ref_A = _reference_projected(X, W_q, W_k, W_v)
        n, d_v = X.shape[0], W_v.shape[1]
        if A.shape == (n, d_v) and out.shape == (n, n) and n != d_v:
            c.fail(f"{label}: ordem do retorno", "(saida, pesos)", "(pesos, saida)",
                   mistake("return_order_swapped", "a função deve devolver primeiro a saída e depois os pesos."))
        ok_A = c.close(A, ref_A, f"{label}: pesos de atenção (n, n) corretos", hint=_weights_hint(X, W_q, W_k, W_v, A))
        c.close(out, ref_out, f"{label}: saída (n, d_v) correta",
                hint="a saída é pesos @ V, com V = X @ W_v (projeção dos valores)." if ok_A else
                "a saída depende dos pesos: corrija primeiro os pesos (acima) e ela deve acertar junto.")


def _weights_hint(X, W_q, W_k, W_v, A) -> str:
    """A dica dos pesos errados do exercício 4: a tabela dos enganos típicos, cada um calculado com a conta
    errada (:func:`matching_hint`); depois, os sintomas (valores negativos, linhas que não somam 1)."""
    if A.size and not np.isfinite(A).all():
        return UNSTABLE_SOFTMAX_HINT
    ref = _reference_projected(X, W_q, W_k, W_v)[1]
    mistakes = [
        (mistake("no_scale", "parece que faltou dividir as pontuações por sqrt(d_k)."),
         _reference_projected(X, W_q, W_k, W_v, scale="none")[1]),
        (mistake("scale_by_d_model", "dividiu por sqrt(d) do embedding; o certo é sqrt(d_k), a dimensão das chaves."),
         _reference_projected(X, W_q, W_k, W_v, scale="d_model")[1]),
        (mistake("scale_by_n", "dividiu pela raiz do número de tokens (n); o certo é sqrt(d_k), a dimensão das "
                 "chaves."),
         _reference_projected(X, W_q, W_k, W_v, scale="n")[1]),
        (mistake("scale_by_d_v", "dividiu por sqrt(d_v), a dimensão dos valores; o certo é sqrt(d_k), a dimensão "
                 "das consultas e chaves (W_q.shape[1])."), _reference_projected(X, W_q, W_k, W_v, scale="d_v")[1]),
        (mistake("softmax_by_column", "a softmax foi aplicada por coluna; aplique em cada linha (axis=-1)."),
         _reference_projected(X, W_q, W_k, W_v, axis=0)[1]),
        (mistake("weights_transposed", "os pesos estão transpostos: a linha i é a consulta i. Use (X @ W_q) @ "
                 "(X @ W_k).T, não K @ Q.T, e a softmax em cada linha."), ref.T),
    ]
    hint = matching_hint(A, mistakes, ref, atol=1e-6)
    if hint is None and (A < -1e-9).any():
        hint = mistake("missing_softmax", "os pesos têm valores negativos: parece que faltou a softmax (a função "
                       "devolveu as pontuações).")
    if hint is None and A.ndim == 2 and A.shape[0] == A.shape[1] and not np.allclose(A.sum(axis=-1), 1, atol=1e-6):
        hint = mistake("rows_not_normalized", "cada linha dos pesos deveria somar 1 (softmax em cada linha).")
    return hint or "pontuações = (X @ W_q) @ (X @ W_k).T / sqrt(d_k); pesos = softmax por linha."


# o visualizador é do aluno: o destaque de cada linha e o resumo impresso (o mapa pode ser o da biblioteca)
# e o ajudante delas, que acha o destaque de cada linha (text._strongest)
_FORBIDDEN_VIS = (strongest_attention, attention_summary, text._strongest)


@check("Projeto (visualizador de atenção)")
def projeto(c: Checker, visualizer_fn):
    """Confere ``visualizer_fn(frase, vectors=None) -> (tokens, pesos, destaques)``.

    ``destaques`` é uma lista ``(token, outro token que recebe mais atenção, peso)`` que ignora o próprio token
    (num empate exato, qualquer um dos empatados vale). Roda em três frases do projeto e numa frase com
    vetores próprios (na correção, frases e vetores sorteados: :func:`_project_cases`). Confere também que a
    função faz o que o enunciado pede além de devolver: desenha o mapa de calor (uma figura nova com a matriz
    n × n) e imprime o resumo (com o destaque de cada token); as figuras desenhadas durante a verificação são
    fechadas e o texto impresso fica fora do relatório.
    """
    if isinstance(visualizer_fn, RemoteCall):  # na correção, a figura é desenhada no processo do aluno
        visualizer_fn.warm_up = ("matplotlib",)
    else:
        warm_up_matplotlib()
    for sentence, vectors in c.cases(_project_cases()):
        label = f"“{sentence}”"
        args = (sentence,) if vectors is None else (sentence, vectors)
        result = c.call(label, visualizer_fn, *args, names=("frase", "vectors")[:len(args)],
                        forbidden=_FORBIDDEN_VIS)
        # o que a chamada desenhou e imprimiu (com acentos compostos, como os tokens)
        figuras, texto = c.captured.figures, nfc(c.captured.printed)
        tokens, A, highlights = c.returns(result, label, "tokens", "pesos", "destaques", stop=True)
        ref_tokens, X = embed(sentence, vectors)
        _, ref_A = self_attention(X)
        c.require(isinstance(tokens, (list, tuple)) and [nfc(str(t)) for t in tokens] == ref_tokens,
                  f"{label}: tokens (1º item)", ref_tokens,
                  list(tokens) if isinstance(tokens, (list, tuple)) else describe(tokens),
                  "o 1º item é a lista de tokens: use atencao.tokenize(frase) ou atencao.embed(frase); a "
                  "ordem do return é (tokens, pesos, destaques).")
        c.close(A, ref_A, f"{label}: matriz de atenção (2º item)",
                hint="pesos = softmax(X @ X.T / sqrt(d)) em cada linha, com tokens, X = atencao.embed(frase, "
                     "vectors) (ou atencao.self_attention(X)).")
        triples = [tuple(h) for h in highlights] if isinstance(highlights, (list, tuple)) else []
        c.require(triples and all(len(h) == 3 for h in triples),
                  f"{label}: destaques são (token, outro token, peso)", "uma lista de trios", repr(highlights)[:80],
                  "um trio por token, na ordem da frase: (token, o outro token que recebe mais atenção, o peso), "
                  "por exemplo ('gato', 'telhado', 0.31).")
        _check_highlights(c, label, triples, ref_A, ref_tokens)
        c.stop_if_failed()
        _check_drawing(c, label, figuras, texto, ref_A, ref_tokens)


def _check_drawing(c: Checker, label: str, figuras: list, texto: str, ref_A: np.ndarray, tokens: list) -> None:
    """O que o enunciado pede além do retorno: o mapa de calor (uma figura nova com a matriz) e o resumo impresso
    (uma linha por token, com o destaque dele)."""
    n = len(tokens)
    desenhou = _has_heatmap(figuras, n, ref_A)
    falta = _missing_summary_line(nfc(texto), ref_A, tokens)
    resumiu = bool(texto.strip()) and falta is None
    resumo = "sim" if resumiu else f"falta a linha de {falta}" if texto.strip() else "não"
    c.require(desenhou and resumiu, f"{label}: desenha o mapa de calor e imprime o resumo",
              f"uma figura nova com a matriz de atenção {n} × {n} e um resumo impresso com, para cada "
              "token, uma linha com ele, o outro token que recebe mais atenção (nessa ordem) e o peso",
              f"mapa de calor: {'sim' if desenhou else 'não (nenhuma figura nova mostra esta matriz)'}; "
              f"resumo impresso: {resumo}",
              "o enunciado pede o mapa com atencao.plot_attention(pesos, tokens, title=...) e um resumo "
              "impresso por você, uma linha por token: print(f\"{token} → {outro} ({peso:.2f})\").")


# as palavras de HAND_MADE_VECTORS com o mesmo vetor: numa frase com duas delas, a linha de cada token tem um empate
# exato (como com um token repetido)
_TWINS = (("ele", "ela"), ("eu", "você"), ("um", "uma"), ("olá", "oi"), ("bom", "boa"), ("no", "na"), ("do", "da"))


def _project_cases() -> list:
    """Os casos do projeto, ``(frase, vectors)``: três frases do vocabulário (uma com empate exato, uma com tokens
    repetidos) e uma com vetores próprios; cada chamada desenha uma figura, e desenhar é o que mais custa sob a
    vigilância. No notebook, três frases do projeto e “sol lua mar”; na conferência da correção, frases de 3 a 8
    palavras sorteadas do vocabulário (uma com duas palavras de vetores iguais, outra com uma palavra repetida) e
    vetores sorteados: uma tabela de respostas não passa."""
    seed = case_seed(None)
    custom = {"sol": [1.0, 0.2, 0.0], "lua": [0.9, 0.3, 0.0], "mar": [0.0, 0.1, 1.0]}
    if seed is None:
        return [(s, None) for s in PROJECT_SENTENCES if not s.startswith("A menina")] + [("sol lua mar", custom)]
    rng = np.random.default_rng(seed)
    vocabulario = sorted(HAND_MADE_VECTORS)

    def frase(extra: list) -> str:
        palavras = [str(w) for w in rng.choice(vocabulario, size=int(rng.integers(3, 9)) - len(extra))] + extra
        palavras = [palavras[i] for i in rng.permutation(len(palavras))]
        return " ".join(palavras).capitalize()

    repetida = str(rng.choice(vocabulario))
    frases = [frase([]), frase(list(_TWINS[int(rng.integers(len(_TWINS)))])), frase([repetida, repetida])]
    custom = {w: rng.normal(size=3).round(2).tolist() for w in custom}
    return [(f, None) for f in frases] + [("sol lua mar", custom)]


def _check_highlights(c: Checker, label: str, triples: list, ref_A: np.ndarray, tokens: list) -> None:
    """Cada destaque aponta o outro token de maior peso da linha (num empate exato, qualquer um dos empatados),
    com o peso dele; o primeiro critério que falha encerra a verificação."""
    n = len(tokens)
    c.require(len(triples) == n, f"{label}: um destaque por token", n, len(triples),
              "um trio (token, outro token que recebe mais atenção, peso) para cada token da frase, na ordem.")
    certos, obtidos, esperados, recebidos, pesos_ok = [], [], [], [], True
    errado = None  # o primeiro destaque errado: o relatório mostra até ele
    for i, (q, k, w) in enumerate(triples):
        maximo, empatados = _expected_highlight(ref_A, tokens, i)
        certos.append(f"{tokens[i]}→{'/'.join(sorted(empatados))}")
        obtidos.append(f"{q}→{k}")
        if nfc(str(q)) != tokens[i] or nfc(str(k)) not in empatados:
            errado = (k, empatados)
            certos.append("…")
            break
        esperados.append(round(float(maximo), 3))
        recebidos.append(_as_weight(w))
        valor = _as_weight(w, arredondar=False)
        pesos_ok &= isinstance(valor, float) and bool(np.isclose(valor, maximo, atol=1e-5))
    c.require(errado is None, f"{label}: para cada token, o OUTRO token que recebe mais atenção", certos, obtidos,
              errado and _highlight_hint(*errado, tokens))
    c.require(pesos_ok, f"{label}: o peso de cada destaque", esperados, recebidos,
              "o peso é pesos[i, j] do token que recebe mais atenção (um número), e não o da diagonal.")


def _as_weight(w, arredondar: bool = True):
    """O peso de um destaque como número (arredondado a 3 casas, para o relatório), ou como veio, se não é um."""
    try:
        return round(float(w), 3) if arredondar else float(w)
    except (TypeError, ValueError):
        return w


def _highlight_hint(k, empatados: set, tokens: list) -> str:
    """A dica de um destaque errado: o índice j no lugar do token (tokens[j] é o certo) ou a diagonal."""
    indice = (isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= int(k) < len(tokens)
              and tokens[int(k)] in empatados)
    if indice:
        return mistake("index_instead_of_token", "o 2º item de cada trio é o token (tokens[j]), não o índice j: o "
                       "índice está certo, troque j por tokens[j].")
    return mistake("diagonal_not_ignored", "ignore a diagonal (o próprio token) antes de procurar o máximo da linha; o "
                   "1º item de cada trio é o token da linha, na ordem da frase.")


def _expected_highlight(ref_A: np.ndarray, tokens: list, i: int) -> tuple[float, set]:
    """O maior peso da linha ``i`` fora da diagonal e os tokens que o recebem (todos, num empate exato)."""
    linha = ref_A[i].astype(float)  # uma cópia: o próprio token não conta
    linha[i] = -np.inf
    maximo = linha.max()
    return maximo, {tokens[j] for j in range(len(tokens)) if j != i and np.isclose(linha[j], maximo, rtol=0,
                                                                                     atol=1e-12)}


def _missing_summary_line(texto: str, ref_A: np.ndarray, tokens: list):
    """O primeiro token sem uma linha do resumo com ele, depois dele o outro token que recebe mais atenção (num
    empate, qualquer um dos empatados) e o peso desse destaque (com 2 casas ou mais, ponto ou vírgula, ou em
    porcentagem; até 0,01 de diferença, para quem corta em vez de arredondar): ``"“gato” → “telhado” (0.41)"``;
    ``None`` se não falta nenhuma."""
    import re

    linhas = texto.splitlines()

    def posicoes(linha: str, palavra: str) -> list:
        return [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(palavra) + r"(?!\w)", linha)]

    def tem_o_peso(linha: str, peso: float) -> bool:
        for m in re.finditer(r"(?<![\w.,])(\d+(?:[.,]\d+)?)(\s*%)?", linha):
            valor = float(m.group(1).replace(",", ".")) / (100 if m.group(2) else 1)
            if abs(valor - peso) <= 0.01:
                return True
        return False

    for i, token in enumerate(tokens):
        peso, alvos = _expected_highlight(ref_A, tokens, i)
        if not any(p < q and tem_o_peso(linha, peso) for linha in linhas for p in posicoes(linha, token)
                   for alvo in alvos for q in posicoes(linha, alvo)):
            return f"“{token}” → “{'/'.join(sorted(alvos))}” ({peso:.2f})"
    return None


def _has_heatmap(figuras: list, n: int, ref_A: np.ndarray) -> bool:
    """Alguma das figuras novas (os arrays desenhados em cada uma: imagens ou malhas de cores) mostra a matriz
    de atenção ``ref_A`` (n × n)?"""
    for arrays in figuras:
        for dados in arrays:
            if np.size(dados) == n * n:
                valores = np.asarray(dados, dtype=float).reshape(n, n)
                if np.allclose(valores, ref_A, atol=1e-6, equal_nan=False):
                    return True
    return False


protect()  # a foto da biblioteca e desta verificação, antes do código do aluno
