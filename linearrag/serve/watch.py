"""Keep an index in sync with a folder (``linearrag serve --watch DIR`` and ``linearrag watch``).

The file-system events come from watchfiles (inotify on Linux), grouped: a batch is yielded
once the folder has been quiet for ``step`` ms (at most ``debounce`` ms after its first change).
Each batch is applied as one re-sync of the folder (the writer's ``update``): new, changed,
moved and deleted files are found by their content hashes, so an editor's write-then-rename, a
``git checkout`` or a burst of 100 files is one commit (changes that arrive while it runs form
the next batch). Events inside the index directory, hidden and temporary files are ignored.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchfiles import Change, DefaultFilter, watch

from ..errors import LinearRAGError

log = logging.getLogger(__name__)

STEP_MS = 300        # quiet time that closes a batch
DEBOUNCE_MS = 1600   # the longest a batch waits for quiet


class _Filter(DefaultFilter):
    """watchfiles' default (VCS folders, caches, editor swap and backup files) plus the index
    directory and hidden files."""

    def __init__(self, ignore: list[Path]):
        super().__init__(ignore_paths=[str(p) for p in ignore])

    def __call__(self, change: Change, path: str) -> bool:
        return super().__call__(change, path) and not Path(path).name.startswith(".")


class FolderSync:
    """Applies the changes of ``folder`` with ``resync(folder)`` (a writer's update, run under
    the writer's lock) until stopped; ``on_commit`` gets each summary."""

    def __init__(self, folder: str | Path, resync: Callable[[Path], dict[str, Any]], ignore: list[Path],
                 on_commit: Callable[[dict[str, Any]], None] | None = None):
        self.folder = Path(folder).resolve()
        self.resync = resync
        self.ignore = [Path(p).resolve() for p in ignore]
        self.on_commit = on_commit
        self.commits = 0
        self.batches = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()   # set once the watcher listens

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="watch", daemon=True)
        self._thread.start()
        self.ready.wait(10)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def sync_now(self) -> dict[str, Any]:
        """One re-sync of the folder (what each batch of events triggers)."""
        t0 = time.perf_counter()
        summary = self.resync(self.folder)
        if summary.get("committed", True):
            self.commits += 1
            log.info("watch: %s → generation %s (+%s −%s, %.1f s)", self.folder, summary.get("generation"),
                     summary.get("added", 0), summary.get("removed", 0), time.perf_counter() - t0)
            if self.on_commit is not None:
                self.on_commit(summary)
        return summary

    def run(self) -> None:
        events = watch(self.folder, watch_filter=_Filter(self.ignore), step=STEP_MS, debounce=DEBOUNCE_MS,
                       stop_event=self._stop, yield_on_timeout=True, rust_timeout=500, raise_interrupt=False)
        first = True
        for changes in events:
            self.ready.set()
            if not changes and not first:   # the first round also catches what changed while nobody watched
                continue
            first = False
            self.batches += bool(changes)
            try:
                self.sync_now()
            except LinearRAGError as exc:
                log.error("watch: %s; the index is unchanged, the next change retries", exc)
            except Exception:   # noqa: BLE001 - a watcher must outlive one bad batch
                log.exception("watch: re-sync failed; the index is unchanged, the next change retries")
        self.ready.set()
