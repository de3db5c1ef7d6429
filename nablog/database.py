"""Database: a program, its base facts and an engine — the facade the Python API and the CLI use.

>>> db = Database.from_text('''
...     staff_chair(X, Y) :- staff_group(X, Z), group_chair(Z, Y).
...     #constraint one_chair :- group_chair(G, X), group_chair(G, Y), X != Y.
...     group_chair(infor1, matthias). group_chair(infor2, gerhard).
...     staff_group(delhibabu, infor1). staff_group(aravindan, infor1).
... ''')
>>> db.query("staff_chair(X, matthias)")
[('aravindan', 'matthias'), ('delhibabu', 'matthias')]
>>> db.violations()
[]
"""

from __future__ import annotations

import difflib
from collections.abc import Set
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Callable, Iterable, Mapping, Sequence

from .engines import Engine, Model, PythonEngine, get_engine
from .engines.violations import VIOLATION_PREFIX, Violation, find_violations
from .lang import (
    Atom,
    BaseDeclaration,
    Denial,
    Facts,
    Literal,
    NablogError,
    Program,
    QueryError,
    Requirement,
    Rule,
    Var,
    analyze,
    base_part,
    parse,
    parse_atom,
    parse_files,
    row_sort_key,
    separate_facts,
)
from .lang.errors import AnalysisError

if TYPE_CHECKING:
    from .solver import Proposal, Realization, Request, Update


