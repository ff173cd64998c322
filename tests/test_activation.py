"""Stage 1 on hand-built graphs: bridges, pruning, levels, bounds."""

import numpy as np
import scipy.sparse as sp

from linearrag.retrieval.activation import activate_entities


def _graph(rows):
    """M from a list of sentences, each a list of entity indices."""
    n_e = 1 + max(e for r in rows for e in r)
    data = [(s, e) for s, r in enumerate(rows) for e in r]
    M = sp.csr_matrix((np.ones(len(data), np.float32), ([d[0] for d in data], [d[1] for d in data])),
                      shape=(len(rows), n_e))
    return M, M.T.tocsr()


# Entities: 0 Beatrice, 1 Barbarossa, 2 Germany, 3 Burgundy, 4 Unrelated
SENTENCES = [[0, 1], [1, 2], [0, 3], [3, 4]]


def _sigma(values):
    values = np.asarray(values, dtype=np.float32)
    return lambda rows: values[rows]


def test_bridge_entity_activates_at_level_2_through_the_right_sentence():
    M, MT = _graph(SENTENCES)
    act = activate_entities(M, MT, _sigma([0.9, 0.8, 0.2, 0.1]), {0: 1.0}, delta=0.5, max_iterations=3)
    assert act.levels[1] == 2 and act.via_sentence[1] == 0
    assert act.scores[1] == np.float32(0.9)
    # Germany is reached from Barbarossa through sentence 1: 0.9 * 0.8 = 0.72 ≥ δ.
    assert act.levels[2] == 3 and act.via_sentence[2] == 1
    assert np.isclose(act.scores[2], 0.72)


def test_low_sigma_path_is_pruned():
    M, MT = _graph(SENTENCES)
    act = activate_entities(M, MT, _sigma([0.9, 0.8, 0.2, 0.1]), {0: 1.0}, delta=0.5, max_iterations=3)
    # Burgundy only through sentence 2 with σ = 0.2 < δ: pruned, and so is what lies behind it.
    assert act.levels[3] == 0 and act.scores[3] == 0
    assert act.levels[4] == 0


def test_stops_at_max_iterations():
    M, MT = _graph(SENTENCES)
    act = activate_entities(M, MT, _sigma([0.9, 0.8, 0.2, 0.1]), {0: 1.0}, delta=0.5, max_iterations=1)
    assert act.levels[1] == 2 and act.levels[2] == 0


def test_activation_is_monotone_and_bounded():
    rng = np.random.default_rng(0)
    rows = [list(rng.choice(30, size=rng.integers(1, 5), replace=False)) for _ in range(80)]
    M, MT = _graph(rows)
    sigma = rng.uniform(-0.5, 1.0, size=80)
    previous = None
    for steps in range(0, 6):
        for propagation in ("max", "sum"):
            act = activate_entities(M, MT, _sigma(sigma), {0: 1.0, 5: 0.8}, delta=0.2, max_iterations=steps,
                                    propagation=propagation)
            assert act.scores.min() >= 0.0 and act.scores.max() <= 1.0
        act = activate_entities(M, MT, _sigma(sigma), {0: 1.0, 5: 0.8}, delta=0.2, max_iterations=steps)
        if previous is not None:
            assert np.all(act.scores >= previous - 1e-7)
        previous = act.scores


def test_seeds_keep_level_1_and_no_bridging_sentence():
    M, MT = _graph(SENTENCES)
    act = activate_entities(M, MT, _sigma([1, 1, 1, 1]), {0: 0.8, 2: 0.9}, delta=0.1, max_iterations=2)
    assert act.levels[0] == 1 and act.levels[2] == 1
    assert act.via_sentence[0] == -1 and act.via_sentence[2] == -1


def test_hub_weight_damps_what_an_entity_passes_on():
    M, MT = _graph(SENTENCES)
    weight = np.ones(M.shape[1], dtype=np.float32)
    weight[0] = 0.3
    act = activate_entities(M, MT, _sigma([0.9, 0.8, 0.9, 0.1]), {0: 1.0}, delta=0.5, max_iterations=1,
                            entity_weight=weight)
    assert act.levels[1] == 0 and act.levels[3] == 0
