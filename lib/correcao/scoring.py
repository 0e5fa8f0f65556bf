"""As regras da nota: funções puras sobre uma :class:`correcao.relatorio.Row`, o :class:`correcao.catalogo.Gradable`
do notebook e o :class:`correcao.execution.ExecutionResult` das caixas. Nenhuma roda código, abre caixa ou chama o
nbgrader: os testes as chamam com dados escritos à mão.

- os pontos de cada verificação vêm só do verificador isolado (:func:`verifier_scores`); a saída do kernel só
  serve ao retorno, e uma discordância entre os dois vai para revisão;
- código que mexe na correção retém todos os pontos (:func:`apply_verification`);
- respostas iguais às de ``solutions/``, verificações de uma versão anterior do curso e verificações que a
  versão do aluno não tinha (:func:`withhold_solution_copies`, :func:`old_version_failures`,
  :func:`checks_outside_version`);
- os motivos legíveis (:func:`explain_outputs`, :func:`outcome_reason`) e, na turma, as cópias do mesmo
  notebook (:func:`mark_copies`) e o tempo esgotado que pode ter sido da máquina (:func:`timed_out_by_machine`).
"""

from __future__ import annotations

import re

from .biblioteca_aluno import MASKED_MESSAGE, REFUSED_MESSAGE
from .catalogo import (
    Gradable,
    cell_label,
    is_check,
    nbgrader_meta,
)
from .execution import ExecutionResult
from .politica import GradingPolicy
from .relatorio import Row, format_number, readable_error, withhold


def explain_outputs(nb: dict, g: Gradable, row: Row) -> None:
    """Os motivos legíveis das saídas do notebook executado ``nb`` (o JSON do notebook, como dicionário) em
    ``row.reasons``: verificações que falharam, erros (com a célula), verificações que não rodaram; uma célula de
    verificação apagada zera os pontos dela em ``row.scores``."""
    present = set()
    for index, cell in enumerate(nb["cells"]):
        gid = nbgrader_meta(cell).get("grade_id")
        present.add(gid)
        verificacao = gid in g.cells and is_check(cell)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                motivo = _error_reason(out.get("ename", ""), out.get("evalue") or "", verificacao)
                if motivo is not None:
                    row.reasons.append(f"{gid}: {motivo}" if verificacao or out.get("ename") == "NaoExecutada"
                                       else f"erro em {cell_label(nb['cells'], index)}: {motivo}")
    for gid in g.checks:
        if gid not in present:
            row.reasons.append(f"{gid}: célula de verificação apagada ou sem os metadados de correção (0 pontos)")
            row.scores[gid] = 0.0


def _error_reason(ename: str, evalue: str, verificacao: bool) -> str | None:
    """O motivo de um erro numa célula (``verificacao``: uma célula de verificação), ou ``None`` quando outro motivo
    já diz o que houve."""
    if ename == "NaoExecutada":
        return "não foi executada (a execução parou antes)"
    if ename in ("CellTimeoutError", "KeyboardInterrupt", "MemoryError") or (ename == "SaidaExcessiva"
                                                                            and not verificacao):
        return None  # a situação da linha (tempo/memória esgotados) ou a nota da saída cortada já diz onde
    if not verificacao and (ename == "NotImplementedError" or MASKED_MESSAGE in evalue or REFUSED_MESSAGE in evalue):
        # o esboço de um exercício não feito (a verificação dele já diz "não resolvido"), ou o PyTorch e uma conta
        # pronta numa demonstração, tapados na correção (o retorno diz por quê)
        return None
    return readable_error(ename, evalue, com_nome=not verificacao)


def old_version_failures(g: Gradable, row: Row, versao: str) -> None:
    """Uma entrega de versão anterior com verificações que não passaram vai para revisão: o enunciado pode ter
    mudado desde então (o projeto da Aula 1 pedia ``atencao.self_attention``, que a verificação de hoje
    proíbe dentro da função do aluno)."""
    if not versao or row.status not in ("parcial", "zero"):
        return
    falhas = [gid for gid in g.checks if gid in row.scores and row.scores[gid] < g.cells[gid][1]]
    if falhas:
        row.status = "revisar"
        row.reasons.append(f"verificações que não passaram numa entrega da {versao} ({', '.join(falhas)}): o "
                           "enunciado pode ter mudado desde aquela versão; o professor decide")


