"""A correção num pod do Kubernetes, simulado nesta máquina como o runtime de contêineres (runc) o monta: o corretor
não é root e não tem capacidades nem como ganhar privilégio (``no_new_privs``, o ``allowPrivilegeEscalation: false``
do manifesto), o ``/proc`` tem caminhos mascarados (``/proc/keys`` e ``/proc/timer_list`` cobertos por
``/dev/null``, ``/proc/acpi`` somente leitura) e um perfil seccomp filtra as chamadas do sistema.

- com o perfil do curso (``hub/seccomp/curso-caixa.json``, o ``seccompProfile: Localhost`` de
  ``hub/corrigir-job.yaml``), a turma é corrigida certo: a caixa roda sem ``/proc`` próprio;
- com um perfil que bloqueia *user namespaces*, como o ``RuntimeDefault`` do Docker e do containerd, a correção se
  recusa alto: código 3, a causa e o conserto em português, nada escrito (antes: cada aluno ``kernel_morreu`` com
  0 e código 0); uma parte (``--parte K/N``) também, e a junção sem ela recusa.

Precisa de root (``unshare --mount`` e ``setpriv``), do bubblewrap e da libseccomp do Python do sistema
(``apt-get install python3-seccomp``; o ``.ci/run`` instala). O curso e um ambiente legíveis por todos ficam em
``/opt/curso-pod-teste`` (o ambiente é refeito quando ``hub/requirements-hub.txt`` muda). Roda com ``make test-hub``.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hub_comum import copiar_curso, falta, rodar

if not os.environ.get("CURSO_TESTE_HUB"):
    pytest.skip("a simulação do pod roda com `make test-hub` (python3 curso.py test-hub)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
BASE = Path(os.environ.get("CURSO_POD_TESTE", "/opt/curso-pod-teste"))
VENV = BASE / "venv"
CURSO = BASE / "curso"
NOBODY = "65534"
AULA_06 = ("03-exercicios.ipynb", "04-projeto.ipynb")
# O que o RuntimeDefault do Docker/containerd faz com quem não tem CAP_SYS_ADMIN: nada de unshare, nem de clone
# com CLONE_NEWUSER (0x10000000); o clone3 some (ENOSYS), e a glibc volta ao clone
SEM_USERNS = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
    {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
    {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
     "args": [{"index": 0, "value": 0x10000000, "valueTwo": 0x10000000, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
]}


@pytest.fixture(scope="module")
def pod():
    if os.geteuid() != 0:
        falta("a simulação do pod monta sobre o /proc e troca de usuário: rode como root (make test-hub)")
    for programa in ("bwrap", "unshare", "setpriv"):
        if not shutil.which(programa):
            falta(f"sem o {programa} (apt-get install bubblewrap util-linux)")
    if subprocess.run(["/usr/bin/python3", "-c", "import seccomp"], capture_output=True).returncode != 0:
        falta("sem a libseccomp do Python do sistema (apt-get install python3-seccomp)")
    copiar_curso(CURSO)
    marca, pedido = VENV / ".requirements-hub.txt", (ROOT / "hub" / "requirements-hub.txt").read_text(encoding="utf-8")
    if not (VENV / "bin" / "python").exists() or not marca.exists() or marca.read_text(encoding="utf-8") != pedido:
        rodar(["/usr/bin/python3", "-m", "venv", "--clear", VENV])
        rodar([VENV / "bin" / "pip", "install", "--quiet", "-r", ROOT / "hub" / "requirements-hub.txt"])
        marca.write_text(pedido, encoding="utf-8")
    if not (VENV / ".curso-editavel").exists():  # a biblioteca aponta para CURSO, que é sempre o mesmo caminho
        rodar([VENV / "bin" / "pip", "install", "--quiet", "--no-deps", "-e", CURSO], cwd=CURSO)
        (VENV / ".curso-editavel").write_text(str(CURSO), encoding="utf-8")
    run = Path(tempfile.mkdtemp(prefix="curso-pod-teste-"))
    turma = run / "turma"
    sys.path.insert(0, str(ROOT / "tests"))
    from turma_exemplo.gerar import a_mao

    solucao = ROOT / "solutions" / "modulo-06" / "aula-01-self-attention" / "03-exercicios.ipynb"
    for aluno in ("ana", "bia"):
        (turma / aluno).mkdir(parents=True)
    (turma / "ana" / "03-exercicios.ipynb").write_text(
        json.dumps(a_mao(json.loads(solucao.read_text(encoding="utf-8")))), encoding="utf-8")
    shutil.copy(ROOT / "notebooks" / solucao.relative_to(ROOT / "solutions"), turma / "bia" / "03-exercicios.ipynb")
    # a Aula 6 (o GPT pequeno: o treino curto da correção, as amostras, a indução), as duas entregas de um aluno
    (turma / "caio").mkdir()
    for nome in AULA_06:
        fonte = ROOT / "solutions" / "modulo-06" / "aula-06-gpt-pequeno-em-portugues" / nome
        (turma / "caio" / nome).write_text(json.dumps(a_mao(json.loads(fonte.read_text(encoding="utf-8")))),
                                           encoding="utf-8")
    (run / "sem-userns.json").write_text(json.dumps(SEM_USERNS), encoding="utf-8")
    (run / "saidas").mkdir()
    os.chmod(run / "saidas", 0o777)
    rodar(["chmod", "-R", "a+rX", BASE, run])
    try:
        yield {"run": run, "turma": turma}
    finally:
        shutil.rmtree(run, ignore_errors=True)


def _no_pod(perfil: Path, *args: str) -> subprocess.CompletedProcess:
    """``python3 curso.py --neste-ambiente ARGS`` como no pod: mount namespace próprio com o /proc mascarado,
    usuário ``nobody`` sem grupos nem capacidades, ``no_new_privs``, o perfil seccomp ``perfil`` e ambiente limpo."""
    mascarar = ("mount --bind /dev/null /proc/keys && mount --bind /dev/null /proc/timer_list && "
                "(mount -t tmpfs -o ro tmpfs /proc/acpi 2>/dev/null || true) && exec \"$@\"")
    cmd = ["unshare", "--mount", "sh", "-c", mascarar, "sh",
           "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
           "--no-new-privs", "env", "-i", "HOME=/tmp", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
           "/usr/bin/python3", CURSO / "tests" / "hub" / "perfil_seccomp.py", perfil,
           VENV / "bin" / "python", CURSO / "curso.py", "--neste-ambiente", *args]
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=CURSO, timeout=900)


def _notas(pasta: Path) -> dict:
    """As linhas de ``notas.csv`` por aluno (a do caio, por notebook: ``caio/03-exercicios``...)."""
    with open(pasta / "notas.csv", encoding="utf-8") as f:
        return {linha["aluno"] + ("/" + linha["notebook"] if linha["aluno"] == "caio" else ""): linha
                for linha in csv.DictReader(f)}


def test_com_o_perfil_do_curso_o_pod_corrige_certo(pod):
    saida = pod["run"] / "saidas" / "certo"
    r = _no_pod(CURSO / "hub" / "seccomp" / "curso-caixa.json", "corrigir", pod["turma"], "--saida", saida)
    assert r.returncode == 0, r.stdout + r.stderr
    notas = _notas(saida)
    assert (notas["ana"]["situacao"], notas["ana"]["total"], notas["ana"]["maximo"]) == ("ok", "4", "4"), notas["ana"]
    assert (notas["bia"]["situacao"], notas["bia"]["total"]) == ("zero", "0"), notas["bia"]
    for nome in AULA_06:
        linha = notas[f"caio/{nome.removesuffix('.ipynb')}"]
        assert linha["situacao"] == "ok" and float(linha["total"]) == float(linha["maximo"]) > 0, linha
    assert {n["isolamento"] for n in notas.values()} == {"bwrap+rlimit"}  # sem cgroup delegado, como num pod
    print(f"\n[pod] {r.stdout.strip().splitlines()[-1]}")


def test_validar_no_pod_diz_o_mesmo_que_a_correcao(pod):
    r = _no_pod(CURSO / "hub" / "seccomp" / "curso-caixa.json", "validar",
                pod["turma"] / "ana" / "03-exercicios.ipynb")
    assert "2 de 2 verificação(ões) passando" in r.stdout, r.stdout + r.stderr
    assert "Não consegui" not in r.stdout


def test_pod_que_bloqueia_user_namespaces_recusa_alto_e_nao_escreve_nada(pod):
    perfil = pod["run"] / "sem-userns.json"
    saida = pod["run"] / "saidas" / "recusa"
    r = _no_pod(perfil, "corrigir", pod["turma"], "--saida", saida)
    assert r.returncode == 3, r.stdout + r.stderr
    for trecho in ("nenhuma entrega foi corrigida", "user namespace", "seccomp", "hub/seccomp/curso-caixa.json",
                   "No permissions to create new namespace"):
        assert trecho in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (saida / "notas.csv").exists()
    # uma parte de um Indexed Job no mesmo pod: a mesma recusa, e nenhuma parte.json para a junção
    parte = pod["run"] / "saidas" / "parte-1"
    r = _no_pod(perfil, "corrigir", pod["turma"], "--parte", "1/2", "--saida", parte)
    assert r.returncode == 3 and "nenhuma entrega foi corrigida" in r.stderr, r.stdout + r.stderr
    assert not (parte / "parte.json").exists()
    r = _no_pod(CURSO / "hub" / "seccomp" / "curso-caixa.json", "corrigir", "--juntar", parte,
                pod["run"] / "saidas" / "parte-2", "--saida", pod["run"] / "saidas" / "juntas")
    assert r.returncode == 2 and "não é a saída de uma parte" in r.stdout + r.stderr, r.stdout + r.stderr
