"""Embeddings simples, **feitos à mão**, para as frases das aulas.

Nada aqui foi treinado. Cada vetor foi escolhido por nós para que palavras relacionadas tenham
vetores parecidos, o que basta para a atenção sem projeções da Aula 1 mostrar o seu mecanismo:
produto escalar alto = atenção alta.

- :func:`gato_felino`: os quatro tokens do exemplo prático da Aula 1 (4 dimensões).
- :data:`FEATURES` e :data:`HAND_MADE_VECTORS`: um pequeno vocabulário para o projeto da Aula 1,
  em 6 dimensões com significado legível (animal, pessoa, ação, lugar/objeto, sentimento, palavra
  funcional).
- :func:`embed`: transforma uma frase em ``(tokens, X)``, com os vetores do vocabulário ou com os
  **seus próprios vetores** (um dicionário token → vetor, ou uma matriz com uma linha por token).
- :func:`embed_hashed`: para qualquer frase, um vetor pseudoaleatório fixo por palavra (Aula 2).

Fonte: Módulo 6, Aula 1 (``02-codigo`` e ``04-projeto``).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from ._validation import as_float_array, check_dim, nfc, shape_str

__all__ = ["gato_felino", "FEATURES", "HAND_MADE_VECTORS", "PROJECT_SENTENCES", "UnknownTokenError", "tokenize",
           "embed", "word_vector", "embed_hashed", "VECTOR_SCALE"]


def gato_felino() -> tuple[list[str], np.ndarray]:
    """Tokens e embeddings do exemplo prático da Aula 1.

    ``gato`` e ``felino`` são propositalmente parecidos; ``pulou`` e ``alto`` são distintos de tudo.

    Returns
    -------
    tokens : list of str
        ``["gato", "felino", "pulou", "alto"]``.
    E : ndarray de float64, forma (4, 4)
        Uma linha por token (uma cópia nova a cada chamada: pode alterar à vontade).

    Fonte: Módulo 6, Aula 1, ``02-codigo``.
    """
    tokens = ["gato", "felino", "pulou", "alto"]
    E = np.array([
        [1.0, 0.0, 0.0, 0.0],  # gato
        [0.9, 0.1, 0.0, 0.0],  # felino (parecido com gato)
        [0.0, 0.0, 1.0, 0.0],  # pulou
        [0.0, 0.0, 0.0, 1.0],  # alto
    ])
    return tokens, E


#: Significado de cada dimensão dos vetores de :data:`HAND_MADE_VECTORS`. Cada coordenada vai de 0
#: a 1 na tabela abaixo e é multiplicada por :data:`VECTOR_SCALE` (2): ao criar os seus vetores para
#: misturar com os do vocabulário, use valores de 0 a 2.
FEATURES = ("animal", "pessoa", "ação", "lugar/objeto", "sentimento", "palavra funcional")

_V = {
    # palavras funcionais (artigos, preposições, conjunções, negação)
    "o": [0.0, 0.0, 0.0, 0.1, 0.0, 1.0],
    "a": [0.0, 0.1, 0.0, 0.0, 0.0, 1.0],
    "no": [0.0, 0.0, 0.0, 0.3, 0.0, 0.9],
    "na": [0.0, 0.0, 0.0, 0.3, 0.0, 0.9],
    "e": [0.0, 0.0, 0.0, 0.0, 0.0, 0.8],
    "não": [0.0, 0.0, 0.1, 0.0, 0.3, 0.7],
    # animais
    "gato": [1.0, 0.0, 0.1, 0.0, 0.0, 0.0],
    "felino": [0.9, 0.0, 0.1, 0.0, 0.0, 0.0],
    "cachorro": [0.95, 0.0, 0.15, 0.0, 0.05, 0.0],
    "cão": [0.95, 0.0, 0.1, 0.0, 0.1, 0.0],
    "pássaro": [0.9, 0.0, 0.3, 0.0, 0.0, 0.0],
    # pessoas
    "menina": [0.1, 1.0, 0.0, 0.0, 0.1, 0.0],
    "menino": [0.1, 1.0, 0.05, 0.0, 0.0, 0.0],
    "avó": [0.0, 0.95, 0.0, 0.0, 0.3, 0.0],
    # ações
    "pulou": [0.0, 0.0, 1.0, 0.1, 0.0, 0.0],
    "subiu": [0.0, 0.0, 1.0, 0.2, 0.0, 0.0],
    "voou": [0.1, 0.0, 1.0, 0.1, 0.0, 0.0],
    "dormem": [0.1, 0.0, 0.6, 0.0, 0.3, 0.0],
    "abraçou": [0.0, 0.2, 0.8, 0.0, 0.5, 0.0],
    "esquece": [0.0, 0.1, 0.5, 0.0, 0.6, 0.0],
    # lugares e objetos
    "alto": [0.0, 0.0, 0.2, 0.8, 0.0, 0.0],
    "telhado": [0.0, 0.0, 0.0, 1.0, 0.0, 0.1],
    "muro": [0.0, 0.0, 0.1, 1.0, 0.0, 0.0],
    "sofá": [0.0, 0.0, 0.0, 0.9, 0.2, 0.0],
    "árvore": [0.1, 0.0, 0.0, 1.0, 0.0, 0.0],
    # sentimentos
    "coração": [0.0, 0.3, 0.0, 0.0, 1.0, 0.0],
    "saudade": [0.0, 0.1, 0.0, 0.0, 0.95, 0.0],
    "amor": [0.0, 0.2, 0.0, 0.0, 1.0, 0.0],
    "feliz": [0.0, 0.3, 0.0, 0.0, 0.9, 0.0],
    # as palavras comuns de uma primeira frase ("Olá, mundo! Tudo bem?", "Eu gosto de você")
    "olá": [0.0, 0.3, 0.1, 0.0, 0.5, 0.5],
    "oi": [0.0, 0.3, 0.1, 0.0, 0.5, 0.5],
    "tchau": [0.0, 0.3, 0.1, 0.0, 0.5, 0.4],
    "mundo": [0.0, 0.1, 0.0, 1.0, 0.1, 0.0],
    "casa": [0.0, 0.1, 0.0, 1.0, 0.2, 0.0],
    "dia": [0.0, 0.0, 0.0, 0.6, 0.1, 0.3],
    "tudo": [0.0, 0.0, 0.0, 0.1, 0.1, 0.9],
    "bem": [0.0, 0.1, 0.1, 0.0, 0.6, 0.4],
    "bom": [0.0, 0.1, 0.0, 0.0, 0.7, 0.3],
    "boa": [0.0, 0.1, 0.0, 0.0, 0.7, 0.3],
    "eu": [0.0, 0.9, 0.0, 0.0, 0.1, 0.5],
    "você": [0.0, 0.9, 0.0, 0.0, 0.1, 0.5],
    "ele": [0.0, 0.9, 0.0, 0.0, 0.0, 0.5],
    "ela": [0.0, 0.9, 0.0, 0.0, 0.0, 0.5],
    "nós": [0.0, 0.9, 0.0, 0.0, 0.1, 0.5],
    "é": [0.0, 0.0, 0.4, 0.0, 0.0, 0.8],
    "está": [0.0, 0.0, 0.4, 0.1, 0.0, 0.8],
    "estou": [0.0, 0.1, 0.4, 0.1, 0.0, 0.8],
    "sou": [0.0, 0.1, 0.4, 0.0, 0.0, 0.8],
    "gosto": [0.0, 0.1, 0.5, 0.0, 0.8, 0.0],
    "um": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    "uma": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    "os": [0.0, 0.0, 0.0, 0.1, 0.0, 1.0],
    "as": [0.0, 0.1, 0.0, 0.0, 0.0, 1.0],
    "de": [0.0, 0.0, 0.0, 0.1, 0.0, 0.9],
    "do": [0.0, 0.0, 0.0, 0.2, 0.0, 0.9],
    "da": [0.0, 0.0, 0.0, 0.2, 0.0, 0.9],
    "em": [0.0, 0.0, 0.0, 0.3, 0.0, 0.9],
    "com": [0.0, 0.0, 0.0, 0.0, 0.1, 0.9],
    "para": [0.0, 0.0, 0.1, 0.1, 0.0, 0.9],
    "que": [0.0, 0.0, 0.0, 0.0, 0.0, 0.9],
    "muito": [0.0, 0.0, 0.0, 0.0, 0.3, 0.7],
}

#: Os vetores acima são multiplicados por esta escala: vetores mais longos deixam a softmax mais
#: "decidida" (pesos menos uniformes), sem mudar quais palavras são parecidas.
VECTOR_SCALE = 2.0

#: Vocabulário feito à mão (token → vetor de 6 dimensões, na ordem de :data:`FEATURES`).
HAND_MADE_VECTORS: dict[str, np.ndarray] = {t: VECTOR_SCALE * np.array(v) for t, v in _V.items()}

#: Frases do projeto da Aula 1, todas cobertas por :data:`HAND_MADE_VECTORS`.
PROJECT_SENTENCES = (
    "O gato subiu no telhado",
    "A menina abraçou o cachorro",
    "O coração não esquece a saudade",
    "O cão e o gato dormem no sofá",
)

class UnknownTokenError(KeyError):
    """Token sem vetor no vocabulário (um ``KeyError`` com mensagem legível em português)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


