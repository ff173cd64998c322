"""Thin wrapper: `uv run scripts/evaluate.py --help` (the code is linearrag/commands/evaluate.py)."""

from linearrag.commands.evaluate import main
from linearrag.cli import run_cli

if __name__ == "__main__":
    run_cli(main)
