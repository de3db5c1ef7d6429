"""The AST of nablog programs: frozen, hashable nodes that print back to text parsing to the same node.

Terms are ``Var("X")`` or plain constants (``int`` / ``str``). A bare identifier and the quoted
string with the same text are one constant: ``a`` and ``"a"`` both parse to ``"a"``.
Locations are carried for error messages but never take part in equality.

>>> from nablog.lang import parse
>>> rule = parse('p(X, "New York") :- e(X, Y), not q(Y), X < 3.').rules[0]
>>> rule.head[0]
Atom(pred='p', args=(Var(name='X'), 'New York'))
>>> print(rule)
p(X, "New York") :- e(X, Y), not q(Y), X < 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Union

from .errors import Loc, did_you_mean

COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")
KEYWORDS = frozenset({"not"})
IDENTIFIER = re.compile(r"[a-z][A-Za-z0-9_]*\Z")


_VARIABLES: dict[str, "Var"] = {}


@dataclass(frozen=True, eq=False)
class Var:
    """A variable; ``_`` alone is anonymous (each occurrence a different variable).

    One object per name (``Var("X") is Var("X")``), so equality and hashing are identity's (in C):
    bindings are dicts keyed by variables, and the relevance search looks them up millions of
    times per request — a dataclass's tuple hash and field-by-field equality were a sixth of its
    time (org chart, 1e5). Pickling and copying go through the name (``__reduce__``)."""

    name: str

    def __new__(cls, name: str) -> "Var":
        found = _VARIABLES.get(name)
        if found is None:
            found = _VARIABLES[name] = super().__new__(cls)
        return found

    def __reduce__(self):
        return (Var, (self.name,))

    def __str__(self) -> str:
        return self.name


Constant = Union[int, str]


ARITHMETIC_OPS = ("+", "-", "*", "/", "\\", "**")
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "\\": 2, "**": 3}
_UNARY_PRECEDENCE = 4


@dataclass(frozen=True)
class BinOp:
    """``left op right`` over integers, as clingo computes it (see :mod:`nablog.lang.arith`):
    ``+ - * / \\ **``, ``/`` and ``\\`` truncating towards zero."""

    op: str
    left: "Term"
    right: "Term"

    def __post_init__(self) -> None:
        if self.op not in ARITHMETIC_OPS:
            raise ValueError(f"unknown arithmetic operator {self.op!r}")

    def __str__(self) -> str:
        prec = _PRECEDENCE[self.op]
        right_assoc = self.op == "**"
        left = _parenthesized(self.left, prec + (1 if right_assoc else 0))
        right = _parenthesized(self.right, prec + (0 if right_assoc else 1))
        return f"{left} {self.op} {right}"


@dataclass(frozen=True)
class UnaryOp:
    """``-X`` (negation) or ``|X|`` (absolute value, op ``"|"``)."""

    op: str
    arg: "Term"

    def __post_init__(self) -> None:
        if self.op not in ("-", "|"):
            raise ValueError(f"unknown unary operator {self.op!r}")

    def __str__(self) -> str:
        if self.op == "|":
            return f"|{format_term(self.arg)}|"
        return f"-{_parenthesized(self.arg, _UNARY_PRECEDENCE)}"


@dataclass(frozen=True)
class Interval:
    """``low..high``: every integer from low to high (none when low > high); heads and ``X = a..b``."""

    low: "Term"
    high: "Term"

    def __str__(self) -> str:
        return f"{format_term(self.low)}..{format_term(self.high)}"


Term = Union[Var, int, str, BinOp, UnaryOp, Interval]


def _parenthesized(term: "Term", at_least: int) -> str:
    """A sub-term, in parentheses when it binds less tightly than ``at_least`` (or is a negative
    number, whose sign would otherwise read as an operator)."""
    text = format_term(term)
    if isinstance(term, BinOp) and _PRECEDENCE[term.op] < at_least:
        return f"({text})"
    if isinstance(term, Interval) or (isinstance(term, int) and term < 0 and at_least > _PRECEDENCE["+"]):
        return f"({text})"
    if isinstance(term, UnaryOp) and term.op == "-" and at_least > _UNARY_PRECEDENCE:
        return f"({text})"
    return text


def is_constant(term: "Term") -> bool:
    """Whether a term is a plain constant (an ``int`` or a ``str``)."""
    return isinstance(term, (int, str))


def term_leaves(term: "Term") -> Iterator["Term"]:
    """The variables and constants of a term, in order, inside arithmetic and intervals too."""
    if isinstance(term, BinOp):
        yield from term_leaves(term.left)
        yield from term_leaves(term.right)
    elif isinstance(term, UnaryOp):
        yield from term_leaves(term.arg)
    elif isinstance(term, Interval):
        yield from term_leaves(term.low)
        yield from term_leaves(term.high)
    else:
        yield term


def term_variables(term: "Term") -> Iterator[Var]:
    """The variables of a term, in order, arithmetic and intervals included.

    >>> [v.name for v in term_variables(BinOp("+", Var("X"), UnaryOp("|", Var("Y"))))]
    ['X', 'Y']
    """
    return (t for t in term_leaves(term) if isinstance(t, Var))


def term_substituted(term: "Term", binding: Mapping[Var, "Term"]) -> "Term":
    """The term with its variables replaced by ``binding``; arithmetic is kept, not computed.

    >>> format_term(term_substituted(BinOp("+", Var("X"), Var("Y")), {Var("X"): 3}))
    '3 + Y'
    """
    if isinstance(term, Var):
        return binding.get(term, term)
    if isinstance(term, BinOp):
        return BinOp(term.op, term_substituted(term.left, binding), term_substituted(term.right, binding))
    if isinstance(term, UnaryOp):
        return UnaryOp(term.op, term_substituted(term.arg, binding))
    if isinstance(term, Interval):
        return Interval(term_substituted(term.low, binding), term_substituted(term.high, binding))
    return term


def term_constants(term: "Term") -> Iterator[Constant]:
    """The constants written in a term."""
    return (t for t in term_leaves(term) if not isinstance(t, Var))  # type: ignore[misc]


def constant_sort_key(value: Constant) -> tuple[int, int | str]:
    """The order of constants on every engine: integers before strings, strings by code point.

    >>> sorted(["b", 10, "a", -1], key=constant_sort_key)
    [-1, 10, 'a', 'b']
    """
    return (0, value) if isinstance(value, int) else (1, value)


def row_sort_key(row: tuple) -> tuple:
    """Sort key for tuples of constants, column by column in the order of constants.

    >>> sorted([("b", 1), (2, "a"), (1, "z")], key=row_sort_key)
    [(1, 'z'), (2, 'a'), ('b', 1)]
    """
    return tuple(constant_sort_key(v) for v in row)


def format_constant(value: Constant) -> str:
    """Print a constant: identifiers bare, other strings quoted, integers as digits.

    >>> format_constant("infor1"), format_constant("New York"), format_constant("not"), format_constant(-3)
    ('infor1', '"New York"', '"not"', '-3')
    """
    if isinstance(value, bool):  # bool is an int subclass; never a nablog constant
        raise TypeError(f"not a nablog constant: {value!r}")
    if isinstance(value, int):
        return str(value)
    if IDENTIFIER.match(value) and value not in KEYWORDS:
        return value
    return '"' + value.translate(_ESCAPE) + '"'


_ESCAPE = {ord("\\"): "\\\\", ord('"'): '\\"', ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"} | {
    c: f"\\x{c:02x}" for c in [*range(32), 127] if c not in (9, 10, 13)
}
_CLINGO_ESCAPE = {ord("\\"): "\\\\", ord('"'): '\\"', ord("\n"): "\\n"}


def clingo_string(value: str) -> str:
    r"""A string quoted as clingo reads it — and nablog too: only ``\``, ``"`` and ``
