"""Verificações da Aula 5 (Módulo 6): ``03-exercicios`` (o backward da softmax e da atenção, a verificação
de gradiente).

Cada função recebe a **função** escrita pelo aluno, roda-a em vários casos, compara com a biblioteca
(:mod:`atencao.backward`) e imprime o relatório, com a dica do engano típico que reproduz a resposta.
"""

from __future__ import annotations

import numpy as np

from ..attention import scaled_dot_product_attention, softmax
from ..backward import attention_backward, multihead_backward, numerical_gradient, softmax_backward
from ..masks import causal_mask
from .demos import pronto_para_treinar, sua_tarefa
from .framework import (
    Checker,
    call_frozen,
    call_within_seconds,
    case_seed,
    check,
    frozen_copy,
    is_numpy_shape_error,
    matching_hint,
    mistake,
    passou,
    protect,
    student_error,
)

__all__ = ["passou", "exercicio_1", "exercicio_2", "exercicio_3", "pronto_para_treinar", "sua_tarefa"]

# o enunciado: a conta é do aluno; as funções de backward da biblioteca servem só para conferir
# multihead_backward também: com uma camada de uma cabeça e projeções identidade, ela daria dQ, dK e dV
_PRONTAS = (softmax_backward, attention_backward, multihead_backward, numerical_gradient)


# ---------- exercício 1: o backward da softmax ----------
def _dicas_softmax(A: np.ndarray, dA: np.ndarray) -> list:
    """Os enganos típicos do backward da softmax, cada um com a conta que ele produz."""
    return [
        (mistake("missing_sum_term", "faltou o termo da soma: dZ = A ⊙ (dA − Σⱼ dA ⊙ A). Cada peso depende de todas as "
                 "pontuações da linha (pelo denominador), então subtraia de dA a soma (dA * A).sum(axis=-1, "
                 "keepdims=True)."), A * dA),
        (mistake("jacobian_diagonal_only", "você usou só a diagonal do jacobiano, a(1 − a): falta o resto de J = "
                 "diag(a) − a aᵀ. A conta completa é "
                 "A * (dA - (dA * A).sum(axis=-1, keepdims=True))."), A * (1 - A) * dA),
        (mistake("sum_over_everything", "a soma foi sobre o array inteiro: some só ao longo de cada linha, com (dA * "
                 "A).sum(axis=-1, keepdims=True)."), A * (dA - (dA * A).sum())),
        (mistake("sum_without_a", "a soma ficou sem o A: o termo é Σⱼ dAⱼ·Aⱼ, ou seja (dA * A).sum(axis=-1, "
                 "keepdims=True), não dA.sum(...)."), A * (dA - dA.sum(axis=-1, keepdims=True))),
        (mistake("missing_leading_a", "faltou multiplicar por A na frente: dZ = A ⊙ (dA − soma). Sem o A, as posições "
                 "com peso 0 (bloqueadas) recebem gradiente."), dA - (dA * A).sum(axis=-1, keepdims=True)),
        (mistake("sum_sign_flipped", "o sinal do termo da soma "
                 "está trocado: é dA MENOS a soma."), A * (dA + (dA * A).sum(axis=-1, keepdims=True))),
        (mistake("sum_over_axis0", "a soma foi feita no eixo errado: a softmax normaliza cada LINHA (o último eixo), "
                 "então some com axis=-1 (e keepdims=True)."), A * (dA - (dA * A).sum(axis=0, keepdims=True))),
        (mistake("missing_keepdims",
         _SEM_KEEPDIMS.format(soma="(dA * A).sum(axis=-1)", forma=A.shape[:-1], linha=A.shape,
                              soma_certa="(dA * A).sum(axis=-1, keepdims=True)")),
         _sem_keepdims(A, dA)),
    ]


#: A dica da soma por linha que perdeu o eixo (``keepdims`` esquecido): ``{soma}`` é a conta, ``{forma}`` a forma
#: que ela teve e ``{linha}`` a do array de que ela é subtraída.
_SEM_KEEPDIMS = ("faltou keepdims=True na soma por linha: {soma} tem forma {forma}, um número por linha mas sem o "
                 "eixo das colunas, e o NumPy não a subtrai de {linha} linha a linha (dá erro de formas, ou, numa "
                 "matriz quadrada, subtrai a soma da linha j da coluna j). Com keepdims=True, a soma fica com forma "
                 "(..., 1), uma coluna, e é subtraída da linha inteira: {soma_certa}.")


def _sem_keepdims(A: np.ndarray, dA: np.ndarray) -> np.ndarray:
    """A conta com a soma sem ``keepdims`` quando o NumPy a aceita (matriz quadrada); senão, nada (a forma
    difere e o candidato não casa)."""
    soma = (dA * A).sum(axis=-1)
    try:
        return A * (dA - soma)
    except ValueError:
        return np.zeros(0)


