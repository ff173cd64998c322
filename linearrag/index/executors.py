"""Where shard work runs, behind one small interface: an :class:`Executor` holds one
:class:`~.making.ShardWorker` per process and runs the callables it is given on them.

* :class:`SerialExecutor` — in this process, with the writer's models;
* :class:`ProcessExecutor` — ``--workers N`` spawned processes (models loaded once per process,
  torch threads split between them);
* :class:`RayExecutor` — Ray actors (models loaded once per actor) on a local Ray instance
  (``--ray local``) or an existing cluster (``--ray ADDRESS``); results come back to the driver.

A callable is a module-level function ``fn(worker, item)`` (it travels to other processes by
name): ``map`` runs it on many items as workers free up, ``each`` on one chunk per worker,
``one`` once.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from typing import Any

from ..encoders.torch_env import set_threads
from ..errors import CorpusError
from .making import ShardWorker, WorkerSettings

Work = Callable[..., Any]


class Executor:
    workers = 1

    def map(self, fn: Work, items: list) -> Iterator[Any]:
        """``fn(worker, item)`` for every item, in the order they finish."""
        raise NotImplementedError

    def each(self, fn: Work, chunks: list) -> list:
        """``fn(worker, chunk)``, one chunk per worker, results in chunk order."""
        raise NotImplementedError

    def one(self, fn: Work) -> Any:
        """``fn(worker)`` on one worker."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


class SerialExecutor(Executor):
    def __init__(self, worker: ShardWorker):
        self.worker = worker

    def map(self, fn, items):
        for item in items:
            yield fn(self.worker, item)

    def each(self, fn, chunks):
        return [fn(self.worker, chunk) for chunk in chunks]

    def one(self, fn):
        return fn(self.worker)

    def describe(self):
        return "this process"


# ---- process pool ------------------------------------------------------------------------

_WORKER: ShardWorker | None = None


def _init_worker(settings: WorkerSettings) -> None:
    global _WORKER
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("OMP_NUM_THREADS", str(settings.threads or 1))
    set_threads(settings.threads or 1)
    _WORKER = ShardWorker(settings)


def _call(fn: Work, *args):
    return fn(_WORKER, *args)


class ProcessExecutor(Executor):
    def __init__(self, settings: WorkerSettings, workers: int):
        self.workers = workers
        cores = os.cpu_count() or 1
        settings = replace(settings, threads=max(1, cores // workers))
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_init_worker, initargs=(settings,))

    def map(self, fn, items):
        futures = [self.pool.submit(_call, fn, item) for item in items]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for f in futures:
                f.cancel()

    def each(self, fn, chunks):
        # a process pool gives no way to address one process: chunks go to whichever is free
        return [f.result() for f in [self.pool.submit(_call, fn, chunk) for chunk in chunks]]

    def one(self, fn):
        return self.pool.submit(_call, fn).result()

    def describe(self):
        return f"{self.workers} worker processes"

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor(Executor):
    """Shard work on Ray actors (one model copy per actor)."""

    def __init__(self, settings: WorkerSettings, workers: int | None, address: str):
        try:
            import ray   # optional: the ray extra
        except ModuleNotFoundError:
            raise CorpusError("--ray needs the Ray extra: install linearrag[ray] (uv sync --extra ray)") from None
        self.ray = ray
        if address == "local":
            cpus = workers or os.cpu_count() or 1
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
                     ignore_reinit_error=True)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False, ignore_reinit_error=True)
        total = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or total
        settings = replace(settings, threads=max(1, total // self.workers))
        actor = ray.remote(num_cpus=1)(_RayWorker)
        self.actors = [actor.remote(settings) for _ in range(self.workers)]

    def map(self, fn, items):
        from ray.util import ActorPool   # optional: the ray extra

        pool = ActorPool(self.actors)
        yield from pool.map_unordered(lambda a, item: a.call.remote(fn, item), items)

    def each(self, fn, chunks):
        return self.ray.get([a.call.remote(fn, c) for a, c in zip(self.actors, chunks)])

    def one(self, fn):
        return self.ray.get(self.actors[0].call.remote(fn))

    def describe(self):
        return f"{self.workers} Ray actors"

    def close(self):
        for a in self.actors:
            self.ray.kill(a)
        self.ray.shutdown()


class _RayWorker:
    def __init__(self, settings: WorkerSettings):
        _init_worker(settings)

    def call(self, fn: Work, *args):
        return _call(fn, *args)


def split(items: list, n: int) -> list[list]:
    """``items`` in at most ``n`` consecutive chunks of near-equal size."""
    n = max(1, min(n, len(items)))
    size = -(-len(items) // n)
    return [items[i:i + size] for i in range(0, len(items), size)]
