"""Thin wrapper: `uv run scripts/mcp_server.py --index DIR` (the code is linearrag/commands/mcp.py)."""

from linearrag.commands.mcp import main
from linearrag.cli import run_cli

if __name__ == "__main__":
    run_cli(main)
