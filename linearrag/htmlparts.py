"""What both HTML readers share (the tree in ``formats.py``, the stream in ``htmlstream.py``):
the block and heading tags, the elements that hold no page text, a heading's link to itself, a
page's own title and a heading's anchors."""

from __future__ import annotations

import re

from .links import anchor_key

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
BLOCKS = (*HEADINGS, "p", "li", "pre", "blockquote", "tr", "td", "th", "dt", "dd", "figcaption", "caption")
_TITLE_SEPARATOR = re.compile(r"\s+[|–—·:-]\s+")
PERMALINK = frozenset({"", "#", "¶", "§", "🔗", "link", "permalink"})   # a heading's link to itself
DROP = ("script", "style", "nav", "header", "footer", "aside", "noscript", "template", "svg", "form", "button")


def own_title(page_title: str, first_heading: str) -> str:
    """A page's ``<title>`` without the site's name ("File system | Node.js v20 Documentation" →
    "File system") when the page's first heading says the part before it, compared by letters
    and digits (mdBook titles "To panic! or Not to panic! - The Rust Programming Language" over
    the heading "To `panic!` or Not to `panic!`"); else the whole."""
    def plain(text: str) -> str:   # letters and digits: "Test-Driven" is "Test Driven"
        return "".join(ch for ch in text.casefold() if ch.isalnum())

    head = plain(first_heading)
    for m in _TITLE_SEPARATOR.finditer(page_title):
        if head and plain(page_title[:m.start()]) == head:
            return " ".join(first_heading.split())   # as the heading says it: one title, said once
    return page_title


def anchor_keys(name: str, ids) -> list[str]:
    """A heading's anchors: its words as a slug, then each of ``ids`` (empty ones skipped)."""
    keys = [anchor_key(name)] + [anchor_key(i) for i in ids if isinstance(i, str) and i]
    return list(dict.fromkeys(k for k in keys if k != "#"))
