"""Verificações da Aula 3 (Módulo 6): a atenção de um Transformer de verdade (``03-exercicios``, ``04-projeto``).

As referências são calculadas aqui a partir de ``EncoderOutput.attentions`` (n_layers, n_heads, n, n).
"""

from __future__ import annotations

import dataclasses
import re
from typing import NoReturn

import numpy as np

from ..attention import attend, attend_checked, scaled_dot_product_attention, self_attention
from ..multihead import MultiHeadAttention, merge_heads, split_heads
from .framework import Checker, call_frozen, case_seed, check, describe, matching_hint, mistake, passou, protect
from .multihead_hints import diagnose_heads

# As referências (_top_heads, ...) ficam privadas: são as respostas dos exercícios, não ferramentas do aluno.
__all__ = ["passou", "exercicio_1", "exercicio_2", "exercicio_3", "exercicio_4", "projeto"]


def _token_index(tokens: list, word: str) -> int:
    """Índice da primeira peça que é a palavra ``word`` inteira (``▁word``)."""
    return tokens.index("▁" + word)


def _last_index(tokens: list, word: str) -> int:
    """Índice da última peça ``▁word`` (o engano de quem monta um dicionário token → índice)."""
    return len(tokens) - 1 - tokens[::-1].index("▁" + word)


def _substring_index(tokens: list, word: str) -> int | None:
    """Índice da primeira peça que CONTÉM ``word`` (o engano de quem procura com ``palavra in t``, ou com
    ``t.startswith("▁" + palavra)``); ``None`` se nenhuma."""
    return next((k for k, t in enumerate(tokens) if word in t), None)


def _substring_hint(tokens: list, *words: str) -> str:
    """A dica de quem achou a palavra por um pedaço: ``'ele' in '▁elefant'``."""
    pecas = [f"“{w}” é um pedaço de '{tokens[k]}'" for w in words
             if (k := _substring_index(tokens, w)) is not None and k != _token_index(tokens, w)]
    return (mistake("substring_match",
            f"{' e '.join(pecas)}, uma peça que vem antes na frase: procurar com `in` (palavra in t, ou "
            "t.startswith) acha a primeira peça que CONTÉM a palavra. Procure o token exato, não um pedaço: "
            "out.tokens.index(\"▁\" + palavra)."))


def _word_without_marker(exc: BaseException, palavras) -> str | None:
    """A palavra procurada sem o ``▁`` quando o erro é o ``ValueError: 'ele' is not in list`` de ``list.index``
    (pela mensagem: a função do aluno pode rodar em outro processo); ``None`` se o erro é outro."""
    if not isinstance(exc, ValueError):
        return None
    m = re.fullmatch(r"'(.*)' is not in list|(?:tuple|list)\.index\(x\): x not in (?:tuple|list)", str(exc).strip())
    if m is None:
        return None
    if m.group(1) is None:  # tuple.index: a mensagem não diz qual; a primeira palavra procurada serve de exemplo
        return palavras[0]
    return m.group(1) if m.group(1) in palavras else None


def _fail_missing_marker(c: Checker, label: str, palavra: str, exc: BaseException) -> NoReturn:
    """O ❌ de quem procurou a palavra sem o ``▁`` (no lugar do ``ValueError`` cru de ``list.index``), que encerra a
    verificação."""
    c.fail(f"{label}: acha em out.tokens a peça de cada palavra", f"o índice de '▁{palavra}'", f"ValueError: {exc}",
           f"as peças do modelo marcam o começo de cada palavra com ▁ (o caractere U+2581, não um _): em out.tokens "
           f"está '▁{palavra}', e não '{palavra}'. Procure a peça com o ▁: out.tokens.index(\"▁\" + palavra).")


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


def _trusted_encoder(encoder):
    """O codificador da verificação: o ``load_e5()`` desta cópia da biblioteca, não o que a célula passou.

    As referências vêm dele, e é ele que a função do aluno recebe: um codificador trocado ou "ajeitado"
    no notebook (atenções uniformes, por exemplo) não muda o que é esperado. No notebook é o mesmo objeto
    de ``load_e5()`` (ele fica em cache); o argumento ``encoder`` fica na chamada só pela forma da célula.
    """
    from ..bert import load_e5

    return load_e5()


# ligam a vigilância nas chamadas da função do aluno: as referências acima (e qualquer função da verificação)
# não são ferramentas da resposta
_REFERENCES = (_top_heads, _mean_attention_distance, _special_token_mass)

SENTENCES = [
    ("O gato pulou no muro porque ele estava assustado", "ele", "gato"),
    ("A mulher abriu a porta porque ela estava com frio", "ela", "mulher"),
]


def _as_pairs(got):
    """A resposta como lista de (camada, cabeça); aceita lista, tupla ou array (k, 2). ``None`` se não der."""
    if isinstance(got, np.ndarray):
        got = got.tolist()
    if not isinstance(got, (list, tuple)):
        return None
    try:
        return [tuple(int(x) for x in pair) for pair in got]
    except (TypeError, ValueError):
        return None


# "ele" e "gato" duas vezes: o enunciado pede a primeira ocorrência (list.index), e um dicionário token → índice
# (ou um laço sem break) acha a última
REPEATED_SENTENCE = "o gato olhou para ele e ele olhou para o gato"

