"""The main job's walk does each step once: a request is parsed once from argv to the solver and
the write, `apply --pick N` searches for the N smallest realizations only, and a commit reads each
store once."""

import pytest

import nablog.lang.delta as delta_module
from nablog import Database
from nablog.cli import main
from nablog.engines import PythonEngine
from nablog.io.factsfile import FactsFile
from nablog.state import State
from tests.test_apply import REQUEST, chairs  # noqa: F401  (the chairs example copied to a temporary directory)
import nablog.solver


@pytest.fixture
def counted(monkeypatch):
    """Calls of the request parser (by text) and of a facts file's load, counted."""
    parses: list[str] = []
    loads: list[tuple] = []
    parse, load = delta_module._parse, FactsFile.load

    def counting_parse(text, source):
        parses.append(text)
        return parse(text, source)

    def counting_load(self, *args, **kwargs):
        loads.append(args)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(delta_module, "_parse", counting_parse)
    monkeypatch.setattr(FactsFile, "load", counting_load)
    return parses, loads


def test_apply_parses_the_request_once_and_reads_the_store_once_per_commit(chairs, counted, capsys):
    parses, loads = counted
    db_loads_before_commit = []

    real_commit = State.commit

    def commit(self, delta, request):
        db_loads_before_commit.append(len(loads))
        return real_commit(self, delta, request)

    State.commit = commit
    try:
        assert main(["apply", str(chairs), REQUEST, "--pick", "1"]) == 0
    finally:
        State.commit = real_commit
    assert "+staff_group(aravindan, infor2)" in capsys.readouterr().out
    assert parses == [REQUEST]
    # Opening the database reads the file once; the commit reads it once more (for the real
    # changes, and stages from what it read), not twice.
    assert len(db_loads_before_commit) == 1
    assert len(loads) - db_loads_before_commit[0] == 1


def test_apply_pick_searches_for_the_picked_number_of_realizations(chairs, monkeypatch, capsys):
    limits = []
    real = nablog.solver.propose

    def spy(*args, **kwargs):
        limits.append(kwargs.get("limit"))
        return real(*args, **kwargs)

    monkeypatch.setattr(nablog.solver, "propose", spy)  # what Database.propose calls
    assert main(["apply", str(chairs), REQUEST, "--pick", "2"]) == 0
    assert limits == [2]
    # The second smallest of the whole proposal (seed 003, Example 1's (b) has three changes,
    # (a) one, (c) three: sorted by size then atoms, realization 2 is (b)) is what was applied.
    out = capsys.readouterr().out
    assert "+group_chair(infor1, gerhard)" in out and "-group_chair(infor1, matthias)" in out


def test_apply_pick_past_the_proposal_names_the_whole_proposal(chairs, capsys):
    # the search for 7 finds all 3 (status complete), so the message counts the whole proposal
    assert main(["apply", str(chairs), REQUEST, "--pick", "7"]) != 0
    assert capsys.readouterr().err == "error: --pick 7 is out of range: the proposal has 3 realizations\nhint: pick a number from 1 to 3\n"


def test_apply_of_a_proposed_realization_checks_the_request_it_was_proposed_for(chairs, counted):
    parses, _ = counted
    db = Database.from_files(chairs)
    proposal = db.propose(REQUEST)
    assert all(r.request is proposal.request for r in proposal)
    db.apply(proposal[0], request=REQUEST)
    assert parses == [REQUEST]


def test_a_commit_computes_its_induced_update_once(chairs, monkeypatch):
    # The constraint check (the chairs' one_chair) and the commit share one incremental update of
    # the model: 1 pass, not 2. Its answer is the induced update a fresh evaluation gives.
    db = Database.from_files(chairs)
    before = db.model()
    passes = []
    update = PythonEngine.update

    def counting(self, *args, **kwargs):
        passes.append(1)
        return update(self, *args, **kwargs)

    monkeypatch.setattr(PythonEngine, "update", counting)
    _, induced = db.commit(["staff_group(aravindan, infor2)"], ["staff_group(aravindan, infor1)"])
    assert len(passes) == 1
    after = PythonEngine().evaluate(db.rules, db.facts)
    assert sorted(induced.lines()) == sorted(
        [f"+{p}({', '.join(map(str, r))})" for p in after for r in set(after[p]) - set(before.get(p, ()))]
        + [f"-{p}({', '.join(map(str, r))})" for p in before for r in set(before[p]) - set(after.get(p, ()))]
    )
