"""Fault injection you can repeat: kills, concurrent writers, a full disk and damaged files.

  uv run scripts/torture.py                 # the full run: 30 kills, every file × 3 damages
  uv run scripts/torture.py --quick         # the short run CI does (tests/test_torture.py)

1. kill -9 at random moments (seeded) spread over build, add, remove, update and compact (each
   between 5 % and 98 % of that operation's measured duration); after each kill the index must
   open, pass `linearrag check`, hold exactly the passages of before or of after the operation,
   keep the user's files planted inside and beside it, and take the next write.
2. Two writers adding at once while this process opens the index in a loop: no open fails, every
   opened generation is whole (its texts hash to the fingerprint its manifest records), both land.
3. A full disk (a small tmpfs when this runs as root, else RLIMIT_FSIZE) under --add at several
   sizes: one `error:` line, the index unchanged, nothing left behind.
4. The damage matrix: every file of the index × delete / truncate / invert 16 bytes (at the
   start, in the middle, at a random place), then queries
   (exact and ANN paths) and a writer. A query gives the same passages with their own texts, or
   one error; damage to float vectors may reorder results and `linearrag check` must name it; a
   writer refuses, or writes a generation that passes `check` (it never inherits a damaged file).

Prints one JSON line of counts; exits 1 if a goal is missed (0 broken, 0 wrong texts, 0
tracebacks, 0 lost documents, 0 lost user files).
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
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from linearrag import Retriever  # noqa: E402
from linearrag.check import check_index  # noqa: E402
from linearrag.corpus import load_corpus
from linearrag.passage import Passage, fingerprint  # noqa: E402
from linearrag.errors import LinearRAGError  # noqa: E402
from linearrag.index.store import current_generation, load_index, read_manifest  # noqa: E402
from linearrag.index.writer import IndexWriter  # noqa: E402

CORPUS = ROOT / "examples" / "2wiki-sample" / "corpus.jsonl"
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
OPERATIONS = ("build", "add", "remove", "update", "compact")
# float arrays: damage no cheap structural check can see (linearrag check must name the file)
FLOAT_FILES = ("passage_emb.npy", "sentence_emb.npy", "entity_emb.npy", "names_emb.npy")
GOALS = ("broken", "wrong_texts", "tracebacks", "lost_documents", "lost_user_files")


def _cli(*args) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "build_graph.py"), *map(str, args), "--quiet"]


def _ids(idx: Path) -> set[str]:
    return set(load_index(idx).passage_ids)


def plant(place: Path) -> None:
    """A user's files: a document and a folder with a picture."""
    (place / "photos").mkdir(parents=True, exist_ok=True)
    (place / "thesis.docx").write_text("draft")
    (place / "photos" / "1.jpg").write_text("x")


def intact(place: Path) -> bool:
    try:
        return (place / "thesis.docx").read_text() == "draft" and (place / "photos" / "1.jpg").read_text() == "x"
    except OSError:
        return False


class Bench:
    """The fixtures: a folder of 40 Markdown documents, 10 more records, an index of the folder."""

    def __init__(self, work: Path):
        self.work = work
        self.docs, self.extra, self.base = work / "docs", work / "extra.jsonl", work / "base"
        self.count = 0

    @classmethod
    def make(cls, work: Path) -> Bench:
        bench = cls(work)
        rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
        bench.docs.mkdir(parents=True)
        for r in rows[:40]:
            (bench.docs / f"{r['id']}.md").write_text(f"# {r['title']}\n\n{r['text']}\n", encoding="utf-8")
        bench.extra.write_text("".join(json.dumps(r) + "\n" for r in rows[40:50]), encoding="utf-8")
        bench.spare = rows[50:60]
        subprocess.run(_cli("--input", bench.docs, "--output", bench.base), check=True, env=ENV)
        return bench

    def trial(self) -> tuple[Path, Path, Path]:
        """A fresh place: (outer folder with the user's files, the index inside it, the documents)."""
        self.count += 1
        outer = self.work / f"t{self.count:04d}"
        shutil.copytree(self.docs, outer / "docs")
        shutil.copytree(self.base, outer / "idx")
        plant(outer)
        plant(outer / "idx")
        return outer, outer / "idx", outer / "docs"

    def restore_docs(self) -> None:
        """Undo an update trial's change to the documents."""
        if getattr(self, "_saved", None):
            path, data = self._saved
            path.write_bytes(data)
            (self.docs / "new.md").unlink(missing_ok=True)
            self._saved = None

    def operation(self, op: str, idx: Path, docs: Path) -> tuple[list[str], set[str], set[str]]:
        """The command of ``op`` on a trial, and the passage ids before and after it."""
        before = _ids(idx)
        if op == "build":
            return _cli("--input", self.extra, "--output", idx), before, {p.id for p in load_corpus(self.extra)}
        if op == "add":
            return _cli("--output", idx, "--add", self.extra), before, before | {p.id for p in load_corpus(self.extra)}
        if op == "remove":
            gone = sorted(before)[:3]
            return _cli("--output", idx, "--remove", *gone), before, before - set(gone)
        if op == "update":   # the index's recorded source changes: one file deleted, one new
            self.restore_docs()
            victim = sorted(self.docs.iterdir())[0]
            self._saved = (victim, victim.read_bytes())
            victim.unlink()
            r = self.spare[0]
            (self.docs / "new.md").write_text(f"# {r['title']}\n\n{r['text']}\n", encoding="utf-8")
            after = {p.id for p in load_corpus(self.docs)}
            return _cli("--output", idx, "--update"), before, after
        return _cli("--output", idx, "--compact"), before, before


