"""references/referencias.bib é válido e contém toda chave citada nos notebooks."""

import json
import re
from pathlib import Path

import bibtexparser

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"`([a-z]+\d{4}[a-z]+)`")


def _library():
    library = bibtexparser.parse_file(str(ROOT / "references" / "referencias.bib"))
    assert not library.failed_blocks, library.failed_blocks
    return library


def test_bib_tem_as_referencias_da_aula_com_campos_essenciais():
    entries = {e.key: e for e in _library().entries}
    for key in ["vaswani2017attention", "bahdanau2015attention", "mikolov2013distributed",
                "alammar2018illustrated", "rush2018annotated"]:
        assert key in entries, key
        fields = entries[key].fields_dict
        assert {"author", "title", "year"} <= set(fields), key
        assert fields["year"].value == re.search(r"\d{4}", key).group(0)
    assert entries["vaswani2017attention"]["title"] == "Attention Is All You Need"


def test_toda_chave_citada_existe():
    keys = {e.key for e in _library().entries}
    cited = {}
    for nb_path in sorted((ROOT / "notebooks").rglob("*.ipynb")) + sorted((ROOT / "solutions").rglob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                for key in CITATION.findall("".join(cell["source"])):
                    cited.setdefault(key, nb_path.name)
    assert cited, "nenhum notebook cita referências"
    missing = {k: v for k, v in cited.items() if k not in keys}
    assert not missing, f"chaves citadas que não existem no .bib: {missing}"


def test_toda_aula_termina_com_referencias():
    for nb_path in sorted((ROOT / "notebooks" / "modulo-06").rglob("0*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "Referências" in text, nb_path.name