# "ele" também é um pedaço de "▁elefant" (a 1ª peça de "elefante"), que vem antes: quem procura a palavra com `in`
# (palavra in t) acha a peça errada. Este caso só aparece no relatório quando falha (as frases de sempre não
# separam a busca exata da busca por pedaço, e as saídas guardadas dos notebooks ficam como estão).
SUBSTRING_SENTENCE = "O elefante assustou o gato porque ele era enorme"

# ---------- as frases sorteadas na conferência da correção ----------
# No notebook, as frases acima; na conferência da correção, cada caso sorteia uma frase nova, montada de um molde
# com o mesmo papel (o pronome e o antecedente, a palavra repetida, o pedaço que vem antes) e de listas de
# palavras: cerca de 95 mil frases simples, 48 mil com repetição e 57 mil com o pedaço, além de k, da camada e da
# cabeça sorteados. Cada frase do modelo custa uma passada de ~20 ms, e uma tabela de respostas montada na célula
# não cobre esse espaço. Os substantivos são peças inteiras do vocabulário (▁gato); a frase sorteada é conferida
# pelo tokenizador (:func:`_fits`) antes de entrar num caso.
_NOUNS = {
    "o": ("gato", "cachorro", "menino", "homem", "pai", "rapaz", "professor", "médico", "aluno", "rato", "peixe",
          "policial", "tio", "irmão", "amigo", "filho", "rei", "senhor", "velho", "primo", "bebê", "gerente", "diretor",
          "advogado", "doutor", "padre", "guarda", "piloto", "dono", "marido", "jovem", "estudante", "artista",
          "cliente", "motorista", "presidente"),
    "a": ("mulher", "mãe", "professora", "médica", "vaca", "tia", "irmã", "amiga", "filha", "garota", "criança",
          "esposa", "dona", "gata", "pata", "prima", "fada", "pessoa", "jovem", "estudante", "artista", "cliente",
          "motorista", "presidente"),
}
_PRONOUN = {"o": "ele", "a": "ela"}
_ACTIONS = ("pulou no muro", "abriu a porta", "fechou a janela", "subiu na mesa", "saiu da sala", "correu para casa",
            "ficou em casa", "entrou no carro", "dormiu no sofá", "parou na rua", "voltou para casa", "caiu da escada",
            "perdeu o ônibus", "chegou tarde", "saiu de casa", "olhou para trás", "desceu do telhado",
            "atravessou a rua")
_STATES = ("estava", "parecia", "ficou", "andava")
# (masculino, feminino)
_ADJECTIVES = (("assustado", "assustada"), ("cansado", "cansada"), ("molhado", "molhada"), ("animado", "animada"),
               ("nervoso", "nervosa"), ("preocupado", "preocupada"), ("sozinho", "sozinha"), ("ocupado", "ocupada"),
               ("atrasado", "atrasada"), ("irritado", "irritada"), ("com frio", "com frio"), ("com fome", "com fome"),
               ("com medo", "com medo"), ("com sono", "com sono"), ("feliz", "feliz"), ("triste", "triste"),
               ("doente", "doente"), ("tranquilo", "tranquila"), ("perdido", "perdida"), ("curioso", "curiosa"),
               ("alegre", "alegre"), ("calmo", "calma"))
_TOWARDS = ("olhou", "sorriu", "acenou", "gritou", "apontou", "correu", "ligou", "cantou", "voltou", "piscou")
_CONNECTIVES = ("e", "mas", "e então", "e depois")
# o antecedente começa por uma peça que CONTÉM o pronome “ele” e começa por ele (▁elefant, ▁elenco): quem procura
# com `in` ou com t.startswith("▁" + palavra) acha essa peça
_CONTAINING = ("elefante", "eleitor", "elevador", "elenco", "elemento", "eleito", "eleitorado", "elefantinho")
_TRANSITIVE = ("assustou", "acordou", "empurrou", "seguiu", "chamou", "derrubou", "encontrou", "ajudou", "procurou",
               "esperou", "visitou", "observou")
_SIZES = (("enorme", "enorme"), ("grande", "grande"), ("barulhento", "barulhenta"), ("pesado", "pesada"),
          ("estranho", "estranha"), ("lento", "lenta"), ("antigo", "antiga"), ("bonito", "bonita"),
          ("pequeno", "pequena"), ("forte", "forte"))


def _pick(rng, opcoes):
    return opcoes[int(rng.integers(len(opcoes)))]


def _plain_sentence(rng) -> tuple:
    """(frase, pronome, antecedente), como as de :data:`SENTENCES`: “O gato pulou no muro porque ele estava
    assustado”."""
    art = _pick(rng, ("o", "a"))
    nome, pron = _pick(rng, _NOUNS[art]), _PRONOUN[art]
    adj = _pick(rng, _ADJECTIVES)[art == "a"]
    return f"{art.upper()} {nome} {_pick(rng, _ACTIONS)} porque {pron} {_pick(rng, _STATES)} {adj}", pron, nome


