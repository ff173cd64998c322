"""What a caller asks of a build (:class:`BuildConfig`), and how it becomes the settings the
index records (:func:`build_settings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..corpus import DEFAULT_MAX_FILE_MB
from ..passage import Passage
from ..errors import CorpusError
from .meta import BuildSettings

TermsSetting = Literal["auto", "on", "off"]
TERMS_CHOICES = ("auto", "on", "off")


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
                                 # corpus has 2+ shards, else this process (see executors.py)
    shard_passages: int = 500    # passages per shard (a file is never split)
    ray: str | None = None       # "local" (start a local Ray instance) or a cluster address
    device: str = "cpu"          # embeddings on cpu, cuda or auto (cuda when torch sees one)
    sentences_in_context: bool = True  # sentence vectors from the passage's forward pass
    terms: TermsSetting = "auto"  # English noun-phrase terms as entities: auto (documents yes,
                                  # titled records no; see terms_wanted), on or off
    merge_short_names: bool = False  # "Franklin" after "Aretha Franklin" in a passage: one entity
    aliases: str | None = None   # TSV of alias<TAB>canonical (see aliases.py)
    term_min_df: int = 2         # a noun-phrase term must occur in this many passages
    term_max_df: float = 0.05    # terms in a larger share of the passages are dropped (see graph.py)


def build_settings(config: BuildConfig, passages: list[Passage]) -> BuildSettings:
    """The settings a build of ``passages`` records (``terms`` resolved for this corpus)."""
    return BuildSettings(max_chars=config.max_chars, max_file_mb=config.max_file_mb, batch_size=config.batch_size,
                         title_entities=config.title_entities, terms=terms_wanted(config.terms, passages),
                         merge_short_names=config.merge_short_names, term_min_df=config.term_min_df,
                         term_max_df=config.term_max_df, shard_workers=config.workers,
                         sentences_in_context=config.sentences_in_context,
                         corpus="documents" if is_documents(passages) else "records")


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
    if setting not in TERMS_CHOICES:
        raise CorpusError(f"--terms must be auto, on or off, got {setting!r}")
    if setting != "auto":
        return setting == "on"
    return is_documents(passages)
