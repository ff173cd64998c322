"""Nothing lost, nothing leaked: a user's files beside and inside an index survive every write,
sources are remembered across adds, I/O failures are one line with the index unchanged, and
the MCP server reads and writes only inside its roots (real models, real subprocesses)."""

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from linearrag.index.store import load_index

from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

SCRIPTS = ROOT / "scripts"
NOTES = EXAMPLES / "team-notes" / "notes"


# A process whose files may not grow past 20,000 bytes (RLIMIT_FSIZE). It writes no bytecode:
# under the limit CPython's cache writer stores a cut .pyc (a short write it does not check),
# which would break every later import of that module.
LIMITED = ("import resource, runpy, sys; sys.dont_write_bytecode = True; "
           "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000)); "
           "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def _run(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT, **kw)


def _plant(place):
    """A user's files: a document and a folder with a file in it."""
    place.mkdir(parents=True, exist_ok=True)
    (place / "thesis.docx").write_text("draft")
    (place / "photos").mkdir(exist_ok=True)
    (place / "photos" / "1.jpg").write_text("x")


def _intact(place):
    return (place / "thesis.docx").read_text() == "draft" and (place / "photos" / "1.jpg").read_text() == "x"


def _one_error_line(proc):
    lines = proc.stderr.strip().splitlines()
    return proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ")


def _docs(tmp_path):
    """Two folders of Markdown notes (the team-notes sample, split)."""
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    b.mkdir()
    for k, f in enumerate(sorted(NOTES.glob("*.md"))):
        shutil.copy(f, (a if k % 2 == 0 else b) / f.name.replace(".md", f"-{k}.md"))
    return a, b


def _files(idx):
    return sorted({pid.rsplit("#", 1)[0] for pid in load_index(idx).passage_ids})


def test_a_folder_with_foreign_files_is_refused_and_kept(tmp_path):
    """The issue's case: a folder holding meta.json and LOCK is not an index; nothing is deleted."""
    out = tmp_path / "v"
    _plant(out)
    (out / "meta.json").write_text("{}")
    (out / "LOCK").write_text("")
    proc = _run(SCRIPTS / "build_graph.py", "--input", EXAMPLES / "2wiki-sample" / "corpus.jsonl",
                "--output", out, "--quiet")
    assert _one_error_line(proc) and "not an index" in proc.stderr and "thesis.docx" in proc.stderr
    assert _intact(out) and sorted(p.name for p in out.iterdir()) == ["LOCK", "meta.json", "photos", "thesis.docx"]


def test_user_files_inside_and_beside_survive_every_write(tmp_path):
    a, b = _docs(tmp_path)
    idx = tmp_path / "idx"
    _plant(tmp_path)
    build = _run(SCRIPTS / "build_graph.py", "--input", a, "--output", idx, "--quiet")
    assert build.returncode == 0, build.stderr
    _plant(idx)   # a user keeps notes inside the index directory
    steps = [["--add", b], ["--remove", _files(idx)[0]], ["--update"], ["--compact"]]
    for step in steps:
        proc = _run(SCRIPTS / "build_graph.py", "--output", idx, *step, "--quiet")
        assert proc.returncode == 0, (step, proc.stderr)
        assert _intact(idx) and _intact(tmp_path), step
    # a failed build (no documents) and a rebuild over the index keep them too
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = _run(SCRIPTS / "build_graph.py", "--input", empty, "--output", idx, "--quiet")
    assert _one_error_line(proc) and _intact(idx)
    proc = _run(SCRIPTS / "build_graph.py", "--input", a, "--output", idx, "--quiet")
    assert proc.returncode == 0 and _intact(idx) and _intact(tmp_path)
    # a build killed part-way, then run again
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    killed = subprocess.Popen([sys.executable, SCRIPTS / "build_graph.py", "--input", EXAMPLES / "2wiki-sample" /
                               "corpus.jsonl", "--output", idx, "--quiet"], cwd=ROOT, env=env)
    time.sleep(4)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert _intact(idx) and _intact(tmp_path)
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", _files(idx)[0], "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert _intact(idx) and _intact(tmp_path)


def test_update_keeps_documents_added_from_another_folder(tmp_path):
    """MCP add_documents of a second folder, then CLI --update: both folders stay; a file deleted
    in either folder is dropped by the next --update, and only that file."""
    a, b = _docs(tmp_path)
    idx = tmp_path / "idx"
    assert _run(SCRIPTS / "build_graph.py", "--input", a, "--output", idx, "--quiet").returncode == 0
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["scripts/mcp_server.py", "--index", str(idx), "--root", str(tmp_path)])

    async def add():
        async with Client(params, read_timeout_seconds=300) as client:
            res = await client.call_tool("add_documents", {"path": str(b)})
            assert not res.is_error, res.content

    asyncio.run(add())
    both = sorted(p.name for p in [*a.iterdir(), *b.iterdir()])
    assert _files(idx) == both
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--update", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["committed"] is False, proc.stderr
    assert _files(idx) == both
    assert load_index(idx).meta["inputs"] == sorted([str(a), str(b)])
    for folder in (a, b):
        victim = sorted(folder.iterdir())[0]
        victim.unlink()
        both.remove(victim.name)
        proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--update", "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["files_removed"] == 1 and _files(idx) == both
    # a source folder that vanished drops nothing: its documents stay, with a warning
    shutil.rmtree(b)
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--update")
    assert proc.returncode == 0 and "is missing" in proc.stderr and _files(idx) == both


