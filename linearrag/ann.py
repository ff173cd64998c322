"""Approximate nearest neighbours over unit vectors (passages, entity names), with usearch.

An HNSW graph per vector table, written at commit next to the table and memory-mapped by
readers (``view``: opening reads nothing). Candidates found here are re-scored exactly from
the float32 table, so the ANN only decides *which* rows are looked at, never their scores.

usearch was chosen over faiss-cpu and hnswlib because its saved index can be used in place
from a memory map (O(1) open, pages read on demand), it quantises the graph's copy of the
vectors to int8 (a quarter of the size), and it ships manylinux wheels without BLAS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import IndexFormatError
from .files import as_float32, read_rows, sha256_file, with_filename

# HNSW settings: connectivity (edges per node) and the beam width while adding; searches set
# their own beam width (at least the number of results asked for).
CONNECTIVITY = 16
EXPANSION_ADD = 128
MIN_EXPANSION_SEARCH = 64


def _index_class():
    from usearch.index import Index   # deferred: only the ann search path needs usearch

    return Index


def build_ann(vectors: np.ndarray, path: Path, threads: int = 1) -> None:
    """Write the HNSW index of ``vectors`` (unit rows; key = row) to ``path``. With one
    thread the file is the same for the same vectors (a build and a sequence of adds agree)."""
    n, dim = vectors.shape
    index = _index_class()(ndim=dim, metric="ip", dtype="i8", connectivity=CONNECTIVITY,
                           expansion_add=EXPANSION_ADD)
    if n:
        index.add(np.arange(n, dtype=np.uint64), np.ascontiguousarray(vectors, dtype=np.float32),
                  threads=threads, log=False)
    try:
        index.save(str(path))
    except (RuntimeError, OSError) as exc:   # usearch reports a failed write as RuntimeError
        raise with_filename(exc if isinstance(exc, OSError) else OSError(None, str(exc)), path) from None


class VectorSearch:
    """Nearest rows of a vector table: the ANN proposes, the table's own vectors score.

    ``checksum``: the SHA-256 the manifest records for the HNSW file; it is verified before the
    file is first mapped (usearch trusts the file's structure, so damaged bytes could crash
    the process rather than raise)."""

    def __init__(self, table: np.ndarray, ann_path: Path, checksum: str | None = None):
        self.table = table
        self._path = Path(ann_path)
        self._checksum = checksum
        self._index = None

    @property
    def index(self):
        if self._index is None:   # opened on first search: a memory map, nothing read
            if self._checksum is not None and sha256_file(self._path) != self._checksum:
                raise IndexFormatError(f"{self._path}: does not match its checksum; the index is damaged, rebuild "
                                       "it or restore it from a copy")
            try:
                index = _index_class().restore(str(self._path), view=True)
            except (RuntimeError, ValueError, OSError) as exc:
                raise IndexFormatError(f"{self._path}: cannot be read ({exc}); rebuild the index") from None
            if index is None or len(index) != len(self.table):
                raise IndexFormatError(f"{self._path}: {0 if index is None else len(index)} vectors "
                                       f"for a table of {len(self.table)} rows; rebuild the index")
            self._index = index
        return self._index

    def search(self, query: np.ndarray, k: int, expansion: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cosines) of about the ``k`` rows most similar to ``query``, best first (ties by
        row); cosines computed from the table."""
        n = len(self.table)
        k = min(k, n)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        index = self.index
        index.expansion_search = max(expansion or 0, k, MIN_EXPANSION_SEARCH)
        found = index.search(np.asarray(query, dtype=np.float32), k, exact=False)
        rows = np.unique(np.asarray(found.keys, dtype=np.int64))
        rows = rows[(rows >= 0) & (rows < n)]
        cos = as_float32(read_rows(self.table, rows)) @ np.asarray(query, dtype=np.float32)
        order = np.lexsort((rows, -cos))
        return rows[order], cos[order]
