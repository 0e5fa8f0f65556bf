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
  em "Baixar planilha de notas"), ela é preenchida como veio: só a coluna da nota muda;
- ``moodle-retornos.zip``: as páginas de retorno em ``Nome Completo_123456_assignfeedback_file/<página>.html``,
  o formato que o "Enviar vários arquivos de retorno em um zip" (*Upload multiple feedback files in a zip*,
  plugin "Arquivos de retorno") lê: o id de participante é o segundo campo separado por ``_``.

Fonte: a documentação do Moodle ("Assignment settings", "Using Assignment": *Download all submissions*,
*Upload grading worksheet*, *Upload multiple feedback files in a zip*).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from correcao.entregas import is_junk, path_parts, zip_member_name

# "Nome Completo_123456_assignsubmission_file" + ("_" + resto): o nome do Moodle não tem "_" (vira espaço)
SUBMISSION_PATTERN = re.compile(
    r"^(?P<nome>[^_]+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)(?:_(?P<resto>.*))?$", re.DOTALL)

# Os cabeçalhos que o importador da planilha procura, como o Moodle os escreve em cada idioma
# (strings ``recordid``, ``hiddenuser`` e ``lastmodifiedgrade`` de mod_assign e ``grade`` do núcleo).
WORKSHEET_HEADERS = {
    "pt_br": {"id": "Identificador", "participante": "Participante", "nome": "Nome completo", "nota": "Nota",
              "maximo": "Nota máxima", "modificada": "Última modificação (nota)", "decimal": ","},
    "en": {"id": "Identifier", "participante": "Participant ", "nome": "Full name", "nota": "Grade",
           "maximo": "Maximum grade", "modificada": "Last modified (grade)", "decimal": "."},
}


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
                if nome in usados:  # o mesmo arquivo em duas entradas: cada um na pasta da sua entrada
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


