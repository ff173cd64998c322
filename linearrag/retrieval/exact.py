"""The exact search space: every stage over whole-corpus arrays (``search=exact``).

The matrices (float32 passage and entity vectors, Mᵀ, the walk's operators, C with log1p
counts, hub weights) are made on first use, so opening an index reads none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..files import as_float32
from .activation import Activation, activate_entities
from .fusion import Ranks, hybrid_prior, top_k
from .hubs import idf_ratio
from .linking import calibrate, sigma_calibration
from .params import RetrievalParams
from .ppr import BipartiteWalk, personalized_pagerank
from .reset import passage_entity_reset
from .sentences import dense_voter
from .space import Linked, Scored, SpaceParts


class ExactEvidence:
    """The query-only evidence of every passage; what a stage does not need is not computed."""

    def __init__(self, space: ExactSpace, q, params: RetrievalParams, calibrated: bool):
        self.space, self.q, self.params = space, q, params
        self.rows = np.arange(space.n_passages)
        self.shift = space.sample.passage_median(q.vector) if calibrated else None

    @cached_property
    def cosines(self) -> np.ndarray:
        return np.asarray(self.space.passage_matrix @ self.q.vector, dtype=np.float32)

    @cached_property
    def dense(self) -> np.ndarray:
        return self.cosines if self.shift is None else calibrate(self.cosines, self.shift)

    @cached_property
    def lexical(self) -> np.ndarray:
        return self.space.postings.scores(self.q.tokens)

    @cached_property
    def prior_all(self) -> np.ndarray:
        return self.dense if self.params.prior == "dense" else hybrid_prior(self.dense, self.lexical)

    def prior(self, rows: np.ndarray) -> np.ndarray:
        return self.prior_all[rows]

    def best_prior(self, k: int) -> np.ndarray:
        return top_k(self.prior_all, k)

    def dense_top(self, k: int) -> Scored:
        rows = top_k(self.dense, k)
        return Scored(rows, self.dense[rows])

    def lexical_top(self, k: int) -> Scored:
        rows = top_k(self.lexical, k)
        return Scored(rows, self.lexical[rows])

    def dense_ranks(self, rows: np.ndarray) -> Ranks:
        return Ranks(rows, self.dense[rows], only_positive=False)

    def lexical_ranks(self, rows: np.ndarray) -> Ranks:
        return Ranks(rows, self.lexical[rows])

    def voter_ranks(self, rows: np.ndarray, weight: float) -> Ranks:
        if weight == 0:
            return self.dense_ranks(rows)
        voter = dense_voter(self.cosines, self.space.best_sentences.all(self.q.vector), weight)
        return Ranks(rows, voter[rows], only_positive=False)


@dataclass
class ExactSpace(SpaceParts):
    """Whole-corpus arrays of one index (see the module docstring)."""

    def __post_init__(self):
        super().__post_init__()
        self._hub_weights: dict[float, np.ndarray] = {}

    @cached_property
    def passage_matrix(self) -> np.ndarray:
        """Passage vectors in float32 for full scans (stored as float16)."""
        return as_float32(self.index.passage_emb)

    @cached_property
    def entity_matrix(self) -> np.ndarray:
        return as_float32(self.index.entity_emb)

    @cached_property
    def M_T(self):
        return self.graph.M_T

    @cached_property
    def bipartite(self) -> BipartiteWalk:
        return BipartiteWalk.from_counts(self.graph.C)

    @cached_property
    def C_log(self):
        C_log = self.graph.C.copy()
        C_log.data = np.log1p(C_log.data)
        return C_log

    @cached_property
    def idf(self) -> np.ndarray:
        return idf_ratio(self.graph.C)

    @cached_property
    def title_group_of(self) -> np.ndarray:
        """Per passage, a number shared by the passages with the same title."""
        ids: dict[str, int] = {}
        return np.fromiter((ids.setdefault(t, len(ids)) for t in self.index.passage_titles),
                           dtype=np.int64, count=self.n_passages)

    def nearest_entity(self, vector: np.ndarray, calibrated: bool) -> tuple[int, float]:
        """The entity most similar to ``vector`` by a full scan, read against the entity
        sample's median cosine when ``calibrated``."""
        sims = self.entity_matrix @ vector
        best = int(np.argmax(sims))
        sim = float(sims[best])
        if calibrated and len(self.sample.entity_rows):
            sim = calibrate(sim, float(np.median(sims[self.sample.entity_rows])))
        return best, sim

    def evidence(self, q, params: RetrievalParams, calibrated: bool) -> ExactEvidence:
        return ExactEvidence(self, q, params, calibrated)

    def idf_ratio(self, entities: np.ndarray) -> np.ndarray:
        return self.idf[entities]

    def hub_weights(self, params: RetrievalParams) -> np.ndarray | None:
        """Per-entity hub weights for ``params.hub_damping`` (computed once per exponent)."""
        if params.hub_damping == 0:
            return None
        if params.hub_damping not in self._hub_weights:
            self._hub_weights[params.hub_damping] = self.idf ** params.hub_damping
        return self._hub_weights[params.hub_damping]

    def activate(self, q, linked: Linked, params: RetrievalParams, ev: ExactEvidence) -> Activation:
        emb = self.index.sentence_emb
        shift, scale = sigma_calibration(ev.shift)
        if params.sigma_scale == "relative":
            best = (float(np.max(emb @ q.vector)) - shift) * scale if len(emb) else 0.0
            scale = scale / best if best > 0 else scale
        return activate_entities(
            self.graph.M, self.M_T, lambda rows: (as_float32(emb[rows]) @ q.vector - shift) * scale, linked.seeds,
            delta=params.delta, max_iterations=params.max_iterations, propagation=params.propagation,
            entity_weight=self.hub_weights(params), excluded=linked.covered)

    def walk(self, q, activation: Activation, ev: ExactEvidence, params: RetrievalParams) -> Scored:
        r_e, r_p = passage_entity_reset(self.C_log, activation, ev.prior_all, params, self.hub_weights(params))
        scores, _ = personalized_pagerank(self.bipartite, r_p, r_e, params.damping, params.ppr_iterations,
                                          params.ppr_tol)
        return Scored(ev.rows, scores)

    def title_groups(self, rows: np.ndarray) -> np.ndarray:
        return self.title_group_of[rows]