def old_version_missing(g: Gradable, row: Row, ausentes: list) -> None:
    """Uma entrega de versão anterior com tudo certo, mas sem exercícios que a de hoje tem (``ausentes``, fora da nota
    e do máximo: :func:`checks_outside_version`), vai para revisão, e não ``ok``: entregar uma versão antiga não
    pode ser o jeito de pular o exercício novo. O professor decide se ele conta; os pontos ficam."""
    if ausentes and row.status == "ok":
        row.status = "revisar"
        hoje = row.maximum + sum(g.cells[gid][1] for gid in ausentes)
        row.reasons.append(f"entrega de uma versão anterior, sem {', '.join(ausentes)}: {format_number(row.total)} "
                           f"de {format_number(row.maximum)} pontos nesta linha, e o máximo da versão de hoje é "
                           f"{format_number(hoje)}; o professor decide se os exercícios novos contam")


def foreign_notebook(row: Row, motivo: str) -> None:
    """Um notebook reconhecido só pelo nome (:func:`correcao.planning.foreign_reason`) que não passou em tudo vai
    para revisão, com ``motivo``: o zero de um notebook que talvez nem seja o do curso não é uma nota."""
    if motivo and row.status in ("parcial", "zero"):
        row.status = "revisar"
        row.reasons.insert(0, motivo)  # primeiro: os outros motivos (células do curso que voltaram...) vêm disso


def checks_outside_version(g: Gradable, row: Row, ausentes: list) -> None:
    """Verificações de exercícios que a versão do curso do aluno não tinha: fora da nota e do máximo."""
    for gid in ausentes:
        row.scores.pop(gid, None)
        row.maximum -= g.cells[gid][1]
    row.reasons = [r for r in row.reasons if not any(r.startswith(f"{gid}: ") for gid in ausentes)]


def withhold_solution_copies(row: Row, respostas, verificacoes) -> None:
    """Entrega com as respostas iguais às de ``solutions/``: revisar, sem os pontos dessas verificações."""
    if respostas:
        withhold(row, verificacoes, f"respostas iguais às de solutions/ ({', '.join(respostas)}): cópia da solução? "
                                 "O professor decide")


