"""Os arquivos do hub (``hub/``) e a turma no hub (:mod:`correcao.hub`) sem subir um hub: quem vê o quê no
JupyterLab, a configuração lida como o JupyterHub a lê, o ``autograde`` recusado e as entregas coletadas sem os
arquivos do exchange. O hub de verdade, com usuários Unix, está em ``tests/hub`` (``make test-hub``)."""

import json
import sys
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
    com o nome do notebook entregue e os dois arquivos com que o ``release_feedback`` acha o aluno."""
    from correcao.catalogo import catalog
    from correcao.relatorio import Row

    g = catalog()[("aula-01-self-attention", "03-exercicios")]
    saida, curso = tmp_path / "saida", tmp_path / "curso"
    (saida / "retorno" / "ana").mkdir(parents=True)
    (saida / "retorno" / "ana" / "p.html").write_text('<body><div class="resumo">\n<p>nota</p></div>', "utf-8")
    entregue = tmp_path / "submitted" / "ana" / "aula-01-self-attention"
    entregue.mkdir(parents=True)
    (entregue / "timestamp.txt").write_text("2026-03-01 12:00:00 UTC", encoding="utf-8")
    (entregue / "submission_secret.txt").write_text("segredo", encoding="utf-8")
    r = Row("ana", g.assignment, g.notebook, total=4, maximum=5, retorno="retorno/ana/p.html",
            arquivo="aula-01-self-attention/03-exercicios (1).ipynb")
    hub._retorno(r, saida, curso, g.assignment, {"pasta": entregue}, 3725, hub.assignment_max_points(g), g)
    destino = curso / "feedback" / "ana" / g.assignment
    assert sorted(p.name for p in destino.iterdir()) == ["03-exercicios (1).html", "submission_secret.txt",
                                                         "timestamp.txt"]
    pagina = (destino / "03-exercicios (1).html").read_text(encoding="utf-8")
    assert f"Máximo da tarefa: {hub.assignment_max_points(g):g} ponto(s)" in pagina
    assert "Entregue com 1 h 02 min de atraso." in pagina
    assert pagina.index("Máximo da tarefa") < pagina.index("<p>nota</p>")  # no resumo, antes da nota
    hub._retorno(r, saida, tmp_path / "outro", g.assignment, {"pasta": entregue}, 0, 5, g)
    assert "atraso" not in (tmp_path / "outro" / "feedback" / "ana" / g.assignment / "03-exercicios (1).html"
                            ).read_text(encoding="utf-8")
