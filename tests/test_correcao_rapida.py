"""O que a correção deixa de fazer para ser rápida, sem mudar o que o aluno recebe de nota: as figuras que o
kernel da correção não desenha (:mod:`correcao._sem_figuras`) e o aquecimento do processo do aluno antes das
chamadas da conferência (:func:`correcao._aluno._warm_up`). O tempo em si é medido por ``make bench``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from correcao._sem_figuras import AVISO

ROOT = Path(__file__).resolve().parents[1]


def _python(codigo: str) -> dict:
    """Roda ``codigo`` num Python novo (com a biblioteca do curso) e devolve o JSON da última linha impressa."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONPATH"] = str(ROOT / "lib")
    saida = subprocess.run([sys.executable, "-c", codigo], capture_output=True, text=True, env=env, timeout=120,
                           check=True).stdout
    return json.loads(saida.strip().splitlines()[-1])


def _executar_como_a_correcao(nb, tmp_path) -> None:
    """Executa ``nb`` (no lugar) num kernel com os argumentos do kernel da correção (fora da caixa)."""
    from nbclient import NotebookClient

    from correcao._executar import KERNEL_ARGUMENTS

    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONPATH"] = str(ROOT / "lib")
    client = NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60, extra_arguments=KERNEL_ARGUMENTS)
    client.km = client.create_kernel_manager()
    client.km.extra_env = env
    client.km.transport = "ipc"  # sockets em arquivos: sem a corrida por portas TCP com os outros testes em paralelo
    client.km.ip = str(tmp_path / "k")
    client.execute()


def test_kernel_da_correcao_guarda_no_maximo_o_limite_de_saida_por_celula(tmp_path):
    """Uma enxurrada de print (20 MB, em stdout e stderr) sai do kernel com no máximo ``LIMITE`` caracteres: o buffer
    de saída do kernel não cresce com ela. A célula seguinte imprime normalmente, e ``write`` de bytes continua
    sendo um ``TypeError``, como no ipykernel."""
    import nbformat

    from correcao._saida_limitada import LIMITE

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import sys\nfor i in range(200):\n    print('x' * 100_000)\n"
                                  "    print('e' * 100, file=sys.stderr)\nprint('chegou ao fim')"),
        nbformat.v4.new_code_cell("print('depois')\nsys.stdout.write(b'bytes')"),
    ])
    _executar_como_a_correcao(nb, tmp_path)
    primeira, segunda = ([o for o in c.outputs if o["output_type"] == "stream"] for c in nb.cells)
    total = sum(len(o["text"]) for o in primeira)
    assert 2**20 < total <= LIMITE, total
    assert not any("chegou ao fim" in o["text"] for o in primeira)  # depois do limite, nada mais é guardado
    assert segunda == [{"output_type": "stream", "name": "stdout", "text": "depois\n"}]
    assert nb.cells[1].outputs[-1]["ename"] == "TypeError"


def test_kernel_da_correcao_roda_o_codigo_da_figura_sem_desenhar(tmp_path):
    """O código do aluno roda inteiro (o print antes, o erro de uma figura mal feita); nenhuma imagem; no retorno,
    o aviso no lugar do texto de cada figura (e um print com o mesmo texto fica como está)."""
    import nbformat

    from correcao._sem_figuras import replace_undrawn

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nprint('antes')\nplt.plot([1, 2]);"),
        nbformat.v4.new_code_cell("fig, ax = plt.subplots()\nax.imshow([[0, 1], [1, 0]])\nfig"),
        nbformat.v4.new_code_cell("plt.plot([1, 2], [1])"),  # erro ao criar a figura, como o aluno veria
        nbformat.v4.new_code_cell("print('<Figure size 640x480 with 1 Axes>')"),
    ])
    _executar_como_a_correcao(nb, tmp_path)
    saidas = [replace_undrawn([dict(o) for o in c.outputs]) for c in nb.cells]
    tudo = json.dumps(saidas)
    assert "image/png" not in tudo and "image/svg" not in tudo
    assert saidas[0][0]["text"] == "antes\n"
    textos = [o["data"]["text/plain"] for c in saidas[:2] for o in c if "data" in o]
    assert len(textos) >= 2 and all(t == AVISO for t in textos), textos  # nenhum "<Figure size ...>"
    assert any(o["output_type"] == "error" and o["ename"] == "ValueError" for o in saidas[2])
    assert saidas[3] == [{"output_type": "stream", "name": "stdout", "text": "<Figure size 640x480 with 1 Axes>\n"}]


