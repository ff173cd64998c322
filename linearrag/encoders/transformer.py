"""The BERT encoder stack, written once for every backend that runs it in plain torch (e5, the
light BERT query encoder), and the pooling shared by the encoders."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch.nn.functional as F


def encoder_layers(x, layers: Sequence[tuple], heads: int, eps: float, dense: Callable, mask=None,
                   tick: Callable[[str], None] | None = None):
    """Run token states ``x`` [B, n, d] through the encoder ``layers``, each a tuple (qkv weight,
    qkv bias, attention-output weight and bias, its layer norm, intermediate weight and bias,
    output weight and bias, its layer norm). ``dense(x, weight, bias)`` is the backend's affine
    product (its precision, its int8 path); ``mask``: an additive attention mask or None.
    ``tick(stage)``, when given, is called as each stage ends ("projections", "attention",
    "norms", "activation"), for a profile (``scripts/bench_encoder.py``)."""
    b, n, d = x.shape
    tick = tick or _no_tick
    for qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2 in layers:
        qkv = dense(x, qkv_w, qkv_b)
        tick("projections")
        q, k, v = (m.reshape(b, n, heads, d // heads).transpose(1, 2) for m in qkv.split(d, dim=2))
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, n, d)
        tick("attention")
        out = dense(ctx, o_w, o_b)
        tick("projections")
        x = F.layer_norm(x + out, (d,), *ln1, eps)
        tick("norms")
        h = dense(x, i_w, i_b)
        tick("projections")
        h = F.gelu(h)
        tick("activation")
        out = dense(h, f_w, f_b)
        tick("projections")
        x = F.layer_norm(x + out, (d,), *ln2, eps)
        tick("norms")
    return x


def _no_tick(stage: str) -> None:
    pass


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
