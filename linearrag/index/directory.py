"""What an index directory holds, and what may be deleted there.

An index directory is recognised by its own marker only — ``CURRENT`` naming a manifest that
parses with the store's format fields — never by a bare ``LOCK`` or ``meta.json``. Only names
the store itself creates (manifests, segments, global layers, staging, ``CURRENT``, ``LOCK``)
are ever deleted: anything else there is the user's and stays (docs/security.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from ..errors import IndexFormatError
from .store import CURRENT, KEEP_GENERATIONS, LOCK, MANIFEST_NAME, current_generation


def check_output(target: str | Path) -> None:
    """Fail early (before any model loads, before anything is created or deleted) on an
    ``--output`` that cannot become an index: a file, a directory that holds anything the
    store did not write (see :func:`foreign_entries`), or a place we cannot write."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise IndexFormatError(f"{target}: is a file, not an index directory; choose another --output")
    if target.is_dir() and not is_index_dir(target):
        foreign = foreign_entries(target)
        if foreign:
            shown = ", ".join(repr(name) for name in foreign[:3]) + (f" and {len(foreign) - 3} more"
                                                                      if len(foreign) > 3 else "")
            raise IndexFormatError(f"{target}: exists and is not an index (it holds {shown}, which linearrag "
                                   "did not write); choose another --output, or an empty or new directory")
    place = target if target.is_dir() else target.resolve().parent
    while not place.exists() and place != place.parent:
        place = place.parent
    if not os.access(place, os.W_OK | os.X_OK):
        raise IndexFormatError(f"{place}: not writable, so {target} cannot be written; choose another --output")


# Every name the store creates in an index directory; nothing else there is ever deleted.
_STORE_ENTRY = re.compile(r"^(?:CURRENT(?:\.tmp)?|LOCK|manifest-\d{6,}\.json|seg-\d{6,}-(?:\d+|names)|g-\d{6,}"
                          r"|staging-[0-9a-f]{20})$")


def is_store_entry(name: str) -> bool:
    """Whether ``name`` (an entry of an index directory) is one the store writes."""
    return bool(_STORE_ENTRY.match(name))


def foreign_entries(path: Path) -> list[str]:
    """Entries of ``path`` the store did not write (sorted): the user's, never touched."""
    return sorted(entry.name for entry in path.iterdir() if not is_store_entry(entry.name))


def is_index_dir(path: Path) -> bool:
    """An index is recognised by its own marker only: ``CURRENT`` naming a manifest that
    parses and carries the store's format fields (a bare ``LOCK`` or ``meta.json`` is not one)."""
    name = current_generation(path)
    if not name or not MANIFEST_NAME.match(name):
        return False
    try:
        manifest = json.loads((path / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(manifest, dict) and isinstance(manifest.get("format_version"), int)
            and isinstance(manifest.get("generation"), int) and "segments" in manifest)


def collect_garbage(index_dir: Path, keep: int = KEEP_GENERATIONS) -> None:
    """Delete what no recent manifest uses: older manifests, their segments and global
    directories, and files of writers that died; a killed build's finished shards
    (``staging-*``) stay for it to resume. Only names the store creates are candidates
    (:func:`is_store_entry`): anything else in the directory is the user's and stays. Call
    with the write lock held (so nothing deleted here is being written)."""
    current = current_generation(index_dir)
    top = int(MANIFEST_NAME.match(current).group(1)) if current and MANIFEST_NAME.match(current) else 0
    # manifests past the committed one are a dead writer's: not kept
    manifests = sorted((g, p.name) for p in index_dir.iterdir()
                       if (m := MANIFEST_NAME.match(p.name)) and (g := int(m.group(1))) <= top)
    kept = [name for _, name in manifests[-keep:]]
    if current and current not in kept:
        kept.append(current)
    used: set[str] = set(kept) | {CURRENT, LOCK}
    for name in kept:
        try:
            m = json.loads((index_dir / name).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        used.add(m.get("global", ""))
        used.update(s["name"] for s in m.get("segments", []))
    for entry in index_dir.iterdir():
        if entry.name in used or not is_store_entry(entry.name) or entry.name.startswith("staging-"):
            continue
        remove_entry(entry)


def remove_entry(entry: Path) -> None:
    """Delete a store entry (a directory tree or a file); a symbolic link is unlinked, never
    followed."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)
