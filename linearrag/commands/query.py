"""Query a LinearRAG index: entity activation + personalised PageRank (no LLM calls).

Examples:
  uv run scripts/query_graph.py --index indexes/sample --query "What nationality is Beatrice I's husband?"
  uv run scripts/query_graph.py --index indexes/sample "What nationality is Beatrice I's husband?"
  uv run scripts/query_graph.py --index indexes/sample --queries questions.jsonl > answers.jsonl
  uv run scripts/query_graph.py --index indexes/sample --query "..." --param delta=0.4 --param fusion=rrf
  uv run scripts/query_graph.py --list-params      # every retrieval parameter, by stage
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import json
import sys

from linearrag import api
from linearrag.cli import run_cli, setup_logging, write_html
from linearrag.errors import ParameterError
from linearrag.explain.html import query_html
from linearrag.questions import read_query_file
from linearrag.retrieval.params import MODES, PRESETS, param_help


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of ``query_graph.py`` and ``linearrag query`` (one definition for both)."""
    ap.add_argument("--index", help="index directory built by build_graph.py")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--query", help="one question")
    group.add_argument("question", nargs="?", default=None, help="one question (the same as --query)")
    group.add_argument("--queries", help='JSONL file of {"id", "question"}; one JSON result line each')
    group.add_argument("--list-params", action="store_true", help="list the retrieval parameters by stage and exit")
    ap.add_argument("--top-k", type=int, default=None, help="passages to return (default 5)")
    ap.add_argument("--mode", choices=MODES, default=None)
    ap.add_argument("--preset", default="default", choices=list(PRESETS), help="named parameter set")
    ap.add_argument("--param", action="append", metavar="NAME=VALUE",
                    help="override a retrieval parameter (see --list-params)")
    ap.add_argument("--format", choices=["json", "text"], default="json")
    ap.add_argument("--html", metavar="OUT.html", default=None,
                    help="also write a self-contained HTML view of the result (with --query; '-' for stdout instead)")
    ap.add_argument("--quiet", action="store_true")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    if args.question is not None:
        args.query = args.question
    if args.list_params:
        print(describe_params())
        return 0
    if args.query is None and args.queries is None:
        raise ParameterError("pass a question (or --query QUESTION), or --queries FILE.jsonl (or --list-params)")
    index = api.require_index(args.index)
    params = api.query_params(args.preset, args.param, top_k=args.top_k, mode=args.mode)
    if args.query is not None and not args.query.strip():
        given = "question" if args.question is not None else "--query"
        raise ParameterError(f"the {given} is empty; pass a question with some text")
    if args.html is not None and args.query is None:
        raise ParameterError("--html needs one --query (an HTML view shows one question)")
    queries = [("", args.query)] if args.query is not None else read_query_file(args.queries)
    # One torch thread is fastest for a single query; a batch is encoded with all cores. One
    # query does without the warm-up for many (see Retriever: ~0.5 s of a ~2.5 s command).
    one = args.query is not None
    retriever = api.open_retriever(index, params, threads=1 if one else None, warm=not one)
    results = api.query(retriever, [q for _, q in queries], params)
    if args.html is not None:
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


def describe_params() -> str:
    """Every retrieval parameter, grouped by the stage that reads it."""
    lines = []
    for stage, items in param_help().items():
        lines.append(f"{stage}:")
        lines.extend(f"  {name:22} {text}" for name, text in items)
    return "\n".join(lines)


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
