"""Crash test of the store: kill -9 writers at random moments, and race writers against readers.

  uv run scripts/kill_test.py [--kills 32] [--seconds 60] [--json]

Part 1: until ``--kills`` writers have been killed, start a writer (full build, add, remove or
compact in turn, through the CLI, on an index of the 2Wiki sample) and SIGKILL it at a random
moment between 30 % and 98 % of that operation's last measured duration (a writer that finishes
first counts as a trial, not a kill); after each, open the index, run a query and verify every
file (``linearrag check``).
Part 2: two writer processes loop (remove a few passages, add them back) for ``--seconds``
while a reader thread opens the index in a loop; each opened generation must be whole: its
passage ids, titles and texts hash to the fingerprint its manifest records, and the array
shapes agree. Failures are counted, not raised; the JSON on the last line has the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from linearrag import Retriever  # noqa: E402
from linearrag.check import check_index  # noqa: E402
from linearrag.passage import Passage, fingerprint  # noqa: E402
from linearrag.index.store import load_index  # noqa: E402

CORPUS = ROOT / "examples" / "2wiki-sample" / "corpus.jsonl"
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))


def _cli(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "build_graph.py"), *args, "--quiet"]


def _whole(index) -> bool:
    """The opened generation is one generation: texts match the recorded fingerprint, shapes agree."""
    passages = [Passage(i, t, x) for i, t, x in zip(index.passage_ids, index.passage_titles, index.passage_texts)]
    n = len(passages)
    return (fingerprint(passages) == index.meta["input"]["fingerprint"] and index.passage_emb.shape[0] == n
            and index.graph.C.shape[0] == n and index.meta["counts"]["passages"] == n)


def kill_trials(work: Path, kills: int, rng: random.Random, models: dict) -> dict:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    idx = work / "idx"
    subprocess.run(_cli("--input", str(CORPUS), "--output", str(idx)), check=True, env=ENV)
    extra = work / "extra.jsonl"
    results = {"trials": 0, "killed": 0, "finished": 0, "failures": [], "by_operation": {}, "kills_by_operation": {}}
    durations = {"build": 12.0, "add": 9.0, "remove": 2.5, "compact": 2.5}   # refined as operations finish
    t = 0
    while results["killed"] < kills and t < 4 * kills:
        op = ["build", "add", "remove", "compact"][t % 4]
        live = load_index(idx).passage_ids.tolist()
        if op == "build":
            chosen = rng.sample(rows, 120)
            extra.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
            args = _cli("--input", str(extra), "--output", str(idx))
        elif op == "add":
            missing = [r for r in rows if r["id"] not in set(live)] or rng.sample(rows, 10)
            chosen = rng.sample(missing, min(20, len(missing)))
            extra.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
            args = _cli("--output", str(idx), "--add", str(extra))
        elif op == "remove":
            args = _cli("--output", str(idx), "--remove", *rng.sample(live, min(10, len(live) - 20)))
        else:
            args = _cli("--output", str(idx), "--compact")
        # a moment in the second part of the operation's usual run, where it writes
        delay = rng.uniform(0.3, 0.98) * durations[op]
        started = time.perf_counter()
        proc = subprocess.Popen(args, env=ENV)
        try:
            proc.wait(timeout=delay)
            results["finished"] += 1
            durations[op] = time.perf_counter() - started
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            results["killed"] += 1
            results["kills_by_operation"][op] = results["kills_by_operation"].get(op, 0) + 1
        results["trials"] += 1
        results["by_operation"][op] = results["by_operation"].get(op, 0) + 1
        try:
            index = load_index(idx)
            retriever = Retriever(index, analyzer=models["analyzer"], encoder=models["encoder"], warm=False)
            assert retriever.query("Who was the spouse of Frederick I?").passages
            assert _whole(index)
            check_index(idx)
        except Exception as exc:   # noqa: BLE001 - counted and reported
            results["failures"].append(f"trial {t} ({op}, killed after {delay:.2f}s): {type(exc).__name__}: {exc}")
        t += 1
    return results


def race(work: Path, seconds: float) -> dict:
    idx = work / "idx"
    live = load_index(idx).passage_ids.tolist()
    rows = {json.loads(line)["id"]: line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()}
    script = (
        "import json, random, sys, time\n"
        "from linearrag.index.writer import IndexWriter\n"
        "idx, mine, corpus, seconds = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], float(sys.argv[4])\n"
        "w = IndexWriter(idx); end = time.time() + seconds; n = 0\n"
        "while time.time() < end:\n"
        "    w.remove(mine); w.add(corpus); n += 2\n"
        "print(n)\n"
    )
    writers = []
    for k, ids in enumerate((live[:5], live[5:10])):
        extra = work / f"writer{k}.jsonl"
        extra.write_text("".join(rows[i] + "\n" for i in ids if i in rows), encoding="utf-8")
        writers.append(subprocess.Popen([sys.executable, "-c", script, str(idx), json.dumps(ids), str(extra),
                                         str(seconds)], env=ENV, stdout=subprocess.PIPE, text=True))
    loads, failures, mixed, generations = 0, [], 0, set()
    stop = threading.Event()

    def reader():
        nonlocal loads, mixed
        while not stop.is_set():
            try:
                index = load_index(idx)
                loads += 1
                generations.add(index.generation)
                if not _whole(index):
                    mixed += 1
            except Exception as exc:   # noqa: BLE001
                failures.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=reader)
    thread.start()
    commits = [int(w.communicate()[0].strip() or 0) for w in writers]
    stop.set()
    thread.join()
    check_index(idx)
    return {"seconds": seconds, "writer_commits": commits, "loads": loads, "failed_loads": len(failures),
            "mixed_versions": mixed, "generations_seen": len(generations), "failures": failures[:5]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=32, help="writers killed (trials go on until this many)")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--workdir", default=str(ROOT / "indexes" / "kill-test"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    from linearrag.analysis import Analyzer
    from linearrag.encoders import load_query_encoder

    models = {}
    t0 = time.time()
    out = {}
    rng = random.Random(args.seed)
    # the query encoder is loaded once the first index exists (its meta names the model)
    subprocess.run(_cli("--input", str(CORPUS), "--output", str(work / "probe")), check=True, env=ENV)
    meta = load_index(work / "probe").meta
    models["encoder"] = load_query_encoder(meta["embedding"]["model"], precision=meta["embedding"]["precision"])
    models["analyzer"] = Analyzer("en", meta["ner"]["model"], terms=bool(meta["build"]["terms"]))
    out["kills"] = kill_trials(work, args.kills, rng, models)
    out["race"] = race(work, args.seconds)
    out["seconds"] = round(time.time() - t0, 1)
    ok = not out["kills"]["failures"] and not out["race"]["failed_loads"] and not out["race"]["mixed_versions"]
    out["ok"] = ok
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
