"""A atenção em texto puro: mapa de calor com caracteres e resumo "token → token que recebe mais atenção".

As colunas ficam alinhadas mesmo com tokens acentuados (``não``, ``coração``), porque a largura é
medida em colunas de terminal (biblioteca ``wcwidth``), e não em número de caracteres.

Fonte: Módulo 6, Aula 2 (``02-codigo``, passo 5: mapa de calor ASCII) e Aula 1 (``04-projeto``).
"""

from __future__ import annotations

import numpy as np
from wcwidth import wcswidth

from ._validation import as_float_array, check_tokens, shape_str

__all__ = ["ascii_heatmap", "format_weights", "strongest_attention", "attention_summary"]

#: Do menor para o maior peso.
DEFAULT_CHARS = " ░▒▓█"


def _width(text: str) -> int:
    w = wcswidth(text)
    return len(text) if w < 0 else w


def _pad(text: str, width: int, align: str = ">") -> str:
    gap = max(0, width - _width(text))
    return " " * gap + text if align == ">" else text + " " * gap


def _weights_2d(weights, tokens_q, tokens_k):
    w = as_float_array(weights, "weights", expected="(n_q, n_k)")
    if w.ndim != 2:
        raise ValueError(f"`weights` precisa ter forma (n_q, n_k); recebida forma {shape_str(w.shape)}.")
    tq = check_tokens(tokens_q, w.shape[0], "tokens", "linhas", w.shape)
    tk = tq if tokens_k is None else check_tokens(tokens_k, w.shape[1], "tokens_k", "colunas", w.shape)
    if tokens_k is None and w.shape[0] != w.shape[1]:
        raise ValueError(f"`tokens_k` é obrigatório quando n_q ≠ n_k (forma {shape_str(w.shape)}).")
    return w, tq, tk


def ascii_heatmap(weights, tokens, tokens_k=None, chars: str = DEFAULT_CHARS) -> str:
    """Mapa de calor em caracteres, para ``print``.

    Cada célula é preenchida com um caractere de ``chars`` conforme ``peso / maior peso``: o maior
    peso da matriz sempre aparece como o último caractere (``█``).

    Parameters
    ----------
    weights : array_like, forma (n_q, n_k)
    tokens : list of str, tamanho n_q (rótulos das linhas; também das colunas se ``tokens_k`` faltar)
    tokens_k : list of str, tamanho n_k, opcional
    chars : str
        Caracteres do mais claro ao mais escuro (pelo menos 2).

    Returns
    -------
    str
        Várias linhas: cabeçalho com as chaves, uma linha por consulta e uma legenda.

    Raises
    ------
    ValueError, TypeError
        Pesos que não são 2-D, com ``NaN``/``inf`` ou negativos; tokens em número errado; ``chars`` curto.

    Fonte: Módulo 6, Aula 2, ``02-codigo`` (passo 5).
    """
    w, tq, tk = _weights_2d(weights, tokens, tokens_k)
    if len(chars) < 2:
        raise ValueError(f"`chars` precisa de pelo menos 2 caracteres; recebido {chars!r}.")
    if w.min() < 0:
        raise ValueError("`weights` não pode ter valores negativos (são pesos de atenção).")
    top = w.max()
    levels = np.zeros(w.shape, dtype=int) if top == 0 else np.minimum(
        (w * (len(chars) - 1) / top).astype(int), len(chars) - 1)
    col = max(3, max(_width(t) for t in tk))
    row_label = max(_width(t) for t in tq)
    lines = [" " * row_label + " │ " + " ".join(_pad(t, col) for t in tk)]
    lines.append("─" * row_label + "─┼─" + "─" * ((col + 1) * len(tk) - 1))
    for i, t in enumerate(tq):
        cells = " ".join(chars[lv] * col for lv in levels[i])
        lines.append(_pad(t, row_label) + " │ " + cells)
    step = top / (len(chars) - 1) if top else 0.0
    legend = "  ".join(
        f"'{c}' ≥ {k * step:.2f}" if k else f"'{c}' < {step:.2f}" for k, c in enumerate(chars)
    )
    lines.append(f"escala (maior peso = {top:.3f}): {legend}")
    return "\n".join(lines)


def format_weights(weights, tokens, tokens_k=None, decimals: int = 3) -> str:
    """Tabela de pesos alinhada (linha = quem olha, coluna = para quem), como o passo 4 da Aula 2.

    Returns
    -------
    str
        Uma linha de cabeçalho e uma linha por consulta, colunas alinhadas mesmo com acentos.

    Fonte: Módulo 6, Aula 2, ``02-codigo`` (passo 4).
    """
    w, tq, tk = _weights_2d(weights, tokens, tokens_k)
    col = max(decimals + 3, max(_width(t) for t in tk))
    row_label = max(_width(t) for t in tq)
    lines = [" " * row_label + " " + " ".join(_pad(t, col) for t in tk)]
    for i, t in enumerate(tq):
        lines.append(_pad(t, row_label) + " " + " ".join(_pad(f"{v:.{decimals}f}", col) for v in w[i]))
    return "\n".join(lines)