def test_disk_write_failure_is_one_line_and_leaves_the_index_unchanged(tmp_path):
    a, b = _docs(tmp_path)
    idx = tmp_path / "idx"
    assert _run(SCRIPTS / "build_graph.py", "--input", a, "--output", idx, "--quiet").returncode == 0
    before = sorted(p.name for p in idx.iterdir())
    limited = LIMITED
    proc = _run("-c", limited, SCRIPTS / "build_graph.py", "--output", idx, "--add", b, "--quiet")
    assert _one_error_line(proc) and "file too large" in proc.stderr and "index is unchanged" in proc.stderr
    assert sorted(p.name for p in idx.iterdir()) == before
    assert _run("-m", "linearrag.commands.main", "check", idx).returncode == 0


def test_mcp_server_is_confined_to_its_roots(tmp_path, sample_index):
    """Symlink out, '..', an absolute path outside, a build outside; --read-only has no writers."""
    allowed = tmp_path / "allowed"
    docs = allowed / "docs"
    docs.mkdir(parents=True)
    (docs / "note.md").write_text("# Note\n\nThe kettle is in the second cupboard of the office kitchen.\n")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwd.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (docs / "passwd.txt").symlink_to(secret / "passwd.txt")
    idx = allowed / "idx"
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["scripts/mcp_server.py", "--lazy", "--root", str(allowed)])

    async def scenario():
        async with Client(params, read_timeout_seconds=300) as client:
            res = await client.call_tool("build_index", {"input": str(docs), "output": str(idx)})
            assert not res.is_error, res.content
            found = await client.call_tool("query", {"question": "root:x:0:0", "index": str(idx), "mode": "bm25"})
            texts = " ".join(p["text"] for p in json.loads(found.content[0].text)["passages"])
            assert "root:x:0:0" not in texts
            for tool, args in [("add_documents", {"path": str(secret), "index": str(idx)}),
                               ("add_documents", {"path": str(allowed / ".." / "secret"), "index": str(idx)}),
                               ("build_index", {"input": str(docs), "output": str(tmp_path / "elsewhere")}),
                               ("query", {"question": "x", "index": str(sample_index[0])}),
                               ("update_index", {"input": str(secret), "index": str(idx)})]:
                bad = await client.call_tool(tool, args)
                text = bad.content[0].text
                assert bad.is_error and "outside the directories" in text and "\n" not in text, (tool, text)
            assert not (tmp_path / "elsewhere").exists()

    asyncio.run(scenario())
    ro = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                               args=["scripts/mcp_server.py", "--lazy", "--read-only", "--index", str(idx)])

    async def read_only():
        async with Client(ro, read_timeout_seconds=300) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "query" in names and not names & {"build_index", "add_documents", "remove_documents",
                                                     "update_index"}

    asyncio.run(read_only())


def test_mcp_write_failure_is_the_same_one_line_message(tmp_path):
    """Over MCP a failed write carries the CLI's message (was a bare "Error executing tool")."""
    a, b = _docs(tmp_path)
    idx = tmp_path / "idx"
    assert _run(SCRIPTS / "build_graph.py", "--input", a, "--output", idx, "--quiet").returncode == 0
    limited = LIMITED
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["-c", limited, "scripts/mcp_server.py", "--index", str(idx),
                                         "--root", str(tmp_path), "--lazy"])

    async def scenario():
        async with Client(params, read_timeout_seconds=300) as client:
            res = await client.call_tool("add_documents", {"path": str(b)})
            text = res.content[0].text
            assert res.is_error and "\n" not in text and "file too large" in text and "unchanged" in text, text

    asyncio.run(scenario())
    assert load_index(idx).generation == 1
