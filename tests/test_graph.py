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


def test_title_line_counts_for_the_passage_but_bridges_nothing():
    from linearrag.graph import GraphBuilder

    b = GraphBuilder()
    p0 = AnalyzedText(["Beatrice I, Countess of Burgundy", "She married Frederick."],
                      [[_m("Burgundy", "GPE")], [_m("Frederick")]])
    b.add(p0, "Beatrice I, Countess of Burgundy", title_line=True)
    g = b.build()
    assert g.entity_keys == ["beatrice i, countess of burgundy", "burgundy", "frederick"]
    assert g.C.toarray().tolist() == [[1, 1, 1]]
    assert g.M.toarray().tolist() == [[0, 0, 0], [1, 0, 1]]   # the title line is no bridge


def test_terms_filtered_by_document_frequency_names_never():
    from linearrag.graph import GraphBuilder

    b = GraphBuilder(term_min_df=2, term_max_df=0.05)
    rare, common = _m("reference cycle", "TERM"), _m("example", "TERM")
    for i in range(30):
        mentions = [common, _m("Tokyo", "GPE")] if i < 25 else [common]
        if i in (3, 7):
            mentions.append(rare)
        if i == 9:
            mentions.append(_m("one-off phrase", "TERM"))
        b.add(AnalyzedText(["s."], [mentions]), terms=(("Install", "HEADING"), ("get_user", "CODE")) if i == 0 else ())
    g = b.build()
    # "example" is in 30 passages > max(5 % of 30, 20): dropped; "one-off phrase" once: dropped;
    # "tokyo" (a name) in 25 passages is kept; a heading or code identifier may occur once.
    assert sorted(g.entity_keys) == ["get_user", "install", "reference cycle", "tokyo"]
    assert g.C.shape == (30, 4) and g.M.shape == (30, 4)


def test_heading_on_every_sentence_code_on_the_sentences_that_contain_it():
    from linearrag.graph import GraphBuilder

    b = GraphBuilder()
    text = AnalyzedText(["Call get_user first.", "Then read the docs."], [[], []])
    b.add(text, terms=(("Dependencies", "HEADING"), ("get_user", "CODE")))
    g = b.build()
    assert g.entity_keys == ["dependency", "get_user"]          # heading keys are singular
    assert g.M.toarray().tolist() == [[1, 1], [1, 0]]


def test_short_names_merge_only_when_asked():
    from linearrag.graph import GraphBuilder

    text = AnalyzedText(["Aretha Franklin sang.", "Franklin was born in Memphis."],
                        [[_m("Aretha Franklin")], [_m("Franklin"), _m("Memphis", "GPE")]])
    for merge, keys in ((True, ["aretha franklin", "memphis"]), (False, ["aretha franklin", "franklin", "memphis"])):
        b = GraphBuilder(merge_short_names=merge)
        b.add(text)
        assert b.build().entity_keys == keys


def test_admonition_labels_are_no_entity_unless_the_text_names_them():
    """"Note:" heads a paragraph (the readers write it for an admonition, authors as "**Note:**");
    the small NER model now and then tags it ORG, which kept it as a name linking every page with
    a note. It is no entity then; a heading "Note" or a `Warning` in code still is."""
    from linearrag.graph import GraphBuilder

    b = GraphBuilder()
    for i in range(4):
        b.add(AnalyzedText([f"Note: step {i} needs Redis."], [[_m("Note", "ORG" if i == 0 else "TERM"),
                                                               _m("Redis", "ORG")]]))
    b.add(AnalyzedText(["Tip: pin versions."], [[_m("Tip", "PERSON")]]), terms=(("Warning", "CODE"),))
    g = b.build()
    assert sorted(g.entity_keys) == ["redis", "warning"]


def test_a_common_word_the_ner_now_and_then_calls_a_name_is_no_entity():
    """pip's docs write "file" 113 times as a noun and once open a sentence with "File", which
    the small NER model tags ORG; that one label kept the word from the term filters, and it
    joined 70 of 454 passages. A word written in lowercase in most of its mentions, with name
    labels on at most 15 % of them, and named by no heading, code or link, is no entity; a name
    written as one ("AnyIO", "ORMs"), or tagged as a name often enough, stays."""
    from linearrag.graph import GraphBuilder

    b = GraphBuilder()
    for i in range(12):
        b.add(AnalyzedText([f"Write the file {i} with AnyIO and ORMs."], [[
            _m("File" if i == 0 else "file", "ORG" if i == 0 else "TERM"),
            _m("AnyIO", "ORG" if i == 0 else "TERM"), _m("ORMs" if i else "ORM", "ORG" if i == 0 else "TERM"),
            _m("Celery" if i < 3 else "celery", "ORG" if i < 3 else "TERM")]]))   # a name in 25 %
    g = b.build()
    assert sorted(g.entity_keys) == ["anyio", "celery", "orm"]
