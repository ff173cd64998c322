"""The personalisation (reset) vector of the PageRank walk, and hub weights.

Works on arrays only: the activation, the passage prior, C with log1p counts.
"""

from __future__ import annotations

import numpy as np

from .activation import Activation
from .params import RetrievalParams

HUB_MIN_CORPUS = 1000


def idf_ratio(C) -> np.ndarray:
    """Per entity, log((N + 1) / df) / log(N + 1) in (0, 1]: 1 for an entity of one passage,
    small for a hub that occurs in many. N is the passage count, but at least
    ``HUB_MIN_CORPUS``: in a handful of documents, an entity in two of them is no hub."""
    n_p = max(C.shape[0], HUB_MIN_CORPUS)
    df = np.bincount(C.indices, minlength=C.shape[1]).astype(np.float64)
    return (np.log((n_p + 1) / np.maximum(df, 1)) / np.log(n_p + 1)).astype(np.float32)


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
