"""The scalable retrieval path (``search=ann``): nothing per query over the whole corpus.

Candidates instead of full scans: the dense list comes from the HNSW index over passage
vectors (``params.candidates`` rows, scored exactly), the lexical list from the BM25
postings of the query's tokens (MaxScore: the long postings of common tokens are searched,
not merged). Activation, the reset and PageRank run on what the seeds and the candidates reach (:mod:`local`), and fusion ranks the union of the touched
passages and both lists; top-k by ``argpartition`` on that union.

Where the exact path uses a statistic of the whole corpus, this one uses either the exact
value on the rows it has or an estimate from the fixed sample of passages that calibration
already scores (``Retriever.background``):

* the passage prior's mass outside the touched rows (it normalises the passage reset);
* a passage's dense rank when it is not in the dense list (RRF only): P × the share of the
  sample that is at least as similar, never better than the list's length + 1. With the
  sentence part of the dense voter (``RetrievalParams.sentence_voter``), the dense list is
  reordered by it (its passages' sentence vectors only) and rows outside keep that estimate.

On the benchmark sets (1k–6k passages) this path stays within 0.5 point of the exact one on the
titled records and 2.5 points of FactRecall@5 below it on docs-fastapi (docs/scale.md);
``search=exact`` keeps the exact path at any size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..files import as_float32, read_rows
from ..lexical import LexicalHits
from .fusion import min_rank_positions, order_siblings
from .linking import calibrate, evidence_seeds, no_seed_reason
from .local import (PushScratch, SparseActivation, gather, hub_weights_of, local_activation, local_reset,
                    lookup_sorted, push_pagerank)
from .params import RetrievalParams
from .sentences import dense_voter, sentences_of

SIBLING_DEPTH = 100      # as fusion.order_siblings


@dataclass
class Evidence:
    """What the query alone says about passages, on the rows the path looks at."""

    dense_rows: np.ndarray       # the dense list, best first
    dense_cos: np.ndarray        # raw cosines
    lex: LexicalHits             # the BM25 list (``lex.top_rows``, best first) and scores on demand
    sample_rows: np.ndarray      # the fixed sample (sorted) and its raw cosines
    sample_cos: np.ndarray
    shift: float | None          # the calibration background (None: raw cosines)
    n_passages: int

    @property
    def lex_top(self) -> np.ndarray:
        return self.lex.top_rows

    def lexical(self, rows: np.ndarray) -> np.ndarray:
        return self.lex.score(rows)

    def calibrated(self, cos: np.ndarray) -> np.ndarray:
        return cos if self.shift is None else calibrate(cos, self.shift)

    def prior(self, rows: np.ndarray, cos: np.ndarray, params: RetrievalParams) -> np.ndarray:
        """The passage prior (``params.prior``) of ``rows`` whose raw cosines are ``cos``."""
        dense = self.calibrated(cos).astype(np.float64)
        if params.prior == "dense":
            return dense
        top = self.lex.max
        scaled = self.lexical(rows) / top if top > 0 else np.zeros(rows.size)
        return 0.5 * (np.clip(dense, 0.0, None) + scaled)

    def dense_rank(self, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        """1-based dense rank: exact within the dense list, estimated from the sample outside."""
        k = self.dense_rows.size
        ranks = _list_positions(self.dense_rows, rows).astype(np.float64)
        out = ranks == 0
        if out.any():
            sample = np.sort(self.sample_cos)
            above = sample.size - np.searchsorted(sample, np.asarray(cos)[out], side="left")
            ranks[out] = np.maximum(k + 1, np.ceil(self.n_passages * above / max(sample.size, 1)))
        return ranks

    def voter_rank(self, rows: np.ndarray, cos: np.ndarray, best_sentence_of, weight: float) -> np.ndarray:
        """The dense voter's 1-based rank in RRF fusion (``RetrievalParams.sentence_voter``):
        ``dense_rank``, with the dense list (every row of which is in ``rows``) reordered by
        cosine + ``weight`` × the best sentence cosine; rows outside the list keep their
        estimated rank. ``best_sentence_of(rows)``: those rows' best sentence cosines."""
        ranks = self.dense_rank(rows, cos)
        inside = np.flatnonzero(ranks <= self.dense_rows.size)   # exact ranks: the dense list
        if weight == 0 or inside.size == 0:
            return ranks
        mixed = dense_voter(np.asarray(cos)[inside], best_sentence_of(rows[inside]), weight)
        ranks[inside[np.lexsort((rows[inside], -mixed))]] = np.arange(1, inside.size + 1)
        return ranks

    def lex_rank(self, rows: np.ndarray) -> np.ndarray:
        """1-based BM25 rank among matching passages (inf: no match); exact within the BM25
        list, one past its end for matches beyond it."""
        ranks = _list_positions(self.lex_top, rows).astype(np.float64)
        beyond = (ranks == 0) & (self.lexical(rows) > 0)
        ranks[beyond] = self.lex_top.size + 1
        ranks[ranks == 0] = np.inf
        return ranks