def _after_kill(outer: Path, idx: Path, before: set[str], after: set[str]) -> dict:
    """What a killed (or finished) writer left: counts of what went wrong."""
    out = {"broken": 0, "lost_documents": 0, "lost_user_files": 0}
    if not (intact(outer) and intact(idx)):
        out["lost_user_files"] = 1
    try:
        check_index(idx)
        ids = _ids(idx)
    except LinearRAGError:
        return dict(out, broken=1)
    if ids not in (before, after):
        out["broken"] = 1
        out["lost_documents"] = len((before & after) - ids)
    proc = subprocess.run(_cli("--output", idx, "--remove", sorted(ids)[-1]), env=ENV, capture_output=True, text=True)
    if proc.returncode != 0 or not intact(idx):
        out["broken"] = 1
    return out


def kill_trials(bench: Bench, kills: int, rng: random.Random) -> dict:
    durations = {}
    for op in OPERATIONS:   # measured once, unkilled: where a random kill should land
        outer, idx, docs = bench.trial()
        argv, before, after = bench.operation(op, idx, docs)
        t0 = time.perf_counter()
        subprocess.run(argv, env=ENV, check=True)
        durations[op] = time.perf_counter() - t0
        bench.restore_docs()
        assert _ids(idx) == after, f"{op} did not give the expected passages"
    report = {"trials": 0, "killed": 0, "finished": 0, "broken": 0, "lost_documents": 0, "lost_user_files": 0,
              "by_operation": {op: 0 for op in OPERATIONS}, "seconds": {k: round(v, 1) for k, v in durations.items()}}
    for k in range(kills):
        op = OPERATIONS[k % len(OPERATIONS)]
        outer, idx, docs = bench.trial()
        argv, before, after = bench.operation(op, idx, docs)
        proc = subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.98) * durations[op])
        proc.send_signal(signal.SIGKILL)
        killed = proc.wait() == -signal.SIGKILL
        report["trials"] += 1
        report["killed" if killed else "finished"] += 1
        report["by_operation"][op] += killed
        for key, value in _after_kill(outer, idx, before, after).items():
            report[key] += value
        bench.restore_docs()
        shutil.rmtree(outer, ignore_errors=True)
    return report


def concurrent_writers(bench: Bench, rounds: int = 2) -> dict:
    """Two writers add and remove their own documents in turn while this thread opens the index."""
    outer, idx, _ = bench.trial()
    files = []
    for k, rows in enumerate((bench.spare[2:6], bench.spare[6:10])):
        f = outer / f"writer{k}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        files.append((f, [r["id"] for r in rows]))
    script = ("import subprocess, sys\n"
              "for _ in range(int(sys.argv[3])):\n"
              "    subprocess.run(sys.argv[4:] + ['--output', sys.argv[1], '--add', sys.argv[2], '--quiet'], check=True)\n")
    writers = [subprocess.Popen([sys.executable, "-c", script, str(idx), str(f), str(rounds), sys.executable,
                                 str(ROOT / "scripts" / "build_graph.py")], env=ENV) for f, _ in files]
    reads, failures, generations = 0, 0, set()
    while any(w.poll() is None for w in writers):
        try:
            index = load_index(idx)
            passages = [Passage(i, t, x) for i, t, x in zip(index.passage_ids, index.passage_titles,
                                                             index.passage_texts)]
            failures += fingerprint(passages) != index.meta["input"]["fingerprint"]
            generations.add(index.generation)
        except Exception:   # noqa: BLE001 - a failed open is what is counted
            failures += 1
        reads += 1
    landed = _ids(idx)
    lost = sum(1 for _, ids in files for i in ids if i not in landed)
    return {"trials": len(writers), "reads": reads, "failed_reads": failures, "generations_seen": len(generations),
            "writer_errors": sum(w.returncode != 0 for w in writers), "lost_documents": lost,
            "broken": int(failures > 0 or any(w.returncode for w in writers))}


