"""A correção de uma turma, como uma sequência de etapas (este módulo só as encadeia):

1. **ler e planejar** a turma (:mod:`correcao.planning`): cada entrega reconhecida e arrumada vira uma
   :class:`~correcao.planning.GradingTask`; as outras, uma linha que diz por quê;
2. **os processos e o orçamento** (:mod:`correcao.pool`): cada processo de correção recebe uma entrega por vez, e
   o que passar do orçamento do notebook é morto e substituído;
3. **rodar um notebook nas caixas** (:mod:`correcao.execution`): o kernel (as saídas do retorno) e a
   conferência independente (o veredito), ao mesmo tempo;
4. **julgar e pontuar** (:mod:`correcao.grading` e as regras puras de :mod:`correcao.scoring`): os pontos vêm só
   do verificador isolado; divergência, ou código que mexe na correção, vira a situação ``revisar`` com o motivo;
5. **escrever o retorno** (:mod:`correcao.relatorio`): ``notas.csv`` e uma página por notebook (ou, numa parte
   de uma turma dividida, ``parte.json``: :mod:`correcao.partes`), e o relatório da turma
   (:mod:`correcao.class_report`: ``verificacoes.csv``, ``relatorio-turma.html`` e ``relatorio-turma.csv``).

A :class:`correcao.politica.GradingPolicy` é montada uma vez (:func:`grade_class`) e passada a todas as etapas.
"""

from __future__ import annotations

import dataclasses
import math
import os
import secrets
import shutil
import tempfile
import threading
from pathlib import Path

from .catalogo import catalog
from .entregas import Submissions, read_submissions
from .execution import ExecutionResult, Worker, alembic_head
from .isolamento import NotebookBudget, Sandbox, kill_sandbox, remove_cgroups
from .planning import MAX_COPIES, MAX_FILES_PER_STUDENT, GradingTask, plan_class
from .politica import GradingPolicy
from .pool import BUDGET_MARGIN_S, STUDENT_LIBRARIES, GradingPool, grade_parallel, log_line
from .relatorio import Row, write_outputs
from .saida import CORRECTED_DIR, NOT_GRADED_CSV, keep_previous, writable_output
from .scoring import busy_machine_note, mark_copies, timed_out_by_machine
from .similarity import answers_of, compare_class

__all__ = ["BUDGET_MARGIN_S", "MAX_COPIES", "MAX_FILES_PER_STUDENT", "ExecutionResult", "GradingTask", "MachineFailure",
           "Worker", "alembic_head", "grade_class", "plan_class", "preflight"]

_mark_copies = mark_copies  # o nome de antes (tests/test_nfc.py)


class MachineFailure(RuntimeError):
    """A correção não pode rodar nesta máquina: a caixa ou o kernel não começaram (nenhum código de aluno rodou).
    A mensagem diz a causa e o que fazer; nada foi escrito na pasta de saída (nem ``notas.csv``, nem a parte)."""


PREFLIGHT = ("aula-01-self-attention", "03-exercicios")  # o notebook cuja solução :func:`preflight` corrige antes


PREFLIGHT_S = 120.0  # o prazo mínimo dele (s): numa máquina disputada, a caixa pode levar segundos para começar


