"""Entity linking: from a query's name n-grams and NER mentions to seed entities of the index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..analysis import Mention, NameCandidate
from .results import QueryEntity


def maximal_matches(ngrams: Sequence[NameCandidate], lookup: dict[str, int]) -> list[NameCandidate]:
    """The n-grams whose key is an index entity, dropping those whose span lies inside a
    longer match's span (token spans, not substrings: "Ran" is no part of "Grand Canyon"),
    and repeats of a key already kept. Longest first, then by position."""
    hits = sorted((c for c in ngrams if c.key in lookup), key=lambda c: (-(c.end - c.start), c.start))
    kept: list[NameCandidate] = []
    keys: set[str] = set()
    for c in hits:
        if c.key in keys or any(k.start <= c.start and c.end <= k.end for k in kept):
            continue
        kept.append(c)
        keys.add(c.key)
    return kept


def link_entities(ngrams: Sequence[NameCandidate], mentions: Sequence[Mention], mention_vectors: np.ndarray,
                  lookup: dict[str, int], entity_emb: np.ndarray, entity_names: Sequence[str], floor: float,
                  ngram_linking: bool = True, lowercase: bool = True) -> tuple[dict[int, float], list[QueryEntity]]:
    """Seeds (entity → score) and the report of what the query was linked to.

    Index entities (and titles) named verbatim by a query n-gram are seeds with score 1.
    Each NER mention not inside such a match is linked to its index entity by exact key
    (score 1), else to the most similar entity by cosine (``mention_vectors[i]``, unit
    rows), kept when the cosine is at least ``floor``. ``lowercase``: n-grams without a
    capitalised word (terms such as "path parameter") may link too.
    """
    seeds: dict[int, float] = {}
    linked: list[QueryEntity] = []
    if not lowercase:
        ngrams = [c for c in ngrams if c.named]
    matched = maximal_matches(ngrams, lookup) if ngram_linking else []
    matched_keys = {c.key for c in matched}
    for c in matched:
        e = lookup[c.key]
        seeds[e] = 1.0
        linked.append(QueryEntity(c.surface, entity_names[e], 1.0))
    for mention, vec in zip(mentions, mention_vectors):
        if mention.key in matched_keys or any(
                c.start <= mention.start and mention.end <= c.end for c in matched if mention.start >= 0):
            continue  # part of a longer name already linked ("Burgundy" in "Beatrice I, Countess of Burgundy")
        exact = lookup.get(mention.key)
        if exact is not None:
            best, sim = exact, 1.0
        elif len(entity_names):
            sims = entity_emb @ vec
            best = int(np.argmax(sims))
            sim = float(sims[best])
        else:
            linked.append(QueryEntity(mention.surface, None, 0.0))
            continue
        if sim >= floor:
            seeds[best] = max(seeds.get(best, 0.0), sim)
            linked.append(QueryEntity(mention.surface, entity_names[best], round(sim, 6)))
        else:
            linked.append(QueryEntity(mention.surface, None, round(sim, 6)))
    return seeds, linked
