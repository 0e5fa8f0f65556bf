"""A política da correção (:mod:`correcao.politica`): um padrão por limite, os mesmos valores em todos os caminhos
(``corrigir``, ``validar``, o hub, as partes, o ``curso.py`` e o Makefile), o ``validar`` que só diz "Pronto" com a
nota toda e nenhum passo no esboço, e uma entrega com tempo esgotado que custa o orçamento dela uma vez só."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from correcao import catalogo, motor, partes, pool
from correcao.politica import DEFAULT, GradingPolicy, add_arguments, from_args
from correcao.relatorio import Row

ROOT = Path(__file__).resolve().parents[1]
AULA1 = ROOT / "solutions" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb"
AULA5_PROJETO = ROOT / "solutions" / "modulo-06" / "aula-05-treinando-a-atencao" / "04-projeto.ipynb"


class _Capturada(Exception):
    """Levantada pelos dublês depois de guardar a política que receberam (nada mais roda)."""


def _script(nome: str):
    spec = importlib.util.spec_from_file_location(f"script_{nome}", ROOT / "scripts" / f"{nome}.py")
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo


# ---------- um padrão por limite ----------
def test_um_padrao_por_limite_e_nenhum_repetido():
    """Os padrões estão só na política: nenhum argumento de linha de comando, de ``grade_class`` ou de
    ``validate`` redeclara um número, e o ``curso.py`` e o Makefile só repassam o que foi dado."""
    import inspect

    from correcao import validar

    assert (DEFAULT.cell_timeout, DEFAULT.notebook_timeout, DEFAULT.memory_mb, DEFAULT.notebook_memory_mb,
            DEFAULT.disk_mb, DEFAULT.workers, DEFAULT.isolate, DEFAULT.max_copies,
            DEFAULT.max_files_per_student) == (30, 180.0, 2048, 3072, 512, None, True, 3, 40)
    for funcao in (motor.grade_class, validar.validate, validar.validate_many, motor.plan_class):
        numericos = {n: p.default for n, p in inspect.signature(funcao).parameters.items()
                     if isinstance(p.default, (int, float)) and not isinstance(p.default, bool)}
        assert not numericos, (funcao.__name__, numericos)
    for caminho in ("scripts/corrigir.py", "scripts/validar.py", "scripts/turma.py", "curso.py"):
        texto = (ROOT / caminho).read_text(encoding="utf-8")
        assert not re.search(r"default=\d", texto), caminho
        assert not re.search(r"\b(2048|3072)\b|padrão (30|180)\b", texto), caminho
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert not re.search(r"\b(2048|3072)\b", makefile)
    alvo = makefile[makefile.index("\ncorrigir:"):].split("\n\n")[0]
    for variavel, opcao in (("MEMORIA", "--memoria"), ("TEMPO_CELULA", "--tempo-celula"),
                            ("TEMPO_NOTEBOOK", "--tempo-notebook"), ("PROCESSOS", "--processos")):
        assert f"$(if $({variavel}), {opcao} $({variavel}))" in alvo, variavel
    # os nomes de antes no motor são os padrões da política, não outra cópia deles
    assert (motor.MAX_COPIES, motor.MAX_FILES_PER_STUDENT) == (DEFAULT.max_copies, DEFAULT.max_files_per_student)


def test_politica_recusa_limites_invalidos_e_nomes_desconhecidos():
    for campo, valor in (("cell_timeout", 0), ("notebook_timeout", -1), ("memory_mb", True), ("workers", 0),
                         ("isolate", 1), ("max_copies", "3")):
        with pytest.raises(ValueError, match=campo):
            GradingPolicy(**{campo: valor})
    with pytest.raises(TypeError, match="tempo_celula"):
        GradingPolicy.build(None, tempo_celula=3)
    assert GradingPolicy.build(None, cell_timeout=None, memoria_mb=4096) == GradingPolicy(memory_mb=4096)
    assert GradingPolicy(notebook_timeout=90).notebook_timeout == 90.0  # sempre float: a mesma parte.json
    limites = GradingPolicy(cell_timeout=7, notebook_timeout=90, memory_mb=1024, notebook_memory_mb=1500,
                            disk_mb=64).limits()
    assert (limites.memoria_mb, limites.cpu_s, limites.relogio_s, limites.memoria_total_mb, limites.disco_mb) == (
        1024, 90, 90.0, 1500, 64)


def test_linha_de_comando_monta_a_politica():
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert from_args(parser.parse_args([])) == DEFAULT
    args = parser.parse_args(["--tempo-celula", "5", "--tempo-notebook", "60", "--memoria", "1024", "--processos",
                              "1", "--sem-isolamento"])
    assert from_args(args) == GradingPolicy(cell_timeout=5, notebook_timeout=60.0, memory_mb=1024, workers=1,
                                            isolate=False)


# ---------- os mesmos valores em todos os caminhos ----------
def _politica_do_corrigir(monkeypatch, tmp_path, *argv) -> GradingPolicy:
    vista = {}

    def dubla(entregas, saida, politica=None, **kw):
        vista["politica"], vista["kw"] = politica, kw
        raise _Capturada

    with monkeypatch.context() as m:
        m.setattr(motor, "grade_class", dubla)
        (tmp_path / "turma").mkdir(exist_ok=True)
        with pytest.raises(_Capturada):
            _script("corrigir").main([str(tmp_path / "turma"), "--saida", str(tmp_path / "saida"), *argv])
        return vista["politica"]


def _politica_do_validar(monkeypatch, tmp_path, *argv) -> GradingPolicy:
    from correcao import validar

    vista = {}

    def dubla(path, politica=None, **kw):
        vista["politica"] = GradingPolicy.build(politica, **kw)
        raise _Capturada

    with monkeypatch.context() as m:
        m.setattr(validar, "validate", dubla)
        nb = tmp_path / "03-exercicios.ipynb"
        nb.write_text("{}", encoding="utf-8")
        with pytest.raises(_Capturada):
            _script("validar").main([str(nb), *argv])
        return vista["politica"]


def _politica_da_turma_do_hub(monkeypatch, tmp_path, *argv) -> GradingPolicy:
    from correcao import hub

    vista = {}

    def dubla(turma, aula, saida=None, log=print, politica=None, **kw):
        vista["politica"] = politica
        raise _Capturada

    with monkeypatch.context() as m:
        m.setattr(hub, "grade", dubla)
        with pytest.raises(_Capturada):
            _script("turma").main(["corrigir", "aula-01-self-attention", "--pasta", str(tmp_path / "curso"), *argv])
        return vista["politica"]


def _politica_do_hub(monkeypatch, tmp_path, **kwargs) -> GradingPolicy:
    """:func:`correcao.hub.grade` até a chamada de ``grade_class`` (coleta e entregas de mentira)."""
    from correcao import hub

    vista = {}

    def dubla(entregas, saida, politica=None, **kw):
        vista["politica"], vista["kw"] = politica, kw
        raise _Capturada

    class Api:
        def collect(self, *a, **k):
            return {"success": True}

    class Turma:
        pasta = tmp_path / "curso"

        def api(self):
            return Api()

    with monkeypatch.context() as m:
        m.setattr(motor, "grade_class", dubla)
        m.setattr(hub, "_entregas", lambda *a: {"ana": {"pasta": tmp_path, "timestamp": None}})
        with pytest.raises(_Capturada):
            hub.grade(Turma(), "aula-01-self-attention", tmp_path / "saida", log=lambda *_: None, **kwargs)
        assert set(vista["kw"]) == {"log"}, vista["kw"]  # nenhum limite solto: todos na política
        return vista["politica"]


def _politica_do_validate_many(monkeypatch, tmp_path) -> GradingPolicy:
    from correcao import isolamento, validar

    vista = {}

    def dubla(entregas, saida, politica=None, **kw):
        vista["politica"] = politica
        raise _Capturada

    with monkeypatch.context() as m:
        m.setattr(motor, "grade_class", dubla)
        m.setattr(isolamento, "bwrap_available", lambda: True)
        nb = tmp_path / "v" / "03-exercicios.ipynb"
        nb.parent.mkdir()
        nb.write_text("{}", encoding="utf-8")
        with pytest.raises(_Capturada):
            validar.validate_many([nb])  # o validate, o mesmo caminho, está dublado em _politica_do_validar
        return vista["politica"]


def test_corrigir_validar_hub_e_partes_usam_a_mesma_politica(monkeypatch, tmp_path):
    """Cada caminho monta a política da linha de comando (ou da padrão) e ela chega igual a quem corrige."""
    padrao = {
        "corrigir": _politica_do_corrigir(monkeypatch, tmp_path),
        "corrigir --parte": _politica_do_corrigir(monkeypatch, tmp_path, "--parte", "1/2"),
        "validar": _politica_do_validar(monkeypatch, tmp_path),
        "validate_many": _politica_do_validate_many(monkeypatch, tmp_path),
        "turma corrigir": _politica_da_turma_do_hub(monkeypatch, tmp_path),
        "hub.grade": _politica_do_hub(monkeypatch, tmp_path),
        "grade_class": GradingPolicy.build(None),
    }
    assert padrao == dict.fromkeys(padrao, DEFAULT), padrao
    opcoes = ("--tempo-celula", "7", "--tempo-notebook", "45", "--memoria", "1024", "--processos", "1")
    outra = GradingPolicy(cell_timeout=7, notebook_timeout=45, memory_mb=1024, workers=1)
    mudada = {
        "corrigir": _politica_do_corrigir(monkeypatch, tmp_path, *opcoes),
        "corrigir --parte": _politica_do_corrigir(monkeypatch, tmp_path, *opcoes, "--parte", "2/2"),
        "validar": _politica_do_validar(monkeypatch, tmp_path, *opcoes),
        "turma corrigir": _politica_da_turma_do_hub(monkeypatch, tmp_path, *opcoes),
        "hub.grade": _politica_do_hub(monkeypatch, tmp_path, politica=outra),
        # os nomes antigos (a API de antes) dão a mesma política
        "hub.grade (nomes antigos)": _politica_do_hub(monkeypatch, tmp_path, cell_timeout=7, notebook_timeout=45,
                                                      memoria_mb=1024, workers=1),
        "grade_class (nomes antigos)": GradingPolicy.build(None, cell_timeout=7, notebook_timeout=45.0,
                                                           memoria_mb=1024, workers=1),
    }
    assert mudada == dict.fromkeys(mudada, outra), mudada


def test_partes_gravam_a_politica_e_recusam_outra(tmp_path):
    """Cada parte grava em ``parte.json`` as opções da política (o que muda a nota); partes com políticas
    diferentes não se juntam."""
    for k, politica in ((1, DEFAULT), (2, GradingPolicy(cell_timeout=10))):
        partes.write_part(tmp_path / f"p{k}", (k, 2), [], [], "turma", [], politica.part_options())
    dados = partes.read_part(tmp_path / "p1")
    assert dados["opcoes"] == DEFAULT.part_options()
    assert dados["opcoes"]["tempo_celula"] == DEFAULT.cell_timeout and "workers" not in json.dumps(dados["opcoes"])
    assert GradingPolicy(workers=1).part_options() == DEFAULT.part_options()  # os processos não mudam a nota
    with pytest.raises(partes.PartsError, match="opções diferentes"):
        partes.join_parts([tmp_path / "p1", tmp_path / "p2"], tmp_path / "saida")


def test_curso_py_so_repassa_os_limites_dados():
    def linha(*argv):
        out = subprocess.run([sys.executable, str(ROOT / "curso.py"), "--mostrar", "corrigir", "t.zip", *argv],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout.strip().splitlines()[-1]

    sem = linha()
    assert "--memoria" not in sem and "--tempo" not in sem and "--processos" not in sem, sem
    com = linha("--memoria", "4096", "--tempo-celula", "20", "--processos", "1")
    assert "--memoria 4096" in com and "--tempo-celula 20" in com and "--processos 1" in com, com


# ---------- o validar só diz "Pronto" com a nota toda ----------
def _sem_minha_tarefa(nb: dict) -> dict:
    """O projeto da Aula 5 resolvido, menos a ``my_task()``, ainda o esboço (como o aluno a recebe)."""
    nb = json.loads(json.dumps(nb))
    celula = next(c for c in nb["cells"] if catalogo.nbgrader_meta(c).get("grade_id") == "aula05-projeto-tarefa")
    celula["source"] = ("def my_task():\n    # Devolve make_task(nome, descrição, source, causal=...), com 8 posições "
                        "em source\n" + "\n".join("    " + linha for linha in catalogo.CODE_STUB.splitlines()))
    return nb


def test_validar_nao_diz_pronto_com_um_passo_no_esboco():
    """A verificação do projeto da Aula 5 passa e a resposta escrita está feita, mas a ``my_task()``, que nenhuma
    verificação chama, ainda levanta NotImplementedError: o relatório diz isso e o que falta, e não "Pronto"."""
    from correcao.validar import _report

    g = catalogo.catalog()[("aula-05-treinando-a-atencao", "04-projeto")]
    solucao = json.loads(AULA5_PROJETO.read_text(encoding="utf-8"))
    cheia = {gid: float(p) for gid, (_, p, auto) in g.cells.items() if auto}
    row = Row("aluno", g.assignment, g.notebook, scores=dict(cheia), total=sum(cheia.values()),
              maximum=g.max_auto, status="ok")
    ok, linhas = _report(Path("04-projeto.ipynb"), row, solucao)
    assert ok and linhas[-1] == "Pronto para entregar! ✅", linhas  # a solução inteira está pronta
    ok, linhas = _report(Path("04-projeto.ipynb"), row, _sem_minha_tarefa(solucao))
    texto = "\n".join(linhas)
    assert not ok and "Pronto para entregar" not in texto, texto
    assert any(linha.startswith("⏳ passo ainda não feito: my_task() ainda levanta NotImplementedError")
               for linha in linhas), texto
    assert linhas[-1].startswith("Ainda há o que resolver antes de entregar: 1 passo(s) ainda no esboço")
    assert "my_task()" in linhas[-1], linhas[-1]


def test_validar_nao_repete_o_passo_que_a_verificacao_ja_mostra():
    """O exercício não feito que uma verificação chama: o ⏳ é o da verificação (uma linha), e o resumo conta a
    verificação que não passa."""
    from correcao.validar import _report

    g = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
    aluno = json.loads((ROOT / "notebooks" / AULA1.relative_to(ROOT / "solutions")).read_text(encoding="utf-8"))
    row = Row("aluno", g.assignment, g.notebook, scores=dict.fromkeys(g.checks, 0.0), maximum=g.max_auto,
              status="zero")
    ok, linhas = _report(Path("03-exercicios.ipynb"), row, aluno)
    assert not ok and not any(linha.startswith("⏳ passo ainda não feito") for linha in linhas), linhas
    assert linhas[-1].startswith(f"Ainda há o que resolver antes de entregar: {len(g.checks)} de {len(g.checks)} "
                                 "verificação(ões) sem passar"), linhas[-1]


# ---------- de ponta a ponta, nas caixas (make test-lento) ----------
def _turma(pasta: Path, notebooks: dict) -> Path:
    for (aluno, nome), nb in notebooks.items():
        (pasta / aluno).mkdir(parents=True, exist_ok=True)
        (pasta / aluno / nome).write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return pasta


def _ana_correta() -> dict:
    """O notebook da aluna honesta da turma de exemplo (Aula 1, tudo certo, escrito por ela: a solução copiada iria
    para revisão)."""
    import zipfile

    with zipfile.ZipFile(ROOT / "tests" / "turma-exemplo.zip") as z:
        return json.loads(z.read("turma-exemplo/ana-correta/03-exercicios.ipynb"))


def _com_celula(nb: dict, codigo: str, depois_de: int = 1) -> dict:
    """``nb`` com uma célula de código do aluno (sem metadados do nbgrader) nova, depois da célula ``depois_de``."""
    nb = json.loads(json.dumps(nb))
    nb["cells"].insert(depois_de + 1, {"cell_type": "code", "execution_count": None, "metadata": {},
                                       "outputs": [], "source": codigo})
    return nb


@pytest.mark.lento
def test_validar_e_corrigir_concordam_com_uma_celula_mais_lenta_que_o_limite(tmp_path):
    """Uma célula de 7 s com o limite de 5 s: o validar não diz "Pronto" e dá a mesma situação e a mesma nota que o
    corrigir, com a mesma política (antes, o validar usava 60 s por célula e o corrigir 30: "Pronto" num e
    tempo_esgotado no outro)."""
    from correcao.validar import validate

    politica = GradingPolicy(cell_timeout=5)
    nb = _com_celula(_ana_correta(), "import time\ntime.sleep(7)")
    turma = _turma(tmp_path / "turma", {("ana", "03-exercicios.ipynb"): nb})
    # sem a prova do começo, como o validar: ela recusa limites perto do tempo da solução, e o teste é o limite em si
    (row,) = motor.grade_class(turma, tmp_path / "saida", politica, log=lambda *_: None, preflight_check=False)
    ok, linhas = validate(turma / "ana" / "03-exercicios.ipynb", politica)
    texto = "\n".join(linhas)
    assert row.status == "tempo_esgotado", (row.status, row.reasons)
    assert not ok and "tempo esgotado" in texto and "(tempo_esgotado)" in texto, texto
    passaram = int(linhas[0].split(": ")[1].split(" de ")[0])
    assert passaram == sum(1 for gid in row.scores if row.scores[gid] > 0), (linhas[0], row.scores)
    assert "a situação na correção seria" in linhas[-1], linhas[-1]


@pytest.mark.lento
def test_validar_de_ponta_a_ponta_nao_diz_pronto_com_a_minha_tarefa_no_esboco(tmp_path):
    from correcao.validar import validate

    nb = _sem_minha_tarefa(json.loads(AULA5_PROJETO.read_text(encoding="utf-8")))
    path = tmp_path / "04-projeto.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    ok, linhas = validate(path)
    texto = "\n".join(linhas)
    assert not ok and "1 de 1 verificação(ões) passando" in linhas[0], texto
    assert "my_task() ainda levanta NotImplementedError" in texto and "Pronto para entregar" not in texto, texto


@pytest.mark.lento
def test_copias_que_dormem_custam_o_orcamento_uma_vez_so(tmp_path, monkeypatch):
    """Uma aluna honesta e um aluno com 3 cópias que só dormem, com um orçamento de 8 s por notebook: cada cópia é
    corrigida uma vez (tempo_esgotado, com o motivo), e nunca de novo, sozinha, mesmo quando as medidas dizem que
    a máquina estava ocupada: o log avisa o professor (antes, cada cópia era corrigida de novo: 667 s com o
    orçamento de 180 s)."""
    monkeypatch.setattr(motor, "timed_out_by_machine", lambda row: row.status == "tempo_esgotado")  # "máquina ocupada"
    politica = GradingPolicy(notebook_timeout=8, workers=2)
    honesta = _ana_correta()
    dorme = _com_celula(honesta, "import time\ntime.sleep(10_000)")
    turma = _turma(tmp_path / "turma", {("ana", "03-exercicios.ipynb"): honesta,
                                        **{("zeca", f"03-exercicios{sufixo}.ipynb"): dorme
                                           for sufixo in ("", " (1)", " (2)")}})
    log: list[str] = []
    t0 = time.monotonic()
    # sem a prova do começo: um orçamento de 8 s fica perto do tempo da solução, e o teste é o orçamento em si
    rows = motor.grade_class(turma, tmp_path / "saida", politica, log=log.append, preflight_check=False)
    total = time.monotonic() - t0
    corrigidas = [linha for linha in log if re.fullmatch(r"  \S+ · .+: \S+/\S+ \S+ \([\d.]+ s\)", linha)]
    assert len(corrigidas) == 4 and not any("de novo" in linha for linha in log), log  # cada uma, uma vez
    zeca = [r for r in rows if r.student == "zeca"]
    assert len(zeca) == 3 and all(r.status == "tempo_esgotado" for r in zeca), zeca
    for r in zeca:
        assert any(m.startswith("tempo esgotado em") for m in r.reasons), r.reasons
        assert sum(f"zeca · 03-exercicios ({r.arquivo}): tempo esgotado com a máquina ocupada" in linha
                   and "não foi recorrigida" in linha for linha in log) == 1, log
    limite = politica.notebook_timeout + motor.BUDGET_MARGIN_S
    segundos = [float(linha.rsplit("(", 1)[1].split()[0]) for linha in corrigidas]
    assert max(segundos) <= limite + 2, log
    # 4 notebooks em 2 processos: duas rodadas de no máximo um orçamento cada, mais a subida (a sonda da caixa)
    assert total <= 2 * limite + 90, (total, log)


def test_processo_substituido_encerra_so_as_proprias_caixas(tmp_path, monkeypatch):
    """Um processo de correção encerrado (o que passou do orçamento, por exemplo) leva as três caixas dele, e
    nenhuma de outro processo que ainda corrige (antes, o processo 1 encerrava o verificador do processo 0: a
    entrega honesta corrigida ao lado de uma que dorme perdia os pontos)."""
    mortas: list[str] = []
    monkeypatch.setattr(pool, "kill_sandbox", mortas.append)
    monkeypatch.setattr(pool, "remove_cgroups", lambda prefixo: None)

    class Processo:
        def is_alive(self):
            return False

        def join(self, *_):
            return None

    class Conexao:
        def close(self):
            return None

    processos = pool.GradingPool(tmp_path, DEFAULT, "m", lambda *_: None, mpl=tmp_path)
    caixas = {}
    for k in (0, 1):
        conn = Conexao()
        processos.estado[conn] = {"proc": Processo(), "k": k, "pronto": True, "tarefa": None, "t0": 0.0}
        processos.finish(conn)
        caixas[k] = set(mortas)
        mortas.clear()
        w = motor.Worker.boxes_only(tmp_path / f"w{k}", k, GradingPolicy(isolate=False), "m")
        assert caixas[k] == {w.kernel_box.marca, w.student_box.marca, w.verifier_box.marca}, caixas
    assert not caixas[0] & caixas[1]


def test_politica_e_imutavel():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.cell_timeout = 60  # type: ignore[misc]
