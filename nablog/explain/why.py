"""The answer to "why (not) this atom": a value holding the proof or the failures, and how it prints."""

from __future__ import annotations

from dataclasses import dataclass

from ..lang import Atom
from .proofs import Explainer, Node
from .render import why_dot, why_svg, why_text
from .whynot import RuleFails, why_not


@dataclass(frozen=True)
class Why:
    """The answer to "why does ``atom`` hold (or not)": a least-height proof when it holds (and
    the other derivations when asked for), else, per rule that could derive it, what fails."""

    atom: Atom
    holds: bool
    proof: Node | None = None
    alternatives: tuple[Node, ...] = ()
    why_not: tuple[RuleFails, ...] = ()
    depth: int | None = None

    def to_json(self) -> dict:
        out: dict = {"atom": str(self.atom), "holds": self.holds}
        if self.holds:
            out["proof"] = self.proof.to_json() if self.proof else None
            if self.alternatives:
                out["alternatives"] = [n.to_json() for n in self.alternatives]
        else:
            out["why_not"] = [r.to_json() for r in self.why_not]
        return out

    def text(self, expand: str = "nablog why FILE") -> str:
        """An indented tree; ``expand`` starts the command a cut node tells to run."""
        return why_text(self, expand)

    def dot(self) -> str:
        return why_dot(self)

    def svg(self) -> str:
        return why_svg(self)



def explain(explainer: Explainer, atom: Atom, depth: int | None = None, all: bool = False, why_not_depth: int = 3) -> Why:
    """Why ``atom`` holds — a least-height proof cut at ``depth``, every derivation with ``all`` —
    or why it does not (each rule that could derive it and what fails, ``why_not_depth`` deep)."""
    if explainer.holds(atom):
        proof = explainer.proof(atom, depth)
        others = tuple(explainer.alternatives(atom, depth)) if all else ()
        return Why(atom, True, proof, others, depth=depth)
    return Why(atom, False, why_not=why_not(explainer, atom, depth if depth is not None else why_not_depth), depth=depth)


__all__ = ["Why", "explain"]
