"""Inline Markdown to plain words: prose (:func:`clean_inline`), headings (:func:`heading_text`,
:func:`heading_anchors`) and the links a paragraph makes (:func:`link_pairs`). ``markdown.py``
reads the blocks; HTML headings are cleaned here too."""

from __future__ import annotations

import re

from .links import anchor_key, label_text
from .mdmarks import inline_marks, tag_gap

_ANCHOR = re.compile(r"\s*\{\s*#[^}]*\}\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)|!\[([^\]]*)\]\[[^\]]*\]")
_LINK = re.compile(r"\[([^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_REF_LINK = re.compile(r"\[([^\[\]]+)\]\[[^\]]*\]")
_WIKI_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]+>")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>]*?)?/?>")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")   # CommonMark: an escaped ASCII punctuation mark is that mark
_HIDDEN = re.compile(r"\x00(\d+)\x00")
_REF_LINK_PAIR = re.compile(r"(?<!!)\[([^\[\]]+)\]\[([^\]]*)\]")
_LINK_PAIR = re.compile(r"(?<!!)\[([^\[\]]+)\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def link_label(text: str) -> str:
    """A reference link's label as Markdown compares them: case and white space ignored."""
    return " ".join(text.split()).casefold()


_EXPLICIT_ID = re.compile(r"\{\s*#([^}\s]+)[^}]*\}\s*$")


def heading_anchors(raw: str, name: str) -> list[str]:
    """What a link may call a heading by (see :attr:`Section.anchors`): its words as a slug, and
    an explicit ``{ #id }`` (also a project-wide label, as MyST's ``(label)=`` targets are)."""
    out = [anchor_key(name)] if name else []
    m = _EXPLICIT_ID.search(raw)
    if m:
        label = label_text(m.group(1))   # a MyST label with spaces is written %20
        out += [anchor_key(label), f"ref:{label.casefold()}"]
    return list(dict.fromkeys(a for a in out if a != "#"))


_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])")


def heading_text(raw: str) -> str:
    """A heading as plain words: cleaned like prose (:func:`clean_inline`, anchor dropped),
    then without emphasis markers and backticks ("The normal **FastAPI** app" → "The
    normal FastAPI app", "`fastapi run`" → "fastapi run"). It names sections in titles and
    is an entity (``HEADING``), so it must not carry Markdown; ``snake_case`` stays intact."""
    text = clean_inline(_ANCHOR.sub("", raw))
    parts = re.split(r"(`[^`\n]+`)", text)          # code spans: contents verbatim, no emphasis rule
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(part[1:-1])
        else:
            for _ in range(2):                        # nested: ***a*** or **_a_**
                part = _EMPHASIS.sub(r"\2", part)
            out.append(part)
    return " ".join("".join(out).split())


def clean_inline(text: str) -> str:
    """Inline Markdown to plain prose: images dropped, links to their text, tags and
    autolinks removed, backslash escapes read as the character (``byte\\_length``), white space
    collapsed. Backticks and emphasis stay (they are text)."""
    code: list[str] = []

    def hide(kept: str) -> str:   # code spans and escaped marks are text: no link or tag rule may touch them
        code.append(kept)
        return f"\x00{len(code) - 1}\x00"

    text = _INLINE_CODE.sub(lambda m: hide(m.group(0)), text)
    text = _ESCAPED.sub(lambda m: hide(m.group(1)), text)
    text = _IMAGE.sub("", text)
    text = inline_marks(text)
    text = _WIKI_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    for _ in range(2):   # a link inside a link's text
        text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub("", text)
    text = _TAG.sub(tag_gap, text)
    text = _HIDDEN.sub(lambda m: code[int(m.group(1))], text)
    return " ".join(text.split())


def link_pairs(raw: str, refs: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(visible text, target) of the links of a raw Markdown paragraph: inline links, reference
    links (``[text][label]``, ``[text][]``) whose label ``refs`` defines (:func:`reference_targets`),
    and wiki links (target ``wiki:Name``). External and in-page links are kept too; the corpus
    loader resolves those that point to a document of the corpus."""
    out = [(clean_inline(m.group(1)), m.group(2)) for m in _LINK_PAIR.finditer(raw)]
    out += [(clean_inline(m.group(1)), refs[key]) for m in _REF_LINK_PAIR.finditer(raw or "")
            if refs and (key := link_label(m.group(2) or m.group(1))) in refs]
    out += [((m.group(2) or m.group(1)).strip(), "wiki:" + m.group(1).strip()) for m in _WIKI_LINK.finditer(raw)]
    return [(text, target) for text, target in out if text and target]
