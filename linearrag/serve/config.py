"""The server's settings, checked before the index or any model loads."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParameterError

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) only accepts connections from this machine."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False   # a host name or a wildcard (0.0.0.0, ::) reaches the network


def read_token(path: str | Path) -> str:
    """The bearer token: the first line of ``path``, whitespace stripped; a missing, empty or
    world-readable file is a one-line error."""
    file = Path(path).expanduser()
    try:
        first = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ParameterError(f"--token-file {path}: no such file; write a long random token into it "
                             "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE`)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"--token-file {path}: cannot read it ({exc}); pass a readable text file") from None
    token = first[0].strip() if first else ""
    if len(token) < 16:
        raise ParameterError(f"--token-file {path}: the first line must hold a token of at least 16 characters "
                             f"(found {len(token)}); write a long random one")
    if os.name == "posix" and file.stat().st_mode & 0o004:
        raise ParameterError(f"--token-file {path}: readable by every user of this machine; chmod 600 {path}")
    return token


@dataclass
class ServeConfig:
    """What ``linearrag serve`` was asked for (see commands/serve.py for each flag)."""

    index: str
    host: str = "127.0.0.1"
    port: int = 8765
    roots: list[str] = field(default_factory=list)
    token: str | None = None
    token_for_reads: bool = False
    read_only: bool = False
    watch: str | None = None
    cors_origins: list[str] = field(default_factory=list)
    workers: int = 0              # worker processes; 0: one per core
    threads: int = 1              # query threads per worker
    max_batch: int = 8            # questions answered together by one thread
    max_queue: int = 1024         # questions waiting; more is HTTP 503
    request_timeout_s: float = 30.0
    max_body_mb: float = 1.0      # JSON bodies
    max_upload_mb: float = 50.0   # uploaded documents, all files of one request together
    upload_dir: str | None = None
    quiet: bool = False           # no request log

    def __post_init__(self):
        if not 0 < self.port < 65536:
            raise ParameterError(f"--port {self.port}: must be 1–65535")
        if self.workers < 0 or self.threads < 1 or self.max_batch < 1 or self.max_queue < 1:
            raise ParameterError("--workers must be ≥ 0 and --threads, --max-batch, --max-queue ≥ 1")
        if self.request_timeout_s <= 0 or self.max_body_mb <= 0 or self.max_upload_mb <= 0:
            raise ParameterError("--request-timeout, --max-body-mb and --max-upload-mb must be > 0")
        if self.token is None and not is_loopback(self.host):
            raise ParameterError(f"--host {self.host} reaches the network, and no --token-file was given: anyone "
                                 "who can reach the port could change the index; pass --token-file FILE "
                                 "(and --token-for-reads to guard reads too), or bind to 127.0.0.1")
        if self.token_for_reads and self.token is None:
            raise ParameterError("--token-for-reads needs --token-file FILE")
        for root in self.roots:
            if not Path(root).is_dir():
                raise ParameterError(f"--root {root}: not a directory; pass an existing directory")
        if self.watch is not None and self.read_only:
            raise ParameterError("--watch changes the index, --read-only forbids it; choose one")
        if self.watch is not None and not Path(self.watch).is_dir():
            raise ParameterError(f"--watch {self.watch}: not a directory; pass the folder to keep in sync")

    @property
    def worker_processes(self) -> int:
        return self.workers or max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                   else os.cpu_count() or 1)

    @property
    def uploads(self) -> Path:
        """Where uploaded documents are kept: inside the index directory by default (a folder the
        store never touches), so the index can re-read them on update."""
        return Path(self.upload_dir) if self.upload_dir else Path(self.index) / "uploads"
