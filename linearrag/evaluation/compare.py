"""Do two indexes answer alike? Top-k ids and scores, question by question, in every mode.

Used to show that an index changed by adds and removals equals a full build of the same
passages (tests/test_living_index.py, scripts/bench_update.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..retrieval import RetrievalParams, Retriever

from ..retrieval.params import MODES


@dataclass
class Agreement:
    questions: int = 0
    same_ids: dict[str, int] = field(default_factory=dict)          # per mode: questions with identical top-k ids
    same_sets: dict[str, int] = field(default_factory=dict)         # … with the same top-k ids in any order
    max_score_diff: dict[str, float] = field(default_factory=dict)  # per mode, over questions with the same ids
    first_difference: dict[str, str] = field(default_factory=dict)

    def identical(self, tolerance: float = 1e-6) -> bool:
        return all(self.same_ids[m] == self.questions and self.max_score_diff[m] <= tolerance for m in self.same_ids)

    def to_dict(self) -> dict:
        return {"questions": self.questions,
                "same_top_ids_pct": {m: round(100.0 * n / max(self.questions, 1), 2) for m, n in self.same_ids.items()},
                "same_top_id_sets_pct": {m: round(100.0 * n / max(self.questions, 1), 2)
                                         for m, n in self.same_sets.items()},
                "max_score_diff": self.max_score_diff, "first_difference": self.first_difference}


def compare(a: Retriever, b: Retriever, questions: list[str], top_k: int = 10, modes=MODES) -> Agreement:
    """Query both retrievers (same parameters) and compare their top-k lists."""
    out = Agreement(questions=len(questions))
    qa, qb = a.analyze_queries(questions), b.analyze_queries(questions)
    for mode in modes:
        params = RetrievalParams(top_k=top_k, mode=mode)
        same, same_set, worst = 0, 0, 0.0
        for text, x, y in zip(questions, qa, qb):
            ra, rb = a.retrieve(x, params), b.retrieve(y, params)
            ids_a, ids_b = [h.id for h in ra.passages], [h.id for h in rb.passages]
            same_set += set(ids_a) == set(ids_b)
            if ids_a == ids_b:
                same += 1
                worst = max([worst] + [abs(h.score - g.score) for h, g in zip(ra.passages, rb.passages)])
            elif mode not in out.first_difference:
                out.first_difference[mode] = f"{text!r}: {ids_a} vs {ids_b}"
        out.same_ids[mode], out.same_sets[mode], out.max_score_diff[mode] = same, same_set, worst
    return out
