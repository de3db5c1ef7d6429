"""Stores: the fact stores of one database and the one way to change them — a crash-safe commit.

Every write of user data (``apply``, ``undo``, ``repair --out``, a server commit) is a
:meth:`Stores.commit` of a :class:`~nablog.lang.Delta`. Its protocol, run under the lock
``.nablog/lock`` (one writer at a time)::

    1 begin     .nablog/journal.json  {tag, directories}                  written, fsynced
    2 stage     each store stages its part of the Delta (FactSource.stage: its true changes,
                read once):
                every changed file's new version  .<name>.<tag>.tmp       beside it, fsynced
                the old version linked (or copied) to .nablog/undo/<tag>/  for an exact undo
                the new undo log  .nablog/.history.json.<tag>.tmp
                SQLite changes run and rolled back: every value checked now
    3 journal   .nablog/journal.json  {tag, files: tmp -> target, SQLite changes}   fsynced
    4 check     the data's fingerprint is still the one the change was computed on
    5 commit    .nablog/commit  holding the tag                            fsynced
    6 apply     renames (data first, the undo log last); SQLite changes in one transaction each
    7 cleanup   journal, then commit record removed

A commit numbered by the database (``version=N``, as ``Database`` numbers its commits for
subscribers) stages ``.nablog/version`` with the data files, so the number is in the same
journal and comes out wholly old or wholly new with them.

The commit record (5) is the point of no return; it is written before the renames, so every
rename and SQLite change after it can be redone. :meth:`Stores.recover` — run on every open and
before every commit — finds a journal left by a killed process and **rolls it forward** when the
commit record names it (renames whose temporary file is still there; SQLite changes, which are
idempotent: a row already inserted is not inserted again), or **back** otherwise (its temporary
files and backups removed; nothing else was touched yet). Either way the data, the undo log and
every store together are wholly old or wholly new. A committed journal that a store refuses to
redo (a value SQLite cannot hold, in a journal written before values were checked in step 2) is
rolled back instead, with a message — recovery never fails on every open. The temporary files
of the journal and of the commit record carry the tag too, so nothing of a commit taken back stays.

A second writer waits for the lock at most ``lock_timeout`` seconds (saying so after half a
second), then is refused with a clear message. The fingerprint (size, modification time and
inode of every file) is checked under the lock, after staging: a change computed on data that
was edited since — by another nablog or by hand — is refused, never merged into it.

>>> import tempfile, pathlib
>>> from nablog.lang import Delta
>>> tmp = pathlib.Path(tempfile.mkdtemp())
>>> _ = (tmp / "db.lp").write_text("e(1, 2).\\n")
>>> stores = Stores([tmp / "db.lp"])
>>> print(stores.commit(Delta.parse("+e(2, 3). -e(1, 2).")))
+e(2, 3). -e(1, 2).
>>> (tmp / "db.lp").read_text()
'e(2, 3).\\n'
>>> print(stores.undo())
+e(1, 2). -e(2, 3).
>>> (tmp / "db.lp").read_text()
'e(1, 2).\\n'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, TypeVar

from ..lang import DataError, Delta, NablogError
from .base import FactSource, PendingFile, fsync_directory, prepare_file
from .factsfile import FactsFile
from .csvfile import record_staged
from .history import History
from .sqlitedb import SqliteDatabase

T = TypeVar("T")

LOCK_TIMEOUT = 10.0
"""Seconds a commit waits for another writer before it is refused."""

HISTORY_DEPTH = 100
"""Undo entries kept; older ones (and their saved file versions) are dropped by the next commit."""

STATE_DIR = ".nablog"

VERSION_FILE = "version"
"""In ``.nablog/``: the number of the last numbered commit (see :meth:`Stores.commit`)."""


class Stores:
    """The fact stores of one database (program files, then data sources) and their commits.

    Parameters
    ----------
    program_paths
        Program files; their facts are a store (:class:`~nablog.io.FactsFile`) each.
    sources
        Further fact sources (:func:`~nablog.io.open_source`).
    lock_timeout
        Seconds to wait for another writer (default :data:`LOCK_TIMEOUT`).
    on_wait
        Called with a message when the lock is held by another writer (default: print to stderr).
    on_note
        Called with a message when recovery had to take back a commit it could not finish.

    The undo log and the commit journal live in ``.nablog/`` beside the first program file (or
    the first source; inside it when it is a directory).
    """

    def __init__(
        self,
        program_paths: Sequence[str | Path] = (),
        sources: Sequence[FactSource] = (),
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        on_wait: Callable[[str], None] | None = None,
        on_note: Callable[[str], None] | None = None,
    ):
        self.program_paths = [Path(p) for p in program_paths]
        self.sources = list(sources)
        self.stores: list[FactSource] = [FactsFile(p) for p in self.program_paths] + self.sources
        if not self.stores:
            raise NablogError("no fact store to commit to", hint="give program files or data sources")
        anchor = self.stores[0].location.absolute()
        # Before the version joined the commit journal, a database read from a data directory kept
        # its number beside the directory, not in it: read there until the first numbered commit.
        self._legacy_version: Path | None = None
        try:
            self.base = anchor.resolve() if anchor.is_dir() else anchor.resolve().parent
            if anchor.is_dir():
                self._legacy_version = self.base.parent / STATE_DIR / VERSION_FILE
        except OSError:  # a name the system refuses: reading it will say so
            self.base = anchor.parent
        self.state = self.base / STATE_DIR
        self.history = History(self.state / "history.json")
        self.lock_timeout = lock_timeout
        self.on_wait = on_wait or _print_note
        self.on_note = on_note or _print_note
        self.fault: Callable[[str], None] | None = None  # tests: called at every protocol step
        self._lock_depth = 0
        self._lock_fd: int | None = None
        # The fingerprint of the data as the last commit or undo left it, taken under the lock:
        # what a database's next change is computed on (fingerprint() after the lock is released
        # could include another writer's commit that the database never read).
        self.settled: str | None = None

    # -- reading --------------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """Size, modification time and inode of every file the stores read (hidden files and
        ``.nablog/`` excepted): it changes whenever a file is written or replaced."""
        parts = []
        for path in [*self.program_paths, *(s.location for s in self.sources)]:
            path = Path(path)
            files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")) if path.is_dir() else [path]
            for f in files:
                try:
                    st = f.stat()
                except OSError:
                    parts.append(f"{f}:missing")
                    continue
                parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
        return "|".join(parts)

    def read_consistently(self, read: Callable[[], T], attempts: int = 3) -> tuple[str, T]:
        """``read()`` (of the stores' files) and the fingerprint of what it read: taken before and
        after it, and read again when they differ (a commit or an edit landed in between), the
        last attempt under the lock (no nablog writer then). A fingerprint taken apart from the
        read would name data the read never saw, and a change computed on the read would be
        merged into that data unchecked (issue 24, fault 4)."""
        for _ in range(attempts - 1):
            before = self.fingerprint()
            result = read()
            if self.fingerprint() == before:
                return before, result
        with self.locked():
            before = self.fingerprint()
            result = read()
            if self.fingerprint() != before:
                raise NablogError(
                    "the data kept changing while it was read (another program is writing it)",
                    hint="retry when the other program has finished writing",
                )
            return before, result

    def owner(self, pred: str) -> FactSource:
        """The store that holds ``pred``: where its facts are, or where a new relation goes (the
        first data source, else the program file declaring it ``#base``, else the first file)."""
        holders = [s for s in self.stores if pred in s.relations()]
        if len(holders) > 1:
            raise NablogError(
                f"relation {pred} is stored in several places: " + ", ".join(str(h.location) for h in holders),
                hint="keep each relation in one file or directory so changes have one place to go",
            )
        if holders:
            return holders[0]
        if self.sources:
            return self.sources[0]
        for store in self.stores[: len(self.program_paths)]:
            if store.declares(pred):  # type: ignore[attr-defined]
                return store
        return self.stores[0]

    def entries(self) -> list[dict]:
        """The undo log, oldest first."""
        return self.history.entries()

    # -- the lock -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold ``.nablog/lock`` (re-entrant in one Stores object); wait at most ``lock_timeout``."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        import fcntl

        self.state.mkdir(exist_ok=True)
        fd = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT, 0o666)
        start = time.monotonic()
        told = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    waited = time.monotonic() - start
                    holder = _holder(fd)
                    if waited >= self.lock_timeout:
                        raise NablogError(
                            f"another nablog command{holder} is writing this database; gave up after {self.lock_timeout:g} s",
                            where=str(self.state / "lock"),
                            hint="retry when it has finished; nothing was changed",
                        ) from None
                    if not told and waited >= 0.5:
                        self.on_wait(f"waiting for another nablog command{holder} to finish writing (at most {self.lock_timeout:g} s)")
                        told = True
                    time.sleep(0.05)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd, self._lock_depth = fd, 1
        try:
            yield
        finally:
            self._lock_depth, self._lock_fd = 0, None
            os.close(fd)  # closing releases the flock

    # -- committing -----------------------------------------------------------------------------

    def version(self) -> int:
        """The number of the last commit numbered by ``version=`` (0 when none was)."""
        path = self.state / VERSION_FILE
        if not path.exists() and self._legacy_version is not None and self._legacy_version.exists():
            path = self._legacy_version
        if not path.exists():
            return 0
        text = path.read_text(encoding="utf-8").strip()
        if not text.isdigit():
            raise NablogError(f"{path}: not a version number: {text[:40]!r}", where=str(path), hint="the file is damaged; write the last version number into it")
        return int(text)

    def commit(self, delta: Delta, *, request: str = "", basis: str | None = None, version: int | None = None) -> Delta:
        """Apply ``delta`` (on relations as stored, ``p`` not ``base__p``) to the stores and push
        it on the undo log, all or nothing; return the changes really made (inserting a stored
        fact or deleting an absent one is no change, seed 002 Def. 1). Nothing is recorded when
        nothing changes.

        ``basis`` is the fingerprint the change was computed on: if the data changed since, the
        commit is refused (:class:`NablogError`), checked under the lock.

        ``version`` numbers the commit: ``.nablog/version`` is written in the same commit (also
        when no fact changes, so that every numbered commit is recorded).
        """
        with self.locked():
            self.recover()
            self._check_basis(basis)
            self.settled = self.fingerprint() if basis is None else basis
            parts: dict[int, tuple[FactSource, dict]] = {}
            for pred, (ins, dele) in delta.by_relation().items():
                store = self.owner(pred)
                parts.setdefault(id(store), (store, {}))[1][pred] = (ins, dele)
            plans = [(store, Delta.of_rows({p: c[0] for p, c in rel.items()}, {p: c[1] for p, c in rel.items()})) for store, rel in parts.values()]
            try:
                real = self._run(plans, basis, request=request, writers=self._version_writer(version))
            except BaseException:
                record_staged(done=False)
                raise
            record_staged()
            return real

    def undo(self, *, version: int | None = None) -> Delta | None:
        """Take back the newest commit on the undo log: the files as they were, byte for byte;
        SQLite rows as they were. None when the log is empty.

        Refused, with nothing changed, when the entry names a store this database does not
        have, or when the data changed after that commit (``forget`` then drops the entry).
        ``version`` numbers the undo as a commit (see :meth:`commit`).
        """
        with self.locked():
            self.recover()
            entries = self.entries()
            if not entries:
                return None
            entry = entries[-1]
            stores = {s.location.resolve(): s for s in self.stores}
            plans: list[tuple[FactSource, Delta]] = []
            inverse = Delta()
            by_bytes = "files" in entry  # files come back byte for byte; SQLite (and old entries) row by row
            for name, rows in entry.get("changes", {}).items():
                location = self._path(name).resolve()
                store = stores.get(location)
                if store is None:
                    raise NablogError(
                        f"cannot undo: the newest change was made to {name}, which is not a store of this database",
                        where=str(self.history.path),
                        hint="run undo with the program and data the change was applied to, or drop the entry with nablog undo --forget",
                    )
                change = Delta.from_json(rows)
                inverse = inverse.compose(change.inverse())
                # Nothing is read here: a file comes back byte for byte when it is as the commit
                # left it (its digest, below); a store undone row by row stages the inverse,
                # whose true changes must be all of it (else the data changed since: _run).
                if not by_bytes or isinstance(store, SqliteDatabase):
                    plans.append((store, change.inverse()))
            restore = []
            for f in entry.get("files", []):
                target = self._path(f["target"])
                if _digest(target) != f["sha256"]:
                    raise _stale(None, f["target"])
                restore.append((target, self._path(f["backup"]) if f.get("backup") else None))
            self._run(plans, None, restore=restore, entries=entries[:-1], drop=[entry], writers=self._version_writer(version), whole=True)
            return inverse

    def forget(self) -> dict | None:
        """Drop the newest undo entry without touching the data (the way out of a stale log)."""
        with self.locked():
            self.recover()
            entries = self.entries()
            if not entries:
                return None
            self._run([], None, entries=entries[:-1], drop=[entries[-1]])
            return entries[-1]

    def replace_files(self, writers: Mapping[Path, Callable[[BinaryIO], None]]) -> None:
        """Write whole files (target to a function writing its bytes) in one commit, without an
        undo entry: for outputs such as ``repair --out``, all files new or all old."""
        with self.locked():
            self.recover()
            self._run([], None, writers=writers)

    # -- recovery -------------------------------------------------------------------------------

    def recover(self) -> str | None:
        """Finish or take back a commit a killed process left: ``"rolled forward"``,
        ``"rolled back"``, or None when there was none."""
        journal_path = self.state / "journal.json"
        if not journal_path.exists():
            if self._strays():
                with self.locked():
                    self._remove_strays()
            return None
        with self.locked():
            try:
                journal = json.loads(journal_path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                self._remove_strays()
                return None  # finished by the writer we waited for
            except ValueError:
                journal = None  # torn before its first fsync completed: nothing was staged
            if journal is None:
                journal_path.unlink()
                self._remove_strays()
                return "rolled back"
            record = self.state / "commit"
            committed = record.exists() and record.read_text(encoding="utf-8").strip() == journal["tag"]
            if committed:
                done: list[str] = []
                try:
                    self._apply(journal, done)
                except DataError as e:
                    # A change a store refuses (a journal written before values were checked
                    # before the commit record): redoing it would fail on every open.
                    self._take_back(journal, done)
                    self.on_note(f"the commit a killed process left could not be finished and was taken back: {str(e).splitlines()[0]}")
                    return "rolled back"
                self._cleanup(journal)
                return "rolled forward"
            self._rollback(journal)
            return "rolled back"

    def _strays(self) -> list[str]:
        """Temporary files of the journal and the commit record in ``.nablog/`` (``.journal.json.<tag>.tmp``,
        ``.commit.<tag>.tmp``): a writer killed while writing one, before its rename, leaves it,
        and no journal names it. Only a writer holding the lock writes them."""
        try:
            names = os.listdir(self.state)
        except OSError:
            return []
        return [n for n in names if n.startswith((".journal.json.", ".commit.")) and n.endswith(".tmp")]

    def _remove_strays(self) -> None:
        """Remove :meth:`_strays` (under the lock: then no writer is writing one)."""
        for name in self._strays():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.state / name)

    # -- the protocol ---------------------------------------------------------------------------

    def _run(self, plans: Sequence[tuple[FactSource, Delta]], basis: str | None, *, request: str | None = None,
             restore=(), entries=None, drop=(), writers={}, whole: bool = False) -> Delta:
        """Steps 1-7: each store stages its part of the change (``plans``: store, Delta), reading
        what it touches once and keeping the true changes (:meth:`FactSource.stage`); returns
        those. With ``request`` (a commit), the true changes go on the undo log; when there are
        none, nothing is written but the ``writers``' files (when there are any). With ``whole``
        (an undo) every part's true changes must be all of it: a row already there or already
        gone means the data changed since, and nothing is written."""
        tag = f"nablog-{os.getpid()}-{os.urandom(4).hex()}"
        undo_dir = self.state / "undo" / tag
        directories = sorted({str(s.location.resolve().parent if not s.location.is_dir() else s.location.resolve()) for s, _ in plans}
                             | {str(Path(t).resolve().parent) for t in [*(t for t, _ in restore), *writers]} | {str(self.state)})
        journal = {"tag": tag, "directories": directories, "files": [], "sqlite": [], "cleanup": []}
        self._write_journal(journal, tag)
        self._step("begin")
        real = Delta()
        try:
            pending: list[PendingFile] = []
            files: list[dict] = []
            changes: dict[str, dict] = {}  # the undo entry's changes: store to its true changes
            for store, part in plans:
                staged = store.stage(part, tag)
                if whole:
                    wanted, found = part.by_relation(), staged.real.by_relation()
                    for pred in sorted(wanted):
                        if found.get(pred, (set(), set())) != wanted[pred]:
                            raise _stale(pred, self._name(store.location))
                if isinstance(store, SqliteDatabase):
                    self._step(f"check {store.location.name}")
                    if staged.real:
                        journal["sqlite"].append({"path": str(store.location.resolve()), "changes": staged.real.to_rows_json()})
                if staged.real:
                    real = real.compose(staged.real)
                    changes[self._name(store.location)] = staged.real.to_rows_json()
                for p in staged.files:
                    self._step(f"stage {p.target.name}")
                    backup = None
                    if p.target.exists():
                        undo_dir.mkdir(parents=True, exist_ok=True)
                        backup = undo_dir / str(len(files))
                        _link_or_copy(p.target, backup)
                    files.append({"target": self._name(p.target), "backup": self._name(backup) if backup else None, "sha256": _digest(p.tmp)})
                pending.extend(staged.files)
            entry = None
            if request is not None:
                if not real and not writers:
                    self._rollback(journal)
                    return real
                if real:
                    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "request": request, "changes": changes}
            for target, backup in restore:
                if backup is None:
                    journal["files"].append({"op": "remove", "target": _absolute(target)})
                    continue
                staged = prepare_file(target, lambda f, b=backup: f.write(b.read_bytes()), tag)
                self._step(f"stage {target.name}")
                pending.append(staged)
            for target, write in writers.items():
                pending.append(prepare_file(Path(target), write, tag))
                self._step(f"stage {Path(target).name}")
            if undo_dir.exists():
                fsync_directory(undo_dir)
            # Absolute paths: the journal is finished by whichever process opens the database next,
            # from any working directory (a relative data path, as the CLI gets, would name nothing there).
            journal["files"] += [{"op": "replace", "tmp": _absolute(p.tmp), "target": _absolute(p.target)} for p in pending]
            if entry is not None or entries is not None:
                if entries is None:
                    entries = self.entries()
                if entry is not None:
                    entries = entries + [{**entry, "tag": tag, "files": files}]
                while len(entries) > HISTORY_DEPTH:
                    drop = [*drop, entries.pop(0)]
                text = json.dumps(entries, ensure_ascii=False, indent=1).encode("utf-8")
                log = prepare_file(self.history.path, lambda f: f.write(text), tag)
                journal["files"].append({"op": "replace", "tmp": _absolute(log.tmp), "target": _absolute(log.target)})
            journal["cleanup"] = [str(self.state / "undo" / d["tag"]) for d in drop if d.get("tag")]
            self._write_journal(journal, tag)
            self._step("journal")
            self._check_basis(basis)
            self._step("check")
        except BaseException:
            # Refused before the point of no return (a value a store cannot hold, data edited
            # since): taken back now, not left for the next command's recovery.
            self._rollback(journal)
            raise
        _write_durably(self.state / "commit", tag.encode(), tag)
        self._step("commit record")
        done: list[str] = []
        try:
            self._apply(journal, done)
        except DataError:
            self._take_back(journal, done)
            raise
        except OSError as e:
            failed = e.filename or "a file"
            if not done:  # nothing was changed yet: take the commit back
                os.unlink(self.state / "commit")
                self._rollback(journal)
                raise DataError(f"cannot replace {failed}: {e.strerror or e}", where=str(failed),
                                hint="check that the directory is writable and has space; nothing was changed") from None
            raise DataError(
                f"cannot replace {failed}: {e.strerror or e}", where=str(failed),
                hint=f"the change is recorded in {self.state / 'journal.json'}; the next nablog command on this database finishes it",
            ) from None
        self._cleanup(journal)
        self.settled = self.fingerprint()
        return real

    def _apply(self, journal: dict, done: list[str] | None = None) -> None:
        """Step 6, also the roll-forward of recovery: idempotent. ``done`` collects what was changed."""
        done = [] if done is None else done
        for item in journal["sqlite"]:
            SqliteDatabase(item["path"]).apply(Delta.from_json(item["changes"]).by_relation())
            done.append(item["path"])
            self._step(f"sqlite {Path(item['path']).name}")
        for item in journal["files"]:
            target = Path(item["target"])
            if item["op"] == "remove":
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(target)
            elif os.path.exists(item["tmp"]):
                try:
                    os.replace(item["tmp"], target)
                except OSError as e:
                    e.filename = str(target)
                    raise
            else:
                continue
            done.append(str(target))
            fsync_directory(target.parent)
            self._step(f"rename {target.name}")

    def _cleanup(self, journal: dict) -> None:
        for directory in journal.get("cleanup", []):
            shutil.rmtree(directory, ignore_errors=True)
        # The journal goes first: a journal without its commit record would be rolled back. A
        # commit record without a journal is inert (the next commit writes its own).
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.state / "journal.json")
        fsync_directory(self.state)
        self._step("cleanup")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.state / "commit")

    def _take_back(self, journal: dict, done: list[str]) -> None:
        """Undo a roll-forward that a store refused part way: it stopped in the SQLite changes,
        which come first, so only SQLite databases were changed (those in ``done``), and their
        changes are exact (:meth:`commit` records real changes only): their inverses restore them."""
        if any(item["op"] == "replace" and item["target"] in done for item in journal["files"]):
            raise NablogError("a commit stopped after renaming files cannot be taken back", hint="report this; the journal is in " + str(self.state))
        for item in journal["sqlite"]:
            if item["path"] in done:
                SqliteDatabase(item["path"]).apply(Delta.from_json(item["changes"]).inverse().by_relation())
        os.unlink(self.state / "commit")
        self._rollback(journal)

    def _rollback(self, journal: dict) -> None:
        tag = journal["tag"]
        for directory in journal.get("directories", []):
            with contextlib.suppress(OSError):
                for entry in os.scandir(directory):
                    if entry.name.startswith(".") and entry.name.endswith(f".{tag}.tmp"):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(entry.path)
        shutil.rmtree(self.state / "undo" / tag, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.state / "journal.json")
        fsync_directory(self.state)

    def _write_journal(self, journal: dict, tag: str) -> None:
        self.state.mkdir(exist_ok=True)
        _write_durably(self.state / "journal.json", json.dumps(journal, ensure_ascii=False).encode("utf-8"), tag)

    def _check_basis(self, basis: str | None) -> None:
        if basis is not None and basis != self.fingerprint():
            raise NablogError(
                "the data changed since this change was computed (another program or nablog command wrote it)",
                hint="propose again to get changes for the current data; nothing was written",
            )

    def _version_writer(self, version: int | None) -> dict[Path, Callable[[BinaryIO], None]]:
        if version is None:
            return {}
        self.state.mkdir(exist_ok=True)
        return {self.state / VERSION_FILE: lambda f: f.write(f"{version}\n".encode())}

    def _step(self, name: str) -> None:
        if self.fault is not None:
            self.fault(name)

    def _name(self, path: Path) -> str:
        """A path as the undo log records it: relative to the directory holding ``.nablog/``."""
        absolute = Path(path).resolve()
        try:
            return str(absolute.relative_to(self.base))
        except ValueError:
            return str(absolute)

    def _path(self, name: str) -> Path:
        return self.base / name


