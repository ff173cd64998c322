"""Index build: corpus → analysis → graph → embeddings → BM25 → store (atomic)."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .aliases import Aliases, load_aliases
from .analysis import Analyzer
from .corpus import Passage, fingerprint, load_corpus
from .embeddings import DEFAULT_EMBEDDING_MODELS, load_encoder, torch_threads
from .errors import CorpusError
from .graph import GraphBuilder
from .index_embeddings import embed_tri_graph
from .language import SUPPORTED, detect_language
from .lexical import EnglishTokenizer, LexicalIndex
from .progress import bar
from .store import atomic_directory, check_output, write_index

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildConfig:
    """Parameters of a build. ``None`` models mean the language's default."""

    lang: str = "auto"
    spacy_model: str | None = None
    embedding_model: str | None = None
    max_chars: int = 1000
    batch_size: int = 32
    title_entities: bool = True
    precision: str = "auto"
    workers: int | None = None   # NER processes; None: 2 for large corpora on 2+ cores
    sentences_in_context: bool = True  # sentence vectors from the passage's forward pass
    terms: str = "auto"          # English noun-phrase terms as entities: auto (documents yes,
                                 # titled records no; see terms_wanted), on or off
    merge_short_names: bool = False  # "Franklin" after "Aretha Franklin" in a passage: one entity
    aliases: str | None = None   # TSV of alias<TAB>canonical (see aliases.py)
    term_min_df: int = 2         # a noun-phrase term must occur in this many passages
    term_max_df: float = 0.05    # terms in a larger share of the passages are dropped (see graph.py)


