"""Os arquivos do hub (``hub/``) e a turma no hub (:mod:`correcao.hub`) sem subir um hub: quem vê o quê no
JupyterLab, a configuração lida como o JupyterHub a lê, o ``autograde`` recusado e as entregas coletadas sem os
arquivos do exchange. O hub de verdade, com usuários Unix, está em ``tests/hub`` (``make test-hub``)."""

import json
import os
import sys
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from correcao import hub

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import preparar_trabalho  # noqa: E402

ETC = ROOT / "hub" / "etc"


def _extensoes(comandos) -> dict:
    """{(tipo, nome): ligada?} dos comandos ``jupyter labextension|server extension enable|disable``."""
    out = {}
    for cmd in comandos:
        acao = "enable" if "enable" in cmd else "disable"
        assert (acao == "enable") != ("disable" in cmd)
        tipo = "lab" if "labextension" in cmd else "server"
        out[(tipo, cmd[-1])] = acao == "enable"
    return out


def test_fora_do_hub_a_interface_do_nbgrader_some_toda():
    ext = _extensoes(preparar_trabalho.nbgrader_commands(hub=False))
    assert ext[("lab", "@jupyter/nbgrader")] is False
    assert not any(ext.values())
    assert ("server", "nbgrader.server_extensions.assignment_list") in ext


def test_no_hub_o_aluno_ve_a_lista_de_tarefas_e_nao_o_formgrader():
    ext = _extensoes(preparar_trabalho.nbgrader_commands(hub=True))
    assert ext[("lab", "@jupyter/nbgrader")] is True
    for e in ("assignment_list", "course_list", "validate_assignment"):
        assert ext[("server", f"nbgrader.server_extensions.{e}")] is True, e
    assert ext[("server", "nbgrader.server_extensions.formgrader")] is False
    assert ext[("lab", "@jupyter/nbgrader:formgrader")] is False
    assert ext[("lab", "@jupyter/nbgrader:create-assignment")] is False
    assert ext.get(("lab", "@jupyter/nbgrader:assignment-list")) is not False


def test_a_configuracao_do_professor_liga_o_que_o_aluno_nao_tem():
    page = json.loads((ETC / "professor" / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    assert page["disabledExtensions"] == {p: False for p in preparar_trabalho.TEACHER_PLUGINS}
    servidor = json.loads((ETC / "professor" / "jupyter_server_config.json").read_text(encoding="utf-8"))
    assert servidor["ServerApp"]["jpserver_extensions"] == {"nbgrader.server_extensions.formgrader": True}
    assert not (ETC / "aluno" / "labconfig").exists()  # o aluno fica com o que o ambiente do hub liga


def _ler_config(path: Path, monkeypatch, **env) -> Config:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    c = Config()
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), {"get_config": lambda: c})  # noqa: S102
    return c


def test_jupyterhub_config(monkeypatch, tmp_path):
    c = _ler_config(ROOT / "hub" / "jupyterhub_config.py", monkeypatch, CURSO_HUB_VENV=str(tmp_path / "venv"),
                    CURSO_HUB_CURSO=str(tmp_path / "curso"), CURSO_HUB_ALUNOS="ana,bia", CURSO_HUB_PROFESSORES="prof",
                    CURSO_HUB_EXCHANGE="/srv/x", CURSO_HUB_LOCAL=str(tmp_path / "nao-existe.py"))
    assert c.JupyterHub.ip == "127.0.0.1"
    assert c.Authenticator.allowed_users == {"ana", "bia", "prof"} and c.Authenticator.admin_users == {"prof"}
    assert c.Spawner.cmd == [str(tmp_path / "venv" / "bin" / "jupyterhub-singleuser")]
    assert c.Spawner.default_url == "/lab/tree/curso/00-comece-aqui.ipynb"
    assert c.Spawner.environment["CURSO_HUB_EXCHANGE"] == "/srv/x"
    etc = tmp_path / "curso" / "hub" / "etc"
    for nome, esperado in (("ana", [etc / "aluno"]), ("prof", [etc / "professor", etc / "aluno"])):
        spawner = SimpleNamespace(user=SimpleNamespace(name=nome), environment={})
        c.Spawner.pre_spawn_hook(spawner)  # sem a pasta do curso: só as configurações
        assert spawner.environment["JUPYTER_CONFIG_PATH"].split(":") == [str(p) for p in esperado]


