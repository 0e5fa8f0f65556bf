"""A ida e a volta pelo Moodle: o zip do "Baixar todas as tarefas" corrigido como chega, a planilha de notas e
o zip de retornos que o Moodle aceita de volta.

O Moodle (módulo Tarefa, ``mod/assign``) nomeia cada arquivo baixado com o nome completo do aluno (com ``_``
trocado por espaço), o *id de participante* da tarefa e o plugin de envio:

- arquivos soltos (Moodle < 3.1, ou "Baixar envios em pastas" desligado):
  ``Nome Completo_123456_assignsubmission_file_03-exercicios.ipynb``;
- uma pasta por aluno (o padrão desde o 3.1): ``Nome Completo_123456_assignsubmission_file_/03-exercicios.ipynb``
  (desde o 4.1, a pasta sem o ``_`` do fim: ``..._assignsubmission_file/``).

Aqui cada entrega vira ``Nome Completo_123456/<arquivo>`` (o aluno é o nome com o id, que distingue dois alunos
de mesmo nome) e a turma é corrigida por :func:`correcao.motor.grade_class`. Além de ``notas.csv``, saem:

- ``moodle-notas.csv``: a planilha do "Carregar planilha de notas" (*Upload grading worksheet*, do plugin de
  retorno "Planilha de notas off-line"): as colunas que o Moodle procura são o identificador
  (``Participante123456`` em pt-BR, ``Participant 123456`` em inglês), a nota e a última modificação da nota,
  com os cabeçalhos no idioma de quem vai carregar. Com ``planilha=`` (a planilha baixada do próprio Moodle
  em "Baixar planilha de notas", como veio ou salva pelo Excel), ela é preenchida como veio: mudam a nota, o
  comentário de feedback e a data da última modificação da nota que o importador do Moodle não leria. A nota é
  só a das verificações automáticas: as respostas escritas ficam fora dela, e o comentário diz isso;
- ``moodle-retornos.zip``: as páginas de retorno em ``Nome Completo_123456_assignfeedback_file/<página>.html``,
  o formato que o "Enviar vários arquivos de retorno em um zip" (*Upload multiple feedback files in a zip*,
  plugin "Arquivos de retorno") lê: o id de participante é o segundo campo separado por ``_``.

Fonte: a documentação do Moodle ("Assignment settings", "Using Assignment": *Download all submissions*,
*Upload grading worksheet*, *Upload multiple feedback files in a zip*).
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import shutil
import unicodedata
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from correcao.entregas import is_junk, path_parts, zip_member_name
from correcao.lms import LMSExporter
from correcao.saida import MOODLE_FEEDBACK_ZIP, MOODLE_WORKSHEET

# "Nome Completo_123456_assignsubmission_file" + ("_" + resto): o nome do Moodle não tem "_" (vira espaço)
SUBMISSION_PATTERN = re.compile(
    r"^(?P<nome>[^_]+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)(?:_(?P<resto>.*))?$", re.DOTALL)

# Os cabeçalhos que o importador da planilha procura, como o Moodle os escreve em cada idioma
# (strings ``recordid``, ``hiddenuser`` e ``lastmodifiedgrade`` de mod_assign e ``grade`` do núcleo).
WORKSHEET_HEADERS = {
    "pt_br": {"id": "Identificador", "participante": "Participante", "nome": "Nome completo", "nota": "Nota",
              "maximo": "Nota máxima", "modificada": "Última modificação (nota)", "decimal": ",",
              "comentarios": "Comentários de feedback", "escritas": "Respostas escritas (fora desta nota)"},
    "en": {"id": "Identifier", "participante": "Participant ", "nome": "Full name", "nota": "Grade",
           "maximo": "Maximum grade", "modificada": "Last modified (grade)", "decimal": ".",
           "comentarios": "Feedback comments", "escritas": "Written answers (not in this grade)"},
}
# ``comentarios``: o nome do plugin "Comentários de feedback" (``assignfeedback_comments``), a coluna que o
# importador grava no comentário de cada aluno quando o plugin está ligado na tarefa (e ignora quando não está);
# ``escritas``: uma coluna só para o professor ler (o importador ignora as colunas que não conhece).

# O início dos comentários escritos pela correção: numa nova correção, os dela são trocados, os do professor ficam.
AUTO_COMMENT = "Correção automática:"


@dataclass(frozen=True)
class Participant:
    """Um aluno do zip do Moodle: o nome completo como veio e o id de participante da tarefa."""

    nome: str
    id: str

    @property
    def aluno(self) -> str:
        """O nome do aluno na correção (pasta, ``notas.csv``): ``Nome Completo_123456``."""
        return f"{self.nome}_{self.id}"


def parse_participant(parte: str) -> tuple[Participant, str | None] | None:
    """O participante de um nome do Moodle e o que vem depois do plugin (``None``: é uma pasta do formato 4.1).

    >>> parse_participant("Ana Júlia_42_assignsubmission_file_03-exercicios.ipynb")
    (Participant(nome='Ana Júlia', id='42'), '03-exercicios.ipynb')
    """
    m = SUBMISSION_PATTERN.match(parte)
    if m is None:
        return None
    return Participant(m["nome"].strip(), m["id"]), m["resto"]


def _membros(entrada: Path):
    """(partes do caminho, abrir) de cada arquivo de um zip ou de uma pasta (atalhos e restos ficam de fora)."""
    if entrada.is_dir():
        for p in sorted(entrada.rglob("*")):
            if p.is_file() and not p.is_symlink():
                pp = path_parts(str(p.relative_to(entrada)))
                if pp and not is_junk(pp):
                    yield pp, (lambda p=p: open(p, "rb"))
        return
    with zipfile.ZipFile(entrada) as z:
        for info in z.infolist():
            if info.is_dir():
                continue
            pp = path_parts(zip_member_name(info))
            if pp and not is_junk(pp):
                yield pp, (lambda info=info: z.open(info))


def is_moodle_download(entrada: Path) -> bool:
    """``True`` se ``entrada`` (zip ou pasta) é um download do Moodle: algum arquivo tem, no primeiro nível (ou no
    segundo, quando tudo está dentro de uma pasta só), o nome que o Moodle dá aos envios. Mais fundo, não: numa
    turma comum, um aluno que dá esse nome a um arquivo da própria pasta não muda a correção da turma inteira (e
    a derrubava)."""
    try:
        caminhos = [pp for pp, _ in _membros(Path(entrada))]
    except (zipfile.BadZipFile, OSError):
        return False
    if any(parse_participant(pp[0]) for pp in caminhos):
        return True
    if len({pp[0] for pp in caminhos}) != 1:
        return False
    # tudo dentro de uma pasta só: o download do Moodle refeito num zip com uma pasta em volta, se a maioria dos
    # arquivos tem o nome do Moodle no segundo nível (a pasta de um aluno só, numa turma de um aluno, não conta)
    return 2 * sum(1 for pp in caminhos if len(pp) > 1 and parse_participant(pp[1])) > len(caminhos)


def convert(entradas: list[Path], destino: Path) -> tuple[Path, dict[str, Participant]]:
    """Reescreve as entregas do Moodle como ``<Nome Completo_id>/<arquivo>`` num zip novo em ``destino``.

    Arquivos que não têm o nome do Moodle ficam no caminho em que estavam (a correção aponta-os como fora da
    pasta de um aluno). O conteúdo é copiado sem ser lido: os limites de tamanho e os zips dos alunos são
    tratados depois, por :func:`correcao.entregas.read_submissions`.

    Returns
    -------
    (Path, dict)
        O zip novo e os participantes por nome de aluno (``"Nome Completo_123456"``).

    Raises
    ------
    ValueError
        Se o mesmo id de participante aparecer com dois nomes diferentes (zips de duas tarefas misturados?).
    """
    destino.mkdir(parents=True, exist_ok=True)
    saida = destino / "moodle-convertido.zip"
    pessoas: dict[str, Participant] = {}
    por_id: dict[str, Participant] = {}
    with zipfile.ZipFile(saida, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as novo:
        usados: set[str] = set()
        for k, entrada in enumerate(entradas):
            for pp, abrir in _membros(Path(entrada)):
                caminho = list(pp)
                for i, x in enumerate(pp):
                    achado = parse_participant(x)
                    if achado is None:
                        continue
                    quem, resto = achado
                    anterior = por_id.setdefault(quem.id, quem)
                    if anterior.nome != quem.nome:
                        raise ValueError(f"o id de participante {quem.id} aparece com dois nomes, “{anterior.nome}” "
                                         f"e “{quem.nome}”: as entregas são de tarefas diferentes? Corrija uma "
                                         "tarefa do Moodle por vez")
                    pessoas[quem.aluno] = quem
                    caminho = [quem.aluno] + ([resto] if resto else []) + list(pp[i + 1:])
                    break
                nome = "/".join(caminho)
                if nome in usados and caminho[0] in pessoas:
                    # dois arquivos de mesmo nome do mesmo participante (o download sem pastas, duas entradas ou
                    # o zip refeito à mão): os dois ficam na pasta dele, o segundo numa subpasta ``copia-N``
                    # (antes, o segundo ia para um "aluno" ``entrada-N`` fora da planilha e se perdia)
                    n = 2
                    while "/".join([caminho[0], f"copia-{n}"] + caminho[1:]) in usados:
                        n += 1
                    nome = "/".join([caminho[0], f"copia-{n}"] + caminho[1:])
                elif nome in usados:  # o mesmo arquivo em duas entradas: cada um na pasta da sua entrada
                    nome = "/".join((f"entrada-{k + 1}",) + tuple(caminho))
                usados.add(nome)
                with abrir() as origem, novo.open(nome, "w", force_zip64=True) as alvo:
                    shutil.copyfileobj(origem, alvo, 1 << 20)
    return saida, pessoas


def _numero(x: float, decimal: str) -> str:
    texto = f"{x:.2f}".rstrip("0").rstrip(".")
    return texto.replace(".", decimal)


def task_notebooks(rows, pessoas: dict[str, Participant]) -> dict[tuple[str, str], float]:
    """Os notebooks da tarefa do Moodle e o máximo de cada um: ``{(aula, notebook): máximo}``.

    A tarefa é feita dos notebooks que pelo menos metade dos participantes com algum notebook corrigível entregou.
    Um notebook entregue por poucos fica fora dela e vale 0 na planilha: o de outra aula (quem mandou a Aula 1 na
    tarefa da Aula 5 não ganha a nota máxima por entregar o mais fácil) e o extra da mesma aula (um aluno que
    manda também o projeto, numa tarefa só de exercícios, não baixa a nota dos outros)."""
    quem: dict[tuple[str, str], set] = {}
    maximos: dict[tuple[str, str], float] = {}
    for r in rows:
        if r.student in pessoas and r.assignment:
            chave = (r.assignment, r.notebook)
            quem.setdefault(chave, set()).add(r.student)
            maximos[chave] = max(maximos.get(chave, 0.0), r.maximum)
    com_notebook = len(set().union(*quem.values())) if quem else 0
    return {chave: maximos[chave] for chave in sorted(quem) if 2 * len(quem[chave]) >= com_notebook}


def scores_by_participant(rows, pessoas: dict[str, Participant]) -> dict[str, tuple[float, float, list]]:
    """Nota e máximo de cada participante na tarefa (:func:`task_notebooks`): a soma, por notebook da tarefa, da
    melhor cópia entregue (duas cópias do mesmo notebook não somam; o que não foi entregue vale 0). O máximo é o
    da tarefa, o mesmo para todos: quem não entregou um notebook não tem o máximo reduzido. Devolve
    ``{aluno: (total, máximo, situações)}``."""
    tarefa = task_notebooks(rows, pessoas)
    maximo = sum(tarefa.values())
    melhor: dict[str, dict[tuple[str, str], tuple[float, str]]] = {a: {} for a in pessoas}
    for r in rows:
        if r.student not in pessoas or (r.assignment, r.notebook) not in tarefa:
            continue
        chave = (r.assignment, r.notebook)
        atual = melhor[r.student].get(chave)
        if atual is None or r.total > atual[0]:
            melhor[r.student][chave] = (r.total, r.status)
    return {a: (sum(t for t, _ in v.values()), maximo, sorted({s for _, s in v.values()}) or ["sem_notebooks"])
            for a, v in melhor.items()}


def written_points(tarefa) -> float:
    """Os pontos das respostas escritas (corrigidas pelo professor) dos notebooks da tarefa (:func:`task_notebooks`),
    pelo catálogo do curso: a parte que a correção automática não dá e que fica fora da nota do Moodle."""
    from correcao import catalogo

    tudo = catalogo.catalog()
    return sum(sum(p for _, p, auto in tudo[chave].cells.values() if not auto) for chave in tarefa if chave in tudo)


def _pontos(x: float) -> str:
    """"ponto" ou "pontos": no português, o singular vai até antes de 2 (1 ponto, 1,5 ponto, 2 pontos)."""
    return "ponto" if abs(x) < 2 else "pontos"


def _comentario(total: float, maximo: float, situacoes: list, escritas: float) -> str:
    """O comentário de feedback de um participante corrigido: o que a nota é e o que ela não tem."""
    if maximo <= 0 or situacoes == ["sem_notebooks"]:
        return f"{AUTO_COMMENT} nenhum notebook desta tarefa foi entregue: nota 0."
    texto = (f"{AUTO_COMMENT} esta nota é só a das verificações automáticas ({_numero(total, ',')} de "
             f"{_numero(maximo, ',')} {_pontos(maximo)}).")
    if escritas > 0:
        texto += (f" As respostas escritas (mais {_numero(escritas, ',')} {_pontos(escritas)}) não estão nela: o "
                  "professor as corrige à parte.")
    return texto


NO_SUBMISSION_COMMENT = (f"{AUTO_COMMENT} nenhum arquivo entregue nesta tarefa (não veio no download do Moodle): "
                         "nota 0.")


def _juntar_comentario(atual: str, novo: str) -> str:
    """O comentário da planilha com ``novo`` no lugar do que uma correção anterior escreveu (as linhas que começam
    com :data:`AUTO_COMMENT`); o que o professor escreveu fica, antes."""
    dele = [ln for ln in atual.splitlines()
            if ln.strip() and not re.sub(r"<[^>]*>", "", ln).strip().startswith(AUTO_COMMENT)]
    return "\n".join(dele + [novo])


# A coluna "Última modificação (nota)": o importador do Moodle a lê com o strtotime do PHP e não grava a nota de
# quem tem no Moodle uma nota mais nova que ela (sem a opção "permitir atualizar registros modificados mais
# recentemente"). O Moodle a exporta no idioma do professor ("segunda-feira, 10 mar. 2026, 23:59"), que o
# strtotime não lê: a data vira 0 e toda nota já dada parece mais nova, e é pulada sem erro.
_MESES = {"jan": 1, "fev": 2, "mar": 3, "abr": 4, "mai": 5, "jun": 6, "jul": 7, "ago": 8, "set": 9, "out": 10,
          "nov": 11, "dez": 12}
_DATA_PT = re.compile(r"^(?:[^\d,]+,\s*)?(\d{1,2})\s+(?:de\s+)?([^\W\d_]+)\.?\s+(?:de\s+)?(\d{4}),?\s+(?:às\s+)?"
                      r"(\d{1,2}):(\d{2})(?::(\d{2}))?$", re.IGNORECASE)
_DATA_NUMERICA = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$")
_DATA_EN = "%A, %d %B %Y, %I:%M %p"  # o strftimedatetime do Moodle em inglês, que o strtotime lê


def moodle_time(valor: str) -> str | None:
    """O que escrever na coluna da última modificação da nota para o importador do Moodle ler ``valor``.

    ``""`` e ``"-"`` (sem nota no Moodle) e as datas que o strtotime lê (ISO 8601, a data do Moodle em inglês)
    ficam como estão; a data do Moodle em pt-BR (``"segunda-feira, 10 mar. 2026, 23:59"``) e a do Excel em
    pt-BR (``"10/03/2026 23:59"``, o dia primeiro) viram ``"2026-03-10 23:59"``, a mesma hora local, como o
    Moodle lê a data em inglês. Devolve ``None`` para uma data que não reconhece.

    >>> moodle_time("segunda-feira, 10 mar. 2026, 23:59")
    '2026-03-10 23:59'
    """
    v = " ".join(valor.split())
    if v in ("", "-"):
        return valor
    try:
        datetime.fromisoformat(v)
        return valor
    except ValueError:
        pass
    try:
        datetime.strptime(v, _DATA_EN)
        return valor
    except ValueError:
        pass
    m = _DATA_PT.match(v)
    if m:
        mes = _MESES.get(unicodedata.normalize("NFKD", m[2].lower()).encode("ascii", "ignore").decode()[:3])
        partes = (m[3], mes, m[1], m[4], m[5], m[6])
    else:
        m = _DATA_NUMERICA.match(v)
        if m is None:
            return None
        partes = (m[3], m[2], m[1], m[4] or 0, m[5] or 0, m[6])
    ano, mes, dia, hora, minuto, segundo = partes
    if mes is None:
        return None
    try:
        quando = datetime(int(ano), int(mes), int(dia), int(hora), int(minuto), int(segundo or 0))
    except ValueError:
        return None
    return quando.strftime("%Y-%m-%d %H:%M:%S" if segundo else "%Y-%m-%d %H:%M")


def write_worksheet(rows, pessoas: dict[str, Participant], destino: Path, idioma: str = "pt_br",
                      planilha: Path | None = None, agora: datetime | None = None, log=None) -> Path:
    """Escreve ``destino`` (``moodle-notas.csv``), a planilha do "Carregar planilha de notas" do Moodle.

    A nota é a das verificações automáticas, a soma dos pontos (:func:`scores_by_participant`): as respostas
    escritas, que o professor corrige, ficam fora dela (o professor as lança à parte no Moodle; veja o guia do
    professor). O comentário de feedback de cada participante diz isso, com os pontos das escritas
    (:func:`written_points`).

    Sem ``planilha``: uma linha por participante com as colunas que o importador do Moodle procura
    (identificador, nota, última modificação da nota), o comentário de feedback, o nome, a nota máxima (a das
    verificações automáticas: a da tarefa no Moodle deve ser esta) e os pontos das respostas escritas, com os
    cabeçalhos de ``idioma`` (``"pt_br"`` ou ``"en"``: o idioma do Moodle de quem vai carregar); em UTF-8,
    separada por vírgulas.
    Com ``planilha`` (a baixada do Moodle, como veio ou salva pelo Excel: veja :func:`check_worksheet`), ela é
    copiada como está, separada como veio e em UTF-8 (com a marca BOM, que o Moodle ignora, se veio com ela ou
    do Excel). Mudam: a nota dos participantes corrigidos, na escala da coluna da nota máxima dela quando há essa
    coluna; a nota vazia dos participantes sem nada no download, que vira 0; o comentário de feedback (a coluna
    é acrescentada se não houver); e a data da última modificação da nota que o Moodle não leria
    (:func:`moodle_time`). ``log`` (se dado) recebe quantos ficaram com 0 por não terem nada no download.

    Raises
    ------
    ValueError
        Se ``idioma`` não for um dos conhecidos, se ``planilha`` não for uma planilha do Moodle que dê para
        ler (veja :func:`check_worksheet`) ou se nenhum participante corrigido estiver nela (outra tarefa).
    """
    if idioma not in WORKSHEET_HEADERS:
        raise ValueError(f"idioma: esperado um de {sorted(WORKSHEET_HEADERS)}, recebido {idioma!r}")
    notas = scores_by_participant(rows, pessoas)
    escritas = written_points(task_notebooks(rows, pessoas))
    por_id = {pessoas[a].id: v for a, v in notas.items()}
    quando = (agora or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S%z")
    if planilha is not None:
        return _preencher(Path(planilha), por_id, destino, escritas, quando, log=log)
    c = WORKSHEET_HEADERS[idioma]
    from correcao.relatorio import spreadsheet_cell  # nenhuma célula vira fórmula (um participante "=2+3")

    with open(destino, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([c["id"], c["nome"], c["nota"], c["maximo"], c["escritas"], c["modificada"], c["comentarios"]])
        for aluno in sorted(notas, key=lambda a: (pessoas[a].nome, int(pessoas[a].id))):
            total, maximo, situacoes = notas[aluno]
            w.writerow([spreadsheet_cell(x) for x in (
                f"{c['participante']}{pessoas[aluno].id}", pessoas[aluno].nome, _numero(total, c["decimal"]),
                _numero(maximo, c["decimal"]), _numero(escritas, c["decimal"]), quando,
                _comentario(total, maximo, situacoes, escritas))])
    return destino


def _coluna(cabecalho: list[str], chave: str) -> int | None:
    nomes = {WORKSHEET_HEADERS[i][chave].strip().lower() for i in WORKSHEET_HEADERS}
    return next((k for k, h in enumerate(cabecalho) if h.strip().lower() in nomes), None)


@dataclass
class Worksheet:
    """A planilha do Moodle lida: as linhas, o separador e se o arquivo veio com a marca BOM ou do Excel."""

    linhas: list
    delimitador: str
    codificacao: str  # a do arquivo lido: "utf-8", "utf-8-sig", "utf-16" ou "cp1252"

    @property
    def com_bom(self) -> bool:
        """Se a planilha preenchida sai com a marca BOM do UTF-8: a que veio com ela ou de outra codificação
        (o Excel só lê os acentos de um CSV em UTF-8 com ela; o Moodle a ignora)."""
        return self.codificacao != "utf-8"


SEPARATOR_NAMES = {",": "Vírgula", ";": "Ponto e vírgula", "\t": "Tabulação", ":": "Dois pontos"}


def read_worksheet(planilha: Path) -> Worksheet:  # noqa: C901 — cada codificação e separador que o Excel grava
    """Lê a planilha baixada do Moodle como veio (UTF-8, separada por vírgulas) ou como o Excel em português a
    salva (Windows-1252 ou UTF-8 com BOM, separada por ponto e vírgula; ou "Texto Unicode", UTF-16 com
    tabulações). O separador é o do :class:`csv.Sniffer`, conferido pelas colunas do Moodle no cabeçalho.

    Raises
    ------
    FileNotFoundError
        ``planilha`` não existe.
    ValueError
        Arquivo vazio, que não é um CSV (um ``.xlsx``, bytes que não são texto) ou sem as colunas do
        identificador e da nota.
    """
    planilha = Path(planilha)
    if not planilha.is_file():
        raise FileNotFoundError(f"planilha não encontrada: {planilha}")
    dados = planilha.read_bytes()
    if dados.startswith(b"PK\x03\x04"):
        raise ValueError(f"planilha: esperado um CSV, recebida uma pasta de trabalho do Excel ({planilha.name}): "
                         "no Excel, “Salvar como” → “CSV UTF-8 (delimitado por vírgulas)”")
    if dados.startswith(codecs.BOM_UTF8):
        codificacao = "utf-8-sig"
    elif dados.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        codificacao = "utf-16"
    else:
        try:
            dados.decode("utf-8")
            codificacao = "utf-8"
        except UnicodeDecodeError:
            codificacao = "cp1252"  # o "CSV (separado por vírgulas)" do Excel em português, no Windows
    try:
        texto = dados.decode(codificacao)
    except UnicodeDecodeError as exc:
        raise ValueError(f"planilha: esperado um CSV em UTF-8 (o do Moodle) ou em Windows-1252 (o do Excel), "
                         f"recebido um arquivo com o byte {dados[exc.start]:#04x} na posição {exc.start}, que não é "
                         f"texto em nenhuma das duas ({planilha.name}): salve-o de novo como “CSV UTF-8”") from None
    if not texto.strip():
        raise ValueError(f"planilha: esperado o CSV baixado do Moodle, recebido um arquivo vazio ({planilha.name})")
    if "\x00" in texto:
        raise ValueError(f"planilha: esperado um CSV (texto), recebido um arquivo binário ({planilha.name})")
    candidatos = []
    try:
        candidatos.append(csv.Sniffer().sniff(texto[:65536], delimiters=",;\t").delimiter)
    except csv.Error:  # o Sniffer não decidiu: os separadores comuns, um a um
        pass
    candidatos += [d for d in ",;\t" if d not in candidatos]
    primeiro = None
    for d in candidatos:
        linhas = list(csv.reader(io.StringIO(texto), delimiter=d))
        primeiro = primeiro or linhas[0]
        if _coluna(linhas[0], "id") is not None and _coluna(linhas[0], "nota") is not None:
            return Worksheet(linhas, d, codificacao)
    raise ValueError(f"planilha: esperadas as colunas “Identificador”/“Identifier” e “Nota”/“Grade” da "
                     f"planilha do Moodle, recebidas {primeiro}")


def check_worksheet(planilha: Path) -> tuple[list, int, int, int | None]:
    """Lê a planilha baixada do Moodle (:func:`read_worksheet`) e confere as colunas e as datas da última
    modificação da nota (:func:`moodle_time`); devolve ``(linhas, coluna do id, da nota, do máximo)``.

    Raises
    ------
    FileNotFoundError
        ``planilha`` não existe.
    ValueError
        Veja :func:`read_worksheet`; ou uma data da última modificação da nota que não é a do Moodle.
    """
    linhas = read_worksheet(planilha).linhas
    _check_dates(linhas, Path(planilha).name)
    cab = linhas[0]
    return linhas, _coluna(cab, "id"), _coluna(cab, "nota"), _coluna(cab, "maximo")


def _check_dates(linhas: list, nome: str) -> None:
    cab = linhas[0]
    col_mod = _coluna(cab, "modificada")
    if col_mod is not None:
        for n, ln in enumerate(linhas[1:], start=2):
            if len(ln) > col_mod and moodle_time(ln[col_mod]) is None:
                raise ValueError(f"planilha: a coluna “{cab[col_mod]}” da linha {n} tem “{ln[col_mod]}”, esperada "
                                 "uma data como o Moodle a escreve (“segunda-feira, 10 mar. 2026, 23:59”, "
                                 f"“10/03/2026 23:59” ou “-”): baixe a planilha de novo do Moodle ({nome})")


def check_same_task(linhas: list, ids: set[str], nome: str) -> None:
    """Recusa a planilha em que nenhum dos ``ids`` (os participantes do download) está: sem isto, a turma inteira
    dela ficaria com 0 (os que não mandaram nada).

    Raises
    ------
    ValueError
        Nenhum participante do download na planilha.
    """
    col_id = _coluna(linhas[0], "id")
    nela = {m[1] for ln in linhas[1:] if len(ln) > col_id and (m := re.search(r"(\d+)\s*$", ln[col_id]))}
    if not nela & ids:
        raise ValueError(f"planilha: nenhum participante do download do Moodle está nela ({nome}): é a planilha de "
                         "outra tarefa (ou de outro grupo)? Baixe as duas da mesma tarefa, com o mesmo grupo "
                         "selecionado")


def _preencher(planilha: Path, por_id: dict, destino: Path, escritas: float, quando: str, log=None) -> Path:
    lida = read_worksheet(planilha)
    linhas = lida.linhas
    _check_dates(linhas, planilha.name)
    cab = linhas[0]
    col_id, col_nota, col_max = _coluna(cab, "id"), _coluna(cab, "nota"), _coluna(cab, "maximo")
    check_same_task(linhas, set(por_id), planilha.name)
    c = WORKSHEET_HEADERS["pt_br" if cab[col_id].strip().lower() == "identificador" else "en"]
    col_mod, col_com = _coluna(cab, "modificada"), _coluna(cab, "comentarios")
    sem_data = col_mod is None
    if sem_data:  # o importador do Moodle recusa a planilha sem ela: a hora desta correção
        cab.append(c["modificada"])
        col_mod = len(cab) - 1
    if col_com is None:  # ignorada pelo Moodle se o plugin "Comentários de feedback" estiver desligado
        cab.append(c["comentarios"])
        col_com = len(cab) - 1
    decimal = "," if any("," in (ln[col_max] if col_max is not None and len(ln) > col_max else "")
                         for ln in linhas[1:]) else "."
    sem_envio = 0
    for ln in linhas[1:]:
        m = re.search(r"(\d+)\s*$", ln[col_id]) if len(ln) > col_id else None
        if m is None:
            continue
        ln.extend([""] * (len(cab) - len(ln)))
        ln[col_mod] = quando if sem_data else moodle_time(ln[col_mod])
        if m[1] not in por_id:  # na planilha e sem nada no download: 0, se o Moodle ainda não tem nota
            if not ln[col_nota].strip():
                ln[col_nota] = "0"
                ln[col_com] = _juntar_comentario(ln[col_com], NO_SUBMISSION_COMMENT)
                sem_envio += 1
            continue
        total, maximo, situacoes = por_id[m[1]]
        escala = 1.0
        if col_max is not None and maximo > 0:
            try:
                escala = float(ln[col_max].replace(",", ".")) / maximo
            except ValueError:
                escala = 1.0
        ln[col_nota] = _numero(total * escala, decimal)
        ln[col_com] = _juntar_comentario(ln[col_com], _comentario(total, maximo, situacoes, escritas))
    from correcao.relatorio import spreadsheet_cell  # nenhuma célula vira fórmula (um participante "=2+3")

    with open(destino, "w", newline="", encoding="utf-8-sig" if lida.com_bom else "utf-8") as f:
        csv.writer(f, delimiter=lida.delimitador).writerows([spreadsheet_cell(x) for x in ln] for ln in linhas)
    if sem_envio and log is not None:
        log(f"  Moodle: {sem_envio} participante(s) da planilha sem nada no download ficam com 0 (o motivo vai no "
            "comentário de feedback)")
    return destino


def write_feedback_zip(rows, pessoas: dict[str, Participant], saida: Path, destino: Path) -> Path:
    """``destino`` (``moodle-retornos.zip``): as páginas de retorno de ``saida`` (``Row.retorno``) em
    ``Nome Completo_id_assignfeedback_file/<aula>-<notebook>.html``, o formato que o Moodle lê em "Enviar vários
    arquivos de retorno em um zip" e devolve a cada aluno (o plugin "Arquivos de retorno" precisa estar ligado
    na tarefa)."""
    with zipfile.ZipFile(destino, "w", zipfile.ZIP_DEFLATED) as z:
        for r in rows:
            quem = pessoas.get(r.student)
            if quem is None or not r.retorno:
                continue
            pagina = saida / r.retorno
            if pagina.exists():
                z.write(pagina, f"{quem.nome}_{quem.id}_assignfeedback_file/{pagina.name}")
    return destino


def join_parts(pastas: list[Path], saida: Path, idioma: str = "pt_br", planilha: Path | None = None,
               log=print) -> list:
    """Junta as partes de uma correção (:func:`correcao.partes.join_parts`: ``notas.csv``, ``nao-corrigidos.csv``
    e ``retorno/``) e, se elas são de um download do Moodle (``grade_moodle`` com ``parte``), escreve também
    ``moodle-notas.csv`` (com ``idioma`` e ``planilha``, como :func:`grade_moodle`) e ``moodle-retornos.zip``.
    Devolve as linhas.

    Raises
    ------
    correcao.partes.PartsError
        Veja :func:`correcao.partes.join_parts`.
    """
    from .lms import join_parts_with

    return join_parts_with([MoodleExporter(idioma, planilha)], pastas, saida, log=log)


def upload_hint(saida: Path, planilha: Path | None) -> str:
    """A linha do log com os arquivos para o Moodle e o que escolher no "Carregar planilha de notas": a
    codificação (UTF-8) e o separador da planilha preenchida (o da planilha do professor)."""
    separador = read_worksheet(planilha).delimitador if planilha is not None else ","
    return (f"  Moodle: {saida / 'moodle-notas.csv'} (Carregar planilha de notas: codificação UTF-8, separador "
            f"“{SEPARATOR_NAMES.get(separador, repr(separador))}”) e {saida / 'moodle-retornos.zip'} (Enviar vários "
            "arquivos de feedback em um zip)")


class MoodleExporter(LMSExporter):
    """O Moodle como AVA da correção (:class:`correcao.lms.LMSExporter`): o download do "Baixar todas as tarefas"
    (:func:`convert`), a planilha de notas (:func:`write_worksheet`, no ``idioma`` do Moodle e, com ``planilha``, a
    baixada dele, preenchida) e o zip de retornos (:func:`write_feedback_zip`)."""

    name = "moodle"
    outputs = (MOODLE_WORKSHEET, MOODLE_FEEDBACK_ZIP)

    def __init__(self, idioma: str = "pt_br", planilha: Path | None = None):
        self.idioma, self.planilha = idioma, planilha

    def detects(self, entrada: Path) -> bool:
        return is_moodle_download(entrada)

    def check_options(self) -> None:
        if self.planilha is not None:
            check_worksheet(self.planilha)

    def convert(self, entradas: list[Path], destino: Path) -> tuple[Path, dict]:
        return convert(entradas, destino)

    def before_grading(self, participantes: dict) -> None:
        if self.planilha is not None:
            check_same_task(read_worksheet(self.planilha).linhas, {p.id for p in participantes.values()},
                            Path(self.planilha).name)

    def to_attachment(self, participantes: dict) -> dict:
        return {a: [p.nome, p.id] for a, p in sorted(participantes.items())}

    def from_attachment(self, dados) -> dict:
        return {aluno: Participant(nome, ident) for aluno, (nome, ident) in dados.items()}

    def export(self, rows: list, participantes: dict, saida: Path, log=print) -> None:
        write_worksheet(rows, participantes, saida / MOODLE_WORKSHEET, idioma=self.idioma, planilha=self.planilha,
                        log=log)
        write_feedback_zip(rows, participantes, saida, saida / MOODLE_FEEDBACK_ZIP)
        log(upload_hint(saida, self.planilha))


def grade_moodle(entradas: list[Path], saida: Path, idioma: str = "pt_br", planilha: Path | None = None,
                 log=print, **kwargs) -> list:
    """Corrige um download do Moodle (zips ou pastas) com :func:`correcao.motor.grade_class` (``kwargs`` vão
    para ela) e escreve ``moodle-notas.csv`` e ``moodle-retornos.zip`` em ``saida``, ao lado de ``notas.csv``.
    Com ``parte=(K, N)`` nos ``kwargs``, só a parte (``parte.json``, com os participantes): a planilha e o zip
    saem na junção (:func:`join_parts`). É :func:`correcao.lms.grade_with` com o :class:`MoodleExporter`.

    Raises
    ------
    ValueError
        Veja :func:`convert` e :func:`write_worksheet`.
    """
    from .lms import grade_with

    return grade_with(MoodleExporter(idioma, planilha), entradas, saida, log=log, **kwargs)