def _dica_de_formas(exc: BaseException, A_shape: tuple, soma: str, soma_certa: str) -> str | None:
    """A dica de um erro de formas do NumPy causado pela soma por linha sem ``keepdims`` (uma das formas da
    mensagem é a de ``A`` sem o último eixo), ou ``None``."""
    import re

    mensagem = str(exc)
    if not isinstance(exc, ValueError) or not is_numpy_shape_error(mensagem):
        return None
    formas = {tuple(int(d) for d in f.split(",") if d.strip()) for f in re.findall(r"\(([\d,\s]*)\)", mensagem)}
    if tuple(A_shape[:-1]) not in formas or len(A_shape) < 2:
        return None
    return mistake("missing_keepdims", "a sua função levantou esse erro de formas porque " + _SEM_KEEPDIMS.format(
        soma=soma, forma=tuple(A_shape[:-1]), linha=tuple(A_shape), soma_certa=soma_certa))


@check("Exercício 1 (o backward da softmax)")
def exercicio_1(c: Checker, softmax_backward_fn):
    """Confere ``softmax_backward_fn(A, dA) -> dZ`` (a forma de ``A``), a softmax normalizada no último eixo.

    Casos: um vetor; uma matriz (3, 5); uma matriz com posições bloqueadas (peso 0) e uma linha toda
    bloqueada (só zeros); três eixos (2, 3, 4). Reconhece: o termo da soma esquecido, só a diagonal do
    jacobiano, a soma no array inteiro, a soma sem ``A``, o ``A`` da frente esquecido, o sinal trocado, NaN/inf
    (uma divisão por ``A``, que é 0 nas posições bloqueadas) e o resultado em float32.
    Fonte: Aula 5, ``01-teoria`` (seção 2) e ``02-codigo`` (passo 1).
    """
    rng = np.random.default_rng(case_seed(51))
    bloqueada = rng.normal(size=(4, 5))
    bloqueada[:, 3] = -np.inf  # uma coluna bloqueada em todas as linhas
    bloqueada[2] = -np.inf  # e uma linha toda bloqueada
    casos = [
        ("vetor de 5 pesos", rng.normal(size=5)),
        ("matriz (3, 5)", 2 * rng.normal(size=(3, 5))),
        ("matriz (4, 5) com posições bloqueadas e uma linha toda bloqueada", bloqueada),
        ("três eixos (2, 3, 4)", rng.normal(size=(2, 3, 4))),
    ]
    for label, z in c.cases(casos):
        A, dA = frozen_copy(softmax(z)), frozen_copy(rng.normal(size=z.shape))
        bruto = _call_naming_keepdims(c, label, softmax_backward_fn, (A, dA), ("A", "dA"), A.shape, "dA")
        got = c.array(bruto, f"{label}: devolve um array", stop=True)
        ref = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
        c.close(got, ref, f"{label}: dZ igual ao da biblioteca", atol=1e-9, rtol=1e-9,
                hint=_dica_softmax(got, ref, A, dA, _float32(bruto)))


_FORMULA_SOFTMAX = "dZ = A * (dA - (dA * A).sum(axis=-1, keepdims=True))"

def _call_naming_keepdims(c: Checker, label: str, fn, args: tuple, names: tuple, A_shape: tuple, dA: str, **kwargs):
    """:meth:`Checker.call`, mas um erro de formas do NumPy vindo da soma por linha sem ``keepdims`` vira um ❌
    com a dica que o nomeia (e não a genérica de formas incompatíveis), e a verificação para ali."""
    try:
        return c.call(label, fn, *args, names=names, forbidden=_PRONTAS, **kwargs)
    except ValueError as exc:
        dica = _dica_de_formas(exc, A_shape, f"({dA} * A).sum(axis=-1)", f"({dA} * A).sum(axis=-1, keepdims=True)")
        if dica is None:
            raise
        criterio, _, _, _ = student_error(exc)
        c.fail(criterio, hint=dica)


def _float32(valor) -> bool:
    """O que a função devolveu é um array de precisão menor que float64 (float32, float16)?"""
    tipo = getattr(valor, "dtype", None)
    return tipo is not None and np.issubdtype(tipo, np.floating) and np.finfo(tipo).bits < 64


