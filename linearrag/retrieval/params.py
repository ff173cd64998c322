"""Retrieval parameters: one frozen dataclass, its fields grouped by the stage that reads them,
each with its type (a ``Literal`` for a choice), its help and its rule next to it; validation,
conversion from strings and the command-line choices are derived from those."""

from __future__ import annotations

import functools
import typing
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Literal

from ..errors import ParameterError

Mode = Literal["linearrag", "dense", "bm25", "rrf"]
Prior = Literal["dense", "hybrid"]
Fusion = Literal["none", "rrf", "min", "auto"]
FusionSecondary = Literal["bm25", "hybrid"]
Siblings = Literal["walk", "prior"]
TermFusion = Literal["same", "rrf"]
LowercaseLinking = Literal["auto", "none", "names", "phrases", "all"]
Reset = Literal["normalized", "paper"]
Propagation = Literal["max", "sum"]
SigmaScale = Literal["absolute", "relative"]
Similarity = Literal["raw", "calibrated"]
Search = Literal["auto", "exact", "ann"]
TermEvidence = Literal["off", "documents", "on"]
LinkParts = Literal["off", "on"]
LinkAsked = Literal["linked", "score"]
AskedQualified = Literal["none", "best"]
SameText = Literal["auto", "collapse", "keep"]

MODES: tuple[str, ...] = typing.get_args(Mode)
# search=auto takes the scalable (ANN) path from this many passages up (docs/scale.md).
ANN_MIN_PASSAGES = 50_000
STAGES = ("output", "linking", "prior", "activation", "walk", "fusion", "rounds", "selection", "search")


def _param(default, stage: str, help: str, rule: tuple | None = None):
    """A field: its default, the stage that reads it, its help, and (numbers) its rule as
    (check, text)."""
    return field(default=default, metadata={"stage": stage, "help": help, "rule": rule})


_AT_LEAST_0 = (lambda v: v >= 0, "≥ 0")
_AT_LEAST_1 = (lambda v: v >= 1, "≥ 1")
_POSITIVE = (lambda v: v > 0, "> 0")