class Database:
    """A deductive database: rules and constraints (``program``), base facts, and an engine.

    Build one with :meth:`from_files` (program files plus data files or directories: CSV,
    Parquet, SQLite, ``.lp`` facts) or :meth:`from_text`. The model is computed once, on first use.

    Parameters
    ----------
    program : Program
        Rules, constraints and declarations; facts written in it are base facts.
    facts : mapping, optional
        Further base facts, relation name to rows.
    engine : str or Engine
        ``"python"`` (default), ``"clingo"`` or ``"spark"``, or an engine object.
    engine_options
        Passed to the engine (``master=`` for spark).
    """

    def __init__(
        self,
        program: Program,
        facts: Mapping[str, Iterable[tuple]] | None = None,
        engine: str | Engine = "python",
        sources: Sequence = (),
        **engine_options,
    ):
        self.sources = list(sources)
        self.program_paths: list[Path] = []
        self._version = 0
        self.rules, self._facts = separate_facts(program, facts)
        self.program = program
        self.analysis = analyze(self.rules)
        self._check_defined()
        self.engine = get_engine(engine, **engine_options) if isinstance(engine, str) else engine
        self._model: Model | None = None
        self.basis = self.fingerprint()  # of the data the database was read from
        self._violations: list[Violation] | None = None
        self._python_model: Model | None = None
        self._index = None  # a ModelIndex over the python model, for view updating
        self._python_violations: list[Violation] | None = None

    # -- construction -----------------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, facts: Mapping[str, Iterable[tuple]] | None = None, engine: str | Engine = "python", **options) -> "Database":
        """A database from program text (rules, constraints, facts) and optional further facts."""
        return cls(parse(text), facts, engine, **options)

    @classmethod
    def from_files(
        cls,
        *paths: str | Path,
        data: Iterable[str | Path] = (),
        engine: str | Engine = "python",
        header: bool | None = None,
        **options,
    ) -> "Database":
        """A database from program files and data: directories of CSV/Parquet files named after
        their relations, single CSV/Parquet files, SQLite databases, or ``.lp`` facts files."""
        program = parse_files(paths)
        data = list(data)
        sources = []
        if data:
            from .io import open_source

            sources = [open_source(p, header=header) for p in data]
        facts: dict[str, set[tuple]] = {}
        for source in sources:
            for pred, rows in source.load().items():
                facts.setdefault(pred, set()).update(rows)
        db = cls(program, facts, engine, sources=sources, **options)
        db.program_paths = [Path(p) for p in paths]
        db.basis = db.fingerprint()
        return db

    # -- validation -------------------------------------------------------------------------------

    def _check_defined(self) -> None:
        """Every predicate used in a body, constraint or requirement has rules, facts or ``#base``."""
        defined = set(self.rules.derived) | set(self._facts) | {p for p, _ in self.rules.declared_base}
        arities = self.rules.signatures
        for pred, rows in self._facts.items():
            for row in rows:
                if pred in arities and len(row) != arities[pred]:
                    raise AnalysisError(
                        f"relation {pred} has a row of {len(row)} values but {pred} has arity {arities[pred]} in the program",
                        hint="the data's columns must match the predicate's arguments, in order",
                    )
                break
        for statement in self.rules.statements:
            atoms: list[Atom] = []
            if isinstance(statement, (Rule, Denial)):
                atoms = [b.atom for b in statement.body if isinstance(b, Literal)]
            elif isinstance(statement, Requirement):
                atoms = [statement.atom]
            for atom in atoms:
                if atom.pred not in defined:
                    raise AnalysisError(
                        f"predicate {atom.pred}/{atom.arity} has no rules, no facts and no #base declaration",
                        atom.loc or statement.loc,
                        _suggest(atom.pred, defined)
                        or f"declare it with '#base {atom.pred}/{atom.arity}.' if it is a base relation without facts yet",
                    )

    # -- the model --------------------------------------------------------------------------------

    @property
    def facts(self) -> Facts:
        """The base facts, relation name to set of tuples (a split predicate's under ``base__p``)."""
        return self._facts

    def model(self) -> Model:
        """The perfect model: every base and derived relation as a set of tuples."""
        if self._model is None:
            self._model = self.engine.evaluate(self.rules, self._facts)
        return self._model

    @property
    def derived(self) -> list[str]:
        """The view predicates: those defined by rules, in name order."""
        return sorted(self.rules.derived)

    def relation(self, pred: str) -> Set:
        """The tuples of one relation in the model."""
        model = self.model()
        if pred not in model:
            raise QueryError(f"unknown predicate {pred}", hint=_suggest(pred, model) or "check the name")
        return model[pred]

    def query(self, atom: str | Atom) -> list[tuple]:
        """The tuples of the atom's predicate that match its constants and repeated variables, sorted.

        >>> Database.from_text("e(1,2). e(2,2). e(3,1).").query("e(X, X)")
        [(2, 2)]
        """
        if isinstance(atom, str):
            atom = parse_atom(atom)
        arities = {**{p: _arity_of(r) for p, r in self.model().items()}, **self.rules.signatures}
        if atom.pred not in arities:
            raise QueryError(
                f"unknown predicate {atom.pred}/{atom.arity} in the query",
                atom.loc,
                _suggest(atom.pred, arities) or "query a predicate that has rules or facts",
            )
        if arities[atom.pred] != atom.arity:
            raise QueryError(
                f"predicate {atom.pred} has arity {arities[atom.pred]}, but the query gives {atom.arity} argument{'' if atom.arity == 1 else 's'}",
                atom.loc,
                f"write {atom.pred} with {arities[atom.pred]} arguments",
            )
        return sorted((row for row in self.model().get(atom.pred, ()) if _matches(atom, row)), key=row_sort_key)

    # -- constraints ------------------------------------------------------------------------------

    def constraints(self) -> list[tuple[str, Denial | Requirement]]:
        """Every constraint with its name, in program order."""
        return self.rules.named_constraints()

    def violations(self, limit: int | None = None) -> list[Violation]:
        """Each violated constraint with its count of violated ground instances and their
        witnesses (the first ``limit`` of them per constraint when given; counts stay exact)."""
        if self._violations is not None:
            return self._violations if limit is None else [v.first(limit) for v in self._violations]
        found = find_violations(self.rules, self.model(), self.engine, limit=limit)
        if limit is None:
            self._violations = found
        return found

    # -- view updating ----------------------------------------------------------------------------

    def python_model(self) -> Model:
        """The model computed by the python engine (what view updating reasons and verifies on)."""
        if self.engine.name == "python":
            return self.model()
        if self._python_model is None:
            self._python_model = PythonEngine().evaluate(self.rules, self._facts)
        return self._python_model

    def propose(
        self,
        request: "Request | str",
        method: str = "asp",
        limit: int | None = None,
        timeout: float | None = None,
        candidates: str = "attribute",
        max_fresh: int = 2,
        protect: Iterable[str | Atom] = (),
        exhaustive: bool = False,
        families: bool = True,
        on_realization: "Callable[[Realization], None] | None" = None,
        progress: "Callable[[str], None] | None" = None,
    ) -> "Proposal":
        """Every subset-minimal realization of a view-update request, smallest first (see
        :func:`nablog.solver.propose`).

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> [r.changes.lines() for r in db.propose("+p(1).")]
        [['-r(1)']]
        """
        from .solver import propose

        model = self.python_model()
        if self._index is None:
            from .engines.lookup import ModelIndex

            self._index = ModelIndex(model)
            self._python_violations = (
                self.violations() if self.engine.name == "python" else find_violations(self.rules, model, PythonEngine())
            )
        return propose(
            self.rules,
            self._facts,
            model,
            request,
            method=method,
            limit=limit,
            timeout=timeout,
            candidates=candidates,
            max_fresh=max_fresh,
            protect=protect,
            basis=self.basis,
            index=self._index,
            violations=self._python_violations,
            exhaustive=exhaustive,
            families=families,
            on_realization=on_realization,
            progress=progress,
        )

    def propagate(self, update: "Request | str", method: str = "incremental") -> "Update":
        """The induced update (seed 002, Def. 2) of a change of base facts, without applying it.

        ``update`` is written like a request, ``-edge(b, c). +edge(h, d).``, on base relations
        (facts of a predicate that also has rules are its stored facts).

        >>> db = Database.from_text("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y). e(1,2). e(2,3).")
        >>> db.propagate("-e(1, 2).").lines()
        ['-e(1, 2)', '-p(1, 2)', '-p(1, 3)']
        """
        from .solver import parse_request
        from .views import propagate

        request = parse_request(update) if isinstance(update, str) else update
        derived = self.rules.derived
        for _, atom in request.atoms():
            if atom.pred in derived and base_part(atom.pred) not in self._facts:
                raise QueryError(
                    f"{atom.pred} is a view: an update changes base facts only",
                    atom.loc,
                    f"to change {atom.pred} through its base facts, ask for realizations: nablog propose ... '{'+' if atom in request.insert else '-'}{atom}.'",
                )
        insert: dict[str, set] = {}
        delete: dict[str, set] = {}
        for atom in request.insert:
            insert.setdefault(atom.pred, set()).add(tuple(atom.args))
        for atom in request.delete:
            delete.setdefault(atom.pred, set()).add(tuple(atom.args))
        return propagate(self.rules, self._facts, insert, delete, model=self.python_model(), method=method)

    # -- applying changes ---------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """Size and modification time of every file the database was read from; for a database
        held in memory only, the number of changes applied to it."""
        if not (self.program_paths or self.sources):
            return f"in memory, version {self._version}"
        parts = []
        for path in [*self.program_paths, *(s.location for s in self.sources)]:
            path = Path(path)
            files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
            for f in files:
                try:
                    st = f.stat()
                except OSError:
                    parts.append(f"{f}:missing")
                    continue
                parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
        return "|".join(parts)

    def _stores(self) -> list:
        from .io import FactsFile

        return [FactsFile(p) for p in self.program_paths] + list(self.sources)

    def _owner(self, pred: str):
        """The fact store that holds ``pred``: where its facts are, or where a new relation goes."""
        stores = self._stores()
        holders = [s for s in stores if pred in s.relations()]
        if len(holders) > 1:
            raise NablogError(
                f"relation {pred} is stored in several places: " + ", ".join(str(h.location) for h in holders),
                hint="keep each relation in one file or directory so changes have one place to go",
            )
        if holders:
            return holders[0]
        if self.sources:
            return self.sources[0]
        for store, path in zip(stores, self.program_paths):
            if any(isinstance(s, BaseDeclaration) and any(p == pred for p, _ in s.signatures) for s in parse_files([path]).statements):
                return store
        return stores[0] if stores else None

    def apply(self, realization: "Realization", request: str = "") -> "Update":
        """Write a realization's changes back to where the facts came from, atomically per fact
        store, and record them for ``undo``; return the induced update (seed 002, Def. 2) on base
        and derived relations.

        A realization proposed from data that has changed since is refused.

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> print(db.apply(db.propose("+p(1).")[0]).lines())
        ['+p(1)', '-r(1)']
        """
        if realization.basis and realization.basis != self.fingerprint():
            raise NablogError(
                "the data changed since this realization was proposed",
                hint="propose again to get realizations for the current data",
            )
        from .solver import check_before_writing, parse_request

        check_before_writing(self.rules, self.python_model(), realization, parse_request(request) if request else None, not self.violations())
        requested: dict[str, tuple[set, set]] = {}
        for atom in realization.insert:
            requested.setdefault(atom.pred, (set(), set()))[0].add(tuple(atom.args))
        for atom in realization.delete:
            requested.setdefault(atom.pred, (set(), set()))[1].add(tuple(atom.args))
        # Only true changes count (seed 002, Def. 1): inserting a stored fact or deleting an absent
        # one changes nothing, and undo must not take back what was there before.
        stored = {pred: self._facts.get(base_part(pred) if pred in self.rules.derived else pred, set()) for pred in requested}
        changes = {pred: (ins - stored[pred], dele & stored[pred]) for pred, (ins, dele) in requested.items()}
        changes = {pred: c for pred, c in changes.items() if c[0] or c[1]}
        record: dict[str, dict] = {}
        if self.program_paths or self.sources:
            stores: dict[str, object] = {}
            by_store: dict[str, dict[str, tuple[set, set]]] = {}
            for pred, change in changes.items():
                store = self._owner(pred)
                stores.setdefault(str(store.location), store)
                by_store.setdefault(str(store.location), {})[pred] = change
            from .io.history import History

            history = History.beside(self.program_paths[0] if self.program_paths else self.sources[0].location)
            try:
                for location, relations in by_store.items():
                    store = stores[location]
                    current = store.load(list(relations))
                    store.write({pred: (current.get(pred, set()) - dele) | ins for pred, (ins, dele) in relations.items()})
                    record[location] = {
                        pred: {"insert": sorted_json(ins), "delete": sorted_json(dele)} for pred, (ins, dele) in relations.items()
                    }
            except NablogError as error:
                if record:
                    # Some stores were written: record them, so that `nablog undo` can take them back.
                    history.push({"request": request, "changes": record, "partial": True})
                    error.hint = (error.hint or "") + f"; {len(record)} of {len(by_store)} fact stores were changed: nablog undo takes them back"
                raise
            history.push({"request": request, "changes": record})
        return self._changed(changes)

    def undo(self) -> "Update | None":
        """Undo the newest applied change recorded beside the program; None when there is none."""
        from .io import open_source
        from .io.history import History

        anchor = self.program_paths[0] if self.program_paths else (self.sources[0].location if self.sources else None)
        if anchor is None:
            raise NablogError("undo needs a database read from files", hint="give the program files")
        history = History.beside(anchor)
        entry = history.peek()
        if entry is None:
            return None
        stores = {str(s.location): s for s in self._stores()}
        changes: dict[str, tuple[set, set]] = {}
        plan = []
        for location, relations in entry["changes"].items():
            store = stores.get(location) or open_source(location)
            current = store.load(list(relations))
            restored = {}
            for pred, change in relations.items():
                ins = {tuple(r) for r in change["insert"]}
                dele = {tuple(r) for r in change["delete"]}
                rows = current.get(pred, set())
                if not ins <= rows or rows & dele:
                    raise NablogError(
                        f"cannot undo: {pred} in {location} changed after the change being undone",
                        hint="undo only works while the data is as that apply left it",
                    )
                restored[pred] = (rows - ins) | dele
                changes[pred] = (dele, ins)
            plan.append((store, restored))
        for store, restored in plan:
            store.write(restored)
        history.pop()
        return self._changed(changes)

    def _changed(self, changes: dict[str, tuple[set, set]]) -> "Update":
        """Bring facts and model up to date after changes; return the induced update."""
        from .solver.realization import induced_update

        old = self.python_model()
        insert = {p: c[0] for p, c in changes.items()}
        delete = {p: c[1] for p, c in changes.items()}
        new, gained, lost = PythonEngine().update(self.rules, old, insert=insert, delete=delete, changes=True)
        derived = self.rules.derived
        for pred, (ins, dele) in changes.items():
            key = base_part(pred) if pred in derived else pred
            rows = self._facts.setdefault(key, set())
            rows -= dele
            rows |= ins
        self._model = new if self.engine.name == "python" else None
        self._python_model = None if self.engine.name == "python" else new
        self._violations = None
        self._index = None
        self._python_violations = None
        self._version += 1
        self.basis = self.fingerprint()
        return induced_update(gained, lost)

    def is_consistent(self) -> bool:
        return not self.violations()


def sorted_json(rows) -> list[list]:
    return [list(r) for r in sorted(rows, key=row_sort_key)]


def _matches(atom: Atom, row: tuple) -> bool:
    seen: dict[Var, object] = {}
    for term, value in zip(atom.args, row):
        if isinstance(term, Var):
            if term.name == "_":
                continue
            if term in seen and seen[term] != value:
                return False
            seen[term] = value
        elif term != value:
            return False
    return True


def _arity_of(rows) -> int:
    arity = getattr(rows, "arity", None)
    if arity is not None:
        return arity
    return len(next(iter(rows))) if len(rows) else 0


def _suggest(name: str, known: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, [k for k in known if not k.startswith(("base__", VIOLATION_PREFIX))], n=1)
    return f"did you mean {close[0]}?" if close else None


__all__ = ["Database", "Violation"]
