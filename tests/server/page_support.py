"""What the page's tests share: a `nablog serve` of the chairs example on a loopback port, a real
HTTP caller, and headless Chromium (installed when missing; a failure to install fails the tests
with the hint, it never skips them)."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from .test_server import Served

ROOT = Path(__file__).resolve().parents[2]
CHAIRS = ROOT / "nablog" / "examples" / "chairs.lp"
CHROMIUM = Path("/usr/bin/chromium")
INSTALL_HINT = "install headless Chromium: apt-get install -y chromium chromium-driver; and the driver library: pip install 'nablog[test]' (playwright)"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


class ChairsServer(Served):
    """`nablog serve chairs.lp` (a copy of the example in ``directory``, or ``program`` when
    given) on a free loopback port."""

    def __init__(self, directory: Path, program: str | None = None):
        if program is None:
            shutil.copy(CHAIRS, directory / "chairs.lp")
        else:
            (directory / "chairs.lp").write_text(program)
        super().__init__(directory, program="chairs.lp")

    def call(self, method: str, path: str, body=None, token: str | None = "default") -> tuple[int, bytes, dict]:
        """One request with a 30 s bound: (status, body bytes, headers)."""
        headers = {} if token is None else {"Authorization": "Bearer " + (self.token if token == "default" else token)}
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, method=method, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def json(self, method: str, path: str, body=None, token: str | None = "default") -> tuple[int, dict]:
        status, data, _ = self.call(method, path, body, token)
        return status, json.loads(data)


def ensure_chromium() -> None:
    """Install Debian's chromium and chromium-driver when missing (as root, with apt-get); a
    failure fails the calling test with the install hint."""
    if CHROMIUM.exists():
        return
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.fail(f"headless Chromium is missing and apt-get is not here: {INSTALL_HINT}")
    done = subprocess.run([apt, "install", "-y", "--no-install-recommends", "chromium", "chromium-driver"], capture_output=True, text=True, timeout=900)
    if done.returncode != 0 or not CHROMIUM.exists():
        pytest.fail(f"installing Chromium failed ({done.stderr.strip()[-500:]}): {INSTALL_HINT}")


def launch_browser(playwright, profile: Path):
    """Headless Chromium with a fresh profile directory (Playwright over Debian's chromium)."""
    return playwright.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, viewport={"width": 1366, "height": 900},
    )
