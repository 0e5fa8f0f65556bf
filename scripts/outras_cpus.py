"""Reexecuta os notebooks com o nbval como se a CPU fosse outra: as saídas guardadas não podem depender dela.

Uma CPU de outro tipo faz o OpenBLAS (a álgebra linear do NumPy) escolher outro kernel, que soma os produtos
em outra ordem e arredonda diferente: os números mudam lá pela 6ª casa. Uma saída guardada que imprime esse
ruído (``2.4e-06``) passa nesta máquina e derruba o nbval estrito na CI de outra. Aqui, ``OPENBLAS_CORETYPE``
força nesta máquina o kernel de outra CPU (e ``OPENBLAS_NUM_THREADS=1`` muda a divisão do trabalho), e cada
notebook cujas saídas o nbval compara (``notebooks/`` e ``solutions/``) roda de novo com o ``pytest --nbval``.

Antes de rodar, cada configuração é conferida com o threadpoolctl: o OpenBLAS carregado pelo NumPy diz outro
kernel (``architecture``) que o desta máquina e um produto de matrizes sai com outros bits. Uma configuração
que não muda nada é trocada pela próxima candidata (a máquina pode já ter ``OPENBLAS_CORETYPE`` definido, ou
ser de um tipo em que dois kernels coincidem), e um kernel que a CPU não executa (Haswell sem AVX2) fica de
fora. Sem nenhuma configuração que mude o kernel, o comando falha: não provaria nada.

Uso:
    python scripts/outras_cpus.py               # todas as configurações (make test-cpus)
    python scripts/outras_cpus.py --quantas 1   # só a primeira (o make test-lento)
    python scripts/outras_cpus.py --listar      # só mostra as configurações e o kernel de cada uma
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Kernels de outras CPUs x86-64, do mais novo ao mais velho, e o que a CPU precisa ter para rodá-los
# (flags de /proc/cpuinfo). O nome é o de OPENBLAS_CORETYPE; o threadpoolctl devolve o mesmo nome.
CANDIDATES = (
    ("Sandybridge", {"avx"}),  # AVX sem FMA: outra ordem e outro arredondamento que Haswell/Zen/SkylakeX
    ("Haswell", {"avx2", "fma"}),
    ("SkylakeX", {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}),
    ("Zen", {"avx2", "fma"}),
    ("Nehalem", {"sse4_2"}),  # só SSE
    ("Core2", {"ssse3"}),
    ("Prescott", {"sse3"}),
)

# O que roda em cada processo de conferência: o OpenBLAS do NumPy segundo o threadpoolctl e os bits de um
# produto de matrizes em float32 e float64 (as formas são as da Aula 3: 14 tokens × 384); e as extensões SIMD
# que o próprio NumPy escolheu (exp, tanh, somas) e os bits de um exp em float32, que mudam com elas.
_PROBE = """
import hashlib, json
import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
from threadpoolctl import threadpool_info
rng = np.random.default_rng(0)
bits = hashlib.sha256()
for dtype in (np.float32, np.float64):
    A = rng.normal(size=(14, 384)).astype(dtype)
    B = rng.normal(size=(384, 1536)).astype(dtype)
    bits.update((A @ B).tobytes())
    bits.update((A @ A.T).tobytes())
x = rng.normal(size=4096).astype(np.float32)
blas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
print(json.dumps({"kernels": sorted({str(i.get("architecture")) for i in blas}),
                  "threads": max((i.get("num_threads", 0) for i in blas), default=0),
                  "bits": bits.hexdigest()[:16],
                  "simd": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)],
                  "bits_simd": hashlib.sha256(np.exp(x).tobytes() + np.tanh(x).tobytes()).hexdigest()[:16]}))
"""


def cpu_environment(mudancas: dict) -> dict:
    """O ambiente deste processo com ``mudancas`` (um valor ``None`` tira a variável)."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # as figuras inline dos notebooks precisam do backend padrão
    for nome, valor in mudancas.items():
        if valor is None:
            env.pop(nome, None)
        else:
            env[nome] = valor
    return env


