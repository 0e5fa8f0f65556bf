"""`make lab` prepara trabalho/ sem nunca sobrescrever as respostas do aluno."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import preparar_trabalho  # noqa: E402


def test_copia_o_que_falta_e_nao_sobrescreve(tmp_path, monkeypatch):
    source = tmp_path / "notebooks"
    (source / "aula").mkdir(parents=True)
    (source / "aula" / "03-exercicios.ipynb").write_text("original")
    (source / "00-comece-aqui.ipynb").write_text("original")
    monkeypatch.setattr(preparar_trabalho, "SOURCE", source)
    monkeypatch.setattr(preparar_trabalho, "WORK", tmp_path / "trabalho")
    assert len(preparar_trabalho.prepare()) == 2
    answer = tmp_path / "trabalho" / "aula" / "03-exercicios.ipynb"
    answer.write_text("resposta do aluno")
    (source / "aula" / "04-projeto.ipynb").write_text("novo notebook do curso")
    assert preparar_trabalho.prepare() == [tmp_path / "trabalho" / "aula" / "04-projeto.ipynb"]
    assert answer.read_text() == "resposta do aluno"


def test_trabalho_fora_do_git_e_do_pytest():
    assert "trabalho/" in (ROOT / ".gitignore").read_text().splitlines()
    assert "trabalho/00-comece-aqui.ipynb" in (ROOT / "Makefile").read_text()
