"""Verificações automáticas dos exercícios, um submódulo por aula (``aulaNN.py``).

Uso no notebook: ``from atencao.checks import aula01`` e depois ``aula01.exercicio_3(sua_funcao)``; as
demonstrações que usam a função começam com ``if aula01.passou(sua_funcao):``.

Os módulos do pacote:

- :mod:`.framework`: o arcabouço de quem escreve uma verificação (``check``, ``Checker``, ``CheckResult``,
  ``passou``...); o guia "como escrever uma verificação" está em ``README.md``, nesta pasta;
- :mod:`.report` e :mod:`.cases`: o texto do relatório e os casos (fixos ou sorteados);
- :mod:`.watcher`: a vigilância das funções proibidas (``sys.setprofile``);
- :mod:`.integrity`: as fotos das entradas e da biblioteca (o que o código do aluno altera é desfeito);
- :mod:`.figures` e :mod:`.errors`: as figuras abertas pela função do aluno e os erros dele em português;
- :mod:`.multihead_hints`: as dicas da atenção multicabeça, comuns às Aulas 2 e 3.
"""

from .framework import CheckResult, grading, passou

__all__ = ["CheckResult", "grading", "passou"]
