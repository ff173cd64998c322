"""Terms that link: options keep their dashes, technical terms of a question become name
candidates in any case and form, bare words never become entities, and on documents the
question's terms join the evidence seeds."""

import pytest

from linearrag.analysis import AnalyzedText, Mention
from linearrag.graph import GraphBuilder
from linearrag.lang.code import technical_terms
from linearrag.normalize import normalize_entity
from linearrag.retrieval.params import RetrievalParams


def test_an_option_is_not_the_word_it_spells():
    assert normalize_entity("--App") == "--app" and normalize_entity("-v") == "-v"
    assert normalize_entity("--app hello") == "--app hello"
    assert normalize_entity("app") == "app" and normalize_entity("-1") != "--1"
    assert normalize_entity("'--reload',") == "reload"   # quoted: the dashes are not at the start


@pytest.mark.parametrize("question,terms", [
    ("what does --no-cache or -v do?", ["--no-cache", "-v"]),
    ("why is app.logger.info() silent with @app.errorhandler(404)?",
     ["app.logger.info", "logger.info", "app.errorhandler"]),
    ("set APP_CONFIG_PATH and snake_case in pyproject.toml", ["APP_CONFIG_PATH", "snake_case", "pyproject.toml"]),
    ("does flask read .env and .flaskenv?", [".env", ".flaskenv"]),
    ("use `git commit` and hello:create_app", ["git commit", "hello:create_app", "create_app"]),
    ("GET /users/{user_id} returns a BaseModel or getElementById", ["/users/{user_id}", "BaseModel", "getElementById"]),
    ("e.g. the U.S. Army", []),
])
def test_technical_terms_of_a_question(question, terms):
    assert [t for _, _, t in technical_terms(question)] == terms


def test_a_question_links_a_term_whatever_its_case():
    """``FLASK_APP`` and ``flask_app``, ``--APP`` and ``--app`` meet the same index key."""
    from linearrag.analysis import candidate_ngrams

    class Doc(list):   # candidate_ngrams reads tokens and the text; no token here: terms only
        text = ""

    for question in ("set flask_app and --APP", "set FLASK_APP and --app"):
        doc = Doc()
        doc.text = question
        keys = {c.key for c in candidate_ngrams(doc, _NoLanguage())}
        assert {"flask_app", "--app"} <= keys


class _NoLanguage:
    names_by_case = True

    def keep_ngram(self, *args):
        return False

    def key_variants(self, key):
        return [key]


def test_bare_words_are_debris_but_the_same_word_as_a_heading_or_code_stays():
    b = GraphBuilder(term_min_df=1)
    sentence = ["A way to use a blueprint and the app factory."]

    def m(surface, label="TERM"):
        return Mention(normalize_entity(surface), surface, label)

    for _ in range(3):
        b.add(AnalyzedText(sentence, [[m("way"), m("blueprint"), m("app factory")]]),
              terms=(("Blueprints", "HEADING"),))
    g = b.build()
    assert "way" not in g.entity_keys          # a word, not a term of the corpus
    assert "blueprint" in g.entity_keys        # also a heading
    assert "app factory" in g.entity_keys      # a phrase


def test_lowercase_linking_auto_depends_on_the_kind_of_index():
    p = RetrievalParams()
    assert p.lowercase_for(documents=True) == "phrases" and p.lowercase_for(documents=False) == "names"
    assert p.with_overrides({"lowercase_linking": "all"}).lowercase_for(False) == "all"


def test_a_passage_defines_its_heading_and_the_view_says_so():
    from linearrag.retrieval.output import definition_keys, heading_keys
    from linearrag.retrieval.results import ActivatedEntity, PassageHit, QueryEntity, QueryResult

    assert heading_keys("CLI › Run the Server", first=False) == {"run the server"}
    assert heading_keys("CLI › Options › --reload", first=True) == {"cli", "--reload"}
    text = "`TESTING`\nEnable testing mode.\n`--reload`: Reload on change.\nUse `DEBUG` with `url_for`:\n`flask.Flask.run`"
    assert definition_keys(text) == {"testing", "--reload", "flask.flask.run", "flask.run"}   # not DEBUG, url_for
    hit = PassageHit(rank=1, id="cli.rst#3", title="CLI › --reload", score=1.0, text="Reloads on change.",
                     entities=["--reload", "CLI"], file="cli.rst", lines=[12, 30], section="CLI › --reload",
                     defines=["--reload", "CLI"])
    result = QueryResult(query="what does --reload do?", mode="linearrag",
                         query_entities=[QueryEntity("--reload", "--reload", 1.0, "term")],
                         activated_entities=[ActivatedEntity("--reload", 0.1, 1), ActivatedEntity("CLI", 0.9, 1)],
                         activated_count=2, passages=[hit], fallback=None, params={}, timings_ms={},
                         evidence_passages=["cli.rst#3"])
    text = result.format_text()
    assert "reached through --reload, defined in cli.rst:12-30" in text
    assert "reached through CLI" not in text      # an evidence seed of the passage itself explains nothing
    assert "The walk also starts from the entities of [cli.rst#3] (evidence seeds)" in text
    assert "  named in the question: --reload (0.10)" in text
    assert "  evidence seeds (entities of the passages the query alone ranks best): CLI (0.90)" in text