def _repeated_sentence(rng) -> tuple:
    """(frase, pronome, substantivo), os dois duas vezes, como :data:`REPEATED_SENTENCE`."""
    art = _pick(rng, ("o", "a"))
    nome, pron = _pick(rng, _NOUNS[art]), _pick(rng, ("ele", "ela"))
    return (f"{art} {nome} {_pick(rng, _TOWARDS)} para {pron} {_pick(rng, _CONNECTIVES)} {pron} "
            f"{_pick(rng, _TOWARDS)} para {art} {nome}", pron, nome)


def _containing_sentence(rng) -> tuple:
    """(frase, “ele”, objeto), com “ele” no começo de uma peça anterior, como :data:`SUBSTRING_SENTENCE`."""
    art = _pick(rng, ("o", "a"))
    nome = _pick(rng, _NOUNS[art])
    return (f"O {_pick(rng, _CONTAINING)} {_pick(rng, _TRANSITIVE)} {art} {nome} porque ele era "
            f"{_pick(rng, _SIZES)[0]}", "ele", nome)


def _fits(tokens: list, src: str, dst: str, kind: str) -> bool:
    """A frase sorteada serve ao papel ``kind`` do caso? As duas palavras são peças inteiras; ``"plain"``: uma
    vez cada, sem pedaço antes; ``"repeated"``: as duas repetidas; ``"containing"``: uma peça anterior começa pela
    origem (``▁elefant`` para “ele”)."""
    if "▁" + src not in tokens or "▁" + dst not in tokens:
        return False
    primeira = {w: _token_index(tokens, w) for w in (src, dst)}
    if kind == "repeated":
        return all(_last_index(tokens, w) != primeira[w] for w in (src, dst))
    if kind == "containing":
        pedaco = _substring_index(tokens, src)
        return pedaco < primeira[src] and tokens[pedaco].startswith("▁" + src)
    return all(_last_index(tokens, w) == primeira[w] == _substring_index(tokens, w) for w in (src, dst))


_MAKERS = {"plain": _plain_sentence, "repeated": _repeated_sentence, "containing": _containing_sentence}


def _drawn_sentence(rng, encoder, kind: str = "plain", n_tokens: int | None = None) -> tuple:
    """Uma frase sorteada do molde ``kind`` que serve ao caso (:func:`_fits`), conferida pelo tokenizador do
    modelo (sem passar pelo modelo), e, com ``n_tokens``, desse número de peças. Devolve (frase, origem, destino).
    """
    for _ in range(2000):
        frase, src, dst = _MAKERS[kind](rng)
        tokens = [encoder.tokenizer.pieces[i] for i in encoder.tokenizer.encode(frase)]
        if _fits(tokens, src, dst, kind) and n_tokens in (None, len(tokens)):
            return frase, src, dst
    raise RuntimeError(f"nenhuma frase sorteada do molde {kind!r} serviu")  # as listas acima sempre servem


# o modelo tem 12 camadas e 12 cabeças: trocar uma contagem pela outra só aparece num recorte com menos camadas
TRUNCATED_LAYERS = 7
_TRUNCATED: dict = {}


def _truncated(encoder, n_layers: int = TRUNCATED_LAYERS):
    """O mesmo codificador só com as ``n_layers`` primeiras camadas (os mesmos pesos, sem cópia): as atenções
    têm forma (n_layers, 12, n, n), com números de camadas e de cabeças diferentes."""
    from ..bert import BertEncoder

    chave = (id(encoder), n_layers)
    if chave not in _TRUNCATED or _TRUNCATED[chave][0] is not encoder:
        config = dataclasses.replace(encoder.config, n_layers=n_layers)
        _TRUNCATED[chave] = (encoder, BertEncoder(config, encoder.weights, encoder.tokenizer))
    return _TRUNCATED[chave][1]


def _top_heads_hint(got: list, ref: list, attentions: np.ndarray, tokens: list, src: str, dst: str,
                    k: int) -> str | None:
    """Dica para uma lista de cabeças errada, reconhecendo os enganos comuns; ``None`` se nenhum."""
    i, j = _token_index(tokens, src), _token_index(tokens, dst)
    n_layers, n_heads = attentions.shape[:2]
    if len(got) != len(ref):
        return mistake("wrong_k", f"devolva exatamente k = {k} pares (use o argumento k da função).")
    if sorted(got) == sorted(ref):
        return mistake("heads_unsorted", "as cabeças certas, mas fora de ordem: ordene do maior peso para o menor.")
    if got == _top_heads(attentions, j, i, k):
        return mistake("row_column_swapped", "linha e coluna trocadas: a linha é quem olha (origem), a coluna é para "
                       "quem (destino).")
    ultimas = (_last_index(tokens, src), _last_index(tokens, dst))
    if ultimas != (i, j):
        for ii, jj in {ultimas, (ultimas[0], j), (i, ultimas[1])}:
            if got == _top_heads(attentions, ii, jj, k):
                repetidas = [f"“{p}”" for p, a, b in ((src, i, ultimas[0]), (dst, j, ultimas[1])) if a != b]
                verbo = "aparecem" if len(repetidas) > 1 else "aparece"
                return (mistake("last_occurrence",
                        f"{' e '.join(repetidas)} {verbo} duas vezes na frase e a sua função usou a última "
                        f"ocorrência; o enunciado pede a primeira: out.tokens.index(\"▁\" + palavra) (um dicionário "
                        f"{{token: índice}} ou um laço sem break guarda a última)."))
    pedacos = (_substring_index(tokens, src), _substring_index(tokens, dst))
    if pedacos != (i, j) and None not in pedacos and got == _top_heads(attentions, *pedacos, k):
        return _substring_hint(tokens, src, dst)
    if got == [(h, c) for c, h in ref]:
        return mistake("layer_head_swapped", "cada par é (camada, cabeça), nessa ordem: a camada é o 1º índice de "
                       "out.attentions.")
    w = attentions[:, :, i, j]
    ordem = np.argsort(-w, axis=None, kind="stable")[:k]
    if n_layers != n_heads and got == [tuple(int(x) for x in np.unravel_index(o, (n_heads, n_layers))) for o in ordem]:
        return (mistake("unravel_counts_swapped",
                f"o índice achatado virou (camada, cabeça) com as contagens trocadas: aqui há {n_layers} camadas e "
                f"{n_heads} cabeças, e w = out.attentions[:, :, i, j] tem forma ({n_layers}, {n_heads}). Use "
                f"np.unravel_index(o, w.shape) (ou camada = o // n_cabecas, cabeca = o % n_cabecas)."))
    return None