def test_nbgrader_do_aluno_e_do_professor(monkeypatch):
    aluno = _ler_config(ETC / "aluno" / "nbgrader_config.py", monkeypatch, CURSO_HUB_ID="c1",
                        CURSO_HUB_EXCHANGE="/srv/ex")
    assert aluno.CourseDirectory.course_id == "c1" and aluno.Exchange.root == "/srv/ex"
    assert aluno.Exchange.path_includes_course is True
    prof = _ler_config(ETC / "professor" / "nbgrader_config.py", monkeypatch)
    assert prof.Autograde.autograde_preprocessors == [hub.RefuseExecution]
    assert prof.Autograde.exporter_class is hub.RefuseAutogradeExporter


def test_autograde_recusado_aponta_o_comando_do_curso():
    with pytest.raises(RuntimeError, match="turma corrigir"):
        hub.RefuseExecution().preprocess({"cells": []}, {})


def test_entregas_coletadas_sem_os_arquivos_do_exchange(tmp_path):
    sub = tmp_path / "submitted" / "ana" / "aula-01-self-attention"
    sub.mkdir(parents=True)
    (sub / "03-exercicios.ipynb").write_text("{}", encoding="utf-8")
    (sub / "notas.txt").write_text("minhas notas", encoding="utf-8")
    (sub / "timestamp.txt").write_text("2026-03-01 12:00:00.000000 UTC\n", encoding="utf-8")
    (sub / "submission_secret.txt").write_text("segredo", encoding="utf-8")
    alunos = hub._entregas(tmp_path / "submitted", "aula-01-self-attention", tmp_path / "entregas")
    assert alunos["ana"]["timestamp"] == "2026-03-01 12:00:00.000000 UTC"
    copiados = sorted(p.name for p in (tmp_path / "entregas").rglob("*") if p.is_file())
    assert copiados == ["03-exercicios.ipynb", "notas.txt"]


def test_submitted_do_nbgrader_lido_direto_sem_os_arquivos_do_exchange(tmp_path):
    """``make corrigir ENTREGAS=submitted/``: o que o exchange põe em cada entrega é ignorado, não vira uma linha
    de ``nao-corrigidos.csv``."""
    from correcao.entregas import read_submissions

    sub = tmp_path / "submitted" / "ana" / "aula-01-self-attention"
    sub.mkdir(parents=True)
    for nome in ("03-exercicios.ipynb", "timestamp.txt", "submission_secret.txt", "rascunho.txt"):
        (sub / nome).write_text("{}", encoding="utf-8")
    lidas = read_submissions(tmp_path / "submitted", tmp_path / "tmp")
    assert sorted(a.caminho.split("/")[-1] for a in lidas.arquivos) == ["03-exercicios.ipynb", "rascunho.txt"]
    assert {a.aluno for a in lidas.arquivos} == {"ana"}


def test_maximo_da_tarefa_soma_automatico_e_escrito():
    from correcao.catalogo import catalog

    g = catalog()[("aula-01-self-attention", "03-exercicios")]
    escritas = [p for _, p, auto in g.cells.values() if not auto]
    assert escritas, "a Aula 1 tem respostas escritas que valem pontos"
    assert hub.assignment_max_points(g) == g.max_auto + sum(escritas) > g.max_auto


def test_aula_desconhecida_e_recusada(tmp_path):
    with pytest.raises(ValueError, match="AULA: esperada uma de"):
        hub.release(hub.HubCourse(tmp_path), "aula-9")
    with pytest.raises(ValueError, match="notebooks: esperados alguns de"):
        hub.release(hub.HubCourse(tmp_path), "aula-01-self-attention", ["99-nada"])


