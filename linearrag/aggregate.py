"""Pages that only gather other pages, as mdBook's ``print.html`` gathers every chapter. Read with
the rest, every passage of such a page is a second copy of one of another page (the rendered
Rust book: 1,795 of its 3,678 passages were ``print.html``'s), which doubles the build for no
word of its own. A page is an aggregate when every one of its
passages (``AGGREGATE_MIN_PASSAGES`` or more) has its text, spacing folded, in another file, and
they come from at least ``AGGREGATE_MIN_SOURCES`` files: skipping it loses no word. A chapter page
copied once into ``print.html``, or a folder kept twice (``v1/``, ``v2/``), shares with one file
only and stays; npm's ``npm-install-test.md`` shares 37 of its 40 passages (the settings sections
every command page repeats) and stays, as its synopsis is its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

AGGREGATE_MIN_PASSAGES = 10
AGGREGATE_MIN_SOURCES = 3


def aggregate_pages(texts_by_file: Sequence[Sequence[str]]) -> set[int]:
    """The positions of the files (each given as its passages' texts) that only gather others."""
    keys = [[" ".join(text.split()) for text in texts] for texts in texts_by_file]
    owners: dict[str, set[int]] = defaultdict(set)
    for k, file_keys in enumerate(keys):
        for key in file_keys:
            owners[key].add(k)
    out = set()
    for k, file_keys in enumerate(keys):
        if len(file_keys) < AGGREGATE_MIN_PASSAGES:
            continue
        elsewhere = [owners[key] - {k} for key in file_keys]
        shared = sum(1 for files in elsewhere if files)
        if shared == len(file_keys) and len(set().union(*elsewhere)) >= AGGREGATE_MIN_SOURCES:
            out.add(k)
    return out
