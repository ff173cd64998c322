"""MCP server over stdio: the LinearRAG tools for agents, with models and index kept warm.

Example (Claude Code):  claude mcp add linearrag -- uv run --directory /path/to/linearrag scripts/mcp_server.py --index /path/to/index
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
from pathlib import Path

from linearrag import api
from linearrag.cli import run_cli, setup_logging
from linearrag.errors import ParameterError
from linearrag.mcp_server import create_server
from linearrag.retrieval.params import PRESETS


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of ``mcp_server.py`` and ``linearrag mcp`` (one definition for both)."""
    ap.add_argument("--index", default=None, help="default index directory for the tools")
    ap.add_argument("--preset", default="default", choices=list(PRESETS))
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="default retrieval parameter")
    ap.add_argument("--lazy", action="store_true", help="load the index and models on the first call, not at start")
    ap.add_argument("--root", action="append", metavar="DIR",
                    help="a directory the tools may read and write (repeatable; default: the current directory and "
                         "the --index directory); every path, symbolic links resolved, must lie inside one")
    ap.add_argument("--read-only", action="store_true",
                    help="offer only the reading tools (no build_index, add_documents, remove_documents, update_index)")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    setup_logging(quiet=True)
    params = api.query_params(args.preset, args.param)
    for root in args.root or []:
        if not Path(root).is_dir():
            raise ParameterError(f"--root {root}: not a directory; pass an existing directory")
    server = create_server(args.index, params, preload=not args.lazy, roots=args.root, read_only=args.read_only)
    server.run("stdio")
    return 0


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