def test_retorno_com_maximo_e_atraso_e_os_arquivos_do_exchange(tmp_path):
    """A página que vai para o aluno diz o máximo da tarefa e o atraso, e vai para ``feedback/<aluno>/<aula>/``
    com o nome do notebook entregue e os dois arquivos com que o ``release_feedback`` acha o aluno. A página é feita
    de novo pela lacuna do quadro da correção (``$assignment_notes``), com a nota automática de 0 ao máximo das
    verificações, e nunca remendada: o que o notebook do aluno mostra fica na moldura dele."""
    from correcao.catalogo import catalog
    from correcao.relatorio import Row, format_number

    g = catalog()[("aula-01-self-attention", "03-exercicios")]
    saida, curso = tmp_path / "saida", tmp_path / "curso"
    (saida / "retorno" / "ana").mkdir(parents=True)
    entregue = tmp_path / "submitted" / "ana" / "aula-01-self-attention"
    entregue.mkdir(parents=True)
    (entregue / "timestamp.txt").write_text("2026-03-01 12:00:00 UTC", encoding="utf-8")
    (entregue / "submission_secret.txt").write_text("segredo", encoding="utf-8")
    r = Row("ana", g.assignment, g.notebook, total=4, maximum=hub.assignment_max_points(g),
            retorno="retorno/ana/p.html", arquivo="aula-01-self-attention/03-exercicios (1).ipynb",
            corpo='<p class="tarefa">Máximo da tarefa: 999 ponto(s)</p><p>Entregue com 9 h de atraso.</p>')
    hub._retorno(r, saida, curso, g.assignment, {"pasta": entregue}, 3725, hub.assignment_max_points(g), g)
    destino = curso / "feedback" / "ana" / g.assignment
    assert sorted(p.name for p in destino.iterdir()) == ["03-exercicios (1).html", "submission_secret.txt",
                                                         "timestamp.txt"]
    pagina = (destino / "03-exercicios (1).html").read_text(encoding="utf-8")
    assert f"Máximo da tarefa: {hub.assignment_max_points(g):g} ponto(s)" in pagina
    assert "Entregue com 1 h 02 min de atraso." in pagina
    assert pagina.index("Máximo da tarefa") < pagina.index("Nota automática")  # no quadro, antes da nota
    assert f"Nota automática: 4 de {format_number(g.max_auto)} ·" in pagina
    assert pagina == (saida / r.retorno).read_text(encoding="utf-8")
    hub._retorno(r, saida, tmp_path / "outro", g.assignment, {"pasta": entregue}, 0, hub.assignment_max_points(g), g)
    outra = (tmp_path / "outro" / "feedback" / "ana" / g.assignment / "03-exercicios (1).html").read_text("utf-8")
    quadro, moldura = outra.split('<section class="conteudo-do-aluno">')
    assert "atraso" not in quadro and quadro.count("Máximo da tarefa") == 1  # sem o atraso, e a lacuna uma vez só
    assert "Entregue com 9 h de atraso." in moldura  # o que o aluno escreveu fica na moldura dele


# --- A turma corrigida com o nbgrader de verdade (gradebook, exchange e Formgrader), sem a caixa -------------------

AULA, NB = "aula-01-self-attention", "03-exercicios"
PRAZO = "2026-03-10 23:59:00 -0300"  # = 2026-03-11 02:59 UTC


