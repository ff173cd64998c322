"""Verify every file of an index against the checksums recorded at commit, the array shapes,
counts and segments (exit 2 and one `error:` line on the first problem).

  uv run linearrag check INDEX [--format json|text]
"""

import argparse
import json

from linearrag import api
from linearrag.check import describe
from linearrag.cli import output_options, setup_logging


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("index", help="index directory")
    output_options(ap, "text", html=False)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    summary = api.check(args.index)
    print(describe(summary) if args.format == "text" else json.dumps(summary, ensure_ascii=False))
    return 0
