"""A execução única da correção: o processo do aluno dá as saídas do retorno como um kernel as daria.

:mod:`correcao._capture` guarda as saídas de cada célula no formato do nbformat (texto, ``display``, o valor da última
linha, erros) com os limites do kernel da correção; os testes de ponta a ponta (``test_correcao``,
``test_turma_hostil``, ``test_proibidas_fora_do_alcance``) conferem o retorno e as notas de turmas inteiras.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from correcao import _capture, _executar

ROOT = Path(__file__).resolve().parents[1]


def _saidas() -> _capture.CellOutputs:
    saidas = _capture.CellOutputs()
    saidas.start()
    return saidas


def test_textos_seguidos_viram_uma_saida_e_contam_so_os_caracteres():
    saidas = _saidas()
    for i in range(3):
        saidas.add({"output_type": "stream", "name": "stdout", "text": f"linha {i}\n"})
    saidas.add({"output_type": "stream", "name": "stderr", "text": "aviso\n"})
    assert saidas.stop() == [{"output_type": "stream", "name": "stdout", "text": "linha 0\nlinha 1\nlinha 2\n"},
                             {"output_type": "stream", "name": "stderr", "text": "aviso\n"}]
    # 20 000 prints de uma linha curta (~220 kB) cabem no limite de 1 MB da célula, como no kernel
    saidas = _saidas()
    for i in range(20_000):
        saidas.add({"output_type": "stream", "name": "stdout", "text": f"linha {i}"})
        saidas.add({"output_type": "stream", "name": "stdout", "text": "\n"})
    assert not saidas.cut and len(saidas.stop()) == 1


def test_saida_demais_corta_a_celula_com_o_aviso_e_continua_interrompendo():
    saidas = _saidas()
    bloco = "x" * (64 * 1024)
    with pytest.raises(_capture.OutputFlood):
        for _ in range(100):
            saidas.add({"output_type": "stream", "name": "stdout", "text": bloco})
    assert saidas.cut == "celula"
    assert saidas.outputs[-1]["name"] == "stderr" and "saída cortada pela correção" in saidas.outputs[-1]["text"]
    assert sum(len(o["text"]) for o in saidas.outputs[:-1]) <= _executar.MAX_CELL_OUTPUT
    with pytest.raises(_capture.OutputFlood):  # o aluno que engole a interrupção é interrompido de novo
        saidas.add({"output_type": "stream", "name": "stdout", "text": "mais"})
    # o notebook inteiro: 5 células de 0,9 MB passam do limite de 4 MB na quinta
    saidas = _capture.CellOutputs()
    with pytest.raises(_capture.OutputFlood):
        for _ in range(5):
            saidas.start()
            for _ in range(14):
                saidas.add({"output_type": "stream", "name": "stdout", "text": bloco})
    assert saidas.cut == "notebook"


def test_clear_output_e_fora_de_uma_celula():
    saidas = _saidas()
    saidas.add({"output_type": "stream", "name": "stdout", "text": "antes\n"})
    saidas.clear(wait=True)
    assert saidas.outputs  # com wait, só some quando a próxima saída chega
    saidas.add({"output_type": "stream", "name": "stdout", "text": "depois\n"})
    assert saidas.outputs == [{"output_type": "stream", "name": "stdout", "text": "depois\n"}]
    saidas.clear(wait=False)
    assert saidas.stop() == []
    saidas.add({"output_type": "stream", "name": "stdout", "text": "entre as células\n"})  # nada é guardado
    assert saidas.outputs == []


_CELULAS = [
    "print('olá')\nimport sys; print('erro', file=sys.stderr)",
    "from IPython.display import HTML, display\ndisplay(HTML('<b>x</b>'))\n40 + 2",
    "40 + 2;",
    "1 / 0",
    "def f(:\n    pass",
    "import matplotlib.pyplot as plt\nplt.plot([1, 2])",
    "from IPython.display import Image\nImage(data=bytes.fromhex('89504e470d0a1a0a'), format='png')",
]

_RODAR = """
import json, sys
from traitlets.config import Config
from correcao._capture import capture_shell, show_inline_figures
shell = capture_shell(Config())
resultado = []
for fonte in json.loads(sys.argv[1]):
    shell.capture.start(shell.execution_count)
    shell.run_cell(fonte, store_history=True)
    show_inline_figures(shell)  # como o processo do aluno, no fim de cada célula
    resultado.append(shell.capture.stop())
    resultado.append("matplotlib" in sys.modules)
