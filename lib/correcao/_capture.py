"""Dentro da caixa, no processo do aluno: as saídas de cada célula como um kernel as daria, sem kernel.

Na execução única da correção (:mod:`correcao._aluno` com ``"saidas"`` no pedido), o mesmo processo que roda as
células do aluno atende o verificador nas células de verificação; o retorno mostra o que ele imprimiu e
desenhou. Em vez de um kernel do Jupyter (começar o ``ipykernel`` e importar o ``nbclient`` custam ~1,5 s por
notebook), o shell do IPython (o mesmo que o ``ipykernel`` usa) guarda as saídas no formato do nbformat, pelos
ganchos que o próprio IPython oferece:

- ``stream``: ``sys.stdout`` e ``sys.stderr`` trocados por :class:`CellStream`;
- ``display_data``: o publicador de ``display()`` (:class:`CapturePublisher`); as figuras do matplotlib chegam
  por ele, pelo backend ``matplotlib_inline`` do kernel, sem formatos de imagem (como :mod:`correcao._sem_figuras`);
- ``execute_result``: o ``displayhook`` do IPython (:class:`CaptureDisplayHook`);
- ``error``: o ``_showtraceback`` do shell (:class:`CaptureShell`), como o ``ipykernel`` faz.

Os limites de :mod:`correcao._executar` valem aqui também: no máximo :data:`MAX_CELL_OUTPUT` bytes por célula e
:data:`MAX_NOTEBOOK_OUTPUT` no notebook; o que passa é descartado, a célula ganha o aviso do corte e é
interrompida (:class:`OutputFlood`). Nada daqui decide pontos: as saídas só servem ao retorno.
"""

from __future__ import annotations

import base64
import io
import zlib

from IPython.core.compilerop import CachingCompiler
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.events import EventManager, available_events
from IPython.core.interactiveshell import InteractiveShell
from traitlets import Type

from ._executar import MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT, output_size


class OutputFlood(BaseException):  # noqa: N818 - não é um erro do aluno: interrompe a célula
    """A célula passou do limite de saída (``BaseException``: um ``except Exception`` não engole)."""


def _json_data(data: dict) -> dict:
    """Os dados de um ``display`` prontos para JSON: ``bytes`` (uma imagem) em base64, como o ipykernel manda."""
    return {str(k): base64.b64encode(v).decode("ascii") if isinstance(v, (bytes, bytearray)) else v
            for k, v in dict(data).items()}


