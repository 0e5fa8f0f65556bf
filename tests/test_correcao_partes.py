"""A turma corrigida em partes (``corrigir --parte K/N``) e juntada (``corrigir --juntar``): a divisão por aluno, as
recusas da junção e, no nível lento, alunos da turma de exemplo corrigidos em 2 partes e juntados: os mesmos bytes
da correção única."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from correcao import catalogo, partes
from correcao.entregas import read_submissions
from correcao.motor import plan_class
from correcao.relatorio import Row, write_outputs
from correcao.similarity import compare_class

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
TURMA = ROOT / "tests" / "turma-exemplo.zip"
AULA1 = catalogo.catalog()[("aula-01-self-attention", "03-exercicios")]
NOMES = [f"aluno-{i:03d}" for i in range(200)] + ["João", "joão", "Ana Júlia Souza_101", "=1+1-xavier", ""]


# ---------- a divisão ----------
def test_parte_de_cada_aluno_e_o_sha256_do_nome():
    for nome in NOMES:
        esperado = int.from_bytes(hashlib.sha256(nome.encode("utf-8")).digest()[:8], "big") % 7 + 1
        assert partes.part_of(nome, 7) == esperado
    assert {partes.part_of(nome, 1) for nome in NOMES} == {1}


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_todo_aluno_em_exatamente_uma_parte_e_nenhuma_vazia(n):
    por_parte = {k: [a for a in NOMES if partes.part_of(a, n) == k] for k in range(1, n + 1)}
    assert sorted(a for grupo in por_parte.values() for a in grupo) == sorted(NOMES)
    assert all(len(grupo) >= len(NOMES) / n / 3 for grupo in por_parte.values()), por_parte  # o hash espalha


def test_divisao_nao_muda_com_a_semente_do_hash_nem_com_a_ordem():
    """Outro processo, com outra PYTHONHASHSEED e os nomes em outra ordem, dá a mesma divisão (o ``hash()`` do
    Python daria outra)."""
    codigo = ("import json, sys; from correcao.partes import part_of; "
              "nomes = json.loads(sys.stdin.read()); print(json.dumps({a: part_of(a, 5) for a in nomes}))")
    aqui = {a: partes.part_of(a, 5) for a in NOMES}
    for semente in ("1", "12345"):
        out = subprocess.run([sys.executable, "-c", codigo], input=json.dumps(NOMES[::-1]), capture_output=True,
                             text=True, env={**os.environ, "PYTHONHASHSEED": semente}, check=True)
        assert json.loads(out.stdout) == aqui


def test_alunos_que_entram_ou_saem_nao_mudam_a_parte_dos_outros():
    antes = {a: partes.part_of(a, 4) for a in NOMES[:150]}
    depois = {a: partes.part_of(a, 4) for a in NOMES[50:] + ["aluno-novo", "outra-aluna"]}
    assert all(depois[a] == antes[a] for a in set(antes) & set(depois))


@pytest.mark.parametrize("texto", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""])
def test_parte_mal_escrita_e_recusada_em_portugues(texto):
    with pytest.raises(ValueError, match="--parte: esperado"):
        partes.parse_part(texto)


def test_parte_bem_escrita():
    assert partes.parse_part("2/5") == (2, 5) and partes.parse_part(" 1 / 1 ") == (1, 1)


def test_cada_parte_planeja_so_os_seus_alunos_com_a_numeracao_da_turma(tmp_path):
    """As partes de ``plan_class`` somam exatamente o plano da turma inteira (os mesmos ids internos ``e00007``),
    e cada aluno cai numa parte só."""
    ent = read_submissions(TURMA, tmp_path / "ler")
    tudo = catalogo.catalog()
    plano, linhas, fora = plan_class(ent, tudo, tmp_path / "inteira")

    def resumo(p, r, f):
        return (sorted((e.ident, e.student, e.file) for e in p),
                sorted((x.student, x.notebook, x.arquivo, x.status, tuple(x.reasons)) for x in r), sorted(f))

    soma: list = [[], [], []]
    donos: dict = {}
    for k in (1, 2):
        alunos = {a for a in {*ent.alunos, "", *(x.aluno for x in ent.arquivos)} if partes.part_of(a, 2) == k}
        p, r, f = plan_class(ent, tudo, tmp_path / f"parte-{k}", alunos=alunos)
        assert p or r, f"a parte {k}/2 da turma de exemplo ficou vazia"
        for aluno in {e.student for e in p} | {x.student for x in r} | {x[0] for x in f}:
            assert donos.setdefault(aluno, k) == k
        for total, pedaco in zip(soma, resumo(p, r, f)):
            total += pedaco
    assert tuple(sorted(x) for x in soma) == resumo(plano, linhas, fora)


def test_impressao_digital_da_turma(tmp_path):
    def turma(pasta: Path, ordem, conteudo=b'{"cells": []}'):
        for aluno in ordem:
            (pasta / aluno).mkdir(parents=True)
            (pasta / aluno / "03-exercicios.ipynb").write_bytes(conteudo + aluno.encode())
        return partes.class_fingerprint(read_submissions(pasta, pasta.parent / f"{pasta.name}-tmp"))

    a = turma(tmp_path / "a", ["ana", "bruno", "carla"])
    assert turma(tmp_path / "b", ["carla", "ana", "bruno"]) == a  # outra ordem de escrita, a mesma turma
    assert turma(tmp_path / "c", ["ana", "bruno"]) != a  # uma aluna a menos
    assert turma(tmp_path / "d", ["ana", "bruno", "carla"], b'{"cells": [1]}') != a  # um conteúdo diferente


# ---------- a junção, com linhas feitas à mão (sem corrigir nada) ----------
def _linha(aluno, arquivo="03-exercicios.ipynb", total=2.0, **kw) -> Row:
    scores = {gid: 0.0 for gid in AULA1.checks}
    scores[AULA1.checks[0]] = total
    r = Row(aluno, AULA1.assignment, AULA1.notebook, scores=scores, total=total, maximum=AULA1.max_auto,
            status="parcial", reasons=[f"motivo de {aluno}"], isolation="bwrap+cgroup", arquivo=arquivo,
            corpo=f"<h2>notebook de {aluno} ({arquivo})</h2>", **kw)
    return r


def _turma_feita_a_mao():
    rows = [_linha(f"aluno-{i:02d}", total=float(i % 3)) for i in range(12)]
    rows += [_linha("ana"), _linha("Ana", total=1.0),  # a mesma pasta de retorno sem diferenciar maiúsculas
             _linha("sofia", "v1/03-exercicios.ipynb"), _linha("sofia", "v2/03-exercicios.ipynb"),
             _linha("rui", "03-exercicios.ipynb", em_revisao={AULA1.checks[1]: 1.0}),
             _linha("rui", "03-exercicios.ipynb", total=0.0),  # a mesma chave duas vezes (NFC/NFD): a ordem fica
             Row("", "", "solto", status="fora_de_pasta", reasons=["solto na raiz"], arquivo="solto.ipynb"),
             Row("nina", "", "", status="sem_notebooks", reasons=["nenhum notebook"])]
    fora = [("", "../fora.txt", "caminho que sairia"), ("nina", "foto.png", "não é um notebook"),
            ("aluno-03", "leia.pdf", "não é um notebook")]
    alunos = sorted({r.student for r in rows} - {""})
    return rows, fora, alunos


def _em_partes(tmp_path: Path, n: int, impressao="turma-a", opcoes=None, anexo=None) -> list[Path]:
    """As partes como ``grade_class(parte=...)`` as gravaria: cada uma com as linhas dos seus alunos, ordenadas."""
    rows, fora, alunos = _turma_feita_a_mao()
    pastas = []
    for k in range(1, n + 1):
        meus = [r for r in rows if partes.part_of(r.student, n) == k]
        meus.sort(key=lambda r: (r.student, r.assignment, r.notebook, r.arquivo))
        pasta = tmp_path / f"parte-{k}-de-{n}-{impressao}"
        partes.write_part(pasta, (k, n), meus, [x for x in fora if partes.part_of(x[0], n) == k], impressao, alunos,
                          opcoes or {"tempo_celula": 30}, anexo)
        pastas.append(pasta)
    return pastas


def _arvore(pasta: Path) -> dict:
    return {p.relative_to(pasta).as_posix(): p.read_bytes() for p in sorted(pasta.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("n", [1, 2, 3])
def test_juntar_da_os_mesmos_bytes_que_a_correcao_unica(tmp_path, n):
    rows, fora, _ = _turma_feita_a_mao()
    unica = [Row(**{**r.__dict__}) for r in rows]
    unica.sort(key=lambda r: (r.student, r.assignment, r.notebook, r.arquivo))
    compare_class(unica, tmp_path / "unica")  # como grade_class: a similaridade, depois as notas e os relatórios
    write_outputs(unica, catalogo.catalog(), tmp_path / "unica", fora)
    pastas = _em_partes(tmp_path, n)
    assert {partes.read_part(p)["parte"] for p in pastas} == set(range(1, n + 1))
    juntas, _ = partes.join_parts(pastas[::-1], tmp_path / "juntas", log=lambda *_: None)  # a ordem não importa
    assert [(r.student, r.arquivo, r.total) for r in juntas] == [(r.student, r.arquivo, r.total) for r in unica]
    esperado, obtido = _arvore(tmp_path / "unica"), _arvore(tmp_path / "juntas")
    assert sorted(obtido) == sorted(esperado) and "retorno/ana-2/aula-01-self-attention-03-exercicios.html" in obtido
    for nome in esperado:
        assert obtido[nome] == esperado[nome], nome


def _recusa(tmp_path, pastas, trecho):
    with pytest.raises(partes.PartsError, match=trecho):
        partes.join_parts(pastas, tmp_path / "saida", log=lambda *_: None)
    assert not (tmp_path / "saida" / "notas.csv").exists()


def test_juntar_recusa_partes_faltando_ou_repetidas(tmp_path):
    p1, p2, p3 = _em_partes(tmp_path, 3)
    _recusa(tmp_path, [p1, p3], r"faltam as partes 2/3 \(recebidas: 1/3, 3/3\)")
    shutil.copytree(p2, tmp_path / "copia-da-2")
    _recusa(tmp_path, [p1, p2, tmp_path / "copia-da-2", p3], "a parte 2/3 aparece duas vezes")


def test_juntar_recusa_partes_de_n_diferentes(tmp_path):
    de3, de2 = _em_partes(tmp_path, 3), _em_partes(tmp_path, 2)
    _recusa(tmp_path, de3[:2] + de2[1:], r"partes de divisões diferentes: N = \[2, 3\]")


def test_juntar_recusa_partes_de_turmas_diferentes(tmp_path):
    a, b = _em_partes(tmp_path, 2, "turma-a"), _em_partes(tmp_path, 2, "turma-b")
    _recusa(tmp_path, [a[0], b[1]], "partes de turmas diferentes")


def test_juntar_recusa_opcoes_diferentes_e_moodle_misturado(tmp_path):
    a = _em_partes(tmp_path, 2)
    b = _em_partes(tmp_path / "b", 2, opcoes={"tempo_celula": 10})
    _recusa(tmp_path, [a[0], b[1]], "opções diferentes")
    c = _em_partes(tmp_path / "c", 2, anexo={"moodle": {"ana": ["ana", "1"]}})
    _recusa(tmp_path, [a[0], c[1]], "download do Moodle e partes que não são")


def test_juntar_recusa_o_mesmo_aluno_em_duas_partes(tmp_path):
    p1, p2 = _em_partes(tmp_path, 2)
    dados = json.loads((p2 / partes.PART_FILE).read_text(encoding="utf-8"))
    outro = json.loads((p1 / partes.PART_FILE).read_text(encoding="utf-8"))["linhas"][0]
    dados["linhas"].append(outro)  # uma linha de um aluno da parte 1 também na 2
    (p2 / partes.PART_FILE).write_text(json.dumps(dados), encoding="utf-8")
    _recusa(tmp_path, [p1, p2], f"o aluno “{outro['student']}” aparece em duas partes")


def test_juntar_recusa_pasta_que_nao_e_parte_e_aluno_sem_parte(tmp_path):
    p1, p2 = _em_partes(tmp_path, 2)
    (tmp_path / "vazia").mkdir()
    _recusa(tmp_path, [p1, tmp_path / "vazia"], "não é a saída de uma parte: falta parte.json")
    dados = json.loads((p2 / partes.PART_FILE).read_text(encoding="utf-8"))
    dados["linhas"] = [r for r in dados["linhas"] if r["student"] != dados["linhas"][0]["student"]]
    (p2 / partes.PART_FILE).write_text(json.dumps(dados), encoding="utf-8")
    _recusa(tmp_path, [p1, p2], "alunos da turma sem linha em nenhuma parte")


def test_juntar_um_download_do_moodle_escreve_a_planilha_e_o_zip(tmp_path):
    rows, _, alunos = _turma_feita_a_mao()
    pessoas = {a: [a, str(100 + i)] for i, a in enumerate(alunos)}
    pastas = _em_partes(tmp_path, 2, anexo={"moodle": pessoas})
    from correcao import moodle

    moodle.join_parts(pastas, tmp_path / "saida", log=lambda *_: None)
    melhor: dict = {}  # a nota do Moodle: a melhor cópia de cada notebook
    for r in rows:
        if r.student and r.assignment:
            melhor[(r.student, r.notebook)] = max(melhor.get((r.student, r.notebook), 0.0), r.total)
    esperado = {f"Participante{ident}": sum(t for (a, _), t in melhor.items() if a == aluno)
                for aluno, (_, ident) in pessoas.items()}
    with open(tmp_path / "saida" / "moodle-notas.csv", encoding="utf-8") as f:
        notas = {ln["Identificador"]: float(ln["Nota"].replace(",", ".")) for ln in csv.DictReader(f)}
    assert notas == esperado and notas["Participante100"] == 1.0  # "Ana", a primeira, com 1 ponto
    with zipfile.ZipFile(tmp_path / "saida" / "moodle-retornos.zip") as z:
        assert len(z.namelist()) == sum(1 for r in rows if r.student)  # todas menos a do arquivo solto na raiz
        assert all("_assignfeedback_file/" in n for n in z.namelist())


def test_parte_de_um_download_do_moodle_guarda_os_participantes(tmp_path, monkeypatch):
    """Com ``parte``, o :func:`correcao.moodle.grade_moodle` passa os participantes para a parte (a planilha e o zip
    saem na junção) e não escreve nada do Moodle ainda."""
    from correcao import moodle, motor

    pedidos = []

    def corrige(entregas, saida, **kw):  # no lugar da correção: só guarda o pedido
        Path(saida).mkdir(parents=True, exist_ok=True)
        pedidos.append(kw)
        return []

    monkeypatch.setattr(motor, "grade_class", corrige)
    with zipfile.ZipFile(tmp_path / "moodle.zip", "w") as z:
        z.writestr("Ana Júlia Souza_101_assignsubmission_file_03-exercicios.ipynb", "{}")
        z.writestr("João da Silva_202_assignsubmission_file/03-exercicios.ipynb", "{}")
    moodle.grade_moodle([tmp_path / "moodle.zip"], tmp_path / "saida", log=lambda *_: None, parte=(2, 3))
    (kw,) = pedidos
    assert kw["parte"] == (2, 3)
    assert kw["anexo_parte"] == {"moodle": {"Ana Júlia Souza_101": ["Ana Júlia Souza", "101"],
                                            "João da Silva_202": ["João da Silva", "202"]}}
    assert not (tmp_path / "saida" / "moodle-notas.csv").exists()
    moodle.grade_moodle([tmp_path / "moodle.zip"], tmp_path / "inteira", log=lambda *_: None)
    assert "anexo_parte" not in pedidos[1] and (tmp_path / "inteira" / "moodle-notas.csv").exists()


def test_parte_nao_guarda_os_notebooks_corrigidos(tmp_path):
    from correcao import motor

    with pytest.raises(ValueError, match="guardar_notebooks: não vale com parte"):
        motor.grade_class(TURMA, tmp_path, parte=(1, 2), guardar_notebooks=True)


# ---------- a linha de comando ----------
def test_curso_py_passa_parte_e_juntar_ao_corretor():
    curso = ROOT / "curso.py"
    parte = subprocess.run([sys.executable, str(curso), "--mostrar", "corrigir", "turma.zip", "--parte", "2/3"],
                           cwd=ROOT, capture_output=True, text=True)
    assert parte.returncode == 0, parte.stderr
    assert parte.stdout.strip().splitlines()[-1].endswith("--parte 2/3")
    juntar = subprocess.run([sys.executable, str(curso), "--mostrar", "corrigir", "--juntar", "p1", "p2",
                             "--saida", "s"], cwd=ROOT, capture_output=True, text=True)
    linha = juntar.stdout.strip().splitlines()[-1]
    assert juntar.returncode == 0 and "corrigir.py --juntar" in linha and linha.split("--saida")[0].endswith("p2 ")
    misturado = subprocess.run([sys.executable, str(curso), "corrigir", "t.zip", "--juntar", "p1"], cwd=ROOT,
                               capture_output=True, text=True)
    assert misturado.returncode == 2 and "--juntar recebe só as pastas das partes" in misturado.stdout


def test_corrigir_py_diz_em_portugues_o_que_faltou(tmp_path):
    script = ROOT / "scripts" / "corrigir.py"
    ruim = subprocess.run([sys.executable, str(script), str(TURMA), "--parte", "3/2"], capture_output=True,
                          text=True)
    assert ruim.returncode == 2 and "--parte: esperado 1 ≤ K ≤ N em K/N, recebido 3/2" in ruim.stderr
    p1, p3 = _em_partes(tmp_path, 3)[::2]
    falta = subprocess.run([sys.executable, str(script), "--juntar", str(p1), str(p3), "--saida",
                            str(tmp_path / "s")], capture_output=True, text=True)
    assert falta.returncode == 2 and "Não juntei as partes: faltam as partes 2/3" in falta.stderr
    # limites zero ou negativos e uma planilha do Moodle que não existe: recusados antes de corrigir a turma (um tempo
    # de célula negativo reprovava os alunos certos; a memória negativa e a planilha davam um traceback no fim)
    for opcao, valor, trecho in (("--tempo-celula", "-1", "maior que zero, recebido -1"),
                                 ("--tempo-celula", "0", "maior que zero, recebido 0"),
                                 ("--memoria", "-5", "maior que zero, recebido -5"),
                                 ("--tempo-notebook", "abc", "esperado um número, recebido 'abc'"),
                                 ("--planilha-moodle", str(tmp_path / "nao.csv"), "planilha não encontrada")):
        ruim = subprocess.run([sys.executable, str(script), str(TURMA), opcao, valor, "--saida", str(tmp_path / "x")],
                              capture_output=True, text=True, timeout=60)
        assert ruim.returncode == 2 and trecho in ruim.stderr, (opcao, valor, ruim.stderr[-500:])
        assert "Traceback" not in ruim.stderr and not (tmp_path / "x" / "notas.csv").exists()


# ---------- o Indexed Job do Kubernetes ----------
def test_indexed_job_coerente_com_a_divisao_e_com_a_imagem_do_hub():
    """``hub/corrigir-job.yaml``: um Indexed Job em que cada índice (0..N-1) corrige a parte índice+1 de N, com
    ``completions`` = N, numa pasta própria, sobre as entregas do volume montado, com a imagem do hub."""
    yaml = pytest.importorskip("yaml", reason="PyYAML (vem com o jupyter-events do JupyterLab)")

    job = next(d for d in yaml.safe_load_all((ROOT / "hub" / "corrigir-job.yaml").read_text(encoding="utf-8"))
               if d and d.get("kind") == "Job")  # o Job e a NetworkPolicy dos pods dele
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    n = spec["completions"]
    assert isinstance(n, int) and n >= 2 and 1 <= spec["parallelism"] <= n
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (recipiente,) = pod["containers"]
    comando = " ".join(recipiente["command"] + recipiente["args"])
    m = re.search(r"corrigir (\S+) --parte \$\(\(JOB_COMPLETION_INDEX\+1\)\)/(\d+) "
                  r"--saida (\S*\$\(\(JOB_COMPLETION_INDEX\+1\)\)\S*)", " ".join(comando.split()))
    assert m, comando
    entregas, n_comando, saida = m[1], int(m[2]), m[3]
    assert n_comando == n, f"completions = {n}, mas o comando divide em {n_comando}"
    assert recipiente["command"][:2] == ["bash", "-c"]  # $((...)) precisa de um shell
    montagens = {v["mountPath"]: v["name"] for v in recipiente["volumeMounts"]}
    raiz = next((m for m in montagens if entregas.startswith(m + "/") and saida.startswith(m + "/")), None)
    assert raiz, (entregas, saida, montagens)  # entregas e partes no volume compartilhado
    volume = next(v for v in pod["volumes"] if v["name"] == montagens[raiz])
    assert "persistentVolumeClaim" in volume
    valores = yaml.safe_load((ROOT / "hub" / "values.yaml").read_text(encoding="utf-8"))
    imagem = valores["singleuser"]["image"]
    assert recipiente["image"] == f"{imagem['name']}:{imagem['tag']}"
    # o shell de cada pod (índice 0..N-1) expande o comando para uma parte diferente, numa pasta diferente
    vistos = []
    for indice in range(n):
        eco = subprocess.run(["bash", "-c", recipiente["args"][0].replace("python3 curso.py", "echo", 1)],
                             capture_output=True, text=True, check=True, env={**os.environ,
                                                                              "JOB_COMPLETION_INDEX": str(indice)})
        palavras = eco.stdout.split()
        vistos.append((partes.parse_part(palavras[palavras.index("--parte") + 1]),
                       palavras[palavras.index("--saida") + 1]))
    assert [k for k, _ in vistos] == [(i, n) for i in range(1, n + 1)]
    assert len({pasta for _, pasta in vistos}) == n


# ---------- lento: uma parte da turma de exemplo, corrigida de verdade ----------
# Os alunos da turma de exemplo que entram na comparação: os casos que a junção precisa acertar, das duas partes
# (um arquivo solto na raiz, duas cópias, um nome com aspas e $(...), uma fórmula de planilha, um arquivo
# desconhecido, um zip dentro da turma, nomes com "\\" de um zip do Windows, um arquivo vazio, uma pasta sem
# notebooks, três notebooks de duas aulas, a entrada sorteada), sem os que só esperam um limite (laço infinito,
# memória, processo fantasma), já corrigidos pela turma inteira em ``turma_corrigida``.
SUBTURMA = {"", "sofia-duas-copias", "elisa-excecao", 'sérgio "o brabo" [A] *?$(whoami);\'', "'=1+1-xavier",
            "quico-desconhecido", "yara.zip", "paulo-zip-windows", "joao-arquivos-ruins", "nina-sem-notebooks",
            "ana-correta", "trapaca-tabela"}


def _subturma(destino: Path) -> Path:
    """O zip da turma de exemplo só com os alunos de :data:`SUBTURMA` (as entradas copiadas como estão, com os
    mesmos nomes e datas)."""
    with zipfile.ZipFile(TURMA) as zin, zipfile.ZipFile(destino, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            caminho = re.split(r"[/\\]", info.filename)
            solto = len(caminho) == 2 and info.filename.endswith(".ipynb")  # um notebook na raiz da turma
            if caminho[0] == "turma-exemplo" and len(caminho) > 1 and (caminho[1] in SUBTURMA or solto):
                zout.writestr(info, zin.read(info))
    return destino


def test_retorno_igual_com_a_saida_em_um_ou_dois_pedacos(tmp_path):
    """O kernel manda a mesma saída em um ou em dois pedaços, conforme o momento em que a descarregou; o retorno
    (HTML) é o mesmo, sem uma caixa vazia a mais."""
    import nbformat

    from correcao.relatorio import notebook_body

    paginas = []
    for pedacos in (["logits grandes: [0.1 0.9]\n"], ["logits grandes: ", "[0.1 0.9]", "\n"]):
        celula = nbformat.v4.new_code_cell("print(...)", id="celula-1")
        celula.outputs = [nbformat.v4.new_output("stream", name="stdout", text=t) for t in pedacos]
        nb = nbformat.v4.new_notebook(cells=[celula])
        nbformat.write(nb, tmp_path / f"{len(pedacos)}.ipynb")
        paginas.append(notebook_body(tmp_path / f"{len(pedacos)}.ipynb"))
    assert paginas[0] == paginas[1] and "logits grandes: [0.1 0.9]" in paginas[0]


@pytest.mark.lento
def test_turma_em_duas_partes_igual_a_correcao_unica(tmp_path):
    """Uma parte da turma de exemplo (:data:`SUBTURMA`, com alunos nas duas partes) corrigida uma vez inteira e
    outra em 2 partes (como em 2 máquinas, com os mesmos limites) e juntada: ``notas.csv``, ``nao-corrigidos.csv``
    e cada página de ``retorno/`` com os mesmos bytes (a conferência sorteia outros casos em cada correção, mas o
    motivo de quem responde por uma tabela, ``trapaca-tabela``, não cita o caso que faltou nela)."""
    from turma_exemplo.esperado import EXPECTED

    from correcao import motor

    turma = _subturma(tmp_path / "subturma.zip")
    alunos = {a for a in read_submissions(turma, tmp_path / "ler").alunos}
    assert {partes.part_of(a, 2) for a in alunos} == {1, 2}, alunos

    def corrigir(pasta: Path, parte=None):
        return motor.grade_class(turma, pasta, cell_timeout=20, notebook_timeout=120, log=lambda *_: None,
                                 parte=parte)

    unica = tmp_path / "unica"
    linhas_unica = corrigir(unica)
    esperado_aqui = {chave: v for chave, v in EXPECTED.items() if chave[0] in alunos or chave[0] == ""}
    obtido = {(r.student, r.arquivo): (r.status, r.total) for r in linhas_unica}
    assert obtido == {chave: (v[2], float(v[3])) for chave, v in esperado_aqui.items()}  # as notas da turma inteira
    pastas = []
    for k in (1, 2):
        pasta = tmp_path / f"parte-{k}"
        rows = corrigir(pasta, parte=(k, 2))
        assert rows and not (pasta / "notas.csv").exists()  # a parte só guarda parte.json
        pastas.append(pasta)
    partes.join_parts(pastas, tmp_path / "juntas", log=lambda *_: None)
    juntas = tmp_path / "juntas"
    assert (juntas / "nao-corrigidos.csv").read_bytes() == (unica / "nao-corrigidos.csv").read_bytes()
    assert (juntas / "notas.csv").read_bytes() == (unica / "notas.csv").read_bytes()
    esperado, obtido_arvore = _arvore(unica / "retorno"), _arvore(juntas / "retorno")
    assert sorted(obtido_arvore) == sorted(esperado) and len(esperado) == len(linhas_unica)
    assert [nome for nome in esperado if obtido_arvore[nome] != esperado[nome]] == []


@pytest.mark.lento  # o comando alembic e um curso do nbgrader: ~8 s
def test_revisao_do_banco_do_nbgrader_sem_processo_novo_e_a_mesma_do_comando_alembic(tmp_path):
    """``motor.alembic_head`` (no mesmo processo) dá a revisão que o nbgrader pede ao comando ``alembic``, e o
    banco de notas que um trabalhador da correção cria fica marcado com ela."""
    import sqlite3

    from nbgrader.dbutil import _temp_alembic_ini

    from correcao import motor
    from correcao.catalogo import catalog
    from correcao.politica import GradingPolicy

    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        saida = subprocess.run([sys.executable, "-m", "alembic", "-c", ini, "heads"], capture_output=True, text=True,
                               check=True).stdout
    do_comando = saida.split()[0]
    assert motor.alembic_head() == do_comando and len(do_comando) == 12
    g = next(iter(catalog().values()))
    w = motor.Worker(tmp_path / "p", [g], 0, GradingPolicy(isolate=False), "teste-alembic")
    try:
        with sqlite3.connect(w.course / "gradebook.db") as db:
            assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(do_comando,)]
    finally:
        w.close()
