"""A ida e a volta pelo Moodle (:mod:`correcao.moodle`): o zip do "Baixar todas as tarefas" nos dois formatos, a
planilha do "Carregar planilha de notas" e o zip do "Enviar vários arquivos de retorno em um zip", lidos como o
Moodle os lê (o identificador sem o prefixo do idioma; o id de participante no segundo campo separado por ``_``)."""

import csv
import io
import json
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from correcao import catalogo, entregas, moodle
from correcao.relatorio import Row

ROOT = Path(__file__).resolve().parents[1]
AULA1 = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
NB = AULA1.source.read_bytes()
AGORA = datetime(2026, 3, 2, 13, 0, tzinfo=timezone.utc)


def _zip(path: Path, membros: dict) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for nome, dados in membros.items():
            z.writestr(nome, dados)
    return path


def _moodle_soltos(tmp_path):  # "Baixar envios em pastas" desligado (e Moodle < 3.1)
    return _zip(tmp_path / "Curso-Tarefa 1-123.zip", {
        "Ana Júlia Souza_101_assignsubmission_file_03-exercicios.ipynb": NB,
        "João da Silva_202_assignsubmission_file_03-exercicios (1).ipynb": NB,
        "João da Silva_202_assignsubmission_onlinetext_onlinetext.html": b"<p>oi</p>",
    })


def _moodle_pastas(tmp_path):  # uma pasta por aluno: com o "_" do fim (3.1 a 4.0) e sem ele (4.1 em diante)
    return _zip(tmp_path / "Curso-Tarefa 1-124.zip", {
        "Maria José D'Ávila_303_assignsubmission_file_/03-exercicios.ipynb": NB,
        "Zé  Ninguém_404_assignsubmission_file/aula 1/03-exercicios.ipynb": NB,
        "Zé  Ninguém_404_assignsubmission_file/leia-me.txt": b"feito",
        "__MACOSX/._x": b"",
    })


def test_participante_pelo_nome_do_moodle():
    assert moodle.parse_participant("Ana Júlia_42_assignsubmission_file_03-exercicios.ipynb") == (
        moodle.Participant("Ana Júlia", "42"), "03-exercicios.ipynb")
    ana = moodle.Participant("Ana Júlia", "42")
    assert moodle.parse_participant("Ana Júlia_42_assignsubmission_file") == (ana, None)
    assert moodle.parse_participant("Ana Júlia_42_assignsubmission_file_")[1] == ""
    # sem o id numérico ou sem o plugin de envio não é um nome do Moodle
    for nome in ("Ana_x_assignsubmission_file_a.ipynb", "ana/03-exercicios.ipynb", "Ana_42_outra_coisa.ipynb",
                 "03-exercicios.ipynb"):
        assert moodle.parse_participant(nome) is None, nome


@pytest.mark.parametrize("formato", ["soltos", "pastas"])
def test_zip_do_moodle_vira_um_aluno_por_participante(tmp_path, formato):
    zipado = _moodle_soltos(tmp_path) if formato == "soltos" else _moodle_pastas(tmp_path)
    assert moodle.is_moodle_download(zipado)
    convertido, pessoas = moodle.convert([zipado], tmp_path / "conv")
    lidas = entregas.read_submissions(convertido, tmp_path / "ler")
    mapa = {(a.aluno, a.caminho) for a in lidas.arquivos}
    if formato == "soltos":
        assert set(pessoas) == {"Ana Júlia Souza_101", "João da Silva_202"}
        assert mapa == {("Ana Júlia Souza_101", "03-exercicios.ipynb"),
                        ("João da Silva_202", "03-exercicios (1).ipynb"),
                        ("João da Silva_202", "onlinetext.html")}
    else:
        assert set(pessoas) == {"Maria José D'Ávila_303", "Zé  Ninguém_404"}
        assert pessoas["Zé  Ninguém_404"] == moodle.Participant("Zé  Ninguém", "404")
        assert mapa == {("Maria José D'Ávila_303", "03-exercicios.ipynb"),
                        ("Zé  Ninguém_404", "aula 1/03-exercicios.ipynb"),
                        ("Zé  Ninguém_404", "leia-me.txt")}


