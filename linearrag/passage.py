"""A passage (the unit retrieved), and what is computed over a corpus's passages: links
between documents resolved to titles, and the input's fingerprint."""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

HEADING_SEPARATOR = " › "
# The label of a passage term that names its section for links ("#slug", "ref:label"); no entity.
ANCHOR = "ANCHOR"


@dataclass(frozen=True)
class Citation:
    """Where a passage comes from, for a reader to open: ``file`` (relative to the input root,
    ``/``-separated; for a JSONL/JSON corpus the corpus file), ``lines`` ((first, last), 1-based,
    inclusive; for a PDF, lines of the page's text layer), ``section`` (the heading path, or a
    record's title) and ``page`` (PDF only, from 1)."""

    file: str
    lines: tuple[int, int] | None = None
    section: str = ""
    page: int | None = None

    def to_json(self) -> dict:
        out = {"file": self.file, "lines": list(self.lines) if self.lines else None, "section": self.section}
        if self.page is not None:
            out["page"] = self.page
        return out

    @classmethod
    def from_json(cls, d: dict) -> Citation:
        lines = d.get("lines")
        return cls(file=d["file"], lines=(int(lines[0]), int(lines[1])) if lines else None,
                   section=d.get("section") or "", page=d.get("page"))

    @classmethod
    def guessed(cls, passage_id: str, title: str) -> Citation:
        """The citation of a passage stored without one (an index built before citations):
        the file its id names, the title as the section, no lines."""
        return cls(file=passage_id.rsplit("#", 1)[0] if "#" in passage_id else "", section=title)


@dataclass(frozen=True)
class Passage:
    """One retrievable unit: a stable id, a title (may be empty) and the text.

    ``title_is_name``: the title names the passage's subject (a record's title) and is an
    entity of it; a file path is not. ``title_in_text``: the title is read with the text
    even when it is no name (a Markdown heading path). ``ner_text``: the text as NER sees
    it, same length as ``text`` (code blanked), None = the text. ``terms``: extra entities
    of the passage as ``(surface, label)``: ``HEADING`` (about the whole passage, like a
    title), ``CODE`` (an identifier, linked to the sentences that contain it) or :data:`ANCHOR`
    (a name links give its section; no entity). ``links``:
    links to other documents or sections of the corpus as (visible text, their title), once
    resolved by :func:`resolve_links` (raw (text, target) pairs before). ``cite``: where it
    comes from (:class:`Citation`), None when the reader could not say.
    """

    id: str
    title: str
    text: str
    title_is_name: bool = True
    title_in_text: bool = False
    ner_text: str | None = None
    terms: tuple[tuple[str, str], ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    cite: Citation | None = None

    @property
    def _prefix(self) -> str:
        if self.title and (self.title_is_name or self.title_in_text) and not self.text.startswith(self.title):
            return f"{self.title}\n"
        return ""

    @property
    def full_text(self) -> str:
        """What the embeddings see: the title, then the text."""
        return self._prefix + self.text

    @property
    def analysis_text(self) -> str:
        """What NER sees: like :attr:`full_text`, with code blanked (same length and offsets)."""
        return self._prefix + (self.ner_text if self.ner_text is not None else self.text)

    @property
    def title_line(self) -> bool:
        """True when the analysed text starts with the title on a line of its own."""
        return bool(self._prefix)


def anchor_key(fragment: str) -> str:
    """A fragment as links and headings are compared: lower case, letters and digits only, so
    that every slug style (GitHub's, Python-Markdown's, an explicit id) meets the heading's words."""
    return "#" + "".join(ch for ch in fragment.casefold() if ch.isalnum())


def resolve_links(passages: list[Passage]) -> list[Passage]:
    """Turn each passage's raw links (visible text, target) into links to documents of the
    corpus: (visible text, the title of the target document, or of the target section when the
    link names one). A relative path (``../b.md#part``, ``b``, ``guide/``) resolves against the
    linking file, its fragment against the headings of that file (:data:`ANCHOR` terms); a
    Sphinx/MyST label (``ref:label``) against the labels of every file; a wiki link ``[[Name]]``
    matches a document title or file name. Links to anything else (web pages, missing files,
    unknown labels) are dropped, and so is a link to the passage's own section."""
    doc_title: dict[str, str] = {}
    by_name: dict[str, str] = {}
    anchors: dict[tuple[str, str], str] = {}   # (document, "#key") → heading
    labels: dict[str, tuple[str, str]] = {}    # "ref:label" → (document, heading)
    for p in passages:
        doc = p.id.rsplit("#", 1)[0]
        if doc not in doc_title:
            doc_title[doc] = p.title.split(HEADING_SEPARATOR)[0]
            by_name.setdefault(doc_title[doc].casefold(), doc_title[doc])
            by_name.setdefault(Path(doc).stem.casefold(), doc_title[doc])
        heading = _own_heading(p)
        for surface, label in p.terms:
            if label == ANCHOR and surface.startswith("ref:"):
                labels.setdefault(surface, (doc, heading))
            elif label == ANCHOR:
                anchors.setdefault((doc, surface), heading)
    out = []
    for p in passages:
        if not p.links:
            out.append(p)
            continue
        doc = p.id.rsplit("#", 1)[0]
        resolved = []
        for text, target in p.links:
            if target.startswith("wiki:"):
                where = (None, by_name.get(target[5:].strip().casefold()))
            elif target.startswith("ref:"):
                where = labels.get(target, (None, None))
            else:
                where = _resolve_path(doc, target, doc_title, anchors)
            to_doc, title = where
            if title and (to_doc, title) != (doc, _own_heading(p)) and title != doc_title[doc]:
                resolved.append((text, title))
        out.append(replace(p, links=tuple(dict.fromkeys(resolved))))
    return out


def _own_heading(p: Passage) -> str:
    """The heading of the passage's section (its first ``HEADING`` term), else its title's last part."""
    return next((s for s, label in p.terms if label == "HEADING"), p.title.split(HEADING_SEPARATOR)[-1])


def _resolve_path(doc: str, target: str, doc_title: dict[str, str],
                  anchors: dict[tuple[str, str], str]) -> tuple[str | None, str | None]:
    """(document, title) a path link names: the heading its fragment names, else the document's title."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
        return None, None   # a URL or mailto:
    path_part, _, fragment = target.partition("#")
    if path_part:
        base = "" if target.startswith("/") else posixpath.dirname(doc)   # "/x": from the input root (Sphinx :doc:)
        path = posixpath.normpath(posixpath.join(base, unquote(path_part.lstrip("/"))))
        found = next((c for c in (path, f"{path}.md", f"{path}/index.md", f"{path}.rst", f"{path}/index.rst",
                                  f"{path}.html", f"{path}/index.html") if c in doc_title), None)
    else:
        found = doc   # an in-page anchor
    if found is None:
        return None, None
    heading = anchors.get((found, anchor_key(unquote(fragment)))) if fragment else None
    return found, heading or (doc_title[found] if path_part else None)


def fingerprint(passages: list[Passage]) -> str:
    """A SHA-256 over ids, titles and texts: identifies the exact input of a build."""
    h = hashlib.sha256()
    for p in passages:
        for part in (p.id, p.title, p.text):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
    return h.hexdigest()
