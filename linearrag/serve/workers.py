"""Query worker processes: each holds its own retriever over the memory-mapped index (the page
cache keeps one copy of the files) and answers the batches the server's dispatcher sends it.

Why processes fed from one queue: the GIL lets one process use ~1.3 of 2 cores on queries, and
uvicorn's own worker processes each keep their clients' connections, so a worker holding more
connections queues while the other idles (2wiki, 4 clients: 56.5 q/s against 94.8 in a lucky
spread). Here one event loop takes every request and the dispatcher hands each batch to
whichever process is free.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from ..api import open_retriever
from ..index.store import committed_generation
from ..retrieval import RetrievalParams


def _serve_batches(conn: Connection, index: str, params: dict[str, Any]) -> None:
    """A worker process's loop: (questions, params) in, (result dicts, generation) out. The
    thread settings (one BLAS thread) come with the environment the server pinned."""
    base = RetrievalParams(**params)
    retriever = open_retriever(index, base)
    conn.send(("ready", retriever.index.generation))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        questions, wanted = message
        try:
            if retriever.index.generation != committed_generation(index):   # a writer committed: answer from it
                retriever = open_retriever(index, base, previous=retriever)
            results = retriever.query_batch(questions, RetrievalParams(**wanted))
            conn.send(("ok", ([r.to_dict() for r in results], retriever.index.generation)))
        except Exception as exc:   # noqa: BLE001 - sent back to the request that asked
            conn.send(("error", exc))


class QueryProcess:
    """One worker process and the pipe to it; ``__call__`` answers one batch (one caller at a
    time: the dispatcher gives each process its own thread)."""

    def __init__(self, index: str, params: RetrievalParams):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve_batches, args=(child, index, params.to_dict()), daemon=True,
                                   name="linearrag-query")
        self.process.start()
        child.close()

    def wait_ready(self) -> int:
        status, generation = self.conn.recv()
        return generation

    def __call__(self, questions: list[str], params: RetrievalParams) -> tuple[list[dict], int]:
        self.conn.send((questions, params.to_dict()))
        try:
            status, payload = self.conn.recv()
        except EOFError:
            raise RuntimeError("a query worker process ended; restart the server") from None
        if status == "error":
            raise payload
        return payload

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


def start_processes(index: str, params: RetrievalParams, n: int) -> list[QueryProcess]:
    """``n`` worker processes, started together (they load their models in parallel)."""
    processes = [QueryProcess(index, params) for _ in range(n)]
    for p in processes:
        p.wait_ready()
    return processes