@check("Exercício 1 (as cabeças em que “ele” olha para “gato”)")
def exercicio_1(c: Checker, fn, encoder):
    """Confere ``fn(encoder, frase, origem, destino, k=5) -> [(camada, cabeça), ...]`` (maior peso primeiro).

    O ``k`` varia (5, 3 e 8; na conferência da correção, sorteado, como as frases: :func:`_heads_cases`): uma
    resposta que ignora ``k`` não passa. Uma frase tem a origem e o destino duas
    vezes (vale a primeira ocorrência, como pede o enunciado), e o último caso usa um recorte do modelo com
    7 camadas e 12 cabeças (trocar as contagens de camadas e de cabeças não passa). O último caso, em que “ele”
    é também um pedaço de ``▁elefant``, só aparece no relatório quando falha (a busca por pedaço, ``origem in t``,
    acha a peça errada). Aceita lista, tupla ou array (k, 2).
    """
    encoder = _trusted_encoder(encoder)
    for sentence, src, dst, k, modelo in c.cases(_heads_cases(encoder)):
        label = f"“{src}” → “{dst}” em “{sentence}”, k={k}"
        if modelo is not encoder:
            label += f", num recorte do modelo ({modelo.config.n_layers} camadas × {modelo.config.n_heads} cabeças)"
        try:
            bruto = c.call(label, fn, modelo, sentence, src, dst, k=k,
                           names=("encoder", "frase", "origem", "destino"), forbidden=_REFERENCES)
        except ValueError as exc:
            palavra = _word_without_marker(exc, (src, dst))
            if palavra is None:
                raise
            _fail_missing_marker(c, label, palavra, exc)
        except IndexError as exc:
            if modelo is encoder:
                raise
            c.fail(f"{label}: a função usa as formas de out.attentions", "nenhum erro", f"IndexError: {exc}",
                   f"este modelo tem {modelo.config.n_layers} camadas e {modelo.config.n_heads} cabeças: tire as "
                   "contagens de out.attentions.shape (ou de w.shape), em vez de escrever 12.")
        out = modelo(sentence)  # a referência, depois da chamada
        i, j = _token_index(out.tokens, src), _token_index(out.tokens, dst)
        ref = _top_heads(out.attentions, i, j, k)
        got = _as_pairs(bruto)
        if c.case == c.n_cases and got == ref:
            continue  # o último caso, o da busca por pedaço, só aparece quando falha
        c.require(got is not None, f"{label}: devolve uma lista de pares (camada, cabeça)",
                  "[(camada, cabeça), ...]", repr(bruto)[:80] if bruto is not None else "None (nada)",
                  "faltou um `return` no fim da função?" if bruto is None else
                  "devolva uma lista de tuplas (camada, cabeça), por exemplo [(5, 3), (4, 1)]; sem o peso.")
        hint = _top_heads_hint(got, ref, out.attentions, out.tokens, src, dst, k) if got != ref else None
        c.expect(got == ref, label, ref, got,
                 hint or "use out.attentions[:, :, i, j] (camadas × cabeças) e ordene pelos maiores pesos.")


def _heads_cases(encoder) -> list:
    """Os casos do exercício 1, ``(frase, origem, destino, k, modelo)``: duas frases simples, uma com as duas
    palavras repetidas, uma no recorte do modelo e, por último, a do pedaço (:data:`SUBSTRING_SENTENCE`). No
    notebook, as de sempre; na conferência da correção, frases, k (de 2 a 10, nunca o 5 do padrão) e número de
    camadas do recorte (de 2 a 11) sorteados."""
    seed = case_seed(None)
    if seed is None:
        return [(*SENTENCES[0], 5, encoder), (*SENTENCES[1], 3, encoder),
                (REPEATED_SENTENCE, "ele", "gato", 5, encoder), (*SENTENCES[0], 8, _truncated(encoder)),
                (SUBSTRING_SENTENCE, "ele", "gato", 5, encoder)]
    rng = np.random.default_rng(seed)
    ks = [int(k) for k in rng.choice([2, 3, 4, 6, 7, 8, 9, 10], size=5)]
    recorte = _truncated(encoder, int(rng.integers(2, 12)))
    papeis = (("plain", encoder), ("plain", encoder), ("repeated", encoder), ("plain", recorte),
              ("containing", encoder))
    return [(*_drawn_sentence(rng, encoder, kind), k, modelo) for (kind, modelo), k in zip(papeis, ks)]


