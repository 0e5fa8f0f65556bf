// Extensão mínima do site do curso: enquanto o Python (Pyodide) do notebook aberto carrega, uma faixa no alto
// da página diz o que está acontecendo e há quanto tempo, com uma barra de progresso (estimada pelo tempo típico
// da primeira carga). Some quando o kernel fica pronto; se o kernel morrer, diz como recomeçar.
// O JupyterLab carrega extensões "federadas" por este contrato: window._JUPYTERLAB[nome] com init() e get().
(function () {
  "use strict";
  var TIPICO_S = 30; // a primeira carga, num computador modesto; nas seguintes o navegador já guardou os arquivos

  function faixa() {
    var el = document.getElementById("curso-carregando");
    if (!el) {
      el = document.createElement("div");
      el.id = "curso-carregando";
      el.setAttribute("role", "status");
      el.setAttribute("aria-live", "polite");
      el.style.cssText = "position:fixed;top:34px;left:50%;transform:translateX(-50%);z-index:10000;" +
        "background:#fff8e1;border:1px solid #f0c36d;border-radius:6px;padding:8px 14px;font:14px sans-serif;" +
        "color:#333;box-shadow:0 2px 6px rgba(0,0,0,.15);max-width:680px;display:none";
      el.innerHTML = "<div class='curso-texto'></div><div style='background:#eee;height:6px;border-radius:3px;" +
        "margin-top:6px'><div class='curso-barra' style='background:#f0a500;height:6px;border-radius:3px;" +
        "width:0'></div></div>";
      document.body.appendChild(el);
    }
    return el;
  }

  function mostrar(texto, fracao) {
    var el = faixa();
    el.querySelector(".curso-texto").textContent = texto;
    el.querySelector(".curso-barra").style.width = Math.round(100 * fracao) + "%";
    el.style.display = "block";
  }

  function esconder() {
    var el = document.getElementById("curso-carregando");
    if (el) el.style.display = "none";
  }

  var plugin = {
    id: "curso-carregando:plugin",
    description: "Mostra o progresso enquanto o Python do curso carrega no navegador.",
    autoStart: true,
    activate: function (app) {
      var prontos = new WeakSet(); // notebooks cujo kernel já ficou pronto uma vez
      var inicio = new WeakMap(); // notebook -> quando começou a esperar
      setInterval(function () {
        var w = app.shell.currentWidget;
        var sc = w && w.sessionContext;
        if (!sc || sc.isDisposed || (sc.isReady && sc.hasNoKernel)) { esconder(); return; }
        var k = sc.session && sc.session.kernel;
        var estado = k ? k.status : "starting";
        if (estado === "idle" || estado === "busy") { prontos.add(sc); esconder(); return; }
        if (estado === "dead") {
          mostrar("O Python deste notebook parou. Recarregue a página (F5): o seu trabalho fica salvo no " +
                  "navegador.", 1);
          return;
        }
        if (prontos.has(sc)) {
          mostrar("Reiniciando o Python…", 0.5);
          return;
        }
        if (!inicio.has(sc)) inicio.set(sc, Date.now());
        var s = Math.round((Date.now() - inicio.get(sc)) / 1000);
        mostrar("Carregando o Python no seu navegador (" + s + " s). Na primeira vez leva de 20 s a 1 min; " +
                "depois, bem menos. Pode rodar células: elas esperam na fila [*].",
                Math.min(0.95, s / TIPICO_S));
      }, 500);
    }
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB["curso-carregando"] = {
    init: function () { return Promise.resolve(); },
    get: function () {
      return Promise.resolve(function () { return { __esModule: true, default: [plugin] }; });
    }
  };
})();
