"""SQL views as nablog rules: a query parsed by sqlglot becomes rules defining the view's predicate.

What is translated, and how (relations are sets: ``UNION ALL``, ``DISTINCT`` and duplicate rows
change nothing)::

    SELECT e FROM t1 a JOIN t2 b ON c WHERE d     v(e) :- t1(..), t2(..), c, d.   (equalities unify)
    q1 UNION [ALL] q2                              a rule per branch
    q1 EXCEPT q2 / q1 INTERSECT q2                 v(X) :- q1(X), not v__2(X).  / ..., v__2(X).
    NOT EXISTS (q), x NOT IN (q)                   not v__1(outer columns q reads)
    EXISTS (q), x IN (q), x IN (1, 2)              a positive auxiliary atom, or a rule per value
    a OR b                                         a rule per disjunct (disjunctive normal form)
    GROUP BY g with COUNT/SUM/MIN/MAX, HAVING      v(G, N) :- v__1(G, ..), N = #count{R : v__1(R)}.
    = <> < <= > >=, + - * / %, IS [NOT] NULL       comparisons and arithmetic (integer columns)
    price > 0.99, d >= DATE '2020-01-01', flag      v(..) :- t(.., P, ..), v__1(P).  (a test: ordered.py)

SQL's NULL equals nothing, and nablog reads it as ``""``: a column that may be NULL gets
``X != ""`` wherever it is compared, joined or aggregated, so a NULL passes no condition, as in
SQL. ``IS NULL`` is ``X = ""``.

Everything else — outer joins, window functions, ``LIMIT``/``OFFSET``, scalar subqueries,
functions, ``CASE``, arithmetic on numeric or date columns, float division — is refused with
:class:`Untranslatable`, naming the view, the position in its SQL, and why; a view that reads
a refused view is refused too, and the others still work.

>>> from nablog.sql.catalog import Catalog, Column, Table, View
>>> t = lambda name, *cols: Table(name, [Column(c, "integer", "int", False) for c in cols])
>>> catalog = Catalog("postgres", {"e": t("e", "src", "dst"), "n": t("n", "id")},
...     [View("two", "SELECT a.src, b.dst FROM e a JOIN e b ON a.dst = b.src WHERE a.src <> 3"),
...      View("lonely", "SELECT id FROM n WHERE NOT EXISTS (SELECT 1 FROM e WHERE e.src = n.id)"),
...      View("bad", "SELECT n.id FROM n LEFT JOIN e ON e.src = n.id")])
>>> result = translate_views(catalog)
>>> for rule in result.statements: print(rule)
lonely(Id) :- n(Id), not lonely__1(Id).
lonely__1(Src) :- n(Src), e(Src, Dst).
two(Src, Dst_2) :- e(Src, Dst), e(Dst, Dst_2), Src != 3.
>>> print(result.refused[0])
view bad, line 1, column 30: LEFT JOIN is not translated: a row without a partner has NULLs, which rules do not make
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from ..lang import Atom, Comparison, Literal, Rule, Var
from ..lang.ast import Aggregate, AggregateElement, BinOp, UnaryOp, term_substituted
from .catalog import Catalog
from .ordered import Test, Tests, base_order, comparable_texts, literal_value, value_order

MAX_DISJUNCTS = 64
"""A condition whose disjunctive normal form has more conjunctions is refused (rules would explode)."""

_NEGATED = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_MIRRORED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class Untranslatable:
    """A view nablog does not translate: its name, where in its SQL, and why."""

    view: str
    line: int | None
    column: int | None
    reason: str

    def __str__(self) -> str:
        where = f", line {self.line}, column {self.column}" if self.line else ""
        return f"view {self.view}{where}: {self.reason}"


class Refused(Exception):
    def __init__(self, node, reason: str):
        super().__init__(reason)
        self.node, self.reason = node, reason


@dataclass
class Relation:
    """A relation a query can read: its predicate, its columns (lower case), their kinds and nullability."""

    pred: str
    columns: list[str]
    kinds: list[str]
    nullable: list[bool]
    orders: list = field(default_factory=list)  # ordered.value_order of each column (numbers, dates, booleans), else None

    def order(self, j: int) -> str | None:
        return self.orders[j] if j < len(self.orders) else None


@dataclass
class Translation:
    statements: list = field(default_factory=list)
    refused: list[Untranslatable] = field(default_factory=list)
    relations: dict[str, Relation] = field(default_factory=dict)  # views translated, by lower-case name
    tests: Tests = field(default_factory=Tests)  # comparisons of numbers, dates and booleans (ordered.py)


def predicate_name(name: str) -> str | None:
    """The predicate of a table or view: its name in lower case, if that is a nablog identifier."""
    pred = name.lower()
    return pred if re.fullmatch(r"[a-z][a-z0-9_]*", pred) else None


def table_relations(catalog: Catalog) -> dict[str, Relation]:
    out = {}
    for table in catalog.tables.values():
        pred = predicate_name(table.name)
        if pred is not None:
            out[pred] = Relation(pred, [c.name.lower() for c in table.columns], [c.kind for c in table.columns], [c.nullable for c in table.columns],
                                 [value_order(c.declared, catalog.dialect) for c in table.columns])
    return out


def translate_views(catalog: Catalog, text_order: bool = True, tests: Tests | None = None) -> Translation:
    """Rules for every view of ``catalog`` that can be translated, and the refusals of the others.

    ``text_order``: whether the database orders text by code point (as nablog does), so that
    ``<`` on text columns means the same on both sides. ``tests``: where the comparisons of
    numbers, dates and booleans go (:mod:`.ordered`), shared with the CHECKs' translation.
    """
    tables = table_relations(catalog)
    by_name = {v.name.lower(): v for v in catalog.views}
    result = Translation(tests=tests if tests is not None else Tests())
    failed: dict[str, str] = {}
    busy: set[str] = set()

    def relation(name: str, node) -> Relation:
        key = name.lower()
        if key in tables:
            return tables[key]
        if key in result.relations:
            return result.relations[key]
        if key in failed or key in busy:
            raise Refused(node, f"it reads view {key}, which is not translated" if key in failed else f"view {key} reads itself")
        if key not in by_name:
            raise Refused(node, f"relation {name} is not a table or view of the schema")
        if not view(by_name[key]):
            raise Refused(node, f"it reads view {key}, which is not translated")
        return result.relations[key]

    def view(v) -> bool:
        import sqlglot

        key = v.name.lower()
        pred = predicate_name(v.name)
        busy.add(key)
        try:
            if pred is None:
                raise Refused(None, f"the name {v.name} is not a nablog predicate name (lower-case letters, digits and _)")
            if key in tables:
                raise Refused(None, f"a table is also called {key}")
            try:
                tree = sqlglot.parse_one(v.sql, read=catalog.dialect)
            except sqlglot.errors.ParseError as e:
                err = e.errors[0] if e.errors else {}
                raise Refused(None, f"sqlglot cannot parse it: {err.get('description', e)}") from None
            tree = tree.transform(_normalize)
            query = _Query(pred, relation, catalog.dialect, text_order, Tests())
            rules, columns, kinds, nullable = query.translate(tree)
            if v.columns:
                columns = [c.lower() for c in v.columns]
            result.statements.extend(rules)
            result.tests.by_pred.update(query.tests.by_pred)  # only once the whole view translates
            result.relations[key] = Relation(pred, columns, kinds, nullable, query.output_orders)
            return True
        except Refused as r:
            line, col = _position(r.node)
            failed[key] = r.reason
            result.refused.append(Untranslatable(v.name, line, col, r.reason))
            return False
        finally:
            busy.discard(key)

    for v in catalog.views:
        if v.name.lower() not in result.relations and v.name.lower() not in failed:
            view(v)
    result.statements.sort(key=lambda r: (r.head[0].pred, str(r)))
    return result


def _position(node) -> tuple[int | None, int | None]:
    """The line and column of the first token of ``node`` that sqlglot located."""
    if node is None:
        return None, None
    for n in node.walk() if hasattr(node, "walk") else ():
        meta = getattr(n, "_meta", None) or {}
        if "line" in meta:
            start = meta.get("start")
            if start is not None and "col" in meta:
                # sqlglot's col is the token's end; start/end are offsets into the whole text
                return meta["line"], meta["col"] - (meta["end"] - start)
            return meta["line"], meta.get("col")
    return None, None


@dataclass
class _Branch:
    """One conjunction of a query: positive atoms, other body elements, and a variable substitution."""

    atoms: list[Atom]
    rest: list = field(default_factory=list)
    nullable: set[Var] = field(default_factory=set)
    subst: dict = field(default_factory=dict)


class _Query:
    """The translation of one view: rules for its predicate and its auxiliary predicates."""

    def __init__(self, pred: str, relation, dialect: str, text_order: bool, tests: Tests):
        self.pred, self.relation, self.dialect, self.text_order, self.tests = pred, relation, dialect, text_order, tests
        self.rules: list[Rule] = []
        self.aux = 0
        self.used: set[str] = set()
        self.orders: dict[Var, str] = {}  # the variables of columns with an ordered.value_order
        self.output_orders: list = []

    # -- helpers --------------------------------------------------------------------------------

    def fresh_pred(self) -> str:
        self.aux += 1
        return f"{self.pred}__{self.aux}"

    def var(self, column: str) -> Var:
        base = re.sub(r"[^A-Za-z0-9_]", "_", column).capitalize() or "V"
        if not base[0].isalpha():
            base = "V" + base
        name, n = base, 1
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return Var(name)

    # -- queries --------------------------------------------------------------------------------

    def translate(self, tree):
        """Rules for ``self.pred`` from the query ``tree``; its column names, kinds and nullability."""
        branches, columns, kinds, nullable = self.query(tree, [])
        for body, out in branches:
            self.rules.append(Rule((Atom(self.pred, tuple(out)),), tuple(body)))
        self.output_orders = self.orders_of(branches)
        return self.rules, columns, kinds, nullable

    def orders_of(self, branches) -> list:
        """The order of each output column: its variable's, when every branch agrees."""
        found = [[self.orders.get(t) if isinstance(t, Var) else None for t in out] for _, out in branches]
        return [column[0] if len(set(column)) == 1 else None for column in zip(*found)] if found else []

    def note_orders(self, variables, rel: Relation) -> None:
        for j, v in enumerate(variables):
            if rel.order(j):
                self.orders[v] = rel.order(j)

    def query(self, node, outer: list):
        """Bodies and output terms of a query: ``([(body, out)], columns, kinds, nullable)``."""
        from sqlglot import exp

        if isinstance(node, exp.Subquery):
            return self.query(node.this, outer)
        if isinstance(node, exp.Union):
            left, cols, kinds, nulls = self.query(node.left, outer)
            right, _, rkinds, rnulls = self.query(node.right, outer)
            self._same_width(node, cols, right)
            return left + right, cols, [a if a == b else "other" for a, b in zip(kinds, rkinds)], [a or b for a, b in zip(nulls, rnulls)]
        if isinstance(node, (exp.Except, exp.Intersect)):
            left, cols, kinds, nulls = self.query(node.left, outer)
            right, _, _, _ = self.query(node.right, outer)
            self._same_width(node, cols, right)
            aux = self.fresh_pred()
            for body, out in right:
                self.rules.append(Rule((Atom(aux, tuple(out)),), tuple(body)))
            positive = isinstance(node, exp.Intersect)
            out_branches = []
            for body, out in left:
                named = []
                for t in out:  # a computed column is named first: V = X + 1, then not aux(V)
                    if isinstance(t, (BinOp, UnaryOp)):
                        v = self.var("computed")
                        body = body + [Comparison("=", v, t)]
                        t = v
                    named.append(t)
                out_branches.append((body + [Literal(Atom(aux, tuple(named)), positive)], named))
            return out_branches, cols, kinds, nulls
        if isinstance(node, exp.Select):
            return self.select(node, outer)
        raise Refused(node, f"{node.key.upper()} is not translated")

    def _same_width(self, node, cols, right) -> None:
        if right and len(right[0][1]) != len(cols):
            raise Refused(node, "the two sides of a set operation have different numbers of columns")

    def select(self, node, outer: list):
        from sqlglot import exp

        for key, what in (("limit", "LIMIT"), ("offset", "OFFSET"), ("fetch", "FETCH"), ("with", "WITH"), ("qualify", "QUALIFY"), ("windows", "WINDOW")):
            if node.args.get(key):
                raise Refused(node.args[key] if not isinstance(node.args[key], list) else node.args[key][0], f"{what} is not translated: a view is a set of rows")
        for w in node.find_all(exp.Window):
            raise Refused(w, "window functions are not translated")
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise Refused(distinct, "DISTINCT ON is not translated")
        scope: list[tuple[str, Relation, list[Var]]] = []
        atoms: list[Atom] = []
        conditions = []
        conditions += self.from_clause(node, scope, atoms)
        if node.args.get("where") is not None:
            conditions.append(node.args["where"].this)
        scopes = [scope, *outer]
        nullable = {v for _, rel, vs in scope for v, n in zip(vs, rel.nullable) if n}
        kinds = {v: k for _, rel, vs in scope for v, k in zip(vs, rel.kinds)}
        condition = exp.and_(*conditions) if conditions else None
        branches = []
        for conjunction in _dnf(condition, node):
            branch = _Branch(list(atoms), [], set(nullable))
            self.conjunction(conjunction, branch, scopes, kinds)
            branches.append(branch)
        group = node.args.get("group")
        having = node.args.get("having")
        aggregates = [a for e in node.expressions for a in e.find_all(exp.Count, exp.Sum, exp.Min, exp.Max, exp.Avg, exp.AggFunc)]
        if group is not None or aggregates or having is not None:
            return self.grouped(node, branches, scopes, kinds, group, having)
        out_all = []
        columns, out_kinds, out_nulls = self.columns(node, scope)
        for branch in branches:
            out = []
            for e in self.outputs(node, scope):
                term = self.term(e, scopes, kinds)
                if not isinstance(term, Var) and any(v in branch.nullable for v in _term_vars(term)):
                    raise Refused(e, "arithmetic over a column that may be NULL is not translated in the select list (its NULL rows would be lost)")
                out.append(term)
            out_all.append((branch, out))
        return [self.finish(b, out) for b, out in out_all], columns, out_kinds, out_nulls

    def from_clause(self, node, scope, atoms) -> list:
        """The relations of FROM and its inner joins into ``scope`` and ``atoms``; the join conditions."""
        from sqlglot import exp

        source = node.args.get("from_") or node.args.get("from")
        if source is None:
            raise Refused(node, "a SELECT without FROM is not translated")
        conditions = []
        for item, join in _joined(source.this, node.args.get("joins") or []):
            if join is not None:
                side, kind = (join.args.get("side") or "").upper(), (join.args.get("kind") or "").upper()
                if side:
                    raise Refused(join, f"{side} JOIN is not translated: a row without a partner has NULLs, which rules do not make")
                if kind not in ("", "INNER", "CROSS"):
                    raise Refused(join, f"{kind} JOIN is not translated")
                if join.args.get("method"):
                    raise Refused(join, f"{join.args['method']} JOIN is not translated")
            self.from_item(item, scope, atoms)
            if join is None:
                continue
            if join.args.get("on") is not None:
                conditions.append(join.args["on"])
            for name in join.args.get("using") or []:
                column = name.name.lower()
                left = [s for s in scope[:-1] if column in s[1].columns]
                if len(left) != 1:
                    raise Refused(name, f"USING ({column}) needs exactly one earlier relation with that column")
                conditions.append(exp.EQ(this=exp.column(column, left[0][0]), expression=exp.column(column, scope[-1][0])))
        return conditions

    def finish(self, branch: _Branch, out: list):
        """A branch's body with its substitution applied, and its output terms."""
        subst = branch.subst
        apply = lambda t: term_substituted(t, subst)  # noqa: E731
        body = [Literal(Atom(a.pred, tuple(apply(t) for t in a.args))) for a in branch.atoms]
        for element in branch.rest:
            element = _substitute_element(element, subst)
            if element not in body:
                body.append(element)
        return body, [apply(t) for t in out]

    def from_item(self, item, scope, atoms) -> None:
        from sqlglot import exp

        if isinstance(item, exp.Table):
            if item.args.get("db") or item.args.get("catalog"):
                pass  # a schema-qualified name: the current schema's relation of that name
            rel = self.relation(item.name, item)
            alias = (item.alias or item.name).lower()
            variables = [self.var(c) for c in rel.columns]
            self.note_orders(variables, rel)
            scope.append((alias, rel, variables))
            atoms.append(Atom(rel.pred, tuple(variables)))
            return
        if isinstance(item, exp.Subquery):
            branches, columns, kinds, nulls = self.query(item.this, [])
            aux = self.fresh_pred()
            for body, out in branches:
                self.rules.append(Rule((Atom(aux, tuple(out)),), tuple(body)))
            rel = Relation(aux, columns, kinds, nulls, self.orders_of(branches))
            variables = [self.var(c) for c in columns]
            self.note_orders(variables, rel)
            scope.append(((item.alias or aux).lower(), rel, variables))
            atoms.append(Atom(aux, tuple(variables)))
            return
        raise Refused(item, f"{item.key.upper()} in FROM is not translated")

    def outputs(self, node, scope):
        from sqlglot import exp

        out = []
        for e in node.expressions:
            if isinstance(e, exp.Star):
                out += [exp.column(c, alias) for alias, rel, _ in scope for c in rel.columns]
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                alias = e.table.lower()
                match = [s for s in scope if s[0] == alias]
                if not match:
                    raise Refused(e, f"no relation {alias} in FROM")
                out += [exp.column(c, alias) for c in match[0][1].columns]
            else:
                out.append(e.this if isinstance(e, exp.Alias) else e)
        return out

    def columns(self, node, scope):
        """Output column names, kinds and nullability of a SELECT."""
        from sqlglot import exp

        names, kinds, nulls = [], [], []
        for e in node.expressions:
            if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
                alias = None if isinstance(e, exp.Star) else e.table.lower()
                for a, rel, _ in scope:
                    if alias in (None, a):
                        names += rel.columns
                        kinds += rel.kinds
                        nulls += rel.nullable
                continue
            names.append(e.alias_or_name.lower())
            inner = e.this if isinstance(e, exp.Alias) else e
            if isinstance(inner, exp.Column):
                _, rel, j = self.locate(inner, [scope])
                kinds.append(rel.kinds[j])
                nulls.append(rel.nullable[j])
            else:
                kinds.append("int" if not (isinstance(inner, exp.Literal) and inner.is_string) else "text")
                nulls.append(any(isinstance(c, exp.Column) and self.locate(c, [scope])[1].nullable[self.locate(c, [scope])[2]] for c in inner.find_all(exp.Column)))
        return names, kinds, nulls

    def locate(self, column, scopes):
        """The scope entry, relation and position of a column reference."""
        name = column.name.lower()
        table = column.table.lower() if column.table else None
        for scope in scopes:
            found = [(vs, rel, rel.columns.index(name)) for alias, rel, vs in scope if (table is None or alias == table) and name in rel.columns]
            if len(found) > 1:
                raise Refused(column, f"column {name} is ambiguous")
            if found:
                return found[0]
        raise Refused(column, f"no column {column.sql()} in the relations of FROM")

    # -- conditions -----------------------------------------------------------------------------

    def conjunction(self, literals, branch: _Branch, scopes, kinds) -> None:
        """Add a conjunction of (possibly negated) SQL conditions to a branch: equalities of
        columns unify their variables; the rest become comparisons and auxiliary atoms."""
        from sqlglot import exp

        subst = branch.subst
        later = []
        for positive, cond in literals:
            if positive and isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column) and isinstance(cond.expression, (exp.Column, exp.Literal)) \
                    and not self.tested(cond, scopes):
                left = term_substituted(self.term(cond.this, scopes, kinds, branch), subst)
                right = term_substituted(self.term(cond.expression, scopes, kinds, branch), subst)
                self.comparable(cond, [left, right], kinds, "=")
                if isinstance(left, Var) and left in branch.nullable:
                    branch.rest.append(Comparison("!=", left, ""))
                if isinstance(right, Var) and right in branch.nullable:
                    branch.rest.append(Comparison("!=", right, ""))
                if isinstance(right, Var) and any(right in a.args for a in branch.atoms):
                    _bind(subst, right, left)
                    continue
                if isinstance(left, Var) and any(left in a.args for a in branch.atoms):
                    _bind(subst, left, right)
                    continue
            later.append((positive, cond))
        for positive, cond in later:
            self.condition(positive, cond, branch, scopes, kinds)

    def condition(self, positive: bool, cond, branch: _Branch, scopes, kinds) -> None:
        from sqlglot import exp

        ops = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
        if type(cond) in ops:
            op = ops[type(cond)] if positive else _NEGATED[ops[type(cond)]]
            if self.tested(cond, scopes):
                branch.rest.append(self.typed_comparison(cond, op, scopes))
                return
            left, right = self.term(cond.this, scopes, kinds, branch), self.term(cond.expression, scopes, kinds, branch)
            self.comparable(cond, [left, right], kinds, op)
            self.guard(branch, [left, right])
            branch.rest.append(Comparison(op, left, right))
            return
        if isinstance(cond, exp.Is):
            if not isinstance(cond.expression, exp.Null):
                raise Refused(cond, "IS is translated with NULL only")
            term = self.term(cond.this, scopes, kinds, branch)
            null = positive != bool(cond.args.get("negate"))  # IS NOT NULL parses as Is(negate=True)
            branch.rest.append(Comparison("=" if null else "!=", term, ""))
            return
        if isinstance(cond, exp.Column):
            var, order = self.column_order(cond, scopes)
            if base_order(order) != "bool":
                raise Refused(cond, f"the column {cond.sql(self.dialect)} is not a boolean: it is no condition")
            branch.rest.append(self.test_atom(var, Test("=", positive, order)))  # NOT flag: false, NULL neither
            return
        if isinstance(cond, exp.Boolean):
            if cond.this != positive:
                branch.rest.append(Comparison("=", 0, 1))
            return
        if isinstance(cond, exp.Exists):
            self.subquery(cond.this, None, positive, branch, scopes, kinds, cond)
            return
        if isinstance(cond, exp.In):
            query = cond.args.get("query")
            if query is not None:
                self.subquery(query.this if isinstance(query, exp.Subquery) else query, cond.this, positive, branch, scopes, kinds, cond)
                return
            raise Refused(cond, "IN with a list inside a NOT or an OR of conditions is not translated")
        raise Refused(cond, f"the condition {cond.sql(self.dialect)[:60]} is not translated")

    def subquery(self, query, left, positive, branch: _Branch, scopes, kinds, node) -> None:
        """EXISTS (q) / left IN (q): an auxiliary predicate over the outer variables q reads,
        defined by the outer atoms and q's body (so that every variable is bound)."""
        from sqlglot import exp

        if not isinstance(query, exp.Select):
            raise Refused(node, "a subquery with set operations is not translated")
        subst = branch.subst
        inner_scope: list = []
        outer_scopes = scopes
        if query.args.get("group") or query.args.get("limit"):
            raise Refused(query, "a subquery with GROUP BY or LIMIT is not translated")
        atoms: list[Atom] = []
        conditions = self.from_clause(query, inner_scope, atoms)
        if query.args.get("where") is not None:
            conditions.append(query.args["where"].this)
        all_kinds = dict(kinds)
        all_kinds.update({v: k for _, rel, vs in inner_scope for v, k in zip(vs, rel.kinds)})
        inner_null = {v for _, rel, vs in inner_scope for v, n in zip(vs, rel.nullable) if n}
        if left is not None:
            outputs = self.outputs(query, inner_scope)
            if len(outputs) != 1:
                raise Refused(query, "IN needs a subquery of one column")
            if not positive:
                # x NOT IN (q) is unknown when x or a value of q is NULL: not a negation then.
                maybe_null = [t for t in (self.term(left, outer_scopes, kinds), self.term(outputs[0], [inner_scope], all_kinds))
                              if any(v in branch.nullable or v in inner_null for v in _term_vars(t))]
                if maybe_null:
                    raise Refused(node, "NOT IN over a column that may be NULL is not translated (SQL's NOT IN is then never true); write NOT EXISTS")
            # x IN (SELECT c ...): x is read in the outer query's scope, c in the subquery's.
            left_term = self.term(left, outer_scopes, kinds)
            out_term = self.term(outputs[0], [inner_scope], all_kinds)
            self.comparable(node, [left_term, out_term], all_kinds, "=")
        condition = exp.and_(*conditions) if conditions else None
        outer_vars = {v for a in branch.atoms for v in a.args if isinstance(v, Var)}
        outer_vars |= {term_substituted(v, subst) for v in list(outer_vars)}
        aux = self.fresh_pred()
        heads = []
        for conjunction in _dnf(condition, query):
            sub = _Branch(list(branch.atoms) + atoms, [], set(branch.nullable) | inner_null, dict(subst))
            self.conjunction(conjunction, sub, [inner_scope, *outer_scopes], all_kinds)
            if left is not None:
                self.guard(sub, [left_term, out_term])
                here, there = term_substituted(out_term, sub.subst), term_substituted(left_term, sub.subst)
                bound = {v for a in sub.atoms for v in a.args if isinstance(v, Var)}
                if isinstance(here, Var) and here in bound:
                    _bind(sub.subst, here, there)
                elif isinstance(there, Var) and there in bound:
                    _bind(sub.subst, there, here)
                else:
                    sub.rest.append(Comparison("=", there, here))
            body, _ = self.finish(sub, [])
            heads.append((sub, body))
        # The auxiliary predicate's arguments: the outer variables, as the outer branch binds them.
        shared = sorted({term_substituted(v, subst) for v in outer_vars if isinstance(term_substituted(v, subst), Var)}, key=lambda v: v.name)
        for sub, body in heads:
            head_terms = tuple(term_substituted(v, sub.subst) for v in shared)
            self.rules.append(Rule((Atom(aux, head_terms),), tuple(body)))
        branch.rest.append(Literal(Atom(aux, tuple(shared)), positive))

    # -- comparisons of numbers, dates and booleans (ordered.py) --------------------------------

    def column_order(self, e, scopes):
        """The variable of a column reference and its order (None for int and text columns)."""
        from sqlglot import exp

        while isinstance(e, exp.Paren):
            e = e.this
        if not isinstance(e, exp.Column):
            return None, None
        vs, rel, j = self.locate(e, scopes)
        return vs[j], self.orders.get(vs[j])

    def tested(self, cond, scopes) -> bool:
        """Whether a comparison reads a column of a number, date or boolean type."""
        return any(self.column_order(side, scopes)[1] is not None for side in (cond.this, cond.expression))

    def typed_comparison(self, cond, op: str, scopes):
        """``column op literal`` as a test, or two columns compared on their texts where those order as the values."""
        (lvar, lorder), (rvar, rorder) = self.column_order(cond.this, scopes), self.column_order(cond.expression, scopes)
        if lvar is not None and rvar is not None:
            if not comparable_texts(lorder, rorder, op):
                raise Refused(cond, f"comparing columns of types {lorder or 'integer or text'} and {rorder or 'integer or text'} with {op} is not translated")
            return Comparison(op, lvar, rvar)
        var, order, other = (lvar, lorder, cond.expression) if lvar is not None else (rvar, rorder, cond.this)
        if lvar is None:
            op = _MIRRORED[op]
        value = literal_value(other, order, self.dialect)
        if value is None:
            raise Refused(cond, f"a column of type {order} is compared only with another of its type or with a literal: {other.sql(self.dialect)[:40]}")
        return self.test_atom(var, Test(op, value, order))

    def test_atom(self, var: Var, test: Test) -> Literal:
        pred = self.fresh_pred()
        self.tests.add(pred, test)
        return Literal(Atom(pred, (var,)))

    def guard(self, branch: _Branch, terms) -> None:
        """``X != ""`` for each nullable column a comparison reads: NULL passes no condition."""
        for t in terms:
            for v in _term_vars(t):
                if v in branch.nullable:
                    g = Comparison("!=", v, "")
                    if g not in branch.rest:
                        branch.rest.append(g)

    def comparable(self, node, terms, kinds, op: str) -> None:
        for t in terms:
            for v in _term_vars(t):
                kind = kinds.get(v, "int")
                if kind == "other":
                    raise Refused(node, "comparing columns of a type other than integer or text is not translated yet (nablog reads them as text)")
                if kind == "text" and op not in ("=", "!=") and not self.text_order:
                    raise Refused(node, "ordering text under the database's collation is not translated (nablog orders text by code point)")

    # -- terms ----------------------------------------------------------------------------------

    def term(self, e, scopes, kinds, branch=None):
        from sqlglot import exp

        if isinstance(e, exp.Paren):
            return self.term(e.this, scopes, kinds, branch)
        if isinstance(e, exp.Column):
            vs, rel, j = self.locate(e, scopes)
            return vs[j]
        if isinstance(e, exp.Literal):
            if e.is_string:
                return e.this
            if re.fullmatch(r"-?[0-9]+", e.this):
                return int(e.this)
            raise Refused(e, f"the number {e.this} is not an integer: nablog compares numeric columns as text")
        if isinstance(e, exp.Neg):
            inner = self.term(e.this, scopes, kinds, branch)
            return -inner if isinstance(inner, int) else UnaryOp("-", inner)
        if isinstance(e, exp.Cast):
            raise Refused(e, "CAST is not translated")
        ops = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Mod: "\\"}
        if isinstance(e, exp.Div):
            if self.dialect == "duckdb" or not e.args.get("typed"):
                raise Refused(e, "/ divides as floating point in this database; nablog's division is on integers")
            ops[exp.Div] = "/"
        if type(e) in ops:
            left, right = self.term(e.this, scopes, kinds, branch), self.term(e.expression, scopes, kinds, branch)
            for t in (left, right):
                for v in _term_vars(t):
                    if kinds.get(v, "int") != "int":
                        raise Refused(e, "arithmetic is translated on integer columns only")
            if branch is not None:
                self.guard(branch, [left, right])
            return BinOp(ops[type(e)], left, right)
        if isinstance(e, exp.Null):
            raise Refused(e, "NULL as a value is not translated (write IS NULL)")
        raise Refused(e, f"{e.sql(self.dialect)[:40]} is not translated")

    # -- aggregates -----------------------------------------------------------------------------

    def grouped(self, node, branches: list[_Branch], scopes, kinds, group, having):
        """GROUP BY: ``v__k`` holds every joined row (all columns, so that SUM and COUNT(*) see
        each row of the bag once); each output row is a group with its aggregates."""
        from sqlglot import exp

        scope = scopes[0]
        row_vars = [v for _, _, vs in scope for v in vs]
        rows = self.fresh_pred()
        for branch in branches:
            body, out = self.finish(branch, row_vars)
            self.rules.append(Rule((Atom(rows, tuple(out)),), tuple(body)))
        # From here on a column is its position in the row predicate: fresh variables per use.
        group_vars: list[Var] = []
        for g in group.expressions if group is not None else []:
            if not isinstance(g, exp.Column):
                raise Refused(g, "GROUP BY is translated for columns only")
            vs, _, j = self.locate(g, [scope])
            group_vars.append(vs[j])
        nullable = {v for _, rel, vs in scope for v, n in zip(vs, rel.nullable) if n}
        body: list = []
        if group_vars:
            body.append(Literal(Atom(rows, tuple(v if v in group_vars else Var("_") for v in row_vars))))
        found: dict[str, Var] = {}

        def aggregate(a) -> Var:
            key = a.sql(self.dialect)
            if key in found:
                return found[key]
            result = self.var(a.key)
            found[key] = result
            local = [self.var(v.name) if v not in group_vars else v for v in row_vars]
            rename = dict(zip(row_vars, local))
            condition = [Literal(Atom(rows, tuple(local)))]
            arg = a.this
            distinct = isinstance(arg, exp.Distinct)
            if distinct:
                arg = arg.expressions[0]
            if isinstance(a, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
                terms = tuple(local)
            else:
                if isinstance(a, exp.Avg) or type(a) not in (exp.Count, exp.Sum, exp.Min, exp.Max):
                    raise Refused(a, f"the aggregate {a.key.upper()} is not translated (COUNT, SUM, MIN and MAX are)")
                value = term_substituted(self.term(arg, [scope], kinds), rename)
                for v in _term_vars(value):
                    if kinds.get(next(k for k, l in rename.items() if l == v), "int") != "int" and not isinstance(a, exp.Count):
                        raise Refused(a, f"{a.key.upper()} is translated over integer columns only")
                    original = next(k for k, l in rename.items() if l == v)
                    if original in nullable:
                        if not isinstance(a, exp.Count):
                            raise Refused(a, f"{a.key.upper()} over a column that may be NULL is not translated (a group of NULLs has the value NULL)")
                        condition.append(Comparison("!=", v, ""))
                if not group_vars and not isinstance(a, exp.Count):
                    raise Refused(a, f"{a.key.upper()} without GROUP BY is NULL on an empty table, which nablog has no value for")
                terms = (value,) if distinct or isinstance(a, (exp.Min, exp.Max)) else (value, *local)
            function = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max"}[type(a)]
            body.append(Aggregate(function, (AggregateElement(terms, tuple(condition)),), "=", result))
            return result

        def value(e):
            if isinstance(e, (exp.Count, exp.Sum, exp.Min, exp.Max, exp.Avg)) or isinstance(e, exp.AggFunc):
                return aggregate(e)
            if isinstance(e, exp.Paren):
                return value(e.this)
            if isinstance(e, exp.Column):
                vs, _, j = self.locate(e, [scope])
                if vs[j] not in group_vars:
                    raise Refused(e, f"column {e.sql()} is neither grouped nor aggregated")
                return vs[j]
            ops = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}
            if type(e) in ops:
                return BinOp(ops[type(e)], value(e.this), value(e.expression))
            return self.term(e, [scope], kinds)

        out = [value(e) for e in self.outputs(node, scope)]
        if having is not None:
            for conjunction in [_dnf(having.this, node)]:
                if len(conjunction) != 1:
                    raise Refused(having, "OR in HAVING is not translated")
                for positive, cond in conjunction[0]:
                    ops = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
                    if type(cond) not in ops:
                        raise Refused(cond, "HAVING is translated for comparisons only")
                    op = ops[type(cond)] if positive else _NEGATED[ops[type(cond)]]
                    body.append(Comparison(op, value(cond.this), value(cond.expression)))
        names = [e.alias_or_name.lower() for e in node.expressions]
        out_kinds = ["int" for _ in out]
        out_nulls = [False for _ in out]
        for i, t in enumerate(out):
            if isinstance(t, Var) and t in group_vars:
                _, rel, j = next((s, s[1], s[2].index(t)) for s in scope if t in s[2])
                out_kinds[i], out_nulls[i] = rel.kinds[j], rel.nullable[j]
        return [(body, out)], names, out_kinds, out_nulls


