"""Aplica um perfil seccomp no formato do Kubernetes/OCI (o JSON de ``seccompProfile: Localhost``) com a libseccomp
(o pacote ``python3-seccomp`` do Debian, a ligação oficial da biblioteca) e executa o comando, como o runtime de
contêineres faz com o processo de um pod.

Uso: ``/usr/bin/python3 perfil_seccomp.py PERFIL.json comando [argumentos...]``. Entende ``defaultAction``,
``defaultErrnoRet`` e, em ``syscalls``, ``names``, ``action`` (``SCMP_ACT_ALLOW`` ou ``SCMP_ACT_ERRNO``),
``errnoRet`` e ``args`` (``index``, ``value``, ``valueTwo``, ``op``: ``SCMP_CMP_EQ`` ou ``SCMP_CMP_MASKED_EQ``).
Uma chamada que esta arquitetura não tem é ignorada, como o runtime faz.
"""

from __future__ import annotations

import errno
import json
import os
import sys

import seccomp


def _action(nome: str, ret: int | None):
    if nome == "SCMP_ACT_ALLOW":
        return seccomp.ALLOW
    if nome == "SCMP_ACT_ERRNO":
        return seccomp.ERRNO(errno.EPERM if ret is None else ret)
    raise SystemExit(f"perfil_seccomp: ação não suportada aqui: {nome}")


def _arg(a: dict):
    ops = {"SCMP_CMP_EQ": seccomp.EQ, "SCMP_CMP_MASKED_EQ": seccomp.MASKED_EQ}
    if a["op"] == "SCMP_CMP_MASKED_EQ":
        return seccomp.Arg(a["index"], seccomp.MASKED_EQ, a["value"], a.get("valueTwo", a["value"]))
    return seccomp.Arg(a["index"], ops[a["op"]], a["value"])


def load(caminho: str) -> None:
    with open(caminho, encoding="utf-8") as f:
        perfil = json.load(f)
    filtro = seccomp.SyscallFilter(_action(perfil["defaultAction"], perfil.get("defaultErrnoRet")))
    for regra in perfil.get("syscalls", []):
        acao = _action(regra["action"], regra.get("errnoRet"))
        for nome in regra["names"]:
            try:
                filtro.add_rule(acao, nome, *(_arg(a) for a in regra.get("args", [])))
            except (RuntimeError, ValueError):
                pass
    filtro.load()


if __name__ == "__main__":
    load(sys.argv[1])
    os.execvp(sys.argv[2], sys.argv[2:])
