"""Parser for nablog's clingo-compatible Datalog: text to Program, with located, hinted errors.

The grammar (ASP-Core-2 where ASP has the construct)::

    program     ::= statement*
    statement   ::= rule | denial | directive
    rule        ::= head [":-" body] "."
    head        ::= atom (";" atom)*            % disjunction: transforms only
    denial      ::= ":-" body "."
    body        ::= element ("," element)*
    element     ::= atom | "not" atom | term OP term | aggregate      OP in = != < <= > >=
    aggregate   ::= term OP agg | agg OP term
    agg         ::= ("#count" | "#sum" | "#min" | "#max") "{" [agg_element (";" agg_element)*] "}"
    agg_element ::= term ("," term)* [":" literal ("," literal)*]   literal: atom, not atom, comparison
    constrained ::= atom ":-" [constraint ("," constraint)*] "||" [atom ("," atom)*] "."   seed 000
    constraint  ::= term OP term | "in" "(" term "," name ":" name "(" [term ("," term)*] ")" ")"
    atom        ::= name ["(" term ("," term)* ")"]
    term        ::= sum [".." sum]                      an interval: heads and X = a..b
    sum         ::= product (("+" | "-") product)*
    product     ::= power (("*" | "/" | "\\") power)*
    power       ::= unary ["**" power]
    unary       ::= "-" unary | "|" term "|" | "(" term ")" | simple
    simple      ::= Variable | _ | integer | name | "quoted string"
    directive   ::= "#base" name "/" integer ("," name "/" integer)* "."
                  | "#constraint" name ":-" body "."
                  | "#require" atom "."
                  | "#protect" item ("," item)* "."     item: name "/" integer | ground atom
                  | "#columns" name "(" column ("," column)* ")" "."
                  | "#fd" [name] name ":" columns "->" columns "."       functional dependency
                  | "#key" [name] name ":" columns "."                   key
                  | "#fk" [name] name ":" columns "->" name ":" columns "."   foreign key
                  | "#trusted" name ("," name)* "."      constraints that hold (Δ); the rest is Γ
                  | "#null" constant ("," constant)* "."   values a foreign key treats as null
    columns     ::= colref ("," colref)*
    colref      ::= column | positive integer            a #columns name or a 1-based position
    column      ::= name | Variable | "quoted string"

Comments run from ``%`` to the end of the line, or ``%* ... *%``.

>>> from nablog.lang import parse
>>> prog = parse("e(1,2). p(X,Y) :- e(X,Y). #require ok.")
>>> [str(s) for s in prog.statements]
['e(1, 2).', 'p(X, Y) :- e(X, Y).', '#require ok.']
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

from .ast import (
    AGGREGATE_FUNCTIONS,
    COMPARISON_OPS,
    Aggregate,
    AggregateElement,
    Atom,
    BinOp,
    Interval,
    UnaryOp,
    BaseDeclaration,
    BodyElement,
    ColumnRef,
    ColumnsDeclaration,
    Comparison,
    ConstrainedRule,
    Denial,
    DomainCall,
    Dependency,
    Literal,
    NullDeclaration,
    Protection,
    Requirement,
    Rule,
    Statement,
    Term,
    TrustDeclaration,
    Var,
)
from .errors import Loc, NablogSyntaxError, Source

DIRECTIVES = ("#base", "#columns", "#constraint", "#fd", "#fk", "#key", "#null", "#protect", "#require", "#trusted")

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<blockcomment>%\*.*?\*%)
  | (?P<comment>%[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<badstring>"[^\n]*)
  | (?P<arrow>->)
  | (?P<int>[0-9]+)
  | (?P<name>[a-z][A-Za-z0-9_]*)
  | (?P<var>[A-Z_][A-Za-z0-9_]*)
  | (?P<directive>\#[a-z_]+)
  | (?P<op>:-|!=|<>|<=|>=|==|=|<|>)
  | (?P<arith>\*\*|\.\.|[-+*\\])
  | (?P<punct>[(),.;/|:{}])
  """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Line breaks as editors count them (a form feed, vertical tab or U+2028 is not one)."""

MAX_INT_DIGITS = 4300
"""Longest integer literal (Python's own limit for converting text to int)."""

MAX_ARITY = 10_000
"""Largest arity a declaration may give."""


@dataclass(slots=True)
class Token:
    kind: str
    text: str
    pos: int


def _unescape(body: str) -> str:
    return re.sub(r"\\(x[0-9a-fA-F]{2}|.)", _escape_value, body, flags=re.DOTALL)


def _escape_value(m: re.Match) -> str:
    code = m.group(1)
    if len(code) == 3:
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, code)


