"""The faults the fault campaign of issue 24 found, each as the input that showed it.

Fault numbers are the issue's: 4 (two applies merged), 5 (a wedged SQLite journal), 6 (a Parquet
abort at exit), 7 (stray temporary files after recovery), 8 (internal errors).
"""

from __future__ import annotations

from pathlib import Path

from nablog.cli import main


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


# -- fault 8: internal errors -------------------------------------------------------------------------


def test_an_integer_past_64_bits_beside_a_small_one_in_another_relation_queries(tmp_path, capsys):
    (tmp_path / "p.lp").write_text("e(99999999999999999999). q(1).\n")
    assert run(capsys, "query", tmp_path / "p.lp", "q(X)", "--json") == (0, "[[1]]\n", "")
    assert run(capsys, "query", tmp_path / "p.lp", "e(X)", "--json") == (0, "[[99999999999999999999]]\n", "")


def test_watch_and_commit_with_a_url_that_is_not_one_are_user_errors(tmp_path, capsys):
    status, out, err = run(capsys, "watch", "1", "p(X)")
    assert (status, out) == (2, "") and err.startswith("error: not a server address: '1'\nhint: ")
    (tmp_path / "token").write_text("secret\n")
    status, out, err = run(capsys, "commit", "1", "+a(1).", "--token-file", tmp_path / "token")
    assert (status, out) == (2, "") and err.startswith("error: not a server address: '1'\nhint: ")


# -- fault 7: recovery leaves no temporary file ----------------------------------------------------


def _killed_before_rename(root: Path, setup, k: int) -> int:
    """Apply CHANGE in a child process killed (no cleanup) just before its ``k``-th rename."""
    import os

    from nablog import Database
    from nablog.lang import Delta
    from tests.io.test_commit import CHANGE

    paths, data = setup(root)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        replace, seen = os.replace, [0]

        def dying_replace(*args, **kwargs):
            if seen[0] == k:
                os._exit(77)
            seen[0] += 1
            return replace(*args, **kwargs)

        os.replace = dying_replace
        try:
            Database.from_files(*paths, data=data).apply(Delta.parse(CHANGE))
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_recovery_removes_every_temporary_file_a_killed_commit_made(tmp_path):
    """Killed before any rename of the protocol — the journal's, the commit record's, a data
    file's, the undo log's — the next open leaves no ``.tmp`` file, also none in ``.nablog/``."""
    from nablog import Database
    from tests.io.test_commit import SETUPS

    for kind in ("lp", "mixed"):
        k = 0
        while True:
            root = tmp_path / f"{kind}{k}"
            root.mkdir()
            status = _killed_before_rename(root, SETUPS[kind], k)
            if status == 0:  # the commit made fewer renames than k: every one was tried
                break
            assert status == 77
            Database.from_files(*sorted(root.glob("*.lp")), data=[p for p in [root / "data", root / "offices.db"] if p.exists()])
            left = sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp"))
            assert left == [], f"{kind}, killed before rename {k}: {left}"
            k += 1
        assert k >= 4