def _shape_hint(got: np.ndarray, attentions: np.ndarray) -> str | None:
    """Dica para um resultado que não tem a forma (n_layers,): por cabeça, por consulta, por cabeça em vez de
    por camada."""
    n_layers, n_heads, n = attentions.shape[:3]
    if got.shape == (n_layers,):
        return None
    if got.shape == (n_layers, n_heads):
        return (mistake("missing_mean_over_heads", "um valor por camada: tire a média também sobre as cabeças, "
                        ".mean(axis=(1, 2)) no array (n_layers, n_heads, n), não só sobre as consultas."))
    if got.shape == (n_layers, n):
        return mistake("missing_mean_over_queries", "um valor por camada: tire a média também sobre as consultas (eixo "
                       "2), não só sobre as cabeças.")
    if got.shape == (n_heads,) and n_heads != n_layers:
        return (mistake("value_per_head",
                f"saiu um valor por cabeça ({n_heads}): a média é sobre as cabeças (eixo 1) e as consultas (eixo 2), "
                f"e sobra um valor por camada (eixo 0, {n_layers} camadas)."))
    if got.ndim == 0 or got.shape == (1,):
        return mistake("mean_over_everything", "um valor por camada, não um número só: tire a média só sobre as "
                       "cabeças e as consultas (eixos 1 e 2).")
    return f"devolva um array de forma (n_layers,) = ({n_layers},): um valor por camada."


@check("Exercício 2 (distância média da atenção por camada)")
def exercicio_2(c: Checker, fn, encoder):
    """Confere ``fn(attentions) -> ndarray (n_layers,)`` em atenções sorteadas (2 camadas × 3 cabeças e
    3 camadas × 5 cabeças) e nas do modelo (numa frase sorteada, na conferência da correção). Reconhece os
    enganos comuns (sem os pesos, sem o valor absoluto, a distância ao quadrado, média em vez de soma sobre j, uma
    cabeça só, a média das camadas, soma em vez de média nas cabeças, só o token de maior peso) e dá a dica de
    cada um."""
    rng = np.random.default_rng(case_seed(3))
    cases = [rng.dirichlet(np.ones(n), size=(L, H, n)) for L, H, n in ((2, 3, 4), (3, 5, 7))]
    modelo = _trusted_encoder(encoder)
    cases.append(modelo(_model_sentence(modelo, same_length=True)).attentions)
    for k, att in enumerate(c.cases(cases), start=1):
        got = c.array(c.call(f"caso {k}", fn, att, names=("attentions",), forbidden=_REFERENCES),
                      f"caso {k}: devolve um array", stop=True)
        ref = _mean_attention_distance(att)
        hint = _shape_hint(got, att) or _distance_hint(got, ref, np.asarray(att, dtype=float))
        c.close(got, ref, f"caso {k}: atenções de forma {att.shape}", hint=hint)


def _model_sentence(encoder, same_length: bool = False) -> str:
    """A frase que roda no modelo (exercícios 2 e 4): no notebook, a 1ª de :data:`SENTENCES`; na conferência da
    correção, uma frase simples sorteada, com ``same_length`` do mesmo número de peças (a forma das atenções,
    escrita no critério, é então a mesma a cada correção)."""
    seed = case_seed(None)
    if seed is None:
        return SENTENCES[0][0]
    n = len(encoder.tokenizer.encode(SENTENCES[0][0])) if same_length else None
    return _drawn_sentence(np.random.default_rng(seed), encoder, n_tokens=n)[0]


def _distance_hint(got: np.ndarray, ref: np.ndarray, att: np.ndarray) -> str:
    n = att.shape[-1]
    diff = np.arange(n)[:, None] - np.arange(n)[None, :]  # i − j
    dist = np.abs(diff)
    por = lambda d: (att * d).sum(-1)  # noqa: E731 - (n_layers, n_heads, n): Σ_j w_ij d_ij
    candidatos = [
        (mistake("unweighted_distance", "a distância precisa ser ponderada pelos "
                 "pesos: Σ_j w_ij · |i − j|."), np.full(att.shape[0], dist.mean())),
        (mistake("missing_abs", "faltou o valor absoluto: use |i − j| (np.abs), senão olhar para trás e para a frente "
                 "se cancelam."),
         por(diff).mean(axis=(1, 2))),
        (mistake("squared_distance", "a distância é |i − j|, não "
                 "(i − j)² (sem elevar ao quadrado)."), por(diff ** 2).mean(axis=(1, 2))),
        (mistake("mean_instead_of_sum_over_keys", "para cada consulta, SOME sobre j (Σ_j w_ij |i − j|): os pesos já "
                 "somam 1, então .mean(-1) divide por n a mais."), (att * dist).mean(-1).mean(axis=(1, 2))),
        (mistake("sum_over_heads", "média sobre as cabeças, não soma: .mean(axis=(1, 2)) no array (n_layers, n_heads, "
                 "n)."),
         por(dist).sum(1).mean(-1)),
        (mistake("first_head_only", "a média inclui todas as cabeças, não só a primeira."), por(dist)[:, 0].mean(-1)),
        (mistake("mean_over_layers", "um valor para cada camada: não tire a média também sobre as camadas."),
         np.full(att.shape[0], por(dist).mean())),
        (mistake("argmax_distance", "a distância média usa todos os pesos da linha (Σ_j w_ij |i − j|), não só a do "
                 "token de maior peso."),
         np.abs(att.argmax(-1) - np.arange(n)).mean(axis=(1, 2))),
    ]
    return matching_hint(got, candidatos, ref) or (
        "para cada camada: média sobre cabeças e consultas de Σ_j w_ij |i − j| (a soma sobre as colunas j "
        "de cada linha).")