def _abbreviate(text: str, limit: int = 20) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


MAX_NESTING = 100
"""Deepest nesting of parentheses, signs and ``|...|`` in one term (deeper input is refused)."""


class _Parser:
    def __init__(self, source: Source):
        self.source = source
        self.text = source.text
        self._line_starts = [0] + [m.end() for m in LINE_BREAK.finditer(self.text)]
        self.tokens = list(self._tokenize())
        self.i = 0
        self.depth = 0  # nesting of terms being read (parentheses, |X|, unary minus)

    # -- locations and errors ------------------------------------------------------------------

    def loc(self, pos: int) -> Loc:
        line = bisect.bisect_right(self._line_starts, pos)
        return Loc(self.source, line, pos - self._line_starts[line - 1] + 1)

    def error(self, message: str, pos: int, hint: str | None = None) -> NablogSyntaxError:
        return NablogSyntaxError(message, self.loc(pos), hint)

    def _tokenize(self) -> Iterable[Token]:
        pos, text = 0, self.text
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                if text.startswith("%*", pos):
                    raise self.error("unterminated block comment", pos, "close it with *%")
                raise self.error(
                    f"unexpected character {text[pos]!r}",
                    pos,
                    "names start with a lower-case letter, variables with an upper-case letter or _",
                )
            kind = m.lastgroup
            assert kind is not None
            if kind == "badstring":
                raise self.error("unterminated string", pos, 'close the string with " on the same line')
            if kind == "int" and len(m.group()) - m.group().startswith("-") > MAX_INT_DIGITS:
                raise self.error(
                    f"integer of {len(m.group().lstrip('-'))} digits is too long (at most {MAX_INT_DIGITS})",
                    pos,
                    'write it as a string, e.g. "1234...", if it is an identifier',
                )
            if kind not in ("ws", "comment", "blockcomment"):
                yield Token(kind, m.group(), pos)
            pos = m.end()

    # -- token stream ----------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def end_pos(self) -> int:
        return len(self.text.rstrip())

    def next(self, expected: str) -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of input, expected {expected}", self.end_pos(), _hint_for(expected))
        self.i += 1
        return tok

    def expect(self, text: str, what: str | None = None) -> Token:
        tok = self.peek()
        if tok is None or tok.text != text:
            expected = what or f"'{text}'"
            found = f"'{tok.text}'" if tok else "end of input"
            pos = tok.pos if tok else self.end_pos()
            hint = _hint_for(expected)
            if tok is not None and expected.startswith("'.' at the end of the rule") and tok.kind in ("name", "var"):
                hint = "separate body literals with ','"
            raise self.error(f"expected {expected}, found {found}", pos, hint)
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text

    # -- grammar ---------------------------------------------------------------------------------

    def program(self) -> list[Statement]:
        out: list[Statement] = []
        while self.peek() is not None:
            out.append(self.statement())
        return out

    def statement(self) -> Statement:
        tok = self.peek()
        assert tok is not None
        if tok.kind == "directive":
            return self.directive()
        if tok.text == ":-":
            self.i += 1
            body = self.body()
            self.expect(".", "'.' at the end of the constraint")
            return Denial(body, None, self.loc(tok.pos))
        head = [self.atom()]
        while self.at(";") or self.at("|"):
            self.i += 1
            head.append(self.atom())
        body: tuple[BodyElement, ...] = ()
        if self.at(":-"):
            self.i += 1
            body = () if self.at_bars() else self.body()
            if self.at_bars() or any(isinstance(b, DomainCall) for b in body):
                return self.constrained_rule(tok, head, body)
        self.expect(".", "'.' at the end of the rule" if body else "'.' or ':-' after the head")
        return Rule(tuple(head), body, self.loc(tok.pos))

    def at_bars(self) -> bool:
        """At ``||``, the separator of a constrained rule's constraints from its atoms."""
        nxt = self.peek(1)
        return self.at("|") and nxt is not None and nxt.text == "|" and nxt.pos == self.peek().pos + 1  # type: ignore[union-attr]

    def constrained_rule(self, tok: Token, head: list[Atom], constraints: tuple) -> ConstrainedRule:
        """``A :- D1, ..., Dm || A1, ..., An.`` (seed 000, §2.1); ``||`` may be left out when a domain call shows the kind."""
        atoms: tuple = ()
        if self.at_bars():
            self.i += 2
            atoms = () if self.at(".") else self.body()
        else:
            constraints, atoms = tuple(b for b in constraints if not isinstance(b, Literal)), tuple(b for b in constraints if isinstance(b, Literal))
        where = self.loc(tok.pos)
        if len(head) != 1:
            raise NablogSyntaxError("a constrained rule has one head atom", where, "write one rule per head atom")
        for c in constraints:
            if isinstance(c, Literal):
                raise NablogSyntaxError(
                    f"{c} stands before '||', where only comparisons and domain calls go", c.loc or where, "move the atom after '||'"
                )
        for a in atoms:
            if not isinstance(a, Literal) or not a.positive:
                raise NablogSyntaxError(
                    f"{a} stands after '||', where only positive atoms go",
                    getattr(a, "loc", None) or where,
                    "constraints go before '||'; constrained rules have no negation (seed 000)",
                )
        self.expect(".", "'.' at the end of the rule")
        return ConstrainedRule(head[0], constraints, tuple(a.atom for a in atoms), where)

    def domain_call(self) -> DomainCall:
        start = self.expect("in")
        self.expect("(")
        term = self.term()
        self.expect(",", "',' after the member of in(X, domain:function(args))")
        domain = self.next("a domain name")
        self.expect(":", "':' between domain and function, as in geo:within(paris, 300)")
        function = self.next("a function name")
        if domain.kind != "name" or function.kind != "name":
            raise self.error("expected domain:function(args)", domain.pos, "write in(X, geo:within(paris, 300))")
        args: list[Term] = []
        self.expect("(", "'(' after the domain function")
        if not self.at(")"):
            args.append(self.term())
            while self.at(","):
                self.i += 1
                args.append(self.term())
        self.expect(")", "',' or ')' in the function's arguments")
        self.expect(")", "')' closing in(...)")
        return DomainCall(term, domain.text, function.text, tuple(args), self.loc(start.pos))

    def directive(self) -> Statement:
        tok = self.next("a directive")
        if tok.text == "#base":
            sigs = [self.signature()]
            while self.at(","):
                self.i += 1
                sigs.append(self.signature())
            self.expect(".", "'.' at the end of #base")
            return BaseDeclaration(tuple(sigs), self.loc(tok.pos))
        if tok.text == "#constraint":
            name = self.next("a constraint name")
            if name.kind != "name":
                raise self.error(
                    f"expected a constraint name, found '{name.text}'",
                    name.pos,
                    "write #constraint one_chair :- group_chair(G, X), group_chair(G, Y), X != Y.",
                )
            self.expect(":-", "':-' after the constraint name")
            body = self.body()
            self.expect(".", "'.' at the end of the constraint")
            return Denial(body, name.text, self.loc(tok.pos))
        if tok.text == "#require":
            atom = self.atom()
            if not atom.is_ground():
                var = next(atom.variables(), None)
                raise self.error(
                    f"#require needs a ground atom, but {atom} has " + (f"variable {var}" if var else "a term to compute"),
                    atom.loc and self._pos_of(atom.loc) or tok.pos,
                    "write the constraint as a denial (:- body.) to forbid a pattern",
                )
            self.expect(".", "'.' at the end of #require")
            return Requirement(atom, self.loc(tok.pos))
        if tok.text == "#protect":
            items = [self.protected_item()]
            while self.at(","):
                self.i += 1
                items.append(self.protected_item())
            self.expect(".", "'.' at the end of #protect")
            return Protection(tuple(items), self.loc(tok.pos))
        if tok.text == "#columns":
            return self.columns_declaration(tok)
        if tok.text in ("#fd", "#key", "#fk"):
            return self.dependency(tok)
        if tok.text == "#trusted":
            names = [self.constraint_name()]
            while self.at(","):
                self.i += 1
                names.append(self.constraint_name())
            self.expect(".", "'.' at the end of #trusted")
            return TrustDeclaration(tuple(names), self.loc(tok.pos))
        if tok.text == "#null":
            values = [self.null_value()]
            while self.at(","):
                self.i += 1
                values.append(self.null_value())
            self.expect(".", "'.' at the end of #null")
            return NullDeclaration(tuple(values), self.loc(tok.pos))
        raise self.error(
            f"unknown directive {tok.text}",
            tok.pos,
            "nablog knows " + ", ".join(DIRECTIVES),
        )

    def constraint_name(self) -> str:
        name = self.next("a constraint name")
        if name.kind != "name":
            raise self.error(
                f"expected a constraint name, found '{name.text}'",
                name.pos,
                "write #trusted no_bigamy_m1, fd_tax__zip__city.  (names of #constraint, #fd, #key and #fk)",
            )
        return name.text

    def null_value(self):
        tok = self.peek()
        term = self.term()
        if not isinstance(term, (int, str)):
            raise self.error(f"expected a constant, found '{term}'", tok.pos, 'write #null "NULL".')  # type: ignore[union-attr]
        return term

    def columns_declaration(self, tok: Token) -> ColumnsDeclaration:
        pred = self.next("a relation name")
        if pred.kind != "name":
            raise self.error(f"expected a relation name, found '{pred.text}'", pred.pos, "write #columns tax(f_name, l_name, zip).")
        self.expect("(", "'(' and the column names")
        names = [self.column(allow_position=False)]
        while self.at(","):
            self.i += 1
            names.append(self.column(allow_position=False))
        self.expect(")", "',' or ')' in the column list")
        self.expect(".", "'.' at the end of #columns")
        for k, n in enumerate(names):
            if n in names[:k]:
                raise self.error(f"column {n} of {pred.text} is named twice", pred.pos, "give every column of the relation its own name")
        return ColumnsDeclaration(pred.text, tuple(names), self.loc(tok.pos))  # type: ignore[arg-type]

    def dependency(self, tok: Token) -> Dependency:
        kind = tok.text[1:]
        example = {
            "fd": "#fd tax: zip -> city.",
            "key": "#key airports: airport_id.",
            "fk": "#fk routes: airline_id -> airlines: airline_id.",
        }[kind]
        first = self.next("a relation name")
        if first.kind != "name":
            raise self.error(f"expected a relation name, found '{first.text}'", first.pos, f"write {example}")
        name = None
        relation = first.text
        if not self.at(":"):
            nxt = self.next("':' after the relation")
            if nxt.kind != "name":
                raise self.error(f"expected ':' after the relation {first.text}, found '{nxt.text}'", nxt.pos, f"write {example}")
            name, relation = first.text, nxt.text
        self.expect(":", f"':' after the relation (as in {example})")
        left = self.column_list()
        right: list[ColumnRef] = []
        target = None
        if kind in ("fd", "fk"):
            self.expect("->", f"'->' (as in {example})")
            if kind == "fk":
                tgt = self.next("the referenced relation")
                if tgt.kind != "name":
                    raise self.error(f"expected the referenced relation, found '{tgt.text}'", tgt.pos, f"write {example}")
                target = tgt.text
                self.expect(":", f"':' after the referenced relation (as in {example})")
            right = self.column_list()
        self.expect(".", f"'.' at the end of #{kind}")
        return Dependency(kind, relation, tuple(left), tuple(right), target, name, self.loc(tok.pos))

    def column_list(self) -> list[ColumnRef]:
        out = [self.column()]
        while self.at(","):
            self.i += 1
            out.append(self.column())
        return out

    def column(self, allow_position: bool = True) -> ColumnRef:
        tok = self.next("a column")
        if tok.kind in ("name", "var") and tok.text != "_":
            return tok.text
        if tok.kind == "string":
            return _unescape(tok.text[1:-1])
        if tok.kind == "int" and allow_position and 1 <= int(tok.text) <= MAX_ARITY:
            return int(tok.text)
        what = "a column name or a position (1, 2, ...)" if allow_position else "a column name"
        raise self.error(f"expected {what}, found '{tok.text}'", tok.pos, "name columns with #columns r(a, b, c). or number them from 1")

    def _pos_of(self, loc: Loc) -> int:
        return self._line_starts[loc.line - 1] + loc.column - 1

    def protected_item(self):
        """``p/2`` (a whole relation) or a ground atom (one fact)."""
        nxt = self.peek(1)
        if nxt is not None and nxt.text == "/":
            return self.signature("#protect p/2.")
        atom = self.atom()
        if not atom.is_ground():
            raise self.error(
                f"#protect needs a ground atom or a relation p/n, but {atom} is not ground",
                self._pos_of(atom.loc) if atom.loc else 0,
                f"protect the whole relation with #protect {atom.pred}/{atom.arity}.",
            )
        return atom

    def signature(self, example: str = "#base p/2.") -> tuple[str, int]:
        name = self.next("a predicate name like p/2")
        if name.kind != "name":
            raise self.error(f"expected a predicate name, found '{name.text}'", name.pos, f"write {example}")
        self.expect("/", "'/' and the arity, as in p/2")
        arity = self.next("an arity")
        if arity.kind != "int" or int(arity.text) < 0:
            raise self.error(f"expected an arity, found '{arity.text}'", arity.pos, f"write {example}")
        if int(arity.text) > MAX_ARITY:
            raise self.error(f"arity {_abbreviate(arity.text)} is too large (at most {MAX_ARITY:,})", arity.pos, f"write {example}")
        return (name.text, int(arity.text))

    def body(self) -> tuple[BodyElement, ...]:
        elements = [self.element()]
        while self.at(","):
            self.i += 1
            elements.append(self.element())
        return tuple(elements)

    def element(self, allow_aggregate: bool = True) -> BodyElement:
        tok = self.peek()
        if tok is None:
            raise self.error("unexpected end of input, expected a body literal", self.end_pos())
        if tok.text == "not":
            nxt = self.peek(1)
            # `not` followed by a comparison operator is the constant "not", never negation.
            if nxt is None or nxt.kind != "op":
                self.i += 1
                return Literal(self.atom(), False)
        if tok.text in _AGGREGATES:
            return self.aggregate_first(tok, allow_aggregate)
        nxt = self.peek(1)
        colon = self.peek(5)
        if tok.text == "in" and nxt is not None and nxt.text == "(" and colon is not None and colon.text == ":":
            return self.domain_call()
        if tok.kind in ("var", "int", "string") or tok.text in ("-", "(", "|") or (
            nxt is not None and (nxt.kind == "arith" or (nxt.kind == "op" and nxt.text != ":-"))
        ):
            left = self.term()
            op = self.next("a comparison operator")
            if op.kind != "op" or op.text == ":-":
                raise self.error(
                    f"expected a comparison operator after {left!s}, found '{op.text}'",
                    op.pos,
                    "comparisons are = != < <= > >=; predicates start with a lower-case letter",
                )
            after = self.peek()
            if after is not None and after.text in _AGGREGATES:
                self._no_aggregate_here(after, allow_aggregate)
                self.i += 1
                return Aggregate(after.text[1:], self.aggregate_elements(), _normalize_op(op, self), left, self.loc(tok.pos))
            right = self.term()
            return Comparison(_normalize_op(op, self), left, right, self.loc(tok.pos))
        return Literal(self.atom(), True)

    def aggregate_first(self, tok: Token, allow_aggregate: bool) -> Aggregate:
        """``#count{...} op term``, kept as ``term op' #count{...}`` (the guard on the left)."""
        self._no_aggregate_here(tok, allow_aggregate)
        self.i += 1
        elements = self.aggregate_elements()
        op = self.next("a comparison operator after the aggregate")
        if op.kind != "op" or op.text == ":-":
            raise self.error(
                f"expected a comparison after #{tok.text[1:]}{{...}}, found '{op.text}'",
                op.pos,
                f"compare the aggregate with a term, e.g. N = {tok.text}{{...}} or {tok.text}{{...}} > 3",
            )
        bound = self.term()
        return Aggregate(tok.text[1:], elements, _FLIPPED[_normalize_op(op, self)], bound, self.loc(tok.pos))

    def _no_aggregate_here(self, tok: Token, allow_aggregate: bool) -> None:
        if not allow_aggregate:
            raise self.error("an aggregate inside an aggregate", tok.pos, "define the inner aggregate in a rule of its own")

    def aggregate_elements(self) -> tuple[AggregateElement, ...]:
        self.expect("{", "'{' after the aggregate function")
        elements: list[AggregateElement] = []
        while not self.at("}"):
            terms = [self.term()]
            while self.at(","):
                self.i += 1
                terms.append(self.term())
            condition: list = []
            if self.at(":"):
                self.i += 1
                condition.append(self.element(allow_aggregate=False))
                while self.at(","):
                    self.i += 1
                    condition.append(self.element(allow_aggregate=False))
            elements.append(AggregateElement(tuple(terms), tuple(condition)))
            if not self.at(";"):
                break
            self.i += 1
        self.expect("}", "';' or '}' in the aggregate")
        return tuple(elements)

    def atom(self) -> Atom:
        tok = self.next("an atom")
        if tok.kind != "name":
            hint = None
            if tok.kind == "var":
                hint = "predicate names start with a lower-case letter"
            raise self.error(f"expected an atom, found '{tok.text}'", tok.pos, hint)
        if tok.text == "not":
            raise self.error("'not' cannot be used as a predicate name", tok.pos, "rename the predicate")
        args: list[Term] = []
        if self.at("("):
            self.i += 1
            if self.at(")"):
                raise self.error(
                    f"empty argument list for '{tok.text}'",
                    self.peek().pos,  # type: ignore[union-attr]
                    f"write the 0-ary atom without parentheses: {tok.text}",
                )
            args.append(self.term())
            while self.at(","):
                self.i += 1
                args.append(self.term())
            self.expect(")", "',' or ')' in the argument list")
        return Atom(tok.text, tuple(args), self.loc(tok.pos))

    def term(self) -> Term:
        """A term: a constant or variable, arithmetic over them, or an interval ``a..b``."""
        low = self.sum_term()
        if self.at(".."):
            self.i += 1
            return Interval(low, self.sum_term())
        return low

    def sum_term(self) -> Term:
        term = self.product_term()
        while self.at("+") or self.at("-"):
            op = self.next("an operator").text
            term = BinOp(op, term, self.product_term())
        return term

    def product_term(self) -> Term:
        term = self.power_term()
        while self.at("*") or self.at("/") or self.at("\\"):
            op = self.next("an operator").text
            term = BinOp(op, term, self.power_term())
        return term

    def power_term(self) -> Term:
        base = self.unary_term()
        if self.at("**"):
            self.i += 1
            return BinOp("**", base, self.power_term())
        return base

    def unary_term(self) -> Term:
        tok = self.peek()
        if tok is not None and tok.text in ("-", "|", "("):
            # Each level is a Python call: refuse a nesting no program needs before the stack ends.
            if self.depth >= MAX_NESTING:
                raise self.error(f"terms nested more than {MAX_NESTING} deep", tok.pos, "write the expression with fewer parentheses, signs or |...|")
            self.depth += 1
            try:
                return self._nested_term(tok)
            finally:
                self.depth -= 1
        return self.simple_term()

    def _nested_term(self, tok: Token) -> Term:
        if tok.text == "-":
            self.i += 1
            arg = self.unary_term()
            # A negative number is a constant, as it always was: -3 is the integer -3.
            return -arg if type(arg) is int else UnaryOp("-", arg)
        if tok.text == "|":
            self.i += 1
            arg = self.term()
            self.expect("|", "'|' closing the absolute value")
            return UnaryOp("|", arg)
        self.i += 1
        inner = self.term()
        self.expect(")", "')' closing the parenthesis")
        return inner

    def simple_term(self) -> Term:
        tok = self.next("a term")
        if tok.kind == "var":
            return Var(tok.text)
        if tok.kind == "int":
            return int(tok.text)
        if tok.kind == "name":
            if self.at("("):
                raise self.error(
                    f"function terms like {tok.text}(...) are not Datalog",
                    tok.pos,
                    "arguments are variables, integers, names, quoted strings or arithmetic over them",
                )
            return tok.text
        if tok.kind == "string":
            return _unescape(tok.text[1:-1])
        raise self.error(
            f"expected a term, found '{tok.text}'",
            tok.pos,
            "a term is a Variable, an integer, a lower-case name, a \"quoted string\" or arithmetic over them",
        )


