"""Gera o corpus da Aula 6: a prosa dos notebooks das Aulas 1 a 5 do curso, em ``lib/atencao/dados/corpus_aula06.txt``.

É texto que o próprio projeto escreveu (as células de texto dos notebooks de ``notebooks/modulo-06/``, mais as
respostas modelo de ``solutions/``), sem código, fórmulas, endereços nem marcação: só frases em português. A Aula 6
fica de fora, para o corpus não mudar quando o texto dela muda.

Uso::

    python3 scripts/corpus_aula06.py            # regrava o arquivo
    python3 scripts/corpus_aula06.py --conferir # só confere que o arquivo guardado é o que o script gera (0 = igual)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "lib" / "atencao" / "dados" / "corpus_aula06.txt"
LESSONS = ("aula-01", "aula-02", "aula-03", "aula-04", "aula-05")

_FENCE = re.compile(r"```.*?```", re.S)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_HTML = re.compile(r"<[^>\n]+>")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_CODE = re.compile(r"`[^`\n]*`")
_SIMPLE_CODE = re.compile(r"`([A-Za-zÀ-ÿ][\w.-]*)`")
_SIMPLE_MATH = re.compile(r"\$([A-Za-z])(_\{?[A-Za-z0-9]+\}?)?\$")
_MARKUP = re.compile(r"[*_#>|]+")
_SOLUTION = re.compile(r"^### (BEGIN|END) SOLUTION\s*$", re.M)


def notebooks() -> list[Path]:
    """Os notebooks das Aulas 1 a 5 (os de ``notebooks/`` e, das soluções, os que só existem lá), em ordem."""
    paths = []
    for lesson in sorted((ROOT / "notebooks" / "modulo-06").iterdir()):
        if lesson.is_dir() and lesson.name.startswith(LESSONS):
            for nb in sorted(lesson.glob("*.ipynb")):
                sol = ROOT / "solutions" / "modulo-06" / lesson.name / nb.name
                paths.append(sol if sol.exists() else nb)  # a solução tem a prosa do aluno e as respostas modelo
    return paths


def clean(markdown: str) -> list[str]:
    """Um texto de célula → os parágrafos de prosa (linhas de tabela, títulos curtos e fórmulas saem)."""
    text = _SOLUTION.sub("", markdown)
    for pattern in (_FENCE, _DISPLAY_MATH, _IMAGE, _HTML):
        text = pattern.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("|")]  # tabelas
        para = " ".join(ln.strip().lstrip("-0123456789. ").strip() if ln.lstrip()[:2] in ("- ", "* ")
                        or re.match(r"\s*\d+\.\s", ln) else ln.strip() for ln in lines)
        # nomes simples em código ou fórmula (`softmax`, $n$, $d_k$) viram texto; uma frase com outra fórmula
        # ou outro código sai inteira (tirar só a fórmula deixaria a frase quebrada)
        para = _SIMPLE_CODE.sub(r"\1", para)
        para = _SIMPLE_MATH.sub(lambda m: m.group(1) + (m.group(2) or "").replace("{", "").replace("}", ""), para)
        sentences = re.split(r"(?<=[.!?])\s+", para)
        para = " ".join(s for s in sentences if not (_INLINE_MATH.search(s) or _CODE.search(s) or "$" in s))
        para = re.sub(r"\s+", " ", _MARKUP.sub("", para)).strip()
        if para.startswith(("Roteiro da aula", "Módulo 6 ·")):
            continue
        para = re.sub(r"\s+([,.;:!?)])", r"\1", para)
        para = re.sub(r"\(\s*\)", "", para)
        if len(para.split()) >= 6:  # títulos e restos de fórmula ficam de fora
            paragraphs.append(para)
    return paragraphs


def build() -> str:
    """O texto do corpus: os parágrafos de todos os notebooks, um por linha, em NFC."""
    out = []
    for path in notebooks():
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                out.extend(clean("".join(cell["source"])))
    return unicodedata.normalize("NFC", "\n".join(out) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conferir", action="store_true", help="só confere o arquivo guardado")
    args = parser.parse_args(argv)
    text = build()
    if args.conferir:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("o corpus guardado é o que o script gera" if same else "o corpus guardado está desatualizado")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(text):,} caracteres, {len(set(text))} diferentes, "
          f"{len(text.split()):,} palavras".replace(",", "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
