"""Readers for PDF and HTML files: text with its provenance (page, heading path).

* PDF (pypdf): the text layer of each page; a file without one (scanned images) yields no
  page, and the caller skips it with a warning.
* HTML (Beautiful Soup, the standard library's parser): the main text — ``<main>``, else
  ``<article>``, else ``<body>`` without navigation, headers, footers, scripts and styles —
  cut into sections at ``<h1>``…``<h6>`` like Markdown (a heading left open ends at its first
  block; a list item or definition holding a ``<pre>`` is read as a container, so its code stays
  code); text outside any block under a heading
  (a bare ``<div>``: Node's "Added in: v10.0.0") is a paragraph, above the first heading it is
  the site's and no text; ``<pre>`` blocks are code, inline
  ``<code>`` is written in backticks so that it becomes a candidate term, a table row reads
  "a | b". A heading's ids (its own, its ``<section>``'s, its links') are what links' fragments
  may name; a heading's link to itself (Sphinx's "¶", Node's "#") is no word of it. The title is
  the ``<h1>``, else the ``<title>`` without the site's name when the first heading says the
  rest ("File system | Node.js v20 Documentation" → "File system").
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import CorpusError
from .htmlparts import BLOCKS, DROP, HEADINGS, PERMALINK, anchor_keys, own_title
from .htmlstream import read_stream
from .markdown import Section
from .mdinline import clean_inline

_INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "mark",
                     "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "tt", "u", "var"})
# blocks read as containers when they hold a code block (Sphinx writes an install step's command
# inside its <li>, an example inside a function's <dd>): the code stays code, as the stream reads it
_HOLDS_CODE = frozenset({"li", "dd", "dt", "blockquote", "figcaption"})
_BLANK_LINES = re.compile(r"\n\s*\n")
TREE_MAX_TAGS = 100_000   # pages with more tags are read as a stream (htmlstream.py)


def read_pdf(path: Path) -> tuple[str, list[tuple[int, str]]]:
    """(document title, [(page number from 1, page text)]) for pages with text."""
    from pypdf import PdfReader   # deferred: only PDF inputs need pypdf
    from pypdf.errors import PdfReadError   # deferred: only PDF inputs need pypdf

    try:
        reader = PdfReader(str(path))
        title = ((reader.metadata or {}).get("/Title") or "").strip() if reader.metadata else ""
        pages = []
        for number, page in enumerate(reader.pages, start=1):
            text = page.extract_text() or ""
            paragraphs = [" ".join(p.split()) for p in _BLANK_LINES.split(text)]
            text = "\n".join(p for p in paragraphs if p)
            if text:
                pages.append((number, text))
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise CorpusError(f"{path}: cannot read this PDF ({type(exc).__name__}: {exc}); check the file") from None
    return title or path.stem, pages


def read_html(text: str, fallback_title: str) -> list[Section]:
    """Sections of an HTML page's main text (see the module docstring). A page with more than
    ``TREE_MAX_TAGS`` tags is read by :func:`htmlstream.read_stream` instead: Beautiful Soup's tree of a
    20 MB page of nested ``<div>`` took 46 s and 1.3 GB."""
    if text.count("<") > TREE_MAX_TAGS:
        return read_stream(text, fallback_title)
    from bs4 import BeautifulSoup   # deferred: only HTML inputs need BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup(DROP):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    for heading in root.find_all(HEADINGS):   # Sphinx's "¶", Node's "#": no words (their ids stay)
        for mark in heading.find_all("a", href=True):
            if mark["href"].startswith("#") and mark.get_text(strip=True).casefold() in PERMALINK:
                mark.clear()
    for code in root.find_all("code"):
        if code.find_parent("pre") is None:
            code.replace_with(f"`{code.get_text()}`")
    _close_headings(root)
    _space_blocks(root)
    h1, first = root.find("h1"), root.find(HEADINGS)
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    # as the headings read (no space where an inline tag or rustdoc's <wbr> splits a name: "_mm512_castph_ps")
    title = ((clean_inline(h1.get_text()) if h1 else "")
             or own_title(page_title, clean_inline(first.get_text()) if first else "") or fallback_title)
    sections = [Section([title])]
    stack: list[tuple[int, str]] = []
    headed = False
    for el in _outer_blocks(root):
        if isinstance(el, tuple):
            # text outside any block under a heading ("<div><span>Added in: v10.0.0</span></div>"); above
            # the first heading such text is the site's ("Skip to content", a version banner)
            if headed:
                sections[-1].add(el[0], links=el[1])
        elif el.name in HEADINGS:
            headed = True
            name = clean_inline(el.get_text())
            level = int(el.name[1])
            anchors = _heading_ids(el, name)
            if level == 1 and name == title and not stack:   # the page's title itself
                sections[0].anchors.extend(anchors)
                continue
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, name or "…"))
            sections.append(Section([title, *(h for _, h in stack)], anchors=anchors))
        elif el.name == "pre":
            body = el.get_text().strip("\n")
            if body.strip():
                sections[-1].add(body, code=True)
        else:
            if el.name == "tr":   # a table row reads "a | b", as Markdown's and reStructuredText's do
                cells = (" ".join(c.get_text().split()) for c in el.find_all(("td", "th"), recursive=False))
                prose = " | ".join(c for c in cells if c)
            else:
                prose = " ".join(el.get_text().split())
            if prose:
                sections[-1].add(prose, links=_link_pairs(el.find_all("a", href=True)))
    return [s for s in sections if s.paragraphs]


def _outer_blocks(root):
    """The blocks of ``root`` that no block holds, in document order, and between them each run
    of text outside any block as (text, links): a run ends where a block or a container (a
    ``<div>``, a list, a table) starts or ends. The text of a block's inner blocks is its own."""
    from bs4 import NavigableString, Tag   # deferred: only HTML inputs need BeautifulSoup

    run: list[str] = []
    anchors: list = []

    def flush():
        text, links = " ".join("".join(run).split()), _link_pairs(anchors)
        run.clear()
        anchors.clear()
        return (text, links) if text else None

    stack = [(iter(root.children), True)]
    while stack:
        node = next(stack[-1][0], None)
        if node is None:
            if stack.pop()[1] and (done := flush()):
                yield done
        elif isinstance(node, Tag):
            if node.name in BLOCKS and not (node.name in _HOLDS_CODE and node.find("pre") is not None):
                if done := flush():
                    yield done
                yield node
                continue
            container = node.name not in _INLINE
            if container and (done := flush()):
                yield done
            if node.name == "a" and node.get("href"):
                anchors.append(node)
            stack.append((iter(node.children), container))
        elif type(node) is NavigableString:   # not a comment, a doctype or a CDATA section
            run.append(str(node))


