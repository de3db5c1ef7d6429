"""Facts files (.lp, .dl): loading ground facts, write-back that edits only the facts' text."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nablog.io import open_source, rewrite_facts
from nablog.lang import DataError, NablogSyntaxError

from tests.strategies import examples

from .helpers import leftovers

PROGRAM = """\
% Staff and chairs (seed 002, example 1).
#base staff/1.
member(aravindan, infor1).   % the first member
member(gerhard, infor1). member(don, infor2).
%* a block comment
   over two lines *%
staff_chair(X, Y) :- member(X, G), group_chair(G, Y).
group_chair(infor1, gerhard).

:- staff_chair(X, X).
"""


def write_program(tmp_path, text=PROGRAM, name="db.lp"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_load_takes_the_ground_facts_only(tmp_path):
    source = open_source(write_program(tmp_path))
    assert source.relations() == ["group_chair", "member"]
    assert source.load() == {
        "member": {("aravindan", "infor1"), ("gerhard", "infor1"), ("don", "infor2")},
        "group_chair": {("infor1", "gerhard")},
    }
    assert source.load(["member", "staff"]) == {
        "member": {("aravindan", "infor1"), ("gerhard", "infor1"), ("don", "infor2")},
        "staff": set(),
    }


def test_dl_suffix_is_a_facts_file(tmp_path):
    path = write_program(tmp_path, "e(1, 2).\n", "g.dl")
    assert open_source(path).load() == {"e": {(1, 2)}}


def test_write_back_preserves_everything_but_the_changed_facts(tmp_path):
    path = write_program(tmp_path)
    source = open_source(path)
    source.write(
        {
            "member": {("aravindan", "infor1"), ("don", "infor2"), ("sarah", "infor2"), ("Zoë", "New York")},
            "group_chair": {("infor1", "gerhard")},
        }
    )
    assert path.read_text() == """\
% Staff and chairs (seed 002, example 1).
#base staff/1.
member(aravindan, infor1).   % the first member
member(don, infor2).
member("Zoë", "New York").
member(sarah, infor2).
%* a block comment
   over two lines *%
staff_chair(X, Y) :- member(X, G), group_chair(G, Y).
group_chair(infor1, gerhard).

:- staff_chair(X, X).
"""
    assert source.load()["member"] == {
        ("aravindan", "infor1"), ("don", "infor2"), ("sarah", "infor2"), ("Zoë", "New York")
    }


def test_rules_and_comments_survive_byte_for_byte(tmp_path):
    path = write_program(tmp_path)
    open_source(path).write({"member": set(), "group_chair": set(), "new_rel": {(1,), ("x y",)}})
    assert path.read_text() == """\
% Staff and chairs (seed 002, example 1).
#base staff/1.
% the first member
%* a block comment
   over two lines *%
staff_chair(X, Y) :- member(X, G), group_chair(G, Y).

