# O nbgrader do professor no hub do curso (vem antes de ../aluno no JUPYTER_CONFIG_PATH; o id do curso e o
# exchange vêm de lá). A pasta do curso do professor no nbgrader é ~/curso-nbgrader.
#
# O `nbgrader autograde` (e o botão "Autograde" do Formgrader) executaria o código de cada aluno como o
# professor, sem isolamento: aqui ele para com uma mensagem que aponta `python3 curso.py turma corrigir AULA`,
# que corrige cada entrega na caixa do curso e grava as notas no gradebook. Ele para ao criar o exportador,
# antes de apagar `autograded/<aluno>/<aula>/` (os notebooks que `turma corrigir` deixa para a correção manual
# no Formgrader); RefuseExecution, ligada, fica no lugar da execução como segunda barreira.
import os

from correcao.hub import RefuseAutogradeExporter, RefuseExecution

c = get_config()  # noqa: F821
c.CourseDirectory.root = os.path.expanduser("~/curso-nbgrader")
c.Autograde.exporter_class = RefuseAutogradeExporter
c.Autograde.autograde_preprocessors = [RefuseExecution]
