"""O curso no navegador (JupyterLite + Pyodide, ``make site``): o que muda quando o kernel roda no navegador.

O site liga este módulo uma vez em cada kernel, logo depois de o kernel do Pyodide subir
(:func:`iniciar_kernel`; no site ele vai numa roda pequena, ``curso_site``, sem depender do resto da biblioteca,
para o kernel ficar pronto sem baixar o NumPy). A partir daí:

- o texto impresso chega ao JupyterLab em linhas inteiras, como no kernel local (:func:`linhas_inteiras`): o kernel
  do Pyodide manda cada ``write`` como uma mensagem, e o JupyterLab 4.3 junta mal uma mensagem com uma quebra de
  linha no meio e a seguinte (``print("x\\ny", "zz")`` aparecia como ``x`` e `` zz``);
- não há PyTorch no navegador: cada célula que o site guardou (as que usam o PyTorch e as que dependem de um
  resultado delas) mostra a saída guardada (a mesma da instalação local) com uma nota em português, em vez de um
  ``ModuleNotFoundError`` (:func:`sem_pytorch`); uma célula que só chega ao PyTorch por uma função da biblioteca
  (``train_torch``, no projeto da Aula 5) roda de verdade e, se chegar a precisar dele, mostra a saída guardada da
  solução com a nota. As outras rodam de verdade.

Fora do navegador, ou com o PyTorch instalado, nada muda.

Fonte: Módulo 6, Aula 2, ``03-uso`` (a equivalência com ``torch.nn.MultiheadAttention``) e o README, "O curso no
navegador".
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

__all__ = ["no_navegador", "iniciar_kernel", "linhas_inteiras", "relogio_de_cpu", "sem_pytorch", "mostrar_guardada",
           "NOTA_PYTORCH", "NOTA_SOLUCAO"]

NOTA_PYTORCH = ("ℹ️ NO NAVEGADOR: esta célula usa o PyTorch (ou um resultado dele), que só roda no curso instalado "
                "(make lab). Abaixo, a saída guardada da instalação local.")
NOTA_SOLUCAO = ("ℹ️ NO NAVEGADOR: esta célula chegou ao PyTorch (por uma função da biblioteca), que só roda no curso "
                "instalado (make lab). O que veio antes dele rodou; abaixo, a saída guardada da solução do curso na "
                "instalação local.")
#: O arquivo, ao lado deste módulo, em que o site guarda as saídas (veja ``scripts/site.py``).
ARQUIVO_GUARDADAS = "_saidas_guardadas.json"


def no_navegador() -> bool:
    """``True`` quando o Python roda no navegador (Pyodide)."""
    return sys.platform == "emscripten"


def _guardadas() -> dict:
    """As saídas guardadas pelo site: ``{"sempre": {chave: saídas}, "ao_rodar": {chave: saídas}}`` (chave: o sha256
    do código da célula; saídas: a lista de saídas do nbformat); ``{}`` fora do site."""
    arquivo = Path(__file__).with_name(ARQUIVO_GUARDADAS)
    if not arquivo.is_file():
        return {}
    return json.loads(arquivo.read_text(encoding="utf-8"))


def _chave(codigo: str) -> str:
    return hashlib.sha256(codigo.strip().encode()).hexdigest()


def iniciar_kernel(shell=None) -> None:
    """O que o site faz em cada kernel do navegador, logo que ele sobe: :func:`linhas_inteiras`,
    :func:`relogio_de_cpu` e :func:`sem_pytorch`. Fora do navegador não faz nada."""
    if not no_navegador():
        return
    linhas_inteiras()
    relogio_de_cpu()
    sem_pytorch(shell)


def relogio_de_cpu() -> None:
    """No navegador, ``time.process_time`` passa a ser o relógio de ``time.perf_counter``.

    O Pyodide não mede o tempo de CPU do processo (``process_time`` fica parado, e uma medida dá 0: o projeto da
    Aula 4, que cronometra o KV cache, dividia por zero). No navegador não há outros programas no mesmo processo,
    e o relógio de parede do ``perf_counter`` é a medida que existe.
    """
    import time

    time.process_time, time.process_time_ns = time.perf_counter, time.perf_counter_ns


def linhas_inteiras(fluxos=None) -> None:
    """Faz ``sys.stdout`` e ``sys.stderr`` do kernel do Pyodide mandarem o texto só em linhas inteiras.

    Cada ``write`` acumula o texto, e o que vai até a última quebra de linha sai numa mensagem só; o resto de uma
    linha espera a quebra seguinte ou o fim da célula (o evento ``post_run_cell``), também depois de um ``flush``
    (uma mensagem que termina no meio de uma linha é a que o JupyterLab 4.3 junta mal com a seguinte). Assim
    ``print("x\ny", "zz")`` chega como ``"x\n"`` e ``"y zz\n"`` e aparece como no kernel local.

    Parameters
    ----------
    fluxos : sequência de objetos com ``write(texto)`` e ``flush()``, opcional
        Padrão: ``sys.stdout`` e ``sys.stderr``. Cada um é mudado no lugar (uma vez só) e ganha
        ``_curso_terminar()``, que manda o resto da linha.
    """
    fluxos = (sys.stdout, sys.stderr) if fluxos is None else tuple(fluxos)
    for fluxo in fluxos:
        if getattr(fluxo, "_curso_terminar", None) is not None:
            continue
        escrever, pendente = fluxo.write, []

        def write(texto, _escrever=escrever, _pendente=pendente):
            if not texto:
                return 0
            _pendente.append(texto)
            if "\n" in texto:
                junto = "".join(_pendente)
                fim = junto.rfind("\n") + 1
                _pendente[:] = [junto[fim:]] if fim < len(junto) else []
                _escrever(junto[:fim])
            return len(texto)

        def terminar(_escrever=escrever, _pendente=pendente):
            if _pendente:
                junto = "".join(_pendente)
                _pendente.clear()
                _escrever(junto)

        fluxo.write, fluxo._curso_terminar = write, terminar
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and not getattr(shell, "_curso_linhas", False):
        shell.events.register("post_run_cell", lambda *_: [f._curso_terminar() for f in fluxos])
        shell._curso_linhas = True


def _install_stored_outputs(shell, sempre: dict, ao_rodar: dict) -> None:
    """Liga no ``shell`` a troca das células de ``sempre`` pela saída guardada e o ``ModuleNotFoundError`` do
    ``torch`` nas de ``ao_rodar`` (veja :func:`sem_pytorch`)."""
    modulo = __name__

    def trocar(linhas: list[str]) -> list[str]:
        chave = _chave("".join(linhas))
        if chave not in sempre:
            return linhas
        return [f"import {modulo} as _navegador\n", f"_navegador.mostrar_guardada({chave!r})\n"]

    shell.input_transformers_cleanup.insert(0, trocar)
    atual = {"chave": None}

    def antes(info=None, *_):
        atual["chave"] = _chave(getattr(info, "raw_cell", "") or "")

    def sem_torch(self, etype, valor, tb, tb_offset=None):
        if getattr(valor, "name", None) == "torch" and atual["chave"] in ao_rodar:
            mostrar_guardada(atual["chave"], nota=NOTA_SOLUCAO)
            return None
        self.showtraceback((etype, valor, tb), tb_offset=tb_offset)
        return None

    shell.events.register("pre_run_cell", antes)
    shell.set_custom_exc((ModuleNotFoundError,), sem_torch)
    shell._curso_sem_pytorch = True


def sem_pytorch(shell=None) -> bool:
    """Liga as saídas guardadas no lugar das células que precisam do PyTorch (só no navegador, sem PyTorch).

    As células de ``"sempre"`` (as que usam o PyTorch e as que dependem de um resultado delas) são trocadas, antes
    de rodar, pela exibição da saída guardada; as de ``"ao_rodar"`` rodam, e um ``ModuleNotFoundError`` do
    ``torch`` nelas vira a exibição da saída guardada. Qualquer outro erro aparece como sempre.

    Parameters
    ----------
    shell : IPython InteractiveShell, opcional
        O shell do kernel (padrão: ``get_ipython()``).

    Returns
    -------
    bool
        ``True`` se ligou (navegador sem PyTorch e com saídas guardadas); ``False`` se nada mudou.
    """
    if importlib.util.find_spec("torch") is not None:
        return False
    guardadas = _guardadas()
    if not guardadas:
        return False
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        return False
    if not getattr(shell, "_curso_sem_pytorch", False):
        _install_stored_outputs(shell, guardadas.get("sempre", {}), guardadas.get("ao_rodar", {}))
    return True


def mostrar_guardada(chave: str, nota: str = NOTA_PYTORCH) -> None:
    """Mostra ``nota`` e as saídas guardadas da célula de sha256 ``chave``.

    Raises
    ------
    KeyError
        Se não há saída guardada com essa chave.
    """
    from IPython.display import publish_display_data

    guardadas = _guardadas()
    saidas = {**guardadas.get("ao_rodar", {}), **guardadas.get("sempre", {})}[chave]
    print(nota, flush=True)
    for saida in saidas:
        tipo = saida.get("output_type")
        if tipo == "stream":
            texto = saida.get("text", "")
            destino = sys.stderr if saida.get("name") == "stderr" else sys.stdout
            print("".join(texto) if isinstance(texto, list) else texto, end="", file=destino, flush=True)
        elif tipo in ("display_data", "execute_result"):
            dados = {k: "".join(v) if isinstance(v, list) else v for k, v in saida.get("data", {}).items()}
            publish_display_data(dados, saida.get("metadata", {}))
