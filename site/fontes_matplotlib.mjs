// Gera o cache de fontes do matplotlib (fontlist.json) rodando o próprio Pyodide do site no Node.
// Uso: node site/fontes_matplotlib.mjs PASTA_DO_PYODIDE ARQUIVO_DE_SAIDA
// O scripts/site.py chama este arquivo na construção; assim o navegador não refaz o cache na primeira figura.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pasta, saida] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(resolve(pasta, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: resolve(pasta) + "/", stdout: () => {}, stderr: () => {} });
await pyodide.loadPackage(["matplotlib"], { messageCallback: () => {} });
const texto = pyodide.runPython(`
import json
from pathlib import Path

import matplotlib.font_manager as fm

# o arquivo que vem na roda é de outra versão (e de outra máquina): o font_manager o refaz aqui, como faria no
# navegador, e o grava ao lado dele
caminho = Path(fm.__file__).parent / "fontlist.json"
cache = json.loads(caminho.read_text())
assert cache["_version"] == fm.FontManager.__version__
for lista in ("ttflist", "afmlist"):  # a ordem da busca muda a cada vez: ordenada, o site sai igual a cada construção
    cache[lista].sort(key=lambda fonte: (fonte["fname"], fonte["name"]))
json.dumps(cache, indent=2)
`);
writeFileSync(saida, texto);
