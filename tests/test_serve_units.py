"""The server's parts that need no model: settings checks, the token, the query dispatcher
(batching, isolation of a failing question, the queue limit), and the refusal to bind to the
network without a token (a real process, before any index or model loads)."""

import os
import socket
import subprocess
import sys
import threading
from concurrent.futures import wait
from pathlib import Path

import pytest

from linearrag.errors import ParameterError
from linearrag.retrieval import RetrievalParams
from linearrag.serve.app import Auth
from linearrag.serve.config import ServeConfig, is_loopback, read_token
from linearrag.serve.engine import Busy, QueryDispatcher

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "s3cret-token-0123456789"


def test_loopback_addresses_and_names():
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org", "10.0.0.1"):
        assert not is_loopback(host), host


def test_network_bind_needs_a_token(tmp_path):
    with pytest.raises(ParameterError, match="--token-file"):
        ServeConfig(index=str(tmp_path), host="0.0.0.0")
    ServeConfig(index=str(tmp_path), host="0.0.0.0", token=TOKEN)       # with a token: allowed
    with pytest.raises(ParameterError, match="--token-for-reads needs"):
        ServeConfig(index=str(tmp_path), token_for_reads=True)
    with pytest.raises(ParameterError, match="--read-only"):
        ServeConfig(index=str(tmp_path), watch=str(tmp_path), read_only=True)
    with pytest.raises(ParameterError, match="--port"):
        ServeConfig(index=str(tmp_path), port=70000)


def test_token_file_rules(tmp_path):
    good = tmp_path / "token"
    good.write_text(f"  {TOKEN}  \nsecond line ignored\n")
    good.chmod(0o600)
    assert read_token(good) == TOKEN
    with pytest.raises(ParameterError, match="no such file"):
        read_token(tmp_path / "missing")
    short = tmp_path / "short"
    short.write_text("abc\n")
    short.chmod(0o600)
    with pytest.raises(ParameterError, match="at least 16"):
        read_token(short)
    open_to_all = tmp_path / "open"
    open_to_all.write_text(TOKEN)
    open_to_all.chmod(0o644)
    with pytest.raises(ParameterError, match="chmod 600"):
        read_token(open_to_all)


def test_bearer_checks_are_exact():
    auth = Auth(TOKEN, for_reads=False)
    assert auth.valid(None) is None
    assert auth.valid(f"Bearer {TOKEN}") is True
    assert auth.valid(f"bearer {TOKEN}") is True
    assert auth.valid(f"Bearer {TOKEN}x") is False
    assert auth.valid(f"Basic {TOKEN}") is False
    assert Auth(None, False).valid(f"Bearer {TOKEN}") is False   # no token configured: nothing is valid


def test_cli_refuses_a_network_bind_without_token_before_loading(tmp_path):
    """One error line, exit 2, no traceback — and the index is never opened (it does not exist)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "linearrag.commands.main", "serve", str(tmp_path / "nothing"),
                           "--host", "0.0.0.0"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --host 0.0.0.0 reaches the network"), proc.stderr


class _FakeIndex:
    generation = 7


class _FakeRetriever:
    """Answers each question with its upper-case form; "boom" fails; records batch sizes."""

    def __init__(self, gate: threading.Event):
        self.index, self.batches, self.gate = _FakeIndex(), [], gate

    def query_batch(self, questions, params):
        self.gate.wait()
        self.batches.append(list(questions))
        if "boom" in questions:
            raise ValueError("boom")
        return [q.upper() for q in questions]


def _runner(retriever):
    return lambda questions, params: (retriever.query_batch(questions, params), retriever.index.generation)


def test_dispatcher_batches_waiting_questions_and_isolates_a_failure():
    gate = threading.Event()
    retriever = _FakeRetriever(gate)
    d = QueryDispatcher([_runner(retriever)], max_batch=4, max_queue=100)
    try:
        params, other = RetrievalParams(), RetrievalParams(top_k=3)
        first = d.submit(["a"], params)            # taken alone: the thread then waits on the gate
        while d.waiting:                            # until the thread has taken it
            threading.Event().wait(0.01)
        later = [d.submit([q], params) for q in ("b", "c", "boom", "d", "e")] + [d.submit(["x"], other)]
        gate.set()
        wait([first, *later])
        assert first.result() == (["A"], 7)
        assert [later[i].result() for i in (0, 1, 3, 4, 5)] == [(["B"], 7), (["C"], 7), (["D"], 7), (["E"], 7),
                                                                 (["X"], 7)]
        with pytest.raises(ValueError, match="boom"):                      # only the failing question fails
            later[2].result()
        sizes = [len(b) for b in retriever.batches]
        assert max(sizes) <= 4 and any(s > 1 for s in sizes)                 # batched, never over the limit
        assert all(("x" not in b) or b == ["x"] for b in retriever.batches)  # other parameters: own batch
    finally:
        d.stop()


def test_dispatcher_queue_limit_is_busy():
    gate = threading.Event()
    d = QueryDispatcher([_runner(_FakeRetriever(gate))], max_batch=1, max_queue=2)
    try:
        d.submit(["a", "b"], RetrievalParams())
        with pytest.raises(Busy):
            for _ in range(3):
                d.submit(["c"], RetrievalParams())
    finally:
        gate.set()
        d.stop()


def test_cli_refuses_a_port_in_use_before_loading(tmp_path):
    """A port another process listens on is one error line, before any index or model loads."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-m", "linearrag.commands.main", "serve", str(tmp_path / "nothing"),
                               "--port", str(port)], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot listen on 127.0.0.1:{port}"), proc.stderr
