"""Retrieval parameters: one frozen dataclass, validated, with named presets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from ..errors import ParameterError

MODES = ("linearrag", "dense", "bm25", "rrf")
# search=auto takes the scalable (ANN) path from this many passages up (docs/scale.md).
ANN_MIN_PASSAGES = 50_000


@dataclass(frozen=True)
class RetrievalParams:
    """Parameters of one query. Defaults are one setting for every data set, chosen by
    scripts/sweep.py on half A of every benchmark set together (docs/benchmarks.md).

    mode            linearrag (activation + PPR), dense, bm25 or rrf (BM25 + dense fusion)
    top_k           passages returned
    delta           δ: an entity newly reached joins the activation only with score ≥ delta
    max_iterations  propagation steps after the seeds
    lam             λ: weight of the dense query–passage similarity in the passage reset (eq. 7)
    damping         d: PageRank damping (probability of following an edge)
    passage_weight  W_p: passage reset multiplier (paper form); in the normalised form, the
                    share of the reset mass given to passages (the rest goes to entities)
    seed_floor      minimum cosine for a query entity to seed an index entity
    hub_damping     exponent of the hub weight w_e = (idf_e / idf_max) ** hub_damping, which scales
                    what an entity passes on in activation and its share of the reset; 0 = off
    prior           passage evidence from the query alone, used in the eq. 7 reset and when there
                    is no seed: "dense" (cosine) or "hybrid" (mean of the cosine and the BM25
                    score divided by the query's best BM25 score)
    fusion          how the PageRank ranking meets the lexical one: "none" (PageRank alone),
                    "rrf" (reciprocal rank fusion with the BM25 and dense rankings, weight
                    ``rrf_weight`` each against 1 for PageRank: the walk is one voter of three),
                    "min" (a passage's rank is the better of its PageRank rank and
                    ``fusion_weight`` × its BM25 rank: what lexical search is sure of is never
                    lost, the graph fills the rest) or "auto": "min" on corpora of titled records
                    (Wikipedia-style: a question names a title, and the walk from it is strong
                    evidence), "rrf" on documents (files: docs, notes), where names are weaker
                    evidence than paraphrase and the walk measured as a voter, not a leader
    fusion_weight   the factor on the BM25 rank in "min" fusion
    rrf_weight      the weight of the BM25 and of the dense ranking (each) against 1 for the
                    walk in "rrf" fusion (and in ``term_fusion``)
    sentence_voter  β ≥ 0, on documents: in "rrf" fusion (and ``term_fusion``) the dense voter ranks a
                    passage by its cosine plus β × the best cosine of its bridge sentences (two or
                    more entities, embedded in the passage's context; floored at 0), so a passage
                    one of whose sentences states what the query asks gains on passages that are
                    only about its topic. Titled records keep the passage cosine (a record's
                    sentences all restate its title; measured slightly worse there: docs/method.md),
                    as do rrf mode and the fallback. 0: off
    fusion_secondary  the ranking ``min`` fusion guarantees places to: "bm25", or "hybrid" (the
                    reciprocal rank fusion of BM25 and dense, as in rrf mode)
    prior_rerank    γ ≥ 0: the PageRank score is multiplied by prior^γ before fusion (0 = off);
                    helps single-hop questions, costs multi-hop ones their bridge passages
    siblings        "prior": among the best 100 PageRank scores, passages with the same title
                    (paragraphs of one article, chunks of one file) trade places to come in the
                    order of the query-only prior, each title keeping the ranks it holds — the
                    walk cannot tell siblings apart; "walk": PageRank order as is
    term_fusion     the fusion used when every seed is a lowercase term (no name, no title in
                    the question): "same" (as ``fusion``) or "rrf" (the graph is one voter
                    among three: terms are weaker evidence than names)
    evidence_seeds  m: when the query links no index entity, the entities of the m passages the
                    query-only prior ranks best seed the walk, each scored by its idf ratio (1 for an
                    entity of one passage, small for a hub) over the rank of the best of those passages
                    that holds it; the walk then reaches what those passages' names and terms lead to
                    (docs/method.md). 0: no walk, the fallback ranks by the prior's fusion
    link_depth      linked selection (retrieval/chain.py) over the max(``link_depth``, ``top_k``)
                    best-scored passages when the walk ran, on corpora of titled records: rank 1
                    stays, each next rank goes to the best-scored passage whose title a passage
                    placed above names (an entity of it, or written in its text), else to the
                    best-scored one — the second hop follows what the first passage names.
                    Documents stay in score order (headings are common words). 0 or 1: off
    ngram_linking   also seed index entities (and titles) that a query n-gram names exactly
    lowercase_linking  which English n-grams without a capitalised word may name an entity:
                    "none", "phrases" (two or more words — "path parameter" — or an identifier —
                    "get_current_user") or "all" (single nouns too: "lifespan"; needs terms in the index)
    reset           "normalized" (entity and passage resets normalised separately, then mixed)
                    or "paper" (eq. 7 added as is; the balance drifts with corpus size)
    propagation     "max" (max-product: scores stay in [0, 1], each entity remembers its best
                    bridging sentence) or "sum" (eq. 5 literally, clipped to [0, 1])
    sigma_scale     "absolute": σ_q is the cosine; "relative": the cosine divided by the query's best
                    cosine over all sentences, so δ means the same for embedders whose cosines run
                    on different scales (MiniLM vs the multilingual USE)
    similarity      "raw": query-side cosines as they are; "calibrated": every cosine the graph
                    uses (σ_q, the dense prior, mention → entity linking) becomes (c − b) / (1 − b),
                    b = the query's median cosine over a fixed sample of the index's passages
                    (entity names for linking). Embedders whose cosines crowd near a high
                    background (e5: median ≈ 0.76) then read on the scale the thresholds were set
                    on (MiniLM: ≈ 0.10). Rankings by cosine alone (dense mode) do not change.
    search          "exact": every stage over the whole corpus (dense and BM25 scores of every
                    passage, power-iteration PageRank on the whole graph); "ann": the scalable
                    space (retrieval/approx.py): candidates from an HNSW index and BM25 postings,
                    activation and forward-push PageRank on what the query touches; "auto":
                    "ann" from ``ANN_MIN_PASSAGES`` passages up, "exact" below
    candidates      passages taken from each of the dense (ANN) and BM25 lists on the ann path
    hub_fanout      on the ann path, an entity with more sentences (passages) than this spreads
                    activation (its entity term of the reset) only inside the candidate passages
    ppr_epsilon     forward-push tolerance ε on the ann path: a node is pushed while its residual
                    is ≥ ε × its degree; the L1 error of the PageRank vector is below the residual left
    ppr_iterations  cap on power iterations; ppr_tol stops earlier on L1 change
    rrf_k           constant of reciprocal rank fusion
    """

    mode: str = "linearrag"
    top_k: int = 5
    delta: float = 0.3
    max_iterations: int = 3
    lam: float = 1.0
    damping: float = 0.5
    passage_weight: float = 0.9
    seed_floor: float = 0.6
    hub_damping: float = 2.0
    prior: str = "hybrid"
    fusion: str = "auto"
    fusion_weight: float = 3.0
    rrf_weight: float = 1.0
    sentence_voter: float = 0.5
    fusion_secondary: str = "bm25"
    prior_rerank: float = 0.0
    siblings: str = "prior"
    term_fusion: str = "rrf"
    evidence_seeds: int = 3
    link_depth: int = 30
    ngram_linking: bool = True
    lowercase_linking: str = "none"
    reset: str = "normalized"
    propagation: str = "max"
    sigma_scale: str = "absolute"
    similarity: str = "calibrated"
    search: str = "auto"
    candidates: int = 300
    hub_fanout: int = 2000
    ppr_epsilon: float = 1e-5
    ppr_iterations: int = 100
    ppr_tol: float = 1e-5
    rrf_k: int = 60
    max_reported_entities: int = 50

    def __post_init__(self) -> None:
        checks = [
            ("mode", self.mode in MODES, f"one of {', '.join(MODES)}"),
            ("top_k", self.top_k >= 1, "≥ 1"),
            ("evidence_seeds", self.evidence_seeds >= 0, "≥ 0"),
            ("link_depth", self.link_depth >= 0, "≥ 0"),
            ("delta", 0.0 <= self.delta <= 1.0, "in [0, 1]"),
            ("max_iterations", self.max_iterations >= 0, "≥ 0"),
            ("lam", self.lam >= 0.0, "≥ 0"),
            ("damping", 0.0 < self.damping < 1.0, "in (0, 1)"),
            ("passage_weight", self.passage_weight >= 0.0, "≥ 0"),
            ("passage_weight", self.reset != "normalized" or self.passage_weight <= 1.0, "≤ 1 with reset=normalized"),
            ("seed_floor", -1.0 <= self.seed_floor <= 1.0, "in [-1, 1]"),
            ("hub_damping", self.hub_damping >= 0.0, "≥ 0"),
            ("prior", self.prior in ("dense", "hybrid"), "'dense' or 'hybrid'"),
            ("fusion", self.fusion in ("none", "rrf", "min", "auto"), "'none', 'rrf', 'min' or 'auto'"),
            ("fusion_weight", self.fusion_weight > 0.0, "> 0"),
            ("rrf_weight", self.rrf_weight > 0.0, "> 0"),
            ("sentence_voter", 0.0 <= self.sentence_voter <= 100.0, "in [0, 100]"),
            ("term_fusion", self.term_fusion in ("same", "rrf"), "'same' or 'rrf'"),
            ("lowercase_linking", self.lowercase_linking in ("none", "phrases", "all"), "'none', 'phrases' or 'all'"),
            ("reset", self.reset in ("normalized", "paper"), "'normalized' or 'paper'"),
            ("propagation", self.propagation in ("max", "sum"), "'max' or 'sum'"),
            ("sigma_scale", self.sigma_scale in ("absolute", "relative"), "'absolute' or 'relative'"),
            ("similarity", self.similarity in ("raw", "calibrated"), "'raw' or 'calibrated'"),
            ("prior_rerank", 0.0 <= self.prior_rerank <= 10.0, "in [0, 10]"),
            ("siblings", self.siblings in ("walk", "prior"), "'walk' or 'prior'"),
            ("fusion_secondary", self.fusion_secondary in ("bm25", "hybrid"), "'bm25' or 'hybrid'"),
            ("search", self.search in ("auto", "exact", "ann"), "'auto', 'exact' or 'ann'"),
            ("candidates", self.candidates >= 1, "≥ 1"),
            ("hub_fanout", self.hub_fanout >= 0, "≥ 0 (0: no cap)"),
            ("ppr_epsilon", 0.0 < self.ppr_epsilon < 1.0, "in (0, 1)"),
            ("ppr_iterations", self.ppr_iterations >= 1, "≥ 1"),
            ("rrf_k", self.rrf_k >= 1, "≥ 1"),
            ("max_reported_entities", self.max_reported_entities >= 0, "≥ 0"),
        ]
        for name, ok, rule in checks:
            if not ok:
                raise ParameterError(f"{name} must be {rule}, got {getattr(self, name)!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def depth(self) -> int:
        """How many best-scored passages a walk's ranking needs: ``top_k``, or ``link_depth``
        when linked selection reorders more than that."""
        return max(self.top_k, self.link_depth)

    def fusion_for(self, documents: bool) -> str:
        """The fusion these parameters use on an index of documents (True) or of titled records."""
        if self.fusion != "auto":
            return self.fusion
        return "rrf" if documents else "min"

    def with_overrides(self, overrides: dict[str, object]) -> RetrievalParams:
        """Return a copy with ``overrides`` applied; values given as strings are converted."""
        known = {f.name: f.type for f in fields(self)}
        converted = {}
        for name, value in overrides.items():
            if name not in known:
                raise ParameterError(f"unknown parameter {name!r}; known: {', '.join(sorted(known))}")
            converted[name] = _convert(name, value, type(getattr(self, name)))
        return replace(self, **converted)


def _convert(name: str, value: object, kind: type) -> object:
    if not isinstance(value, str) or kind is str:
        if kind is float and isinstance(value, int):
            return float(value)
        if kind is int and isinstance(value, float) and not value.is_integer():
            raise ParameterError(f"parameter {name} must be an integer, got {value!r}")
        if kind is bool and not isinstance(value, bool):
            raise ParameterError(f"parameter {name} must be true or false, got {value!r}")
        return kind(value) if kind in (int, float) and not isinstance(value, bool) else value
    if kind is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ParameterError(f"parameter {name} must be true or false, got {value!r}")
    try:
        return kind(value)
    except ValueError:
        raise ParameterError(f"parameter {name} must be {kind.__name__}, got {value!r}") from None


def parse_overrides(items: list[str] | None) -> dict[str, str]:
    """Parse ``NAME=VALUE`` strings from the command line."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"--param expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


# The paper's method as published: eq. 5 and eq. 7 literally, dense prior, NER seeds only,
# no hub damping, no fusion, no linked selection, no walk for a query without an entity;
# with its per-data-set values.
_PAPER = {"damping": 0.5, "passage_weight": 0.05, "reset": "paper", "propagation": "sum", "prior": "dense",
          "hub_damping": 0.0, "fusion": "none", "ngram_linking": False, "link_depth": 0,
          "term_fusion": "same", "evidence_seeds": 0}
PRESETS: dict[str, dict[str, object]] = {
    "default": {},
    "paper-2wiki": {"lam": 0.05, "delta": 0.4, "max_iterations": 3, **_PAPER},
    "paper-hotpotqa": {"lam": 0.05, "delta": 0.4, "max_iterations": 3, **_PAPER},
    "paper-musique": {"lam": 2.0, "delta": 0.1, "max_iterations": 5, **_PAPER},
    "paper-medical": {"lam": 1.5, "delta": 0.5, "max_iterations": 3, **_PAPER},
}


def preset(name: str) -> RetrievalParams:
    if name not in PRESETS:
        raise ParameterError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return RetrievalParams().with_overrides(PRESETS[name])
