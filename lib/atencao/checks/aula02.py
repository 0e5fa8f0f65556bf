"""Verificações da Aula 2 (Módulo 6): ``04-exercicios`` e ``05-projeto``.

Cada função recebe a **função** escrita pelo aluno, roda-a em vários casos (inclusive de borda),
compara com a implementação da biblioteca e imprime o relatório.
"""

from __future__ import annotations

import re

import numpy as np

from ..attention import attend, attend_checked, scaled_dot_product_attention, self_attention, softmax, softmax_
from ..embeddings import embed_hashed, tokenize
from ..masks import causal_mask
from ..multihead import MultiHeadAttention, merge_heads, split_heads
from ..projections import SelfAttention
from ..training import TinyAttentionModel
from .framework import (
    UNSTABLE_SOFTMAX_HINT,
    Checker,
    StopCheck,
    call_frozen,
    case_seed,
    check,
    describe,
    is_numpy_shape_error,
    matching_hint,
    mistake,
    passou,
    protect,
)
from .multihead_hints import diagnose_heads

__all__ = ["passou", "aquecimento_softmax", "exercicio_1_passo_1", "exercicio_1", "exercicio_2", "exercicio_3",
           "projeto"]


# o enunciado: "não use atencao.scaled_dot_product_attention nem atencao.MultiHeadAttention dentro das suas funções"
# (e nem as peças de dentro delas, que já fazem a conta: attend, self_attention; na multicabeça, também
# split_heads e merge_heads, que são a etapa "dividir em cabeças" do exercício)
_FORBIDDEN = (scaled_dot_product_attention, attend, attend_checked, self_attention, MultiHeadAttention, SelfAttention)
_FORBIDDEN_MHA = (*_FORBIDDEN, split_heads, merge_heads)


# o TinyAttentionModel da Aula 5: a perda dele escreve a softmax por extenso (o gradiente da entropia cruzada)
_FORBIDDEN_SOFTMAX = (softmax, softmax_, scaled_dot_product_attention, attend, attend_checked, self_attention,
                      TinyAttentionModel)


@check("Aquecimento (a sua softmax)")
def aquecimento_softmax(c: Checker, softmax_fn):
    """Confere ``softmax_fn(z, axis=-1) -> ndarray`` (mesma forma de ``z``), escrita com NumPy.

    Casos: um vetor; logits grandes ``[1000, 1001, 1002]`` e muito negativos (a softmax precisa subtrair o
    máximo); uma entrada ``-inf`` (peso 0); uma linha toda ``-inf`` (zeros, sem NaN); uma matriz por linha
    e por coluna (``axis=0``); linhas em escalas muito diferentes (o máximo é o de cada linha); três eixos
    com ``axis=1``; uma lista. Fonte: Aula 2, ``02-codigo``, passo 1.
    """
    for label, z, axis in c.cases(_softmax_cases()):
        kw = {} if axis is None else {"axis": axis}
        got = c.array(c.call(label, softmax_fn, z, names=("z",), forbidden=_FORBIDDEN_SOFTMAX, **kw),
                      f"{label}: devolve um array", stop=True)
        zz, eixo = np.asarray(z, dtype=float), -1 if axis is None else axis
        ref = softmax(zz, axis=eixo)
        c.close(got, ref, label, hint=_softmax_hint(zz, eixo, got, ref))


def _softmax_cases() -> list:
    """Os casos do aquecimento, ``(rótulo, z, axis)``. No notebook, os de sempre; na conferência da correção, os
    escritos à mão (logits grandes, ``-inf``, linhas em escalas diferentes, a lista) também são sorteados, com o
    mesmo papel cada um: uma tabela das respostas do notebook não passa."""
    seed = case_seed(None)
    rng = np.random.default_rng(21 if seed is None else seed)
    M, T = rng.normal(size=(3, 4)) * 2, rng.normal(size=(2, 3, 4))
    if seed is None:
        return [
            ("vetor [1, 2, 3]", np.array([1.0, 2.0, 3.0]), None),
            ("logits grandes [1000, 1001, 1002]", np.array([1000.0, 1001.0, 1002.0]), None),
            ("logits muito negativos [-1000, -1001, -1002]", np.array([-1000.0, -1001.0, -1002.0]), None),
            ("uma entrada -inf: [0, -inf, 1]", np.array([0.0, -np.inf, 1.0]), None),
            ("matriz (3, 4), cada linha (axis=-1)", M, -1),
            ("matriz (3, 4), cada coluna (axis=0)", M, 0),
            ("matriz com uma linha toda -inf", np.array([[1.0, 2.0, 0.5], [-np.inf, -np.inf, -np.inf]]), -1),
            ("linhas em escalas diferentes [[0, 1], [-1000, -999]]", np.array([[0.0, 1.0], [-1000.0, -999.0]]), -1),
            ("três eixos (2, 3, 4), axis=1", T, 1),
            ("uma lista [0.5, 0.5, 2.0]", [0.5, 0.5, 2.0], None),
        ]

    def vetor(n: int, escala: float = 2.0) -> np.ndarray:
        return np.round(escala * rng.normal(size=n), 2)

    def longe(n: int) -> np.ndarray:
        """Logits perto de ±800 a ±5000, em passos de 0,5: exatos também em float32 (uma softmax em float32,
        válida, dá o mesmo resultado, como com 1000, 1001, 1002)."""
        return np.round(2 * (rng.uniform(800, 5000) + 2 * rng.normal(size=n))) / 2

    grande = longe(int(rng.integers(3, 6)))  # exp(grande) estoura
    negativo = -longe(int(rng.integers(3, 6)))  # exp(negativo) some
    com_inf = vetor(int(rng.integers(3, 7)))
    com_inf[rng.integers(len(com_inf))] = -np.inf
    toda_inf = vetor(int(rng.integers(2, 5)) * 3).reshape(-1, 3)
    toda_inf[rng.integers(len(toda_inf))] = -np.inf
    k = int(rng.integers(2, 5))  # a 2ª linha bem abaixo da 1ª: o máximo do array inteiro a zera (0/0)
    escalas = np.stack([np.round(2 * vetor(k)) / 2, -longe(k)])
    lista, simples = vetor(int(rng.integers(3, 6))).tolist(), vetor(int(rng.integers(2, 7)))
    fmt = lambda a: str(np.asarray(a).tolist())  # noqa: E731
    return [
        (f"vetor {fmt(simples)}", simples, None),
        (f"logits grandes {fmt(grande)}", grande, None),
        (f"logits muito negativos {fmt(negativo)}", negativo, None),
        (f"uma entrada -inf: {fmt(com_inf)}", com_inf, None),
        ("matriz (3, 4), cada linha (axis=-1)", M, -1),
        ("matriz (3, 4), cada coluna (axis=0)", M, 0),
        (f"matriz com uma linha toda -inf: {fmt(toda_inf)}", toda_inf, -1),
        (f"linhas em escalas diferentes {fmt(escalas)}", escalas, -1),
        ("três eixos (2, 3, 4), axis=1", T, 1),
        (f"uma lista {lista}", lista, None),
    ]


