"""Cada tempo e cada tamanho do README (e do guia do professor e do CONTRIBUTING.md) tem a sua fonte aqui.

Duas espécies de número:

- **medidas** (instalação, ``make lab``, testes, modelo, explorador, correção): os valores medidos ficam
  na tabela, com a máquina, o dia e de onde vieram (uma linha do ``make bench`` ou um passo do ``.ci/run``
  cujo tempo a CI registra). O README diz a faixa (do menor ao maior valor), escrita a partir deles: mudou
  a medida, o teste exige o README novo; mudou o README, o teste exige a medida;
- **limites do código** (memória, tempo por célula, tamanho de arquivo...): o número do README é o do código.

Um tempo ou tamanho no README que não esteja aqui faz o teste falhar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# os três guias, um por leitor, lidos como um texto só: um número pode mudar de guia sem perder a fonte
DOCS = ("README.md", "docs/professor.md", "CONTRIBUTING.md")


def _sem_secao(texto: str, titulo: str) -> str:
    """``texto`` sem a seção ``## titulo`` (até a próxima seção de mesmo nível)."""
    antes, achou, depois = texto.partition(f"\n## {titulo}\n")
    return antes + ("\n## " + depois.split("\n## ", 1)[1] if achou and "\n## " in depois else "")


# (do guia do professor, até as seções do JupyterHub e do Moodle, cujos limites medidos trazem o dia e a máquina
# ao lado de cada número, nas medidas do teste do hub; do CONTRIBUTING.md, sem a seção dos tempos estimados dos
# notebooks, que saem da regra de leitura escrita nela e que tests/test_tempo_estimado.py confere)
README = "\n\n".join(_sem_secao((ROOT / d).read_text(encoding="utf-8").split("\n## No JupyterHub")[0],
                                  "Tempos estimados") for d in DOCS)
MAQUINA = "2 núcleos, 24 GiB, sem GPU, Python 3.11"


@dataclass(frozen=True)
class Medida:
    """Uma medida do README: ``valores`` (na ``unidade``) e a ``fonte``: ``bench:<início da linha impressa
    pelo make bench>`` ou ``ci:<comando que o .ci/run cronometra>`` ou ``arquivo:<o que foi medido>``."""

    nome: str
    valores: tuple
    unidade: str
    fonte: str
    quando: str


def _num(x: float, casas: int) -> str:
    return f"{x:.{casas}f}".replace(".", ",")


def escrever(v: float, unidade: str) -> str:
    """Um valor como o README o escreve: ``2 min 20 s``, ``45 s``, ``3,2 s``, ``60 ms``, ``190 MB``."""
    if unidade == "s":
        if v >= 60:
            m, s = divmod(round(v), 60)
            return f"{m} min {s} s" if s else f"{m} min"
        return f"{_num(v, 1)} s" if v < 10 else f"{v:.0f} s"
    if unidade == "ms":
        return f"{_num(v, 1)} ms" if v < 10 else f"{v:.0f} ms"
    return f"{v:.0f} {unidade}"


def faixa(m: Medida) -> str:
    """``de A a B`` (os valores medidos, do menor ao maior), ou só ``A`` se os dois se escrevem igual."""
    lo, hi = escrever(min(m.valores), m.unidade), escrever(max(m.valores), m.unidade)
    return lo if lo == hi else f"de {lo} a {hi}"


CI = "registro da CI (.ci/run em clones novos, esta máquina)"
LAB = "bench:make lab (curso.py lab) até o JupyterLab responder"
E5 = "bench:Aula 3 (multilingual-e5-small em NumPy): carregar"
EXPLORADOR = "bench:Explorador, {n} tokens"
TURMA = "bench:Correção da turma de exemplo (2 processos, caixa bwrap)"
HONESTO = "bench:subconjunto honesto ({k} notebooks), {modo.replace('_', ' ')}"

