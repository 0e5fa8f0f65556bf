"""A correção nunca falha em silêncio: numa máquina em que a caixa ou o kernel não começam (um pod que bloqueia
*user namespaces*, memória pequena demais), nenhuma turma de zeros sai com código 0.

- a causa que o bwrap escreve vira uma mensagem em pt-BR com o conserto (:func:`correcao.isolamento._diagnose`);
- num ``/proc`` com caminhos mascarados (como o runc faz num contêiner), a caixa roda sem ``/proc`` próprio;
- antes de corrigir, a solução de um notebook roda nas caixas, com os limites da correção
  (:func:`correcao.motor.preflight`); se ela não for aprovada, nada é escrito (:class:`correcao.motor.MachineFailure`);
- uma entrega cujo kernel não começou é ``falha_da_maquina`` (nunca ``kernel_morreu`` nem ``zero``), o comando sai
  com erro e a junção das partes recusa uma parte assim.

Os testes com uma turma de verdade (nas caixas) são ``lento``; a simulação completa de um pod (não root, ``/proc``
mascarado, user namespaces bloqueados pelo seccomp) está em ``tests/hub/test_pod_simulado.py`` (``make test-hub``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import catalogo, isolamento, partes
from correcao.motor import MachineFailure, _machine_failures, grade_class
from correcao.relatorio import Row

ROOT = Path(__file__).resolve().parents[1]
AULA1 = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
SEM_BWRAP = pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")

# o que o bwrap escreve (bubblewrap 0.8) em cada uma das falhas de um contêiner
SEM_USERNS = ("bwrap: No permissions to create new namespace, likely because the kernel does not allow "
              "non-privileged user namespaces. See <https://deb.li/bubblewrap>")
SEM_USERNS_ANTIGO = "bwrap: No permissions to creating new namespace, likely because the kernel does not allow..."
APPARMOR = "bwrap: Failed to make / slave: Permission denied"


@pytest.mark.parametrize("stderr, causa", [
    (SEM_USERNS, "seccomp"), (SEM_USERNS_ANTIGO, "seccomp"), (APPARMOR, "AppArmor"),
    ("bwrap: algo novo que ninguém previu", "motivo que o curso não conhece"),
])
def test_a_causa_do_bwrap_vira_mensagem_com_o_conserto(stderr, causa):
    msg = isolamento._diagnose(stderr)
    assert causa in msg
    assert stderr.splitlines()[-1][:200] in msg  # o que o bwrap disse, para quem for investigar
    assert "nenhuma entrega foi corrigida" in msg and "--sem-isolamento" in msg
    if causa == "seccomp":  # o conserto no Kubernetes: o perfil do curso, que o guia explica
        assert "hub/seccomp/curso-caixa.json" in msg and "Localhost" in msg
        assert (ROOT / "hub" / "seccomp" / "curso-caixa.json").is_file()


def _linha(aluno: str, status: str) -> Row:
    motivo = ("a correção falhou nesta máquina antes de rodar o notebook (o kernel não começou na caixa: erro: X)"
              if status == "falha_da_maquina" else "")
    return Row(aluno, AULA1.assignment, AULA1.notebook, scores=AULA1.zero_scores(), maximum=AULA1.max_auto,
               status=status, reasons=[motivo] if motivo else [])


def test_turma_inteira_sem_kernel_nao_e_escrita(tmp_path):
    rows = [_linha("ana", "falha_da_maquina"), _linha("bia", "falha_da_maquina"),
            Row("caio", "", "", status="sem_notebooks")]  # quem não foi ao kernel não conta
    with pytest.raises(MachineFailure, match=r"em 2 de 2 notebook\(s\).*Nada foi escrito") as exc:
        _machine_failures(rows, tmp_path, written=False)
    assert "ana · 03-exercicios" in str(exc.value) and "erro: X" in str(exc.value)


def test_uma_entrega_sem_kernel_nao_impede_a_turma_mas_o_comando_sai_com_erro(tmp_path):
    rows = [_linha("ana", "falha_da_maquina"), _linha("bia", "zero"), _linha("caio", "ok")]
    _machine_failures(rows, tmp_path, written=False)  # as outras linhas são escritas
    with pytest.raises(MachineFailure, match=r"em 1 de 3 notebook\(s\) \(ana · 03-exercicios\).*corrija-as de novo"):
        _machine_failures(rows, tmp_path, written=True)
    _machine_failures([_linha("bia", "zero"), _linha("caio", "kernel_morreu")], tmp_path, written=True)  # do aluno


def test_juntar_recusa_uma_parte_que_nao_corrigiu(tmp_path):
    nomes = [f"aluno-{i}" for i in range(20)]
    um = next(n for n in nomes if partes.part_of(n, 2) == 1)
    dois = next(n for n in nomes if partes.part_of(n, 2) == 2)
    linhas = {1: [_linha(um, "ok")], 2: [_linha(dois, "falha_da_maquina")]}
    pastas = []
    for k, rows in linhas.items():
        pasta = tmp_path / f"parte-{k}"
        partes.write_part(pasta, (k, 2), rows, [], "turma", sorted([um, dois]), {"tempo_celula": 30}, None)
        pastas.append(pasta)
    with pytest.raises(partes.PartsError, match=rf"parte 2/2 \(parte-2\) não corrigiu 1 entrega\(s\) \({dois}\)"):
        partes.join_parts(pastas, tmp_path / "saida", log=lambda *_: None)
    assert not (tmp_path / "saida" / "notas.csv").exists()


def test_status_da_falha_da_maquina_tem_nome_para_o_aluno():
    from correcao.relatorio import STATUSES

    assert "não é culpa do aluno" in STATUSES["falha_da_maquina"]


def _turma(tmp_path: Path) -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo.gerar import a_mao

    turma = tmp_path / "turma"
    (turma / "ana").mkdir(parents=True)
    (turma / "bia").mkdir()
    nb = json.loads(AULA1.source.read_text(encoding="utf-8"))
    (turma / "ana" / "03-exercicios.ipynb").write_text(json.dumps(a_mao(nb)), encoding="utf-8")
    aluno = ROOT / "notebooks" / AULA1.source.relative_to(ROOT / "solutions")
    shutil.copy(aluno, turma / "bia" / "03-exercicios.ipynb")
    return turma


@pytest.mark.lento
@SEM_BWRAP
def test_memoria_pequena_demais_para_antes_de_corrigir_e_nada_e_escrito(tmp_path):
    """150 MiB por processo: a solução do notebook de teste não roda até o fim. Antes, cada aluno saía
    ``kernel_morreu`` com 0 e o comando terminava com 0."""
    saida = tmp_path / "saida"
    with pytest.raises(MachineFailure, match="A correção não funciona nesta máquina") as exc:
        grade_class(_turma(tmp_path), saida, memoria_mb=150, log=lambda *_: None)
    assert "--memoria" in str(exc.value)
    assert not saida.exists() or not any(saida.iterdir())


@pytest.mark.lento
@SEM_BWRAP
def test_kernel_que_nao_comeca_e_falha_da_maquina_mesmo_sem_o_teste_antes(tmp_path):
    """Sem o notebook de teste (``preflight_check=False``, como no ``validar``), 60 MiB por processo: o Python da
    caixa não chega a começar o kernel. Cada entrega é ``falha_da_maquina``, e a turma não é escrita."""
    saida = tmp_path / "saida"
    with pytest.raises(MachineFailure, match=r"em 2 de 2 notebook\(s\).*Nada foi escrito"):
        grade_class(_turma(tmp_path), saida, memoria_mb=60, log=lambda *_: None, preflight_check=False)
    assert not (saida / "notas.csv").exists()


@pytest.mark.lento
@SEM_BWRAP
def test_o_comando_sai_com_erro_e_diz_a_causa(tmp_path):
    saida = tmp_path / "saida"
    r = subprocess.run([sys.executable, ROOT / "scripts" / "corrigir.py", _turma(tmp_path), "--saida", saida,
                        "--memoria", "150"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "A correção não funciona nesta máquina" in r.stderr and "Traceback" not in r.stderr
    assert not (saida / "notas.csv").exists()
