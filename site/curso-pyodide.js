// O script que o kernel do curso carrega no lugar do pyodide.js (o "pyodideUrl" do jupyter-lite.json). Roda no
// worker de cada kernel e faz três coisas antes de entregar o Pyodide ao kernel do JupyterLite:
// 1. conta os bytes que o worker baixa (o runtime e os pacotes) e os anuncia no canal "curso-carregando", de onde
//    a faixa da página (site/carregando/remoteEntry.js) tira o progresso do download;
// 2. carrega o pyodide.js de verdade, da mesma pasta;
// 3. logo depois de o kernel importar o pyodide_kernel, liga o lado do kernel do curso
//    (curso_site.navegador.iniciar_kernel: o texto impresso em linhas inteiras e as saídas guardadas do PyTorch).
// O total esperado (os bytes até a primeira célula com "import atencao") é escrito aqui pelo scripts/site.py.
(function () {
  "use strict";
  var TOTAL_ESPERADO = 0; /* __CURSO_TOTAL__ */
  var canal = typeof BroadcastChannel === "function" ? new BroadcastChannel("curso-carregando") : null;
  var fetchOriginal = self.fetch.bind(self);
  var ultimo = 0;

  function anunciar(url, lidos, fim) {
    var agora = Date.now();
    if (!canal || (!fim && agora - ultimo < 200)) return;
    ultimo = agora;
    canal.postMessage({ tipo: "baixando", url: url, lidos: lidos, total: TOTAL_ESPERADO });
  }

  self.fetch = function (recurso, opcoes) {
    return fetchOriginal(recurso, opcoes).then(function (resposta) {
      if (!canal || !resposta.body || !resposta.ok || typeof TransformStream !== "function") return resposta;
      var url = resposta.url || String(recurso);
      var lidos = 0;
      var contador = new TransformStream({
        transform: function (pedaco, controle) {
          lidos += pedaco.byteLength;
          anunciar(url, lidos, false);
          controle.enqueue(pedaco);
        },
        flush: function () { anunciar(url, lidos, true); }
      });
      var nova = new Response(resposta.body.pipeThrough(contador),
                              { status: resposta.status, statusText: resposta.statusText, headers: resposta.headers });
      Object.defineProperty(nova, "url", { value: resposta.url });
      return nova;
    });
  };

  var INICIAR = "import curso_site.navegador\ncurso_site.navegador.iniciar_kernel()\n";

  self.loadPyodide = async function (opcoes) {
    var meu = self.loadPyodide;
    importScripts(opcoes.indexURL + "pyodide.js"); // define o self.loadPyodide de verdade
    var loadPyodide = self.loadPyodide;
    self.loadPyodide = meu;
    var pyodide = await loadPyodide(opcoes);
    var rodar = pyodide.runPythonAsync.bind(pyodide);
    var ligado = false;
    pyodide.runPythonAsync = async function (codigo, mais) {
      var resultado = await rodar(codigo, mais);
      if (!ligado && typeof codigo === "string" && codigo.indexOf("import pyodide_kernel") >= 0) {
        ligado = true;
        try {
          await rodar(INICIAR);
        } catch (erro) {
          console.error("curso: o lado do kernel do curso não ligou", erro);
        }
      }
      return resultado;
    };
    return pyodide;
  };
})();
