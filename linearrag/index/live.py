"""The segments of a generation as a writer sees them: read once per writer (segments never
change), with the passages each holds that are still live."""

from __future__ import annotations

from pathlib import Path

from .merge import natural_key
from .segment import Segment


class SegmentCache:
    """Committed segments of one index, each read once."""

    def __init__(self, path: Path):
        self.path = path
        self._segments: dict[str, Segment] = {}

    def get(self, name: str, fresh: bool = False) -> Segment:
        """The segment ``name`` (``fresh``: read it again, its files were just written)."""
        if fresh or name not in self._segments:
            self._segments[name] = Segment(self.path / name)
        return self._segments[name]


class Live:
    """Where each live passage is, and the live sources (files or records), of ``segs`` (the
    manifest's segment list, deletions included)."""

    def __init__(self, segments: list[Segment], segs: list[dict]):
        self.segment_of: dict[str, str] = {}
        self.by_source: dict[str, list[str]] = {}
        deleted = {s["name"]: set(s["deleted"]) for s in segs}
        for seg in segments:
            gone = deleted[seg.name]
            for r in seg.records:
                if r.id not in gone:
                    self.segment_of[r.id] = seg.name
                    self.by_source.setdefault(r.source, []).append(r.id)
        entries = [(seg, k) for seg in segments for k, r in enumerate(seg.records)
                   if r.id not in deleted.get(seg.name, ())]
        self.sources = live_sources(segments, deleted, entries)


def live_sources(segments: list[Segment], deleted: dict[str, set[str]], entries) -> dict[str, str]:
    """Live source → its content hash ("" where some of its passages were removed since)."""
    live_src = {seg.records[k].source for seg, k in entries}
    out: dict[str, str] = {}
    for seg in segments:
        out.update(seg.sources)
        for r in seg.records:
            if r.id in deleted.get(seg.name, ()) and r.source in live_src:
                out[r.source] = ""
    return {src: out.get(src, "") for src in sorted(live_src, key=natural_key)}
