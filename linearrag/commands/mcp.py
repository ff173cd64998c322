"""MCP server over stdio: the LinearRAG tools for agents, with models and index kept warm.

Example (Claude Code):  claude mcp add linearrag -- uv run --directory /path/to/linearrag scripts/mcp_server.py --index /path/to/index
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse

from linearrag.cli import run_cli, setup_logging
from linearrag.retrieval import parse_overrides, preset


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", default=None, help="default index directory for the tools")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="default retrieval parameter")
    ap.add_argument("--lazy", action="store_true", help="load the index and models on the first call, not at start")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(quiet=True)
    from linearrag.mcp_server import create_server

    params = preset(args.preset).with_overrides(parse_overrides(args.param))
    server = create_server(args.index, params, preload=not args.lazy)
    server.run("stdio")
    return 0


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
