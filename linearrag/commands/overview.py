"""The entity communities of the corpus (Leiden on the co-occurrence graph), each with its
size, top entities and representative passages; no LLM summaries.

  uv run linearrag overview INDEX [--communities 20] [--format json|text] [--html OUT.html]
"""

import argparse

from linearrag import api
from linearrag.cli import emit, output_options, setup_logging
from linearrag.errors import ParameterError
from linearrag.explain.html import overview_html


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("index", help="index directory")
    ap.add_argument("--communities", type=int, default=20, help="how many, largest first (default 20)")
    output_options(ap, "json", html=True)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    if args.communities < 1:
        raise ParameterError(f"--communities must be ≥ 1, got {args.communities}")
    return emit(args, api.overview(args.index, args.communities), overview_html)
