"""How fast `linearrag serve --watch` follows a folder: seconds from a file's change to the
first answer that reflects it (a new file, an edit, a deletion), and the commits a burst of
100 new files takes. Loopback only; the folder and index are temporary copies.

  uv run scripts/bench_watch.py --docs ../shared/benchmarks/docs-fastapi/docs
"""

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from linearrag.cli import run_cli
from linearrag.errors import ParameterError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", required=True, help="a folder of documents (copied)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    if not Path(args.docs).is_dir():
        raise ParameterError(f"--docs {args.docs}: not a directory")
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp:
        work = Path(tmp)
        docs = work / "docs"
        shutil.copytree(args.docs, docs)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen([sys.executable, "-m", "linearrag.commands.main", "serve", str(work / "index"),
                                 "--port", str(port), "--quiet", "--workers", "1", "--watch", str(docs)],
                                stdout=subprocess.DEVNULL, stderr=open(work / "log", "w"))
        try:
            t0 = time.perf_counter()
            while True:
                try:
                    if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    if proc.poll() is not None:
                        raise ParameterError((work / "log").read_text()[-500:]) from None
                time.sleep(0.3)
            out = {"docs": args.docs, "startup_with_build_s": round(time.perf_counter() - t0, 1)}

            def top(word: str) -> str:
                r = httpx.post(url + "/v1/query", json={"question": f"where is {word}", "mode": "bm25"}, timeout=60)
                ps = r.json()["passages"]
                return ps[0]["text"] if ps else ""

            def seconds_until(change, check) -> float:
                t = time.perf_counter()
                change()
                while not check():
                    time.sleep(0.05)
                return round(time.perf_counter() - t, 2)

            new, edit, delete = [], [], []
            for i in range(args.repeats):
                word, word2 = f"zqnew{i}x", f"zqedit{i}x"
                f = docs / f"bench-{i}.md"
                new.append(seconds_until(lambda: f.write_text(f"# Bench {i}\n\nThe {word} lives here.\n"),
                                         lambda: word in top(word)))
                edit.append(seconds_until(lambda: f.write_text(f"# Bench {i}\n\nThe {word2} lives here.\n"),
                                          lambda: word2 in top(word2)))
                delete.append(seconds_until(f.unlink, lambda: word2 not in top(word2)))
            g0 = httpx.get(url + "/healthz").json()["generation"]
            burst = docs / "burst"
            burst.mkdir()
            t = time.perf_counter()
            for i in range(100):
                (burst / f"b{i:03d}.md").write_text(f"# Burst {i}\n\nThe zqburst{i:03d}x bell rings.\n")
            while "zqburst099x" not in top("zqburst099x") or "zqburst000x" not in top("zqburst000x"):
                time.sleep(0.1)
            out["burst_100_files"] = {"seconds": round(time.perf_counter() - t, 2),
                                      "commits": httpx.get(url + "/healthz").json()["generation"] - g0}
            out |= {"new_file_s": new, "edit_s": edit, "delete_s": delete,
                    "max_s": max(new + edit + delete)}
        finally:
            proc.terminate()
            proc.wait(30)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    run_cli(main)
