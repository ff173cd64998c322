"""The retriever: query analysis, entity linking, activation, PPR, baselines.

Models and the index load once; :meth:`Retriever.query` and :meth:`Retriever.query_batch`
answer with :class:`QueryResult` objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..aliases import Aliases, check_unchanged
from ..analysis import Analyzer, Mention, NameCandidate
from ..encoders import Encoder, load_query_encoder, query_precision_default
from ..errors import ModelMismatchError, ParameterError
from ..lang import query_language_warning
from ..lexical import Postings
from ..index.store import Index, load_index
from .approx import ApproxSpace
from .chain import titles_a_page, written_as_name
from .exact import ExactSpace
from .linking import bare_word_share, link_entities
from .output import Output
from .params import ANN_MIN_PASSAGES, RetrievalParams
from .pipeline import rank
from .results import QueryResult
from .sample import Sample
from .sentences import BestSentences
from .space import Linked, SearchSpace
from .sparse import degrees


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
        info = index.info
        query_precision = query_precision_default(query_precision)   # a bad setting fails before the models load
        # The tagger (part-of-speech tags for terms) only where the index has terms: it costs
        # query time, and without terms no lowercase single word can name an entity anyway.
        self.analyzer = analyzer or Analyzer(info.language, info.ner.model, terms=info.build.terms)
        # query_precision (None: $LINEARRAG_QUERY_PRECISION or "auto"): see load_query_encoder
        self.encoder = encoder or load_query_encoder(info.embedding.model, precision=info.embedding.precision,
                                                     threads=threads, query_precision=query_precision)
        _check_models(index, self.analyzer, self.encoder)
        self.language = self.analyzer.language
        self.aliases = Aliases.from_meta(info.aliases)
        check_unchanged(self.aliases, index.path)
        # Nothing here reads the corpus: the exact space's matrices are made on first use.
        self.entity_lookup = index.entity_lookup
        self.postings = Postings.open(index.data_dir, len(index.passage_ids))   # a damaged one fails here
        self.documents = info.build.corpus == "documents"
        self.sample = Sample(index)   # fixed rows for the similarity background (similarity=calibrated)
        self.best_sentences = BestSentences(index.graph, index.sentence_emb)
        parts = (index, self.postings, self.sample, self.best_sentences, self.documents)
        self.exact, self.approx = ExactSpace(*parts), ApproxSpace(*parts)
        self.output = Output(index, self.entity_lookup, self.aliases.canonical, self.language.whole_word_titles,
                             self.documents, self.postings)
        if warm:   # for a process that answers many queries: one-off costs paid now
            self.encoder.warm()
            self.analyze_queries(["warm-up"])   # the first call pays the rest (lazy weights, caches)

    def uses_ann(self, params: RetrievalParams) -> bool:
        """Whether ``params`` take the scalable path on this index (``RetrievalParams.search``)."""
        return params.search == "ann" or (params.search == "auto" and len(self.index.passage_ids) >= ANN_MIN_PASSAGES)

    def space(self, params: RetrievalParams) -> SearchSpace:
        """The search space ``params`` take on this index (``RetrievalParams.search``)."""
        return self.approx if self.uses_ann(params) else self.exact

    @classmethod
    def from_path(cls, path: str | Path, params: RetrievalParams | None = None, threads: int | None = 1,
                  query_precision: str | None = None) -> Retriever:
        """Load the index at ``path`` and its models. ``threads``: torch threads (None = torch's
        default); ``query_precision``: see ``encoders.load_query_encoder``."""
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
        tokens = self.language.bm25_tokens(texts, docs)
        # where BM25 tokens come from the NER pass itself (Japanese), "tokens" is that pass's time
        t_tok = t_ner if self.language.tokens_from_analysis else (time.perf_counter() - t0) * 1000 / len(texts)
        t0 = time.perf_counter()
        # Each query with its mentions (names are embedded as queries). An encoder whose texts
        # share activation scales within a call (int8) gets one call per query, so that a query's
        # vectors never depend on the other queries of a batch; the others one call for all.
        groups = [[text, *(m.surface for m in ms if m.key not in self.entity_lookup)]
                  for text, ms in zip(texts, mentions)]
        if self.encoder.texts_independent:
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
        """Rank passages for an analysed query (:mod:`pipeline`), then select and report them."""
        t_start = time.perf_counter()
        timings = dict(q.timings_ms)
        space = self.space(params)
        ranking = rank(space, q, params, lambda: self.link(q, params, space), timings)
        t0 = time.perf_counter()
        rows, row_scores, linked, copies = self.output.select(ranking, params, q.text, q.tokens)
        if ranking.activation is not None:
            timings["selection"] = (time.perf_counter() - t0) * 1000
        timings["retrieval"] = (time.perf_counter() - t_start) * 1000
        self.output.check_finite(row_scores)
        parts = ANALYSIS_PARTS[params.mode]
        if self.language.tokens_from_analysis and "ner" in parts:   # one pass gives both
            parts = tuple(p for p in parts if p != "tokens")
        timings["total"] = sum(timings[part] for part in parts) + timings["retrieval"]
        return QueryResult(
            query=q.text, mode=params.mode, query_entities=ranking.query_entities,
            activated_entities=self.output.activated(ranking.activation, params.max_reported_entities),
            activated_count=0 if ranking.activation is None else int(ranking.activation.active.size),
            passages=self.output.hits(rows, row_scores, ranking.activation, linked, copies), fallback=ranking.fallback,
            warnings=list(q.warnings), params=params.to_dict(),
            timings_ms={k: round(v, 3) for k, v in timings.items()},
            evidence_passages=[self.index.passage_ids[int(r)] for r in ranking.evidence],
        )

    def link(self, q: AnalyzedQuery, params: RetrievalParams, space: SearchSpace | None = None) -> Linked:
        """The linking stage (see ``link_entities``) in ``space`` (None: the one ``params`` take)."""
        if params.lowercase_linking == "all" and not q.tagged:
            raise ParameterError("lowercase_linking=all needs queries analysed with part-of-speech tags; "
                                 "pass tags=True to analyze_queries")
        space = space or self.space(params)
        calibrated = params.similarity == "calibrated"
        seeds, entities, covered = link_entities(
            q.ngrams, q.mentions, q.mention_vectors, self.entity_lookup, self.index.graph.entity_names,
            params.seed_floor, params.ngram_linking, params.lowercase_for(space.documents), self.aliases.keys,
            nearest=lambda v: space.nearest_entity(v, calibrated),
            bare_ok=lambda word, e: self.bare_word_share(word, e) >= params.bare_word_share,
            name_page=self.name_page)
        return Linked(seeds, entities, covered)

    def name_page(self, entity: int) -> bool:
        """Whether an entity is a page's title written as a name ("Reign of Terror"), which a
        question may write in lowercase (``lowercase_linking=names``)."""
        graph = self.index.graph
        return written_as_name(graph.entity_names[entity]) and titles_a_page(
            entity, graph.entity_keys[entity], (graph.arrays["CT_indptr"], graph.arrays["CT_indices"]),
            self.index.passage_titles.__getitem__, self.aliases.canonical)

    def bare_word_share(self, word: str, entity: int) -> float:
        """:func:`linking.bare_word_share` of ``word`` and an entity of the index: its passages
        over the passages holding the word (two postings lookups, nothing per corpus)."""
        tokens = ([word.lower()] if self.language.tokens_from_analysis   # tokens come with a parse
                  else self.language.bm25_tokens([word], [None])[0])
        word_rows = self.postings.matches(tokens)[0].size if tokens else 0
        entity_rows = int(degrees(self.index.graph.CT_indptr, np.asarray([entity]))[0])
        return bare_word_share(entity_rows, word_rows)


def _check_models(index: Index, analyzer: Analyzer, encoder: Encoder) -> None:
    ner, embedding = index.info.ner, index.info.embedding
    if ner.version != analyzer.model_version:
        raise ModelMismatchError(
            f"{index.path}: built with {ner.model} {ner.version}, "
            f"installed is {analyzer.model_version}; rebuild the index or install the same model version")
    english = ner.english_model
    if english and analyzer.english_model and english["version"] != analyzer.english_model[1]:
        raise ModelMismatchError(
            f"{index.path}: built with {english['model']} {english['version']} for English sentences, "
            f"installed is {analyzer.english_model[1]}; rebuild the index or install the same model version")
    if embedding.dim != encoder.dim or embedding.version != encoder.version:
        raise ModelMismatchError(
            f"{index.path}: built with embedding model {embedding.model} ({embedding.version}, dim {embedding.dim}), "
            f"installed gives {encoder.version}, dim {encoder.dim}; rebuild the index or install the same model")
