// Prepara, no próprio Pyodide do site rodando no Node, o que o navegador faria a cada visita:
// 1. o cache de fontes do matplotlib (fontlist.json);
// 2. o bytecode (.pyc) de cada módulo Python das rodas do site.
// Uso: node site/preparar_pyodide.mjs PASTA_DO_PYODIDE PEDIDO.json PASTA_DE_SAIDA
// PEDIDO.json: {"rodas": {"arquivo.whl": ["pacote/modulo.py", ...]}}. Na saída: fontlist.json e, para cada roda,
// uma pasta com o nome dela e os .pyc no caminho que o Python procura (pacote/__pycache__/modulo.cpython-312.pyc).
// O scripts/site.py chama este arquivo na construção e põe o resultado nas rodas.
import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pasta, pedido, saida] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(resolve(pasta, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: resolve(pasta) + "/", stdout: () => {}, stderr: () => {} });
const lock = JSON.parse(readFileSync(resolve(pasta, "pyodide-lock.json"), "utf8"));
const rodas = JSON.parse(readFileSync(pedido, "utf8")).rodas;
const nomes = Object.values(lock.packages).filter((p) => p.file_name in rodas).map((p) => p.name);
await pyodide.loadPackage(nomes, { messageCallback: () => {} });
mkdirSync(saida, { recursive: true });
pyodide.FS.mkdirTree("/saida");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: resolve(saida) }, "/saida");
pyodide.globals.set("rodas", pyodide.toPy(rodas));
const resumo = pyodide.runPython(`
import importlib.util
import json
import py_compile
import warnings
from pathlib import Path

import matplotlib.font_manager as fm

# 1. o fontlist.json que vem na roda é de outra versão (e de outra máquina): o font_manager o refez ao lado dele,
# como faria no navegador; a ordem da busca muda a cada vez, então as listas saem ordenadas
cache = json.loads((Path(fm.__file__).parent / "fontlist.json").read_text())
assert cache["_version"] == fm.FontManager.__version__
for lista in ("ttflist", "afmlist"):
    cache[lista].sort(key=lambda fonte: (fonte["fname"], fonte["name"]))
Path("/saida/fontlist.json").write_text(json.dumps(cache, indent=2))

# 2. o bytecode, com invalidação por hash sem conferência: o Python o usa sem olhar a data do .py
sp = Path("/lib/python3.12/site-packages")
feitos = 0
with warnings.catch_warnings():
    warnings.simplefilter("ignore", SyntaxWarning)
    for roda, modulos in rodas.items():
        for modulo in modulos:
            fonte = sp / modulo
            pyc = Path(importlib.util.cache_from_source(str(fonte)))
            py_compile.compile(str(fonte), cfile=f"/saida/{roda}/{pyc.relative_to(sp)}", dfile=str(fonte),
                               doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            feitos += 1
f"{feitos} módulos compilados"
`);
console.log(resumo);
