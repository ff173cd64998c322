"""A fixed two-way split of a question set, for choosing constants on one half only."""

from __future__ import annotations

import hashlib


def half(question_id: str) -> str:
    """"A" (tune on it) or "B" (held out): the parity of the first byte of SHA-256(id).

    Depends on the id alone, so the split never changes when a set grows or is reordered.
    """
    return "A" if hashlib.sha256(question_id.encode("utf-8")).digest()[0] % 2 == 0 else "B"