def test_turma_que_nao_e_do_moodle_nao_e_convertida(tmp_path):
    assert not moodle.is_moodle_download(_zip(tmp_path / "t.zip", {"ana/03-exercicios.ipynb": NB}))
    assert not moodle.is_moodle_download(tmp_path / "nao-existe.zip")
    # um aluno de uma turma comum que dá a um arquivo o nome de um envio do Moodle (antes, a turma inteira virava
    # um download do Moodle, e o comando caía)
    isca = "x_1_assignsubmission_file_notas.txt"
    assert not moodle.is_moodle_download(_zip(tmp_path / "t2.zip", {
        "ana/03-exercicios.ipynb": NB, "bob/03-exercicios.ipynb": NB, f"bob/{isca}": b"oi"}))
    assert not moodle.is_moodle_download(_zip(tmp_path / "t3.zip", {"bob/03-exercicios.ipynb": NB, f"bob/{isca}": b""}))
    pasta = tmp_path / "turma"
    (pasta / "bob" / "sub").mkdir(parents=True)
    (pasta / "ana").mkdir()
    (pasta / "ana" / "03-exercicios.ipynb").write_bytes(NB)
    (pasta / "bob" / "sub" / isca).write_bytes(b"")
    assert not moodle.is_moodle_download(pasta)


def test_download_do_moodle_com_uma_pasta_em_volta_e_reconhecido(tmp_path):
    membros = {f"Tarefa 1/{nome}": dados for nome, dados in {
        "Ana Júlia Souza_101_assignsubmission_file_03-exercicios.ipynb": NB,
        "João da Silva_202_assignsubmission_file_/03-exercicios.ipynb": NB}.items()}
    assert moodle.is_moodle_download(_zip(tmp_path / "embrulhado.zip", membros))
    assert moodle.is_moodle_download(_moodle_soltos(tmp_path)) and moodle.is_moodle_download(_moodle_pastas(tmp_path))


def test_mesmo_id_com_dois_nomes_e_recusado(tmp_path):
    a = _zip(tmp_path / "a.zip", {"Ana_1_assignsubmission_file_x.ipynb": NB})
    b = _zip(tmp_path / "b.zip", {"Bia_1_assignsubmission_file_x.ipynb": NB})
    with pytest.raises(ValueError, match="id de participante 1 aparece com dois nomes"):
        moodle.convert([a, b], tmp_path / "conv")


PESSOAS = {"Ana Júlia Souza_101": moodle.Participant("Ana Júlia Souza", "101"),
           "João da Silva_202": moodle.Participant("João da Silva", "202"),
           "Sem Entrega_303": moodle.Participant("Sem Entrega", "303")}


def _rows():
    return [Row("Ana Júlia Souza_101", AULA1.assignment, AULA1.notebook, total=7.5, maximum=10,
                retorno="retorno/Ana Júlia Souza_101/aula-01-self-attention-03-exercicios.html"),
            # duas cópias do mesmo notebook: vale a melhor, não a soma
            Row("João da Silva_202", AULA1.assignment, AULA1.notebook, total=4, maximum=10, status="parcial",
                retorno="retorno/João da Silva_202/aula-01-self-attention-03-exercicios.html"),
            Row("João da Silva_202", AULA1.assignment, AULA1.notebook, total=6, maximum=10, status="parcial",
                retorno="retorno/João da Silva_202/aula-01-self-attention-03-exercicios-copia-2.html"),
            Row("Sem Entrega_303", "", "", status="sem_notebooks")]


def _importar(caminho: Path, idioma: str) -> dict:
    """O que o importador da planilha do Moodle lê: as colunas pelo cabeçalho do idioma, o id depois do prefixo
    ``hiddenuser`` (cortado pelo tamanho dele, como o Moodle faz) e a nota com a vírgula do idioma."""
    c = moodle.WORKSHEET_HEADERS[idioma]
    linhas = list(csv.reader(io.StringIO(caminho.read_text(encoding="utf-8"))))
    cab = linhas[0]
    i_id, i_nota, i_mod = cab.index(c["id"]), cab.index(c["nota"]), cab.index(c["modificada"])
    out = {}
    for ln in linhas[1:]:
        assert ln[i_id].startswith(c["participante"])
        ident = ln[i_id][len(c["participante"]):]
        assert ident.isdigit(), ln[i_id]
        assert datetime.strptime(ln[i_mod], "%Y-%m-%dT%H:%M:%S%z") == AGORA
        out[ident] = float(ln[i_nota].replace(c["decimal"], "."))
    return out


