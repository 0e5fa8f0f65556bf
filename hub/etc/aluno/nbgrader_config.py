# O nbgrader dos alunos (e dos professores) no hub do curso: o id do curso e a raiz do exchange, com o id do curso
# no caminho (vários cursos no mesmo exchange). Os valores vêm do hub (hub/jupyterhub_config.py).
import os

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = os.environ.get("CURSO_HUB_ID", "atencao")
c.Exchange.root = os.environ.get("CURSO_HUB_EXCHANGE", "/srv/nbgrader/exchange")
c.Exchange.path_includes_course = True
