"""Markdown-aware reading: sections by heading, clean prose, code kept out of NER.

What the engine sees of a Markdown file:

* **Sections**: the file is cut at ATX headings (``#`` … ``######``, outside code fences);
  each section's passages carry the heading path as their title ("Smart Pointers ›
  Reference Cycles"). The document title is the first ``#`` heading, else the file name.
* **Clean prose**: link targets, images, HTML comments and tags, reference-link
  definitions, heading anchors (``{ #id }``), include directives (``{* file *}``) and the
  marks of site generators and books (``mdmarks.py``: admonition and fenced-div markers,
  blockquote and task-list marks, citations, cross-references, shortcodes, footnote markers,
  mkdocstrings blocks) are removed; the visible link text stays, a footnote's own text is a
  paragraph where it is written, a content tab's or a GitHub alert's title heads its text
  ("Linux: …"), and a pipe table reads one row per line ("a | b"). This cleaned text is the
  passage text returned to users.
* **Front matter** (a ``---`` YAML block on the first line) is no text; its ``title:`` names a
  document that has no ``#`` heading. Setext headings ("Title" over "===" or "---") are headings,
  rules are no text, a definition list ("Term" over ": Definition") reads "Term: Definition".
* **Anchors**: each heading is what a link's fragment may name (its words as a slug, an
  explicit ``{ #id }``, an old id kept as ``<a id="...">`` above it): ``links.py`` resolves
  links to sections with them; reference links (``[text][label]``) count like inline ones.
* **Books** (mdBook, as the Rust book writes them): a ``<Listing caption="...">`` is its
  caption line ("Listing 15-1: ..."); ``{{#include ...}}`` lines pull in files outside the
  folder and are no text.
* **Code**: fenced code blocks, and indented ones (four spaces after a blank line, outside a
  list item, an admonition, a tab or a footnote, whose indented lines are their text), stay in
  the passage text (BM25 and the embeddings see them) but are blanked in the text given to
  NER; identifiers written in backticks in prose (`Depends`, `HashMap<K, V>`) become candidate
  terms of their passage.

The result is a list of :class:`Section`; ``corpus.py`` turns sections into passages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .links import anchor_key
from .mdinline import clean_inline, heading_anchors, heading_text, link_label, link_pairs
from .mdmarks import AUTODOC, FOOTNOTE_DEF, TAB, TASK, table_line, unquoted

# A code fence, at any indent (list items indent theirs) or on a list item's own line ("- ```"); a
# backtick fence's info string holds no backtick ("``` a ``` b" is inline code).
FENCE = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?(`{3,}(?=[^`]*$)|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_INCLUDE = re.compile(r"\{\*.*?\*\}", re.DOTALL)
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$")
# Block markers with no text of their own: "/// tip", "!!! note", "??? info" (MkDocs), "::: {.callout-note}",
# ":::tip" and a closing ":::" (Pandoc and Quarto fenced divs, Docusaurus admonitions).
_ADMONITION = re.compile(r"^\s*(?:/{3,}.*|!{3}\s+\w+.*|\?{3}\+?\s+\w+.*|:{3,}.*)$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_THEMATIC = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_TOC_ENTRY = re.compile(r"^(?:[-*+]|\d+\.)?\s*(?:[\d.]+\s+)?\[[^\]]*\]\([^)]*\)\s*$")
_DEFINITION = re.compile(r"^\s{0,3}:\s+(\S.*)$")
_FRONT_TITLE = re.compile(r"^title:\s*(.+?)\s*$")
_REF_TARGET = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s+<?([^\s>]+)>?")
_HTML_ANCHOR = re.compile(r'^\s*<a\s+(?:id|name)="([^"]+)"\s*>\s*</a>\s*$', re.IGNORECASE)
_LISTING = re.compile(r"^\s*<Listing\b([^>]*)>\s*$")   # mdBook (the Rust book): a numbered, captioned listing
_ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')
_BOOK_INCLUDE = re.compile(r"^\s*\{\{#\w+[^}]*\}\}\s*$")   # mdBook: {{#include ../listings/x.rs}}
# What indents its own text: a list item, an admonition ("!!! note"), a content tab, a footnote, a
# definition. Four spaces below one continue it; elsewhere they open an indented code block.
_NESTS = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])(?:\s|$)|!{3}|\?{3}|={3}|\[\^[^\]\s]+\]:|:\s)")
# A heading is one short line: a longer line starting with "#" (a one-line file, a hashtag-led
# paragraph) is read as text, never as a heading that swallows the document.
MAX_HEADING_CHARS = 300


@dataclass
class Section:
    """A run of a Markdown (or HTML) file under one heading path."""

    path: list[str]                      # headings from the document title down
    paragraphs: list[str] = field(default_factory=list)   # cleaned text; a code block is one paragraph
    code: list[bool] = field(default_factory=list)         # per paragraph: a fenced code block?
    links: list[list[tuple[str, str]]] = field(default_factory=list)  # per paragraph: (link text, target)
    # what links may name this section by: "#id" (a fragment of its file: the heading's slug, an
    # explicit "{ #id }") and "ref:label" (a label of the whole project: Sphinx/MyST targets)
    anchors: list[str] = field(default_factory=list)

    def add(self, paragraph: str, code: bool = False, links: list[tuple[str, str]] | None = None) -> None:
        self.paragraphs.append(paragraph)
        self.code.append(code)
        self.links.append(list(links or []))


def _indent(line: str) -> int:
    """The columns of white space a line opens with (a tab to the next multiple of four)."""
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def _heading(line: str) -> re.Match | None:
    return _HEADING.match(line) if len(line) <= MAX_HEADING_CHARS else None


def is_table_of_contents(text: str) -> bool:
    """Whether a Markdown file is a book's table of contents (mdBook's and GitBook's
    ``SUMMARY.md``): nearly every line of it (headings, rules and blanks aside) a link, bare or
    in a list item. Like Sphinx's ``toctree`` it names every chapter and says nothing itself."""
    lines = [line.strip() for line in _COMMENT.sub("", text).split("\n")]
    lines = [line for line in lines if line and not _heading(line) and not _THEMATIC.match(line)]
    links = sum(1 for line in lines if _TOC_ENTRY.match(line))
    return len(lines) >= 3 and links >= 0.8 * len(lines)


