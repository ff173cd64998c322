"""The approximate search space (``search=ann``): nothing per query over the whole corpus.

Candidates instead of full scans: the dense list comes from the HNSW index over passage
vectors (``params.candidates`` rows, scored exactly), the lexical list from the BM25 postings of
the query's tokens (MaxScore: the long postings of common tokens are searched, not merged).
Activation, the reset and PageRank run on what the seeds and the candidates reach
(:func:`~.activation.local_activation`, :func:`~.reset.local_reset`,
:func:`~.ppr.push_pagerank`), and fusion ranks the union of the walk's best passages and both
lists.

Where the exact space uses a statistic of the whole corpus, this one uses either the exact value
on the rows it has or an estimate from the fixed passage sample (:mod:`sample`):

* the passage prior's mass outside the touched rows (it normalises the passage reset);
* a passage's dense rank when it is not in the dense list (RRF only): P × the share of the
  sample that is at least as similar, never better than the list's length + 1. With the
  sentence part of the dense voter (``RetrievalParams.sentence_voter``), the dense list is
  reordered by it (its passages' sentence vectors only) and rows outside keep that estimate.

On the benchmark sets (1k–6k passages) this space stays within 0.5 point of the exact one on
titled records and 2.5 points of FactRecall@5 below it on docs-fastapi (docs/scale.md);
``search=exact`` keeps the exact space at any size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..files import as_float32, read_rows
from .activation import SparseActivation, local_activation
from .fusion import Ranks, top_rows
from .hubs import hub_weights_of
from .linking import calibrate, sigma_calibration
from .params import RetrievalParams
from .ppr import PushScratch, push_pagerank
from .reset import local_reset
from .sentences import dense_voter, sentences_of
from .space import Linked, Scored, SpaceParts
from .sparse import lookup_sorted

SIBLING_DEPTH = 100      # as fusion.order_siblings


class CandidateEvidence:
    """What the query alone says about passages, on the rows the space looks at."""

    def __init__(self, space: ApproxSpace, q, params: RetrievalParams, calibrated: bool):
        self.space, self.q, self.params = space, q, params
        self.dense_rows, self.dense_cos = space.index.passage_search.search(q.vector, params.candidates)
        self.lex = space.postings.query(q.tokens, params.candidates)
        self.sample_cos = space.sample.passage_cosines(q.vector)
        self.shift = float(np.median(self.sample_cos)) if calibrated and self.sample_cos.size else None
        self.rows = np.union1d(self.dense_rows, self.lex.top_rows)
        self._known = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))

    def cosines(self, rows: np.ndarray) -> np.ndarray:
        """Raw cosines of ``rows``, each passage vector read once per query."""
        rows = np.asarray(rows, dtype=np.int64)
        known_rows, known_cos = self._known
        missing = np.setdiff1d(rows, known_rows)
        if missing.size:
            cos = as_float32(read_rows(self.space.index.passage_emb, missing)) @ self.q.vector
            merged = np.concatenate([known_rows, missing])
            order = np.argsort(merged, kind="stable")
            self._known = known_rows, known_cos = merged[order], np.concatenate([known_cos, cos])[order]
        return lookup_sorted(known_rows, known_cos, rows, np.float32(0))

    def calibrated(self, cos: np.ndarray) -> np.ndarray:
        return cos if self.shift is None else calibrate(cos, self.shift)

    def prior(self, rows: np.ndarray) -> np.ndarray:
        return self.prior_of(rows, self.cosines(rows))

    def prior_of(self, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        """The passage prior (``params.prior``) of ``rows`` whose raw cosines are ``cos``."""
        dense = self.calibrated(cos).astype(np.float64)
        if self.params.prior == "dense":
            return dense
        top = self.lex.max
        scaled = self.lex.score(rows) / top if top > 0 else np.zeros(rows.size)
        return 0.5 * (np.clip(dense, 0.0, None) + scaled)

    def best_prior(self, k: int) -> np.ndarray:
        return self.rows[top_rows(self.rows, self.prior(self.rows), k)]

    def dense_top(self, k: int) -> Scored:
        cos = self.calibrated(self.dense_cos)
        keep = top_rows(self.dense_rows, cos, k)
        return Scored(self.dense_rows[keep], cos[keep].astype(np.float64))

    def lexical_top(self, k: int) -> Scored:
        rows = self.lex.top_rows[:k]
        return Scored(rows, self.lex.score(rows).astype(np.float64))

    def dense_ranks(self, rows: np.ndarray) -> Ranks:
        """1-based dense rank: exact within the dense list, estimated from the sample outside."""
        k = self.dense_rows.size
        ranks = _list_positions(self.dense_rows, rows).astype(np.float64)
        out = ranks == 0
        if out.any():
            sample = np.sort(self.sample_cos)
            above = sample.size - np.searchsorted(sample, self.cosines(rows[out]), side="left")
            ranks[out] = np.maximum(k + 1, np.ceil(self.space.n_passages * above / max(sample.size, 1)))
        return Ranks(rows, ranks=ranks)

    def voter_ranks(self, rows: np.ndarray, weight: float) -> Ranks:
        """``dense_ranks``, with the dense list (every row of which is in ``rows``) reordered by
        cosine + ``weight`` × the best sentence cosine; rows outside keep their estimated rank."""
        ranks = self.dense_ranks(rows).all()
        inside = np.flatnonzero(ranks <= self.dense_rows.size)   # exact ranks: the dense list
        if weight == 0 or inside.size == 0:
            return Ranks(rows, ranks=ranks)
        best = self.space.best_sentences.of(rows[inside], self.q.vector)
        mixed = dense_voter(self.cosines(rows[inside]), best, weight)
        ranks[inside[np.lexsort((rows[inside], -mixed))]] = np.arange(1, inside.size + 1)
        return Ranks(rows, ranks=ranks)

    def lexical_ranks(self, rows: np.ndarray) -> Ranks:
        """1-based BM25 rank among matching passages (inf: no match); exact within the BM25
        list, one past its end for matches beyond it."""
        top = self.lex.top_rows
        ranks = _list_positions(top, rows).astype(np.float64)
        beyond = (ranks == 0) & (self.lex.score(rows) > 0)
        ranks[beyond] = top.size + 1
        ranks[ranks == 0] = np.inf
        return Ranks(rows, ranks=ranks)

    def outside_mean(self, known: np.ndarray) -> float:
        """Estimated mean of clip(prior, 0) over the passages not in ``known`` (from the sample)."""
        outside = ~np.isin(self.space.sample.passage_rows, known)
        if not outside.any():
            return 0.0
        prior = self.prior_of(self.space.sample.passage_rows[outside], self.sample_cos[outside])
        return float(np.clip(prior, 0.0, None).mean())


def _list_positions(ranked: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """1-based position of each row in the list ``ranked`` (0 when absent)."""
    order = np.argsort(ranked, kind="stable")
    return lookup_sorted(ranked[order], (order + 1).astype(np.int64), rows, 0)


@dataclass
class ApproxSpace(SpaceParts):
    """Candidate sets of one index (see the module docstring)."""

    def __post_init__(self):
        super().__post_init__()
        self._scratch: PushScratch | None = None

    @property
    def scratch(self) -> PushScratch:
        """Push buffers for every node, allocated on first use and reused (see PushScratch)."""
        if self._scratch is None:
            self._scratch = PushScratch(self.graph.n_passages + self.graph.n_entities)
        return self._scratch

    def nearest_entity(self, vector: np.ndarray, calibrated: bool) -> tuple[int, float]:
        """The entity most similar to ``vector`` by the HNSW index, read against the entity
        sample's median cosine when ``calibrated``."""
        rows, cos = self.index.entity_search.search(vector, 1)
        best, sim = int(rows[0]), float(cos[0])
        median = self.sample.entity_median(vector) if calibrated else None
        return best, (sim if median is None else calibrate(sim, median))

    def evidence(self, q, params: RetrievalParams, calibrated: bool) -> CandidateEvidence:
        if params.sigma_scale == "relative":
            raise ParameterError("sigma_scale=relative needs the best cosine over all sentences; "
                                 "use search=exact with it")
        return CandidateEvidence(self, q, params, calibrated)

    def idf_ratio(self, entities: np.ndarray) -> np.ndarray:
        return hub_weights_of(self.graph.CT_indptr, self.graph.n_passages, entities, 1.0)

    def activate(self, q, linked: Linked, params: RetrievalParams, ev: CandidateEvidence) -> SparseActivation:
        emb = self.index.sentence_emb
        shift, scale = sigma_calibration(ev.shift)

        def sigma(rows):
            return (as_float32(read_rows(emb, rows)) @ q.vector - shift) * scale

        sentences = np.sort(sentences_of(self.graph.passage_sentences, ev.rows)[0]) if ev.rows.size else ev.rows
        return local_activation(self.graph, sigma, linked.seeds, params.delta, params.max_iterations,
                                params.propagation, params.hub_damping, linked.covered, sentences, params.hub_fanout)

    def walk(self, q, activation: SparseActivation, ev: CandidateEvidence, params: RetrievalParams) -> Scored:
        """Push PageRank from the local reset; the rows: the walk's best passages and both lists."""
        r_e, r_p = local_reset(self.graph, activation, ev.rows, ev.prior, ev.outside_mean, params, ev.rows,
                               params.hub_fanout, exact_limit=params.candidates)
        pushed = push_pagerank(self.graph, r_p, r_e, params.damping, params.ppr_epsilon, scratch=self.scratch)
        best = top_rows(pushed.passages.rows, pushed.passages.values, max(params.candidates, SIBLING_DEPTH))
        rows = np.union1d(pushed.passages.rows[best], ev.rows)
        return Scored(rows, lookup_sorted(pushed.passages.rows, pushed.passages.values, rows, 0.0))

    def title_groups(self, rows: np.ndarray) -> np.ndarray:
        """Group numbers of ``rows`` by title, reading those rows' titles only."""
        ids: dict[str, int] = {}
        return np.asarray([ids.setdefault(self.index.passage_titles[int(r)], len(ids)) for r in rows.tolist()],
                          dtype=np.int64)