class CellOutputs:
    """As saídas da célula em andamento (dicionários do nbformat) e os bytes do notebook inteiro.

    ``cut``: ``""``, ``"celula"`` ou ``"notebook"`` (a célula passou de um dos limites). ``active``: só as saídas
    de uma célula do aluno contam; fora dela (entre as células, ao atender o verificador) nada é guardado."""

    def __init__(self):
        self.outputs: list[dict] = []
        self.cell_bytes = 0
        self.total = 0
        self.cut = ""
        self.active = False
        self.clear_pending = False
        self.count: int | None = None

    def start(self, count: int | None = None) -> None:
        """Uma célula nova; ``count``: o número de execução dela (o do valor da última linha)."""
        self.outputs, self.cell_bytes, self.cut, self.active, self.clear_pending = [], 0, "", True, False
        self.count = count

    def stop(self) -> list[dict]:
        self.active = False
        return self.outputs

    def add(self, out: dict) -> None:
        """Acrescenta ``out``; passado um limite, o aviso do corte entra uma vez e :class:`OutputFlood` interrompe a
        célula (de novo a cada saída seguinte, se o código do aluno a engolir)."""
        if not self.active:
            return
        if self.clear_pending:
            self.outputs, self.clear_pending = [], False
        if self.cut:
            raise OutputFlood()
        anterior = self.outputs[-1] if self.outputs else None
        junta = (out["output_type"] == "stream" and anterior is not None and anterior["output_type"] == "stream"
                 and anterior["name"] == out["name"])
        # um texto que continua o anterior conta só os caracteres (o kernel junta os prints de ~0,2 s numa mensagem)
        tamanho = len(out["text"]) if junta else output_size(out)
        if self.cell_bytes + tamanho > MAX_CELL_OUTPUT or self.total + tamanho > MAX_NOTEBOOK_OUTPUT:
            self.cut = "celula" if self.cell_bytes + tamanho > MAX_CELL_OUTPUT else "notebook"
            limite = MAX_CELL_OUTPUT if self.cut == "celula" else MAX_NOTEBOOK_OUTPUT
            self.outputs.append({"output_type": "stream", "name": "stderr", "text":
                                 f"[saída cortada pela correção: passou de {limite // 2**20} MB "
                                 f"{'nesta célula' if self.cut == 'celula' else 'no notebook'}; "
                                 "o resto não foi guardado e a célula foi interrompida]\n"})
            raise OutputFlood()
        self.cell_bytes += tamanho
        self.total += tamanho
        if junta:
            anterior["text"] += out["text"]
        else:
            self.outputs.append(out)

    def clear(self, wait: bool) -> None:
        """``clear_output``: com ``wait``, as saídas somem quando a próxima chegar (como no Jupyter)."""
        if not self.active:
            return
        if wait:
            self.clear_pending = True
        else:
            self.outputs = []

    def error(self, ename: str, evalue: str, traceback: list) -> None:
        """O erro da célula, fora dos limites (o rastro de uma célula interrompida por saída demais ainda entra)."""
        if self.active:
            self.outputs.append({"output_type": "error", "ename": ename, "evalue": evalue,
                                 "traceback": [str(t) for t in traceback][:200]})


class CellStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` do processo do aluno: cada ``write`` vira uma saída ``stream`` da célula."""

    def __init__(self, outputs: CellOutputs, name: str):
        super().__init__()
        self._outputs, self.name = outputs, name

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self._outputs.add({"output_type": "stream", "name": self.name, "text": text})
        return len(text)


class CapturePublisher(DisplayPublisher):
    """O ``display()`` do IPython guardado como ``display_data`` (uma atualização por ``display_id`` é ignorada)."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        if update:
            return
        self.shell.capture.add({"output_type": "display_data", "data": _json_data(data),
                                "metadata": dict(metadata or {})})

    def clear_output(self, wait=False) -> None:
        self.shell.capture.clear(bool(wait))


class CaptureDisplayHook(DisplayHook):
    """O valor da última linha da célula guardado como ``execute_result`` (sem o ``Out[n]:`` do terminal)."""

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        numero = self.shell.capture.count
        self.shell.capture.add({"output_type": "execute_result",
                                "execution_count": numero if numero is not None else self.shell.execution_count,
                                "data": _json_data(format_dict), "metadata": dict(md_dict or {})})

    def finish_displayhook(self) -> None:
        self._is_active = False


class CellCompiler(CachingCompiler):
    """O nome de cada célula compilada como o do ``ipykernel`` (``<número>.py``, do conteúdo): os erros de sintaxe
    dizem ``(1234.py, line 2)``, que :func:`correcao.relatorio.readable_error` troca por ``(linha 2 da célula)``."""

    def get_code_name(self, raw_code, transformed_code, number):
        return f"{zlib.crc32(str(raw_code).encode('utf-8', 'replace'))}.py"


def _is_pyplot_redraw(function) -> bool:
    """``function`` é o gancho do ``pyplot`` que redesenha as figuras abertas no fim de cada célula."""
    return getattr(function, "__module__", None) == "matplotlib.pyplot" \
        and getattr(function, "__name__", None) == "_draw_all_if_interactive"


class UndrawnEvents(EventManager):
    """Os eventos do shell sem o gancho do ``pyplot`` que redesenha as figuras abertas depois de cada célula
    (``_draw_all_if_interactive``, ligado quando o aluno importa o ``pyplot``). Aqui as figuras não viram imagem
    (veja :func:`capture_shell`): esse desenho só gastaria CPU (~0,3 s por figura de duas cabeças). O código do
    aluno roda inteiro, e a figura é criada como no kernel."""

    def register(self, event, function) -> None:
        if event == "post_execute" and _is_pyplot_redraw(function):
            return
        super().register(event, function)

    def unregister(self, event, function) -> None:
        if event == "post_execute" and _is_pyplot_redraw(function):
            return
        super().unregister(event, function)


class CaptureShell(InteractiveShell):
    """O shell do IPython com as saídas de cada célula em :attr:`capture` (:class:`CellOutputs`)."""

    displayhook_class = Type(CaptureDisplayHook)
    display_pub_class = Type(CapturePublisher)
    compiler_class = Type(CellCompiler)

    def _showtraceback(self, etype, evalue, stb) -> None:
        self.capture.error(str(etype.__name__), str(evalue), list(stb))

    def init_events(self) -> None:
        """Os eventos de :class:`UndrawnEvents`, com o mesmo gancho que o shell base registra."""
        self.events = UndrawnEvents(self, available_events)
        self.events.register("pre_execute", self._clear_warning_registry)

    def enable_gui(self, gui=None) -> None:
        """Nenhum laço de eventos: as figuras saem pelo backend ``inline``, como no kernel (o shell base levanta
        ``NotImplementedError``)."""


def capture_shell(config) -> CaptureShell:
    """O shell, com ``sys.stdout``/``sys.stderr`` trocados pelos da célula e o matplotlib no backend do kernel
    (``matplotlib_inline``) sem formatos de imagem: cada figura sai como ``<Figure size ... with N Axes>``, que
    :func:`correcao._sem_figuras.replace_undrawn` troca pelo aviso no retorno. O matplotlib não é importado aqui
    (veja :func:`show_inline_figures`)."""
    import os
    import sys

    config.InlineBackend.figure_formats = set()
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    capture = CellOutputs()
    shell = CaptureShell.instance(config=config)
    shell.capture = capture
    sys.stdout, sys.stderr = CellStream(capture, "stdout"), CellStream(capture, "stderr")
    return shell


_INLINE = ("inline", "module://matplotlib_inline.backend_inline")


def show_inline_figures(shell: CaptureShell) -> None:
    """No fim de cada célula, ainda dentro do tempo dela: se esta célula importou o ``matplotlib.pyplot`` e a
    exibição do backend inline não ficou ligada (matplotlib 3.8: o matplotlib-inline só a liga depois da célula),
    mostra as figuras abertas, como o kernel mostraria, e liga a exibição para as próximas células.

    O matplotlib só é importado se o aluno o importar: um notebook sem figuras não paga o import (~0,7 s de CPU
    por notebook). Com o matplotlib 3.9 ou mais novo, ou com a biblioteca (``atencao.plotting.pyplot``), a
    exibição já está ligada e nada acontece aqui."""
    import sys

    if getattr(shell, "inline_on", False) or "matplotlib.pyplot" not in sys.modules:
        return
    import matplotlib

    if matplotlib.rcParams._get("backend") not in _INLINE:  # o aluno escolheu outro backend: sem figuras inline
        return
    from matplotlib._pylab_helpers import Gcf
    from matplotlib_inline.backend_inline import flush_figures, show

    shell.inline_on = True
    ligada = flush_figures in shell.events.callbacks.get("post_execute", [])
    # com a exibição ligada a tempo, o gancho já mostrou e fechou as figuras da célula; se elas continuam abertas
    # (ligada só depois da célula, ou nunca), são mostradas aqui, como o gancho do kernel as mostraria
    if Gcf.get_all_fig_managers() and (matplotlib.is_interactive() or not ligada):
        show(close=True)
    if not ligada:
        shell.enable_matplotlib("inline")