@check("Exercício 3 (atenção nos tokens especiais)")
def exercicio_3(c: Checker, fn, encoder):
    """Confere ``fn(encoder, frase) -> ndarray (n_layers,)``: fração da atenção em ``<s>`` e ``</s>``. Reconhece
    os enganos comuns (uma coluna só, as linhas em vez das colunas, a média das duas colunas, a coluna errada,
    sem as consultas especiais, uma cabeça só, soma nas cabeças) e dá a dica de cada um. Duas frases: as de sempre
    no notebook, duas sorteadas na conferência da correção."""
    encoder = _trusted_encoder(encoder)
    seed = case_seed(None)  # no notebook, as frases de sempre; na conferência da correção, duas sorteadas
    frases = (SENTENCES[0][0], "Não deixe o coração decidir sozinho")
    if seed is not None:
        rng = np.random.default_rng(seed)
        frases = (_drawn_sentence(rng, encoder)[0], _drawn_sentence(rng, encoder, "repeated")[0])
    for sentence in c.cases(frases):
        got = c.array(c.call(f"“{sentence}”", fn, encoder, sentence, names=("encoder", "frase"),
                             forbidden=_REFERENCES),
                      f"“{sentence}”: devolve um array", stop=True)
        out = encoder(sentence)
        ref = _special_token_mass(out.attentions)
        hint = _shape_hint(got, out.attentions) or _special_hint(got, ref, out.attentions.astype(float))
        c.close(got, ref, f"“{sentence}”: fração por camada", hint=hint)


def _special_hint(got: np.ndarray, ref: np.ndarray, a: np.ndarray) -> str:
    media = lambda x: x.mean(axis=(1, 2))  # noqa: E731 - (n_layers, n_heads, n) -> (n_layers,)
    candidatos = [
        (mistake("missing_eos_column", "some as duas colunas: a de <s> (posição 0) e a de </s> (última); faltou a de "
                 "</s>."), media(a[..., 0])),
        (mistake("missing_bos_column", "some as duas colunas: a de <s> (posição 0) e a de </s> (última); faltou a de "
                 "<s>."), media(a[..., -1])),
        (mistake("averaged_columns", "a fração é o peso em <s> MAIS o peso em </s>: some as duas colunas, sem dividir "
                 "por 2."),
         media((a[..., 0] + a[..., -1]) / 2)),
        (mistake("rows_instead_of_columns", "use as COLUNAS de <s> e </s> (quanto cada token dá a eles, a[..., 0] e "
                 "a[..., -1]), não as linhas (a[..., 0, "
                 ":] é para onde o próprio <s> olha)."), media(a[..., 0, :] + a[..., -1, :])),
        (mistake("bos_wrong_position", "<s> é a posição 0 "
                 "(a primeira coluna), não a 1."), media(a[..., 1] + a[..., -1])),
        (mistake("eos_wrong_position", "</s> é a última posição (coluna -1)."), media(a[..., 0] + a[..., -2])),
        (mistake("special_queries_excluded", "a média é sobre todas as consultas, inclusive as linhas de <s> e </s>."),
         media(a[..., 1:-1, 0] + a[..., 1:-1, -1])),
        (mistake("first_head_only", "a média inclui todas as "
                 "cabeças, não só a primeira."), (a[:, 0, :, 0] + a[:, 0, :, -1]).mean(-1)),
        (mistake("sum_over_heads", "média sobre as cabeças, não soma: .mean(axis=(1, 2)) no array (n_layers, n_heads, "
                 "n)."),
         (a[..., 0] + a[..., -1]).sum(1).mean(-1)),
        (mistake("mean_over_layers", "um valor para cada camada: não tire a média também sobre as camadas."),
         np.full(a.shape[0], (a[..., 0] + a[..., -1]).mean())),
    ]
    return matching_hint(got, candidatos, ref) or (
        "por camada: média, sobre cabeças e consultas, de w[:, 0] + w[:, -1] (a coluna de <s> mais a de </s>).")


# o exercício 4 é a atenção multicabeça do aluno: as prontas ficam fora, como na Aula 2
_FORBIDDEN_MHA = (*_REFERENCES, scaled_dot_product_attention, attend, attend_checked, self_attention,
                  MultiHeadAttention, split_heads, merge_heads)
