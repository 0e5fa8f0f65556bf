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
    linhas = list(csv.reader(io.StringIO(destino.read_text(encoding="utf-8-sig"))))
    assert destino.read_bytes().startswith(b"\xef\xbb\xbfIdentificador,")  # o BOM que veio fica; o Moodle o tira
    assert linhas[0][0] == "Identificador" and linhas[0][-1] == "Comentários de feedback" and len(linhas) == 3
    assert linhas[1][4] == "75"  # 7,5 de 10 na escala de 100 da tarefa
    assert linhas[2][4] == "0"  # na planilha e sem nada no download: 0 (veja o teste de quem não entregou)
    assert linhas[1][:4] + linhas[1][5:-1] == ["Participante101", "Ana Júlia Souza", "ana@x", "Enviado", "100,00",
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


# ---------- a turma de verdade: respostas escritas, planilhas do Excel, download sem pastas, reimportação ----------
AULA3 = catalogo.catalog()[("aula-03-atencao-num-transformer-real", "03-exercicios")]


def _strtotime(valor: str):
    """O que o strtotime do PHP, no importador do Moodle, lê das datas que a correção escreve: ISO 8601 e a data do
    Moodle em inglês; ``None`` (o ``false`` do PHP) para o resto, como a data em pt-BR e o ``-``."""
    for ler in (datetime.fromisoformat, lambda v: datetime.strptime(v, "%A, %d %B %Y, %I:%M %p")):
        try:
            return ler(valor.strip())
        except ValueError:
            pass
    return None


def _moodle_le(destino: Path, separador: str = ",") -> tuple[list, list]:
    """A planilha como o importador do Moodle a lê com a codificação UTF-8 e o ``separador`` escolhidos no
    formulário: o BOM é tirado antes (``core_text::trim_utf8_bom``); bytes que não são UTF-8 falham aqui."""
    texto = destino.read_bytes().decode("utf-8")
    texto = texto[1:] if texto.startswith("\ufeff") else texto
    linhas = list(csv.reader(io.StringIO(texto), delimiter=separador))
    return linhas[0], linhas[1:]


def test_respostas_escritas_ficam_fora_da_nota_e_o_comentario_diz(tmp_path):
    """Ana passa em todas as verificações e deixou as respostas escritas no esboço ✍️. Antes, a planilha dava a ela
    a nota máxima da tarefa sem uma palavra sobre as escritas (3 dos 7 pontos do notebook), e o guia não dizia como
    lançá-las. Agora a nota do Moodle é, às claras, só a parte automática: o máximo da planilha gerada é o das
    verificações, uma coluna dá os pontos das escritas, e o comentário de feedback (que o Moodle importa) diz que
    elas não estão na nota."""
    escritas = sum(p for _, p, auto in AULA1.cells.values() if not auto)
    assert escritas == 3 and AULA1.max_auto == 4
    pessoas = {"Ana_101": moodle.Participant("Ana", "101")}
    rows = [Row("Ana_101", AULA1.assignment, AULA1.notebook, total=AULA1.max_auto, maximum=AULA1.max_auto,
                reasons=["3 resposta(s) escrita(s) ainda com o esboço ✍️"])]
    cab, (ana,) = _moodle_le(moodle.write_worksheet(rows, pessoas, tmp_path / "gerada.csv", agora=AGORA))
    coluna = dict(zip(cab, ana))
    assert coluna["Nota"] == coluna["Nota máxima"] == "4"  # o máximo é o das verificações automáticas...
    assert coluna["Respostas escritas (fora desta nota)"] == "3"  # ...e as escritas, à parte
    comentario = coluna["Comentários de feedback"]
    assert "só a das verificações automáticas (4 de 4 pontos)" in comentario
    assert "respostas escritas (mais 3 pontos) não estão nela" in comentario
    # na planilha do professor, com a escala dela: a nota cheia da parte automática, dita como tal
    baixada = tmp_path / "Notas.csv"
    baixada.write_text("Identificador,Nome completo,Nota,Nota máxima,Última modificação (nota)\n"
                       "Participante101,Ana,,\"10,00\",-\n", encoding="utf-8")
    cab, (ana,) = _moodle_le(moodle.write_worksheet(rows, pessoas, tmp_path / "m.csv", planilha=baixada))
    assert cab[-1] == "Comentários de feedback" and ana[2] == "10"
    assert "mais 3 pontos" in ana[-1] and "não estão nela" in ana[-1]
    assert moodle.written_points(moodle.task_notebooks(rows, pessoas)) == escritas


PLANILHA_PT = [["Identificador", "Nome completo", "Endereço de email", "Status", "Nota", "Nota máxima",
                "Última modificação (nota)", "Comentários de feedback"],
               ["Participante101", "José da Conceição", "jose@x", "Enviado para avaliação", "", "10,00", "-", ""],
               ["Participante202", "Maria Conceição D'Ávila", "maria@x", "Enviado para avaliação", "", "10,00", "-",
                ""]]
PESSOAS_ACENTOS = {"José da Conceição_101": moodle.Participant("José da Conceição", "101"),
                   "Maria Conceição D'Ávila_202": moodle.Participant("Maria Conceição D'Ávila", "202")}
ROWS_ACENTOS = [Row("José da Conceição_101", AULA1.assignment, AULA1.notebook, total=3, maximum=4),
                Row("Maria Conceição D'Ávila_202", AULA1.assignment, AULA1.notebook, total=4, maximum=4)]


@pytest.mark.parametrize("codificacao, separador", [("cp1252", ";"), ("utf-8-sig", ";"), ("utf-8-sig", ","),
                                                    ("utf-8", ","), ("utf-16", "\t")])
def test_planilha_salva_pelo_excel_e_aceita(tmp_path, codificacao, separador):
    """O Excel em português salva a planilha do Moodle em Windows-1252 (ou UTF-8 com BOM, no "CSV UTF-8"; ou UTF-16
    com tabulações, no "Texto Unicode"), separada por ponto e vírgula. Antes: um erro de codec cru (Windows-1252)
    ou "esperadas as colunas" (ponto e vírgula). A preenchida sai em UTF-8 (o padrão do formulário do Moodle),
    separada como veio, com os nomes acentuados intactos."""
    baixada = tmp_path / "Notas.csv"
    buf = io.StringIO()
    csv.writer(buf, delimiter=separador).writerows(PLANILHA_PT)
    baixada.write_bytes(buf.getvalue().encode(codificacao))
    if codificacao == "cp1252":
        assert "José".encode("cp1252") in baixada.read_bytes()  # mesmo: o é num byte só, que não é UTF-8
        with pytest.raises(UnicodeDecodeError):
            baixada.read_bytes().decode("utf-8")
    linhas, col_id, col_nota, _ = moodle.check_worksheet(baixada)
    assert (linhas[1][1], col_id, col_nota) == ("José da Conceição", 0, 4)
    destino = moodle.write_worksheet(ROWS_ACENTOS, PESSOAS_ACENTOS, tmp_path / "moodle-notas.csv", planilha=baixada)
    assert destino.read_bytes().startswith(b"\xef\xbb\xbf") == (codificacao != "utf-8")  # o Excel lê os acentos
    cab, corpo = _moodle_le(destino, separador)
    assert cab == PLANILHA_PT[0]
    assert [(ln[1], ln[4]) for ln in corpo] == [("José da Conceição", "7,5"), ("Maria Conceição D'Ávila", "10")]
    assert moodle.upload_hint(tmp_path, baixada).count(
        {";": "“Ponto e vírgula”", ",": "“Vírgula”", "\t": "“Tabulação”"}[separador]) == 1


def test_planilha_que_nao_e_csv_e_recusada_com_o_que_fazer(tmp_path):
    """Bytes que não são texto em UTF-8 nem em Windows-1252, um .xlsx ou um arquivo vazio: uma mensagem em português
    que nomeia a planilha e o que fazer, e não um ``UnicodeDecodeError``."""
    casos = {"lixo.csv": (b"Identificador,Nota\nParticipante1,\x81\x8d\n", "não é texto"),
             "pasta.csv": (b"PK\x03\x04" + bytes(40), "Salvar como"),
             "vazia.csv": (b"\xef\xbb\xbf \n", "arquivo vazio")}
    for nome, (dados, esperado) in casos.items():
        (tmp_path / nome).write_bytes(dados)
        with pytest.raises(ValueError, match="^planilha: ") as erro:
            moodle.check_worksheet(tmp_path / nome)
        assert esperado in str(erro.value) and f"({nome})" in str(erro.value), str(erro.value)


def test_planilha_exportada_em_pt_br_volta_com_datas_que_o_moodle_le(tmp_path):
    """Corrigir de novo com a planilha que o Moodle exportou depois da primeira carga: a "Última modificação (nota)"
    vem no idioma do professor ("segunda-feira, 10 mar. 2026, 23:59"). O importador a lê com o strtotime do PHP,
    que não entende a data em pt-BR: ela vira 0, toda nota já dada parece mais nova que a planilha, e a nova nota
    é pulada sem erro. Antes, a data voltava como veio. Agora volta numa forma que o strtotime lê, com a mesma
    hora; as que ele já lia (e o "-" de quem não tem nota) ficam como estão."""
    datas = {"101": ("segunda-feira, 10 mar. 2026, 23:59", "2026-03-10 23:59"),
             "202": ("terça-feira, 3 de março de 2026, 08:05", "2026-03-03 08:05"),
             "303": ("10/03/2026 23:59", "2026-03-10 23:59"),  # a mesma, depois de salva pelo Excel em pt-BR
             "404": ("Tuesday, 10 March 2026, 11:59 PM", "Tuesday, 10 March 2026, 11:59 PM"),
             "505": ("-", "-")}
    baixada = tmp_path / "Notas.csv"
    baixada.write_text("\ufeffIdentificador,Nome completo,Nota,Nota máxima,Última modificação (nota)\n" + "".join(
        f"Participante{i},Aluno {i},\"5,00\",\"10,00\",\"{data}\"\n" for i, (data, _) in datas.items()),
        encoding="utf-8")
    pessoas = {f"Aluno {i}_{i}": moodle.Participant(f"Aluno {i}", i) for i in datas}
    rows = [Row(a, AULA1.assignment, AULA1.notebook, total=4, maximum=4) for a in pessoas]
    cab, corpo = _moodle_le(moodle.write_worksheet(rows, pessoas, tmp_path / "m.csv", planilha=baixada))
    i_mod = cab.index("Última modificação (nota)")
    assert {ln[0][len("Participante"):]: ln[i_mod] for ln in corpo} == {i: d for i, (_, d) in datas.items()}
    for ln in corpo:
        if ln[i_mod] != "-":
            assert _strtotime(ln[i_mod]).strftime("%d/%m %H:%M") in ("10/03 23:59", "03/03 08:05"), ln
    assert all(ln[2] == "10" for ln in corpo)
    assert moodle.moodle_time("sábado, 29 fev. 2025, 10:00") is None  # 29 de fevereiro num ano que não o tem
    # uma data que não é do Moodle: recusada antes da correção, com a linha e a coluna
    baixada.write_text("Identificador,Nota,Última modificação (nota)\nParticipante101,,ontem à noite\n",
                       encoding="utf-8")
    with pytest.raises(ValueError, match="“Última modificação \\(nota\\)” da linha 2 tem “ontem à noite”"):
        moodle.check_worksheet(baixada)


def test_quem_nao_entregou_fica_com_zero_e_o_motivo(tmp_path):
    """Um participante da planilha sem nada no download do Moodle tinha a nota vazia (o Moodle não a grava: o aluno
    continuava sem nota). Agora tem 0 e o motivo no comentário de feedback; quem entregou só o que não é notebook
    também. Uma nota que o professor já deu a quem não mandou nada pelo Moodle fica."""
    baixada = tmp_path / "Notas.csv"
    baixada.write_text(
        "Identificador,Nome completo,Status,Nota,Nota máxima,Última modificação (nota),Comentários de feedback\n"
        "Participante101,Ana Júlia Souza,Enviado,,\"10,00\",-,\n"
        "Participante303,Sem Entrega,Enviado,,\"10,00\",-,\n"
        "Participante999,Outra Pessoa,Nenhum envio,,\"10,00\",-,\n"
        "Participante998,Mandou por email,Nenhum envio,\"8,00\",\"10,00\",\"segunda-feira, 9 mar. 2026, 10:00\","
        "Nota do trabalho enviado por email\n", encoding="utf-8")
    cab, corpo = _moodle_le(moodle.write_worksheet(_rows(), PESSOAS, tmp_path / "m.csv", planilha=baixada))
    linha = {ln[0]: dict(zip(cab, ln)) for ln in corpo}
    assert linha["Participante999"]["Nota"] == "0"
    assert linha["Participante999"]["Comentários de feedback"] == moodle.NO_SUBMISSION_COMMENT
    assert "nenhum arquivo entregue" in moodle.NO_SUBMISSION_COMMENT
    assert linha["Participante303"]["Nota"] == "0"
    assert "nenhum notebook desta tarefa" in linha["Participante303"]["Comentários de feedback"]
    assert linha["Participante998"]["Nota"] == "8,00"
    assert linha["Participante998"]["Comentários de feedback"] == "Nota do trabalho enviado por email"
    assert linha["Participante101"]["Nota"] == "7,5"
    # numa nova correção, o comentário automático anterior é trocado; o do professor fica antes dele
    assert moodle._juntar_comentario(f"Muito bem!\n{moodle.NO_SUBMISSION_COMMENT}", "Correção automática: x") == (
        "Muito bem!\nCorreção automática: x")


def test_dois_arquivos_de_mesmo_nome_de_um_aluno_ficam_os_dois(tmp_path):
    """No download sem pastas, os arquivos de um aluno ficam todos no mesmo nível: dois ``03-exercicios.ipynb`` (o
    da Aula 1 e o da Aula 3, de pastas diferentes no envio, ou o zip refeito à mão) têm o mesmo nome. Antes, o
    segundo ia para um aluno ``entrada-1``, fora da planilha, e o aluno perdia o notebook. Agora os dois ficam na
    pasta dele; o mesmo com o mesmo arquivo em duas entradas."""
    nome = "Ana Júlia Souza_101_assignsubmission_file_03-exercicios.ipynb"
    zipado = tmp_path / "soltos.zip"
    with zipfile.ZipFile(zipado, "w") as z:
        z.writestr(nome, NB)
        with pytest.warns(UserWarning, match="Duplicate name"):
            z.writestr(nome, AULA3.source.read_bytes())
        z.writestr("João da Silva_202_assignsubmission_file_03-exercicios.ipynb", NB)
    outra = _zip(tmp_path / "outra.zip", {nome: NB})
    convertido, pessoas = moodle.convert([zipado, outra], tmp_path / "conv")
    lidas = entregas.read_submissions(convertido, tmp_path / "ler")
    assert {a.aluno for a in lidas.arquivos} == {"Ana Júlia Souza_101", "João da Silva_202"}
    da_ana = sorted(a.caminho for a in lidas.arquivos if a.aluno == "Ana Júlia Souza_101")
    assert da_ana == ["03-exercicios.ipynb", "copia-2/03-exercicios.ipynb", "copia-3/03-exercicios.ipynb"]
    conteudos = {a.dados.read_bytes() for a in lidas.arquivos if a.aluno == "Ana Júlia Souza_101"}
    assert conteudos == {NB, AULA3.source.read_bytes()}


@pytest.mark.lento
def test_segunda_correcao_com_a_planilha_do_excel_de_ponta_a_ponta(tmp_path):
    """Pelo comando do professor, a turma de verdade: o download sem pastas em que Ana tem dois
    ``03-exercicios.ipynb`` (o em branco primeiro; antes, o certo ia para um aluno ``entrada-1`` e ela ficava com a
    nota do em branco), todas as verificações certas e as respostas escritas no esboço ✍️; a planilha que o Moodle
    exportou depois da primeira carga (a data em pt-BR), salva pelo Excel (Windows-1252, ponto e vírgula), com uma
    aluna que não mandou nada."""
    import subprocess

    from correcao.catalogo import TEXT_STUB

    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo.gerar import a_mao

    certo = a_mao(json.loads(NB))
    for c in certo["cells"]:  # as escritas voltam ao esboço; o código fica certo
        if c["cell_type"] == "markdown" and c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            c["source"] = TEXT_STUB
    em_branco = (ROOT / "notebooks" / "modulo-06" / AULA1.assignment / "03-exercicios.ipynb").read_bytes()
    zipado = tmp_path / "moodle.zip"
    with zipfile.ZipFile(zipado, "w") as z, pytest.warns(UserWarning, match="Duplicate name"):
        z.writestr("José da Conceição_101_assignsubmission_file_03-exercicios.ipynb", em_branco)
        z.writestr("José da Conceição_101_assignsubmission_file_03-exercicios.ipynb", json.dumps(certo))
        z.writestr("Ana_202_assignsubmission_file_03-exercicios.ipynb", em_branco)
    planilha = tmp_path / "Notas.csv"
    planilha.write_bytes(
        "Identificador;Nome completo;Status;Nota;Nota máxima;Última modificação (nota);Comentários de feedback\r\n"
        "Participante101;José da Conceição;Enviado;1,00;10,00;segunda-feira, 9 mar. 2026, 10:00;\r\n"
        "Participante202;Ana;Enviado;;10,00;-;\r\n"
        "Participante303;Maria da Conceição;Nenhum envio;;10,00;-;\r\n".encode("cp1252"))
    saida = tmp_path / "saida"
    feito = subprocess.run([sys.executable, str(ROOT / "scripts" / "corrigir.py"), str(zipado), "--saida", str(saida),
                            "--tempo-celula", "20", "--planilha-moodle", str(planilha)],
                           capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert feito.returncode == 0, feito.stderr[-3000:]
    assert "separador “Ponto e vírgula”" in feito.stdout
    cab, corpo = _moodle_le(saida / "moodle-notas.csv", ";")
    linha = {ln[0]: dict(zip(cab, ln)) for ln in corpo}
    jose, ana, maria = linha["Participante101"], linha["Participante202"], linha["Participante303"]
    assert jose["Nome completo"] == "José da Conceição" and jose["Nota"] == "10"  # a melhor das duas cópias
    assert "mais 3 pontos" in jose["Comentários de feedback"]  # as escritas, fora da nota e ditas
    assert jose["Última modificação (nota)"] == "2026-03-09 10:00"
    assert float(ana["Nota"].replace(",", ".")) < 10 and ana["Última modificação (nota)"] == "-"
    assert (maria["Nota"], maria["Comentários de feedback"]) == ("0", moodle.NO_SUBMISSION_COMMENT)
    with open(saida / "notas.csv", encoding="utf-8") as f:
        assert {ln["aluno"] for ln in csv.DictReader(f)} == {"José da Conceição_101", "Ana_202"}


def test_planilha_de_outra_tarefa_e_recusada_antes_de_dar_zero_a_todos(tmp_path, monkeypatch):
    """Com o zero de quem não entregou, a planilha de outra tarefa (nenhum id do download nela) daria 0 à turma
    inteira: é recusada, e antes de corrigir."""
    from correcao import motor

    baixada = tmp_path / "Notas.csv"
    baixada.write_text("Identificador,Nota\nParticipante777,\nParticipante888,\n", encoding="utf-8")
    with pytest.raises(ValueError, match="nenhum participante do download do Moodle está nela"):
        moodle.write_worksheet(_rows(), PESSOAS, tmp_path / "m.csv", planilha=baixada)
    corrigidas = []
    monkeypatch.setattr(motor, "grade_class", lambda *a, **kw: corrigidas.append(a) or [])
    with pytest.raises(ValueError, match="outra tarefa"):
        moodle.grade_moodle([_moodle_soltos(tmp_path)], tmp_path / "saida", planilha=baixada, log=lambda *_: None)
    assert corrigidas == []


def test_um_ava_novo_e_uma_classe_so(tmp_path, monkeypatch):
    """Um AVA que não é o Moodle entra na correção com uma classe (:class:`correcao.lms.LMSExporter`): o mesmo
    :func:`correcao.lms.grade_with` converte o download, corrige (aqui, uma correção de mentira), guarda os
    participantes em ``parte.json`` numa parte e, na turma inteira, chama a exportação dele com as linhas."""
    from correcao import exporters, lms, motor
    from correcao.relatorio import Row

    class Planilha(lms.LMSExporter):
        name = "planilha"

        def detects(self, entrada):
            return (Path(entrada) / "alunos.txt").exists()

        def convert(self, entradas, destino):
            nomes = (Path(entradas[0]) / "alunos.txt").read_text(encoding="utf-8").split()
            for nome in nomes:
                (destino / nome).mkdir()
            return destino, {nome: k for k, nome in enumerate(nomes)}

        def to_attachment(self, participantes):
            return sorted(participantes.items())

        def from_attachment(self, dados):
            return dict(dados)

        def export(self, rows, participantes, saida, log=print):
            saida.mkdir(parents=True, exist_ok=True)
            (saida / "ava.txt").write_text("\n".join(f"{participantes[r.student]};{r.total:g}" for r in rows),
                                           encoding="utf-8")

    download = tmp_path / "download"
    download.mkdir()
    (download / "alunos.txt").write_text("ana bia", encoding="utf-8")
    chamadas = []

    def corrige(pasta, saida, log=print, **kw):
        chamadas.append(kw)
        return [Row(p.name, "aula", "nb", total=len(p.name)) for p in sorted(Path(pasta).iterdir())]

    monkeypatch.setattr(motor, "grade_class", corrige)
    assert exporters.exporter_for([download]) is None  # só o Moodle é conhecido: o download não é dele
    exportador = Planilha()
    assert exportador.detects(download)
    rows = lms.grade_with(exportador, [download], tmp_path / "saida", log=lambda *_: None)
    assert [r.student for r in rows] == ["ana", "bia"]
    assert (tmp_path / "saida" / "ava.txt").read_text(encoding="utf-8") == "0;3\n1;3"
    lms.grade_with(exportador, [download], tmp_path / "parte", log=lambda *_: None, parte=(1, 2))
    assert chamadas[-1]["anexo_parte"] == {"planilha": [("ana", 0), ("bia", 1)]}
    assert not (tmp_path / "parte" / "ava.txt").exists()  # numa parte, a exportação sai na junção


def test_o_comentario_diz_ponto_no_singular_abaixo_de_2():
    """"mais 1 pontos" no comentário que o aluno lê no Moodle: no português, o singular vai até antes de 2."""
    assert "(mais 1 ponto) não estão nela" in moodle._comentario(3.0, 4.0, ["ok"], 1.0)
    assert "(mais 1,5 ponto)" in moodle._comentario(3.0, 4.0, ["ok"], 1.5)
    assert "(mais 2 pontos)" in moodle._comentario(3.0, 4.0, ["ok"], 2.0)
    assert "(0 de 1 ponto)" in moodle._comentario(0.0, 1.0, ["zero"], 0.0)
