"""The default ranking path piece by piece, on hand-computed inputs: fusion, prior, hub
weights, the reset, linking by spans and the bridging sentence behind a score."""

import pytest
import numpy as np
import scipy.sparse as sp

from linearrag.analysis import Mention, NameCandidate
from linearrag.retrieval.activation import Activation, activate_entities
from types import SimpleNamespace

from linearrag.retrieval.exact import ExactSpace
from linearrag.retrieval.fusion import (Ranks, hybrid_prior, min_fusion, order_siblings, position_ranks, rrf,
                                        top_k)
from linearrag.retrieval.linking import link_entities, maximal_matches
from linearrag.retrieval.params import RetrievalParams
from linearrag.retrieval.hubs import HUB_MIN_CORPUS, idf_ratio
from linearrag.retrieval.reset import passage_entity_reset


def ranks_of(scores, only_positive=False):
    return position_ranks(np.arange(len(scores)), np.asarray(scores, dtype=np.float64), only_positive)


def min_rank_scores(primary, secondary, factor, depth=None):
    rows = np.arange(len(primary))
    return min_fusion(Ranks(rows, np.asarray(primary, dtype=np.float64)),
                      [(Ranks(rows, np.asarray(secondary, dtype=np.float64)), factor)], depth)


def rrf_scores(lists, k, only_positive=None):
    rows = np.arange(len(lists[0]))
    only_positive = only_positive or [False] * len(lists)
    return rrf([Ranks(rows, np.asarray(s, dtype=np.float64), p) for s, p in zip(lists, only_positive)], k)


def _order(scores):
    return top_k(np.asarray(scores, dtype=np.float64), len(scores)).tolist()


# ---- fusion ---------------------------------------------------------------------------

def test_zero_scores_get_no_rank():
    ranks = ranks_of(np.array([0.0, 2.0, 0.0, 1.0]), only_positive=True)
    assert ranks[1] == 1 and ranks[3] == 2
    assert np.isinf(ranks[0]) and np.isinf(ranks[2])
    assert ranks_of(np.array([0.0, 2.0, 0.0, 1.0])).tolist() == [3, 1, 4, 2]   # dense ranks everything


def test_min_fusion_does_not_reward_passages_bm25_did_not_match():
    n = 20
    ppr = np.linspace(1.0, 0.05, n)       # PageRank order: row 0 first … row 19 last
    ppr = ppr[::-1].copy()                # now row 19 first … row 0 last
    bm25 = np.zeros(n)
    bm25[5] = 2.0                         # BM25 matched one passage only
    order = _order(min_rank_scores(ppr, bm25, 3.0))
    assert 0 not in order[:10]            # BM25 = 0 at row 0 is no lexical hit
    assert order[:10] == [19, 18, 5, 17, 16, 15, 14, 13, 12, 11]   # PageRank's #8 (row 12) kept in the top 10


def test_min_fusion_guarantee_for_bm25_top_passages():
    n = 20
    ppr = np.arange(n, 0, -1, dtype=np.float64)   # row 0 is PageRank's #1
    bm25 = np.zeros(n)
    bm25[15], bm25[16] = 5.0, 4.0                 # BM25's #1 and #2, deep in the PageRank list
    order = _order(min_rank_scores(ppr, bm25, 3.0))
    assert order.index(15) == 2                   # BM25's #1: 3rd (key 3 ties PageRank's #3 and goes first)
    assert order.index(16) == 6                   # BM25's #2: 7th = 3·2 + 2 − 1
    assert order[:8] == [0, 1, 15, 2, 3, 4, 16, 5]


