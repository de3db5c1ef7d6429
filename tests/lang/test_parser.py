"""The parser and printer: every node prints back to text that parses to the same node."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples

from nablog.lang import (
    Atom,
    BaseDeclaration,
    ColumnsDeclaration,
    Comparison,
    Denial,
    Dependency,
    Literal,
    NullDeclaration,
    Program,
    Protection,
    Requirement,
    Rule,
    TrustDeclaration,
    Var,
    parse,
    parse_atom,
    parse_files,
    separate_facts,
)

names = st.from_regex(r"[a-z][A-Za-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s != "not")
variables = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,4}", fullmatch=True).map(Var)
strings = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
constants = st.one_of(st.integers(-(10**12), 10**12), strings, names)
terms = st.one_of(variables, constants, st.just(Var("_")))
ground_terms = constants


def atoms(term_strategy=terms):
    return st.builds(lambda p, args: Atom(p, tuple(args)), names, st.lists(term_strategy, max_size=4))


literals = st.builds(Literal, atoms(), st.booleans())
comparisons = st.builds(Comparison, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), terms, terms)
bodies = st.lists(st.one_of(literals, comparisons), min_size=1, max_size=4).map(tuple)
rules = st.builds(lambda head, body: Rule(tuple(head), body), st.lists(atoms(), min_size=1, max_size=3), st.one_of(st.just(()), bodies))
denials = st.builds(Denial, bodies, st.one_of(st.none(), names))
requirements = st.builds(Requirement, atoms(ground_terms))
declarations = st.builds(lambda sigs: BaseDeclaration(tuple(sigs)), st.lists(st.tuples(names, st.integers(0, 5)), min_size=1, max_size=3))
protections = st.builds(
    lambda items: Protection(tuple(items)),
    st.lists(st.one_of(st.tuples(names, st.integers(0, 5)), atoms(ground_terms)), min_size=1, max_size=3),
)
column_names = st.one_of(names, st.from_regex(r"[A-Z][A-Za-z0-9_]{0,5}", fullmatch=True), strings)
column_refs = st.one_of(column_names, st.integers(1, 30))
column_declarations = st.builds(
    lambda p, cols: ColumnsDeclaration(p, tuple(cols)), names, st.lists(column_names, min_size=1, max_size=4, unique=True)
)
column_lists = st.lists(column_refs, min_size=1, max_size=3).map(tuple)
dependencies = st.one_of(
    st.builds(lambda n, r, a, b: Dependency("fd", r, a, b, None, n), st.one_of(st.none(), names), names, column_lists, column_lists),
    st.builds(lambda n, r, a: Dependency("key", r, a, (), None, n), st.one_of(st.none(), names), names, column_lists),
    st.builds(
        lambda n, r, a, t, b: Dependency("fk", r, a, b, t, n), st.one_of(st.none(), names), names, column_lists, names, column_lists
    ),
)
trust_declarations = st.builds(lambda ns: TrustDeclaration(tuple(ns)), st.lists(names, min_size=1, max_size=3))
null_declarations = st.builds(lambda vs: NullDeclaration(tuple(vs)), st.lists(constants, min_size=1, max_size=3))
statements = st.one_of(
    rules, denials, requirements, declarations, protections,
    column_declarations, dependencies, trust_declarations, null_declarations,
)


@settings(max_examples=examples(500))
@given(st.lists(statements, max_size=6))
def test_every_program_prints_to_text_that_parses_to_the_same_program(stmts):
    program = Program(tuple(stmts))
    assert parse(str(program)) == program


@settings(max_examples=examples(300))
@given(atoms())
def test_every_atom_round_trips_through_parse_atom(atom):
    assert parse_atom(str(atom)) == atom


def test_constraint_shorthands_parse_and_compile_to_denials():
    program = parse(
        """
        #columns tax(f_name, zip, city, state).
        #fd tax: zip -> city, state.
        #key people tax: f_name.
        #fk zip_known tax: zip -> zips: 1.
        #base zips/1.
        #null "NULL".
        #trusted people__zip.
        """
    )
    assert [str(s) for s in program.statements[:4]] == [
        "#columns tax(f_name, zip, city, state).",
        "#fd tax: zip -> city, state.",
        "#key people tax: f_name.",
        "#fk zip_known tax: zip -> zips: 1.",
    ]
    assert [str(c) for c in program.constraints] == [
        "#constraint fd_tax__zip__city :- tax(_, K1, V1, _), tax(_, K1, V2, _), V1 < V2.",
        "#constraint fd_tax__zip__state :- tax(_, K1, _, V1), tax(_, K1, _, V2), V1 < V2.",
        "#constraint people__zip :- tax(K1, V1, _, _), tax(K1, V2, _, _), V1 < V2.",
        "#constraint people__city :- tax(K1, _, V1, _), tax(K1, _, V2, _), V1 < V2.",
        "#constraint people__state :- tax(K1, _, _, V1), tax(K1, _, _, V2), V1 < V2.",
        '#constraint zip_known :- tax(_, K1, _, _), K1 != "", K1 != "NULL", not zips(K1).',
    ]
    assert program.trusted == {"people__zip"}
    assert program.signatures["tax"] == 4


def test_bare_identifiers_and_quoted_strings_are_the_same_constant():
    assert parse('p(a, "a").').rules[0].head[0].args == ("a", "a")
    assert str(parse('p("a b", "X", "not", "").').rules[0]) == 'p("a b", "X", "not", "").'


def test_escapes_in_strings():
    rule = parse(r'p("say \"hi\"", "back\\slash", "tab\t", "nl\n").').rules[0]
    assert rule.head[0].args == ('say "hi"', "back\\slash", "tab\t", "nl\n")
    assert parse(str(rule)).rules[0] == rule


def test_statement_kinds_and_directives():
    program = parse(
        """
        % line comment
        e(1, -2).            %* block
                                comment *%
        p(X) :- e(X, Y), not q(Y), X != Y, Y <= 3.
        :- p(X), q(X).
        #constraint no_loop :- e(X, X).
        #require ok.
        #base q/1, r/0.
        zero.
        """
    )
    assert [type(s).__name__ for s in program.statements] == [
        "Rule", "Rule", "Denial", "Denial", "Requirement", "BaseDeclaration", "Rule",
    ]
    assert program.denials[1].name == "no_loop"
    assert program.declared_base == {("q", 1), ("r", 0)}
    assert program.rules[2].head[0] == Atom("zero", ())


def test_clingo_spellings_of_operators_are_accepted():
    rule = parse("p(X) :- q(X, Y), X <> Y, X == 1.").rules[0]
    assert [str(b) for b in rule.body[1:]] == ["X != Y", "X = 1"]


def test_several_files_form_one_program(tmp_path):
    (tmp_path / "rules.lp").write_text("p(X) :- e(X).\n")
    (tmp_path / "facts.dl").write_text("e(1). e(2).\n")
    program = parse_files([tmp_path / "rules.lp", tmp_path / "facts.dl"])
    assert str(program) == "p(X) :- e(X).\ne(1).\ne(2)."
    assert program.rules[1].loc.source.name.endswith("facts.dl")


def test_a_predicate_with_facts_and_rules_is_split_seed_002_section_2_1():
    rules, facts = separate_facts(parse("p(X) :- q(X). p(1). q(2)."))
    assert str(rules) == "p(X) :- q(X).\np(V1) :- base__p(V1)."
    assert facts == {"base__p": {(1,)}, "q": {(2,)}}


def test_locations_do_not_take_part_in_equality():
    assert parse("p(X) :- q(X).", "a.lp") == parse("\n\n  p(X) :- q(X).", "b.lp")
    assert parse("p(X) :- q(X).", "a.lp").rules[0].loc.line == 1


@pytest.mark.parametrize("text", ["p(X) :- q(X), not r(X).", "p :- q.", "a ; b :- c.", ":- p(X), X > 3."])
def test_printing_is_stable(text):
    assert str(parse(text)) == text
