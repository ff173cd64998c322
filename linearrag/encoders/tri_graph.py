"""Embeddings of the Tri-Graph's three node kinds, computed as cheaply as the model allows.

* Passages: one forward pass each (longest first, in chunks, so batches carry little padding).
* Sentences: with a mean-pooling model, taken from the passage's own forward pass (the mean
  of the passage's token vectors inside the sentence): no second pass over the same tokens,
  and each sentence is read in the context of its passage. Other models, sentences cut off by
  the model's window, and ``in_context=False`` embed the sentence alone.
  Only *bridge* sentences (two or more entities) are embedded: a sentence with fewer cannot
  carry activation from one entity to another, so its σ_q is never needed (its row is zero).
"""

from __future__ import annotations

import time

import numpy as np

from ..progress import bar
from .base import CHUNK, Encoder, encode_unique


def embed_tri_graph(encoder: Encoder, passage_texts: list[str], sentence_spans: list[list[tuple[int, int]]],
                    sentences: list[str], bridge: np.ndarray, batch_size: int,
                    progress: bool, in_context: bool = True) -> tuple[np.ndarray, np.ndarray, dict]:
    """Return (passage [P, d], sentence [S, d]) float32 unit vectors and seconds per part (entity
    names are embedded once per index generation: ``Encoder.encode_names``).

    ``sentence_spans[p]`` are the character spans of passage p's sentences in its text, in
    the global sentence order; ``bridge`` is a boolean mask over sentences.
    """
    timings = {}
    dim = encoder.dim
    t0 = time.perf_counter()
    passage_emb = np.zeros((len(passage_texts), dim), dtype=np.float32)
    sentence_emb = np.zeros((len(sentences), dim), dtype=np.float32)
    first_sentence = np.cumsum([0] + [len(s) for s in sentence_spans])
    order = sorted(range(len(passage_texts)), key=lambda i: -len(passage_texts[i]))
    use_context = in_context and encoder.mean_pooling
    pending: list[int] = []  # bridge sentences still to embed alone
    with bar(len(order), "embed passages", progress) as pbar:
        for start in range(0, len(order), CHUNK):
            rows = order[start:start + CHUNK]
            texts = [passage_texts[i] for i in rows]
            if use_context:
                spans = [[sp for k, sp in enumerate(sentence_spans[i]) if bridge[first_sentence[i] + k]] for i in rows]
                vecs, span_vecs = encoder.encode_with_spans(texts, spans, batch_size=batch_size)
                for i, sv in zip(rows, span_vecs):
                    ids = [first_sentence[i] + k for k in range(len(sentence_spans[i])) if bridge[first_sentence[i] + k]]
                    for s, v in zip(ids, sv):
                        if v is None:
                            pending.append(s)
                        else:
                            sentence_emb[s] = v
            else:
                vecs = encoder.encode(texts, batch_size=batch_size)
            passage_emb[rows] = vecs
            pbar.update(len(rows))
    timings["embed_passages"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if not use_context:
        pending = np.flatnonzero(bridge).tolist()
    encode_unique(encoder, [sentences[s] for s in pending], sentence_emb, pending, batch_size, "embed sentences",
                  progress)
    timings["embed_sentences"] = time.perf_counter() - t0
    return passage_emb, sentence_emb, timings