def write_worksheet(rows, pessoas: dict[str, Participant], destino: Path, idioma: str = "pt_br",
                      planilha: Path | None = None, agora: datetime | None = None) -> Path:
    """Escreve ``destino`` (``moodle-notas.csv``), a planilha do "Carregar planilha de notas" do Moodle.

    Sem ``planilha``: uma linha por participante com as colunas que o importador do Moodle procura
    (identificador, nota, última modificação da nota; mais o nome e a nota máxima para o professor ler), com os
    cabeçalhos de ``idioma`` (``"pt_br"`` ou ``"en"``: o idioma do Moodle de quem vai carregar). A nota é a soma
    dos pontos (:func:`scores_by_participant`): a nota máxima da tarefa no Moodle deve ser o máximo da tarefa
    (a coluna da nota máxima desta planilha).
    Com ``planilha`` (a baixada do Moodle), ela é copiada como está e só a nota dos participantes corrigidos
    muda, na escala da coluna da nota máxima dela quando há essa coluna.

    Raises
    ------
    ValueError
        Se ``idioma`` não for um dos conhecidos, ou se ``planilha`` não tiver as colunas do identificador e da
        nota.
    """
    if idioma not in WORKSHEET_HEADERS:
        raise ValueError(f"idioma: esperado um de {sorted(WORKSHEET_HEADERS)}, recebido {idioma!r}")
    notas = scores_by_participant(rows, pessoas)
    por_id = {pessoas[a].id: v for a, v in notas.items()}
    if planilha is not None:
        return _preencher(Path(planilha), por_id, destino)
    c = WORKSHEET_HEADERS[idioma]
    quando = (agora or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S%z")
    with open(destino, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([c["id"], c["nome"], c["nota"], c["maximo"], c["modificada"]])
        for aluno in sorted(notas, key=lambda a: (pessoas[a].nome, int(pessoas[a].id))):
            total, maximo, _ = notas[aluno]
            w.writerow([f"{c['participante']}{pessoas[aluno].id}", pessoas[aluno].nome, _numero(total, c["decimal"]),
                        _numero(maximo, c["decimal"]), quando])
    return destino


def _coluna(cabecalho: list[str], chave: str) -> int | None:
    nomes = {WORKSHEET_HEADERS[i][chave].strip().lower() for i in WORKSHEET_HEADERS}
    return next((k for k, h in enumerate(cabecalho) if h.strip().lower() in nomes), None)


def check_worksheet(planilha: Path) -> tuple[list, int, int, int | None]:
    """Lê a planilha baixada do Moodle e confere as colunas; devolve ``(linhas, coluna do id, da nota, do máximo)``.

    Raises
    ------
    FileNotFoundError
        ``planilha`` não existe.
    ValueError
        Arquivo vazio, ou sem as colunas do identificador e da nota.
    """
    planilha = Path(planilha)
    if not planilha.is_file():
        raise FileNotFoundError(f"planilha não encontrada: {planilha}")
    texto = planilha.read_text(encoding="utf-8-sig")
    linhas = list(csv.reader(io.StringIO(texto)))
    if not linhas:
        raise ValueError(f"planilha: esperado o CSV baixado do Moodle, recebido um arquivo vazio ({planilha.name})")
    cab = linhas[0]
    col_id, col_nota, col_max = _coluna(cab, "id"), _coluna(cab, "nota"), _coluna(cab, "maximo")
    if col_id is None or col_nota is None:
        raise ValueError(f"planilha: esperadas as colunas “Identificador”/“Identifier” e “Nota”/“Grade” da "
                         f"planilha do Moodle, recebidas {cab}")
    return linhas, col_id, col_nota, col_max


def _preencher(planilha: Path, por_id: dict, destino: Path) -> Path:
    linhas, col_id, col_nota, col_max = check_worksheet(planilha)
    decimal = "," if any("," in (ln[col_max] if col_max is not None and len(ln) > col_max else "")
                         for ln in linhas[1:]) else "."
    for ln in linhas[1:]:
        m = re.search(r"(\d+)\s*$", ln[col_id]) if len(ln) > col_id else None
        if m is None or m[1] not in por_id or len(ln) <= col_nota:
            continue
        total, maximo, _ = por_id[m[1]]
        escala = 1.0
        if col_max is not None and len(ln) > col_max and maximo > 0:
            try:
                escala = float(ln[col_max].replace(",", ".")) / maximo
            except ValueError:
                escala = 1.0
        ln[col_nota] = _numero(total * escala, decimal)
    with open(destino, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(linhas)
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
    from correcao import partes

    saida = Path(saida).resolve()
    rows, anexo = partes.join_parts(pastas, saida, log=log)
    if anexo.get("moodle"):
        pessoas = {aluno: Participant(nome, ident) for aluno, (nome, ident) in anexo["moodle"].items()}
        write_worksheet(rows, pessoas, saida / "moodle-notas.csv", idioma=idioma, planilha=planilha)
        write_feedback_zip(rows, pessoas, saida, saida / "moodle-retornos.zip")
    return rows


def grade_moodle(entradas: list[Path], saida: Path, idioma: str = "pt_br", planilha: Path | None = None,
                 log=print, **kwargs) -> list:
    """Corrige um download do Moodle (zips ou pastas) com :func:`correcao.motor.grade_class` (``kwargs`` vão
    para ela) e escreve ``moodle-notas.csv`` e ``moodle-retornos.zip`` em ``saida``, ao lado de ``notas.csv``.
    Com ``parte=(K, N)`` nos ``kwargs``, só a parte (``parte.json``, com os participantes): a planilha e o zip
    saem na junção (:func:`join_parts`).

    Raises
    ------
    ValueError
        Veja :func:`converter` e :func:`write_worksheet`.
    """
    import tempfile

    from correcao.motor import grade_class

    saida = Path(saida).resolve()
    with tempfile.TemporaryDirectory(prefix="moodle-") as tmp:
        convertido, pessoas = convert([Path(e) for e in entradas], Path(tmp))
        log(f"  Moodle: {len(pessoas)} participante(s)")
        if kwargs.get("parte") is not None:  # uma parte: a planilha e o zip de retornos saem na junção
            anexo = {"moodle": {a: [p.nome, p.id] for a, p in sorted(pessoas.items())}}
            return grade_class(convertido, saida, log=log, anexo_parte=anexo, **kwargs)
        rows = grade_class(convertido, saida, log=log, **kwargs)
    write_worksheet(rows, pessoas, saida / "moodle-notas.csv", idioma=idioma, planilha=planilha)
    write_feedback_zip(rows, pessoas, saida, saida / "moodle-retornos.zip")
    log(f"  Moodle: {saida / 'moodle-notas.csv'} (Carregar planilha de notas) e {saida / 'moodle-retornos.zip'} "
        "(Enviar vários arquivos de feedback em um zip)")
    return rows
