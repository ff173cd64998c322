"""Passages with the same text (``same_text=collapse``): the best-ranked one stands for them all.

Generated documentation repeats itself: npm's docs write each configuration setting's section on
every command page that takes it (538 of 1,428 passages repeat another's text), so five copies
of one section filled a top 5. A copy adds nothing a reader has not seen; its place goes to the
next passage, and it is listed under the one kept (its citation is where else the text stands).
Texts compare with their spacing folded; only the ranked candidates are compared (never the
whole corpus), so a copy below them is not listed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def collapse_copies(rows: np.ndarray, scores: np.ndarray, text_of: Callable[[int], str]
                    ) -> tuple[np.ndarray, np.ndarray, dict[int, list[int]]]:
    """``rows`` (best first) without a row whose text an earlier row has, their scores, and per
    kept row the rows of its copies, in rank order."""
    first: dict[str, int] = {}
    keep: list[int] = []
    copies: dict[int, list[int]] = {}
    for i, row in enumerate(np.asarray(rows).tolist()):
        kept = first.setdefault(" ".join(text_of(row).split()), row)
        if kept == row:
            keep.append(i)
        else:
            copies.setdefault(kept, []).append(row)
    if not copies:
        return rows, scores, {}
    at = np.asarray(keep, dtype=np.int64)
    return np.asarray(rows)[at], np.asarray(scores)[at], copies
