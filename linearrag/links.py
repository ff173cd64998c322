"""Links between the documents of a corpus, resolved to the titles whose entities the graph joins.

A reader keeps each link raw, as (visible text, target): a relative path with an optional
fragment (``../b.md#part``), a Sphinx/MyST label (``ref:label``), a wiki link (``wiki:Name``)
or a URL. :func:`resolve_links` turns the ones that name a document or a section of the corpus
into (visible text, title): the document's title, or the heading of the section the fragment or
label names (each section's :data:`~passage.ANCHOR` terms say what links may call it). A link
to a built page (``ch15-01-box.html``, as mdBook books and Sphinx write them) means its source
file. A URL counts when it points into the project's own published site: a host whose links'
paths are documents of the corpus, several different ones, for most of its links
(``https://fastapi.tiangolo.com/tutorial/body/`` in the FastAPI docs is ``tutorial/body.md``).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .passage import ANCHOR, HEADING_SEPARATOR, Passage

# A host is the corpus's own site when its links reach at least this many documents of the
# corpus by their path, and at least half of its links do.
OWN_SITE_LINKS = 3


def label_id(label: str) -> str:
    """A Sphinx/MyST label as a Markdown link target or a ``{#id}`` can hold it: labels may have
    spaces ("pip download", "Hash-checking mode"), written ``%20`` (:func:`label_text` reads them
    back)."""
    return "%20".join(label.split())


def label_text(label: str) -> str:
    """A label as written, from :func:`label_id`'s form: spaces back, spacing folded."""
    return " ".join(unquote(label).split())


def anchor_key(fragment: str) -> str:
    """A fragment as links and headings are compared: lower case, letters and digits only, so
    that every slug style (GitHub's, Python-Markdown's, an explicit id) meets the heading's words."""
    return "#" + "".join(ch for ch in fragment.casefold() if ch.isalnum())


def resolve_links(passages: list[Passage]) -> list[Passage]:
    """Each passage with its raw links replaced by (visible text, title) links to documents or
    sections of the corpus (module docstring). A relative path resolves against the linking
    file, its fragment against the headings of the target file; a label against the labels of
    every file; a wiki link matches a document title or file name; a URL of the corpus's own
    site resolves as its path from the input root. Links to anything else (other web pages,
    missing files, unknown labels) are dropped, and so is a link to the passage's own section."""
    corpus = _Corpus(passages)
    out = []
    for p in passages:
        if not p.links:
            out.append(p)
            continue
        doc, own = _doc(p), (_doc(p), _own_heading(p))
        resolved = []
        for text, target in p.links:
            to_doc, title = corpus.resolve(doc, target)
            if title and (to_doc, title) != own and title != corpus.doc_title[doc]:
                resolved.append((text, title))
        out.append(replace(p, links=tuple(dict.fromkeys(resolved))))
    return out


class _Corpus:
    """What links can name: documents (by path, title, file name), sections (by fragment or label)."""

    def __init__(self, passages: list[Passage]):
        self.doc_title: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self.anchors: dict[tuple[str, str], str] = {}   # (document, "#key") → heading
        self.labels: dict[str, tuple[str, str]] = {}    # "ref:label" → (document, heading)
        for p in passages:
            doc = _doc(p)
            if doc not in self.doc_title:
                self.doc_title[doc] = p.title.split(HEADING_SEPARATOR)[0]
                self.by_name.setdefault(self.doc_title[doc].casefold(), self.doc_title[doc])
                self.by_name.setdefault(Path(doc).stem.casefold(), self.doc_title[doc])
            heading = _own_heading(p)
            for surface, label in p.terms:
                if label == ANCHOR and surface.startswith("ref:"):
                    self.labels.setdefault(surface, (doc, heading))
                elif label == ANCHOR:
                    self.anchors.setdefault((doc, surface), heading)
        self.own_sites = self._own_sites(target for p in passages for _, target in p.links)

    def resolve(self, doc: str, target: str) -> tuple[str | None, str | None]:
        """(document, title) that ``target``, linked from ``doc``, names; (None, None) for nothing."""
        if target.startswith("wiki:"):
            return None, self.by_name.get(target[5:].strip().casefold())
        if target.startswith("ref:"):   # labels compare in lower case, as Sphinx's do
            return self.labels.get(f"ref:{label_text(target[4:]).casefold()}", (None, None))
        site_path = _site_path(target)
        if site_path is not None:
            return self.path(doc, site_path[1]) if site_path[0] in self.own_sites else (None, None)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            return None, None   # another URL scheme, mailto:
        return self.path(doc, target)

    def path(self, doc: str, target: str) -> tuple[str | None, str | None]:
        """(document, title) a path names: the heading its fragment names, else the document's title."""
        path_part, _, fragment = target.partition("#")
        if path_part:
            base = "" if target.startswith("/") else posixpath.dirname(doc)   # "/x": from the input root
            path = posixpath.normpath(posixpath.join(base, unquote(path_part.lstrip("/"))))
            found = next((c for c in _candidates(path) if c in self.doc_title), None)
        else:
            found = doc   # an in-page anchor
        if found is None:
            return None, None
        heading = self.anchors.get((found, anchor_key(unquote(fragment)))) if fragment else None
        return found, heading or (self.doc_title[found] if path_part else None)

    def _own_sites(self, targets) -> set[str]:
        """Hosts whose links mostly point at documents of the corpus (:data:`OWN_SITE_LINKS`)."""
        total, hits, docs = Counter(), Counter(), defaultdict(set)
        for target in targets:
            site_path = _site_path(target)
            if site_path is None:
                continue
            host, path = site_path
            total[host] += 1
            found = self.path("", path.split("#", 1)[0])[0] if path.strip("/#") else None
            if found is not None:
                hits[host] += 1
                docs[host].add(found)
        return {host for host, n in hits.items() if len(docs[host]) >= OWN_SITE_LINKS and 2 * n >= total[host]}


def _candidates(path: str) -> tuple[str, ...]:
    """The files a link path may mean: itself, with a source suffix, an index page; a built page
    (``ch15-01-box.html``, as mdBook and Sphinx link) also its source (``ch15-01-box.md``)."""
    out = (path, f"{path}.md", f"{path}/index.md", f"{path}.mdx", f"{path}/index.mdx", f"{path}.rst",
           f"{path}/index.rst", f"{path}.html", f"{path}/index.html")
    stem, dot, suffix = path.rpartition(".")
    if dot and suffix.lower() in ("html", "htm"):
        out += (f"{stem}.md", f"{stem}.mdx", f"{stem}.rst", f"{stem}.ipynb")
    return out


def _site_path(target: str) -> tuple[str, str] | None:
    """(host, "/path#fragment") of an http(s) URL; None for anything else."""
    if not re.match(r"^https?://", target, re.IGNORECASE):
        return None
    parts = urlsplit(target)
    path = "/" + parts.path.strip("/")
    return parts.netloc.casefold(), path + (f"#{parts.fragment}" if parts.fragment else "")


def _doc(p: Passage) -> str:
    return p.id.rsplit("#", 1)[0]


def _own_heading(p: Passage) -> str:
    """The heading of the passage's section (its first ``HEADING`` term), else its title's last part."""
    return next((s for s, label in p.terms if label == "HEADING"), p.title.split(HEADING_SEPARATOR)[-1])