def _alembic_no_path(monkeypatch) -> None:
    """O ``Gradebook`` do nbgrader chama o ``alembic`` do PATH: o do ambiente destes testes."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture(scope="module")
def _aula_liberada(tmp_path_factory):
    """A Aula 1 (só ``03-exercicios``) liberada uma vez pelo nbgrader, com :data:`PRAZO`; cada teste a copia."""
    mp = pytest.MonkeyPatch()
    _alembic_no_path(mp)
    base = tmp_path_factory.mktemp("hub")
    (base / "exchange").mkdir()
    mensagens = []
    hub.release(hub.HubCourse(base / "curso", exchange=str(base / "exchange")), AULA, [NB], prazo=PRAZO,
                log=mensagens.append)
    yield base, mensagens
    mp.undo()


@pytest.fixture
def turma(_aula_liberada, tmp_path, monkeypatch):
    """Um curso do professor no nbgrader com a Aula 1 liberada, o exchange em ``tmp_path`` e a correção da caixa
    trocada por uma que dá todos os pontos das verificações (o que se testa aqui é o nbgrader em volta dela)."""
    import shutil

    from correcao.catalogo import catalog
    from correcao.relatorio import Row, write_outputs

    _alembic_no_path(monkeypatch)
    monkeypatch.delenv("CURSO_HUB_ALUNOS", raising=False)
    shutil.copytree(_aula_liberada[0], tmp_path / "t")

    def sem_caixa(entregas, saida, log=print, **kwargs):
        tudo = catalog()
        g = tudo[(AULA, NB)]
        rows = [Row(p.parts[-3], AULA, NB, scores={c: g.cells[c][1] for c in g.checks}, total=g.max_auto,
                    maximum=g.max_auto, arquivo=f"{AULA}/{NB}.ipynb")
                for p in sorted(Path(entregas).glob(f"*/{AULA}/{NB}.ipynb"))]
        write_outputs(rows, tudo, Path(saida))
        return rows

    monkeypatch.setattr("correcao.motor.grade_class", sem_caixa)
    return hub.HubCourse(tmp_path / "t" / "curso", exchange=str(tmp_path / "t" / "exchange"))


def _entregar(turma, aluno: str, timestamp: str, resposta: str = "") -> None:
    """Uma entrega no ``inbound`` do exchange como o ``nbgrader submit`` a deixa (pasta
    ``<aluno>+<aula>+<timestamp>+<aleatório>`` com ``timestamp.txt`` e ``submission_secret.txt``)."""
    nb = json.loads((ROOT / "notebooks" / "modulo-06" / AULA / f"{NB}.ipynb").read_text(encoding="utf-8"))
    for c in nb["cells"]:
        if resposta and c["metadata"].get("nbgrader", {}).get("grade_id") == "aula01-ex1-resposta":
            c["source"] = f"**Sua resposta:**\n\n{resposta}"
    pasta = Path(turma.exchange) / turma.curso_id / "inbound" / f"{aluno}+{AULA}+{timestamp}+x{aluno}"
    pasta.mkdir(parents=True)
    (pasta / f"{NB}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (pasta / "timestamp.txt").write_text(timestamp, encoding="utf-8")
    (pasta / "submission_secret.txt").write_text(f"segredo-{aluno}", encoding="utf-8")


def _turma_csv(turma) -> dict:
    import csv

    with open(Path(turma.pasta) / "correcao" / AULA / f"turma-{AULA}.csv", encoding="utf-8") as f:
        return {(ln["aluno"], ln["notebook"]): ln for ln in csv.DictReader(f)}


@pytest.mark.parametrize("antes, depois", [
    ("2026-03-11 01:59:00.000000 UTC", "2026-03-11 03:59:00.000000 UTC"),  # o padrão do exchange (UTC, %Z)
    ("2026-03-10 22:59:00.000000 -03", "2026-03-11 00:59:00.000000 -03"),  # Exchange.timezone America/Sao_Paulo
], ids=["utc", "sao-paulo"])
def test_atraso_pelo_prazo_com_fuso(turma, antes, depois):
    """Prazo ``23:59 -0300`` (02:59 UTC): uma entrega 1 h antes está no prazo, uma 1 h depois tem 1 h de atraso.
    O ``parse_utc`` do nbgrader guardava o prazo às 00:04 UTC (``-0300`` como segundos) e lia ``-03`` como
    3 segundos."""
    from nbgrader.api import Gradebook

    _entregar(turma, "ana", antes)
    _entregar(turma, "bia", depois)
    mensagens = []
    hub.grade(turma, AULA, log=mensagens.append)
    avisos = [m for m in mensagens if "não está em UTC" in m]  # o nbgrader lê "-03" como segundos: o professor sabe
    assert len(avisos) == (0 if antes.endswith("UTC") else 2)
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        assert gb.find_assignment(AULA).duedate == datetime(2026, 3, 11, 2, 59)
        assert gb.find_submission(AULA, "ana").timestamp == datetime(2026, 3, 11, 1, 59)
        assert gb.find_submission(AULA, "bia").timestamp == datetime(2026, 3, 11, 3, 59)
    linhas = _turma_csv(turma)
    assert linhas[("ana", NB)]["atraso_s"] == "0"
    assert linhas[("bia", NB)]["atraso_s"] == "3600"
    retorno = Path(turma.pasta) / "feedback" / "bia" / AULA / f"{NB}.html"
    assert "Entregue com 1 h 00 min de atraso." in retorno.read_text(encoding="utf-8")


def test_liberar_guarda_o_prazo_em_utc_e_o_mostra_nos_dois_fusos(_aula_liberada):
    from nbgrader.api import Gradebook

    base, mensagens = _aula_liberada
    turma = hub.HubCourse(base / "curso", exchange=str(base / "exchange"))
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        assert gb.find_assignment(AULA).duedate == datetime(2026, 3, 11, 2, 59)
    assert f"{AULA}: prazo 2026-03-10 23:59 (-03:00) = 2026-03-11 02:59 UTC" in mensagens


def test_liberar_com_prazo_invalido_para_antes_de_liberar(tmp_path, capsys):
    """Pelo ``turma liberar``: a mensagem nomeia ``--prazo``, o valor e os formatos aceitos, e nada é liberado
    (nem ``source/``, nem o gradebook, nem o exchange)."""
    import turma as turma_cli

    curso, exchange = tmp_path / "curso", tmp_path / "exchange"
    exchange.mkdir()
    codigo = turma_cli.main(["liberar", AULA, "--pasta", str(curso), "--exchange", str(exchange),
                             "--prazo", "2026-03-10 23:59"])
    erro = capsys.readouterr().err
    assert codigo == 2
    assert "--prazo: falta o fuso" in erro and "'2026-03-10 23:59'" in erro
    assert '"2026-03-10 23:59 America/Sao_Paulo"' in erro
    assert not curso.exists() and not any(exchange.iterdir())


def test_correcao_manual_no_formgrader(turma):
    """Depois de ``turma corrigir``, o Formgrader (*Manual Grading*) lista cada entrega: a API que ele chama
    (``get_notebook_submissions``) acha ``autograded/<aluno>/<aula>/<notebook>.ipynb``, e as respostas escritas
    estão lá como células de correção manual, marcadas para o professor corrigir."""
    import nbformat
    from nbgrader.api import Gradebook
    from nbgrader.utils import is_grade, is_solution

    _entregar(turma, "ana", "2026-03-11 01:59:00.000000 UTC", "A resposta escrita da Ana.")
    _entregar(turma, "bia", "2026-03-11 02:00:00.000000 UTC", "A resposta escrita da Bia.")
    hub.grade(turma, AULA, log=lambda *_: None)
    api = turma.api()
    listadas = api.get_notebook_submissions(AULA, NB)
    assert sorted(s["student"] for s in listadas) == ["ana", "bia"]
    assert all(s["index"] is not None and s["needs_manual_grade"] for s in listadas)
    assert {s["student"]: s["autograded"] for s in api.get_submissions(AULA)} == {"ana": True, "bia": True}
    from correcao.catalogo import catalog

    escritas = {n for n, (_, _, auto) in catalog()[(AULA, NB)].cells.items() if not auto}
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        for aluno in ("ana", "bia"):
            grades = {g.name: g for g in gb.find_submission_notebook(NB, AULA, aluno).grades}
            assert all(grades[n].needs_manual_grade and grades[n].auto_score is None for n in escritas)
            assert all(not grades[n].needs_manual_grade and grades[n].auto_score for n in set(grades) - escritas)
    for aluno, nome in (("ana", "Ana"), ("bia", "Bia")):
        pasta = Path(turma.pasta) / "autograded" / aluno / AULA
        assert (pasta / "timestamp.txt").is_file()
        nb = nbformat.read(pasta / f"{NB}.ipynb", as_version=4)
        manuais = {c.metadata.nbgrader.grade_id: c.source for c in nb.cells
                   if c.cell_type == "markdown" and is_grade(c) and is_solution(c)}
        assert set(manuais) == escritas
        assert f"A resposta escrita da {nome}." in manuais["aula01-ex1-resposta"]
    # a página da entrega, feita como o Formgrader a faz: a resposta e o campo de nota de cada resposta escrita
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    exportador = HTMLExporter(template_name="formgrade", extra_template_basedirs=[handlers.template_path])
    sub = listadas[0]
    pagina, _ = exportador.from_filename(
        str(Path(turma.pasta) / "autograded" / "ana" / AULA / f"{NB}.ipynb"),
        resources={"assignment_id": AULA, "notebook_id": NB, "submission_id": sub["id"], "index": 0, "total": 2,
                   "base_url": "", "student": "ana", "last_name": None, "first_name": None, "notebook_path": ""})
    assert "A resposta escrita da Ana." in pagina
    assert all(f'class="score tabbable" id="{n}"' in pagina for n in escritas)


def test_autograde_do_formgrader_recusado_com_a_configuracao_do_professor(turma, tmp_path):
    """A configuração do professor lida como o nbgrader a lê: o autograde da API (o botão do Formgrader) falha
    com a mensagem que aponta ``turma corrigir``, sem apagar o que ``turma corrigir`` deixou para a correção
    manual. Antes, o ``RefuseExecution`` desligado deixava o autograde "dar certo" sem rodar nada."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    _entregar(turma, "ana", "2026-03-11 01:59:00.000000 UTC", "A resposta escrita da Ana.")
    hub.grade(turma, AULA, log=lambda *_: None)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ETC / "professor")).load_config()
    config.CourseDirectory.root = str(Path(turma.pasta).resolve())
    config.CourseDirectory.course_id = turma.curso_id
    config.Exchange.root = turma.exchange
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    resultado = api.autograde(AULA, "ana")
    assert resultado["success"] is False
    assert hub.AUTOGRADE_RECUSADO in resultado["error"] + resultado.get("log", "")
    assert (Path(turma.pasta) / "autograded" / "ana" / AULA / f"{NB}.ipynb").is_file()
    assert [s["student"] for s in api.get_notebook_submissions(AULA, NB)] == ["ana"]


