"""Verificações automáticas dos exercícios, uma submódulo por aula.

Uso no notebook: ``from atencao.checks import aula01`` e depois ``aula01.exercicio_3(sua_funcao)``; as
demonstrações que usam a função começam com ``if aula01.passou(sua_funcao):``.
Veja :mod:`atencao.checks._core` para o comportamento (✅/❌/⏳ e o modo de correção do nbgrader).
"""

from ._core import CheckResult, grading, passou

__all__ = ["CheckResult", "grading", "passou"]
