"""Entity linking: from a query's name n-grams and NER mentions to seed entities of the index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ..analysis import Mention, NameCandidate
from ..lang import looks_like_code
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


def evidence_seeds(indptr, indices, rows: Sequence[int], idf_ratio_of: Callable[[np.ndarray], np.ndarray],
                   ) -> dict[int, float]:
    """Seeds for a query that links no index entity: the entities of ``rows`` (passages, best
    first: those the query-only prior ranks highest), each scored by its idf ratio (from
    ``idf_ratio_of(entity ids)``; 1 for an entity of one passage, small for a hub) over the
    rank (1, 2, …) of the best of those passages that holds it. ``indptr``/``indices``: C in
    CSR form (passage → entities); only the given rows are read."""
    seeds: dict[int, float] = {}
    for rank, row in enumerate(rows, 1):
        entities = np.asarray(indices[indptr[row]:indptr[row + 1]], dtype=np.int64)
        if not entities.size:
            continue
        for e, v in zip(entities.tolist(), (np.asarray(idf_ratio_of(entities), dtype=np.float64) / rank).tolist()):
            if v > seeds.get(e, 0.0):
                seeds[e] = v
    return seeds


def no_seed_reason(q, params) -> str:
    """The ``fallback`` text of a query with no seed: why, and what ranked the passages."""
    why = ("no query entity found" if not q.mentions
           else f"no query entity matched an index entity with similarity ≥ {params.seed_floor}")
    if params.evidence_seeds:
        why += ", and the best passages hold no entity"
    return why + ("; ranked by dense passage similarity" if params.prior == "dense"
                  else "; ranked by BM25 + dense fusion")


def sigma_calibration(background: float | None) -> tuple[float, float]:
    """(shift, scale) that read a sentence cosine c as σ = (c − shift) × scale: the query's
    background (capped at 0.99) made 0 and 1 kept at 1; (0, 1) without calibration."""
    if background is None:
        return 0.0, 1.0
    shift = min(background, 0.99)
    return shift, 1.0 / (1.0 - shift)


def calibrate(cosine, background: float):
    """A cosine read against the background cosine b: (c − b) / (1 − b) (b is kept below 1).
    Works on a number or an array; see ``RetrievalParams.similarity``."""
    b = min(background, 0.99)
    return (cosine - b) / (1.0 - b)


def bare_word_share(entity_passages: int, word_passages: int) -> float:
    """How much a word of the corpus is the name of one entity: the entity's passage count
    over the count of passages holding the word (its BM25 tokens), capped at 1; 0 for a word
    with no token (a stop word). "gunicorn": 7 of 8 passages (a name); "run" as a code literal:
    6 of 121 (a word)."""
    if word_passages <= 0:
        return 0.0
    return min(1.0, entity_passages / word_passages)


def link_entities(ngrams: Sequence[NameCandidate], mentions: Sequence[Mention], mention_vectors: np.ndarray,
                  lookup: dict[str, int], entity_names: Sequence[str], floor: float,
                  ngram_linking: bool = True, lowercase: str = "phrases",
                  aliases: dict[str, str] | None = None,
                  nearest: Callable[[np.ndarray], tuple[int, float]] | None = None,
                  bare_ok: Callable[[str, int], bool] | None = None,
                  name_page: Callable[[int], bool] | None = None,
                  ) -> tuple[dict[int, float], list[QueryEntity], set[int]]:
    """Seeds (entity → score), the report of what the query was linked to, and the entities
    the query names only inside a longer linked name ("Burgundy" in "Beatrice I, Countess of
    Burgundy"): parts of the name, not new entities of the question.

    Index entities (and titles) named verbatim by a query n-gram are seeds with score 1.
    Each NER mention not inside such a match is linked to its index entity by exact key
    (score 1), else to the most similar entity (``nearest(mention_vectors[i])`` → (entity,
    similarity): a search space's, read against its entity sample when calibrated; None: no
    similar-name linking), kept when the similarity is at least ``floor``. ``lowercase`` says which n-grams
    without a capitalised word may name an entity: "none", "names" (two or more words naming an
    entity ``e`` for which ``name_page(e)`` holds: a page title written as a name, "reign of
    terror" → "Reign of Terror"; None: none), "phrases" (two or more words, "path parameter", or
    an identifier, "get_current_user") or "all" (single nouns too, "lifespan").
    ``aliases`` (alias key → canonical key, from the index) is applied to every key first.
    A bare lowercase word ("gunicorn") links, with "phrases", only an entity ``e`` for which
    ``bare_ok(word, e)`` holds (see :func:`bare_word_share`): a name typed in lowercase, not a
    word of the corpus ("run") that also happens to name a code literal; None: never.
    """
    if aliases:
        ngrams = [replace(c, key=aliases.get(c.key, c.key)) for c in ngrams]
        mentions = [replace(m, key=aliases.get(m.key, m.key)) for m in mentions]
    seeds: dict[int, float] = {}
    linked: list[QueryEntity] = []
    if hasattr(lookup, "resolve"):   # a key table: every key of the query resolved in one search
        lookup = lookup.resolve([c.key for c in ngrams] + [m.key for m in mentions])
    if lowercase == "names":
        ngrams = [c for c in ngrams if c.named or (
            " " in c.surface.strip() and name_page is not None and c.key in lookup and name_page(lookup[c.key]))]
    elif lowercase != "all":
        ngrams = [c for c in ngrams if c.named or (lowercase == "phrases" and (
            " " in c.surface.strip() or looks_like_code(c.surface) or (   # one word: a name only
                bare_ok is not None and c.key in lookup and bare_ok(c.surface, lookup[c.key]))))]
    matched = maximal_matches(ngrams, lookup) if ngram_linking else []
    matched_keys = {c.key for c in matched}
    covered = {lookup[c.key] for c in ngrams if c.key in lookup and c.key not in matched_keys
               and any(k.start <= c.start and c.end <= k.end for k in matched)}
    for c in matched:
        e = lookup[c.key]
        seeds[e] = 1.0
        how = "name" if c.named or lowercase == "names" else "term"   # "names": a title typed in lowercase
        linked.append(QueryEntity(c.surface, entity_names[e], 1.0, how))
    for mention, vec in zip(mentions, mention_vectors):
        if mention.key in matched_keys or any(
                c.start <= mention.start and mention.end <= c.end for c in matched if mention.start >= 0):
            continue  # part of a longer name already linked ("Burgundy" in "Beatrice I, Countess of Burgundy")
        exact = lookup.get(mention.key)
        how = "name"
        if exact is not None:
            best, sim = exact, 1.0
        elif nearest is not None and len(entity_names):
            best, sim = nearest(vec)
            how = "similar"
        else:
            linked.append(QueryEntity(mention.surface, None, 0.0, "none"))
            continue
        if sim >= floor:
            seeds[best] = max(seeds.get(best, 0.0), sim)
            linked.append(QueryEntity(mention.surface, entity_names[best], round(sim, 6), how))
        else:
            linked.append(QueryEntity(mention.surface, None, round(sim, 6), "none"))
    return seeds, linked, covered - set(seeds)