:- staff_chair(X, X).
new_rel(1).
new_rel("x y").
"""
    # Every line that held no fact is still there, unchanged and in order.
    lines = path.read_text().splitlines()
    kept = [line for line in PROGRAM.splitlines() if not line.startswith(("member", "group_chair"))]
    assert [line for line in lines if line in kept] == kept


def test_facts_sharing_a_line(tmp_path):
    text = "a. e(1,2). e(2,3). p(X) :- e(X,_).\ne(3,4). % last\n"
    assert rewrite_facts(text, {"e": {(2, 3)}}) == "a. e(2,3). p(X) :- e(X,_).\n% last\n"
    assert rewrite_facts(text, {"e": set()}) == "a. p(X) :- e(X,_).\n% last\n"
    assert rewrite_facts("e(1,2). e(2,3).\nq.\n", {"e": set()}) == "q.\n"
    assert rewrite_facts("q. e(1,2).\n", {"e": set()}) == "q.\n"


def test_inserted_facts_skip_a_statement_that_continues_on_the_next_line(tmp_path):
    text = "e(1,2). p(X) :-\n    e(X,_).\nq(1).\n"
    assert rewrite_facts(text, {"e": {(1, 2), (5, 6)}}) == "e(1,2). p(X) :-\n    e(X,_).\ne(5, 6).\nq(1).\n"
    block = "e(1,2). %* a comment\nthat goes on *% q(1).\n"
    assert rewrite_facts(block, {"e": {(1, 2), (5, 6)}}) == block + "e(5, 6).\n"


def test_inserted_facts_follow_the_indentation_and_line_ending(tmp_path):
    text = "% data\r\n  e(1, 2).\r\nr :- e(_, _).\r\n"
    assert rewrite_facts(text, {"e": {(1, 2), (0, 1)}}) == "% data\r\n  e(1, 2).\r\n  e(0, 1).\r\nr :- e(_, _).\r\n"


def test_facts_spanning_lines_and_a_file_without_final_newline(tmp_path):
    text = "e(1,\n  2).\nq."
    assert rewrite_facts(text, {"e": set()}) == "q."
    assert rewrite_facts(text, {"q": set(), "r": {(1,)}}) == "e(1,\n  2).\nr(1).\n"
    assert rewrite_facts("q.", {"r": {(1,)}}) == "q.\nr(1).\n"


def test_strings_with_dots_percent_and_quotes(tmp_path):
    text = 'e("a. b", "50% \\"off\\""). % x.\ne(1, 2).\n'
    assert rewrite_facts(text, {"e": {(1, 2)}}) == "% x.\ne(1, 2).\n"
    path = write_program(tmp_path, text)
    assert open_source(path).load() == {"e": {("a. b", '50% "off"'), (1, 2)}}


def test_new_file_is_created(tmp_path):
    path = tmp_path / "new.lp"
    open_source(path).write({"e": {(1, "a")}, "ok": {()}})
    assert path.read_text() == "e(1, a).\nok.\n"
    open_source(tmp_path / "empty.lp").write({"e": set()})
    assert not (tmp_path / "empty.lp").exists()


def test_unchanged_facts_do_not_rewrite(tmp_path):
    path = write_program(tmp_path, "e(2,1).\ne(1,2).\n")
    before = os.stat(path).st_mtime_ns
    open_source(path).write({"e": {(1, 2), (2, 1)}})
    assert os.stat(path).st_mtime_ns == before


def test_syntax_error_names_the_file(tmp_path):
    path = write_program(tmp_path, "e(1,2)\nq.\n")
    with pytest.raises(NablogSyntaxError) as info:
        open_source(path).load()
    assert f"--> {path}:2:1" in str(info.value)


def test_bad_predicate_name(tmp_path):
    with pytest.raises(DataError, match="not a predicate name"):
        open_source(tmp_path / "x.lp").write({"Edge": {(1,)}})


def test_failed_rename_leaves_the_file(tmp_path, monkeypatch):
    path = write_program(tmp_path)

    def fail(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(DataError, match="cannot replace"):
        open_source(path).write({"member": set()})
    assert path.read_text() == PROGRAM
    assert leftovers(tmp_path) == []


# The rewrite of a facts file is an edit of its text (cuts and insertions where the parse put the
# facts); this property, not a second parse at every commit, is what shows the edit keeps every
# other statement and gives exactly the new facts.
_VALUES = st.sampled_from([0, 1, 2, -3, "a", "b c", "x. y", "50% off", "%* not a comment *%", 'say "hi"', "é"])
_FACT = st.tuples(st.sampled_from(["e", "q"]), st.tuples(_VALUES, _VALUES))
_OTHER = st.sampled_from(["p(X) :- e(X, _).", "r :-\n    e(_, _).", "% a comment\n", "%* a block\n comment *%", "#base e/2.", ":- q(1, 1).", "s(X) :- q(X, Y),\n  not e(Y, X)."])
_GAP = st.sampled_from([" ", "\n", "  ", "\n\n", "\n  ", " % note\n"])


def _fact_piece(pred: str, row: tuple, spread: bool) -> str:
    from nablog.lang.ast import format_constant

    args = [format_constant(v) for v in row]
    return f"{pred}({args[0]},\n  {args[1]})." if spread else f"{pred}({args[0]}, {args[1]})."


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.one_of(st.tuples(st.just("fact"), _FACT, st.booleans()), st.tuples(st.just("other"), _OTHER)), max_size=8),
    st.lists(_GAP, min_size=9, max_size=9),
    st.booleans(),
    st.dictionaries(st.sampled_from(["e", "q", "t"]), st.sets(st.tuples(_VALUES, _VALUES), max_size=3), max_size=3),
)
def test_a_rewrite_gives_exactly_the_new_facts_and_keeps_every_other_statement(pieces, gaps, crlf, changes):
    from nablog.io.factsfile import facts_of

    text = "".join(gap + (_fact_piece(p[1][0], p[1][1], p[2]) if p[0] == "fact" else p[1]) for p, gap in zip(pieces, gaps)) + gaps[-1]
    if crlf:
        text = text.replace("\n", "\r\n")
    result = rewrite_facts(text, changes)
    expected = {pred: rows for pred, rows in facts_of(text).items() if pred not in changes}
    expected.update({pred: rows for pred, rows in changes.items() if rows})
    assert facts_of(result) == expected
    others = [p[1].replace("\n", "\r\n") if crlf else p[1] for p in pieces if p[0] == "other"]
    position = 0
    for other in others:  # in order, byte for byte
        position = result.index(other, position) + len(other)
