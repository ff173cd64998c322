"""The fixed samples of passages and entities that calibration reads a query against.

``RetrievalParams.similarity == "calibrated"`` reads a cosine against the query's median cosine
over a fixed, evenly spread sample (1,024 rows) — of passages for the prior and activation, of
entities for linking. The approximate space also estimates whole-corpus statistics from the
passage sample (:mod:`approx`).
"""

from __future__ import annotations

import numpy as np

from ..files import as_float32, read_rows

SAMPLE_SIZE = 1024


class Sample:
    """Row numbers and float32 vectors of the passage and entity samples of one index."""

    def __init__(self, index):
        self.passage_rows = spread(len(index.passage_ids))
        self.passage_vectors = as_float32(read_rows(index.passage_emb, self.passage_rows))
        self.entity_rows = spread(len(index.graph.entity_names))
        self.entity_vectors = as_float32(read_rows(index.entity_emb, self.entity_rows))

    def passage_cosines(self, vector: np.ndarray) -> np.ndarray:
        return self.passage_vectors @ vector

    def passage_median(self, vector: np.ndarray) -> float | None:
        """The query's median cosine over the passage sample (None for an empty index)."""
        if not len(self.passage_vectors):
            return None
        return float(np.median(self.passage_cosines(vector)))


    def entity_median(self, vector: np.ndarray) -> float | None:
        """The median cosine of ``vector`` over the entity sample (None without entities)."""
        if not len(self.entity_vectors):
            return None
        return float(np.median(self.entity_vectors @ vector))


def spread(n: int, size: int = SAMPLE_SIZE) -> np.ndarray:
    """Up to ``size`` row indices spread evenly over ``n`` rows (deterministic)."""
    if n <= size:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, size).astype(np.int64))