def _softmax_hint(z, axis, got, ref) -> str:
    """A dica para uma softmax errada: os sintomas (forma, NaN/inf), depois a tabela dos enganos típicos, cada um
    calculado com a conta errada (:func:`matching_hint`), depois as somas que não dão 1."""
    if got.shape != ref.shape:
        return mistake("softmax_wrong_shape", "a softmax devolve um array com a mesma forma da entrada (um peso por "
                       "posição).")
    if not np.isfinite(got).all():
        if np.isinf(z).all(axis=axis).any():
            return (mistake("all_masked_row_nan", "numa linha toda -inf, o máximo é -inf e z - máximo dá NaN: troque o "
                            "máximo não finito por 0 (np.where(np.isfinite(m), m, 0)) e devolva zeros quando a soma "
                            "for 0."))
        return UNSTABLE_SOFTMAX_HINT
    m = z.max(axis=axis, keepdims=True)
    mistakes = [(mistake("missing_normalization", "faltou dividir pela soma: os pesos de cada linha precisam somar 1."),
                 np.exp(z - np.where(np.isfinite(m), m, 0)))]
    # a conta certa, mas ao longo de outro eixo: o axis recebido não foi usado
    mistakes += [(mistake("axis_ignored",
                  f"a softmax foi feita ao longo do eixo {outro}, não do eixo pedido (axis={axis}): o argumento "
                  f"axis foi ignorado. Use-o no máximo e na soma: np.max(z, axis=axis, keepdims=True) e "
                  f"e.sum(axis=axis, keepdims=True)."), softmax(z, axis=outro))
                 for outro in range(z.ndim) if outro != axis % z.ndim]
    hint = matching_hint(got, mistakes, atol=1e-6)
    if hint is None and z.ndim > 1 and (np.abs(got.sum(axis=axis) - 1) > 1e-6).any():
        hint = (mistake("global_max_subtracted", "alguma linha não soma 1: o máximo subtraído precisa ser o de cada "
                        "linha (np.max(z, axis=axis, keepdims=True)), não o do array inteiro."))
    if hint is None and z.ndim > 1 and np.isfinite(z).all() and np.allclose(
            got, np.exp(z - z.max()) / np.exp(z - z.max()).sum()):
        hint = mistake("global_sum", "a soma foi sobre o array inteiro: some só ao longo do eixo, com e.sum(axis=axis, "
                       "keepdims=True).")
    return hint or "softmax(z) = exp(z - máximo) / soma de exp(z - máximo), ao longo de axis (com keepdims=True)."


@check("Exercício 1, passo 1 (a máscara causal)")
def exercicio_1_passo_1(c: Checker, mask_fn):
    """Confere ``mask_fn(n) -> ndarray bool (n, n)``: a máscara causal na convenção do curso, ``True`` = pode
    olhar (a diagonal e abaixo dela). Casos: n = 1, 2, 5, 7 e 13 no notebook; na correção, n = 1 e quatro n
    sorteados (:func:`_mask_sizes`), até 2499. Reconhece o outro triângulo, a diagonal
    bloqueada e a convenção invertida. Fonte: Aula 2, ``04-exercicios`` (a atenção causal do decodificador).
    """
    for n in c.cases(_mask_sizes()):
        label = f"n = {n}"
        got = c.call(label, mask_fn, n, names=("n",), forbidden=(causal_mask,))
        c.require(isinstance(got, np.ndarray), f"{label}: devolve um array do NumPy", "um np.ndarray",
                  describe(got), "faltou um `return`?" if got is None else
                  "devolva o array (np.tril(...)), não uma lista: a atenção usa ~mask e mask.shape.")
        c.require(got.shape == (n, n), f"{label}: forma (n, n)", f"({n}, {n})", describe(got),
                  "uma linha por consulta e uma coluna por chave: np.ones((n, n), dtype=bool) é um começo.")
        c.require(got.dtype == bool, f"{label}: valores True/False (dtype bool)", "dtype bool", f"dtype {got.dtype}",
                  "crie a máscara com dtype=bool, por exemplo np.tril(np.ones((n, n), dtype=bool)); com 0/1, o "
                  "~mask da atenção não inverte.")
        ref = np.tril(np.ones((n, n), dtype=bool))
        c.expect(np.array_equal(got, ref), f"{label}: True na diagonal e abaixo dela (j ≤ i)", _format_mask(ref),
                 _format_mask(got), _causal_mask_hint(c, mask_fn, got, ref))