``
    escaped, every other character (CR, tab, control characters) as it is. A NUL cannot be in
    a clingo string: ValueError.

    >>> clingo_string('say "hi"\n') == '"say \\"hi\\"\\n"'
    True
    """
    if "\x00" in value:
        raise ValueError("a NUL character cannot be written in a clingo string")
    return '"' + value.translate(_CLINGO_ESCAPE) + '"'


def lp_constant(value: Constant) -> str:
    """A constant as a ``.lp`` file holds it, readable by clingo and nablog alike (see
    :func:`clingo_string`); identifiers bare, integers as digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if IDENTIFIER.match(value) and value not in KEYWORDS:
        return value
    return clingo_string(value)


def format_term(term: Term) -> str:
    if isinstance(term, Var):
        return term.name
    if isinstance(term, (BinOp, UnaryOp, Interval)):
        return str(term)
    return format_constant(term)


@dataclass(frozen=True)
class Atom:
    """``pred(args...)``; a 0-ary atom has ``args == ()`` and prints without parentheses."""

    pred: str
    args: tuple[Term, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def arity(self) -> int:
        return len(self.args)

    @property
    def signature(self) -> tuple[str, int]:
        return (self.pred, len(self.args))

    def variables(self) -> Iterator[Var]:
        return (v for t in self.args for v in term_variables(t))

    def is_ground(self) -> bool:
        """No variables and no terms left to compute: every argument is a constant."""
        return all(is_constant(t) for t in self.args)

    def __str__(self) -> str:
        if not self.args:
            return self.pred
        return f"{self.pred}({', '.join(format_term(t) for t in self.args)})"


@dataclass(frozen=True)
class Literal:
    """An atom or its default negation ``not atom``."""

    atom: Atom
    positive: bool = True

    @property
    def loc(self) -> Loc | None:
        return self.atom.loc

    def variables(self) -> Iterator[Var]:
        return self.atom.variables()

    def __str__(self) -> str:
        return str(self.atom) if self.positive else f"not {self.atom}"


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=``, over the order of constants."""

    op: str
    left: Term
    right: Term
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.op not in COMPARISON_OPS:
            raise ValueError(f"unknown comparison operator {self.op!r}")

    def variables(self) -> Iterator[Var]:
        return (v for t in (self.left, self.right) for v in term_variables(t))

    def holds(self, left: Constant, right: Constant) -> bool:
        """Evaluate on two constants in the order of :func:`constant_sort_key`."""
        a, b = constant_sort_key(left), constant_sort_key(right)
        return COMPARE[self.op](a, b)

    def __str__(self) -> str:
        return f"{format_term(self.left)} {self.op} {format_term(self.right)}"


COMPARE = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}

AGGREGATE_FUNCTIONS = ("count", "sum", "min", "max")


@dataclass(frozen=True)
class AggregateElement:
    """``T1, .., Tn : L1, .., Lm`` inside an aggregate: the tuple of terms counted (or summed, or
    ranged over by min/max, on its first term) for each binding of the condition literals."""

    terms: tuple[Term, ...]
    condition: tuple[Union[Literal, Comparison], ...] = ()

    def variables(self) -> Iterator[Var]:
        for t in self.terms:
            yield from term_variables(t)
        for c in self.condition:
            yield from c.variables()

    def __str__(self) -> str:
        terms = ", ".join(format_term(t) for t in self.terms)
        return f"{terms} : {format_body(self.condition)}" if self.condition else terms


@dataclass(frozen=True)
class Aggregate:
    """``bound op #fn{elements}`` in a rule body, clingo syntax: ``N = #count{E : works(E, D)}``.

    The set aggregated is the set of distinct element tuples over all bindings of each element's
    condition (variables shared with the rest of the body are fixed by it: they group). ``#count``
    counts the tuples, ``#sum`` adds their first terms (tuples whose first term is not an integer
    are ignored, as clingo does), ``#min``/``#max`` take the least/greatest first term in the order
    of constants. An empty ``#min``/``#max`` has no value, so the body does not hold (clingo
    binds ``#sup``/``#inf`` there, which are not nablog constants). ``#count{...} > 3`` is kept as
    ``3 < #count{...}``.
    """

    function: str
    elements: tuple[AggregateElement, ...]
    op: str
    bound: Term
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.function not in AGGREGATE_FUNCTIONS:
            raise ValueError(f"unknown aggregate function {self.function!r}")
        if self.op not in COMPARISON_OPS:
            raise ValueError(f"unknown comparison operator {self.op!r}")

    def variables(self) -> Iterator[Var]:
        """The variables of the guard and of the elements (local and global alike)."""
        yield from term_variables(self.bound)
        for e in self.elements:
            yield from e.variables()

    def atoms(self) -> Iterator[Atom]:
        return (c.atom for e in self.elements for c in e.condition if isinstance(c, Literal))

    def __str__(self) -> str:
        elements = "; ".join(str(e) for e in self.elements)
        return f"{format_term(self.bound)} {self.op} #{self.function}{{{elements}}}"


BodyElement = Union[Literal, Comparison, Aggregate]


def body_atoms(body: tuple[BodyElement, ...]) -> Iterator[tuple[Atom, bool, bool]]:
    """Every atom a body reads: ``(atom, positive, inside_aggregate)``."""
    for b in body:
        if isinstance(b, Literal):
            yield b.atom, b.positive, False
        elif isinstance(b, Aggregate):
            for e in b.elements:
                for c in e.condition:
                    if isinstance(c, Literal):
                        yield c.atom, c.positive, True


def format_body(body: tuple[BodyElement, ...]) -> str:
    return ", ".join(str(b) for b in body)


@dataclass(frozen=True)
class Rule:
    """``head :- body.``; a fact has an empty body; a head of several atoms is a disjunction.

    Disjunctive heads print with ``;`` as in clingo; only transforms produce them.
    """

    head: tuple[Atom, ...]
    body: tuple[BodyElement, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def is_fact(self) -> bool:
        return not self.body and len(self.head) == 1 and self.head[0].is_ground()

    def positive_body(self) -> Iterator[Atom]:
        return (b.atom for b in self.body if isinstance(b, Literal) and b.positive)

    def negative_body(self) -> Iterator[Atom]:
        return (b.atom for b in self.body if isinstance(b, Literal) and not b.positive)

    def __str__(self) -> str:
        head = " ; ".join(str(a) for a in self.head)
        return f"{head} :- {format_body(self.body)}." if self.body else f"{head}."


@dataclass(frozen=True)
class Denial:
    """An integrity constraint ``:- body.``: no ground instance of the body may hold.

    ``#constraint NAME :- body.`` names it; an unnamed denial is known by its position.
    """

    body: tuple[BodyElement, ...]
    name: str | None = None
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        text = f":- {format_body(self.body)}."
        return f"#constraint {self.name} {text}" if self.name else text


@dataclass(frozen=True)
class Requirement:
    """``#require atom.``: a ground atom that must hold in every state (seed 002, §2.1: ``ic``)."""

    atom: Atom
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return str(self.atom)

    def __str__(self) -> str:
        return f"#require {self.atom}."


