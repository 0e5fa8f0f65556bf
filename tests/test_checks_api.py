"""A API de quem escreve uma verificação (``atencao.checks``): nenhum nome privado atravessa módulos, e os nomes
públicos do arcabouço dizem o que fazem (docstring)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "lib" / "atencao" / "checks"
PACOTE = "atencao.checks"

# os módulos do arcabouço (o que não é uma aula nem o __init__)
ARCABOUCO = sorted(p.stem for p in CHECKS.glob("*.py") if not p.stem.startswith(("aula", "_")))


def _modulo_absoluto(arquivo: Path, node: ast.ImportFrom) -> str:
    """O nome absoluto do módulo de ``from ... import`` em ``arquivo`` (resolve os imports relativos)."""
    if not node.level:
        return node.module or ""
    try:  # o pacote do arquivo, pelo caminho (lib/atencao/checks/aula01.py: atencao.checks)
        partes = list(arquivo.relative_to(ROOT / "lib").parts[:-1])
    except ValueError:  # fora de lib/ (um teste): não é um pacote
        partes = []
    if node.level > 1:
        partes = partes[: len(partes) - (node.level - 1)]
    return ".".join([*partes, *([node.module] if node.module else [])])


def importacoes_privadas(arquivo: Path, texto: str | None = None) -> list[str]:
    """As importações de nomes privados em ``arquivo``: ``from M import _x`` com ``M`` do pacote ``atencao`` (ou
    relativo), e qualquer importação de um módulo privado das verificações (``atencao.checks._x``)."""
    tree = ast.parse(texto if texto is not None else arquivo.read_text(encoding="utf-8"))
    achados = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modulo = _modulo_absoluto(arquivo, node)
            if not (node.level or modulo.split(".")[0] == "atencao"):
                continue
            for alias in node.names:
                alvo = f"{modulo}.{alias.name}"
                privado = alias.name.startswith("_") or (
                    alvo.startswith(PACOTE + ".") and any(p.startswith("_") for p in alvo.split(".")[2:]))
                if privado:
                    achados.append(f"{arquivo.name}:{node.lineno}: from {modulo} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACOTE + ".") and any(p.startswith("_") for p in alias.name.split(".")[2:]):
                    achados.append(f"{arquivo.name}:{node.lineno}: import {alias.name}")
    return achados


def _arquivos_python() -> list[Path]:
    arquivos = [*CHECKS.glob("*.py"), *(ROOT / "lib").rglob("*.py"), *(ROOT / "scripts").rglob("*.py"),
                ROOT / "curso.py", *(ROOT / "tests").rglob("*.py")]
    return sorted({p for p in arquivos if ".venv" not in p.parts and p != Path(__file__).resolve()})


def test_nenhum_nome_privado_importado_de_outro_modulo():
    """Dentro de ``lib/atencao/checks/`` nenhum módulo importa ``_x`` de outro; fora, ninguém (biblioteca,
    correção, testes, scripts, ``curso.py``) importa um nome privado ou um módulo privado das verificações."""
    achados = [a for p in _arquivos_python() if p.parent == CHECKS for a in importacoes_privadas(p)]
    assert achados == []
    de_fora = [a for p in _arquivos_python() if p.parent != CHECKS for a in importacoes_privadas(p)
               if PACOTE in a]
    assert de_fora == []


@pytest.mark.parametrize("codigo, esperado", [
    ("from ._core import check", ["aula09.py:1: from atencao.checks._core import check"]),
    ("from .framework import _Stop", ["aula09.py:1: from atencao.checks.framework import _Stop"]),
    ("from . import _erros", ["aula09.py:1: from atencao.checks import _erros"]),
    ("from .report import describe as _d", []),  # o nome importado é público; o apelido é deste módulo
    ("import atencao.checks._core as c", ["aula09.py:1: import atencao.checks._core"]),
    ("from atencao.checks.watcher import _library_code_ids", ["aula09.py:1: from atencao.checks.watcher import "
                                                                "_library_code_ids"]),
    ("from .framework import check, describe\nfrom ..attention import softmax", []),
    ("from __future__ import annotations\nfrom os import _exit", []),  # fora do pacote atencao: não é conosco
])
def test_a_regra_pega_as_importacoes_privadas(codigo, esperado):
    """O teste acima não passa por não achar nada: a mesma função aponta cada forma de importar um nome privado."""
    assert importacoes_privadas(CHECKS / "aula09.py", codigo) == esperado


def _publicos(modulo) -> list[tuple[str, object]]:
    """Os nomes de ``__all__`` definidos no próprio módulo (funções e classes) e os métodos públicos das classes."""
    out = []
    for nome in modulo.__all__:
        obj = getattr(modulo, nome)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != modulo.__name__:
            continue  # constantes e nomes reexportados (a docstring está no módulo de origem)
        out.append((nome, obj))
        if inspect.isclass(obj):
            out += [(f"{nome}.{k}", v) for k, v in vars(obj).items()
                    if not k.startswith("_") and inspect.isfunction(v)]
    return out


@pytest.mark.parametrize("nome", ARCABOUCO)
def test_os_nomes_publicos_do_arcabouco_tem_docstring(nome):
    modulo = importlib.import_module(f"{PACOTE}.{nome}")
    assert modulo.__doc__ and modulo.__doc__.strip(), f"{nome} sem docstring de módulo"
    assert isinstance(modulo.__all__, list) and modulo.__all__, f"{nome} sem __all__"
    for publico in modulo.__all__:
        assert hasattr(modulo, publico), f"{nome}.__all__ cita {publico}, que não existe"
        assert not publico.startswith("_")
    sem = [n for n, obj in _publicos(modulo) if not (inspect.getdoc(obj) or "").strip()]
    assert sem == [], f"{nome}: sem docstring: {sem}"


def test_o_teste_de_docstring_pega_um_nome_sem_docstring(monkeypatch):
    from atencao.checks import report

    def sem_docstring():
        return None

    sem_docstring.__module__ = report.__name__
    monkeypatch.setattr(report, "sem_docstring", sem_docstring, raising=False)
    monkeypatch.setattr(report, "__all__", [*report.__all__, "sem_docstring"])
    assert [n for n, obj in _publicos(report) if not (inspect.getdoc(obj) or "").strip()] == ["sem_docstring"]


def test_o_arcabouco_tem_os_modulos_por_assunto():
    """O arcabouço (o que quem escreve uma verificação importa), a vigilância e as fotos de integridade ficam
    em módulos separados, e nenhum é grande demais para ler de uma vez."""
    assert {"framework", "checker", "watcher", "integrity", "report", "cases"} <= set(ARCABOUCO)
    assert not (CHECKS / "_core.py").exists()
    for nome in ARCABOUCO:
        linhas = len((CHECKS / f"{nome}.py").read_text(encoding="utf-8").splitlines())
        assert linhas <= 400, f"{nome}.py tem {linhas} linhas"


def test_as_verificacoes_das_aulas_importam_so_do_arcabouco_publico():
    """Os módulos ``aulaNN`` importam o arcabouço por ``from .framework import ...`` (e as dicas comuns de
    ``multihead_hints`` e as funções das células de demonstração, ``demos``), nunca dos módulos internos da
    vigilância e das fotos."""
    for arquivo in sorted(CHECKS.glob("aula*.py")):
        tree = ast.parse(arquivo.read_text(encoding="utf-8"))
        internos = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
        assert internos <= {"framework", "multihead_hints", "demos"}, (arquivo.name, internos)


def _exemplo_do_guia():
    """O exemplo mínimo de ``checks/README.md``, carregado como um módulo (os imports relativos viram absolutos)."""
    import re
    import types

    texto = (CHECKS / "README.md").read_text(encoding="utf-8")
    codigo = re.search(r"## Um exemplo mínimo\n+```python\n(.*?)```", texto, re.S).group(1)
    codigo = codigo.replace("from ..attention", "from atencao.attention").replace("from .framework",
                                                                                  "from atencao.checks.framework")
    mod = types.ModuleType("exemplo_do_guia")
    exec(compile(codigo, "exemplo_do_guia.py", "exec"), mod.__dict__)  # noqa: S102 - o texto do guia, do repositório
    return mod


def test_o_exemplo_do_guia_aprova_a_resposta_certa_e_rejeita_as_erradas(capsys, monkeypatch):
    """O exemplo de "como escrever uma verificação" funciona: ✅ para a softmax certa, ❌ (com a dica) para a que
    não subtrai o máximo, ❌ para a que chama a pronta e ⏳ para o exercício não feito."""
    import numpy as np

    from atencao.attention import softmax

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    mod = _exemplo_do_guia()

    def certa(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def sem_maximo(z):
        return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)

    def nao_feita(z):
        raise NotImplementedError

    assert mod.exercicio_1(certa) and mod.passou(certa, avisar=False)
    assert "✅ OK — Exercício 1 (a softmax de cada linha): tudo certo!" in capsys.readouterr().out
    assert not mod.exercicio_1(sem_maximo)
    out = capsys.readouterr().out
    out = " ".join(out.split())  # o relatório quebra as linhas longas
    assert "no caso 3 de 3" in out and "exp(z - máximo) / soma" in out
    assert not mod.exercicio_1(lambda z: softmax(z))
    assert "sem a função pronta" in capsys.readouterr().out
    resultado = mod.exercicio_1(nao_feita)
    assert resultado.status == "nao_feito" and "⏳ A FAZER" in capsys.readouterr().out


# ---------- o comportamento comum das verificações (Aulas 1 e 2): o que não é uma resposta do corpus ----------
def _verificacoes_aulas_1_e_2() -> list:
    from atencao.checks import aula01, aula02

    return [getattr(m, n) for m in (aula01, aula02) for n in m.__all__ if n != "passou"]


def _nao_feito(*args, **kwargs):
    raise NotImplementedError("Exercício ainda não resolvido")


@pytest.mark.parametrize("check", _verificacoes_aulas_1_e_2(), ids=lambda c: f"{c.__module__[-6:]}.{c.__name__}")
def test_exercicio_nao_feito_avisa_sem_erro_e_na_correcao_levanta(check, capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    result = check(_nao_feito)
    assert not result and result.status == "nao_feito"
    assert "⏳" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check(_nao_feito)


def test_na_correcao_a_falha_levanta_e_a_resposta_certa_nao(monkeypatch, capsys):
    import test_checks_aula01 as t1
    import test_checks_aula02_corpus as c2

    from atencao.checks import aula01, aula02

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert aula01.exercicio_4(t1.ex4_certo)
    for check, errada in ((aula01.projeto, t1.proj_sem_figura_nem_texto),
                          (aula02.projeto, c2.projeto_valida_pelo_split),
                          (aula02.aquecimento_softmax, c2.sm_eixo_zero_sempre)):
        with pytest.raises(AssertionError):
            check(errada)


def test_o_que_a_funcao_do_aluno_imprime_e_desenha_nao_fica(capsys):
    """O texto impresso pela função do aluno não entra no relatório, e as figuras que ela abriu são fechadas."""
    import matplotlib.pyplot as plt
    import test_checks_aula01 as t1

    from atencao.checks import aula01

    def proj_falante(frase, vectors=None):
        print("LINHA DO ALUNO")
        return t1.proj_certo(frase, vectors)

    antes = plt.get_fignums()
    assert aula01.projeto(proj_falante)
    assert "LINHA DO ALUNO" not in capsys.readouterr().out
    assert plt.get_fignums() == antes


def test_avisos_do_numpy_nao_vazam_para_o_relatorio(recwarn):
    import test_checks_aula02_corpus as c2

    from atencao.checks import aula02

    assert not aula02.exercicio_1(c2.mask_softmax_ingenua)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


# ---------- um critério que falha encerra a verificação (StopCheck) ----------
def test_um_criterio_que_falha_para_a_verificacao(capsys, monkeypatch):
    """``require`` e ``stop=True`` param no ❌; ``fail`` registra só o ❌ (nenhum ✅ quando não é chamado); um caso
    de ``cases`` com um ❌ mostra todos os critérios dele e não deixa o próximo começar."""
    from atencao.checks.framework import check

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

    @check("Exercício 9")
    def exercicio_9(c, fn):
        for n in c.cases([1, 2, 3]):
            got = fn(n)
            c.require(isinstance(got, int), f"n = {n}: devolve um int", hint="devolva um número.")
            if got < 0:
                c.fail(f"n = {n}: sem sinal", hint="tire o sinal.")
            c.expect(got % 2 == 0, f"n = {n}: par", hint="dobre.")
            c.expect(got == 2 * n, f"n = {n}: o dobro", hint="2 * n.")

    assert exercicio_9(lambda n: 2 * n)
    assert capsys.readouterr().out.count("✅") == 1 + 3 * 3  # o cabeçalho e 3 critérios por caso
    result = exercicio_9(lambda n: 2 * n if n < 2 else n + 1)  # o caso 2 falha nos dois últimos critérios
    out = capsys.readouterr().out
    assert result.failures == ["n = 2: par", "n = 2: o dobro"] and "no caso 2 de 3" in out and "n = 3" not in out
    assert exercicio_9(lambda n: "2").failures == ["n = 1: devolve um int"]
    assert "n = 1: par" not in capsys.readouterr().out
    assert exercicio_9(lambda n: -2).failures == ["n = 1: sem sinal"]
    assert "sem sinal" not in exercicio_9(lambda n: 2 * n).failures


def test_call_frozen_congela_chama_e_desempacota(capsys, monkeypatch):
    import numpy as np

    from atencao.checks.framework import call_frozen, check

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    vistos = {}

    @check("Exercício 9")
    def exercicio_9(c, fn):
        X = np.arange(6.0).reshape(2, 3)
        (saida, pesos), (Xc, k) = call_frozen(c, "caso 1", fn, X, 2, names=("X", "k"))
        vistos.update(saida=saida, Xc=Xc, k=k)
        c.close(saida, Xc * k, "caso 1: saída")

    assert exercicio_9(lambda X, k: (X * k, [[1, 0]]))
    assert vistos["k"] == 2 and not vistos["Xc"].flags.writeable and vistos["saida"].dtype == float
    vistos.clear()
    result = exercicio_9(lambda X, k: X * k)  # sem os pesos: para antes de comparar
    assert result.failures == ["caso 1: devolve (saida, pesos)"] and not vistos
    assert "return saida, pesos" in " ".join(capsys.readouterr().out.split())


def test_o_esboco_levantado_no_processo_do_aluno_nao_aponta_a_chamada_remota(capsys, monkeypatch):
    """No ``make validar`` e na correção, o ``NotImplementedError`` do esboço vem do processo do aluno e é levantado
    de novo deste lado, pelos métodos da chamada remota: o ⏳ diz "ainda não resolvido" (a função do aluno), e não
    que ela usa ``__call__`` ou ``_call_remote``; um ajudante ainda em esboço continua nomeado."""
    from atencao.checks import aula01

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

    def esboco(quem):
        def _call_remote():  # como o verificador a levanta de novo, refeita (correcao._veredito)
            exc = NotImplementedError()
            exc.remoto, exc.quem_levantou = True, quem
            raise exc

        def attention_with_projections(X, W_q, W_k, W_v):
            return _call_remote()
        return attention_with_projections

    aula01.exercicio_4(esboco("attention_with_projections"))
    out = capsys.readouterr().out
    assert "ainda não resolvido" in out and "attention_with_projections" not in out.split("—", 1)[1], out
    aula01.exercicio_4(esboco("my_softmax"))
    out = capsys.readouterr().out
    assert "usa my_softmax" in " ".join(out.split()), out