def front_matter(text: str) -> tuple[str, str]:
    """(its ``title:``, the text with the block blanked) for a document that opens with YAML
    front matter (``---`` … ``---`` or ``...``, as Jekyll, Hugo, Docusaurus and MkDocs write it);
    ("", text) otherwise. Blank lines stand in for the block, so line numbers stay those of the file."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return "", text
    end = next((k for k in range(1, len(lines)) if lines[k].rstrip() in ("---", "...")), None)
    if end is None:
        return "", text
    title = next((m.group(1).strip().strip("'\"") for line in lines[1:end] if (m := _FRONT_TITLE.match(line))), "")
    return clean_inline(title), "\n" * end + "\n" + "\n".join(lines[end + 1:])


def document_title(text: str, fallback: str) -> str:
    """The first level-1 heading (cleaned), else the front matter's ``title:``, else ``fallback``."""
    fallback = front_matter(text)[0] or fallback
    in_fence = False
    previous = ""
    for line in text.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _heading(line)
            raw = m.group(2) if m and len(m.group(1)) == 1 else \
                previous if previous.strip() and re.match(r"^\s{0,3}=+\s*$", line) else ""
            title = heading_text(raw) if raw else ""
            if title:
                return title
        previous = line if not in_fence and not _heading(line) else ""
    return fallback


def read_sections(text: str, fallback_title: str) -> list[Section]:
    """Split a Markdown document into cleaned sections (see the module docstring)."""
    title = document_title(text, fallback_title)
    text = _INCLUDE.sub("", _COMMENT.sub("", front_matter(text)[1]))
    reader = _Reader(title, reference_targets(text))
    for line in text.split("\n"):
        reader.line(line)
    return reader.finish()


