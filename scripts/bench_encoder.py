"""Encoder benchmark: how close the passage encoder comes to this machine's matrix peak.

  uv run scripts/bench_encoder.py [--corpus FILE.jsonl] [--limit N] [--threads 1] [--repeats 3]

1. **Peak**: torch's matrix product, in the encoder's precision (bf16 where the CPU runs it natively;
   ``--precision int8``: fbgemm's dynamic int8 linear, the product the int8 encoder runs),
   on the four product shapes of a layer at 4,096 tokens ([T×d]·[d×3d], [T×d]·[d×d], [T×d]·[d×4d],
   [T×4d]·[4d×d]); each shape's median over ``--repeats`` timed runs after a warm-up.
   ``peak_gflops`` is the FLOP-weighted rate of the four (the rate at which the layer's products
   would run if nothing else took time); each shape's rate is listed too.
2. **Achieved**: the default encoder (multilingual-e5-small) encodes the corpus's passages (read
   as a build reads them: title, then text) ``--repeats`` times; ``achieved_gflops`` = the useful
   FLOPs (the products on real tokens, 2 × 12·d² per token per layer, plus attention's 4·n·d per token
   per layer on each text's own length n: padding is not counted) over the median wall time of
   ``encode`` — tokenisation, batching and pooling included. ``ratio`` = achieved / peak.
3. **Profile**: one more pass with a clock between stages ("tokenise", "embeddings" = batching
   and the word-embedding lookup, "projections", "attention" = SDPA with its softmax and the
   head reshapes, "norms" = residual adds and layer norms, "activation" = GELU, "pooling"), in
   seconds and shares, with the padding share of the batches.

Prints one JSON line. Run it on a quiet machine: figures are single-machine, same-run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_CORPUS = ROOT / "examples" / "2wiki-sample" / "corpus.jsonl"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS),
                    help="what a build reads: a JSONL/JSON corpus or a folder of documents (default: the shipped sample)")
    ap.add_argument("--limit", type=int, default=None, help="the first N passages only")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (a build worker runs on 1)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32", "int8"],
                    help="the encoder's arithmetic (auto: bf16 where the CPU runs it natively)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    ap.add_argument("--batch-size", type=int, default=32, help="encode()'s batch_size (as a build passes it)")
    ap.add_argument("--peak-tokens", type=int, default=4096)
    return ap.parse_args(argv)


def load_texts(path: str, limit: int | None) -> list[str]:
    """The passages' embedded texts (title, then text), read as a build reads ``path``."""
    from linearrag.corpus import load_corpus

    return [p.full_text for p in load_corpus(path)[:limit]]


def check_args(args) -> None:
    from linearrag.errors import ParameterError

    for flag, value in (("--limit", args.limit), ("--threads", args.threads), ("--repeats", args.repeats),
                        ("--batch-size", args.batch_size), ("--peak-tokens", args.peak_tokens)):
        if value is not None and value < 1:
            raise ParameterError(f"{flag} must be at least 1, got {value}")


def _sync(device: str):
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def matrix_peak(d: int, ffn: int, tokens: int, precision: str, device: str, repeats: int) -> dict:
    """GFLOP/s of the encoder's own product (bf16 / fp32 ``addmm``; for int8 fbgemm's dynamic
    int8 linear on prepacked weights) for the layer's shapes, median of ``repeats`` runs of ≥ 0.2 s."""
    import torch

    from linearrag.encoders.e5 import _pack_int8

    shapes = {"qkv": (d, 3 * d), "attn_out": (d, d), "ffn_in": (d, ffn), "ffn_out": (ffn, d)}
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    rates, flops = {}, {}
    for name, (k, n) in shapes.items():
        x = torch.randn(tokens, k).to(dtype).to(device)
        w = torch.randn(k, n).to(dtype).to(device)
        b = torch.zeros(n).to(dtype).to(device)
        if precision == "int8":
            packed = _pack_int8(w, b)

            def product():
                return torch.ops.quantized.linear_dynamic(x, packed, True)
        else:
            def product():
                return torch.addmm(b, x, w)
        f = 2.0 * tokens * k * n
        with torch.inference_mode():
            product()   # warm-up: kernels chosen, weights packed
            _sync(device)
            times = []
            for _ in range(repeats):
                reps, t0 = 0, time.perf_counter()
                while True:
                    product()
                    reps += 1
                    _sync(device)
                    elapsed = time.perf_counter() - t0
                    if elapsed >= 0.2:
                        break
                times.append(elapsed / reps)
        rates[name] = f / statistics.median(times) / 1e9
        flops[name] = f
    weighted = sum(flops.values()) / sum(flops[s] / (rates[s] * 1e9) for s in shapes) / 1e9
    return {"peak_gflops": round(weighted, 1), "by_shape": {s: round(r, 1) for s, r in rates.items()}}


