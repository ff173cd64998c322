"""Stage 1: semantic entity activation over the sentence–entity matrix M.

Paper eq. 5: a_t = max(Mᵀ(σ_q ⊙ (M a_{t−1})), a_{t−1}), with dynamic pruning at δ.
Only the sentences that mention an active entity are touched, so the cost depends on
the activated neighbourhood, not on the corpus size.

Two propagation rules:

* ``"max"`` (default) reads the sums in eq. 5 in the (max, ×) semiring: a sentence's
  activation is σ_q(s) times the best activation among its entities, and an entity's
  new score is the best over the sentences that mention it. Scores stay in [0, 1]
  (a product of similarities along the best chain) and each entity has exactly one
  bridging sentence, which makes δ a scale-free threshold.
* ``"sum"`` is eq. 5 as written, clipped to [0, 1].

:func:`activate_entities` keeps dense per-entity arrays (the exact search space);
:func:`local_activation` is the same rule, with the same results, on the activated entities
only (the approximate one). There, entities with more than ``hub_fanout`` sentences ("United
States" in a million passages) spread only through their sentences inside the query's
candidate passages: their bridging sentence is the best one there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .hubs import hub_weights_of
from .sparse import gather, degrees, lookup_sorted


@dataclass
class Activation:
    scores: np.ndarray      # float32 [E], in [0, 1]; 0 = not activated
    levels: np.ndarray      # int16 [E]; 1 = seed, t+1 = its best chain was found at step t, 0 = not activated
    via_sentence: np.ndarray  # int64 [E]; last sentence of its best chain, -1 for seeds / inactive

    @property
    def active(self) -> np.ndarray:
        return np.flatnonzero(self.levels)

    def lookup(self, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scores, levels, bridging sentences) of some entities (0, 0, −1 when not activated)."""
        return self.scores[entities], self.levels[entities], self.via_sentence[entities]