sys.__stdout__.write(json.dumps(resultado))
"""


def test_o_shell_da_correcao_guarda_as_saidas_como_o_kernel():
    """Cada tipo de saída no formato do nbformat: o texto de ``print`` (stdout e stderr), ``display``, o valor da
    última linha com o número da execução (nada com ``;``), o erro com o nome e a mensagem, o erro de sintaxe com
    a linha da célula (o nome do arquivo como o do ipykernel), a figura sem imagem e um PNG em base64."""
    import nbformat

    feito = subprocess.run([sys.executable, "-c", _RODAR, json.dumps(_CELULAS)], capture_output=True, text=True,
                           timeout=120, env={"PYTHONPATH": str(ROOT / "lib"), "PATH": "/usr/bin:/bin"})
    assert feito.returncode == 0, feito.stderr[-3000:]
    resultado = json.loads(feito.stdout)
    texto, html, silencio, divisao, sintaxe, figura, imagem = resultado[::2]
    # o matplotlib só entra quando o aluno o importa: as células antes da figura não pagam o import
    assert resultado[1::2] == [False] * 5 + [True] * 2
    assert texto == [{"output_type": "stream", "name": "stdout", "text": "olá\n"},
                     {"output_type": "stream", "name": "stderr", "text": "erro\n"}]
    assert html[0]["output_type"] == "display_data" and html[0]["data"]["text/html"] == "<b>x</b>"
    assert html[1] == {"output_type": "execute_result", "execution_count": 2, "data": {"text/plain": "42"},
                       "metadata": {}}
    assert silencio == []
    assert [(o["output_type"], o["ename"], o["evalue"]) for o in divisao] == [
        ("error", "ZeroDivisionError", "division by zero")]
    assert sintaxe[0]["ename"] == "SyntaxError"
    from correcao.relatorio import readable_error

    assert readable_error(sintaxe[0]["ename"], sintaxe[0]["evalue"]).endswith("(linha 1 da célula)")
    assert [o["output_type"] for o in figura] == ["execute_result", "display_data"]
    assert figura[1]["data"] == {"text/plain": "<Figure size 640x480 with 1 Axes>"}  # sem imagem: não desenhada
    assert imagem[0]["data"]["image/png"] == "iVBORw0KGgo="
    for saidas in (texto, html, divisao, sintaxe, figura, imagem):
        for o in saidas:
            nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
                nbformat.from_dict(o)])]))


_SEM_DESENHO = [
    "import matplotlib.pyplot as plt\nfrom matplotlib.figure import Figure\n_desenhos = []\n_draw = Figure.draw\n"
    "def _contado(self, *a, **k):\n    _desenhos.append(1)\n    return _draw(self, *a, **k)\n"
    "Figure.draw = _contado\nplt.plot([1, 2]);",
    "plt.figure()\nplt.plot([3, 1])\nplt.show()",
    "plt.uninstall_repl_displayhook()\nprint(len(_desenhos))",
]


def test_as_figuras_saem_sem_ser_desenhadas():
    """As figuras saem no retorno (o texto do matplotlib) sem que nenhuma seja desenhada: o gancho do ``pyplot``
    que redesenha as figuras abertas no fim de cada célula não entra no shell da correção (e tirá-lo, como o aluno
    pode fazer, não dá erro)."""
    feito = subprocess.run([sys.executable, "-c", _RODAR, json.dumps(_SEM_DESENHO)], capture_output=True, text=True,
                           timeout=120, env={"PYTHONPATH": str(ROOT / "lib"), "PATH": "/usr/bin:/bin"})
    assert feito.returncode == 0, feito.stderr[-3000:]
    primeira, segunda, contagem = json.loads(feito.stdout)[::2]
    assert [o["data"] for o in primeira] == [{"text/plain": "<Figure size 640x480 with 1 Axes>"}]
    assert [o["data"] for o in segunda] == [{"text/plain": "<Figure size 640x480 with 1 Axes>"}]
    assert contagem == [{"output_type": "stream", "name": "stdout", "text": "0\n"}]
