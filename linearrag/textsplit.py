"""Cutting text of any length into pieces of bounded size, at the most natural places.

A paragraph longer than a passage's budget (a one-line file, a minified page, a long code
block) is cut at line breaks, else at sentence ends, else between words, else anywhere; the
pieces keep the text exactly (only the white space at a cut is dropped). The same cuts feed
NER in pieces far below spaCy's ``max_length``, so no input length reaches it.
"""

from __future__ import annotations

import re

# Preferred cut places, best first; a cut is taken after the last match in the window that
# keeps the piece at least half full (else the next kind is tried).
_CUTS = (re.compile(r"\n"), re.compile(r"[.!?](?=\s)|[。！？．]"), re.compile(r"\s"))


def spans(text: str, max_chars: int) -> list[tuple[int, int]]:
    """(start, end) of pieces of ``text``, each at most ``max_chars`` long, white space at the
    cuts left out; a text that fits is one span."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    out: list[tuple[int, int]] = []
    start, n = _skip_space(text, 0), len(text)
    while n - start > max_chars:
        window = start + max_chars
        cut = next((c for pattern in _CUTS if (c := _last_cut(pattern, text, start + max_chars // 2, window))),
                   window)
        end = cut
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append((start, end))
        start = _skip_space(text, cut)
    end = n
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start or not out:
        out.append((start, end))
    return out


def split_text(text: str, max_chars: int) -> list[str]:
    """The pieces of :func:`spans` as strings."""
    return [text[a:b] for a, b in spans(text, max_chars)]


def _last_cut(pattern: re.Pattern, text: str, lo: int, hi: int) -> int | None:
    cut = None
    for m in pattern.finditer(text, lo, hi):
        cut = m.end()
    return cut


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i].isspace():
        i += 1
    return i