MEDIDAS = [
    Medida("torch", (191_794_682 / 1e6,), "MB",
           "arquivo:torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl (191.794.682 bytes)", "2026-11-29"),
    # `time make instalar`: sete clones novos (2026-11-29 e 2026-11-30)
    Medida("instalar", (140.0, 140.2, 146.3, 147.8, 144.1, 150.2, 145.7), "s", "ci:make instalar", "2026-11-30"),
    # o menor e o maior de cada execução do make bench (3 vezes cada)
    Medida("lab", (9.5, 10.3, 9.1, 9.8), "s", LAB, "2026-11-30"),
    # o mesmo passo do .ci/run (python3 curso.py test, com tudo instalado), em dois clones novos, depois de os
    # notebooks com o nbval saírem do make test (antes, 88,97 s com eles) e de os testes usarem uma thread do
    # OpenBLAS por processo do pytest -n. O make test-lento: 1146,23 s antes disso e de os dois arquivos do
    # navegador rodarem lado a lado (e 1277,28 s antes de a junção das partes ser comparada numa parte da turma)
    # Em 2026-12-04, com 1.990 testes (a correção como o professor a usa, as trapaças achadas, a biblioteca do aluno
    # por correção), duas vezes nesta árvore, com a máquina livre (antes: 36,76 s e 44,78 s, em 2026-12-02)
    Medida("test", (96.0, 105.18), "s", "ci:make test", "2026-12-04"),
    Medida("lento", (737.66,), "s", "ci:make test-lento", "2026-12-02"),
    Medida("carregar", (0.561, 0.753), "s", E5, "2026-11-30"),
    Medida("frase", (45, 42), "ms", E5, "2026-11-30"),
    Medida("explorador12", (2.3, 3.6), "ms", EXPLORADOR, "2026-11-30"),
    Medida("explorador64", (14.4, 14.0), "ms", EXPLORADOR, "2026-11-30"),
    # depois de o kernel da correção deixar de desenhar as figuras (correcao._sem_figuras)
    Medida("turma", (227,), "s", TURMA, "2026-12-02"),
    Medida("por_notebook", (3.3,), "s", TURMA, "2026-12-02"),
    Medida("honesto_caixa", (4.6,), "s", HONESTO, "2026-12-02"),
    Medida("honesto_sem", (4.8,), "s", HONESTO, "2026-12-02"),
    # a mesma turma e o mesmo código em duas máquinas de 2 núcleos (2026-12-02: 2,87 s numa, 1,06 s noutra)
    Medida("turma_grande", (2.87, 1.06), "s", "bench:Turma grande e honesta", "2026-12-02"),
    # com o verificador residente (correcao.verifier_server), nesta máquina; a CPU da máquina: 1,19 s por notebook
    Medida("turma_grande_residente", (0.64,), "s", "bench:Turma grande e honesta", "2026-12-04"),
    # em segundos de CPU do processo (no relógio, com a máquina dividida com outros processos, de 8,8 s a 10,3 s com
    # carga de 15 a 17; antes, o make bench media o backward da biblioteca, e não o da solução, só no relógio)
    Medida("treino_aula5", (0.6, 0.7, 0.7, 0.6), "s", "bench:Aula 5, treino padrão do 04-projeto (120 passos)",
           "2026-12-03"),
]

# O número do README -> de onde ele vem no código (valor conferido abaixo).
LIMITES = {
    "2 GiB": "correcao.politica.GradingPolicy.memory_mb",
    "256 MiB": "correcao._caixa.MAX_FILE_MIB",
    "(256)": "correcao.isolamento.Limits.processos",
    "30 s": "correcao.politica.GradingPolicy.cell_timeout",
    "180 s": "correcao.politica.GradingPolicy.notebook_timeout",
    "50 MB": "correcao.entregas.MAX_FILE_BYTES",
    "(512 MiB)": "correcao.politica.GradingPolicy.disk_mb",
    "(3 GiB,": "correcao.politica.GradingPolicy.notebook_memory_mb",
    "encerrado 3 s depois": "correcao._aluno.ALARM_RETRIES (o alarme se repete a cada segundo)",
    "mais de 20 MB": "correcao.catalogo.MAX_NOTEBOOK_BYTES",
    "500 células": "correcao.catalogo.MAX_CELLS",
    "têm\n  20 s": "correcao.catalogo.READ_TIMEOUT_S",
    "até 1 MB": "correcao._executar.MAX_CELL_OUTPUT",
    "até 4 MB": "correcao._executar.MAX_NOTEBOOK_OUTPUT",
    "13 GB": "tests/turma_exemplo/gerar.py: MEMORIA (o pedido do aluno dano-memoria)",
    "espera até 5 s": "curso.PROBE_TIMEOUT_S (a sondagem do índice de CPU do PyTorch)",
}

