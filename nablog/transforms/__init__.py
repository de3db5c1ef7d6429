"""Program -> Program rewrites from the papers, one module per rewrite.

- :func:`normalize` — one relational operator per rule (seed 002, §2.2);
- :func:`propagation_rules`, :func:`transition_rules` — R∆ and R∆τ (seed 002, Def. 4, 5);
- :func:`view_update_rules`, :func:`view_update_transitions` — R∇ and R∇τ (seed 002, Def. 9, 10);
- :func:`magic_sets` — the supplementary magic-set rewriting for one query atom (seed 003, §3.1).
"""

from .magic import MagicProgram, magic, magic_sets
from .normalize import normalize
from .propagation import propagation_rules, restrict, transition_rules
from .view_update import view_update_rules, view_update_transitions

__all__ = ["MagicProgram", "magic", "magic_sets", "normalize", "propagation_rules", "restrict", "transition_rules", "view_update_rules", "view_update_transitions"]