def _causal_mask_hint(c: Checker, mask_fn, arr: np.ndarray, ref: np.ndarray) -> str:
    """A dica de uma máscara causal errada: a primeira da tabela dos enganos típicos que ``arr`` reproduz (o outro
    triângulo, a convenção invertida, a diagonal bloqueada, nada bloqueado)."""
    n = len(ref)
    sem_diagonal = np.tril(np.ones((n, n), dtype=bool), k=-1)
    if n == 1 and not arr.any():  # [[False]]: a máscara invertida e a sem diagonal dão a mesma matriz com n = 1;
        invertida = _inverted_mask(c, mask_fn)  # um n maior diz qual das duas a função faz
    else:
        invertida = np.array_equal(arr, ~ref) and not np.array_equal(arr, sem_diagonal)
    com_n_1 = " Com n = 1, a máscara é [[True]]" if n == 1 else ""
    mistakes = [
        (n > 1 and np.array_equal(arr, ref.T),
         mistake("upper_triangle", "o outro triângulo: com True acima da diagonal, cada token olharia os que vêm "
                 "DEPOIS dele (o futuro). A linha i pode olhar as colunas j ≤ i.")),
        (invertida,
         mistake("inverted_mask", "a máscara está invertida: aqui True = pode olhar e False = bloqueado, o contrário "
                 "da convenção do PyTorch (em que np.triu(..., k=1) marca com True o que fica bloqueado). Use "
                 "np.tril(np.ones((n, n), dtype=bool)), ou "
                 "inverta a sua com ~.").extended(com_n_1 and com_n_1 + ": cada token pode olhar para si mesmo.")),
        (np.array_equal(arr, sem_diagonal),
         mistake("diagonal_blocked", "a diagonal precisa ser True: cada token pode olhar para si mesmo (j ≤ i, não j < "
                 "i; np.tril(..., k=0), sem o k=-1).").extended(com_n_1 and com_n_1 + ".")),
        (n > 1 and arr.all(), mistake("nothing_blocked", "nada foi bloqueado: acima da diagonal "
                                      "(j > i) deve ser False.")),
    ]
    return next((dica for reproduz, dica in mistakes if reproduz), "np.tril(np.ones((n, n), dtype=bool))")


def _mask_sizes() -> tuple:
    """Os n do exercício 1, passo 1: no notebook, sempre 1, 2, 5, 7 e 13; na conferência da correção, n = 1 e um
    n sorteado em cada faixa, 2–7, 8–64, 65–399 e 400–2499. Uma tabela de máscaras montada na célula não passa:
    a de 1 a 64 falha nos dois últimos casos, e uma que cobrisse até 2499 teria uns 5 GB. Os casos crescem: uma
    lista no lugar do array falha logo no primeiro (e a máscara de 2499 × 2499, 6 MB, cabe na resposta do processo
    do aluno)."""
    seed = case_seed(None)
    if seed is None:
        return 1, 2, 5, 7, 8 + int(np.random.default_rng(12).integers(0, 9))
    rng = np.random.default_rng(seed)
    return (1, *(int(rng.integers(lo, hi)) for lo, hi in ((2, 8), (8, 65), (65, 400), (400, 2500))))


def _inverted_mask(c: Checker, mask_fn, n: int = 4) -> bool:
    """A máscara de ``mask_fn(n)`` é a invertida (``True`` = bloqueado, a convenção do PyTorch)? Para o caso
    n = 1, em que a invertida e a sem diagonal são a mesma ``[[False]]``; um erro com esse n conta como não."""
    try:
        outra = c.call(f"n = {n}", mask_fn, n, names=("n",), forbidden=(causal_mask,))
    except StopCheck:  # uma função pronta ou uma entrada alterada: o ❌ já foi registrado
        raise
    except Exception:  # noqa: BLE001 - o erro aparece no caso em que ele acontecer
        return False
    ref = np.tril(np.ones((n, n), dtype=bool))
    return isinstance(outra, np.ndarray) and outra.shape == (n, n) and np.array_equal(outra, ~ref)


def _format_mask(m, limit: int = 16) -> str:
    """A máscara como linhas de 0 e 1; acima de ``limit`` linhas ou colunas (um n sorteado na correção), só o
    canto ``limit`` × ``limit``, com … no que fica de fora."""
    m = np.atleast_2d(m)
    linhas = [" " * 17 + " ".join("1" if v else "0" for v in linha[:limit]) + (" …" if len(linha) > limit else "")
              for linha in m[:limit]]
    return "\n" + "\n".join(linhas + ([" " * 17 + "…"] if len(m) > limit else []))


