"""The sentence part of the dense voter (RetrievalParams.sentence_voter): hand-computed
maxima on a small graph, the scalable path's reordering, and the real index layout."""

from types import SimpleNamespace

import numpy as np
import pytest

from linearrag import RetrievalParams, load_index
from linearrag.errors import ParameterError
from linearrag.questions import load_questions
from linearrag.retrieval.approx import CandidateEvidence
from linearrag.retrieval.sentences import BestSentences, dense_voter

from .conftest import EXAMPLES

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


def _graph():
    """4 passages, 7 sentences; entities per sentence 2,1,3 | 0 | 2 | 2,2 (bridge: two or more)."""
    per_sentence = [2, 1, 3, 0, 2, 2, 2]
    return SimpleNamespace(
        M_indptr=np.cumsum([0] + per_sentence),
        sentence_passage=np.array([0, 0, 0, 1, 2, 3, 3]),
        passage_sentences=np.array([0, 3, 4, 5, 7]),
        n_passages=4,
    )


def _vectors():
    e = np.zeros((7, 2), dtype=np.float16)
    e[0] = [0.6, 0.8]    # p0, bridge: cos 0.6 with the query (1, 0)
    e[1] = [1.0, 0.0]    # p0, one entity: no vector is stored for it in a real index; never read
    e[2] = [0.8, 0.6]    # p0, bridge: 0.8  -> p0's best
    e[4] = [-0.6, 0.8]   # p2, bridge: -0.6 -> floored at 0
    e[5] = [0.0, 1.0]    # p3: 0.0
    e[6] = [0.5, 0.5]    # p3: 0.5  -> p3's best
    return e


def test_best_sentence_per_passage_by_hand():
    best = BestSentences(_graph(), _vectors())
    q = np.array([1.0, 0.0], dtype=np.float32)
    assert best.bridge.tolist() == [True, False, True, False, True, True, True]
    np.testing.assert_allclose(best.all(q), [0.8, 0.0, 0.0, 0.5], atol=1e-3)   # p1: no bridge sentence
    np.testing.assert_allclose(best.of(np.array([3, 0, 1]), q), [0.5, 0.8, 0.0], atol=1e-3)
    np.testing.assert_allclose(best.of(np.array([2, 2]), q), [0.0, 0.0], atol=1e-3)
    assert best.of(np.zeros(0, dtype=np.int64), q).size == 0


def test_dense_voter_adds_the_weighted_sentence():
    cos = np.array([0.5, 0.7], dtype=np.float32)
    assert dense_voter(cos, np.array([0.9, 0.1], dtype=np.float32), 0.0) is cos
    np.testing.assert_allclose(dense_voter(cos, np.array([0.9, 0.1], dtype=np.float32), 0.5), [0.95, 0.75])


def _evidence(best_sentence):
    """Candidate evidence for the query (1, 0): dense list rows 7, 2, 5 (cosines 0.9, 0.8, 0.7),
    row 1 outside it (0.2); a sample of 4 passages of 100; ``best_sentence``: row → cosine."""
    cos = {1: 0.2, 2: 0.8, 5: 0.7, 7: 0.9}
    emb = np.zeros((8, 2), dtype=np.float32)
    for r, c in cos.items():
        emb[r] = [c, np.sqrt(1 - c * c)]
    index = SimpleNamespace(passage_emb=emb, passage_search=SimpleNamespace(
        search=lambda v, k: (np.array([7, 2, 5]), np.array([0.9, 0.8, 0.7], dtype=np.float32))))
    space = SimpleNamespace(
        index=index, n_passages=100, postings=SimpleNamespace(query=lambda tokens, k: SimpleNamespace(top_rows=np.array([]))),
        sample=SimpleNamespace(passage_cosines=lambda v: np.array([0.1, 0.2, 0.3, 0.4])),
        best_sentences=SimpleNamespace(of=lambda rows, v: np.array([best_sentence[int(r)] for r in rows])))
    q = SimpleNamespace(vector=np.array([1.0, 0.0], dtype=np.float32), tokens=[])
    return CandidateEvidence(space, q, RetrievalParams(search="ann"), calibrated=False)


def test_scalable_voter_rank_reorders_the_dense_list_only():
    rows = np.array([1, 2, 5, 7])                      # row 1 is outside the dense list
    ev = _evidence({1: 0.9, 2: 0.1, 5: 0.6, 7: 0.0})   # 5: 0.7 + 0.3 = 1.0, then 7: 0.9, then 2: 0.85
    plain = ev.voter_ranks(rows, 0.0).all()
    assert plain.tolist() == ev.dense_ranks(rows).all().tolist() and plain[1:].tolist() == [2, 3, 1]
    ranks = ev.voter_ranks(rows, 0.5).all()
    assert ranks[1:].tolist() == [3, 1, 2] and ranks[0] == plain[0]   # rows 2, 5, 7


