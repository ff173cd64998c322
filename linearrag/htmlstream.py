"""An HTML page too large for a tree, read as a stream of tags (``formats.read_html`` hands it
pages of over ``TREE_MAX_TAGS`` tags): the same sections as the tree reader, in memory
proportional to the text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from .htmlparts import BLOCKS, DROP, HEADINGS, PERMALINK, anchor_keys, own_title
from .markdown import Section
from .mdinline import clean_inline


class StreamReader(HTMLParser):
    """A large or deeply nested page read as a stream of tags (no tree: memory is the text,
    any depth), to the same sections as the tree: text outside dropped elements, cut into
    paragraphs at block tags and into sections at headings, a table row read "a | b", links and
    heading ids kept; ``<pre>`` is code. Of the page, the first ``<main>`` is read, else the
    first ``<article>``, else the ``<body>``, as the tree chooses (:func:`read_stream`)."""

    _BREAKS = frozenset(BLOCKS) | {"div", "section", "article", "main", "hr", "tr", "ul", "ol", "table",
                                   "body"}
    _VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source",
                       "track", "wbr"})

    def __init__(self, fallback_title: str, root: str | None = None):
        super().__init__(convert_charrefs=True)
        self.fallback = fallback_title
        self.root = root                  # the element whose text is read ("main", "article"), None: all
        self.inside = root is None
        self.depth = 0                    # open root elements (one inside another)
        self.seen_root = False
        self.sections = [Section([fallback_title])]
        self.stack: list[tuple[int, str]] = []
        self.skipping = 0          # depth inside dropped elements
        self.buffer: list[str] = []
        self.mode = ""             # "", "pre", "heading:N", "title"
        self.page_title = ""
        self.first_heading = ""
        self.first_h1: str | None = None
        self.mark_at: int | None = None   # where a heading's link to itself began in the buffer
        self.link: tuple[int, str] | None = None        # (buffer position, href) of an open <a>
        self.links: list[tuple[str, str]] = []          # the current paragraph's (text, href)
        self.row: list[str] | None = None               # the cells of an open table row
        self.ids: list[str] = []                        # the open heading's ids (its own, its links')
        self.heading_section = ""                       # and the id of the <section>/<div> it opens
        self.section_id: str | None = None              # a <section>/<div> id its first heading takes
        self.in_blocks = 0                              # open block elements (<p>, <li>, …)
        self.headed = False                             # a heading has begun

    def read(self, text: str) -> list[Section]:
        for start in range(0, len(text), 1 << 16):
            self.feed(text[start:start + (1 << 16)])
        self.close()
        self._end_row()
        self._flush()
        title = self.first_h1 or own_title(self.page_title, self.first_heading) or self.fallback
        for section in self.sections:
            section.path[0] = title
        return [s for s in self.sections if s.paragraphs]

    def handle_starttag(self, tag, attrs):
        if not self.inside:               # outside the main text only the page's <title> is read
            if tag == self.root and not self.seen_root:
                self.inside, self.seen_root, self.depth = True, True, 1
            elif tag == "title":
                self.mode = "title"
            return
        if tag == self.root:
            self.depth += 1
        if tag in DROP:
            if tag not in self._VOID:
                self.skipping += 1
            return
        if self.skipping:
            return
        attrs = dict(attrs)
        if tag in BLOCKS:
            self.in_blocks += 1
        if tag in ("section", "div"):
            self.section_id = attrs.get("id")
        if tag == "title":
            self.mode = "title"
        elif tag == "br":                     # a line break, as the tree reads it: apart, same paragraph
            self.buffer.append("\n" if self.mode == "pre" else " ")
        elif tag == "tr":
            self._start_row()
        elif self.row is not None and tag in ("td", "th"):
            self._cell()
        elif self.row is not None and tag in self._BREAKS:
            self.buffer.append(" ")           # a block inside a cell stays in the cell
        elif tag in HEADINGS or tag == "pre" or tag in self._BREAKS:
            self._flush()
            if tag in HEADINGS:
                self.mode, self.headed = f"heading:{tag[1]}", True
                self.ids, self.heading_section = [attrs.get("id") or ""], self.section_id or ""
                self.section_id = None
            elif tag == "pre":
                self.mode = "pre"
        elif tag == "code" and self.mode != "pre":
            self.buffer.append("`")
        elif tag == "a":
            href = attrs.get("href") or ""
            if self.mode.startswith("heading:"):
                self.ids.append(attrs.get("id") or attrs.get("name") or "")
                if href.startswith("#"):
                    self.mark_at = len(self.buffer)
            elif href and self.mode not in ("pre", "title"):
                self.link = (len(self.buffer), href)

    def handle_endtag(self, tag):
        if not self.inside and not (tag == "title" and self.mode == "title"):
            return
        if tag == self.root:
            self.depth -= 1
            if self.depth == 0:           # the first one only, as the tree's find() takes it
                self._flush()
                self.inside = False
                return
        if tag in DROP:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.skipping:
            return
        if tag in BLOCKS:
            self.in_blocks = max(0, self.in_blocks - 1)
        if tag == "title" and self.mode == "title":
            self.page_title = " ".join("".join(self.buffer).split())
            self.buffer, self.mode = [], ""
        elif tag == "code" and self.mode != "pre":
            self.buffer.append("`")
        elif tag == "a" and self.mark_at is not None:
            if "".join(self.buffer[self.mark_at:]).strip().casefold() in PERMALINK:
                del self.buffer[self.mark_at:]
            self.mark_at = None
        elif tag == "a" and self.link is not None:
            words = " ".join("".join(self.buffer[self.link[0]:]).split())
            if words:
                self.links.append((words, self.link[1]))
            self.link = None
        elif tag in ("tr", "table") and self.row is not None:
            self._end_row()
        elif self.row is not None and tag in self._BREAKS:
            self.buffer.append(" ")
        elif tag in HEADINGS or tag == "pre" or tag in self._BREAKS:
            self._flush()

    def handle_data(self, data):
        # text outside any block above the first heading is the site's, as for the tree
        if (self.inside or self.mode == "title") and not self.skipping and (self.headed or self.in_blocks
                                                                             or self.mode):
            self.buffer.append(data)

    def _start_row(self) -> None:
        self._end_row()
        self._flush()
        self.row = []

    def _cell(self) -> None:
        """The text before a cell opens ends the cell before it."""
        cell = " ".join("".join(self.buffer).split())
        if cell:
            self.row.append(cell)
        self.buffer = []

    def _end_row(self) -> None:
        if self.row is None:
            return
        self._cell()
        prose, self.row = " | ".join(self.row), None
        if prose:
            self.sections[-1].add(prose, links=self.links)
        self.links = []

    def _flush(self) -> None:
        text, mode, links = "".join(self.buffer), self.mode, self.links
        self.buffer, self.mode, self.links, self.link = [], "" if mode != "title" else mode, [], None
        if mode.startswith("heading:"):
            name, level = clean_inline(text), int(mode.split(":")[1])
            if not name:
                return
            anchors = anchor_keys(name, (*self.ids, self.heading_section))
            if level == 1 and self.first_h1 is None:
                self.first_h1 = name
                if not self.stack:   # the page's title itself
                    self.sections[0].anchors.extend(anchors)
                    return
            while self.stack and self.stack[-1][0] >= level:
                self.stack.pop()
            self.stack.append((level, name))
            self.first_heading = self.first_heading or name
            self.sections.append(Section([self.fallback, *(h for _, h in self.stack)], anchors=anchors))
        elif mode == "pre":
            if text.strip():
                self.sections[-1].add(text.strip("\n"), code=True)
        elif " ".join(text.split()):
            self.sections[-1].add(" ".join(text.split()), links=links)


def read_stream(text: str, fallback_title: str) -> list[Section]:
    """Sections of a page read as a stream, from the element the tree reader would choose: the
    first ``<main>``, else the first ``<article>``, else the whole page. A tag name found only in
    a script or a comment is no element: the page is then read whole."""
    for root in ("main", "article"):
        if re.search(rf"<{root}[\s>]", text, re.IGNORECASE):
            reader = StreamReader(fallback_title, root)
            sections = reader.read(text)
            if reader.seen_root:
                return sections
    return StreamReader(fallback_title).read(text)
