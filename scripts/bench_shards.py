"""Build benchmark of the executors, in one run: a baseline checkout (e.g. the wave-1 commit),
this checkout in one process, with a process pool, and on a local Ray instance.

  git worktree add /tmp/wave1 923a7dc
  uv run scripts/bench_shards.py --input ../shared/benchmarks/2wiki/corpus.jsonl --baseline /tmp/wave1 [--json]

Each build runs as its own process tree; peak memory is sampled every 0.2 s as PSS (shared
pages counted once), for the whole tree and for its largest single process (a worker). The
per-core rates come from the process-pool run, whose workers each run NER and embeddings on one
thread (so worker-seconds are core-seconds). The pool, Ray and one-process indexes are compared
(structure, largest vector difference, top-10 agreement on the corpus's questions).
With ``--json`` one JSON object is the last line of stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_build import run_sampled  # noqa: E402


def run(cmd: list[str], env: dict) -> dict:
    r = run_sampled(cmd, env)
    if r["returncode"] != 0:
        stderr = r["stderr"].strip()
        raise SystemExit(f"{' '.join(cmd[:4])}…: {stderr.splitlines()[-1] if stderr else r['returncode']}")
    summary = json.loads(r["stdout"].strip().splitlines()[-1])
    summary.update(wall_s=round(r["wall"], 1), peak_tree_mb=round(r["peak_total"] / 2**20),
                   peak_process_mb=round(r["peak_one"] / 2**20))
    return summary


def compare_indexes(a: Path, b: Path, questions: list[str]) -> dict:
    import numpy as np

    from linearrag import Retriever, load_index
    from linearrag.evaluation.compare import compare

    x, y = load_index(a), load_index(b)
    same = (x.passage_ids == y.passage_ids and x.graph.entity_keys == y.graph.entity_keys
            and (x.graph.C != y.graph.C).nnz == 0 and (x.graph.M != y.graph.M).nnz == 0)
    diff = max(float(np.abs(np.asarray(getattr(x, n)) - np.asarray(getattr(y, n))).max())
               for n in ("passage_emb", "sentence_emb", "entity_emb"))
    agreement = compare(Retriever.from_path(a), Retriever.from_path(b), questions)
    return {"same_structure": same, "max_vector_diff": diff, **agreement.to_dict()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT.parent / "shared/benchmarks/2wiki/corpus.jsonl"))
    ap.add_argument("--questions", default=None, help="default: questions.jsonl beside the corpus")
    ap.add_argument("--baseline", default=None, help="a checkout of another commit to time in the same run")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--skip", nargs="*", default=[], choices=["baseline", "serial", "pool", "ray"])
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the builds this many times, interleaved (baseline, serial, pool, ray, baseline, …); "
                         "ratios use the median wall time (this machine's speed drifts by tens of per cent)")
    ap.add_argument("--workdir", default=str(ROOT / "indexes" / "bench-shards"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus = Path(args.input)
    questions_file = Path(args.questions) if args.questions else corpus.parent / "questions.jsonl"
    questions = [json.loads(line)["question"] for line in questions_file.read_text().splitlines() if line.strip()]
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    script = str(ROOT / "scripts" / "build_graph.py")
    runs = {
        "baseline": None if not args.baseline else (
            [sys.executable, str(Path(args.baseline) / "scripts" / "build_graph.py")], dict(env, PYTHONPATH=args.baseline)),
        "serial": ([sys.executable, script, "--workers", "1"], env),
        "pool": ([sys.executable, script, "--workers", str(args.workers)], env),
        "ray": ([sys.executable, script, "--workers", str(args.workers), "--ray", "local"], env),
    }
    out: dict = {"corpus": str(corpus), "cores": os.cpu_count(), "runs": {}, "walls_s": {}}
    import shutil
    import statistics

    for _ in range(args.rounds):
        for name, spec in runs.items():
            if spec is None or name in args.skip:
                continue
            cmd, run_env = spec
            target = work / name
            shutil.rmtree(target, ignore_errors=True)
            result = run([*cmd, "--input", str(corpus), "--output", str(target), "--json", "--quiet"], run_env)
            out["runs"][name] = result
            out["walls_s"].setdefault(name, []).append(result["wall_s"])
            print(f"{name}: {result['wall_s']} s, peak {result['peak_tree_mb']} MB "
                  f"(largest process {result['peak_process_mb']} MB)", file=sys.stderr)
    for name, walls in out["walls_s"].items():
        out["runs"][name]["wall_s"] = statistics.median(walls)
    r = out["runs"]
    if "baseline" in r:
        for name in ("serial", "pool", "ray"):
            if name in r:
                out[f"speedup_{name}_vs_baseline"] = round(r["baseline"]["wall_s"] / r[name]["wall_s"], 3)
    if "pool" in r and "ray" in r:
        out["ray_vs_pool_time"] = round(r["ray"]["wall_s"] / r["pool"]["wall_s"], 3)
    if "pool" in r:
        ws, n = r["pool"]["worker_seconds"], r["pool"]["passages"]
        out["per_core_passages_per_s"] = {
            "ner": round(n / ws["ner"], 1),
            "embed_passages_and_sentences": round(n / (ws["embed_passages"] + ws.get("embed_sentences", 0)), 1),
            "entity_names_per_s": round(r["pool"].get("names_embedded", 0) / max(r["pool"]["seconds"].get("embed_entities", 1e-9), 1e-9) / args.workers, 1),
        }
    for a, b in (("pool", "ray"), ("serial", "pool")):
        if a in r and b in r:
            out[f"{a}_vs_{b}"] = compare_indexes(work / a, work / b, questions)
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