@dataclass(frozen=True)
class BaseDeclaration:
    """``#base p/2, q/0.``: predicates that are base relations even while they have no facts."""

    signatures: tuple[tuple[str, int], ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "#base " + ", ".join(f"{p}/{n}" for p, n in self.signatures) + "."


@dataclass(frozen=True)
class Protection:
    """``#protect p/2, q(1, a).``: base relations or single facts a view update must not change
    (seed 003's immutable part)."""

    items: tuple[Union[tuple[str, int], Atom], ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        parts = [str(i) if isinstance(i, Atom) else f"{i[0]}/{i[1]}" for i in self.items]
        return "#protect " + ", ".join(parts) + "."


Constraint = Union[Denial, Requirement]


# -- integrity-constraint shorthands (seed 004, Def. 2.1: trusted Δ and global Γ) --------------------

ColumnRef = Union[str, int]
"""A column of a relation: a name given by ``#columns``, or a 1-based position."""

_COLUMN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def format_column(column: ColumnRef) -> str:
    """Print a column reference: positions as digits, names bare when they are identifiers.

    >>> format_column(3), format_column("zip"), format_column("ZipCode"), format_column("zip code")
    ('3', 'zip', 'ZipCode', '"zip code"')
    """
    if isinstance(column, int):
        return str(column)
    if _COLUMN_NAME.match(column):
        return column
    return '"' + column.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def _columns_text(columns: tuple[ColumnRef, ...]) -> str:
    return ", ".join(format_column(c) for c in columns)


@dataclass(frozen=True)
class ColumnsDeclaration:
    """``#columns tax(f_name, l_name, zip).``: names for the argument positions of a relation, so
    that ``#fd``, ``#key`` and ``#fk`` can name columns (relations are positional)."""

    pred: str
    columns: tuple[str, ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def signatures(self) -> tuple[tuple[str, int], ...]:
        return ((self.pred, len(self.columns)),)

    def __str__(self) -> str:
        return f"#columns {self.pred}({_columns_text(self.columns)})."


DEPENDENCY_KINDS = ("fd", "key", "fk")


@dataclass(frozen=True)
class Dependency:
    """A shorthand that compiles to denials (see :meth:`denials`).

    - ``#fd [NAME] r: A, B -> C.`` functional dependency: tuples of ``r`` that agree on A, B agree on C;
    - ``#key [NAME] r: A, B.`` no two distinct tuples of ``r`` agree on A, B;
    - ``#fk [NAME] r: A -> s: B.`` inclusion dependency: each A value of ``r`` is a B value of
      ``s``, checked only when the referencing values are not null (``""`` or a ``#null`` value).

    Columns are names from ``#columns`` or 1-based positions.
    """

    kind: str
    relation: str
    left: tuple[ColumnRef, ...]
    right: tuple[ColumnRef, ...] = ()
    target: str | None = None
    name: str | None = None
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in DEPENDENCY_KINDS:
            raise ValueError(f"unknown dependency kind {self.kind!r}")

    def __str__(self) -> str:
        name = f"{self.name} " if self.name else ""
        head = f"#{self.kind} {name}{self.relation}: {_columns_text(self.left)}"
        if self.kind == "fd":
            return f"{head} -> {_columns_text(self.right)}."
        if self.kind == "fk":
            return f"{head} -> {self.target}: {_columns_text(self.right)}."
        return f"{head}."

    def default_name(self) -> str:
        """``fd_tax__zip__city``, ``key_airports__airport_id``, ``fk_routes__airline_id__airlines``."""
        parts = [_name_part(c) for c in self.left]
        base = f"{self.kind}_{self.relation}__{'_'.join(parts)}"
        if self.kind == "fd" and len(self.right) == 1:
            return f"{base}__{_name_part(self.right[0])}"
        return f"{base}__{self.target}" if self.kind == "fk" else base

    def denials(
        self,
        arities: Mapping[str, int],
        columns: Mapping[str, tuple[str, ...]],
        nulls: tuple[Constant, ...] = ("",),
    ) -> tuple[Denial, ...]:
        """The denials this shorthand stands for, each named (``NAME`` or :meth:`default_name`,
        with ``__COLUMN`` appended per dependent column of an fd or key).

        A functional dependency ``A -> C`` is ``:- r(.., K1, .., V1, ..), r(.., K1, .., V2, ..), V1 < V2.``
        (``<`` rather than ``!=`` so that each violating pair of tuples is one ground instance);
        a key is the functional dependency of every other column on it; a foreign key is
        ``:- r(.., K1, ..), K1 != "", not s(.., K1, ..).``.

        >>> d = Dependency("fd", "tax", ("zip",), ("city",))
        >>> print(d.denials({"tax": 3}, {"tax": ("name", "zip", "city")})[0])
        #constraint fd_tax__zip__city :- tax(_, K1, V1), tax(_, K1, V2), V1 < V2.
        >>> print(Dependency("fk", "r", (1,), (2,), "s").denials({"r": 2, "s": 2}, {})[0])
        #constraint fk_r__1__s :- r(K1, _), K1 != "", not s(_, K1).
        """
        from .errors import AnalysisError

        base = self.name or self.default_name()
        left = tuple(self._position(self.relation, c, arities, columns) for c in self.left)
        if len(set(left)) != len(left):
            raise AnalysisError(f"#{self.kind} names a column of {self.relation} twice", self.loc, "name each column once")
        arity = arities[self.relation]
        anon = Var("_")
        keys = {p: Var(f"K{i + 1}") for i, p in enumerate(left)}
        if self.kind == "fk":
            assert self.target is not None
            right = tuple(self._position(self.target, c, arities, columns) for c in self.right)
            if len(right) != len(left):
                raise AnalysisError(
                    f"#fk has {len(left)} referencing column{'s' if len(left) != 1 else ''} but {len(right)} referenced",
                    self.loc,
                    "give as many columns after the arrow as before it",
                )
            child = Atom(self.relation, tuple(keys.get(i, anon) for i in range(arity)))
            by_target = dict(zip(right, (keys[p] for p in left)))
            parent = Atom(self.target, tuple(by_target.get(i, anon) for i in range(arities[self.target])))
            checks = tuple(Comparison("!=", keys[p], null) for p in left for null in nulls)
            return (Denial((Literal(child),) + checks + (Literal(parent, False),), base, self.loc),)
        if self.kind == "fd":
            dependent = [self._position(self.relation, c, arities, columns) for c in self.right]
        else:
            dependent = [i for i in range(arity) if i not in left]
        out = []
        for position in dict.fromkeys(dependent):
            if position in keys:
                continue  # A -> A holds trivially
            first = Atom(self.relation, tuple(keys.get(i, Var("V1") if i == position else anon) for i in range(arity)))
            second = Atom(self.relation, tuple(keys.get(i, Var("V2") if i == position else anon) for i in range(arity)))
            several = len(dependent) > 1 or self.kind == "key"
            name = f"{base}__{_name_part(self._column_name(position, columns))}" if several else base
            out.append(Denial((Literal(first), Literal(second), Comparison("<", Var("V1"), Var("V2"))), name, self.loc))
        return tuple(out)

    def _column_name(self, position: int, columns) -> ColumnRef:
        names = columns.get(self.relation)
        return names[position] if names else position + 1

    def _position(self, pred: str, column: ColumnRef, arities, columns) -> int:
        from .errors import AnalysisError

        if pred not in arities:
            raise AnalysisError(
                f"#{self.kind} uses relation {pred}, whose arity nablog does not know",
                self.loc,
                f"declare its columns, e.g. '#columns {pred}(a, b, c).', or its arity with '#base {pred}/3.'",
            )
        arity = arities[pred]
        if isinstance(column, int):
            if not 1 <= column <= arity:
                raise AnalysisError(
                    f"#{self.kind}: {pred} has {arity} column{'s' if arity != 1 else ''}, so there is no column {column}",
                    self.loc,
                    f"columns are numbered 1 to {arity}",
                )
            return column - 1
        names = columns.get(pred)
        if not names:
            raise AnalysisError(
                f"#{self.kind} names column {format_column(column)} of {pred}, but {pred} has no #columns declaration",
                self.loc,
                f"declare the names, e.g. '#columns {pred}(...).', or give positions (1 to {arity})",
            )
        if column not in names:
            raise AnalysisError(
                f"#{self.kind}: {pred} has no column {format_column(column)}",
                self.loc,
                did_you_mean(column, names) or f"{pred}'s columns are {', '.join(names)}",
            )
        return names.index(column)


def _name_part(column: ColumnRef) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", str(column))


@dataclass(frozen=True)
class TrustDeclaration:
    """``#trusted NAME, NAME.``: constraints Δ that hold and are enforced elsewhere (by a source);
    every other constraint is global (Γ) and may be violated (seed 004, Def. 2.1)."""

    names: tuple[str, ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "#trusted " + ", ".join(self.names) + "."


@dataclass(frozen=True)
class NullDeclaration:
    """``#null "\\\\N", "NULL".``: values that mean "no value" besides the empty string; a foreign
    key is only checked when its referencing values are not null."""

    values: tuple[Constant, ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "#null " + ", ".join(format_constant(v) for v in self.values) + "."


@dataclass(frozen=True)
class DomainCall:
    """``in(X, domain:function(args))``: X is in the set the domain function returns (seed 000, §2.1).

    >>> from nablog.lang import parse
    >>> print(parse("near(A) :- in(A, geo:within(paris, 300)) || city(paris).").statements[0])
    near(A) :- in(A, geo:within(paris, 300)) || city(paris).
    """

    term: Term
    domain: str
    function: str
    args: tuple[Term, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def variables(self) -> Iterator[Var]:
        return (t for t in (self.term, *self.args) if isinstance(t, Var))

    def __str__(self) -> str:
        return f"in({format_term(self.term)}, {self.domain}:{self.function}({', '.join(format_term(t) for t in self.args)}))"


@dataclass(frozen=True)
class ConstrainedRule:
    """``A :- D1, ..., Dm || A1, ..., An.``: a mediator rule (seed 000, §2.1).

    The constraints ``D`` are comparisons and domain calls and may leave head variables unbound;
    the atoms ``A1..An`` are positive. A rule with ``||`` or a domain call parses to this node.
    """

    head: Atom
    constraints: tuple[Union[Comparison, DomainCall], ...] = ()
    body: tuple[Atom, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        left = ", ".join(str(c) for c in self.constraints)
        right = ", ".join(str(a) for a in self.body)
        return f"{self.head} :- {left}{' ' if left else ''}||{' ' if right else ''}{right}."


Statement = Union[
    Rule, Denial, Requirement, BaseDeclaration, Protection, ColumnsDeclaration, Dependency, TrustDeclaration, NullDeclaration,
    ConstrainedRule,
]
Node = Union[Var, BinOp, UnaryOp, Interval, Atom, Literal, Comparison, Aggregate, Statement]
