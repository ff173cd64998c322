"""Evaluate retrieval on a question set: every mode measured side by side in one run.

Example:
  uv run scripts/evaluate.py --index indexes/2wiki --questions ../shared/benchmarks/2wiki/questions.jsonl --report md
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import json

from linearrag import api
from linearrag.cli import run_cli, setup_logging
from linearrag.errors import ParameterError
from linearrag.evaluation import evaluate
from linearrag.evaluation.report import markdown_report
from linearrag.progress import progress_enabled
from linearrag.questions import load_questions
from linearrag.retrieval.params import MODES, PRESETS


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of ``evaluate.py`` and ``linearrag evaluate`` (one definition for both)."""
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", required=True, help="questions.jsonl (benchmark layout) or LinearRAG questions.json")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, from {', '.join(MODES)}")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--limit", type=int, default=None, help="evaluate the first N questions only")
    ap.add_argument("--output", default=None, help="write the raw rankings (one JSON line per question and mode)")
    ap.add_argument("--report", choices=["json", "md"], default="json")
    ap.add_argument("--preset", default="default", choices=list(PRESETS))
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="override a retrieval parameter")
    ap.add_argument("--quiet", action="store_true")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ParameterError(f"unknown mode(s) {', '.join(unknown) or '(none)'}; use {', '.join(MODES)}")
    if args.top_k < 10:
        raise ParameterError("--top-k must be at least 10 (Recall@10 needs ten passages)")
    if args.limit is not None and args.limit < 1:
        raise ParameterError("--limit must be at least 1")
    params = api.query_params(args.preset, args.param)
    questions = load_questions(args.questions)[: args.limit]
    retriever = api.open_retriever(args.index, params)
    report = evaluate(retriever, questions, modes, top_k=args.top_k, params=params, run_file=args.output,
                      progress=progress_enabled(args.quiet))
    report["questions_file"] = args.questions
    print(markdown_report(report) if args.report == "md" else json.dumps(report, ensure_ascii=False, indent=2))
    return 0


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
