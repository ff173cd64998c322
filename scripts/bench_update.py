"""Living-index benchmark: exactness of adds and removals against a full build, and their cost.

  uv run scripts/bench_update.py [--corpus ../shared/benchmarks/2wiki/corpus.jsonl] [--precision fp32] [--json]

1. Build the corpus's first half, add the second half, remove a random 10 %, re-add half of
   those (one IndexWriter, models loaded once).
2. Build the final corpus from scratch (records shuffled) and compare the two indexes on every
   question in every mode: identical top-10 ids, largest score difference.
3. Costs, in process with the models loaded: add 1 % of the corpus (new passages), remove
   them again, re-sync (``update``) after editing 1 % of the records; each against the full
   build's time from step 2 (same run). Then the same add and remove through the CLI
   (wall time, model loading included).
With ``--json`` one JSON object is the last line of stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from linearrag import BuildConfig, Retriever  # noqa: E402
from linearrag.evaluation.compare import compare  # noqa: E402
from linearrag.index.writer import IndexWriter  # noqa: E402


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, round(time.perf_counter() - t0, 3)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared/benchmarks/2wiki/corpus.jsonl"))
    ap.add_argument("--questions", default=None, help="default: questions.jsonl beside the corpus")
    ap.add_argument("--precision", choices=["fp32", "bf16", "auto"], default="fp32")
    ap.add_argument("--workdir", default=str(ROOT / "indexes" / "bench-update"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--json", action="store_true")
    return ap.parse_args()


def main() -> int:
    args = parse_args()
    corpus = Path(args.corpus)
    questions_file = Path(args.questions) if args.questions else corpus.parent / "questions.jsonl"
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [json.loads(line)["question"] for line in questions_file.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    work = Path(args.workdir)
    if work.exists():
        import shutil

        shutil.rmtree(work)
    work.mkdir(parents=True)
    rng = random.Random(args.seed)
    config = BuildConfig(precision=args.precision)
    out: dict = {"corpus": str(corpus), "passages": len(rows), "questions": len(questions),
                 "precision": args.precision}

    # 1. the sequence of changes
    half = len(rows) // 2
    idx = work / "changed"
    writer = IndexWriter(idx, config)
    seq = {}
    _, seq["build_first_half_s"] = _timed(lambda: writer.build(_jsonl(work / "first.jsonl", rows[:half])))
    _, seq["add_second_half_s"] = _timed(lambda: writer.add(_jsonl(work / "second.jsonl", rows[half:])))
    removed = rng.sample([r["id"] for r in rows], len(rows) // 10)
    _, seq["remove_10pct_s"] = _timed(lambda: writer.remove(removed))
    back = set(removed[: len(removed) // 2])
    _, seq["readd_5pct_s"] = _timed(lambda: writer.add(_jsonl(work / "back.jsonl", [r for r in rows if r["id"] in back])))
    out["sequence"] = seq
    final = [r for r in rows if r["id"] not in set(removed) - back]
    shuffled = list(final)
    rng.shuffle(shuffled)

    # 2. full build of the final corpus, and the comparison
    full = work / "full"
    summary, full_s = _timed(lambda: IndexWriter(full, config).build(_jsonl(work / "final.jsonl", shuffled)))
    out["full_build_s"] = full_s
    out["full_build_stages_s"] = summary["seconds"]
    agreement, out["compare_s"] = _timed(lambda: compare(Retriever.from_path(idx), Retriever.from_path(full), questions))
    out["agreement"] = agreement.to_dict()
    out["identical_within_1e-6"] = agreement.identical(1e-6)

    # 3. costs with the models loaded
    pool = sorted(set(removed) - back)
    step = max(1, len(rows) // 100)
    new = [r for r in rows if r["id"] in set(pool[:step])]
    costs = {}
    s, costs["add_1pct_s"] = _timed(lambda: writer.add(_jsonl(work / "new.jsonl", new)))
    costs["add_1pct_stages_s"] = s["seconds"]
    s, costs["remove_1pct_s"] = _timed(lambda: writer.remove([r["id"] for r in new]))
    costs["remove_1pct_stages_s"] = s["seconds"]
    edited = list(final)
    for k in rng.sample(range(len(edited)), step):
        edited[k] = dict(edited[k], text=edited[k]["text"] + " (edited)")
    source = _jsonl(work / "edited.jsonl", edited)
    s, costs["update_1pct_edited_s"] = _timed(lambda: writer.update(source))
    costs["update_counts"] = {k: s.get(k) for k in ("added", "removed", "unchanged")}
    s, costs["compact_s"] = _timed(lambda: writer.compact())
    for k in ("add_1pct_s", "remove_1pct_s", "update_1pct_edited_s", "compact_s"):
        costs[k.replace("_s", "_vs_full_build")] = round(costs[k] / full_s, 4)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cli = [sys.executable, str(ROOT / "scripts" / "build_graph.py"), "--output", str(idx), "--quiet"]
    _, costs["cli_add_1pct_wall_s"] = _timed(lambda: subprocess.run(cli + ["--add", str(work / "new.jsonl")],
                                                                      check=True, env=env))
    _, costs["cli_remove_1pct_wall_s"] = _timed(lambda: subprocess.run(cli + ["--remove", *[r["id"] for r in new]],
                                                                        check=True, env=env))
    out["costs"] = costs
    out["n_changed"] = step
    if args.json:
        print(json.dumps(out))
    else:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
