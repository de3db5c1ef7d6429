"""Seed 002's Algorithm 1 (method="transform") against the asp method."""

from hypothesis import HealthCheck, given, settings

from tests.strategies import examples

from nablog import Database
from nablog.lang import BaseDeclaration
from nablog.solver import propose

from .test_bruteforce import BASE, databases
from .test_seed_requests import CHAIRS


def changes(proposal):
    return [r.changes.lines() for r in proposal]


def transform(db, request, exhaustive=False, **options):
    return propose(db.rules, db.facts, db.python_model(), request, method="transform", exhaustive=exhaustive, **options)


def test_seed_003_example_1_first_round_only_and_all_rounds():
    db = Database.from_text(CHAIRS)
    request = "+staff_chair(aravindan, gerhard)."
    first = transform(db, request)
    assert (first.status, changes(first)) == ("complete", [["+staff_group(aravindan, infor2)"]])
    assert first.message == "1 minimal realization (Algorithm 1, 1 round)"
    assert changes(transform(db, request, exhaustive=True)) == changes(db.propose(request))


def test_seed_002_examples_agree_with_asp():
    cases = [
        ("""r2(2). s(2). p(X) :- q1(X). p(X) :- q2(X). q1(X) :- r1(X), s(X). q2(X) :- r2(X), not s(X).
            au(X) :- q2(X), not q1(X). ic(2) :- not au(2). #require ic(2). #base r1/1.""", "+p(2).", [["+r1(2)"]]),
        ("p(1). h(X) :- p(X), q(X), i. i :- p(X), not q(X). #base q/1.", "+h(1).", [["+p(new1)", "+q(1)"]]),
        ("p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a. #base b/0. a. e. f. :- b.", "-p.", [["-a"]]),
    ]
    for text, request, expected in cases:
        db = Database.from_text(text)
        assert changes(transform(db, request)) == expected
        assert changes(db.propose(request, method="transform")) == expected


def test_seed_002_section_5_ends_bounded():
    db = Database.from_text(
        """h :- e(X, Y), not i. i :- e(Y, X), e(Z, X), not eq(Y, Z). i :- e(X, Y), not j(X).
        i :- e(X, Y), not j(Y). j(X) :- e(X, Y), e(X, Z), not eq(Y, Z). eq(X, X) :- e(X, Y).
        eq(Y, Y) :- e(X, Y). #base e/2."""
    )
    proposal = transform(db, "+h.", exhaustive=True)
    assert (proposal.status, list(proposal)) == ("bounded", [])


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases())
def test_algorithm_1_finds_a_subset_of_asp_and_all_of_it_when_exhaustive(case):
    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    request = f"{sign}{atom}."
    asp = {tuple(r.changes.lines()) for r in db.propose(request, candidates="herbrand", max_fresh=1)}
    first = {tuple(r.changes.lines()) for r in transform(db, request, candidates="herbrand", max_fresh=1)}
    assert first <= asp
    everything = transform(db, request, exhaustive=True, candidates="herbrand", max_fresh=1)
    if everything.status == "complete":
        assert {tuple(r.changes.lines()) for r in everything} == asp
