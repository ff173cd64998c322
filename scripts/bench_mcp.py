"""MCP latency benchmark: per-query round trip through the stdio server (warm), next to the
in-process warm latency and the cold `query_graph.py` CLI, measured in the same run.

  uv run scripts/bench_mcp.py --index indexes/2wiki --questions ../shared/benchmarks/2wiki/questions.jsonl
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from linearrag.commands import pin_query_threads

pin_query_threads()  # the same thread settings as the CLI and the server

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


async def _mcp_latencies(index: str, questions: list[str]) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(ROOT / "scripts" / "mcp_server.py"), "--index", index])
    out = []
    async with Client(params, read_timeout_seconds=600) as client:
        await client.call_tool("query", {"question": questions[0]})          # warm-up
        for q in questions:
            t0 = time.perf_counter()
            res = await client.call_tool("query", {"question": q})
            out.append((time.perf_counter() - t0) * 1000)
            assert not res.is_error
    return out


def _in_process(index: str, questions: list[str]) -> list[float]:
    from linearrag import Retriever

    r = Retriever.from_path(index)
    r.query(questions[0])
    out = []
    for q in questions:
        t0 = time.perf_counter()
        r.query(q)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _pct(values: list[float]) -> dict:
    return {"p50": round(float(np.percentile(values, 50)), 2), "p95": round(float(np.percentile(values, 95)), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--cold-runs", type=int, default=3)
    args = ap.parse_args()
    from linearrag.questions import load_questions

    questions = [q.question for q in load_questions(args.questions)[: args.limit]]
    mcp = asyncio.run(_mcp_latencies(args.index, questions))
    local = _in_process(args.index, questions)
    cold = []
    for q in questions[: args.cold_runs]:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "scripts" / "query_graph.py"), "--index", args.index, "--query", q,
                        "--quiet"], check=True, capture_output=True)
        cold.append(time.perf_counter() - t0)
    report = {"questions": len(questions), "mcp_ms": _pct(mcp), "in_process_ms": _pct(local),
              "mcp_overhead_p50_ms": round(float(np.percentile(mcp, 50) - np.percentile(local, 50)), 2),
              "cold_cli_s_median": round(statistics.median(cold), 2)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
