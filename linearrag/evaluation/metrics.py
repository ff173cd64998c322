"""Metrics on one question's ranking, and their aggregation.

Recall@k   |gold ∩ top-k| / |gold|                (needs gold_ids)
AllGold@5  1 if every gold passage is in the top 5 (needs gold_ids)
Contain@5  1 if an answer (or alias), normalised, is a substring of the top-5 titles and texts
           (needs answers)
FactRecall@k  share of the question's facts whose phrase is in the text of a top-k passage
           (docs layout, chunking-independent; the rule of the benchmark's reference scorer:
           white space collapsed, also matched with the Markdown characters * _ ` removed)
AllFacts@5 1 if every fact is found in the top 5
A metric whose inputs a question lacks is None (not available), never 0.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Sequence

import numpy as np

RECALL_KS = (1, 2, 5, 10)
FACT_KS = (1, 3, 5, 10)
_MARKDOWN_CHARS = re.compile(r"[*_`]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | {"、", "。", "「", "」", "『", "』", "（", "）", "・", "，", "．", "？", "！"}


def normalize_answer(text: str) -> str:
    """SQuAD-style: NFKC, lower case, punctuation and English articles removed, white space collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if ch in _PUNCT or unicodedata.category(ch).startswith("P") else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def contains_answer(passage_texts: Sequence[str], answers: Sequence[str]) -> bool:
    """True if any normalised answer is a substring of the normalised passages joined together."""
    haystack = normalize_answer(" \n ".join(passage_texts))
    return any((a := normalize_answer(ans)) and a in haystack for ans in answers)


def fact_ranks(phrases: Sequence[str], texts: Sequence[str]) -> list[int | None]:
    """For each phrase, the 1-based rank of the first passage text containing it (None: absent)."""
    plain = [" ".join(t.split()) for t in texts]
    stripped = [" ".join(_MARKDOWN_CHARS.sub("", t).split()) for t in texts]
    ranks = []
    for phrase in phrases:
        ph, sp = " ".join(phrase.split()), " ".join(_MARKDOWN_CHARS.sub("", phrase).split())
        ranks.append(next((i + 1 for i, (t, s) in enumerate(zip(plain, stripped)) if ph in t or (sp and sp in s)),
                          None))
    return ranks


def score_facts(phrases: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """FactRecall@k and AllFacts@5 of one question from its ranked passage texts."""
    ranks = fact_ranks(phrases, texts)
    out = {f"factrecall@{k}": sum(r is not None and r <= k for r in ranks) / len(ranks) for k in FACT_KS}
    out["allfacts@5"] = float(out["factrecall@5"] == 1.0)
    return out


def score_question(retrieved: Sequence[str], gold: Sequence[str] | None, answers: Sequence[str] | None,
                   top_texts: Sequence[str] | None) -> dict[str, float | None]:
    """Metrics for one question. ``retrieved`` are passage ids in rank order (may be fewer than k).

    ``top_texts`` are the title + text of the top-5 retrieved passages, for Contain@5.
    """
    out: dict[str, float | None] = {}
    gold_set = set(gold or [])
    for k in RECALL_KS:
        out[f"recall@{k}"] = (len(gold_set & set(retrieved[:k])) / len(gold_set)) if gold_set else None
    out["allgold@5"] = float(gold_set <= set(retrieved[:5])) if gold_set else None
    out["contain@5"] = float(contains_answer(top_texts or [], answers)) if answers else None
    return out


def aggregate(rows: Sequence[dict[str, float | None]]) -> dict[str, float | int | None]:
    """Mean of each metric over the questions where it is available, in percent; plus counts."""
    out: dict[str, float | int | None] = {"questions": len(rows)}
    if not rows:
        return out
    for name in rows[0]:
        values = [r[name] for r in rows if r.get(name) is not None]
        out[name] = round(100.0 * float(np.mean(values)), 2) if values else None
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 2) if len(values) else None
