"""Walk rounds (pipeline.rank, ``rounds``): the best passages' entities seed the next round."""

import numpy as np
import pytest

from linearrag import RetrievalParams

pytestmark = pytest.mark.slow   # the real sample index

QUESTION = "Where was the place of death of the performer of song I Can'T See Myself Leaving You?"


def test_a_second_round_seeds_every_entity_of_the_best_passage(sample_retriever):
    plain = RetrievalParams(link_depth=0, max_reported_entities=10_000)
    one = sample_retriever.query(QUESTION, plain)
    two = sample_retriever.query(QUESTION, plain.with_overrides({"rounds": 2, "round_passages": 1}))
    assert "rounds" not in one.timings_ms and two.timings_ms["rounds"] > 0
    index = sample_retriever.index
    row = index.passage_ids.index(one.passages[0].id)
    graph = index.graph
    best = {graph.entity_names[e] for e in graph.C_indices[graph.C_indptr[row]:graph.C_indptr[row + 1]].tolist()}
    first = {e.entity: e.level for e in one.activated_entities}
    second = {e.entity: e.level for e in two.activated_entities}
    # every entity of the best passage is a seed (level 1) of the second round; in the first
    # round some of them were reached later, or not at all
    assert best and all(second.get(name) == 1 for name in best)
    assert any(first.get(name) != 1 for name in best)
    # the same query-entity links: rounds add seeds, not query entities
    assert [(e.surface, e.entity) for e in two.query_entities] == [(e.surface, e.entity) for e in one.query_entities]


def test_rounds_stop_when_nothing_new_is_seeded(sample_retriever):
    two = sample_retriever.query(QUESTION, RetrievalParams(rounds=2))
    many = sample_retriever.query(QUESTION, RetrievalParams(rounds=5))
    # the second round's best passages hold no entity that is not a seed already: the third adds nothing
    assert [p.id for p in many.passages] == [p.id for p in two.passages]
    assert many.activated_count == two.activated_count
    assert np.allclose([p.score for p in many.passages], [p.score for p in two.passages])


def test_round_parameters_are_checked():
    for bad in ({"rounds": 0}, {"round_passages": 0}, {"round_weight": 0.0}, {"round_weight": 1.5}):
        with pytest.raises(Exception, match=next(iter(bad))):
            RetrievalParams(**bad)