def preflight(pasta: Path, politica: GradingPolicy, marca: str, mpl: Path | None = None) -> None:
    """Prova, antes de corrigir a turma, que a correção funciona nesta máquina: a solução do notebook
    :data:`PREFLIGHT` (todas as respostas certas) roda como numa correção, nas mesmas caixas e com os mesmos limites:
    o processo do aluno começa e roda todas as células, e o verificador isolado aprova cada verificação. Se nem a
    solução passa aqui (memória ou tempo pequenos demais, uma caixa que não começa), cada aluno honesto sairia com
    zero.

    Raises
    ------
    correcao.isolamento.BwrapMissing
        Sem o bwrap, ou a caixa não começa aqui (a mensagem diz a causa: *user namespaces* bloqueados por um
        perfil seccomp de contêiner, AppArmor...).
    MachineFailure
        A caixa começa, mas a solução não roda até o fim ou não é aprovada (a mensagem diz onde e por quê); ou os
        limites de tempo de ``politica`` são menores que o que a solução levou (:func:`_limits_fit`).
    """
    import nbformat

    g = catalog()[PREFLIGHT]
    nb = nbformat.read(g.source, as_version=4)
    # o prazo da prova é o da máquina, e não o orçamento do professor (a memória e os processos são os da correção, e
    # o tempo de cada célula, ao menos o padrão da política); depois, _limits_fit compara o tempo que a solução levou
    # aos limites pedidos: um limite menor que ele daria tempo_esgotado a todos
    pedida = politica
    politica = dataclasses.replace(politica, notebook_timeout=max(politica.notebook_timeout, PREFLIGHT_S),
                                   cell_timeout=max(politica.cell_timeout, GradingPolicy.cell_timeout))
    w = Worker.boxes_only(pasta, 20, politica, marca)
    w.mpl_cache = mpl
    w.libraries = pasta.parent / STUDENT_LIBRARIES  # a mesma dos processos de correção: feita uma vez
    w.timings = {}  # quanto a solução levou: comparado depois aos limites pedidos pelo professor
    limites = w.limits
    try:
        with NotebookBudget(f"{marca}-sonda", limites, limites.relogio_s, isolar=politica.isolate) as grupo:
            w.budget = w.kernel_box.grupo = w.student_box.grupo = w.verifier_box.grupo = grupo
            res = w.execute(nb, "sonda")
    finally:
        w.verifier.stop()
    reprovadas = [gid for gid in g.checks if gid not in res.verdicts or res.verdicts[gid][0] is not True]
    if not res.kernel_started or res.outcome or reprovadas:
        if not res.kernel_started:
            o_que = f"o notebook não começou na caixa ({res.machine_error or res.outcome or 'sem resposta'})"
        elif res.outcome:
            o_que = f"o notebook de teste parou em {res.where or 'uma célula'} ({res.outcome})"
        else:
            o_que = (f"o verificador isolado não aprovou a solução ({', '.join(reprovadas)}: "
                     f"{res.verdicts.get(reprovadas[0], (None, 'sem resposta'))[1]})")
        raise MachineFailure(
            f"A correção não funciona nesta máquina: {o_que}. Nenhuma nota saiu e nada foi escrito.\n"
            f"O teste é a solução do notebook {PREFLIGHT[1]} da {PREFLIGHT[0]} (todas as respostas certas), nas "
            "mesmas caixas e com os mesmos limites da correção: se ela não passa, nenhum aluno passaria. Confira a "
            f"memória e o tempo (os desta correção: --memoria {pedida.memory_mb} MiB, --tempo-celula "
            f"{pedida.cell_timeout}, --tempo-notebook {pedida.notebook_timeout:g}; os padrões: "
            f"{GradingPolicy.memory_mb} MiB, {GradingPolicy.cell_timeout} e {GradingPolicy.notebook_timeout:g}) e "
            "veja docs/professor.md, \"Isolamento e limites\".")
    _limits_fit(pedida, w.timings)


LIMIT_MARGIN = 2.0  # a prova roda a solução sozinha; a correção, vários notebooks ao mesmo tempo (e a máquina varia)


