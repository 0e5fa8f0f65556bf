"""Correção com o nbgrader: entrada em .zip, repetição, fonte do nbgrader, metadados, `make validar`,
a falta do bwrap e a varredura do código que mexe na correção.

(Separado de test_correcao.py para rodar em paralelo com a correção da turma inteira.)
"""

import csv
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from correcao import catalogo, isolamento, motor, scoring, varredura
from correcao.politica import GradingPolicy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import turma_corrigida  # noqa: E402
from turma_exemplo import gerar  # noqa: E402


@pytest.fixture(scope="module")
def turma(tmp_path_factory):
    """A turma de exemplo extraída numa pasta temporária (para validar notebooks soltos)."""
    dest = tmp_path_factory.mktemp("turma")
    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        z.extractall(dest)
    return dest / "turma-exemplo"


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_zip_baguncado_da_as_mesmas_notas_que_a_turma_arrumada(tmp_path, turma, tmp_path_factory):
    """Uma turma como chega (zip do Windows, cópias, renomeado, célula colada, kernel que morre, caminho
    hostil): as mesmas linhas de notas.csv que os mesmos notebooks na turma arrumada (corrigida uma vez na
    sessão), sem caminhos temporários."""
    pacote = tmp_path / "turma.zip"
    membros = [("../fora.txt", b"tentativa de sair da pasta"), ("entregas/../../fuga.ipynb", b"{}")]
    alunos = ("bruno-parcial", "joao-arquivos-ruins", "sofia-duas-copias", "ulisses-celula-colada",
              "wagner-kernel-morre")
    for aluno in alunos:
        for f in sorted((turma / aluno).rglob("*")):
            if f.is_file():
                membros.append((f"entregas\\{aluno}\\{f.relative_to(turma / aluno)}", f.read_bytes()))
    membros.append(("entregas/rita/Exercicios-Copy1.IPYNB",
                    (turma / "rita-renomeados" / "03-exercicios-Copy1.ipynb").read_bytes()))
    pacote.write_bytes(gerar._zip(membros))
    motor.grade_class(pacote, tmp_path / "saida", cell_timeout=20, log=lambda *_: None)
    texto = (tmp_path / "saida" / "notas.csv").read_text(encoding="utf-8")
    assert "/tmp" not in texto and str(tmp_path) not in texto and "correcao-" not in texto
    linhas = {(r["aluno"], r["arquivo"]): r for r in csv.DictReader(io.StringIO(texto))}
    assert len(linhas) == 8
    arrumada = {(r["aluno"], r["arquivo"]): r for r in turma_corrigida.turma_corrigida(tmp_path_factory)["table"]}
    mesmas = {("rita", "Exercicios-Copy1.IPYNB"): ("rita-renomeados", "03-exercicios-Copy1.ipynb")}
    mesmas.update({k: k for k in linhas if k[0] in alunos})
    fora = ("aluno", "arquivo", "retorno", "motivo")
    for nossa, dela in mesmas.items():  # as colunas de pontos são as das aulas presentes em cada correção
        a, b = linhas[nossa], arrumada[dela]
        assert {k: v for k, v in a.items() if k not in fora} == {k: b.get(k) for k in a if k not in fora}, nossa
        assert all(b[k] == "" for k in b.keys() - a.keys()), nossa
    assert (linhas[("rita", "Exercicios-Copy1.IPYNB")]["situacao"],
            linhas[("rita", "Exercicios-Copy1.IPYNB")]["total"]) == ("ok", "4")
    assert linhas[("wagner-kernel-morre", "03-exercicios.ipynb")]["situacao"] == "kernel_morreu"
    assert not (tmp_path.parent / "fora.txt").exists()
    nao = (tmp_path / "saida" / "nao-corrigidos.csv").read_text(encoding="utf-8")
    assert "entregas/../../fuga.ipynb" in nao and "../fora.txt" in nao  # não lidos, mas listados


@pytest.mark.lento  # roda o generate_assignment do nbgrader sobre as soluções (make test-lento)
def test_solucoes_servem_de_fonte_ao_nbgrader_sem_edicao(tmp_path):
    """generate_assignment do nbgrader sobre solutions/ dá exatamente os notebooks de aluno do curso."""
    everything = catalogo.catalog()
    w = motor.Worker(tmp_path, list(everything.values()), 0, GradingPolicy(cell_timeout=5, isolate=False), "teste")
    course = w.course
    for g in everything.values():
        release = json.loads((course / "release" / g.assignment / f"{g.notebook}.ipynb").read_text(encoding="utf-8"))
        ours = json.loads((ROOT / "notebooks" / g.source.relative_to(ROOT / "solutions")).read_text(encoding="utf-8"))
        assert ["".join(c["source"]) for c in release["cells"]] == ["".join(c["source"]) for c in ours["cells"]]


