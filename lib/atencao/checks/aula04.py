"""Verificações da Aula 4 (Módulo 6): o bloco Transformer do zero (``03-exercicios``).

As referências são as peças da biblioteca (:mod:`atencao.positional`, :mod:`atencao.normalization`,
:mod:`atencao.transformer`); cada engano comum do enunciado é calculado aqui e reconhecido pela dica.
"""

from __future__ import annotations

import re

import numpy as np

from .. import bert
from .._validation import compact_float
from ..attention import attend, attend_checked, scaled_dot_product_attention, softmax, softmax_
from ..feedforward import FeedForward
from ..masks import causal_mask
from ..multihead import MultiHeadAttention, merge_heads, split_heads
from ..normalization import LayerNorm
from ..positional import positional_encoding
from ..sampling import attend_cached
from ..transformer import TransformerDecoderBlock, TransformerEncoderBlock
from .framework import (
    Checker,
    StopCheck,
    call_frozen,
    case_seed,
    check,
    is_numpy_shape_error,
    matching_hint,
    mistake,
    passou,
    protect,
    student_error,
)

__all__ = ["passou", "exercicio_1", "exercicio_2", "exercicio_3", "exercicio_4", "projeto"]


# ---------------------------------------------------------------- exercício 1: a codificação senoidal

