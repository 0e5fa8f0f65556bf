# Curso "Self-attention do zero". Os dois comandos do README, depois do git clone:
#   make lab   -> cria .venv, instala tudo (só quando algo mudou; no Linux, o PyTorch sem CUDA antes do resto) e abre
#                 o JupyterLab no curso
#   make test  -> instala também o que só os testes usam (requirements-dev.txt e o MiniLM) e roda os testes rápidos (biblioteca, verificações, correção e comandos);
#                 make test-lento -> os lentos (a turma de exemplo corrigida nas caixas, a Aula 3 pelo modelo, os
#                 notebooks com nbval e o OpenBLAS de outra CPU, o navegador). A CI roda os dois.
# Cada alvo só chama o curso.py, que faz o trabalho em Python puro: sem make (no Windows, por exemplo), o mesmo
# comando é `python3 curso.py lab` (`py curso.py lab`). A lista: `make ajuda` ou `python3 curso.py ajuda`.
PYTHON ?= python3
# `make -n alvo` mostra os comandos de verdade: o curso.py roda, mas só para imprimi-los (--mostrar).
MOSTRAR = $(if $(findstring n,$(firstword -$(MAKEFLAGS))),--mostrar,)
CURSO   = $(strip $(if $(MOSTRAR),+,)$(PYTHON) curso.py $(MOSTRAR))

.PHONY: ajuda lab instalar test test-lento test-notebooks test-cpus test-minimo test-lib test-browser lint alunos executar bench corrigir relatorio validar \
	turma-exemplo limpar turma test-hub site

ajuda:
	@$(CURSO) ajuda

# Instala só quando requirements.txt, pyproject.toml ou scripts/overrides.json mudaram desde a última vez.
instalar:
	$(CURSO) instalar

# O aluno escreve em trabalho/ (cópia de notebooks/, ignorada pelo git): nada o que ele faz é apagado
# por `git pull`, `make test` ou `make alunos`. Outra porta: make lab PORT=8890.
lab:
	$(CURSO) lab$(if $(PORT), --porta $(PORT))

# test, test-lento, test-lib e lint instalam antes os pacotes só dos testes (requirements-dev.txt e o MiniLM).
test:
	$(CURSO) test

test-lento:
	$(CURSO) test-lento

# Só os notebooks (notebooks/ e solutions/) com o nbval, nesta máquina: depois de `make executar`, por exemplo.
test-notebooks:
	$(CURSO) test-notebooks

test-lib:
	$(CURSO) test-lib

# Os notebooks de novo com o kernel do OpenBLAS de outras CPUs (OPENBLAS_CORETYPE) e uma thread só: as saídas
# guardadas não podem mudar. O make test-lento roda a primeira configuração; este alvo roda todas.
test-cpus:
	$(CURSO) test-cpus

# As versões mais baixas que o curso permite (requirements-min.txt), num ambiente à parte (build/venv-minimo/).
test-minimo:
	$(CURSO) test-minimo

lint:
	$(CURSO) lint

# Precisa do Chromium do Debian (apt-get install chromium); o .ci/run instala.
test-browser:
	$(CURSO) test-browser

alunos:
	$(CURSO) alunos

executar:
	$(CURSO) executar

bench:
	$(CURSO) bench

# Cada entrega roda isolada numa caixa do bubblewrap (apt-get install bubblewrap). SEM_ISOLAMENTO=1 corrige
# sem a caixa (só para entregas em que você confia); cada linha de notas.csv diz então 'sem_isolamento'.
# SAIDA=build/correcao por padrão; MEMORIA (MiB), TEMPO_CELULA e TEMPO_NOTEBOOK (s) e PROCESSOS só passam adiante
# quando dados (os padrões são os da correção, lib/correcao/politica.py). Em várias máquinas: PARTE=K/N em cada uma,
# depois JUNTAR="pasta-1 ... pasta-N" (as SAIDA das partes) numa delas (docs/professor.md).
corrigir:
	$(CURSO) corrigir "$(ENTREGAS)"$(if $(SAIDA), --saida "$(SAIDA)")$(if $(MEMORIA), --memoria $(MEMORIA))$(if $(TEMPO_CELULA), --tempo-celula $(TEMPO_CELULA))$(if $(TEMPO_NOTEBOOK), --tempo-notebook $(TEMPO_NOTEBOOK))$(if $(PROCESSOS), --processos $(PROCESSOS))$(if $(SEM_ISOLAMENTO), --sem-isolamento)$(if $(PARTE), --parte $(PARTE))$(if $(JUNTAR), --juntar $(JUNTAR))

# O relatório da turma (relatorio-turma.html) de uma pasta de saída da correção (SAIDA), a partir de verificacoes.csv.
relatorio:
	$(CURSO) relatorio "$(SAIDA)"

# O código de saída é o do curso.py: 0 com o relatório feito (pronto ou "ainda há o que resolver"), 2 no uso errado.
validar:
	@$(CURSO) validar "$(NB)"

# JupyterHub (docs/professor.md): make turma ACAO=liberar AULA=aula-01-self-attention, depois ACAO=corrigir.
turma:
	$(CURSO) turma $(ACAO) "$(AULA)"

# A turma num JupyterHub de verdade nesta máquina (root, bubblewrap, Node; cria e apaga usuários temporários).
test-hub:
	$(CURSO) test-hub

# Regenera a turma de exemplo (alunos fictícios), tests/turma-exemplo.zip, a partir das soluções.
turma-exemplo:
	$(CURSO) turma-exemplo

# O curso no navegador (JupyterLite) em build/site/, num ambiente à parte (build/venv-site/); precisa do npm.
site:
	$(CURSO) site

# Apaga .venv e build/; trabalho/, com as respostas, fica.
limpar:
	$(CURSO) limpar
