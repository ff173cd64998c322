"""Any sentence-transformers model (a name of a packaged model, a hub name in the local cache,
or a local path), on the CPU or a CUDA device."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch
import transformers
from sentence_transformers import SentenceTransformer

from ..errors import ModelMismatchError
from .base import Encoder
from .bert import BertQueryEncoder
from .models import MINILM, resolve_model
from .torch_env import bf16_supported, resolve_device
from .transformer import span_means


class SentenceTransformerEncoder(Encoder):
    """A sentence-transformers model on the CPU or a CUDA device (``device``: cpu, cuda or auto).

    ``threads`` sets torch's intra-op threads (process-wide); one thread is fastest for
    single queries, where the matrices are too small to split.

    ``precision`` is "fp32", "bf16" (autocast: ~1.7× faster where the CPU supports it,
    cosine to fp32 ≥ 0.9999) or "auto" (bf16 where supported). The precision used is
    recorded in the index, and queries use the index's.
    """

    def __init__(self, name: str = MINILM, device: str = "cpu", precision: str = "auto",
                 threads: int | None = None):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")

        if threads is not None:
            torch.set_num_threads(threads)
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
        self.name = name
        path, self.version = resolve_model(name)
        self.path = path
        self.device = resolve_device(device)
        try:
            self.model = SentenceTransformer(path, device=self.device)
        except Exception as exc:  # the library raises many types for "cannot load"
            raise ModelMismatchError(
                f"cannot load embedding model {name!r} ({type(exc).__name__}: {str(exc).splitlines()[0][:150]}); "
                "install it or pass a local path with --embedding-model"
            ) from None
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(getter())
        if precision == "auto":
            precision = "bf16" if (self.device != "cpu" or bf16_supported()) else "fp32"
        if precision == "int8":
            raise ModelMismatchError(f"precision int8 runs multilingual-e5-small only; use fp32, bf16 or auto with {name}")
        if precision not in ("fp32", "bf16"):
            raise ModelMismatchError(f"unknown embedding precision {precision!r}; use fp32, bf16 or auto")
        self.precision = precision
        self._light: BertQueryEncoder | None = None

    def encode(self, texts: Sequence[str], batch_size: int = 32, role: str = "passage") -> np.ndarray:
        """Embed ``texts``; returns float32 [len(texts), dim] with unit rows (a symmetric model:
        ``role`` — "passage" or "query" — changes nothing)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        with torch.autocast(self._autocast, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            out = self.model.encode(list(texts), batch_size=batch_size, show_progress_bar=False,
                                    convert_to_tensor=True, normalize_embeddings=True)
        return np.ascontiguousarray(out.float().cpu().numpy(), dtype=np.float32)

    @property
    def _autocast(self) -> str:
        return "cuda" if str(self.device).startswith("cuda") else "cpu"

    @property
    def mean_pooling(self) -> bool:
        """True when the model's sentence vector is the mean of its token vectors."""
        return any(getattr(m, "pooling_mode", None) == "mean" or getattr(m, "pooling_mode_mean_tokens", False)
                   for m in self.model)

    def encode_with_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                          batch_size: int = 32) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Embed ``texts`` and, from the same forward pass, character spans of each text.

        A span's vector is the mean of the text's contextual token vectors inside it,
        L2-normalised (so a sentence is embedded in the context of its passage). A span
        with no token inside the model's window (truncated) gets None. Needs a
        mean-pooling model (see :attr:`mean_pooling`).
        """
        with torch.autocast(self._autocast, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            outputs = self.model.encode(list(texts), batch_size=batch_size, output_value=None,
                                        show_progress_bar=False)
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        span_vectors: list[list[np.ndarray | None]] = []
        # character offsets of every text's tokens, in one batched tokenizer call
        all_offsets = self.model.tokenizer(list(texts), return_offsets_mapping=True, truncation=True,
                                           max_length=self.model.max_seq_length)["offset_mapping"]
        for i, (text, out) in enumerate(zip(texts, outputs)):
            vectors[i] = out["sentence_embedding"].float().cpu().numpy()
            if not spans[i]:
                span_vectors.append([])
                continue
            tokens = out["token_embeddings"][out["attention_mask"].bool()].float().cpu().numpy()  # drop padding
            if len(all_offsets[i]) != len(tokens):
                span_vectors.append([None] * len(spans[i]))
                continue
            span_vectors.append(span_means(tokens, np.asarray(all_offsets[i]), spans[i]))
        return vectors, span_vectors

    def encode_names(self, names: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Entity names. For a BERT + mean-pooling model on the CPU, grouped by exact token count
        and run through the light forward pass (:mod:`bert`) in batches without padding: the same
        vectors as one name at a time (so an index's name vectors do not depend on which names
        were embedded together), about twice as fast as sentence-transformers' padded batches of
        short texts. Otherwise the default (identical strings once, longest first)."""
        if self._light is None and self.device == "cpu" and BertQueryEncoder.supports(self.path):
            self._light = BertQueryEncoder(self.path, precision=self.precision)
        if self._light is not None:
            return self._light.encode_bucketed(names, batch_size)
        return super().encode_names(names, batch_size)
