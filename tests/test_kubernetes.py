"""Os manifestos do Kubernetes do curso (``hub/corrigir-job.yaml``, o perfil "Professor" de ``hub/values.yaml``):
válidos pelo esquema da API do Kubernetes (``kubernetes-validate``, os esquemas oficiais) e aceitos pelo Pod
Security "baseline" e "restricted", com as regras da documentação do Kubernetes
(https://kubernetes.io/docs/concepts/security/pod-security-standards/) escritas aqui como uma lista de controles.
O verificador das regras é provado nos dois sentidos: recusa o manifesto antigo (``seccompProfile: Unconfined``,
que o "baseline" recusa na admissão) e outras violações típicas.

Que os manifestos de fato corrigem, num pod simulado (não root, ``/proc`` mascarado, o perfil seccomp do curso), é
``tests/hub/test_pod_simulado.py``.
"""

from __future__ import annotations

import copy
import json
import sys
import types
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "hub" / "corrigir-job.yaml"
VALUES = ROOT / "hub" / "values.yaml"
SECCOMP = ROOT / "hub" / "seccomp" / "curso-caixa.json"
VERSOES = ("1.30.0", "1.33.0")  # as versões do Kubernetes em que os manifestos são conferidos

# Pod Security Standards, "baseline": capacidades que podem ser acrescentadas
BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
                 "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}


def _containers(spec: dict) -> list[dict]:
    return [c for campo in ("containers", "initContainers", "ephemeralContainers") for c in spec.get(campo) or []]


def _context_violations(nome: str, ctx: dict) -> list[str]:
    """As regras do "baseline" para um ``securityContext`` (do pod ou de um contêiner)."""
    erros = []
    if ctx.get("privileged"):
        erros.append(f"{nome}: privileged")
    if (ctx.get("windowsOptions") or {}).get("hostProcess"):
        erros.append(f"{nome}: hostProcess")
    extra = set((ctx.get("capabilities") or {}).get("add") or []) - BASELINE_CAPS
    if extra:
        erros.append(f"{nome}: capacidades {sorted(extra)}")
    for campo in ("seccompProfile", "appArmorProfile"):
        if (ctx.get(campo) or {}).get("type") == "Unconfined":
            erros.append(f"{nome}: {campo} Unconfined")
    if ctx.get("procMount", "Default") != "Default":
        erros.append(f"{nome}: procMount {ctx['procMount']}")
    se = ctx.get("seLinuxOptions") or {}
    if se.get("type", "") not in SELINUX_TYPES or se.get("user") or se.get("role"):
        erros.append(f"{nome}: seLinuxOptions {se}")
    return erros


def baseline_violations(spec: dict) -> list[str]:
    """As regras do Pod Security "baseline" que ``spec`` (um PodSpec) viola."""
    erros = [f"{campo}: namespaces do nó" for campo in ("hostNetwork", "hostPID", "hostIPC") if spec.get(campo)]
    pod_ctx = spec.get("securityContext") or {}
    erros += [f"volume {v.get('name')}: hostPath" for v in spec.get("volumes") or [] if "hostPath" in v]
    erros += [f"sysctl {x.get('name')}" for x in pod_ctx.get("sysctls") or [] if x.get("name") not in SAFE_SYSCTLS]
    erros += _context_violations("pod", pod_ctx)
    for c in _containers(spec):
        erros += _context_violations(c.get("name", "?"), c.get("securityContext") or {})
        erros += [f"{c.get('name')}: hostPort" for porta in c.get("ports") or [] if porta.get("hostPort")]
    return erros


