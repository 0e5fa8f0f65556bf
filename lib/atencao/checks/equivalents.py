"""As outras funções da biblioteca que dão o mesmo resultado de uma função proibida.

Uma verificação proíbe uma conta pronta pelo nome (``forbidden=(causal_mask,)``). Uma chamada a ela feita por
outra função da biblioteca conta também (:class:`.watcher.Watcher`; na correção, a função proibida nem existe no
processo do aluno). Mas algumas funções de outras aulas **refazem a mesma conta por extenso**, sem chamar a
proibida: a ``layer_norm`` do GPT da Aula 6 é a LayerNorm da Aula 4, a softmax causal da indução com uma linha só de
valores é a softmax da Aula 2. :data:`REVEALS` lista, para cada função proibida, as que entregam o resultado dela, e
:func:`expand` as junta à proibição: quem proíbe a primeira proíbe as outras. A lista vale num sentido só (proibir a
entropia cruzada não proíbe a softmax, que ela usa).

Quem escreve uma função nova na biblioteca que refaz uma conta de exercício a põe aqui; o teste
``test_equivalentes_da_biblioteca_nao_dao_pontos`` corrige, de ponta a ponta, um aluno que usa cada uma delas.
"""

from __future__ import annotations

from .. import attention, backward, bert, gpt_backward, induction, masks, normalization, sampling

__all__ = ["REVEALS", "expand"]

# a atenção (de uma consulta por vez, com o cache de chaves e valores; ou causal, com a softmax da indução)
_ATTENTION = (sampling.attend_cached, induction._softmax_causal)
# a softmax: a da indução (uma linha de valores, o resto bloqueado), a entropia cruzada (o gradiente é a softmax
# menos o alvo), a perda por posição e a atenção com o cache (com V = identidade, a saída são os pesos)
_SOFTMAX = (induction._softmax_causal, induction.loss_by_position, gpt_backward.cross_entropy, sampling.attend_cached)
# os backwards da Aula 5: o da atenção do GPT, com K = V = identidade e escala 1, dá o da softmax
_BACKWARD = (gpt_backward.heads_attention_backward,)

REVEALS: dict = {
    attention.softmax: _SOFTMAX,
    attention.softmax_: _SOFTMAX,
    attention.scaled_dot_product_attention: _ATTENTION,
    attention.attend: _ATTENTION,
    attention.attend_checked: _ATTENTION,
    attention.self_attention: _ATTENTION,
    masks.causal_mask: (induction._softmax_causal,),  # a softmax causal de uma matriz de zeros: > 0 é a máscara
    normalization.LayerNorm: (gpt_backward.layer_norm,),
    bert._layer_norm: (gpt_backward.layer_norm,),
    backward.softmax_backward: _BACKWARD,
    backward.attention_backward: _BACKWARD,
    backward.multihead_backward: _BACKWARD,
}


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
