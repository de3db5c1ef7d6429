"""The progress line on a terminal (issue 32: the first seconds of loading 1e6 facts showed nothing)."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

from nablog.cli.output import Progress


def test_a_ticking_step_shows_its_message_with_the_time_and_stops_with_the_step():
    stream = io.StringIO()
    progress = Progress(stream, delay=0.0)
    with progress.ticking("reading data/"):
        time.sleep(0.6)
    written = stream.getvalue()
    assert written.count("reading data/") >= 2 and written.startswith("\r\x1b[K[")
    time.sleep(0.4)
    assert stream.getvalue() == written  # the ticker stopped with the step


def test_reading_the_data_shows_progress_on_a_terminal_and_nothing_elsewhere(tmp_path):
    (tmp_path / "p.lp").write_text("dept_of(E, D) :- emp(E, D).\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "emp.csv").write_text("".join(f"e{i},d{i % 10}\n" for i in range(20_000)))
    argv = [sys.executable, "-m", "nablog.cli", "query", str(tmp_path / "p.lp"), "dept_of(e5, D)", "--data", str(tmp_path / "d"), "--no-header"]
    env = {**os.environ, "NABLOG_PROGRESS_DELAY": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=terminal, env=env, timeout=120)
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert done.returncode == 0 and done.stdout.decode().splitlines() == ["dept_of (1 row)", "  e5  d5", ""]
    assert f"reading {tmp_path / 'd'}".encode() in shown
    piped = subprocess.run(argv, capture_output=True, env=env, timeout=120)
    assert piped.stdout == done.stdout and b"reading" not in piped.stderr
