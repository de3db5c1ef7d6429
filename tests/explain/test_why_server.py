"""GET /why on `nablog serve`, through a real HTTP client on 127.0.0.1."""

import json
import shutil
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("starlette")

from tests.server.test_server import EXAMPLES, Served  # noqa: E402


@pytest.fixture
def served(tmp_path):
    shutil.copy(EXAMPLES / "graph.lp", tmp_path / "graph.lp")
    server = Served(tmp_path)
    yield server
    server.stop()


def get(served, query: str, token: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"{served.url}/why?{query}", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.headers, answer.read().decode()


def test_why_over_http(served):
    _, body = get(served, urllib.parse.urlencode({"atom": "closure(e, c)"}))
    got = json.loads(body)
    assert got["version"] == 0 and got["holds"] is True and got["proof"]["height"] == 2
    assert got["proof"]["instance"] == "closure(e, c) :- edge(e, d), closure(d, c)."
    _, body = get(served, urllib.parse.urlencode({"atom": "closure(c, e)", "depth": 1}))
    assert json.loads(body)["why_not"][0]["fails"] == [{"literal": "edge(c, e)", "reason": "missing", "instance": "closure(c, e) :- edge(c, e).", "why_not": []}]
    headers, body = get(served, urllib.parse.urlencode({"atom": "closure(e, c)", "format": "svg"}))
    assert headers["Content-Type"] == "image/svg+xml" and headers["X-Nablog-Version"] == "0"
    assert ET.fromstring(body).find("{http://www.w3.org/2000/svg}g").get("data-atom") == "closure(e, c)"
    _, body = get(served, urllib.parse.urlencode({"atom": "closure(e, c)", "format": "text", "all": 1}))
    assert body.startswith("closure(e, c)  graph.lp:4  closure(e, c) :- edge(e, d), closure(d, c).\n") and "other derivations (1):" in body


def test_bad_questions_get_a_hint(served):
    for query, message in (("", "missing the atom"), ("atom=closure(e,X)", "not ground"), ("atom=closure(e,c)&format=png", "unknown format"), ("atom=closure(e,c)&depth=x", "whole number")):
        with pytest.raises(urllib.error.HTTPError) as caught:
            get(served, query)
        assert caught.value.code == 400 and message in json.loads(caught.value.read())["error"]


def test_reads_need_the_token_when_the_server_says_so(tmp_path):
    shutil.copy(EXAMPLES / "graph.lp", tmp_path / "graph.lp")
    (tmp_path / "token").write_text("s3cret\n")
    server = Served(tmp_path, "--token-file", "token")
    try:
        with pytest.raises(urllib.error.HTTPError) as caught:
            get(server, "atom=closure(e,c)")
        assert caught.value.code == 401
        assert json.loads(get(server, "atom=closure(e,c)", token="s3cret")[1])["holds"] is True
    finally:
        server.stop()