def _dica_softmax(got, ref, A, dA, baixa_precisao: bool) -> str:
    """A dica de um dZ errado: forma, NaN/inf, float32 ou um dos enganos de :func:`_dicas_softmax`."""
    if got.shape != ref.shape:
        return mistake("dz_wrong_shape", "dZ tem a forma de A (e de dA): um gradiente por pontuação.")
    ruins = ~np.isfinite(got)
    if ruins.any():
        onde = ("nas posições bloqueadas o peso é 0, e uma conta como A / A ou np.log(A) dá NaN (0/0) ou -inf ali"
                if (ruins & (A == 0)).any() else "confira as divisões e os logaritmos da sua conta")
        return (mistake("dz_not_finite",
                f"apareceram NaN/inf em dZ: {onde}. A fórmula só multiplica e soma (e dá 0 onde A = 0): "
                f"{_FORMULA_SOFTMAX}."))
    perto = np.allclose(got, ref, rtol=1e-5, atol=1e-6)  # igual na precisão do float32 (~7 algarismos)
    if perto and baixa_precisao:
        return (mistake("float32",
                f"dZ veio em float32: a fórmula está certa ({_FORMULA_SOFTMAX}), mas o float32 guarda só uns 7 "
                "algarismos significativos, e a diferença passa da tolerância de 1e-9 (por isso os números parecem "
                "iguais). Mantenha tudo em float64 (sem .astype(np.float32))."))
    if perto:
        return (mistake("float32",
                f"dZ só bate com o da biblioteca até uns 7 algarismos significativos: a fórmula parece certa "
                f"({_FORMULA_SOFTMAX}), mas a conta passou por float32 em algum ponto. Mantenha tudo em float64 "
                "(sem .astype(np.float32))."))
    dica = matching_hint(got, _dicas_softmax(A, dA), ref, atol=1e-5 if baixa_precisao else 1e-9)
    if dica and baixa_precisao:
        dica = dica.extended(" E mantenha dZ em float64 (sem .astype(np.float32)).")
    return dica or f"{_FORMULA_SOFTMAX}, linha a linha."


# ---------- exercício 2: o backward da atenção, com máscara ----------
def _forward(Q, K, V, mask, leak: bool = False):
    """O forward de referência: pontuações escaladas, máscara (a menos que ``leak``), softmax."""
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None and not leak:
        S = np.where(mask, S, -np.inf)
    return softmax(S)


def _grads(dO, Q, K, V, A, scale):
    """As cinco linhas da teoria, com ``scale`` no lugar de 1/√d_k (para montar os enganos)."""
    dV = A.T @ dO
    dA = dO @ V.T
    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    return dS, dV, scale * (dS @ K), scale * (dS.T @ Q)


#: A dica do forward com -1e9 (em vez de -inf) numa consulta sem nenhuma chave visível; ``{como}``: o que sai dela.
_MENOS_1E9 = ("-1e9 (ou outro número finito) no lugar de -inf: numa consulta com todas as chaves bloqueadas, {como}, "
              "e não 0. A convenção do curso (e o enunciado) é peso 0 nessa linha inteira: saída 0 e nenhum "
              "gradiente. Use -np.inf com atencao.softmax, ou faça o forward com atencao.scaled_dot_product_attention, "
              "que já devolve pesos 0 ali.")

#: A dica do caso da consulta sem nenhuma chave visível, quando nenhum engano conhecido reproduz a resposta.
_LINHA_BLOQUEADA = ("neste caso a consulta {linha} tem todas as chaves bloqueadas, e a convenção do curso é peso 0 "
                    "na linha inteira (saída 0, gradiente 0): o seu forward deu outro peso a essa linha (uma média, "
                    "com -1e9 no lugar de -inf?). Faça o forward com atencao.scaled_dot_product_attention(Q, K, V, "
                    "mask=mask), que devolve A = 0 ali, e use esse A no backward.")


def _idas_erradas(Q, K, mask) -> list:
    """(dica, pesos A) dos enganos típicos do forward: a máscara aplicada do jeito errado, a softmax no eixo errado."""
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    M = None if mask is None else np.asarray(mask, dtype=bool)
    bloqueia = lambda m: np.where(m, S, -np.inf)  # noqa: E731
    idas = [(mistake("forward_softmax_by_column", "a softmax do forward normaliza cada LINHA (axis=-1): cada consulta "
                     "distribui os seus pesos entre as "
                     "chaves, e não cada coluna (axis=0)."), softmax(S if M is None else bloqueia(M), axis=0))]
    if M is None:
        return idas
    idas += [
        (mistake("mask_multiplied", "multiplicar as pontuações pela máscara não bloqueia nada: S * mask dá pontuação 0 "
                 "(e um peso maior que 0) às posições bloqueadas. Bloqueie com -inf antes da softmax: S = "
                 "np.where(mask, S, -np.inf)."),
         softmax(S * M)),
        (mistake("mask_after_softmax", "a máscara entrou DEPOIS da softmax: zerar os pesos bloqueados deixa cada linha "
                 "somando menos de 1. Bloqueie as pontuações antes (S = np.where(mask, S, -np.inf)) e só então faça a "
                 "softmax."), softmax(S) * M),
        (mistake("finite_mask_value",
         _MENOS_1E9.format(como="pontuações todas iguais a -1e9 dão pesos iguais (1/n_k)")),
         softmax(np.where(M, S, -1e9))),
        (mistake("finite_mask_value_added",
         _MENOS_1E9.format(como="S - 1e9 (somado às pontuações bloqueadas) dá a softmax das pontuações originais")),
         softmax(S - 1e9 * ~M)),
    ]
    if M.shape[0] == M.shape[1]:
        idas.append((mistake("mask_transposed", "a máscara está transposta: mask[i, j] diz se a consulta i (linha) "
                             "pode ver a chave j (coluna); use a máscara como veio, sem .T."), softmax(bloqueia(M.T))))
    return idas