_AGGREGATES = tuple(f"#{f}" for f in AGGREGATE_FUNCTIONS)
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _normalize_op(tok: Token, parser: _Parser) -> str:
    op = {"<>": "!=", "==": "="}.get(tok.text, tok.text)
    if op not in COMPARISON_OPS:
        raise parser.error(f"unknown comparison operator '{tok.text}'", tok.pos)
    return op


def _hint_for(expected: str) -> str | None:
    if expected.startswith("'.'"):
        return "every rule, fact and constraint ends with a period"
    return None


def parse_statements(text: str, source: str = "<string>") -> list[Statement]:
    """Parse text into statements in order; raise NablogSyntaxError with location and hint."""
    return _Parser(Source(source, text)).program()


def parse_atom(text: str, source: str = "<query>") -> Atom:
    """Parse one atom, optionally followed by a period.

    >>> parse_atom("p(X, 1)")
    Atom(pred='p', args=(Var(name='X'), 1))
    """
    parser = _Parser(Source(source, text))
    if parser.peek() is None:
        raise NablogSyntaxError("empty atom", None, "write an atom such as p(X, 1)")
    atom = parser.atom()
    if parser.at("."):
        parser.i += 1
    tok = parser.peek()
    if tok is not None:
        raise parser.error(f"unexpected '{tok.text}' after the atom", tok.pos, "give one atom, e.g. p(X, 1)")
    return atom


def parse_term(text: str) -> Term:
    parser = _Parser(Source("<term>", text))
    term = parser.term()
    if parser.peek() is not None:
        raise parser.error("unexpected text after the term", parser.peek().pos)  # type: ignore[union-attr]
    return term
