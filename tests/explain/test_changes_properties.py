"""Why this realization, checked against a naive evaluator on generated databases: every change of
every brute-force realization is needed, for the reason the explanation gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from nablog import Database
from nablog.lang import Atom, BaseDeclaration, Delta, parse_atom
from tests.solver.test_bruteforce import BASE, brute_force, databases, instances, naive_model
from tests.strategies import examples


def state(facts, insert, delete):
    new = {p: set(rows) for p, rows in facts.items()}
    for a in insert:
        new.setdefault(a.pred, set()).add(tuple(a.args))
    for a in delete:
        new.get(a.pred, set()).discard(tuple(a.args))
    return new


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases())
def test_every_change_is_needed_for_the_reason_given(case):
    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    request = Delta(frozenset([atom]) if sign == "+" else frozenset(), frozenset([atom]) if sign == "-" else frozenset())
    for inserted, deleted in sorted(brute_force(program, facts, (sign, atom)), key=str)[:4]:
        insert, delete = [parse_atom(a) for a in sorted(inserted)], [parse_atom(a) for a in sorted(deleted)]

        class Chosen:  # a realization as the brute force found it
            pass

        chosen = Chosen()
        chosen.insert, chosen.delete = insert, delete
        why = db.why_realization(request, chosen)
        assert [n.change for n in why.needs] == [f"+{a}" for a in insert] + [f"-{a}" for a in delete]
        for need in why.needs:
            rest_insert = [a for a in insert if f"+{a}" != need.change]
            rest_delete = [a for a in delete if f"-{a}" != need.change]
            model = naive_model(program, state(facts, rest_insert, rest_delete))
            fails = (tuple(atom.args) in model.get(atom.pred, ())) != (sign == "+")
            violated = {i for i, d in enumerate(program.denials) if any(True for _ in instances(d.body, model))}
            assert bool(need.request_fails) == fails
            if not fails:
                assert violated and len(need.violations) == len(violated)
        after = naive_model(program, state(facts, insert, delete))
        for change, proof in why.requested:
            if change.startswith("+"):
                assert proof.holds and all(tuple(n.atom.args) in after.get(n.atom.pred, ()) for n in proof.proof.nodes())
        for change, proof in why.side_effects:
            effect = parse_atom(change[1:])
            assert (tuple(effect.args) in after.get(effect.pred, ())) == change.startswith("+")
        judged = db.judge_changes(request, Delta(frozenset(insert), frozenset(delete)))
        assert judged.outcome.realizes and judged.smaller is None
