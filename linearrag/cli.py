"""Shared plumbing for the command-line scripts: logging to stderr and error exits."""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn

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


def output_options(parser, default_format: str, html: bool) -> None:
    """--format, --html (where the command has an HTML view) and --quiet."""
    parser.add_argument("--format", choices=["json", "text"], default=default_format)
    if html:
        parser.add_argument("--html", metavar="OUT.html", default=None,
                            help="also write an HTML view ('-': stdout instead)")
    parser.add_argument("--quiet", action="store_true")


def emit(args, result, view: Callable[[dict], str] | None = None) -> int:
    """``result`` as JSON or text on stdout, and its HTML view where --html asks for it."""
    if view is not None and args.html is not None:
        write_html(args.html, view(result.to_dict()))
        if args.html == "-":
            return 0
    print(result.format_text() if args.format == "text" else json.dumps(result.to_dict(), ensure_ascii=False))
    return 0


def run_cli(main: Callable[[], int | None]) -> None:
    """Run ``main``; a :class:`LinearRAGError` becomes one line on stderr and exit code 2."""
    try:
        code = main()
    except LinearRAGError as exc:
        print(f"error: {exc}", file=sys.stderr)
        exit_now(EXIT_USAGE)
    except KeyboardInterrupt:
        print("error: interrupted; nothing was changed", file=sys.stderr)
        exit_now(130)
    exit_now(code or 0)


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` without tearing the interpreter down.

    Python's own exit frees every module and object one by one: with torch and spaCy loaded
    that is ~0.6 s of a one-query command's ~3 s, for nothing. So, where no other non-daemon
    thread is still running, the exit handlers run (logging, multiprocessing, Ray, temporary
    files: everything ``atexit`` holds), the standard streams are flushed and the process
    ends there. Otherwise (a thread still working) it is a normal ``sys.exit``.
    """
    run_handlers = getattr(atexit, "_run_exitfuncs", None)   # CPython's: without it, a normal exit
    if run_handlers is None or any(t is not threading.main_thread() and not t.daemon and t.is_alive()
                                   for t in threading.enumerate()):
        sys.exit(code)
    try:
        run_handlers()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):   # a reader that went away (``| head``), or a closed stream
                pass
        os._exit(code)
