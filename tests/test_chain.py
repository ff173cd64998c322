"""Linked selection (retrieval/chain.py): by hand on small graphs, then on the real sample index."""

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from linearrag import RetrievalParams
from linearrag.normalize import normalize_entity
from linearrag.retrieval.chain import (TitleMentions, linked_order, name_entities, named_pages, parts_like_the_question,
                                       qualified_asked, title_parts)

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
    order, linked, via = linked_order(rows, names, C.indptr, C.indices)
    # 10 stays first; it names 103 → 13 comes second; 13 names 104 → 14 third; then by score.
    # 15 shares 13's title: a title links one passage, so 15 waits for its score.
    assert rows[order].tolist() == [10, 13, 14, 11, 12, 15]
    assert linked == [-1, 0, 1, -1, -1, -1]


def test_linked_order_keeps_score_order_without_links():
    C = _csr({0: [5], 1: [6], 2: [7]}, 3)
    order, linked, via = linked_order(np.array([2, 0, 1]), np.array([7, 5, 6]), C.indptr, C.indices)
    assert order.tolist() == [0, 1, 2] and linked == [-1, -1, -1]
    assert linked_order(np.zeros(0, dtype=np.int64), np.zeros(0), C.indptr, C.indices)[0].size == 0


def test_a_passage_does_not_link_its_own_title():
    # 0 carries its own title entity 9; 1 (another passage titled the same) is not "named" by 0
    C = _csr({0: [9], 1: [9], 2: [3]}, 3, 10)
    order, linked, via = linked_order(np.array([0, 2, 1]), np.array([9, 3, 9]), C.indptr, C.indices)
    assert order.tolist() == [0, 1, 2] and linked == [-1, -1, -1]


def test_title_written_in_text_links():
    C = _csr({0: [], 1: [], 2: []}, 3)
    titles = ["Girls in White", "Ann", "Sam Wood"]
    texts = ["Girls in White is a 1937 film directed by sam  wood.", "Annapolis is a city.", "Sam Wood was born in 1883."]
    mentions = TitleMentions(titles, texts, whole_words=True)
    assert mentions(0, 2) and not mentions(2, 0)        # case and spacing folded
    assert not mentions(1, 1)                           # its own title never counts
    assert not TitleMentions(["x", "Ann"], ["Annapolis", ""], True)(0, 1)   # not inside a longer word
    order, linked, via = linked_order(np.array([0, 1, 2]), np.array([-1, -1, -1]), C.indptr, C.indices, mentions)
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


def test_title_parts_name_entities_inside_a_title():
    lookup = {"indiana": 3, "pearl jam": 5, "greenfield": 6, "alcohol laws of indiana": 9, "jam": 11,
              "henry king": 12, "brother": 13}
    titles = ["Alcohol laws of Indiana", "Brother (Pearl Jam song)", "Greenfield, Indiana", "",
              "Henry King (director)", "McDull: Me & My Mum"]
    parts = title_parts(titles, lookup)
    assert parts[0] == {3}                  # the whole title is no part of itself
    assert parts[1] == {13}                 # the name before the qualifier, not the qualifier
    assert parts[2] == {6}                  # cut at the comma: Indiana only qualifies the name
    assert parts[3] == set()
    assert parts[4] == {12}                 # a disambiguated title's name is a part of it
    assert parts[5] == set()
    assert title_parts(["Laws of Hoosier State"], lookup, lambda k: {"hoosier state": "indiana"}.get(k, k))[0] == {3}


def test_a_title_part_ends_where_a_name_may_end():
    lookup = {"michael": 1, "white": 2, "hong kong": 3, "british": 4, "philippe": 5, "south": 6, "south korea": 7,
              "korea": 8, "olympics": 9}
    parts = title_parts(["Michael Jai White", "British Hong Kong", "Philippe II, Duke of Orléans",
                         "South Korea at the Olympics"], lookup)
    assert parts[0] == {2}            # a first name runs on into the name: no part; the surname ends it
    assert parts[1] == {3}            # "British" runs on into "Hong Kong"
    assert parts[2] == {5}            # a regnal number continues no name
    assert parts[3] == {7, 8, 9}      # "South" runs on into "Korea"; "Korea" ends the name as well


