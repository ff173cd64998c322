"""The retrieval stages, in their one order, over a search space (:mod:`space`).

linearrag mode: link the query's entities → the query-only evidence and prior → seeds from the
best passages when nothing linked (``evidence_seeds``), else the fallback → activation over M →
the PageRank walk → the prior rerank and sibling order → fusion → (``rounds`` > 1: the best
passages' entities join the seeds, and activation, walk and fusion run again) → the best
``depth`` rows. The
baselines (dense, bm25, rrf) stop after the evidence. Each stage records its time in
``timings`` (ms). Linked selection and the output are the retriever's (:mod:`output`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .fusion import Ranks, min_fusion, rrf, siblings_by_prior, top_rows
from .linking import evidence_seeds, no_seed_reason
from .params import RetrievalParams
from .space import Evidence, Linked, Ranking, Scored, SearchSpace


def rank(space: SearchSpace, q, params: RetrievalParams, link: Callable[[], Linked], timings: dict) -> Ranking:
    """Rank passages for the analysed query ``q``; ``link()`` runs the linking stage."""
    linked = Linked({})
    if params.mode == "linearrag":
        linked = _timed(timings, "linking", link)
    t0 = time.perf_counter()
    ev = space.evidence(q, params, params.similarity == "calibrated" and params.mode == "linearrag")
    if params.mode != "linearrag":
        timings["prior"] = (time.perf_counter() - t0) * 1000
        return Ranking(*_baseline(ev, params, space.documents))
    seeds, evidence = linked.seeds, np.zeros(0, dtype=np.int64)
    named = frozenset(seeds) | frozenset(linked.covered)
    terms_weak = _terms_weak(params, space.documents)
    if seeds and terms_weak:
        seeds = _term_scores(seeds, linked, space, params)
    if params.evidence_seeds and (not seeds or (terms_weak and _terms_only(linked))):
        evidence = ev.best_prior(params.evidence_seeds)
        found = evidence_seeds(space.graph.C_indptr, space.graph.C_indices, evidence, space.idf_ratio)
        seeds = {**found, **seeds}
        if not found:
            evidence = evidence[:0]
    linked = Linked(seeds, linked.entities, linked.covered)
    timings["prior"] = (time.perf_counter() - t0) * 1000
    if not seeds:
        rows, scores = _fallback(ev, params, space.documents)
        return Ranking(rows, scores, None, linked.entities, no_seed_reason(q, params), evidence)
    activation = _timed(timings, "activation", lambda: space.activate(q, linked, params, ev))
    t0 = time.perf_counter()
    walked = space.walk(q, activation, ev, params)
    scores = _fuse(space, ev, walked, linked, params)
    timings["ppr"] = (time.perf_counter() - t0) * 1000
    for _ in range(params.rounds - 1):
        t0 = time.perf_counter()
        best = walked.rows[top_rows(walked.rows, scores, params.round_passages)]
        found = evidence_seeds(space.graph.C_indptr, space.graph.C_indices, best, space.idf_ratio)
        added = {e: v * params.round_weight for e, v in found.items() if e not in linked.seeds}
        if not added:
            break
        linked = Linked({**added, **linked.seeds}, linked.entities, linked.covered)
        activation = space.activate(q, linked, params, ev)
        walked = space.walk(q, activation, ev, params)
        scores = _fuse(space, ev, walked, linked, params)
        timings["rounds"] = timings.get("rounds", 0.0) + (time.perf_counter() - t0) * 1000
    keep = top_rows(walked.rows, scores, params.depth)
    return Ranking(walked.rows[keep], scores[keep], activation, linked.entities, None, evidence, named, ev.prior)


def _terms_weak(params: RetrievalParams, documents: bool) -> bool:
    """Whether ``term_evidence`` is in force on this kind of index."""
    return params.term_evidence == "on" or (params.term_evidence == "documents" and documents)


def _terms_only(linked: Linked) -> bool:
    return all(e.how == "term" for e in linked.entities if e.entity)


def _term_scores(seeds: dict[int, float], linked: Linked, space: SearchSpace,
                 params: RetrievalParams) -> dict[int, float]:
    """The query's seeds with its terms scored like evidence seeds (weight × idf ratio); names
    keep their score."""
    names = {e.entity for e in linked.entities if e.entity and e.how != "term"}
    terms = [e for e in seeds if space.graph.entity_names[e] not in names]
    if not terms:
        return dict(seeds)
    ratios = np.asarray(space.idf_ratio(np.asarray(terms, dtype=np.int64)), dtype=np.float64) * params.term_seed_weight
    out = dict(seeds)
    out.update({e: max(float(r), 1e-6) * seeds[e] for e, r in zip(terms, ratios.tolist())})
    return out


def _timed(timings: dict, name: str, step: Callable):
    t0 = time.perf_counter()
    out = step()
    timings[name] = (time.perf_counter() - t0) * 1000
    return out


def _wanted(params: RetrievalParams, documents: bool) -> int:
    """Rows a ranking without the walk keeps: ``top_k``, or ``depth`` when copies are collapsed
    afterwards (each left-out copy's place goes to the next row)."""
    return params.depth if params.collapses_copies(documents) else params.top_k


def _baseline(ev: Evidence, params: RetrievalParams, documents: bool) -> tuple[np.ndarray, np.ndarray]:
    """dense, bm25 or rrf (BM25 + dense fusion): the first rows (:func:`_wanted`) and their scores."""
    if params.mode == "dense":
        top = ev.dense_top(_wanted(params, documents))
    elif params.mode == "bm25":
        top = ev.lexical_top(_wanted(params, documents))
    else:
        return _rrf_top(ev, params, documents)
    return top.rows, top.scores


def _fallback(ev: Evidence, params: RetrievalParams, documents: bool) -> tuple[np.ndarray, np.ndarray]:
    """No seed: the prior's own ranking (dense cosine, or BM25 + dense fusion)."""
    if params.prior == "dense":
        top = ev.dense_top(_wanted(params, documents))
        return top.rows, top.scores
    return _rrf_top(ev, params, documents)


def _rrf_top(ev: Evidence, params: RetrievalParams, documents: bool) -> tuple[np.ndarray, np.ndarray]:
    rows = ev.rows
    fused = rrf([ev.dense_ranks(rows), ev.lexical_ranks(rows)], params.rrf_k)
    keep = top_rows(rows, fused, _wanted(params, documents))
    return rows[keep], fused[keep]


def _fuse(space: SearchSpace, ev: Evidence, walked: Scored, linked: Linked, params: RetrievalParams) -> np.ndarray:
    """The walk's scores after the prior rerank and sibling order, fused with the query-only
    rankings (``params.fusion``; ``term_fusion`` when every linked entity is a term)."""
    rows, scores = walked.rows, walked.scores
    if params.prior_rerank > 0:
        scores = scores * np.power(np.clip(ev.prior(rows), 1e-6, None), params.prior_rerank)
    if params.siblings == "prior":
        scores = siblings_by_prior(rows, scores, lambda pos: ev.prior(rows[pos]), space.title_groups)
    fusion = params.fusion_for(space.documents)
    if params.term_fusion != "same" and all(e.how == "term" for e in linked.entities if e.entity):
        fusion = params.term_fusion   # terms alone are weak evidence: the graph is one voter
    walk = Ranks(rows, scores)
    if fusion == "rrf":
        weight = params.sentence_voter if space.documents else 0.0
        return rrf([walk, ev.lexical_ranks(rows), ev.voter_ranks(rows, weight)], params.rrf_k,
                   [1.0, params.rrf_weight, params.rrf_weight])
    if fusion == "min":
        dense = ev.dense_ranks(rows) if params.fusion_dense > 0 or params.fusion_secondary != "bm25" else None
        if params.fusion_secondary == "bm25":
            secondary = ev.lexical_ranks(rows)
        else:
            secondary = Ranks(rows, rrf([ev.lexical_ranks(rows), dense], params.rrf_k))
        return min_fusion(walk, [(secondary, params.fusion_weight), (dense, params.fusion_dense)],
                          depth=params.depth)
    return scores
