"""A passage (the unit retrieved), its citation, and the fingerprint of a corpus's passages
(links between them are resolved in ``links.py``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

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
    resolved by :func:`links.resolve_links` (raw (text, target) pairs before). ``cite``: where it
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


def fingerprint(passages: list[Passage]) -> str:
    """A SHA-256 over ids, titles and texts: identifies the exact input of a build."""
    h = hashlib.sha256()
    for p in passages:
        for part in (p.id, p.title, p.text):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
    return h.hexdigest()
