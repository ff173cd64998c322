"""The `linearrag` command: every tool of the package as a subcommand.

  uv run linearrag build --input examples/2wiki-sample/corpus.jsonl --output indexes/sample
  uv run linearrag query --index indexes/sample --query "Who is ...?"
  uv run linearrag evaluate --index indexes/sample --questions questions.jsonl --report md
  uv run linearrag path INDEX "A" "B" [--max-hops 4] [--format json|text]
  uv run linearrag overview INDEX [--communities 20] [--format json|text]
  uv run linearrag check INDEX [--format json|text]
  uv run linearrag mcp --index indexes/sample
  uv run linearrag serve indexes/sample [--watch DOCS] [--token-file FILE]
  uv run linearrag watch DOCS --index indexes/docs

`build`, `query`, `evaluate` and `mcp` take the flags of scripts/build_graph.py,
query_graph.py, evaluate.py and mcp_server.py (one definition serves both spellings).
`linearrag SUB --help` describes each.
"""

import sys

from linearrag.commands import pin_query_threads

if sys.argv[1:2] not in (["build"], ["watch"]):   # a build keeps every core; queries take one BLAS thread
    pin_query_threads()

import argparse
import importlib

from linearrag.cli import run_cli

# name → (module with add_arguments and run, one-line summary). Only the chosen command's
# module is imported: the others' libraries (the MCP SDK, spaCy, torch) cost seconds to load.
COMMANDS = {
    "build": ("linearrag.commands.build", "build an index from a corpus, or change one (scripts/build_graph.py)"),
    "query": ("linearrag.commands.query", "retrieve the passages that answer a question (scripts/query_graph.py)"),
    "evaluate": ("linearrag.commands.evaluate", "measure retrieval on a question set (scripts/evaluate.py)"),
    "path": ("linearrag.commands.path", "shortest entity paths between two entities"),
    "overview": ("linearrag.commands.overview", "entity communities of the corpus"),
    "check": ("linearrag.commands.check", "verify every file of an index (checksums, shapes, counts)"),
    "mcp": ("linearrag.commands.mcp", "serve the tools over MCP (stdio) for agents (scripts/mcp_server.py)"),
    "serve": ("linearrag.commands.serve", "serve an index over HTTP: JSON API, MCP, search page (scripts/serve.py)"),
    "watch": ("linearrag.commands.watch", "keep an index in sync with a folder"),
}


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, object]:
    """The arguments, and the chosen command's module."""
    argv = sys.argv[1:] if argv is None else argv
    chosen = next((a for a in argv if not a.startswith("-")), None)
    ap = argparse.ArgumentParser(prog="linearrag", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    module = None
    for name, (module_name, summary) in COMMANDS.items():
        parser = sub.add_parser(name, help=summary, formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == chosen:
            module = importlib.import_module(module_name)
            parser.description = module.__doc__
            module.add_arguments(parser)
    return ap.parse_args(argv), module


def main(argv: list[str] | None = None) -> int:
    args, module = parse_args(argv)
    return module.run(args)


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)


if __name__ == "__main__":
    entry()
