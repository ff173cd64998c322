"""C and M for a hand-built three-passage corpus."""

import numpy as np

from linearrag.analysis import AnalyzedText, Mention
from linearrag.graph import build_graph


def _m(surface, label="PERSON"):
    from linearrag.normalize import normalize_entity
    return Mention(normalize_entity(surface), surface, label)


def test_matrices_of_a_three_passage_corpus():
    p0 = AnalyzedText(["Alice met Bob.", "Bob met Alice again."], [[_m("Alice"), _m("Bob")], [_m("Bob"), _m("Alice")]])
    p1 = AnalyzedText(["Carol visited Paris."], [[_m("Carol"), _m("Paris", "GPE")]])
    p2 = AnalyzedText(["Nothing here.", "The Paris trip."], [[], [_m("the Paris", "GPE")]])
    g = build_graph([(p0, ""), (p1, ""), (p2, "")])
    assert g.entity_keys == ["alice", "bob", "carol", "paris"]
    assert g.C.toarray().tolist() == [[2, 2, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]]
    assert g.M.toarray().tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 1]]
    assert g.sentence_passage.tolist() == [0, 0, 1, 2, 2]
    assert g.sentences[3] == "Nothing here."
    assert g.entity_names[3] == "Paris"          # most frequent surface form


def test_title_is_an_entity_of_the_passage_and_its_sentences():
    p0 = AnalyzedText(["She was a queen.", "She married Lothair II."], [[], [_m("Lothair II")]])
    g = build_graph([(p0, "Teutberga")])
    assert g.entity_keys == ["teutberga", "lothair ii"]
    assert g.C.toarray().tolist() == [[1, 1]]
    assert g.M.toarray().tolist() == [[1, 0], [1, 1]]
    assert g.C.dtype == np.float32 and g.M.dtype == np.float32
