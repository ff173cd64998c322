"""The scalable path's graph stages on hand-built and random graphs: forward-push PageRank
against the closed form, sparse activation and reset against the exact ones, key tables."""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from linearrag.files import KeyTable, write_key_table, write_strings, read_strings
from linearrag.retrieval.activation import activate_entities, local_activation
from linearrag.retrieval.hubs import idf_ratio
from linearrag.retrieval.params import RetrievalParams
from linearrag.retrieval.ppr import BipartiteWalk, personalized_pagerank, push_pagerank
from linearrag.retrieval.reset import local_reset, passage_entity_reset
from linearrag.retrieval.sparse import SparseVector, gather


def _graph(C: sp.csr_matrix, M: sp.csr_matrix | None = None, sentence_passage=None):
    """The raw arrays local.py reads, as the store provides them."""
    C = sp.csr_matrix(C, dtype=np.float32)
    CT = C.tocsc()
    g = SimpleNamespace(C_indptr=C.indptr, C_indices=C.indices, C_data=C.data, CT_indptr=CT.indptr,
                        CT_indices=CT.indices, CT_data=CT.data, n_passages=C.shape[0])
    if M is not None:
        M = sp.csr_matrix(M, dtype=np.float32)
        MT = M.tocsc()
        g.M_indptr, g.M_indices, g.MT_indptr, g.MT_indices = M.indptr, M.indices, MT.indptr, MT.indices
    return g


def _random_graph(seed: int, n_p=40, n_e=60, n_s=120, density=0.06):
    rng = np.random.default_rng(seed)
    sentence_passage = np.sort(rng.integers(0, n_p, n_s))
    M = sp.random(n_s, n_e, density=density, random_state=seed, format="csr")
    M.data[:] = 1.0
    rows = []
    for s in range(n_s):   # every sentence mentions at least one entity
        if M.indptr[s] == M.indptr[s + 1]:
            rows.append((s, int(rng.integers(n_e))))
    if rows:
        M = (M + sp.csr_matrix((np.ones(len(rows)), ([r[0] for r in rows], [r[1] for r in rows])),
                               shape=M.shape)).tocsr()
        M.data[:] = 1.0
    P = sp.csr_matrix((np.ones(n_s), (sentence_passage, np.arange(n_s))), shape=(n_p, n_s))
    C = (P @ M).tocsr()          # counts: sentences of the passage that mention the entity
    C.sort_indices()
    return C.astype(np.float32), M.astype(np.float32), sentence_passage


def test_gather_reads_the_rows_asked_for():
    A = sp.csr_matrix(np.array([[0, 1, 2], [0, 0, 0], [3, 0, 4]], dtype=np.float32))
    owner, cols, vals = gather(A.indptr, A.indices, np.array([2, 1, 0]), A.data)
    assert owner.tolist() == [0, 0, 2, 2] and cols.tolist() == [0, 2, 1, 2] and vals.tolist() == [3, 4, 1, 2]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_push_pagerank_matches_closed_form_within_its_residual(seed):
    C, _, _ = _random_graph(seed)
    n_p, n_e = C.shape
    rng = np.random.default_rng(seed)
    r = np.where(rng.uniform(size=n_p + n_e) < 0.15, rng.uniform(size=n_p + n_e), 0.0)
    r /= r.sum()
    d = 0.5
    W = BipartiteWalk.from_counts(C).dense_matrix()
    exact = (1 - d) * np.linalg.solve(np.eye(n_p + n_e) - d * W, r)
    rp, re = np.flatnonzero(r[:n_p]), np.flatnonzero(r[n_p:])
    for eps in (1e-3, 1e-6, 1e-9):
        out = push_pagerank(_graph(C), SparseVector(rp, r[rp]), SparseVector(re, r[n_p + re]), d, eps)
        approx = np.zeros(n_p + n_e)
        approx[out.passages.rows] = out.passages.values
        approx[n_p + out.entities.rows] = out.entities.values
        gap = exact - approx
        # push never overshoots, and what it misses is exactly the residual left (the bound)
        assert gap.min() > -1e-7
        assert gap.sum() <= out.residual + 1e-6    # W is built in float32
        deg = np.concatenate([np.diff(C.indptr), np.diff(C.tocsc().indptr)])
        assert out.residual < eps * np.maximum(deg, 1).sum() + 1e-12
    # the tightest tolerance ranks passages as the exact solution does
    top = np.argsort(-exact[:n_p], kind="stable")[:10]
    assert np.allclose(approx[top], exact[top], atol=1e-8)


def test_push_agrees_with_the_power_iteration_used_by_the_exact_path():
    C, _, _ = _random_graph(5, n_p=80, n_e=90, n_s=300)
    n_p, n_e = C.shape
    r_p = np.zeros(n_p)
    r_p[[3, 7, 11]] = [0.2, 0.1, 0.3]
    r_e = np.zeros(n_e)
    r_e[[2, 40]] = [0.25, 0.15]
    x_p, _ = personalized_pagerank(BipartiteWalk.from_counts(C), r_p, r_e, 0.5, 500, 1e-14)
    out = push_pagerank(_graph(C), SparseVector(np.array([3, 7, 11]), r_p[[3, 7, 11]]),
                        SparseVector(np.array([2, 40]), r_e[[2, 40]]), 0.5, 1e-10)
    approx = np.zeros(n_p)
    approx[out.passages.rows] = out.passages.values
    assert np.abs(approx - x_p).max() < 1e-8
    assert np.argsort(-approx, kind="stable")[:10].tolist() == np.argsort(-x_p, kind="stable")[:10].tolist()