@check("Exercício 1, passo 2 (a atenção com máscara)")
def exercicio_1(c: Checker, attention_fn):
    """Confere ``attention_fn(Q, K, V, mask=None) -> (saida, pesos)`` com máscara (``True`` = pode olhar).

    Casos: sem máscara; máscara causal; máscara arbitrária com n_q ≠ n_k; uma linha toda bloqueada
    (deve dar pesos e saída zero, sem NaN); pontuações grandes (a softmax precisa ser estável).
    Reconhece a máscara invertida e a máscara aplicada depois da softmax.
    """
    rng = np.random.default_rng(case_seed(11))
    Q, K, V = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    arbitrary = rng.random((3, 5)) > 0.4
    arbitrary[:, 0] = True
    all_blocked = causal_mask(4, 5).copy()
    all_blocked[2] = False
    cases = [
        ("sem máscara", Q, K, V, None),
        ("máscara causal 5×5", Q, K, V, causal_mask(5)),
        ("máscara 3×5 qualquer (n_q ≠ n_k)", Q[:3], K, V, arbitrary),
        ("linha 2 toda bloqueada", Q[:4], K, V, all_blocked),
        ("pontuações grandes, máscara causal", 60 * Q, 60 * K, V, causal_mask(5)),
    ]
    bloqueio_ok = somas_ok = True
    for label, q, k, v, mask in c.cases(cases):
        out, A = c.pair(c.call(label, attention_fn, q, k, v, names=("Q", "K", "V"), forbidden=_FORBIDDEN, mask=mask),
                        label, stop=True)
        ref_out, ref_A = scaled_dot_product_attention(q, k, v, mask=mask)
        ok = c.close(A, ref_A, f"{label}: pesos", hint=_masked_weights_hint(label, q, k, v, mask, A, ref_A))
        c.close(out, ref_out, f"{label}: saída", hint=(
            "a saída é pesos @ V." if ok else "a saída depende dos pesos: corrija primeiro os pesos (acima)."))
        c.stop_if_failed()
        if mask is not None:
            livres = mask.any(axis=-1)  # linhas com ao menos uma chave permitida
            bloqueio_ok &= bool(np.all(A[~mask] == 0))
            somas_ok &= bool(np.allclose(A[livres].sum(axis=-1), 1.0, rtol=0, atol=1e-6))  # float32 também
    c.expect(bloqueio_ok and somas_ok, "posições bloqueadas têm peso exatamente 0 e as demais linhas somam 1",
             hint="bloqueie com -np.inf antes da softmax (um número só \"bem negativo\", como -100, deixa um "
                  "peso minúsculo, mas não zero, nas posições bloqueadas).")


def _masked_weights_hint(label: str, q, k, v, mask, A, ref_A) -> str:
    """A dica dos pesos errados da atenção com máscara: a forma, os enganos da conta (:func:`_mask_hint`) e os do
    uso da máscara (:func:`_mask_use_hint`), nessa ordem."""
    if A.shape != ref_A.shape:
        return mistake("wrong_weights_shape",
               f"os pesos têm forma (n_q, n_k) = {ref_A.shape}: uma linha por consulta, uma coluna por chave.")
    hint = _mask_hint(q, k, mask, A, ref_A, v.shape[-1])
    if hint is None and mask is not None:
        hint = _mask_use_hint(label, q, k, v, mask, A)
    return hint or "pontuações = Q @ K.T / sqrt(d_k); np.where(mask, pontuações, -np.inf); softmax em cada linha."


def _mask_use_hint(label: str, q, k, v, mask, A) -> str | None:
    """A tabela dos enganos no uso da máscara, cada um reconhecido pelo que ele produz (calculado só quando os de
    cima não bateram): a máscara invertida, transposta, aplicada depois da softmax, a linha toda bloqueada com NaN
    ou com peso, e um número finito no lugar de -inf."""
    limpo = np.nan_to_num(A)

    def pesos(m=None):
        return scaled_dot_product_attention(q, k, v, mask=m)[1]

    mistakes = (
        (lambda: np.allclose(limpo, pesos(~mask), atol=1e-6),
         mistake("inverted_mask", "a máscara está invertida: aqui True = pode olhar, False = bloqueado (vira -inf).")),
        (lambda: mask.shape[0] == mask.shape[1] and np.allclose(limpo, pesos(mask.T), atol=1e-6),
         mistake("mask_transposed", "a máscara foi usada transposta (o outro triângulo): mask[i, j] diz se a consulta "
                 "i (linha) pode olhar a chave j (coluna); use a máscara recebida como está.")),
        (lambda: np.allclose(A, pesos() * mask, atol=1e-6),
         mistake("mask_after_softmax", "a máscara precisa entrar ANTES da softmax (pontuação bloqueada = -inf), não "
                 "depois.")),
        (lambda: np.isnan(A).any(),
         mistake("all_masked_row_nan", "a linha com todas as chaves bloqueadas deu NaN (0/0); trate esse caso, por "
                 "exemplo usando atencao.softmax, que devolve zeros numa linha toda -inf.")),
        (lambda: label.startswith("linha"),
         mistake("all_masked_row_weight", "com todas as chaves bloqueadas, os pesos "
                 "e a saída dessa linha devem ser 0.")),
        (lambda: (limpo[~mask] > 1e-6).any(),
         mistake("finite_fill_value", "as posições bloqueadas receberam peso: troque as pontuações delas por -np.inf, "
                 "não por um número finito como -50 (com pontuações grandes, ele deixa de ser \"bem negativo\").")),
    )
    return next((dica for reproduz, dica in mistakes if reproduz()), None)