def _dicas_atencao(dO, Q, K, V, mask) -> dict:
    """Para cada gradiente (``dQ``, ``dK``, ``dV``), os enganos típicos e o resultado de cada um."""
    d_k = Q.shape[-1]
    s = 1 / np.sqrt(d_k)
    A = _forward(Q, K, V, mask)
    dS, dV, dQ, dK = _grads(dO, Q, K, V, A, s)
    dS_sem_soma = A * (dO @ V.T)
    vazou = _forward(Q, K, V, mask, leak=True)
    dS_v, dV_v, dQ_v, dK_v = _grads(dO, Q, K, V, vazou, s)
    vaza = (mistake("gradient_leaks_through_mask", "o gradiente passou por posições bloqueadas: o backward usou uma "
                    "matriz de pesos calculada SEM a máscara. Use os pesos A do forward com a máscara (bloqueado = "
                    "-inf antes da softmax, peso 0); com eles, dS = 0 onde A = 0 e nada mais é preciso."))
    sem_soma = (mistake("missing_sum_term", "faltou o termo da soma no backward da softmax: dS = A * (dA - (dA * "
                        "A).sum(axis=-1, keepdims=True)), com dA = dO @ V.T."))
    dA = dO @ V.T
    dS_eixo0 = A * (dA - (dA * A).sum(axis=0, keepdims=True))
    dS_sem_keepdims = _sem_keepdims(A, dA)  # só numa matriz quadrada o NumPy aceita a soma sem keepdims
    keepdims = mistake("missing_keepdims",
               _SEM_KEEPDIMS.format(soma="(dA * A).sum(axis=-1)", forma=A.shape[:-1], linha=A.shape,
                                    soma_certa="(dA * A).sum(axis=-1, keepdims=True)"))
    com_keepdims_errado = dS_sem_keepdims.shape == A.shape
    eixo0 = (mistake("sum_over_axis0", "a soma do backward da softmax foi no eixo errado: a softmax normaliza cada "
                     "LINHA (o último eixo), então dS = A * "
                     "(dA - (dA * A).sum(axis=-1, keepdims=True)), e não axis=0."))
    # os enganos do forward (a máscara, o eixo da softmax): os pesos A errados mudam os três gradientes
    ida = [(pesos_dica, _grads(dO, Q, K, V, A_errado, s)[1:]) for pesos_dica, A_errado in _idas_erradas(Q, K, mask)]
    por_nome = {nome: [(dica, g[k]) for dica, g in ida] for k, nome in ((1, "dQ"), (2, "dK"), (0, "dV"))}
    return {
        "dV": [(vaza, dV_v), *por_nome["dV"],
               (mistake("dv_not_transposed", "dV = Aᵀ dO (a transposta de A): cada valor recebe o gradiente das "
                        "consultas que olharam para ele."),
                A @ dO if A.shape[0] == A.shape[1] else np.zeros(0))],
        "dQ": [(vaza, dQ_v), *por_nome["dQ"], (sem_soma, s * (dS_sem_soma @ K)), (eixo0, s * (dS_eixo0 @ K)),
               *([(keepdims, s * (dS_sem_keepdims @ K))] if com_keepdims_errado else []),
               (mistake("missing_scale", "faltou o fator 1/√d_k: o forward multiplicou Q Kᵀ por 1/√d_k, então dQ = dS "
                        "@ K / √d_k."), dS @ K),
               (mistake("scale_by_d_k", "o fator é 1/√d_k, não 1/d_k: dQ = dS @ K / np.sqrt(d_k)."), dS @ K / d_k),
               (mistake("scale_multiplied", "o fator 1/√d_k divide, não multiplica: "
                        "dQ = dS @ K / np.sqrt(d_k)."), np.sqrt(d_k) * (dS @ K)),
               (mistake("dq_transposed_ds", "dQ = dS K (sem transpor K): dS "
                        "é (n_q, n_k) e K é (n_k, d_k)."), s * (dS.T @ K)
                if dS.shape[0] == dS.shape[1] else np.zeros(0))],
        "dK": [(vaza, dK_v), *por_nome["dK"], (sem_soma, s * (dS_sem_soma.T @ Q)), (eixo0, s * (dS_eixo0.T @ Q)),
               *([(keepdims, s * (dS_sem_keepdims.T @ Q))] if com_keepdims_errado else []),
               (mistake("missing_scale", "faltou o fator 1/√d_k: dK = dS.T @ Q / √d_k."), dS.T @ Q),
               (mistake("scale_by_d_k", "o fator é 1/√d_k, não 1/d_k: dK = dS.T @ Q / np.sqrt(d_k)."), dS.T @ Q / d_k),
               (mistake("scale_multiplied", "o fator 1/√d_k divide, não multiplica: "
                        "dK = dS.T @ Q / np.sqrt(d_k)."), np.sqrt(d_k) * (dS.T @ Q)),
               (mistake("dk_not_transposed", "dK sem a transposta: dS tem uma linha por CONSULTA, e dK precisa de uma "
                        "por CHAVE. Use dK = "
                        "dS.T @ Q / np.sqrt(d_k)."), s * (dS @ Q) if dS.shape[0] == dS.shape[1] else np.zeros(0))],
    }


