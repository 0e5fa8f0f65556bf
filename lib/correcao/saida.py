"""A pasta de saída de uma correção (``--saida``, ``SAIDA=``): o nome de cada coisa que a correção escreve ali, a
conferência antes de corrigir (:func:`writable_output`) e a correção anterior guardada em ``anteriores/``
(:func:`keep_previous`).

Os nomes ficam todos aqui, e quem escreve cada arquivo os importa daqui: um arquivo de saída novo é uma constante
e uma entrada em :data:`OUTPUT_NAMES`. Um AVA novo (:class:`correcao.lms.LMSExporter`) declara os dele em
``outputs``, com os nomes daqui (o teste ``test_o_que_um_ava_escreve_vai_para_anteriores`` confere os dois lados).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .class_report import CHECKS_CSV, REPORT_CSV, REPORT_HTML
from .entregas import input_paths

GRADES_CSV = "notas.csv"  # uma linha por aluno e notebook (correcao.relatorio.write_outputs)
NOT_GRADED_CSV = "nao-corrigidos.csv"  # o que foi entregue e não é notebook
FEEDBACK_DIR = "retorno"  # retorno/<aluno>/<aula>-<notebook>.html
SIMILARITY_PAGE = "similaridade.html"  # correcao.similarity
CORRECTED_DIR = "notebooks-corrigidos"  # com guardar_notebooks: os notebooks executados (o validar os lê)
PART_FILE = "parte.json"  # a saída de uma parte de uma turma dividida (correcao.partes)
ROSTER_CSV = "turma-{aula}.csv"  # o hub: cada aluno da turma e o que ele entregou
MOODLE_WORKSHEET = "moodle-notas.csv"  # a planilha de notas que o Moodle importa (correcao.moodle)
MOODLE_FEEDBACK_ZIP = "moodle-retornos.zip"  # os retornos, um arquivo por participante do Moodle
PREVIOUS_DIR = "anteriores"

# o que uma correção escreve na pasta de saída (nomes ou padrões glob): o que keep_previous guarda
OUTPUT_NAMES = (GRADES_CSV, NOT_GRADED_CSV, FEEDBACK_DIR, CHECKS_CSV, REPORT_HTML, REPORT_CSV, SIMILARITY_PAGE,
                CORRECTED_DIR, PART_FILE, ROSTER_CSV.format(aula="*"), MOODLE_WORKSHEET, MOODLE_FEEDBACK_ZIP)


def writable_output(saida: Path, entregas=()) -> None:
    """Confere, antes de corrigir (sem gravar nada), que a pasta de saída ``saida`` pode ser criada ou escrita, e
    que ela não fica dentro de uma pasta de ``entregas`` (uma pasta ou um ``.zip``, ou uma lista deles): a próxima
    correção a leria como a entrega de um aluno.

    Raises
    ------
    ValueError
        ``saida`` (ou uma pasta no caminho dela) é um arquivo, não há permissão de escrita nela (ou na pasta mais
        próxima que já existe), ou ela está dentro das entregas: a mensagem diz qual e o que fazer.
    """
    saida = Path(saida)
    existente = next(p for p in (saida, *saida.parents) if p.exists())
    if not existente.is_dir():
        qual = "é um arquivo" if existente == saida else f"está dentro de “{existente}”, que é um arquivo"
        raise ValueError(f"SAIDA (--saida): “{saida}” {qual}, e não uma pasta: escolha uma pasta (nova ou a de "
                         "uma correção anterior); nada foi corrigido nem escrito")
    if not os.access(existente, os.W_OK | os.X_OK):
        raise ValueError(f"SAIDA (--saida): sem permissão de escrita em “{existente}”: escolha, com --saida (ou "
                         "SAIDA= no make corrigir), uma pasta em que este usuário possa escrever (a sua pasta pessoal, "
                         "por exemplo); nada foi corrigido nem escrito")
    for entrada in (p.resolve() for p in input_paths(entregas)):
        if entrada.is_dir() and (saida.resolve() == entrada or entrada in saida.resolve().parents):
            raise ValueError(f"SAIDA (--saida): “{saida}” fica dentro da pasta das entregas, “{entrada}”: na próxima "
                             "correção, ela seria lida como a entrega de um aluno. Escolha uma pasta fora dela (o "
                             "padrão é build/correcao, na pasta do curso); nada foi corrigido nem escrito")


def keep_previous(saida: Path) -> Path | None:
    """Se ``saida`` já tem uma correção (``notas.csv``), move os arquivos dela (:data:`OUTPUT_NAMES`) para
    ``saida/anteriores/<data-hora>/`` (a data do ``notas.csv`` dela) e devolve essa pasta; senão, ``None``. Outros
    arquivos da pasta ficam onde estão. Assim, corrigir outra aula (ou de novo) na mesma pasta nunca apaga as notas
    de antes."""
    notas = Path(saida) / GRADES_CSV
    if not notas.is_file():
        return None
    marca = time.strftime("%Y-%m-%d-%H%M%S", time.localtime(notas.stat().st_mtime))
    destino = Path(saida) / PREVIOUS_DIR / marca
    k = 1
    while destino.exists():
        k += 1
        destino = Path(saida) / PREVIOUS_DIR / f"{marca}-{k}"
    destino.mkdir(parents=True)
    for padrao in OUTPUT_NAMES:
        for item in sorted(Path(saida).glob(padrao)):
            shutil.move(str(item), str(destino / item.name))
    return destino