def _limits_fit(pedida: GradingPolicy, tempos: dict) -> None:
    """Levanta :class:`MachineFailure` se os limites de tempo pedidos (``pedida``) não cabem :data:`LIMIT_MARGIN`
    vezes o que a solução de :data:`PREFLIGHT` levou nesta máquina (``tempos``, de :meth:`Worker.execute`): a prova
    roda a solução sozinha, e a correção roda vários notebooks ao mesmo tempo; sem a margem, um limite justo passava
    na prova e dava ``tempo_esgotado`` a todos os alunos honestos. O notebook de teste é o mais leve do curso, e o
    orçamento de cada entrega inclui ainda a leitura e o retorno: um limite que passa aqui ainda pode ser curto para
    outras aulas (o log da correção diz os tempos esgotados)."""
    notebook = tempos.get("execucao", 0.0)
    celula = max(((rotulo, s) for rotulo, _, s in tempos.get("celulas", [])), key=lambda c: c[1],
                 default=("", 0.0))
    curtos = []
    if pedida.notebook_timeout < LIMIT_MARGIN * notebook:
        curtos.append(f"--tempo-notebook {pedida.notebook_timeout:g} s, e a solução inteira levou "
                      f"{_segundos(notebook)} (sugestão: --tempo-notebook {max(60, math.ceil(3 * notebook)):d}; o "
                      f"padrão é {GradingPolicy.notebook_timeout:g})")
    if pedida.cell_timeout < LIMIT_MARGIN * celula[1]:
        curtos.append(f"--tempo-celula {pedida.cell_timeout:g} s, e a {celula[0]} da solução levou "
                      f"{_segundos(celula[1])} (sugestão: --tempo-celula {max(10, math.ceil(3 * celula[1])):d}; o "
                      f"padrão é {GradingPolicy.cell_timeout:g})")
    if curtos:
        raise MachineFailure(
            "Os limites de tempo desta correção são curtos demais para esta máquina: a solução (todas as respostas "
            f"certas), sozinha, já chega perto deles ou passa: {'; '.join(curtos)}. Na correção, vários notebooks "
            f"rodam ao mesmo tempo, e cada limite precisa de ao menos {LIMIT_MARGIN:g} vezes o tempo da solução; "
            "com esses, todo aluno, mesmo o que acertou tudo, sairia tempo_esgotado. Nenhuma nota saiu e nada "
            f"foi escrito: corrija de novo com {_options_to_raise(curtos)}, ou sem essas opções, com os padrões.")


def _options_to_raise(curtos: list[str]) -> str:
    """Como o professor aumenta os limites de ``curtos``: as variáveis do ``make corrigir`` (quando ele o usou) ou
    as opções da linha de comando (``python3 curso.py --neste-ambiente corrigir`` no pod, sem o make)."""
    nomes = [(opcao, variavel) for opcao, variavel in (("--tempo-celula", "TEMPO_CELULA="),
                                                        ("--tempo-notebook", "TEMPO_NOTEBOOK="))
             if any(c.startswith(opcao) for c in curtos)]
    if "MAKELEVEL" in os.environ:
        return f"{' e '.join(v for _, v in nomes)} maior(es) no make corrigir"
    return f"{' e '.join(o for o, _ in nomes)} maior(es)"


def _segundos(s: float) -> str:
    return f"{s:.1f} s".replace(".", ",")


# as situações de uma entrega que foi ao kernel (as outras, como arquivo_invalido, nem chegam a uma caixa)
_KERNEL_STATUSES = frozenset({"ok", "parcial", "zero", "revisar", "tempo_esgotado", "memoria_esgotada",
                              "kernel_morreu", "erro_na_correcao", "falha_da_maquina"})


def _machine_failures(rows: list[Row], saida: Path, written: bool) -> None:
    """Levanta :class:`MachineFailure` se alguma entrega não rodou por falha da máquina (o kernel não começou,
    antes de qualquer código de aluno): um zero ali seria injusto. Com ``written=False`` (antes de escrever), só
    quando todas as entregas executadas falharam assim: uma turma inteira que não rodou não é escrita. Com
    ``written=True`` (depois), quando alguma falhou: as outras linhas estão escritas, essas dizem
    ``falha_da_maquina`` (sem pontos, nunca ``zero``), e o comando sai com erro para que sejam corrigidas de novo."""
    falhas = [r for r in rows if r.status == "falha_da_maquina"]
    executadas = [r for r in rows if r.status in _KERNEL_STATUSES]
    if not falhas or (not written and len(falhas) < len(executadas)):
        return
    exemplos = "; ".join(f"{r.student} · {r.notebook}" for r in falhas[:5]) + ("; ..." if len(falhas) > 5 else "")
    disse = next((m for m in falhas[0].reasons if m.startswith("a correção falhou nesta máquina")), "")
    feito = (f"As outras linhas estão em {saida}; essas dizem falha_da_maquina, sem pontos: corrija-as de novo."
             if written else "Nada foi escrito.")
    raise MachineFailure(
        f"A correção não terminou bem: em {len(falhas)} de {len(executadas)} notebook(s) ({exemplos}), o kernel não "
        "começou na caixa desta máquina, antes de qualquer código de aluno (não é culpa dos alunos). "
        f"{feito}\n{disse}\nSe continuar, veja docs/professor.md, \"Isolamento e limites\".")


