"""Verificações da Aula 3 (Módulo 6): a atenção de um Transformer de verdade (``03-exercicios``, ``04-projeto``).

As referências são calculadas aqui a partir de ``EncoderOutput.attentions`` (n_layers, n_heads, n, n).
"""

from __future__ import annotations

import numpy as np

from ..attention import attend, scaled_dot_product_attention, self_attention
from ..multihead import MultiHeadAttention, merge_heads, split_heads
from ._core import Checker, _congelar, _descricao, _dica_retorno, check, passou, proteger, semente
from ._multicabeca import _diagnose_heads

# As referências (_top_heads, ...) ficam privadas: são as respostas dos exercícios, não ferramentas do aluno.
__all__ = ["passou", "exercicio_1", "exercicio_2", "exercicio_3", "exercicio_4", "projeto"]


def _token_index(tokens: list, word: str) -> int:
    """Índice da primeira peça que é a palavra ``word`` inteira (``▁word``)."""
    return tokens.index("▁" + word)


def _top_heads(attentions: np.ndarray, i: int, j: int, k: int = 5) -> list:
    """As ``k`` cabeças (camada, cabeça) em que o token ``i`` mais presta atenção no token ``j``,
    do maior peso ao menor."""
    w = attentions[:, :, i, j]  # (n_layers, n_heads)
    order = np.argsort(-w, axis=None, kind="stable")[:k]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in order]


def _mean_attention_distance(attentions: np.ndarray) -> np.ndarray:
    """Distância média da atenção por camada: média, sobre cabeças e consultas, de Σ_j w_ij |i − j|."""
    n = attentions.shape[-1]
    dist = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])  # (n, n)
    return (attentions * dist).sum(-1).mean(axis=(1, 2))  # (n_layers,)


def _special_token_mass(attentions: np.ndarray) -> np.ndarray:
    """Fração da atenção que vai para ``<s>`` e ``</s>`` (primeira e última posições), por camada."""
    return (attentions[..., 0] + attentions[..., -1]).mean(axis=(1, 2))  # (n_layers,)


def _confiavel(encoder):
    """O codificador da verificação: o ``load_e5()`` desta cópia da biblioteca, não o que a célula passou.

    As referências vêm dele, e é ele que a função do aluno recebe: um codificador trocado ou "ajeitado"
    no notebook (atenções uniformes, por exemplo) não muda o que é esperado. No notebook é o mesmo objeto
    de ``load_e5()`` (ele fica em cache); o argumento ``encoder`` fica na chamada só pela forma da célula.
    """
    from ..bert import load_e5

    return load_e5()


# ligam a vigilância nas chamadas da função do aluno: as referências acima (e qualquer função da verificação)
# não são ferramentas da resposta
_REFERENCIAS = (_top_heads, _mean_attention_distance, _special_token_mass)

SENTENCES = [
    ("O gato pulou no muro porque ele estava assustado", "ele", "gato"),
    ("A mulher abriu a porta porque ela estava com frio", "ela", "mulher"),
]


def _pares(got):
    """A resposta como lista de (camada, cabeça); aceita lista, tupla ou array (k, 2). ``None`` se não der."""
    if isinstance(got, np.ndarray):
        got = got.tolist()
    if not isinstance(got, (list, tuple)):
        return None
    try:
        return [tuple(int(x) for x in pair) for pair in got]
    except (TypeError, ValueError):
        return None


@check("Exercício 1 (as cabeças em que “ele” olha para “gato”)")
def exercicio_1(c: Checker, fn, encoder):
    """Confere ``fn(encoder, frase, origem, destino, k=5) -> [(camada, cabeça), ...]`` (maior peso primeiro).

    O ``k`` varia (5, 3 e 8): uma resposta que ignora ``k`` não passa. Aceita lista, tupla ou array (k, 2).
    """
    encoder = _confiavel(encoder)
    casos = [(*SENTENCES[0], 5), (*SENTENCES[1], 3), (*SENTENCES[0], 8)]
    for sentence, src, dst, k in c.casos(casos):
        label = f"“{src}” → “{dst}” em “{sentence}”, k={k}"
        bruto = c.call(label, fn, encoder, sentence, src, dst, k=k, names=("encoder", "frase", "origem", "destino"),
                       forbidden=_REFERENCIAS)
        out = encoder(sentence)  # a referência, depois da chamada
        i, j = _token_index(out.tokens, src), _token_index(out.tokens, dst)
        ref = _top_heads(out.attentions, i, j, k)
        got = _pares(bruto)
        if not c.expect(got is not None, f"{label}: devolve uma lista de pares (camada, cabeça)",
                        "[(camada, cabeça), ...]", repr(bruto)[:80] if bruto is not None else "None (nada)",
                        "faltou um `return` no fim da função?" if bruto is None else
                        "devolva uma lista de tuplas (camada, cabeça), por exemplo [(5, 3), (4, 1)]; sem o peso."):
            return
        hint = None
        if len(got) != len(ref):
            hint = f"devolva exatamente k = {k} pares (use o argumento k da função)."
        elif sorted(got) == sorted(ref) and got != ref:
            hint = "as cabeças certas, mas fora de ordem: ordene do maior peso para o menor."
        elif got == _top_heads(out.attentions, j, i, k):
            hint = "linha e coluna trocadas: a linha é quem olha (origem), a coluna é para quem (destino)."
        if not c.expect(got == ref, label, ref, got,
                        hint or "use out.attentions[:, :, i, j] (camadas × cabeças) e ordene pelos maiores pesos."):
            return