def _fill_runs(bench: Bench) -> tuple[str, list]:
    """How the disk fills: a tmpfs of the index's size plus some room (root), else a file-size limit."""
    pages = sum(-(-f.stat().st_size // 4096) + 1 for f in bench.base.rglob("*"))   # tmpfs counts whole pages
    size = (pages + 16) * 4096
    if os.geteuid() == 0 and shutil.which("mount"):
        return "tmpfs", [size + room for room in (64 << 10, 512 << 10, 2 << 20, 6 << 20)]
    return "RLIMIT_FSIZE", [16 << 10, 256 << 10, 1 << 20, 4 << 20]


def disk_full(bench: Bench) -> dict:
    how, limits = _fill_runs(bench)
    report = {"how": how, "trials": 0, "refused": 0, "committed": 0, "broken": 0, "tracebacks": 0,
              "leftovers": 0, "lost_user_files": 0}
    for limit in limits:
        outer, idx, _ = bench.trial()
        mount = outer / "small"
        mount.mkdir()
        if how == "tmpfs" and subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={limit}", "tmpfs", str(mount)],
                                             capture_output=True).returncode != 0:
            how, report["how"] = "RLIMIT_FSIZE", "RLIMIT_FSIZE"
        try:
            report = _fill_once(report, how, limit, idx, mount, bench.extra)
        finally:
            if how == "tmpfs":
                subprocess.run(["umount", str(mount)], capture_output=True)
    return report


def _fill_once(report: dict, how: str, limit: int, idx: Path, mount: Path, extra: Path) -> dict:
    target = mount / "idx"
    shutil.copytree(idx, target)
    before, entries = current_generation(target), sorted(p.name for p in target.iterdir())
    argv = _cli("--output", target, "--add", extra)
    if how == "RLIMIT_FSIZE":
        argv = [sys.executable, "-c", "import resource, runpy, sys; sys.dont_write_bytecode = True; "   # (a cut .pyc)
                f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); sys.argv = sys.argv[1:]; "
                "runpy.run_path(sys.argv[0], run_name='__main__')", *argv[1:]]
    proc = subprocess.run(argv, env=ENV, capture_output=True, text=True)
    report["trials"] += 1
    lines = proc.stderr.strip().splitlines()
    report["tracebacks"] += "Traceback" in proc.stderr
    report["lost_user_files"] += not intact(target)
    if proc.returncode == 0:
        report["committed"] += 1
    elif proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "):
        report["refused"] += 1
        report["leftovers"] += sorted(p.name for p in target.iterdir()) != entries
        report["broken"] += current_generation(target) != before
    else:
        report["broken"] += 1
    try:
        check_index(target)
    except LinearRAGError:
        report["broken"] += 1
    return report


DAMAGES = ("delete", "truncate", "flip-start", "flip-middle", "flip-random")


