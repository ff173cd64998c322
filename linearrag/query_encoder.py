"""A torch-free query encoder for BERT-family sentence-transformers models.

Loading torch + transformers + sentence-transformers costs seconds per process; a query is
one short text. For models made of a BERT encoder, mean pooling and normalisation (the
default all-MiniLM-L6-v2 among them), this runs the same forward pass in numpy from the
model's own files (``tokenizer.json``, ``config.json``, ``model.safetensors``): ~10 ms per
query, no torch import. Its vectors match sentence-transformers' to cosine > 0.9999.
Other models fall back to :class:`linearrag.embeddings.Encoder`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.special import erf


class NumpyBertEncoder:
    """Mean-pooled, L2-normalised BERT sentence vectors computed with numpy."""

    def __init__(self, model_dir: str | Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        self.dim = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(int(st_config.get("max_seq_length", 256)))
        self.tokenizer.no_padding()
        w = load_file(str(model_dir / "model.safetensors"))
        w = {k.removeprefix("bert."): v for k, v in w.items()}
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"]
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            self.layers.append((
                np.ascontiguousarray(qkv_w), qkv_b,
                np.ascontiguousarray(w[p + "attention.output.dense.weight"].T), w[p + "attention.output.dense.bias"],
                (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                np.ascontiguousarray(w[p + "intermediate.dense.weight"].T), w[p + "intermediate.dense.bias"],
                np.ascontiguousarray(w[p + "output.dense.weight"].T), w[p + "output.dense.bias"],
                (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            ))

    @staticmethod
    def supports(model_dir: str | Path) -> bool:
        """True for a BERT encoder + mean pooling + Normalize sentence-transformers folder."""
        model_dir = Path(model_dir)
        try:
            config = json.loads((model_dir / "config.json").read_text())
            modules = json.loads((model_dir / "modules.json").read_text())
            pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        except (OSError, json.JSONDecodeError):
            return False
        kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
        return (config.get("model_type") == "bert" and config.get("hidden_act") == "gelu"
                and config.get("position_embedding_type", "absolute") == "absolute"
                and kinds == ["Transformer", "Pooling", "Normalize"]
                and pooling.get("pooling_mode_mean_tokens") is True
                and not any(pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                                      "pooling_mode_mean_sqrt_len_tokens"))
                and (model_dir / "tokenizer.json").exists() and (model_dir / "model.safetensors").exists())

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """float32 [len(texts), dim], unit rows; each text is run on its own (no padding)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, enc in enumerate(self.tokenizer.encode_batch(list(texts))):
            out[i] = self._forward(np.asarray(enc.ids), np.asarray(enc.type_ids))
        return out

    def _forward(self, ids: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        n = len(ids)
        x = self.word[ids] + self.position[:n] + self.token_type[type_ids]
        x = _layer_norm(x, *self.emb_ln, self.eps)
        h, dh = self.heads, self.dim // self.heads
        for qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2 in self.layers:
            q, k, v = np.split(x @ qkv_w + qkv_b, 3, axis=1)
            q, k, v = (m.reshape(n, h, dh).transpose(1, 0, 2) for m in (q, k, v))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(1, 0, 2).reshape(n, self.dim)
            x = _layer_norm(x + ctx @ o_w + o_b, *ln1, self.eps)
            inner = x @ i_w + i_b
            inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
            x = _layer_norm(x + inner @ f_w + f_b, *ln2, self.eps)
        vec = x.mean(axis=0)
        return vec / max(float(np.linalg.norm(vec)), 1e-12)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias
