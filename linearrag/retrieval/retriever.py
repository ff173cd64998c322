"""The retriever: query analysis, entity linking, activation, PPR, baselines.

Models and the index load once; :meth:`Retriever.query` and :meth:`Retriever.query_batch`
answer with :class:`QueryResult` objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..aliases import Aliases, check_unchanged
from ..analysis import Analyzer, Mention, NameCandidate
from ..embeddings import Encoder, load_query_encoder, query_precision_default
from ..errors import IndexFormatError, ModelMismatchError, ParameterError
from ..files import as_float32, read_rows
from ..language import query_language_warning
from ..lexical import EnglishTokenizer, Postings
from ..store import Index, load_index
from .activation import Activation, activate_entities
from .chain import TitleMentions, linked_order, name_entities
from .fusion import hybrid_prior, min_rank_scores, order_siblings, rrf_scores, top_k
from .linking import calibrate, evidence_seeds, link_entities, no_seed_reason
from .local import SparseActivation
from .params import ANN_MIN_PASSAGES, RetrievalParams
from .scalable import ScalablePath
from .sentences import BestSentences, dense_voter
from .ppr import BipartiteWalk, personalized_pagerank
from .reset import idf_ratio, passage_entity_reset
from .results import ActivatedEntity, PassageHit, QueryEntity, QueryResult


# Which parts of query analysis each mode uses (for its latency).
ANALYSIS_PARTS = {
    "linearrag": ("ner", "tokens", "encode"),
    "dense": ("encode",),
    "bm25": ("tokens",),
    "rrf": ("encode", "tokens"),
}


@dataclass
class AnalyzedQuery:
    text: str
    mentions: list[Mention]
    tokens: list[str]            # BM25 tokens
    vector: np.ndarray           # query embedding [dim]
    mention_vectors: np.ndarray  # [len(mentions), dim]
    timings_ms: dict[str, float]
    ngrams: list[NameCandidate] = field(default_factory=list)  # name candidates
    warnings: list[str] = field(default_factory=list)
    tagged: bool = True          # analysed with part-of-speech tags (needed by lowercase_linking=all)


class Retriever:
    """Answers queries over one index with the index's own models."""

    def __init__(self, index: Index, params: RetrievalParams | None = None,
                 analyzer: Analyzer | None = None, encoder: Encoder | None = None, threads: int | None = 1,
                 warm: bool = True, query_precision: str | None = None):
        self.index = index
        self.params = params or RetrievalParams()
        meta = index.meta
        query_precision = query_precision_default(query_precision)   # a bad setting fails before the models load
        # The tagger (part-of-speech tags for terms) only where the index has terms: it costs
        # query time, and without terms no lowercase single word can name an entity anyway.
        self.analyzer = analyzer or Analyzer(meta["language"], meta["ner"]["model"],
                                             terms=bool(meta.get("build", {}).get("terms", False)))
        # query_precision (None: $LINEARRAG_QUERY_PRECISION or "auto"): see load_query_encoder
        self.encoder = encoder or load_query_encoder(
            meta["embedding"]["model"], precision=meta["embedding"].get("precision", "fp32"), threads=threads,
            query_precision=query_precision)
        _check_models(index, self.analyzer, self.encoder)
        self.aliases = Aliases.from_meta(meta.get("aliases"))
        check_unchanged(self.aliases, index.path)
        # Nothing here reads the corpus: the exact path's matrices are made on first use.
        self.entity_lookup = index.entity_lookup
        self.postings = Postings.open(index.data_dir, len(index.passage_ids))   # a damaged one fails here
        self._tokenizer = EnglishTokenizer() if index.language == "en" else None
        self.documents = is_document_index(meta)
        # fixed samples for the similarity background (params.similarity == "calibrated")
        self.background_rows = _spread(len(index.passage_ids))
        self._background_passages = as_float32(read_rows(index.passage_emb, self.background_rows))
        self.entity_background = _spread(len(index.graph.entity_names))   # row indices
        self._entity_background_emb = as_float32(read_rows(index.entity_emb, self.entity_background))
        self._hub_weights: dict[float, np.ndarray] = {}
        self._title_groups: np.ndarray | None = None
        self.best_sentences = BestSentences(index.graph, index.sentence_emb)
        self.scalable = ScalablePath(self)
        if warm:   # for a process that answers many queries: one-off costs paid now
            getattr(self.encoder, "warm", lambda: None)()
            self.analyze_queries(["warm-up"])   # the first call pays the rest (lazy weights, caches)

    # ---- the exact path's whole-corpus structures (built on first use) --------------------
    @property
    def M(self):
        return self.index.graph.M

    @cached_property
    def M_T(self):
        return self.index.graph.M_T

    @cached_property
    def passage_matrix(self) -> np.ndarray:
        """Passage vectors in float32 for full scans (the exact path; stored as float16)."""
        return as_float32(self.index.passage_emb)

    @cached_property
    def entity_matrix(self) -> np.ndarray:
        """Entity vectors in float32 for full scans (the exact path; stored as float16)."""
        return as_float32(self.index.entity_emb)

    @cached_property
    def walk(self) -> BipartiteWalk:
        return BipartiteWalk.from_counts(self.index.graph.C)

    @cached_property
    def C_log(self):
        C_log = self.index.graph.C.copy()
        C_log.data = np.log1p(C_log.data)
        return C_log

    @cached_property
    def idf_ratio(self) -> np.ndarray:
        return idf_ratio(self.index.graph.C)

    def uses_ann(self, params: RetrievalParams) -> bool:
        """Whether ``params`` take the scalable path on this index (``RetrievalParams.search``)."""
        return params.search == "ann" or (params.search == "auto" and len(self.index.passage_ids) >= ANN_MIN_PASSAGES)

    @classmethod
    def from_path(cls, path: str | Path, params: RetrievalParams | None = None, threads: int | None = 1,
                  query_precision: str | None = None) -> Retriever:
        """Load the index at ``path`` and its models. ``threads``: torch threads (None = torch's
        default); ``query_precision``: see ``embeddings.load_query_encoder``."""
        return cls(load_index(path), params, threads=threads, query_precision=query_precision)

    # ---- public API -------------------------------------------------------------------
    def query(self, text: str, params: RetrievalParams | None = None) -> QueryResult:
        """Answer one query."""
        return self.query_batch([text], params)[0]

    def query_batch(self, texts: list[str], params: RetrievalParams | None = None) -> list[QueryResult]:
        """Answer many queries; NER and embeddings run batched."""
        params = params or self.params
        analyzed = self.analyze_queries(texts, tags=params.lowercase_linking == "all")
        return [self.retrieve(q, params) for q in analyzed]

    def analyze_queries(self, texts: list[str], tags: bool | None = None) -> list[AnalyzedQuery]:
        """NER, BM25 tokens and embeddings for queries (the model-bound part of a query).
        ``tags``: run the part-of-speech tagger, which only ``lowercase_linking=all`` needs
        (None: whether this retriever's parameters ask for it); see ``Analyzer.query_skips``."""
        if tags is None:
            tags = self.params.lowercase_linking == "all"
        for t in texts:
            if not isinstance(t, str) or not t.strip():
                raise ParameterError("empty query; pass a question with some text")
        t0 = time.perf_counter()
        docs = list(self.analyzer.analyze_queries(texts, tags=tags))
        mentions = [[m for sent in d.mentions for m in sent] for d in docs]
        t_ner = (time.perf_counter() - t0) * 1000 / len(texts)
        t0 = time.perf_counter()
        if self._tokenizer is not None:
            tokens = self._tokenizer(texts)
            t_tok = (time.perf_counter() - t0) * 1000 / len(texts)
        else:  # Japanese BM25 tokens come from the GiNZA pass itself: "tokens" is that pass's time
            tokens = [d.tokens for d in docs]
            t_tok = t_ner
        t0 = time.perf_counter()
        # Each query with its mentions (names are embedded as queries). An encoder whose texts
        # share activation scales within a call (int8) gets one call per query, so that a query's
        # vectors never depend on the other queries of a batch; the others one call for all.
        groups = [[text, *(m.surface for m in ms if m.key not in self.entity_lookup)]
                  for text, ms in zip(texts, mentions)]
        if getattr(self.encoder, "texts_independent", True):
            flat = self.encoder.encode([t for g in groups for t in g], role="query")
            bounds = np.cumsum([0, *map(len, groups)])
            encoded = [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        else:
            encoded = [self.encoder.encode(g, role="query") for g in groups]
        t_enc = (time.perf_counter() - t0) * 1000 / len(texts)
        out = []
        for i, text in enumerate(texts):
            mv = np.zeros((len(mentions[i]), self.encoder.dim), dtype=np.float32)
            cursor = 1
            for j, m in enumerate(mentions[i]):
                if m.key not in self.entity_lookup:
                    mv[j] = encoded[i][cursor]
                    cursor += 1
            warning = query_language_warning(text, self.index.language)
            out.append(AnalyzedQuery(text, mentions[i], tokens[i], encoded[i][0], mv,
                                     {"ner": t_ner, "tokens": t_tok, "encode": t_enc}, docs[i].ngrams,
                                     [warning] if warning else [], tagged=tags))
        return out

    def retrieve(self, q: AnalyzedQuery, params: RetrievalParams) -> QueryResult:
        """Rank passages for an analysed query."""
        t_start = time.perf_counter()
        timings = dict(q.timings_ms)
        query_entities: list[QueryEntity] = []
        activation: Activation | None = None
        fallback = None
        evidence = np.zeros(0, dtype=np.int64)
        if self.uses_ann(params):
            rows, row_scores, activation, query_entities, fallback, evidence = self.scalable.retrieve(
                q, params, timings, lambda: self.link(q, params))
            return self._result(q, params, rows, row_scores, activation, query_entities, fallback, timings, t_start,
                                evidence)
        if params.mode == "dense":
            scores = self.dense_scores(q)
        elif params.mode == "bm25":
            scores = self.bm25_scores(q)
        elif params.mode == "rrf":
            scores = rrf_scores([self.dense_scores(q), self.bm25_scores(q)], params.rrf_k, only_positive=[False, True])
        else:
            t0 = time.perf_counter()
            calibrated = params.similarity == "calibrated"
            seeds, query_entities, covered = self.link(q, params)
            timings["linking"] = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            cosines = self.dense_scores(q)
            background = self.background(q) if calibrated else None
            dense = cosines if background is None else calibrate(cosines, background)
            # BM25 for the prior and for any fusion (term_fusion may fuse even when fusion=none)
            lexical = (self.bm25_scores(q) if params.prior == "hybrid" or params.fusion != "none"
                       or params.term_fusion != "same" else None)
            prior = dense if params.prior == "dense" else hybrid_prior(dense, lexical)
            if not seeds and params.evidence_seeds:
                graph = self.index.graph
                evidence = top_k(prior, params.evidence_seeds)
                seeds = evidence_seeds(graph.C_indptr, graph.C_indices, evidence, lambda e: self.idf_ratio[e])
                if not seeds:
                    evidence = evidence[:0]
            timings["prior"] = (time.perf_counter() - t0) * 1000
            if not seeds:
                fallback = no_seed_reason(q, params)
                if params.prior == "dense":
                    scores = dense
                else:
                    scores = rrf_scores([dense, lexical], params.rrf_k, only_positive=[False, True])
            else:
                t0 = time.perf_counter()
                activation = self.activate(q, seeds, params, covered, background)
                timings["activation"] = (time.perf_counter() - t0) * 1000
                t0 = time.perf_counter()
                scores = self.pagerank(prior, activation, params)
                if params.prior_rerank > 0:
                    scores = scores * np.power(np.clip(prior, 1e-6, None), params.prior_rerank)
                if params.siblings == "prior":
                    scores = order_siblings(scores, prior, self.title_groups)
                fusion = params.fusion_for(self.documents)
                if params.term_fusion != "same" and all(e.how == "term" for e in query_entities if e.entity):
                    fusion = params.term_fusion   # terms alone are weak evidence: the graph is one voter
                if fusion == "rrf":
                    weight = self.sentence_weight(params)
                    voter = dense if weight == 0 else dense_voter(cosines, self.best_sentences.all(q.vector), weight)
                    scores = rrf_scores([scores, lexical, voter], params.rrf_k,
                                        [1.0, params.rrf_weight, params.rrf_weight], [True, True, False])
                elif fusion == "min":
                    secondary = lexical if params.fusion_secondary == "bm25" else rrf_scores(
                        [lexical, dense], params.rrf_k, only_positive=[True, False])
                    scores = min_rank_scores(scores, secondary, params.fusion_weight, depth=params.depth)
                timings["ppr"] = (time.perf_counter() - t0) * 1000
        rows = top_k(scores, params.top_k if activation is None else params.depth)
        return self._result(q, params, rows, scores[rows], activation, query_entities, fallback, timings, t_start,
                            evidence)

    def _result(self, q, params, rows, row_scores, activation, query_entities, fallback, timings, t_start,
                evidence=()):
        """The result of ranked ``rows`` (best first; after a walk, up to ``params.depth`` of them:
        linked selection orders them here and the first ``top_k`` are returned)."""
        linked: list[int] = []
        if activation is not None:
            t0 = time.perf_counter()
            rows, row_scores, linked = self.linked_selection(rows, np.asarray(row_scores), params)
            timings["selection"] = (time.perf_counter() - t0) * 1000
        timings["retrieval"] = (time.perf_counter() - t_start) * 1000
        if not np.all(np.isfinite(np.asarray(row_scores, dtype=np.float64))):
            raise IndexFormatError(f"{self.index.path}: a score is not a number, so a vector or weight file is "
                                   f"damaged; run linearrag check {self.index.path} to find it, then rebuild the "
                                   "index or restore it from a copy")
        parts = ANALYSIS_PARTS[params.mode]
        if self._tokenizer is None and "ner" in parts:   # Japanese: one GiNZA pass gives both
            parts = tuple(p for p in parts if p != "tokens")
        timings["total"] = sum(timings[part] for part in parts) + timings["retrieval"]
        return QueryResult(
            query=q.text, mode=params.mode, query_entities=query_entities,
            activated_entities=self._report_entities(activation, params.max_reported_entities),
            activated_count=0 if activation is None else int(activation.active.size),
            passages=self._hits(rows, row_scores, activation, linked), fallback=fallback, warnings=list(q.warnings),
            params=params.to_dict(), timings_ms={k: round(v, 3) for k, v in timings.items()},
            evidence_passages=[self.index.passage_ids[int(r)] for r in evidence],
        )

    # ---- scoring pieces ----------------------------------------------------------------
    def link(self, q: AnalyzedQuery, params: RetrievalParams):
        """Seeds, the query-entity report and the covered entities (see ``link_entities``)."""
        if params.lowercase_linking == "all" and not q.tagged:
            raise ParameterError("lowercase_linking=all needs queries analysed with part-of-speech tags; "
                                 "pass tags=True to analyze_queries")
        calibrated = params.similarity == "calibrated"
        ann = self.uses_ann(params)
        return link_entities(
            q.ngrams, q.mentions, q.mention_vectors, self.entity_lookup, None if ann else self.entity_matrix,
            self.index.graph.entity_names, params.seed_floor, params.ngram_linking, params.lowercase_linking,
            self.aliases.keys, self.entity_background if calibrated else None,
            nearest=(lambda v: self.nearest_entity(v, calibrated, True)) if ann else None)

    def nearest_entity(self, vector: np.ndarray, calibrated: bool, ann: bool) -> tuple[int, float]:
        """The entity most similar to ``vector`` and its similarity (read against the entity
        background when ``calibrated``): by the HNSW index with ``ann``, else a full scan."""
        if ann:
            rows, cos = self.index.entity_search.search(vector, 1)
            best, sim = int(rows[0]), float(cos[0])
        else:
            sims = self.entity_matrix @ vector
            best = int(np.argmax(sims))
            sim = float(sims[best])
        if calibrated and len(self._entity_background_emb):
            sim = calibrate(sim, float(np.median(self._entity_background_emb @ vector)))
        return best, sim

    def dense_scores(self, q: AnalyzedQuery) -> np.ndarray:
        return np.asarray(self.passage_matrix @ q.vector, dtype=np.float32)

    def sentence_weight(self, params: RetrievalParams) -> float:
        """The weight of a passage's best sentence in the dense voter of rrf fusion
        (``RetrievalParams.sentence_voter``: documents only)."""
        return params.sentence_voter if self.documents else 0.0

    def bm25_scores(self, q: AnalyzedQuery) -> np.ndarray:
        return self.postings.scores(q.tokens)

    @property
    def title_groups(self) -> np.ndarray:
        """Per passage, a number shared by the passages with the same title (built on first use)."""
        if self._title_groups is None:
            ids: dict[str, int] = {}
            self._title_groups = np.fromiter((ids.setdefault(t, len(ids)) for t in self.index.passage_titles),
                                             dtype=np.int64, count=len(self.index.passage_ids))
        return self._title_groups

    def background_cosines(self, q: AnalyzedQuery) -> np.ndarray:
        """The query's cosines to the fixed sample of passages (``background_rows``)."""
        return self._background_passages @ q.vector

    def background(self, q: AnalyzedQuery) -> float:
        """The query's median cosine over a fixed sample of passages."""
        if not len(self._background_passages):
            return 0.0
        return float(np.median(self.background_cosines(q)))

    def activate(self, q: AnalyzedQuery, seeds: dict[int, float], params: RetrievalParams,
                 excluded: set[int] | None = None, background: float | None = None) -> Activation:
        """Entity activation; ``background``: the query's, when the caller has it already."""
        emb = self.index.sentence_emb
        scale, shift = 1.0, 0.0
        if params.similarity == "calibrated":
            shift = min(self.background(q) if background is None else background, 0.99)
            scale = 1.0 / (1.0 - shift)
        if params.sigma_scale == "relative":
            best = (float(np.max(emb @ q.vector)) - shift) * scale if len(emb) else 0.0
            scale = scale / best if best > 0 else scale
        return activate_entities(
            self.M, self.M_T, lambda rows: (as_float32(emb[rows]) @ q.vector - shift) * scale, seeds,
            delta=params.delta, max_iterations=params.max_iterations, propagation=params.propagation,
            entity_weight=self.hub_weights(params), excluded=excluded,
        )

    def hub_weights(self, params: RetrievalParams) -> np.ndarray | None:
        """Per-entity hub weights for ``params.hub_damping`` (computed once per exponent)."""
        if params.hub_damping == 0:
            return None
        if params.hub_damping not in self._hub_weights:
            self._hub_weights[params.hub_damping] = self.idf_ratio ** params.hub_damping
        return self._hub_weights[params.hub_damping]

    def pagerank(self, prior: np.ndarray, activation: Activation, params: RetrievalParams) -> np.ndarray:
        """PageRank passage scores from the activation and the query-only passage ``prior``."""
        r_e, r_p = passage_entity_reset(self.C_log, activation, prior, params, self.hub_weights(params))
        scores, _ = personalized_pagerank(self.walk, r_p, r_e, params.damping, params.ppr_iterations, params.ppr_tol)
        return scores

    # ---- output ------------------------------------------------------------------------
    def linked_selection(self, rows: np.ndarray, row_scores: np.ndarray, params: RetrievalParams):
        """The first ``top_k`` of ``rows`` (best-scored first) after linked selection
        (retrieval/chain.py) — on corpora of titled records; off when ``link_depth`` ≤ 1 and on
        documents, where section headings are common words and it measured worse
        (docs/benchmarks.md): (rows, their scores, per row the position of the passage above
        that names it, −1 where none)."""
        rows = np.asarray(rows, dtype=np.int64)
        if params.link_depth <= 1 or len(rows) < 2 or self.documents:
            return rows[:params.top_k], row_scores[:params.top_k], []
        titles = [self.index.passage_titles[r] for r in rows.tolist()]
        names = name_entities(titles, self.entity_lookup, self.aliases.canonical)
        graph = self.index.graph
        texts = self.index.passage_texts
        mentions = TitleMentions(titles, lambda j: texts[int(rows[j])], whole_words=self.index.language == "en")
        order, linked = linked_order(rows, names, graph.C_indptr, graph.C_indices, mentions, limit=params.top_k)
        return rows[order], row_scores[order], linked

    def _hits(self, rows: np.ndarray, row_scores: np.ndarray, activation, linked: list[int] = ()) -> list[PassageHit]:
        idx, graph = self.index, self.index.graph
        hits = []
        for rank, (row, score) in enumerate(zip(rows.tolist(), np.asarray(row_scores).tolist()), start=1):
            ents: list[str] = []
            if activation is not None:
                cols = np.asarray(graph.C_indices[graph.C_indptr[row]:graph.C_indptr[row + 1]], dtype=np.int64)
                scores, levels, _ = _activation_of(activation, cols)
                active = cols[levels > 0]
                order = np.lexsort((active, -scores[levels > 0]))
                ents = [graph.entity_names[e] for e in active[order].tolist()]
            source = linked[rank - 1] if rank <= len(linked) else -1
            hits.append(PassageHit(rank=rank, id=idx.passage_ids[row], title=idx.passage_titles[row],
                                   score=round(float(score), 8), text=idx.passage_texts[row], entities=ents,
                                   linked_from=idx.passage_ids[int(rows[source])] if source >= 0 else None))
        return hits

    def _report_entities(self, activation: Activation | None, limit: int) -> list[ActivatedEntity]:
        if activation is None:
            return []
        graph, idx = self.index.graph, self.index
        active = activation.active
        scores, levels, via = _activation_of(activation, active)
        order = np.lexsort((active, -scores, levels))
        out = []
        for i in order[:limit].tolist():
            e = int(active[i])
            level = int(levels[i])
            s = int(via[i])
            sentence = graph.sentences[s] if s >= 0 else None
            passage = idx.passage_ids[int(graph.sentence_passage[s])] if s >= 0 else None
            out.append(ActivatedEntity(graph.entity_names[e], round(float(scores[i]), 6), level,
                                       sentence, passage))
        return out


def is_document_index(meta: dict) -> bool:
    """Whether the index holds documents (files: docs, notes) rather than titled records
    (``build.corpus``; indexes from before it was recorded: whether terms were indexed, which
    ``--terms auto`` decided the same way)."""
    build = meta.get("build", {})
    if "corpus" in build:
        return build["corpus"] == "documents"
    return bool(build.get("terms", False))


def _activation_of(activation, entities: np.ndarray):
    """(scores, levels, bridging sentences) of some entities, from a dense or sparse activation."""
    if isinstance(activation, SparseActivation):
        return activation.lookup(entities)
    return activation.scores[entities], activation.levels[entities], activation.via_sentence[entities]


def _spread(n: int, size: int = 1024) -> np.ndarray:
    """Up to ``size`` row indices spread evenly over ``n`` rows (deterministic)."""
    if n <= size:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, size).astype(np.int64))


def _check_models(index: Index, analyzer: Analyzer, encoder: Encoder) -> None:
    meta = index.meta
    if meta["ner"].get("version") != analyzer.model_version:
        raise ModelMismatchError(
            f"{index.path}: built with {meta['ner']['model']} {meta['ner'].get('version')}, "
            f"installed is {analyzer.model_version}; rebuild the index or install the same model version")
    english = meta["ner"].get("english_model")
    if english and analyzer.english_model and english["version"] != analyzer.english_model[1]:
        raise ModelMismatchError(
            f"{index.path}: built with {english['model']} {english['version']} for English sentences, "
            f"installed is {analyzer.english_model[1]}; rebuild the index or install the same model version")
    if meta["embedding"].get("dim") != encoder.dim or meta["embedding"].get("version") != encoder.version:
        raise ModelMismatchError(
            f"{index.path}: built with embedding model {meta['embedding']['model']} "
            f"({meta['embedding'].get('version')}, dim {meta['embedding'].get('dim')}), installed gives "
            f"{encoder.version}, dim {encoder.dim}; rebuild the index or install the same model")