def _normalize(node):
    """The spellings databases keep a view in, as the query the user wrote: DuckDB's
    ``count_star()`` is ``COUNT(*)``; ``x = ANY (subquery)`` (DuckDB) and ``x = ANY (ARRAY[..])``
    (PostgreSQL) are ``x IN (..)``; ``x <> ALL (..)`` is ``NOT x IN (..)``."""
    from sqlglot import exp

    if isinstance(node, exp.Anonymous) and node.name.lower() == "count_star" and not node.expressions:
        return exp.Count(this=exp.Star())
    if isinstance(node, (exp.EQ, exp.NEQ)):
        right = node.expression
        quantified = None
        if isinstance(right, exp.Any) and isinstance(node, exp.EQ):
            quantified = right.this
        elif isinstance(node, exp.NEQ) and (isinstance(right, exp.All) or (isinstance(right, exp.Anonymous) and right.name.upper() == "ALL" and len(right.expressions) == 1)):
            quantified = right.this if isinstance(right, exp.All) else right.expressions[0]
        if quantified is None:
            return node
        while isinstance(quantified, exp.Paren):
            quantified = quantified.this
        if isinstance(quantified, (exp.Subquery, exp.Select, exp.Union)):
            member = exp.In(this=node.this, query=quantified if isinstance(quantified, exp.Subquery) else exp.Subquery(this=quantified))
        elif isinstance(quantified, exp.Array):
            member = exp.In(this=node.this, expressions=quantified.expressions)
        else:
            return node
        return member if isinstance(node, exp.EQ) else exp.Not(this=member)
    return node