def _mask_hint(q, k, mask, A, ref_A, d_v: int = 0) -> str | None:
    """Dica para os enganos comuns da atenção com máscara que não dependem da máscara estar invertida: a máscara
    depois da softmax, a softmax que estoura e os enganos das pontuações (:func:`_scores_hint`), nessa ordem."""
    if np.allclose(np.nan_to_num(A), ref_A, atol=1e-6):
        return None
    livres = np.ones(A.shape[0], dtype=bool) if mask is None else mask.any(axis=-1)  # linhas com o que olhar
    # a máscara depois da softmax antes do teste de estouro: com pontuações grandes, as linhas dela também
    # deixam de somar 1
    hint = None if mask is None else _after_softmax_hint(q, k, mask, A, ref_A)
    if hint is None and np.abs(q @ k.T).max() > 700 and not (np.isfinite(A).all()
                                                           and np.allclose(A[livres].sum(axis=-1), 1)):
        hint = UNSTABLE_SOFTMAX_HINT  # NaN, ou linhas zeradas por um nan_to_num por cima do NaN
    return hint or _scores_hint(q, k, mask, A, d_v)


def _after_softmax_hint(q, k, mask, A, ref_A) -> str | None:
    """A máscara aplicada depois da softmax, renormalizando ou não (:func:`matching_hint`)."""
    depois = softmax(q @ k.T / np.sqrt(q.shape[-1])) * mask
    soma = depois.sum(axis=-1, keepdims=True)
    renormalizada = np.divide(depois, soma, out=np.zeros_like(depois), where=soma > 0)
    # a renormalizada primeiro: com pontuações grandes as duas coincidem (pesos 0 ou 1), e só quem
    # renormaliza chega a esse caso (sem renormalizar, a máscara causal já não passa)
    mistakes = [(mistake("mask_after_softmax_renormalized", "a máscara entrou DEPOIS da softmax: zerar os pesos "
                         "bloqueados e renormalizar não é o mesmo. Com pontuações grandes, a softmax sobre todas as "
                         "chaves dá peso 0 às permitidas quando a maior pontuação é de uma bloqueada, e não sobra nada "
                         "para renormalizar. A máscara precisa entrar ANTES da softmax: np.where(mask, pontuações, "
                         "-np.inf), e só então a softmax."), renormalizada),
                (mistake("mask_after_softmax", "a máscara precisa entrar ANTES da softmax (pontuação bloqueada = "
                         "-inf), não depois: zerar os pesos bloqueados depois da softmax deixa as linhas somando menos "
                         "de 1."), depois)]
    return matching_hint(np.nan_to_num(A), mistakes, ref_A, atol=1e-6)


def _scores_hint(q, k, mask, A, d_v: int) -> str | None:
    """A tabela dos enganos nas pontuações (a máscara ignorada, a escala errada, a softmax por coluna, um número
    finito no lugar de -inf), cada um calculado com a conta errada; antes, a softmax que faltou."""
    scores = q @ k.T / np.sqrt(q.shape[-1])
    blocked = np.zeros_like(scores, dtype=bool) if mask is None else ~mask

    def com(pont, preenche=-np.inf, axis=-1):
        return softmax(np.where(blocked, preenche, pont), axis=axis)

    if (np.nan_to_num(A) < -1e-9).any() or np.allclose(np.nan_to_num(A, neginf=0.0), np.where(blocked, 0.0, scores)):
        return mistake("missing_softmax", "os pesos têm valores negativos: parece que faltou a softmax (a função "
                       "devolveu as pontuações).")
    mistakes = [
        (mistake("mask_ignored", "a máscara foi ignorada: troque as pontuações bloqueadas (mask == False) por -inf "
                 "ANTES da softmax, "
                 "com np.where(mask, pontuações, -np.inf)."), None if mask is None else softmax(scores)),
        (mistake("no_scale", "parece que faltou dividir as pontuações por sqrt(d_k)."), com(q @ k.T)),
        (mistake("scale_by_n_k", "dividiu pela raiz do número de chaves (n_k); o certo é sqrt(d_k), a dimensão das "
                 "consultas e chaves."),
         com(q @ k.T / np.sqrt(k.shape[0]))),
        (mistake("scale_by_d_v", "dividiu pela raiz de d_v (a dimensão dos valores); o certo é sqrt(d_k), a dimensão "
                 "das consultas e chaves."),
         com(q @ k.T / np.sqrt(d_v or 1))),
        (mistake("softmax_by_column", "a softmax foi aplicada por "
                 "coluna; aplique em cada linha (axis=-1)."), com(scores, axis=0)),
        (mistake("finite_fill_value", "as posições bloqueadas receberam um número finito (0, por exemplo) em vez de "
                 "-np.inf: a softmax ainda dá peso a elas."), com(scores, 0.0)),
    ]
    if blocked.all(axis=-1).any():  # uma linha toda bloqueada: o NaN dela (0/0) conta como 0 dos dois lados
        return matching_hint(np.nan_to_num(A), [(d, None if c is None else np.nan_to_num(c)) for d, c in mistakes],
                             atol=1e-6)
    return matching_hint(A, mistakes, atol=1e-6)


def _mha_reference(X, W_q, W_k, W_v, W_o, n_heads):
    d_model = X.shape[-1]
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_q, W_k, W_v))
    d = d_model // n_heads
    A = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d))
    heads = A @ V
    concat = np.swapaxes(heads, -2, -3).reshape(*X.shape[:-1], d_model)
    return concat @ W_o, A


