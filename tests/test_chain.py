"""Linked selection (retrieval/chain.py): by hand on small graphs, then on the real sample index."""

import numpy as np
import pytest
import scipy.sparse as sp

from linearrag import RetrievalParams
from linearrag.retrieval.chain import TitleMentions, linked_order, name_entities

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


def _csr(rows_entities: dict[int, list[int]], n_rows: int, n_entities: int = 200) -> sp.csr_matrix:
    r = [row for row, es in rows_entities.items() for _ in es]
    c = [e for es in rows_entities.values() for e in es]
    return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n_rows, n_entities))


def test_linked_order_by_hand():
    # candidates (best-scored first) are passages 10..15; their title entities 100..105, except
    # that 15 is a sibling of 13 (same title entity 103)
    C = _csr({10: [100, 103], 11: [101], 12: [102], 13: [103, 104], 14: [104], 15: [103]}, 16)
    rows = np.array([10, 11, 12, 13, 14, 15])
    names = np.array([100, 101, 102, 103, 104, 103])
    order, linked = linked_order(rows, names, C.indptr, C.indices)
    # 10 stays first; it names 103 → 13 comes second; 13 names 104 → 14 third; then by score.
    # 15 shares 13's title: a title links one passage, so 15 waits for its score.
    assert rows[order].tolist() == [10, 13, 14, 11, 12, 15]
    assert linked == [-1, 0, 1, -1, -1, -1]


def test_linked_order_keeps_score_order_without_links():
    C = _csr({0: [5], 1: [6], 2: [7]}, 3)
    order, linked = linked_order(np.array([2, 0, 1]), np.array([7, 5, 6]), C.indptr, C.indices)
    assert order.tolist() == [0, 1, 2] and linked == [-1, -1, -1]
    assert linked_order(np.zeros(0, dtype=np.int64), np.zeros(0), C.indptr, C.indices)[0].size == 0


def test_a_passage_does_not_link_its_own_title():
    # 0 carries its own title entity 9; 1 (another passage titled the same) is not "named" by 0
    C = _csr({0: [9], 1: [9], 2: [3]}, 3, 10)
    order, linked = linked_order(np.array([0, 2, 1]), np.array([9, 3, 9]), C.indptr, C.indices)
    assert order.tolist() == [0, 1, 2] and linked == [-1, -1, -1]


def test_title_written_in_text_links():
    C = _csr({0: [], 1: [], 2: []}, 3)
    titles = ["Girls in White", "Ann", "Sam Wood"]
    texts = ["Girls in White is a 1937 film directed by sam  wood.", "Annapolis is a city.", "Sam Wood was born in 1883."]
    mentions = TitleMentions(titles, texts, whole_words=True)
    assert mentions(0, 2) and not mentions(2, 0)        # case and spacing folded
    assert not mentions(1, 1)                           # its own title never counts
    assert not TitleMentions(["x", "Ann"], ["Annapolis", ""], True)(0, 1)   # not inside a longer word
    order, linked = linked_order(np.array([0, 1, 2]), np.array([-1, -1, -1]), C.indptr, C.indices, mentions)
    assert order.tolist() == [0, 2, 1] and linked == [-1, 0, -1]
    ja = TitleMentions(["東京", "都", "東京"], ["東京都の人口", "", "東京"], whole_words=False)
    assert ja(0, 2) is False                            # the same title as the naming passage
    assert TitleMentions(["大阪", "東京"], ["東京都の人口", ""], whole_words=False)(0, 1)   # no word boundaries in Japanese
    assert not ja(0, 1)                                 # one character: never a link


def test_name_entities_resolve_titles():
    lookup = {"beatles": 4, "john lennon": 7}
    ids = name_entities(["The Beatles", "John  Lennon", "", "Nobody"], lookup)
    assert ids.tolist() == [4, 7, -1, -1]
    assert name_entities(["Fab Four"], lookup, {"fab four": "beatles"}.get).tolist() == [4]


ROMANOFF = "Which country the director of film Romanoff And Juliet (1961 Film) is from?"


def test_the_director_named_by_the_film_comes_second(sample_retriever):
    on = sample_retriever.query(ROMANOFF)
    off = sample_retriever.query(ROMANOFF, RetrievalParams(link_depth=0))
    on_ids, off_ids = [p.id for p in on.passages], [p.id for p in off.passages]
    # the film's page (2w002388) names Peter Ustinov, whose page (2w002385) holds the country
    assert on_ids[:2] == ["2w002388", "2w002385"]
    assert off_ids[0] == "2w002388" and off_ids.index("2w002385") > 1
    assert on.passages[1].linked_from == "2w002388" and on.passages[0].linked_from is None
    assert all(p.linked_from is None for p in off.passages)
    assert [p.score for p in off.passages] == sorted((p.score for p in off.passages), reverse=True)
    assert "named by [2w002388] above" in on.format_text()
    assert on.to_dict()["passages"][1]["linked_from"] == "2w002388"
    from linearrag.explain.html import query_elements
    edges = [e["data"] for e in query_elements(on.to_dict()) if e["data"].get("short") == "names"]
    assert [d["detail"] for d in edges] == ["[2w002388] names Peter Ustinov [2w002385]"]
    # the scalable path selects the same way
    ann = sample_retriever.query(ROMANOFF, RetrievalParams(search="ann"))
    assert [p.id for p in ann.passages][:2] == on_ids[:2]


def test_linked_selection_is_off_for_baselines_and_documents(sample_retriever, team_index):
    from linearrag import Retriever

    for mode in ("dense", "bm25", "rrf"):
        result = sample_retriever.query(ROMANOFF, RetrievalParams(mode=mode))
        assert all(p.linked_from is None for p in result.passages)
    notes = Retriever.from_path(team_index[0]).query("佐藤さんのチームが使っている言語は?")
    assert all(p.linked_from is None for p in notes.passages)
    assert [p.score for p in notes.passages] == sorted((p.score for p in notes.passages), reverse=True)


def test_link_depth_is_checked():
    with pytest.raises(Exception, match="link_depth"):
        RetrievalParams(link_depth=-1)
    assert RetrievalParams(top_k=5, link_depth=30).depth == 30
    assert RetrievalParams(top_k=50, link_depth=30).depth == 50
