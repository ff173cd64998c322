"""Stage 2 on hand-built graphs: PPR against the closed form, reset normalisation."""

import numpy as np
import scipy.sparse as sp

from linearrag.retrieval.activation import Activation
from linearrag.retrieval.params import RetrievalParams
from linearrag.retrieval.ppr import BipartiteWalk, personalized_pagerank
from linearrag.retrieval.fusion import Ranks, rrf, top_k
from linearrag.retrieval.reset import passage_entity_reset

C = sp.csr_matrix(np.array([
    [2, 1, 0, 0],
    [0, 1, 1, 0],
    [0, 0, 3, 1],
    [0, 0, 0, 0],   # a passage with no entity keeps only its reset mass
], dtype=np.float32))


def test_ppr_matches_closed_form():
    walk = BipartiteWalk.from_counts(C)
    rng = np.random.default_rng(1)
    r = rng.uniform(size=8)
    r /= r.sum()
    d = 0.5
    x_p, x_e = personalized_pagerank(walk, r[:4], r[4:], d, max_iterations=500, tol=1e-14)
    W = walk.dense_matrix()
    expected = (1 - d) * np.linalg.solve(np.eye(8) - d * W, r)
    assert np.allclose(np.concatenate([x_p, x_e]), expected, atol=1e-10)


def test_walk_is_column_stochastic_where_edges_exist():
    W = BipartiteWalk.from_counts(C).dense_matrix()
    sums = W.sum(axis=0)
    assert np.allclose(sums[[0, 1, 2, 4, 5, 6, 7]], 1.0)
    assert sums[3] == 0.0


def _activation(n_e, seeds):
    scores = np.zeros(n_e, np.float32)
    levels = np.zeros(n_e, np.int16)
    for e, (s, lvl) in seeds.items():
        scores[e], levels[e] = s, lvl
    return Activation(scores, levels, np.full(n_e, -1))


def test_normalized_reset_mix_does_not_change_with_unrelated_passages():
    params = RetrievalParams(passage_weight=0.4)
    act = _activation(4, {0: (1.0, 1), 2: (0.5, 2)})
    base_c = C[:3]
    dense = np.array([0.5, 0.2, 0.1], np.float32)
    r_e, r_p = passage_entity_reset(base_c, act, dense, params)
    big_c = sp.vstack([base_c, sp.csr_matrix((500, 4), dtype=np.float32)]).tocsr()
    big_dense = np.concatenate([dense, np.full(500, 0.05, np.float32)])
    r_e2, r_p2 = passage_entity_reset(big_c, act, big_dense, params)
    assert np.isclose(r_e.sum(), 0.6) and np.isclose(r_e2.sum(), 0.6)
    assert np.isclose(r_p.sum(), 0.4) and np.isclose(r_p2.sum(), 0.4)
    assert np.allclose(r_e, r_e2)
    # With the paper's form the entity share shrinks as unrelated passages are added.
    paper = RetrievalParams(reset="paper", passage_weight=0.05, lam=1.0)
    pe, _ = passage_entity_reset(base_c, act, dense, paper)
    pe2, _ = passage_entity_reset(big_c, act, big_dense, paper)
    assert pe2.sum() < pe.sum()


def test_passage_reset_follows_equation_7():
    params = RetrievalParams(reset="paper", passage_weight=1.0, lam=0.5)
    act = _activation(4, {1: (0.8, 1), 2: (0.6, 2)})
    C_log = C.copy()
    C_log.data = np.log1p(C_log.data)
    dense = np.array([0.2, -0.3, 0.4, 0.1], np.float32)
    r_e, r_p = passage_entity_reset(C_log, act, dense, params)
    expected = np.array([
        0.5 * 0.2 + np.log1p(0.8 * np.log(2)),
        0.0 + np.log1p(0.8 * np.log(2) + 0.6 * np.log(2) / 2),
        0.5 * 0.4 + np.log1p(0.6 * np.log(4) / 2),
        0.5 * 0.1,
    ])
    total = expected.sum() + 1.4
    assert np.allclose(r_p, expected / total, atol=1e-6)
    assert np.allclose(r_e, np.array([0, 0.8, 0.6, 0]) / total, atol=1e-6)


def test_top_k_is_deterministic_on_ties():
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1])
    assert top_k(scores, 3).tolist() == [1, 0, 2]
    assert top_k(scores, 10).tolist() == [1, 0, 2, 3, 4]


def test_rrf_fuses_ranks():
    a = np.array([3.0, 2.0, 1.0])
    b = np.array([1.0, 3.0, 2.0])
    rows = np.arange(len(a))
    fused = rrf([Ranks(rows, a, only_positive=False), Ranks(rows, b, only_positive=False)], k=60)
    assert np.isclose(fused[1], 1 / 62 + 1 / 61)
    assert top_k(fused, 1).tolist() == [1]


def test_each_step_does_two_plain_power_iterations():
    """Gauss–Seidel order on the bipartite graph: k steps give the passage vector of 2k plain
    (Jacobi) power iterations, whatever the reset."""
    walk = BipartiteWalk.from_counts(C)
    rng = np.random.default_rng(3)
    r = rng.random(8)
    r /= r.sum()
    d = 0.7
    x_p, x_e = r[:4].copy(), r[4:].copy()
    for _ in range(6):   # the plain iteration, both halves from the previous iterate
        x_p, x_e = (1 - d) * r[:4] + d * (walk.to_passages @ x_e), (1 - d) * r[4:] + d * (walk.to_entities @ x_p)
    gs_p, _ = personalized_pagerank(walk, r[:4], r[4:], d, max_iterations=3, tol=0.0)
    assert np.allclose(gs_p, x_p, atol=1e-12)


def test_error_left_at_the_stop_is_within_the_tolerance():
    """The stop rule (L1 change of a step below ``tol``) leaves an L1 error of at most
    d²/(1 − d²) times that change: below ``tol`` itself for the default damping, on random
    graphs with hubs and isolated nodes."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        n_p, n_e = 40, 60
        dense = (rng.random((n_p, n_e)) < rng.uniform(0.02, 0.2)).astype(float)
        dense[:, 0] = 1.0                      # a hub entity in every passage
        dense[rng.integers(n_p)] = 0.0         # an isolated passage
        walk = BipartiteWalk.from_counts(sp.csr_matrix(dense))
        r = rng.random(n_p + n_e) * (rng.random(n_p + n_e) < 0.3)
        r[0] += 1e-3
        r /= r.sum()
        d = RetrievalParams().damping
        W = walk.dense_matrix()
        exact = np.linalg.solve(np.eye(n_p + n_e) - d * W, (1 - d) * r)
        tol = RetrievalParams().ppr_tol
        x_p, x_e = personalized_pagerank(walk, r[:n_p], r[n_p:], d, tol=tol)
        error = np.abs(np.concatenate([x_p, x_e]) - exact).sum()
        assert error <= tol, (trial, error)
        one_p, one_e = personalized_pagerank(walk, r[:n_p], r[n_p:], d, max_iterations=1, tol=tol)
        assert np.abs(np.concatenate([one_p, one_e]) - exact).sum() > tol   # one step is not enough