@check("Exercício 2 (atenção multicabeça do zero)")
def exercicio_2(c: Checker, mha_fn):
    """Confere ``mha_fn(X, W_q, W_k, W_v, W_o, n_heads) -> (saida, pesos)``.

    ``saida`` (n, d_model) e ``pesos`` (n_heads, n, n). Casos: 2, 4 e 1 cabeça(s), um token só e
    pontuações grandes (a softmax precisa ser estável).
    Reconhece a escala por sqrt(d_model) em vez de sqrt(d_k), a divisão errada em cabeças (reshape sem
    transpor) e a falta da projeção final ``W_o``.
    """
    rng = np.random.default_rng(case_seed(5))
    for n, d_model, n_heads, escala in c.cases(((6, 8, 2, 1), (5, 16, 4, 1), (4, 6, 1, 1), (1, 8, 4, 1),
                                                (5, 8, 2, 60))):
        X = escala * rng.normal(size=(n, d_model))  # o último caso: pontuações grandes
        W_q, W_k, W_v, W_o = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4))
        label = f"n={n}, d_model={d_model}, n_heads={n_heads}"
        (out, A), (X, W_q, W_k, W_v, W_o, _) = call_frozen(
            c, label, mha_fn, X, W_q, W_k, W_v, W_o, n_heads, names=("X", "W_q", "W_k", "W_v", "W_o", "n_heads"),
            forbidden=_FORBIDDEN_MHA)
        ref_out, ref_A = _mha_reference(X, W_q, W_k, W_v, W_o, n_heads)
        ok = c.close(A, ref_A, f"{label}: pesos por cabeça (n_heads, n, n)",
                     hint=_heads_hint(X, W_q, W_k, n_heads, A, ref_A))
        c.close(out, ref_out, f"{label}: saída (n, d_model)", atol=1e-6,
                hint=_mha_output_hint(out, ref_out, W_o) if ok else
                "a saída depende dos pesos: corrija primeiro os pesos de cada cabeça (acima).")


def _heads_hint(X, W_q, W_k, n_heads: int, A, ref_A) -> str | None:
    """A dica dos pesos por cabeça errados: a forma, ou o engano reconhecido por :func:`diagnose_heads`."""
    if A.shape != ref_A.shape:
        return mistake("wrong_heads_shape", "os pesos devem ter forma (n_heads, n, n): uma matriz de atenção por "
                       "cabeça.")
    return None if np.allclose(A, ref_A, atol=1e-5) else diagnose_heads(X, W_q, W_k, n_heads, A)


def _mha_output_hint(out, ref_out, W_o) -> str | None:
    """A dica da saída errada com os pesos certos: a concatenação sem W_o, ou o passo a passo."""
    if out.shape != ref_out.shape or np.allclose(out, ref_out, atol=1e-6):
        return None
    without_W_o = ref_out @ np.linalg.inv(W_o)  # a concatenação das cabeças, antes de W_o
    return (matching_hint(out, [(mistake("missing_output_projection", "faltou projetar a concatenação das cabeças por "
                                         "W_o."), without_W_o)], atol=1e-5)
            or "concatene as cabeças de volta para (n, d_model), na ordem, e multiplique por W_o.")


@check("Exercício 3 (duas frases, a mesma camada)")
def exercicio_3(c: Checker, compare_fn):
    """Confere ``compare_fn(attn, X1, X2) -> (pesos1, pesos2, diferenca)``.

    ``attn`` é uma :class:`~atencao.SelfAttention`; ``diferenca`` é a média de ``|pesos1 - pesos2|``.
    Frases de tamanhos diferentes devem levantar ``ValueError``.
    """
    # sementes que não são a padrão (42): uma SelfAttention nova, criada dentro da função, não passa
    sentences = [(SelfAttention(8, 4, 4, seed=case_seed(2024)),
                  "o gato sentou sobre o tapete", "o cão deitou sobre a cama"),
                 (SelfAttention(8, 3, 5, seed=case_seed(99)), "a menina leu o livro", "a menina leu o jornal")]
    for attn, s1, s2 in c.cases(sentences):
        (_, X1), (_, X2) = embed_hashed(s1), embed_hashed(s2)
        label = f"“{s1}” × “{s2}”"
        result = c.call(label, compare_fn, attn, X1, X2, names=("attn", "X1", "X2"))
        ref1, ref2 = attn(X1)[1], attn(X2)[1]  # depois da chamada (attn volta ao que era, se foi alterada)
        A1, A2, diff = c.returns(result, label, "pesos1", "pesos2", "diferenca", stop=True)
        dica = _compare_hint(A1, A2, diff, ref1, ref2, attn(X1)[0])
        c.close(A1, ref1, f"{label}: pesos da 1ª frase",
                hint=dica or "use attn.forward(X1): a instância attn que a função recebe, não uma nova.")
        c.close(A2, ref2, f"{label}: pesos da 2ª frase",
                hint=dica or "use attn.forward(X2): a instância attn que a função recebe, não uma nova.")
        # a diferença arredondada a 3 casas (como se imprime) também vale
        c.close(diff, float(np.abs(ref1 - ref2).mean()), f"{label}: diferença média |pesos1 − pesos2|", atol=5e-4,
                rtol=0, hint=dica or "np.abs(pesos1 - pesos2).mean(): um número só.")
    _, X3 = embed_hashed(_short_sentence(len(X1)))
    c.expect_value_error("frases de tamanhos diferentes", compare_fn, attn, X1, X3, names=("attn", "X1", "X2"),
                         what="frases de tamanhos diferentes levantam o SEU ValueError, com mensagem clara",
                         expected="ValueError levantado pela sua função, com uma mensagem", with_message=True,
                         hint="compare X1.shape[0] com X2.shape[0] ANTES de calcular e levante ValueError com uma "
                              "mensagem sua, por exemplo raise ValueError(f\"X1 tem {X1.shape[0]} tokens e X2 tem "
                              "{X2.shape[0]}\") (o erro de broadcast do NumPy, um ValueError vazio ou outro tipo de "
                              "erro não contam).")


