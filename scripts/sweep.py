"""Choose retrieval defaults honestly: tune on one fixed half of every dev set, report both halves.

Each set's questions are split into two halves by a hash of the question id (SHA-256, first
byte even → half A, "tune"; odd → half B, "held out"), so the split never changes. A
coordinate sweep starts from the current defaults and, one parameter at a time, keeps the
value with the best mean score over half A of every set together (score per set: the mean of
R@2, R@5 and AllGold@5, or of FactRecall@3, FactRecall@5 and AllFacts@5 for the docs layout:
the top of the list counts, not only the first five). Half B is only
reported. Queries are analysed once per set; each setting re-ranks the same analysed queries.

  uv run scripts/sweep.py [--benchmarks ../shared/benchmarks] [--indexes indexes] [--sets 2wiki,...]
                          [--params delta,siblings,...] [--json]

Missing indexes are built with build_graph.py first (docs-fastapi from its docs/ folder).
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ("2wiki", "hotpotqa-dev", "jsquad", "docs-fastapi")
GRID = {
    "similarity": ["raw", "calibrated"],
    "delta": [0.3, 0.4, 0.5],
    "passage_weight": [0.8, 0.9, 0.95],
    "seed_floor": [0.6, 0.7, 0.8],
    "fusion_weight": [2.0, 3.0, 4.0],
    "lam": [0.5, 1.0, 2.0],
    "damping": [0.3, 0.5, 0.7],
    "evidence_seeds": [1, 2, 3, 5, 8],
    "hub_damping": [0.5, 1.0, 2.0],
    "lowercase_linking": ["none", "names", "phrases", "all"],
    "term_fusion": ["same", "rrf"],
    "siblings": ["walk", "prior"],
    "fusion_dense": [0.0, 1.0, 1.5, 2.0, 3.0, 4.0],
    "fusion_secondary": ["bm25", "hybrid"],
    "fusion": ["auto", "min"],
    "rrf_weight": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0],
    "sentence_voter": [0.0, 0.25, 0.5, 1.0, 2.0],
    "term_evidence": ["off", "documents"],
    "term_seed_weight": [0.1, 0.3, 1.0],
    "bare_word_share": [0.0, 0.25, 0.5, 0.75, 1.0],
    "link_parts": ["off", "on"],
    "link_asked": ["linked", "score"],
    "asked_qualified": ["none", "best"],
    "link_parts_prior": [0.0, 0.05, 0.1, 0.2],
    "link_reach": [0, 1, 2],
    "link_reach_df": [30, 100, 300],
    "cover_weight": [0.0, 0.5, 1.0, 2.0, 4.0],
    "cover_df": [30, 50, 100, 300],
    "rounds": [1, 2, 3],
    "round_passages": [1, 2, 3, 5],
    "round_weight": [0.1, 0.3, 1.0],
}


def _corpus(bench: Path, name: str) -> Path:
    docs = bench / name / "docs"
    return docs if docs.is_dir() else bench / name / "corpus.jsonl"


def _score(retriever, analyzed, questions, params) -> float:
    from linearrag.evaluation.metrics import score_facts, score_question

    total = 0.0
    for q, a in zip(questions, analyzed):
        result = retriever.retrieve(a, params)
        if q.facts:
            row = score_facts([f["phrase"] for f in q.facts], [p.text for p in result.passages])
            total += (row["factrecall@3"] + row["factrecall@5"] + row["allfacts@5"]) / 3
        else:
            row = score_question([p.id for p in result.passages], q.gold_ids, None, None)
            total += (row["recall@2"] + row["recall@5"] + row["allgold@5"]) / 3
    return 100.0 * total / max(len(questions), 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmarks", default=str(ROOT.parent / "shared" / "benchmarks"))
    ap.add_argument("--indexes", default=str(ROOT / "indexes"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--params", default=",".join(GRID),
                    help="sweep only these parameters of the grid (comma-separated; default: all of them)")
    ap.add_argument("--joint", action="store_true",
                    help="try every combination of the --params values (parameters that act together) instead "
                         "of one parameter at a time")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
    ap.add_argument("--output", default=str(ROOT / "docs" / "sweep.json"),
                    help="where to save the result (benchmark_report.py puts it in docs/benchmarks.md)")
    args = ap.parse_args()
    unknown = sorted(set(args.params.split(",")) - set(GRID))
    if unknown:
        print(f"error: --params: not in the grid: {', '.join(unknown)}; choose from {', '.join(GRID)}", file=sys.stderr)
        return 2
    grid = {k: v for k, v in GRID.items() if k in args.params.split(",")}
    bench, indexes = Path(args.benchmarks), Path(args.indexes)
    missing = [n for n in args.sets.split(",") if not (bench / n / "questions.jsonl").is_file()]
    if missing:
        print(f"error: --sets: no {bench}/NAME/questions.jsonl for {', '.join(missing)}; "
              f"pass set folders of --benchmarks (e.g. {', '.join(SETS)})", file=sys.stderr)
        return 2
    from linearrag import RetrievalParams, Retriever
    from linearrag.evaluation.split import half
    from linearrag.questions import load_questions

    data = {}
    for name in args.sets.split(","):
        index = indexes / name
        if not (index / "CURRENT").exists():
            subprocess.run([sys.executable, "scripts/build_graph.py", "--input", str(_corpus(bench, name)),
                            "--output", str(index), "--quiet"], check=True, cwd=ROOT)
        retriever = Retriever.from_path(index)
        questions = load_questions(bench / name / "questions.jsonl")
        analyzed = retriever.analyze_queries([q.question for q in questions], tags=True)   # any lowercase_linking
        split = {h: [(q, a) for q, a in zip(questions, analyzed) if half(q.id) == h] for h in "AB"}
        data[name] = (retriever, split)
        print(f"{name}: {len(split['A'])} questions to tune on, {len(split['B'])} held out", file=sys.stderr)

    def evaluate(params, h):
        return {name: round(_score(r, [a for _, a in split[h]], [q for q, _ in split[h]], params), 2)
                for name, (r, split) in data.items()}

    def mean(scores):
        return sum(scores.values()) / len(scores)

    best = RetrievalParams().with_overrides({"top_k": 10})
    start = evaluate(best, "A")
    best_score = mean(start)
    trace = []
    steps = ([dict(zip(grid, combo)) for combo in itertools.product(*grid.values())] if args.joint
             else [{name: value} for name, values in grid.items() for value in values])
    for step in steps:
        candidate = (RetrievalParams().with_overrides({"top_k": 10}) if args.joint else best).with_overrides(step)
        if candidate == best:
            continue
        scores = evaluate(candidate, "A")
        trace.append({"params": step, "A": scores, "mean": round(mean(scores), 2)})
        print(f"  {step}: {mean(scores):.2f} (best {best_score:.2f})", file=sys.stderr)
        if mean(scores) > best_score + 0.05:   # ignore differences of a question or so
            best, best_score = candidate, mean(scores)
    defaults = RetrievalParams().with_overrides({"top_k": 10})
    result = {
        "chosen": {k: getattr(best, k) for k in grid},
        "defaults_now": {k: getattr(defaults, k) for k in grid},
        "defaults_now_scores": {"A": start, "B": evaluate(defaults, "B")},
        "chosen_scores": {"A": evaluate(best, "A"), "B": evaluate(best, "B")},
        "trace": trace,
    }
    Path(args.output).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result))
    else:
        print(f"chosen on half A: {result['chosen']} (defaults now: {result['defaults_now']})")
        for label in ("defaults_now_scores", "chosen_scores"):
            print(label, json.dumps(result[label]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
