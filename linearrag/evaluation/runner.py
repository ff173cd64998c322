"""Run every mode over a question set with one retriever, and report metrics side by side."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..progress import bar
from ..questions import Question
from ..retrieval.params import RetrievalParams
from ..retrieval.retriever import Retriever
from .metrics import aggregate, percentile, score_facts, score_question

_HOPS = re.compile(r"^(\d+)hop")


def hops_of(qtype: str | None) -> str | None:
    """The hop count a question type names (MuSiQue's "3hop1" → "3"), else None."""
    found = _HOPS.match(qtype or "")
    return found.group(1) if found else None


def evaluate(retriever: Retriever, questions: Sequence[Question], modes: Sequence[str] | dict[str, RetrievalParams],
             top_k: int = 10, params: RetrievalParams | None = None, run_file: str | Path | None = None,
             progress: bool = False) -> dict[str, Any]:
    """Evaluate ``modes`` on ``questions``; returns the report (see docs/evaluation.md).

    ``modes`` is a list of mode names (each run with ``params``), or a mapping from a
    label to full parameters (for ablations). Each question is analysed once, unbatched
    (so latencies are single-query figures), and every mode ranks the same analysed query.
    ``run_file`` receives one JSON line per question and mode with the ranked passage ids.
    """
    params = params or retriever.params
    if not isinstance(modes, dict):
        modes = {m: params.with_overrides({"mode": m}) for m in modes}
    variants = {label: p.with_overrides({"top_k": top_k}) for label, p in modes.items()}
    per_mode_rows: dict[str, list[dict]] = defaultdict(list)
    per_mode_types: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    per_mode_hops: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    latencies: dict[str, list[float]] = defaultdict(list)
    fallbacks: dict[str, int] = defaultdict(int)
    linked: dict[str, int] = defaultdict(int)
    index = retriever.index
    tags = any(p.lowercase_linking == "all" for p in variants.values())
    run = open(run_file, "w", encoding="utf-8") if run_file else None
    try:
        with bar(len(questions), "evaluate", progress) as pbar:
            for question in questions:
                analyzed = retriever.analyze_queries([question.question], tags=tags)[0]
                hops = hops_of(question.type)
                for mode, mode_params in variants.items():
                    result = retriever.retrieve(analyzed, mode_params)
                    latencies[mode].append(result.timings_ms["total"])
                    if result.fallback:
                        fallbacks[mode] += 1
                    if any(q.entity for q in result.query_entities):
                        linked[mode] += 1
                    ids = [p.id for p in result.passages]
                    top_texts = [f"{p.title}\n{p.text}" for p in result.passages[:5]]
                    if question.facts:
                        row = score_facts([f["phrase"] for f in question.facts], [p.text for p in result.passages])
                    else:
                        row = score_question(ids, question.gold_ids, question.answers, top_texts)
                    per_mode_rows[mode].append(row)
                    per_mode_types[mode][question.type or "all"].append(row)
                    if hops:
                        per_mode_hops[mode][hops].append(row)
                    if run is not None:
                        cites = [{"id": p.id, "file": p.file, "lines": p.lines, "section": p.section}
                                 | ({"page": p.page} if p.page is not None else {}) for p in result.passages]
                        run.write(json.dumps({"id": question.id, "mode": mode, "retrieved": ids, "citations": cites},
                                             ensure_ascii=False) + "\n")
                pbar.update(1)
    finally:
        if run is not None:
            run.close()
    report: dict[str, Any] = {
        "index": str(index.path), "questions": len(questions), "top_k": top_k,
        "params": params.to_dict(), "modes": {},
    }
    for mode in variants:
        report["modes"][mode] = {
            "overall": aggregate(per_mode_rows[mode]),
            "by_type": {t: aggregate(rows) for t, rows in sorted(per_mode_types[mode].items())},
            "by_hops": {h: aggregate(rows) for h, rows in sorted(per_mode_hops[mode].items())},
            "latency_ms": {"p50": percentile(latencies[mode], 50), "p95": percentile(latencies[mode], 95)},
            "fallbacks": fallbacks[mode],
            "fallback_rate": round(100.0 * fallbacks[mode] / len(questions), 2) if questions else None,
            # questions with at least one query entity linked to an entity of the index
            "linked_rate": round(100.0 * linked[mode] / len(questions), 2) if questions else None,
        }
    return report