def _joined(item, joins) -> list:
    """FROM's items in order, each with the join that adds it (None for the first): a
    parenthesized join ``(a JOIN b ON c)``, as PostgreSQL prints views, is opened up."""
    from sqlglot import exp

    out = []
    if isinstance(item, (exp.Table, exp.Subquery)) and item.args.get("joins"):
        base = item.copy()
        base.set("joins", None)
        out += _joined(base, item.args["joins"])
    elif isinstance(item, exp.Subquery) and not item.alias and isinstance(item.this, (exp.Table, exp.Subquery)):
        out += _joined(item.this, [])
    else:
        out.append((item, None))
    for join in joins:
        inner = _joined(join.this, [])
        out.append((inner[0][0], join))
        out += inner[1:]
    return out


def _dnf(condition, node) -> list[list[tuple[bool, object]]]:
    """A condition as a disjunction of conjunctions of (positive, atom) — atoms being comparisons,
    IS NULL, EXISTS and IN; ``IN (list)`` is a disjunction of equalities."""
    from sqlglot import exp

    def walk(c, positive: bool) -> list[list[tuple[bool, object]]]:
        if isinstance(c, exp.Paren):
            return walk(c.this, positive)
        if isinstance(c, exp.Not):
            return walk(c.this, not positive)
        if isinstance(c, (exp.And, exp.Or)):
            conjunctive = isinstance(c, exp.And) == positive
            left, right = walk(c.this, positive), walk(c.expression, positive)
            if conjunctive:
                out = [a + b for a, b in itertools.product(left, right)]
            else:
                out = left + right
            if len(out) > MAX_DISJUNCTS:
                raise Refused(c, f"the condition has more than {MAX_DISJUNCTS} disjuncts")
            return out
        if isinstance(c, exp.In) and not c.args.get("query") and c.expressions:
            equalities = [exp.EQ(this=c.this, expression=v) for v in c.expressions]
            if positive:
                return [[(True, eq)] for eq in equalities]
            return [[(False, eq) for eq in equalities]]
        if isinstance(c, exp.Between):
            low = exp.GTE(this=c.this, expression=c.args["low"])
            high = exp.LTE(this=c.this, expression=c.args["high"])
            return walk(exp.And(this=low, expression=high), positive)
        return [[(positive, c)]]

    if condition is None:
        return [[]]
    return walk(condition, True)


def _bind(subst: dict, var: Var, value) -> None:
    """Record var := value, keeping the substitution idempotent."""
    value = term_substituted(value, subst)
    if value == var:
        return
    for k, v in list(subst.items()):
        if v == var:
            subst[k] = value
    subst[var] = value


def _substitute_element(element, subst: dict):
    if isinstance(element, Comparison):
        return Comparison(element.op, term_substituted(element.left, subst), term_substituted(element.right, subst))
    if isinstance(element, Literal):
        return Literal(Atom(element.atom.pred, tuple(term_substituted(t, subst) for t in element.atom.args)), element.positive)
    return element


def _term_vars(term):
    if isinstance(term, Var):
        yield term
    elif isinstance(term, BinOp):
        yield from _term_vars(term.left)
        yield from _term_vars(term.right)
    elif isinstance(term, UnaryOp):
        yield from _term_vars(term.arg)


__all__ = ["Relation", "Translation", "Untranslatable", "predicate_name", "table_relations", "translate_views"]