@pytest.mark.parametrize("idioma", ["pt_br", "en"])
def test_planilha_de_notas_com_as_colunas_do_moodle(tmp_path, idioma):
    destino = moodle.write_worksheet(_rows(), PESSOAS, tmp_path / "moodle-notas.csv", idioma=idioma, agora=AGORA)
    cab = next(csv.reader(io.StringIO(destino.read_text(encoding="utf-8"))))
    if idioma == "pt_br":
        assert cab[0] == "Identificador" and "Nota" in cab and "Última modificação (nota)" in cab
        assert "Participante101" in destino.read_text(encoding="utf-8")
        assert ",5" in destino.read_text(encoding="utf-8")  # 7,5: a vírgula decimal do Moodle em pt-BR
    else:
        assert cab[0] == "Identifier" and "Grade" in cab and "Last modified (grade)" in cab
        assert "Participant 101" in destino.read_text(encoding="utf-8")
    assert _importar(destino, idioma) == {"101": 7.5, "202": 6.0, "303": 0.0}


def test_idioma_desconhecido_e_recusado(tmp_path):
    with pytest.raises(ValueError, match="idioma: esperado um de"):
        moodle.write_worksheet(_rows(), PESSOAS, tmp_path / "x.csv", idioma="pt-BR")


def test_planilha_baixada_do_moodle_preenchida_na_escala_dela(tmp_path):
    baixada = tmp_path / "Notas-Curso-Tarefa 1.csv"
    baixada.write_text(
        "\ufeffIdentificador,\"Nome completo\",\"Endereço de email\",Status,Nota,\"Nota máxima\","
        "\"A nota pode ser alterada\",\"Última modificação (envio)\",\"Última modificação (nota)\"\n"
        "Participante101,\"Ana Júlia Souza\",ana@x,Enviado,,\"100,00\",Sim,\"segunda-feira, 2 mar. 2026\",-\n"
        "Participante999,\"Outra Pessoa\",o@x,\"Nenhum envio\",,\"100,00\",Sim,-,-\n", encoding="utf-8")
    destino = moodle.write_worksheet(_rows(), PESSOAS, tmp_path / "moodle-notas.csv", planilha=baixada)
    linhas = list(csv.reader(io.StringIO(destino.read_text(encoding="utf-8"))))
    assert linhas[0][0] == "Identificador" and len(linhas) == 3
    assert linhas[1][4] == "75"  # 7,5 de 10 na escala de 100 da tarefa
    assert linhas[2][4] == ""  # quem não está na correção fica como estava
    assert linhas[1][:4] + linhas[1][5:] == ["Participante101", "Ana Júlia Souza", "ana@x", "Enviado", "100,00",
                                             "Sim", "segunda-feira, 2 mar. 2026", "-"]


def test_a_nota_maxima_e_a_da_tarefa_e_nao_a_do_que_o_aluno_escolheu_entregar(tmp_path):
    """Ana e Bia entregam os exercícios da Aula 5; Ana também o projeto (só ela); Caio, um notebook da Aula 1 (mais
    fácil). Antes, a escala de cada um era o máximo do que ele próprio entregou: os três tiravam 10. Depois, com a
    tarefa feita de tudo o que alguém entregou, o projeto extra da Ana baixava a nota da Bia. A tarefa é o que pelo
    menos metade entregou."""
    aula5 = "aula-05-treinando-a-atencao"
    pessoas = {f"{n}_{i}": moodle.Participant(n, str(i)) for n, i in (("Ana", 1001), ("Bia", 1002), ("Caio", 1003))}
    rows = [Row("Ana_1001", aula5, "03-exercicios", total=8, maximum=8),
            Row("Ana_1001", aula5, "04-projeto", total=0, maximum=1),
            Row("Bia_1002", aula5, "03-exercicios", total=8, maximum=8),
            Row("Caio_1003", AULA1.assignment, AULA1.notebook, total=4, maximum=4)]
    assert moodle.task_notebooks(rows, pessoas) == {(aula5, "03-exercicios"): 8}
    notas = moodle.scores_by_participant(rows, pessoas)
    assert {a: v[:2] for a, v in notas.items()} == {"Ana_1001": (8, 8), "Bia_1002": (8, 8), "Caio_1003": (0, 8)}
    baixada = tmp_path / "Notas.csv"
    baixada.write_text("Identificador,Nome completo,Nota,Nota máxima\n" + "".join(
        f"Participante{i},{n},,\"10,00\"\n" for n, i in (("Ana", 1001), ("Bia", 1002), ("Caio", 1003))),
        encoding="utf-8")
    linhas = list(csv.reader(io.StringIO(moodle.write_worksheet(rows, pessoas, tmp_path / "m.csv", planilha=baixada)
                                         .read_text(encoding="utf-8"))))
    assert [ln[2] for ln in linhas[1:]] == ["10", "10", "0"]
    # com o projeto entregue pela maioria, ele faz parte da tarefa, e quem não o entregou tem 0 nele
    rows.append(Row("Bia_1002", aula5, "04-projeto", total=1, maximum=1))
    notas = moodle.scores_by_participant(rows, pessoas)
    assert {a: v[:2] for a, v in notas.items()} == {"Ana_1001": (8, 9), "Bia_1002": (9, 9), "Caio_1003": (0, 9)}