_FORMA = {"dQ": ("Q", "dS @ K / np.sqrt(d_k)"), "dK": ("K", "dS.T @ Q / np.sqrt(d_k)"), "dV": ("V", "A.T @ dO")}


@check("Exercício 2 (o backward da atenção, com máscara)")
def exercicio_2(c: Checker, attention_backward_fn):
    """Confere ``attention_backward_fn(dO, Q, K, V, mask=None) -> (dQ, dK, dV)`` (as formas de Q, K, V).

    Casos: sem máscara (n_q = n_k = 4, d_k = 3); máscara causal (5 × 5, d_k = 4); n_q ≠ n_k com chaves bloqueadas
    (3 × 6, d_k = 9); uma linha toda bloqueada (dQ = 0 nela); o tamanho de verdade (n = 320, d_k = 64), em que a
    fórmula leva milissegundos e o gradiente calculado numericamente (o passo complexo, diferenças escritas à mão),
    minutos (:data:`.framework.REAL_SIZE_SECONDS`). Reconhece: o gradiente que vaza pelas posições bloqueadas
    (pesos sem a máscara), o termo da soma esquecido, o 1/√d_k esquecido (ou 1/d_k, ou multiplicando), ``dK`` e
    ``dV`` sem a transposta, a tupla fora de ordem (``(dV, dK, dQ)``). Fonte: Aula 5, ``01-teoria`` (seções 3 e 5).
    """
    rng = np.random.default_rng(case_seed(52))
    chaves = np.ones((3, 6), dtype=bool)
    chaves[:, [1, 4]] = False  # duas chaves que ninguém vê
    chaves[0, 5] = False
    linha = causal_mask(4).copy()
    linha[2] = False  # a consulta 2 não vê nada
    casos = [
        ("sem máscara, n_q = n_k = 4, d_k = 3", (4, 4, 3, 2), None),
        ("máscara causal, n = 5, d_k = 4", (5, 5, 4, 3), causal_mask(5)),
        ("n_q = 3, n_k = 6, d_k = 9, chaves bloqueadas", (3, 6, 9, 2), chaves),
        ("uma consulta sem chave visível (A = 0 nela)", (4, 4, 2, 2), linha),
        ("tamanho de verdade, máscara causal, n = 320, d_k = 64", (320, 320, 64, 64), causal_mask(320)),
    ]
    for label, (n_q, n_k, d_k, d_v), mask in c.cases(casos):
        Q, K = frozen_copy(rng.normal(size=(n_q, d_k))), frozen_copy(rng.normal(size=(n_k, d_k)))
        V, dO = frozen_copy(rng.normal(size=(n_k, d_v))), frozen_copy(rng.normal(size=(n_q, d_v)))
        m = None if mask is None else frozen_copy(mask)
        kwargs = {} if m is None else {"mask": m}
        bruto = call_within_seconds(c, label, attention_backward_fn, _call_naming_keepdims, c, label,
                                    attention_backward_fn, (dO, Q, K, V), ("dO", "Q", "K", "V"), (n_q, n_k), "dA",
                                    **kwargs)
        got = c.returns(bruto, label, "dQ", "dK", "dV", stop=True)
        A = _forward(Q, K, V, m)
        ref = dict(zip(("dQ", "dK", "dV"), attention_backward(dO, Q, K, V, A)))
        dicas = _dicas_atencao(dO, Q, K, V, m)
        fora_de_ordem = _ordem_trocada(got, ref)
        for nome in ("dV", "dQ", "dK"):  # na ordem do backward
            g = c.array(got[("dQ", "dK", "dV").index(nome)], f"{label}: {nome} é um array de números", stop=True)
            entrada, formula = _FORMA[nome]
            if fora_de_ordem:
                hint = fora_de_ordem
            elif g.shape != ref[nome].shape:
                hint = (f"{nome} tem a forma de {entrada}, {ref[nome].shape}: {nome} = {formula}."
                        + (" Confira a transposta." if g.shape == ref[nome].shape[::-1] or nome != "dQ" else ""))
            elif not np.isfinite(g).all():
                hint = (mistake("naive_softmax_nan",
                        f"{nome} tem NaN ou inf: numa linha com todas as chaves bloqueadas, a softmax ingênua dá "
                        "-inf - (-inf) = NaN. Faça o forward com atencao.scaled_dot_product_attention (ou com a sua "
                        "softmax da Aula 2), que devolve pesos 0 nessa linha."))
            else:
                hint = matching_hint(g, dicas[nome], ref[nome], atol=1e-9) or _dica_da_linha_bloqueada(m) or \
                    f"{nome} = {formula}."
            c.close(g, ref[nome], f"{label}: {nome} igual ao da biblioteca", atol=1e-9, rtol=1e-9, hint=hint, stop=True)


