"""As outras funções da biblioteca que dão o mesmo resultado de uma função proibida.

Uma verificação proíbe uma conta pronta pelo nome (``forbidden=(causal_mask,)``). Uma chamada a ela feita por
outra função da biblioteca conta também (:class:`.watcher.Watcher`; na correção, a função proibida nem existe no
processo do aluno). Mas algumas funções de outras aulas **refazem a mesma conta por extenso**, sem chamar a
proibida: a ``layer_norm`` do GPT da Aula 6 é a LayerNorm da Aula 4, a softmax causal da indução com uma linha só de
valores é a softmax da Aula 2. :data:`REVEALS` lista, para cada função proibida, as que entregam o resultado dela, e
:func:`expand` as junta à proibição: quem proíbe a primeira proíbe as outras. A lista vale num sentido só (proibir a
entropia cruzada não proíbe a softmax, que ela usa).

Quem escreve uma função nova na biblioteca que refaz uma conta de exercício a põe aqui, com um aluno que a usa na
turma hostil de ``tests/test_proibidas_fora_do_alcance.py`` (``ATAQUES``), corrigida de ponta a ponta.
"""

from __future__ import annotations

from .. import (
    attention,
    backward,
    bert,
    gpt,
    gpt_backward,
    induction,
    masks,
    normalization,
    positional,
    sampling,
    text,
    transformer,
    views,
)

__all__ = ["REVEALS", "SIZE_ONLY", "expand"]

# a atenção (de uma consulta por vez, com o cache de chaves e valores; ou causal, com a softmax da indução)
_ATTENTION = (sampling.attend_cached, induction._softmax_causal)
# o modelo só de atenção da indução (Aula 6) escreve por extenso a softmax, a entropia cruzada e o backward da
# atenção: com zero camadas e a tabela de saída igual aos logits, a perda e o gradiente dele são a entropia cruzada
# (e o gradiente, a softmax); o backward dele, com um cache montado à mão, é o backward da atenção
_INDUCTION = (induction.AttentionOnlyModel, induction.loss_by_position)
# a softmax: a da indução (uma linha de valores, o resto bloqueado), a entropia cruzada (o gradiente é a softmax
# menos o alvo) e a atenção com o cache (com V = identidade, a saída são os pesos)
_SOFTMAX = (induction._softmax_causal, gpt_backward.cross_entropy, sampling.attend_cached, *_INDUCTION)
# os backwards da Aula 5: o da atenção do GPT, com K = V = identidade e escala 1, dá o da softmax
_BACKWARD = (gpt_backward.heads_attention_backward, induction.AttentionOnlyModel)
# a LayerNorm: a do GPT, e o backward dela (com dy = 1, o gradiente de weight é x̂, a entrada normalizada)
_LAYER_NORM = (gpt_backward.layer_norm, gpt_backward.layer_norm_backward, gpt_backward.layer_norm_backward_unchecked)
# o bloco do codificador: o bloco do GPT é o mesmo bloco (pré-LN ou pós-LN), com a máscara que se passar
_BLOCK = (gpt.GPTBlock, gpt.GPT)
# o destaque de cada linha (o token mais atendido, fora ele mesmo): os k maiores do explorador
_STRONGEST = (views.top_tokens,)

REVEALS: dict = {
    attention.softmax: _SOFTMAX,
    attention.softmax_: _SOFTMAX,
    attention.scaled_dot_product_attention: _ATTENTION,
    attention.attend: _ATTENTION,
    attention.attend_checked: _ATTENTION,
    attention.self_attention: _ATTENTION,
    # a softmax causal de qualquer matriz: > 0 é a máscara; a máscara de preenchimento com os comprimentos 1 … n
    masks.causal_mask: (induction._softmax_causal, masks.padding_mask),
    normalization.LayerNorm: _LAYER_NORM,
    bert._layer_norm: _LAYER_NORM,
    # o backward da atenção do GPT não entra aqui: a Aula 6 proíbe a softmax_backward na entropia cruzada (onde a
    # softmax é permitida, e ele não encurta nada), e o treino do GPT do projeto precisa dele no processo do aluno
    # (feito pelo verificador a cada passo, o treino levaria o triplo); na Aula 5 ele entra pelos outros backwards
    backward.softmax_backward: (induction.AttentionOnlyModel,),
    backward.attention_backward: _BACKWARD,
    backward.multihead_backward: _BACKWARD,
    gpt_backward.cross_entropy: _INDUCTION,
    transformer.TransformerEncoderBlock: _BLOCK,
    transformer.TransformerDecoderBlock: _BLOCK,
    text._strongest: _STRONGEST,
    text.strongest_attention: _STRONGEST,
    text.attention_summary: _STRONGEST,
}

# as respostas que dependem só de tamanhos (inteiros): uma tabela delas (ou de uma função que as revela, sobre
# quaisquer dados), pedida antes da verificação que as proíbe, responderia a ela (correcao._veredito recusa)
SIZE_ONLY = (masks.causal_mask, positional.positional_encoding)


def expand(forbidden) -> tuple:
    """``forbidden`` com as funções de :data:`REVEALS` de cada uma, sem repetir, na ordem.

    Parameters
    ----------
    forbidden : iterable
        Funções, classes ou métodos da biblioteca (o ``forbidden=`` de :meth:`.checker.Checker.call`).

    Returns
    -------
    tuple
        Os mesmos objetos, seguidos dos que entregam o resultado de algum deles.
    """
    out: list = []
    for f in forbidden:
        for g in (f, *REVEALS.get(f, ())):
            if not any(g is h for h in out):
                out.append(g)
    return tuple(out)
