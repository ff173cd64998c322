"""Thin wrapper: `uv run scripts/build_graph.py --help` (the code is linearrag/commands/build.py)."""

from linearrag.commands.build import main
from linearrag.cli import run_cli

if __name__ == "__main__":
    run_cli(main)
