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
- :mod:`correcao.motor`: o nbgrader, as duas caixas (kernel e conferência independente) e a nota;
- :mod:`correcao.relatorio`: ``notas.csv`` e o retorno em HTML;
- :mod:`correcao.partes`: uma turma grande corrigida em partes, em várias máquinas, e juntada depois;
- :mod:`correcao.validar`: a conferência antes da entrega, com o mesmo motor.

Os processos que rodam dentro da caixa são ``correcao._executar`` e ``correcao._veredito``.
Importar este pacote não carrega o nbgrader.
"""
