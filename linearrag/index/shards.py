"""Shards of a build: the plan (consecutive passages, a file never split), the run on an
executor, and the staging area where every finished shard is kept durably until the commit.

Every finished shard is written under ``INDEX/staging-<key>/shard-<n>/`` (a ``DONE`` file
written last), where the key hashes the input and every build setting: a build killed midway
and started again with the same input and settings reuses the finished shards.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from ..passage import Passage
from ..progress import bar
from ..files import fsync_tree, write_durably
from .segment import SegmentData
from .executors import Executor
from .making import ShardTask, WorkerSettings, model_info, run_shard

log = logging.getLogger(__name__)


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
    config["build"] = {k: v for k, v in config["build"].items() if k != "shard_workers"}
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
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.shard_dir(number)
        shutil.rmtree(target, ignore_errors=True)   # a half-written shard of a killed build
        segment.write(target)
        fsync_tree(target)
        write_durably(target / "DONE", "ok\n")


def _run_tasks(executor: Executor, tasks: list[ShardTask], staging: Staging,
               progress: Callable[[int], object]) -> dict[str, float]:
    """Run ``tasks`` and stage each finished shard. Returns the workers' seconds per part,
    summed, and the wall time (``shards_wall``)."""
    total: dict[str, float] = {}
    t0 = time.perf_counter()
    for number, segment, timings in executor.map(run_shard, tasks):
        staging.write(number, segment)
        for k, v in timings.items():
            total[k] = total.get(k, 0.0) + v
        progress(len(segment.records))
    total["shards_wall"] = time.perf_counter() - t0
    return total


class ShardRun:
    """New segments written by :func:`run_shards`, and what the run measured."""

    def __init__(self, segs, wall, worker_timings, models, executor, shards, resumed):
        self.segs, self.wall, self.worker_timings = segs, wall, worker_timings
        self.models, self.executor, self.shards, self.resumed = models, executor, shards, resumed

    def meta(self) -> dict:
        return {"worker_seconds": {k: round(v, 3) for k, v in self.worker_timings.items()}, "shards": self.shards,
                "executor": self.executor.describe()}

    def summary(self) -> dict:
        return {"shards": self.shards, "shards_resumed": self.resumed, "workers": self.executor.workers,
                "executor": self.executor.describe(),
                "worker_seconds": {k: round(v, 2) for k, v in self.worker_timings.items()}}


def run_shards(index_dir: Path, passages: list[Passage], sources: list[str], hashes: dict[str, str],
               settings: WorkerSettings, size: int, versions: dict, generation: int,
               make_executor: Callable[[int], Executor], progress: bool) -> ShardRun:
    """Analyse and embed ``passages`` shard by shard (resuming the finished shards of an
    interrupted run with the same key), and move the finished shards into place as segments
    ``seg-<generation>-<n>`` (not yet committed). The caller closes ``run.executor``."""
    shards = plan_shards(sources, size)
    staging = Staging(index_dir, staging_key(passages, hashes, settings, size, versions))
    todo = [ShardTask(k, [passages[i] for i in rows], [sources[i] for i in rows],
                      {sources[i]: hashes[sources[i]] for i in rows})
            for k, rows in enumerate(shards) if not staging.done(k)]
    resumed = len(shards) - len(todo)
    if resumed:
        log.info("resuming: %d of %d shards of an interrupted build are done", resumed, len(shards))
    executor = make_executor(len(todo))
    try:
        with bar(len(passages), f"shards ({executor.describe()})", progress) as pbar:
            pbar.update(sum(len(shards[k]) for k in range(len(shards)) if staging.done(k)))
            worker_timings = _run_tasks(executor, todo, staging, pbar.update)
        wall = worker_timings.pop("shards_wall")
        models = executor.one(model_info)
        segs = []
        for k, rows in enumerate(shards):
            name = f"seg-{generation:06d}-{k}"
            shutil.rmtree(index_dir / name, ignore_errors=True)   # a killed commit's leftover of the same name
            os.rename(staging.shard_dir(k), index_dir / name)
            segs.append({"name": name, "passages": len(rows), "deleted": []})
    except BaseException:
        executor.close()
        raise
    return ShardRun(segs, wall, worker_timings, models, executor, len(shards), resumed)