def test_min_fusion_to_a_depth_ranks_the_first_positions_exactly():
    """``depth`` ranks only the rows that can reach the first ``depth`` positions: each of them
    gets the full fusion's score, the first ``depth`` positions are the same rows, every other
    row scores 0 (ties, zeros and fractional factors included)."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(30, 400))
        ppr = np.round(rng.random(n), int(rng.integers(1, 4))) * (rng.random(n) < rng.uniform(0.3, 1.0))
        bm25 = np.round(rng.random(n) * 5, 1) * (rng.random(n) < rng.uniform(0.05, 0.6))
        factor = float(rng.choice([1.0, 2.5, 3.0, 7.0]))
        depth = int(rng.integers(1, 12))
        full = min_rank_scores(ppr, bm25, factor)
        part = min_rank_scores(ppr, bm25, factor, depth=depth)
        ranked = part > 0
        assert np.array_equal(part[ranked], full[ranked]), trial
        assert ranked.sum() >= min(depth, int((ppr > 0).sum()))
        assert top_k(part, depth).tolist() == top_k(full, depth).tolist(), trial
        assert np.all(full[~ranked] < part[ranked].min()), trial   # nothing left out ranks above them
        # the approximate space hands fusion rank arrays, not scores: the same result
        rows = np.arange(n)
        given = min_fusion(Ranks(rows, ranks=ranks_of(ppr, True)), [(Ranks(rows, ranks=ranks_of(bm25, True)), factor)],
                           depth)
        assert np.array_equal(given, part), trial


def test_min_fusion_with_a_dense_guarantee_too():
    """A second guaranteed ranking (``fusion_dense``): each ranking's #1 keeps its place, the
    better of the two keys counts, and ranking to a depth gives the full fusion's first places."""
    n = 20
    ppr = np.arange(n, 0, -1, dtype=np.float64)   # row 0 is PageRank's #1
    bm25 = np.zeros(n)
    bm25[15] = 5.0                                # BM25's #1 only
    dense = np.linspace(0.1, 0.9, n)              # dense ranks every row: row 19 first, then 18 …
    rows = np.arange(n)
    order = _order(min_fusion(Ranks(rows, ppr), [(Ranks(rows, bm25), 3.0),
                                                 (Ranks(rows, dense, only_positive=False), 2.0)]))
    assert order.index(19) == 1                   # dense #1: key 2 ties PageRank's #2 and goes first
    assert order.index(15) == 3                   # BM25 #1: key 3 ties PageRank's #3 and goes first
    assert order[:7] == [0, 19, 1, 15, 2, 18, 3]  # dense #2 (row 18): key 4 ties PageRank's #4, goes first
    alone = _order(min_fusion(Ranks(rows, ppr), [(Ranks(rows, bm25), 3.0), (Ranks(rows, dense), 0.0)]))
    assert alone == _order(min_rank_scores(ppr, bm25, 3.0))   # factor 0: that ranking takes no part
    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(30, 300))
        ppr = np.round(rng.random(n), 2) * (rng.random(n) < 0.7)
        bm25 = np.round(rng.random(n) * 5, 1) * (rng.random(n) < 0.3)
        dense = np.round(rng.random(n), 2)
        rows = np.arange(n)
        fb, fd = float(rng.choice([2.0, 3.0])), float(rng.choice([1.0, 1.5, 2.0, 4.0]))
        depth = int(rng.integers(1, 12))
        args = (Ranks(rows, ppr), [(Ranks(rows, bm25), fb), (Ranks(rows, dense, only_positive=False), fd)])
        full, part = min_fusion(*args), min_fusion(*args, depth=depth)
        ranked = part > 0
        assert np.array_equal(part[ranked], full[ranked]), trial
        assert top_k(part, depth).tolist() == top_k(full, depth).tolist(), trial


def test_min_fusion_scores_are_one_over_position():
    scores = min_rank_scores(np.array([3.0, 2.0, 1.0]), np.array([0.0, 0.0, 1.0]), 3.0)
    assert sorted(scores.tolist(), reverse=True) == [1.0, 0.5, 1 / 3]