def test_a_bare_lowercase_word_links_only_an_entity_it_mostly_names():
    """"gunicorn" names Gunicorn in 7 of the 8 passages holding the word: it links; "run" is a
    code literal in 6 of 121: a word of the corpus, it does not; a phrase links either way."""
    import numpy as np

    from linearrag.analysis import NameCandidate
    from linearrag.retrieval.linking import bare_word_share, link_entities

    assert bare_word_share(7, 8) == 7 / 8
    assert bare_word_share(6, 121) < 0.5
    assert bare_word_share(3, 0) == 0.0            # a stop word has no postings: never a name
    assert bare_word_share(9, 4) == 1.0            # capped
    names, lookup = ["Gunicorn", "run", "app factory"], {"gunicorn": 0, "run": 1, "app factory": 2}
    share = {0: bare_word_share(7, 8), 1: bare_word_share(6, 121), 2: 0.0}
    ngrams = [NameCandidate("gunicorn", "gunicorn", 0, 8, named=False), NameCandidate("run", "run", 9, 12, named=False),
              NameCandidate("app factory", "app factory", 13, 24, named=False)]
    no_vectors = np.zeros((0, 4), np.float32)
    seeds, linked, _ = link_entities(ngrams, [], no_vectors, lookup, names, floor=0.6,
                                     bare_ok=lambda word, e: share[e] >= 0.5)
    assert set(seeds) == {0, 2}
    assert [(q.surface, q.entity, q.how) for q in linked] == [("app factory", "app factory", "term"),
                                                            ("gunicorn", "Gunicorn", "term")]
    seeds, _, _ = link_entities(ngrams, [], no_vectors, lookup, names, floor=0.6)   # no share known
    assert set(seeds) == {2}
    seeds, _, _ = link_entities(ngrams, [], no_vectors, lookup, names, floor=0.6, lowercase="all")
    assert set(seeds) == {0, 1, 2}


def test_a_qualified_name_in_a_page_also_names_its_short_form(tmp_path):
    """`app.teardown_appcontext()` in the tutorial and `teardown_appcontext` on the reference
    page are one entity for the walk; `flask.Flask.run` offers `Flask.run`, never the word "run"."""
    from linearrag.corpus import load_corpus
    from linearrag.lang.code import name_suffixes

    assert name_suffixes("app.teardown_appcontext()") == ["teardown_appcontext()"]
    assert name_suffixes("flask.Flask.run") == ["Flask.run"]
    assert name_suffixes("~flask.Flask.teardown_appcontext") == ["Flask.teardown_appcontext", "teardown_appcontext"]
    assert name_suffixes("pyproject.toml") == [] and name_suffixes("git commit") == []
    (tmp_path / "tutorial.md").write_text(
        "# Database\n\n`app.teardown_appcontext()` tells the app to call `close_db` when it cleans up.\n",
        encoding="utf-8")
    (tmp_path / "reference.md").write_text(
        "# Contexts\n\nThe `teardown_appcontext` functions run even after an unhandled exception.\n",
        encoding="utf-8")
    passages = {p.id: p for p in load_corpus(tmp_path)}
    b = GraphBuilder(term_min_df=1)
    for pid in ("tutorial.md#0", "reference.md#0"):
        p = passages[pid]
        b.add(AnalyzedText(p.text.split("\n")[-1:], [[]]), terms=p.terms)
    g = b.build()
    shared = g.C[0].multiply(g.C[1]).indices
    assert [g.entity_keys[e] for e in shared] == ["teardown_appcontext"]
    assert "app.teardown_appcontext" in g.entity_keys and "close_db" in g.entity_keys
