"""O curso no navegador (JupyterLite + Pyodide, ``make site``): o que muda quando o kernel roda no navegador.

No navegador (``sys.platform == "emscripten"``) não há PyTorch. Os notebooks que o usam (Aula 2, ``03-uso``;
Aulas 4 e 5, ``02-codigo``) ganham, só na cópia do site, uma célula no alto que chama :func:`sem_pytorch`: dali
em diante, cada célula que o site guardou (as que usam o PyTorch e as que dependem de um resultado delas) mostra
a saída guardada (a mesma da instalação local) com uma nota em português, em vez de um ``ModuleNotFoundError``;
as outras rodam de verdade. Fora do navegador, ou com o PyTorch instalado, nada muda.

Fonte: Módulo 6, Aula 2, ``03-uso`` (a equivalência com ``torch.nn.MultiheadAttention``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from importlib import resources

__all__ = ["no_navegador", "sem_pytorch", "mostrar_guardada", "NOTA_PYTORCH"]

NOTA_PYTORCH = ("ℹ️ NO NAVEGADOR: esta célula usa o PyTorch (ou um resultado dele), que só roda no curso instalado "
                "(make lab). Abaixo, a saída guardada da instalação local.")


def no_navegador() -> bool:
    """``True`` quando o Python roda no navegador (Pyodide)."""
    return sys.platform == "emscripten"


def _guardadas() -> dict:
    """As saídas guardadas (sha256 do código da célula -> lista de saídas do nbformat) que o site pôs na
    biblioteca; ``{}`` fora do site."""
    try:
        texto = resources.files("atencao").joinpath("_saidas_guardadas.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return {}
    return json.loads(texto)


def _chave(codigo: str) -> str:
    return hashlib.sha256(codigo.strip().encode()).hexdigest()


def sem_pytorch(shell=None) -> bool:
    """Liga as saídas guardadas no lugar das células que precisam do PyTorch (só no navegador, sem PyTorch).

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

    def trocar(linhas: list[str]) -> list[str]:
        chave = _chave("".join(linhas))
        if chave not in guardadas:
            return linhas
        return ["import atencao.navegador as _navegador\n", f"_navegador.mostrar_guardada({chave!r})\n"]

    if not any(getattr(t, "__name__", "") == "trocar" for t in shell.input_transformers_cleanup):
        shell.input_transformers_cleanup.insert(0, trocar)
    return True


def mostrar_guardada(chave: str) -> None:
    """Mostra a nota :data:`NOTA_PYTORCH` e as saídas guardadas da célula de sha256 ``chave``.

    Raises
    ------
    KeyError
        Se não há saída guardada com essa chave.
    """
    from IPython.display import publish_display_data

    saidas = _guardadas()[chave]
    print(NOTA_PYTORCH, flush=True)
    for saida in saidas:
        tipo = saida.get("output_type")
        if tipo == "stream":
            texto = saida.get("text", "")
            destino = sys.stderr if saida.get("name") == "stderr" else sys.stdout
            print("".join(texto) if isinstance(texto, list) else texto, end="", file=destino, flush=True)
        elif tipo in ("display_data", "execute_result"):
            dados = {k: "".join(v) if isinstance(v, list) else v for k, v in saida.get("data", {}).items()}
            publish_display_data(dados, saida.get("metadata", {}))