def test_rrf_ignores_unmatched_rows_of_a_positive_only_list():
    dense = np.array([0.1, 0.9, 0.5])
    bm25 = np.array([0.0, 0.0, 3.0])
    fused = rrf_scores([dense, bm25], 60, only_positive=[False, True])
    expected = np.array([1 / 63, 1 / 61, 1 / 62 + 1 / 61])
    assert np.allclose(fused, expected)


def test_hybrid_prior_is_mean_of_clipped_cosine_and_scaled_bm25():
    prior = hybrid_prior(np.array([0.8, -0.2, 0.4]), np.array([2.0, 4.0, 0.0]))
    assert np.allclose(prior, [0.5 * (0.8 + 0.5), 0.5 * (0.0 + 1.0), 0.5 * 0.4])
    assert np.allclose(hybrid_prior(np.array([0.5]), np.array([0.0])), [0.25])   # no BM25 match at all


# ---- hub weights and the reset ----------------------------------------------------------

def test_idf_ratio_by_hand():
    # 3 passages, entity 0 in all three, entity 1 in one; N is raised to HUB_MIN_CORPUS.
    C = sp.csr_matrix(np.array([[1, 1], [1, 0], [2, 0]], dtype=np.float32))
    n = HUB_MIN_CORPUS
    expected = [np.log((n + 1) / 3) / np.log(n + 1), 1.0 * np.log((n + 1) / 1) / np.log(n + 1)]
    assert np.allclose(idf_ratio(C), expected)


def _activation(scores, levels):
    return Activation(np.asarray(scores, np.float32), np.asarray(levels, np.int16),
                      np.full(len(scores), -1, dtype=np.int64))


def test_reset_with_all_seed_scores_zero_is_finite_and_sums_to_one():
    C_log = sp.csr_matrix(np.log1p(np.array([[1, 0], [0, 1]], dtype=np.float64)))
    params = RetrievalParams(seed_floor=-1.0)
    r_e, r_p = passage_entity_reset(C_log, _activation([0.0, 0.0], [1, 1]), np.array([0.3, 0.1]), params)
    assert np.all(np.isfinite(r_e)) and np.all(np.isfinite(r_p))
    assert np.isclose(r_e.sum() + r_p.sum(), 1.0) and r_e.sum() == 0
    r_e, r_p = passage_entity_reset(C_log, _activation([0.0, 0.0], [1, 1]), np.zeros(2), params)
    assert r_e.sum() == 0 and r_p.sum() == 0          # nothing at all: zeros, never NaN
    paper = params.__class__(reset="paper", passage_weight=0.05)
    r_e, r_p = passage_entity_reset(C_log, _activation([0.0, 0.0], [1, 1]), np.zeros(2), paper)
    assert np.all(np.isfinite(r_e)) and np.all(np.isfinite(r_p))


# ---- linking by spans -------------------------------------------------------------------

def test_maximal_matches_use_spans_not_substrings():
    cands = [NameCandidate("grand canyon", "Grand Canyon", 0, 12), NameCandidate("ran", "Ran", 20, 23),
             NameCandidate("canyon", "Canyon", 6, 12)]
    kept = maximal_matches(cands, {"grand canyon": 0, "ran": 1, "canyon": 2})
    assert [c.key for c in kept] == ["grand canyon", "ran"]     # "canyon" lies inside; "ran" does not


def _nearest(emb, sample_rows=(), calibrated=True):
    """The exact space's nearest-entity scan over ``emb`` (entity sample: ``sample_rows``)."""
    index = SimpleNamespace(graph=SimpleNamespace(), passage_ids=[], entity_emb=emb)
    space = ExactSpace(index, None, SimpleNamespace(entity_rows=np.asarray(sample_rows, dtype=np.int64)), None, False)
    return lambda vector: space.nearest_entity(vector, calibrated)


