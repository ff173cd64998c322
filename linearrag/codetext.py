"""Code in a passage's prose: the identifiers written in backticks (candidate terms of the
passage), and the text NER reads, with code blanked at the same offsets."""

from __future__ import annotations

import re

MAX_TERM_CHARS = 60
_INLINE_CODE = re.compile(r"`([^`\n]+)`")


def code_identifiers(text: str) -> list[str]:
    """Identifiers written in backticks in prose (`Depends`, `pip install`), once each, in order."""
    seen: dict[str, None] = {}
    for m in _INLINE_CODE.finditer(text):
        ident = m.group(1).strip()
        if 2 <= len(ident) <= MAX_TERM_CHARS and any(ch.isalpha() for ch in ident):
            seen.setdefault(ident, None)
    return list(seen)


def blank_code(text: str, code_spans: list[tuple[int, int]]) -> str:
    """``text`` with the given spans replaced by spaces (line breaks kept): NER skips them,
    while character offsets stay those of ``text``. Backticks and ``*`` (emphasis) are blanked too."""
    chars = list(text)
    for start, end in code_spans:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars).replace("`", " ").replace("*", " ")
