"""Uma turma grande corrigida em partes, em várias máquinas (ou nos processos de um agendador), e juntada depois.

``corrigir --parte K/N`` lê a turma inteira (a leitura é rápida), guarda a impressão digital dela e corrige só os
alunos da parte ``K`` (de 1 a ``N``); ``corrigir --juntar PARTE1 PARTE2 ...`` junta as pastas das ``N`` partes e
escreve ``notas.csv``, ``nao-corrigidos.csv`` e ``retorno/`` exatamente como uma correção única da turma toda (as
mesmas linhas, na mesma ordem, os mesmos bytes); para um download do Moodle, :func:`correcao.moodle.join_parts`
escreve também ``moodle-notas.csv`` e ``moodle-retornos.zip``.

A divisão é por aluno: todos os arquivos de um aluno vão para a mesma parte, que depende só do nome dele e de
``N`` (:func:`part_of`, SHA-256 do nome): não depende da ordem de leitura nem de quais outros alunos há. Um aluno
que entra ou sai da turma não muda a parte de nenhum outro.

A pasta de uma parte tem um arquivo só, :data:`PART_FILE` (JSON), gravado de uma vez no fim (um processo que
morreu no meio não deixa uma parte pela metade): a parte (``K``, ``N``), a impressão digital da turma, a versão
do curso, as opções da correção, os alunos da parte e as linhas corrigidas (com o HTML do notebook de cada uma).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, fields
from pathlib import Path

from .entregas import Submissions
from .relatorio import Row
from .saida import PART_FILE

FORMAT = 2  # a versão do formato de PART_FILE (2: o código das respostas, para a similaridade na junção)
ROOT = Path(__file__).resolve().parents[2]


class PartsError(ValueError):
    """As partes não formam uma turma inteira (faltando, repetidas, de turmas ou de versões diferentes)."""


def parse_part(texto: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)``, com ``1 ≤ K ≤ N``.

    Raises
    ------
    ValueError
        Se ``texto`` não tiver a forma ``K/N`` com inteiros ``1 ≤ K ≤ N`` (mensagem em pt-BR).
    """
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(texto))
    if m is None:
        raise ValueError(f"--parte: esperado K/N (ex.: 2/5, a parte 2 de 5), recebido {texto!r}")
    k, n = int(m[1]), int(m[2])
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"--parte: esperado 1 ≤ K ≤ N em K/N, recebido {k}/{n}")
    return k, n


