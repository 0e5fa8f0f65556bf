"""scripts/outras_cpus.py (make test-cpus; a primeira configuração roda no make test-lento): as configurações do
OpenBLAS escolhidas mudam de fato o kernel e as contas, e nenhuma é a desta máquina."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import outras_cpus  # noqa: E402

TODAS = {"avx", "avx2", "fma", "sse4_2", "ssse3", "sse3"}  # uma CPU x86-64 com AVX2 e sem AVX-512


def _sonda_falsa(bits_por_kernel, simd=("X86_V3",), falha=()):
    """Uma sonda sem processos: o kernel pedido em OPENBLAS_CORETYPE, com os bits dados por kernel."""
    chamadas = []

    def sonda(mudancas):
        chamadas.append(dict(mudancas))
        kernel = mudancas.get("OPENBLAS_CORETYPE", "Haswell")
        if kernel in falha:
            raise RuntimeError("SIGILL")
        sem_simd = "NPY_DISABLE_CPU_FEATURES" in mudancas
        return {"kernels": [kernel], "threads": 1 if mudancas.get("OPENBLAS_NUM_THREADS") == "1" else 2,
                "bits": bits_por_kernel[kernel], "simd": [] if sem_simd else list(simd),
                "bits_simd": "outro" if sem_simd else "padrao"}

    sonda.chamadas = chamadas
    return sonda


BITS = {"Haswell": "h", "Zen": "h", "Sandybridge": "s", "SkylakeX": "k", "Nehalem": "n", "Core2": "n",
        "Prescott": "p"}


def test_primeira_troca_kernel_threads_e_simd_e_as_outras_so_o_kernel():
    sonda = _sonda_falsa(BITS)
    padrao = sonda({})
    escolhidas = outras_cpus.choose(padrao, sonda=sonda, flags=TODAS)
    assert [m for m, _ in escolhidas] == [
        {"OPENBLAS_CORETYPE": "Sandybridge", "OPENBLAS_NUM_THREADS": "1", "NPY_DISABLE_CPU_FEATURES": "X86_V3"},
        {"OPENBLAS_CORETYPE": "Nehalem"},  # o Zen dá as contas do Haswell e o Core2 as do Nehalem: não provam mais
        {"OPENBLAS_CORETYPE": "Prescott"},
    ]
    # o SkylakeX (AVX-512) não existe nesta CPU: nem é sondado (morreria com SIGILL)
    assert all(c.get("OPENBLAS_CORETYPE") != "SkylakeX" for c in sonda.chamadas)
    assert len(outras_cpus.choose(padrao, sonda=sonda, flags=TODAS, quantas=1)) == 1


def test_maquina_com_openblas_coretype_ja_definido_escolhe_outros_kernels():
    """Na máquina que já tem OPENBLAS_CORETYPE=Sandybridge, a primeira configuração não pode ser a dela."""
    sonda = _sonda_falsa(BITS)
    padrao = sonda({"OPENBLAS_CORETYPE": "Sandybridge"})
    escolhidas = outras_cpus.choose(padrao, sonda=sonda, flags=TODAS)
    kernels = [m["OPENBLAS_CORETYPE"] for m, _ in escolhidas]
    assert kernels[0] == "Haswell" and "Sandybridge" not in kernels


def test_kernel_que_nao_muda_nada_ou_falha_fica_de_fora():
    # o OpenBLAS ignora o pedido (devolve o kernel padrão): nenhuma configuração prova nada
    def ignora(mudancas):
        return {"kernels": ["Haswell"], "threads": 2, "bits": "h", "simd": [], "bits_simd": "padrao"}

    assert outras_cpus.choose(ignora({}), sonda=ignora, flags=TODAS) == []
    # todos os kernels dão as mesmas contas
    iguais = _sonda_falsa(dict.fromkeys(BITS, "h"))
    assert outras_cpus.choose(iguais({}), sonda=iguais, flags=TODAS) == []
    # um kernel que morre (SIGILL) é pulado, e o próximo assume o lugar dele
    falha = _sonda_falsa(BITS, falha=("Sandybridge",))
    primeira = outras_cpus.choose(falha({}), sonda=falha, flags=TODAS)[0]
    assert primeira[0]["OPENBLAS_CORETYPE"] == "Nehalem" and primeira[0]["OPENBLAS_NUM_THREADS"] == "1"


def test_flags_da_cpu(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse3 avx avx2 fma\n", encoding="utf-8")
    assert outras_cpus.cpu_flags(cpuinfo) == {"fpu", "sse3", "avx", "avx2", "fma"}
    assert outras_cpus.cpu_flags(tmp_path / "nao-existe") is None


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists() or "avx" not in Path("/proc/cpuinfo").read_text(),
                    reason="precisa de uma CPU x86-64 com AVX (Linux)")
def test_openblas_coretype_muda_o_kernel_de_verdade(monkeypatch):
    """Com o NumPy deste ambiente: o threadpoolctl vê o kernel pedido, uma thread só e outras contas."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # o padrão da máquina (o conftest.py
        monkeypatch.delenv(var, raising=False)                                # os muda no pytest -n)
    padrao = outras_cpus.probe({})
    outro = "Nehalem" if "sandybridge" in {k.lower() for k in padrao["kernels"]} else "Sandybridge"
    visto = outras_cpus.probe({"OPENBLAS_CORETYPE": outro, "OPENBLAS_NUM_THREADS": "1"})
    assert [k.lower() for k in visto["kernels"]] == [outro.lower()] and visto["threads"] == 1
    assert visto["bits"] != padrao["bits"]
    escolhidas = outras_cpus.choose(padrao, flags=outras_cpus.cpu_flags(), quantas=1)
    assert escolhidas and escolhidas[0][1]["bits"] != padrao["bits"]
