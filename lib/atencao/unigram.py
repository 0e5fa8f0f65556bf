"""O tokenizador do multilingual-e5-small: SentencePiece *unigram* (o do XLM-RoBERTa), em Python puro.

Separa o texto em subpalavras (peças do vocabulário) com o algoritmo de Viterbi. Usado por
:class:`~atencao.bert.BertEncoder` na Aula 3.

Fonte: Kudo (2018), *Subword Regularization* (o modelo *unigram*); Módulo 6, Aula 3.
"""

from __future__ import annotations

import numpy as np

from ._validation import nfc

__all__ = ["UnigramTokenizer"]


class UnigramTokenizer:
    """Tokenizador SentencePiece *unigram* (o do XLM-RoBERTa, usado pelo multilingual-e5-small).

    1. compõe os acentos (Unicode NFC: texto colado do macOS ou de PDFs chega decomposto), normaliza
       cada caractere pela tabela do modelo e junta espaços repetidos;
    2. troca espaços por ``▁`` e põe um ``▁`` no início;
    3. escolhe, entre todas as divisões em peças do vocabulário, a de maior soma de
       log-probabilidades (algoritmo de Viterbi); um caractere sem peça vira ``<unk>``;
    4. acrescenta ``<s>`` no início e ``</s>`` no fim.
    """

    def __init__(self, pieces: list[str], scores: np.ndarray, special: dict, normalization: dict):
        self.pieces = pieces
        self.scores = np.asarray(scores, dtype=np.float64)
        self.bos, self.eos, self.pad, self.unk = (special[k] for k in ("bos", "eos", "pad", "unk"))
        self.normalization = normalization
        self._index = {p: i for i, p in enumerate(pieces) if p}
        self._max_len = max(len(p) for p in pieces)
        self._unk_score = float(self.scores.min()) - 10.0

    def _normalize(self, text: str) -> str:
        chars = []
        for ch in nfc(text):  # a tabela é por caractere: "ã" decomposto (a + til combinante) não estaria nela
            chars.append(self.normalization.get(ord(ch), ch))
        text = "".join(chars)
        while "  " in text:
            text = text.replace("  ", " ")
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", "▁")

    def encode(self, text: str) -> list[int]:
        """Texto → ids, com ``<s>`` e ``</s>``. O mesmo texto dá os mesmos ids com acentos compostos ou
        decompostos (NFC/NFD).

        Raises
        ------
        TypeError
            Se ``text`` não for ``str``.
        """
        if not isinstance(text, str):
            raise TypeError(f"`text` precisa ser um texto (str); recebido {type(text).__name__}.")
        s = self._normalize(text)
        n = len(s)
        best = np.full(n + 1, -np.inf)
        best[0] = 0.0
        back = [(0, -1)] * (n + 1)
        for i in range(n):
            if best[i] == -np.inf:
                continue
            for j in range(i + 1, min(n, i + self._max_len) + 1):
                idx = self._index.get(s[i:j])
                if idx is not None and idx != self.unk:
                    score = best[i] + self.scores[idx]
                    if score > best[j]:
                        best[j], back[j] = score, (i, idx)
            if best[i] + self._unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = best[i] + self._unk_score, (i, self.unk)
        ids, j = [], n
        while j > 0:
            i, idx = back[j]
            ids.append(idx)
            j = i
        return [self.bos] + ids[::-1] + [self.eos]

    def tokenize(self, text: str) -> list[str]:
        """Texto → peças (subpalavras), com ``<s>`` e ``</s>``: ``['<s>', '▁O', '▁gato', ..., '</s>']``."""
        return [self.pieces[i] for i in self.encode(text)]
