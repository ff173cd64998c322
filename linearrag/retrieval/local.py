"""The graph stages on what a query touches: activation, reset and PageRank without any
per-query array of the corpus' size (the scalable path; ``RetrievalParams.search``).

Everything here works on sorted arrays of global row numbers ("local" sets) and on the
index's CSR arrays (memory-mapped): the cost of a query is the size of the neighbourhood it
reaches, not |P|, |S| or |E|.

* :func:`local_activation` is :func:`activation.activate_entities` (same rule, same results)
  on sparse state. Entities with more than ``hub_fanout`` sentences ("United States" in a
  million passages) spread only through their sentences inside the query's candidate
  passages (the dense and BM25 top lists): their bridging sentence is the best one there.
* :func:`local_reset` is :func:`reset.passage_entity_reset` on the passages the activation
  and the candidates reach. The passage prior is known on those; its mass over the rest of
  the corpus (needed to normalise the passage reset) is estimated from a fixed sample.
* :func:`push_pagerank` is the forward-push personalised PageRank (Andersen, Chung and Lang
  2006) on the bipartite passage–entity walk of :mod:`ppr`: each node u keeps an estimate
  p(u) and a residual r(u); a node with r(u) ≥ ε·deg(u) keeps (1 − d)·r(u) and passes
  d·r(u)/deg(u) to each neighbour. When no node qualifies, the exact vector is
  x = p + Σ_u r(u)·ppr_u, so 0 ≤ x(v) − p(v) and Σ_v (x(v) − p(v)) = Σ_u r(u) < ε·Σ_u deg(u)
  over the touched nodes; the reported ``residual`` is that sum. Pushes are done a round at
  a time for every qualifying node (vectorised), which keeps the invariant.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .params import RetrievalParams
from .reset import HUB_MIN_CORPUS


def gather(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray, data: np.ndarray | None = None):
    """The entries of CSR rows ``rows``, concatenated: (owner = position in ``rows``, column,
    value or None). Reads only those rows of memory-mapped arrays."""
    rows = np.asarray(rows, dtype=np.int64)
    starts = np.asarray(indptr[rows], dtype=np.int64)
    lens = np.asarray(indptr[rows + 1], dtype=np.int64) - starts
    total = int(lens.sum())
    owner = np.repeat(np.arange(rows.size), lens)
    if total == 0:
        return owner, np.zeros(0, dtype=np.int64), (None if data is None else np.zeros(0, dtype=np.float32))
    pos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens - starts, lens)
    cols = np.asarray(indices[pos], dtype=np.int64)
    return owner, cols, (None if data is None else np.asarray(data[pos]))


def degrees(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64)
    return np.asarray(indptr[rows + 1], dtype=np.int64) - np.asarray(indptr[rows], dtype=np.int64)


def hub_weights_of(CT_indptr: np.ndarray, n_passages: int, entities: np.ndarray, exponent: float) -> np.ndarray | None:
    """:func:`reset.idf_ratio` ** exponent for some entities only (float32, as there)."""
    if exponent == 0:
        return None
    n = max(n_passages, HUB_MIN_CORPUS)
    df = degrees(CT_indptr, entities).astype(np.float64)
    ratio = (np.log((n + 1) / np.maximum(df, 1)) / np.log(n + 1)).astype(np.float32)
    return ratio ** exponent


def lookup_sorted(keys: np.ndarray, values: np.ndarray, query: np.ndarray, default=0):
    """values[keys == q] for each q (``keys`` sorted, unique), ``default`` where absent."""
    query = np.asarray(query, dtype=np.int64)
    out = np.full(query.shape, default, dtype=values.dtype)
    if keys.size == 0 or query.size == 0:
        return out
    pos = np.minimum(np.searchsorted(keys, query), keys.size - 1)
    hit = keys[pos] == query
    out[hit] = values[pos[hit]]
    return out


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


@dataclass
class SparseVector:
    rows: np.ndarray      # sorted
    values: np.ndarray    # float64


def local_reset(graph, activation: SparseActivation, prior_rows: np.ndarray, prior_of, outside_mean,
                params: RetrievalParams, allowed_passages: np.ndarray | None = None,
                hub_fanout: int = 0, exact_limit: int | None = None) -> tuple[SparseVector, SparseVector]:
    """:func:`reset.passage_entity_reset` on sparse vectors: (entity reset, passage reset).

    The passage reset is computed on ``prior_rows`` (sorted: the candidates) and every passage
    of an activated entity. ``prior_of(rows)`` gives the passage prior of rows; it is asked
    for the candidates and for the ``exact_limit`` other passages with the largest entity
    term (None: all). Every other passage is given ``outside_mean(exact rows)``, the mean
    prior (clipped at 0) of the passages outside them, which also stands for the prior mass of
    the passages never reached (it only enters the normalisation). A hub entity (more than
    ``hub_fanout`` passages) adds its entity term only to passages in ``allowed_passages``."""
    ids = activation.ids
    a = np.clip(activation.scores.astype(np.float64), 0.0, None)
    if params.hub_damping:
        a = a * hub_weights_of(graph.CT_indptr, graph.n_passages, ids, params.hub_damping)
    levels = activation.levels.astype(np.float64)
    weighted = np.divide(a, levels, out=np.zeros_like(a), where=levels > 0)
    live = weighted > 0
    src = ids[live]
    owner, rows, counts = gather(graph.CT_indptr, graph.CT_indices, src, graph.CT_data)
    if hub_fanout > 0 and rows.size:
        deg = degrees(graph.CT_indptr, src)
        hub_entry = (deg > hub_fanout)[owner]
        if hub_entry.any():
            keep = ~hub_entry | (np.isin(rows, allowed_passages) if allowed_passages is not None else False)
            owner, rows, counts = owner[keep], rows[keep], counts[keep]
    contrib = np.log1p(np.asarray(counts, dtype=np.float32)).astype(np.float64) * weighted[live][owner]
    p_rows = np.union1d(np.asarray(prior_rows, dtype=np.int64), rows)
    entity_term = np.zeros(p_rows.size, dtype=np.float64)
    np.add.at(entity_term, np.searchsorted(p_rows, rows), contrib)
    entity_term = np.log1p(entity_term)
    prior_rows = np.asarray(prior_rows, dtype=np.int64)
    extra = np.flatnonzero(~np.isin(p_rows, prior_rows, assume_unique=True))
    if exact_limit is not None and extra.size > exact_limit:
        best = np.argpartition(-entity_term[extra], exact_limit - 1)[:exact_limit]
        extra = np.sort(extra[best])
    exact = np.union1d(np.searchsorted(p_rows, prior_rows), extra)
    mean_out = max(float(outside_mean(p_rows[exact])), 0.0)
    prior = np.full(p_rows.size, mean_out)
    prior[exact] = np.clip(np.asarray(prior_of(p_rows[exact]), dtype=np.float64), 0.0, None)
    i0 = params.lam * prior + entity_term
    tail = params.lam * mean_out * max(graph.n_passages - p_rows.size, 0)
    if params.reset == "paper":
        r_p, r_e = i0 * params.passage_weight, a
        total = r_p.sum() + tail * params.passage_weight + r_e.sum()
        if total <= 0:
            return SparseVector(ids, np.zeros_like(a)), SparseVector(p_rows, np.zeros_like(i0))
        return SparseVector(ids, r_e / total), SparseVector(p_rows, r_p / total)
    mass_e, mass_p = a.sum(), i0.sum() + tail
    share_p = params.passage_weight if mass_e > 0 and mass_p > 0 else float(mass_p > 0)
    r_e = a * ((1.0 - share_p) / mass_e) if mass_e > 0 else np.zeros_like(a)
    r_p = i0 * (share_p / mass_p) if mass_p > 0 else np.zeros_like(i0)
    return SparseVector(ids, r_e), SparseVector(p_rows, r_p)


@dataclass
class PushResult:
    passages: SparseVector      # estimates on the touched passages
    entities: SparseVector
    residual: float             # Σ of what is left unpushed: the L1 error bound
    rounds: int
    touched: int


class PushScratch:
    """Residual, estimate and seen-flags for every node, allocated once per retriever and
    reused: a query writes only the nodes it touches and clears exactly those afterwards, so
    its cost is that neighbourhood's size (the zero pages of an untouched region are never
    even mapped)."""

    def __init__(self, n_nodes: int):
        self.res = np.zeros(n_nodes, dtype=np.float64)
        self.est = np.zeros(n_nodes, dtype=np.float64)
        self.seen = np.zeros(n_nodes, dtype=bool)
        self.stamp = np.zeros(n_nodes, dtype=np.int64)
        self.lock = threading.Lock()


def push_pagerank(graph, reset_passages: SparseVector, reset_entities: SparseVector, damping: float,
                  epsilon: float, max_rounds: int = 200, scratch: PushScratch | None = None) -> PushResult:
    """Forward-push personalised PageRank on the bipartite walk (see the module docstring).
    Node ids: passages 0..P−1, entities P + e. ``scratch``: reusable buffers for all nodes
    (a retriever's; None allocates them for this call)."""
    n_p = graph.n_passages
    n_nodes = n_p + len(graph.CT_indptr) - 1
    if scratch is None or len(scratch.res) != n_nodes or not scratch.lock.acquire(blocking=False):
        scratch, owned = PushScratch(n_nodes), None
    else:
        owned = scratch
    try:
        return _push(graph, reset_passages, reset_entities, damping, epsilon, max_rounds, scratch)
    finally:
        if owned is not None:
            owned.lock.release()


def _push(graph, reset_passages, reset_entities, damping, epsilon, max_rounds, scratch) -> PushResult:
    n_p = graph.n_passages
    res, est, seen = scratch.res, scratch.est, scratch.seen
    nodes = np.concatenate([np.asarray(reset_passages.rows, dtype=np.int64),
                            n_p + np.asarray(reset_entities.rows, dtype=np.int64)])
    values = np.concatenate([reset_passages.values, reset_entities.values]).astype(np.float64)
    keep = values > 0
    nodes, values = nodes[keep], values[keep]
    np.add.at(res, nodes, values)
    touched = np.unique(nodes)
    seen[touched] = True
    deg = _node_degrees(graph, touched)
    rounds = 0
    try:
        for rounds in range(1, max_rounds + 1):
            r_t = res[touched]
            front = (r_t > 0) & (r_t >= epsilon * np.maximum(deg, 1))
            if not front.any():
                rounds -= 1
                break
            f_nodes, f_res, f_deg = touched[front], r_t[front], deg[front]
            res[f_nodes] = 0.0
            est[f_nodes] += (1.0 - damping) * f_res
            share = np.divide(damping * f_res, f_deg, out=np.zeros_like(f_res), where=f_deg > 0)
            is_p = f_nodes < n_p
            targets, amounts = [], []
            if is_p.any():
                owner, cols, _ = gather(graph.C_indptr, graph.C_indices, f_nodes[is_p])
                targets.append(cols + n_p)
                amounts.append(share[is_p][owner])
            if (~is_p).any():
                owner, cols, _ = gather(graph.CT_indptr, graph.CT_indices, f_nodes[~is_p] - n_p)
                targets.append(cols)
                amounts.append(share[~is_p][owner])
            t = np.concatenate(targets) if targets else np.zeros(0, dtype=np.int64)
            if t.size == 0:
                continue
            np.add.at(res, t, np.concatenate(amounts))
            new = t[~seen[t]]
            if new.size:
                new = _distinct(new, scratch)
                seen[new] = True
                touched = np.concatenate([touched, new])
                deg = np.concatenate([deg, _node_degrees(graph, new)])
        touched = np.sort(touched)
        values_est = est[touched].copy()
        residual = float(res[touched].sum())
    finally:
        res[touched] = 0.0
        est[touched] = 0.0
        seen[touched] = False
    is_p = touched < n_p
    return PushResult(SparseVector(touched[is_p], values_est[is_p]), SparseVector(touched[~is_p] - n_p, values_est[~is_p]),
                      residual, rounds, int(touched.size))


def _distinct(values: np.ndarray, scratch: PushScratch) -> np.ndarray:
    """The distinct values, in first-seen order, without sorting (``scratch.stamp`` marks)."""
    stamp = scratch.stamp
    positions = np.arange(values.size)
    stamp[values[::-1]] = positions[::-1]      # fancy assignment: the last write wins, so the first position stays
    return values[stamp[values] == positions]


def _node_degrees(graph, nodes: np.ndarray) -> np.ndarray:
    n_p = graph.n_passages
    out = np.zeros(nodes.size, dtype=np.float64)
    p = nodes < n_p
    out[p] = degrees(graph.C_indptr, nodes[p])
    out[~p] = degrees(graph.CT_indptr, nodes[~p] - n_p)
    return out