class _Reader:
    """The state of one pass over a Markdown document's lines (:func:`read_sections`)."""

    def __init__(self, title: str, refs: dict[str, str]):
        self.title, self.refs = title, refs
        self.sections = [Section([title])]
        self.stack: list[tuple[int, str]] = []   # (level, heading) below the title
        self.para: list[str] = []
        self.fence: str | None = None
        self.code: list[str] = []
        self.pending: list[str] = []             # "<a id>" anchors waiting for the heading below them
        self.prefix = ""                         # a tab's or an alert's title, for the paragraph below it
        self.autodoc = False                     # inside an mkdocstrings block (its indented options)
        self.indented: list[str] | None = None   # the lines of an indented code block
        self.nests = False                       # the block above indents its own text (_NESTS)

    def flush(self) -> None:
        if self.para:
            cleaned = clean_inline(" ".join(self.para))
            if cleaned:
                self.sections[-1].add(cleaned, links=link_pairs(" ".join(self.para), self.refs))
            self.para.clear()

    def end_indented(self) -> None:
        lines, self.indented = self.indented or [], None
        while lines and not lines[-1].strip():
            lines.pop()
        if lines:
            self.sections[-1].add("\n".join(line.expandtabs(4)[4:] for line in lines), code=True)

    def finish(self) -> list[Section]:
        self.flush()
        self.end_indented()
        if self.fence is not None and self.code:   # an unclosed fence: keep what it held
            self.sections[-1].add("\n".join(self.code), code=True)
        return [s for s in self.sections if s.paragraphs]

    def code_line(self, line: str) -> bool:
        """Whether ``line`` opens, continues or closes a code block (fenced, or indented four
        spaces after a blank line where no block above indents its own text: :data:`_NESTS`)."""
        if self.fence is not None:
            if line.strip().startswith(self.fence):
                body = "\n".join(self.code).strip("\n")
                if body.strip():
                    self.sections[-1].add(body, code=True)
                self.fence, self.code = None, []
            elif not _BOOK_INCLUDE.match(line):   # a file the book pulls in: never read, no text
                self.code.append(line)
            return True
        blank, indent = not line.strip(), _indent(line)
        if self.indented is not None:
            if blank or indent >= 4:
                self.indented.append(line)
                return True
            self.end_indented()
        fence = FENCE.match(line)
        if fence:
            self.flush()
            self.fence = fence.group(1)
            return True
        if blank:
            return False
        if indent < 4:
            if _NESTS.match(line):
                self.nests = True
            elif indent == 0 and not self.para:   # a paragraph of its own ends the list above
                self.nests = False
            return False
        if not self.para and not self.nests and not self.autodoc:
            self.indented = [line]
            return True
        return False

    def line(self, line: str) -> None:
        if self.code_line(line):
            return
        heading = _heading(line)
        setext = _SETEXT.match(line) if len(self.para) == 1 and not heading else None
        if heading or setext:          # "# Title", or "Title" over a line of "=" (level 1) or "-" (2)
            if setext:
                self.heading(1 if setext.group(1)[0] == "=" else 2, self.para.pop())
            else:
                self.flush()
                self.heading(len(heading.group(1)), heading.group(2))
            return
        if _HTML_ANCHOR.match(line):   # an old heading's id kept for links ("<a id=...></a>")
            self.flush()
            self.pending.append(anchor_key(_HTML_ANCHOR.match(line).group(1)))
            return
        if self.autodoc and (not line.strip() or line[:1].isspace()):
            return
        self.autodoc = False
        if AUTODOC.match(line):        # API reference generated from code not in the folder, as Sphinx's auto*
            self.flush()
            self.autodoc = True
            return
        tab = TAB.match(line)
        if tab:                        # a content tab's title heads its text: "Linux: Install with apt."
            self.flush()
            self.prefix = f"{tab.group(1).strip()}:" if tab.group(1).strip() else ""
            return
        line, alert = unquoted(line)
        if alert:                      # "> [!NOTE]" (a GitHub alert) heads the text below it
            self.flush()
            self.prefix = alert
        line = TASK.sub(r"\1", line)
        note = FOOTNOTE_DEF.match(line)
        if note:                       # a footnote is text of its own: a paragraph, its marker dropped
            self.flush()
            line = note.group(1)
            if not line.strip():
                return
        elif (not line.strip() or _ADMONITION.match(line) or _REF_DEF.match(line) or _BOOK_INCLUDE.match(line)
                or _THEMATIC.match(line) or _SETEXT.match(line)):   # a rule ("***", "---"): no text
            self.flush()
            return
        if self.pending:               # text came first: the anchor names this section
            self.sections[-1].anchors.extend(self.pending)
            self.pending = []
        if _LISTING.match(line):
            self.flush()
            caption = listing_caption(_LISTING.match(line).group(1))
            if caption:
                self.sections[-1].add(caption)
            return
        definition = _DEFINITION.match(line)
        if definition and self.para:   # "Term" over ": Definition" (a definition list): "Term: Definition"
            self.para[-1] = self.para[-1].rstrip().rstrip(":") + ":"
            line = definition.group(1)
        row = table_line(line)
        if row is not None:            # a table row is a line of its own ("a | b"); its header rule no text
            self.flush()
            if row:
                self.para.append(row)
                self.flush()
            return
        if self.prefix and not self.para:
            line, self.prefix = f"{self.prefix} {line.strip()}", ""
        self.para.append(line.strip())

    def heading(self, level: int, raw: str) -> None:
        self.nests = False
        name = heading_text(raw)
        anchors = heading_anchors(raw, name) + self.pending
        self.pending = []
        if level == 1 and not self.stack and name == self.title and not any(s.paragraphs for s in self.sections):
            self.sections[0].anchors.extend(anchors)   # the document title itself
            return
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, name or "…"))
        self.sections.append(Section([self.title, *(h for _, h in self.stack)], anchors=anchors))


def reference_targets(text: str) -> dict[str, str]:
    """The reference-link definitions of a document (``[label]: target``, outside code), by
    label as Markdown compares them (case and white space ignored); the first one counts."""
    out: dict[str, str] = {}
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            fence = None if line.strip().startswith(fence) else fence
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            continue
        d = _REF_TARGET.match(line)
        if d and not d.group(1).startswith("^"):   # "[^1]: text" is a footnote, no link target
            out.setdefault(link_label(d.group(1)), d.group(2))
    return out


def listing_caption(attributes: str) -> str:
    """An mdBook ``<Listing number="15-1" caption="...">`` as its visible caption line
    ("Listing 15-1: Storing an `i32` value on the heap using a box"); "" without a caption."""
    attrs = dict(_ATTRIBUTE.findall(attributes))
    caption = clean_inline(attrs.get("caption", ""))
    if not caption:
        return ""
    return f"Listing {attrs['number']}: {caption}" if attrs.get("number") else caption