@dataclass(frozen=True)
class RetrievalParams:
    """Parameters of one query. Defaults are one setting for every data set, chosen by
    scripts/sweep.py on half A of every benchmark set together (docs/benchmarks.md). Each
    field's help is its metadata (:func:`param_help`)."""

    # ---- output ----------------------------------------------------------------------------
    mode: Mode = _param("linearrag", "output", "linearrag (activation + PPR), dense, bm25 or rrf (BM25 + dense fusion)")
    top_k: int = _param(5, "output", "passages returned", _AT_LEAST_1)
    max_reported_entities: int = _param(50, "output", "activated entities listed in a result", _AT_LEAST_0)
    same_text: SameText = _param(
        "auto", "output", 'a passage whose text (spacing aside) is that of a better-ranked one: "collapse" (listed '
        "under it as a copy, its place given to the next passage; generated docs repeat a section on many pages), "
        '"keep", or "auto": collapse on documents, keep on titled records (whose ids a user or a gold set names)')
    # ---- linking: query → index entities ---------------------------------------------------
    seed_floor: float = _param(0.6, "linking", "minimum cosine for a query entity to seed an index entity",
                               (lambda v: -1.0 <= v <= 1.0, "in [-1, 1]"))
    ngram_linking: bool = _param(True, "linking", "also seed index entities (and titles) that a query n-gram names exactly")
    lowercase_linking: LowercaseLinking = _param(
        "auto", "linking", 'which English n-grams without a capitalised word may name an entity: "none", "names" '
        '(two or more words naming a page title written as a name: "reign of terror" → the page "Reign of Terror", '
        'never "place of birth" → "Place of birth"), "phrases" '
        '(two or more words — "path parameter" — or an identifier — "get_current_user", "--reload", ".env") or '
        '"all" (single nouns too: "lifespan"; needs terms in the index); "auto": phrases on documents, names on '
        "titled records (whose entities are names)")
    bare_word_share: float = _param(
        0.5, "linking", 'with lowercase phrases linking, a single lowercase word ("gunicorn") links the index entity '
        "of that key only when the entity's passages are at least this share of the passages holding the word: "
        'a name typed in lowercase, not a word of the corpus that also names a code literal or a heading ("run", '
        '"new", "/users/")', (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"))
    similarity: Similarity = _param(
        "calibrated", "linking", '"raw": query-side cosines as they are; "calibrated": every cosine the graph uses '
        "(σ_q, the dense prior, mention → entity linking) becomes (c − b) / (1 − b), b = the query's median cosine "
        "over a fixed sample of the index's passages (entity names for linking). Embedders whose cosines crowd near "
        "a high background (e5: median ≈ 0.76) then read on the scale the thresholds were set on (MiniLM: ≈ 0.10). "
        "Rankings by cosine alone (dense mode) do not change")
    # ---- prior: passage evidence from the query alone -------------------------------------
    prior: Prior = _param(
        "hybrid", "prior", "passage evidence from the query alone, used in the eq. 7 reset and when there is no "
        'seed: "dense" (cosine) or "hybrid" (mean of the cosine and the BM25 score divided by the query\'s best '
        "BM25 score)")
    evidence_seeds: int = _param(
        3, "prior", "m: when the query links no index entity, the entities of the m passages the query-only prior "
        "ranks best seed the walk, each scored by its idf ratio (1 for an entity of one passage, small for a hub) "
        "over the rank of the best of those passages that holds it (docs/method.md). 0: no walk, the fallback "
        "ranks by the prior's fusion", _AT_LEAST_0)
    term_evidence: TermEvidence = _param(
        "documents", "prior", 'when every linked query entity is a lowercase term (an option, an identifier, "app '
        'factory"), the evidence seeds join them: a term names what the question is about, the best passages '
        'say where; "documents" (indexes of files), "on" (every index) or "off"')
    term_seed_weight: float = _param(
        0.1, "prior", "with term_evidence in force, a linked term's seed score is this times its idf ratio (1 for "
        "an entity of one passage, small for a hub), as evidence seeds are scored", (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"))
    # ---- activation: entities reached through bridging sentences --------------------------
    delta: float = _param(0.3, "activation", "δ: an entity newly reached joins the activation only with score ≥ delta",
                          (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"))
    max_iterations: int = _param(3, "activation", "propagation steps after the seeds", _AT_LEAST_0)
    hub_damping: float = _param(
        2.0, "activation", "exponent of the hub weight w_e = (idf_e / idf_max) ** hub_damping, which scales what "
        "an entity passes on in activation and its share of the reset; 0 = off", _AT_LEAST_0)
    propagation: Propagation = _param(
        "max", "activation", '"max" (max-product: scores stay in [0, 1], each entity remembers its best bridging '
        'sentence) or "sum" (eq. 5 literally, clipped to [0, 1])')
    sigma_scale: SigmaScale = _param(
        "absolute", "activation", '"absolute": σ_q is the cosine; "relative": the cosine divided by the query\'s '
        "best cosine over all sentences, so δ means the same for embedders whose cosines run on different scales")
    # ---- walk: personalised PageRank over passages and entities ---------------------------
    lam: float = _param(1.0, "walk", "λ: weight of the dense query–passage similarity in the passage reset (eq. 7)",
                        _AT_LEAST_0)
    damping: float = _param(0.5, "walk", "d: PageRank damping (probability of following an edge)",
                            (lambda v: 0.0 < v < 1.0, "in (0, 1)"))
    passage_weight: float = _param(
        0.9, "walk", "W_p: passage reset multiplier (paper form); in the normalised form, the share of the reset "
        "mass given to passages (the rest goes to entities)", _AT_LEAST_0)
    reset: Reset = _param(
        "normalized", "walk", '"normalized" (entity and passage resets normalised separately, then mixed) or '
        '"paper" (eq. 7 added as is; the balance drifts with corpus size)')
    ppr_iterations: int = _param(100, "walk", "cap on power iterations; ppr_tol stops earlier on L1 change", _AT_LEAST_1)
    ppr_tol: float = _param(1e-5, "walk", "L1 change of the PageRank vector that ends the power iterations")
    # ---- fusion: the walk's ranking meets the lexical and dense ones ----------------------
    fusion: Fusion = _param(
        "auto", "fusion", 'how the PageRank ranking meets the lexical one: "none" (PageRank alone), "rrf" '
        "(reciprocal rank fusion with the BM25 and dense rankings, weight rrf_weight each against 1 for PageRank), "
        '"min" (a passage\'s rank is the best of its PageRank rank, fusion_weight × its BM25 rank and fusion_dense × '
        'its dense rank) or "auto": '
        '"min" on corpora of titled records, "rrf" on documents (files: docs, notes)')
    fusion_weight: float = _param(3.0, "fusion", 'the factor on the BM25 rank in "min" fusion', _POSITIVE)
    fusion_dense: float = _param(
        4.0, "fusion", 'the factor on the dense rank in "min" fusion: a passage\'s rank is also at most fusion_dense × '
        "its dense rank (0: only BM25 is guaranteed places)", _AT_LEAST_0)
    fusion_secondary: FusionSecondary = _param(
        "bm25", "fusion", 'the ranking "min" fusion guarantees places to: "bm25", or "hybrid" (the reciprocal rank '
        "fusion of BM25 and dense, as in rrf mode)")
    rrf_weight: float = _param(
        0.7, "fusion", 'the weight of the BM25 and of the dense ranking (each) against 1 for the walk in "rrf" '
        "fusion (and in term_fusion)", _POSITIVE)
    rrf_k: int = _param(60, "fusion", "constant of reciprocal rank fusion", _AT_LEAST_1)
    term_fusion: TermFusion = _param(
        "rrf", "fusion", 'the fusion used when every seed is a lowercase term (no name, no title in the question): '
        '"same" (as fusion) or "rrf" (the graph is one voter among three)')
    sentence_voter: float = _param(
        0.5, "fusion", 'β ≥ 0, on documents: in "rrf" fusion (and term_fusion) the dense voter ranks a passage by '
        "its cosine plus β × the best cosine of its bridge sentences (floored at 0), so a passage one of whose "
        "sentences states what the query asks gains on passages only about its topic. Titled records keep the "
        "passage cosine, as do rrf mode and the fallback. 0: off", (lambda v: 0.0 <= v <= 100.0, "in [0, 100]"))
    prior_rerank: float = _param(
        0.0, "fusion", "γ ≥ 0: the PageRank score is multiplied by prior^γ before fusion (0 = off); helps "
        "single-hop questions, costs multi-hop ones their bridge passages", (lambda v: 0.0 <= v <= 10.0, "in [0, 10]"))
    # ---- rounds: the walk again from what the best passages name -------------------------
    rounds: int = _param(
        1, "rounds", "walk rounds: after each round, the entities of the round_passages best-ranked passages join "
        "the seeds (each scored round_weight × its idf ratio over the rank of the best of those passages holding "
        "it) and activation and the walk run again, so a chain continues past what the question names; a round "
        "that adds no seed ends the rounds. 1: one walk", _AT_LEAST_1)
    round_passages: int = _param(3, "rounds", "how many best-ranked passages seed the next round", _AT_LEAST_1)
    round_weight: float = _param(0.3, "rounds", "the score of a next round's seeds against 1 for a linked name",
                                 (lambda v: 0.0 < v <= 1.0, "in (0, 1]"))
    # ---- selection: the order of the passages returned ------------------------------------
    siblings: Siblings = _param(
        "prior", "selection", '"prior": among the best 100 PageRank scores, passages with the same title trade '
        "places to come in the order of the query-only prior, each title keeping the ranks it holds — the walk "
        'cannot tell siblings apart; "walk": PageRank order as is')
    link_depth: int = _param(
        30, "selection", "linked selection (retrieval/chain.py) over the max(link_depth, top_k) best-scored passages "
        "when the walk ran, on corpora of titled records: rank 1 stays, each next rank goes to the best-scored "
        "passage whose title a passage placed above names, else to the best-scored one (from the third on, "
        "weighed with cover_weight). Documents stay in score order. 0 or 1: off", _AT_LEAST_0)
    link_parts: LinkParts = _param(
        "on", "selection", 'in linked selection (languages written with spaces), "on": when no remaining passage has '
        "a whole title named above, the best-scored one whose title's name (up to a bracket, comma or colon) holds "
        "an entity that a passage placed above names and the activation reached beyond the question comes next "
        '("Alcohol laws of Indiana" after a passage naming Indiana, "Henry King (director)" after one naming Henry '
        'King), unless a passage the question names scores higher; "off": whole titles only')
    link_parts_prior: float = _param(
        0.05, "selection", "link_parts takes a page only when its query-only prior (the mean of its calibrated "
        "cosine to the question, floored at 0, and its BM25 score over the best one's) reaches this: the page must "
        "look a little like the question (\"Alcohol laws of Indiana\" for \"…stop selling booze?\"), not only "
        "hold a name (\"Flag of Nebraska\" after a tour's page naming Nebraska). 0: any page",
        (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"))
    link_reach: int = _param(
        1, "selection", "in linked selection (languages written with spaces), how many pages outside the candidates "
        "the best passage names join them: pages titled exactly as a run of its words that names an entity of at "
        "most link_reach_df passages, not written in the question (\"north-west Iowa\" names the page \"Iowa\"); "
        "they take no position above the third. 0: off", _AT_LEAST_0)
    link_reach_df: int = _param(
        100, "selection", "link_reach joins a page only through an entity named in at most this many passages "
        "(a hub such as a capital city bridges nothing in particular)", _AT_LEAST_1)
    link_asked: LinkAsked = _param(
        "score", "selection", 'in linked selection, a passage whose title the question names (a comparison\'s '
        'second subject): "score": it keeps its place when it scores higher than every passage a passage above '
        'names; "linked": passages named above come first')
    asked_qualified: AskedQualified = _param(
        "best", "selection", 'in linked selection, a page titled with a name the question names plus a qualifier '
        '("Franz Ferdinand (band)" for "…Franz Ferdinand and Sunrise Avenue…") counts as a title the question names '
        '(link_asked): "best": the best-scored such page of each name, when no candidate is titled with the name '
        'alone; "none": whole titles only')
    cover_weight: float = _param(
        2.0, "selection", "in linked selection, from the third position on, a position no link decides goes to the "
        "remaining passage with the best 1 / (rank by score) + cover_weight × the idf-weighted share of the "
        "question's tokens it holds and no passage placed above holds — counted only when it shares with a passage "
        "above an entity of at most cover_df passages that the question does not name (retrieval/cover.py). "
        "0: score order", (lambda v: 0.0 <= v <= 100.0, "in [0, 100]"))
    cover_df: int = _param(
        50, "selection", "cover_weight counts a passage's gain only through a shared entity named in at most this "
        "many passages", _AT_LEAST_1)
    # ---- search space: exact or approximate -----------------------------------------------
    search: Search = _param(
        "auto", "search", '"exact": every stage over the whole corpus; "ann": the scalable space '
        "(retrieval/approx.py): candidates from an HNSW index and BM25 postings, activation and forward-push "
        'PageRank on what the query touches; "auto": "ann" from ANN_MIN_PASSAGES passages up, "exact" below')
    candidates: int = _param(300, "search", "passages taken from each of the dense (ANN) and BM25 lists on the ann path",
                             _AT_LEAST_1)
    hub_fanout: int = _param(
        2000, "search", "on the ann path, an entity with more sentences (passages) than this spreads activation "
        "(its entity term of the reset) only inside the candidate passages", (lambda v: v >= 0, "≥ 0 (0: no cap)"))
    ppr_epsilon: float = _param(
        1e-5, "search", "forward-push tolerance ε on the ann path: a node is pushed while its residual is ≥ ε × its "
        "degree", (lambda v: 0.0 < v < 1.0, "in (0, 1)"))

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            choices = choices_of(f.name)
            if choices and value not in choices:
                raise ParameterError(f"{f.name} must be {_or(choices)}, got {value!r}")
            rule = f.metadata.get("rule")
            if rule and not rule[0](value):
                raise ParameterError(f"{f.name} must be {rule[1]}, got {value!r}")
        if self.reset == "normalized" and self.passage_weight > 1.0:
            raise ParameterError(f"passage_weight must be ≤ 1 with reset=normalized, got {self.passage_weight!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def depth(self) -> int:
        """How many best-scored passages a walk's ranking needs: ``top_k``, or ``link_depth``
        when linked selection reorders more than that."""
        return max(self.top_k, self.link_depth)

    def lowercase_for(self, documents: bool) -> str:
        """The lowercase linking these parameters use on documents (True) or titled records."""
        if self.lowercase_linking != "auto":
            return self.lowercase_linking
        return "phrases" if documents else "names"

    def collapses_copies(self, documents: bool) -> bool:
        """Whether passages of the same text collapse (``same_text``) on documents (True) or titled records."""
        return self.same_text == "collapse" or (self.same_text == "auto" and documents)

    def fusion_for(self, documents: bool) -> str:
        """The fusion these parameters use on an index of documents (True) or of titled records."""
        if self.fusion != "auto":
            return self.fusion
        return "rrf" if documents else "min"

    def with_overrides(self, overrides: dict[str, object]) -> RetrievalParams:
        """Return a copy with ``overrides`` applied; values given as strings are converted."""
        known = {f.name for f in fields(self)}
        converted = {}
        for name, value in overrides.items():
            if name not in known:
                raise ParameterError(f"unknown parameter {name!r}; known: {', '.join(sorted(known))}")
            converted[name] = _convert(name, value, type(getattr(self, name)))
        return replace(self, **converted)


@functools.cache
def choices_of(name: str) -> tuple[str, ...]:
    """The values a choice parameter takes (its ``Literal``); () for a number or a flag.
    Cached: resolving the type hints costs ~10 ms, and every parameter set is checked."""
    hint = typing.get_type_hints(RetrievalParams)[name]
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else ()


def param_help() -> dict[str, list[tuple[str, str]]]:
    """Stage → [(name, "help (default …; choices …)")], in the order the fields are written."""
    out: dict[str, list[tuple[str, str]]] = {stage: [] for stage in STAGES}
    for f in fields(RetrievalParams):
        choices = choices_of(f.name)
        extra = f"default {f.default!r}" + (f"; one of {', '.join(choices)}" if choices else "")
        out[f.metadata["stage"]].append((f.name, f"{f.metadata['help']} ({extra})"))
    return out


def _or(choices: tuple[str, ...]) -> str:
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


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