def probe(mudancas: dict, python: str = sys.executable) -> dict:
    """O OpenBLAS que o NumPy carrega com ``mudancas`` no ambiente: ``kernels`` (o ``architecture`` do
    threadpoolctl), ``threads`` e ``bits`` (o começo do SHA-256 de alguns produtos de matrizes).

    Raises
    ------
    RuntimeError
        Se o processo de conferência falhar (um kernel que a CPU não executa morre com SIGILL) ou se o NumPy
        não usar o OpenBLAS.
    """
    proc = subprocess.run([python, "-c", _PROBE], env=cpu_environment(mudancas), capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"a conferência com {describe(mudancas)} falhou (código {proc.returncode}): "
                           f"{proc.stderr.strip()[-500:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    if not info["kernels"]:
        raise RuntimeError("o NumPy deste ambiente não usa o OpenBLAS (o threadpoolctl não o encontrou): este "
                           "teste só vale com o OpenBLAS, o das rodas do NumPy no PyPI.")
    return info


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> "set[str] | None":
    """As flags da CPU (Linux); ``None`` se não der para saber (aí nenhum candidato é descartado por elas)."""
    try:
        for linha in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if linha.startswith("flags"):
                return set(linha.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def describe(mudancas: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in mudancas.items()) or "o ambiente desta máquina"


def choose(padrao: dict, sonda=probe, flags: "set[str] | None" = None, quantas: int | None = None) -> list:
    """As configurações que de fato mudam o OpenBLAS em relação a ``padrao`` (o resultado de ``sonda({})``).

    A primeira junta outro kernel, uma thread só e o NumPy sem as extensões SIMD que ele escolheu nesta CPU
    (``NPY_DISABLE_CPU_FEATURES``: o exp e a tanh em float32 de uma CPU mais velha), a que o ``make test-lento``
    roda; as seguintes são outros kernels com as threads padrão. Um candidato entra só se a CPU tem as flags
    dele, se o threadpoolctl diz um kernel diferente do padrão e se os bits do produto de matrizes mudam em
    relação ao padrão e aos candidatos já escolhidos (dois kernels com as mesmas contas não provam nada a
    mais); na primeira, também os bits do exp e da tanh, se o NumPy desligou as extensões.

    Returns
    -------
    list of (dict, dict)
        ``(mudancas no ambiente, o que a sonda viu)`` para cada configuração, no máximo ``quantas``.
    """
    escolhidas = []
    bits_vistos = {padrao["bits"]}
    for kernel, precisa in CANDIDATES:
        if quantas is not None and len(escolhidas) >= quantas:
            break
        if flags is not None and not precisa <= flags:
            continue
        if kernel.lower() in {k.lower() for k in padrao["kernels"]}:
            continue
        mudancas = {"OPENBLAS_CORETYPE": kernel}
        if not escolhidas and padrao["threads"] != 1:
            mudancas["OPENBLAS_NUM_THREADS"] = "1"
        if not escolhidas and padrao.get("simd"):
            mudancas["NPY_DISABLE_CPU_FEATURES"] = " ".join(padrao["simd"])
        try:
            visto = sonda(mudancas)
        except RuntimeError:
            continue
        if kernel.lower() not in {k.lower() for k in visto["kernels"]} or visto["bits"] in bits_vistos:
            continue
        if "OPENBLAS_NUM_THREADS" in mudancas and visto["threads"] != 1:
            continue
        if "NPY_DISABLE_CPU_FEATURES" in mudancas and (visto["simd"] or visto["bits_simd"] == padrao["bits_simd"]):
            continue
        bits_vistos.add(visto["bits"])
        escolhidas.append((mudancas, visto))
    return escolhidas


def run_nbval(mudancas: dict, alvos=("notebooks", "solutions"), python: str = sys.executable) -> int:
    """O ``pytest --nbval`` (a configuração do pyproject.toml) nos notebooks de ``alvos`` com ``mudancas`` no
    ambiente, em paralelo como nos outros testes (``pytest -n``); devolve o código do pytest."""
    cmd = [python, "-m", "pytest", "-q", "-n", "auto", "--dist", "loadfile", *alvos]
    return subprocess.run(cmd, cwd=ROOT, env=cpu_environment(mudancas)).returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quantas", type=int, default=None, help="só as N primeiras configurações")
    parser.add_argument("--listar", action="store_true", help="só mostra as configurações, sem rodar o nbval")
    opcoes = parser.parse_args(argv)

    padrao = probe({})
    print(f"OpenBLAS desta máquina: kernel {', '.join(padrao['kernels'])}, {padrao['threads']} thread(s)"
          f"{', OPENBLAS_CORETYPE=' + os.environ['OPENBLAS_CORETYPE'] if 'OPENBLAS_CORETYPE' in os.environ else ''}",
          flush=True)
    escolhidas = choose(padrao, flags=cpu_flags(), quantas=opcoes.quantas)
    if not escolhidas:
        print("Nenhuma configuração do OpenBLAS muda o kernel nesta máquina: a reexecução não provaria nada.")
        return 1
    print(f"  SIMD do NumPy: {' '.join(padrao['simd']) or 'só o básico'}", flush=True)
    for mudancas, visto in escolhidas:
        print(f"  {describe(mudancas)}: kernel {', '.join(visto['kernels'])}, {visto['threads']} thread(s), "
              f"SIMD do NumPy: {' '.join(visto['simd']) or 'só o básico'}; outros bits no produto de matrizes"
              f"{' e no exp/tanh' if visto['bits_simd'] != padrao['bits_simd'] else ''}", flush=True)
    if opcoes.listar:
        return 0
    falhas = []
    for mudancas, _visto in escolhidas:
        print(f"\n== nbval com {describe(mudancas)} ==", flush=True)
        t0 = time.perf_counter()
        codigo = run_nbval(mudancas)
        print(f"   {time.perf_counter() - t0:.0f} s, código {codigo}", flush=True)
        if codigo:
            falhas.append(describe(mudancas))
    if falhas:
        print("\nAs saídas guardadas mudam com outro kernel do OpenBLAS (" + "; ".join(falhas) + "): imprima o "
              "veredito contra a tolerância (≤ 1e-5 ✅) ou arredonde ao que é estável, e reexecute o notebook.")
        return 1
    print(f"\nAs saídas guardadas são as mesmas com {len(escolhidas)} outra(s) configuração(ões) do OpenBLAS.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
