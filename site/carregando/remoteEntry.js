// Extensão pequena do site do curso (o JupyterLab a carrega como as outras extensões "federadas": pelo contrato
// window._JUPYTERLAB[nome] com init() e get()). O que ela faz no JupyterLite:
// - uma faixa no alto enquanto o Python do notebook aberto carrega: quanto já foi baixado (o worker do kernel
//   anuncia os bytes no canal "curso-carregando", veja site/curso-pyodide.js) e há quanto tempo; some quando o
//   kernel fica pronto; se o kernel morrer, diz como recomeçar;
// - uma célula rodada antes de o kernel existir espera por ele, com [*], e roda (o JupyterLab a descartava);
// - cada notebook pede ao servidor do JupyterLite uma sessão com o caminho inteiro como nome: dois notebooks de
//   mesmo nome em aulas diferentes (03-exercicios) ganham cada um o seu kernel (o JupyterLite 0.5 procura a sessão
//   pelo nome e entregava ao segundo o kernel do primeiro);
// - o endereço da página acompanha o notebook aberto (?path=...): recarregar (F5) volta a ele;
// - a aba de um notebook de aula diz a aula ("A1 · 03-exercicios.ipynb"), em vez de vários "03-exercicios.ipynb"
//   iguais, e a de uma solução diz "Solução · ".
(function () {
  "use strict";
  var TIPICO_S = 30; // a primeira carga, num computador modesto; nas seguintes o navegador já guardou os arquivos
  var escopo = null; // o escopo compartilhado do webpack (os módulos do JupyterLab), recebido em init()

  function modulo(nome) {
    var versoes = escopo && escopo[nome];
    if (!versoes) return Promise.resolve(null);
    var chaves = Object.keys(versoes);
    if (!chaves.length) return Promise.resolve(null);
    return Promise.resolve(versoes[chaves[0]].get()).then(function (fabrica) { return fabrica(); });
  }

  // --- a faixa de carregamento ---------------------------------------------------------------------------------

  var baixados = {}; // url -> bytes (de todos os kernels que estão carregando)
  var totalEsperado = 0;
  if (typeof BroadcastChannel === "function") {
    new BroadcastChannel("curso-carregando").onmessage = function (evento) {
      var m = evento.data || {};
      if (m.tipo !== "baixando") return;
      baixados[m.url] = Math.max(baixados[m.url] || 0, m.lidos || 0);
      if (m.total) totalEsperado = m.total;
    };
  }

  function megas(bytes) {
    return (bytes / 1e6).toLocaleString("pt-BR", { maximumFractionDigits: 0 });
  }

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

  function acompanharCarregamento(app) {
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
      var lidos = Object.keys(baixados).reduce(function (soma, url) { return soma + baixados[url]; }, 0);
      var texto = "Carregando o Python no seu navegador (" + s + " s";
      var fracao = Math.min(0.95, s / TIPICO_S);
      if (lidos > 0 && totalEsperado > 0) {
        texto += "; baixados " + megas(Math.min(lidos, totalEsperado)) + " de " + megas(totalEsperado) + " MB";
        fracao = Math.min(0.95, lidos / totalEsperado);
      }
      mostrar(texto + "). Na primeira vez leva de 20 s a 1 min; depois, bem menos. Pode rodar células: elas " +
              "esperam na fila [*].", fracao);
    }, 500);
  }

  // --- células rodadas antes do kernel: esperam e rodam ----------------------------------------------------------

  var esperas = new WeakMap(); // sessionContext -> a promessa do kernel (uma só: as células rodam na ordem)

  function kernelDe(sc) {
    return sc.session && sc.session.kernel;
  }

  function esperarKernel(sc) {
    if (!esperas.has(sc)) {
      esperas.set(sc, new Promise(function (pronto) {
        var relogio = setInterval(function () {
          if (sc.isDisposed || kernelDe(sc)) {
            clearInterval(relogio);
            esperas.delete(sc);
            pronto();
          }
        }, 100);
      }));
    }
    return esperas.get(sc);
  }

  // Enquanto a sessão do notebook não tem kernel, o JupyterLab descarta a célula rodada (runCell espera o
  // startKernel e desiste). Os comandos de rodar, nesse intervalo, põem as células na fila: cada uma mostra [*] e,
  // quando o kernel existe, roda na ordem pedida (CodeCell.execute, o mesmo que o JupyterLab chama).
  var RODAR = {
    "notebook:run-cell": "selecionadas",
    "notebook:run-cell-and-select-next": "selecionadas",
    "notebook:run-all-cells": "todas",
    "notebook:run-all-above": "acima",
    "notebook:run-all-below": "abaixo"
  };
  var fila = Promise.resolve();

  function alvos(notebook, modo) {
    var ativa = notebook.activeCellIndex;
    return notebook.widgets.filter(function (c, i) {
      if (modo === "todas") return true;
      if (modo === "acima") return i < ativa;
      if (modo === "abaixo") return i >= ativa;
      return notebook.isSelectedOrActive(c);
    });
  }

  function celulasEsperamOKernel(app, cells) {
    var CodeCell = cells && cells.CodeCell;
    var registro = app.commands && app.commands._commands;
    if (!CodeCell || !registro) return;
    Object.keys(RODAR).forEach(function (id) {
      var comando = registro.get(id);
      if (!comando || comando._cursoFila) return;
      var executar = comando.execute;
      comando.execute = function (args) {
        var w = app.shell.currentWidget;
        var sc = w && w.sessionContext;
        var notebook = w && w.content;
        if (!sc || !notebook || !notebook.widgets || sc.isDisposed || kernelDe(sc)) {
          return executar.apply(this, arguments);
        }
        var celulas = alvos(notebook, RODAR[id]);
        celulas.forEach(function (c) {
          if (c.model.type === "markdown") c.rendered = true;
          else if (c.model.type === "code" && c.model.sharedModel.getSource().trim()) c.setPrompt("*");
        });
        if (id === "notebook:run-cell-and-select-next" && notebook.activeCellIndex < notebook.widgets.length - 1) {
          notebook.activeCellIndex = notebook.activeCellIndex + 1;
        }
        var codigo = celulas.filter(function (c) { return c.model.type === "code"; });
        fila = fila.then(function () { return esperarKernel(sc); }).then(async function () {
          for (var i = 0; i < codigo.length; i++) {
            if (sc.isDisposed || codigo[i].isDisposed) return;
            try {
              await CodeCell.execute(codigo[i], sc);
            } catch (erro) {
              console.error("curso: a célula da fila não rodou", erro);
            }
          }
        });
        return fila;
      };
      comando._cursoFila = true;
    });
  }

  // --- uma sessão (um kernel) por caminho ---------------------------------------------------------------------

  function sessaoPorCaminho(app) {
    var sessoes = app.serviceManager && app.serviceManager.sessions;
    if (!sessoes || sessoes._cursoPorCaminho) return;
    var iniciar = sessoes.startNew.bind(sessoes);
    sessoes.startNew = function (opcoes, conexao) {
      var novas = Object.assign({}, opcoes);
      if (novas.path) novas.name = novas.path;
      return iniciar(novas, conexao);
    };
    sessoes._cursoPorCaminho = true;
  }

  // --- o endereço acompanha o notebook aberto; a aba diz a aula ------------------------------------------------

  // A aba ganha uma classe (curso-aula-N, curso-solucao) e o CSS põe "A1 · " antes do nome. Mudar o rótulo da aba
  // (title.label) não serve: no JupyterLab, isso renomeia o arquivo.
  function estiloDasAbas() {
    if (document.getElementById("curso-abas")) return;
    var css = "";
    for (var n = 1; n <= 9; n++) {
      css += ".lm-TabBar-tab.curso-aula-" + n + " .lm-TabBar-tabLabel::before{content:'A" + n + " · ';" +
             "font-weight:600}";
    }
    css += ".lm-TabBar-tab.curso-solucao .lm-TabBar-tabLabel::before{content:'Solução · '}";
    var el = document.createElement("style");
    el.id = "curso-abas";
    el.textContent = css;
    document.head.appendChild(el);
  }

  function classeDaAba(caminho) {
    if (/^solutions\//.test(caminho)) return "curso-solucao";
    var m = /(^|\/)aula-0*(\d)[^/]*\/[^/]+$/.exec(caminho);
    return m ? "curso-aula-" + m[2] : "";
  }

  function nomearAba(w) {
    var ctx = w && w.context;
    if (!ctx || !ctx.path || !w.title) return;
    var nova = classeDaAba(ctx.path);
    var classes = (w.title.className || "").split(/\s+/).filter(function (c) {
      return c && !/^curso-(aula-\d|solucao)$/.test(c);
    });
    if (nova) classes.push(nova);
    var texto = classes.join(" ");
    if (texto !== w.title.className) w.title.className = texto;
  }

  function acompanharEndereco(app) {
    estiloDasAbas();
    function atualizar() {
      var w = app.shell.currentWidget;
      Array.from(app.shell.widgets("main")).forEach(nomearAba);
      var caminho = w && w.context && w.context.path;
      if (!caminho || !/\.ipynb$/.test(caminho)) return;
      var url = new URL(window.location.href);
      if (url.searchParams.get("path") === caminho) return;
      url.searchParams.set("path", caminho);
      window.history.replaceState(window.history.state, "", url.toString());
    }
    app.shell.currentChanged.connect(atualizar);
    if (app.shell.layoutModified) app.shell.layoutModified.connect(atualizar);
    setInterval(atualizar, 1000);
  }

  var plugin = {
    id: "curso-carregando:plugin",
    description: "O curso no navegador: progresso do Python, células que esperam o kernel, um kernel por notebook, " +
                 "o endereço do notebook aberto e as abas com a aula.",
    autoStart: true,
    activate: function (app) {
      sessaoPorCaminho(app);
      Promise.all([modulo("@jupyterlab/cells"), app.restored]).then(function (r) {
        celulasEsperamOKernel(app, r[0]);
      }).catch(function (erro) {
        console.error("curso: sem o módulo das células", erro);
      });
      acompanharCarregamento(app);
      acompanharEndereco(app);
    }
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB["curso-carregando"] = {
    init: function (escopoCompartilhado) {
      escopo = escopoCompartilhado || null;
      return Promise.resolve();
    },
    get: function () {
      return Promise.resolve(function () { return { __esModule: true, default: [plugin] }; });
    }
  };
})();
