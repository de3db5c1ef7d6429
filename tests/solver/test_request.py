"""Requests: parsing, validation errors with locations, and the stop conditions of the search."""

import pytest

from nablog import Database, NablogError
from nablog.solver import parse_request

CHAIRS = """
staff_chair(X,Y) :- staff_group(X,Z), group_chair(Z,Y).
group_chair(infor1,matthias). group_chair(infor2,gerhard).
staff_group(delhibabu,infor1). staff_group(aravindan,infor1).
"""


def error(text: str, db: Database | None = None) -> str:
    with pytest.raises(NablogError) as info:
        if db is None:
            parse_request(text)
        else:
            db.propose(text)
    return str(info.value)


def test_requests_parse_several_signed_atoms():
    request = parse_request('+p(1, "a b"). -q(a).  +r.')
    assert str(request) == '+p(1, "a b"). +r. -q(a).'


def test_a_non_ground_request_is_an_error():
    assert error("+p(1). -q(X).") == (
        "error: the request atom q(X) is not ground: X has no value\n"
        "  --> <request>:1:9\n"
        "   |\n"
        " 1 | +p(1). -q(X).\n"
        "   |         ^\n"
        "hint: a request names ground facts; query first to find the values, e.g. nablog query FILES 'p(X)'"
    )


def test_a_missing_sign_is_an_error():
    assert error("p(1).").splitlines()[0] == "error: expected '+' or '-' before a request atom, found 'p'"


def test_inserting_and_deleting_the_same_atom_is_an_error():
    assert error("+p(1). -p(1).").splitlines()[0] == "error: the request both inserts and deletes p(1)"


def test_an_unknown_predicate_is_an_error_with_a_suggestion():
    message = error("+staff_char(a, b).", Database.from_text(CHAIRS))
    assert message.splitlines()[0] == "error: unknown predicate staff_char/2 in the request"
    assert message.splitlines()[-1] == "hint: did you mean staff_chair?"


def test_an_ill_typed_request_is_an_error():
    message = error("+staff_chair(a).", Database.from_text(CHAIRS))
    assert message.splitlines()[0] == "error: predicate staff_chair has arity 2, but the request gives 1 argument"


def test_a_time_budget_stops_the_search_with_status_timeout():
    proposal = Database.from_text(CHAIRS).propose("+staff_chair(aravindan, gerhard).", timeout=1e-9)
    assert proposal.status == "timeout"
    assert proposal.message.startswith("no realization found before the timeout")


@pytest.mark.parametrize("timeout", [0, -5, float("inf"), float("nan"), True])
def test_a_timeout_that_is_no_time_budget_is_refused(timeout):
    with pytest.raises(NablogError, match="timeout must be a finite number of seconds above 0"):
        Database.from_text(CHAIRS).propose("+staff_chair(aravindan, gerhard).", timeout=timeout)


@pytest.mark.parametrize("limit", [0, -1, 2.5])
def test_a_limit_below_one_is_refused(limit):
    with pytest.raises(NablogError, match="limit must be a whole number of at least 1"):
        Database.from_text(CHAIRS).propose("+staff_chair(aravindan, gerhard).", limit=limit)


def test_proposals_serialise_to_json():
    proposal = Database.from_text(CHAIRS).propose("-staff_chair(aravindan, matthias).")
    assert proposal.to_json() == {
        "status": "complete",
        "message": "2 minimal realizations",
        "realizations": [
            {"insert": [], "delete": ["group_chair(infor1, matthias)"], "side_effects": {"insert": [], "delete": ["staff_chair(delhibabu, matthias)"]}, "fresh": []},
            {"insert": [], "delete": ["staff_group(aravindan, infor1)"], "side_effects": {"insert": [], "delete": []}, "fresh": []},
        ],
    }
