"""The front door: the steps every front end takes (the ``linearrag`` command and its script
aliases, the MCP server, any later server), written once.

Each function takes plain values, raises a :class:`~linearrag.errors.LinearRAGError` with a
one-line message on bad input, and returns the package's result objects; a front end only
parses its input and prints (or serialises) the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .check import check_index
from .errors import ParameterError
from .explain.overview import Overview, corpus_overview
from .explain.paths import EntityGraph, PathResult, describe_paths, resolve_entity
from .index.config import BuildConfig
from .index.store import Index, load_index, read_meta
from .index.writer import IndexWriter
from .retrieval import QueryResult, RetrievalParams, Retriever, parse_overrides, preset

INFO_KEYS = ("language", "counts", "ner", "embedding", "build", "timings_s", "created", "input", "format_version")


def require_index(index: str | Path | None, default: str | Path | None = None) -> str:
    """The index a call names, else the default; neither is a one-line error."""
    chosen = index if index is not None else default
    if chosen is None or not str(chosen).strip():
        raise ParameterError("no index given: pass an index directory (--index DIR, or `index` to a tool)")
    return str(chosen)


def query_params(base: RetrievalParams | str = "default", overrides: dict[str, Any] | Sequence[str] | None = None,
                 top_k: int | None = None, mode: str | None = None) -> RetrievalParams:
    """Retrieval parameters: a preset (or parameters) with overrides by name (a dict, or
    ``NAME=VALUE`` strings), then ``top_k`` and ``mode`` where given."""
    params = preset(base) if isinstance(base, str) else base
    merged = dict(parse_overrides(list(overrides)) if isinstance(overrides, (list, tuple)) else overrides or {})
    if top_k is not None:
        merged["top_k"] = top_k
    if mode is not None:
        merged["mode"] = mode
    return params.with_overrides(merged)


def open_retriever(index: str | Path, params: RetrievalParams | None = None, threads: int | None = 1,
                   warm: bool = True, previous: Retriever | None = None) -> Retriever:
    """A retriever over the index at ``index``. ``previous``: one over an earlier generation
    of the same index, whose models are reused when the index still names them."""
    loaded = load_index(index)
    if previous is not None and _same_models(loaded, previous.index):
        return Retriever(loaded, params, analyzer=previous.analyzer, encoder=previous.encoder)
    return Retriever(loaded, params, threads=threads, warm=warm)


def _same_models(a: Index, b: Index) -> bool:
    return a.info.ner == b.info.ner and a.info.embedding == b.info.embedding and a.info.build.terms == b.info.build.terms


def query(retriever: Retriever, questions: Sequence[str], params: RetrievalParams) -> list[QueryResult]:
    """The passages (and the entity chain) for each question; an empty question is an error
    (the retriever's)."""
    if not questions:
        raise ParameterError("no question given; pass at least one")
    return retriever.query_batch(list(questions), params)


def entity_paths(retriever: Retriever | str | Path, source: str, target: str, max_hops: int = 4,
                 params: RetrievalParams | None = None) -> PathResult:
    """The shortest entity co-occurrence paths between two entities, named as a question's
    entities are; each hop with the sentence linking it. ``retriever``: one already open, or
    the index to open (once the request is checked)."""
    if max_hops < 1:
        raise ParameterError(f"max_hops must be ≥ 1, got {max_hops}")
    if not source.strip() or not target.strip():
        raise ParameterError('empty entity name; pass two names, e.g. linearrag path INDEX "A" "B"')
    if not isinstance(retriever, Retriever):
        retriever = open_retriever(retriever, warm=False)
    params = params or retriever.params
    ends = []
    for name in (source, target):
        entity = resolve_entity(retriever, name, params.seed_floor, params.similarity == "calibrated")
        if entity is None:
            raise ParameterError(f"no entity of the index matches {name!r}; use the name as the documents write it")
        ends.append(entity)
    return describe_paths(EntityGraph(retriever.index.graph.M), retriever.index, ends[0], ends[1], max_hops)


def overview(index: Index | str | Path, communities: int = 20) -> Overview:
    """The corpus at a glance: entity communities (Leiden), largest first."""
    if communities < 1:
        raise ParameterError(f"communities must be ≥ 1, got {communities}")
    return corpus_overview(index if isinstance(index, Index) else load_index(index), max_communities=communities)


def check(index: str | Path) -> dict[str, Any]:
    """Every file of the index verified against its recorded checksum, shapes and counts."""
    return check_index(index)


def index_info(index: str | Path) -> dict[str, Any]:
    """Counts, models, language, build settings and build time of an index."""
    meta = read_meta(index)
    return {"index": str(index), **{k: meta.get(k) for k in INFO_KEYS}}


def writer(output: str | Path, config: BuildConfig | None = None, progress: bool = False, wait: bool = True,
           roots: list[Path] | None = None) -> IndexWriter:
    """The writer of the index at ``output`` (build, add, remove, update, compact); it keeps
    its models loaded between calls. ``roots``: the directories inputs may be read from."""
    return IndexWriter(output, config, progress=progress, wait=wait, roots=roots)


def build(input_path: str | Path, output: str | Path, config: BuildConfig | None = None,
          progress: bool = False) -> dict[str, Any]:
    """Build the index of ``input_path`` at ``output`` (one commit) and return its summary."""
    return writer(output, config, progress=progress).build(input_path)
