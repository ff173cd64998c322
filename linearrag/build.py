"""Index build: corpus → analysis + embeddings (a segment) → merge → store (one commit).

``make_segment`` is the expensive part every write shares (a full build, ``--add``,
``--update``); ``writer.py`` turns segments into committed generations.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import Analyzer
from .corpus import DEFAULT_MAX_FILE_MB, Passage
from .encoders import torch_threads
from .errors import CorpusError
from .encoders.tri_graph import embed_tri_graph
from .progress import bar
from .segment import SegmentData, bridge_candidates, record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildConfig:
    """Parameters of a build. ``None`` models mean the language's default."""

    lang: str = "auto"
    spacy_model: str | None = None
    embedding_model: str | None = None
    max_chars: int = 1000
    max_file_mb: float = DEFAULT_MAX_FILE_MB   # the largest document read (MB)
    batch_size: int = 32
    title_entities: bool = True
    precision: str = "auto"
    workers: int | None = None   # shard worker processes (or Ray actors); None: one per core once the
                                 # corpus has 2+ shards, else this process (see shards.py)
    shard_passages: int = 500    # passages per shard (a file is never split)
    ray: str | None = None       # "local" (start a local Ray instance) or a cluster address
    device: str = "cpu"          # embeddings on cpu, cuda or auto (cuda when torch sees one)
    sentences_in_context: bool = True  # sentence vectors from the passage's forward pass
    terms: str = "auto"          # English noun-phrase terms as entities: auto (documents yes,
                                 # titled records no; see terms_wanted), on or off
    merge_short_names: bool = False  # "Franklin" after "Aretha Franklin" in a passage: one entity
    aliases: str | None = None   # TSV of alias<TAB>canonical (see aliases.py)
    term_min_df: int = 2         # a noun-phrase term must occur in this many passages
    term_max_df: float = 0.05    # terms in a larger share of the passages are dropped (see graph.py)


def build_index(input_path: str | Path, output: str | Path, config: BuildConfig = BuildConfig(),
                progress: bool = False) -> dict[str, Any]:
    """Build an index from ``input_path`` into ``output`` (replacing what is there in one
    commit) and return the build summary."""
    from .writer import IndexWriter

    return IndexWriter(output, config, progress=progress).build(input_path)


def make_segment(passages: list[Passage], sources: list[str], hashes: dict[str, str], analyzer: Analyzer,
                 encoder, build: dict, progress: bool, timings: dict[str, float],
                 threads: int | None = None) -> SegmentData:
    """Analyse and embed passages into a segment (the expensive part of any write).
    ``threads``: torch threads for the embeddings (None: every core; a worker process gets its share)."""
    t0 = time.perf_counter()
    texts = [p.analysis_text for p in passages]
    workers = build["workers"] if build.get("workers") is not None else _auto_workers(sum(map(len, texts)))
    analyzed = []
    with bar(len(texts), "NER", progress) as pbar:
        for a in analyzer.analyze(texts, batch_size=64, n_process=workers):
            analyzed.append(a)
            pbar.update(1)
    timings["ner"] = timings.get("ner", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    tokens = analyzer.language.bm25_tokens([f"{p.title}\n{p.text}" for p in passages], analyzed)
    timings["bm25_tokens"] = time.perf_counter() - t0
    records = [record(p, a, list(t), src) for p, a, t, src in zip(passages, analyzed, tokens, sources)]
    candidates = np.asarray([b for r in records for b in bridge_candidates(r)], dtype=bool)
    sentences = [s for a in analyzed for s in a.sentences]
    with torch_threads(threads):
        passage_emb, sentence_emb, embed_timings = embed_tri_graph(
            encoder, [p.full_text for p in passages], [a.spans for a in analyzed], sentences, candidates,
            build["batch_size"], progress, in_context=build["sentences_in_context"])
    for k, v in embed_timings.items():
        timings[k] = timings.get(k, 0.0) + v
    rows = np.flatnonzero(candidates)
    return SegmentData(records=records, passage_emb=passage_emb, sentence_rows=rows,
                       sentence_emb=sentence_emb[rows], sources={src: hashes[src] for src in dict.fromkeys(sources)})


def is_documents(passages: list[Passage]) -> bool:
    """A corpus of documents (files: notes, docs, Markdown) rather than of titled records (most
    passages carry a name title: Wikipedia-style knowledge bases)."""
    titled = sum(1 for p in passages if p.title and p.title_is_name)
    return titled < 0.5 * len(passages)


def terms_wanted(setting: str, passages: list[Passage]) -> bool:
    """Whether English noun-phrase terms become entities. ``auto``: yes for documents (files:
    notes, docs, Markdown), whose questions name concepts in lowercase; no for corpora of
    titled records (most passages carry a name title: Wikipedia-style knowledge bases), where
    names and titles carry the graph and terms measured as hub noise (docs/benchmarks.md)."""
    if setting not in ("auto", "on", "off"):
        raise CorpusError(f"--terms must be auto, on or off, got {setting!r}")
    if setting != "auto":
        return setting == "on"
    return is_documents(passages)


def _auto_workers(n_chars: int) -> int:
    """NER processes: two on a multi-core machine once the corpus is large enough to repay
    starting a second model (about 2 s)."""
    return 2 if n_chars >= 100_000 and (os.cpu_count() or 1) >= 2 else 1


def _ner_meta(analyzer: Analyzer) -> dict[str, Any]:
    meta = {"model": analyzer.model_name, "version": analyzer.model_version, "spacy": analyzer.spacy_version}
    if analyzer.english_model:   # Japanese: English sentences are read by the English model
        meta["english_model"] = {"model": analyzer.english_model[0], "version": analyzer.english_model[1]}
    return meta
