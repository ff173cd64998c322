"""torch's process-wide settings as the encoders use them: threads, bf16 support, the device."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import ModelMismatchError

DEVICES = ("cpu", "cuda", "auto")


def bf16_supported() -> bool:
    """True where the CPU runs bfloat16 matrix products natively (AVX512-BF16 / AMX)."""
    import torch   # deferred: torch loads only where something embeds

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run a block with ``n`` torch threads (None: every core), then restore the previous count.
    torch's thread count is process-wide: a server whose queries run on one thread must not
    make a build in the same process embed on one thread too.
    """
    import torch   # deferred: torch loads only where something embeds

    before = torch.get_num_threads()
    torch.set_num_threads(n or os.cpu_count() or 1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def resolve_device(device: str) -> str:
    """``auto`` → cuda when torch sees a GPU, else cpu; ``cuda`` without one is an error."""
    if device not in DEVICES:
        raise ModelMismatchError(f"--device must be cpu, cuda or auto, got {device!r}")
    if device == "cpu":
        return device
    import torch   # deferred: torch loads only where something embeds

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ModelMismatchError("--device cuda: torch sees no CUDA device (or is a CPU build); use --device cpu or auto")
    return "cpu"


def set_threads(n: int) -> None:
    """Set torch's thread count for this process (a worker process's share of the cores)."""
    import torch   # deferred: a command that embeds nothing starts without torch

    torch.set_num_threads(n)
