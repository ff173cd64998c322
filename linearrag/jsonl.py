"""JSON Lines, split on line feeds only.

``str.splitlines()`` also splits on U+0085, U+2028, U+2029 (and form feeds…), which
``json.dumps(ensure_ascii=False)`` writes raw inside strings: a valid JSONL file holding one
would be cut in the middle of a record. Every JSONL reader of the package uses this helper.
"""

from __future__ import annotations

from collections.abc import Iterator


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number from 1, line) for each non-blank line; a trailing ``\\r`` is dropped."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield lineno, line