NUMERO = re.compile(r"\d+(?:[.,]\d+)?\s?(?:min|ms|s|MB|GB|GiB|MiB|KB|h)\b")


def _trechos_cobertos() -> list[tuple[int, int]]:
    spans = []
    for texto in [faixa(m) for m in MEDIDAS] + list(LIMITES) + [MAQUINA]:
        spans += [(x.start(), x.end()) for x in re.finditer(re.escape(texto), README)]
    return spans


def test_todo_tempo_e_tamanho_do_readme_tem_fonte():
    cobertos = _trechos_cobertos()
    sem_fonte = [README[max(0, x.start() - 30):x.end()].replace("\n", " ") for x in NUMERO.finditer(README)
                 if not any(a <= x.start() and x.end() <= b for a, b in cobertos)]
    assert not sem_fonte, f"números do README sem medida nem limite em {Path(__file__).name}: {sem_fonte}"


@pytest.mark.parametrize("m", MEDIDAS, ids=lambda m: m.nome)
def test_cada_medida_aparece_no_readme_como_a_faixa_medida(m):
    assert len(m.valores) >= 1 and m.quando
    assert faixa(m) in README, f"o README deveria dizer “{faixa(m)}” ({m.nome}; fonte: {m.fonte})"
    espécie, _, o_que = m.fonte.partition(":")
    if espécie == "bench":  # a linha existe no make bench
        assert o_que in (ROOT / "scripts" / "bench.py").read_text(encoding="utf-8"), m.fonte
    elif espécie == "ci":  # o passo é cronometrado pelo .ci/run
        assert f"time {o_que}" in (ROOT / ".ci" / "run").read_text(encoding="utf-8"), m.fonte
    else:
        assert espécie == "arquivo" and o_que, m.fonte


def test_medidas_de_tempo_dizem_a_maquina():
    if any(m.unidade in {"s", "ms"} for m in MEDIDAS):
        assert MAQUINA in README


def test_limites_do_readme_sao_os_do_codigo():
    from correcao import _caixa, entregas, isolamento
    from correcao.politica import GradingPolicy

    padrao = GradingPolicy()  # os limites de corrigir, validar, do hub e das partes (tests/test_politica.py)
    assert padrao.memory_mb == 2048
    assert padrao.cell_timeout == 30 and padrao.notebook_timeout == 180
    assert _caixa.MAX_FILE_MIB == 256 and isolamento.Limits.processos == 256
    assert entregas.MAX_FILE_BYTES == 50 * 2**20
    from correcao import _executar, catalogo

    assert padrao.disk_mb == 512 and padrao.notebook_memory_mb == 3 * 1024
    assert catalogo.READ_TIMEOUT_S == 20
    from correcao import _aluno

    assert _aluno.ALARM_RETRIES == 3
    assert catalogo.MAX_NOTEBOOK_BYTES == 20 * 2**20 and catalogo.MAX_CELLS == 500
    assert _executar.MAX_CELL_OUTPUT == 2**20 and _executar.MAX_NOTEBOOK_OUTPUT == 4 * 2**20
    assert "13 * 2**30" in (ROOT / "tests" / "turma_exemplo" / "gerar.py").read_text(encoding="utf-8")
    assert "\nPROBE_TIMEOUT_S = 5\n" in (ROOT / "curso.py").read_text(encoding="utf-8")
    for texto in LIMITES:
        assert texto in README, texto


def test_sem_secao():
    texto = "a\n## Um\n1 h\n## Tempos estimados\n3 h\n### sub\n4 h\n## Dois\n2 h"
    assert _sem_secao(texto, "Tempos estimados") == "a\n## Um\n1 h\n## Dois\n2 h"
    assert _sem_secao("a\n## Tempos estimados\n3 h", "Tempos estimados") == "a"
    assert _sem_secao(texto, "Outra") == texto


def test_escrita_das_faixas():
    assert escrever(140.0, "s") == "2 min 20 s" and escrever(120.2, "s") == "2 min"
    assert escrever(3.24, "s") == "3,2 s" and escrever(45.4, "s") == "45 s" and escrever(0.84, "s") == "0,8 s"
    assert faixa(Medida("x", (140.0, 147.8), "s", "ci:make instalar", "hoje")) == "de 2 min 20 s a 2 min 28 s"
    assert faixa(Medida("x", (3.21, 3.24), "s", "ci:make instalar", "hoje")) == "3,2 s"
