"""The index's metadata, typed: what a build recorded (settings, models, counts), read and
written here only.

The manifest stores it as JSON (``meta``); :meth:`IndexMeta.from_dict` reads every index of
format 3, filling what older writers did not record with the value they behaved as, and
:meth:`IndexMeta.to_dict` writes the same keys back.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from ..corpus import DEFAULT_MAX_FILE_MB

CorpusKind = Literal["documents", "records"]


@dataclass(frozen=True)
class BuildSettings:
    """How the passages were read and the graph made; every later change to the index reuses them."""

    max_chars: int = 1000
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    batch_size: int = 32
    title_entities: bool = True
    terms: bool = False                  # English noun-phrase terms are entities (resolved from auto|on|off)
    merge_short_names: bool = False
    term_min_df: int = 2
    term_max_df: float = 0.05
    shard_workers: int | None = None     # recorded as "workers": shard processes (or Ray actors) asked for
    sentences_in_context: bool = True
    corpus: CorpusKind = "records"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BuildSettings:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        if "workers" in d:
            values["shard_workers"] = d["workers"]
        values["terms"] = bool(values.get("terms", False))
        if "corpus" not in d:   # indexes from before it was recorded: --terms auto decided the same way
            values["corpus"] = "documents" if values["terms"] else "records"
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {("workers" if k == "shard_workers" else k): v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class NerInfo:
    model: str
    version: str | None = None
    spacy: str | None = None
    english_model: dict | None = None    # Japanese: the model that reads English sentences

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NerInfo:
        return cls(d["model"], d.get("version"), d.get("spacy"), d.get("english_model"))

    def to_dict(self) -> dict[str, Any]:
        d = {"model": self.model, "version": self.version, "spacy": self.spacy}
        if self.english_model:
            d["english_model"] = self.english_model
        return d


@dataclass(frozen=True)
class EmbeddingInfo:
    model: str
    version: str | None = None
    dim: int | None = None
    precision: str = "fp32"
    sentences_embedded: str = "bridge sentences (2+ entities)"
    sentences_in_context: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EmbeddingInfo:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IndexMeta:
    """One generation's metadata (``manifest["meta"]``)."""

    language: str
    ner: NerInfo
    embedding: EmbeddingInfo
    build: BuildSettings
    counts: dict[str, int] = field(default_factory=dict)
    input: dict[str, Any] = field(default_factory=dict)
    aliases: dict[str, Any] | None = None
    linearrag_version: str = ""
    created: str = ""
    updated: str = ""
    operation: str = "build"
    inputs: dict[str, Any] | None = None
    timings_s: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)   # what a sharded build adds (workers, executor)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> IndexMeta:
        typed = {"language", "ner", "embedding", "build", "counts", "input", "aliases", "linearrag_version",
                 "created", "updated", "operation", "inputs", "timings_s"}
        return cls(language=d["language"], ner=NerInfo.from_dict(d["ner"]),
                   embedding=EmbeddingInfo.from_dict(d["embedding"]), build=BuildSettings.from_dict(d.get("build", {})),
                   counts=dict(d.get("counts", {})), input=dict(d.get("input") or {}), aliases=d.get("aliases"),
                   linearrag_version=d.get("linearrag_version", ""), created=d.get("created", ""),
                   updated=d.get("updated", ""), operation=d.get("operation", "build"), inputs=d.get("inputs"),
                   timings_s=dict(d.get("timings_s", {})),
                   extra={k: v for k, v in d.items() if k not in typed and k not in ("format_version", "generation")})

    def to_dict(self) -> dict[str, Any]:
        d = {"linearrag_version": self.linearrag_version, "language": self.language, "ner": self.ner.to_dict(),
             "embedding": self.embedding.to_dict(), "counts": self.counts, "build": self.build.to_dict(),
             "input": self.input, "aliases": self.aliases, "created": self.created, "updated": self.updated,
             "operation": self.operation}
        if self.inputs is not None:
            d["inputs"] = self.inputs
        d["timings_s"] = self.timings_s
        return d | self.extra

    def stamped(self, operation: str, now: str | None = None) -> IndexMeta:
        """This metadata as of a new commit by ``operation`` (a build starts a new history)."""
        now = now or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return replace(self, operation=operation, updated=now,
                       created=now if operation == "build" or not self.created else self.created)