def test_a_title_part_links_after_whole_titles():
    # candidates 0..4 (best-scored first). 0 names entity 50 (Indiana) and 51 (the title of 3).
    # 2's title holds a part, 50: "Alcohol laws of Indiana".
    C = _csr({0: [50, 51], 1: [], 2: [60], 3: [51], 4: []}, 5)
    rows, names = np.arange(5), np.array([40, 41, 60, 51, 44])
    parts = [set(), set(), {50}, set(), set()]
    order, linked, via = linked_order(rows, names, C.indptr, C.indices, parts=parts)
    # a whole title named above (3) first, then the passage whose title part is named above (2)
    assert order.tolist() == [0, 3, 2, 1, 4] and linked == [-1, 0, 0, -1, -1]
    assert via == [-1, -1, 50, -1, -1]         # 2 came through its title part 50, 3 by its whole title
    # a passage the question itself names (41) keeps its place by score before a part link
    order, linked, via = linked_order(rows, names, C.indptr, C.indices, parts=parts, asked={41})
    assert order.tolist() == [0, 3, 1, 2, 4] and linked == [-1, 0, -1, 0, -1]
    # without parts, the score order
    assert linked_order(rows, names, C.indptr, C.indices)[0].tolist() == [0, 3, 1, 2, 4]


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


SCHOOLS = [
    ("school", "Greenfield-Central High School", "Greenfield-Central High School is a secondary school located in "
     "the city of Greenfield, Indiana. It serves students in grades nine through twelve."),
    ("laws-in", "Alcohol laws of Indiana", "In Indiana, alcohol may be sold only to those 21 years of age or older, "
     "during the hours 7 a.m. to 3 a.m."),
    ("laws-ut", "Alcohol laws of Utah", "Utah restricts the sale of beer in grocery stores to drinks of limited "
     "strength, and state liquor stores are closed on Sundays."),
    ("central", "Central High School (Louisville, Kentucky)", "Central High School is a public high school in "
     "Louisville, Kentucky. It opened in 1882 and was the first high school for African-American students."),
    ("township", "Greenfield Township", "Greenfield Township is a civil township of Wayne County in Michigan. "
     "The population was 6,521 at the 2010 census."),
    ("pacers", "Indiana Pacers", "The Indiana Pacers are a professional basketball team based in Indianapolis. "
     "They play their home games at Gainbridge Fieldhouse."),
    ("prohibition", "Prohibition in the United States", "Prohibition in the United States was a nationwide ban on "
     "the sale of alcoholic beverages from 1920 to 1933, ended by the Twenty-first Amendment."),
    ("brewing", "Brewing in Kentucky", "Louisville, Kentucky, had dozens of breweries before Prohibition; most "
     "closed by 1920 and only a few reopened after 1933."),
]


@pytest.fixture(scope="module")
def schools_retriever(tmp_path_factory):
    from linearrag import Retriever

    from .conftest import _build

    corpus = tmp_path_factory.mktemp("schools") / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in SCHOOLS),
                      encoding="utf-8")
    return Retriever.from_path(_build(tmp_path_factory, corpus, "schools")[0])


def test_a_title_part_reached_through_the_first_passage_links_the_next(schools_retriever):
    question = "What time does the state where Greenfield-Central High School is stop selling alcohol?"
    result = schools_retriever.query(question, RetrievalParams(top_k=3))
    ids = [p.id for p in result.passages]
    assert ids[:2] == ["school", "laws-in"]
    hop = result.passages[1]
    assert (hop.linked_from, hop.linked_via) == ("school", "Indiana")
    assert "Indiana, in its title, is named by [school] above" in result.format_text()
    assert result.to_dict()["passages"][1]["linked_via"] == "Indiana"
    chain = {a.entity: a for a in result.activated_entities}
    assert chain["Indiana"].level == 2 and chain["Indiana"].passage_id == "school"
    from linearrag.explain.html import query_elements
    details = [e["data"]["detail"] for e in query_elements(result.to_dict()) if e["data"].get("short") == "names"]
    assert "[school] names Indiana, in the title Alcohol laws of Indiana [laws-in]" in details
    off = schools_retriever.query(question, RetrievalParams(top_k=3, link_parts="off"))
    assert all(p.linked_via is None for p in off.passages)
    # the page must look like the question too: no page's prior reaches 1, so no part links
    unlike = schools_retriever.query(question, RetrievalParams(top_k=3, link_parts_prior=1.0))
    assert all(p.linked_via is None for p in unlike.passages)


