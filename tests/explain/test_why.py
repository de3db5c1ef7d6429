"""Why and why not: exact proofs, the JSON contract, depth cuts, every derivation, aggregates, pictures, the command and every engine."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nablog.cli import main
from nablog.database import Database
from nablog.lang import QueryError

CHAIRS = str(Path(__file__).resolve().parents[2] / "nablog" / "examples" / "chairs.lp")

CLOSURE = """\
tc(X, Y) :- e(X, Y).
tc(X, Y) :- e(X, Z), tc(Z, Y).
e(a, b). e(b, c). e(c, d). e(a, d).
"""

STAFF = """\
dept(d1). dept(d2). works(ann, d1). works(bob, d1). works(cy, d2).
salary(ann, 10). salary(bob, 20). salary(cy, 5).
n(D, N) :- dept(D), N = #count{E : works(E, D)}.
big(D) :- n(D, N), N >= 2, not small(D).
small(D) :- dept(D), 10 > #sum{S, E : works(E, D), salary(E, S)}.
fib(0, 0). fib(1, 1).
fib(N+1, X+Y) :- fib(N, X), fib(N-1, Y), N < 10.
r(X) :- works(X, D), not s(X, P, P).
s(a, 1, 2).
"""


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_proof_has_least_height_and_the_other_derivation_is_listed():
    why = Database.from_text(CLOSURE).why("tc(a, d)", all=True)
    assert why.holds and why.proof.height == 1
    assert why.text() == (
        "tc(a, d)  <string>:1  tc(a, d) :- e(a, d).\n"
        "└─ e(a, d)  fact\n"
        "other derivations (1):\n"
        "tc(a, d)  <string>:2  tc(a, d) :- e(a, b), tc(b, d).\n"
        "├─ e(a, b)  fact\n"
        "└─ tc(b, d)  <string>:2  tc(b, d) :- e(b, c), tc(c, d).\n"
        "   ├─ e(b, c)  fact\n"
        "   └─ tc(c, d)  <string>:1  tc(c, d) :- e(c, d).\n"
        "      └─ e(c, d)  fact"
    )
    assert [n.height for n in why.alternatives] == [1, 3]


def test_the_json_contract():
    got = Database.from_text(CLOSURE).why("tc(b, d)").to_json()
    fact = lambda a: {"atom": a, "rule": None, "instance": f"{a}.", "children": [], "absent": [], "height": 0}  # noqa: E731
    assert got == {
        "atom": "tc(b, d)",
        "holds": True,
        "proof": {
            "atom": "tc(b, d)",
            "rule": "<string>:2",
            "instance": "tc(b, d) :- e(b, c), tc(c, d).",
            "children": [
                fact("e(b, c)"),
                {"atom": "tc(c, d)", "rule": "<string>:1", "instance": "tc(c, d) :- e(c, d).", "children": [fact("e(c, d)")], "absent": [], "height": 1},
            ],
            "absent": [],
            "height": 2,
        },
    }


def test_why_not_names_the_missing_facts_per_rule():
    got = Database.from_text(CLOSURE).why("tc(d, a)").to_json()
    assert got == {
        "atom": "tc(d, a)",
        "holds": False,
        "why_not": [
            {"rule": "<string>:1", "instance": "tc(d, a) :- e(d, a).", "fails": [{"literal": "e(d, a)", "reason": "missing", "instance": "tc(d, a) :- e(d, a).", "why_not": []}]},
            {"rule": "<string>:2", "instance": "tc(d, a) :- e(d, Z), tc(Z, a).", "fails": [{"literal": "e(d, Z)", "reason": "missing", "instance": "tc(d, a) :- e(d, Z), tc(Z, a).", "why_not": []}]},
        ],
    }


def test_why_not_goes_down_through_missing_views():
    why = Database.from_text("p(X) :- q(X), t(X). t(X) :- u(X, Y), not v(Y). q(1). u(1, 2). v(2).").why("p(1)")
    assert why.text() == (
        "p(1) does not hold\n"
        "rule <string>:1  p(1) :- q(1), t(1).\n"
        "└─ t(1)  missing\n"
        "     rule <string>:1  t(1) :- u(1, 2), not v(2).\n"
        "     └─ not v(2)  present"
    )
    shallow = Database.from_text("p(X) :- q(X), t(X). t(X) :- u(X, Y), not v(Y). q(1). u(1, 2). v(2).").why("p(1)", depth=1)
    assert shallow.to_json()["why_not"][0]["fails"] == [{"literal": "t(1)", "reason": "missing", "instance": "p(1) :- q(1), t(1).", "why_not": [], "cut": True}]


def test_depth_cuts_and_says_how_to_expand():
    why = Database.from_text(CLOSURE).why("tc(b, d)", depth=1)
    assert why.text("nablog why g.lp") == (
        "tc(b, d)  <string>:2  tc(b, d) :- e(b, c), tc(c, d).\n"
        "├─ e(b, c)  fact\n"
        "└─ tc(c, d)  <string>:1  tc(c, d) :- e(c, d).  … nablog why g.lp 'tc(c, d)'\n"
        "(cut at depth 1: expand a subproof with nablog why g.lp 'ATOM', or give a larger --depth)"
    )
    assert why.to_json()["proof"]["children"][1]["cut"] is True and why.to_json()["proof"]["children"][1]["children"] == []


def test_aggregates_negation_and_arithmetic():
    db = Database.from_text(STAFF)
    assert db.why("big(d1)").text() == (
        "big(d1)  <string>:4  big(d1) :- n(d1, 2), 2 >= 2, not small(d1).\n"
        "├─ n(d1, 2)  <string>:3  n(d1, 2) :- dept(d1), 2 = #count{E : works(E, d1)}.\n"
        "│  ├─ dept(d1)  fact\n"
        "│  └─ 2 = #count{E : works(E, d1)}  over 2 elements: ann, bob\n"
        "└─ not small(d1)  absent"
    )
    assert db.why("small(d2)").to_json()["proof"]["aggregates"] == [
        {"literal": "10 > #sum{S, E : works(E, d2), salary(E, S)}", "value": 5, "count": 1, "elements": [{"terms": [5, "cy"], "atoms": ["works(cy, d2)", "salary(cy, 5)"]}]}
    ]
    fib = db.why("fib(4, 3)")
    assert fib.proof.instance == "fib(4, 3) :- fib(3, 2), fib(2, 1), 3 < 10." and fib.proof.height == 3
    assert str(db.why("r(ann)").proof.absent[0]) == "s(ann, P, P)"
    assert db.why("n(d1, 3)").to_json()["why_not"][0]["fails"][0]["reason"] == "false: the aggregate is 2"


def test_an_aggregate_lists_its_first_elements_and_counts_the_rest():
    facts = " ".join(f"w({i})." for i in range(25))
    proof = Database.from_text(f"n(N) :- N = #count{{X : w(X)}}. {facts}").why("n(25)").proof
    assert proof.aggregates[0].count == 25 and len(proof.aggregates[0].elements) == 10
    assert proof.aggregates[0].summary() == "25 = #count{X : w(X)}  over 25 elements: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 15 more"


def test_stored_facts_of_a_view_are_leaves():
    why = Database.from_text("p(X) :- q(X). p(7). q(1).").why("p(7)")
    assert why.proof.rule is None and why.text() == "p(7)  fact"


def test_bad_atoms_are_refused_with_a_hint():
    db = Database.from_text(CLOSURE)
    with pytest.raises(QueryError, match="not ground"):
        db.why("tc(a, X)")
    with pytest.raises(QueryError, match="did you mean tc"):
        db.why("tcc(a, b)")
    with pytest.raises(QueryError, match="has arity 2"):
        db.why("tc(a)")


def test_a_deep_proof_needs_no_deep_recursion():
    chain = " ".join(f"e({i}, {i + 1})." for i in range(1500))
    why = Database.from_text("r(Y) :- e(0, Y). r(Y) :- r(X), e(X, Y). " + chain).why("r(1500)")
    assert why.proof.height == 1500 and sum(1 for _ in why.proof.nodes()) == 3000


def test_the_command_prints_text_json_and_pictures(capsys, tmp_path):
    status, out, err = run(capsys, "why", CHAIRS, "staff_chair(aravindan, matthias)")
    assert status == 0 and out == (
        "staff_chair(aravindan, matthias)  " + CHAIRS + ":5  staff_chair(aravindan, matthias) :- staff_group(aravindan, infor1), group_chair(infor1, matthias).\n"
        "├─ staff_group(aravindan, infor1)  fact\n"
        "└─ group_chair(infor1, matthias)  fact\n"
    )
    status, out, _ = run(capsys, "why", CHAIRS, "staff_chair(aravindan, gerhard)", "--json")
    assert json.loads(out)["why_not"][0]["fails"][0]["literal"] == "group_chair(infor1, gerhard)"
    svg = tmp_path / "why.svg"
    status, out, err = run(capsys, "why", CHAIRS, "staff_chair(aravindan, matthias)", "--svg", str(svg))
    assert status == 0 and f"wrote the picture to {svg}" in err
    root = ET.fromstring(svg.read_text())
    groups = root.findall("{http://www.w3.org/2000/svg}g")
    assert [g.get("id") for g in groups] == ["why-n0", "why-n1", "why-n2"]
    assert [g.get("class") for g in groups] == ["why-node derived", "why-node fact", "why-node fact"]
    assert groups[0].get("data-atom") == "staff_chair(aravindan, matthias)" and groups[2].get("data-atom") == "group_chair(infor1, matthias)"
    status, out, _ = run(capsys, "why", CHAIRS, "staff_chair(aravindan, matthias)", "--dot", "-")
    assert out.startswith("digraph why {") and "n1 -> n0;" in out and "n2 -> n0;" in out


def test_fix_proposes_the_smallest_realizations(capsys):
    status, out, _ = run(capsys, "why", CHAIRS, "staff_chair(aravindan, gerhard)", "--fix", "--json")
    got = json.loads(out)
    assert got["holds"] is False
    assert [r["insert"] + r["delete"] for r in got["fix"]["realizations"]][0] == ["staff_group(aravindan, infor2)"]


def test_errors_name_the_atom(capsys):
    status, _, err = run(capsys, "why", CHAIRS)
    assert status == 2 and "no atom given" in err


@pytest.mark.parametrize("engine", ["python", "clingo"])
def test_every_engine_gives_the_same_explanations(engine):
    db = Database.from_text(STAFF + CLOSURE, engine=engine)
    reference = Database.from_text(STAFF + CLOSURE)
    for atom in ("big(d1)", "small(d2)", "fib(6, 8)", "tc(a, d)", "tc(d, a)", "r(bob)", "big(d2)"):
        assert db.why(atom, all=True).to_json() == reference.why(atom, all=True).to_json()


def test_the_spark_engine_gives_the_same_explanations(spark_engine):
    # Not recursive: each Spark round costs seconds on a loaded machine.
    text = "e(a, b). e(b, c). e(c, d). f(c). p(X, Y) :- e(X, Y), not f(Y). q(X) :- p(X, Y), e(Y, Z)."
    db, reference = Database.from_text(text, engine=spark_engine), Database.from_text(text)
    for atom in ("p(a, b)", "p(b, c)", "q(a)", "q(c)"):
        assert db.why(atom, all=True).to_json() == reference.why(atom, all=True).to_json()
