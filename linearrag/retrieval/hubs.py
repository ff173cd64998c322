"""Hub weights: how much an entity that occurs in many passages is trusted."""

from __future__ import annotations

import numpy as np

from .sparse import degrees

HUB_MIN_CORPUS = 1000


def idf_ratio(C) -> np.ndarray:
    """Per entity, log((N + 1) / df) / log(N + 1) in (0, 1]: 1 for an entity of one passage,
    small for a hub that occurs in many. N is the passage count, but at least
    ``HUB_MIN_CORPUS``: in a handful of documents, an entity in two of them is no hub."""
    n_p = max(C.shape[0], HUB_MIN_CORPUS)
    df = np.bincount(C.indices, minlength=C.shape[1]).astype(np.float64)
    return (np.log((n_p + 1) / np.maximum(df, 1)) / np.log(n_p + 1)).astype(np.float32)


def hub_weights_of(CT_indptr: np.ndarray, n_passages: int, entities: np.ndarray, exponent: float) -> np.ndarray | None:
    """:func:`reset.idf_ratio` ** exponent for some entities only (float32, as there)."""
    if exponent == 0:
        return None
    n = max(n_passages, HUB_MIN_CORPUS)
    df = degrees(CT_indptr, entities).astype(np.float64)
    ratio = (np.log((n + 1) / np.maximum(df, 1)) / np.log(n + 1)).astype(np.float32)
    return ratio ** exponent