def _dica_da_linha_bloqueada(mask) -> str | None:
    """A dica do caso com uma consulta sem nenhuma chave visível (a convenção: pesos 0 nela), ou ``None``."""
    if mask is None:
        return None
    vazias = np.flatnonzero(~np.asarray(mask, dtype=bool).any(axis=-1))
    return mistake("blocked_row_weight", _LINHA_BLOQUEADA.format(linha=int(vazias[0]))) if vazias.size else None


def _ordem_trocada(got, ref: dict) -> str | None:
    """A dica de uma tupla com os gradientes certos fora de ordem (algum item é o gradiente de outra
    entrada, como ``(dV, dK, dQ)``), ou ``None``."""
    nomes = ("dQ", "dK", "dV")

    def qual(item) -> str | None:  # o gradiente da referência igual a ``item`` (o próprio, se for)
        try:
            g = np.asarray(item, dtype=float)
        except (TypeError, ValueError):
            return None
        iguais = [n for n in nomes if g.shape == ref[n].shape and np.allclose(g, ref[n], rtol=1e-7, atol=1e-9)]
        return None if not iguais else iguais[0] if len(iguais) == 1 else None

    achados = [qual(item) for item in got]
    trocados = [(k, a) for k, (a, n) in enumerate(zip(achados, nomes)) if a is not None and a != n]
    if not trocados:
        return None
    if None not in achados:
        return mistake("grads_out_of_order",
               f"a tupla está fora de ordem: devolva (dQ, dK, dV); a sua função devolveu ({', '.join(achados)}).")
    itens = [f"o {k + 1}º é o {a}" for k, a in trocados]
    lista = itens[0] if len(itens) == 1 else ", ".join(itens[:-1]) + " e " + itens[-1]
    return mistake("grads_out_of_order",
           f"a tupla está fora de ordem: devolva (dQ, dK, dV); na tupla que a sua função devolveu, {lista}.")


# ---------- exercício 3: a verificação de gradiente ----------
def _loss(Q, K, V, dO, mask):
    """A perda dos exercícios, ``L = Σ O ⊙ dO``: a derivada dela em relação a ``O`` é ``dO``."""
    return float((scaled_dot_product_attention(Q, K, V, mask=mask)[0] * dO).sum())


def _numeric(Q, K, V, dO, mask, eps=1e-6, dtype=np.float64, forward=False, all_at_once=False, factor=2.0,
             five_point=False):
    """As diferenças (centrais, ou os enganos típicos: ``five_point``, a fórmula de 5 pontos) da perda em relação
    a Q, K e V."""
    arrays = [np.array(a, dtype=dtype) for a in (Q, K, V)]
    dO = np.asarray(dO, dtype=dtype)
    grads = []
    for k, x in enumerate(arrays):
        g = np.zeros(x.shape)
        for i in ([None] if all_at_once else np.ndindex(x.shape)):
            plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
            if i is None:
                plus[k] += dtype(eps)
                minus[k] -= dtype(eps)
            else:
                plus[k][i] += dtype(eps)
                minus[k][i] -= dtype(eps)
            lp, lm = _loss(*plus, dO, mask), _loss(*minus, dO, mask)
            value = (lp - _loss(*arrays, dO, mask)) / eps if forward else (lp - lm) / (factor * eps)
            if five_point:  # (−L(x + 2ε) + 8L(x + ε) − 8L(x − ε) + L(x − 2ε)) / (12ε)
                plus2, minus2 = [a.copy() for a in arrays], [a.copy() for a in arrays]
                plus2[k][i] += dtype(2 * eps)
                minus2[k][i] -= dtype(2 * eps)
                value = (-_loss(*plus2, dO, mask) + 8 * lp - 8 * lm + _loss(*minus2, dO, mask)) / (12 * eps)
            if i is None:
                g[...] = value
            else:
                g[i] = value
        grads.append(g)
    return grads


