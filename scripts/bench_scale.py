"""Scale benchmark: a replicated index of N passages (linearrag/synthetic.py), opened and queried.

  uv run scripts/bench_scale.py --passages 100000 --json
  uv run scripts/bench_scale.py --passages 10000,100000,1000000      # and the growth exponent

Without --source-index it first builds its source index from ../shared/benchmarks/2wiki
(minutes, once). Generated indexes are kept in the cache directory (default
indexes/bench-scale/, printed on stderr) and reused. Per size it reports: index open time
(load_index + Retriever set-up with the models already loaded: models excluded), the first
query's time, then after --warmup other questions the warm query p50/p95 (index files read
into the page cache first unless --cold-cache; wall time of
Retriever.query: NER, query embedding and retrieval, default mode),
the retrieval-only p50 (the engine's own timing), resident memory the index added to the
process (RSS, and the private part of it: RSS also counts touched pages of the mapped files), disk size, and Recall@5 of the 2wiki questions (gold = the source passages, which
replica 0 keeps). With several sizes, the fitted exponent of p50 against P. With --json the
last line of stdout is one JSON object.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "benchmarks" / "2wiki"


def log(msg: str) -> None:
    print(f"[bench_scale] {msg}", file=sys.stderr, flush=True)


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def private_mb() -> float:
    """Anonymous (private) memory of the process: what the index costs beyond the page cache.
    RSS also counts the pages of the memory-mapped index files that queries touched, which are
    clean page cache (shared, dropped under memory pressure); where the kernel caches files in
    large folios (2 MB here), each scattered row read maps a whole folio into RSS."""
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Anonymous:"):
                return int(line.split()[1]) / 1024
    return 0.0


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2 ** 20


def source_index(args) -> Path:
    if args.source_index:
        return Path(args.source_index)
    src = args.cache / "source-2wiki"
    if not (src / "CURRENT").exists():
        log(f"building the source index from {BENCH} into {src} (once)")
        subprocess.run([sys.executable, str(ROOT / "scripts" / "build_graph.py"), "--input", str(BENCH / "corpus.jsonl"),
                        "--output", str(src), "--quiet"], check=True)
    return src


def generated(args, src: Path, n: int) -> Path:
    from linearrag.index.store import committed_generation, load_index
    from linearrag.synthetic import replicate

    stamp = {"source": str(src.resolve()), "source_generation": committed_generation(src), "passages": n,
             "noise": args.noise, "seed": args.seed, "format": 3, "vectors": "float16"}
    out = args.cache / f"replica-{n}"
    if (out / "CURRENT").exists() and (out / "stamp.json").exists() \
            and json.loads((out / "stamp.json").read_text()) == stamp:
        log(f"reusing {out}")
        return out
    shutil.rmtree(out, ignore_errors=True)
    log(f"generating {n} passages into {out}")
    t0 = time.perf_counter()
    stats = replicate(load_index(src), out, n, noise=args.noise, seed=args.seed, threads=args.threads,
                      log=lambda s: log(f"  {s}"))
    (out / "stats.json").write_text(json.dumps(stats, indent=1, ensure_ascii=False))
    (out / "stamp.json").write_text(json.dumps(stamp))
    log(f"generated in {time.perf_counter() - t0:.0f} s")
    return out


def questions(limit: int) -> list[dict]:
    from linearrag.questions import load_questions

    return load_questions(BENCH / "questions.jsonl")[:limit]


def preload(path: Path) -> float:
    """Read every file of the index once (the page cache then holds what a long-running server
    would have there); seconds taken."""
    t0 = time.perf_counter()
    for f in sorted(path.rglob("*")):
        if f.is_file():
            with open(f, "rb") as handle:
                while handle.read(1 << 24):
                    pass
    return round(time.perf_counter() - t0, 1)


def measure(path: Path, qs, warmup, models, params, warm_cache: bool = True, checked: bool = True) -> dict:
    from linearrag.retrieval import Retriever
    from linearrag.index.store import load_index

    analyzer, encoder = models
    preload_s = preload(path) if warm_cache else None
    rss0, private0 = rss_mb(), private_mb()
    t0 = time.perf_counter()
    index = load_index(path, checked=checked)
    retriever = Retriever(index, params, analyzer=analyzer, encoder=encoder, warm=False)
    open_s = time.perf_counter() - t0
    first_ms = None
    for q in warmup:        # other questions than the measured ones: the process has run queries before
        t0 = time.perf_counter()
        retriever.query(q.question)
        first_ms = first_ms if first_ms is not None else round((time.perf_counter() - t0) * 1000, 1)
    walls, own, hits = [], [], []
    for q in qs:
        t0 = time.perf_counter()
        res = retriever.query(q.question)
        walls.append((time.perf_counter() - t0) * 1000)
        own.append(res.timings_ms["retrieval"])
        got = {p.id for p in res.passages[:5]}
        hits.append(len(got & set(q.gold_ids or [])) / max(len(q.gold_ids or []), 1))
    return {"passages": len(index.passage_ids), "p50_ms": round(float(np.percentile(walls, 50)), 2),
            "p95_ms": round(float(np.percentile(walls, 95)), 2),
            "retrieval_p50_ms": round(float(np.percentile(own, 50)), 2),
            "retrieval_p95_ms": round(float(np.percentile(own, 95)), 2),
            "open_s": round(open_s, 3), "rss_mb": round(rss_mb() - rss0, 1),
            "private_mb": round(private_mb() - private0, 1), "disk_mb": round(disk_mb(path), 1),
            "recall_at_5": round(100 * float(np.mean(hits)), 2), "search": "ann" if retriever.uses_ann(params) else "exact",
            "queries": len(qs), "warmup_queries": len(warmup), "first_query_ms": first_ms,
            "page_cache": "preloaded" if warm_cache else "as found", "preload_s": preload_s, "checks": checked}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", required=True, help="N, or several: 10000,100000,1000000")
    ap.add_argument("--source-index", help="the index to replicate (default: built from the 2wiki benchmark)")
    ap.add_argument("--cache", type=Path, default=ROOT / "indexes" / "bench-scale", help="where generated indexes stay")
    ap.add_argument("--queries", type=int, default=200, help="2wiki questions asked (default 200)")
    ap.add_argument("--cold-cache", action="store_true",
                    help="do not read the index files into the page cache first (default: read them, "
                         "as a server that has been running would have them)")
    ap.add_argument("--warmup", type=int, default=20,
                    help="questions asked first and not measured (the next ones of 2wiki; default 20)")
    ap.add_argument("--noise", type=float, default=0.25, help="relative noise on replicated vectors")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="threads for the ANN builds")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="retrieval parameter")
    ap.add_argument("--compare-checks", action="store_true",
                    help="measure each size twice in one run: without the open-time structure checks and string "
                         "CRCs (as before they existed), then with them")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line of stdout")
    args = ap.parse_args()
    try:
        sizes = [int(x.replace("_", "")) for x in args.passages.split(",")]
    except ValueError:
        print(f"error: --passages takes numbers (10000 or 10000,100000), got {args.passages!r}", file=sys.stderr)
        sys.exit(2)
    if any(n < 1 for n in sizes):
        print("error: --passages must be ≥ 1", file=sys.stderr)
        sys.exit(2)
    if args.source_index and not (Path(args.source_index) / "CURRENT").exists():
        print(f"error: {args.source_index}: not an index; build one with scripts/build_graph.py", file=sys.stderr)
        sys.exit(2)

    from linearrag.retrieval import RetrievalParams, Retriever
    from linearrag.retrieval.params import parse_overrides
    from linearrag.index.store import load_index

    args.cache.mkdir(parents=True, exist_ok=True)
    log(f"cache directory: {args.cache}")
    src = source_index(args)
    params = RetrievalParams().with_overrides(parse_overrides(args.param))
    base = Retriever(load_index(src), params)            # loads the models once; every size reuses them
    models = (base.analyzer, base.encoder)
    everything = questions(args.queries + args.warmup)
    qs, warmup = everything[:args.queries], everything[args.queries:]
    runs = []
    for n in sizes:
        path = generated(args, src, n)
        for checked in ((False, True) if args.compare_checks else (True,)):
            run = measure(path, qs, warmup, models, params, not args.cold_cache, checked)
            runs.append(run)
            log(json.dumps(run))
            if not args.json:
                print(f"{n:>9} passages{'' if checked else ' (no checks)'}: p50 {run['p50_ms']} ms, p95 "
                      f"{run['p95_ms']} ms (retrieval p50 {run['retrieval_p50_ms']} ms), open {run['open_s']} s, "
                      f"+{run['rss_mb']} MB RSS (+{run['private_mb']} MB private), "
                      f"{run['disk_mb']} MB disk, R@5 {run['recall_at_5']} [{run['search']}]")
    result = dict(runs[-1])
    if args.compare_checks:
        result["compare_checks"] = runs
    if len(sizes) > 1:
        runs = [r for r in runs if r["checks"]]
        x = np.log([r["passages"] for r in runs])
        result["runs"] = runs
        result["p50_exponent"] = round(float(np.polyfit(x, np.log([r["p50_ms"] for r in runs]), 1)[0]), 3)
        result["retrieval_p50_exponent"] = round(float(np.polyfit(
            x, np.log([r["retrieval_p50_ms"] for r in runs]), 1)[0]), 3)
        if not args.json:
            print(f"fitted exponent of p50 against P: {result['p50_exponent']} "
                  f"(retrieval only: {result['retrieval_p50_exponent']})")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
