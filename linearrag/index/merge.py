"""The global layer: what a commit derives from the live passages of its segments.

Passages are taken in a canonical order (natural order of their ids: ``a.md#2`` before
``a.md#10``), whatever segment holds them, so the derived arrays depend only on which
passages are live — a full build and any sequence of adds and removals that ends with the
same passages give the same index. Everything corpus-wide is recomputed here: links between
documents, the entity vocabulary and its document-frequency filter, aliases, display names,
which sentences bridge, BM25. No NER and no passage embedding runs here; only entity display
names that no segment has embedded yet are encoded (a few per commit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..aliases import Aliases
from ..links import resolve_links
from ..passage import fingerprint
from ..graph import GraphBuilder, TriGraph
from ..lexical import LexicalIndex
from .meta import BuildSettings
from .segment import Segment

_DIGITS = re.compile(r"(\d+)")


def natural_key(passage_id: str) -> tuple:
    """``a.md#2`` < ``a.md#10``; the parts alternate text and numbers, so keys always compare."""
    parts = _DIGITS.split(passage_id)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


@dataclass
class GlobalLayer:
    ids: list[str]
    titles: list[str]
    texts: list[str]
    cites: list[str]                 # per passage, its Citation as compact JSON
    graph: TriGraph
    passage_emb: np.ndarray
    sentence_emb: np.ndarray
    entity_emb: np.ndarray
    lexical: LexicalIndex
    fingerprint: str
    aliases_merged: int
    new_names: list[str]
    new_names_emb: np.ndarray
    bridge_sentences: int
    names_in_use: list[str]          # surfaces with a vector that this generation may need
    names_in_use_emb: np.ndarray


def live_entries(segments: list[Segment], deleted: dict[str, set[str]]) -> list[tuple[Segment, int]]:
    """(segment, record number) of every live passage, in canonical order."""
    entries = []
    for seg in segments:
        gone = deleted.get(seg.name, set())
        entries.extend((seg, k) for k, r in enumerate(seg.records) if r.id not in gone)
    entries.sort(key=lambda e: natural_key(e[0].records[e[1]].id))
    return entries


def merge(entries: list[tuple[Segment, int]], all_segments: list[Segment], build: BuildSettings, aliases: Aliases,
          dim: int, encode: Callable[[list[str]], np.ndarray]) -> GlobalLayer:
    """Derive the global layer. ``all_segments``: every segment of the commit (names may sit
    in one without live passages); ``build`` holds the recorded build parameters; ``encode``
    embeds display names that no segment holds a vector for."""
    records = [seg.records[k] for seg, k in entries]
    passages = resolve_links([r.passage() for r in records])
    builder = GraphBuilder(build.term_min_df, build.term_max_df, build.merge_short_names,
                           aliases.keys, aliases.names)
    for r, p in zip(records, passages):
        title = p.title if (build.title_entities and p.title_is_name) else ""
        builder.add(r.analysis(), title, p.terms, title_line=r.title_line, links=p.links)
    graph = builder.build()

    passage_emb = np.zeros((len(entries), dim), dtype=np.float32)
    sentence_emb = np.zeros((len(graph.sentences), dim), dtype=np.float32)
    bridge = np.diff(graph.M.indptr) >= 2
    first_sentence = np.cumsum([0] + [len(r.sentences) for r in records])
    by_segment: dict[str, list[int]] = {}
    for row, (seg, _) in enumerate(entries):
        by_segment.setdefault(seg.name, []).append(row)
    segments = {seg.name: seg for seg, _ in entries}
    for name, rows in by_segment.items():
        seg = segments[name]
        rows_arr = np.asarray(rows)
        local = np.asarray([entries[r][1] for r in rows])
        passage_emb[rows_arr] = seg.passage_emb[local]
        # global sentence numbers of these passages, and their local numbers in the segment
        counts = first_sentence[rows_arr + 1] - first_sentence[rows_arr]
        glob = np.concatenate([np.arange(first_sentence[r], first_sentence[r + 1]) for r in rows]) if rows else []
        loc = np.concatenate([np.arange(seg.sentence_starts[k], seg.sentence_starts[k] + c)
                              for k, c in zip(local, counts)]) if rows else []
        glob, loc = np.asarray(glob, dtype=np.int64), np.asarray(loc, dtype=np.int64)
        keep = bridge[glob]
        sentence_emb[glob[keep]] = seg.sentence_vectors(loc[keep])

    # Vectors for every surface form of every kept entity, not only today's display names:
    # a later removal can make another surface the most frequent, and then needs no model.
    wanted = builder.kept_surfaces() | set(graph.entity_names)
    known = _name_vectors(all_segments, wanted)
    missing = sorted(wanted - set(known))
    new_emb = encode(missing) if missing else np.zeros((0, dim), dtype=np.float32)
    known.update(zip(missing, new_emb))
    entity_emb = np.zeros((len(graph.entity_names), dim), dtype=np.float32)
    for e, name in enumerate(graph.entity_names):
        entity_emb[e] = known[name]
    in_use = sorted(known)

    lexical = LexicalIndex.build([r.tokens for r in records])
    return GlobalLayer(
        ids=[p.id for p in passages], titles=[p.title for p in passages], texts=[p.text for p in passages],
        cites=[json.dumps(p.cite.to_json(), ensure_ascii=False, separators=(",", ":")) for p in passages],
        graph=graph, passage_emb=passage_emb, sentence_emb=sentence_emb, entity_emb=entity_emb,
        lexical=lexical, fingerprint=fingerprint(passages), aliases_merged=len(builder.merged_aliases),
        new_names=missing, new_names_emb=new_emb, bridge_sentences=int(bridge.sum()),
        names_in_use=in_use, names_in_use_emb=np.asarray([known[n] for n in in_use], dtype=np.float32).reshape(-1, dim),
    )


def _name_vectors(segments: list[Segment], wanted: set[str]) -> dict[str, np.ndarray]:
    """name → vector for the wanted names some segment holds (the first segment that has it)."""
    out: dict[str, np.ndarray] = {}
    for seg in segments:
        rows, names = [], []
        for k, name in enumerate(seg.names):
            if name in wanted and name not in out:
                rows.append(k)
                names.append(name)
                out[name] = None
        if rows:
            vectors = np.asarray(seg.names_emb[np.asarray(rows)])
            out.update(zip(names, vectors))
    return out