def test_mentions_are_suppressed_only_inside_a_matched_span():
    names = ["Stafford", "Ford", "Burgundy", "Beatrice I, Countess of Burgundy"]
    lookup = {"stafford": 0, "ford": 1, "burgundy": 2, "beatrice i, countess of burgundy": 3}
    emb = np.eye(4, dtype=np.float32)
    # "Stafford … Ford": Ford is a mention of its own, outside the Stafford span.
    seeds, linked, _ = link_entities([NameCandidate("stafford", "Stafford", 0, 8)],
                                  [Mention("ford", "Ford", "PERSON", 13, 17)], np.zeros((1, 4), np.float32),
                                  lookup, names, floor=0.7, nearest=_nearest(emb))
    assert set(seeds) == {0, 1}
    # "Burgundy" inside the linked "Beatrice I, Countess of Burgundy" is not a second seed.
    seeds, _, covered = link_entities(
        [NameCandidate("beatrice i, countess of burgundy", "Beatrice I, Countess of Burgundy", 0, 32),
         NameCandidate("burgundy", "Burgundy", 24, 32)],
        [Mention("burgundy", "Burgundy", "GPE", 24, 32)], np.zeros((1, 4), np.float32), lookup, names, floor=0.7,
        nearest=_nearest(emb))
    assert set(seeds) == {3}
    assert covered == {2}              # a part of the linked name: not a hop of its own


def test_mention_linked_by_cosine_respects_the_floor():
    names = ["Alpha", "Beta"]
    emb = np.array([[1, 0], [0, 1]], dtype=np.float32)
    vec = np.array([[0.6, 0.8]], dtype=np.float32)
    seeds, linked, _ = link_entities([], [Mention("alfa", "Alfa", "ORG", 0, 4)], vec, {"alpha": 0, "beta": 1},
                                     names, floor=0.7, nearest=_nearest(emb))
    assert seeds == {1: np.float32(0.8)} and linked[0].entity == "Beta"
    seeds, linked, _ = link_entities([], [Mention("alfa", "Alfa", "ORG", 0, 4)], vec, {"alpha": 0, "beta": 1},
                                     names, floor=0.9, nearest=_nearest(emb))
    assert seeds == {} and linked[0].entity is None


def test_mention_cosine_is_read_against_the_background_when_asked():
    # Mention vector (0.6, 0.8): cosine 0.8 to "Beta"; the background sample (rows 1, 2, 3) has
    # cosines 0.8, 0.6, 0.6 → median b = 0.6, calibrated (0.8 − 0.6) / 0.4 = 0.5.
    names = ["Alpha", "Beta", "Gamma", "Delta"]
    emb = np.array([[0, -1], [0, 1], [1, 0], [1, 0]], dtype=np.float32)
    vec = np.array([[0.6, 0.8]], dtype=np.float32)
    mention = [Mention("alfa", "Alfa", "ORG", 0, 4)]
    lookup = {n.lower(): i for i, n in enumerate(names)}
    seeds, linked, _ = link_entities([], mention, vec, lookup, names, floor=0.6,
                                     nearest=_nearest(emb, [1, 2, 3], calibrated=False))
    assert seeds == {1: np.float32(0.8)}
    seeds, linked, _ = link_entities([], mention, vec, lookup, names, floor=0.6, nearest=_nearest(emb, [1, 2, 3]))
    assert seeds == {} and abs(linked[0].similarity - 0.5) < 1e-6   # below the floor once calibrated
    seeds, _, _ = link_entities([], mention, vec, lookup, names, floor=0.4, nearest=_nearest(emb, [1, 2, 3]))
    assert list(seeds) == [1] and abs(seeds[1] - 0.5) < 1e-6