def _engano(got: np.ndarray, candidates, atol: float) -> str | None:
    """Como :func:`matching_hint`, mas só com a tolerância absoluta: os enganos daqui (passo grande, diferença
    para frente) ficam a 1e-6 relativo da resposta certa, dentro do ``rtol`` padrão de ``np.allclose``."""
    for dica, cand in candidates:
        if cand.shape == got.shape and np.all(np.abs(got - cand) <= atol):
            return dica
    return None


def _dicas_numerico(Q, K, V, dO, mask) -> list:
    """Para cada engano típico, a dica e os três gradientes (dQ, dK, dV) que ele produz."""
    grande = ("o passo é grande demais: com ε = {eps:g}, o erro das diferenças centrais (da ordem de ε²) passa "
              "de 1e-7. Use o eps recebido (padrão 1e-6).")
    return [
        (mistake("missing_factor_2", "faltou o 2 no denominador: nas diferenças centrais, "
                 "(L(x + ε) − L(x − ε)) / (2ε)."),
         _numeric(Q, K, V, dO, mask, factor=1.0)),
        (mistake("forward_difference", "você usou a diferença para frente, (L(x + ε) − L(x)) / ε, cujo erro é da ordem "
                 "de ε: use as diferenças centrais, (L(x "
                 "+ ε) − L(x − ε)) / (2ε)."), _numeric(Q, K, V, dO, mask, forward=True)),
        (mistake("float32", "o cálculo foi em float32: com ε = 1e-6, o arredondamento (1e-7 / 1e-6) destrói o "
                 "resultado. Faça tudo em float64 (não "
                 "converta Q, K, V nem dO)."), _numeric(Q, K, V, dO, mask, dtype=np.float32)),
        *((mistake("step_too_large",
           grande.format(eps=eps)), _numeric(Q, K, V, dO, mask, eps=eps)) for eps in (1e-1, 1e-2, 1e-3)),
        (mistake("all_positions_at_once", "você mexeu em todos os números do array ao mesmo tempo: mova só a posição i "
                 "(x[i] += eps) e guarde a derivada na posição i."), _numeric(Q, K, V, dO, mask, all_at_once=True)),
    ]


#: A dica de uma entrada alterada no exercício 3, em que o enunciado manda mexer em ``x[i]`` e desfazer.
_RESTAURE = ("{alvo} ficou diferente do que entrou: depois de calcular L(x + ε eᵢ) e L(x − ε eᵢ), devolva x[i] "
             "ao valor original guardado (original = x[i] antes de mexer; x[i] = original no fim), posição por "
             "posição. Somar e subtrair ε não basta: em ponto flutuante, cada conta arredonda, e 0.3 + 1e-6 − 2e-6 "
             "+ 1e-6 dá 0.29999999999999993, e não 0.3.")

#: O passo grande do último caso do exercício 3: as diferenças centrais se afastam do gradiente exato (erro da
#: ordem de ε²), e só quem as calcula com o ``eps`` recebido chega nelas.
EPS_GRANDE = 0.2


