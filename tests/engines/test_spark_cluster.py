"""The spark engine on a standalone Spark cluster (a master and one worker on 127.0.0.1) that the test starts and stops."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nablog.engines import get_engine
from nablog.lang import parse

PROGRAM = """
reach(X,Y) :- e(X,Y).
reach(X,Y) :- reach(X,Z), e(Z,Y).
sg(X,Y) :- e(P,X), e(P,Y).
sg(X,Y) :- e(A,X), sg(A,B), e(B,Y).
#constraint one_parent :- e(P,X), e(Q,X), P < Q.
"""
EDGES = [(1, 2), (1, 3), (2, 4), (3, 5), (4, "x"), (5, "x"), (6, 5)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(log: Path, text: str, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    pytest.fail(f"{text!r} did not appear in {log}:\n{log.read_text(errors='replace')[-3000:] if log.exists() else ''}")


def _stop(process: subprocess.Popen) -> None:
    """Stop a daemon and everything it started (it runs in a process group of its own)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
    try:  # executors the worker launched, should any have outlived it
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.slow
@pytest.mark.spark
def test_materialize_and_check_on_a_standalone_cluster(tmp_path):
    pyspark = pytest.importorskip("pyspark")
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    logs, work = tmp_path / "logs", tmp_path / "work"
    logs.mkdir()
    work.mkdir()
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(logs),
        "SPARK_WORKER_DIR": str(work),
        # No REST submission server: its fixed port 6066 may be taken on a shared machine.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    }
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    daemons = []
    try:
        with open(logs / "master.out", "w") as out:
            master = subprocess.Popen(
                [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(_free_port())],
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )
        daemons.append(master)
        _wait_for(logs / "master.out", "I have been elected leader", master)
        with open(logs / "worker.out", "w") as out:
            worker = subprocess.Popen(
                [str(spark_class), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                 "--webui-port", str(_free_port()), "--work-dir", str(work)],
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )
        daemons.append(worker)
        _wait_for(logs / "worker.out", "Successfully registered with master", worker)

        (tmp_path / "p.lp").write_text(PROGRAM)
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "e.csv").write_text("".join(f"{a},{b}\n" for a, b in EDGES))
        nablog = [sys.executable, "-m", "nablog.cli"]
        data = ["--data", str(tmp_path / "data"), "--master", url]
        done = subprocess.run(
            [*nablog, "materialize", str(tmp_path / "p.lp"), *data, "--out", str(tmp_path / "out"), "--json"],
            capture_output=True, text=True, env=env, timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        expected = get_engine("python").evaluate(parse(PROGRAM), {"e": set(EDGES)})
        assert json.loads(done.stdout.strip().splitlines()[-1])["relations"] == {"reach": len(expected["reach"]), "sg": len(expected["sg"])}
        from .test_spark_bulk import parquet_rows

        assert parquet_rows(tmp_path / "out" / "reach") == set(expected["reach"])
        assert parquet_rows(tmp_path / "out" / "sg") == set(expected["sg"])
        checked = subprocess.run(
            [*nablog, "check", str(tmp_path / "p.lp"), *data, "--engine", "spark", "--json"],
            capture_output=True, text=True, env=env, timeout=600,
        )
        assert checked.returncode == 1, checked.stderr[-3000:]
        assert json.loads(checked.stdout) == {
            "consistent": False,
            "violations": [{"constraint": "one_parent", "count": 2, "witnesses": [["e(3, 5)", "e(6, 5)"], ["e(4, x)", "e(5, x)"]]}],
        }
        # The work ran on the cluster: the worker launched an executor for each application.
        assert len([d for d in work.iterdir() if d.name.startswith("app-")]) == 2
    finally:
        for daemon in reversed(daemons):
            _stop(daemon)
    assert all(d.poll() is not None for d in daemons)