_MHA_NAMES = ("X", "W_q", "W_k", "W_v", "W_o", "n_heads", "b_q", "b_k", "b_v", "b_o")


@check("Exercício 4 (a sua atenção multicabeça no modelo de verdade)")
def exercicio_4(c: Checker, fn, encoder):
    """Confere ``fn(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o) -> (saida, pesos)``: a atenção
    multicabeça da Aula 2 (exercício 2) com os vieses, ``Q = X @ W_q + b_q`` (idem K e V) e
    ``saida = concat @ W_o + b_o``.

    Casos: três camadas pequenas sorteadas, comparadas com :class:`~atencao.MultiHeadAttention`; depois o
    modelo inteiro, ``encoder(frase, attention_fn=fn)``, com as atenções das 12 camadas iguais às da
    biblioteca (≤ 1e-5) e o mesmo estado final (numa frase sorteada, na conferência da correção). Fonte: Aula 3,
    ``03-exercicios`` (exercício 4).
    """
    rng = np.random.default_rng(case_seed(4))
    for n, d_model, n_heads in c.cases(((5, 8, 2), (3, 12, 3), (1, 8, 4))):
        X = rng.normal(size=(n, d_model))
        Ws = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        bs = [rng.normal(size=d_model) for _ in range(4)]
        label = f"n={n}, d_model={d_model}, n_heads={n_heads}, com vieses"
        (out, A), (X, W_q, W_k, W_v, W_o, _, b_q, b_k, b_v, b_o) = call_frozen(
            c, label, fn, X, *Ws, n_heads, *bs, names=_MHA_NAMES, forbidden=_FORBIDDEN_MHA)
        ref_out, ref_A = MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, n_heads=n_heads)(X)
        sem_vieses = MultiHeadAttention.from_weights(W_q, W_k, W_v, W_o, n_heads=n_heads)(X)
        if A.shape != ref_A.shape:
            dica = mistake("wrong_heads_shape", "os pesos devem ter forma (n_heads, n, n): uma matriz de atenção por "
                           "cabeça.")
        elif np.allclose(A, sem_vieses[1], atol=1e-6):
            dica = mistake("missing_biases", "faltou somar os vieses: Q = X @ W_q + b_q, K = X @ W_k + b_k, V = X @ "
                           "W_v + b_v.")
        else:  # os mesmos enganos da Aula 2, exercício 2 (escala, divisão em cabeças, softmax), agora com vieses
            dica = diagnose_heads(X, W_q, W_k, n_heads, A, b_q, b_k)
        c.close(A, ref_A, f"{label}: pesos por cabeça (n_heads, n, n)", hint=dica, stop=True)
        c.close(out, ref_out, f"{label}: saída (n, d_model)",
                hint=_output_hint(out, ref_out, X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o))
    encoder = _trusted_encoder(encoder)
    frase = _model_sentence(encoder)
    label = f"no modelo (12 camadas), “{frase}”"
    got = c.call(label, encoder.forward, frase, attention_fn=fn, names=("frase",), forbidden=_FORBIDDEN_MHA)
    ref = encoder(frase)  # a referência, depois: a biblioteca, sem a função do aluno
    c.close(got.attentions, ref.attentions, f"{label}: as atenções de todas as camadas", atol=1e-5, stop=True,
            hint="nos casos pequenos deu certo: confira os tipos (o modelo usa float32) e a escala sqrt(d_k).")
    c.close(got.hidden_states[-1], ref.hidden_states[-1], f"{label}: o estado final (o que o modelo produz)",
            atol=1e-3, rtol=1e-3, hint="as atenções batem: confira a saída (concat @ W_o + b_o) em cada camada.")


def _output_hint(out, ref_out, X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o) -> str:
    """Dica para uma saída errada com os pesos certos: qual viés (ou passo) ficou de fora."""
    zero = np.zeros_like(b_v)

    def mha(bv, bo, W=W_o):
        return MultiHeadAttention.from_weights(W_q, W_k, W_v, W, b_q, b_k, bv, bo, n_heads=n_heads)(X)[0]

    candidatos = [
        (mistake("missing_b_v", "faltou somar b_v: V = X @ W_v + b_v. Os pesos não mudam sem ele (b_v só entra nos "
                 "valores), mas a saída muda."), mha(zero, b_o)),
        (mistake("missing_b_o", "faltou somar b_o no fim: saida = concat @ W_o + b_o."), mha(b_v, zero)),
        (mistake("missing_b_v_and_b_o", "faltaram dois vieses: b_v nos valores (V = X @ W_v + b_v) e b_o no fim (saida "
                 "= concat @ W_o + b_o)."),
         mha(zero, zero)),
        (mistake("missing_output_projection", "faltou a projeção final: saida = concat @ W_o + b_o (a concatenação das "
                 "cabeças ainda passa por W_o)."),
         mha(b_v, zero, np.eye(len(b_o))) + b_o),
    ]
    return matching_hint(out, candidatos, ref_out, atol=1e-6) or (
        "os pesos estão certos: concatene as cabeças de volta para (n, d_model), na ordem, multiplique por W_o e "
        "some b_o (com V = X @ W_v + b_v).")