def test_planilha_sem_as_colunas_do_moodle_e_recusada(tmp_path):
    ruim = tmp_path / "x.csv"
    ruim.write_text("aluno,nota\nana,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Identificador"):
        moodle.write_worksheet(_rows(), PESSOAS, tmp_path / "y.csv", planilha=ruim)


def test_zip_de_retornos_com_os_nomes_que_o_moodle_le(tmp_path):
    rows = _rows()
    for r in rows:
        if r.retorno:
            (tmp_path / r.retorno).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / r.retorno).write_text(f"<p>{r.total}</p>", encoding="utf-8")
    destino = moodle.write_feedback_zip(rows, PESSOAS, tmp_path, tmp_path / "moodle-retornos.zip")
    with zipfile.ZipFile(destino) as z:
        nomes = z.namelist()
        assert all(i.flag_bits & 0x800 for i in z.infolist())  # nomes em UTF-8, marcados
        assert z.read(nomes[0]).startswith(b"<p>")
    assert sorted(nomes) == [
        "Ana Júlia Souza_101_assignfeedback_file/aula-01-self-attention-03-exercicios.html",
        "João da Silva_202_assignfeedback_file/aula-01-self-attention-03-exercicios-copia-2.html",
        "João da Silva_202_assignfeedback_file/aula-01-self-attention-03-exercicios.html"]
    for nome in nomes:  # como o importador do Moodle: explode('_', 5) da primeira parte do caminho
        info = nome.split("/")[0].split("_", 4)
        assert info[1].isdigit() and info[1] in {p.id for p in PESSOAS.values()}
        assert (info[2], info[3]) == ("assignfeedback", "file")


@pytest.mark.lento
def test_corrigir_um_download_do_moodle_de_ponta_a_ponta(tmp_path):
    """Pelo comando do professor (``scripts/corrigir.py``, como o guia mostra), e não pela função: o comando já
    chamou o ``grade_moodle`` com os argumentos fora de lugar (um ``TypeError`` em qualquer download do Moodle)."""
    import subprocess

    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo.gerar import a_mao  # as respostas certas escritas de outra forma (não uma cópia)

    em_branco = (ROOT / "notebooks" / "modulo-06" / AULA1.assignment / "03-exercicios.ipynb").read_bytes()
    certo = json.dumps(a_mao(json.loads(NB))).encode()
    zipado = _zip(tmp_path / "moodle.zip", {  # um certo e um em branco (o notebook do aluno)
        "Ana Júlia Souza_101_assignsubmission_file_03-exercicios.ipynb": certo,
        "João da Silva_202_assignsubmission_file/03-exercicios.ipynb": em_branco,
    })
    saida = tmp_path / "saida"
    feito = subprocess.run([sys.executable, str(ROOT / "scripts" / "corrigir.py"), str(zipado), "--saida", str(saida),
                            "--tempo-celula", "20"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert feito.returncode == 0, feito.stderr[-3000:]
    with open(saida / "notas.csv", encoding="utf-8") as f:
        por_aluno = {ln["aluno"]: float(ln["total"].replace(",", ".")) for ln in csv.DictReader(f)}
    assert set(por_aluno) == {"Ana Júlia Souza_101", "João da Silva_202"}
    assert por_aluno["Ana Júlia Souza_101"] == AULA1.max_auto
    assert por_aluno["João da Silva_202"] < AULA1.max_auto
    notas = {}
    for ln in csv.DictReader(io.StringIO((saida / "moodle-notas.csv").read_text(encoding="utf-8"))):
        notas[ln["Identificador"]] = float(ln["Nota"].replace(",", "."))
    assert notas == {"Participante101": AULA1.max_auto, "Participante202": por_aluno["João da Silva_202"]}
    with zipfile.ZipFile(saida / "moodle-retornos.zip") as z:
        assert len(z.namelist()) == 2 and all("_assignfeedback_file/" in n for n in z.namelist())
