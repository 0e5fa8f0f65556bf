"""Os tamanhos de um codificador BERT (:class:`BertConfig`), num módulo só deles: quem lê o arquivo do modelo
(:mod:`atencao.e5_file`) e quem roda o codificador (:mod:`atencao.bert`) os importam daqui, sem que um importe o
outro.

Fonte: Devlin et al. (2019), BERT; Módulo 6, Aula 3.
"""

from __future__ import annotations

from dataclasses import dataclass


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