def restricted_violations(spec: dict) -> list[str]:
    """As regras do "restricted" (que inclui o "baseline") que ``spec`` viola."""
    erros = baseline_violations(spec)
    for v in spec.get("volumes") or []:
        tipos = set(v) - {"name"}
        if not tipos <= RESTRICTED_VOLUMES:
            erros.append(f"volume {v.get('name')}: tipo {sorted(tipos)}")
    pod_ctx = spec.get("securityContext") or {}
    for c in _containers(spec):
        ctx = c.get("securityContext") or {}
        nome = c.get("name", "?")
        if ctx.get("allowPrivilegeEscalation") is not False:
            erros.append(f"{nome}: allowPrivilegeEscalation não é false")
        if not ctx.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")):
            erros.append(f"{nome}: runAsNonRoot não é true")
        if ctx.get("runAsUser", pod_ctx.get("runAsUser")) == 0:
            erros.append(f"{nome}: runAsUser 0")
        seccomp = (ctx.get("seccompProfile") or pod_ctx.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            erros.append(f"{nome}: seccompProfile {seccomp}")
        caps = ctx.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            erros.append(f"{nome}: capabilities.drop sem ALL")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            erros.append(f"{nome}: capabilities.add {caps['add']}")
    return erros


def _docs(caminho: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(caminho.read_text(encoding="utf-8")) if d]


def _pod_spec_do_job() -> dict:
    return next(d for d in _docs(JOB) if d["kind"] == "Job")["spec"]["template"]["spec"]


# ---------- o esquema da API ----------
@pytest.mark.parametrize("versao", VERSOES)
def test_manifestos_validos_pelo_esquema_do_kubernetes(versao):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    docs = _docs(JOB)
    assert [d["kind"] for d in docs] == ["Job", "NetworkPolicy"]
    for doc in docs:
        kubernetes_validate.validate(doc, versao, strict=True)  # levanta com o campo errado


def test_o_esquema_recusa_um_campo_inventado():
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    doc = copy.deepcopy(_docs(JOB)[0])
    doc["spec"]["template"]["spec"]["securityContext"]["seccompPerfil"] = {"type": "Localhost"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, VERSOES[-1], strict=True)


# ---------- Pod Security ----------
def test_o_job_da_correcao_passa_no_baseline_e_no_restricted():
    spec = _pod_spec_do_job()
    assert baseline_violations(spec) == []
    assert restricted_violations(spec) == []
    assert spec["automountServiceAccountToken"] is False  # sem o token da conta de serviço
    assert spec["securityContext"]["seccompProfile"] == {"type": "Localhost",
                                                         "localhostProfile": "profiles/curso-caixa.json"}
    tmp = next(v for v in spec["volumes"] if v["name"] == "tmp")
    assert tmp["emptyDir"]["sizeLimit"]  # o disco da parte tem limite
    limites = spec["containers"][0]["resources"]["limits"]
    assert {"cpu", "memory", "ephemeral-storage"} <= set(limites)


def test_a_rede_dos_pods_da_correcao_e_fechada():
    rede = next(d for d in _docs(JOB) if d["kind"] == "NetworkPolicy")
    rotulos = next(d for d in _docs(JOB) if d["kind"] == "Job")["spec"]["template"]["metadata"]["labels"]
    assert all(rotulos.get(k) == v for k, v in rede["spec"]["podSelector"]["matchLabels"].items())
    assert set(rede["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    assert not rede["spec"].get("ingress") and not rede["spec"].get("egress")  # nenhuma regra: nada passa


@pytest.mark.parametrize("estrago, regra", [
    (lambda s: s["securityContext"].update(seccompProfile={"type": "Unconfined"}), "Unconfined"),
    (lambda s: s["containers"][0]["securityContext"].update(privileged=True), "privileged"),
    (lambda s: s["containers"][0]["securityContext"].update(capabilities={"add": ["SYS_ADMIN"]}), "SYS_ADMIN"),
    (lambda s: s.update(hostPID=True), "hostPID"),
    (lambda s: s["volumes"].append({"name": "no", "hostPath": {"path": "/"}}), "hostPath"),
    (lambda s: s["containers"][0]["securityContext"].update(procMount="Unmasked"), "procMount"),
])
def test_o_verificador_do_baseline_recusa_as_violacoes(estrago, regra):
    spec = copy.deepcopy(_pod_spec_do_job())
    estrago(spec)
    assert any(regra in e for e in baseline_violations(spec)), baseline_violations(spec)


def test_o_verificador_do_restricted_recusa_root_e_escalada():
    spec = copy.deepcopy(_pod_spec_do_job())
    spec["securityContext"]["runAsNonRoot"] = False
    spec["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    erros = restricted_violations(spec)
    assert any("runAsNonRoot" in e for e in erros) and any("allowPrivilegeEscalation" in e for e in erros)
    assert baseline_violations(spec) == []  # o baseline aceita root


def test_o_manifesto_antigo_seria_recusado_pelo_baseline():
    """O ``hub/corrigir-job.yaml`` de antes punha ``seccompProfile: Unconfined`` no pod: o "baseline" o recusaria na
    admissão, e nenhuma parte rodaria."""
    spec = copy.deepcopy(_pod_spec_do_job())
    spec["securityContext"]["seccompProfile"] = {"type": "Unconfined"}
    assert baseline_violations(spec) == ["pod: seccompProfile Unconfined"]


# ---------- o perfil "Professor" do Zero to JupyterHub ----------
def _professor() -> dict:
    valores = yaml.safe_load(VALUES.read_text(encoding="utf-8"))
    return next(p for p in valores["singleuser"]["profileList"] if p["display_name"] == "Professor")


def test_o_perfil_do_professor_roda_a_caixa_dentro_do_baseline():
    """O servidor do professor corrige com ``turma corrigir`` na caixa: o mesmo perfil seccomp do Job, e os contextos
    de segurança que o KubeSpawner aplica passam no "baseline" e no "restricted"."""
    override = _professor()["kubespawner_override"]
    spec = {"securityContext": override["pod_security_context"],
            "containers": [{"name": "notebook", "securityContext": override["container_security_context"]}]}
    assert baseline_violations(spec) == [] and restricted_violations(spec) == []
    assert spec["securityContext"]["seccompProfile"]["localhostProfile"] == "profiles/curso-caixa.json"


def test_so_o_servidor_do_professor_monta_o_volume_da_correcao():
    codigo = yaml.safe_load(VALUES.read_text(encoding="utf-8"))["hub"]["extraConfig"]["volume_da_correcao"]

    class Modelo:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    modelos = types.ModuleType("kubernetes_asyncio.client.models")
    for nome in ("V1PersistentVolumeClaimVolumeSource", "V1Volume", "V1VolumeMount"):
        setattr(modelos, nome, type(nome, (Modelo,), {}))
    c = types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())
    antes = {k: sys.modules.get(k) for k in ("kubernetes_asyncio", "kubernetes_asyncio.client",
                                             "kubernetes_asyncio.client.models")}
    sys.modules.update({"kubernetes_asyncio": types.ModuleType("kubernetes_asyncio"),
                        "kubernetes_asyncio.client": types.ModuleType("kubernetes_asyncio.client"),
                        "kubernetes_asyncio.client.models": modelos})
    try:
        exec(compile(codigo, "values.yaml:volume_da_correcao", "exec"), {"c": c})  # noqa: S102
        gancho = c.KubeSpawner.modify_pod_hook
        for perfil, montado in (("professor", True), ("aluno", False), (None, False)):
            pod = types.SimpleNamespace(spec=types.SimpleNamespace(
                volumes=[], containers=[types.SimpleNamespace(volume_mounts=[])]))
            opcoes = {"profile": perfil} if perfil else {}
            gancho(types.SimpleNamespace(user_options=opcoes), pod)
            assert bool(pod.spec.volumes) == montado
            if montado:
                assert pod.spec.volumes[0].persistent_volume_claim.claim_name == "correcao-turma"
                assert pod.spec.containers[0].volume_mounts[0].mount_path == "/dados"
    finally:
        for k, v in antes.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    assert _professor()["slug"] == "professor"


# ---------- o perfil seccomp ----------
def test_o_perfil_seccomp_libera_a_caixa_e_fecha_o_resto():
    perfil = json.loads(SECCOMP.read_text(encoding="utf-8"))
    assert perfil["defaultAction"] == "SCMP_ACT_ALLOW"
    negadas = {n for regra in perfil["syscalls"] if regra["action"] == "SCMP_ACT_ERRNO" for n in regra["names"]}
    # o que o bwrap usa para montar a caixa dentro do user namespace dela
    assert not negadas & {"unshare", "clone", "clone3", "mount", "umount2", "pivot_root", "capset", "prctl"}
    # o que o RuntimeDefault também nega, e nenhum processo da correção usa
    assert {"ptrace", "process_vm_readv", "process_vm_writev", "bpf", "keyctl", "add_key", "kexec_load",
            "open_by_handle_at", "userfaultfd", "perf_event_open", "init_module", "finit_module", "setns",
            "reboot", "swapon", "io_uring_setup"} <= negadas
    assert all(regra.get("errnoRet") == 1 for regra in perfil["syscalls"])  # EPERM, como o runtime


def test_o_guia_aponta_arquivos_que_existem():
    guia = (ROOT / "docs" / "professor.md").read_text(encoding="utf-8")
    for caminho in ("hub/corrigir-job.yaml", "hub/seccomp/curso-caixa.json", "hub/apparmor/curso-caixa"):
        assert caminho in guia and (ROOT / caminho).exists(), caminho