@check("Exercício 2 (distância média da atenção por camada)")
def exercicio_2(c: Checker, fn, encoder):
    """Confere ``fn(attentions) -> ndarray (n_layers,)`` em atenções sorteadas e nas do modelo."""
    rng = np.random.default_rng(semente(3))
    cases = [rng.dirichlet(np.ones(n), size=(2, 3, n)) for n in (4, 7)]
    cases.append(_confiavel(encoder)(SENTENCES[0][0]).attentions)
    for k, att in enumerate(c.casos(cases), start=1):
        got = c.array(c.call(f"caso {k}", fn, att, names=("attentions",), forbidden=_REFERENCIAS),
                      f"caso {k}: devolve um array")
        if got is None:
            return
        ref = _mean_attention_distance(att)
        n = att.shape[-1]
        plain = np.full(att.shape[0], np.abs(np.arange(n)[:, None] - np.arange(n)).mean())
        hint = ("a distância precisa ser ponderada pelos pesos: Σ_j w_ij · |i − j|."
                if got.shape == ref.shape and np.allclose(got, plain)
                else "para cada camada: média sobre cabeças e consultas de Σ_j w_ij |i − j|.")
        if not c.close(got, ref, f"caso {k}: atenções de forma {att.shape}", hint=hint):
            return


@check("Exercício 3 (atenção nos tokens especiais)")
def exercicio_3(c: Checker, fn, encoder):
    """Confere ``fn(encoder, frase) -> ndarray (n_layers,)``: fração da atenção em ``<s>`` e ``</s>``."""
    encoder = _confiavel(encoder)
    for sentence in c.casos((SENTENCES[0][0], "Não deixe o coração decidir sozinho")):
        got = c.array(c.call(f"“{sentence}”", fn, encoder, sentence, names=("encoder", "frase"),
                             forbidden=_REFERENCIAS),
                      f"“{sentence}”: devolve um array")
        out = encoder(sentence)
        if got is None:
            return
        ref = _special_token_mass(out.attentions)
        hint = ("some as duas colunas: a de <s> (posição 0) e a de </s> (última)."
                if got.shape == ref.shape and np.allclose(got, out.attentions[..., 0].mean(axis=(1, 2)))
                else "por camada: média, sobre cabeças e consultas, de w[:, 0] + w[:, -1].")
        if not c.close(got, ref, f"“{sentence}”: fração por camada", hint=hint):
            return


# o exercício 4 é a atenção multicabeça do aluno: as prontas ficam fora, como na Aula 2
_PRONTAS_MHA = (*_REFERENCIAS, scaled_dot_product_attention, attend, self_attention, MultiHeadAttention,
                split_heads, merge_heads)
_NOMES_MHA = ("X", "W_q", "W_k", "W_v", "W_o", "n_heads", "b_q", "b_k", "b_v", "b_o")


