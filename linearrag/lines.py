"""Where a passage's words are in its file: line ranges found by matching words, for citations.

The readers clean a file's text (roles reduced, links to their text, tags dropped, MyST made
plain), so a passage's text is not a substring of the file. Its *words* are: every reader keeps
the words it reads and drops only markup. :class:`LineFinder` tokenises the file once (words
as casefolded runs of letters and digits; each CJK character its own word, so that markup
between two characters does not merge them) and places each piece of text, in reading order,
on the shortest run of the file's words that holds its words in order (a few words the readers
write themselves, like "Added in version" for ``.. versionadded::``, may be missing). The
piece's lines are those of its first and last matched word.

:func:`words_held` is the check (used by tests and ``scripts/check_citations.py``): which of a
text's words a range of lines lacks.
"""

from __future__ import annotations

import bisect
import html
import re
from collections import defaultdict

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_ROLE = re.compile(r"(?:\\ )?(?:\{[A-Za-z][\w:+-]*\}|:[A-Za-z][\w:+-]*:)`([^`]*)`(?:\\ )?")   # MyST, rST
_MARKUP = re.compile(rf"<!--.*?-->|{_TAG.pattern}", re.DOTALL)   # tags (over lines too) and comments
_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[nrtbf\"\\/])")
# Words the readers write themselves (admonition and version labels): allowed to be missing.
GENERATED = frozenset({"added", "in", "version", "changed", "deprecated", "since", "removed", "see", "also",
                       "note", "warning", "tip", "to", "do", "important", "hint", "caution", "attention",
                       "danger", "error"})
MAX_GAP = 40          # file words allowed between two matched words of a piece
MAX_CANDIDATES = 64   # start positions tried per piece


def words(text: str) -> list[str]:
    """The words of ``text`` (casefolded; CJK characters one by one)."""
    return [w.casefold() for w in _WORD.findall(text)]


def source_lines(raw: str, kind: str = "", tags: bool = True) -> list[str]:
    """The lines of a file as the line finder reads them: HTML entities decoded (``html``; with
    ``tags=False`` its tags and comments blanked first, so that the words of an attribute — a
    link's URL — do not stand between the words a reader keeps), JSON string escapes decoded
    (``json``: a notebook); line numbers unchanged."""
    if kind == "html" and not tags:
        raw = _MARKUP.sub(lambda m: "\n" * m.group(0).count("\n") or " ", raw)
    lines = raw.split("\n")
    if kind == "html":
        return [html.unescape(line) for line in lines]
    if kind == "json":
        return [_JSON_ESCAPE.sub(_unescape, line) for line in lines]
    return lines


def _unescape(m: re.Match) -> str:
    s = m.group(0)
    if s[1] == "u":
        return chr(int(s[2:], 16))
    return " " if s[1] in "nrtbf" else s[1]


class LineFinder:
    """Places pieces of cleaned text of one file on its lines, in reading order."""

    def __init__(self, lines: list[str]):
        self.words: list[str] = []
        self.line_of: list[int] = []
        for number, line in enumerate(lines, start=1):
            found = words(line)
            self.words.extend(found)
            self.line_of.extend([number] * len(found))
        self.at: dict[str, list[int]] = defaultdict(list)
        for pos, w in enumerate(self.words):
            self.at[w].append(pos)
        self.cursor = 0
        self.last_line = 1

    def place(self, text: str) -> tuple[int, int]:
        """(first, last) line, 1-based and inclusive, of the run of the file holding ``text``'s
        words; the search starts where the previous piece started (pieces come in order) and
        goes back to the start of the file when nothing after it holds the piece."""
        found = words(text)
        want = [w for w in found if w not in GENERATED] or found   # anchored on the file's own words
        if not want or not self.words:
            return self.last_line, self.last_line
        best = self._search(want, self.cursor)
        if best[0] < 0.5 * len(want) and self.cursor:
            best = max(best, self._search(want, 0))
        matched, start, end = best
        if matched == 0:
            return self.last_line, self.last_line
        self.cursor = start
        self.last_line = self.line_of[end]
        return self.line_of[start], self.line_of[end]

    def _search(self, want: list[str], origin: int) -> tuple[int, int, int]:
        """(words matched, first position, last position) of the best start at or after
        ``origin``: the most words matched, then a run not much longer than the words it holds
        (markup adds a few words; the same words scattered over a list do not hold a piece),
        then the earliest."""
        best, key, best_lead = (0, 0, 0), (0, False, 0), 0
        for lead in range(min(len(want), 8)):   # the first words may be ones a reader wrote
            positions = self.at.get(want[lead])
            if not positions:
                continue
            k = bisect.bisect_left(positions, origin)
            for start in positions[k:k + MAX_CANDIDATES]:
                matched, end = self._match(want, lead, start)
                tight = end - start <= 3 * matched + 6
                if (matched, tight, -start) > key:
                    best, key, best_lead = (matched, start, end), (matched, tight, -start), lead
            if best[0] >= 0.9 * sum(1 for w in want[lead:] if w in self.at):
                break
        return self._tightened(want, best_lead, best)

    def _tightened(self, want: list[str], lead: int, best: tuple[int, int, int]) -> tuple[int, int, int]:
        """``best`` started at the latest position inside its own run that matches as many words
        in a run no longer: "$ pip uninstall …" after two other "$ pip …" blocks matched from the
        first "pip" within reach, 22 lines for a 5-line block. Only starts inside the run are
        tried, so a piece never moves past where it was found."""
        matched, start, end = best
        positions = self.at.get(want[lead]) if matched else None
        if not positions:
            return best
        first = bisect.bisect_right(positions, start)
        stop = min(bisect.bisect_right(positions, end), first + MAX_CANDIDATES)   # as many tries as _search's
        for pos in positions[first:stop]:
            if self.line_of[pos] == self.line_of[start]:
                continue   # the same first line: no tighter citation
            count, last = self._match(want, lead, pos)
            if count >= matched and last - pos <= end - start:
                best, start, end = (count, pos, last), pos, last
        return best

    def _match(self, want: list[str], lead: int, start: int) -> tuple[int, int]:
        """Words of ``want[lead:]`` found in order from ``start``, each within ``MAX_GAP`` file
        words of the previous match; (count, position of the last match)."""
        matched, pos = 1, start
        for w in want[lead + 1:]:
            positions = self.at.get(w)
            if not positions:
                continue
            k = bisect.bisect_right(positions, pos)
            if k < len(positions) and positions[k] - pos <= MAX_GAP:
                matched, pos = matched + 1, positions[k]
        return matched, pos


def words_held(text: str, lines: list[str], first: int, last: int) -> list[str]:
    """The words of ``text`` that lines ``first``…``last`` (1-based, inclusive) of a file lack,
    words the readers write themselves (:data:`GENERATED`) left out; [] when all are held. Inline
    tags and roles count as written and as rendered: ``<abbr>ORM</abbr>s`` holds "ORMs" (and
    "abbr"), ``compatible{sup}`1``` "compatible1", ``H\ :sub:`2`\ O`` "H2O"."""
    span = "\n".join(lines[first - 1:last])
    held = set(words(span)) | set(words(_TAG.sub("", span))) | set(words(_ROLE.sub(r"\1", span)))
    return [w for w in dict.fromkeys(words(text)) if w not in held and w not in GENERATED]
