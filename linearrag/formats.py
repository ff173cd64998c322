"""Readers for PDF and HTML files: text with its provenance (page, heading path).

* PDF (pypdf): the text layer of each page; a file without one (scanned images) yields no
  page, and the caller skips it with a warning.
* HTML (Beautiful Soup, the standard library's parser): the main text — ``<main>``, else
  ``<article>``, else ``<body>`` without navigation, headers, footers, scripts and styles —
  cut into sections at ``<h1>``…``<h6>`` like Markdown; ``<pre>`` blocks are code, inline
  ``<code>`` is written in backticks so that it becomes a candidate term.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import CorpusError
from .markdown import Section, clean_inline

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = (*_HEADINGS, "p", "li", "pre", "blockquote", "td", "th", "dt", "dd", "figcaption", "caption")
_DROP = ("script", "style", "nav", "header", "footer", "aside", "noscript", "template", "svg", "form", "button")
_BLANK_LINES = re.compile(r"\n\s*\n")


def read_pdf(path: Path) -> tuple[str, list[tuple[int, str]]]:
    """(document title, [(page number from 1, page text)]) for pages with text."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

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
    """Sections of an HTML page's main text (see the module docstring)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup(_DROP):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    for code in root.find_all("code"):
        if code.find_parent("pre") is None:
            code.replace_with(f"`{code.get_text()}`")
    h1 = root.find("h1")
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    title = (h1.get_text(" ", strip=True) if h1 else "") or page_title or fallback_title
    sections = [Section([title])]
    stack: list[tuple[int, str]] = []
    for el in root.find_all(_BLOCKS):
        if el.find_parent(_BLOCKS) is not None:
            continue   # its text belongs to the enclosing block
        if el.name in _HEADINGS:
            name = clean_inline(el.get_text())
            level = int(el.name[1])
            if level == 1 and name == title and not stack and not sections[-1].paragraphs:
                continue
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, name or "…"))
            sections.append(Section([title, *(h for _, h in stack)]))
        elif el.name == "pre":
            body = el.get_text().strip("\n")
            if body.strip():
                sections[-1].add(body, code=True)
        else:
            prose = " ".join(el.get_text().split())
            if prose:
                links = [(" ".join(a.get_text().split()), a["href"]) for a in el.find_all("a", href=True)]
                sections[-1].add(prose, links=[(t, h) for t, h in links if t])
    return [s for s in sections if s.paragraphs]