def _compare_hint(A1, A2, diff, ref1, ref2, saida1) -> str | None:
    """Dica para os itens trocados ou errados da tupla do exercício 3, ou ``None``."""
    def igual(a, b):
        try:
            a = np.asarray(a, dtype=float)
        except (TypeError, ValueError):
            return False
        return a.shape == np.shape(b) and np.allclose(a, b, atol=1e-6)

    if igual(A1, ref2) and igual(A2, ref1):
        return mistake("sentences_swapped", "os pesos das duas frases estão trocados: devolva (pesos1, pesos2, "
                       "diferenca), a 1ª frase primeiro.")
    if igual(A1, saida1):
        return (mistake("output_instead_of_weights", "a função devolveu a saída da camada, o 1º item de attn(X1); os "
                        "pesos são o 2º: `_, pesos1 = attn(X1)`."))
    if np.ndim(A1) == 0 and np.ndim(diff) == 2:
        return mistake("return_order_swapped", "a ordem do return é (pesos1, pesos2, diferenca): a diferença (um "
                       "número) vem por último.")
    return None


# as palavras das frases sorteadas na conferência da correção (qualquer palavra tem vetor em embed_hashed) e as
# compostas com hífen, que são uma palavra para frase.split() e dois ou três tokens para atencao.tokenize
_WORDS = ("o", "a", "um", "uma", "gato", "cão", "menina", "menino", "livro", "porta", "janela", "mesa", "sol", "lua",
          "mar", "rio", "casa", "praia", "dormiu", "correu", "leu", "abriu", "fechou", "molhou", "cantou", "pulou",
          "cedo", "tarde", "hoje", "sobre", "com", "perto", "longe", "azul", "velho", "nova")
_HYPHENATED = ("guarda-chuva", "beija-flor", "couve-flor", "arco-íris", "segunda-feira", "bem-te-vi",
               "pé-de-moleque", "guarda-roupa", "porta-voz", "pica-pau", "sexta-feira", "mico-leão-dourado")


def _words(rng, n: int) -> list:
    return [str(w) for w in rng.choice(_WORDS, size=n)]


def _short_sentence(n_other: int) -> str:
    """A frase do exercício 3 com outro número de tokens que ``n_other``: no notebook, “uma frase curta”; na
    conferência da correção, de 1 a 12 palavras sorteadas (um tamanho escrito à mão na função não passa)."""
    seed = case_seed(None)
    if seed is None:
        return "uma frase curta"
    rng = np.random.default_rng(seed)
    n = int(rng.choice([k for k in range(1, 13) if k != n_other]))
    return " ".join(_words(rng, n))


def _length_pairs() -> list:
    """Os pares de frases do projeto que medem o tamanho pelos tokens: o mesmo número de tokens e números de
    palavras diferentes (não levanta), tamanhos diferentes (levanta) e o mesmo número de palavras com números de
    tokens diferentes (levanta). No notebook, os de sempre; na conferência da correção, sorteados."""
    seed = case_seed(None)
    if seed is None:
        return [("o guarda-chuva molhou", "o gato dormiu cedo"),
                ("o gato dormiu", "uma frase bem mais comprida que a outra"),
                ("o gato dormiu", "o guarda-chuva molhou")]
    rng = np.random.default_rng(seed)
    antes, depois = _words(rng, int(rng.integers(1, 3))), _words(rng, int(rng.integers(1, 3)))
    composta = " ".join([*antes, str(rng.choice(_HYPHENATED)), *depois])
    mesmos_tokens = " ".join(_words(rng, len(tokenize(composta))))
    k = int(rng.integers(2, 6))
    curta, longa = " ".join(_words(rng, k)), " ".join(_words(rng, k + int(rng.integers(1, 6))))
    simples = _words(rng, k)
    hifen = simples.copy()
    hifen[int(rng.integers(k))] = str(rng.choice(_HYPHENATED))
    return [(composta, mesmos_tokens), (curta, longa), (" ".join(simples), " ".join(hifen))]


# as mensagens de erro da biblioteca começam pelo nome do argumento: "`query` precisa ter forma ..."
_LIBRARY_ERROR = re.compile(r"`\w+` precisa")


def _counts(a: str, b: str) -> str:
    """As contagens de palavras (``split``) e de tokens das duas frases, quando elas não batem entre si."""
    pa, pb, ta, tb = len(a.split()), len(b.split()), len(tokenize(a)), len(tokenize(b))
    return f"palavras (frase.split()): {pa} e {pb}; tokens (atencao.tokenize): {ta} e {tb}"


