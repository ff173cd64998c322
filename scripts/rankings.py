"""Record what an index answers, and compare two records: the "behaviour unchanged" check.

    uv run scripts/rankings.py record --index IDX --questions Q.jsonl --output before.json
    uv run scripts/rankings.py diff before.json after.json

``record`` runs every question in every mode, on the exact and the approximate (ANN) search
path, and keeps per question the top-k passage ids and scores, the fallback, the activated
entities and each passage's entities and "linked from". ``diff`` says, per mode and path, how
many questions have the same ids (and the same explanation), and the largest score difference
among them; it exits 1 unless everything is equal within ``--tolerance`` (default 1e-6).
Only the public API is used (``Retriever.query_batch``), so a record taken on one version of the
code can be compared with one taken on another.
"""

from __future__ import annotations

import argparse
import json
import sys

from linearrag.cli import run_cli
from linearrag.questions import load_questions
from linearrag.retrieval import RetrievalParams, Retriever

from linearrag.retrieval.params import MODES
SEARCHES = ("exact", "ann")


def record(index: str, questions: str, top_k: int, limit: int | None) -> dict:
    """{"mode/search": [per question {"ids", "scores", "explain"}]} for every mode and path."""
    retriever = Retriever.from_path(index)
    texts = [q.question for q in load_questions(questions)][:limit]
    out: dict[str, list] = {}
    for search in SEARCHES:
        for mode in MODES:
            params = RetrievalParams(top_k=top_k, mode=mode, search=search)
            rows = []
            for text in texts:
                result = retriever.query(text, params)
                rows.append({"ids": [p.id for p in result.passages],
                             "scores": [p.score for p in result.passages],
                             "explain": {"fallback": result.fallback,
                                         "activated": [(e.entity, e.score, e.level, e.sentence) for e in result.activated_entities],
                                         "passages": [(p.entities, p.linked_from) for p in result.passages]}})
            out[f"{mode}/{search}"] = rows
    return {"index": index, "questions": len(texts), "top_k": top_k, "runs": out}


def diff(a: dict, b: dict, tolerance: float) -> tuple[dict, bool]:
    """Per run: questions with equal ids, equal explanations, and the largest score difference."""
    report, equal = {}, True
    for key in sorted(set(a["runs"]) | set(b["runs"])):
        ra, rb = a["runs"].get(key, []), b["runs"].get(key, [])
        same_ids = same_explain = 0
        worst = 0.0
        for qa, qb in zip(ra, rb):
            if qa["ids"] == qb["ids"]:
                same_ids += 1
                worst = max([worst, *(abs(x - y) for x, y in zip(qa["scores"], qb["scores"]))])
            same_explain += json.loads(json.dumps(qa["explain"])) == json.loads(json.dumps(qb["explain"]))
        ok = len(ra) == len(rb) and same_ids == len(ra) and same_explain == len(ra) and worst <= tolerance
        equal &= ok
        report[key] = {"questions": len(ra), "same_ids": same_ids, "same_explanation": same_explain,
                       "max_score_diff": worst, "equal": ok}
    return report, equal


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="run every question in every mode on both search paths")
    r.add_argument("--index", required=True)
    r.add_argument("--questions", required=True)
    r.add_argument("--output", required=True)
    r.add_argument("--top-k", type=int, default=10)
    r.add_argument("--limit", type=int, default=None, help="only the first N questions")
    d = sub.add_parser("diff", help="compare two records")
    d.add_argument("before")
    d.add_argument("after")
    d.add_argument("--tolerance", type=float, default=1e-6)
    args = p.parse_args(argv)
    if args.command == "record":
        data = record(args.index, args.questions, args.top_k, args.limit)
        with open(args.output, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False)
        print(json.dumps({"output": args.output, "questions": data["questions"], "runs": len(data["runs"])}))
        return 0
    with open(args.before, encoding="utf-8") as fa, open(args.after, encoding="utf-8") as fb:
        report, equal = diff(json.load(fa), json.load(fb), args.tolerance)
    print(json.dumps({"equal": equal}))
    for key, row in report.items():
        print(json.dumps({"run": key, **row}))
    return 0 if equal else 1


if __name__ == "__main__":
    run_cli(main)
