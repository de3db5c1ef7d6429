"""Shared benchmark helpers: run a measured child process (time limit, peak memory), print tables, save JSON."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

RESULTS = Path(__file__).with_name("results")
PAGE = os.sysconf("SC_PAGE_SIZE")
SAMPLE_SECONDS = 0.1
MB = 1 << 20


@dataclass
class ChildRun:
    """What a child process did: ``status`` is ``ok``, ``timeout`` or ``error``.

    ``report`` is the JSON object the child printed as its last line of standard output;
    ``peak_mb`` is its peak resident set size (see :func:`run_child`).
    """

    status: str
    report: dict
    peak_mb: float
    error: str = ""


def run_child(argv: list[str], timeout: float, whole_group: bool = False) -> ChildRun:
    """Run ``argv`` in a new session, kill it after ``timeout`` seconds, and measure its memory.

    The peak is ``ru_maxrss`` from ``wait4`` (exact for one process, and for a process that reaps
    its own children it is the largest of them). With ``whole_group`` the summed resident size of
    every process in the child's process group is also sampled every :data:`SAMPLE_SECONDS`, and
    the peak is the larger of the two: use it for children that start helpers, such as a JVM.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=out, stderr=err, start_new_session=True)
        deadline = time.monotonic() + timeout
        sampled = 0
        timed_out = False
        while not _exited(child.pid):
            if time.monotonic() > deadline:
                timed_out = True
                _kill_group(child.pid)
                break
            if whole_group:
                sampled = max(sampled, group_rss(child.pid))
            time.sleep(SAMPLE_SECONDS)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        _kill_group(child.pid)  # helpers that outlived the child
        peak_mb = max(usage.ru_maxrss * 1024, sampled) / MB
        if timed_out:
            return ChildRun("timeout", {}, peak_mb, f"killed after {timeout:g} s")
        report = _last_json_line(out)
        if child.returncode != 0 or report is None:
            return ChildRun("error", {}, peak_mb, _last_line(err) or f"exit code {child.returncode}")
        return ChildRun("ok", report, peak_mb)


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (its rusage is still to be read)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def group_rss(pgid: int) -> int:
    """Summed resident set size in bytes of the live processes of process group ``pgid``."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:  # fields after the command: state, ppid, pgrp, ...
                continue
            with open(f"/proc/{entry.name}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue  # the process ended while we looked
    return total


def _last_json_line(stream) -> dict | None:
    line = _last_line(stream)
    try:
        return json.loads(line) if line else None
    except json.JSONDecodeError:
        return None


def _last_line(stream) -> str:
    stream.seek(0)
    lines = [line for line in stream.read().decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def print_table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    """Print a plain-text table: the first column left-aligned, the others right-aligned.

    A row shorter than ``headers`` ends in a note that runs on past the columns.
    """
    full = [headers, *(r for r in rows if len(r) == len(headers))]
    widths = [max(len(r[i]) for r in full) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        columns = cells if len(cells) == len(headers) else cells[:-1]
        parts = [columns[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(columns[1:], widths[1:]))]
        if columns is not cells:
            parts.append(cells[-1])
        return "  ".join(parts).rstrip()

    print(f"\n{title}")
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))
    sys.stdout.flush()


def environment() -> dict:
    """The machine and interpreter the figures were measured on."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }


def save_results(name: str, data: dict) -> Path:
    """Write ``data`` as ``bench/results/<name>-<timestamp>.json`` and return the path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def shared_data() -> Path:
    """The shared real datasets: ``$NABLOG_SHARED_DATA``, else ``shared/data`` beside the
    repository, else ``/work/shared/data``."""
    given = os.environ.get("NABLOG_SHARED_DATA")
    candidates = [Path(given)] if given else []
    candidates += [Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data")]
    return next((p for p in candidates if p.is_dir()), candidates[0])