def test_siblings_trade_places_by_prior_and_keep_their_ranks():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.0])
    prior = np.array([0.1, 0.9, 0.5, 0.8, 0.2, 1.0])
    group = np.array([7, 3, 7, 7, 4, 7])     # passages 0, 2, 3 (and 5, unscored) share a title
    out = order_siblings(scores, prior, group, depth=5)
    # group 7 held 0.9, 0.7, 0.6 → given in prior order to 3 (0.8), 2 (0.5), 0 (0.1);
    # passage 5 is outside the top 5 and keeps its score; 1 and 4 have no sibling there
    assert out.tolist() == [0.6, 0.8, 0.7, 0.9, 0.5, 0.0]
    assert sorted(out.tolist()) == sorted(scores.tolist())
    assert order_siblings(scores, prior, np.arange(6)).tolist() == scores.tolist()   # no siblings: unchanged
    # equal priors keep the index order
    flat = order_siblings(np.array([0.2, 0.9]), np.array([0.5, 0.5]), np.array([1, 1]))
    assert flat.tolist() == [0.9, 0.2]


# ---- activation: the sentence behind the score ------------------------------------------

def test_improved_entity_reports_the_sentence_behind_its_score():
    # Entities 0 (seed 0.5), 3 (seed 1.0), 1, 4. Sentences: s0 [0, 1], s1 [3, 4], s2 [4, 1].
    rows = [[0, 1], [3, 4], [4, 1]]
    data = [(s, e) for s, r in enumerate(rows) for e in r]
    M = sp.csr_matrix((np.ones(len(data), np.float32), ([d[0] for d in data], [d[1] for d in data])), shape=(3, 5))
    sigma = np.array([0.9, 0.9, 0.9], dtype=np.float32)
    act = activate_entities(M, M.T.tocsr(), lambda r: sigma[r], {0: 0.5, 3: 1.0}, delta=0.4, max_iterations=3)
    # Step 1 reaches 1 through s0 (0.45); step 2 finds 3 → s1 → 4 → s2 → 1 (0.81).
    assert np.isclose(act.scores[1], 0.81)
    assert act.via_sentence[1] == 2 and act.levels[1] == 3
    assert act.scores[0] == np.float32(0.5) and act.levels[0] == 1   # a seed keeps its link score
    blocked = activate_entities(M, M.T.tocsr(), lambda r: sigma[r], {0: 0.5, 3: 1.0}, delta=0.4, max_iterations=3,
                                excluded={4})
    assert blocked.levels[4] == 0 and np.isclose(blocked.scores[1], 0.45)   # 4 never joins, so no 0.81 chain


def test_fusion_auto_follows_the_corpus_kind():
    from linearrag.retrieval.params import RetrievalParams
    from linearrag.index.meta import BuildSettings

    def is_document_index(meta):
        return BuildSettings.from_dict(meta.get("build", {})).corpus == "documents"

    assert RetrievalParams().fusion_for(documents=True) == "rrf"
    assert RetrievalParams().fusion_for(documents=False) == "min"
    assert RetrievalParams(fusion="min").fusion_for(documents=True) == "min"
    assert is_document_index({"build": {"corpus": "documents", "terms": False}})
    assert not is_document_index({"build": {"corpus": "records", "terms": True}})
    assert is_document_index({"build": {"terms": True}})          # indexes from before build.corpus
    assert not is_document_index({"build": {}})


def test_evidence_seeds_by_hand():
    from linearrag.retrieval.linking import evidence_seeds, no_seed_reason
    from linearrag.retrieval.params import RetrievalParams
    # passages → entities: p0 {0, 1}, p1 {2}, p2 {1, 3}, p3 {} (no entity)
    C = sp.csr_matrix((np.ones(5), [0, 1, 2, 1, 3], [0, 2, 3, 5, 5]), shape=(4, 4))
    idf = np.array([0.5, 0.2, 0.9, 1.0], dtype=np.float32)
    seeds = evidence_seeds(C.indptr, C.indices, [2, 3, 0], lambda e: idf[e])
    # p2 is rank 1, p3 (rank 2) holds nothing, p0 is rank 3; entity 1 keeps its best: 0.2 / 1
    assert seeds.keys() == {0, 1, 3}
    assert seeds[3] == pytest.approx(1.0) and seeds[1] == pytest.approx(0.2) and seeds[0] == pytest.approx(0.5 / 3)
    assert evidence_seeds(C.indptr, C.indices, [3], lambda e: idf[e]) == {}

    class Q:
        mentions = []
    assert no_seed_reason(Q, RetrievalParams()) == ("no query entity found, and the best passages hold no entity; "
                                                    "ranked by BM25 + dense fusion")
    assert no_seed_reason(Q, RetrievalParams(evidence_seeds=0, prior="dense")) == (
        "no query entity found; ranked by dense passage similarity")
    with pytest.raises(Exception, match="evidence_seeds"):
        RetrievalParams(evidence_seeds=-1)