@pytest.mark.parametrize("seed", [0, 3, 7])
@pytest.mark.parametrize("propagation", ["max", "sum"])
def test_local_activation_equals_the_exact_activation(seed, propagation):
    C, M, _ = _random_graph(seed, n_p=60, n_e=80, n_s=200, density=0.03)
    sigma = np.random.default_rng(seed).uniform(0.2, 1.0, size=M.shape[0]).astype(np.float32)
    weight = idf_ratio(C) ** 2.0
    seeds = {1: 1.0, 5: 0.8}
    exact = activate_entities(M, M.T.tocsr(), lambda rows: sigma[rows], seeds, delta=0.2, max_iterations=3,
                              propagation=propagation, entity_weight=weight, excluded={9})
    local = local_activation(_graph(C, M), lambda rows: sigma[rows], seeds, delta=0.2, max_iterations=3,
                             propagation=propagation, hub_exponent=2.0, excluded={9})
    assert local.ids.tolist() == exact.active.tolist()
    assert np.allclose(local.scores, exact.scores[exact.active], atol=1e-6)
    assert local.levels.tolist() == exact.levels[exact.active].tolist()
    assert local.via.tolist() == exact.via_sentence[exact.active].tolist()


def test_hub_fanout_keeps_a_hub_inside_the_allowed_sentences():
    # entity 0 (the hub) is in every sentence; entity k+1 only in sentence k
    n = 6
    M = sp.csr_matrix(np.hstack([np.ones((n, 1)), np.eye(n)]).astype(np.float32))
    C = M.copy()                      # one sentence per passage
    sigma = np.linspace(0.5, 1.0, n).astype(np.float32)
    full = local_activation(_graph(C, M), lambda rows: sigma[rows], {0: 1.0}, 0.1, 1)
    capped = local_activation(_graph(C, M), lambda rows: sigma[rows], {0: 1.0}, 0.1, 1,
                              allowed_sentences=np.array([1, 2]), hub_fanout=3)
    assert full.ids.tolist() == list(range(n + 1))
    assert capped.ids.tolist() == [0, 2, 3]        # only through sentences 1 and 2
    assert capped.via.tolist() == [-1, 1, 2]


def test_local_reset_equals_the_exact_reset():
    C, M, _ = _random_graph(4)
    sigma = np.random.default_rng(4).uniform(0.3, 1.0, size=M.shape[0]).astype(np.float32)
    params = RetrievalParams()
    weight = idf_ratio(C) ** params.hub_damping
    exact_act = activate_entities(M, M.T.tocsr(), lambda rows: sigma[rows], {2: 1.0, 3: 0.7}, 0.2, 3,
                                  entity_weight=weight)
    local_act = local_activation(_graph(C, M), lambda rows: sigma[rows], {2: 1.0, 3: 0.7}, 0.2, 3,
                                 hub_exponent=params.hub_damping)
    prior = np.random.default_rng(5).uniform(-0.2, 0.8, size=C.shape[0])
    C_log = C.copy()
    C_log.data = np.log1p(C_log.data)
    r_e, r_p = passage_entity_reset(C_log, exact_act, prior, params, weight)
    known = np.arange(0, C.shape[0], 4)          # the candidate rows; the rest of the prior is tail mass

    def outside_mean(rows):
        rest = np.setdiff1d(np.arange(C.shape[0]), rows)
        return float(np.clip(prior[rest], 0, None).mean())

    s_e, s_p = local_reset(_graph(C, M), local_act, known, lambda rows: prior[rows], outside_mean, params)
    dense_p = np.zeros(C.shape[0])
    dense_p[s_p.rows] = s_p.values
    # the rows it computes (candidates and the passages of activated entities) match the exact reset
    assert set(known) <= set(s_p.rows.tolist())
    assert np.allclose(dense_p[s_p.rows], r_p[s_p.rows], atol=1e-9)
    dense_e = np.zeros(C.shape[1])
    dense_e[s_e.rows] = s_e.values
    assert np.allclose(dense_e, r_e, atol=1e-9)


def test_key_table_finds_every_key_and_nothing_else(tmp_path):
    keys = [f"entity {i}" for i in range(500)] + ["", "東京", "x" * 300]
    write_strings(tmp_path, "keys", keys)
    write_key_table(tmp_path, "keys", keys)
    table = KeyTable.open(tmp_path, "keys", read_strings(tmp_path, "keys"))
    assert all(table[k] == i for i, k in enumerate(keys))
    assert "entity 500" not in table and table.get("nope") is None and 3 not in table
    assert len(table) == len(keys)


def test_key_table_resolves_many_keys_at_once_like_one_by_one(tmp_path, monkeypatch):
    import linearrag.files as files

    keys = [f"entity {i}" for i in range(500)] + ["", "東京", "x" * 300]
    write_strings(tmp_path, "keys", keys)
    write_key_table(tmp_path, "keys", keys)
    table = KeyTable.open(tmp_path, "keys", read_strings(tmp_path, "keys"))
    asked = ["entity 7", "nope", "東京", "entity 7", "entity 499", "", "entity 500", 3]
    assert table.resolve(asked) == {"entity 7": 7, "東京": 501, "entity 499": 499, "": 500}
    assert table.resolve([]) == {}
    # keys whose hashes collide are told apart by the key itself
    monkeypatch.setattr(files, "key_hash", lambda k: 42 if k.startswith("entity") else 7)
    write_key_table(tmp_path, "collide", keys)
    collide = KeyTable.open(tmp_path, "collide", read_strings(tmp_path, "keys"))
    assert collide.resolve(["entity 3", "entity 250", "entity 999"]) == {"entity 3": 3, "entity 250": 250}
    assert collide["entity 250"] == 250