@pytest.mark.parametrize("value", ["-0.1", "nan", "abc"])
def test_sentence_voter_must_be_a_weight(value):
    with pytest.raises(ParameterError, match="sentence_voter"):
        RetrievalParams().with_overrides({"sentence_voter": value})


def test_best_sentences_on_a_real_index(sample_index, sample_retriever):
    idx = load_index(sample_index[0])
    stored = np.abs(np.asarray(idx.sentence_emb, dtype=np.float32)).sum(axis=1) > 0
    best = sample_retriever.best_sentences
    assert np.array_equal(best.bridge, stored)          # exactly the sentences that carry a vector
    q = sample_retriever.analyze_queries(["Who directed the film that won the award?"])[0].vector
    cos = np.asarray(idx.sentence_emb, dtype=np.float32) @ q
    sp = np.asarray(idx.graph.sentence_passage)
    expected = np.zeros(len(idx.passage_ids), dtype=np.float32)
    for s in np.flatnonzero(stored):
        expected[sp[s]] = max(expected[sp[s]], cos[s])
    all_ = best.all(q)
    np.testing.assert_allclose(all_, expected, atol=1e-5)
    rows = np.random.default_rng(0).choice(len(idx.passage_ids), 40, replace=False)
    np.testing.assert_allclose(best.of(rows, q), all_[rows], atol=1e-5)


# A small documentation folder: each page has sections, and some sections are about one topic
# while a single sentence of another states a detail of it.
DOCS = {
    "server.md": """# Server

## Starting the server

Run `app serve` to start the development server. The Uvicorn worker reloads the code when a file
changes, and the Gunicorn manager is only needed in production.

## Ports

By default the server listens on port 8000. The Settings class reads the PORT variable, so Docker
deployments usually set it in the Compose file.
""",
    "deploy.md": """# Deployment

## Containers

Build the image with Docker and run it behind Nginx. The Compose file starts the Postgres database
and the Redis cache next to the application.

## Health checks

Kubernetes calls the `/health` endpoint every ten seconds; the Settings class decides whether the
endpoint also checks Postgres.
""",
    "auth.md": """# Authentication

## Tokens

The OAuth2 flow issues a JWT access token that expires after thirty minutes. The Settings class holds
the signing key, and the Redis cache keeps revoked tokens.

## Passwords

Passwords are hashed with Argon2 before Postgres stores them; the bcrypt backend is kept for old accounts.
""",
    "testing.md": """# Testing

## Running tests

Run `pytest` from the project root. The TestClient calls the application without a real server, and the
Postgres fixture creates a fresh database for every test module.

## Coverage

Coverage reports are written by pytest-cov into the htmlcov folder; Codecov uploads them from GitHub Actions.
""",
}
QUERIES = ["which port does the server listen on by default?", "how long is an access token valid?",
           "where are revoked tokens kept?", "how are passwords stored?", "how often is the health endpoint called?",
           "what creates the database for tests?", "where do coverage reports go?", "what reloads the code?"]


@pytest.fixture(scope="module")
def docs_retriever(tmp_path_factory):
    from linearrag import Retriever, build_index

    root = tmp_path_factory.mktemp("voter-docs")
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    out = tmp_path_factory.mktemp("voter-idx") / "docs"
    build_index(root, out)
    return Retriever.from_path(out)


def test_sentence_voter_acts_on_documents_and_both_paths_agree(docs_retriever):
    assert docs_retriever.documents and docs_retriever.best_sentences.bridge.any()
    changed, same_top = 0, 0
    for text in QUERIES:
        off = [p.id for p in docs_retriever.query(text, RetrievalParams(top_k=8, sentence_voter=0)).passages]
        on = [p.id for p in docs_retriever.query(text, RetrievalParams(top_k=8, sentence_voter=20)).passages]
        ann = [p.id for p in docs_retriever.query(
            text, RetrievalParams(top_k=8, sentence_voter=20, search="ann")).passages]
        changed += off != on
        same_top += on[0] == ann[0]
    assert changed >= 1                       # the weight acts on the fused ranking
    assert same_top == len(QUERIES)           # the scalable path reorders its dense list the same way


def test_sentence_voter_leaves_titled_records_alone(sample_retriever):
    qs = load_questions(EXAMPLES / "2wiki-sample" / "questions.jsonl")[:10]
    for q in qs:
        off = sample_retriever.query(q.question, RetrievalParams(fusion="rrf", sentence_voter=0))
        on = sample_retriever.query(q.question, RetrievalParams(fusion="rrf", sentence_voter=20))
        assert [p.id for p in off.passages] == [p.id for p in on.passages]
