"""Query latency benchmark: warm p50/p95 per stage in one process, and cold CLI time.

  uv run scripts/bench_query.py --index indexes/2wiki --questions ../shared/benchmarks/2wiki/questions.jsonl
  uv run scripts/bench_query.py ... --param link_depth=0 --cold-runs 0   (a parameter changed)

Warm: every question answered one at a time with Retriever.query (NER, embedding and
retrieval included), after one warm-up query. Cold: `query_graph.py --query` as a new
process, wall time from start to JSON, and where that time goes.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

COLD_PROBE = """
import json, time
t0 = time.perf_counter()
import linearrag.commands
linearrag.commands.pin_query_threads()  # the CLI's thread settings
from linearrag.retrieval import Retriever
from linearrag.index.store import load_index
t1 = time.perf_counter()
idx = load_index({index!r})
t2 = time.perf_counter()
r = Retriever(idx)  # imports and loads spaCy and the query encoder
t3 = time.perf_counter()
r.query({query!r})
t4 = time.perf_counter()
print(json.dumps(dict(imports=t1 - t0, index_load=t2 - t1, models_import_and_load=t3 - t2, first_query=t4 - t3)))
"""


def warm(index: str, questions: list[str], mode: str, overrides: dict | None = None) -> dict:
    from linearrag import RetrievalParams, Retriever

    retriever = Retriever.from_path(index, RetrievalParams(mode=mode).with_overrides(overrides or {}))
    retriever.query(questions[0])
    stages: dict[str, list[float]] = {}
    walls = []
    for q in questions:
        t0 = time.perf_counter()
        res = retriever.query(q)
        walls.append((time.perf_counter() - t0) * 1000)
        for k, v in res.timings_ms.items():
            stages.setdefault(k, []).append(v)
    out = {"wall_ms": {"p50": round(float(np.percentile(walls, 50)), 2), "p95": round(float(np.percentile(walls, 95)), 2)}}
    for k, v in stages.items():
        out[k] = {"p50": round(float(np.percentile(v, 50)), 2), "p95": round(float(np.percentile(v, 95)), 2)}
    return out


def cold(index: str, query: str, runs: int) -> dict:
    script = Path(__file__).parent / "query_graph.py"
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(script), "--index", index, "--query", query, "--quiet"],
                       check=True, capture_output=True)
        walls.append(time.perf_counter() - t0)
    probe = subprocess.run([sys.executable, "-c", COLD_PROBE.format(index=index, query=query)],
                           check=True, capture_output=True, text=True)
    parts = json.loads(probe.stdout.strip().splitlines()[-1])
    return {"cli_wall_s_median": round(statistics.median(walls), 2), "runs": runs,
            "breakdown_s": {k: round(v, 2) for k, v in parts.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--mode", default="linearrag")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="a retrieval parameter (warm runs)")
    args = ap.parse_args()
    from linearrag import RetrievalParams
    from linearrag.errors import LinearRAGError
    from linearrag.questions import load_questions
    from linearrag.retrieval.params import parse_overrides

    try:
        overrides = parse_overrides(args.param)
        RetrievalParams(mode=args.mode).with_overrides(overrides)   # checked before any model loads
        questions = [q.question for q in load_questions(args.questions)[: args.limit]]
    except LinearRAGError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = {"questions": len(questions), "mode": args.mode, "params": overrides,
              "warm": warm(args.index, questions, args.mode, overrides)}
    if args.cold_runs:
        report["cold"] = cold(args.index, questions[0], args.cold_runs)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