def _stale(pred: str | None, name: str) -> NablogError:
    what = f"{pred} in {name}" if pred else name
    return NablogError(
        f"cannot undo: {what} changed after the change being undone",
        hint="undo only works while the data is as that change left it; nablog undo --forget drops the entry and keeps the data as it is",
    )


def _digest(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def _link_or_copy(source: Path, target: Path) -> None:
    # A hard link keeps the old version at no cost (the rename only unlinks its old name).
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
        with open(target, "rb") as f:
            os.fsync(f.fileno())


def _absolute(path: Path) -> str:
    """``path`` as the journal records it: its directory resolved, so it names the same file from
    any working directory (and the same directory the journal's ``directories`` name)."""
    path = Path(path)
    return str(path.absolute().parent.resolve() / path.name)


def _write_durably(path: Path, data: bytes, tag: str) -> None:
    """Replace ``path`` by ``data``, fsynced; its temporary file is named with the commit's ``tag``,
    so that taking the commit back removes it (:meth:`Stores._rollback`)."""
    prepare_file(path, lambda f: f.write(data), tag).commit()


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {pid})" if pid.isdigit() else ""


def _print_note(message: str) -> None:
    import sys

    print(f"nablog: {message}", file=sys.stderr, flush=True)


__all__ = ["HISTORY_DEPTH", "LOCK_TIMEOUT", "Stores"]
