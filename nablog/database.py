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

import functools
from collections.abc import Set
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from .engines import Engine, Model, get_engine
from .engines.base import relation_arity
from .engines.violations import VIOLATION_PREFIX, Violation
from .io.stores import Stores
from .lang import (
    Atom,
    ConstrainedRule,
    Delta,
    Denial,
    Facts,
    NablogError,
    NablogWarning,
    Program,
    QueryError,
    Requirement,
    Rule,
    SPLIT_PREFIX,
    analyze,
    base_part,
    check_arities,
    empty_base_relations,
    parse,
    parse_atom,
    parse_files,
    row_sort_key,
    separate_facts,
)
from .lang.analysis import check_signature
from .lang.errors import AnalysisError, did_you_mean
from .state import State, long_lived
from .transforms.flatten import flatten
from .views.mediator import DELETION_METHODS, Mediator, is_mediated
from .views.subscriptions import matches

if TYPE_CHECKING:
    from .apart import Apart
    from .explain import Explainer, Why
    from .solver import Proposal, ProposalHandle, ProposeOptions, Realization, Request
    from .views.subscriptions import Subscription

# Committed facts are parsed from text on every commit, and a stream of commits names the same
# few facts again and again (insert an edge, delete it later): the parse (~7-16 us, the largest
# fixed cost of a commit) is kept per text. Atoms are frozen, so sharing one is safe; a text
# that fails to parse raises each time (lru_cache keeps no exceptions).
T = TypeVar("T")