@check("Projeto (padrões por cabeça)")
def projeto(c: Checker, per_head_fn):
    """Confere ``per_head_fn(frase_a, frase_b, mha) -> (pesos_a, pesos_b, diferenca_por_cabeca)``.

    Os pesos são (n_heads, n, n) da atenção multicabeça ``mha`` sobre ``embed_hashed(frase,
    d_model=mha.d_model)``; ``diferenca_por_cabeca`` (n_heads,) é a média de ``|pesos_a - pesos_b|``
    em cada cabeça. Usa três instâncias diferentes (tamanhos e sementes que não são os do notebook), para
    que a função use a ``mha`` que recebe; frases com números de tokens diferentes devem levantar
    ``ValueError``. O tamanho é o número de tokens, não o de palavras separadas por espaço: um par tem o mesmo
    número de tokens e números de palavras diferentes (não pode levantar) e outro o contrário (precisa levantar).
    """
    casos = ((MultiHeadAttention(16, 4, seed=case_seed(7)), "o gato sentou sobre o tapete",
              "o cachorro dormiu sobre a cama"),
             (MultiHeadAttention(12, 3, seed=case_seed(2024)), "ela abriu a porta", "ele fechou a janela"),
             # 3 e 4 palavras, 4 tokens cada ("guarda-chuva" são dois)
             (MultiHeadAttention(8, 2, seed=case_seed(31)), *_length_pairs()[0]))
    for mha, a, b in c.cases(casos):
        label = f"“{a}” × “{b}” (d_model={mha.d_model}, n_heads={mha.n_heads})"
        try:
            result = c.call(label, per_head_fn, a, b, mha, names=("frase_a", "frase_b", "mha"))
        except ValueError as exc:
            _flag_same_length_error(c, label, a, b, exc)
        ref_a = mha(embed_hashed(a, d_model=mha.d_model)[1])[1]  # depois da chamada: nada a ler na pilha
        ref_b = mha(embed_hashed(b, d_model=mha.d_model)[1])[1]
        Wa, Wb, diff = c.returns(result, label, "pesos_a", "pesos_b", "diferenca_por_cabeca", stop=True)
        hint = "X = atencao.embed_hashed(frase, d_model=mha.d_model)[1]; pesos = mha(X)[1], com a mha recebida."
        if _same(Wa, ref_b) and _same(Wb, ref_a) and not np.allclose(ref_a, ref_b):
            hint = mistake("sentences_swapped", "os pesos das duas frases estão trocados: devolva (pesos_a, pesos_b, "
                           "...), a frase A primeiro.")
        c.close(Wa, ref_a, f"{label}: pesos da frase A (n_heads, n, n)", hint=hint)
        c.close(Wb, ref_b, f"{label}: pesos da frase B (n_heads, n, n)", hint=hint)
        c.close(diff, np.abs(ref_a - ref_b).mean(axis=(-2, -1)), f"{label}: diferença média por cabeça",
                hint="np.abs(pesos_a - pesos_b).mean(axis=(1, 2)): um número por cabeça.")
    # dois pares de tamanhos diferentes: um com números de palavras diferentes e outro com o mesmo número de
    # palavras (3) e de tokens diferentes (3 e 4)
    pares = _length_pairs()[1:]
    for (a, b), label in zip(pares, ("frases de tamanhos diferentes",
                                     "frases com o mesmo número de palavras e números de tokens diferentes")):
        dica = "compare o número de tokens das duas frases antes de calcular e levante ValueError com uma mensagem sua."
        if len(a.split()) == len(b.split()):
            dica = (f"“{a}” × “{b}”: {_counts(a, b)}. O tamanho que importa é o número de tokens: compare "
                    "X_a.shape[0] com X_b.shape[0] (ou len(atencao.tokenize(frase))), não frase.split(), e levante "
                    "ValueError com uma mensagem sua.")
        c.expect_value_error(label, per_head_fn, a, b, casos[0][0], names=("frase_a", "frase_b", "mha"),
                             what=f"{label} levantam ValueError, como pede o enunciado", hint=dica)
        c.stop_if_failed()


def _same(got, ref) -> bool:
    """``got`` (o que o aluno devolveu, talvez nem um array) tem a forma de ``ref`` e os mesmos valores?"""
    return np.shape(got) == ref.shape and np.allclose(np.asarray(got, dtype=float), ref)


def _flag_same_length_error(c: Checker, label: str, a: str, b: str, exc: ValueError):
    """O ❌ de quem levantou ValueError com frases do mesmo número de tokens (contou palavras, caracteres...); o
    erro de uma conta do aluno (o de formas do NumPy, um da biblioteca) segue como erro do código dele."""
    if is_numpy_shape_error(str(exc)) or _LIBRARY_ERROR.match(str(exc)):  # a conta do aluno quebrou
        raise exc
    compare = "compare os tokens, X_a.shape[0] com X_b.shape[0] (ou len(atencao.tokenize(frase)))"
    c.fail(f"{label}: frases com o mesmo número de tokens não levantam erro", "nenhum erro",
           f"ValueError: {str(exc)[:100]}",
           f"as duas frases têm o mesmo número de tokens, mas não de palavras ({_counts(a, b)}): "
           f"{compare}, e não frase.split(), que não separa “guarda-chuva” e mantém a pontuação."
           if len(a.split()) != len(b.split()) else
           f"as duas frases têm {len(tokenize(a))} tokens cada: só frases com números de TOKENS diferentes "
           f"levantam ValueError; {compare}, e não o número de caracteres (len(frase)) nem outra medida.")


protect()  # a foto da biblioteca e desta verificação, antes do código do aluno


def __getattr__(nome: str):
    """Notebooks de uma versão anterior do curso (em ``trabalho/``) chamam a verificação pelo nome antigo."""
    if nome == "mascara_causal":  # nome da versão anterior do curso
        return exercicio_1_passo_1
    raise AttributeError(f"module {__name__!r} has no attribute {nome!r}")
