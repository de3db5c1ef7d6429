"""Every user mistake gives one clear message: file, line, column, the line with a caret, a hint."""

import pytest

from nablog import Database
from nablog.lang import NablogError, analyze, parse, parse_files


def error_of(text: str, source: str = "prog.lp", **options) -> str:
    with pytest.raises(NablogError) as info:
        Database(parse(text, source), **options)
    return str(info.value)


def test_syntax_error_missing_period():
    assert error_of("p(X) :- q(X)\nq(1).") == (
        "error: expected '.' at the end of the rule, found 'q'\n"
        "  --> prog.lp:2:1\n"
        "   |\n"
        " 2 | q(1).\n"
        "   | ^\n"
        "hint: separate body literals with ','"
    )


def test_syntax_error_unexpected_character():
    assert error_of("p(1).\np(X) :- q(X) & r(X).") == (
        "error: unexpected character '&'\n"
        "  --> prog.lp:2:14\n"
        "   |\n"
        " 2 | p(X) :- q(X) & r(X).\n"
        "   |              ^\n"
        "hint: names start with a lower-case letter, variables with an upper-case letter or _"
    )


def test_syntax_error_unterminated_string():
    assert error_of('p("abc).') == (
        "error: unterminated string\n"
        "  --> prog.lp:1:3\n"
        "   |\n"
        ' 1 | p("abc).\n'
        "   |   ^\n"
        'hint: close the string with " on the same line'
    )


def test_unknown_directive():
    assert error_of("#show p/1.") == (
        "error: unknown directive #show\n"
        "  --> prog.lp:1:1\n"
        "   |\n"
        " 1 | #show p/1.\n"
        "   | ^\n"
        "hint: nablog knows #base, #columns, #constraint, #fd, #fk, #key, #null, #protect, #require, #trusted"
    )


def test_unsafe_head_variable():
    assert error_of("q(1).\np(X, Y) :- q(X).") == (
        "error: unsafe rule: variable Y in the head does not occur in a positive body literal\n"
        "  --> prog.lp:2:6\n"
        "   |\n"
        " 2 | p(X, Y) :- q(X).\n"
        "   |      ^\n"
        "hint: bind Y with a positive literal in the body, or write a constant instead"
    )


def test_unsafe_negated_literal():
    # Y occurs in two negated literals, so it is local to neither: unsafe.
    assert error_of("q(1). r(1).\np(X) :- q(X), not r(Y), not s(Y).") == (
        "error: unsafe rule: variable Y in 'not r(Y)' does not occur in a positive body literal\n"
        "  --> prog.lp:2:21\n"
        "   |\n"
        " 2 | p(X) :- q(X), not r(Y), not s(Y).\n"
        "   |                     ^\n"
        "hint: bind Y with a positive literal, or write _ if any value will do"
    )


def test_unsafe_comparison_in_a_constraint():
    assert error_of("q(1).\n:- q(X), X < Y.") == (
        "error: unsafe constraint: variable Y in the comparison 'X < Y' does not occur in a positive body literal\n"
        "  --> prog.lp:2:14\n"
        "   |\n"
        " 2 | :- q(X), X < Y.\n"
        "   |              ^\n"
        "hint: bind Y with a positive literal before comparing it"
    )


def test_unstratifiable_program_prints_the_cycle():
    assert error_of("e(1).\nwin(X) :- move(X, Y), not win(Y).\nmove(X, Y) :- e(X), e(Y).") == (
        "error: recursion through negation: win -> not win  (-> reads 'depends on')\n"
        "  --> prog.lp:2:27\n"
        "   |\n"
        " 2 | win(X) :- move(X, Y), not win(Y).\n"
        "   |                           ^\n"
        "hint: the program is not stratifiable; break the cycle so that no predicate depends negatively on itself"
    )


def test_unstratifiable_cycle_through_several_predicates():
    message = error_of("c(1).\na :- not b.\nb :- c(X), d.\nd :- a.")
    assert message.splitlines()[0] == "error: recursion through negation: a -> not b -> d -> a  (-> reads 'depends on')"


def test_arity_clash():
    assert error_of("e(1, 2).\np(X) :- e(X, Y).\nq(X) :- p(X, X).") == (
        "error: predicate p is used with 2 arguments here but with 1 argument at prog.lp:2:1\n"
        "  --> prog.lp:3:9\n"
        "   |\n"
        " 3 | q(X) :- p(X, X).\n"
        "   |         ^\n"
        "hint: a predicate has one arity throughout the program; rename one of the two"
    )


