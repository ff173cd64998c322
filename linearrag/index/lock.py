"""The writer's lock: one writer at a time, and what a killed writer left swept away."""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import sys
from pathlib import Path

from .directory import collect_garbage
from ..errors import IndexFormatError, write_failure
from .store import LOCK, current_generation

log = logging.getLogger(__name__)


class WriteLock:
    """An exclusive ``flock`` on ``INDEX/LOCK``: one writer at a time. With ``wait`` a second
    writer blocks until the first is done (saying so on stderr); without, it fails at once."""

    def __init__(self, path: Path, wait: bool = True, on_wait=None):
        self.path, self.wait, self.on_wait = Path(path), wait, on_wait
        self._fd: int | None = None

    def __enter__(self) -> WriteLock:
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            if not self.wait:
                os.close(fd)
                raise IndexFormatError(f"{self.path}: another process is writing this index; try again when it "
                                       "is done (or let this one wait: drop --no-wait)") from None
            if self.on_wait:
                self.on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def remove_staging(path: Path) -> None:
    """Remove the staged shards of builds that committed or were abandoned."""
    for stale in path.glob("staging-*"):
        shutil.rmtree(stale, ignore_errors=True)


class LockAndClean:
    """The write lock, then a sweep of what a killed writer left (nothing else can be writing).
    An OSError while writing (disk full, quota, file-size limit, read-only, …) leaves with the
    partial generation removed at once and a one-line :class:`StoreWriteError`."""

    def __init__(self, path: Path, wait: bool):
        def waiting():
            print(f"waiting for another writer of {path} to finish…", file=sys.stderr, flush=True)

        self.lock, self.path = WriteLock(path, wait=wait, on_wait=waiting), path
        self.before: str | None = None

    def __enter__(self):
        self.lock.__enter__()
        try:
            self.before = current_generation(self.path)
            collect_garbage(self.path)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if isinstance(exc, OSError):
                committed = current_generation(self.path) != self.before
                if not committed:
                    self._sweep()
                raise write_failure(exc, self.path, committed) from None
        finally:
            self.lock.__exit__(exc_type, exc, tb)

    def _sweep(self) -> None:
        """Remove what the failed operation wrote (its segments, global layer, staged shards)."""
        try:
            collect_garbage(self.path)
            remove_staging(self.path)
        except OSError as exc:
            log.warning("could not remove the partial generation (%s); the next writer will", exc)
