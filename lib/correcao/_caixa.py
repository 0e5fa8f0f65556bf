"""Primeiros passos dentro da caixa, antes de qualquer código do aluno (usado por ``_executar`` e ``_veredito``).

- aplica os limites (``CORRECAO_LIMITES``: memória em MiB, CPU em s, processos);
- como root, troca para o uid da caixa (``CORRECAO_UID``), sem grupos: daí em diante nada tem privilégio;
- copia o conteúdo inicial (``CORRECAO_ENTRADA``, somente leitura) para o HOME, um tmpfs limitado;
- impede que o ``jsonschema`` carregue o verificador opcional de IRIs (``rfc3987_syntax``), que leva ~3 s
  para importar e que a validação de notebooks nunca usa;
- lê da entrada padrão o pedido (JSON) com a senha desta execução (``nonce``), e fecha a entrada.

A resposta vai pela saída padrão original, em linhas ``<nonce> <json>``; o processo a guarda num
descritor próprio e manda a saída do aluno para ``/dev/null`` (veja :func:`private_channel`).
"""

from __future__ import annotations

import json
import os
import resource
import sys

from ._importacao_rapida import sem_rfc3987


def prepare_sandbox() -> dict:
    """Limites, troca de usuário e pastas (:func:`apply_limits`); depois lê o pedido da entrada padrão."""
    apply_limits()
    pedido = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin.close()
    return pedido


MAX_FILE_MIB = 256  # o maior arquivo que o código do aluno pode gravar na caixa


_APPLIED = [False]  # os limites já valem neste processo (o verificador residente os aplica antes dos filhos)


def apply_limits() -> None:
    """Aplica os limites de ``CORRECAO_LIMITES`` e, como root, troca para o uid ``CORRECAO_UID``; uma vez por
    processo (num filho de um processo que já os aplicou, como os do verificador residente, não faz nada)."""
    if _APPLIED[0]:
        return
    _APPLIED[0] = True
    sem_rfc3987()  # o nbformat importa bem mais rápido (veja correcao._importacao_rapida)
    mem, cpu, nproc = (int(x) for x in os.environ.get("CORRECAO_LIMITES", "2048,180,256").split(","))
    resource.setrlimit(resource.RLIMIT_AS, (mem * 2**20, mem * 2**20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    arquivo = MAX_FILE_MIB * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (arquivo, arquivo))  # nenhum arquivo acima do limite
    uid = os.environ.pop("CORRECAO_UID", None)
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(int(uid))
        os.setuid(int(uid))
    if os.geteuid() != 0:  # o limite de processos não vale para root
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.environ.pop("CORRECAO_LIMITES", None)
    entrada = os.environ.pop("CORRECAO_ENTRADA", None)
    if entrada and os.path.isdir(entrada):  # já como o uid da caixa: o aluno pode mudar a sua cópia
        import shutil

        home = os.environ.get("HOME", ".")
        for raiz, _, arquivos in os.walk(entrada):
            destino = os.path.join(home, os.path.relpath(raiz, entrada))
            os.makedirs(destino, exist_ok=True)
            for nome in arquivos:
                shutil.copyfile(os.path.join(raiz, nome), os.path.join(destino, nome))
    for sub in (".config/matplotlib", ".ipython", ".runtime", ".jupyter", ".jupyter-data"):
        os.makedirs(os.path.join(os.environ.get("HOME", "."), sub), exist_ok=True)


def private_channel():
    """Guarda a saída padrão num descritor novo e manda 1 e 2 para ``/dev/null``; devolve o canal."""
    fd = os.dup(1)
    os.set_inheritable(fd, False)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def open_channel():
    """:func:`prepare_sandbox` + :func:`private_channel`: devolve o pedido e ``send(obj)``, que escreve
    ``<nonce> <json>`` no canal (o ``nonce`` sai do pedido: o código do aluno não o vê)."""
    pedido = prepare_sandbox()
    nonce = pedido.pop("nonce")
    canal = private_channel()

    def send(obj) -> None:
        canal.write(f"{nonce} {json.dumps(obj, ensure_ascii=False)}\n")
        canal.flush()

    return pedido, send
