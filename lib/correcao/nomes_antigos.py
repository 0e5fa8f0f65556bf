"""Entregas feitas com uma versão anterior do curso, em que as funções dos exercícios tinham nomes em
português (``minha_softmax``, ``mascara_causal``...).

A correção recoloca as células de verificação do curso atual, que chamam os nomes novos (``my_softmax``,
``my_causal_mask``...). Sem esta arrumação, uma resposta certa escrita com o nome antigo perderia os pontos
com um ``NameError``. Aqui, antes da correção, cada resposta que define a função só com o nome antigo ganha,
no fim da própria célula, a linha ``nome_novo = nome_antigo``, e a linha de ``notas.csv`` diz isso.

É a única lista dos nomes antigos (o teste ``test_funcoes_dos_exercicios_com_nomes_em_ingles`` a usa).
"""

from __future__ import annotations

import re

# nome antigo -> nome atual
RENOMEADAS = {
    "embeddings_pulou_alto_parecidos": "similar_embeddings",
    "atencao_com_projecoes": "attention_with_projections",
    "visualizar_atencao": "visualize_attention",
    "minha_softmax": "my_softmax",
    "mascara_causal": "my_causal_mask",
    "minha_atencao_multicabeca": "my_multi_head_attention",
    "heads_onde_olha": "top_heads",
    "distancia_media": "mean_attention_distance",
    "massa_especiais": "special_token_mass",
    "linha_de_atencao": "attention_row",
}


def _define(fonte: str, nome: str) -> bool:
    return re.search(rf"^\s*(def\s+{nome}\s*\(|{nome}\s*=(?!=))", fonte, flags=re.M) is not None


def atualizar_resposta(fonte: str) -> tuple[str, list[str]]:
    """A célula de resposta ``fonte`` com ``novo = antigo`` no fim para cada função definida só com o nome
    antigo; devolve (fonte, nomes antigos encontrados)."""
    achados = [antigo for antigo, novo in RENOMEADAS.items() if _define(fonte, antigo) and not _define(fonte, novo)]
    if not achados:
        return fonte, []
    linhas = "\n".join(f"{RENOMEADAS[a]} = {a}  # nome da versão anterior do curso" for a in achados)
    return fonte.rstrip("\n") + "\n" + linhas + "\n", achados