def test_a_title_part_links_only_a_page_that_looks_like_the_question():
    asked = []

    def prior(rows):
        asked.append(rows.tolist())
        return np.array([{11: 0.02, 12: 0.05, 13: 0.3}[r] for r in rows.tolist()])

    parts = [set(), {7}, {8}, {9}]
    out = parts_like_the_question(parts, np.array([10, 11, 12, 13]), prior, 0.05)
    assert out == [set(), set(), {8}, {9}] and parts[1] == {7}
    assert asked == [[11, 12, 13]]          # read for the candidates holding a part only
    assert parts_like_the_question([set(), set()], np.array([1, 2]), prior, 0.05) == [set(), set()]
    assert asked == [[11, 12, 13]]


def test_a_title_the_question_names_keeps_its_place_before_a_link():
    # candidates 0..3 (best-scored first); 0 names 3's title (52); the question names 1's (41)
    C = _csr({0: [52], 1: [], 2: [], 3: []}, 4)
    rows, names = np.arange(4), np.array([40, 41, 42, 52])
    linked_first = linked_order(rows, names, C.indptr, C.indices, asked={40, 41})
    assert linked_first[0].tolist() == [0, 3, 1, 2] and linked_first[1] == [-1, 0, -1, -1]
    order, linked, _ = linked_order(rows, names, C.indptr, C.indices, asked={40, 41}, asked_first=True)
    assert order.tolist() == [0, 1, 3, 2] and linked == [-1, -1, 0, -1]
    # a question-named title scoring below the link waits for its score
    rows = np.array([0, 2, 3, 1])
    order, _, _ = linked_order(rows, names[rows], C.indptr, C.indices, asked={40, 41}, asked_first=True)
    assert rows[order].tolist() == [0, 3, 1, 2]


COMPARISON = "Which film has the director who died first, Three Violent People or Girls In White?"


def test_a_comparison_keeps_its_second_film_second(sample_retriever):
    """Both films are named by the question: the second film (2w005179) outscores the first
    film's director (2w005180), whom the first film's page names, and keeps rank 2."""
    score = [p.id for p in sample_retriever.query(COMPARISON, RetrievalParams(top_k=4)).passages]
    linked = [p.id for p in sample_retriever.query(COMPARISON, RetrievalParams(top_k=4, link_asked="linked")).passages]
    assert score[:2] == ["2w005181", "2w005179"] and linked[:2] == ["2w005181", "2w005180"]
    assert sorted(score) == sorted(linked) == ["2w005178", "2w005179", "2w005180", "2w005181"]


def test_a_page_joined_from_outside_the_candidates_waits_for_the_third_place():
    # 0 is placed first and writes the title of 9, which is no candidate (``joined`` = 5: the
    # rows from 5 on joined from outside). It takes no position above the third, then is linked.
    C = _csr({0: [], 1: [], 2: [], 3: [], 4: [], 9: []}, 10)
    rows = np.array([0, 1, 2, 3, 4, 9])
    titles = ["Shringarpur", "A", "B", "C", "D", "Maharashtra"]
    texts = ["Shringarpur is a village in Ratnagiri district, Maharashtra state, India.", "", "", "", "", ""]
    mentions = TitleMentions(titles, texts, whole_words=True)
    names = np.full(6, -1)
    order, linked, _ = linked_order(rows, names, C.indptr, C.indices, mentions, joined=5)
    assert rows[order].tolist() == [0, 1, 9, 2, 3, 4] and linked == [-1, -1, 0, -1, -1, -1]
    # a candidate named above still comes second, as before
    order, linked, _ = linked_order(np.array([0, 1, 9]), names[:3], C.indptr, C.indices,
                                    TitleMentions(["Shringarpur", "A", "Maharashtra"], texts[:3], True))
    assert order.tolist() == [0, 2, 1]