def test_undefined_predicate_is_an_empty_relation_with_a_located_warning():
    db = Database(parse("edge(1, 2).\npath(X, Y) :- reach(X, Y).\nq(X) :- edge(X, _), not reach(X, X), not b0(X).", "prog.lp"))
    assert db.query("path(X, Y)") == [] and db.query("q(X)") == [(1,)]
    assert [str(w) for w in db.warnings] == [
        "warning: predicate reach/2 has no rules, no facts and no #base declaration: it is read as an empty relation\n"
        "  --> prog.lp:2:15\n"
        "   |\n"
        " 2 | path(X, Y) :- reach(X, Y).\n"
        "   |               ^\n"
        "hint: declare it with '#base reach/2.' if it is a base relation without facts yet",
        "warning: predicate b0/1 has no rules, no facts and no #base declaration: it is read as an empty relation\n"
        "  --> prog.lp:3:42\n"
        "   |\n"
        " 3 | q(X) :- edge(X, _), not reach(X, X), not b0(X).\n"
        "   |                                          ^\n"
        "hint: declare it with '#base b0/1.' if it is a base relation without facts yet",
    ]
    assert Database(parse("#base egde/2. edge(1, 2). path(X, Y) :- egde(X, Y).")).warnings == []


def test_undefined_predicate_is_an_error_when_strict():
    assert error_of("edge(1, 2).\npath(X, Y) :- reach(X, Y).", strict=True) == (
        "error: predicate reach/2 has no rules, no facts and no #base declaration\n"
        "  --> prog.lp:2:15\n"
        "   |\n"
        " 2 | path(X, Y) :- reach(X, Y).\n"
        "   |               ^\n"
        "hint: declare it with '#base reach/2.' if it is a base relation without facts yet"
    )


def test_a_misspelt_body_predicate_is_an_error_naming_the_defined_one():
    # Issue 32: read as an empty relation it made the rules answer nothing and the constraints
    # hold vacuously, with only a warning and exit status 0.
    assert error_of("edge(1, 2).\npath(X, Y) :- egde(X, Y).") == (
        "error: predicate egde/2 has no rules, no facts and no #base declaration\n"
        "  --> prog.lp:2:15\n"
        "   |\n"
        " 2 | path(X, Y) :- egde(X, Y).\n"
        "   |               ^\n"
        "hint: did you mean edge? (or declare it with '#base egde/2.' if it is a base relation without facts yet)"
    )
    assert Database(parse("#base egde/2. edge(1, 2). path(X, Y) :- egde(X, Y).")).warnings == []


def test_arity_clash_between_facts_is_located():
    assert error_of("p(1).\np(1, 2).") == (
        "error: predicate p is used with 2 arguments here but with 1 argument at prog.lp:1:1\n"
        "  --> prog.lp:2:1\n"
        "   |\n"
        " 2 | p(1, 2).\n"
        "   | ^\n"
        "hint: a predicate has one arity throughout the program; rename one of the two"
    )


def test_undefined_predicate_can_be_declared_base():
    db = Database(parse("#base b/0.\np :- b."))
    assert db.query("p") == []


def test_unknown_predicate_in_a_query():
    db = Database(parse("edge(1, 2). path(X, Y) :- edge(X, Y)."))
    with pytest.raises(NablogError) as info:
        db.query("pth(X, Y)")
    assert str(info.value) == (
        "error: unknown predicate pth/2 in the query\n"
        "  --> <query>:1:1\n"
        "   |\n"
        " 1 | pth(X, Y)\n"
        "   | ^\n"
        "hint: did you mean path?"
    )


def test_query_with_the_wrong_arity():
    db = Database(parse("edge(1, 2)."))
    with pytest.raises(NablogError) as info:
        db.query("edge(X)")
    assert str(info.value).splitlines()[0] == "error: predicate edge has arity 2, but the query gives 1 argument"


def test_unreadable_program_file(tmp_path):
    with pytest.raises(NablogError) as info:
        parse_files([tmp_path / "missing.lp"])
    assert str(info.value) == f"error: cannot read {tmp_path / 'missing.lp'}: no such file\n  --> {tmp_path / 'missing.lp'}\nhint: check the path"


def test_disjunctive_heads_are_rejected_in_a_database():
    with pytest.raises(NablogError) as info:
        analyze(parse("a ; b :- c.", "prog.lp"))
    assert str(info.value).splitlines()[0] == "error: disjunctive heads are not allowed in a database program"
