"""atencao: a biblioteca de apoio do curso "Self-attention do zero".

Pequena de propósito: cada módulo cuida de um conceito e cabe numa leitura.

- :mod:`atencao.attention`: ``softmax``, ``scaled_dot_product_attention``, ``self_attention``;
- :mod:`atencao.masks`: máscaras (``True`` = pode olhar) e conversão para as convenções do PyTorch;
- :mod:`atencao.projections`: ``SelfAttention`` (uma cabeça, com W_q, W_k, W_v);
- :mod:`atencao.multihead`: ``MultiHeadAttention`` (várias cabeças, W_o, porte do PyTorch);
- :mod:`atencao.embeddings`: embeddings feitos à mão e ``embed(frase)``;
- :mod:`atencao.text`: mapa de calor em caracteres e resumo "token → token que recebe mais atenção";
- :mod:`atencao.plotting`: mapas de calor com matplotlib (importado só quando um gráfico é desenhado);
- :mod:`atencao.explorer`: o explorador interativo (``explorar``), com ipywidgets, feito de
  :mod:`atencao.views` (o cálculo puro), :mod:`atencao.rendering` (HTML e PNG) e
  :mod:`atencao.explorer_widget` (a ligação dos controles, comum aos dois exploradores);
- :mod:`atencao.positional`, :mod:`atencao.normalization`, :mod:`atencao.feedforward` e
  :mod:`atencao.transformer` (Aula 4): ``positional_encoding``, ``LayerNorm``, ``FeedForward`` e os blocos
  ``TransformerEncoderBlock`` e ``TransformerDecoderBlock``;
- :mod:`atencao.bert` e :mod:`atencao.model_explorer` (Aula 3): o multilingual-e5-small em NumPy, com a
  atenção multicabeça do curso, e o seu explorador (importe-os explicitamente);
- :mod:`atencao.gpt`, :mod:`atencao.gpt_backward`, :mod:`atencao.schedule`, :mod:`atencao.gpt_training`,
  :mod:`atencao.sampling` e :mod:`atencao.corpus` (Aula 6): um GPT pequeno com o backward inteiro em NumPy, o
  AdamW com cronograma, o laço de treino, a geração com KV cache, temperatura e top-k, e o corpus;
- :mod:`atencao.checks`: as verificações automáticas dos exercícios.

Importar o pacote não carrega matplotlib, PyTorch nem ipywidgets.
"""

from .attention import scaled_dot_product_attention, self_attention, softmax
from .corpus import CharTokenizer, load_corpus
from .embeddings import FEATURES, HAND_MADE_VECTORS, PROJECT_SENTENCES, embed, embed_hashed, gato_felino, tokenize
from .explorer import AttentionExplorer, explorar
from .feedforward import FeedForward
from .gpt import GPT, GPTConfig
from .masks import causal_mask, padding_mask
from .multihead import MultiHeadAttention
from .normalization import LayerNorm
from .plotting import AttentionPlot, plot_attention, plot_attention_heads
from .positional import positional_encoding
from .projections import SelfAttention
from .sampling import generate, generate_text
from .text import ascii_heatmap, attention_summary, format_weights, strongest_attention
from .transformer import TransformerDecoderBlock, TransformerEncoderBlock

__version__ = "0.1.0"

__all__ = [
    "softmax", "scaled_dot_product_attention", "self_attention",
    "causal_mask", "padding_mask", "SelfAttention", "MultiHeadAttention",
    "positional_encoding", "LayerNorm", "FeedForward", "TransformerEncoderBlock", "TransformerDecoderBlock",
    "FEATURES", "HAND_MADE_VECTORS", "PROJECT_SENTENCES", "embed", "embed_hashed", "gato_felino", "tokenize",
    "ascii_heatmap", "attention_summary", "format_weights", "strongest_attention",
    "AttentionPlot", "plot_attention", "plot_attention_heads", "AttentionExplorer", "explorar",
    "GPT", "GPTConfig", "CharTokenizer", "load_corpus", "generate", "generate_text",
]