def test_named_pages_by_hand():
    lookup = {"iowa": 0, "north-west iowa": 1, "london": 2, "sac": 3, "intrepid wind farm": 4, "midamerican": 5}
    titles = ["Intrepid Wind Farm", "Iowa", "Iowa (song)", "London", "Sac", "Wind power in Iowa"]
    # C by entity: Iowa named by 0, 1, 2; London by 3 and, as a hub, 3 more passages
    by_entity = {0: [0, 1, 2], 1: [0], 2: [3, 5, 6, 7], 3: [0, 4], 4: [0], 5: []}
    indptr = np.cumsum([0] + [len(by_entity[e]) for e in range(6)])
    indices = np.array([r for e in range(6) for r in by_entity[e]])
    text = "The Intrepid Wind Farm, in Sac county of north-west Iowa, sells to London."
    title_of = lambda r: (titles + ["x", "y", "z"])[r]

    def pages(question="Who?", taken=frozenset({0}), max_df=3, limit=3):
        return named_pages(text, question, "Intrepid Wind Farm", lookup, lambda k: k, (indptr, indices), title_of,
                           set(taken), max_df, limit)

    # "north-west iowa" is an entity but titles no page; "Iowa" does (its first row, 1, not 2);
    # "Sac" titles 4; London is named by 4 passages, over max_df; the text's own page is no join
    assert pages() == [4, 1]
    assert pages(limit=1) == [4]
    assert pages(max_df=4) == [4, 1, 3]
    assert pages(question="Where in Iowa is the Sac county wind farm?") == []     # the question writes both
    assert pages(taken={0, 1}) == [4]              # already a candidate: not joined again
    assert pages(limit=0) == []


def test_a_page_the_best_passage_names_joins_from_outside_the_candidates(tmp_path):
    # 36 MuSiQue passages; "Maharashtra" scores ninth, outside the 5 candidates of this query,
    # but Shringarpur's page (rank 1) writes "Maharashtra state": the page joins, third.
    from linearrag import Retriever, build_index

    build_index(Path(__file__).parent / "data" / "musique-shringarpur.jsonl", tmp_path / "ix")
    retriever = Retriever.from_path(tmp_path / "ix")
    question = "Who was in charge of the state where Shringarpur is located?"
    on = retriever.query(question, RetrievalParams(top_k=5, link_depth=5))
    off = retriever.query(question, RetrievalParams(top_k=5, link_depth=5, link_reach=0))
    assert [p.title for p in on.passages][:1] == ["Shringarpur"] and on.passages[2].title == "Maharashtra"
    assert on.passages[2].linked_from == on.passages[0].id
    assert "Maharashtra" not in [p.title for p in off.passages]
    assert [p.id for p in on.passages if p.title != "Maharashtra"] == [p.id for p in off.passages][:4]


def test_a_name_is_written_with_capitals_and_titles_a_page():
    from linearrag.retrieval.chain import titles_a_page, written_as_name

    assert written_as_name("Reign of Terror") and written_as_name("Committee of Public Safety")
    assert written_as_name("Battle of the Tanais River") and written_as_name("1920 Summer Olympics")
    assert not written_as_name("Place of birth") and not written_as_name("Steam engine")
    assert not written_as_name("Terror") and not written_as_name("the Terror")    # one word: a name of its own
    # entity 0 holds passages 0 and 2, entity 1 passage 1; passage 2 is titled with a qualifier
    by_entity = (np.asarray([0, 2, 3]), np.asarray([0, 2, 1]))
    titles = ["France", "Airports of Europe", "Reign of Terror (film)"]
    assert titles_a_page(0, "reign of terror", by_entity, titles.__getitem__, lambda k: k)
    assert not titles_a_page(1, "international airport", by_entity, titles.__getitem__, lambda k: k)
    assert not titles_a_page(0, "reign of terror", by_entity, titles.__getitem__, lambda k: k, most=1)


def test_lowercase_names_link_only_pages_written_as_names():
    from linearrag.analysis import NameCandidate
    from linearrag.retrieval.linking import link_entities

    names = ["Reign of Terror", "Place of birth", "NATO"]
    lookup = {"reign of terror": 0, "place of birth": 1, "nato": 2}
    # "place of birth reign of terror NATO" (key, surface, character span)
    ngrams = [NameCandidate("place of birth", "place of birth", 0, 14, named=False),
              NameCandidate("reign of terror", "reign of terror", 15, 30, named=False),
              NameCandidate("nato", "NATO", 31, 35, named=True)]
    no_vectors = np.zeros((0, 4), np.float32)
    seeds, linked, _ = link_entities(ngrams, [], no_vectors, lookup, names, floor=0.6, lowercase="names",
                                     name_page=lambda e: names[e] != "Place of birth")   # a title, not a name
    assert set(seeds) == {0, 2}
    assert ("reign of terror", "Reign of Terror", "name") in [(q.surface, q.entity, q.how) for q in linked]
    assert set(link_entities(ngrams, [], no_vectors, lookup, names, floor=0.6, lowercase="names")[0]) == {2}
    assert set(link_entities(ngrams, [], no_vectors, lookup, names, floor=0.6, lowercase="none")[0]) == {2}


