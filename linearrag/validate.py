"""Structural checks of stored arrays, vectorised: what a reader verifies before it trusts a file.

Damaged bytes in an offsets or index array would otherwise read another passage's text, index
past an array's end (a traceback) or walk a wrong graph. Each check is one or two passes of
numpy over the array (chunked, so the temporaries stay small): at a million passages every
structural array of an index is checked in a fraction of a second (docs/scale.md).
Float arrays that hold scores are checked to be finite; vectors cannot be checked cheaply
(``linearrag check`` verifies their checksums).
"""

from __future__ import annotations

import numpy as np

_CHUNK = 1 << 22   # elements per pass: ~16 MB of int32 temporaries


class Damaged(ValueError):
    """A stored array fails a structural check; ``file`` names it."""

    def __init__(self, file: str, what: str):
        super().__init__(f"{file}: {what}")
        self.file, self.what = file, what


def _chunks(array: np.ndarray):
    for start in range(0, len(array), _CHUNK):
        yield array[start:start + _CHUNK]


def offsets(array: np.ndarray, rows: int, total: int, file: str) -> None:
    """``rows + 1`` non-decreasing integers from 0 to ``total`` (CSR ``indptr``, text offsets)."""
    if array.ndim != 1 or array.dtype.kind not in "iu" or len(array) != rows + 1:
        raise Damaged(file, f"expected {rows + 1} integer offsets, found {array.shape} {array.dtype}")
    if int(array[0]) != 0 or int(array[-1]) != total:
        raise Damaged(file, f"offsets run from {int(array[0])} to {int(array[-1])}, expected 0 to {total}")
    for start in range(0, rows, _CHUNK):
        part = array[start:start + _CHUNK + 1]
        if len(part) > 1 and not bool(np.all(part[1:] >= part[:-1])):
            raise Damaged(file, "offsets decrease")


def indices(array: np.ndarray, bound: int, file: str) -> None:
    """Integers in ``[0, bound)`` (column numbers, rows of another table)."""
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise Damaged(file, f"expected integer indices, found {array.shape} {array.dtype}")
    unsigned = array.view(np.dtype(f"u{array.dtype.itemsize}"))   # a negative index is huge here
    for part in _chunks(unsigned):
        if bool(np.any(part >= bound)):
            raise Damaged(file, f"an index is outside 0..{bound - 1}")


def non_decreasing(array: np.ndarray, file: str) -> None:
    for start in range(0, len(array), _CHUNK):
        part = array[start:start + _CHUNK + 1]
        if len(part) > 1 and not bool(np.all(part[1:] >= part[:-1])):
            raise Damaged(file, "values that must be sorted are not")


def positive(array: np.ndarray, file: str, allow_zero: bool = False) -> None:
    """Finite values above zero (counts, BM25 weights)."""
    for part in _chunks(array):
        ok = np.isfinite(part) & ((part >= 0) if allow_zero else (part > 0))
        if not bool(np.all(ok)):
            raise Damaged(file, "a weight is not a finite positive number")


def csr(indptr: np.ndarray, idx: np.ndarray, rows: int, cols: int, files: tuple[str, str]) -> None:
    """A CSR (or CSC) pair: offsets over the rows, column indices in range."""
    offsets(indptr, rows, len(idx), files[0])
    indices(idx, cols, files[1])


def index_structure(arrays: dict[str, np.ndarray], lookup, shape: tuple[int, int, int]) -> None:
    """Every structural array a query reads, checked (vectorised): offsets
    monotone and within their arrays, indices within the table they point into, counts finite
    and positive, the entity key table (a ``files.KeyTable``) sorted and pointing at entities."""
    n_p, n_s, n_e = shape
    a = arrays
    csr(a["C_indptr"], a["C_indices"], n_p, n_e, ("C_indptr.npy", "C_indices.npy"))
    csr(a["M_indptr"], a["M_indices"], n_s, n_e, ("M_indptr.npy", "M_indices.npy"))
    csr(a["CT_indptr"], a["CT_indices"], n_e, n_p, ("CT_indptr.npy", "CT_indices.npy"))
    csr(a["MT_indptr"], a["MT_indices"], n_e, n_s, ("MT_indptr.npy", "MT_indices.npy"))
    positive(a["C_data"], "C_data.npy")
    positive(a["CT_data"], "CT_data.npy")
    indices(a["sentence_passage"], max(n_p, 1), "sentence_passage.npy")
    non_decreasing(a["sentence_passage"], "sentence_passage.npy")
    offsets(a["passage_sentences"], n_p, n_s, "passage_sentences.npy")
    lookup.validate(n_e, "entity_keys")
