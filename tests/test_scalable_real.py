"""The scalable path on real indexes: agreement with the exact path, O(1) open, BM25
postings, and the scale generator's statistics."""

import json

import numpy as np
import pytest

from linearrag import RetrievalParams, Retriever, load_index
from linearrag.files import StringColumn, is_mapped
from linearrag.lexical import Postings
from linearrag.questions import load_questions
from linearrag.synthetic import graph_statistics, replicate

from .conftest import EXAMPLES

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

QUESTIONS = EXAMPLES / "2wiki-sample" / "questions.jsonl"


def _recall5(retriever, params, qs):
    out = []
    for q in qs:
        got = {p.id for p in retriever.query(q.question, params).passages[:5]}
        out.append(len(got & set(q.gold_ids)) / len(q.gold_ids))
    return float(np.mean(out))


def test_ann_path_agrees_with_the_exact_path(sample_retriever):
    qs = [q for q in load_questions(QUESTIONS) if q.gold_ids]
    exact = RetrievalParams(search="exact")
    ann = RetrievalParams(search="ann")
    same_top, overlaps = 0, []
    for q in qs:
        a = [p.id for p in sample_retriever.query(q.question, exact).passages]
        b = [p.id for p in sample_retriever.query(q.question, ann).passages]
        same_top += a[0] == b[0]
        overlaps.append(len(set(a) & set(b)) / len(a))
    assert np.mean(overlaps) >= 0.9 and same_top >= 0.9 * len(qs)
    assert abs(_recall5(sample_retriever, exact, qs) - _recall5(sample_retriever, ann, qs)) <= 0.02


def test_ann_path_keeps_the_bridge_chain(sample_retriever):
    result = sample_retriever.query("What nationality is Beatrice I, Countess of Burgundy's husband?",
                                    RetrievalParams(search="ann"))
    ids = [p.id for p in result.passages]
    assert "2w000278" in ids and "2w000283" in ids
    chain = {a.entity: a for a in result.activated_entities}
    assert chain["Frederick Barbarossa"].level == 2
    assert "marriage to Frederick Barbarossa" in chain["Frederick Barbarossa"].sentence
    frederick = next(p for p in result.passages if p.id == "2w000278")
    assert "Frederick Barbarossa" in frederick.entities


@pytest.mark.parametrize("mode", ["dense", "bm25", "rrf"])
def test_ann_baselines_match_the_exact_ones_at_the_top(sample_retriever, mode):
    qs = load_questions(QUESTIONS)[:15]
    agree = 0
    for q in qs:
        a = [p.id for p in sample_retriever.query(q.question, RetrievalParams(mode=mode, search="exact")).passages]
        b = [p.id for p in sample_retriever.query(q.question, RetrievalParams(mode=mode, search="ann")).passages]
        agree += a[:3] == b[:3]
    assert agree >= 0.9 * len(qs)


def test_postings_score_as_bm25s(sample_index):
    import bm25s

    index = load_index(sample_index[0])
    reference = bm25s.BM25.load(str(index.data_dir / "bm25"))
    postings = Postings.open(index.data_dir, len(index.passage_ids))
    tokens = ["burgundi", "countess", "frederick", "germani", "zzzunknown", "countess"]
    known = [t for t in tokens if t in reference.vocab_dict]
    assert np.allclose(postings.scores(tokens), reference.get_scores(known), atol=1e-6)
    rows, scores = postings.matches(tokens)
    assert np.all(np.diff(rows) > 0) and np.all(scores > 0)


def test_postings_top_k_is_exact(sample_index):
    """MaxScore's top k equals the top k of the full score vector, ties by row, for every k."""
    index = load_index(sample_index[0])
    postings = Postings.open(index.data_dir, len(index.passage_ids))
    starts, ends = postings.indptr[:-1], postings.indptr[1:]
    assert all(np.all(np.diff(postings.indices[a:b]) > 0) for a, b in zip(starts, ends))   # rows ascending
    queries = [["burgundi", "countess", "frederick", "germani"], ["film", "director", "born", "american"],
               ["countess", "countess", "year"], ["zzzunknown"], []]
    pruned = 0
    for tokens in queries:
        full = postings.scores(tokens)
        for k in (1, 3, 10, 50, 10_000):
            hits = postings.query(tokens, k)
            order = np.lexsort((np.arange(full.size), -full))
            want = [int(r) for r in order[:k] if full[r] > 0]
            assert hits.top_rows.tolist() == want, (tokens, k)
            assert np.array_equal(hits.top_scores, full[want])
            assert np.array_equal(hits.score(np.arange(full.size)), full)
            pruned += hits.skipped
    assert pruned > 0           # the common tokens' postings were searched, not merged