def test_a_page_title_typed_in_lowercase_links_end_to_end(tmp_path):
    # 31 MuSiQue passages (tests/data/README.md). The question writes "the reign of terror" in
    # lowercase; the page "Reign of Terror" (and the Committee of Public Safety, which ruled
    # during it) come into the top 5 only when the phrase links that page.
    from linearrag import Retriever, build_index

    build_index(Path(__file__).parent / "data" / "musique-reign-of-terror.jsonl", tmp_path / "ix")
    retriever = Retriever.from_path(tmp_path / "ix")
    question = "When did the group ruling the country considered one of NATO's creators during the reign of terror start?"
    on = retriever.query(question, RetrievalParams(top_k=5))
    off = retriever.query(question, RetrievalParams(top_k=5, lowercase_linking="none"))
    assert ("reign of terror", "Reign of Terror", "name") in [(e.surface, e.entity, e.how) for e in on.query_entities]
    assert "Reign of Terror" not in [e.entity for e in off.query_entities]
    assert {"Reign of Terror", "Committee of Public Safety"} <= {p.title for p in on.passages}
    assert not {"Reign of Terror", "Committee of Public Safety"} & {p.title for p in off.passages}
    # a generic phrase that also titles no page written as a name links nothing
    other = retriever.query("What is the place of birth of the leader of France?", RetrievalParams(top_k=5))
    assert all(e.surface.lower() != "place of birth" for e in other.query_entities if e.entity)


def test_a_page_titled_with_the_name_and_a_qualifier_counts_as_named():
    """"IN what year were both Franz Ferdinand and Sunrise Avenue formed?": the band's page is
    titled "Franz Ferdinand (band)"; the best-scored page so titled counts as question-named, the
    others of that name do not, and neither does one whose name the question does not seed."""
    entities = {"Franz Ferdinand": 1, "Sunrise Avenue": 2, "Robert Palmer": 3, "Clues": 4,
                "Franz Ferdinand (band)": 11, "Franz Ferdinand (archduke)": 12, "Robert Palmer (singer)": 13,
                "Clues (Robert Palmer album)": 14, "Sunrise Avenue (film)": 15}
    lookup = {normalize_entity(k): v for k, v in entities.items()}
    titles = ["Sunrise Avenue", "Late Night Tales: Franz Ferdinand", "Franz Ferdinand (band)",
              "Franz Ferdinand (archduke)", "Sunrise Avenue (film)", "Clues (Robert Palmer album)",
              "Robert Palmer (singer)"]
    names = name_entities(titles, lookup)
    assert names.tolist() == [2, -1, 11, 12, 15, 14, 13]
    level = {1: 1, 2: 1, 3: 2}                   # Robert Palmer only reached (level 2), not asked
    levels = lambda ents: np.array([level.get(int(e), 0) for e in ents])
    asked = {2}                                  # "Sunrise Avenue" itself is a candidate the question names
    assert qualified_asked(titles, names, asked, lookup, lambda k: k, levels) == {11}
    level[3] = 1                                 # once the question names Robert Palmer, his page counts
    assert qualified_asked(titles, names, asked, lookup, lambda k: k, levels) == {11, 13}
    level[4] = 1                                 # a title counts by its own name only: "Clues"
    assert qualified_asked(titles, names, asked, lookup, lambda k: k, levels) == {11, 13, 14}
    assert qualified_asked(titles, names, set(), lookup, lambda k: k, levels) == {11, 13, 14, 15}
    assert qualified_asked(["Sunrise Avenue"], names[:1], asked, lookup, lambda k: k, levels) == set()


def test_a_comparison_keeps_its_second_subject_second_when_its_title_has_a_qualifier(sample_retriever):
    """"Are Oliver Drake and John Anderson of the same nationality?": both pages carry a
    qualifier ("Oliver Drake (filmmaker)"). With whole titles only, a film that John Anderson's
    page names took rank 2 and pushed the filmmaker to 4; counted as question-named, he keeps
    rank 2 and the film follows."""
    q = "Are Oliver Drake and John Anderson of the same nationality?"
    best = sample_retriever.query(q, RetrievalParams(top_k=5)).passages
    none = sample_retriever.query(q, RetrievalParams(top_k=5, asked_qualified="none")).passages
    assert [p.title for p in best[:2]] == ["John Anderson (musician)", "Oliver Drake (filmmaker)"]
    assert [p.title for p in none].index("Oliver Drake (filmmaker)") >= 2
