"""BM25 over title + text (bm25s), stored inside the index directory.

English: bm25s' tokeniser with English stop words and the Snowball stemmer (PyStemmer).
Japanese: Sudachi tokens from the GiNZA pass (normalised forms), never white space.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

BM25_DIR = "bm25"


def _bm25s():
    import bm25s

    # bm25s sets its own logger to DEBUG when imported.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


class EnglishTokenizer:
    def __init__(self) -> None:
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWords

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        return _bm25s().tokenize(list(texts), stopwords="en", stemmer=self._stem, return_ids=False, show_progress=False)


class LexicalIndex:
    """A BM25 index over passages (rows in the order of the Tri-Graph's C)."""

    def __init__(self, retriever, n_docs: int):
        self._bm25 = retriever
        self.n_docs = n_docs

    @classmethod
    def build(cls, corpus_tokens: list[list[str]]) -> LexicalIndex:
        retriever = _bm25s().BM25()
        retriever.index(corpus_tokens, show_progress=False)
        return cls(retriever, len(corpus_tokens))

    def save(self, directory: Path) -> None:
        self._bm25.save(str(directory / BM25_DIR), show_progress=False)

    @classmethod
    def load(cls, index_dir: Path, n_docs: int) -> LexicalIndex:
        """Load the BM25 files; IndexFormatError (one line) when they are missing or damaged."""
        from .errors import IndexFormatError

        folder = index_dir / BM25_DIR
        if not folder.is_dir():
            raise IndexFormatError(f"{index_dir}: missing {BM25_DIR}/ (the BM25 index); rebuild the index")
        try:
            retriever = _bm25s().BM25.load(str(folder), mmap=False, show_progress=False, verbosity=0)
        except Exception as exc:  # bm25s raises many types for damaged files (JSON, numpy, zip, key errors)
            raise IndexFormatError(f"{folder}: corrupt BM25 files ({type(exc).__name__}); rebuild the index") from None
        if getattr(retriever, "scores", None) is None or retriever.scores.get("num_docs") != n_docs:
            raise IndexFormatError(f"{folder}: BM25 index does not match the passages; rebuild the index")
        return cls(retriever, n_docs)

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every passage for the query tokens (float32 [P]); zeros if none is known."""
        known = [t for t in query_tokens if t in self._bm25.vocab_dict]
        if not known:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)