def grade_class(entregas: Path, saida: Path, politica: GradingPolicy | None = None, *, log=print,
                marca: str | None = None, guardar_notebooks: bool = False, parte: tuple[int, int] | None = None,
                anexo_parte: dict | None = None, preflight_check: bool = True, class_reports: bool = True,
                **limites) -> list[Row]:
    """Corrige a turma de ``entregas`` (pasta ou .zip, ou uma lista delas: as partes da mesma turma, juntadas
    por aluno por :func:`correcao.entregas.read_submissions`) e escreve ``notas.csv`` e os retornos em ``saida``.

    ``class_reports``: com ``False`` (o ``validar`` de um aluno), sem o relatório da turma e a similaridade.
    ``politica``: os limites e as opções da correção (:class:`correcao.politica.GradingPolicy`; sem ela, a padrão).
    ``limites``: por cima dela, pelos nomes antigos (``cell_timeout``, ``notebook_timeout``, ``workers``,
    ``memoria_mb``, ``memoria_total_mb``, ``disco_mb``, ``isolar``; veja :meth:`GradingPolicy.build`); o orçamento de
    relógio de cada notebook vai da leitura ao retorno (veja :func:`grade_parallel`); sem isolamento, cada linha
    leva o aviso. ``marca`` identifica os processos desta correção (veja
    :func:`correcao.isolamento.leftover_pids`); ``guardar_notebooks`` guarda os notebooks executados em
    ``saida/notebooks-corrigidos/`` (o :mod:`correcao.validar` os lê). ``parte=(K, N)`` corrige só os alunos da
    parte ``K`` de ``N`` (:func:`correcao.partes.part_of`) e, em vez de ``notas.csv``, grava ``saida/parte.json``
    (com ``anexo_parte``), que :func:`correcao.partes.join_parts` junta às outras partes. Levanta
    :class:`correcao.isolamento.BwrapMissing` se o bwrap faltar ou a caixa não funcionar aqui,
    :class:`MachineFailure` se a correção não rodar nesta máquina (``preflight_check``: antes de tudo, um notebook de
    teste nas caixas, veja :func:`preflight`; e, depois, qualquer entrega cujo kernel não começou: nada é escrito,
    nunca uma turma de zeros; também quando os limites de tempo pedidos são menores que o tempo da solução) e
    ``ValueError`` com ``parte`` e ``guardar_notebooks`` juntos, com uma ``saida`` que não se pode escrever
    (:func:`correcao.saida.writable_output`) ou sem nenhuma entrega em ``entregas`` (nos três casos, nada é
    escrito). Uma correção que já estava em ``saida`` vai para ``saida/anteriores/``
    (:func:`correcao.saida.keep_previous`).
    """
    if parte is not None and guardar_notebooks:
        raise ValueError("guardar_notebooks: não vale com parte (os notebooks corrigidos ficam em cada máquina)")
    politica = GradingPolicy.build(politica, **limites)
    saida = Path(saida).resolve()
    writable_output(saida, entregas)  # antes de corrigir: uma saída que não se pode escrever custaria a correção
    everything = catalog()
    marca = marca or secrets.token_hex(8)
    if politica.isolate:  # falha cedo, com a mensagem de instalação, sem o bwrap
        Sandbox(politica.limits(), isolar=True, marca=marca)
    with tempfile.TemporaryDirectory(prefix="correcao-") as tmp_name:
        tmp = Path(tmp_name)
        # os processos de correção e o cache de fontes começam já: importam o nbgrader (~1,5 s) e montam o cache
        # enquanto este processo lê e planeja a turma
        pool = GradingPool(tmp, politica, marca, log)
        try:
            teste = _start_preflight(pool, tmp, preflight_check)
            rows, fora, entregas_lidas = _grade_with_pool(pool, entregas, tmp, everything, parte, log, teste)
        except BaseException:  # uma entrada recusada (ou a máquina): a prova do começo, se ainda roda, para já
            kill_sandbox(marca)
            raise
        finally:
            pool.close()
        _machine_failures(rows, saida, written=False)
        mark_copies(rows)
        for r in rows:  # nada de caminhos desta máquina: a mesma turma dá sempre o mesmo notas.csv
            r.reasons = [m.replace(str(tmp), "…") for m in r.reasons]
        rows.sort(key=lambda r: (r.student, r.assignment, r.notebook, r.arquivo))
        kill_sandbox(marca)  # nada do aluno roda quando as notas são escritas
        remove_cgroups(f"{marca}-")
        if parte is not None:
            from .partes import class_fingerprint, write_part

            write_part(saida, parte, rows, fora, class_fingerprint(entregas_lidas), entregas_lidas.alunos,
                       politica.part_options(), anexo_parte, respostas=answers_of(rows))
            _machine_failures(rows, saida, written=True)
            return rows
        _write_class(rows, everything, saida, fora, log, class_reports=class_reports,
                     guardar_notebooks=guardar_notebooks)
    return rows