def _pe_variants(n: int, d: int) -> list:
    """(dica, matriz) dos enganos comuns na codificação senoidal, para :func:`matching_hint`."""
    pos = np.arange(n, dtype=float)[:, None]  # (n, 1)
    col = np.arange(d)  # (d,)
    par = col - col % 2  # 2i de cada coluna: 0, 0, 2, 2, 4, ...
    seno = col % 2 == 0  # colunas pares
    ang = pos / 10000.0 ** (par / d)  # (n, d): o ângulo certo de cada coluna

    def montar(angulos, seno_nas_pares=True):
        return np.where(seno == seno_nas_pares, np.sin(angulos), np.cos(angulos))

    half = (d + 1) // 2
    ang_metade = pos / 10000.0 ** (2 * np.arange(half) / d)  # (n, ceil(d/2))
    metades = np.concatenate([np.sin(ang_metade), np.cos(ang_metade)[:, : d - half]], axis=1)
    return [
        (mistake("sin_cos_swapped", "seno e cosseno trocados: as colunas PARES (0, 2, 4...) levam o seno e as ÍMPARES, "
                 "o cosseno."),
         montar(ang, seno_nas_pares=False)),
        (mistake("sin_cos_halves", "os senos e os cossenos estão em metades (todos os senos e depois todos os "
                 "cossenos); no artigo eles se alternam: coluna 2i = "
                 "seno, coluna 2i + 1 = cosseno do mesmo ângulo."), metades),
        (mistake("exponent_column_index", "o expoente usa o índice de cada coluna (j/d_model); ele deve usar "
                 "2i/d_model, o índice da coluna PAR do par: as "
                 "colunas 2i e 2i + 1 têm o mesmo ângulo."), montar(pos / 10000.0 ** (col / d))),
        (mistake("exponent_pair_index", "o expoente usa i/d_model (o número do par); o certo é 2i/d_model: 10000 ** (2 "
                 "* i / d_model)."),
         montar(pos / 10000.0 ** ((par // 2) / d))),
        (mistake("exponent_without_d_model", "faltou dividir o expoente por d_model: 10000 ** (2i / d_model), não "
                 "10000 ** (2i)."),
         montar(pos / 10000.0 ** par.astype(float))),
        (mistake("frequency_multiplied", "multiplicou pela frequência invertida: o ângulo é pos / 10000 ** (2i / "
                 "d_model), uma divisão."),
         montar(pos * 10000.0 ** (par / d))),
        (mistake("positions_from_one", "as posições começam em 0 (a primeira linha é [0, 1, 0, 1, ...]), não em 1."),
         montar((pos + 1) / 10000.0 ** (par / d))),
        (mistake("odd_d_model_padded", "o expoente usa o d_model pedido, mesmo ímpar: não calcule com d_model + 1 para "
                 "depois cortar a última coluna."), montar(pos / 10000.0 ** (par / (d + 1)))),
    ]


def _pe_shapes() -> list:
    """Os (n, d_model) do exercício 1. No notebook, sempre os mesmos; na conferência da correção, sorteados:
    d_model de 3 a 999, pares e ímpares, e n até 1999, com n = 1 num deles. n · d_model fica abaixo de 100 mil
    números: uma resposta com laços leva menos de um segundo, e uma matriz devolvida como lista ainda cabe na
    resposta do processo do aluno. Uma tabela de matrizes montada na célula não passa: a das formas do notebook,
    ou de todas até 64, falha; uma que cobrisse o espaço teria perto de 1 GB (uma matriz por d_model)."""
    seed = case_seed(None)
    if seed is None:
        rng = np.random.default_rng(2017)
        return [(6, 8), (10, 16), (5, 7), (1, 3), (int(rng.integers(3, 12)), 2 * int(rng.integers(2, 10)))]
    rng = np.random.default_rng(seed)

    def forma(d_lo: int, d_hi: int, impar: bool, n_lo: int = 65) -> tuple:
        d = 2 * int(rng.integers(d_lo // 2, d_hi // 2)) + (1 if impar else 0)  # de d_lo a d_hi, a paridade pedida
        return int(rng.integers(n_lo, max(n_lo + 1, min(2000, 100_000 // d)))), d

    return [forma(4, 65, False, n_lo=2), forma(66, 1000, False), forma(2, 64, True, n_lo=2),
            (1, forma(64, 1000, True)[1]), forma(64, 1000, True)]


@check("Exercício 1 (a codificação posicional senoidal)")
def exercicio_1(c: Checker, fn):
    """Confere ``fn(n, d_model) -> ndarray (n, d_model)`` contra :func:`atencao.positional.positional_encoding`.

    Casos: (6, 8), (10, 16), d_model ímpar (5, 7) e (1, 3), e um caso sorteado; na conferência da correção,
    todos sorteados (:func:`_pe_shapes`). Reconhece seno e cosseno
    trocados ou em metades, o expoente errado (j, i, sem d_model, multiplicado), posições a partir de 1, a
    matriz transposta, NaN/inf na matriz e o erro de formas com d_model ímpar.
    """
    for n, d in c.cases(_pe_shapes()):
        label = f"n={n}, d_model={d}"
        try:
            bruto = c.call(label, fn, n, d, names=("n", "d_model"), forbidden=(positional_encoding,))
        except ValueError as exc:
            if d % 2 == 0 or not is_numpy_shape_error(str(exc)):
                raise
            c.fail(f"{label}: funciona com d_model ímpar", f"uma matriz ({n}, {d})", f"ValueError: {exc}",
                   mistake("odd_d_model_shape_error",
                   f"com d_model ímpar há {(d + 1) // 2} colunas de seno e só {d // 2} de cosseno: calcule os "
                   f"ângulos para as colunas pares (np.arange(0, d_model, 2)) e use angulos[:, :d_model // 2] "
                   "nas colunas ímpares."))
        got = c.array(bruto, f"{label}: devolve um array", stop=True)
        ref = positional_encoding(n, d)
        hint = None
        if got.shape == (d, n) and n != d:
            hint = mistake("pe_transposed", "a matriz saiu transposta: uma LINHA por posição e uma COLUNA por "
                           "dimensão, forma (n, d_model).")
        elif got.shape != ref.shape:
            hint = mistake("pe_wrong_shape", "devolva uma matriz de forma (n, d_model): uma linha por posição.")
        elif not np.isfinite(got).all():
            hint = (mistake("pe_not_finite", "apareceram NaN/inf na matriz: cada posição de PE é o seno ou o cosseno "
                            "de um ângulo finito, um número entre -1 e 1. Confira se alguma posição ficou sem "
                            "preencher (np.full(..., np.nan) ou np.empty sem atribuir todas as colunas) e se algum "
                            "ângulo deu infinito (uma divisão por zero, um np.log(0))."))
        else:
            hint = matching_hint(got, _pe_variants(n, d), ref) or (
                "PE[pos, 2i] = sin(pos / 10000 ** (2i / d_model)) e PE[pos, 2i + 1] = cos(do mesmo ângulo).")
        c.close(got, ref, f"{label}: a matriz PE", atol=1e-6, hint=hint)


# ---------------------------------------------------------------- exercício 2: a normalização de camada

def _ln(x, w, b, eps, axis=-1, ddof=0, eps_fora=False, centra=True, raiz=True):
    """A LayerNorm com um engano opcional (para reconhecer o que o aluno fez)."""
    media = x.mean(axis=axis, keepdims=True) if axis is not None else x.mean()
    var = x.var(axis=axis, keepdims=True, ddof=ddof) if axis is not None else x.var(ddof=ddof)
    num = x - media if centra else x
    if not raiz:
        den = var + eps
    else:
        den = np.sqrt(var) + eps if eps_fora else np.sqrt(var + eps)
    return num / den * w + b


def _ln_variants(x, w, b, eps) -> list:
    return [
        (mistake("stats_over_axis0", "a média e a variância são de cada token, no ÚLTIMO eixo (axis=-1, "
                 "keepdims=True), não do eixo 0 (os tokens)."), _ln(x, w, b, eps, axis=0)),
        (mistake("stats_over_tokens", "a média e a variância são de cada token, no último eixo (axis=-1); não dos "
                 "tokens (axis=-2)."),
         _ln(x, w, b, eps, axis=-2) if x.ndim >= 2 else None),
        (mistake("stats_over_everything", "a média e a variância são de cada token (axis=-1, keepdims=True), não do "
                 "array inteiro."),
         _ln(x, w, b, eps, axis=None)),
        (mistake("eps_outside_sqrt", "o eps fica DENTRO da raiz: (x - média) / sqrt(var + eps), não / (sqrt(var) + "
                 "eps)."),
         _ln(x, w, b, eps, eps_fora=True)),
        (mistake("var_ddof1", "a variância da LayerNorm divide por d_model (ddof=0, o padrão de np.var), não por "
                 "d_model - 1."),
         _ln(x, w, b, eps, ddof=1)),
        (mistake("eps_ignored", "use o eps recebido como argumento (aqui é diferente de 1e-5)."), _ln(x, w, b, 1e-5)),
        (mistake("missing_eps", "faltou somar o eps à variância: sqrt(var + eps)."), _ln(x, w, b, 0.0)),
        (mistake("divided_by_variance", "divida pelo desvio padrão, sqrt(var "
                 "+ eps), não pela variância."), _ln(x, w, b, eps, raiz=False)),
        (mistake("not_centered", "faltou subtrair a média de "
                 "cada token antes de dividir."), _ln(x, w, b, eps, centra=False)),
        (mistake("missing_weight_bias", "faltou aplicar o ganho e o "
                 "viés: ... * weight + bias."), _ln(x, 1.0, 0.0, eps)),
        (mistake("weight_bias_swapped", "weight e bias trocados: o ganho multiplica "
                 "(* weight) e o viés soma (+ bias)."), _ln(x, b, w, eps)),
    ]


@check("Exercício 2 (a normalização de camada)")
def exercicio_2(c: Checker, fn):
    """Confere ``fn(x, weight, bias, eps=1e-5) -> ndarray`` (a forma de ``x``) contra :class:`LayerNorm`.

    Casos: (4, 6) fora da escala, (3, 3) (quadrado: o eixo errado tem a mesma forma), um lote (2, 3, 8), e
    (5, 4) com valores pequenos, uma linha constante e ``eps = 0.01`` (o eps pesa). Reconhece o eixo errado,
    o eps fora da raiz, ``ddof=1``, o eps ignorado, dividir pela variância, sem centrar, sem ganho e viés e
    ganho e viés trocados.
    """
    rng = np.random.default_rng(case_seed(2016))
    pequeno = 0.05 * rng.normal(size=(5, 4))
    pequeno[2] = 0.3  # uma linha constante: variância 0, só o eps evita a divisão por zero
    casos = [(5.0 + 3.0 * rng.normal(size=(4, 6)), 1e-5), (rng.normal(size=(3, 3)), 1e-5),
             (2.0 * rng.normal(size=(2, 3, 8)), 1e-5), (pequeno, 0.01)]
    for x, eps in c.cases(casos):
        d = x.shape[-1]
        w, b = 1.0 + 0.5 * rng.normal(size=d), 0.3 * rng.normal(size=d)
        label = f"x de forma {x.shape}, eps={compact_float(eps)}"
        bruto, (x, w, b) = call_frozen(c, label, fn, x, w, b, returns=(), eps=eps, names=("x", "weight", "bias"),
                                       forbidden=(LayerNorm, bert._layer_norm))
        got = c.array(bruto, f"{label}: devolve um array", stop=True)
        ref = LayerNorm.from_weights(w, b, eps=eps)(x)
        variantes = [(h, v) for h, v in _ln_variants(x, w, b, eps) if v is not None]
        hint = (matching_hint(got, variantes, ref) if got.shape == ref.shape
                else "devolva um array com a forma de x: cada token normalizado no seu lugar.")
        if got.shape == ref.shape and not np.isfinite(got).all():
            hint = (mistake("ln_not_finite", "apareceu NaN ou infinito: numa linha constante a variância é 0, e só o "
                            "eps, somado DENTRO da raiz, evita a divisão por zero: sqrt(var + eps)."))
        c.close(got, ref, f"{label}: a saída normalizada", hint=hint or (
            "(x - média) / sqrt(var + eps) * weight + bias, com média e variância em axis=-1, keepdims=True."))


# ---------------------------------------------------------------- exercício 3: o bloco codificador

def _partes(seed: int, d: int, n_heads: int, activation: str):
    """As peças de um bloco com pesos sorteados (vieses e normalizações longe de 0 e 1)."""
    rng = np.random.default_rng(seed)
    mats = [rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4)]
    vieses = [0.2 * rng.normal(size=d) for _ in range(4)]
    attn = MultiHeadAttention.from_weights(*mats, *vieses, n_heads=n_heads)
    d_ff = 2 * d
    ffn = FeedForward.from_weights(rng.normal(size=(d, d_ff)) / np.sqrt(d), 0.2 * rng.normal(size=d_ff),
                                   rng.normal(size=(d_ff, d)) / np.sqrt(d_ff), 0.2 * rng.normal(size=d), activation)
    norm1, norm2 = (LayerNorm.from_weights(1.0 + 0.5 * rng.normal(size=d), 0.3 * rng.normal(size=d))
                    for _ in range(2))
    return attn, ffn, norm1, norm2


def _bloco(x, attn, ffn, norm1, norm2, pre: bool, mask, engano: str | None = None):
    """A saída do bloco (pré-LN ou pós-LN), ou a de um engano comum."""
    def mha(h):
        return attn(h, mask=None if engano == "sem_mascara" else mask)[0]

    n1, n2 = (norm2, norm1) if engano == "normas_trocadas" else (norm1, norm2)
    if engano == "ordem_trocada":
        pre = not pre
    if pre:
        if engano == "residuo_normalizado":  # x = LN(x) + f(LN(x))
            h = n1(x)
            x = h + mha(h)
            h = n2(x)
            return h + ffn(h)
        if engano == "sem_residuo":
            x = mha(n1(x))
            return ffn(n2(x))
        if engano == "ln_depois":  # o resíduo certo, mas a LN depois da subcamada: x + LN(f(x))
            x = x + n1(mha(x))
            return x + n2(ffn(x))
        x = x + mha(n1(x))
        return x + ffn(n2(x))
    if engano == "ln_antes_do_residuo":  # x = x + LN(f(x)): normaliza antes de somar o resíduo
        x = x + n1(mha(x))
        return x + n2(ffn(x))
    if engano == "sem_residuo":
        x = n1(mha(x))
        return n2(ffn(x))
    if engano == "ffn_na_entrada":  # a FFN recebe a entrada do bloco, não a saída da atenção
        h = n1(x + mha(x))
        return n2(h + ffn(x))
    h = n1(x + mha(x))
    return n2(h + ffn(h))


_DICAS_BLOCO = {
    "ordem_trocada": mistake("norm_order_swapped", "o bloco seguiu a outra ordem: com norm_first=True (pré-LN) é x = x "
                             "+ f(LN(x)); com norm_first=False (pós-LN) é x "
                             "= LN(x + f(x)). Use o argumento norm_first."),
    "ln_antes_do_residuo": mistake("post_ln_before_residual", "no pós-LN a normalização vem DEPOIS da soma com o "
                                   "resíduo: LN(x + f(x)), e não x + LN(f(x))."),
    "ln_depois": mistake("pre_ln_after_sublayer", "no pré-LN a normalização vem ANTES da subcamada: x + f(LN(x)), e "
                         "não x + LN(f(x))."),
    "residuo_normalizado": mistake("pre_ln_normalized_residual", "no pré-LN o resíduo é a entrada SEM normalizar: x = "
                                   "x + f(LN(x)), e não LN(x) + f(LN(x))."),
    "sem_residuo": mistake("missing_residual", "faltou a conexão residual: some a entrada da subcamada à saída dela (x "
                           "+ ...)."),
    "normas_trocadas": mistake("norms_swapped", "norm1 vai com a atenção e norm2 com a FFN."),
    "ffn_na_entrada": mistake("ffn_on_block_input", "a FFN recebe a saída da primeira subcamada (depois da atenção, do "
                              "resíduo e da LN), não a entrada do bloco."),
    "sem_mascara": mistake("mask_not_passed", "passe a máscara para a atenção: attn(h, mask=mask)."),
}


# o erro do NumPy ao transformar num array uma sequência de partes com formas diferentes: uma tupla (saida, pesos)
# numa conta (x + attn(x)); "inhomogeneous" no NumPy ≥ 1.24, só "with a sequence" antes
_SEQUENCIA_NO_ARRAY = re.compile(r"setting an array element with a sequence|inhomogeneous shape")


# o erro da MultiHeadAttention quando a máscara entra na posição de key: attn(h, mask) em vez de attn(h, mask=mask)
_MASCARA_COMO_KEY = re.compile(r"`key` precisa ter forma")


@check("Exercício 3 (o forward do bloco codificador)")
def exercicio_3(c: Checker, fn):
    """Confere ``fn(x, attn, ffn, norm1, norm2, norm_first, mask=None) -> (saida, pesos)``.

    ``attn`` é uma :class:`MultiHeadAttention`, ``ffn`` uma :class:`FeedForward` e ``norm1``, ``norm2``
    :class:`LayerNorm` (com ganhos e vieses sorteados, para distinguir uma da outra). Casos: pós-LN com ReLU,
    pré-LN com GELU e máscara causal, pós-LN com um lote e máscara, pré-LN com 3 cabeças. Reconhece a ordem
    trocada, a normalização antes do resíduo, o resíduo normalizado, a falta do resíduo, as normalizações
    trocadas, a FFN na entrada do bloco, a máscara esquecida e a tupla ``(saida, pesos)`` de ``attn(...)`` usada
    inteira numa conta (o ``ValueError`` do NumPy). ``TransformerEncoderBlock`` e ``TransformerDecoderBlock`` (o
    mesmo bloco, com a atenção cruzada) são proibidos.
    """
    rng = np.random.default_rng(case_seed(2020))
    casos = [(False, "relu", (5, 8), 2, False), (True, "gelu", (6, 8), 2, True), (False, "gelu", (2, 4, 8), 2, True),
             (True, "relu", (5, 12), 3, False)]
    for pre, act, forma, n_heads, causal in c.cases(casos):
        seed = int(rng.integers(2**31))
        x = rng.normal(size=forma)
        n, d = forma[-2], forma[-1]
        mask = np.tril(np.ones((n, n), dtype=bool)) if causal else None
        ordem = "pré-LN (norm_first=True)" if pre else "pós-LN (norm_first=False)"
        label = f"{ordem}, {act}, x {forma}, {n_heads} cabeças" + (", máscara causal" if causal else "")
        kw = {} if mask is None else {"mask": mask}
        try:  # o desempacotar fica fora do try: o ValueError de um retorno estranho não é o da conta do aluno
            bruto, (x, *_) = call_frozen(c, label, fn, x, *_partes(seed, d, n_heads, act), pre, returns=(),
                                         names=("x", "attn", "ffn", "norm1", "norm2", "norm_first"),
                                         forbidden=(TransformerEncoderBlock, TransformerDecoderBlock), **kw)
        except ValueError as exc:
            if mask is not None and _MASCARA_COMO_KEY.search(str(exc)):
                c.fail(f"{label}: a máscara chega à atenção", "attn(h, mask=mask)",
                       student_error(exc)[0].replace("o seu código levantou ", "", 1),
                       "a máscara foi passada na posição de key: a assinatura é attn(query, key=None, value=None, "
                       "mask=None), e o 2º argumento posicional são as chaves. Passe a máscara pelo nome: "
                       "attn(h, mask=mask).")
            if not _SEQUENCIA_NO_ARRAY.search(str(exc)):
                raise
            # a única peça que devolve uma tupla é a atenção: (saida, pesos) entrou inteira numa conta
            c.fail(f"{label}: a tupla de attn(...) é desempacotada antes das contas",
                   "saida, pesos = attn(...)", student_error(exc)[0].replace("o seu código levantou ", "", 1),
                   "attn(...) devolve a tupla (saida, pesos), não só a saída: desempacote-a, "
                   "`a, pesos = attn(x, mask=mask)`, e use só `a` no resíduo (x + a). Com a tupla inteira numa "
                   "conta (x + attn(...)), o NumPy tenta transformá-la num array e não consegue, porque a saída e "
                   "os pesos têm formas diferentes (daí o “inhomogeneous shape”).")
        out, w = c.pair(bruto, label, stop=True)
        attn, ffn, norm1, norm2 = _partes(seed, d, n_heads, act)  # peças novas: a referência não depende da chamada
        ref = _bloco(x, attn, ffn, norm1, norm2, pre, mask)
        ref_w = attn(norm1(x) if pre else x, mask=mask)[1]
        variantes = [(dica, _bloco(x, attn, ffn, norm1, norm2, pre, mask, engano))
                     for engano, dica in _DICAS_BLOCO.items() if engano != "sem_mascara" or mask is not None]
        hint = (matching_hint(out, variantes, ref) if out.shape == ref.shape
                else f"a saída tem a forma de x, {forma}.")
        c.close(out, ref, f"{label}: a saída do bloco", stop=True, hint=hint or (
            "pós-LN: h = norm1(x + attn(x)); saída = norm2(h + ffn(h)). Pré-LN: h = x + attn(norm1(x)); "
            "saída = h + ffn(norm2(h))."))
        dica_w = ("devolva os pesos da atenção por cabeça, (..., n_heads, n, n), como attn(...) os devolve."
                  if w.shape != ref_w.shape else
                  "os pesos são os da atenção do bloco: a segunda saída de attn(...), com a mesma entrada da atenção.")
        c.close(w, ref_w, f"{label}: os pesos da atenção", hint=dica_w)


# ---------------------------------------------------------------- exercício 4: a atenção cruzada

def _cross(x, memory, W_q, W_k, W_v, fonte_q="x", fonte_kv="memory", escala="d_k", eixo=-1, causal=False):
    """A atenção cruzada de uma cabeça, com um engano opcional."""
    fontes = {"x": x, "memory": memory}
    Q, K, V = fontes[fonte_q] @ W_q, fontes[fonte_kv] @ W_k, fontes[fonte_kv] @ W_v
    s = Q @ np.swapaxes(K, -1, -2)
    s = s / {"d_k": np.sqrt(K.shape[-1]), "nenhuma": 1.0, "n_k": np.sqrt(K.shape[-2]),
             "d_model": np.sqrt(x.shape[-1])}[escala]
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    w = softmax(s, axis=eixo)
    return w @ V, w


_DICA_CHAVES_DO_DECODIFICADOR = (mistake("keys_from_decoder", "as chaves e os valores vêm de memory (a saída do "
                                         "codificador), não de x: K = memory @ W_k e V = memory @ W_v; só as consultas "
                                         "vêm de x."))


_DICA_PESOS_TRANSPOSTOS = (mistake("weights_transposed", "os pesos estão transpostos (as contas estão certas): devolva "
                                   "os pesos como saem de softmax(Q Kᵀ / sqrt(d_k)), (..., n_q, n_k), uma linha por "
                                   "consulta (um token de x), sem .T nem swapaxes."))


@check("Exercício 4 (a atenção cruzada)")
def exercicio_4(c: Checker, fn):
    """Confere ``fn(x, memory, W_q, W_k, W_v) -> (saida, pesos)``, com ``saida`` (..., n_q, d_v) e ``pesos``
    (..., n_q, n_k).

    Casos: n_q = 3 e n_k = 5, n_q = 4 e n_k = 2, n_q = n_k = 4 (as formas fecham mesmo com as fontes
    trocadas: só os valores denunciam), e um lote. ``d_k`` ≠ ``d_v`` ≠ ``d_model``. Reconhece as chaves (e os
    valores) tirados do decodificador, os papéis trocados, a escala ausente ou por sqrt(n_k) ou
    sqrt(d_model), a softmax no eixo das consultas e a máscara causal na atenção cruzada. As funções prontas de
    atenção são proibidas (``atencao.softmax`` é permitida).
    """
    rng = np.random.default_rng(case_seed(2015))
    casos = [((3,), (5,), 8, 4, 6), ((4,), (2,), 6, 4, 3), ((4,), (4,), 8, 2, 5), ((2, 3), (2, 6), 8, 4, 4)]
    for fq, fk, d_model, d_k, d_v in c.cases(casos):
        x = rng.normal(size=(*fq, d_model))
        memory = rng.normal(size=(*fk, d_model))
        W_q, W_k = (rng.normal(size=(d_model, d_k)) / np.sqrt(d_model) for _ in range(2))
        W_v = rng.normal(size=(d_model, d_v)) / np.sqrt(d_model)
        n_q, n_k = fq[-1], fk[-1]
        label = f"x {x.shape}, memory {memory.shape}, d_k={d_k}, d_v={d_v}"
        try:  # o desempacotar fica fora do try: o ValueError de um retorno estranho não é o das formas da conta
            bruto, (x, memory, W_q, W_k, W_v) = call_frozen(
                c, label, fn, x, memory, W_q, W_k, W_v, returns=(), names=("x", "memory", "W_q", "W_k", "W_v"),
                forbidden=(scaled_dot_product_attention, attend, attend_checked, MultiHeadAttention, softmax_))
        except ValueError as exc:
            if not is_numpy_shape_error(str(exc)):
                raise
            lote = (" Com eixos de lote, transponha só os dois últimos eixos de K: np.swapaxes(K, -1, -2) "
                    "(K.T inverte todos os eixos).") if x.ndim > 2 else ""
            c.fail(f"{label}: as formas fecham com n_q = {n_q} e n_k = {n_k}", "nenhum erro", f"ValueError: {exc}",
                   "Q = x @ W_q tem n_q linhas; K = memory @ W_k e V = memory @ W_v têm n_k linhas (as duas de "
                   "memory). Os pesos Q Kᵀ são (n_q, n_k) e multiplicam V (n_k, d_v)." + lote)
        out, w = c.pair(bruto, label, stop=True)
        ref_out, ref_w = _cross(x, memory, W_q, W_k, W_v)
        c.close(w, ref_w, f"{label}: pesos (n_q, n_k) = ({n_q}, {n_k})", stop=True,
                hint=_cross_weights_hint(x, memory, W_q, W_k, W_v, w, ref_w))
        hint = "a saída é pesos @ V, com V = memory @ W_v: forma (n_q, d_v)."
        if n_q == n_k and out.shape == ref_out.shape and np.allclose(out, w @ (x @ W_v), atol=1e-5):
            hint = mistake("values_from_decoder", "os valores vêm de memory, como as chaves: V = memory @ W_v (não x @ "
                           "W_v).")
        c.close(out, ref_out, f"{label}: saída (n_q, d_v) = ({n_q}, {d_v})", hint=hint)


def _cross_weights_hint(x, memory, W_q, W_k, W_v, w, ref_w) -> str:
    """A dica dos pesos errados da atenção cruzada: numa forma errada, a fonte trocada que a produz (ou os pesos
    transpostos); na forma certa, a tabela dos enganos típicos, cada um calculado com a conta errada
    (:func:`matching_hint`)."""
    n_q, n_k = x.shape[-2], memory.shape[-2]
    if w.shape != ref_w.shape:
        formas = {(n_q, n_q): _DICA_CHAVES_DO_DECODIFICADOR,
                  (n_k, n_q): mistake("roles_swapped", "os papéis estão trocados: as consultas vêm de x (o "
                                      "decodificador, uma linha por token da saída) e as chaves de memory; pesos "
                                      "(n_q, n_k)."),
                  (n_k, n_k): mistake("queries_from_memory", "as consultas vêm de x (o decodificador), não de "
                                      "memory: Q = x @ W_q.")}
        hint = formas.get(w.shape[-2:]) if w.shape[:-2] == ref_w.shape[:-2] else None
        if w.shape == np.swapaxes(ref_w, -1, -2).shape and np.allclose(np.swapaxes(w, -1, -2), ref_w, atol=1e-6):
            hint = _DICA_PESOS_TRANSPOSTOS
        return hint or f"os pesos têm forma (..., n_q, n_k) = (..., {n_q}, {n_k}): uma linha por consulta."
    variantes = [
        (_DICA_PESOS_TRANSPOSTOS, np.swapaxes(ref_w, -1, -2)),
        (_DICA_CHAVES_DO_DECODIFICADOR, _cross(x, memory, W_q, W_k, W_v, fonte_kv="x")[1]),
        (mistake("roles_swapped", "os papéis estão trocados: consultas de x, chaves e valores de memory."),
         _cross(x, memory, W_q, W_k, W_v, fonte_q="memory", fonte_kv="x")[1]),
        (mistake("no_scale", "faltou dividir as pontuações por sqrt(d_k) (d_k = W_k.shape[1])."),
         _cross(x, memory, W_q, W_k, W_v, escala="nenhuma")[1]),
        (mistake("scale_by_n_k", "a escala é sqrt(d_k), a dimensão das chaves (W_k.shape[1]), não sqrt(n_k), o "
                 "número de chaves."),
         _cross(x, memory, W_q, W_k, W_v, escala="n_k")[1]),
        (mistake("scale_by_d_model", "a escala é sqrt(d_k) (W_k.shape[1]), não sqrt(d_model)."),
         _cross(x, memory, W_q, W_k, W_v, escala="d_model")[1]),
        (mistake("softmax_by_column", "a softmax é em cada LINHA (axis=-1, sobre as chaves), não em cada coluna."),
         _cross(x, memory, W_q, W_k, W_v, eixo=-2)[1]),
        (mistake("causal_mask_in_cross_attention", "a atenção cruzada não tem máscara causal: todo token da saída "
                 "pode olhar para toda a frase de origem."),
         _cross(x, memory, W_q, W_k, W_v, causal=True)[1]),
    ]
    return matching_hint(w, variantes, ref_w) or "pesos = softmax(Q Kᵀ / sqrt(d_k)) em cada linha."


# ---------------------------------------------------------------- projeto: o KV cache

def _kv(attn: MultiHeadAttention, X: np.ndarray):
    """As chaves e os valores de todos os tokens de ``X`` (t, d_model), por cabeça: (n_heads, t, d_k) cada."""
    K = split_heads(X @ attn.W_k + (attn.b_k if attn.b_k is not None else 0.0), attn.n_heads)
    V = split_heads(X @ attn.W_v + (attn.b_v if attn.b_v is not None else 0.0), attn.n_heads)
    return K, V


# a consulta nova viu só a chave do 1º token: no passo 1 é também o cache antigo sem o token novo; o passo 2 separa
_SO_A_PRIMEIRA = (mistake("first_key_only", "a consulta nova viu só a chave do 1º token: causal_mask(1, t + 1) é a 1ª "
                          "linha de uma máscara causal (só a coluna 0 liberada), mas o token novo é a ÚLTIMA posição. "
                          "Aqui não há máscara: o token novo olha para todas as chaves do cache (se quiser a máscara, "
                          "é a última linha de causal_mask(t + 1))."))
_SEM_O_NOVO = (mistake("new_token_missing_from_cache", "o token novo também olha para si mesmo: concatene a chave e o "
                       "valor dele ao cache ANTES de calcular a atenção."))


def _passo_variantes(attn: MultiHeadAttention, X: np.ndarray, t: int) -> list:
    """(dica, saída) dos enganos comuns no passo ``t`` com cache (X tem os tokens 0..t), cada um com a sua dica.
    Uma saída ``None`` é um engano que não muda nada neste passo."""
    x = X[t:t + 1]
    zero = np.zeros(attn.d_model)
    q = split_heads(x @ attn.W_q + attn.b_q, attn.n_heads)  # (n_heads, 1, d_k)
    K, V = _kv(attn, X[: t + 1])
    # o token novo sem os vieses nas projeções (o cache antigo, que a verificação passa, tem os vieses)
    q0, k0, v0 = (split_heads(x @ W, attn.n_heads) for W in (attn.W_q, attn.W_k, attn.W_v))
    K0, V0 = np.concatenate([K[:, :-1], k0], axis=1), np.concatenate([V[:, :-1], v0], axis=1)

    def fim(Kc, Vc, escala=None, W_o=True, b_o=True, qq=None, eixo=-1):
        s = (q if qq is None else qq) @ np.swapaxes(Kc, -1, -2) / (np.sqrt(attn.d_k) if escala is None else escala)
        heads = merge_heads(softmax(s, axis=eixo) @ Vc)  # (1, d_model)
        return heads @ attn.W_o + (attn.b_o if b_o else zero) if W_o else heads

    return [
        (mistake("new_token_only", "a consulta nova olha para TODAS as chaves até aqui: concatene a chave e o valor "
                 "novos ao cache (np.concatenate([K_cache, k], axis=1)) e use o cache inteiro, não só o token novo."),
         fim(K[:, -1:], V[:, -1:])),
        (_SEM_O_NOVO, fim(K[:, :-1], V[:, :-1]) if t > 0 else None),
        (_SO_A_PRIMEIRA, fim(K[:, :1], V[:, :1]) if t > 1 else None),
        (mistake("no_scale", "faltou a escala: divida os scores de cada cabeça por sqrt(d_k) = sqrt(attn.d_k) antes da "
                 "softmax."),
         fim(K, V, escala=1.0)),
        (mistake("scale_by_d_model", "cada cabeça é escalada por sqrt(d_k) = sqrt(d_model / n_heads), não por "
                 "sqrt(d_model)."),
         fim(K, V, escala=np.sqrt(attn.d_model))),
        (mistake("scale_by_d_k", "a escala é a RAIZ de "
                 "d_k: divida por np.sqrt(attn.d_k), não por attn.d_k."), fim(K, V, escala=attn.d_k)),
        (mistake("missing_biases", "faltaram os vieses: q = x_new @ W_q + b_q, k = x_new @ W_k + b_k, v = x_new @ W_v "
                 "+ b_v e, no fim, + b_o."), fim(K0, V0, qq=q0, b_o=False)),
        # no passo 0 (uma chave só, peso 1) b_q e b_k não mudam a saída: só o b_v aparece
        (mistake("missing_b_q_b_k", "faltaram os vieses da consulta e da chave do token novo: q = x_new @ W_q + b_q e "
                 "k = x_new @ W_k + b_k."),
         fim(K0, V, qq=q0) if t > 0 else None),
        (mistake("missing_b_v", "faltou somar b_v: v = x_new @ W_v + b_v (o cache guarda os valores com o viés)."
                 + (" Confira também b_q e b_k: com um token só no cache, eles ainda não mudam a saída."
                    if t == 0 else "")),
         fim(K, V0)),
        (mistake("missing_b_o", "faltou somar b_o no fim: saida "
                 "= merge_heads(...) @ W_o + b_o."), fim(K, V, b_o=False)),
        (mistake("missing_output_projection", "faltou a projeção de saída: concatene as cabeças e multiplique por W_o "
                 "(e some b_o)."), fim(K, V, W_o=False)),
        (mistake("softmax_over_heads", "a softmax é sobre as chaves (o último eixo, axis=-1), em cada cabeça: não "
                 "sobre as cabeças (axis=0)."),
         fim(K, V, eixo=0) if attn.n_heads > 1 else None),
    ]


# a attn(...) pronta (recalcularia tudo) e a atenção com o cache da própria biblioteca (a resposta do projeto)
_FORBIDDEN_KV = (MultiHeadAttention.forward, attend_cached)


def _disambiguate_first_key(c: Checker, fn, mats: list, vieses: list, n_heads: int, X: np.ndarray,
                            label: str) -> str:
    """No passo 1, só a 1ª chave é também o cache antigo sem o token novo: o passo 2 (chamado sem entrar no
    relatório) diz qual dos dois enganos foi. Devolve a dica."""
    if len(X) < 3:
        return mistake("new_token_missing_from_cache", f"{_SEM_O_NOVO} (Ou: {_SO_A_PRIMEIRA})")
    attn = MultiHeadAttention.from_weights(*mats, *vieses, n_heads=n_heads)
    K2, V2 = _kv(attn, X[:2])
    ret = c.call(label, fn, attn, X[2:3], K2, V2, names=("attn", "x_new", "K_cache", "V_cache"),
                 forbidden=_FORBIDDEN_KV)
    try:
        out2 = np.asarray(ret[0], dtype=float)
    except (TypeError, ValueError, IndexError, KeyError):
        out2 = None
    attn = MultiHeadAttention.from_weights(*mats, *vieses, n_heads=n_heads)
    variantes = dict(_passo_variantes(attn, X[:3], 2)[1:3])
    for dica in (_SO_A_PRIMEIRA, _SEM_O_NOVO):
        v = variantes[dica]
        if out2 is not None and out2.shape == v.shape and np.allclose(out2, v, atol=1e-8):
            return dica
    return mistake("new_token_missing_from_cache", f"{_SEM_O_NOVO} (Ou: {_SO_A_PRIMEIRA})")


@check("Projeto (a atenção com KV cache)")
def projeto(c: Checker, fn):
    """Confere ``fn(attn, x_new, K_cache, V_cache) -> (saida, K_cache_novo, V_cache_novo)`` passo a passo.

    ``attn`` é uma :class:`MultiHeadAttention` com vieses; ``x_new`` (1, d_model) é o token novo;
    ``K_cache``, ``V_cache`` (n_heads, t, d_k) são as chaves e os valores dos t tokens anteriores (t = 0 no
    primeiro passo). A saída de cada passo precisa ser a última linha da atenção causal recalculada sobre os
    t + 1 tokens, e o cache novo, o antigo com a chave e o valor do token novo no fim. Casos: 2 e 4 cabeças,
    7 e 5 passos. Reconhece o cache esquecido (só o token novo), o token novo fora do próprio cache, a máscara
    ``causal_mask(1, t + 1)`` (só a 1ª chave), a escala que falta ou errada, os vieses que faltam, a falta de W_o,
    a softmax sobre as cabeças, o cache não atualizado e o token novo no começo do cache, cada um com a sua dica.

    O enunciado proíbe a ``attn(...)`` pronta (o ``forward`` da ``MultiHeadAttention``, que recalcularia tudo) e a
    ``atencao.sampling.attend_cached`` (a resposta do projeto, escrita na biblioteca para a geração da Aula 6): a
    atenção de cada cabeça pode ser a conta com ``softmax`` ou ``scaled_dot_product_attention(q, K, V)``.
    """
    rng = np.random.default_rng(case_seed(2023))
    for n, d_model, n_heads in c.cases([(7, 8, 2), (5, 16, 4)]):
        mats = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        vieses = [0.2 * rng.normal(size=d_model) for _ in range(4)]
        X = rng.normal(size=(n, d_model))
        d_k = d_model // n_heads
        K_c, V_c = np.zeros((n_heads, 0, d_k)), np.zeros((n_heads, 0, d_k))
        for t in range(n):
            label = f"{n_heads} cabeças, d_model={d_model}, passo {t} (cache com {t} token(s))"
            attn = MultiHeadAttention.from_weights(*mats, *vieses, n_heads=n_heads)
            ret = c.returns(c.call(label, fn, attn, X[t:t + 1], K_c, V_c,
                                   names=("attn", "x_new", "K_cache", "V_cache"),
                                   forbidden=_FORBIDDEN_KV),
                            label, "saida", "K_cache", "V_cache", stop=True)
            out, K_novo, V_novo = arrays = [c.array(r, f"{label}: saida, K_cache e V_cache são arrays") for r in ret]
            if any(a is None for a in arrays):  # o ❌ de cada item que não é array, e o fim da verificação
                raise StopCheck()
            attn = MultiHeadAttention.from_weights(*mats, *vieses, n_heads=n_heads)  # a referência, depois
            ref = attn(X[: t + 1], mask=causal_mask(t + 1))[0][t:t + 1]  # a última linha, recalculando tudo
            K_ref, V_ref = _kv(attn, X[: t + 1])
            hint = None
            if out.shape == ref.shape:
                hint = matching_hint(out, [(h, v) for h, v in _passo_variantes(attn, X[: t + 1], t) if v is not None],
                                     ref, atol=1e-8)
                if hint == _SEM_O_NOVO and t == 1:
                    hint = _disambiguate_first_key(c, fn, mats, vieses, n_heads, X, label)
            else:
                hint = f"a saída é a do token novo: forma (1, d_model) = (1, {d_model})."
            c.close(out, ref, f"{label}: a saída = a última linha da atenção recalculada", atol=1e-8, stop=True,
                    hint=hint or "q do token novo contra K_cache e V_cache já com o token novo, por cabeça; depois "
                                 "junte as cabeças e aplique W_o.")
            for got, esperado, nome, W in ((K_novo, K_ref, "K_cache", attn.W_k), (V_novo, V_ref, "V_cache", attn.W_v)):
                sem_vies = np.concatenate([esperado[:, :-1], split_heads(X[t:t + 1] @ W, n_heads)], axis=1)
                dica = (f"devolva o cache com o token novo: forma (n_heads, t + 1, d_k) = {esperado.shape}."
                        if got.shape != esperado.shape else
                        mistake("new_token_at_cache_start", "o token novo entra no FIM do cache (axis=1): a ordem do "
                                "cache é a ordem das posições.")
                        if np.allclose(got, np.concatenate([esperado[:, -1:], esperado[:, :-1]], axis=1)) else
                        mistake("cache_without_bias",
                        f"{'a chave' if nome == 'K_cache' else 'o valor'} do token novo entrou no cache sem o viés: "
                        f"{'k = x_new @ W_k + b_k' if nome == 'K_cache' else 'v = x_new @ W_v + b_v'}.")
                        if np.allclose(got, sem_vies) else
                        f"{nome} novo = o antigo com {'a chave' if nome == 'K_cache' else 'o valor'} do token novo "
                        "no fim (a projeção com o viés, dividida em cabeças: forma (n_heads, 1, d_k)).")
                c.close(got, esperado, f"{label}: {nome} novo", atol=1e-8, hint=dica, stop=True)
            K_c, V_c = K_ref, V_ref  # o próximo passo parte do cache certo


protect()  # a foto da biblioteca, antes do código do aluno