@check("Exercício 3 (a verificação de gradiente por diferenças centrais)")
def exercicio_3(c: Checker, numerical_gradient_fn):
    """Confere ``numerical_gradient_fn(Q, K, V, dO, mask=None, eps=1e-6) -> (dQ, dK, dV)``: as diferenças
    centrais da perda ``L = Σ O ⊙ dO``, ``O`` a atenção escalada, em relação a cada número de Q, K e V.

    Casos: sem máscara (3 × 3, d_k = 2) e com máscara causal (4 × 4, d_k = 3), comparados com o backward exato
    da biblioteca (erro ≤ 1e-7 relativo); e um com ``eps =`` :data:`EPS_GRANDE`, comparado com as diferenças
    centrais desse passo (erro ≤ 1e-9 relativo), em que o gradiente exato, outra fórmula ou outro passo não
    passam. Reconhece: o 2 do denominador, a diferença para frente, float32, o passo grande, todos os números
    mexidos de uma vez, o eps recebido ignorado. Fonte: Aula 5, ``01-teoria`` (seção 6).
    """
    rng = np.random.default_rng(case_seed(53))
    casos = [("sem máscara, n = 3, d_k = 2", 3, 2, None, None),
             ("máscara causal, n = 4, d_k = 3", 4, 3, causal_mask(4), None),
             (f"passo grande, eps = {EPS_GRANDE}, n = 3, d_k = 2", 3, 2, None, EPS_GRANDE)]
    for label, n, d_k, mask, eps in c.cases(casos):
        Q, K, V, dO = (rng.normal(size=(n, d_k)) for _ in range(4))
        m = None if mask is None else frozen_copy(mask)
        kwargs = ({} if m is None else {"mask": m}) | ({} if eps is None else {"eps": eps})
        got, (Q, K, V, dO) = call_frozen(c, label, numerical_gradient_fn, Q, K, V, dO, returns=("dQ", "dK", "dV"),
                                         names=("Q", "K", "V", "dO"), forbidden=_PRONTAS, mutation_hint=_RESTAURE,
                                         **kwargs)
        exato = attention_backward(dO, Q, K, V, _forward(Q, K, V, m))
        if eps is not None:  # o passo grande: as diferenças centrais desse passo, e não o gradiente exato
            _same_central(c, label, got, exato, _numeric(Q, K, V, dO, m, eps=eps), (Q, K, V, dO, m))
            continue
        dicas = None
        for k, nome in enumerate(("dQ", "dK", "dV")):
            g = c.array(got[k], f"{label}: {nome} é um array de números", stop=True)
            escala = float(np.abs(exato[k]).max())
            if g.shape != exato[k].shape:
                hint = (f"{nome} numérico tem a forma de {'QKV'[k]}, {exato[k].shape}: comece com np.zeros_like e "
                        "percorra as posições com np.ndindex(x.shape).")
            else:
                dicas = dicas if dicas is not None else _dicas_numerico(Q, K, V, dO, m)
                hint = _engano(g, [(d, gs[k]) for d, gs in dicas], atol=1e-9 * max(escala, 1e-3))
            c.close(g, exato[k], f"{label}: {nome} igual ao gradiente exato (erro ≤ 1e-7 relativo)",
                    atol=1e-7 * escala, rtol=0, stop=True,
                    hint=hint or "(L(x + ε eᵢ) − L(x − ε eᵢ)) / (2ε), uma posição i de cada vez, em "
                                 "float64, devolvendo x[i] ao valor original depois.")


def _same_central(c: Checker, label: str, got, exato, central, entradas: tuple) -> None:
    """O caso do passo grande: cada gradiente igual às diferenças centrais com esse passo (não ao exato); o
    primeiro que não bate encerra a verificação. ``entradas``: (Q, K, V, dO, mask), para montar os enganos."""
    for k, nome in enumerate(("dQ", "dK", "dV")):
        g = c.array(got[k], f"{label}: {nome} é um array de números", stop=True)
        escala = float(np.abs(central[k]).max())
        if g.shape != central[k].shape:
            hint = f"{nome} numérico tem a forma de {'QKV'[k]}, {central[k].shape}."
        elif _float32(got[k]) and np.allclose(g, central[k], rtol=1e-6, atol=1e-6 * escala):
            hint = (mistake("float32",
                    f"{nome} foi guardado em float32 (um np.zeros_like de array float32, ou dtype=np.float32): a conta "
                    "está certa, mas o float32 guarda só uns 7 algarismos, e este caso pede 1e-9. Guarde as derivadas "
                    "num array float64 (np.zeros(x.shape))."))
        elif np.allclose(g, _numeric(*entradas, eps=EPS_GRANDE, five_point=True)[k], rtol=0, atol=1e-9 * escala):
            hint = (mistake("five_point_formula", "essa é a fórmula de 5 pontos, (−L(x + 2ε) + 8L(x + ε) − 8L(x − ε) + "
                            "L(x − 2ε)) / (12ε): com um passo grande ela dá outro número. O enunciado pede as "
                            "diferenças centrais, (L(x + eps·eᵢ) − L(x − eps·eᵢ)) / (2·eps), com o eps recebido."))
        elif np.allclose(g, exato[k], rtol=0, atol=1e-6 * escala):
            hint = (mistake("eps_ignored",
                    f"a sua função não usou o eps que recebeu: com eps = {EPS_GRANDE}, as diferenças centrais ficam "
                    "longe do gradiente exato (o erro é da ordem de eps²), mas o resultado dela é o gradiente exato "
                    "(ou o de um passo fixo pequeno, como 1e-5). Calcule (L(x + eps·eᵢ) − L(x − eps·eᵢ)) / (2·eps) "
                    "com o eps recebido como argumento, sem trocar o passo e sem usar outra fórmula."))
        else:
            hint = ("use o eps recebido, sem trocar o passo: (L(x + eps·eᵢ) − L(x − eps·eᵢ)) / (2·eps), uma "
                    "posição i de cada vez, em float64.")
        c.close(g, central[k], f"{label}: {nome} igual às diferenças centrais com esse passo (erro ≤ 1e-9 relativo)",
                atol=1e-9 * escala, rtol=0, hint=hint, stop=True)


# ---------- o projeto (04-projeto): as células de treino ----------

protect()