def _list_positions(ranked: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """1-based position of each row in the list ``ranked`` (0 when absent)."""
    order = np.argsort(ranked, kind="stable")
    return lookup_sorted(ranked[order], (order + 1).astype(np.int64), rows, 0)


def top_rows(rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best scores (ties by lower row), best first, via argpartition."""
    k = min(k, rows.size)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < rows.size else np.arange(rows.size)
    kth = scores[part].min()
    cand = np.flatnonzero(scores >= kth)
    return cand[np.lexsort((rows[cand], -scores[cand]))][:k]


def positive_ranks(rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """fusion.ranks_of(only_positive=True) on a row subset (ties by row)."""
    ranks = np.full(rows.size, np.inf)
    pos = np.flatnonzero(scores > 0)
    order = pos[np.lexsort((rows[pos], -scores[pos]))]
    ranks[order] = np.arange(1, order.size + 1)
    return ranks


class ScalablePath:
    """Answers over one index's candidate sets (see the module docstring)."""

    def __init__(self, retriever):
        self.r = retriever
        self.index = retriever.index
        self.graph = retriever.index.graph
        self._scratch: PushScratch | None = None

    @property
    def scratch(self) -> PushScratch:
        if self._scratch is None:
            self._scratch = PushScratch(self.graph.n_passages + self.graph.n_entities)
        return self._scratch

    # ---- evidence ------------------------------------------------------------------------
    def evidence(self, q, params: RetrievalParams, calibrated: bool) -> Evidence:
        rows, cos = self.index.passage_search.search(q.vector, params.candidates)
        lex = self.r.postings.query(q.tokens, params.candidates)
        sample_cos = self.r.background_cosines(q)
        shift = float(np.median(sample_cos)) if calibrated and sample_cos.size else None
        return Evidence(rows, cos, lex, self.r.background_rows, sample_cos,
                        shift, len(self.index.passage_ids))

    def cosines(self, rows: np.ndarray, q) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(0, dtype=np.float32)
        return as_float32(read_rows(self.index.passage_emb, rows)) @ q.vector

    def sentences_of(self, passages: np.ndarray) -> np.ndarray:
        """Sorted sentences of some passages (passages hold consecutive sentences)."""
        if passages.size == 0:
            return np.zeros(0, dtype=np.int64)
        return np.sort(sentences_of(self.graph.passage_sentences, passages)[0])

    # ---- the modes -----------------------------------------------------------------------
    def retrieve(self, q, params: RetrievalParams, timings: dict, link):
        """(rows best first, their scores, activation, query entities, fallback, the rows whose
        entities seeded a query without a linked entity: ``RetrievalParams.evidence_seeds``)."""
        if params.sigma_scale == "relative":
            raise ParameterError("sigma_scale=relative needs the best cosine over all sentences; "
                                 "use search=exact with it")
        calibrated = params.similarity == "calibrated"
        if params.mode == "linearrag":
            t0 = time.perf_counter()
            seeds, query_entities, covered = link()
            timings["linking"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        ev = self.evidence(q, params, calibrated and params.mode == "linearrag")
        base = np.union1d(ev.dense_rows, ev.lex_top)
        timings["prior"] = (time.perf_counter() - t0) * 1000
        if params.mode == "dense":
            return ev.dense_rows[:params.top_k], ev.dense_cos[:params.top_k].astype(np.float64), None, [], None, ()
        if params.mode == "bm25":
            rows = ev.lex_top[:params.top_k]
            return rows, ev.lexical(rows).astype(np.float64), None, [], None, ()
        if params.mode == "rrf":
            rows, scores = self._rrf_fallback(base, ev, q, params)
            return rows, scores, None, [], None, ()
        evidence = np.zeros(0, dtype=np.int64)
        if not seeds and params.evidence_seeds:
            evidence = base[top_rows(base, ev.prior(base, self.cosines(base, q), params), params.evidence_seeds)]
            seeds = evidence_seeds(self.graph.C_indptr, self.graph.C_indices, evidence, lambda e: hub_weights_of(
                self.graph.CT_indptr, self.graph.n_passages, e, 1.0))
            if not seeds:
                evidence = evidence[:0]
        if not seeds:
            fallback = no_seed_reason(q, params)
            if params.prior == "dense":
                cos = ev.calibrated(ev.dense_cos)
                keep = top_rows(ev.dense_rows, cos, params.top_k)
                return ev.dense_rows[keep], cos[keep].astype(np.float64), None, query_entities, fallback, evidence
            rows, scores = self._rrf_fallback(base, ev, q, params)
            return rows, scores, None, query_entities, fallback, evidence

        t0 = time.perf_counter()
        activation = self.activate(q, seeds, params, covered, ev, base)
        timings["activation"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        r_e, r_p = local_reset(self.graph, activation, base, lambda rows: ev.prior(rows, self.cosines(rows, q), params),
                               lambda known: self._outside_mean(ev, known, params), params, base, params.hub_fanout,
                               exact_limit=params.candidates)
        pushed = push_pagerank(self.graph, r_p, r_e, params.damping, params.ppr_epsilon, scratch=self.scratch)
        # what fusion ranks: the walk's best passages and both candidate lists
        best = top_rows(pushed.passages.rows, pushed.passages.values, max(params.candidates, SIBLING_DEPTH))
        rows = np.union1d(pushed.passages.rows[best], base)
        scores = lookup_sorted(pushed.passages.rows, pushed.passages.values, rows, 0.0)
        term_only = params.term_fusion != "same" and all(e.how == "term" for e in query_entities if e.entity)
        fusion = params.term_fusion if term_only else params.fusion_for(self.r.documents)
        needs_dense = params.prior_rerank > 0 or fusion == "rrf" or (
            fusion == "min" and params.fusion_secondary == "hybrid")
        cos = self.cosines(rows, q) if needs_dense else None
        if params.prior_rerank > 0:
            prior = ev.prior(rows, cos, params)
            scores = scores * np.power(np.clip(prior, 1e-6, None), params.prior_rerank)
        if params.siblings == "prior":
            scores = self._order_siblings(rows, scores, lambda sub: ev.prior(rows[sub], self.cosines(rows[sub], q)
                                                                            if cos is None else cos[sub], params))
        if fusion == "rrf":
            voter = ev.voter_rank(rows, cos, lambda sub: self.r.best_sentences.of(sub, q.vector),
                                  self.r.sentence_weight(params))
            fused = (1.0 / (params.rrf_k + positive_ranks(rows, scores))
                     + params.rrf_weight / (params.rrf_k + ev.lex_rank(rows))
                     + params.rrf_weight / (params.rrf_k + voter))
            scores = fused
        elif fusion == "min":
            r1 = positive_ranks(rows, scores)
            if params.fusion_secondary == "bm25":
                r2 = params.fusion_weight * ev.lex_rank(rows)
            else:
                hybrid = 1.0 / (params.rrf_k + ev.lex_rank(rows)) + 1.0 / (params.rrf_k + ev.dense_rank(rows, cos))
                r2 = params.fusion_weight * positive_ranks(rows, hybrid)
            scores = min_rank_positions(rows, r1, r2)
        timings["ppr"] = (time.perf_counter() - t0) * 1000
        keep = top_rows(rows, scores, params.depth)   # linked selection (Retriever._result) orders them
        return rows[keep], scores[keep], activation, query_entities, None, evidence

    # ---- pieces --------------------------------------------------------------------------
    def activate(self, q, seeds, params, excluded, ev: Evidence, base: np.ndarray) -> SparseActivation:
        emb = self.index.sentence_emb
        shift, scale = 0.0, 1.0
        if ev.shift is not None:
            shift = min(ev.shift, 0.99)
            scale = 1.0 / (1.0 - shift)

        def sigma(rows):
            return (as_float32(read_rows(emb, rows)) @ q.vector - shift) * scale

        return local_activation(self.graph, sigma, seeds, params.delta, params.max_iterations, params.propagation,
                                params.hub_damping, excluded, self.sentences_of(base), params.hub_fanout)

    def _outside_mean(self, ev: Evidence, known: np.ndarray, params: RetrievalParams) -> float:
        """Estimated mean of clip(prior, 0) over the passages not in ``known`` (from the sample)."""
        outside = ~np.isin(ev.sample_rows, known)
        if not outside.any():
            return 0.0
        prior = ev.prior(ev.sample_rows[outside], ev.sample_cos[outside], params)
        return float(np.clip(prior, 0.0, None).mean())

    def _rrf_fallback(self, rows: np.ndarray, ev: Evidence, q, params: RetrievalParams):
        cos = self.cosines(rows, q)
        fused = 1.0 / (params.rrf_k + ev.dense_rank(rows, cos)) + 1.0 / (params.rrf_k + ev.lex_rank(rows))
        keep = top_rows(rows, fused, params.top_k)
        return rows[keep], fused[keep]

    def _order_siblings(self, rows: np.ndarray, scores: np.ndarray, prior_of, depth: int = 100):
        """fusion.order_siblings on the best ``depth`` rows, titles read for those rows only;
        ``prior_of(positions)``: the prior of rows[positions] (asked only when siblings meet)."""
        top = top_rows(rows, scores, depth)
        if top.size < 2:
            return scores
        titles = [self.index.passage_titles[int(r)] for r in rows[top]]
        ids: dict[str, int] = {}
        group = np.asarray([ids.setdefault(t, len(ids)) for t in titles], dtype=np.int64)
        if len(ids) == top.size:
            return scores
        # order_siblings works by position: hand it the top rows in row order (its tie-break)
        by_row = np.argsort(rows[top], kind="stable")
        prior = np.asarray(prior_of(top[by_row]))
        sub = order_siblings(scores[top][by_row], prior, group[by_row], depth=top.size)
        out = scores.copy()
        out[top[by_row]] = sub
        return out
