"""Making segments: passages → analysis + BM25 tokens + embeddings, the expensive part every
write shares (a full build, ``--add``, ``--update``), wherever it runs.

A :class:`ShardWorker` holds the models of one process (the writer's own, a worker process or
a Ray actor); the executors (``executors.py``) call :func:`run_shard`, :func:`embed_names` and
:func:`model_info` on it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..analysis import Analyzer
from ..passage import Passage
from ..encoders import load_encoder, torch_threads
from ..encoders.tri_graph import embed_tri_graph
from ..progress import bar
from .segment import SegmentData, record
from .meta import BuildSettings, EmbeddingInfo, NerInfo


@dataclass(frozen=True)
class WorkerSettings:
    """What a shard worker needs to load its models and analyse passages like the driver would."""

    lang: str
    spacy_model: str | None
    embedding_model: str
    precision: str
    device: str
    build: BuildSettings
    threads: int | None = None   # torch threads (None: every core)


@dataclass
class ShardTask:
    number: int
    passages: list[Passage]
    sources: list[str]
    hashes: dict[str, str]


def auto_ner_workers(n_chars: int) -> int:
    """NER processes: two on a multi-core machine once the text is large enough to repay
    starting a second model (about 2 s)."""
    return 2 if n_chars >= 100_000 and (os.cpu_count() or 1) >= 2 else 1


def make_segment(passages: list[Passage], sources: list[str], hashes: dict[str, str], analyzer: Analyzer,
                 encoder, build: BuildSettings, progress: bool, timings: dict[str, float],
                 ner_processes: int | None = None, threads: int | None = None) -> SegmentData:
    """Analyse and embed passages into a segment. ``ner_processes``: spaCy processes (None: by
    the text's size); ``threads``: torch threads for the embeddings (None: every core)."""
    t0 = time.perf_counter()
    texts = [p.analysis_text for p in passages]
    processes = ner_processes if ner_processes is not None else auto_ner_workers(sum(map(len, texts)))
    analyzed = []
    with bar(len(texts), "NER", progress) as pbar:
        for a in analyzer.analyze(texts, batch_size=64, n_process=processes):
            analyzed.append(a)
            pbar.update(1)
    timings["ner"] = timings.get("ner", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    tokens = analyzer.language.bm25_tokens([f"{p.title}\n{p.text}" for p in passages], analyzed)
    timings["bm25_tokens"] = time.perf_counter() - t0
    records = [record(p, a, list(t), src) for p, a, t, src in zip(passages, analyzed, tokens, sources)]
    candidates = np.asarray([b for r in records for b in r.bridge_candidates()], dtype=bool)
    sentences = [s for a in analyzed for s in a.sentences]
    with torch_threads(threads):
        passage_emb, sentence_emb, embed_timings = embed_tri_graph(
            encoder, [p.full_text for p in passages], [a.spans for a in analyzed], sentences, candidates,
            build.batch_size, progress, in_context=build.sentences_in_context)
    for k, v in embed_timings.items():
        timings[k] = timings.get(k, 0.0) + v
    rows = np.flatnonzero(candidates)
    return SegmentData(records=records, passage_emb=passage_emb, sentence_rows=rows,
                       sentence_emb=sentence_emb[rows], sources={src: hashes[src] for src in dict.fromkeys(sources)})


def ner_info(analyzer: Analyzer) -> NerInfo:
    """The NER models as the index records them."""
    second = analyzer.english_model   # Japanese: English sentences are read by the English model
    return NerInfo(analyzer.model_name, analyzer.model_version, analyzer.spacy_version,
                   {"model": second[0], "version": second[1]} if second else None)


def embedding_info(encoder, build: BuildSettings) -> EmbeddingInfo:
    """The embedding model as the index records it."""
    return EmbeddingInfo(encoder.name, encoder.version, encoder.dim, encoder.precision,
                         sentences_in_context=bool(build.sentences_in_context and encoder.mean_pooling))


class LazyEncoder:
    """An encoder loaded on first use (after NER, whose worker processes are forked), its load
    time recorded in ``timings`` when given."""

    def __init__(self, load: Callable[[], object], timings: dict | None = None):
        self._load, self._timings, self._encoder = load, timings, None

    def _get(self):
        if self._encoder is None:
            t0 = time.perf_counter()
            self._encoder = self._load()
            if self._timings is not None:
                self._timings["load_embedder"] = time.perf_counter() - t0
        return self._encoder

    def __getattr__(self, name):
        return getattr(self._get(), name)


class ShardWorker:
    """The models of one process, loaded on first use. ``ner_processes(task)``: spaCy processes
    for a task (default 1: a worker process or actor never forks)."""

    def __init__(self, settings: WorkerSettings, analyzer: Analyzer | None = None, encoder=None,
                 ner_processes: Callable[[ShardTask], int | None] | None = None):
        self.settings = settings
        self._analyzer = analyzer
        self._encoder = encoder
        self.ner_processes = ner_processes or (lambda task: 1)

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            s = self.settings
            self._analyzer = Analyzer(s.lang, s.spacy_model, terms=s.build.terms)
        return self._analyzer

    @property
    def encoder(self):
        if self._encoder is None:
            s = self.settings
            self._encoder = load_encoder(s.embedding_model, precision=s.precision, device=s.device)
        return self._encoder


def run_shard(worker: ShardWorker, task: ShardTask) -> tuple[int, SegmentData, dict]:
    """A shard's segment, and the seconds its parts took."""
    timings: dict[str, float] = {}
    s = worker.settings
    segment = make_segment(task.passages, task.sources, task.hashes, worker.analyzer,
                           LazyEncoder(lambda: worker.encoder), s.build, False, timings,
                           ner_processes=worker.ner_processes(task), threads=s.threads)
    return task.number, segment, timings


def embed_names(worker: ShardWorker, names: list[str]) -> np.ndarray:
    """Vectors of entity display names (batches of 8 × the build's batch size)."""
    with torch_threads(worker.settings.threads):
        return worker.encoder.encode_names(names, worker.settings.build.batch_size * 8)


def model_info(worker: ShardWorker) -> tuple[NerInfo, EmbeddingInfo]:
    """The worker's models, as the index records them."""
    return ner_info(worker.analyzer), embedding_info(worker.encoder, worker.settings.build)