def test_refuse_execution_ligada_por_padrao():
    """Registrada por classe, como o nbgrader faz, ela roda (``enabled``) e recusa; desligada, o nbconvert a pulava."""
    import nbformat
    from nbconvert.exporters import NotebookExporter

    exportador = NotebookExporter()
    exportador.register_preprocessor(hub.RefuseExecution)
    with pytest.raises(RuntimeError, match="turma corrigir"):
        exportador.from_notebook_node(nbformat.v4.new_notebook())


def test_quem_nao_entregou_aparece_com_zero(turma, monkeypatch):
    """Os alunos do gradebook e os do hub (``CURSO_HUB_ALUNOS``) que não entregaram entram em ``turma-<aula>.csv``
    com 0 e "sem entrega"."""
    from nbgrader.api import Gradebook

    monkeypatch.setenv("CURSO_HUB_ALUNOS", "ana, davi,")
    with Gradebook(turma.db_url, turma.curso_id) as gb:
        gb.update_or_create_student("caio")
    _entregar(turma, "ana", "2026-03-11 01:59:00.000000 UTC")
    hub.grade(turma, AULA, log=lambda *_: None)
    linhas = _turma_csv(turma)
    assert sorted(linhas) == [("ana", NB), ("caio", NB), ("davi", NB)]
    maximo = hub.assignment_max_points(__import__("correcao.catalogo").catalogo.catalog()[(AULA, NB)])
    for aluno in ("caio", "davi"):
        ln = linhas[(aluno, NB)]
        assert (ln["total_automatico"], ln["situacao"], ln["entregue_em"]) == ("0", "sem entrega", "")
        assert float(ln["maximo"]) == maximo
    assert linhas[("ana", NB)]["situacao"] != "sem entrega"


