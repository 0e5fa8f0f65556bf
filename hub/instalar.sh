#!/bin/sh
# Instala (ou atualiza) o JupyterHub do curso num servidor Debian/Ubuntu: rode como root, de dentro do clone do
# curso (veja docs/professor.md, "No JupyterHub"). Pode ser rodado de novo: só faz o que falta.
#
# - os pacotes do sistema (bubblewrap, python3-venv; o npm só se ainda não houver um: o nodejs da NodeSource
#   já traz o dele) e o configurable-http-proxy (npm);
# - o ambiente Python de todos, criado sempre com o /usr/bin/python3 do sistema (um Python de /root, como o do
#   pyenv, os alunos não conseguem rodar), com o curso e o JupyterHub;
# - as configurações do curso no JupyterLab (preparar_trabalho.configure(hub=True));
# - o exchange do nbgrader (1777), a pasta do estado do hub (0700, fora do clone), /etc/curso-hub e o grupo dos
#   professores (curso-prof): só ele lê as soluções (solutions/, tests/ e o .git do clone).
#
# Variáveis (as mesmas de hub/jupyterhub_config.py): CURSO_HUB_VENV (/opt/curso-hub/venv), CURSO_HUB_EXCHANGE
# (/srv/nbgrader/exchange), CURSO_HUB_ESTADO (/var/lib/curso-hub); CURSO_HUB_LEVE=1 instala só o que a Aula 1
# precisa (hub/requirements-hub.txt, sem o PyTorch: o teste make test-hub).
set -eu

CURSO=$(cd "$(dirname "$0")/.." && pwd)
VENV=${CURSO_HUB_VENV:-/opt/curso-hub/venv}
EXCHANGE=${CURSO_HUB_EXCHANGE:-/srv/nbgrader/exchange}
ESTADO=${CURSO_HUB_ESTADO:-/var/lib/curso-hub}
GRUPO=curso-prof

if [ "$(id -u)" -ne 0 ]; then
    echo "hub/instalar.sh: rode como root (ele cria o grupo dos professores e as pastas do sistema)" >&2
    exit 2
fi

faltam=""
for pacote in bubblewrap python3-venv git; do
    dpkg -s "$pacote" >/dev/null 2>&1 || faltam="$faltam $pacote"
done
command -v npm >/dev/null 2>&1 || faltam="$faltam npm"  # o nodejs da NodeSource já traz o npm
if [ -n "$faltam" ]; then
    apt-get update
    # shellcheck disable=SC2086
    apt-get install -y $faltam
fi
command -v configurable-http-proxy >/dev/null 2>&1 || npm install -g configurable-http-proxy@5

if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$(dirname "$VENV")"
    /usr/bin/python3 -m venv "$VENV"
fi
cd "$CURSO"
if [ -n "${CURSO_HUB_LEVE:-}" ]; then
    "$VENV/bin/pip" install --quiet -r hub/requirements-hub.txt
    "$VENV/bin/pip" install --quiet --no-deps -e .
else
    "$VENV/bin/pip" install --quiet torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    "$VENV/bin/pip" install --quiet -r requirements.txt -r hub/requirements-hub.txt jupyterhub-idle-culler
fi
"$VENV/bin/python" -c "import sys; sys.path.insert(0, 'scripts'); import preparar_trabalho as p; p.configure(hub=True)"

# Todos leem o curso e o ambiente; só os professores leem as soluções (e o que é feito delas).
chmod -R a+rX "$CURSO" "$VENV"
getent group "$GRUPO" >/dev/null || groupadd "$GRUPO"
for pasta in solutions tests .git; do
    if [ -e "$pasta" ]; then
        chgrp -R "$GRUPO" "$pasta"
        chmod -R g+rX,o-rwx "$pasta"
    fi
done

mkdir -p "$EXCHANGE"
chmod 1777 "$EXCHANGE"
mkdir -p "$ESTADO" /etc/curso-hub
chmod 0700 "$ESTADO"
echo "O hub do curso está instalado: $VENV (curso em $CURSO, exchange em $EXCHANGE, estado em $ESTADO)."
