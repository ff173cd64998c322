"""Sharded builds: the corpus is cut into shards, each analysed and embedded on its own into a
segment (the same unit an ``--add`` writes), then one commit merges them (``merge.py``).

Shards run in one of three executors behind one small interface (:func:`executor`):

* ``serial`` — in this process, with the writer's models;
* ``process`` — ``--workers N`` processes (spawned, models loaded once per worker, torch
  threads split between them);
* ``ray`` — Ray actors (models loaded once per actor) on a local Ray instance (``--ray local``)
  or an existing cluster (``--ray ADDRESS``); results come back to the driver, which writes them.

Every finished shard is written durably under ``INDEX/staging-<key>/shard-<n>/`` (a ``DONE``
file written last), where the key hashes the input and every build setting: a build killed
midway and started again with the same input and settings reuses the finished shards.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .corpus import Passage
from .files import fsync_tree, write_durably
from .segment import SegmentData

DEFAULT_SHARD_PASSAGES = 500


@dataclass(frozen=True)
class WorkerSettings:
    """What a shard worker needs to load its models and analyse passages like the driver would."""

    lang: str
    spacy_model: str | None
    terms: bool
    embedding_model: str
    precision: str
    device: str
    build: dict
    threads: int | None = None


@dataclass
class ShardTask:
    number: int
    passages: list[Passage]
    sources: list[str]
    hashes: dict[str, str]


def plan_shards(sources: list[str], size: int) -> list[list[int]]:
    """Passage numbers per shard: consecutive, about ``size`` each, never splitting a source
    (a file's passages stay together)."""
    shards: list[list[int]] = []
    current: list[int] = []
    for i, src in enumerate(sources):
        if current and len(current) >= size and src != sources[i - 1]:
            shards.append(current)
            current = []
        current.append(i)
    if current:
        shards.append(current)
    return shards


def staging_key(passages: list[Passage], hashes: dict[str, str], settings: WorkerSettings, size: int,
                versions: dict) -> str:
    """Identifies a build's input and settings: equal keys, interchangeable shards."""
    h = hashlib.sha256()
    for p in passages:
        for part in (p.id, p.title, p.text):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
    config = dict(asdict(settings), threads=None, shard_passages=size, hashes=hashes, versions=versions)
    config["build"] = {k: v for k, v in settings.build.items() if k != "workers"}
    h.update(json.dumps(config, sort_keys=True, default=str).encode("utf-8"))
    return h.hexdigest()[:20]


class Staging:
    """Finished shards of one build, kept until the build commits."""

    def __init__(self, index_dir: Path, key: str):
        self.root = index_dir / f"staging-{key}"

    def shard_dir(self, number: int) -> Path:
        return self.root / f"shard-{number:05d}"

    def done(self, number: int) -> bool:
        return (self.shard_dir(number) / "DONE").exists()

    def write(self, number: int, segment: SegmentData) -> None:
        import shutil

        self.root.mkdir(parents=True, exist_ok=True)
        target = self.shard_dir(number)
        shutil.rmtree(target, ignore_errors=True)   # a half-written shard of a killed build
        segment.write(target)
        fsync_tree(target)
        write_durably(target / "DONE", "ok\n")


class ShardWorker:
    """Loads the models once; turns shard tasks into segments."""

    def __init__(self, settings: WorkerSettings, analyzer=None, encoder=None):
        self.settings = settings
        self._analyzer = analyzer
        self._encoder = encoder

    @property
    def analyzer(self):
        if self._analyzer is None:
            from .analysis import Analyzer

            self._analyzer = Analyzer(self.settings.lang, self.settings.spacy_model, terms=self.settings.terms)
        return self._analyzer

    @property
    def encoder(self):
        if self._encoder is None:
            from .encoders import load_encoder

            self._encoder = load_encoder(self.settings.embedding_model, precision=self.settings.precision,
                                         device=self.settings.device)
        return self._encoder

    def run(self, task: ShardTask, ner_processes: int = 1) -> tuple[int, SegmentData, dict]:
        from .build import make_segment

        timings: dict[str, float] = {}
        build = dict(self.settings.build, workers=ner_processes)
        segment = make_segment(task.passages, task.sources, task.hashes, self.analyzer, LazyEncoder(lambda: self.encoder),
                               build, False, timings, threads=self.settings.threads)
        return task.number, segment, timings

    def embed_names(self, names: list[str], batch_size: int) -> np.ndarray:
        from .encoders import torch_threads

        with torch_threads(self.settings.threads):
            return self.encoder.encode_names(names, batch_size)

    def versions(self) -> dict:
        from .build import _ner_meta

        enc = self.encoder
        return {"ner": _ner_meta(self.analyzer), "embedding": {"model": enc.name, "version": enc.version,
                                                                 "dim": enc.dim, "precision": enc.precision,
                                                                 "mean_pooling": bool(enc.mean_pooling)}}


class LazyEncoder:
    """An encoder loaded on first use (after NER, whose worker processes are forked), its load
    time recorded in ``timings`` when given."""

    def __init__(self, load, timings: dict | None = None):
        self._load, self._timings, self._encoder = load, timings, None

    def _get(self):
        if self._encoder is None:
            t0 = time.perf_counter()
            self._encoder = self._load()
            if self._timings is not None:
                self._timings["load_embedder"] = time.perf_counter() - t0
        return self._encoder

    def __getattr__(self, name):
        return getattr(self._get(), name)


# ---- process pool ------------------------------------------------------------------------

_WORKER: ShardWorker | None = None


def _init_worker(settings: WorkerSettings) -> None:
    global _WORKER
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("OMP_NUM_THREADS", str(settings.threads or 1))
    import torch

    torch.set_num_threads(settings.threads or 1)
    _WORKER = ShardWorker(settings)


def _run_task(task: ShardTask):
    return _WORKER.run(task)


def _embed_task(names: list[str], batch_size: int) -> np.ndarray:
    return _WORKER.embed_names(names, batch_size)


def _versions_task() -> dict:
    return _WORKER.versions()


class Executor:
    """Runs shard tasks; yields (number, segment, timings) as shards finish."""

    workers = 1

    def map(self, tasks: list[ShardTask]) -> Iterator[tuple[int, SegmentData, dict]]:
        raise NotImplementedError

    def embed_names(self, names: list[str], batch_size: int) -> np.ndarray:
        raise NotImplementedError

    def versions(self) -> dict:
        """The models' names, versions and dimension, as the index records them."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


class SerialExecutor(Executor):
    def __init__(self, worker: ShardWorker, ner_processes: Callable[[ShardTask], int]):
        self.worker, self.ner_processes = worker, ner_processes

    def map(self, tasks):
        for task in tasks:
            yield self.worker.run(task, self.ner_processes(task))

    def embed_names(self, names, batch_size):
        from .encoders import torch_threads

        with torch_threads(None):
            return self.worker.embed_names(names, batch_size)

    def versions(self):
        return self.worker.versions()

    def describe(self):
        return "this process"


class ProcessExecutor(Executor):
    def __init__(self, settings: WorkerSettings, workers: int):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        cores = os.cpu_count() or 1
        settings = WorkerSettings(**{**asdict(settings), "threads": max(1, cores // workers)})
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_init_worker, initargs=(settings,))

    def map(self, tasks):
        from concurrent.futures import as_completed

        futures = [self.pool.submit(_run_task, t) for t in tasks]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for f in futures:
                f.cancel()

    def embed_names(self, names, batch_size):
        chunks = _split(names, self.workers)
        parts = [self.pool.submit(_embed_task, c, batch_size) for c in chunks]
        return np.concatenate([p.result() for p in parts]) if parts else np.zeros((0, 0), np.float32)

    def versions(self):
        return self.pool.submit(_versions_task).result()

    def describe(self):
        return f"{self.workers} worker processes"

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor(Executor):
    """Shard work on Ray actors (one model copy per actor)."""

    def __init__(self, settings: WorkerSettings, workers: int | None, address: str):
        try:
            import ray
        except ModuleNotFoundError:
            from .errors import CorpusError

            raise CorpusError("--ray needs the Ray extra: install linearrag[ray] (uv sync --extra ray)") from None
        self.ray = ray
        if address == "local":
            cpus = workers or os.cpu_count() or 1
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
                     ignore_reinit_error=True)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False, ignore_reinit_error=True)
        self._owns = True
        total = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or total
        threads = max(1, total // self.workers)
        settings = WorkerSettings(**{**asdict(settings), "threads": threads})
        actor = ray.remote(num_cpus=1)(_RayShardActor)
        self.actors = [actor.remote(settings) for _ in range(self.workers)]

    def map(self, tasks):
        from ray.util import ActorPool

        pool = ActorPool(self.actors)
        yield from pool.map_unordered(lambda a, t: a.run.remote(t), tasks)

    def embed_names(self, names, batch_size):
        chunks = _split(names, len(self.actors))
        refs = [a.embed_names.remote(c, batch_size) for a, c in zip(self.actors, chunks)]
        parts = self.ray.get(refs)
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def versions(self):
        return self.ray.get(self.actors[0].versions.remote())

    def describe(self):
        return f"{self.workers} Ray actors"

    def close(self):
        for a in self.actors:
            self.ray.kill(a)
        self.ray.shutdown()


class _RayShardActor:
    def __init__(self, settings: WorkerSettings):
        _init_worker(settings)

    def run(self, task: ShardTask):
        return _WORKER.run(task)

    def embed_names(self, names: list[str], batch_size: int) -> np.ndarray:
        return _WORKER.embed_names(names, batch_size)

    def versions(self) -> dict:
        return _WORKER.versions()


def _split(items: list, n: int) -> list[list]:
    n = max(1, min(n, len(items)))
    size = -(-len(items) // n)
    return [items[i:i + size] for i in range(0, len(items), size)]


def timed_map(executor: Executor, tasks: list[ShardTask], on_done: Callable[[int, SegmentData, dict], None],
              progress) -> dict[str, float]:
    """Run ``tasks``; ``on_done`` writes each finished shard. Returns summed worker seconds."""
    total: dict[str, float] = {}
    t0 = time.perf_counter()
    for number, segment, timings in executor.map(tasks):
        on_done(number, segment, timings)
        for k, v in timings.items():
            total[k] = total.get(k, 0.0) + v
        progress(len(segment.records))
    total["shards_wall"] = time.perf_counter() - t0
    return total
