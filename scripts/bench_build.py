"""Build benchmark: seconds per stage, passages/s, peak memory and index size, on a corpus
and on its first half (to show each stage grows linearly).

  uv run scripts/bench_build.py --input ../shared/benchmarks/2wiki/corpus.jsonl [--json]

Peak memory is the largest sum of PSS (proportional set size, so shared pages count once)
over the build process and its NER workers, sampled every 0.2 s.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                pass
    return out


def _pss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_sampled(cmd: list[str], env: dict | None = None) -> dict:
    """Run ``cmd``, sampling the PSS of its process tree every 0.2 s: returns its output, exit
    status, wall seconds, the tree's peak and the largest single process's peak (bytes)."""
    peak_total, peak_one = 0, 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def sample():
        nonlocal peak_total, peak_one
        while proc.poll() is None:
            sizes = [_pss_bytes(p) for p in _tree(proc.pid)]
            peak_total = max(peak_total, sum(sizes))
            peak_one = max([peak_one, *sizes])
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    t0 = time.perf_counter()
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.join()
    return {"stdout": stdout, "stderr": stderr, "returncode": proc.returncode, "wall": wall,
            "peak_total": peak_total, "peak_one": peak_one}


def run_build(corpus: Path, out: Path, extra: list[str]) -> dict:
    cmd = [sys.executable, str(Path(__file__).parent / "build_graph.py"), "--input", str(corpus),
           "--output", str(out), "--json", "--quiet", *extra]
    r = run_sampled(cmd)
    if r["returncode"] != 0:
        stderr = r["stderr"].strip()
        raise SystemExit(f"build failed: {stderr.splitlines()[-1] if stderr else r['returncode']}")
    summary = json.loads(r["stdout"])
    wall = r["wall"]
    summary.update(wall_s=round(wall, 1), peak_pss_mb=round(r["peak_total"] / 2**20),
                   index_mb=round(summary["index_bytes"] / 1e6, 1), passages_per_s=round(summary["passages"] / wall, 1))
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="a .jsonl corpus")
    ap.add_argument("--no-half", action="store_true", help="skip the half-corpus build")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("build_args", nargs="*", help="extra build_graph.py arguments (after --)")
    args = ap.parse_args()
    corpus = Path(args.input)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = {"full": corpus}
        if not args.no_half:
            lines = corpus.read_text(encoding="utf-8").splitlines()
            half = tmp / "half.jsonl"
            half.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
            inputs["half"] = half
        for name, path in inputs.items():
            results[name] = run_build(path, tmp / f"index-{name}", args.build_args)
            print(f"{name}: {json.dumps(results[name])}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        stages = list(results["full"]["seconds"])
        print("| corpus | passages | " + " | ".join(stages) + " | total s | passages/s | peak MB | index MB |")
        print("|" + "---|" * (len(stages) + 6))
        for name, r in results.items():
            cells = " | ".join(f"{r['seconds'][s]:.1f}" for s in stages)
            print(f"| {name} | {r['passages']} | {cells} | {r['wall_s']:.1f} | {r['passages_per_s']:.1f} | "
                  f"{r['peak_pss_mb']} | {r['index_mb']} |")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
