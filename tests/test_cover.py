"""Bridged coverage (retrieval/cover.py): by hand, inside linked selection, and end to end on
real MuSiQue passages."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from linearrag import RetrievalParams
from linearrag.retrieval.chain import linked_order
from linearrag.retrieval.cover import Coverage, bridge_entities
from linearrag.retrieval.output import readable_words


def _coverage(weight: float = 1.0) -> Coverage:
    # four candidates, three query tokens (df 1, 10, 100 of 1,000 passages); candidate 0 holds
    # token 0, 1 holds tokens 0 and 1, 2 holds token 1, 3 holds token 2
    held = np.array([[1, 1, 0, 0],
                     [0, 1, 1, 0],
                     [0, 0, 0, 1]], dtype=bool)
    bridges = [{7}, {8}, {7}, set()]
    return Coverage(held, np.array([1, 10, 100]), 1000, bridges, weight)


def test_gain_is_the_idf_share_a_bridged_candidate_adds():
    cover = _coverage()
    idf = np.log(1001 / np.array([2.0, 11.0, 101.0]))
    share = idf / idf.sum()
    assert cover.gain(2) == 0.0                       # nothing placed: nothing bridges yet
    cover.place(0)                                    # covers token 0; entity 7 now bridges
    assert cover.gain(2) == pytest.approx(share[1])   # shares 7, adds token 1
    assert cover.gain(1) == 0.0                       # adds token 1 but shares no entity
    assert cover.gain(3) == 0.0                       # no entity at all
    cover.place(2)
    assert cover.gain(2) == 0.0                       # token 1 is covered now


def test_pick_weighs_score_rank_against_gain():
    cover = _coverage(weight=1.0)
    cover.place(0)
    # candidate 1 (rank 2): 1/2; candidate 2 (rank 3): 1/3 + share of token 1 (≈ 0.35)
    assert cover.pick([1, 2, 3]) == 2
    light = _coverage(weight=0.1)
    light.place(0)
    assert light.pick([1, 2, 3]) == 1                 # a small weight keeps score order
    assert light.pick([3]) == 3


def test_a_pick_by_coverage_is_explained():
    held = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]], dtype=bool)
    cover = Coverage(held, np.array([1, 10, 100]), 1000, [{7, 9}, {8}, {9, 7}, set()], 1.0, words=["a", "b", "c"])
    cover.place(0)
    assert cover.pick([1, 2, 3]) == 2
    # position 1: shares 7 (the lower of 7 and 9) with position 0, adds "b"
    assert cover.picks == {1: (0, 7, ["b"])}
    cover.place(2)
    assert cover.pick([1, 3]) == 1 and cover.picks.keys() == {1}   # no gain: score order, nothing to explain


def test_readable_words_give_the_question_s_spelling():
    question = "What is the debt load of the country the US studies?"
    assert readable_words(["debt", "countri", "us", "studi", "xyz"], question) == ["debt", "country", "US", "studies",
                                                                                   "xyz"]


def test_the_html_view_draws_a_coverage_edge():
    from linearrag.explain.html import query_elements

    passages = [{"rank": k + 1, "id": f"p{k}", "title": f"T{k}", "score": 1.0 / (k + 1), "text": "x", "entities": [],
                 "linked_from": None, "linked_via": None, "bridged_from": None, "bridged_via": None, "adds_words": [],
                 "file": "c.jsonl", "lines": [k + 1, k + 1], "section": f"T{k}", "page": None} for k in range(3)]
    passages[2].update(bridged_from="p0", bridged_via="China", adds_words=["debt"])
    result = {"query": "q", "mode": "linearrag", "activated_entities": [], "query_entities": [], "activated_count": 0,
              "passages": passages, "fallback": None, "evidence_passages": []}
    edges = [e["data"] for e in query_elements(result) if "source" in e["data"]]
    assert [(e["short"], e["detail"]) for e in edges] == [
        ("shares", '[p2] shares China with [p0] and adds the question\'s "debt", which no passage above holds')]


def test_bridge_entities_drop_hubs_and_the_question_s_own():
    C = sp.csr_matrix((np.ones(5), ([0, 0, 0, 1, 1], [1, 2, 3, 2, 4])), shape=(2, 5))
    df = np.array([0, 1, 500, 3, 1])
    out = bridge_entities(np.array([0, 1]), C.indptr, C.indices, lambda e: df[e], named={3}, max_df=100)
    assert out == [{1}, {4}]


def test_coverage_decides_only_positions_no_link_decides():
    # candidates 10..14 (best-scored first), title entities 100..104; 10 names 101 (a link)
    C = sp.csr_matrix((np.ones(7), ([10, 10, 11, 12, 13, 13, 14], [101, 50, 101, 102, 103, 50, 104])),
                      shape=(15, 200))
    rows = np.array([10, 11, 12, 13, 14])
    names = np.array([100, 101, 102, 103, 104])
    held = np.array([[1, 0, 0, 0, 0],           # token 0: the first passage's
                     [0, 0, 0, 1, 0]], dtype=bool)   # token 1: only candidate 3 (row 13) holds it
    bridges = [{50}, set(), set(), {50}, set()]   # row 13 shares entity 50 with row 10
    plain, _, _ = linked_order(rows, names, C.indptr, C.indices)
    assert rows[plain].tolist() == [10, 11, 12, 13, 14]          # 11 by link, the rest by score
    cover = Coverage(held, np.array([5, 5]), 1000, bridges, 1.0)
    order, linked, _ = linked_order(rows, names, C.indptr, C.indices, cover=cover)
    # position 2 is the link; position 3 goes to row 13 (rank 4: 1/4 + 0.5 > 1/3 for row 12)
    assert rows[order].tolist() == [10, 11, 13, 12, 14]
    assert linked == [-1, 0, -1, -1, -1]


@pytest.mark.slow
def test_the_page_that_continues_the_chain_joins_the_top_5(tmp_path):
    # 20 MuSiQue passages (tests/data/README.md). Dai Jitao's page comes first; the page with the
    # answer ("National debt of the United States") is named by no passage, and by score it sits
    # behind pages on US oil refining that match "the US" as well. It shares an entity of few
    # passages with a page placed above and holds the question's "debt", which none of them
    # holds: bridged coverage brings it into the top 5, by no link.
    from linearrag import Retriever, build_index

    build_index(Path(__file__).parent / "data" / "musique-dai-jitao.jsonl", tmp_path / "ix")
    retriever = Retriever.from_path(tmp_path / "ix")
    question = "What is the debt load for the US carried by the country Dai Jitao is from?"
    # Without dense search's guaranteed place (fusion_dense=0) coverage is the only way in: in
    # these 20 passages the debt page is dense search's first, which now ranks no lower than 5th.
    on = retriever.query(question, RetrievalParams(top_k=5, fusion_dense=0))
    off = retriever.query(question, RetrievalParams(top_k=5, cover_weight=0, fusion_dense=0))
    assert on.passages[0].title == off.passages[0].title == "Dai Jitao"
    debt = next(p for p in on.passages if p.title == "National debt of the United States")
    assert debt.rank > 2 and debt.linked_from is None
    # the result says why: an entity shared with a passage above, and the question's "debt"
    above = {p.id: p.rank for p in on.passages}
    assert above[debt.bridged_from] < debt.rank and debt.bridged_via and "debt" in debt.adds_words
    assert f"shares {debt.bridged_via} with [{debt.bridged_from}] above" in on.format_text()
    assert on.to_dict()["passages"][debt.rank - 1]["adds_words"] == debt.adds_words
    assert all(p.bridged_from is None and not p.adds_words for p in off.passages)
    assert "National debt of the United States" not in [p.title for p in off.passages]
    assert [p.id for p in on.passages[:2]] == [p.id for p in off.passages[:2]]   # the first two stay
