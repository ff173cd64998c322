"""One new generation in the making, shared by every write operation: the segments it keeps
(with the passages it deletes), the segments it adds, the entity names it embeds, and the
commit that makes it the index's content (``store.commit``) followed by garbage collection.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..aliases import Aliases
from .directory import collect_garbage
from ..errors import CorpusError
from ..files import save_array, write_strings
from .merge import GlobalLayer, live_entries, merge
from .segment import Segment, SegmentData
from .sources import Owners, write_owners
from .store import commit, file_table, next_generation, read_manifest, write_global
from .live import Live, SegmentCache, live_sources
from .meta import BuildSettings, EmbeddingInfo, IndexMeta, NerInfo

Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class CommitSettings:
    """What shapes the global layer: the language, the recorded build settings, the aliases."""

    language: str
    build: BuildSettings
    aliases: Aliases


@dataclass
class Commit:
    """Generation ``base + 1`` of the index at ``path``. ``segs`` are the manifest's segment
    entries it keeps (each with its ``deleted`` ids); ``new_dirs`` the segments it adds."""

    path: Path
    cache: SegmentCache
    base: dict | None
    operation: str
    settings: CommitSettings
    dim: int
    segs: list[dict] = field(default_factory=list)
    new_dirs: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    input_path: str | None = None            # a build's input (else the base's is kept)
    roots: dict[str, str] = field(default_factory=dict)   # source → input root, for sources this commit brings
    models: tuple[NerInfo, EmbeddingInfo] | None = None   # a build's models (else the base's)
    extra_meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def on(cls, path: Path, cache: SegmentCache, base: dict | None, operation: str, settings: CommitSettings,
           dim: int, keep_base: bool = True) -> Commit:
        """A commit over ``base`` (``keep_base``: its segments stay, deletions to be marked)."""
        segs = [dict(s, deleted=list(s["deleted"])) for s in base["segments"]] if base and keep_base else []
        return cls(path, cache, base, operation, settings, dim, segs=segs)

    @cached_property
    def base_meta(self) -> IndexMeta:
        """The metadata of the generation this commit changes."""
        return IndexMeta.from_dict(self.base["meta"])

    @property
    def generation(self) -> int:
        return next_generation(self.base)

    def live(self) -> Live:
        return Live([self.cache.get(s["name"]) for s in self.segs], self.segs)

    def delete(self, live: Live, ids: set[str]) -> None:
        """Mark the live passages ``ids`` deleted (ids not live are ignored)."""
        by_name = {s["name"]: s for s in self.segs}
        for pid in ids:
            seg = live.segment_of.get(pid)
            if seg is not None:
                by_name[seg]["deleted"].append(pid)

    def adopt(self, segs: list[dict]) -> None:
        """Add segments already moved into the index directory (a sharded run's)."""
        self.segs.extend(segs)
        self.new_dirs.extend(s["name"] for s in segs)

    def write_segment(self, segment: SegmentData, suffix: str = "0") -> None:
        """Write ``segment`` as one of this generation's new segments."""
        name = f"seg-{self.generation:06d}-{suffix}"
        segment.write(self.path / name, self.dim)
        self.adopt([{"name": name, "passages": len(segment.records), "deleted": []}])

    def discard(self) -> None:
        """Remove the segments this commit wrote (it will not be committed)."""
        for d in self.new_dirs:
            shutil.rmtree(self.path / d, ignore_errors=True)

    def finish(self, embed: Embed) -> dict:
        """Merge, write the global layer and the manifest, collect garbage; return the manifest.
        ``embed(names)`` gives the vectors of display names no segment holds."""
        for name in self.new_dirs:
            self.cache.get(name, fresh=True)
        segments = [self.cache.get(s["name"]) for s in self.segs]
        deleted = {s["name"]: set(s["deleted"]) for s in self.segs}
        entries = live_entries(segments, deleted)
        if not entries:
            self.discard()
            raise CorpusError(f"{self.path}: this would leave the index without passages; "
                              "delete the index directory instead")
        t0 = time.perf_counter()
        embed_before = self.timings.get("embed_entities", 0.0)
        layer = merge(entries, segments, self.settings.build, self.settings.aliases, self.dim, embed)
        self.counts["names_embedded"] = len(layer.new_names)
        if layer.new_names:
            self._keep_new_names(layer)
        self.timings["merge"] = time.perf_counter() - t0 - (self.timings.get("embed_entities", 0.0) - embed_before)
        t0 = time.perf_counter()
        global_dir = f"g-{self.generation:06d}"
        sources = live_sources(segments, deleted, entries)
        write_global(self.path / global_dir, layer, sources)
        owners = Owners.read(self.path, self.base) if self.base and self.operation != "build" else Owners()
        inputs = write_owners(self.path / global_dir, list(sources), owners, self.roots)
        kept = {s["name"] for s in self.segs}
        files = {rel: v for rel, v in (self.base["files"] if self.base else {}).items() if rel.split("/", 1)[0] in kept}
        files.update(file_table(self.path, self.new_dirs + [global_dir]))
        meta = self._meta(layer, inputs)
        commit(self.path, self.generation, meta.to_dict(), self.segs, global_dir, files)
        self.timings["write"] = time.perf_counter() - t0
        collect_garbage(self.path)
        return read_manifest(self.path)

    def _keep_new_names(self, layer: GlobalLayer) -> None:
        """Store the vectors of display names no segment held yet: in the last segment this
        commit adds, or (a removal) in a names-only segment of its own."""
        if not self.new_dirs:
            holder = _empty_segment(self.dim)
            holder.add_names(layer.new_names, layer.new_names_emb)
            self.write_segment(holder, suffix="names")
            return
        target = self.cache.get(self.new_dirs[-1])
        holder = replace(_empty_segment(self.dim), names=list(target.names),
                         names_emb=np.asarray(target.names_emb, dtype=np.float32).reshape(-1, self.dim))
        holder.add_names(layer.new_names, layer.new_names_emb)
        write_strings(target.directory, "names", holder.names)
        save_array(target.directory / "names_emb.npy", holder.names_emb.reshape(-1, self.dim))
        self.cache.get(self.new_dirs[-1], fresh=True)

    def _meta(self, layer: GlobalLayer, inputs: list[str]) -> IndexMeta:
        g = layer.graph
        aliases = self.settings.aliases
        if self.operation == "build" or self.base is None:
            ner, embedding = self.models
            meta = IndexMeta(language=self.settings.language, ner=ner, embedding=embedding, build=self.settings.build)
        else:
            meta = replace(self.base_meta, extra={})
        meta = replace(
            meta.stamped(self.operation), linearrag_version=importlib.metadata.version("linearrag"),
            counts={"passages": len(layer.ids), "sentences": len(g.sentences), "entities": len(g.entity_keys),
                    "bridge_sentences": layer.bridge_sentences, "C_nnz": int(g.C.nnz), "M_nnz": int(g.M.nnz)},
            input={"path": self.input_path or meta.input.get("path"), "fingerprint": layer.fingerprint},
            aliases={**aliases.to_meta(), "merged": layer.aliases_merged} if aliases.path or aliases.keys else None,
            inputs=inputs, timings_s={k: round(v, 3) for k, v in self.timings.items()}, extra=self.extra_meta)
        return meta


def _empty_segment(dim: int) -> SegmentData:
    return SegmentData(records=[], passage_emb=np.zeros((0, dim), np.float32), sentence_rows=np.zeros(0, np.int64),
                       sentence_emb=np.zeros((0, dim), np.float32), sources={})


def compacted(base: dict, cache: SegmentCache, settings: CommitSettings, dim: int, embed: Embed) -> SegmentData:
    """The live passages of ``base`` as one segment (no analysis, no embedding), with the name
    vectors this generation may need (display names and their other surfaces)."""
    segs = base["segments"]
    segments: list[Segment] = [cache.get(s["name"]) for s in segs]
    deleted = {s["name"]: set(s["deleted"]) for s in segs}
    entries = live_entries(segments, deleted)
    passage_emb = np.zeros((len(entries), dim), dtype=np.float32)
    rows, vectors, offset = [], [], 0
    for i, (seg, k) in enumerate(entries):
        passage_emb[i] = seg.passage_emb[k]
        cand = np.flatnonzero(seg.records[k].bridge_candidates())
        if len(cand):
            vectors.append(seg.sentence_vectors(seg.sentence_starts[k] + cand))
            rows.append(offset + cand)
        offset += len(seg.records[k].sentences)
    layer = merge(entries, segments, settings.build, settings.aliases, dim, embed)
    return SegmentData(records=[seg.records[k] for seg, k in entries], passage_emb=passage_emb,
                       sentence_rows=np.concatenate(rows) if rows else np.zeros(0, np.int64),
                       sentence_emb=np.concatenate(vectors) if vectors else np.zeros((0, dim), np.float32),
                       sources=live_sources(segments, deleted, entries),
                       names=layer.names_in_use, names_emb=layer.names_in_use_emb)


def summary(path: Path, manifest: dict, timings: dict, operation: str, committed: bool = True, **counts) -> dict:
    """What a write operation returns: the generation's counts, seconds per part, size on disk."""
    meta = manifest["meta"]
    size = sum(size for size, _ in manifest["files"].values())   # the index's own files only
    segs = manifest["segments"]
    return {
        "index": str(path), "operation": operation, "committed": committed,
        "generation": manifest["generation"], "language": meta["language"], **meta["counts"],
        **counts, "segments": len(segs), "deleted_passages": sum(len(s["deleted"]) for s in segs),
        "aliases_merged": (meta.get("aliases") or {}).get("merged", 0),
        "seconds": {k: round(v, 2) for k, v in timings.items()},
        "seconds_total": round(sum(timings.values()), 2), "index_bytes": size,
    }
