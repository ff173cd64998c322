"""The BERT encoder stack, written once for every backend that runs it in plain torch (e5, the
light BERT query encoder), and the pooling shared by the encoders."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch.nn.functional as F


def encoder_layers(x, layers: Sequence[tuple], heads: int, eps: float, dense: Callable, mask=None):
    """Run token states ``x`` [B, n, d] through the encoder ``layers``, each a tuple (qkv weight,
    qkv bias, attention-output weight and bias, its layer norm, intermediate weight and bias,
    output weight and bias, its layer norm). ``dense(x, weight, bias)`` is the backend's affine
    product (its precision, its int8 path); ``mask``: an additive attention mask or None."""
    b, n, d = x.shape
    for qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2 in layers:
        q, k, v = (m.reshape(b, n, heads, d // heads).transpose(1, 2) for m in dense(x, qkv_w, qkv_b).split(d, dim=2))
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, n, d)
        x = F.layer_norm(x + dense(ctx, o_w, o_b), (d,), *ln1, eps)
        x = F.layer_norm(x + dense(F.gelu(dense(x, i_w, i_b)), f_w, f_b), (d,), *ln2, eps)
    return x


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
