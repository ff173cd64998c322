"""Thin wrapper: `uv run scripts/query_graph.py --help` (the code is linearrag/commands/query.py)."""

from linearrag.commands.query import main
from linearrag.cli import run_cli

if __name__ == "__main__":
    run_cli(main)