# uma palavra, ou um caractere que não é palavra nem espaço (pontuação, emoji, símbolo, marca que se combina)
_PIECE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_ZWJ = "\u200d"  # o "zero width joiner" que junta emojis numa figura só (👨‍👩‍👧)
_REGIONAL = range(0x1F1E6, 0x1F200)  # duas letras regionais formam uma bandeira (🇧🇷)


def tokenize(sentence: str) -> list[str]:
    """Separa uma frase em tokens: palavras em minúsculas, acentos mantidos, pontuação descartada; um emoji ou
    outro símbolo (``❤``, ``+``, ``€``) é um token, e nunca some.

    ``tokenize("O coração não esquece!") == ["o", "coração", "não", "esquece"]``;
    ``tokenize("Oi 😀!") == ["oi", "😀"]``. Um emoji feito de várias partes (tom de pele, bandeira, família
    unida por ZWJ, tecla ``1️⃣``) é um token só.

    O texto é normalizado em NFC antes (:func:`atencao._validation.nfc`): uma frase colada com acentos
    decompostos (macOS, PDFs) dá exatamente os mesmos tokens que a digitada.

    Raises
    ------
    TypeError
        Se ``sentence`` não for texto.
    ValueError
        Se não sobrar nenhum token.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"`sentence` precisa ser um texto (str); recebido {type(sentence).__name__}.")
    tokens = _pieces(nfc(sentence).lower())
    if not tokens:
        raise ValueError(f"`sentence` não tem nenhuma palavra: {sentence!r}.")
    return tokens


def _pieces(text: str) -> list[str]:
    """Os tokens de :func:`tokenize`: palavras e símbolos (categoria Unicode S*), com as partes de um emoji
    composto (marcas, seletores de variação, ZWJ, modificadores de tom de pele, a segunda letra de uma
    bandeira) coladas no anterior; a pontuação (categoria P*) fica de fora."""
    tokens: list[str] = []
    colar = False  # o caractere anterior foi um ZWJ: o próximo símbolo faz parte do mesmo emoji
    for m in _PIECE.finditer(text):
        piece = m.group()
        if piece[0] == "_" or piece[0].isalnum():  # \w+: uma palavra
            tokens.append(piece)
            colar = False
            continue
        cat = unicodedata.category(piece)
        bandeira = (ord(piece) in _REGIONAL and tokens and len(tokens[-1]) == 1 and ord(tokens[-1]) in _REGIONAL)
        tom_de_pele = 0x1F3FB <= ord(piece) <= 0x1F3FF
        if tokens and (cat in ("Mn", "Me", "Cf") or tom_de_pele or colar or bandeira):
            tokens[-1] += piece  # parte do token anterior (1️⃣, 👍🏽, 👨‍👩‍👧, 🇧🇷)
        elif cat.startswith("S"):
            tokens.append(piece)
        colar = piece == _ZWJ
    return tokens


def embed(sentence, vectors=None) -> tuple[list[str], np.ndarray]:
    """Frase → ``(tokens, X)``, uma linha de ``X`` por token.

    Parameters
    ----------
    sentence : str ou lista de str
        Texto (separado por :func:`tokenize`) ou uma lista de tokens já separada. Texto, tokens e chaves
        de ``vectors`` são normalizados em NFC: acentos decompostos (colados do macOS ou de um PDF) acham
        os mesmos vetores.
    vectors : dict ou array_like, opcional
        - ``None``: usa :data:`HAND_MADE_VECTORS`;
        - ``dict`` token → vetor: os seus vetores, que têm prioridade sobre os do vocabulário
          (todos com a mesma dimensão);
        - matriz ``(n_tokens, d)``: um vetor por token, na ordem da frase.

    Returns
    -------
    tokens : list of str, tamanho n
    X : ndarray de float64, forma (n, d)

    Raises
    ------
    UnknownTokenError (subclasse de KeyError)
        Se algum token não tiver vetor (a mensagem lista quais e como fornecer).
    ValueError
        Se a matriz tiver número de linhas diferente do número de tokens, ou se os vetores tiverem
        dimensões diferentes, ``NaN`` ou ``inf``.

    Fonte: Módulo 6, Aula 1, ``04-projeto``.
    """
    tokens = _tokens(sentence)
    if vectors is not None and not isinstance(vectors, dict):
        X = as_float_array(vectors, "vectors")
        if X.ndim != 2 or X.shape[0] != len(tokens):
            raise ValueError(
                f"`vectors` precisa ter forma (n_tokens, d) = ({len(tokens)}, d), uma linha por token "
                f"de {tokens}; recebida forma {shape_str(X.shape)}."
            )
        return tokens, X.astype(np.float64, copy=False)
    table = dict(HAND_MADE_VECTORS)
    if vectors:
        table.update({nfc(str(k)).lower() if isinstance(sentence, str) else nfc(str(k)): v for k, v in vectors.items()})
    missing = [t for t in dict.fromkeys(tokens) if t not in table]
    if missing:
        raise UnknownTokenError(
            f"Sem vetor para {missing}. Passe os seus: embed(frase, vectors={{'{missing[0]}': [...], ...}}) "
            f"com vetores de {len(FEATURES)} números ({', '.join(FEATURES)}), ou uma matriz com uma linha por token. "
            "(Numa frase em texto, os tokens ficam em minúsculas.)"
        )
    rows = []
    for t in tokens:
        try:
            rows.append(np.asarray(table[t], dtype=float))
        except (TypeError, ValueError):
            raise ValueError(f"O vetor de '{t}' precisa ser uma lista de números; recebido {table[t]!r}.") from None
    if len({r.shape for r in rows}) != 1:
        sizes = {t: shape_str(r.shape) for t, r in zip(tokens, rows)}
        raise ValueError(f"Os vetores têm dimensões diferentes: {sizes}; todos precisam ter o mesmo d.")
    return tokens, as_float_array(np.stack(rows), "vectors")


def _tokens(sentence) -> list[str]:
    """Texto → tokens (por :func:`tokenize`); lista de tokens → ela mesma, em NFC. Erro claro para o resto."""
    if isinstance(sentence, str):
        return tokenize(sentence)
    if sentence is None or not hasattr(sentence, "__iter__"):
        raise TypeError(f"`sentence` precisa ser um texto ou uma lista de tokens; recebido {sentence!r}.")
    tokens = [nfc(str(t)) for t in sentence]
    if not tokens:
        raise ValueError("`sentence` está vazia: é preciso pelo menos um token.")
    return tokens


def word_vector(token: str, d_model: int, seed: int = 0) -> np.ndarray:
    """Vetor pseudoaleatório **fixo** de uma palavra: a mesma palavra sempre ganha o mesmo vetor.

    O gerador é semeado com um hash estável do texto (CRC-32 dos bytes UTF-8 do token em NFC) mais ``seed``, e
    sorteia ``d_model`` números normais (média 0, desvio 1). Não carrega significado nenhum, mas
    permite comparar frases que compartilham palavras e funciona para qualquer frase.

    Returns
    -------
    ndarray de float64, forma (d_model,)

    Raises
    ------
    TypeError
        Se ``token`` não for texto.
    ValueError
        Se ``d_model`` < 1.

    Fonte: Módulo 6, Aula 2, ``02-codigo`` e ``04-exercicios`` (exercício 3).
    """
    import zlib

    if not isinstance(token, str):
        raise TypeError(f"`token` precisa ser um texto (str); recebido {type(token).__name__}.")
    d_model = check_dim(d_model, "d_model")
    rng = np.random.default_rng([zlib.crc32(nfc(token).encode("utf-8")), seed])
    return rng.normal(0.0, 1.0, d_model)


def embed_hashed(sentence, d_model: int = 8, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Frase → ``(tokens, X)`` com :func:`word_vector` para cada token (serve para qualquer frase).

    Parameters
    ----------
    sentence : str ou lista de str
    d_model : int
        Dimensão dos vetores.
    seed : int
        Muda o "dicionário" inteiro de vetores.

    Returns
    -------
    tokens : list of str
    X : ndarray de float64, forma (n_tokens, d_model)
        Tokens repetidos ("o" ... "o") têm linhas idênticas.

    Fonte: Módulo 6, Aula 2, ``02-codigo`` e ``04-exercicios``.
    """
    tokens = _tokens(sentence)
    return tokens, np.stack([word_vector(t, d_model, seed) for t in tokens])