@check("Projeto (a linha de atenção de um token)")
def projeto(c: Checker, fn, encoder):
    """Confere ``fn(encoder, frase, camada, cabeca, palavra) -> (tokens, linha)``: a linha do token ``▁palavra``
    (a primeira ocorrência: um caso tem a palavra duas vezes). Reconhece a palavra procurada sem o ``▁``, a
    última ocorrência, a busca por pedaço (``palavra in t`` acha ``▁elefant`` para “ele”: esse último caso só
    aparece no relatório quando falha), a coluna em vez da linha, camada e cabeça trocadas e a média das
    cabeças. Na conferência da correção, os casos são sorteados (:func:`_row_cases`)."""
    encoder = _trusted_encoder(encoder)
    for sentence, layer, head, word in c.cases(_row_cases(encoder)):
        label = f"camada {layer}, cabeça {head}, “{word}”"
        if sentence not in (SENTENCES[0][0], SENTENCES[1][0]):  # as outras (e todas as sorteadas) aparecem no rótulo
            label += f" em “{sentence}”"
        try:
            result = c.call(label, fn, encoder, sentence, layer, head, word,
                            names=("encoder", "frase", "camada", "cabeca", "palavra"), forbidden=_REFERENCES)
        except ValueError as exc:
            if _word_without_marker(exc, (word,)) is None:
                raise
            _fail_missing_marker(c, label, word, exc)
        out = encoder(sentence)
        if c.case == c.n_cases and _same_row(result, out, layer, head, word):
            continue  # o último caso, o da busca por pedaço, só aparece quando falha
        tokens, row = c.returns(result, label, "tokens", "linha", stop=True)
        c.require(isinstance(tokens, (list, tuple)) and list(tokens) == out.tokens, f"{label}: tokens (1º item)",
                  out.tokens, list(tokens) if isinstance(tokens, (list, tuple)) else describe(tokens),
                  "o 1º item são os tokens, encoder(frase).tokens; a ordem do return é (tokens, linha).")
        i, a = _token_index(out.tokens, word), out.attentions
        ref = a[layer, head, i]
        got = c.array(row, f"{label}: a linha é um array de números", stop=True)
        mistakes = [
            (mistake("last_occurrence",
             f"“{word}” aparece duas vezes na frase e a sua função usou a última ocorrência; o enunciado pede a "
             "primeira: out.tokens.index(\"▁\" + palavra)."), a[layer, head, _last_index(out.tokens, word)]),
            (mistake("column_instead_of_row", "é a linha do token (para onde ele olha), out.attentions[camada, cabeca, "
                     "i], não a coluna [..., :, i] (quem olha para ele)."), a[layer, head, :, i]),
            (_substring_hint(out.tokens, word), a[layer, head, _substring_index(out.tokens, word) or 0]),
            (mistake("layer_head_swapped", "camada e cabeça trocadas: out.attentions[camada, cabeca, i], com a camada "
                     "no 1º índice."),
             a[head, layer, i]),
            (mistake("mean_of_heads", "use só a cabeça pedida, não "
                     "a média das cabeças da camada."), a[layer].mean(0)[i]),
        ]
        hint = matching_hint(got, mistakes, ref) or (
            "out.attentions[camada, cabeca, i], com i o índice de '▁' + palavra em tokens (a primeira ocorrência).")
        c.close(got, ref, f"{label}: linha de atenção", hint=hint)


def _row_cases(encoder) -> list:
    """Os casos do projeto, ``(frase, camada, cabeça, palavra)``: três frases simples, uma com a palavra repetida
    e, por último, a do pedaço (:data:`SUBSTRING_SENTENCE`). No notebook, os de sempre; na conferência da
    correção, frases, palavras e camada e cabeça (diferentes entre si: trocá-las não passa) sorteadas."""
    seed = case_seed(None)
    if seed is None:
        return [(SENTENCES[0][0], 5, 3, "ele"), (SENTENCES[1][0], 0, 0, "porta"), (SENTENCES[1][0], 11, 11, "frio"),
                (REPEATED_SENTENCE, 8, 2, "ele"), (SUBSTRING_SENTENCE, 8, 8, "ele")]
    rng = np.random.default_rng(seed)
    casos = []
    for kind, papel in (("plain", None), ("plain", 1), ("plain", 0), ("repeated", None), ("containing", 0)):
        frase, src, dst = _drawn_sentence(rng, encoder, kind)
        layer, head = (int(x) for x in rng.choice(12, size=2, replace=False))
        casos.append((frase, layer, head, (src, dst)[int(rng.integers(2)) if papel is None else papel]))
    return casos


def _same_row(result, out, layer: int, head: int, word: str) -> bool:
    """``result`` é a resposta certa, ``(tokens, linha)``, sem registrar nada no relatório."""
    try:
        tokens, row = result
        row = np.asarray(row, dtype=float)
    except (TypeError, ValueError):
        return False
    ref = out.attentions[layer, head, _token_index(out.tokens, word)]
    return (isinstance(tokens, (list, tuple)) and list(tokens) == out.tokens and row.shape == ref.shape
            and bool(np.allclose(row, ref, atol=1e-5, rtol=1e-5)))


protect()  # a foto da biblioteca e desta verificação, antes do código do aluno
