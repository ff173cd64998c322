"""BM25 over title + text (bm25s), stored inside the index directory.

English: bm25s' tokeniser with English stop words and the Snowball stemmer (PyStemmer).
Japanese: Sudachi tokens from the GiNZA pass (normalised forms), never white space.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .errors import IndexFormatError
from .files import KeyTable, load_array, read_strings, write_key_table, write_strings

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
        """bm25s' own files, plus the vocabulary as a string column with a key table (token id =
        row), so that a reader finds a token's postings without parsing the vocabulary."""
        folder = directory / BM25_DIR
        self._bm25.save(str(folder), show_progress=False)
        vocab = self._bm25.vocab_dict
        tokens = [""] * len(vocab)
        for token, i in vocab.items():
            tokens[i] = token
        write_strings(folder, "vocab", tokens)
        write_key_table(folder, "vocab", tokens)


class Postings:
    """The BM25 index as a reader uses it: bm25s' precomputed per-(token, passage) scores in CSC
    form (token → passages), memory-mapped, and the vocabulary's key table. A query costs the
    postings of its tokens, not the corpus."""

    def __init__(self, folder: Path, n_docs: int):
        self.n_docs = n_docs
        self.data = load_array(folder / "data.csc.index.npy")
        self.indices = load_array(folder / "indices.csc.index.npy")
        self.indptr = load_array(folder / "indptr.csc.index.npy")
        self.vocab = KeyTable.open(folder, "vocab", read_strings(folder, "vocab"))
        # bm25s lists an empty token after the last column; tokens beyond the columns have no postings
        if len(self.indptr) > len(self.vocab) + 1 or len(self.data) != len(self.indices) \
                or int(self.indptr[-1]) != len(self.indices):
            raise ValueError("postings do not match the vocabulary")

    @classmethod
    def open(cls, index_dir: Path, n_docs: int) -> Postings:
        """IndexFormatError (one line) when the files are missing, damaged or not these passages'."""
        folder = index_dir / BM25_DIR
        if not folder.is_dir():
            raise IndexFormatError(f"{index_dir}: missing {BM25_DIR}/ (the BM25 index); rebuild the index")
        try:
            params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
            postings = cls(folder, n_docs)
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, EOFError) as exc:
            raise IndexFormatError(f"{folder}: corrupt BM25 files ({type(exc).__name__}); rebuild the index") from None
        if not isinstance(params, dict) or params.get("num_docs") != n_docs:
            raise IndexFormatError(f"{folder}: BM25 index does not match the passages; rebuild the index")
        return postings

    def token_ids(self, query_tokens: list[str]) -> list[int]:
        """Ids of the query's known tokens, repeats kept (a repeated token counts again, as in bm25s)."""
        n = len(self.indptr) - 1
        return [i for i in (self.vocab.get(t) for t in query_tokens) if i is not None and i < n]

    def matches(self, query_tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of the passages matching a query token, rows ascending, scores float32
        summed in the order bm25s sums them; costs the postings of the query's tokens."""
        ids = self.token_ids(query_tokens)
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        parts = [(self.indices[self.indptr[i]:self.indptr[i + 1]], self.data[self.indptr[i]:self.indptr[i + 1]])
                 for i in ids]
        rows = np.concatenate([p[0] for p in parts]).astype(np.int64)
        vals = np.concatenate([p[1] for p in parts]).astype(np.float32)
        unique, inverse = np.unique(rows, return_inverse=True)
        scores = np.zeros(unique.size, dtype=np.float32)
        np.add.at(scores, inverse, vals)
        return unique, scores

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every passage (float32 [P]); zeros where no query token occurs."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        rows, scores = self.matches(query_tokens)
        out[rows] = scores
        return out
