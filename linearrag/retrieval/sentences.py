"""A passage's best sentence for a query: the sentence part of the dense voter in RRF fusion.

A passage's vector averages everything it says, so a passage that is *about* the query's topic
can outrank the one passage with the *sentence* that answers it. The index already stores a
vector for every bridge sentence (two or more entities; read in its passage's context:
encoders/tri_graph.py), so the best of those cosines costs one product per query and nothing at
build time. ``RetrievalParams.sentence_voter`` weighs it against the passage cosine.

Passages hold consecutive sentences (``passage_sentences`` offsets), so per-passage maxima are
one ``np.maximum.reduceat`` over the cosines of the bridge sentences, which come in passage
order.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..files import as_float32, read_rows


class BestSentences:
    """Best bridge-sentence cosines per passage, over the whole corpus or some passages."""

    def __init__(self, graph, sentence_emb: np.ndarray):
        self.graph = graph
        self.sentence_emb = sentence_emb

    @cached_property
    def bridge(self) -> np.ndarray:
        """Per sentence, whether it carries a vector (two or more entities)."""
        return np.diff(np.asarray(self.graph.M_indptr, dtype=np.int64)) >= 2

    @cached_property
    def _exact(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(float32 vectors of every bridge sentence, the passages that have one, where each
        such passage's sentences start in those vectors) for full scans (the exact path)."""
        rows = np.flatnonzero(self.bridge)
        passages = np.asarray(self.graph.sentence_passage, dtype=np.int64)[rows]
        owners, starts = np.unique(passages, return_index=True)
        return as_float32(read_rows(self.sentence_emb, rows)), owners, starts

    def all(self, vector: np.ndarray) -> np.ndarray:
        """Per passage of the corpus, its best bridge-sentence cosine with ``vector`` (0 for a
        passage without one; negative cosines count as 0)."""
        matrix, owners, starts = self._exact
        out = np.zeros(self.graph.n_passages, dtype=np.float32)
        if len(owners):
            out[owners] = np.maximum(np.maximum.reduceat(matrix @ vector, starts), 0.0)
        return out

    def of(self, passages: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """``all(vector)[passages]`` reading only those passages' sentence vectors (the scalable
        path: nothing over the whole corpus)."""
        passages = np.asarray(passages, dtype=np.int64)
        out = np.zeros(passages.size, dtype=np.float32)
        if passages.size == 0:
            return out
        sentences, owner = sentences_of(self.graph.passage_sentences, passages)
        indptr = np.asarray(self.graph.M_indptr)
        keep = (indptr[sentences + 1] - indptr[sentences]) >= 2
        sentences, owner = sentences[keep], owner[keep]
        if sentences.size == 0:
            return out
        order = np.argsort(sentences, kind="stable")   # read the table in file order
        cos = np.empty(sentences.size, dtype=np.float32)
        cos[order] = as_float32(read_rows(self.sentence_emb, sentences[order])) @ vector
        firsts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        out[owner[firsts]] = np.maximum(np.maximum.reduceat(cos, firsts), 0.0)
        return out


def sentences_of(offsets: np.ndarray, passages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the sentences of ``passages`` in their order, per sentence its position in ``passages``):
    passages hold consecutive sentences, ``offsets`` the first of each (P + 1)."""
    passages = np.asarray(passages, dtype=np.int64)
    starts = np.asarray(offsets[passages], dtype=np.int64)
    lens = np.asarray(offsets[passages + 1], dtype=np.int64) - starts
    sentences = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens - starts, lens)
    return sentences, np.repeat(np.arange(passages.size), lens)


def dense_voter(cosines: np.ndarray, best_sentences: np.ndarray, weight: float) -> np.ndarray:
    """The dense voter's scores: the passage cosine plus ``weight`` × the best sentence cosine."""
    if weight == 0:
        return cosines
    return np.asarray(cosines, dtype=np.float32) + np.float32(weight) * best_sentences
