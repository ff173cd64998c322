"""The retriever: query analysis, entity linking, activation, PPR, baselines.

Models and the index load once; :meth:`Retriever.query` and :meth:`Retriever.query_batch`
answer with :class:`QueryResult` objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..analysis import Analyzer, Mention
from ..embeddings import Encoder, load_query_encoder
from ..errors import ModelMismatchError, ParameterError
from ..lexical import EnglishTokenizer, LexicalIndex
from ..store import Index, load_index
from .activation import Activation, activate_entities
from .params import RetrievalParams
from .ppr import BipartiteWalk, personalized_pagerank
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
    ngrams: list[tuple[str, str]] = field(default_factory=list)  # (key, surface) name candidates


class Retriever:
    """Answers queries over one index with the index's own models."""

    def __init__(self, index: Index, params: RetrievalParams | None = None,
                 analyzer: Analyzer | None = None, encoder: Encoder | None = None, threads: int | None = 1):
        self.index = index
        self.params = params or RetrievalParams()
        meta = index.meta
        self.analyzer = analyzer or Analyzer(meta["language"], meta["ner"]["model"])
        self.encoder = encoder or load_query_encoder(
            meta["embedding"]["model"], precision=meta["embedding"].get("precision", "fp32"), threads=threads)
        _check_models(index, self.analyzer, self.encoder)
        graph = index.graph
        self.M = graph.M
        self.M_T = graph.M.T.tocsr()
        self.walk = BipartiteWalk.from_counts(graph.C)
        C_log = graph.C.copy()
        C_log.data = np.log1p(C_log.data)
        self.C_log = C_log
        self.idf_ratio = idf_ratio(graph.C)
        self._hub_weights: dict[float, np.ndarray] = {}
        self.entity_lookup = {key: i for i, key in enumerate(graph.entity_keys)}
        self._lexical: LexicalIndex | None = None
        self._tokenizer = EnglishTokenizer() if index.language == "en" else None

    @classmethod
    def from_path(cls, path: str | Path, params: RetrievalParams | None = None, threads: int | None = 1) -> Retriever:
        """Load the index at ``path`` and its models. ``threads``: torch threads (None = torch's default)."""
        return cls(load_index(path), params, threads=threads)

    # ---- public API -------------------------------------------------------------------
    def query(self, text: str, params: RetrievalParams | None = None) -> QueryResult:
        """Answer one query."""
        return self.query_batch([text], params)[0]

    def query_batch(self, texts: list[str], params: RetrievalParams | None = None) -> list[QueryResult]:
        """Answer many queries; NER and embeddings run batched."""
        params = params or self.params
        analyzed = self.analyze_queries(texts)
        return [self.retrieve(q, params) for q in analyzed]

    def analyze_queries(self, texts: list[str]) -> list[AnalyzedQuery]:
        """NER, BM25 tokens and embeddings for queries (the model-bound part of a query)."""
        for t in texts:
            if not isinstance(t, str) or not t.strip():
                raise ParameterError("empty query; pass a question with some text")
        t0 = time.perf_counter()
        docs = list(self.analyzer.analyze_queries(texts))
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
        to_encode = list(texts)
        for ms in mentions:
            to_encode.extend(m.surface for m in ms if m.key not in self.entity_lookup)
        vectors = self.encoder.encode(to_encode)
        t_enc = (time.perf_counter() - t0) * 1000 / len(texts)
        out = []
        cursor = len(texts)
        for i, text in enumerate(texts):
            mv = np.zeros((len(mentions[i]), self.encoder.dim), dtype=np.float32)
            for j, m in enumerate(mentions[i]):
                if m.key not in self.entity_lookup:
                    mv[j] = vectors[cursor]
                    cursor += 1
            out.append(AnalyzedQuery(text, mentions[i], tokens[i], vectors[i], mv,
                                     {"ner": t_ner, "tokens": t_tok, "encode": t_enc}, docs[i].ngrams))
        return out

    def retrieve(self, q: AnalyzedQuery, params: RetrievalParams) -> QueryResult:
        """Rank passages for an analysed query."""
        t_start = time.perf_counter()
        timings = dict(q.timings_ms)
        query_entities: list[QueryEntity] = []
        activation: Activation | None = None
        fallback = None
        if params.mode == "dense":
            scores = self.dense_scores(q)
        elif params.mode == "bm25":
            scores = self.bm25_scores(q)
        elif params.mode == "rrf":
            scores = rrf_scores([self.dense_scores(q), self.bm25_scores(q)], params.rrf_k)
        else:
            t0 = time.perf_counter()
            seeds, query_entities = self.link_entities(q, params.seed_floor, params.ngram_linking)
            timings["linking"] = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            dense = self.dense_scores(q)
            lexical = self.bm25_scores(q) if params.prior == "hybrid" or params.fusion != "none" else None
            timings["prior"] = (time.perf_counter() - t0) * 1000
            if not seeds:
                fallback = ("no query entity found" if not q.mentions
                            else f"no query entity matched an index entity with similarity ≥ {params.seed_floor}")
                if params.prior == "dense":
                    fallback += "; ranked by dense passage similarity"
                    scores = dense
                else:
                    fallback += "; ranked by BM25 + dense fusion"
                    scores = rrf_scores([dense, lexical], params.rrf_k)
            else:
                t0 = time.perf_counter()
                activation = self.activate(q, seeds, params)
                timings["activation"] = (time.perf_counter() - t0) * 1000
                t0 = time.perf_counter()
                prior = dense if params.prior == "dense" else hybrid_prior(dense, lexical)
                scores = self.pagerank(prior, activation, params)
                if params.fusion == "rrf":
                    scores = rrf_scores([scores, lexical, dense], params.rrf_k,
                                        [1.0, params.fusion_weight, params.fusion_weight])
                elif params.fusion == "min":
                    scores = min_rank_scores(scores, lexical, params.fusion_weight)
                timings["ppr"] = (time.perf_counter() - t0) * 1000
        rows = top_k(scores, params.top_k)
        timings["retrieval"] = (time.perf_counter() - t_start) * 1000
        parts = ANALYSIS_PARTS[params.mode]
        if self._tokenizer is None and "ner" in parts:   # Japanese: one GiNZA pass gives both
            parts = tuple(p for p in parts if p != "tokens")
        timings["total"] = sum(timings[part] for part in parts) + timings["retrieval"]
        return QueryResult(
            query=q.text, mode=params.mode, query_entities=query_entities,
            activated_entities=self._report_entities(activation, params.max_reported_entities),
            activated_count=0 if activation is None else int(activation.active.size),
            passages=self._hits(rows, scores, activation), fallback=fallback,
            params=params.to_dict(), timings_ms={k: round(v, 3) for k, v in timings.items()},
        )

    # ---- scoring pieces ----------------------------------------------------------------
    def dense_scores(self, q: AnalyzedQuery) -> np.ndarray:
        return np.asarray(self.index.passage_emb @ q.vector, dtype=np.float32)

    def bm25_scores(self, q: AnalyzedQuery) -> np.ndarray:
        if self._lexical is None:
            self._lexical = LexicalIndex.load(self.index.path, len(self.index.passage_ids))
        return self._lexical.scores(q.tokens)

    def link_entities(self, q: AnalyzedQuery, floor: float,
                      ngram_linking: bool = True) -> tuple[dict[int, float], list[QueryEntity]]:
        """Seeds from the query: index entities (and titles) named verbatim by an n-gram of the
        query, then each NER mention matched to its most similar index entity (exact key first).
        """
        seeds: dict[int, float] = {}
        linked: list[QueryEntity] = []
        names = self.index.graph.entity_names
        matched = _maximal_matches(q.ngrams, self.entity_lookup) if ngram_linking else []
        for key, surface in matched:
            e = self.entity_lookup[key]
            seeds[e] = 1.0
            linked.append(QueryEntity(surface, names[e], 1.0))
        for mention, vec in zip(q.mentions, q.mention_vectors):
            if any(mention.key in key for key, _ in matched):
                continue  # part of a longer name already linked ("Burgundy" in "Beatrice I, Countess of Burgundy")
            exact = self.entity_lookup.get(mention.key)
            if exact is not None:
                best, sim = exact, 1.0
            elif len(names):
                sims = self.index.entity_emb @ vec
                best = int(np.argmax(sims))
                sim = float(sims[best])
            else:
                linked.append(QueryEntity(mention.surface, None, 0.0))
                continue
            if sim >= floor:
                seeds[best] = max(seeds.get(best, 0.0), sim)
                linked.append(QueryEntity(mention.surface, names[best], round(sim, 6)))
            else:
                linked.append(QueryEntity(mention.surface, None, round(sim, 6)))
        return seeds, linked

    def activate(self, q: AnalyzedQuery, seeds: dict[int, float], params: RetrievalParams) -> Activation:
        emb = self.index.sentence_emb
        scale = 1.0
        if params.sigma_scale == "relative":
            best = float(np.max(emb @ q.vector)) if len(emb) else 0.0
            scale = 1.0 / best if best > 0 else 1.0
        return activate_entities(
            self.M, self.M_T, lambda rows: (emb[rows] @ q.vector) * scale, seeds,
            delta=params.delta, max_iterations=params.max_iterations, propagation=params.propagation,
            entity_weight=self.hub_weights(params),
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
    def _hits(self, rows: np.ndarray, scores: np.ndarray, activation: Activation | None) -> list[PassageHit]:
        idx, graph = self.index, self.index.graph
        hits = []
        for rank, row in enumerate(rows.tolist(), start=1):
            ents: list[str] = []
            if activation is not None:
                cols = graph.C.indices[graph.C.indptr[row]:graph.C.indptr[row + 1]]
                active = cols[activation.levels[cols] > 0]
                order = np.lexsort((active, -activation.scores[active]))
                ents = [graph.entity_names[e] for e in active[order].tolist()]
            hits.append(PassageHit(rank=rank, id=idx.passage_ids[row], title=idx.passage_titles[row],
                                   score=round(float(scores[row]), 8), text=idx.passage_texts[row], entities=ents))
        return hits

    def _report_entities(self, activation: Activation | None, limit: int) -> list[ActivatedEntity]:
        if activation is None:
            return []
        graph, idx = self.index.graph, self.index
        active = activation.active
        order = np.lexsort((active, -activation.scores[active], activation.levels[active]))
        out = []
        for e in active[order][:limit].tolist():
            level = int(activation.levels[e])
            s = int(activation.via_sentence[e])
            sentence = graph.sentences[s] if s >= 0 else None
            passage = idx.passage_ids[int(graph.sentence_passage[s])] if s >= 0 else None
            out.append(ActivatedEntity(graph.entity_names[e], round(float(activation.scores[e]), 6), level,
                                       sentence, passage))
        return out


def _maximal_matches(ngrams: list[tuple[str, str]], lookup: dict[str, int]) -> list[tuple[str, str]]:
    """The n-grams whose key is an index entity, dropping those inside a longer match."""
    hits = [(key, surface) for key, surface in ngrams if key in lookup]
    hits.sort(key=lambda h: -len(h[0]))
    kept: list[tuple[str, str]] = []
    for key, surface in hits:
        if not any(key in longer for longer, _ in kept) and key not in {k for k, _ in kept}:
            kept.append((key, surface))
    return kept


HUB_MIN_CORPUS = 1000


def idf_ratio(C) -> np.ndarray:
    """Per entity, log((N + 1) / df) / log(N + 1) in (0, 1]: 1 for an entity of one passage,
    small for a hub that occurs in many. N is the passage count, but at least
    ``HUB_MIN_CORPUS``: in a handful of documents, an entity in two of them is no hub."""
    n_p = max(C.shape[0], HUB_MIN_CORPUS)
    df = np.bincount(C.indices, minlength=C.shape[1]).astype(np.float64)
    return (np.log((n_p + 1) / np.maximum(df, 1)) / np.log(n_p + 1)).astype(np.float32)


def passage_entity_reset(C_log, activation: Activation, dense: np.ndarray, params: RetrievalParams,
                         hub_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reset vectors (entities, passages) for PPR from activations and dense scores (eq. 7).

    I₀(p) = λ·sim(q, p) + ln(1 + Σ_e a_e · ln(1 + N_pe) / L_e). In the "normalized"
    form the entity and passage parts are each scaled to sum 1 and mixed with
    ``passage_weight``; in the "paper" form I₀ is multiplied by W_p and added as is.
    ``hub_weight`` (per entity) scales a_e in both parts.
    """
    a = activation.scores.astype(np.float64)
    if hub_weight is not None:
        a = a * hub_weight
    levels = activation.levels.astype(np.float64)
    weighted = np.divide(a, levels, out=np.zeros_like(a), where=levels > 0)
    entity_term = np.log1p(C_log @ weighted)
    i0 = params.lam * np.clip(dense, 0.0, None) + entity_term
    if params.reset == "paper":
        r_p, r_e = i0 * params.passage_weight, a
        total = r_p.sum() + r_e.sum()
        return r_e / total, r_p / total
    r_e = a / a.sum()
    r_p = i0 / i0.sum() if i0.sum() > 0 else np.zeros_like(i0)
    return (1.0 - params.passage_weight) * r_e, params.passage_weight * r_p


def hybrid_prior(dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
    """Mean of the cosine (clipped at 0) and the BM25 score scaled by the query's best, in [0, 1]."""
    top = float(lexical.max()) if lexical.size else 0.0
    scaled = lexical / top if top > 0 else np.zeros_like(lexical)
    return 0.5 * (np.clip(dense, 0.0, None) + scaled)


def ranks_of(scores: np.ndarray) -> np.ndarray:
    """Rank of every row (1 = best), ties broken by row order."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def min_rank_scores(primary: np.ndarray, secondary: np.ndarray, factor: float) -> np.ndarray:
    """Fuse two rankings by the better of the ranks: key = min(rank₁, factor · rank₂), ties by
    rank₁. Returned as a score (higher is better): 1 / (key + rank₁ / (n + 1))."""
    r1, r2 = ranks_of(primary), ranks_of(secondary)
    key = np.minimum(r1, factor * r2)
    return 1.0 / (key + r1 / (len(r1) + 1))


def rrf_scores(score_lists: list[np.ndarray], k: int, weights: list[float] | None = None) -> np.ndarray:
    """(Weighted) reciprocal rank fusion: Σ w/(k + rank), ranks from 1, ties broken by row order."""
    total = np.zeros(len(score_lists[0]), dtype=np.float64)
    for scores, w in zip(score_lists, weights or [1.0] * len(score_lists)):
        total += w / (k + ranks_of(scores))
    return total


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, highest first; ties by lower index (deterministic)."""
    k = min(k, len(scores))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    # Include every row tied with the k-th score so the tie-break is by index, not by partition order.
    kth = scores[part].min()
    cand = np.flatnonzero(scores >= kth)
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:k]


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