def _write_class(rows: list[Row], everything: dict, saida: Path, fora: list, log, *, class_reports: bool,
                 guardar_notebooks: bool) -> None:
    """O fim de :func:`grade_class` (sem ``parte``): a correção anterior de ``saida`` guardada em ``anteriores/``,
    a similaridade, ``notas.csv``, os retornos e o relatório da turma; levanta :class:`MachineFailure` depois de
    escrever, se alguma entrega não rodou por falha da máquina; com ``guardar_notebooks``, os notebooks executados
    em ``saida/notebooks-corrigidos/`` (e ``Row.autograded`` passa a apontar para lá)."""
    anterior = keep_previous(saida)
    if anterior is not None:
        log(f"  a correção que já estava em {saida} foi guardada em {anterior} (nada dela foi apagado)")
    if class_reports:
        _similarity(rows, saida, log)  # similaridade.html e a coluna similaridade (nenhuma nota muda)
    write_outputs(rows, everything, saida, fora, class_report=class_reports)  # e o relatório da turma
    _machine_failures(rows, saida, written=True)
    if fora:
        log(f"  {len(fora)} arquivo(s) não corrigido(s): veja {saida / NOT_GRADED_CSV}")
    if guardar_notebooks:
        for k, r in enumerate(rows):
            if r.autograded and r.autograded.exists():
                dest = saida / CORRECTED_DIR / f"{k:05d}.ipynb"
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(r.autograded, dest)
                r.autograded = dest


def _similarity(rows: list[Row], saida: Path, log) -> None:
    """:func:`correcao.similarity.compare_class`, sem nunca custar as notas: se ela falhar (o ``copydetect`` não
    instalado, por exemplo), o log diz por quê e a correção escreve ``notas.csv`` e os retornos assim mesmo."""
    try:
        compare_class(rows, saida)
    except ImportError as exc:
        log(f"  similaridade.html não foi feita: falta o pacote {exc.name or 'copydetect'} (pip install "
            "'copydetect>=0.5,<0.6', ou make instalar); as notas não mudam")
    except Exception as exc:  # noqa: BLE001 - a página é um relatório à parte: as notas saem mesmo sem ela
        log(f"  similaridade.html não foi feita ({type(exc).__name__}: {str(exc)[:200]}); as notas não mudam")


class Preflight:
    """:func:`preflight` numa thread, ao lado da leitura, do plano e da correção da turma (espera o cache de fontes
    do matplotlib, como o primeiro notebook). Nada é escrito antes de :meth:`wait`: se a prova falha, a correção
    para ali (:meth:`check`, chamada a cada volta de :func:`grade_parallel`) e as linhas já corrigidas se perdem,
    sem nenhuma nota escrita."""

    def __init__(self, thread: threading.Thread | None, erro: list):
        self._thread, self._erro = thread, erro

    def check(self) -> None:
        """Levanta o erro da prova, se ela já terminou com um (sem esperar)."""
        if self._erro:
            raise self._erro[0]

    def wait(self) -> None:
        """Espera a prova terminar e levanta o erro dela (nada, se passou ou se estava desligada)."""
        if self._thread is not None:
            self._thread.join()
        self.check()


def _start_preflight(pool: "GradingPool", tmp: Path, on: bool) -> Preflight:
    """Começa :func:`preflight` numa thread (nada, sem ``on``); veja :class:`Preflight`."""
    erro: list[BaseException] = []
    if not on:
        return Preflight(None, erro)

    def rodar() -> None:
        try:
            pool.wait_matplotlib()
            preflight(tmp / "sonda", pool.policy, pool.tag, pool.mpl)
        except BaseException as exc:  # noqa: BLE001 - levantado de novo em espera()
            erro.append(exc)

    thread = threading.Thread(target=rodar, daemon=True, name="sonda")
    thread.start()
    return Preflight(thread, erro)


