"""Where an index's documents came from, and what a re-sync changes.

Every build and every ``--add`` names an input root (a directory, or one file); each source
(a file of a directory, or a record of a ``.jsonl``/``.json``) belongs to the root that last
brought it. The map is written with each generation's global layer (``source_roots.json``),
so ``--update`` rescans every recorded root and drops a document only when its own root no
longer holds it. A root that is gone altogether (an unmounted disk, a moved folder) drops
nothing: its documents stay, with a warning, until they are removed explicitly.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus import passage_sources
from ..passage import Passage
from ..files import save_json

log = logging.getLogger(__name__)

SOURCE_ROOTS = "source_roots.json"


@dataclass
class Owners:
    """source → the input root it came from (``default``: an index written before roots were
    recorded, whose every source came from its build input)."""

    roots: dict[str, str] = field(default_factory=dict)
    default: str | None = None

    def of(self, source: str) -> str | None:
        return self.roots.get(source, self.default)

    @classmethod
    def read(cls, index_dir: Path, manifest: dict) -> Owners:
        default = (manifest["meta"].get("input") or {}).get("path")
        path = index_dir / manifest["global"] / SOURCE_ROOTS
        if not path.is_file():
            return cls({}, default)
        data = json.loads(path.read_text(encoding="utf-8"))
        roots = data["roots"]
        return cls({src: roots[i] for src, i in data["sources"].items()}, default)


def write_owners(directory: Path, live_sources: list[str], owners: Owners, fresh: dict[str, str]) -> list[str]:
    """Write ``source_roots.json`` for the live sources (``fresh``: sources this commit brought,
    with their root) and return the roots in use, sorted."""
    of = {src: fresh.get(src) or owners.of(src) or "" for src in live_sources}
    roots = sorted(set(of.values()))
    number = {root: i for i, root in enumerate(roots)}
    save_json(directory / SOURCE_ROOTS, {"roots": roots, "sources": {src: number[r] for src, r in of.items()}})
    return [r for r in roots if r]


@dataclass
class Resync:
    """What ``--update`` does: passages to (re)index with their sources, the root of each new or
    changed source, sources to drop, and counts."""

    passages: list[Passage] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    roots: dict[str, str] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)
    unchanged: int = 0


def plan_resync(live: dict[str, str], owners: Owners, roots: list[str],
                load: Callable[[str], list[Passage]], takeover: bool = False) -> Resync:
    """Rescan ``roots`` (each loaded with ``load``) against the live sources and their hashes.

    A root's scan changes only the sources it owns, or new ones: a source of the same name that
    another root brought is left to that root, unless ``takeover`` (``--update --input PATH``:
    PATH becomes the root of every source it holds, e.g. a folder that moved). Sources a root
    owns and no longer holds are dropped. A root that does not exist is reported in
    ``missing`` and changes nothing."""
    plan = Resync()
    for root in roots:
        if not Path(root).exists():
            plan.missing.append(root)
            continue
        passages = load(root)
        sources, hashes = passage_sources(root, passages) if passages else ([], {})
        mine = set()
        for src, digest in hashes.items():
            owner = owners.of(src) if src in live else root
            if owner != root and not takeover:
                continue
            mine.add(src)
            if live.get(src) != digest or owner != root:
                plan.changed.add(src)
                plan.roots[src] = root
                plan.hashes[src] = digest
            else:
                plan.unchanged += 1
        plan.dropped |= {src for src in live if owners.of(src) == root and src not in hashes}
        for p, s in zip(passages, sources):
            if s in mine and plan.roots.get(s) == root:
                plan.passages.append(p)
                plan.sources.append(s)
    for root in plan.missing:
        kept = sum(1 for src in live if owners.of(src) == root)
        log.warning("source %s is missing: its %d document(s) are kept (restore it, or remove them with --remove)",
                    root, kept)
    return plan