def test_ids_de_correcao_unicos_no_curso_e_metadados_completos():
    seen = {}
    for g in catalogo.catalog().values():
        nb = json.loads(g.source.read_text(encoding="utf-8"))
        kinds = set()
        for cell in nb["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader")
            if not meta:
                continue
            gid = meta["grade_id"]
            assert gid not in seen, f"grade_id repetido: {gid} em {g.notebook} e {seen[gid]}"
            seen[gid] = g.notebook
            if meta["grade"] and not meta["solution"]:
                kinds.add("teste")
                assert meta["locked"] and meta["points"] > 0 and cell["cell_type"] == "code"
            elif meta["solution"]:
                kinds.add("resposta" if cell["cell_type"] == "markdown" else "solucao")
            elif meta["locked"]:
                kinds.add("protegida")
        assert {"teste", "solucao", "protegida"} <= kinds, (g.notebook, kinds)


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_sem_bwrap_recusa_com_instrucao_e_sem_isolamento_marca_cada_linha(tmp_path, turma, monkeypatch):
    monkeypatch.setattr(isolamento.shutil, "which", lambda name: None)
    with pytest.raises(isolamento.BwrapMissing, match="apt-get install bubblewrap"):
        motor.grade_class(turma, tmp_path / "saida", log=lambda *_: None)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "corrigir.py"), str(turma), "--saida",
                          str(tmp_path / "cli")], capture_output=True, text=True, env={"PATH": "/nada"})
    assert out.returncode == 3 and "bubblewrap" in out.stderr and "--sem-isolamento" in out.stderr
    assert not (tmp_path / "cli" / "notas.csv").exists()
    pasta = tmp_path / "uma"
    (pasta / "bruno-parcial").mkdir(parents=True)
    (pasta / "bruno-parcial" / "03-exercicios.ipynb").write_bytes(
        (turma / "bruno-parcial" / "03-exercicios.ipynb").read_bytes())
    rows = motor.grade_class(pasta, tmp_path / "saida", cell_timeout=10, isolar=False, log=lambda *_: None)
    assert [(r.total, r.isolation) for r in rows] == [(2.0, "sem_isolamento")]
    assert "sem_isolamento" in (tmp_path / "saida" / "notas.csv").read_text(encoding="utf-8")