def test_sem_nenhuma_entrega_a_turma_toda_sem_entrega(turma, monkeypatch):
    monkeypatch.setenv("CURSO_HUB_ALUNOS", "ana,bia")
    assert hub.grade(turma, AULA, log=lambda *_: None) == []
    assert {k: v["situacao"] for k, v in _turma_csv(turma).items()} == {("ana", NB): "sem entrega",
                                                                         ("bia", NB): "sem entrega"}


def test_notebook_ilegivel_fica_fora_do_formgrader_com_aviso(turma):
    """Um notebook entregue que não se lê não para a turma: o aviso diz quem, e as outras entregas vão para o
    Formgrader."""
    _entregar(turma, "ana", "2026-03-11 01:59:00.000000 UTC")
    _entregar(turma, "bia", "2026-03-11 01:59:00.000000 UTC")
    inbound = next((Path(turma.exchange) / turma.curso_id / "inbound").glob("bia+*"))
    (inbound / f"{NB}.ipynb").write_text("isto não é um notebook", encoding="utf-8")
    mensagens = []
    hub.grade(turma, AULA, log=mensagens.append)
    assert any(m.startswith(f"aviso: bia: {NB} não foi para a correção manual do Formgrader") for m in mensagens)
    assert [s["student"] for s in turma.api().get_notebook_submissions(AULA, NB)] == ["ana"]
    assert set(_turma_csv(turma)) == {("ana", NB), ("bia", NB)}


def test_corrigir_aula_nao_liberada(turma):
    with pytest.raises(ValueError, match=r"não está no gradebook .* \(libere-a antes com `turma liberar aula-02"):
        hub.grade(turma, "aula-02-auto-atencao-do-zero", log=lambda *_: None)