def useful_flops(lengths: list[int], d: int, ffn: int, layers: int) -> float:
    """Products on real tokens + attention (QKᵀ and AV) on each text's own length."""
    per_token = 2.0 * (d * 3 * d + d * d + d * ffn + ffn * d)
    tokens = sum(lengths)
    attention = sum(4.0 * n * n * d for n in lengths)
    return layers * (per_token * tokens + attention)


def main(argv=None) -> int:
    args = parse_args(argv)
    check_args(args)
    texts = load_texts(args.corpus, args.limit)   # a bad corpus fails here, before torch loads
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    from linearrag.encoders.e5 import E5Encoder

    torch.set_num_threads(args.threads)
    enc = E5Encoder(precision=args.precision, threads=args.threads, device=args.device)
    d, ffn, layers = enc.dim, enc.ffn, len(enc.layers)
    peak = matrix_peak(d, ffn, args.peak_tokens, enc.precision, enc.device, args.repeats)

    lengths = [len(t) for t in enc.tokenizer.encode(texts, "passage")]
    padded = sum(len(rows) * max(lengths[i] for i in rows)
                 for rows in enc._batches([[0] * n for n in lengths], args.batch_size * 64))
    enc.encode(texts[: min(len(texts), 64)], batch_size=args.batch_size)   # warm-up
    walls = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        enc.encode(texts, batch_size=args.batch_size)
        _sync(enc.device)
        walls.append(time.perf_counter() - t0)
    wall = statistics.median(walls)
    flops = useful_flops(lengths, d, ffn, layers)

    stages: dict[str, float] = defaultdict(float)
    last = [time.perf_counter()]

    def tick(stage: str) -> None:
        _sync(enc.device)
        now = time.perf_counter()
        stages[stage] += now - last[0]
        last[0] = now

    t0 = time.perf_counter()
    last[0] = t0
    enc.encode(texts, batch_size=args.batch_size, tick=tick)
    profiled = time.perf_counter() - t0
    achieved = flops / wall / 1e9
    out = {
        "device": enc.device, "threads": args.threads, "precision": enc.precision,
        "corpus": str(args.corpus), "passages": len(texts), "tokens": sum(lengths), "padded_tokens": padded,
        "padding_share": round(1 - sum(lengths) / padded, 4),
        "peak_gflops": peak["peak_gflops"], "peak_by_shape": peak["by_shape"],
        "achieved_gflops": round(achieved, 1), "ratio": round(achieved / peak["peak_gflops"], 3),
        "seconds": round(wall, 3), "seconds_runs": [round(w, 3) for w in walls],
        "passages_per_s": round(len(texts) / wall, 1), "tokens_per_s": round(sum(lengths) / wall, 1),
        "profile_s": {k: round(v, 3) for k, v in sorted(stages.items(), key=lambda kv: -kv[1])},
        "profile_share": {k: round(v / profiled, 3) for k, v in sorted(stages.items(), key=lambda kv: -kv[1])},
        "torch": torch.__version__,
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    from linearrag.cli import run_cli

    run_cli(main)