_parse_fact = functools.lru_cache(maxsize=4096)(parse_atom)


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
    strict : bool
        A body predicate with no rules, no facts and no ``#base`` line is an empty relation, with a
        warning in :attr:`warnings` (as clingo informs); ``strict=True`` makes it an error.
    engine_options
        Passed to the engine (``master=`` for spark).
    """

    def __init__(
        self,
        program: Program,
        facts: Mapping[str, Iterable[tuple]] | None = None,
        engine: str | Engine = "python",
        sources: Sequence = (),
        strict: bool = False,
        *,
        stores: "Stores | None" = None,
        version: int = 0,
        basis: str | None = None,
        **engine_options,
    ):
        self.sources = list(sources)
        self.program_paths: list[Path] = []
        check_arities(program)  # before facts leave the program, so that a clash is located
        self.mediator = None
        if is_mediated(program.statements):  # seed 000: rules and facts form a mediator
            self.mediator = Mediator(program.statements, facts)
            program = Program(tuple(s for s in program.statements if not isinstance(s, (Rule, ConstrainedRule))))
        self.rules, base_facts = separate_facts(program, facts)
        self.program = program
        self.analysis = analyze(self.rules)
        self.warnings: list[NablogWarning] = self._check_defined(base_facts, strict)
        flat = flatten(self.rules)  # atoms of variables and constants only, for every engine and transform
        if flat is not self.rules:
            self.rules, self.analysis = flat, analyze(flat)
        self.engine = get_engine(engine, **engine_options) if isinstance(engine, str) else engine
        if stores is None and self.sources:
            stores = Stores([], self.sources)
        # The facts, what is kept over them, the version and the one write path (nablog/state.py).
        self.state = State(self.rules, base_facts, self.engine, stores, version, basis)

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
        from .io import open_source

        sources = [open_source(p, header=header) for p in data]
        stores = Stores(paths, sources) if (paths or sources) else None
        if stores is not None:
            stores.recover()  # a commit a killed process left is finished or taken back first

        def read():
            program = parse_files(paths)
            facts: dict[str, set[tuple]] = {}
            for source in sources:
                if isinstance(getattr(source, "columns", None), dict):  # a directory
                    source.columns = program.column_names
                elif hasattr(source, "columns"):  # one CSV file
                    source.columns = program.column_names.get(source.relation)
                for pred, rows in source.load().items():
                    facts.setdefault(pred, set()).update(rows)
            return program, facts, 0 if stores is None else stores.version()

        if stores is None:
            basis, (program, facts, version) = None, read()
        else:
            basis, (program, facts, version) = stores.read_consistently(read)
        db = cls(program, facts, engine, sources=sources, stores=stores, version=version, basis=basis or None, **options)
        db.program_paths = [Path(p) for p in paths]
        return db

    @classmethod
    def connect(cls, url: str, *paths: str | Path, engine: str | Engine = "python", **options) -> "Database":
        """A database kept in PostgreSQL, SQLite or DuckDB (``postgresql://…``, ``sqlite:///path.db``,
        ``duckdb:///path.duckdb``): its tables are the base relations, its keys, foreign keys and
        CHECKs the constraints, its SQL views the rules (:mod:`nablog.sql`); program files
        ``paths`` add rules and constraints. Changes are applied in one transaction of the
        database, with the undo log in its table ``nablog_log``. Views that cannot be translated
        are listed in :attr:`warnings`."""
        from .sql.open import open_url, refusal_warnings

        program, facts, store, refused, basis, version = open_url(url, paths)
        db = cls(program, facts, engine, stores=store, version=version, basis=basis, **options)  # a SqlStore answers what State asks of Stores
        db.warnings = refusal_warnings(refused) + db.warnings
        db.program_paths = [Path(p) for p in paths]
        return db

    def refresh(self) -> "Delta | None":
        """Read what other clients committed since this database was read (a database opened by
        URL; files are re-read by opening them again): their changes are applied to the facts and
        the model as a commit (subscribers are told), and the induced update is returned; None
        when nothing changed. :meth:`propose` and :meth:`query` call it first, so no proposal is
        computed on a stale state."""
        if not hasattr(self.stores, "relations_by_name"):
            return None
        return self.state.refresh()

    def parse_request(self, request: "Request | str") -> "Request":
        """A view-update request as the solver takes it: ``+v(…). -v(…).`` parsed, or one written
        in SQL (INSERT/DELETE/UPDATE on a view of a database opened by its URL) translated into
        it; a :class:`~nablog.solver.Request` as it is. Parsed once, it is handed on as it is
        (to :meth:`propose`, and with each realization to :meth:`apply`)."""
        from .solver import parse_request
        from .sql.requests import is_sql_request, sql_request

        if not isinstance(request, str):
            return request
        store = self.stores if hasattr(self.stores, "relations_by_name") else None
        if not is_sql_request(request):
            parsed = parse_request(request)
        elif store is None:
            raise QueryError("an SQL request needs a database opened by its URL", hint="write the request as +v(...). -v(...).")
        else:
            parsed = parse_request(sql_request(request, store.relations_by_name, store.url.dialect, store))
        if store is not None:
            # A number, date or boolean the request names is tested as the database's values are (sql/ordered.py).
            with self.state.lock:
                tested = store.note({c for a in (*parsed.insert, *parsed.delete) for c in a.args}, self.state.facts)
                if tested:
                    self.state.widen(tested)
        return parsed

    # -- validation -------------------------------------------------------------------------------

    def _check_defined(self, facts: Facts, strict: bool) -> list[NablogWarning]:
        """Every predicate used in a body, constraint or requirement has rules, facts or ``#base``;
        one that has none is an empty base relation, with one warning per predicate (an error
        when ``strict``)."""
        arities = self.rules.signatures
        for pred, rows in facts.items():
            for row in rows:
                if pred in arities and len(row) != arities[pred]:
                    raise AnalysisError(
                        f"relation {pred} has a row of {len(row)} values but {pred} has arity {arities[pred]} in the program",
                        hint="the data's columns must match the predicate's arguments, in order",
                    )
                break
        return empty_base_relations(self.rules, set(facts), strict, ("base__", VIOLATION_PREFIX))

    # -- the model --------------------------------------------------------------------------------

    @property
    def facts(self) -> Facts:
        """The base facts, relation name to set of tuples (a split predicate's under ``base__p``)."""
        return self.state.facts

    def model(self) -> Model:
        """The perfect model: every base and derived relation as a set of tuples."""
        return self.state.model()

    @property
    def derived(self) -> list[str]:
        """The view predicates: those defined by rules, in name order."""
        return sorted(self.rules.derived)

    def relation(self, pred: str) -> Set:
        """The tuples of one relation in the model."""
        model = self.model()
        if pred not in model:
            raise QueryError(f"unknown predicate {pred}", hint=did_you_mean(pred, model, _HIDDEN) or "check the name")
        return model[pred]

    def register_domain(self, name: str, **functions) -> None:
        """Make domain calls ``in(X, name:function(args))`` of a mediated program call these functions."""
        if self.mediator is None:
            raise QueryError("this program has no constrained rules", hint="domain calls belong to rules with '||' (seed 000)")
        self.mediator.register_domain(name, **functions)

    def query(self, atom: str | Atom, magic: bool = False, ground: bool = False):
        """The tuples of the atom's predicate that match its constants and repeated variables, sorted.

        With ``magic=True`` the model is not computed: the magic-set rewriting for the atom
        (:mod:`nablog.transforms.magic`) is evaluated instead, which derives only what the
        atom's constants need; the answers are the same.

        >>> Database.from_text("e(1,2). e(2,2). e(3,1).").query("e(X, X)")
        [(2, 2)]
        >>> Database.from_text("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y). e(1,2). e(2,3). e(4,5).").query("p(1, Y)", magic=True)
        [(1, 2), (1, 3)]

        A mediated program (seed 000) answers with constrained atoms, or with ``ground=True`` with
        the pair (rows, complete): ``complete`` is False when there were more than 1000 solutions.
        """
        if self.mediator is not None:
            return self.mediator.ground(atom) if ground else self.mediator.query(atom)
        self.refresh()
        if isinstance(atom, str):
            atom = parse_atom(atom)
        known = self.facts if magic else self.model()
        arities = {**{p: relation_arity(r) for p, r in known.items()}, **self.rules.signatures}
        check_signature(atom, arities, "query", "query a predicate that has rules or facts", _HIDDEN)
        if magic:
            from .transforms.magic import magic_sets

            rewrite = magic_sets(self.rules, atom)
            rows = self.engine.evaluate(rewrite.program, self.facts).get(rewrite.answer.pred, ())
        else:
            rows = self.model().get(atom.pred, ())
        return sorted((row for row in rows if matches(atom, row)), key=row_sort_key)

    # -- explanations -----------------------------------------------------------------------------

    def why(self, atom: str | Atom, depth: int | None = None, all: bool = False) -> "Why":
        """Why a ground atom holds — a proof of least height, each node a rule instance down to
        base facts, cut ``depth`` levels down when given; with ``all=True`` every derivation — or,
        when it does not hold, for each rule that could derive it, what fails
        (:mod:`nablog.explain`).

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). q(2). r(1).")
        >>> print(db.why("p(2)").text())
        p(2)  <string>:1  p(2) :- q(2), not r(2).
        ├─ q(2)  fact
        └─ not r(2)  absent
        >>> db.why("p(1)").to_json()["why_not"][0]["fails"][0]["literal"]
        'not r(1)'
        """
        from .explain import explain

        atom = self._ground_atom(atom)
        return explain(self.explainer(), atom, depth=depth, all=all)

    def explainer(self, python: bool = False) -> "Explainer":
        """The proofs over the current model — the python engine's with ``python=True``, as view
        updating reasons on it — kept (with the heights found) until the model changes."""
        originals = (s for s in self.program.statements if isinstance(s, Rule) and not s.is_fact())
        return self.state.explainer(originals, python)

    def why_realization(self, request: "Request | str", realization: "Realization", depth: int | None = None):
        """Why a realization of ``request`` changes what it changes: what fails without each
        change (the chain of compensations, seed 002 §4.2), the proofs it creates for the
        request and its side effects, the derivations it breaks (:mod:`nablog.explain.changes`).

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> print(db.why_realization("+p(1).", db.propose("+p(1).")[0]).needs[0].line())
        -r(1)  needed for the request: without it, +p(1) fails
        """
        from .explain.changes import explain_realization
        from .solver import parse_request

        request = parse_request(request) if isinstance(request, str) else request
        return explain_realization(self.explainer(python=True), request, tuple(realization.insert), tuple(realization.delete), depth)

    def why_repair(self, table):
        """Each row of a correction table (:meth:`repair`'s, or any with ``insert``/``delete``)
        with the violated instances it removes (:func:`nablog.explain.changes.explain_table`)."""
        from .explain.changes import explain_table

        return explain_table(self.explainer(python=True), tuple(table.insert), tuple(table.delete))

    def judge_changes(self, request: "Request | str", changes: "str | Delta"):
        """Why a change set of one's own (``'+a(1). -b(2).'``) is not a realization of ``request``:
        the part of the request it fails, the constraints it violates, or the smaller realization
        it contains (:func:`nablog.explain.changes.judge_changes`)."""
        from .explain.changes import judge_changes
        from .solver import parse_request

        request = parse_request(request) if isinstance(request, str) else request
        delta = parse_request(changes) if isinstance(changes, str) else changes
        insert = tuple(sorted((self._base_atom(a) for a in delta.insert), key=str))
        delete = tuple(sorted((self._base_atom(a) for a in delta.delete), key=str))
        return judge_changes(self.explainer(python=True), request, insert, delete)

    def _ground_atom(self, atom: str | Atom) -> Atom:
        """A ground atom of a known predicate with the right arity, checked."""
        if isinstance(atom, str):
            atom = parse_atom(atom)
        if not atom.is_ground():
            raise QueryError(f"{atom} is not ground", atom.loc, "write a constant for every argument, e.g. p(1, a); to list what matches, use query")
        model = self.model()
        arities = {**{p: relation_arity(r) for p, r in model.items() if len(r)}, **self.rules.signatures}
        if atom.pred not in arities and atom.pred not in model:
            raise QueryError(f"unknown predicate {atom.pred}/{atom.arity}", atom.loc, did_you_mean(atom.pred, arities, _HIDDEN) or "ask about a predicate that has rules or facts")
        if atom.pred in arities and arities[atom.pred] != atom.arity:
            raise QueryError(f"predicate {atom.pred} has arity {arities[atom.pred]}, but {atom} has {atom.arity} argument{'' if atom.arity == 1 else 's'}", atom.loc, f"write {atom.pred} with {arities[atom.pred]} arguments")
        return atom

    # -- constraints ------------------------------------------------------------------------------

    def constraints(self) -> list[tuple[str, Denial | Requirement]]:
        """Every constraint with its name, in program order."""
        return self.rules.named_constraints()

    def violations(self, limit: int | None = None) -> list[Violation]:
        """Each violated constraint with its count of violated ground instances and their
        witnesses (the first ``limit`` of them per constraint when given; counts stay exact)."""
        return self.state.violations(limit)

    # -- view updating ----------------------------------------------------------------------------

    def python_model(self) -> Model:
        """The model computed by the python engine (what view updating reasons and verifies on)."""
        return self.state.python_model()

    def propose(
        self,
        request: "Request | str",
        options: "ProposeOptions | None" = None,
        *,
        progress: "Callable[[str], None] | None" = None,
        stream: bool = False,
        **changes,
    ) -> "Proposal | ProposalHandle":
        """Every subset-minimal realization of a view-update request, smallest first (see
        :func:`nablog.solver.propose`): ``options`` is a :class:`~nablog.solver.ProposeOptions`,
        and ``changes`` replace its fields (``method="tableaux"``, ``limit=3``, …). With
        ``stream=True`` the answer is a :class:`~nablog.solver.ProposalHandle`: iterated, it
        yields each realization as soon as it is verified (``get()`` gives the whole proposal).

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> [r.changes.lines() for r in db.propose("+p(1).")]
        [['-r(1)']]
        """
        from .solver import propose

        self.refresh()
        request = self.parse_request(request)
        state = self.state
        return propose(
            self.rules,
            state.facts,
            state.python_model(),
            request,
            options,
            basis=state.basis,
            index=state.index(),
            violations=state.python_violations(),
            progress=progress,
            stream=stream,
            **changes,
        )

    def prepare(self) -> None:
        """Build now what every view-update request over the current state reads — the python
        model, its constraint violations, the lookup table of its constants, the classes of
        interchangeable values, the indexes candidate search and verification probe (see
        :func:`nablog.solver.prepared.prepare`) — instead of in the first request. They are kept
        until a commit changes the state, which carries them over its changes. What is built here
        lives as long as the state, out of the cyclic collector's sight (:func:`nablog.state.long_lived`).

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> db.prepare()
        >>> [r.changes.lines() for r in db.propose("+p(1).")]
        [['-r(1)']]
        """
        from .solver.prepared import prepare

        index = self.state.index()
        if not index.tables.get("prepared"):
            with long_lived():
                prepare(self.rules, self.python_model(), index)
            index.tables["prepared"] = True

    def apart(self, work: "Callable[[Database, Callable[[object], None]], T]") -> "Apart[T]":
        """Start ``work(db, send)`` in a child process on this database as it is now (version N,
        never half a commit) and return its handle (:class:`nablog.apart.Apart`: ``pump``,
        ``items``, ``result``, ``cancel``). The work reads an immutable copy and holds no lock
        while it runs: commits, queries and subscriptions go on, and cancelling stops it at once.
        ``send(item)`` hands an item to the parent as the work goes; items and value must pickle.

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> search = db.apart(lambda db, send: (db.version, [r.changes.lines() for r in db.propose("+p(1).")]))
        >>> db.commit(["q(2)"])[0], search.result()
        (1, (0, [['-r(1)']]))
        """
        from .apart import Apart

        with self.state.lock:
            return Apart(self, work)

    def propagate(self, update: "Request | str", method: str = "incremental") -> Delta:
        """The induced update (seed 002, Def. 2) of a change of base facts, without applying it.

        ``update`` is written like a request, ``-edge(b, c). +edge(h, d).``, on base relations
        (facts of a predicate that also has rules are its stored facts).

        >>> db = Database.from_text("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y). e(1,2). e(2,3).")
        >>> db.propagate("-e(1, 2).").lines()
        ['-e(1, 2)', '-p(1, 2)', '-p(1, 3)']
        """
        if self.mediator is not None:  # constrained updates of a mediated view: -b(X) || X = 6.
            return self.mediator.update(update, method="stdel" if method == "incremental" else method)  # type: ignore[arg-type,return-value]
        if method in DELETION_METHODS:
            raise NablogError(f"{method} maintains mediated views", hint="this program has no constrained rule: choose incremental, rules, maintenance or rod")
        from .solver import parse_request
        from .solver.request import check_request
        from .views import propagate

        request = parse_request(update) if isinstance(update, str) else update
        check_request(self.rules, self.python_model(), request)
        derived = self.rules.derived
        for _, atom in request.atoms():
            if atom.pred in derived and base_part(atom.pred) not in self.facts:
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
        return propagate(self.rules, self.facts, insert, delete, model=self.python_model(), method=method)

    # -- applying changes ---------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """What the data was read from, as :meth:`nablog.io.Stores.fingerprint` says (size,
        modification time and inode of every file); for a database held in memory only, the
        number of changes applied to it."""
        return self.state.fingerprint()

    @property
    def stores(self) -> "Stores | None":
        """Where the facts are kept and commits written (files, or a database by URL); None for
        a database held in memory only."""
        return self.state.stores

    @property
    def basis(self) -> str:
        """The fingerprint of the data this database's state was read from or last committed."""
        return self.state.basis

    def locked(self):
        """A context in which no commit lands (``with db.locked(): ...``): a reader pairs an answer
        with the :attr:`version` it answers for, and a writer checks and commits as one step."""
        return self.state.lock

    def apply(self, change: "Realization | Delta", request: str = "") -> Delta:
        """Commit a realization's changes (or a correction table's, or any :class:`~nablog.lang.Delta`
        on base relations) to where the facts came from — all stores at once, crash-safe, with
        the undo log (:meth:`nablog.io.Stores.commit`) — and return the induced update (seed
        002, Def. 2) on base and derived relations.

        A realization proposed from data that has changed since is refused. ``request`` (its text,
        kept in the undo log) is what the realization is checked against before it is written; a
        proposed realization carries its request as parsed when proposed, which is checked instead
        of parsing the text again.

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
        >>> print(db.apply(db.propose("+p(1).")[0]).lines())
        ['+p(1)', '-r(1)']
        """
        basis = getattr(change, "basis", "")
        if basis and basis != self.fingerprint():
            raise NablogError(
                "the data changed since this realization was proposed",
                hint="propose again to get realizations for the current data",
            )
        if not isinstance(change, Delta):
            from .solver import check_before_writing

            checked = (change.request if change.request is not None else self.parse_request(request)) if request else None
            check_before_writing(self.rules, self.python_model(), change, checked, not self.violations())
        delta = change if isinstance(change, Delta) else change.delta
        if isinstance(change, Delta):
            from .solver.request import check_request

            check_request(self.rules, self.python_model(), delta)
        return self.state.commit(delta, request)

    def undo(self) -> "Delta | None":
        """Undo the newest change committed to this database's files (byte for byte, see
        :meth:`nablog.io.Stores.undo`); None when there is none."""
        if self.stores is None:
            raise NablogError("undo needs a database read from files", hint="give the program files")
        return self.state.undo()

    # -- commits and subscriptions ----------------------------------------------------------------

    @property
    def version(self) -> int:
        """The number of the last commit (0 for a database never changed); kept in ``.nablog/version``
        for a database read from files, written in each commit, so numbering continues across
        restarts and crashes."""
        return self.state.version

    def transaction(self) -> "Transaction":
        """Collect base-fact insertions and deletions and commit them together on leaving the block.

        >>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). q(2). r(1).")
        >>> with db.transaction() as t:
        ...     t.insert("r(2)")
        ...     t.delete("r(1)")
        >>> t.version, db.query("p(X)")
        (1, [(1,)])
        """
        return Transaction(self)

    def commit(self, insert: "Iterable[str | Atom] | Delta" = (), delete: Iterable[str | Atom] = (), request: str = "") -> tuple[int, Delta]:
        """Insert and delete ground base facts in one commit; return its version and induced update.

        ``insert`` may also be a whole :class:`~nablog.lang.Delta`. Facts of a view (a predicate
        with rules) are refused unless it also has stored facts, as in ``propagate``; inserting a
        present fact or deleting an absent one changes nothing (seed 002, Def. 1).
        """
        if isinstance(insert, Delta):
            delta = Delta(frozenset(map(self._base_atom, insert.insert)), frozenset(map(self._base_atom, insert.delete)))
        else:
            delta = Delta(frozenset(map(self._base_atom, insert)), frozenset(map(self._base_atom, delete)))
        with self.state.lock:
            update = self.state.commit(delta, request or str(delta))
            return self.state.version, update

    def _base_atom(self, atom: str | Atom) -> Atom:
        """A ground atom of a base relation (or of a view's stored facts), checked."""
        if isinstance(atom, str):
            atom = _parse_fact(atom)
        if not atom.is_ground():
            raise QueryError(f"{atom} is not ground: a commit changes facts", atom.loc, "write constants for every argument")
        derived = self.rules.derived
        if atom.pred in derived and base_part(atom.pred) not in self.facts:
            raise QueryError(
                f"{atom.pred} is a view: a commit changes base facts only",
                atom.loc,
                f"to change {atom.pred} through its base facts, ask for realizations: nablog propose ... '+{atom}.'",
            )
        arities = {**{p: relation_arity(r) for p, r in self.facts.items() if len(r)}, **self.rules.signatures, **dict(self.rules.declared_base)}
        if atom.pred not in arities and base_part(atom.pred) not in self.facts:
            raise QueryError(
                f"unknown base relation {atom.pred}/{atom.arity}",
                atom.loc,
                did_you_mean(atom.pred, arities, _HIDDEN) or f"declare it with '#base {atom.pred}/{atom.arity}.' in the program",
            )
        if atom.pred in arities and arities[atom.pred] != atom.arity:
            raise QueryError(f"{atom.pred} has arity {arities[atom.pred]}, but {atom} has {atom.arity} argument{'' if atom.arity == 1 else 's'}", atom.loc, f"write {atom.pred} with {arities[atom.pred]} arguments")
        return atom

    def subscribe(
        self,
        query: str | Atom,
        mode: str = "materialized",
        callback=None,
        buffer: int | None = None,
    ) -> "Subscription":
        """Monitor a query (a predicate's pattern, ``closure(h, X)``): a subscription that yields
        its answer now, ``{"version": N, "snapshot": [...]}`` then ``{"version": N,
        "snapshot_complete": True}``, and then ``{"version": N, "plus": [...], "minus": [...]}``
        for each commit that changes the answer (seed 001's monitoring service).

        ``mode`` is how the differentials are computed: ``materialized`` (Algorithm 1 over the
        kept model), ``rod`` (Rederivation on Demand, no view read from the model), ``dred`` or
        ``recompute``; all give the same messages. ``callback`` receives each message instead of
        the iterator; ``buffer`` bounds the messages kept for a slow reader (see
        :class:`nablog.views.subscriptions.Subscription`).
        """
        from .views.subscriptions import DEFAULT_BUFFER, Subscription

        if isinstance(query, str):
            query = parse_atom(query)
        subscription = Subscription(query, mode, callback, DEFAULT_BUFFER if buffer is None else buffer)
        state = self.state
        with state.lock:
            hub, version = state.subscriptions(), state.version

            def answer():  # from a monitor's kept relation, else the model (query checks the predicate and arity)
                kept = hub.kept_answer(query, version, self.rules.signatures.get(query.pred))
                return self.query(query) if kept is None else kept

            rows = hub.snapshot(query, version, answer)
            hub.add(subscription, rows, version, warm=(state.facts, state.python_model))
        return subscription

    def is_consistent(self) -> bool:
        return not self.violations()


class Transaction:
    """Base-fact changes gathered in a ``with db.transaction() as t:`` block and committed as one
    when it ends without an exception; ``t.version`` and ``t.update`` tell the result."""

    def __init__(self, db: Database):
        self.db = db
        self.inserts: list[Atom] = []
        self.deletes: list[Atom] = []
        self.version: int | None = None
        self.update: "Delta | None" = None

    def insert(self, *atoms: str | Atom) -> None:
        self.inserts += [self.db._base_atom(a) for a in atoms]

    def delete(self, *atoms: str | Atom) -> None:
        self.deletes += [self.db._base_atom(a) for a in atoms]

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.version, self.update = self.db.commit(self.inserts, self.deletes)


_HIDDEN = (SPLIT_PREFIX, VIOLATION_PREFIX)
"""Names never offered as "did you mean": stored facts of split predicates, violation relations."""


__all__ = ["Database", "Transaction", "Violation"]
