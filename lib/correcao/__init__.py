"""correcao: a correção automática do curso (``make corrigir``) e a conferência do aluno (``make validar``).

Um módulo por parte, do arquivo recebido ao relatório:

- :mod:`correcao.entregas`: a pasta ou o ``.zip`` da turma, como chega (zips de três sistemas, restos do macOS);
- :mod:`correcao.catalogo`: os notebooks corrigíveis (de ``solutions/``), as células que valem nota e qual
  notebook do curso é cada arquivo (pelas células, mesmo renomeado);
- :mod:`correcao.saneamento`: acidentes de edição (células coladas duas vezes ou de outro notebook)
  arrumados antes da correção;
- :mod:`correcao.politica`: a política da correção, todos os limites e opções com os padrões num lugar só (a
  mesma no ``corrigir``, no ``validar``, no hub e nas partes);
- :mod:`correcao.isolamento`: a caixa do bubblewrap e os limites de cada execução;
- :mod:`correcao.varredura`: código do aluno que mexe na correção (situação ``revisar``);
- :mod:`correcao.motor`: a correção da turma, que só encadeia as etapas:
  :mod:`correcao.planning` (ler e planejar a turma), :mod:`correcao.pool` (os processos e o orçamento de cada
  notebook), :mod:`correcao.execution` (as caixas: o kernel e a conferência independente), :mod:`correcao.grading`
  (um notebook: o nbgrader e a nota) e :mod:`correcao.scoring` (as regras da nota, funções puras);
- :mod:`correcao.relatorio`: ``notas.csv`` e o retorno em HTML (um modelo com lacunas nomeadas);
- :mod:`correcao.lms`: a exportação para um AVA (a interface; o Moodle, em :mod:`correcao.moodle`, a implementa);
- :mod:`correcao.partes`: uma turma grande corrigida em partes, em várias máquinas, e juntada depois;
- :mod:`correcao.validar`: a conferência antes da entrega, com o mesmo motor.

Os processos que rodam dentro da caixa são ``correcao._executar`` e ``correcao._veredito``.
Importar este pacote não carrega o nbgrader.
"""
