"""The personalisation (reset) vector of the PageRank walk: over all passages, or local.

:func:`passage_entity_reset` works on whole-corpus arrays (the activation, the passage prior,
C with log1p counts); :func:`local_reset` is the same reset on the passages the activation and
the candidates reach, with the prior's mass over the rest of the corpus (needed to normalise the
passage reset) estimated from a fixed sample.
"""

from __future__ import annotations

import numpy as np

from .activation import Activation, SparseActivation
from .hubs import hub_weights_of
from .params import RetrievalParams
from .sparse import SparseVector, degrees, gather

def passage_entity_reset(C_log, activation: Activation, prior: np.ndarray, params: RetrievalParams,
                         hub_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reset vectors (entities [E], passages [P]) for PPR from activations and the passage prior (eq. 7).

    I₀(p) = λ·prior(p) + ln(1 + Σ_e a_e · ln(1 + N_pe) / L_e). In the "normalized"
    form the entity and passage parts are each scaled to sum 1 and mixed with
    ``passage_weight``; in the "paper" form I₀ is multiplied by W_p and added as is.
    ``hub_weight`` (per entity) scales a_e in both parts. A part with no mass (every seed
    scored 0, or no prior and no entity) gives its share to the other; the result sums to 1
    whenever either part has mass, and is all zeros otherwise (never NaN).
    """
    a = np.clip(activation.scores.astype(np.float64), 0.0, None)
    if hub_weight is not None:
        a = a * hub_weight
    levels = activation.levels.astype(np.float64)
    weighted = np.divide(a, levels, out=np.zeros_like(a), where=levels > 0)
    entity_term = np.log1p(C_log @ weighted)
    i0 = params.lam * np.clip(prior, 0.0, None) + entity_term
    if params.reset == "paper":
        r_p, r_e = i0 * params.passage_weight, a
        total = r_p.sum() + r_e.sum()
        if total <= 0:
            return np.zeros_like(r_e), np.zeros_like(r_p)
        return r_e / total, r_p / total
    mass_e, mass_p = a.sum(), i0.sum()
    share_p = params.passage_weight if mass_e > 0 and mass_p > 0 else float(mass_p > 0)
    r_e = a * ((1.0 - share_p) / mass_e) if mass_e > 0 else np.zeros_like(a)
    r_p = i0 * (share_p / mass_p) if mass_p > 0 else np.zeros_like(i0)
    return r_e, r_p


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
