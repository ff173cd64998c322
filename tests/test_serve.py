"""`linearrag serve` as a user runs it: a real server process on a loopback port over a real
index, real HTTP requests (httpx), the MCP tools over streamable HTTP (the SDK's client), the
folder watcher, and the search page in a real Chromium. All traffic goes to 127.0.0.1."""

import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow   # real models and indexes (scripts/test.sh --fast skips it)

ROOT = Path(__file__).resolve().parent.parent
BEATRICE = "What nationality is Beatrice I, Countess of Burgundy's husband?"
STARTUP_GUARD_S = 600      # only so that a broken server cannot hang the suite; not a speed check


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """A `linearrag serve` process on 127.0.0.1, stopped by ``close``."""

    def __init__(self, index: Path, work: Path, *flags: str, token: bool = True):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_urlsafe(24)
        args = [sys.executable, "-m", "linearrag.commands.main", "serve", str(index), "--port", str(self.port),
                "--quiet", "--root", str(work)]
        if token:
            file = work / f"token-{self.port}"
            file.write_text(self.token + "\n")
            file.chmod(0o600)
            args += ["--token-file", str(file)]
        if "--workers" not in flags:
            args += ["--workers", "1"]
        self.log = work / f"server-{self.port}.log"
        self.proc = subprocess.Popen([*args, *flags], cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "w"))
        deadline = time.monotonic() + STARTUP_GUARD_S
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(self.url + "/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server never answered"
            time.sleep(0.3)
        self.auth = {"Authorization": f"Bearer {self.token}"}

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def index_copy(sample_index, tmp_path_factory):
    work = tmp_path_factory.mktemp("serve")
    index = work / "index"
    shutil.copytree(sample_index[0], index)
    return index, work


@pytest.fixture(scope="module")
def server(index_copy):
    index, work = index_copy
    s = Served(index, work)
    yield s
    s.close()


def test_query_endpoints_answer_with_citations_and_generation(server):
    r = httpx.post(server.url + "/v1/query", json={"question": BEATRICE, "top_k": 3}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["passages"]) == 3 and isinstance(body["generation"], int)
    assert {"file", "lines", "section", "title", "id", "text"} <= set(body["passages"][0])
    assert any("Frederick" in a["entity"] for a in body["activated_entities"])
    batch = httpx.post(server.url + "/v1/query_batch", json={"questions": [BEATRICE, "Who directed West Of Shanghai?"],
                                                              "mode": "bm25"}, timeout=60).json()
    assert [res["mode"] for res in batch["results"]] == ["bm25", "bm25"]
    assert batch["results"][0]["query"] == BEATRICE
    info = httpx.get(server.url + "/v1/index").json()
    assert info["counts"]["passages"] >= 160 and info["server"]["read_only"] is False
    spec = httpx.get(server.url + "/openapi.json").json()
    assert "/v1/query" in spec["paths"] and spec["openapi"].startswith("3.")


def test_bad_requests_are_one_line_json_errors(server):
    cases = [
        (("POST", "/v1/query"), {"json": {"question": "  "}}, 400, "no question"),
        (("POST", "/v1/query"), {"json": {"question": "x", "top_k": 0}}, 400, "top_k"),
        (("POST", "/v1/query"), {"json": {"question": "x", "mode": "magic"}}, 400, "mode"),
        (("POST", "/v1/query"), {"json": {"question": "x", "colour": 1}}, 400, "unknown field 'colour'"),
        (("POST", "/v1/query"), {"json": {"question": "x", "params": {"nope": 1}}}, 400, "unknown parameter"),
        (("POST", "/v1/query"), {"content": b"{not json", "headers": {"Content-Type": "application/json"}}, 400,
         "not JSON"),
        (("POST", "/v1/query"), {"content": b'{"question": "x"}', "headers": {"Content-Type": "text/plain"}}, 415,
         "application/json"),
        (("POST", "/v1/query"), {"json": {"question": "x" * (2 * 1024 * 1024)}}, 413, "over the limit"),
        (("POST", "/v1/query_batch"), {"json": {"questions": []}}, 400, "no questions"),
        (("GET", "/v1/nothing"), {}, 404, "no such endpoint"),
        (("GET", "/v1/query"), {}, 405, "not allowed"),
    ]
    for (method, path), kwargs, status, words in cases:
        r = httpx.request(method, server.url + path, timeout=60, **kwargs)
        assert r.status_code == status, (path, kwargs.keys(), r.text)
        message = r.json()["error"]
        assert words in message and "\n" not in message and "Traceback" not in message
    # the rebinding guard: a loopback server answers only to loopback host names
    assert httpx.get(server.url + "/healthz", headers={"Host": "attacker.example"}).status_code == 400


def test_writes_need_the_token_and_change_what_queries_see(server, index_copy):
    _, work = index_copy
    doc = work / "zebra.jsonl"
    doc.write_text(json.dumps({"id": "zebra-note", "title": "Quaggafield",
                               "text": "Quaggafield is a village whose zebras were painted blue in 1911."}) + "\n")
    question = "In which year were the zebras of Quaggafield painted blue?"
    add = {"json": {"path": str(doc)}}
    assert httpx.post(server.url + "/v1/documents", **add).status_code == 401
    wrong = httpx.post(server.url + "/v1/documents", headers={"Authorization": "Bearer nope"}, **add)
    assert wrong.status_code == 401 and "invalid bearer token" in wrong.json()["error"]
    outside = httpx.post(server.url + "/v1/documents", headers=server.auth, json={"path": "/etc"}, timeout=60)
    assert outside.status_code == 400 and "outside the directories" in outside.json()["error"]
    before = httpx.post(server.url + "/v1/query", json={"question": question}, timeout=60).json()
    added = httpx.post(server.url + "/v1/documents", headers=server.auth, timeout=600, **add)
    assert added.status_code == 200, added.text
    g = added.json()["generation"]
    after = httpx.post(server.url + "/v1/query", json={"question": question}, timeout=60).json()
    assert after["generation"] == g > before["generation"]
    assert after["passages"][0]["id"] == "zebra-note"
    missing = httpx.request("DELETE", server.url + "/v1/documents", headers=server.auth, json={"ids": ["no-such"]},
                            timeout=600)
    assert missing.status_code == 404 and "no-such" in missing.json()["error"]
    removed = httpx.request("DELETE", server.url + "/v1/documents", headers=server.auth, json={"ids": ["zebra-note"]},
                            timeout=600)
    assert removed.status_code == 200 and removed.json()["removed"] == 1
    gone = httpx.post(server.url + "/v1/query", json={"question": question}, timeout=60).json()
    assert "zebra-note" not in [p["id"] for p in gone["passages"]]


def test_uploaded_files_are_indexed(server, index_copy):
    files = [("files", ("okapi.md", b"# Okapi Corner\n\nThe okapi keeper of Okapi Corner is Wilhelmina Strand.\n",
                        "text/markdown"))]
    r = httpx.post(server.url + "/v1/documents", headers=server.auth, files=files, timeout=600)
    assert r.status_code == 200, r.text
    hit = httpx.post(server.url + "/v1/query", json={"question": "Who keeps the okapi at Okapi Corner?"},
                     timeout=60).json()
    assert hit["passages"][0]["file"] == "okapi.md" and hit["passages"][0]["lines"][0] >= 1
    index, work = index_copy
    climb = httpx.post(server.url + "/v1/documents", headers=server.auth, timeout=600,
                       files=[("files", ("../../climb.md", b"# Climb\n\nA file that tries to leave.\n"))])
    assert climb.status_code == 200, climb.text           # a path is reduced to its name, never followed
    assert not (work / "climb.md").exists() and not (index.parent.parent / "climb.md").exists()
    assert len(list((index / "uploads").glob("*/climb.md"))) == 1
    hidden = httpx.post(server.url + "/v1/documents", headers=server.auth, files=[("files", (".env", b"X=1"))])
    assert hidden.status_code == 400 and "plain file name" in hidden.json()["error"]


def test_a_slow_client_does_not_stall_others(server):
    """A client that sends half a request and stops: other requests are still answered."""
    with socket.create_connection(("127.0.0.1", server.port)) as slow:
        slow.sendall(b"POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"question\": \"Who")
        for _ in range(3):
            r = httpx.post(server.url + "/v1/query", json={"question": BEATRICE}, timeout=60)
            assert r.status_code == 200


def _mcp_tools(url: str, token: str | None, call: tuple[str, dict] | None = None):
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run():
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url + "/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    names = sorted(t.name for t in (await session.list_tools()).tools)
                    result = await session.call_tool(*call) if call else None
                    return names, result

    return asyncio.run(run())


def test_mcp_over_http_reads_freely_and_writes_with_the_token(server):
    names, result = _mcp_tools(server.url, None, ("query", {"question": BEATRICE, "top_k": 2}))
    assert "query" in names and "add_documents" not in names       # no token: the reading tools only
    assert not result.is_error and len(result.structured_content["passages"]) == 2
    names, _ = _mcp_tools(server.url, server.token)
    assert {"add_documents", "remove_documents", "update_index", "build_index"} <= set(names)
    r = httpx.post(server.url + "/mcp", headers={"Authorization": "Bearer wrong", "Accept": "application/json"},
                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 401


def test_read_only_and_token_for_reads(index_copy):
    index, work = index_copy
    s = Served(index, work, "--read-only", "--token-for-reads")
    try:
        assert httpx.post(s.url + "/v1/query", json={"question": BEATRICE}, timeout=60).status_code == 401
        ok = httpx.post(s.url + "/v1/query", headers=s.auth, json={"question": BEATRICE}, timeout=60)
        assert ok.status_code == 200
        write = httpx.post(s.url + "/v1/update", headers=s.auth, json={})
        assert write.status_code == 403 and "--read-only" in write.json()["error"]
        names, _ = _mcp_tools(s.url, s.token)
        assert "add_documents" not in names
    finally:
        s.close()


def test_every_worker_sees_a_commit_at_its_next_request(index_copy):
    """Two worker processes: after a commit made through one, every answer (whichever worker
    gives it) comes from the new generation."""
    index, work = index_copy
    s = Served(index, work, "--workers", "2")
    try:
        doc = work / "heron.jsonl"
        doc.write_text(json.dumps({"id": "heron-note", "title": "Heronsgate Ferry",
                                   "text": "The Heronsgate Ferry is run by the captain Ottoline Varga."}) + "\n")
        added = httpx.post(s.url + "/v1/documents", headers=s.auth, json={"path": str(doc)}, timeout=600).json()
        with httpx.Client(timeout=60, limits=httpx.Limits(max_keepalive_connections=0)) as c:   # new connections
            answers = [c.post(s.url + "/v1/query", json={"question": "Who runs the Heronsgate Ferry?"}).json()
                       for _ in range(12)]
        assert all(a["generation"] == added["generation"] for a in answers)
        assert all(a["passages"][0]["id"] == "heron-note" for a in answers)
    finally:
        s.close()


def _wait_for(predicate, what: str):
    deadline = time.monotonic() + STARTUP_GUARD_S
    while not predicate():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.2)


def test_watch_applies_a_burst_in_few_commits_and_a_delete(tmp_path):
    """`serve --watch`: 100 new files land in at most 3 commits; a deletion, a move and an
    editor's write-then-rename are applied; the index directory's own files are ignored."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "start.md").write_text("# Start\n\nThe lighthouse of Quillmouth is painted green.\n")
    index = tmp_path / "index"
    s = Served(index, tmp_path, "--watch", str(docs))   # builds the index from the folder first
    try:
        def gen():
            return httpx.get(s.url + "/healthz").json()["generation"]

        def top(question: str) -> str:
            return httpx.post(s.url + "/v1/query", json={"question": question, "mode": "bm25"},
                              timeout=60).json()["passages"][0]["file"]

        first = gen()
        for i in range(100):
            (docs / f"note-{i:03d}.md").write_text(f"# Note {i}\n\nThe harbour bell number {i} rings at "
                                                   f"dawn in Quillmouth{i:03d}.\n")
        _wait_for(lambda: httpx.get(s.url + "/v1/index").json()["counts"]["passages"] >= 101, "the burst indexed")
        assert gen() - first <= 3
        assert top("When does the harbour bell of Quillmouth042 ring?") == "note-042.md"
        (docs / "note-042.md").unlink()
        _wait_for(lambda: top("When does the harbour bell of Quillmouth042 ring?") != "note-042.md", "the delete")
        (docs / "start.md").rename(docs / "moved.md")
        _wait_for(lambda: top("What colour is the lighthouse of Quillmouth?") == "moved.md", "the move")
        g = gen()
        tmp = docs / ".moved.md.swp"                      # an editor: write a temporary file, rename it over
        tmp.write_text("# Start\n\nThe lighthouse of Quillmouth is painted crimson.\n")
        tmp.replace(docs / "moved.md")
        _wait_for(lambda: "crimson" in httpx.post(s.url + "/v1/query", json={
            "question": "What colour is the lighthouse of Quillmouth?", "mode": "bm25"}, timeout=60).json()[
            "passages"][0]["text"], "the rename")
        assert gen() == g + 1                               # one change, one commit
    finally:
        s.close()


def _chromium() -> str:
    path = os.environ.get("LINEARRAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no chromium found: scripts/test.sh installs Debian's chromium (apt-get install chromium)")
    return path


def test_search_page_in_chromium(server):
    """Ask on the page, see passages with citations, open a chain node; nothing is fetched from
    anywhere but the server, and no console error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors, hosts = [], set()
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda req: hosts.add(req.url.split("/")[2]))
            page.goto(server.url + "/")
            page.fill("#question", BEATRICE)
            page.click("button[type=submit]")
            page.wait_for_selector("#graph[data-ready='true']", timeout=120_000)
            cards = page.locator("article.passage")
            assert cards.count() == 5
            first = cards.nth(0).locator(".cite").inner_text()
            assert first.strip()                                       # a citation per passage
            assert "relevance 100 %" in cards.nth(0).locator(".meta").inner_text()
            chain = page.locator("#chain button.entity")
            assert chain.count() >= 2
            reached = page.locator("#chain button.entity[data-level='2']").first
            name = reached.inner_text()
            reached.click()
            detail = page.locator("#details").inner_text()
            assert detail.startswith(name) and "reached through" in detail
            assert int(page.locator("#graph").get_attribute("data-nodes")) > 5
            page.evaluate("window.cy.nodes('[kind = \"passage\"]')[0].emit('tap')")
            assert "relevance" in page.locator("#details").inner_text()
            assert errors == [] and hosts == {f"127.0.0.1:{server.port}"}, (errors, hosts)
        finally:
            browser.close()


def test_watch_command_builds_then_follows_the_folder(tmp_path):
    """`linearrag watch DIR --index IDX`: builds the index, then one JSON line per commit."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nThe alpha station stands on Mount Pell.\n")
    index = tmp_path / "index"
    proc = subprocess.Popen([sys.executable, "-m", "linearrag.commands.main", "watch", str(docs), "--index",
                             str(index), "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        built = json.loads(proc.stdout.readline())
        assert built["operation"] == "build" and built["passages"] == 1
        time.sleep(1.5)   # let the watcher start listening (its first round re-syncs anyway)
        (docs / "b.md").write_text("# Beta\n\nThe beta station stands on Mount Quell.\n")
        change = json.loads(proc.stdout.readline())
        assert change["operation"] == "update" and change["added"] == 1 and change["passages"] == 2
    finally:
        proc.terminate()
        proc.wait(30)