def _grade_with_pool(pool: GradingPool, entregas, tmp: Path, everything: dict, parte, log,
                     teste: Preflight | None = None) -> tuple[list[Row], list[tuple], Submissions]:
    """O miolo de :func:`grade_class`: lê a turma, começa os processos de ``pool`` (até os ``workers`` da política,
    um por notebook a corrigir), planeja a turma enquanto eles sobem e corrige cada entrega uma vez só. Uma entrega
    com tempo esgotado custa o orçamento dela uma vez e nunca é corrigida de novo (de novo, sozinha, um notebook que
    dorme custaria outro orçamento inteiro a cada cópia); quando o tempo parece ter sido da máquina
    (:func:`timed_out_by_machine`), o log diz isso ao professor (:func:`busy_machine_note`). Devolve as linhas, os não
    corrigidos e as entregas lidas."""
    workers = pool.policy.resolved_workers()
    entregas_lidas = read_submissions(entregas, tmp)  # cópia interna: o nbgrader e o aluno não veem o original
    if not entregas_lidas.arquivos:  # nenhum arquivo de aluno: só pastas vazias e restos do sistema
        havia = [f"{len(entregas_lidas.alunos)} pasta(s) de aluno vazia(s)"] if entregas_lidas.alunos else []
        havia += [f"{len(entregas_lidas.lixo)} resto(s) do sistema, ignorados"] if entregas_lidas.lixo else []
        raise ValueError(f"ENTREGAS: nenhuma entrega encontrada{' (só ' + ' e '.join(havia) + ')' if havia else ''}; "
                         "o formato é <aluno>/<notebook>.ipynb, numa pasta ou num .zip (veja docs/professor.md); "
                         "nada foi corrigido nem escrito")
    da_parte = None
    if parte is not None:  # a turma toda foi lida (a impressão digital é dela); só os alunos da parte vão ao kernel
        from .partes import part_of

        da_parte = {a for a in {*entregas_lidas.alunos, "", *(x.aluno for x in entregas_lidas.arquivos)}
                    if part_of(a, parte[1]) == parte[0]}
    candidatos = sum(1 for a in entregas_lidas.arquivos if a.looks_like_notebook
                     and (da_parte is None or a.aluno in da_parte))
    for _ in range(min(workers, candidatos)):  # ler é rápido; o plano (que lê cada notebook) não
        pool.start_worker()
    plan, rows, fora = plan_class(entregas_lidas, everything, tmp / "saneados", alunos=da_parte,
                                  politica=pool.policy)
    if entregas_lidas.lixo:
        log(f"  {len(entregas_lidas.lixo)} resto(s) do macOS/Windows/Jupyter ignorado(s) (__MACOSX, ._*, "
            ".DS_Store, .ipynb_checkpoints...)")
    for r in rows:  # as linhas que não vão a uma caixa (arquivo inválido, sem notebook...) também aparecem no log
        log(log_line(r, "não executado" + (f": {r.reasons[0][:160]}" if r.reasons else "")))
    teste = teste or Preflight(None, [])
    # a turma começa ao lado da prova do começo (sem esperá-la: ~2 s por correção); se a prova falha, a correção
    # para ali, e nada é escrito (as notas só saem depois de teste.wait())
    graded = grade_parallel(pool, plan, workers, teste.check)
    teste.wait()  # a correção funciona nesta máquina (senão, nenhuma nota sai)
    for row in graded:
        if timed_out_by_machine(row):
            log(busy_machine_note(row, pool.policy))
    sem_memoria = [r for r in graded if r.status == "memoria_esgotada"]
    if sem_memoria:
        log(f"  {len(sem_memoria)} notebook(s) com memória esgotada ({', '.join(r.student for r in sem_memoria[:5])}"
            f"{', ...' if len(sem_memoria) > 5 else ''}): o limite por processo desta correção é "
            f"--memoria {pool.policy.memory_mb} MiB; se o código deles é o do curso (um modelo carregado, como na "
            "Aula 3), corrija-os outra vez, com mais memória (o padrão é "
            f"{GradingPolicy.memory_mb} MiB)")
    return rows + graded, fora, entregas_lidas
