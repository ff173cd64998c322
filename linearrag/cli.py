"""Shared plumbing for the command-line scripts: logging to stderr and error exits."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from .errors import LinearRAGError, ParameterError

EXIT_USAGE = 2


def setup_logging(quiet: bool = False) -> None:
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, stream=sys.stderr,
                        format="%(levelname)s: %(message)s")
    for noisy in ("sentence_transformers", "transformers", "bm25s", "httpx", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def write_html(target: str, page: str) -> None:
    """Write an HTML page to ``target`` (``-``: stdout); a place that cannot be written is a
    one-line error."""
    if target == "-":
        sys.stdout.write(page)
        return
    try:
        with open(target, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as exc:
        raise ParameterError(f"cannot write {target} ({exc.strerror}); choose another --html path") from None


def run_cli(main: Callable[[], int | None]) -> None:
    """Run ``main``; a :class:`LinearRAGError` becomes one line on stderr and exit code 2."""
    try:
        code = main()
    except LinearRAGError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        print("error: interrupted; nothing was changed", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)
