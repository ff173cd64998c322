"""The user's vocabulary: an alias file merges names at index and at query time.

Format: UTF-8 text, one ``alias<TAB>canonical`` pair per line (``PPR<TAB>Personalized
PageRank``, ``漱石<TAB>夏目漱石``); blank lines and lines starting with ``#`` are ignored.
Both sides are normalised like entity names, so case and width do not matter.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import read_utf8
from .errors import CorpusError, IndexFormatError
from .normalize import normalize_entity


@dataclass
class Aliases:
    """alias key → canonical key, and the canonical display names."""

    keys: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)   # canonical key → canonical surface
    path: str | None = None
    sha256: str | None = None

    def canonical(self, key: str) -> str:
        return self.keys.get(key, key)

    def to_meta(self) -> dict:
        return {"path": self.path, "sha256": self.sha256, "pairs": self.keys, "names": self.names}

    @classmethod
    def from_meta(cls, meta: dict | None) -> Aliases:
        if not meta:
            return cls()
        return cls(dict(meta.get("pairs", {})), dict(meta.get("names", {})), meta.get("path"), meta.get("sha256"))


def load_aliases(path: str | Path) -> Aliases:
    """Read an alias file; CorpusError naming the file and line for anything malformed."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"{path}: no such alias file; pass a TSV file of alias<TAB>canonical lines")
    raw = path.read_bytes()
    text = read_utf8(path)
    aliases = Aliases(path=str(path.resolve()), sha256=hashlib.sha256(raw).hexdigest())
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise CorpusError(f"{path}:{lineno}: expected 'alias<TAB>canonical', got {line[:60]!r}; fix that line")
        alias, canonical = normalize_entity(parts[0]), normalize_entity(parts[1])
        if not alias or not canonical:
            raise CorpusError(f"{path}:{lineno}: an empty name after normalisation; fix that line")
        if alias != canonical:
            aliases.keys[alias] = canonical
        aliases.names.setdefault(canonical, parts[1].strip())
    # A canonical name that is itself an alias elsewhere: follow the chain (A → B → C).
    for alias in list(aliases.keys):
        seen = {alias}
        target = aliases.keys[alias]
        while target in aliases.keys:
            if target in seen:
                raise CorpusError(f"{path}: the aliases of {alias!r} form a cycle; fix the file")
            seen.add(target)
            target = aliases.keys[target]
        aliases.keys[alias] = target
    return aliases


def check_unchanged(recorded: Aliases, index_path: Path) -> None:
    """A one-line error when the alias file the index was built with has changed since."""
    if not recorded.path or not Path(recorded.path).is_file():
        return   # moved or deleted: the index keeps the aliases it recorded
    current = hashlib.sha256(Path(recorded.path).read_bytes()).hexdigest()
    if current != recorded.sha256:
        raise IndexFormatError(f"{index_path}: the alias file {recorded.path} changed since the index was built; "
                               "rebuild the index (build_graph.py --aliases ...) to use it")
