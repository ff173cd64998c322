"""Progress bars that show on a terminal and stay quiet when piped or asked to."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm


def progress_enabled(quiet: bool = False) -> bool:
    return not quiet and sys.stderr.isatty()


def bar(total: int, desc: str, enabled: bool):
    """A tqdm bar on stderr, or a no-op bar when ``enabled`` is false."""
    return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, unit="it", dynamic_ncols=True)