def build_index(input_path: str | Path, output: str | Path, config: BuildConfig = BuildConfig(),
                progress: bool = False) -> dict[str, Any]:
    """Build an index from ``input_path`` into ``output`` and return the build summary."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    check_output(output)
    aliases = load_aliases(config.aliases) if config.aliases else Aliases()
    passages = load_corpus(input_path, max_chars=config.max_chars)
    lang = config.lang
    if lang == "auto":
        lang = detect_language(p.full_text for p in passages)
    elif lang not in SUPPORTED:
        raise CorpusError(f"unsupported --lang {lang!r}; use auto, en or ja")
    timings["load"] = time.perf_counter() - t0

    # NER runs before the embedding model is loaded: its worker processes are forked,
    # and forking after torch has started its thread pool can hang the children.
    t0 = time.perf_counter()
    analyzer = Analyzer(lang, config.spacy_model, terms=terms_wanted(config.terms, passages))
    graph, corpus_tokens, sentence_spans, merged = _analyze(passages, analyzer, config, progress, aliases)
    timings["ner"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    encoder = load_encoder(config.embedding_model or DEFAULT_EMBEDDING_MODELS[lang], precision=config.precision)
    timings["load_embedder"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    if lang == "en":
        corpus_tokens = EnglishTokenizer()([f"{p.title}\n{p.text}" for p in passages])
    lexical = LexicalIndex.build(corpus_tokens)
    timings["bm25"] = time.perf_counter() - t0

    bridge = np.diff(graph.M.indptr) >= 2
    with torch_threads(None):
        passage_emb, sentence_emb, entity_emb, embed_timings = embed_tri_graph(
            encoder, [p.full_text for p in passages], sentence_spans, graph.sentences, bridge, graph.entity_names,
            config.batch_size, progress, in_context=config.sentences_in_context)
    timings.update(embed_timings)

    meta = {
        "linearrag_version": importlib.metadata.version("linearrag"),
        "language": lang,
        "ner": _ner_meta(analyzer),
        "embedding": {"model": encoder.name, "version": encoder.version, "dim": encoder.dim,
                      "precision": encoder.precision, "sentences_embedded": "bridge sentences (2+ entities)",
                      "sentences_in_context": bool(config.sentences_in_context and encoder.mean_pooling)},
        "counts": {"passages": len(passages), "sentences": len(graph.sentences), "entities": len(graph.entity_keys),
                   "bridge_sentences": int(bridge.sum()), "C_nnz": int(graph.C.nnz), "M_nnz": int(graph.M.nnz)},
        "build": {"max_chars": config.max_chars, "batch_size": config.batch_size,
                  "title_entities": config.title_entities, "terms": analyzer.with_terms,
                  "merge_short_names": config.merge_short_names,
                  "term_min_df": config.term_min_df, "term_max_df": config.term_max_df, "workers": _workers(config, sum(len(p.full_text) for p in passages))},
        "input": {"path": str(Path(input_path).resolve()), "fingerprint": fingerprint(passages)},
        "aliases": {**aliases.to_meta(), "merged": merged} if config.aliases else None,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    t0 = time.perf_counter()
    output = Path(output)
    with atomic_directory(output) as tmp:
        timings["write"] = 0.0
        meta["timings_s"] = {k: round(v, 3) for k, v in timings.items()}
        write_index(tmp, meta, passages, graph, passage_emb, sentence_emb, entity_emb)
        lexical.save(tmp)
    timings["write"] = time.perf_counter() - t0
    size = sum(f.stat().st_size for f in output.rglob("*") if f.is_file())
    return {
        "index": str(output), "language": lang, **meta["counts"], "aliases_merged": merged,
        "seconds": {k: round(v, 2) for k, v in timings.items()},
        "seconds_total": round(sum(timings.values()), 2),
        "index_bytes": size,
    }


def _analyze(passages: list[Passage], analyzer: Analyzer, config: BuildConfig, progress: bool, aliases: Aliases):
    builder = GraphBuilder(config.term_min_df, config.term_max_df, config.merge_short_names,
                           aliases.keys, aliases.names)
    tokens: list[list[str]] = []
    spans: list[list[tuple[int, int]]] = []
    texts = [p.analysis_text for p in passages]
    stream = analyzer.analyze(texts, batch_size=64, n_process=_workers(config, sum(map(len, texts))))
    with bar(len(texts), "NER", progress) as pbar:
        for passage, analyzed in zip(passages, stream):
            title = passage.title if (config.title_entities and passage.title_is_name) else ""
            builder.add(analyzed, title, passage.terms, title_line=passage.title_line, links=passage.links)
            tokens.append(analyzed.tokens)
            spans.append(analyzed.spans)
            pbar.update(1)
    return builder.build(), tokens, spans, len(builder.merged_aliases)


def terms_wanted(setting: str, passages: list[Passage]) -> bool:
    """Whether English noun-phrase terms become entities. ``auto``: yes for documents (files:
    notes, docs, Markdown), whose questions name concepts in lowercase; no for corpora of
    titled records (most passages carry a name title: Wikipedia-style knowledge bases), where
    names and titles carry the graph and terms measured as hub noise (docs/benchmarks.md)."""
    if setting not in ("auto", "on", "off"):
        raise CorpusError(f"--terms must be auto, on or off, got {setting!r}")
    if setting != "auto":
        return setting == "on"
    titled = sum(1 for p in passages if p.title and p.title_is_name)
    return titled < 0.5 * len(passages)


def _workers(config: BuildConfig, n_chars: int) -> int:
    """NER processes: two on a multi-core machine once the corpus is large enough to repay
    starting a second model (about 2 s)."""
    if config.workers is not None:
        return max(1, config.workers)
    return 2 if n_chars >= 100_000 and (os.cpu_count() or 1) >= 2 else 1


def _ner_meta(analyzer: Analyzer) -> dict[str, Any]:
    meta = {"model": analyzer.model_name, "version": analyzer.model_version, "spacy": analyzer.spacy_version}
    if analyzer.english_model:   # Japanese: English sentences are read by the English model
        meta["english_model"] = {"model": analyzer.english_model[0], "version": analyzer.english_model[1]}
    return meta
