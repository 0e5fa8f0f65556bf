"""Dentro da caixa: o processo de entrada mínimo com que :func:`correcao.isolamento.sandbox_support` prova que a
caixa funciona nesta máquina. Passa pelos mesmos primeiros passos de toda caixa (:mod:`correcao._caixa`: limites,
troca de usuário como root, cópia da pasta de entrada, o pedido lido da entrada padrão) e responde
``<nonce> {"ok": true, "uid": ..., "proc": ...}``."""

from __future__ import annotations

import os

from . import _caixa


def main() -> None:
    _, send = _caixa.open_channel()
    send({"ok": True, "uid": os.geteuid(), "proc": os.path.isdir("/proc/self")})


if __name__ == "__main__":
    main()
