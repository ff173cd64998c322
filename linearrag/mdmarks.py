"""Marks that site generators and books put around Markdown prose, read apart from it.

Footnote markers (``[^1]``), Pandoc citations (``[@key]``), Quarto cross-references
(``@fig-x``), Hugo shortcodes (``{{< … >}}``), blockquote ``>`` and task-list ``[x]`` marks
carry no words of their own; a content tab's title (MkDocs ``=== "Linux"``) or a GitHub alert's
kind (``> [!NOTE]``) heads the text below it; an mkdocstrings block (``::: pkg.Class`` and its
indented options) documents code that is not in the folder; a pipe table reads one row per line
("a | b"); an HTML tag in prose leaves a space where it breaks a block (:func:`tag_gap`).
``markdown.py`` applies them line by line.
"""

from __future__ import annotations

import re

FOOTNOTE_DEF = re.compile(r"^\s{0,3}\[\^[^\]\s]+\]:\s*(.*)$")   # "[^1]: The note's text."
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\](?!:)")
AUTODOC = re.compile(r"^:::\s+[A-Za-z_][\w.:]*\s*$")   # mkdocstrings: "::: pkg.Class", its options indented below
TAB = re.compile(r'^\s*={3}[+!]?\s+"([^"]*)"\s*$')          # MkDocs content tab: === "Linux"
_QUOTE = re.compile(r"^(\s{0,3}>)+\s?")                      # blockquote markers
_ALERT = re.compile(r"^\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.IGNORECASE)   # GitHub alert
TASK = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[[ xX]\]\s+")  # "- [x] done": the box is no text
# Pandoc/Quarto citations ("[@wickham2017]", "[see @a; @b, p. 3]") and cross-references ("@fig-plot"),
# Hugo shortcodes ("{{< figure ... >}}", "{{% notice %}}"): markup, no words.
_CITATION = re.compile(r"\[(?:[^\[\]@]*\s)?-?@[A-Za-z0-9_][^\[\]]*\](?!\()")
_CROSS_REF = re.compile(r"(?<![\w@.])@(?:fig|tbl|sec|eq|lst|thm|lem|cor|prp|cnj|def|exm|exr|sol|rem|alg)-[\w-]+")
_SHORTCODE = re.compile(r"\{\{[<%].*?[>%]\}\}")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")                        # | a | b |
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def inline_marks(text: str) -> str:
    """``text`` without footnote markers, citations, cross-references and shortcodes."""
    return _SHORTCODE.sub("", _CROSS_REF.sub("", _CITATION.sub("", _FOOTNOTE_REF.sub("", text))))


def table_line(line: str) -> str | None:
    """A pipe table's row as "a | b", "" for its header rule (no text), None for any other line."""
    if "|" in line and _TABLE_RULE.match(line):
        return ""
    row = _TABLE_ROW.match(line)
    return " | ".join(cell.strip() for cell in row.group(1).split("|")) if row else None


def unquoted(line: str) -> tuple[str, str]:
    """(the line without its blockquote markers, "Note:" for a GitHub alert's first line, else "")."""
    quote = _QUOTE.match(line)
    if not quote:
        return line, ""
    line = line[quote.end():]
    alert = _ALERT.match(line)
    return (line[alert.end():], f"{alert.group(1).capitalize()}:") if alert else (line, "")


_BLOCK_TAG = re.compile(r"</?(?:td|th|tr|table|thead|tbody|p|div|br|li|ul|ol|dl|dt|dd|h[1-6]|hr|section|details|"
                        r"summary|blockquote)\b", re.IGNORECASE)


def tag_gap(m: re.Match) -> str:
    """An HTML tag removed from prose: a block tag (a table cell, a paragraph) leaves a space so
    that the words on either side stay apart; an inline one (``<abbr>``, ``<b>``) leaves nothing."""
    return " " if _BLOCK_TAG.match(m.group(0)) else ""