#: Frases do resumo quando uma linha não tem para onde apontar.
BLOCKED_ROW = "(linha bloqueada: todas as chaves mascaradas, pesos 0)"
NO_OTHER_TOKEN = "(nenhum outro token)"
NO_OTHER_WEIGHT = "(nenhum outro token recebe peso)"


def _strongest(w, ignore_self):
    """Índice da chave que recebe mais atenção em cada linha e, por linha, o motivo de não haver uma.

    Motivos: ``None`` (há uma chave), ``"bloqueada"`` (nenhum peso positivo na linha) ou ``"só si"``
    (com ``ignore_self``, só o próprio token tem peso).
    """
    blocked = ~(w > 0).any(axis=1)  # nenhum peso positivo: consulta com todas as chaves mascaradas
    if ignore_self:
        w = np.where(np.eye(w.shape[0], dtype=bool), -np.inf, w)
    best = w.argmax(axis=1)
    reasons = ["bloqueada" if blocked[i] else ("só si" if w[i, best[i]] <= 0 else None) for i in range(len(w))]
    return best, reasons


def strongest_attention(weights, tokens, tokens_k=None, ignore_self: bool = False):
    """Para cada consulta, a chave que recebe o maior peso.

    Parameters
    ----------
    weights : array_like, forma (n_q, n_k)
    tokens : list of str, tamanho n_q
    tokens_k : list of str, tamanho n_k, opcional (padrão: ``tokens``)
    ignore_self : bool
        Ignora a diagonal (o próprio token), para ver quem é o **outro** token que recebe mais atenção.
        Só vale para self-attention (n_q = n_k).

    Returns
    -------
    list of (str, str ou None, float)
        ``(consulta, chave que recebe mais atenção, peso)`` por linha; num empate, a primeira chave. Quando a
        linha não tem para onde apontar, a chave é ``None``:

        - linha **bloqueada** (todos os pesos 0, como a de um token de preenchimento cujas chaves
          estão todas mascaradas): ``(consulta, None, 0.0)``;
        - com ``ignore_self``, um único token: ``(consulta, None, nan)``;
        - com ``ignore_self``, só o próprio token tem peso (os outros são 0, como na primeira linha
          da máscara causal): ``(consulta, None, 0.0)``.

    Raises
    ------
    ValueError, TypeError
        Como em :func:`ascii_heatmap`; ``ignore_self`` com n_q ≠ n_k.

    Fonte: Módulo 6, Aula 1, ``04-projeto``.
    """
    w, tq, tk = _weights_2d(weights, tokens, tokens_k)
    if ignore_self:
        if w.shape[0] != w.shape[1]:
            raise ValueError(f"`ignore_self` só vale para self-attention (n_q = n_k); forma {shape_str(w.shape)}.")
        if w.shape[0] == 1:
            return [(tq[0], None, float("nan"))]
    best, reasons = _strongest(w, ignore_self)
    return [(tq[i], None, 0.0) if reasons[i] else (tq[i], tk[j], float(w[i, j])) for i, j in enumerate(best)]


def attention_summary(weights, tokens, tokens_k=None, ignore_self: bool = False) -> str:
    """Resumo legível, uma linha por token: ``gato   → felino (0.33)``.

    Uma linha bloqueada (todas as chaves mascaradas) aparece como
    ``<pad> → (linha bloqueada: todas as chaves mascaradas, pesos 0)``.

    Returns
    -------
    str

    Raises
    ------
    ValueError, TypeError
        Como em :func:`strongest_attention`.

    Fonte: Módulo 6, Aula 1, ``04-projeto``.
    """
    rows = strongest_attention(weights, tokens, tokens_k, ignore_self)
    w, _, _ = _weights_2d(weights, tokens, tokens_k)
    reasons = [None] if ignore_self and len(w) == 1 else _strongest(w, ignore_self)[1]
    width = max(_width(q) for q, _, _ in rows)
    lines = []
    for (q, k, v), why in zip(rows, reasons):
        if why == "bloqueada":
            target = BLOCKED_ROW
        elif k is None:
            target = NO_OTHER_WEIGHT if why else NO_OTHER_TOKEN
        else:
            target = f"{k} ({v:.2f})"
        lines.append(_pad(q, width, "<") + " → " + target)
    return "\n".join(lines)
