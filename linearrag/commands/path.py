"""Shortest entity co-occurrence paths between two entities (names matched as a query's
entities are), each hop with the sentence that links it and its passage id.

  uv run linearrag path INDEX "A" "B" [--max-hops 4] [--format json|text] [--html OUT.html]
"""

import argparse

from linearrag import api
from linearrag.cli import emit, output_options, setup_logging
from linearrag.errors import ParameterError
from linearrag.explain.html import path_html


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("index", help="index directory")
    ap.add_argument("source", help="an entity name, e.g. 佐藤")
    ap.add_argument("target", help="another entity name")
    ap.add_argument("--max-hops", type=int, default=4, help="longest path searched (default 4)")
    output_options(ap, "json", html=True)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    if args.max_hops < 1:
        raise ParameterError(f"--max-hops must be ≥ 1, got {args.max_hops}")
    return emit(args, api.entity_paths(args.index, args.source, args.target, args.max_hops), path_html)
