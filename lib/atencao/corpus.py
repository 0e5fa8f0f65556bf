"""O corpus da Aula 6 e o tokenizador por caractere.

O corpus padrão é o texto que o próprio curso escreveu: a prosa dos notebooks das Aulas 1 a 5, extraída por
``scripts/corpus_aula06.py`` para ``lib/atencao/dados/corpus_aula06.txt`` (sem código, fórmulas nem
endereços). Para treinar com outro texto, passe o caminho de um arquivo UTF-8 seu a :func:`load_corpus`.

Também aqui: a linha de base de bigramas (a probabilidade do próximo caractere dado só o anterior, contada
no treino) e a fração das palavras de uma amostra que existem no corpus, os dois números com que a Aula 6
mede se o modelo aprendeu algo além do óbvio.

Fonte: Shannon (1951), a entropia do texto e os modelos de n-gramas; Módulo 6, Aula 6 (``02-codigo``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ._validation import nfc, shape_str

__all__ = ["CORPUS_PATH", "load_corpus", "CharTokenizer", "split_train_val", "bigram_bits_per_char",
           "bits_per_char", "corpus_words", "word_share"]

#: O corpus padrão: a prosa dos notebooks das Aulas 1 a 5 (gerado por ``scripts/corpus_aula06.py``).
CORPUS_PATH = Path(__file__).resolve().parent / "dados" / "corpus_aula06.txt"

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")  # letras (com acento), com hífen no meio


def load_corpus(path=None) -> str:
    """O texto do corpus (normalizado em NFC), do arquivo padrão ou de ``path`` (um arquivo UTF-8 seu).

    Raises
    ------
    FileNotFoundError
        ``path`` não existe.
    ValueError
        O arquivo não é UTF-8 ou tem menos de 1000 caracteres (pouco para treinar).

    Fonte: Módulo 6, Aula 6, ``02-codigo``.
    """
    p = CORPUS_PATH if path is None else Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"O corpus `{p}` não existe. Passe o caminho de um arquivo de texto UTF-8.")
    try:
        text = nfc(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"O corpus `{p.name}` precisa estar em UTF-8 ({err.reason}).") from None
    if len(text) < 1000:
        raise ValueError(f"O corpus `{p.name}` tem {len(text)} caracteres; são precisos pelo menos 1000.")
    return text


class CharTokenizer:
    """Tokenizador por caractere: cada caractere diferente do texto é um token (ids em ordem de código).

    Parameters
    ----------
    text : str
        O texto de onde sai o vocabulário.

    Attributes
    ----------
    chars : list[str]
        O vocabulário (``chars[i]`` é o token ``i``).
    vocab_size : int

    Fonte: Karpathy (2015), "The Unreasonable Effectiveness of Recurrent Neural Networks"; Módulo 6, Aula 6.
    """

    def __init__(self, text: str):
        if not isinstance(text, str) or not text:
            raise ValueError("`text` precisa ser um texto não vazio.")
        self.chars = sorted(set(text))
        self._ids = {ch: i for i, ch in enumerate(self.chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"

    def encode(self, text: str) -> np.ndarray:
        """``text`` → ids (len(text),) int64.

        Raises
        ------
        ValueError
            Um caractere fora do vocabulário (diz quais).
        """
        missing = sorted(set(text) - self._ids.keys())
        if missing:
            raise ValueError(f"Caracteres fora do vocabulário do corpus: {''.join(missing)!r}.")
        return np.fromiter((self._ids[ch] for ch in text), dtype=np.int64, count=len(text))

    def decode(self, ids) -> str:
        """ids (sequência de int) → texto. ``ValueError`` com um id fora de 0 … vocab_size − 1."""
        ids = [int(i) for i in np.asarray(ids).reshape(-1)]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"ids fora de 0 … {self.vocab_size - 1}: {bad[:5]}.")
        return "".join(self.chars[i] for i in ids)


def split_train_val(ids, val_fraction: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Separa o texto codificado em treino (o começo) e validação (os últimos ``val_fraction``).

    Um corte só, sem embaralhar: a validação é texto que o modelo nunca viu, e não frases misturadas às do
    treino. ``ValueError`` se ``val_fraction`` não está em (0, 1) ou se uma das partes fica vazia.
    """
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"`ids` precisa ser um vetor; recebida forma {shape_str(ids.shape)}.")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"`val_fraction` precisa estar em (0, 1); recebido {val_fraction!r}.")
    cut = int(round(len(ids) * (1.0 - val_fraction)))
    if cut < 2 or len(ids) - cut < 2:
        raise ValueError(f"O texto ({len(ids)} tokens) é curto demais para separar treino e validação.")
    return ids[:cut], ids[cut:]


def bits_per_char(loss_nats: float) -> float:
    """Perda em nats por caractere → bits por caractere (divide por ``ln 2``)."""
    return float(loss_nats) / math.log(2.0)


def bigram_bits_per_char(train_ids, val_ids, vocab_size: int, alpha: float = 0.1) -> float:
    """A linha de base de bigramas: bits por caractere na validação de ``p(c | anterior)`` contado no treino.

    ``p(b | a) = (contagem(a, b) + alpha) / (contagem(a) + alpha · vocab_size)`` (suavização aditiva, para um
    par nunca visto não ter probabilidade zero).

    Returns
    -------
    float
        ``−média log₂ p(val[i+1] | val[i])``.

    Fonte: Shannon (1951); Jurafsky e Martin, *Speech and Language Processing*, cap. 3; Módulo 6, Aula 6.
    """
    if not alpha > 0:
        raise ValueError(f"`alpha` precisa ser > 0; recebido {alpha!r}.")
    train_ids, val_ids = np.asarray(train_ids), np.asarray(val_ids)
    counts = np.zeros((vocab_size, vocab_size))
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1.0)
    probs = (counts + alpha) / (counts.sum(axis=1, keepdims=True) + alpha * vocab_size)
    return float(-np.mean(np.log2(probs[val_ids[:-1], val_ids[1:]])))


def corpus_words(text: str) -> set:
    """O conjunto das palavras do texto (só letras, em minúsculas; ``guarda-chuva`` conta como uma)."""
    return {w.lower() for w in _WORD.findall(nfc(text))}


def word_share(sample: str, vocabulary: set) -> float:
    """A fração das palavras de ``sample`` que existem em ``vocabulary`` (de :func:`corpus_words`).

    A última palavra fica de fora quando a amostra acaba nela (ela pode estar cortada no meio). Devolve ``nan``
    se não sobrar palavra. Fonte: Módulo 6, Aula 6, ``04-projeto``.
    """
    text = nfc(sample)
    matches = list(_WORD.finditer(text))
    if matches and matches[-1].end() == len(text):
        matches = matches[:-1]  # a última pode estar cortada
    words = [m.group().lower() for m in matches]
    if not words:
        return float("nan")
    return sum(w in vocabulary for w in words) / len(words)
