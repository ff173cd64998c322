"""What the retrieval pipeline asks of a search space, and the typed results its stages pass on.

Two spaces implement :class:`SearchSpace`: :mod:`exact` scans every passage with whole-corpus
arrays; :mod:`approx` (``search=ann``) works on candidate sets, so nothing per query is
O(corpus). :mod:`pipeline` runs the stages in one order over either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .activation import Activation, SparseActivation
from .fusion import Ranks
from .params import RetrievalParams
from .results import QueryEntity
from .sample import Sample
from .sentences import BestSentences


@dataclass
class Scored:
    """Rows (sorted, or best first where said) and their scores."""

    rows: np.ndarray
    scores: np.ndarray


@dataclass
class Linked:
    """The linking stage: seeds (entity → score), what each query entity linked to, and the
    entities named only inside a longer linked name (they never join the activation)."""

    seeds: dict[int, float]
    entities: list[QueryEntity] = field(default_factory=list)
    covered: set[int] = field(default_factory=set)


@dataclass
class Ranking:
    """What the pipeline hands the output stage: ``rows`` best first (after a walk, up to
    ``params.depth`` of them, for linked selection) with their scores."""

    rows: np.ndarray
    scores: np.ndarray
    activation: Activation | SparseActivation | None = None
    query_entities: list[QueryEntity] = field(default_factory=list)
    fallback: str | None = None
    evidence: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    named: frozenset = frozenset()      # entities the question itself links (or names inside a linked name)
    prior: Callable[[np.ndarray], np.ndarray] | None = None     # the query-only prior of any rows (Evidence.prior)


@dataclass
class SpaceParts:
    """What both spaces are made of: the index and the query-time structures built over it once
    (the retriever builds them and hands the same ones to each space)."""

    index: object
    postings: object
    sample: Sample
    best_sentences: BestSentences
    documents: bool

    def __post_init__(self):
        self.graph = self.index.graph
        self.n_passages = len(self.index.passage_ids)


class Evidence(Protocol):
    """What the query alone says about passages (dense cosine, BM25), in one space."""

    rows: np.ndarray          # the rows the query-only rankings cover (exact: all)
    shift: float | None       # the calibration background (None: raw cosines)

    def prior(self, rows: np.ndarray) -> np.ndarray:
        """The passage prior (``params.prior``) of ``rows``."""

    def best_prior(self, k: int) -> np.ndarray:
        """The ``k`` rows the prior ranks best, best first."""

    def dense_top(self, k: int) -> Scored:
        """The ``k`` best rows by (calibrated) cosine, best first."""

    def lexical_top(self, k: int) -> Scored:
        """The ``k`` best rows by BM25, best first."""

    def dense_ranks(self, rows: np.ndarray) -> Ranks: ...

    def lexical_ranks(self, rows: np.ndarray) -> Ranks: ...

    def voter_ranks(self, rows: np.ndarray, weight: float) -> Ranks:
        """The dense voter of rrf fusion: cosine + ``weight`` × the best sentence cosine."""


class SearchSpace(Protocol):
    """The stages whose work depends on how much of the corpus a query may touch."""

    documents: bool           # documents (files) rather than titled records
    graph: object             # the index's Tri-Graph (CSR arrays of C and M)

    def nearest_entity(self, vector: np.ndarray, calibrated: bool) -> tuple[int, float]: ...

    def evidence(self, q, params: RetrievalParams, calibrated: bool) -> Evidence: ...

    def idf_ratio(self, entities: np.ndarray) -> np.ndarray: ...

    def activate(self, q, linked: Linked, params: RetrievalParams,
                 ev: Evidence) -> Activation | SparseActivation: ...

    def walk(self, q, activation, ev: Evidence, params: RetrievalParams) -> Scored:
        """PageRank scores on the rows this space ranks after the walk (sorted)."""

    def title_groups(self, rows: np.ndarray) -> np.ndarray: ...
