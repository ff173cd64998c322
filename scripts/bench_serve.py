"""Load test of `linearrag serve`: throughput and latency at several client counts, with an
optional writer and an optional soak. Traffic goes to 127.0.0.1 only.

  uv run scripts/bench_serve.py --index indexes/2wiki --questions ../shared/benchmarks/2wiki/questions.jsonl
  uv run scripts/bench_serve.py ... --seconds 20 --concurrency 1,4,16 --writer
  uv run scripts/bench_serve.py ... --soak 600            # 4 clients for 10 minutes, server RSS over time

It starts the server on a free loopback port (a subprocess, the same command a user runs),
measures the in-process warm p50 on the same questions first (same machine, same run), then
for each concurrency N runs N clients (asyncio, httpx), each sending POST /v1/query one after
another for --seconds. Prints one JSON line:
{"runs": [{"concurrency", "qps", "p50_ms", "p95_ms", "p99_ms", "errors", "requests"}, …],
 "inprocess_p50_ms", "writer"?, "soak"?}.

--writer: during the runs, adds 100 documents (10 commits of 10) and removes them (10 commits)
through the API; after each commit it asks for the new documents' unique words and checks they
are found (after an add) or gone (after a removal); every answer that holds a writer's document
must come from a generation in which that document is live ("never a mix").
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import secrets  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from linearrag.cli import run_cli  # noqa: E402
from linearrag.errors import ParameterError  # noqa: E402
from linearrag.questions import read_query_file  # noqa: E402

INPROCESS = """
import json, sys, time, numpy as np
import linearrag.commands
linearrag.commands.pin_query_threads()
from linearrag import api
qs = json.loads(sys.stdin.read())
r = api.open_retriever({index!r}, threads=1)
r.query(qs[0])
walls = []
for q in qs:
    t = time.perf_counter(); r.query(q); walls.append((time.perf_counter() - t) * 1000)