def part_of(aluno: str, n: int) -> int:
    """A parte (de 1 a ``n``) do aluno ``aluno``: ``SHA-256(nome em UTF-8)`` módulo ``n``, mais 1.

    Estável entre máquinas e execuções (o ``hash()`` do Python muda a cada processo) e independente dos outros
    alunos. Os arquivos soltos na raiz das entregas (aluno ``""``) também têm a sua parte.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n: esperado um inteiro ≥ 1, recebido {n!r}")
    digest = hashlib.sha256(aluno.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


def class_fingerprint(ent: Submissions) -> str:
    """A impressão digital da turma lida: SHA-256 dos alunos, dos arquivos (aluno, caminho, motivo e SHA-256 do
    conteúdo) e dos nomes não lidos. Duas leituras da mesma entrega dão a mesma; outra turma (ou a mesma com
    um arquivo a mais ou mudado), outra."""
    h = hashlib.sha256()

    def add(obj) -> None:
        h.update(json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n")

    add(ent.alunos)
    for a in ent.arquivos:
        conteudo = hashlib.sha256(a.dados.read_bytes()).hexdigest() if a.dados is not None else None
        add([a.aluno, a.caminho, a.motivo, conteudo])
    add(ent.inseguros)
    return h.hexdigest()


def course_version() -> str:
    """SHA-256 do que decide a nota: os notebooks de ``solutions/`` e o código de ``lib/atencao`` e
    ``lib/correcao``. Partes corrigidas com versões diferentes do curso não se juntam."""
    h = hashlib.sha256()
    arquivos = sorted((ROOT / "solutions").rglob("*.ipynb"))
    arquivos += sorted(p for pasta in ("atencao", "correcao") for p in (ROOT / "lib" / pasta).rglob("*.py"))
    for p in arquivos:
        if ".ipynb_checkpoints" in p.parts or "__pycache__" in p.parts:
            continue
        h.update(p.relative_to(ROOT).as_posix().encode("utf-8") + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _row_to_json(r: Row) -> dict:
    d = asdict(r)
    d["autograded"] = None  # o notebook corrigido fica na máquina da parte; o HTML dele já está em ``corpo``
    d["retorno"] = ""  # o caminho da página é decidido na junção, com todos os alunos
    return d


def _row_from_json(d: dict) -> Row:
    nomes = {f.name for f in fields(Row)}
    return Row(**{k: v for k, v in d.items() if k in nomes})


def write_part(pasta: Path, parte: tuple[int, int], rows: list[Row], fora: list, impressao: str, alunos: list[str],
               opcoes: dict, anexo: dict | None = None, respostas: list[dict] | None = None) -> Path:
    """Grava a parte ``parte`` = (K, N) em ``pasta/parte.json`` (de uma vez: um arquivo temporário renomeado).

    ``rows``: as linhas da parte, já na ordem de :func:`correcao.motor.grade_class`; ``fora``: os arquivos não
    corrigidos dos alunos da parte; ``impressao``: :func:`class_fingerprint` da turma inteira; ``alunos``: os
    alunos da turma inteira (a junção confere que as partes cobrem todos); ``opcoes``: as opções da correção que
    mudam a nota (:meth:`correcao.politica.GradingPolicy.part_options`: a junção recusa partes com outras);
    ``anexo``: o que mais a junção precisa (o Moodle guarda ali os participantes); ``respostas``: o código das
    respostas de cada linha, na ordem de ``rows`` (:func:`correcao.similarity.answers_of`: o notebook corrigido fica
    nesta máquina, e a junção compara os alunos de todas as partes). Devolve o caminho gravado.
    """
    k, n = parte
    pasta = Path(pasta)
    pasta.mkdir(parents=True, exist_ok=True)
    dados = {
        "formato": FORMAT, "parte": k, "partes": n, "turma": impressao, "curso": course_version(),
        "opcoes": opcoes, "alunos_turma": list(alunos),
        "alunos": sorted(a for a in set(alunos) | {""} if part_of(a, n) == k),
        "linhas": [_row_to_json(r) for r in rows], "nao_corrigidos": [list(x) for x in fora],
        "respostas": list(respostas) if respostas is not None else [{} for _ in rows],
        "anexo": anexo or {},
    }
    destino = pasta / PART_FILE
    temporario = pasta / f".{PART_FILE}.{os.getpid()}"
    temporario.write_text(json.dumps(dados, ensure_ascii=False), encoding="utf-8")
    os.replace(temporario, destino)
    return destino


def read_part(pasta: Path) -> dict:
    """O conteúdo de ``pasta/parte.json``.

    Raises
    ------
    PartsError
        Se a pasta não for a saída de uma parte (sem ``parte.json``, ou ilegível, ou de outro formato).
    """
    arquivo = Path(pasta) / PART_FILE
    if not arquivo.is_file():
        raise PartsError(f"“{pasta}” não é a saída de uma parte: falta {PART_FILE} (esperada a pasta --saida de "
                         "`corrigir --parte K/N`; a correção dessa parte terminou?)")
    try:
        dados = json.loads(arquivo.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PartsError(f"“{arquivo}” não pôde ser lido ({type(exc).__name__}): corrija essa parte de novo") from None
    if not isinstance(dados, dict) or dados.get("formato") != FORMAT:
        raise PartsError(f"“{arquivo}”: esperado o formato {FORMAT} das partes, recebido "
                         f"{dados.get('formato') if isinstance(dados, dict) else type(dados).__name__!r} "
                         "(corrigida com outra versão do curso?)")
    return dados


def _check(partes: list[tuple[Path, dict]]) -> int:  # noqa: C901 — uma recusa por conferência das partes, em sequência
    """Confere que ``partes`` formam uma turma inteira; devolve N. Levanta :class:`PartsError` com o problema."""
    ns = sorted({d["partes"] for _, d in partes})
    if len(ns) > 1:
        lista = ", ".join(f"{d['parte']}/{d['partes']} ({p.name})" for p, d in partes)
        raise PartsError(f"partes de divisões diferentes: N = {ns} ({lista}); junte as N partes de uma mesma "
                         "divisão K/N")
    n = ns[0]
    if len({d["turma"] for _, d in partes}) > 1:
        raise PartsError("partes de turmas diferentes: a impressão digital da turma lida não é a mesma em "
                         + ", ".join(f"{d['parte']}/{n} ({p.name}: {d['turma'][:12]})" for p, d in partes)
                         + "; cada parte precisa ler exatamente as mesmas entregas")
    if len({d["curso"] for _, d in partes}) > 1:
        raise PartsError("partes corrigidas com versões diferentes do curso (solutions/ ou lib/): "
                         + ", ".join(f"{d['parte']}/{n} ({p.name}: {d['curso'][:12]})" for p, d in partes))
    if len({json.dumps(d["opcoes"], sort_keys=True) for _, d in partes}) > 1:
        raise PartsError("partes corrigidas com opções diferentes (tempo, memória, isolamento, cópias): "
                         + "; ".join(f"{d['parte']}/{n}: {d['opcoes']}" for _, d in partes))
    if len({bool(d["anexo"].get("moodle")) for _, d in partes}) > 1:
        raise PartsError("há partes de um download do Moodle e partes que não são: "
                         + ", ".join(f"{d['parte']}/{n} ({'Moodle' if d['anexo'].get('moodle') else 'pasta/zip'})"
                                     for _, d in partes))
    vistas: dict[int, Path] = {}
    for p, d in partes:
        if d["parte"] in vistas:
            raise PartsError(f"a parte {d['parte']}/{n} aparece duas vezes (“{vistas[d['parte']]}” e “{p}”)")
        vistas[d["parte"]] = p
    faltam = [k for k in range(1, n + 1) if k not in vistas]
    if faltam:
        raise PartsError(f"faltam as partes {', '.join(f'{k}/{n}' for k in faltam)} (recebidas: "
                         f"{', '.join(f'{k}/{n}' for k in sorted(vistas))}); junte todas as {n}")
    dono: dict[str, int] = {}
    for _, d in partes:
        for aluno in {r["student"] for r in d["linhas"]} | {x[0] for x in d["nao_corrigidos"]}:
            if aluno in dono and dono[aluno] != d["parte"]:
                raise PartsError(f"o aluno “{aluno}” aparece em duas partes ({dono[aluno]}/{n} e {d['parte']}/{n}): "
                                 "a divisão dessas partes não é a mesma")
            if part_of(aluno, n) != d["parte"]:
                raise PartsError(f"o aluno “{aluno}” está na parte {d['parte']}/{n}, mas a divisão do curso o põe na "
                                 f"{part_of(aluno, n)}/{n}: essa parte foi feita com outra divisão")
            dono[aluno] = d["parte"]
    sem_parte = sorted(set(partes[0][1]["alunos_turma"]) - set(dono))
    if sem_parte:
        raise PartsError(f"alunos da turma sem linha em nenhuma parte: {', '.join(sem_parte[:10])}")
    return n


def join_parts(pastas: list[Path], saida: Path, log=print) -> tuple[list[Row], dict]:
    """Junta as pastas das partes (``corrigir --parte K/N``, de 1/N a N/N, em qualquer ordem) e escreve em
    ``saida`` o que uma correção única da turma escreveria: ``notas.csv``, ``nao-corrigidos.csv``, ``retorno/``, o
    relatório da turma (:mod:`correcao.class_report`) e ``similaridade.html`` (:mod:`correcao.similarity`), os
    mesmos bytes. Devolve as linhas e o anexo das partes (o
    mesmo em todas; o Moodle guarda ali os participantes, veja :func:`correcao.moodle.join_parts`).

    Raises
    ------
    PartsError
        Pasta que não é de uma parte; parte com entregas que não rodaram por falha da máquina
        (``falha_da_maquina``); partes faltando ou repetidas; de divisões ``N`` diferentes; de turmas,
        versões do curso ou opções diferentes; um aluno em duas partes; versão do curso desta máquina diferente
        da das partes (mensagens em pt-BR).
    """
    from .catalogo import catalog
    from .relatorio import write_outputs
    from .similarity import compare_class

    if not pastas:
        raise PartsError("--juntar: esperada ao menos uma pasta de parte, recebida nenhuma")
    partes = [(Path(p), read_part(Path(p))) for p in pastas]
    n = _check(partes)
    for pasta, dados in partes:  # uma parte em que a máquina falhou não corrigiu: nunca vira zeros na junção
        falhas = [d["student"] for d in dados["linhas"] if d.get("status") == "falha_da_maquina"]
        if falhas:
            raise PartsError(f"a parte {dados['parte']}/{n} ({pasta.name}) não corrigiu {len(falhas)} entrega(s) "
                             f"({', '.join(sorted(set(falhas))[:5])}): o kernel não começou na caixa daquela máquina "
                             "(falha_da_maquina). Corrija essa parte de novo e junte depois")
    if partes[0][1]["curso"] != course_version():
        raise PartsError("as partes foram corrigidas com outra versão do curso (solutions/ ou lib/) que a desta "
                         "máquina: junte na mesma versão em que elas foram corrigidas")
    partes.sort(key=lambda x: x[1]["parte"])
    pares = [(_row_from_json(d), resposta) for _, dados in partes
             for d, resposta in zip(dados["linhas"], dados.get("respostas") or [{}] * len(dados["linhas"]))]
    # a mesma ordem da correção única: cada parte já vem ordenada, e os empates (o mesmo aluno) ficam numa parte só
    pares.sort(key=lambda x: (x[0].student, x[0].assignment, x[0].notebook, x[0].arquivo))
    rows = [r for r, _ in pares]
    fora = [tuple(x) for _, dados in partes for x in dados["nao_corrigidos"]]
    saida = Path(saida).resolve()
    compare_class(rows, saida, respostas=[resposta for _, resposta in pares])  # similaridade.html, como na única
    write_outputs(rows, catalog(), saida, fora)  # o relatório da turma sai dos diagnósticos de cada linha (parte.json)
    log(f"{n} parte(s) juntada(s): {len(rows)} linha(s) em {saida / 'notas.csv'}")
    return rows, partes[0][1]["anexo"]


__all__ = ["PART_FILE", "PartsError", "class_fingerprint", "course_version", "join_parts", "parse_part", "part_of",
           "read_part", "write_part"]