@dataclass
class SparseActivation:
    """The activated entities only: ``ids`` sorted, with their score, level and bridging sentence."""

    ids: np.ndarray
    scores: np.ndarray
    levels: np.ndarray
    via: np.ndarray

    @property
    def active(self) -> np.ndarray:
        return self.ids

    def lookup(self, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scores, levels, bridging sentences) of any entities (0, 0, −1 when not activated)."""
        return (lookup_sorted(self.ids, self.scores, entities, 0.0), lookup_sorted(self.ids, self.levels, entities, 0),
                lookup_sorted(self.ids, self.via, entities, -1))

def activate_entities(
    M: sp.csr_matrix,
    M_T: sp.csr_matrix,
    sentence_similarity: Callable[[np.ndarray], np.ndarray],
    seeds: dict[int, float],
    delta: float,
    max_iterations: int,
    propagation: str = "max",
    entity_weight: np.ndarray | None = None,
    excluded: set[int] | None = None,
) -> Activation:
    """Spread activation from ``seeds`` (entity → score in [0, 1]) through sentences.

    ``M`` is |S|×|E| 0/1 CSR and ``M_T`` its transpose in CSR. ``sentence_similarity``
    maps sentence indices to σ_q for them (cosine to the query). ``entity_weight`` (in
    [0, 1], per entity) scales what an entity passes on (used for hub damping); None
    means 1 for all. ``excluded`` entities never join (the parts of a name the query linked).
    """
    n_e = M.shape[1]
    scores = np.zeros(n_e, dtype=np.float32)
    levels = np.zeros(n_e, dtype=np.int16)
    via = np.full(n_e, -1, dtype=np.int64)
    for e, s in seeds.items():
        scores[e] = max(scores[e], min(max(float(s), 0.0), 1.0))
        levels[e] = 1
    sigma_cache = np.full(M.shape[0], np.nan, dtype=np.float32)
    for step in range(1, max_iterations + 1):
        active = np.flatnonzero(levels)
        if active.size == 0:
            break
        sents = np.unique(M_T[active].indices)
        if sents.size == 0:
            break
        sigma = _cached_sigma(sents, sentence_similarity, sigma_cache)
        sub = M[sents]
        row_len = np.diff(sub.indptr)
        ent = sub.indices
        passed = scores[ent] if entity_weight is None else scores[ent] * entity_weight[ent]
        if propagation == "max":
            sent_act = np.maximum.reduceat(passed, sub.indptr[:-1]) * sigma
        else:
            sent_act = np.add.reduceat(passed, sub.indptr[:-1]) * sigma
        cand = np.repeat(sent_act.astype(np.float32), row_len)
        # Per reached entity (only those: nothing of length E per step): its best candidate and
        # the sentence giving it (ties: lowest sentence index), and its new score (the best
        # candidate, or with "sum" the sum of its candidates), clipped to [0, 1].
        reached, best, best_sentence = _best_per_entity(ent, cand, np.repeat(sents, row_len))
        if propagation == "max":
            new = best
        else:
            new = np.zeros(reached.size, dtype=np.float32)
            np.add.at(new, np.searchsorted(reached, ent), cand)
        new = np.clip(new, 0.0, 1.0)
        level = levels[reached]
        joined = (level == 0) & (new >= delta) & (new > 0)
        if excluded:
            joined &= ~np.isin(reached, np.fromiter(excluded, dtype=np.int64, count=len(excluded)))
        # A reached entity whose best chain gets better takes that chain's sentence and length,
        # so the bridging sentence shown is the one behind its score. Seeds keep their link score.
        improved = (level > 1) & (new > scores[reached])
        changed = joined | improved
        rows = reached[changed]
        scores[rows] = new[changed]
        levels[rows] = step + 1
        via[rows] = best_sentence[changed]
        if not joined.any():
            break
    return Activation(scores=scores, levels=levels, via_sentence=via)


def _best_per_entity(ent: np.ndarray, cand: np.ndarray, sent: np.ndarray):
    """(entities, each one's highest candidate, the sentence giving it), entities ascending;
    ties between candidates go to the lowest sentence index."""
    if ent.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
    order = np.lexsort((sent, -cand, ent))
    e = ent[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = e[1:] != e[:-1]
    pick = order[first]
    return ent[pick].astype(np.int64), cand[pick], sent[pick].astype(np.int64)


def _cached_sigma(sents: np.ndarray, fn: Callable[[np.ndarray], np.ndarray], cache: np.ndarray) -> np.ndarray:
    """σ_q for ``sents``, computing only those not seen in an earlier step (NaN in ``cache``)."""
    missing = sents[np.isnan(cache[sents])]
    if missing.size:
        cache[missing] = np.clip(fn(missing), 0.0, 1.0)
    return cache[sents]


def local_activation(graph, sentence_similarity, seeds: dict[int, float], delta: float, max_iterations: int,
                     propagation: str = "max", hub_exponent: float = 0.0, excluded: set[int] | None = None,
                     allowed_sentences: np.ndarray | None = None, hub_fanout: int = 0) -> SparseActivation:
    """:func:`activation.activate_entities` over the activated neighbourhood only.

    ``graph`` has the raw arrays ``M_indptr/M_indices`` (sentence → entities) and
    ``MT_indptr/MT_indices`` (entity → sentences), ``CT_indptr`` and ``n_passages`` (hub
    weights). With ``hub_fanout`` > 0, an entity with more sentences than that spreads only
    through those in ``allowed_sentences`` (sorted)."""
    ids = np.asarray(sorted(seeds), dtype=np.int64)
    scores = np.asarray([min(max(float(seeds[e]), 0.0), 1.0) for e in ids.tolist()], dtype=np.float32)
    levels = np.ones(ids.size, dtype=np.int16)
    via = np.full(ids.size, -1, dtype=np.int64)
    cache_s = np.zeros(0, dtype=np.int64)       # sentences whose σ is known, sorted
    cache_v = np.zeros(0, dtype=np.float32)
    excluded_arr = np.asarray(sorted(excluded or ()), dtype=np.int64)
    for step in range(1, max_iterations + 1):
        if ids.size == 0:
            break
        sents = _sentences_of(graph, ids, allowed_sentences, hub_fanout)
        if sents.size == 0:
            break
        missing = sents[~np.isin(sents, cache_s, assume_unique=True)] if cache_s.size else sents
        if missing.size:
            sig = np.clip(np.asarray(sentence_similarity(missing), dtype=np.float32), 0.0, 1.0)
            cache_s = np.concatenate([cache_s, missing])
            cache_v = np.concatenate([cache_v, sig])
            order = np.argsort(cache_s, kind="stable")
            cache_s, cache_v = cache_s[order], cache_v[order]
        sigma = cache_v[np.searchsorted(cache_s, sents)]
        owner, ent, _ = gather(graph.M_indptr, graph.M_indices, sents)
        row_len = np.bincount(owner, minlength=sents.size)
        starts = np.concatenate([[0], np.cumsum(row_len)[:-1]])
        passed = lookup_sorted(ids, scores, ent, 0.0)
        if hub_exponent:
            passed = passed * hub_weights_of(graph.CT_indptr, graph.n_passages, ent, hub_exponent)
        if propagation == "max":
            sent_act = np.maximum.reduceat(passed, starts) * sigma
        else:
            sent_act = np.add.reduceat(passed, starts) * sigma
        cand = np.repeat(sent_act.astype(np.float32), row_len)
        sent_of = np.repeat(sents, row_len)
        uniq, inv = np.unique(ent, return_inverse=True)
        new = np.zeros(uniq.size, dtype=np.float32)
        (np.maximum if propagation == "max" else np.add).at(new, inv, cand)
        np.clip(new, 0.0, 1.0, out=new)
        order = np.lexsort((sent_of, -cand, ent))
        first = np.ones(order.size, dtype=bool)
        first[1:] = ent[order][1:] != ent[order][:-1]
        best = sent_of[order][first]                       # aligned with uniq (ent ascending)
        cur_level = lookup_sorted(ids, levels, uniq, 0)
        cur_score = lookup_sorted(ids, scores, uniq, 0.0)
        joined = (cur_level == 0) & (new >= delta) & (new > 0)
        if excluded_arr.size:
            joined &= ~np.isin(uniq, excluded_arr)
        improved = (cur_level > 1) & (new > cur_score)
        if improved.any():
            pos = np.searchsorted(ids, uniq[improved])
            scores[pos], levels[pos], via[pos] = new[improved], step + 1, best[improved]
        if not joined.any():
            break
        ids = np.concatenate([ids, uniq[joined]])
        scores = np.concatenate([scores, new[joined]])
        levels = np.concatenate([levels, np.full(int(joined.sum()), step + 1, dtype=np.int16)])
        via = np.concatenate([via, best[joined]])
        order = np.argsort(ids, kind="stable")
        ids, scores, levels, via = ids[order], scores[order], levels[order], via[order]
    return SparseActivation(ids, scores, levels, via)


def _sentences_of(graph, entities: np.ndarray, allowed: np.ndarray | None, fanout: int) -> np.ndarray:
    """Sorted unique sentences that mention ``entities``; hubs (more than ``fanout``
    sentences) contribute only their sentences in ``allowed``."""
    deg = degrees(graph.MT_indptr, entities)
    hub = deg > fanout if fanout > 0 else np.zeros(entities.size, dtype=bool)
    _, sents, _ = gather(graph.MT_indptr, graph.MT_indices, entities[~hub])
    parts = [sents]
    if hub.any() and allowed is not None and allowed.size:
        for e in entities[hub].tolist():
            _, s, _ = gather(graph.MT_indptr, graph.MT_indices, np.asarray([e]))
            parts.append(s[np.isin(s, allowed, assume_unique=True)])
    return np.unique(np.concatenate(parts))
