"""BM25 over title + text (bm25s), stored inside the index directory.

English: bm25s' tokeniser with English stop words and the Snowball stemmer (PyStemmer).
Japanese: Sudachi tokens from the GiNZA pass (normalised forms), never white space.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import validate
from .errors import IndexFormatError
from .files import KeyTable, load_array, read_strings, with_filename, write_key_table, write_strings

log = logging.getLogger(__name__)

BM25_DIR = "bm25"
SKIP_SHARE = 0.3     # MaxScore skips common tokens whose best scores sum to under this share of θ


def _bm25s():
    import bm25s   # deferred: bm25s loads on first use (it resets logging)

    # bm25s sets its own logger to DEBUG when imported.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


class EnglishTokenizer:
    def __init__(self) -> None:
        import Stemmer   # deferred: the stemmer loads on first use

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
        try:
            self._bm25.save(str(folder), show_progress=False)
        except OSError as exc:   # numpy's writer: "N requested and M written", no errno or name
            raise with_filename(exc, folder) from None
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
        self._scratch_made = False
        # bm25s lists an empty token after the last column; tokens beyond the columns have no postings
        if len(self.indptr) > len(self.vocab) + 1 or len(self.data) != len(self.indices) \
                or int(self.indptr[-1]) != len(self.indices):
            raise ValueError("postings do not match the vocabulary")
        validate.csr(self.indptr, self.indices, len(self.indptr) - 1, max(n_docs, 1),
                     ("indptr.csc.index.npy", "indices.csc.index.npy"))
        validate.positive(self.data, "data.csc.index.npy", allow_zero=True)
        self.vocab.validate(len(self.vocab), "vocab")

    @property
    def _scratch(self) -> _ScoreScratch | None:
        if not self._scratch_made:                 # one per reader, on its first query
            self._scratch_obj, self._scratch_made = _ScoreScratch(self.n_docs), True
        return self._scratch_obj

    @classmethod
    def open(cls, index_dir: Path, n_docs: int) -> Postings:
        """IndexFormatError (one line) when the files are missing, damaged or not these passages'."""
        folder = index_dir / BM25_DIR
        if not folder.is_dir():
            raise IndexFormatError(f"{index_dir}: missing {BM25_DIR}/ (the BM25 index); rebuild the index")
        try:
            params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
            postings = cls(folder, n_docs)
        except validate.Damaged as exc:
            raise IndexFormatError(f"{folder}/{exc.file} is damaged ({exc.what}); rebuild the index or restore it "
                                   "from a copy") from None
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, EOFError) as exc:
            raise IndexFormatError(f"{folder}: corrupt BM25 files ({type(exc).__name__}: {exc}); "
                                   "rebuild the index") from None
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

    def known_tokens(self, query_tokens: list[str]) -> list[str]:
        """The query's distinct known tokens, in the order :meth:`presence` gives its rows."""
        n = len(self.indptr) - 1
        return list(dict.fromkeys(t for t in query_tokens if (i := self.vocab.get(t)) is not None and i < n))

    def presence(self, query_tokens: list[str], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of ``rows`` hold each distinct known query token (bool [tokens, rows]) and each
        token's passage count: binary searches in the postings, never a whole list read."""
        ids = [self.vocab[t] for t in self.known_tokens(query_tokens)]
        rows = np.asarray(rows, dtype=np.int64)
        held = np.zeros((len(ids), rows.size), dtype=bool)
        df = np.zeros(len(ids), dtype=np.int64)
        for t, i in enumerate(ids):
            docs = self.indices[self.indptr[i]:self.indptr[i + 1]]
            df[t] = docs.size
            if docs.size and rows.size:
                pos = np.minimum(np.searchsorted(docs, rows), docs.size - 1)
                held[t] = docs[pos] == rows
        return held, df

    def query(self, query_tokens: list[str], k: int) -> LexicalHits:
        """The query's BM25 hits: its exact top ``k`` and the score of any passage on demand,
        without merging the long postings of common tokens (MaxScore, Turtle & Flood 1995).

        1. A floor θ under the true ``k``-th best score: the full scores of ``k`` passages taken
           from the rarest tokens (whole postings while they are short, then the best-scoring
           entries of the next token).
        2. The tokens whose largest scores sum to less than θ cannot lift a passage into the top
           ``k`` on their own: only the passages of the other ("essential") tokens are candidates.
        3. The essential postings are added on a reusable score array; a candidate whose sum
           there plus the skipped tokens' best stays under θ is dropped too. The survivors'
           full scores come from binary searches in every token's postings, summed over the
           query's tokens in query order as bm25s sums them.
        Cost: the essential postings (no sorting) and the survivors' lookups, not the postings
        of every query token."""
        ids = self.token_ids(query_tokens)
        lists = {i: (self.indices[self.indptr[i]:self.indptr[i + 1]], self.data[self.indptr[i]:self.indptr[i + 1]])
                 for i in dict.fromkeys(ids)}
        hits = LexicalHits(ids, lists)
        if not lists or k <= 0:
            return hits
        count = {i: ids.count(i) for i in lists}
        bound = {i: count[i] * float(lists[i][1].max()) for i in lists}
        by_size = sorted(lists, key=lambda i: (lists[i][0].size, i))
        picked, n = [], 0
        for i in by_size:
            docs, vals = lists[i]
            if n + docs.size > k:
                if n < k:
                    picked.append(docs[np.argpartition(-vals, k - n - 1)[:k - n]])
                    n = k
                break
            picked.append(docs)
            n += docs.size
        skipped: set[int] = set()
        floor = 0.0
        if n >= k:
            seed = np.unique(np.concatenate(picked))
            if seed.size >= k:
                floor = float(np.partition(hits.score(seed), seed.size - k)[seed.size - k])
                total = 0.0
                for i in sorted(lists, key=lambda i: (bound[i], i)):
                    total += bound[i]
                    if total >= floor * SKIP_SHARE:
                        break
                    skipped.add(i)
        hits.skipped = len(skipped)
        rest = sum(bound[i] for i in skipped)
        rows, partial = self._candidates([i for i in lists if i not in skipped], count, lists,
                                         (floor - rest) * (1 - 1e-6))
        if rows.size > k:
            # ``partial`` (the essential tokens' sum) is at most a rounding under a row's score
            # and ``rest`` over it: only rows whose best case reaches the k-th worst case can be
            # in the top k, and only they are scored exactly
            kth = float(np.partition(partial, rows.size - k)[rows.size - k])
            rows = rows[partial + rest >= kth * (1 - 1e-5)]
        scores = hits.score(rows)
        order = np.argpartition(-scores, k - 1)[:k] if scores.size > k else np.arange(scores.size)
        kth = scores[order].min() if order.size else 0.0
        order = np.flatnonzero(scores >= kth)                 # ties at the k-th score: lowest rows
        order = order[np.lexsort((rows[order], -scores[order]))][:k]
        hits.top_rows, hits.top_scores = rows[order], scores[order]
        return hits

    def _candidates(self, essential: list[int], count: dict[int, int], lists,
                    need: float) -> tuple[np.ndarray, np.ndarray]:
        """Sorted passages of the ``essential`` tokens whose score from those tokens reaches
        ``need`` (what they must bring for the skipped tokens' best to reach the floor), and
        that partial score (summed in another order than bm25s sums: equal up to rounding)."""
        if not essential:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scratch = self._scratch
        if scratch is None or not scratch.lock.acquire(blocking=False):
            scratch, owned = _ScoreScratch(self.n_docs), None
        else:
            owned = scratch
        try:
            acc = scratch.acc
            for i in essential:
                docs, vals = lists[i]
                acc[docs] += vals * count[i] if count[i] > 1 else vals
            docs = np.concatenate([lists[i][0] for i in essential])
            partial = acc[docs]
            acc[docs] = 0.0
        finally:
            if owned is not None:
                owned.lock.release()
        keep = partial >= need
        rows, first = np.unique(docs[keep], return_index=True)
        return rows.astype(np.int64), partial[keep][first]

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every passage (float32 [P]); zeros where no query token occurs."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        rows, scores = self.matches(query_tokens)
        out[rows] = scores
        return out


class _ScoreScratch:
    """A score per passage, reused by one reader's queries: a query writes only its essential
    postings and clears exactly those (untouched zero pages are never even mapped)."""

    def __init__(self, n_docs: int):
        self.acc = np.zeros(n_docs, dtype=np.float32)
        self.lock = threading.Lock()


class LexicalHits:
    """One query's BM25 hits (:meth:`Postings.query`): ``top_rows``/``top_scores`` best first
    (ties by row), and :meth:`score` of any passages."""

    def __init__(self, ids: list[int], lists: dict[int, tuple[np.ndarray, np.ndarray]]):
        self.ids, self.lists = ids, lists
        self.top_rows = np.zeros(0, dtype=np.int64)
        self.top_scores = np.zeros(0, dtype=np.float32)
        self.skipped = 0         # tokens whose postings were searched, never merged

    @property
    def max(self) -> float:
        return float(self.top_scores[0]) if self.top_scores.size else 0.0

    def score(self, rows: np.ndarray) -> np.ndarray:
        """BM25 scores (float32) of ``rows``, summed over the query's tokens in query order as
        bm25s sums them; 0 where no token occurs."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(rows.shape, dtype=np.float32)
        if rows.size == 0:
            return out
        part = {}
        for i, (docs, vals) in self.lists.items():
            got = np.zeros(rows.shape, dtype=np.float32)
            if docs.size:
                pos = np.minimum(np.searchsorted(docs, rows), docs.size - 1)
                hit = docs[pos] == rows
                got[hit] = vals[pos[hit]]
            part[i] = got
        for i in self.ids:
            out += part[i]
        return out
