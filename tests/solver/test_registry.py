"""View-update methods are a registry over one prepared problem, and their options one checked value."""

import dataclasses

import pytest

from nablog import Database, NablogError
from nablog.solver import METHODS, ProposeOptions
from nablog.solver.propose import _METHODS, ViewUpdate


def test_every_method_named_in_the_options_is_registered_and_only_those():
    assert sorted(_METHODS) == sorted(METHODS)


def test_options_are_checked_when_made_with_the_messages_propose_gave():
    with pytest.raises(NablogError, match=r"unknown view-update method 'magic'"):
        ProposeOptions(method="magic")
    with pytest.raises(NablogError, match=r"unknown candidate policy 'all'"):
        ProposeOptions(candidates="all")
    with pytest.raises(NablogError, match=r"limit must be a whole number of at least 1, not 0"):
        ProposeOptions(limit=0)
    with pytest.raises(NablogError, match=r"timeout must be a finite number of seconds above 0"):
        ProposeOptions(timeout=float("inf"))


def test_one_options_value_answers_as_its_fields_given_one_by_one():
    db = Database.from_text(
        "staff_chair(X, Y) :- staff_group(X, Z), group_chair(Z, Y)."
        " #constraint one_chair :- group_chair(G, X), group_chair(G, Y), X != Y."
        " #constraint one_group :- group_chair(G, X), group_chair(H, X), G != H."
        " group_chair(infor1, matthias). group_chair(infor2, gerhard). staff_group(delhibabu, infor1). staff_group(aravindan, infor1)."
    )
    request = "+staff_chair(aravindan, gerhard)."
    options = ProposeOptions(method="tableaux", limit=2, max_fresh=1)
    by_value = db.propose(request, options)
    by_fields = db.propose(request, method="tableaux", limit=2, max_fresh=1)
    assert [r.changes.lines() for r in by_value] == [r.changes.lines() for r in by_fields]
    assert by_value.status == by_fields.status == "bounded"
    # a field given beside the value replaces the value's
    assert len(db.propose(request, options, limit=3)) == 3


def test_the_prepared_problem_is_frozen():
    assert dataclasses.fields(ViewUpdate)[0].name == "rules"
    assert ViewUpdate.__dataclass_params__.frozen