def last_error(log: str) -> str:
    """A última linha de erro do ``log`` do nbgrader (ou a última linha, ou ``"sem detalhes"``), em até 300
    caracteres e sem os caminhos temporários desta máquina: o motivo de um ``erro_na_correcao``."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and "IPKernelApp" not in ln]
    errors = [ln for ln in lines if "ERROR" in ln or "Error" in ln]
    text = (errors or lines or ["sem detalhes"])[-1][:300]
    return re.sub(r"/\S+", "…", text)  # sem caminhos temporários


def apply_verification(g: Gradable, row: Row, res: ExecutionResult) -> None:
    """Os pontos vêm só do verificador isolado (nenhum código do aluno no processo dele); a saída do kernel
    (o que o nbgrader leu) só serve ao retorno, e uma verificação que passou lá e não no verificador vai
    para revisão. Depois, a situação e os motivos."""
    review = verifier_scores(g, row, res)
    review = tampering_reasons(row, res) or review
    for index, onde in res.truncated[:5]:
        row.reasons.append(f"saída cortada na célula {index + 1}: "
                           + ("a célula" if onde == "celula" else "o notebook")
                           + " passou do limite de saída; o resto não foi guardado e a célula foi interrompida")
    reason = outcome_reason(res)
    if reason:
        row.reasons.append(reason)
    if (res.flags or res.changed_modules) and any(v > 0 for v in row.scores.values()):  # o kernel inteiro em dúvida
        withhold(row, list(row.scores), "o código mexe na correção: nenhuma verificação vale até a revisão")
    row.total = sum(row.scores.values())
    if review:
        row.status = "revisar"
    elif res.outcome:
        row.status = res.outcome
    else:
        row.status = "ok" if row.total >= row.maximum else ("parcial" if row.total > 0 else "zero")
    row.reasons = list(dict.fromkeys(row.reasons))


def verifier_scores(g: Gradable, row: Row, res: ExecutionResult) -> bool:
    """Os pontos de cada verificação pelo veredito do verificador isolado; diz se a linha vai para revisão (o
    kernel e o verificador discordaram). O resultado de cada uma, com a categoria (``ok``, ``not_done``, o id do
    engano da dica, :mod:`atencao.checks.categories`), vai para ``row.diagnoses`` (o relatório da turma)."""
    review = False
    discordam = []
    for gid in g.checks:
        if gid not in row.scores:
            continue
        passou, detalhe = res.verdicts.get(gid, (False, "a conferência não chegou a esta verificação"))
        row.diagnoses[gid] = (res.categories.get(gid) or ("ok" if passou is True else "stopped"),
                              "" if passou is True else detalhe)
        no_kernel = row.scores[gid]
        row.scores[gid] = float(g.cells[gid][1]) if passou is True else 0.0
        if passou is not True and "MemoryError" in str(detalhe):  # o limite de memória, e não o aluno nem uma trapaça
            if not res.outcome:
                res.outcome, res.where = "memoria_esgotada", f"conferência de {gid}"
            continue
        if passou is not True and no_kernel > 0:  # o verificador decide: 0, e a discordância vai para revisão
            row.reasons.append(f"{gid}: passou no notebook, mas falhou na conferência independente"
                               + (f" (não passou: {detalhe})" if detalhe else "") + "; 0 pontos")
            review = True
        elif passou is True and gid in res.failed_in_kernel:
            discordam.append(gid)
    if discordam:  # o kernel reprovou e o verificador aprovou: os pontos esperam o professor
        withhold(row, discordam, "reprovada no notebook, mas aprovada na conferência independente ("
                 + ", ".join(discordam) + "): o professor confere a resposta")
        review = True
    return review


def tampering_reasons(row: Row, res: ExecutionResult) -> bool:
    """Os motivos da varredura e dos módulos alterados; diz se há algum (a linha vai para revisão)."""
    if res.flags:
        row.reasons.append("o código mexe na correção: " + "; ".join(res.flags[:8])
                           + (f" (e mais {len(res.flags) - 8})" if len(res.flags) > 8 else ""))
    if res.changed_modules:
        row.reasons.append("módulos alterados pelo código do aluno (desfeito na conferência): "
                           + ", ".join(res.changed_modules[:8]))
    return bool(res.flags or res.changed_modules)


def outcome_reason(res: ExecutionResult) -> str | None:
    """O motivo, em pt-BR, da situação da execução (tempo, memória, kernel morto), com o limite desta correção
    quando ``res.limits`` o traz; ``None`` se ela terminou bem."""
    celula, notebook, memoria = res.limits or (None, None, None)
    if res.ignored_interrupt:
        return (f"tempo esgotado em {res.ignored_interrupt}: a célula passou do tempo limite{_seconds(celula)} e o "
                "kernel não atendeu à interrupção (ignorou o SIGINT?); ele foi encerrado e o resto do notebook não "
                "rodou")
    if res.outcome == "tempo_esgotado" and res.continued:
        return (f"tempo esgotado em {res.where}: a célula passou do tempo limite{_seconds(celula)} e foi "
                "interrompida (laço infinito? uma conta lenta demais?); o resto do notebook rodou normalmente")
    if res.outcome == "tempo_esgotado":
        return (f"tempo esgotado em {res.where}: o notebook passou do tempo limite{_seconds(notebook)} e foi "
                "interrompido (laço infinito? uma conta lenta demais?); valem os pontos das verificações que "
                "terminaram antes")
    if res.outcome == "memoria_esgotada" and res.notebook_memory:
        return (f"memória esgotada em {res.where}: a soma dos processos do notebook (e dos arquivos que "
                "ele gravou) passou do limite do notebook; valem os pontos das verificações que terminaram "
                "antes")
    por_processo = f"limite de {memoria} MiB por processo" if memoria else "limite por processo, --memoria"
    if res.outcome == "memoria_esgotada" and res.where.startswith("conferência de "):
        return (f"memória esgotada na {res.where} ({por_processo}): o cálculo da verificação não "
                "coube na memória desta correção; valem os pontos das verificações que terminaram")
    if res.outcome == "memoria_esgotada" and res.continued:
        return (f"memória esgotada em {res.where} ({por_processo}): a célula levantou MemoryError e parou; o resto "
                "do notebook rodou normalmente")
    if res.outcome == "memoria_esgotada":
        return (f"memória esgotada em {res.where} ({por_processo}); "
                "valem os pontos das verificações que terminaram antes")
    if res.outcome == "kernel_morreu":
        return (f"o kernel parou em {res.where} (o processo foi encerrado); "
                "valem os pontos das verificações que terminaram antes")
    if res.outcome == "falha_da_maquina":
        return (f"a correção falhou nesta máquina antes de rodar o notebook (o kernel não começou na caixa: "
                f"{res.machine_error}); não é culpa do aluno, e a entrega precisa ser corrigida de novo")
    return None


def _seconds(s) -> str:
    """" de 30 s" (um limite de tempo no motivo), ou nada quando não informado."""
    return f" de {s:g} s" if isinstance(s, (int, float)) else ""


def mark_copies(rows: list[Row]) -> None:
    """Duas cópias do mesmo notebook na entrega de um aluno: cada uma tem a sua linha (coluna ``arquivo``) e
    a nota diz quais são as outras; o professor decide qual vale."""
    grupos: dict[tuple, list[Row]] = {}
    for r in rows:
        if r.assignment:
            grupos.setdefault((r.student, r.assignment, r.notebook), []).append(r)
    for grupo in grupos.values():
        if len(grupo) > 1:
            for r in grupo:
                outras = sorted(o.arquivo for o in grupo if o is not r)
                # o mesmo caminho duas vezes: no original, o nome estava escrito de dois jeitos (NFC e NFD, \ e /)
                mesmo = ("; o mesmo nome escrito de dois jeitos no original, como acentos compostos e decompostos "
                         "(NFC/NFD)" if r.arquivo in outras else "")
                r.reasons.append(f"o aluno entregou {len(grupo)} cópias deste notebook (esta: “{r.arquivo}”; "
                                 f"outras: {', '.join(f'“{x}”' for x in outras)}{mesmo}): o professor decide qual vale")


def timed_out_by_machine(row: Row) -> bool:
    """Tempo esgotado que pode ter sido da máquina, e não do aluno: o log diz isso (:func:`busy_machine_note`), mas
    a entrega não é corrigida de novo (as medidas não separam um notebook que dorme de um que esperou pela CPU, e
    cada recorreção custaria outro orçamento inteiro).

    Só quando há as duas medidas e as duas apontam a máquina: as caixas do notebook usaram menos da metade
    do tempo em CPU (um laço infinito de verdade usa quase todo) **e** outros processos ocuparam pelo menos
    meio núcleo no mesmo período (CPU disputada). Nunca quando o tempo foi do aluno (``row.tempo_do_aluno``:
    um kernel que ignorou a interrupção, saída cortada por excesso, memória do notebook esgotada), nem sem
    medida."""
    esgotou = row.status == "tempo_esgotado" or any("tempo esgotado" in r for r in row.reasons)
    return (esgotou and not row.tempo_do_aluno and row.cpu_ratio is not None and row.cpu_ratio < 0.5
            and row.cpu_others is not None and row.cpu_others >= 0.5)


def busy_machine_note(row: Row, politica: GradingPolicy) -> str:
    """O aviso, no log da correção, de um tempo esgotado que pode ter sido da máquina
    (:func:`timed_out_by_machine`): a linha fica ``tempo_esgotado``, sem outra correção (e ``notas.csv`` não muda
    com a carga da máquina), e o professor decide se corrige de novo esse notebook sozinho."""
    cpu = f"só {row.cpu_ratio:.0%} do tempo" if row.cpu_ratio is not None else "pouco tempo"
    return (f"  {row.student} · {row.notebook} ({row.arquivo}): tempo esgotado com a máquina ocupada: as caixas "
            f"usaram {cpu} em CPU, enquanto outros processos ocupavam a máquina (ou o código dormiu ou esperou); não "
            "foi recorrigida: se o código não dorme nem espera, corrija só este notebook outra vez, com a máquina "
            "livre (--processos 1) ou com limites de tempo maiores que os desta correção (que foram --tempo-celula "
            f"{politica.cell_timeout} e --tempo-notebook {politica.notebook_timeout:g}).")
