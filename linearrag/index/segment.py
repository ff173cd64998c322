"""Segments: the immutable unit of an index (see docs/store.md).

A segment holds what is expensive to compute for a set of passages and never changes once
committed: each passage's analysis (sentences, mentions, terms, raw links, BM25 tokens), its
vector, the vectors of the sentences that may bridge two entities, and vectors of entity
names. Everything corpus-wide (the entity vocabulary, document-frequency filters, links
between documents, BM25 statistics) is derived from the live segments at each commit
(``merge.py``), so an index is a function of its live passages only.

Files of ``seg-<generation>-<n>/``::

    records.jsonl      one passage per line (see :func:`record`)
    passage_emb.npy    float32 [passages, dim]
    sentence_rows.npy  int64: local sentence numbers (in record order) that carry a vector
    sentence_emb.npy   float32 [len(sentence_rows), dim]
    names.bin/.off.npy entity display names embedded here; names_emb.npy their vectors
    sources.json       {source (file or record id): content hash} for the passages added here
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..analysis import AnalyzedText, Mention
from ..passage import ANCHOR, Citation, Passage
from ..files import load_array, read_strings, save_array, save_json, write_strings
from ..jsonl import jsonl_lines

@dataclass
class Record:
    """One analysed passage as a segment stores it (one line of ``records.jsonl``, whose short
    keys are :data:`JSON_KEYS`'); links stay raw: they are resolved at each commit."""

    id: str
    title: str
    text: str
    title_is_name: bool
    title_line: bool          # the analysed text starts with the title on a line of its own
    source: str               # the file (directory corpus) or record id it came from
    terms: list               # [surface, label] pairs: HEADING and CODE terms
    links: list               # [visible text, raw target] pairs
    sentences: list[str]
    mentions: list            # per sentence: [key, surface, label] triples
    tokens: list[str]         # BM25 tokens
    cite: dict | None = None  # Citation.to_json(); None in segments written before citations

    def to_json(self) -> dict:
        return {key: getattr(self, name) for name, key in JSON_KEYS.items()}

    @classmethod
    def from_json(cls, d: dict) -> Record:
        return cls(**{name: d[key] for name, key in JSON_KEYS.items() if key in d or name not in OPTIONAL_KEYS})

    def citation(self) -> Citation:
        return Citation.from_json(self.cite) if self.cite else Citation.guessed(self.id, self.title)

    def passage(self) -> Passage:
        return Passage(id=self.id, title=self.title, text=self.text, title_is_name=self.title_is_name,
                       terms=tuple(tuple(t) for t in self.terms), links=tuple(tuple(link) for link in self.links),
                       cite=self.citation())

    def analysis(self) -> AnalyzedText:
        return AnalyzedText(sentences=self.sentences,
                            mentions=[[Mention(k, s, lab) for k, s, lab in ms] for ms in self.mentions])

    def bridge_candidates(self) -> list[bool]:
        """Sentences that may hold two entities under any corpus: counted before any
        document-frequency filter, alias or link resolution (each can only lower the count), so
        every sentence that bridges in some later commit has its vector already."""
        everywhere = set()
        if self.title and self.title_is_name:
            everywhere.add(("title", self.title))
        everywhere.update(("t", s) for s, label in self.terms if label == "HEADING")
        inline = [s for s, label in self.terms if label not in ("HEADING", ANCHOR)]
        shown = inline + [f"link:{t}" for _, t in self.links]
        shown_text = inline + [text for text, _ in self.links]
        out = []
        for k, (sentence, mentions) in enumerate(zip(self.sentences, self.mentions)):
            keys = set(everywhere)
            keys.update(("s", key) for key, text in zip(shown, shown_text) if text in sentence)
            keys.update(("m", m[0]) for m in mentions)
            out.append(len(keys) >= 2 and not (self.title_line and k == 0))
        return out


# field → its key in records.jsonl (the stored format: short keys, this order)
JSON_KEYS = {"id": "id", "title": "title", "text": "text", "title_is_name": "tin", "title_line": "tl",
             "source": "src", "terms": "terms", "links": "links", "sentences": "s", "mentions": "m", "tokens": "tok",
             "cite": "cite"}
OPTIONAL_KEYS = {"cite"}   # absent from records written by older versions


def record(passage: Passage, analyzed: AnalyzedText, tokens: list[str], source: str) -> Record:
    """The stored form of one analysed passage."""
    return Record(id=passage.id, title=passage.title, text=passage.text, title_is_name=passage.title_is_name,
                  title_line=passage.title_line, source=source, terms=[list(t) for t in passage.terms],
                  links=[list(link) for link in passage.links], sentences=analyzed.sentences,
                  mentions=[[[m.key, m.surface, m.label] for m in ms] for ms in analyzed.mentions], tokens=tokens,
                  cite=passage.cite.to_json() if passage.cite else None)


@dataclass
class SegmentData:
    """A segment before it is written."""

    records: list[Record]
    passage_emb: np.ndarray
    sentence_rows: np.ndarray
    sentence_emb: np.ndarray
    sources: dict[str, str]
    names: list[str] = field(default_factory=list)
    names_emb: np.ndarray | None = None

    def add_names(self, names: list[str], vectors: np.ndarray) -> None:
        self.names = list(self.names) + list(names)
        old = self.names_emb if self.names_emb is not None else np.zeros((0, vectors.shape[1]), np.float32)
        self.names_emb = np.concatenate([old, vectors.astype(np.float32)])

    def write(self, directory: Path, dim: int | None = None) -> None:
        dim = dim or self.passage_emb.shape[1]
        directory.mkdir()
        with open(directory / "records.jsonl", "w", encoding="utf-8") as f:
            for r in self.records:
                f.write(json.dumps(r.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n")
        save_array(directory / "passage_emb.npy", self.passage_emb.astype(np.float32).reshape(-1, dim))
        save_array(directory / "sentence_rows.npy", np.asarray(self.sentence_rows, dtype=np.int64))
        save_array(directory / "sentence_emb.npy", self.sentence_emb.astype(np.float32).reshape(-1, dim))
        write_strings(directory, "names", self.names)
        names_emb = self.names_emb if self.names_emb is not None else np.zeros((0, dim), np.float32)
        save_array(directory / "names_emb.npy", names_emb.reshape(-1, dim))
        save_json(directory / "sources.json", self.sources)


class Segment:
    """A committed segment, read lazily (vectors memory-mapped)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.name = directory.name

    @cached_property
    def records(self) -> list[Record]:
        text = (self.directory / "records.jsonl").read_text(encoding="utf-8")
        return [Record.from_json(json.loads(line)) for _, line in jsonl_lines(text)]

    @cached_property
    def passage_emb(self) -> np.ndarray:
        return load_array(self.directory / "passage_emb.npy")

    @cached_property
    def sentence_rows(self) -> np.ndarray:
        return load_array(self.directory / "sentence_rows.npy", mmap=False)

    @cached_property
    def sentence_emb(self) -> np.ndarray:
        return load_array(self.directory / "sentence_emb.npy")

    @cached_property
    def sentence_starts(self) -> np.ndarray:
        """Local number of each record's first sentence."""
        return np.cumsum([0] + [len(r.sentences) for r in self.records])

    @cached_property
    def names(self) -> list[str]:
        return read_strings(self.directory, "names").tolist()

    @cached_property
    def names_emb(self) -> np.ndarray:
        return load_array(self.directory / "names_emb.npy")

    @cached_property
    def sources(self) -> dict[str, str]:
        return json.loads((self.directory / "sources.json").read_text(encoding="utf-8"))

    def sentence_vectors(self, local: np.ndarray) -> np.ndarray:
        """Vectors of local sentence numbers (each must be a stored bridge candidate)."""
        pos = np.searchsorted(self.sentence_rows, local)
        if len(local) and (pos.max(initial=0) >= len(self.sentence_rows) or
                           not np.array_equal(self.sentence_rows[pos], local)):
            raise ValueError(f"{self.name}: a bridging sentence has no stored vector")
        return np.asarray(self.sentence_emb[pos])