def test_aquecimento_carrega_o_matplotlib_so_quando_pedido_e_uma_vez():
    codigo = """
import json, sys
from correcao import _aluno
_aluno._warm_up([])
sem = "matplotlib.pyplot" in sys.modules
_aluno._warm_up(["matplotlib", "outra coisa"])
import matplotlib.pyplot as plt
com = "matplotlib.pyplot" in sys.modules
_aluno._warm_up({"matplotlib": 1})  # fora do formato: só a base
print(json.dumps({"sem": sem, "com": com, "figuras": plt.get_fignums(), "aquecido": sorted(_aluno._AQUECIDO)}))
"""
    r = _python(codigo)
    assert r == {"sem": False, "com": True, "figuras": [], "aquecido": ["base", "matplotlib"]}


def test_o_projeto_pede_o_aquecimento_do_matplotlib_ao_processo_do_aluno():
    """Na correção, a verificação do projeto da Aula 1 pede o matplotlib carregado antes das chamadas; o pedido de
    cada chamada leva isso (``aquecer``) ao processo do aluno."""
    from atencao.checks import aula01
    from atencao.checks.framework import RemoteCall

    class Remota(RemoteCall):
        __name__ = "visualize_attention"

        def call_checked(self, args, kwargs, names, forbidden):
            raise RuntimeError("o processo do aluno parou")

    f = Remota()
    assert f.warm_up == ()
    aula01.projeto(f)
    assert f.warm_up == ("matplotlib",)


def test_processos_comecados_antes_do_plano_terminam_mesmo_sem_o_que_corrigir(tmp_path):
    """Os processos de correção começam antes de a turma ser lida; numa turma sem notebooks, eles recebem "nada a
    corrigir" e terminam, e a linha do aluno sai como sempre."""
    import multiprocessing

    from correcao.motor import grade_class

    (tmp_path / "turma" / "nina").mkdir(parents=True)
    (tmp_path / "turma" / "nina" / "leia-me.txt").write_text("oi", encoding="utf-8")
    rows = grade_class(tmp_path / "turma", tmp_path / "saida", workers=2, log=lambda *_: None, isolar=False)
    assert [(r.student, r.status) for r in rows] == [("nina", "sem_notebooks")]
    assert multiprocessing.active_children() == []
    assert (tmp_path / "saida" / "notas.csv").exists()


def test_a_biblioteca_do_aluno_e_feita_uma_vez_por_correcao(tmp_path, monkeypatch):
    """Com a pasta da correção, o segundo processo (aqui, a mesma função sem o cache do processo) usa a biblioteca que
    o primeiro montou, sem montá-la de novo; outra pasta (outra correção) monta a sua."""
    from correcao import biblioteca_aluno

    montadas = []
    original = biblioteca_aluno.build_student_library

    def contando(dest, nomes, lib=None):
        montadas.append(dest)
        return original(dest, nomes, lib)

    monkeypatch.setattr(biblioteca_aluno, "build_student_library", contando)
    sem_cache = biblioteca_aluno.student_library.__wrapped__
    checks = (("aula01", ("exercicio_4",)),)
    primeira = sem_cache(checks, tmp_path / "correcao-1")
    segunda = sem_cache(checks, tmp_path / "correcao-1")
    assert primeira == segunda and len(montadas) == 1, montadas
    assert (Path(primeira) / "atencao" / "__init__.py").is_file()
    assert oct(os.stat(Path(primeira).parent).st_mode & 0o777) == "0o755"  # o uid da caixa lê
    assert not [p for p in (tmp_path / "correcao-1").iterdir() if p.name.startswith(".montando-")]
    outra = sem_cache(checks, tmp_path / "correcao-2")
    assert outra != primeira and len(montadas) == 2
