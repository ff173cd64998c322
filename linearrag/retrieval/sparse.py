"""Sparse helpers of the scalable stages: rows of CSR arrays, sorted-key lookups, sparse vectors.

Everything works on sorted arrays of global row numbers and on the index's CSR arrays (which
may be memory-mapped): only the rows asked for are read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
class SparseVector:
    rows: np.ndarray      # sorted
    values: np.ndarray    # float64
