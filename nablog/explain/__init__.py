"""Explanations of answers: why a fact holds (a least-height proof), why it does not, and why a realization or repair changes what it changes.

:func:`explain` answers for one ground atom over a model (:class:`~.proofs.Explainer`); what it
returns, a :class:`~.why.Why`, prints as a text tree, JSON, Graphviz DOT or SVG (:mod:`.render`).
Modules, lowest first: ``instances`` (rule instances over a model), ``proofs`` (least heights
and proof nodes), ``whynot`` (failing literals), ``render`` (text, DOT, SVG), ``why`` (the answer).
"""

from __future__ import annotations

from .proofs import AggregateUse, Explainer, Node
from .whynot import Fails, RuleFails, why_not
from .why import Why, explain

__all__ = ["AggregateUse", "Explainer", "Fails", "Node", "RuleFails", "Why", "explain", "why_not"]