def test_index_opens_without_reading_strings(sample_index, sample_retriever, monkeypatch):
    reads = []
    for name in ("__getitem__", "__iter__", "tolist"):
        original = getattr(StringColumn, name)

        def spy(self, *a, _original=original, _name=name, **k):
            reads.append(_name)
            return _original(self, *a, **k)
        monkeypatch.setattr(StringColumn, name, spy)
    index = load_index(sample_index[0])
    Retriever(index, analyzer=sample_retriever.analyzer, encoder=sample_retriever.encoder, warm=False)
    assert reads == []
    assert is_mapped(index.passage_emb) and is_mapped(index.graph.C_indices) and is_mapped(index.graph.MT_indices)
    assert index.entity_lookup["beatrice i, countess of burgundy"] >= 0    # lookups read one key


def test_generator_preserves_its_statistics(sample_index, tmp_path):
    source = load_index(sample_index[0])
    n = int(3.5 * len(source.passage_ids))
    stats = replicate(source, tmp_path / "big", n, hub_df=3, threads=1)
    big = load_index(tmp_path / "big")
    assert len(big.passage_ids) == n and big.passage_ids[0] == source.passage_ids[0]
    assert big.passage_ids[len(source.passage_ids)] == source.passage_ids[0] + "~1"
    src, gen = stats["source"], stats["generated"]
    # entities per passage as in the source (the last replica is partial: close, not equal)
    assert abs(src["entities_per_passage_mean"] - gen["entities_per_passage_mean"]) < 0.1 * src["entities_per_passage_mean"]
    # shared hubs grow with the replicas, renamed entities keep the source's degrees
    df_src = np.diff(np.asarray(source.graph.CT_indptr))
    df_big = np.diff(np.asarray(big.graph.CT_indptr))
    hub = int(np.argmax(df_src))
    assert df_src[hub] >= 3 and df_big[big.entity_lookup[source.graph.entity_keys[hub]]] > 3 * df_src[hub]
    rare = int(np.flatnonzero(df_src == 1)[0])
    renamed = big.entity_lookup[source.graph.entity_keys[rare] + " ~1"]
    assert df_big[renamed] == 1 and big.graph.entity_names[renamed].endswith(" ~1")
    assert stats["replicas"] == 4 and big.meta["synthetic"]["hub_df"] == 3
    # vectors: replica 0 is the source, replicas are close to it
    assert np.array_equal(big.passage_emb[0], source.passage_emb[0])
    cos = float(big.passage_emb[len(source.passage_ids)] @ source.passage_emb[0])
    assert 0.9 < cos < 1.0
    # the generated index answers: the source's gold passages are found on both paths
    from linearrag.retrieval import Retriever as R
    r = R(big)
    for search in ("exact", "ann"):
        res = r.query("What nationality is Beatrice I, Countess of Burgundy's husband?", RetrievalParams(search=search))
        assert "2w000283" in [p.id for p in res.passages]
    assert graph_statistics(big.graph.C)["passages"] == n
    json.dumps(stats)


def test_postings_presence_matches_the_scores(sample_index):
    """Which rows hold which query token (bridged coverage) agrees with each token's own BM25 scores."""
    index = load_index(sample_index[0])
    postings = Postings.open(index.data_dir, len(index.passage_ids))
    tokens = ["burgundi", "countess", "zzzunknown", "countess", "film"]
    rows = np.arange(len(index.passage_ids))[::-1]
    held, df = postings.presence(tokens, rows)
    known = list(dict.fromkeys(t for t in tokens if postings.token_ids([t])))
    assert held.shape == (len(known), rows.size)          # distinct known tokens only
    for t, token in enumerate(known):
        assert held[t].tolist() == (postings.scores([token])[rows] > 0).tolist()
        assert df[t] == int((postings.scores([token]) > 0).sum())
    assert postings.presence([], rows)[0].shape == (0, rows.size)