def damage(path: Path, kind: str, rng: random.Random) -> None:
    """Delete, truncate to half, or invert 16 bytes: at the start (a header), in the middle, or
    at a random place."""
    if kind == "delete":
        path.unlink()
        return
    data = bytearray(path.read_bytes())
    if kind == "truncate":
        path.write_bytes(bytes(data[:len(data) // 2]))
        return
    room = max(1, len(data) - 16)
    at = {"flip-start": 0, "flip-middle": room // 2}.get(kind, rng.randrange(room))
    for k in range(at, min(at + 16, len(data))):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))


class Reference:
    """The undamaged index's answers (exact and ANN paths) and every passage's text."""

    QUESTIONS = ("What nationality is Beatrice I, Countess of Burgundy's husband?",
                 "Who is the spouse of the director of film West Of Shanghai?", "Where was Lothair II born?")

    def __init__(self, idx: Path):
        retriever = Retriever.from_path(idx)
        self.analyzer, self.encoder, self.params = retriever.analyzer, retriever.encoder, retriever.params
        index = retriever.index
        self.texts = dict(zip(index.passage_ids, index.passage_texts))
        self.answers = self.run(retriever)

    def run(self, retriever) -> list[list[tuple[str, str]]]:
        return [[(h.id, h.text) for h in retriever.query(q, self.params.with_overrides({"search": s})).passages]
                for q in self.QUESTIONS for s in ("exact", "ann")]


def _query_outcome(ref: Reference, idx: Path) -> str:
    """correct | reordered (same texts, other ranking) | error | wrong_text | traceback: …"""
    try:
        retriever = Retriever(load_index(idx), ref.params, analyzer=ref.analyzer, encoder=ref.encoder, warm=False)
        answers = ref.run(retriever)
    except LinearRAGError:
        return "error"
    except Exception as exc:   # noqa: BLE001 - counted: a traceback the user would have seen
        return f"traceback: {type(exc).__name__}: {str(exc)[:120]}"
    if any(ref.texts.get(pid) != text for answer in answers for pid, text in answer):
        return "wrong_text"
    return "correct" if answers == ref.answers else "reordered"


def _writer_outcome(ref_ids: list[str], idx: Path) -> str:
    """refused | healed (a new generation that passes check) | inherited | traceback."""
    try:
        IndexWriter(idx).remove([ref_ids[0]])
    except LinearRAGError:
        return "refused"
    except Exception as exc:   # noqa: BLE001
        return f"traceback: {type(exc).__name__}: {str(exc)[:120]}"
    try:
        check_index(idx)
    except LinearRAGError:
        return "inherited"
    return "healed"


def damage_matrix(bench: Bench, rng: random.Random, sample: int | None = None) -> dict:
    outer, idx, _ = bench.trial()
    ref = Reference(idx)
    manifest = read_manifest(idx)
    files = ["CURRENT", f"manifest-{manifest['generation']:06d}.json", *sorted(manifest["files"])]
    cases = [(f, kind) for f in files for kind in DAMAGES]
    if sample:
        cases = rng.sample(cases, min(sample, len(cases)))
    report = {"trials": 0, "queries": {}, "writers": {}, "float_damage": 0, "named_by_check": 0, "broken": 0,
              "wrong_texts": 0, "tracebacks": 0, "failures": []}
    for rel, kind in cases:
        trial = outer / "damaged"
        for use in ("query", "writer"):
            shutil.rmtree(trial, ignore_errors=True)
            shutil.copytree(idx, trial)
            damage(trial / rel, kind, rng)
            outcome = _query_outcome(ref, trial) if use == "query" else _writer_outcome(sorted(ref.texts), trial)
            if outcome.startswith("traceback") or outcome in ("wrong_text", "inherited"):
                report["failures"].append(f"{rel} {kind} {use}: {outcome}")
                outcome = outcome.split(":")[0]
            tally = report["queries" if use == "query" else "writers"]
            tally[outcome] = tally.get(outcome, 0) + 1
            report["tracebacks"] += outcome == "traceback"
            report["wrong_texts"] += outcome == "wrong_text"
            report["broken"] += outcome == "inherited"
            if outcome == "reordered":
                report["float_damage"] += 1
                report["broken"] += not (rel.endswith(FLOAT_FILES) and _named_by_check(trial, rel))
                report["named_by_check"] += _named_by_check(trial, rel)
        report["trials"] += 1
    return report


def _named_by_check(idx: Path, rel: str) -> bool:
    try:
        check_index(idx)
    except LinearRAGError as exc:
        return rel in str(exc)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the short run: 5 kills, 12 cases of the damage matrix")
    ap.add_argument("--kills", type=int, default=None, help="kill trials (default 30; --quick 5)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workdir", default=None, help="where to work (default: a temporary directory, removed)")
    ap.add_argument("--parts", default="damage,disk_full,concurrent,kills",
                    help="which parts to run (comma-separated; default all)")
    args = ap.parse_args()
    kills = args.kills if args.kills is not None else (5 if args.quick else 30)
    rng = random.Random(args.seed)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="linearrag-torture-"))
    try:
        bench = Bench.make(work)
        parts = {"damage": lambda: damage_matrix(bench, rng, sample=12 if args.quick else None),
                 "disk_full": lambda: disk_full(bench), "concurrent": lambda: concurrent_writers(bench),
                 "kills": lambda: kill_trials(bench, kills, rng)}
        unknown = set(args.parts.split(",")) - set(parts)
        if unknown:
            print(f"error: --parts: unknown {', '.join(sorted(unknown))}; choose from {', '.join(parts)}",
                  file=sys.stderr)
            return 2
        report = {name: run() for name, run in parts.items() if name in args.parts.split(",")}
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    totals = {k: sum(part.get(k, 0) for part in report.values()) for k in ("trials", *GOALS)}
    print(json.dumps({"totals": totals, **report}))
    return 1 if any(totals[k] for k in GOALS) else 0


if __name__ == "__main__":
    sys.exit(main())
