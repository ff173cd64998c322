"""Thin wrapper: `uv run scripts/serve.py INDEX [--watch DIR]` (the code is linearrag/commands/serve.py)."""

from linearrag.commands.serve import main
from linearrag.cli import run_cli

if __name__ == "__main__":
    run_cli(main)