@check("Exercício 4 (a sua atenção multicabeça no modelo de verdade)")
def exercicio_4(c: Checker, fn, encoder):
    """Confere ``fn(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o) -> (saida, pesos)``: a atenção
    multicabeça da Aula 2 (exercício 2) com os vieses, ``Q = X @ W_q + b_q`` (idem K e V) e
    ``saida = concat @ W_o + b_o``.

    Casos: três camadas pequenas sorteadas, comparadas com :class:`~atencao.MultiHeadAttention`; depois o
    modelo inteiro, ``encoder(frase, attention_fn=fn)``, com as atenções das 12 camadas iguais às da
    biblioteca (≤ 1e-5) e o mesmo estado final. Fonte: Aula 3, ``03-exercicios`` (exercício 4).
    """
    rng = np.random.default_rng(semente(4))
    for n, d_model, n_heads in c.casos(((5, 8, 2), (3, 12, 3), (1, 8, 4))):
        X = rng.normal(size=(n, d_model))
        Ws = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        bs = [rng.normal(size=d_model) for _ in range(4)]
        congelados = [_congelar(a) for a in (X, *Ws, *bs)]
        label = f"n={n}, d_model={d_model}, n_heads={n_heads}, com vieses"
        result = c.call(label, fn, X, *Ws, n_heads, *bs, names=_NOMES_MHA, forbidden=_PRONTAS_MHA)
        got = c.pair(result, label)
        if got is None:
            return
        out, A = got
        X, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o = congelados
        ref_out, ref_A = MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, n_heads=n_heads)(X)
        sem_vieses = MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, n_heads=n_heads)(X)
        if A.shape != ref_A.shape:
            dica = "os pesos devem ter forma (n_heads, n, n): uma matriz de atenção por cabeça."
        elif np.allclose(A, sem_vieses[1], atol=1e-6):
            dica = "faltou somar os vieses: Q = X @ W_q + b_q, K = X @ W_k + b_k, V = X @ W_v + b_v."
        else:  # os mesmos enganos da Aula 2, exercício 2 (escala, divisão em cabeças, softmax), agora com vieses
            dica = _diagnose_heads(X, W_q, W_k, n_heads, A, b_q, b_k)
        ok = c.close(A, ref_A, f"{label}: pesos por cabeça (n_heads, n, n)", hint=dica)
        dica = ("a saída é concat @ W_o + b_o (faltou o b_o?)." if ok and out.shape == ref_out.shape and np.allclose(
            out + b_o, ref_out, atol=1e-6) else "a saída depende dos pesos: corrija primeiro os pesos (acima)."
            if not ok else "concatene as cabeças de volta para (n, d_model), multiplique por W_o e some b_o.")
        if not (ok and c.close(out, ref_out, f"{label}: saída (n, d_model)", hint=dica)):
            return
    encoder = _confiavel(encoder)
    frase = SENTENCES[0][0]
    label = f"no modelo (12 camadas), “{frase}”"
    got = c.call(label, encoder.forward, frase, attention_fn=fn, names=("frase",), forbidden=_PRONTAS_MHA)
    ref = encoder(frase)  # a referência, depois: a biblioteca, sem a função do aluno
    if not c.close(got.attentions, ref.attentions, f"{label}: as atenções de todas as camadas", atol=1e-5,
                   hint="nos casos pequenos deu certo: confira os tipos (o modelo usa float32) e a escala sqrt(d_k)."):
        return
    c.close(got.hidden_states[-1], ref.hidden_states[-1], f"{label}: o estado final (o que o modelo produz)",
            atol=1e-3, rtol=1e-3, hint="as atenções batem: confira a saída (concat @ W_o + b_o) em cada camada.")


@check("Projeto (a linha de atenção de um token)")
def projeto(c: Checker, fn, encoder):
    """Confere ``fn(encoder, frase, camada, cabeca, palavra) -> (tokens, linha)``: a linha do token ``▁palavra``."""
    encoder = _confiavel(encoder)
    for sentence, layer, head, word in c.casos(((SENTENCES[0][0], 5, 3, "ele"), (SENTENCES[1][0], 0, 0, "porta"),
                                                (SENTENCES[1][0], 11, 11, "frio"))):
        label = f"camada {layer}, cabeça {head}, “{word}”"
        result = c.call(label, fn, encoder, sentence, layer, head, word,
                        names=("encoder", "frase", "camada", "cabeca", "palavra"), forbidden=_REFERENCIAS)
        if not c.expect(isinstance(result, (tuple, list)) and len(result) == 2, f"{label}: devolve (tokens, linha)",
                        "uma tupla (tokens, linha)", _descricao(result), _dica_retorno(result, "tokens", "linha")):
            return
        tokens, row = result
        out = encoder(sentence)
        if not c.expect(isinstance(tokens, (list, tuple)) and list(tokens) == out.tokens, f"{label}: tokens (1º item)",
                        out.tokens, list(tokens) if isinstance(tokens, (list, tuple)) else _descricao(tokens),
                        "o 1º item são os tokens, encoder(frase).tokens; a ordem do return é (tokens, linha)."):
            return
        ref = out.attentions[layer, head, _token_index(out.tokens, word)]
        if not c.close(row, ref, f"{label}: linha de atenção",
                       hint="out.attentions[camada, cabeca, i], com i o índice de '▁' + palavra em tokens."):
            return


proteger()  # a foto da biblioteca e desta verificação, antes do código do aluno
