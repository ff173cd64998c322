"""The `linearrag` command: tools over a built index.

  uv run linearrag path INDEX "A" "B" [--max-hops 4] [--format json|text]
  uv run linearrag overview INDEX [--communities 20] [--format json|text]
  uv run linearrag check INDEX [--format json|text]

`path` prints the shortest entity co-occurrence paths between two entities (names matched as
a query's entities are), each hop with the sentence that links it and its passage id.
`overview` prints the entity communities of the corpus (Leiden on the co-occurrence graph), each
with its size, top entities and representative passages; no LLM summaries.
`check` verifies every file of the index against the checksums recorded at commit, the array
shapes, counts and segments (exit 2 and one `error:` line on the first problem).
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import json

from linearrag.cli import run_cli, setup_logging, write_html
from linearrag.errors import ParameterError


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="linearrag", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    path = sub.add_parser("path", help="shortest entity paths between two entities")
    path.add_argument("index", help="index directory")
    path.add_argument("source", help="an entity name, e.g. 佐藤")
    path.add_argument("target", help="another entity name")
    path.add_argument("--max-hops", type=int, default=4, help="longest path searched (default 4)")
    _output_options(path, "json", html=True)
    over = sub.add_parser("overview", help="entity communities of the corpus")
    over.add_argument("index", help="index directory")
    over.add_argument("--communities", type=int, default=20, help="how many, largest first (default 20)")
    _output_options(over, "json", html=True)
    check = sub.add_parser("check", help="verify every file of an index (checksums, shapes, counts)")
    check.add_argument("index", help="index directory")
    _output_options(check, "text", html=False)
    return ap.parse_args(argv)


def _output_options(parser, default_format: str, html: bool) -> None:
    parser.add_argument("--format", choices=["json", "text"], default=default_format)
    if html:
        parser.add_argument("--html", metavar="OUT.html", default=None,
                            help="also write an HTML view ('-': stdout instead)")
    parser.add_argument("--quiet", action="store_true")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(getattr(args, "quiet", False))
    if args.command == "path":
        return _path(args)
    if args.command == "check":
        return _check(args)
    return _overview(args)


def _check(args) -> int:
    from linearrag.check import check_index, describe

    summary = check_index(args.index)
    print(describe(summary) if args.format == "text" else json.dumps(summary, ensure_ascii=False))
    return 0


def _overview(args) -> int:
    from linearrag.explain.overview import corpus_overview
    from linearrag.store import load_index

    if args.communities < 1:
        raise ParameterError(f"--communities must be ≥ 1, got {args.communities}")
    result = corpus_overview(load_index(args.index), max_communities=args.communities)
    return _emit(args, result, "overview_html")


def _path(args) -> int:
    from linearrag.explain.paths import EntityGraph, describe_paths, resolve_entity
    from linearrag.retrieval import RetrievalParams, Retriever

    if args.max_hops < 1:
        raise ParameterError(f"--max-hops must be ≥ 1, got {args.max_hops}")
    for name in (args.source, args.target):
        if not name.strip():
            raise ParameterError("empty entity name; pass two names, e.g. linearrag path INDEX \"A\" \"B\"")
    retriever = Retriever.from_path(args.index)
    params = RetrievalParams()
    ends = []
    for name in (args.source, args.target):
        e = resolve_entity(retriever, name, params.seed_floor, params.similarity == "calibrated")
        if e is None:
            raise ParameterError(f"no entity of the index matches {name!r}; try the name as the documents write it")
        ends.append(e)
    result = describe_paths(EntityGraph(retriever.index.graph.M), retriever.index, ends[0], ends[1], args.max_hops)
    return _emit(args, result, "path_html")


def _emit(args, result, view: str) -> int:
    """JSON or text on stdout, and the HTML view where --html asks for it."""
    if args.html is not None:
        from linearrag.explain import html

        write_html(args.html, getattr(html, view)(result.to_dict()))
        if args.html == "-":
            return 0
    print(result.format_text() if args.format == "text" else json.dumps(result.to_dict(), ensure_ascii=False))
    return 0


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)


if __name__ == "__main__":
    entry()
