"""An MCP server (stdio) over the package API: models and the index load once and stay warm.

Tools: ``query``, ``query_batch``, ``index_info``, ``build_index``, ``add_documents``,
``remove_documents``, ``update_index``, ``explain_path``, ``overview``. A query answers from the
generation the server loaded; when a writer (this server or any other process) commits a new
one, the next query loads it (the server compares the index's ``CURRENT`` file, one small
read, before each query). Anticipated failures
(bad parameters, empty query, missing index, bad corpus) come back as tool errors with a
one-line message; the server keeps serving.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError
from typing_extensions import TypedDict

from . import api
from .corpus import within
from .errors import LinearRAGError
from .explain.overview import Overview
from .explain.paths import PathResult
from .index.config import BuildConfig
from .index.store import committed_generation
from .index.writer import IndexWriter
from .retrieval import QueryResult, RetrievalParams, Retriever

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Multi-hop retrieval over a document corpus with no LLM calls. Call `query` with a question; read "
    "`passages` (ranked evidence with ids and titles) and `activated_entities` (the entity chain: level 1 = "
    "named in the question, level ≥ 2 = reached through the quoted bridging sentence). Answer only from the "
    "passages and cite their ids; say so when they do not contain the answer."
)


READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
WRITES_INDEX = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)
CHANGES_INDEX = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)


@dataclass
class BatchResult:
    """Results of ``query_batch``, in the order of the questions."""

    results: list[QueryResult]


class IndexInfo(TypedDict):
    """What ``index_info`` returns (the index's metadata, abridged)."""

    index: str
    language: str
    counts: dict[str, int]
    ner: dict[str, Any]
    embedding: dict[str, Any]
    build: dict[str, Any]
    timings_s: dict[str, float]
    created: str
    input: dict[str, Any]
    format_version: int


class BuildSummary(TypedDict):
    """What ``build_index`` returns: counts, seconds per stage and the size on disk."""

    index: str
    language: str
    passages: int
    sentences: int
    entities: int
    bridge_sentences: int
    C_nnz: int
    M_nnz: int
    seconds: dict[str, float]
    seconds_total: float
    index_bytes: int
    aliases_merged: int


def _one_line(exc: ValidationError) -> str:
    """A pydantic validation error as one line: each bad argument with what it must be."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{where}: {err.get('msg', 'invalid')} (got {err.get('input')!r})")
    return "invalid arguments: " + "; ".join(parts)


class LinearRAGServer(MCPServer):
    """MCPServer whose tool errors are the one-line message alone: argument validation errors
    are summarised (the SDK gives a multi-line pydantic dump with a URL), and the SDK's
    "Error executing tool NAME: " prefix is dropped."""

    async def call_tool(self, name, arguments, context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_one_line(exc.__cause__)) from None
            message = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(message) from None


class ChangeSummary(TypedDict, total=False):
    """What ``add_documents``, ``remove_documents`` and ``update_index`` return."""

    index: str
    operation: str
    committed: bool
    generation: int
    passages: int
    entities: int
    added: int
    replaced: int
    removed: int
    unchanged: int
    segments: int
    deleted_passages: int
    compacted: bool
    seconds_total: float
    index_bytes: int


class RetrieverPool:
    """Retrievers by index path, loaded on first use and kept warm."""

    def __init__(self, default_index: str | None, params: RetrievalParams, jail: Confinement):
        self.default_index = default_index
        self.params = params
        self.jail = jail
        self._retrievers: dict[str, Retriever] = {}
        self._lock = threading.Lock()   # threads of a server share the pool: one load per generation

    def path(self, index: str | None) -> str:
        """The index directory a tool names (checked against the server's roots), else the default."""
        if index is not None:
            return str(self.jail.path(index, "index").resolve())
        return str(Path(guarded(lambda: api.require_index(None, self.default_index))).resolve())

    def get(self, index: str | None) -> Retriever:
        key = self.path(index)
        with self._lock:
            loaded = self._retrievers.get(key)
            if loaded is not None and loaded.index.generation != committed_generation(key):
                loaded = None   # a writer committed a new generation: answer from it
            if loaded is None:
                self._retrievers[key] = self._load(key, self._retrievers.get(key))
            return self._retrievers[key]

    def _load(self, key: str, previous: Retriever | None) -> Retriever:
        return api.open_retriever(key, self.params, previous=previous)

    def forget(self, index: str) -> None:
        self._retrievers.pop(str(Path(index).resolve()), None)


class Writers:
    """One writer per index, kept (with its models) for the next change; a change runs under
    its index's lock, so the threads of a server never drive one writer at once."""

    def __init__(self, pool: RetrieverPool, jail: Confinement):
        self.pool, self.jail = pool, jail
        self._writers: dict[str, tuple[IndexWriter, threading.Lock]] = {}
        self._lock = threading.Lock()

    def run(self, index: str | None, change):
        """``change(writer)`` on the writer of ``index`` (the default index when None)."""
        key = self.pool.path(index)
        with self._lock:
            if key not in self._writers:
                self._writers[key] = (api.writer(key, roots=self.jail.roots), threading.Lock())
            writer, lock = self._writers[key]
        with lock:
            return change(writer)


def create_server(index: str | None = None, params: RetrievalParams | None = None,
                  preload: bool = False, roots: list[str | Path] | None = None,
                  read_only: bool = False, pool: RetrieverPool | None = None,
                  writers: Writers | None = None, name: str = "linearrag") -> MCPServer:
    """Build the MCP server; ``index`` is the default index directory for the tools.

    With ``preload`` the default index and its models load now, so the first query is warm.
    ``roots``: the directories every path a tool reads or writes must lie in, symbolic links
    resolved (default: the current directory and the default index's); see docs/security.md.
    ``read_only``: the tools that write (build, add, remove, update) are not offered at all.
    ``pool`` and ``writers``: shared with another front end (the HTTP server), else new.
    """
    server = LinearRAGServer(name, instructions=INSTRUCTIONS)
    if pool is None:
        jail = Confinement(roots if roots else [Path.cwd()], index)
        if index:
            index = str(jail.path(index, "index"))
        pool = RetrieverPool(index, params or RetrievalParams(), jail)
    if preload and pool.default_index:
        pool.get(None)
    _register_reading_tools(server, pool)
    if not read_only:
        _register_writing_tools(server, pool, pool.jail, writers or Writers(pool, pool.jail))
    return server


class Confinement:
    """The directories the server may read and write: every path argument must resolve (symbolic
    links followed) to a place inside one of them, else the tool fails with one line."""

    def __init__(self, roots: list[str | Path], index: str | None = None):
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        if index:
            self.roots.append(Path(index).expanduser().resolve())

    def allows(self, path: Path) -> bool:
        return within(path, self.roots)

    def path(self, value: str, what: str) -> Path:
        """``value`` made absolute (relative to the server's directory) once checked."""
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise ToolError(f"{what} must be a path, got {value!r}")
        path = Path(value).expanduser().absolute()
        if not self.allows(path):
            shown = ", ".join(str(r) for r in self.roots)
            raise ToolError(f"{what} {value} is outside the directories this server may use ({shown}); "
                            "restart the server with --root DIR to allow another one")
        return path


def guarded(fn):
    """Run a tool's work: a LinearRAGError (or an OSError) becomes a one-line tool error; any
    other failure a one-line internal error, never an empty "Error executing tool"."""
    try:
        return fn()
    except (LinearRAGError, ToolError) as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise ToolError(f"{exc.strerror or exc}{where}") from None
    except Exception as exc:   # noqa: BLE001 - the message must reach the agent
        raise ToolError(f"internal error ({type(exc).__name__}: {exc}); the server keeps serving") from None


def _register_reading_tools(server: MCPServer, pool: RetrieverPool) -> None:
    """query, query_batch, index_info, explain_path, overview."""

    @server.tool(annotations=READ_ONLY)
    def query(question: str, top_k: int | None = None, mode: str | None = None,
              params: dict[str, Any] | None = None, index: str | None = None) -> QueryResult:
        """Retrieve the passages that answer `question`, with the entity chain that reached them.

        mode: linearrag (default, graph), dense, bm25 or rrf. params: retrieval parameters by name
        (delta, max_iterations, lam, damping, ...). index: an index directory other than the default.
        Returns the same JSON as scripts/query_graph.py.
        """
        return guarded(lambda: api.query(pool.get(index), [question], api.query_params(pool.params, params, top_k,
                                                                                        mode))[0])

    @server.tool(annotations=READ_ONLY)
    def query_batch(questions: list[str], top_k: int | None = None, mode: str | None = None,
                    params: dict[str, Any] | None = None, index: str | None = None) -> BatchResult:
        """Answer several questions at once (batched NER and embedding); `results` in the same order."""
        if not questions:
            raise ToolError("questions is empty; pass at least one question")
        return guarded(lambda: BatchResult(api.query(pool.get(index), questions,
                                                     api.query_params(pool.params, params, top_k, mode))))

    @server.tool(annotations=READ_ONLY)
    def index_info(index: str | None = None) -> IndexInfo:
        """Counts, models, language, build parameters and build time of an index."""
        path = pool.path(index)
        return guarded(lambda: api.index_info(path))

    @server.tool(annotations=READ_ONLY)
    def explain_path(source: str, target: str, max_hops: int = 4, index: str | None = None) -> PathResult:
        """Shortest entity paths between two entities of the index (names matched as a question's
        entities are): each hop with the sentence linking it and that sentence's passage id.
        `hops` is null when the two are not connected within `max_hops`."""
        if max_hops < 1:
            raise ToolError(f"max_hops must be ≥ 1, got {max_hops}")
        return guarded(lambda: api.entity_paths(pool.get(index), source, target, max_hops, pool.params))

    @server.tool(annotations=READ_ONLY)
    def overview(communities: int = 20, index: str | None = None) -> Overview:
        """The corpus at a glance, without an LLM: entity communities of the co-occurrence graph
        (Leiden), largest first, each with its size, top entities and representative passages."""
        if communities < 1:
            raise ToolError(f"communities must be ≥ 1, got {communities}")
        return guarded(lambda: api.overview(pool.get(index).index, communities))



def _register_writing_tools(server: MCPServer, pool: RetrieverPool, jail: Confinement, writers: Writers) -> None:
    """build_index, add_documents, remove_documents, update_index (absent with --read-only)."""
    @server.tool(name="build_index", annotations=WRITES_INDEX)
    async def build_index_tool(input: str, output: str, lang: str = "auto", max_chars: int = 1000,
                               ctx: Context | None = None) -> BuildSummary:
        """Build (or atomically replace) an index from a corpus: a directory of .txt/.md files, a .jsonl of
        {"id", "title", "text"} or a .json list. Reports progress; returns the build summary."""
        source, target = jail.path(input, "input"), jail.path(output, "output")
        started = time.perf_counter()
        done = asyncio.Event()

        async def heartbeat():
            while not done.is_set():
                if ctx is not None:
                    elapsed = time.perf_counter() - started
                    await ctx.report_progress(elapsed, None, f"building {output}: {elapsed:.0f} s")
                try:
                    await asyncio.wait_for(done.wait(), timeout=2.0)
                except TimeoutError:
                    pass

        beat = asyncio.create_task(heartbeat())
        try:
            config = BuildConfig(lang=lang, max_chars=max_chars, workers=1)
            writer = api.writer(target, config, roots=jail.roots)
            summary = await asyncio.to_thread(guarded, lambda: writer.build(source))
        finally:
            done.set()
            await beat
        pool.forget(str(target))
        return summary

    def change(summary: dict) -> ChangeSummary:
        keys = ChangeSummary.__annotations__
        return {k: v for k, v in summary.items() if k in keys}

    @server.tool(annotations=CHANGES_INDEX)
    async def add_documents(path: str, index: str | None = None) -> ChangeSummary:
        """Add the documents at `path` (a file or directory, or a .jsonl of {"id", "title", "text"}) to the
        index; a passage id or file already in the index is replaced. Only the new passages are analysed
        and embedded. Returns counts (added, replaced) and the new generation."""
        source = jail.path(path, "path")
        return change(await asyncio.to_thread(guarded, lambda: writers.run(index, lambda w: w.add(source))))

    @server.tool(annotations=CHANGES_INDEX)
    async def remove_documents(ids: list[str], index: str | None = None) -> ChangeSummary:
        """Remove passages by id from the index (an id naming a file of a directory corpus removes all of
        its passages). Unknown ids are an error and nothing is removed. Returns counts and the new generation."""
        return change(await asyncio.to_thread(guarded, lambda: writers.run(index, lambda w: w.remove(ids))))

    @server.tool(annotations=CHANGES_INDEX)
    async def update_index(input: str | None = None, index: str | None = None) -> ChangeSummary:
        """Re-sync the index with its source (by default the path it was built from): new and changed files
        or records are indexed, deleted ones dropped, unchanged ones kept as they are."""
        source = jail.path(input, "input") if input is not None else None
        return change(await asyncio.to_thread(guarded, lambda: writers.run(index, lambda w: w.update(source))))

