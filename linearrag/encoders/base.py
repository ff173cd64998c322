"""What every embedding backend offers: :class:`Encoder`, with the defaults most models share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..progress import bar

CHUNK = 256


class Encoder:
    """An embedding backend: ``encode(texts) -> float32 [n, dim]``, unit rows.

    A backend sets ``name`` (as recorded in the index), ``version`` (its package or file, checked
    when an index opens), ``dim``, ``device`` ("cpu" or "cuda") and ``precision``. Defaults:
    ``mean_pooling`` False (sentence vectors cannot be read off a passage's forward pass: see
    :meth:`encode_with_spans`), ``texts_independent`` True (a text's vector does not depend on
    the other texts of a call), names embedded as passages, nothing to warm.
    """

    name = ""
    version = "unknown"
    dim = 0
    device = "cpu"
    precision = "fp32"
    mean_pooling = False
    texts_independent = True

    def encode(self, texts: Sequence[str], batch_size: int = 32, role: str = "passage") -> np.ndarray:
        """float32 [len(texts), dim], unit rows; ``role``: "passage" (documents) or "query"."""
        raise NotImplementedError

    def encode_names(self, names: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Entity names (a few tokens each): identical strings once, longest first."""
        out = np.zeros((len(names), self.dim), dtype=np.float32)
        encode_unique(self, list(names), out, list(range(len(names))), batch_size, "embed entities", False)
        return out

    def encode_with_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                          batch_size: int = 32) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Passage vectors and, from the same forward pass, the L2-normalised mean of each character
        span's token vectors (None where no token lies inside the model's window). Only a
        ``mean_pooling`` backend has them."""
        raise NotImplementedError(f"{self.name} cannot pool spans from a passage's forward pass")

    def warm(self) -> None:
        """Pay one-off costs now (a process that answers many queries)."""


def encode_unique(encoder: Encoder, texts: list[str], out: np.ndarray, rows: list[int], batch_size: int,
                  desc: str, progress: bool) -> None:
    """Embed ``texts`` into ``out[rows]``; identical strings once, longest first."""
    where: dict[str, list[int]] = {}
    for text, row in zip(texts, rows):
        where.setdefault(text, []).append(row)
    unique = sorted(where, key=len, reverse=True)
    with bar(len(unique), desc, progress) as pbar:
        for start in range(0, len(unique), CHUNK * 4):
            chunk = unique[start:start + CHUNK * 4]
            for text, vec in zip(chunk, encoder.encode(chunk, batch_size=batch_size)):
                out[where[text]] = vec
            pbar.update(len(chunk))