def _editaveis(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code" and not catalogo.nbgrader_meta(c).get("locked")]


def test_varredura_nao_aponta_as_solucoes_nem_os_notebooks_do_curso():
    for path in sorted((ROOT / "solutions").rglob("*.ipynb")) + sorted((ROOT / "notebooks").rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        modulos = varredura.imported_modules([c.source for c in nb.cells if c.cell_type == "code"])
        for src in _editaveis(nb):
            assert varredura.scan_cell(src, modulos) == [], (path.name, src[:200])


@pytest.mark.parametrize("nome", [n for n in gerar.TRAPACAS if n != "trapaca-imprime-aprovado"])
def test_varredura_aponta_cada_trapaca(nome):
    modulos = {"np", "atencao", "aula01", "os", "sys"}
    codigo = "\n".join(gerar.TRAPACAS[nome])
    assert varredura.scan_cell(codigo, modulos), nome


@pytest.mark.parametrize("codigo, trecho", [
    ("import builtins\nbuiltins.print = None", "builtins"),
    ("f = lambda: 0\nf.__code__ = (lambda: 1).__code__", "__code__"),
    ("import gc\n[o for o in gc.get_objects()]", "importa gc"),
    ("x = eval('1 + 1')", "usa eval"),
    ("!ls /", "comando de shell"),
    ("%env NBGRADER_EXECUTION=", "NBGRADER"),
    ("from atencao.checks import framework", "importa as verificações"),
    ("setattr(np, 'allclose', None)", "usa setattr"),
    ("import os\nos.kill(1, 9)", "os.kill"),
    ("import os\nfk = getattr(os, 'fo' + 'rk')", "nome calculado"),
    ("import os\ngetattr(os, 'environ')", "getattr(..., 'environ')"),
])
def test_varredura_aponta_tecnicas_de_trapaca(codigo, trecho):
    motivos = varredura.scan_cell(codigo, {"np", "os"})
    assert any(trecho in m for m in motivos), motivos


def test_varredura_nao_aponta_codigo_comum_de_aluno():
    comum = ("import numpy as np\nimport math\nfrom collections import Counter\n%timeit np.ones(3)\n"
             "def f(X, W):\n    Q = X @ W\n    Q /= math.sqrt(Q.shape[-1])\n    return Q\n"
             "class Camada:\n    def __init__(self):\n        self.W = np.eye(2)\n")
    assert varredura.scan_cell(comum, {"np", "math", "Counter"}) == []


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_arquivos_hostis_na_pasta_viram_linhas_e_nao_derrubam_a_correcao(tmp_path, turma):
    """Achados de um teste "como aluno": cada um derrubava a turma inteira (ou entregava as respostas)."""
    import os

    pasta = tmp_path / "entregas"
    casos = {
        "atalho-para-solucao": lambda p: p.symlink_to(ROOT / "solutions" / "modulo-06" / "aula-01-self-attention"
                                                     / "03-exercicios.ipynb"),
        "atalho-quebrado": lambda p: p.symlink_to("/nao/existe.ipynb"),
        "atalho-para-dev-zero": lambda p: p.symlink_to("/dev/zero"),
        "fifo": lambda p: os.mkfifo(p),
        "json-aninhado": lambda p: p.write_text("[" * 5000 + "]" * 5000),
        "numero-enorme": lambda p: p.write_text('{"cells": [], "nbformat": ' + "9" * 5000 + "}"),
    }
    for nome, fazer in casos.items():
        (pasta / nome).mkdir(parents=True)
        fazer(pasta / nome / "03-exercicios.ipynb")
    (pasta / "pasta-atalho").mkdir()
    (pasta / "pasta-atalho" / "solucoes").symlink_to(ROOT / "solutions")
    rows = {r.student: r for r in motor.grade_class(pasta, tmp_path / "saida", log=lambda *_: None)}
    for nome in casos:
        assert rows[nome].status == "arquivo_invalido" and rows[nome].total == 0, (nome, rows[nome])
    assert "atalho" in rows["atalho-para-solucao"].reasons[0]
    assert "não é um arquivo comum" in rows["fifo"].reasons[0]
    assert rows["pasta-atalho"].status == "sem_notebooks"
    assert (tmp_path / "saida" / "notas.csv").exists()


# ---------- entregas hostis: cada ataque medido contra o corretor vira um caso ----------
ORCAMENTO_S = 60.0
HOSTIS = {
    # um kernel que ignora a interrupção sem importar signal (a varredura não aponta nada)
    "ignora-interrupcao": "import time\nwhile True:\n    try:\n        time.sleep(0.2)\n    except KeyboardInterrupt:\n"
                          "        pass\n",
    "enxurrada": "while True:\n    print('x' * 100_000)\n",
    "memoria-do-notebook": "_grande = b'x' * (1500 * 2**20)  # cabe no limite do processo, não no do notebook\n",
    "disco": ("import os\n_r = {}\nfor _p in (os.getcwd(), '/tmp', os.path.expanduser('~/sub')):\n"
              "    os.makedirs(_p, exist_ok=True)\n    _n = 0\n    try:\n"
              "        with open(os.path.join(_p, 'g.bin'), 'wb') as _f:\n            for _ in range(1600):\n"
              "                _f.write(bytes(2**20)); _n += 1\n            _f.flush()\n"
              "    except OSError as _e:\n        _r[_p] = (_n, _e.errno)\nprint('disco', sorted(_r.values()))\n"),
}


def _notebook_hostil(codigo: str) -> dict:
    nb = gerar.clean(gerar.student(gerar.AULA1, "03-exercicios"))
    sol = gerar.solution(gerar.AULA1, "03-exercicios")
    gerar.fill(nb, "aula01-ex3-solucao", codigo + "".join(gerar.cell(sol, "aula01-ex3-solucao")["source"]))
    return nb


def _sessenta_mil_celulas() -> dict:
    nb = gerar.clean(gerar.student(gerar.AULA1, "03-exercicios"))
    nb["cells"] += [{"cell_type": "code", "metadata": {}, "source": "", "outputs": [], "execution_count": None}
                    for _ in range(60_000)]
    return nb


@pytest.fixture(scope="module")
def hostis(tmp_path_factory):
    """A turma hostil corrigida uma vez: linhas, segundos de cada notebook (do envio à linha), o log e as
    medidas da máquina (memória e disco) durante a correção."""
    from test_isolamento import Medidor

    pasta = tmp_path_factory.mktemp("hostis")
    for aluno, codigo in HOSTIS.items():
        (pasta / aluno).mkdir()
        (pasta / aluno / "03-exercicios.ipynb").write_text(json.dumps(_notebook_hostil(codigo)), encoding="utf-8")
    (pasta / "sessenta-mil").mkdir()
    (pasta / "sessenta-mil" / "03-exercicios.ipynb").write_text(json.dumps(_sessenta_mil_celulas()), encoding="utf-8")
    log: list[str] = []
    marca = "hostis" + __import__("secrets").token_hex(4)
    import tempfile

    temporaria = pasta.parent / "tmp-do-corretor"  # a pasta temporária do corretor, só desta correção
    temporaria.mkdir()
    antes, tempfile.tempdir = tempfile.tempdir, str(temporaria)
    medidor = Medidor(pasta, Path("/tmp"), Path("/"), arvores=(temporaria,))
    try:
        rows = motor.grade_class(pasta, pasta.parent / "saida-hostis", cell_timeout=8, notebook_timeout=ORCAMENTO_S,
                                 workers=2, log=log.append, memoria_total_mb=1024, disco_mb=128, marca=marca)
    finally:
        tempfile.tempdir = antes
        medidor.parar()
    segundos = {}
    for linha in log:
        if " · " in linha and linha.rstrip().endswith(" s)"):
            segundos[linha.split(" · ")[0].strip()] = float(linha.rsplit("(", 1)[1].split()[0])
    print(f"\n[medida] hostis: aumento de memória da máquina {medidor.pico_mem / 2**20:.0f} MiB, de disco "
          f"{medidor.pico_disco / 2**20:.0f} MiB (com os outros processos da máquina); pasta do corretor no disco: "
          f"pico de {medidor.pico_arvores / 2**20:.1f} MiB; segundos por notebook {segundos}; picos dos grupos "
          f"{ {r.student: round((r.peak_memory or 0) / 2**20) for r in rows} } MiB")
    return {"rows": {r.student: r for r in rows}, "segundos": segundos, "log": log, "marca": marca,
            "medidor": medidor, "saida": pasta.parent / "saida-hostis"}


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_hostis_terminam_no_orcamento_sem_recorrecao_e_sem_sobras(hostis):
    assert set(hostis["segundos"]) == set(HOSTIS), hostis["log"]  # o de 60 000 células nem chega ao kernel
    for aluno, s in hostis["segundos"].items():
        assert s <= ORCAMENTO_S + 10, (aluno, s)
    assert not any("de novo" in linha for linha in hostis["log"]), hostis["log"]
    for r in hostis["rows"].values():
        assert not scoring.timed_out_by_machine(r), r
        if r.status not in ("grande_demais",):
            assert r.isolation.startswith("bwrap+"), r.isolation
    assert isolamento.leftover_pids(hostis["marca"]) == []
    assert [d for d in isolamento.leftover_cgroups() if hostis["marca"] in d.name] == []
    assert hostis["medidor"].pico_arvores < 100 * 2**20  # 3 × 1,6 GB gravados: nada chegou ao disco


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_kernel_que_ignora_a_interrupcao_e_encerrado_na_celula(hostis):
    r = hostis["rows"]["ignora-interrupcao"]
    assert r.status == "tempo_esgotado" and r.tempo_do_aluno, r
    assert any("não atendeu à interrupção" in m for m in r.reasons), r.reasons
    assert hostis["segundos"]["ignora-interrupcao"] < 8 + 5 + 40  # a célula, a espera e o resto do notebook


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_enxurrada_de_saida_e_cortada_com_nota_no_retorno(hostis):
    r = hostis["rows"]["enxurrada"]
    # o kernel da correção guarda no máximo correcao._saida_limitada.LIMITE de cada célula: sem o limite, o buffer de
    # saída do kernel crescia entre um envio e outro e, numa máquina ocupada, a memória do notebook se esgotava
    # antes de a saída ser cortada (visto em duas CIs)
    assert r.tempo_do_aluno and any("saída cortada" in m for m in r.reasons), r.reasons
    assert r.status in ("zero", "parcial", "ok", "tempo_esgotado"), r
    retorno = (hostis["saida"] / r.retorno).read_text(encoding="utf-8")
    assert "saída cortada" in retorno and len(retorno) < 8 * 2**20


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_memoria_somada_do_notebook_e_disco_cheio(hostis):
    mem = hostis["rows"]["memoria-do-notebook"]
    assert mem.status == "memoria_esgotada" and any("soma dos processos" in m for m in mem.reasons), mem
    assert mem.peak_memory is None or mem.peak_memory <= 1024 * 2**20 + 2**20
    disco = hostis["rows"]["disco"]
    # o aluno só encheu as próprias pastas: o exercício 3 (certo) vale, o 4 (esboço) não
    assert (disco.status, disco.scores["aula01-ex3-verificacao"], disco.total) == ("parcial", 2.0, 2.0), disco
    texto = (hostis["saida"] / disco.retorno).read_text(encoding="utf-8")  # o retorno mostra a saída da célula
    assert "disco [(" in texto and texto.count(", 28)") == 3, texto[:300]  # ENOSPC nas três pastas da caixa


def test_sessenta_mil_celulas_recusado_cedo(tmp_path):
    """O notebook de 60 000 células vazias (3,5 MB) levava 1452 s fora da caixa: agora é recusado na leitura."""
    pasta = tmp_path / "e"
    (pasta / "sessenta-mil").mkdir(parents=True)
    (pasta / "sessenta-mil" / "03-exercicios.ipynb").write_text(json.dumps(_sessenta_mil_celulas()), encoding="utf-8")
    import time

    t0 = time.monotonic()
    rows = motor.grade_class(pasta, tmp_path / "saida", isolar=False, log=lambda *_: None)
    assert time.monotonic() - t0 < 30
    assert [(r.status, r.total) for r in rows] == [("grande_demais", 0.0)]
    assert "células demais (60" in rows[0].reasons[0] and "limite é 500" in rows[0].reasons[0]
    assert catalogo.too_large(catalogo.MAX_NOTEBOOK_BYTES + 1) is not None
    assert catalogo.too_large(1000, {"cells": [{}] * 39}) is None


def test_aviso_de_maquina_ocupada_so_quando_a_cpu_estava_disputada():
    """O aviso no log (a entrega nunca é corrigida de novo: veja tests/test_politica.py)."""
    from correcao.relatorio import Row

    def linha(**kw):
        r = Row("a", "aula", "nb", status="tempo_esgotado")
        for k, v in kw.items():
            setattr(r, k, v)
        return r

    da_maquina = scoring.timed_out_by_machine
    assert da_maquina(linha(cpu_ratio=0.2, cpu_others=1.5))  # esperou pela CPU, com outros ocupando
    assert not da_maquina(linha(cpu_ratio=0.2, cpu_others=0.1))  # máquina livre: o tempo foi do aluno
    assert not da_maquina(linha(cpu_ratio=0.95, cpu_others=1.5))  # laço infinito de verdade
    assert not da_maquina(linha(cpu_ratio=None, cpu_others=1.5))  # sem medida: não
    assert not da_maquina(linha(cpu_ratio=0.2, cpu_others=1.5, tempo_do_aluno=True))  # ignorou/inundou
    assert not da_maquina(linha(status="ok", cpu_ratio=0.2, cpu_others=1.5))


@pytest.mark.lento  # corrige notebooks de verdade (make test-lento)
def test_orcamento_minusculo_mata_o_processo_de_correcao_e_segue(tmp_path, turma):
    """Orçamento de 1 s: as caixas morrem no prazo e, se o retorno do nbgrader ainda não voltou, o processo de
    correção inteiro morre (SIGKILL) com os seus cgroups; a linha diz tempo esgotado em até orçamento + 10 s."""
    import secrets

    pasta = tmp_path / "e"
    for aluno in ("bruno-parcial", "davi-laco-infinito"):
        (pasta / aluno).mkdir(parents=True)
        (pasta / aluno / "03-exercicios.ipynb").write_bytes((turma / aluno / "03-exercicios.ipynb").read_bytes())
    log: list[str] = []
    marca = secrets.token_hex(6)
    # sem a prova do começo, que recusa um orçamento menor que o tempo da solução (aqui, o teste é o prazo em si)
    rows = motor.grade_class(pasta, tmp_path / "saida", cell_timeout=5, notebook_timeout=1.0, workers=2,
                             log=log.append, marca=marca, preflight_check=False)
    assert [r.status for r in rows] == ["tempo_esgotado"] * 2, rows
    # o verificador isolado é leve (sem kernel): numa máquina folgada, o exercício 3 do bruno (certo) pode ser julgado
    # dentro do segundo, e vale; o laço infinito do davi, nunca
    bruno, davi = rows
    assert davi.total == 0.0 and bruno.total in (0.0, 2.0), rows
    assert bruno.scores.get("aula01-ex4-verificacao") == 0.0, rows
    segundos = [float(linha.rsplit("(", 1)[1].split()[0]) for linha in log if linha.rstrip().endswith(" s)")]
    # com a máquina disputada (as caixas mal usaram a CPU), cada uma pode ser corrigida de novo: também no orçamento
    assert len(segundos) in (2, 3, 4) and max(segundos) <= 1.0 + 10, log
    assert isolamento.leftover_pids(marca) == []
    assert [d for d in isolamento.leftover_cgroups() if marca in d.name] == []
