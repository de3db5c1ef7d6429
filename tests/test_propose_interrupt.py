"""Ctrl-C during a real ``nablog propose`` prints what was found and exits cleanly (issue 16)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

# An order comparison tells departments apart, so nothing is folded before solving and the search
# for the 4-change realizations runs through every department: seconds, long enough to interrupt.
PROGRAM = """
#columns emp_dept(emp, dept).
#columns dept_head(dept, head).
manager(E, H) :- emp_dept(E, D), dept_head(D, H).
#key emp_dept: emp.
#constraint one_head :- dept_head(D, X), dept_head(D, Y), X != Y.
#constraint heads_above :- dept_head(D, H), emp_dept(H, D), H < D.
"""


@pytest.mark.slow
def test_sigint_stops_the_search_and_prints_the_realizations_found(tmp_path):
    departments = 1500
    (tmp_path / "org.lp").write_text(PROGRAM)
    data = tmp_path / "data"
    data.mkdir()
    (data / "emp_dept.csv").write_text("".join(f"e{i},d{i % departments}\n" for i in range(10 * departments)))
    (data / "dept_head.csv").write_text("".join(f"d{k},h{k}\n" for k in range(departments)))
    command = [sys.executable, "-m", "nablog.cli", "propose", str(tmp_path / "org.lp"), "--data", str(data), "--no-header", "+manager(e5, h77).", "--stream"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if "+emp_dept(e5, d77)" in line:  # the second realization is printed: interrupt
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    out = "".join(lines) + out
    assert process.returncode == 130, err
    assert "[1] " in out and "+dept_head(d5, h77)" in out and "+emp_dept(e5, d77)" in out
    assert "found before the search was interrupted" in out
    assert "Traceback" not in err