# ---- views: what a person reads --------------------------------------------------------
def _result(evidence: list[str], seeds: int = 3):
    from linearrag.retrieval.results import ActivatedEntity, PassageHit, QueryEntity, QueryResult

    activated = [ActivatedEntity(f"seed{i}", 1.0 - i / 100, 1) for i in range(seeds)]
    activated.append(ActivatedEntity("reached", 0.5, 2, "seed0 meets reached here.", "b.md#0"))
    passages = [PassageHit(1, "a.md#0", "A", 0.049, "text a", ["seed0"]),
                PassageHit(2, "b.md#0", "B", 0.040, "text b", ["reached"]),
                PassageHit(3, "c.md#0", "C", 0.0, "text c")]
    return QueryResult("q?", "linearrag", [QueryEntity("x", None if evidence else "seed0", 0.9)], activated,
                       len(activated), passages, None, {}, {"total": 1.0}, evidence_passages=evidence)


def test_text_view_shows_relevance_not_fusion_sums_and_names_the_seeds():
    from linearrag.retrieval.results import relevance

    assert (relevance(0.049, 0.049), relevance(0.040, 0.049), relevance(0.0, 0.049), relevance(1, 0)) == (100, 82, 0, 0)
    named = _result([]).format_text()
    assert "(relevance 100 %)" in named and "(relevance 82 %)" in named and "(relevance 0 %)" in named
    assert "0.049" not in named and "named in the question: seed0 (1.00)" in named
    assert 'L2 reached (0.50) via "seed0 meets reached here." [b.md#0]' in named
    evidence = _result(["a.md#0", "b.md#0"], seeds=30).format_text()
    assert "evidence seeds (entities of the passages the query alone ranks best): seed0" in evidence
    assert "named in the question" not in evidence and ", +18 more" in evidence and "seed12" not in evidence


def test_html_view_labels_evidence_seeds_and_relevance():
    from linearrag.explain.html import query_elements, query_html

    for evidence, label in (([], "seed (named in the question)"), (["a.md#0"], "evidence seed")):
        result = _result(evidence).to_dict()
        details = [e["data"]["detail"] for e in query_elements(result) if "source" not in e["data"]]
        assert any(d.startswith(f"seed0 — {label}") for d in details)
        assert any("(relevance 82 %)" in d for d in details) and not any("0.049" in d for d in details)
        assert label in query_html(result)


def test_copies_collapse_under_the_best_ranked_by_hand():
    """Rows 7 and 2 repeat row 5's text (spacing aside): they leave the ranking, listed under 5 in
    rank order; the other rows keep their order and scores."""
    from linearrag.retrieval.copies import collapse_copies

    texts = {5: "a  b\nc", 3: "other", 7: "a b c", 9: "a b", 2: " a b c "}
    rows, scores, copies = collapse_copies(np.array([5, 3, 7, 9, 2]), np.array([0.9, 0.8, 0.7, 0.6, 0.5]),
                                           texts.__getitem__)
    assert rows.tolist() == [5, 3, 9] and scores.tolist() == [0.9, 0.8, 0.6]
    assert copies == {5: [7, 2]}
    rows, scores, copies = collapse_copies(np.array([3, 9]), np.array([1.0, 0.5]), texts.__getitem__)
    assert rows.tolist() == [3, 9] and copies == {}
