"""The server's engine: the warm index, a pool of query threads that answer waiting questions
in small batches, and one writer. Nothing here knows about HTTP.

Batching: measured on the 2wiki index (2 cores, in one process), one question at a time
45.8 q/s; two threads 71.5 q/s; two threads taking up to 8 waiting questions each 89.9 q/s —
with rankings identical to one-at-a-time answers. Threads share the GIL, so by default the
runners are worker processes (workers.py), one per core.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParameterError
from ..index.store import committed_generation
from ..mcp_server import Confinement, RetrieverPool, Writers
from ..retrieval import RetrievalParams
from .config import ServeConfig
from .workers import QueryProcess, start_processes


class Busy(Exception):
    """More questions are waiting than the server accepts (HTTP 503)."""


@dataclass
class _Job:
    questions: list[str]
    params: RetrievalParams
    future: Future = field(default_factory=Future)


Runner = Callable[[list[str], RetrievalParams], tuple[list[dict], int]]


def local_runner(pool: RetrieverPool) -> Runner:
    """Answers in this process, from the pool's retriever (the committed generation)."""
    def run(questions: list[str], params: RetrievalParams) -> tuple[list[dict], int]:
        retriever = pool.get(None)
        return [r.to_dict() for r in retriever.query_batch(questions, params)], retriever.index.generation
    return run


class QueryDispatcher:
    """One thread per runner (a runner: this process's retriever, or a worker process) answers
    queued questions; each takes the oldest job and every other waiting job with the same
    parameters, up to ``max_batch`` questions, and answers them with one ``query_batch`` (batched
    NER and embedding). Results are those of one question at a time."""

    def __init__(self, runners: list[Runner], max_batch: int, max_queue: int):
        self.max_batch, self.max_queue = max_batch, max_queue
        self._jobs: deque[_Job] = deque()
        self._waiting = 0
        self._cv = threading.Condition()
        self._stopped = False
        self.answered = 0
        self._threads = [threading.Thread(target=self._loop, args=(run,), name=f"query-{i}", daemon=True)
                         for i, run in enumerate(runners)]
        for t in self._threads:
            t.start()

    def submit(self, questions: list[str], params: RetrievalParams) -> Future:
        job = _Job(questions, params)
        with self._cv:
            if self._waiting + len(questions) > self.max_queue:
                raise Busy(f"{self._waiting} questions are waiting (limit {self.max_queue}); retry shortly")
            self._jobs.append(job)
            self._waiting += len(questions)
            self._cv.notify()
        return job.future

    async def query(self, questions: list[str], params: RetrievalParams) -> tuple[list[dict], int]:
        """The results (query JSON, and the generation they come from), without blocking the event loop."""
        return await asyncio.wrap_future(self.submit(questions, params))

    @property
    def waiting(self) -> int:
        return self._waiting

    def stop(self) -> None:
        with self._cv:
            self._stopped = True
            self._cv.notify_all()

    def _take(self) -> list[_Job] | None:
        with self._cv:
            while not self._jobs and not self._stopped:
                self._cv.wait()
            if self._stopped:
                return None
            first = self._jobs.popleft()
            batch, n = [first], len(first.questions)
            for job in list(self._jobs):
                if n + len(job.questions) > self.max_batch:
                    break
                if job.params == first.params:
                    self._jobs.remove(job)
                    batch.append(job)
                    n += len(job.questions)
            self._waiting -= n
            return batch

    def _loop(self, run: Runner) -> None:
        while (batch := self._take()) is not None:
            live = [job for job in batch if job.future.set_running_or_notify_cancel()]
            if live:
                self._answer(run, live)

    def _answer(self, run: Runner, jobs: list[_Job]) -> None:
        questions = [q for job in jobs for q in job.questions]
        try:
            results, generation = run(questions, jobs[0].params)
        except Exception as exc:   # noqa: BLE001 - each job gets its own answer or its own error
            if len(jobs) > 1:
                for job in jobs:
                    self._answer(run, [job])
                return
            jobs[0].future.set_exception(exc)
            return
        k = 0
        for job in jobs:
            job.future.set_result((results[k:k + len(job.questions)], generation))
            k += len(job.questions)
        self.answered += len(questions)


class Engine:
    """The index a server shares: queries through the dispatcher, changes through one writer
    (in its own thread, so a write never holds up a read), uploads kept under ``uploads``."""

    def __init__(self, config: ServeConfig, params: RetrievalParams):
        self.config = config
        roots = [Path(r) for r in config.roots] or [Path.cwd()]
        if config.watch:
            roots.append(Path(config.watch))
        self.jail = Confinement(roots, config.index)
        if not config.read_only:
            self.jail.roots.append(config.uploads.expanduser().resolve())
        self.index = str(Path(config.index).expanduser().resolve())
        self.pool = RetrieverPool(self.index, params, self.jail)
        self.writers = Writers(self.pool, self.jail)
        self.dispatcher: QueryDispatcher | None = None
        self.processes: list[QueryProcess] = []

    def start(self) -> None:
        """Load the index and the query models, then start the query threads: with one worker,
        ``threads`` threads over this process's retriever; with more, one worker process each
        (this process then loads models only for MCP's path and overview tools, when asked)."""
        workers = self.config.worker_processes
        if workers == 1:
            self.pool.get(None)
            runners = [local_runner(self.pool)] * self.config.threads
        else:
            self.processes = start_processes(self.index, self.pool.params, workers)
            runners = list(self.processes)
        self.dispatcher = QueryDispatcher(runners, self.config.max_batch, self.config.max_queue)

    def stop(self) -> None:
        if self.dispatcher is not None:
            self.dispatcher.stop()
        for p in self.processes:
            p.close()

    @property
    def params(self) -> RetrievalParams:
        return self.pool.params

    def generation(self) -> int | None:
        """The committed generation (what the next query answers from)."""
        return committed_generation(self.index)

    async def query(self, questions: list[str], params: RetrievalParams) -> tuple[list[dict], int]:
        for q in questions:
            if not isinstance(q, str) or not q.strip():
                raise ParameterError("empty question; pass a question with some text")
        assert self.dispatcher is not None, "Engine.start() first"
        return await asyncio.wait_for(self.dispatcher.query(questions, params), self.config.request_timeout_s)

    async def change(self, operation: str, *args: Any) -> dict[str, Any]:
        """Run a writer operation (``add``, ``remove``, ``update``) on the index; one at a time."""
        if self.config.read_only:
            raise ParameterError("this server is --read-only; the index cannot be changed through it")
        # one at a time: the writer's lock (Writers.run), shared with the MCP tools and the watcher
        return await asyncio.to_thread(self.writers.run, None, lambda w: getattr(w, operation)(*args))

    def confined(self, value: str, what: str) -> Path:
        try:
            return self.jail.path(value, what)
        except Exception as exc:   # the ToolError of the MCP confinement: same message
            raise ParameterError(str(exc)) from None
