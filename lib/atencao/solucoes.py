"""As soluções no JupyterLab do curso: marcadas como SOLUÇÃO e abertas somente leitura.

O link "Terminou? Confira as suas respostas com a solução" de cada notebook de exercícios abre
``solutions/<aula>/<notebook>.ipynb``, que tem o mesmo nome de arquivo e o mesmo título do notebook do aluno.
Sem marca, o aluno pode confundir as duas abas e escrever na solução. Este gerenciador de arquivos do
servidor Jupyter (um ``AsyncLargeFileManager``, o padrão do ``jupyter_server``, com duas diferenças) cuida
disso para qualquer notebook dentro de ``solutions/``, seja qual for o caminho por que ele foi aberto:

- o que o JupyterLab recebe começa por uma faixa **SOLUÇÃO** (uma célula de texto que diz onde ficam as
  respostas do aluno), o título da primeira célula ganha ``SOLUÇÃO ·`` na frente e as células vêm com
  ``editable: false`` (o JupyterLab não deixa editá-las; rodar continua possível);
- o arquivo vem como não gravável (``writable: false``): o JupyterLab não salva sozinho e o botão de salvar
  fica desligado; um pedido de gravação que chegue mesmo assim é recusado (HTTP 403) com uma mensagem em
  português. O arquivo em disco nunca muda.

Quem mantém o curso e quer editar as soluções no JupyterLab abre o curso com a variável
``CURSO_SOLUCOES_EDITAVEIS=1`` (``CURSO_SOLUCOES_EDITAVEIS=1 make lab``): aí tudo funciona como no padrão.

O curso o liga em ``<ambiente>/etc/jupyter/jupyter_server_config.py`` (escrito por
``scripts/preparar_trabalho.py``, no passo ``configurar`` que ``make lab``, o conda e o Binder rodam).
"""

from __future__ import annotations

import os

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from tornado import web

__all__ = ["SolucoesSomenteLeitura", "marcar_solucao", "e_solucao", "EDITAVEIS", "PASTA"]

#: A pasta das soluções, relativa à raiz do servidor (a pasta do curso).
PASTA = "solutions"
#: Com esta variável de ambiente definida (e não vazia) no servidor, as soluções se abrem como qualquer notebook.
EDITAVEIS = "CURSO_SOLUCOES_EDITAVEIS"
FAIXA_ID = "solucao-faixa"


def e_solucao(path: str) -> bool:
    """``path`` (relativo à raiz do servidor, com ``/``) é um notebook de ``solutions/`` que deve abrir
    somente leitura?"""
    partes = [p for p in str(path).replace("\\", "/").split("/") if p]
    return (len(partes) >= 2 and partes[0] == PASTA and partes[-1].endswith(".ipynb")
            and not os.environ.get(EDITAVEIS))


def marcar_solucao(nb, path: str):
    """Acrescenta a faixa SOLUÇÃO no começo de ``nb`` (um ``NotebookNode`` da versão 4), põe ``SOLUÇÃO ·`` no
    título da primeira célula de texto e marca todas as células como não editáveis. Devolve ``nb`` (o mesmo
    objeto, alterado). Idempotente: um notebook já marcado não ganha uma segunda faixa."""
    from nbformat import v4

    if nb.cells and nb.cells[0].get("id") == FAIXA_ID:
        return nb
    partes = [p for p in str(path).replace("\\", "/").split("/") if p]
    do_aluno = "/".join(["trabalho", *partes[1:]])
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            linhas = cell.source.split("\n")
            if linhas and linhas[0].startswith("# "):
                linhas[0] = "# SOLUÇÃO · " + linhas[0][2:]
                cell.source = "\n".join(linhas)
            break
    faixa = v4.new_markdown_cell(
        "> # SOLUÇÃO (somente leitura)\n"
        ">\n"
        f"> Esta é a **solução** de `{partes[-1]}`, para conferir as suas respostas: não é o seu notebook. "
        f"As suas respostas ficam em `{do_aluno}`. Aqui as células não se editam e nada é salvo (pode rodá-las); "
        "para testar uma ideia da solução, copie o código para uma célula do seu notebook.",
        id=FAIXA_ID)
    nb.cells.insert(0, faixa)
    for cell in nb.cells:
        cell.metadata["editable"] = False
        cell.metadata["deletable"] = False
    return nb


class SolucoesSomenteLeitura(AsyncLargeFileManager):
    """O gerenciador de arquivos padrão do ``jupyter_server``, com os notebooks de ``solutions/`` marcados
    como SOLUÇÃO e somente leitura (veja o módulo)."""

    async def get(self, path, content=True, type=None, format=None, require_hash=False):
        model = await super().get(path, content=content, type=type, format=format, require_hash=require_hash)
        if model.get("type") == "notebook" and e_solucao(path):
            model["writable"] = False
            if content and model.get("content") is not None:
                marcar_solucao(model["content"], path)
        return model

    async def save(self, model, path=""):
        if e_solucao(path):
            raise web.HTTPError(403, f"{str(path).strip('/')} é uma solução do curso e abre somente leitura: as "
                                     f"suas respostas ficam em trabalho/. Para editar as soluções, abra o curso com "
                                     f"{EDITAVEIS}=1.")
        return await super().save(model, path)
