"""A mesma turma dá sempre os mesmos bytes (docs/professor.md): ``notas.csv``, ``nao-corrigidos.csv`` e cada página
de ``retorno/``, numa correção única e em partes juntadas, embora a conferência sorteie casos novos a cada correção.

O teste lento compara a turma de exemplo inteira corrigida uma vez (a correção da sessão, ``turma_corrigida``,
compartilhada com test_correcao) com a mesma turma corrigida de novo em 2 partes e juntada: duas correções, com
casos sorteados diferentes, e a junção, byte a byte. Os testes rápidos provam o mesmo no motivo de uma função que
levanta um erro com o valor do caso sorteado na mensagem e no de um caso cujo rótulo cita um valor sorteado.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from exigir import pular_fora_da_ci

from correcao import isolamento, motor, partes

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import turma_corrigida  # noqa: E402

TURMA = ROOT / "tests" / "turma-exemplo.zip"


@pytest.fixture(scope="module")
def correcao(tmp_path_factory):
    """A turma corrigida uma vez na sessão (a mesma de test_correcao, test_validar e test_correcao_extra)."""
    return turma_corrigida.turma_corrigida(tmp_path_factory)


def _arvore(pasta: Path) -> dict:
    return {p.relative_to(pasta).as_posix(): p.read_bytes() for p in sorted(pasta.rglob("*")) if p.is_file()}


def _diferenca(a: bytes, b: bytes) -> str:
    linhas = difflib.unified_diff(a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines(),
                                  "correção única", "partes juntadas", n=0, lineterm="")
    return "\n".join(list(linhas)[:20])


@pytest.mark.lento
@pular_fora_da_ci(not isolamento.bwrap_available(), "sem bubblewrap nesta máquina (o CI instala)")
def test_turma_inteira_corrigida_de_novo_em_partes_da_os_mesmos_bytes(correcao, tmp_path):
    """A turma de exemplo inteira, corrigida de novo em 2 partes (com os limites da correção da sessão) e juntada:
    os mesmos bytes da correção única, inclusive na linha de quem responde por uma tabela dos casos fixos (a
    conferência a reprova num caso sorteado, diferente em cada correção)."""
    pastas = []
    for k in (1, 2):
        pasta = tmp_path / f"parte-{k}"
        assert motor.grade_class(TURMA, pasta, cell_timeout=20, notebook_timeout=120, log=lambda *_: None,
                                 parte=(k, 2))
        pastas.append(pasta)
    juntas, unica = tmp_path / "juntas", correcao["saida"]
    partes.join_parts(pastas, juntas, log=lambda *_: None)
    tabela = next(r for r in correcao["table"] if r["aluno"] == "trapaca-tabela")
    # a tabela dos casos do notebook passa no relatório do retorno e falha nos casos sorteados, sem citar nenhum deles
    assert "falhou na conferência independente" in tabela["motivo"] and "KeyError" in tabela["motivo"], tabela
    for nome in ("notas.csv", "nao-corrigidos.csv"):
        esperado, obtido = (unica / nome).read_bytes(), (juntas / nome).read_bytes()
        assert obtido == esperado, f"{nome}:\n{_diferenca(esperado, obtido)}"
    esperado, obtido = _arvore(unica / "retorno"), _arvore(juntas / "retorno")
    assert sorted(obtido) == sorted(esperado) and len(esperado) == len(correcao["rows"])
    diferentes = [nome for nome in esperado if obtido[nome] != esperado[nome]]
    assert not diferentes, "\n\n".join(f"{n}:\n{_diferenca(esperado[n], obtido[n])}" for n in diferentes[:3])


# ---------- rápido: o motivo de uma falha num caso sorteado ----------
# A conferência liga os casos sorteados antes de as verificações carregarem (:func:`correcao._veredito.load_checks`):
# ligá-los depois é apontado como troca e desfeito (veja atencao.checks.integrity). Por isso as verificações rodam
# aqui num processo novo, como na conferência (:func:`_na_conferencia`), e os testes leem o que ele devolveu.
class _Canal:
    """O canal com o processo do aluno, que aqui não existe: a função remota responde sozinha."""

    parou = False


def _remota(tipo: str, mensagem, vistos: list):
    """Uma função do aluno "remota" (como na correção) que, em cada caso, levanta ``tipo`` com uma mensagem feita
    do caso sorteado (``mensagem(X)``), como o processo do aluno a mandaria (``str(exc)``), na linha 7 dela."""
    from correcao import _veredito

    class Remota(_veredito._make_remote_base()):
        def call_checked(self, args, kwargs, names, forbidden):
            vistos.append(args[0].tobytes().hex())
            onde = None if tipo == "TempoEsgotado" else [7, "attention_with_projections"]
            return _veredito.RemoteAnswer(error=_veredito._exception(
                {"tipo": tipo, "mensagem": mensagem(args[0]), "onde": onde}))

    return Remota


_ERROS = {"KeyError": lambda X: str(KeyError(X.tobytes())),  # a tabela de respostas da turma de exemplo
          "ValueError": lambda X: str(ValueError(repr(X))),  # um array do caso na mensagem
          "LinAlgError": lambda X: f"Singular matrix {X[0, 0]!r}"}  # um tipo que não é dos comuns


def _na_conferencia(destino: str) -> None:
    """Num processo novo: as verificações com os casos sorteados, como na conferência, cada uma duas vezes."""
    import contextlib
    import io

    import numpy as np

    from correcao import _veredito

    modulos = _veredito.load_checks()
    aula01, aula02 = modulos["aula01"], modulos["aula02"]
    res: dict = {}
    vistos: list = []

    def tabela(X, W_q, W_k, W_v):  # a tabela de respostas chamada direto, sem o processo do aluno
        vistos.append(X.tobytes().hex())
        raise KeyError(X.tobytes())

    fixas = {1: np.tril(np.ones((1, 1), dtype=bool))}  # só o primeiro caso (n = 1, fixo também na conferência)
    ns: list = []

    def mascara(n):
        ns.append(n)
        return fixas.get(n, np.ones((n, n), dtype=bool))

    with contextlib.redirect_stdout(io.StringIO()) as impresso:
        tempo = {"TempoEsgotado": lambda X: "a função passou do tempo limite (ou o processo dela parou)"}
        for tipo, mensagem in (_ERROS | tempo).items():
            visto: list = []
            detalhes = [_veredito._judge({"fonte": "aula01.exercicio_4(attention_with_projections)"}, modulos,
                                         _remota(tipo, mensagem, visto), _Canal(), 20.0)[:3] for _ in range(2)]
            res[tipo] = {"detalhes": detalhes, "casos": visto}
        class Parado(_veredito._make_remote_base()):
            def call_checked(self, args, kwargs, names, forbidden):
                raise _veredito.StudentProcessStopped("o processo do aluno não respondeu a tempo")

        res["parou"] = _veredito._judge({"fonte": "aula01.exercicio_4(f)"}, modulos, Parado, _Canal(), 20.0)[:3]
        res["local"] = {"falhas": [aula01.exercicio_4(tabela).failures for _ in range(2)], "casos": vistos}
        falhas = []
        while len(set(ns) - set(fixas)) < 2 and len(falhas) < 40:  # até sortear dois n diferentes
            falhas.append(aula02.exercicio_1_passo_1(mascara).failures)
        res["mascara"] = {"falhas": falhas, "casos": sorted(set(ns) - set(fixas))}
    res["impresso"] = impresso.getvalue()
    Path(destino).write_text(json.dumps(res), encoding="utf-8")


@pytest.fixture(scope="module")
def conferencia(tmp_path_factory) -> dict:
    destino = tmp_path_factory.mktemp("conferencia") / "resultado.json"
    codigo = f"import test_correcao_deterministica as t; t._na_conferencia({str(destino)!r})"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    feito = subprocess.run([sys.executable, "-c", codigo], env=env, capture_output=True, text=True, timeout=120)
    assert feito.returncode == 0, feito.stderr[-3000:]
    return json.loads(destino.read_text(encoding="utf-8"))


@pytest.mark.parametrize("tipo", sorted(_ERROS))
def test_motivo_da_conferencia_nao_cita_o_caso_sorteado(conferencia, tipo):
    """O detalhe da conferência (o que entra no motivo de ``notas.csv`` e no retorno) de uma função que levanta um
    erro com os valores do caso sorteado na mensagem: o mesmo em duas correções com sementes diferentes, com o
    tipo do erro e a linha, sem a mensagem."""
    res = conferencia[tipo]
    assert len(res["casos"]) == 2 and res["casos"][0] != res["casos"][1]  # cada correção sorteou outro caso
    primeiro, segundo = res["detalhes"]
    assert segundo == primeiro, res["detalhes"]
    assert primeiro == [False, f"caso 1 de 5: o seu código levantou {tipo} (linha 7 de attention_with_projections)",
                        "student_exception"]  # (passou, detalhe, a categoria do engano: veja correcao.class_report)


def test_mensagem_escrita_pela_correcao_continua_no_motivo(conferencia):
    """As mensagens que a própria correção escreve (o tempo esgotado, o processo do aluno parado) não citam o caso
    sorteado: continuam no motivo, que diz o que houve."""
    assert conferencia["TempoEsgotado"]["detalhes"][0] == [
        False, "caso 1 de 5: a função passou do tempo limite", "timeout"]
    passou, detalhe, _ = conferencia["parou"]  # (aqui, a "linha" é a deste arquivo, que faz o papel do processo parado)
    # sem o nome da exceção da correção (StudentProcessStopped), que o aluno não escreveu
    assert not passou and detalhe.startswith("caso 1 de 5: o processo do aluno não respondeu a tempo"), detalhe
    assert "StudentProcessStopped" not in detalhe and "o seu código levantou" not in detalhe, detalhe


def test_erro_local_num_caso_sorteado_da_a_mesma_falha(conferencia):
    """Sem processo do aluno (a verificação chamando a função direto): a falha guardada em ``failures`` também não
    cita a mensagem com o caso sorteado, que continua no relatório impresso."""
    res = conferencia["local"]
    assert len(res["casos"]) == 2 and res["casos"][0] != res["casos"][1]
    primeira, segunda = res["falhas"]
    assert primeira == segunda and len(primeira) == 1, res["falhas"]
    assert re.fullmatch(r"caso 1 de 5: o seu código levantou KeyError \(linha \d+ de tabela\)", primeira[0])
    # o repr dos bytes sorteados usa aspas duplas quando eles têm um ' e nenhum "
    assert re.search("mensagem: “b['\"]", " ".join(conferencia["impresso"].split()))


def test_rotulo_com_valor_sorteado_fica_fora_da_falha(conferencia):
    """O rótulo de um caso pode citar um valor sorteado (a máscara com ``n`` sorteado): na conferência, a falha
    diz o número do caso no lugar do rótulo, a mesma para qualquer ``n`` sorteado."""
    res = conferencia["mascara"]
    assert len(res["casos"]) >= 2, res  # dois n sorteados diferentes
    assert all(f == res["falhas"][0] for f in res["falhas"]), res
    assert res["falhas"][0] == ["caso 2 de 5: True na diagonal e abaixo dela (j ≤ i)"], res


def test_no_notebook_o_criterio_continua_com_a_mensagem(capsys):
    """Com os casos fixos do notebook, o aluno lê a mensagem do erro no critério, como antes."""
    from atencao.checks import aula01

    def tabela(X, W_q, W_k, W_v):
        raise KeyError(X.tobytes())

    resultado = aula01.exercicio_4(tabela)
    assert not resultado and resultado.failures[0].startswith("o seu código levantou KeyError: b'"), resultado.failures
