"""`nablog serve` stops within a second on SIGTERM while a watcher is connected (issue 32, item 7)."""

import http.client
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]


def test_serve_stops_within_a_second_on_sigterm_with_a_watcher_connected(tmp_path):
    (tmp_path / "graph.lp").write_text((ROOT / "nablog" / "examples" / "graph.lp").read_text())
    server = subprocess.Popen(
        [sys.executable, "-m", "nablog.cli", "serve", str(tmp_path / "graph.lp"), "--port", "0"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = ""
        deadline = time.monotonic() + 120
        while "serving" not in line and time.monotonic() < deadline:
            line = server.stdout.readline()
        assert "serving version 0 on http://127.0.0.1:" in line, line
        port = int(line.rsplit(":", 1)[1])
        watcher = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        watcher.request("GET", "/subscribe?query=" + quote("closure(h, X)"))
        stream = watcher.getresponse()
        assert stream.status == 200
        assert stream.readline().startswith(b"id: 0")  # the snapshot came: the watcher is live
        started = time.monotonic()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        stopped = time.monotonic() - started
        rest = stream.read()  # the stream ended, it was not cut: the snapshot's end, then EOF
        watcher.close()
        err = server.stderr.read()
        assert stopped < 1.0, (stopped, err)
        assert "Cancel" not in err and "timeout graceful shutdown" not in err, err
        assert b"snapshot_complete" in rest
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
        server.stderr.close()
