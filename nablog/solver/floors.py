"""Lower bounds on the changes a rule instance needs, from lookups on what holds now.

The search by bound lookups (:class:`~nablog.solver.ground.Relevance`) leaves values and goals
out; for an answer to stay true it records, for each, the fewest changes a realization through it
needs (:meth:`LowerBounds._changes_for`), and the least of these, the *floor*, says up to which
size the answer is complete. Once the floor is known, :meth:`LowerBounds._narrowed` drops the
values of an existential variable whose literals need more changes than it. Every bound here is
a lower bound: an insertion counted once per base relation, a displacement through a key once
per relation, derived literals combined by ``max`` and followed at most :data:`FLOOR_DEPTH`
rules deep, negated ones counting nothing unless they hold now.

:class:`LowerBounds` is mixed into ``Relevance`` and reads its state (``state``, ``derived``,
``keys``, ``denials``, ``by_head``, ``floor``, the caches ``_floors``, ``_now_rows``, ``_refs``)
— one search, two jobs kept in two modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set

from ..lang import Atom, Constant, Literal, Rule, Var
from .bindings import _pattern


DISPLACEMENT_BUDGET = 20_000
"""Most values :meth:`LowerBounds._changes_for` lists to see whether each would displace a row
through a key; past it a left-out value is counted as displacing none."""

SMALL_REFERENCED = 64
"""Most rows a referenced relation may have for :meth:`LowerBounds._referenced_values` to offer
each of its keys to a new row that a request fixes nothing of there (a lookup table: media types,
genres); a larger one offers new constants only, its values counted as left out."""

FLOOR_DEPTH = 2
"""How many rules deep :meth:`LowerBounds._derived_floor` follows a derived literal to bound the
changes making it true (deeper: one change, the bound of any derived literal)."""

SPLIT_BUDGET = 64
"""Most values of a variable :meth:`LowerBounds._split_floor` tries one by one."""



class LowerBounds:
    """The bounds of this module, as methods of the search they serve (see the module's docstring)."""

    def _changes_for(self, rule: Rule, binding: dict[Var, Constant], v: Var | None = None, found: Set = frozenset(), round_: int = 1) -> int:
        """The fewest changes that make an instance of ``rule`` hold under ``binding`` with ``v``
        (when given) at a value outside ``found`` (a lower bound, from lookups on what holds now):

        - a positive literal matching no row now needs a change: one insertion per base relation
          at least (two literals of one relation may be one row), one change for derived ones
          (which may share it); a literal with ``v`` and a bound place matches no row for a
          value its lookups did not find;
        - a negated base literal that holds now under ``binding`` needs a deletion;
        - such an inserted row whose key another row holds now displaces that row: one deletion
          more, when every value of ``v`` left out is such a key (:meth:`_displaces`; the values
          are listed when at most :data:`DISPLACEMENT_BUDGET`).

        At least one change, always: the goal this instance is for is false now."""
        inserted: set[str] = set()
        deleted: set[str] = set()
        derived = False
        displacing: list[Literal] = []
        for b in rule.body:
            if not isinstance(b, Literal):
                continue
            atom = b.atom
            pattern = _pattern(atom, binding)
            if b.positive:
                looked_up = v is not None and v in atom.args and any(not isinstance(t, Var) or t in binding for t in atom.args)
                if looked_up or not any(True for _ in self.state.match_now(atom.pred, pattern)):
                    if atom.pred in self.derived:
                        derived = True
                    else:
                        inserted.add(atom.pred)
                        if atom.pred in self.keys:
                            displacing.append(b)
            elif atom.pred not in self.derived and not any(isinstance(t, Var) and t not in binding for t in atom.args if t != Var("_")):
                if any(True for _ in self.state.match_now(atom.pred, pattern)):
                    deleted.add(atom.pred)
        at_least = max(len(inserted), 1 if derived else 0) + len(deleted)
        if displacing:
            left_out = None
            if v is not None and self._domain_estimate(v, rule, round_) <= DISPLACEMENT_BUDGET:
                left_out = set(self._domain(v, rule, round_)) - set(found) - set(self.problem.fresh)
            at_least += len({b.atom.pred for b in displacing if b.atom.pred not in deleted and self._displaces(b.atom, binding, v, left_out)})
        return max(at_least, 1)

    def _displaces(self, atom: Atom, binding: Mapping[Var, Constant], v: Var | None, values: Set | None) -> bool:
        """Whether inserting ``atom`` (which matches no row now; ``v``, when given, at any of
        ``values``) displaces a row held now through a key of its relation: the key is bound and
        a row holds it (that row differs from the inserted one, at a column the key determines),
        or ``v`` is at the key's unbound places and each of ``values`` is the key of a row now."""
        places = [i for i, t in enumerate(atom.args) if v is not None and t == v]
        pattern = _pattern(atom, binding)
        for lhs, rhs in self.keys.get(atom.pred, ()):
            if set(lhs) | set(rhs) != set(range(len(atom.args))):
                continue  # a dependency, not a key: the row held may agree where it is read
            key = tuple(pattern[i] if i in lhs else None for i in range(len(pattern)))
            if all(key[i] is not None for i in lhs):
                if any(True for _ in self.state.match_now(atom.pred, key)):
                    return True
                continue
            if values is None or not places or any(key[i] is None for i in lhs if i not in places) or not set(places) <= set(lhs):
                continue
            if len(lhs) == 1:
                held = self.state.values(atom.pred, lhs[0])  # kept per relation and position
            else:
                held = {row[places[0]] for row in self.state.match_now(atom.pred, key) if all(row[i] == row[places[0]] for i in places)}
            if values <= held:
                return True
        return False

    def _lookup_values(self, v: Var, positives: list[Literal], binding: dict[Var, Constant], referenced: bool = False) -> set:
        """The values facts true now give ``v`` through the literals with a bound place (rows that
        candidate changes may add would chain speculative changes: move new1 into department D,
        then make someone D's head), less new and concealed ones; with ``referenced``, through
        the foreign keys of those literals instead (see :meth:`_referenced_values`)."""
        found: set = set()
        for lit in positives if not referenced else ():
            positions = [i for i, t in enumerate(lit.atom.args) if t == v]
            if not positions or all(isinstance(t, Var) and t not in binding for t in lit.atom.args):
                continue
            for row in self.state.match_now(lit.atom.pred, _pattern(lit.atom, binding)):
                if all(row[i] == row[positions[0]] for i in positions):
                    found.add(row[positions[0]])
        if referenced:
            for lit in positives:
                if v in lit.atom.args:
                    found |= self._referenced_values(v, lit.atom, binding)
        found.difference_update(self.problem.fresh)
        if self.conceal is not None:
            found = {value for value in found if not self.conceal(value)}
        return found

    def _referenced_values(self, v: Var, atom: Atom, binding: dict[Var, Constant]) -> set:
        """The values a foreign key lets ``v`` take in a new ``atom`` row: for a denial
        ``:- r(.., K, ..), not s(.., K, ..)`` (one positive literal of ``atom``'s relation, one
        negated), the values at K's place of the ``s`` rows matching what ``binding`` fixes
        (a new city of Greece lies in one of Greece's provinces); when ``binding`` fixes nothing
        of ``s``, every row of a small ``s`` (:data:`SMALL_REFERENCED`: a new Chinook track is of
        one of the five media types). A value outside them needs the referenced row inserted too."""
        found: set = set()
        for child, parent in self._references(atom.pred):
            ours = {t: term for t, term in zip(child.args, atom.args) if isinstance(t, Var) and t.name != "_" and not t.name.startswith("_Anon")}
            places = [j for j, t in enumerate(parent.args) if isinstance(t, Var) and ours.get(t) == v]
            if not places:
                continue
            pattern = []
            for t in parent.args:
                term = ours.get(t) if isinstance(t, Var) else t
                pattern.append(binding.get(term) if isinstance(term, Var) else term)
            if all(value is None for value in pattern) and self.state.index.size(parent.pred) > SMALL_REFERENCED:
                continue  # nothing bound: every row of s, not a lookup
            for row in self.state.match_now(parent.pred, tuple(pattern)):
                found.add(row[places[0]])
        return found

    def _narrowed(self, rule: Rule, binding: dict[Var, Constant], v: Var, found: Set) -> Set:
        """``found`` (the values lookups give ``v``) less those through which every realization
        needs more than ``floor`` changes: a literal with ``v`` and a bound place that holds now
        for only some of them must be made true for the others (:meth:`_derived_floor`). Through
        ``manager(e5, M), reports_to(M, h77)``, M is e5's manager, or one of the 1,100 people who
        report to h77 now, each of whom needs e5 moved or a head replaced (two changes): with a
        floor of one, e5's manager alone (issue 29)."""
        for b in rule.body:
            if not (isinstance(b, Literal) and b.positive) or v not in b.atom.args:
                continue
            atom = b.atom
            if all(isinstance(t, Var) and t not in binding for t in atom.args):
                continue  # nothing bound: not a lookup
            places = [i for i, t in enumerate(atom.args) if t == v]
            held = {row[places[0]] for row in self.state.match_now(atom.pred, _pattern(atom, binding)) if all(row[i] == row[places[0]] for i in places)}
            rest = [value for value in found if value in held]
            if len(rest) == len(found):
                continue
            needed = self._derived_floor(atom, binding, {v: held}, FLOOR_DEPTH) if atom.pred in self.derived else 1
            if needed > self.floor:
                self._leave_out(len(found) - len(rest), needed)
                return set(rest)
            if atom.pred in self.derived:
                # Not all at once: value by value (h0 heads no one's department: each of the
                # 1,100 needs h0 placed in a department that person heads, or one they head).
                kept = []
                for value in found:
                    if value not in held and (needed := self._derived_floor(atom, {**binding, v: value}, {}, FLOOR_DEPTH)) > self.floor:
                        self._leave_out(1, needed)
                    else:
                        kept.append(value)
                if len(kept) < len(found):
                    return set(kept)
        return found

    def _derived_floor(self, atom: Atom, binding: Mapping[Var, Constant], excluded: Mapping[Var, Set], depth: int) -> int:
        """The fewest changes (a lower bound, at least one) that make the derived ``atom`` true
        under ``binding`` where each variable of ``excluded`` takes a value outside its set (the
        values for which it holds now): over ``atom``'s rules, each instance's
        :meth:`_instance_floor`, one free variable of its body split into the values lookups
        give it and the others. Through ``depth`` rules at most."""
        if depth <= 0:
            return 1
        key = None if excluded else (atom.pred, _pattern(atom, binding), depth)  # (lookups on what holds now: kept)
        if key is not None and key in self._floors:
            return self._floors[key]
        best = self._rules_floor(atom, binding, excluded, depth)
        if key is not None:
            self._floors[key] = best
        return best

    def _rules_floor(self, atom: Atom, binding: Mapping[Var, Constant], excluded: Mapping[Var, Set], depth: int) -> int:
        """:meth:`_derived_floor` computed: the least over ``atom``'s rules."""
        best = None
        for rule in self.by_head.get(atom.pred, ()):
            if len(rule.head) != 1:
                return 1
            inner: dict[Var, Constant] = {}
            outside: dict[Var, Set] = {}
            fits = True
            for t, term in zip(rule.head[0].args, atom.args):
                value = term if not isinstance(term, Var) else binding.get(term)
                if isinstance(t, Var):
                    if value is not None:
                        if inner.setdefault(t, value) != value:
                            fits = False
                    elif term in excluded:
                        if t in inner or (t in outside and outside[t] is not excluded[term]):
                            return 1  # the excluded place meets a bound one: not followed
                        outside[t] = excluded[term]
                elif value is not None and value != t:
                    fits = False
                elif value is None:
                    return 1  # a constant where the value is left out: it may be that one
            if not fits:
                continue
            needed = self._split_floor(rule, inner, outside, depth)
            best = needed if best is None else min(best, needed)
            if best <= 1:
                return 1
        return 1 if best is None else best

    def _split_floor(self, rule: Rule, binding: dict[Var, Constant], excluded: dict[Var, Set], depth: int) -> int:
        """:meth:`_instance_floor` of ``rule``'s instances under ``binding``: with one variable
        of the body unbound (and not excluded) that a literal with a bound place looks up, the
        least over its values and over every other value (excluded from them)."""
        open_vars = [t for t in dict.fromkeys(t for b in rule.body if isinstance(b, Literal) for t in b.atom.args) if isinstance(t, Var) and t not in binding and t not in excluded]
        if len(open_vars) == 1:
            d = open_vars[0]
            values: set = set()
            looked = False
            for b in rule.body:
                if isinstance(b, Literal) and b.positive and d in b.atom.args and any(not isinstance(t, Var) or t in binding for t in b.atom.args):
                    looked = True
                    at = b.atom.args.index(d)
                    values.update(row[at] for row in self._rows_now(b.atom.pred, _pattern(b.atom, binding)))
            if looked and len(values) <= SPLIT_BUDGET:
                best = self._instance_floor(rule, binding, {**excluded, d: values}, depth)
                for value in values:
                    if best <= 1:
                        break
                    best = min(best, self._instance_floor(rule, {**binding, d: value}, excluded, depth))
                return best
        return self._instance_floor(rule, binding, excluded, depth)

    def _instance_floor(self, rule: Rule, binding: Mapping[Var, Constant], excluded: Mapping[Var, Set], depth: int) -> int:
        """The fewest changes (a lower bound) that make an instance of ``rule``'s body hold under
        ``binding``, each variable of ``excluded`` outside its set, other variables any value: a
        positive literal matching no row now needs a change — a base one an insertion per
        relation, one more when its key is bound and held now (the row it displaces), a derived
        one :meth:`_derived_floor` — and a literal of two excluded variables is taken to match.
        (Negated literals and comparisons count nothing: a lower bound.)"""
        inserted: set[str] = set()
        displacing = 0
        derived = 0
        for b in rule.body:
            if not (isinstance(b, Literal) and b.positive):
                continue
            atom = b.atom
            mine = [t for t in dict.fromkeys(atom.args) if isinstance(t, Var) and t in excluded]
            if len(mine) > 1:
                continue
            pattern = _pattern(atom, binding)
            if mine:
                u = mine[0]
                at = atom.args.index(u)
                if any(row[at] not in excluded[u] for row in self._rows_now(atom.pred, pattern)):
                    continue
            elif any(True for _ in self._rows_now(atom.pred, pattern)):
                continue
            if atom.pred in self.derived:
                derived = max(derived, self._derived_floor(atom, binding, {u: excluded[u]} if mine else {}, depth - 1))
            elif atom.pred not in inserted:
                inserted.add(atom.pred)
                if atom.pred in self.keys and self._displaces_now(atom, pattern, binding):
                    displacing += 1
        return max(len(inserted) + displacing, derived, 1)

    def _rows_now(self, pred: str, pattern: tuple) -> Iterable[tuple]:
        """The rows matching ``pattern`` now, kept while the search lasts for a pattern with a
        bound place (the bounds above ask the same lookups for each of thousands of values; a
        lookup in a relation of a million rows costs about 0.1 ms); with nothing bound, the rows
        as they are read (the callers stop at the first that answers them)."""
        if all(value is None for value in pattern):
            return self.state.match_now(pred, pattern)
        key = (pred, pattern)
        rows = self._now_rows.get(key)
        if rows is None:
            rows = self._now_rows[key] = tuple(self.state.match_now(pred, pattern))
        return rows

    def _displaces_now(self, atom: Atom, pattern: tuple, binding: Mapping[Var, Constant]) -> bool:
        """:meth:`_displaces` of ``atom`` (no value left out), kept per pattern like :meth:`_rows_now`."""
        key = ("displaces", atom.pred, pattern)
        found = self._now_rows.get(key)
        if found is None:
            found = self._now_rows[key] = self._displaces(atom, binding, None, None)
        return found

    def _references(self, pred: str) -> list[tuple[Atom, Atom]]:
        """The denials of foreign-key shape on ``pred``: (positive atom, negated atom)."""
        refs = self._refs.get(pred)
        if refs is None:
            refs = self._refs[pred] = []
            for _, d in self.denials:
                literals = [b for b in d.body if isinstance(b, Literal)]
                positive = [b.atom for b in literals if b.positive]
                negated = [b.atom for b in literals if not b.positive]
                if len(positive) == 1 and len(negated) == 1 and positive[0].pred == pred:
                    refs.append((positive[0], negated[0]))
        return refs