print(json.dumps(float(np.percentile(walls, 50))))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and every process under it (the server's workers), in MB."""
    total = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += rss_mb(int(child))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


class Server:
    """`linearrag serve` in a subprocess on a loopback port, stopped on exit."""

    def __init__(self, index: str, work: Path, extra: list[str]):
        self.port = free_port()
        self.token = secrets.token_urlsafe(32)
        token_file = work / "token"
        token_file.write_text(self.token + "\n")
        token_file.chmod(0o600)
        cmd = [sys.executable, "-m", "linearrag.commands.main", "serve", index, "--port", str(self.port),
               "--quiet", "--token-file", str(token_file), "--root", str(work), *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(work / "server.log", "w"))
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work / "server.log"

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise ParameterError(f"the server exited: {self.log.read_text().strip().splitlines()[-1:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise ParameterError(f"the server did not answer within {timeout:.0f} s; see {self.log}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Ledger:
    """What the writer committed: for each of its documents, the generations it is live in."""

    def __init__(self):
        self.added_at: dict[str, int] = {}
        self.removed_at: dict[str, int] = {}

    def live(self, pid: str, generation: int) -> bool | None:
        """None: not known yet (an answer may race the writer's own bookkeeping)."""
        doc = pid.split("#")[0]
        if doc not in self.added_at:
            return None
        return self.added_at[doc] <= generation < self.removed_at.get(doc, 1 << 62)


async def client(http: httpx.AsyncClient, url: str, questions: list[str], start: int, until: float,
                 lat: list[float], errs: list[str], answers: list[tuple[int, list[str]]]) -> None:
    i = start
    while time.perf_counter() < until:
        q = questions[i % len(questions)]
        i += 7
        t = time.perf_counter()
        try:
            r = await http.post(url + "/v1/query", json={"question": q})
            if r.status_code != 200:
                errs.append(f"{r.status_code} {r.text[:200]}")
                continue
            body = r.json()
            lat.append((time.perf_counter() - t) * 1000)
            answers.append((body["generation"], [p["id"] for p in body["passages"]]))
        except httpx.HTTPError as exc:
            errs.append(f"{type(exc).__name__}: {exc}")


async def run_level(url: str, questions: list[str], n: int, seconds: float) -> dict:
    lat: list[float] = []
    errs: list[str] = []
    answers: list = []
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        await http.post(url + "/v1/query", json={"question": questions[0]})   # warm
        t0, cpu0 = time.perf_counter(), time.process_time()
        until = t0 + seconds
        await asyncio.gather(*(client(http, url, questions, k, until, lat, errs, answers) for k in range(n)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    pct = (lambda p: round(float(np.percentile(lat, p)), 1)) if lat else (lambda p: None)
    return {"concurrency": n, "qps": round(len(lat) / wall, 1), "p50_ms": pct(50), "p95_ms": pct(95),
            "p99_ms": pct(99), "errors": len(errs), "requests": len(lat) + len(errs),
            "client_cpu_cores": round(cpu / wall, 2), "error_samples": errs[:3], "_answers": answers}


async def writer(url: str, token: str, work: Path, ledger: Ledger, report: dict, docs: int = 100,
                 per_commit: int = 10) -> None:
    """Adds ``docs`` documents in commits of ``per_commit`` and removes them again, checking
    after each commit that they are found (or gone)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=600, headers=headers) as http:
        batches = []
        for b in range(docs // per_commit):
            records, words = [], []
            for k in range(per_commit):
                word = f"zq{secrets.token_hex(5)}"
                doc = f"benchdoc-{b}-{k}"
                records.append({"id": doc, "title": f"Bench document {b}-{k}",
                                "text": f"The bench document {doc} holds the unique word {word}. It was added "
                                        f"by the load test writer and names nothing else."})
                words.append((doc, word))
            path = work / f"docs-{b}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
            batches.append((path, words))
        for phase in ("add", "remove"):
            for path, words in batches:
                t = time.perf_counter()
                if phase == "add":
                    r = await http.post(url + "/v1/documents", json={"path": str(path)})
                else:
                    r = await http.request("DELETE", url + "/v1/documents", json={"ids": [d for d, _ in words]})
                if r.status_code != 200:
                    report["failed_writes"] += 1
                    report["write_errors"].append(f"{r.status_code} {r.text[:200]}")
                    continue
                g = r.json()["generation"]
                report["commits"] += 1
                report["commit_s"].append(time.perf_counter() - t)
                for doc, _ in words:
                    (ledger.added_at if phase == "add" else ledger.removed_at)[doc] = g
                report["added" if phase == "add" else "removed"] += len(words)
                for doc, word in words:   # found after an add, gone after a removal
                    q = await http.post(url + "/v1/query", json={"question": f"Which document holds the word {word}?",
                                                                  "mode": "bm25", "top_k": 3})
                    body = q.json()
                    hit = any(p["id"].split("#")[0] == doc for p in body["passages"])
                    fresh = body["generation"] >= g
                    ok = fresh and (hit if phase == "add" else not hit)
                    report["checks"] += 1
                    report["check_failures"] += not ok


def check_mixes(ledger: Ledger, answers: list[tuple[int, list[str]]]) -> int:
    """Answers that hold a writer's document outside the generations it is live in."""
    bad = 0
    for generation, ids in answers:
        for pid in ids:
            if pid.startswith("benchdoc-") and ledger.live(pid, generation) is False:
                bad += 1
    return bad


async def bench(args, server: Server, questions: list[str], work: Path) -> dict:
    out: dict = {"runs": []}
    ledger, task, wreport = Ledger(), None, None
    if args.writer:
        wreport = {"commits": 0, "added": 0, "removed": 0, "checks": 0, "check_failures": 0, "failed_writes": 0,
                   "write_errors": [], "commit_s": []}
        task = asyncio.create_task(writer(server.url, server.token, work, ledger, wreport))
    answers = []
    levels = [int(c) for c in args.concurrency.split(",")]
    for n in levels:
        run = await run_level(server.url, questions, n, args.seconds)
        answers += run.pop("_answers")
        out["runs"].append(run)
    if task is not None:
        extra = 0
        while not task.done():   # keep the readers going until the writer is through
            run = await run_level(server.url, questions, levels[-1], min(args.seconds, 10))
            answers += run.pop("_answers")
            extra += run["requests"]
            for r in out["runs"]:
                if r["concurrency"] == levels[-1]:
                    r.setdefault("after_runs", []).append({k: run[k] for k in ("qps", "p99_ms", "errors", "requests")})
        await task
        commit_s = wreport.pop("commit_s")
        wreport["commit_s_p50"] = round(float(np.median(commit_s)), 2) if commit_s else None
        wreport["mixed_answers"] = check_mixes(ledger, answers)
        wreport["answers_checked"] = len(answers)
        wreport["failed_requests"] = sum(r["errors"] for r in out["runs"]) + wreport["failed_writes"]
        out["writer"] = wreport
    if args.soak:
        out["soak"] = await soak(server, questions, args.soak)
    return out


async def soak(server: Server, questions: list[str], seconds: float, clients: int = 4) -> dict:
    samples: list[tuple[float, float]] = []
    lat: list[float] = []
    errs: list[str] = []
    t0 = time.perf_counter()

    async def sample():
        while time.perf_counter() - t0 < seconds:
            samples.append((round(time.perf_counter() - t0, 1), round(rss_mb(server.proc.pid), 1)))
            await asyncio.sleep(max(1.0, seconds / 60))

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        until = t0 + seconds
        answers: list = []
        await asyncio.gather(sample(), *(client(http, server.url, questions, k, until, lat, errs, answers)
                                         for k in range(clients)))
    samples.append((round(time.perf_counter() - t0, 1), round(rss_mb(server.proc.pid), 1)))
    # growth after warm-up: from the first sample past 10 % of the soak to the last
    base = next(mb for t, mb in samples if t >= seconds * 0.1)
    return {"clients": clients, "seconds": seconds, "requests": len(lat) + len(errs), "errors": len(errs),
            "p50_ms": round(float(np.percentile(lat, 50)), 1) if lat else None,
            "p99_ms": round(float(np.percentile(lat, 99)), 1) if lat else None,
            "rss_mb_start": samples[0][1], "rss_mb_after_warmup": base, "rss_mb_end": samples[-1][1],
            "rss_mb_max": max(mb for _, mb in samples),
            "rss_growth_pct": round(100 * (samples[-1][1] - base) / base, 2), "rss_samples": samples}


def inprocess_p50(index: str, questions: list[str]) -> float:
    code = INPROCESS.format(index=index)
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(questions), capture_output=True, text=True,
                         check=True)
    return round(json.loads(out.stdout.strip().splitlines()[-1]), 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", required=True, help='JSONL of {"id", "question"}')
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--writer", action="store_true", help="add and remove 100 documents during the runs")
    ap.add_argument("--soak", type=float, default=0, metavar="S", help="then 4 clients for S seconds, RSS sampled")
    ap.add_argument("--no-inprocess", action="store_true", help="skip the in-process warm p50")
    ap.add_argument("--server-arg", action="append", default=[], help="extra flag for the server (repeatable)")
    args = ap.parse_args(argv)
    if not Path(args.index).is_dir():
        raise ParameterError(f"--index {args.index}: not a directory; build an index first")
    try:
        levels = [int(c) for c in args.concurrency.split(",")]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1:
        raise ParameterError(f"--concurrency {args.concurrency!r}: pass positive integers, e.g. 1,4,16")
    if args.seconds <= 0 or args.soak < 0:
        raise ParameterError("--seconds must be > 0 and --soak ≥ 0")
    questions = [q for _, q in read_query_file(args.questions)]
    result: dict = {"index": args.index, "questions": len(questions), "seconds": args.seconds}
    if not args.no_inprocess:
        result["inprocess_p50_ms"] = inprocess_p50(args.index, questions[:200])
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        server = Server(args.index, Path(tmp), args.server_arg)
        try:
            server.wait_ready()
            result.update(asyncio.run(bench(args, server, questions, Path(tmp))))
        finally:
            server.stop()
    result["cpu_cores"] = os.cpu_count()
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    run_cli(main)
