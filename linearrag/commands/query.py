"""Query a LinearRAG index: entity activation + personalised PageRank (no LLM calls).

Examples:
  uv run scripts/query_graph.py --index indexes/sample --query "What nationality is Beatrice I's husband?"
  uv run scripts/query_graph.py --index indexes/sample --queries questions.jsonl > answers.jsonl
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import json
import sys

from linearrag.cli import run_cli, setup_logging, write_html
from linearrag.errors import ParameterError
from linearrag.questions import read_query_file
from linearrag.retrieval import Retriever, parse_overrides, preset
from linearrag.store import load_index


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True, help="index directory built by build_graph.py")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--query", help="one question")
    group.add_argument("--queries", help='JSONL file of {"id", "question"}; one JSON result line each')
    ap.add_argument("--top-k", type=int, default=None, help="passages to return (default 5)")
    ap.add_argument("--mode", choices=["linearrag", "dense", "bm25", "rrf"], default=None)
    ap.add_argument("--preset", default="default", help="named parameter set (default, paper-2wiki, ...)")
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="override a retrieval parameter")
    ap.add_argument("--format", choices=["json", "text"], default="json")
    ap.add_argument("--html", metavar="OUT.html", default=None,
                    help="also write a self-contained HTML view of the result (with --query; '-' for stdout instead)")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.quiet)
    overrides = parse_overrides(args.param)
    if args.top_k is not None:
        overrides["top_k"] = args.top_k
    if args.mode is not None:
        overrides["mode"] = args.mode
    params = preset(args.preset).with_overrides(overrides)
    if args.query is not None and not args.query.strip():
        raise ParameterError("empty --query; pass a question with some text")
    if args.html is not None and args.query is None:
        raise ParameterError("--html needs one --query (an HTML view shows one question)")
    queries = [("", args.query)] if args.query is not None else read_query_file(args.queries)
    # One torch thread is fastest for a single query; a batch is encoded with all cores. One
    # query does without the warm-up for many (see Retriever: ~0.5 s of a ~2.5 s command).
    one = args.query is not None
    retriever = Retriever(load_index(args.index), params, threads=1 if one else None, warm=not one)
    results = retriever.query_batch([q for _, q in queries], params)
    if args.html is not None:
        from linearrag.explain.html import query_html

        write_html(args.html, query_html(results[0].to_dict()))
        if args.html == "-":
            return 0
    for (qid, _), result in zip(queries, results):
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if args.format == "text":
            print(result.format_text() + "\n")
        else:
            record = result.to_dict()
            if args.queries is not None:
                record = {"id": qid, **record}
            print(json.dumps(record, ensure_ascii=False))
    sys.stdout.flush()
    return 0


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