def _link_pairs(anchors) -> list[tuple[str, str]]:
    """(text, href) of ``<a href>`` elements that show some text."""
    pairs = ((" ".join(a.get_text().split()), a["href"]) for a in anchors)
    return [(t, h) for t, h in pairs if t]


def _close_headings(root) -> None:
    """A heading left open ("<h2>Setup<p>Install…") ends where its first block or container
    starts, as a browser shows it and as the stream reader reads it: Python's parser put the rest
    of the page inside the heading, which became one long title with no text."""
    from bs4 import Tag   # deferred: only HTML inputs need BeautifulSoup

    for heading in root.find_all(HEADINGS):
        inner = next((c for c in heading.children if isinstance(c, Tag) and c.name not in _INLINE), None)
        if inner is None or not "".join(n.get_text() for n in inner.previous_siblings).strip():
            continue   # closed, or every word of it inside its block ("<h2><div>Boxed</div></h2>")
        spot = heading
        for node in [inner, *inner.next_siblings]:
            spot.insert_after(node.extract())
            spot = node


def _space_blocks(root) -> None:
    """Blocks inside a block, and ``<br>``, as a browser shows them: apart. A Sphinx field list
    inside a function's ``<dd>`` read "Run the app.Parameters:speed – how fastReturns:None", and
    ``a<br>b`` read "ab"."""
    for tag in root.find_all(("br", "div", "dl", "ul", "ol", "table", "tr", *BLOCKS)):
        if tag.name == "br":
            tag.replace_with("\n")
        elif tag.find_parent(BLOCKS) is not None:
            tag.insert_before(" ")
            tag.insert_after(" ")


def _heading_ids(heading, name: str) -> list[str]:
    """What links may call a heading (``Section.anchors``): its words as a slug, its own id, the
    id of an ``<a>`` in it, and the id of the ``<section>``/``<div>`` it opens (Sphinx's output)."""
    ids = [heading.get("id")] + [a.get("id") or a.get("name") for a in heading.find_all("a")]
    parent = heading.parent
    if parent is not None and parent.name in ("section", "div") and parent.find(HEADINGS) is heading:
        ids.append(parent.get("id"))
    return anchor_keys(name, ids)


