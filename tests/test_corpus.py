"""Every input format, and every kind of bad input."""

import json

import pytest

from linearrag.corpus import load_corpus
from linearrag.errors import CorpusError

from .conftest import terms_graph


def test_directory_split_and_merge(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.md").write_text("# Title\n\nFirst paragraph.\n\nSecond paragraph.\n", encoding="utf-8")
    (tmp_path / "sub" / "a.txt").write_text("x" * 30 + "\n\n" + "y" * 30 + "\n\n" + "z" * 10, encoding="utf-8")
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    passages = load_corpus(tmp_path, max_chars=45)
    ids = [p.id for p in passages]
    assert ids == ["b.md#0", "sub/a.txt#0", "sub/a.txt#1"]   # sorted, relpath#n
    assert passages[0].text == "First paragraph.\nSecond paragraph."     # Markdown: the heading is the title
    assert passages[0].title == "Title" and not passages[0].title_is_name
    assert passages[1].title == "sub/a.txt"
    assert passages[2].text == "y" * 30 + "\n" + "z" * 10       # merged up to the budget


def test_directory_skips_non_utf8_with_warning(tmp_path, caplog):
    (tmp_path / "good.txt").write_text("Hello world.", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes("caf\xe9".encode("latin-1"))
    passages = load_corpus(tmp_path)
    assert [p.id for p in passages] == ["good.txt#0"]
    assert "bad.txt" in caplog.text and "UTF-8" in caplog.text


def test_jsonl_keeps_ids_and_titles(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"id": "2w000001", "title": "T", "text": "Body."}\n\n{"text": "No id."}\n', encoding="utf-8")
    passages = load_corpus(f)
    assert [(p.id, p.title, p.text) for p in passages] == [("2w000001", "T", "Body."), ("1", "", "No id.")]
    assert passages[0].full_text == "T\nBody."


def test_json_list_hipporag_layout(tmp_path):
    f = tmp_path / "corpus.json"
    f.write_text(json.dumps([{"title": "A", "text": "Alpha."}, {"title": "B", "text": "Beta."}]), encoding="utf-8")
    assert [(p.id, p.title) for p in load_corpus(f)] == [("0", "A"), ("1", "B")]


def test_linearrag_chunks_json(tmp_path):
    f = tmp_path / "chunks.json"
    f.write_text(json.dumps(["0:first chunk", "1:second chunk", "no prefix here"]), encoding="utf-8")
    passages = load_corpus(f)
    assert [(p.id, p.text) for p in passages] == [("0", "first chunk"), ("1", "second chunk"), ("2", "no prefix here")]


@pytest.mark.parametrize("name, content, message", [
    ("c.jsonl", '{"text": "ok"}\n{"text": broken}\n', r"c.jsonl:2: malformed JSON"),
    ("c.jsonl", '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', r"duplicate passage id 'a'"),
    ("c.jsonl", '{"id": "a", "text": "   "}\n', r"c.jsonl:line 1: empty text"),
    ("c.jsonl", '{"id": "a", "body": "x"}\n', r"no string field 'text'"),
    ("c.jsonl", "\n\n", r"corpus is empty"),
    ("c.json", '{"text": "not a list"}', r"expected a JSON list"),
    ("c.json", '[{"text": "a"},', r"c.json:1: malformed JSON"),
    ("c.csv", "a,b\n", r"unsupported file type"),
])
def test_bad_files(tmp_path, name, content, message):
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    with pytest.raises(CorpusError, match=message):
        load_corpus(f)


def test_non_utf8_file_is_an_error(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_bytes(b'{"text": "caf\xe9"}\n')
    with pytest.raises(CorpusError, match="not UTF-8"):
        load_corpus(f)


def test_missing_path_and_empty_directory(tmp_path):
    with pytest.raises(CorpusError, match="no such file or directory"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(CorpusError, match="no document with text below this directory"):
        load_corpus(tmp_path)
    (tmp_path / "empty.txt").write_text("  \n\n ", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"no document with text .*skipped 1: .txt 1 — no text"):
        load_corpus(tmp_path)


MARKDOWN = """<!-- a comment the reader never sees -->
# Smart Pointers { #smart-pointers }

Rust has [smart pointers](ch15-00.md) such as `Box<T>` and `Rc<T>`. ![diagram](img/rc.svg)
See the [guide][guide-ref] and <https://example.com/raw>.

[guide-ref]: https://doc.rust-lang.org/book/

## Reference Cycles

/// tip

A <dfn title="reference counting">reference cycle</dfn> leaks memory.

///

```rust
let a = Rc::new(5); // Reference Cycles in code
```

### Preventing them

Use `Weak<T>` instead, as [[Weak References|the weak page]] explains.
"""


def test_markdown_sections_titles_and_clean_prose(tmp_path):
    (tmp_path / "ch15.md").write_text(MARKDOWN, encoding="utf-8")
    passages = load_corpus(tmp_path, max_chars=1000)
    assert [p.id for p in passages] == ["ch15.md#0", "ch15.md#1", "ch15.md#2"]
    assert [p.title for p in passages] == [
        "Smart Pointers", "Smart Pointers › Reference Cycles", "Smart Pointers › Reference Cycles › Preventing them"]
    first, cycles, weak = passages
    assert first.text == "Rust has smart pointers such as `Box<T>` and `Rc<T>`. See the guide and ."
    for debris in ("](", "<!--", "img/", "https://", "[guide", "{ #", "///", "<dfn"):
        assert all(debris not in p.text for p in passages), debris
    assert ("Box<T>", "CODE") in first.terms and ("Rc<T>", "CODE") in first.terms
    assert ("Smart Pointers", "HEADING") in first.terms
    assert ("Reference Cycles", "HEADING") in cycles.terms
    # The code block stays in the text, blanked (same length) in what NER reads.
    assert "let a = Rc::new(5);" in cycles.text and "Rc::new" not in cycles.analysis_text
    assert len(cycles.analysis_text) == len(cycles.full_text)
    assert cycles.full_text.startswith("Smart Pointers › Reference Cycles\n") and cycles.title_line
    assert weak.text == "Use `Weak<T>` instead, as the weak page explains."


def test_markdown_without_heading_takes_the_file_name(tmp_path):
    (tmp_path / "notes.md").write_text("Just a line about Tokyo.\n", encoding="utf-8")
    (p,) = load_corpus(tmp_path)
    assert p.title == "notes" and p.text == "Just a line about Tokyo."


def test_jsonl_text_with_unicode_line_separators_round_trips(tmp_path):
    """U+0085, U+2028 and U+2029 are written raw by json.dumps(ensure_ascii=False): not line ends."""
    from linearrag.questions import load_questions

    text = "Alpha\u2028Beta\u2029Gamma\u0085Delta in Paris."
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "x", "title": "T", "text": text}, ensure_ascii=False) + "\n", encoding="utf-8")
    (p,) = load_corpus(corpus)
    assert p.text == text
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "q", "question": "Who\u2028is it?"}, ensure_ascii=False) + "\r\n",
                     encoding="utf-8")
    assert load_questions(qfile)[0].question == "Who\u2028is it?"


def test_links_between_documents_resolve_to_the_target_title(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "a.md").write_text(
        "# Setup\n\nRead [the weak pages](../weak.md#intro) and [[Ownership Rules|ownership]], "
        "not [the web](https://example.com) or [a missing page](nope.md).\n", encoding="utf-8")
    (tmp_path / "weak.md").write_text("## Weak References\n\nA weak reference keeps nothing alive.\n", encoding="utf-8")
    (tmp_path / "own.md").write_text("# Ownership Rules\n\nEach value has one owner.\n", encoding="utf-8")
    by_id = {p.id: p for p in load_corpus(tmp_path)}
    assert by_id["guide/a.md#0"].links == (("the weak pages", "weak"), ("ownership", "Ownership Rules"))
    assert ("weak", "HEADING") in by_id["weak.md#0"].terms          # a document title is its first passage's entity


def test_a_link_joins_the_passage_to_the_target_title_entity(tmp_path):
    (tmp_path / "a.md").write_text("# Setup\n\nSee [weak references](b.md) for cycles.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# Weak References\n\nThey keep nothing alive.\n", encoding="utf-8")
    passages = load_corpus(tmp_path)
    g = terms_graph(passages)
    e = g.entity_keys.index("weak reference")
    assert g.C[:, e].toarray().ravel().tolist() == [1, 1]           # a.md#0 and b.md#0 share it
    assert g.M[0, e] == 1                                           # on the sentence showing the link


def test_labels_and_fragments_link_to_the_section_they_name(tmp_path):
    """A Sphinx ``:ref:`` (and MyST ``{ref}``) names a section by its label in any file; a
    Markdown fragment names a heading of its file (by slug or ``{ #id }``): the link reaches that
    section's heading, not the document's first passage. Unknown labels and self-links are dropped."""
    (tmp_path / "debugging.rst").write_text(
        "Debugging\n=========\n\nUse an error tool, as described in :ref:`error-logging-tools`, or\n"
        ":ref:`the handlers <Registering>`; see also :ref:`no-such-label` and :ref:`here`.\n\n"
        ".. _here:\n\nIn Production\n-------------\n\nDo not run the debugger.\n", encoding="utf-8")
    (tmp_path / "errors.rst").write_text(
        "Handling Errors\n===============\n\nIntro.\n\n.. _registering:\n\nRegistering Handlers\n"
        "--------------------\n\nRegister a handler.\n\n.. _error-logging-tools:\n\nError Logging Tools\n"
        "-------------------\n\nSentry aggregates duplicate errors.\n", encoding="utf-8")
    (tmp_path / "guide.md").write_text(
        "# Guide\n\nSee [the second part](notes.md#second-part-here), [the custom one](notes.md#custom), "
        "{ref}`the label <my-label>` and [the top](notes.md).\n\n## Own Part\n\nBack to [this part](#own-part).\n",
        encoding="utf-8")
    (tmp_path / "notes.md").write_text(
        "# Notes\n\nIntro.\n\n## Second Part, here!\n\nText.\n\n## Third { #custom }\n\nMore.\n\n"
        "(my-label)=\n## Fourth\n\nLast.\n", encoding="utf-8")
    passages = load_corpus(tmp_path)
    by_id = {p.id: p for p in passages}
    assert by_id["debugging.rst#0"].links == (("error-logging-tools", "Error Logging Tools"),
                                              ("the handlers", "Registering Handlers"), ("here", "In Production"))
    assert by_id["guide.md#0"].links == (("the second part", "Second Part, here!"), ("the custom one", "Third"),
                                         ("the label", "Fourth"), ("the top", "Notes"))
    assert by_id["guide.md#1"].links == ()                           # its own section
    g = terms_graph(passages)
    ids = [p.id for p in passages]
    e = g.entity_keys.index("error logging tool")
    holders = {ids[r] for r in g.C[:, e].nonzero()[0]}
    assert holders == {"debugging.rst#0", "errors.rst#2"}            # the linking passage and the section
    assert not any(key.startswith(("ref:", "#")) for key in g.entity_keys)   # anchors are no entities


def test_links_to_the_projects_own_site_resolve_as_paths(tmp_path):
    """A published docs site links to itself by absolute URL (``https://fastapi.tiangolo.com/
    tutorial/body/``): a host whose links reach several documents of the corpus by their path is
    the corpus's own site. A host whose paths happen to name one local file is not."""
    (tmp_path / "tutorial").mkdir()
    for name, title in (("body", "Request Body"), ("query", "Query Parameters"), ("path", "Path Parameters")):
        (tmp_path / "tutorial" / f"{name}.md").write_text(f"# {title}\n\nAbout {name}.\n\n## Extra Part\n\nMore.\n",
                                                          encoding="utf-8")
    (tmp_path / "benchmarks.md").write_text("# Benchmarks\n\nSpeed.\n", encoding="utf-8")
    site = "https://docs.example.org"
    (tmp_path / "index.md").write_text(
        f"# Home\n\nSee [body]({site}/tutorial/body/), [query]({site}/tutorial/query/#extra-part), "
        f"[path]({site}/tutorial/path/) and [a translation]({site}/es/tutorial/body/). Compare "
        "[one](https://bench.example.com/benchmarks), [two](https://bench.example.com/benchmarks#r2), "
        "[three](https://bench.example.com/benchmarks/) and [GitHub](https://github.com/tutorial/body).\n",
        encoding="utf-8")
    by_id = {p.id: p for p in load_corpus(tmp_path)}
    assert by_id["index.md#0"].links == (("body", "Request Body"), ("query", "Extra Part"), ("path", "Path Parameters"))


def test_a_page_that_only_gathers_other_pages_is_skipped(tmp_path):
    """mdBook's print.html (and Node's all.html) holds every chapter again: each of its passages
    is a copy of one of another page. Such a page is skipped, and said so; a page that shares
    all but one passage with others (npm's command pages repeat the settings sections) stays, and
    so does a page copied into one other file only."""
    from linearrag.aggregate import aggregate_pages
    from linearrag.inventory import Inventory

    chapters = {f"ch{c}.md": f"# Chapter {c}\n\n" + "".join(
        f"## Part {c}.{k}\n\nChapter {c} explains topic {k} of the book in its own words.\n\n" for k in range(4))
        for c in range(1, 4)}
    for name, text in chapters.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "print.md").write_text("\n".join(chapters.values()))
    (tmp_path / "notes.md").write_text("\n".join(chapters.values()) + "\n# Notes\n\nA note of its own.\n")
    inventory = Inventory()
    files = {p.cite.file for p in load_corpus(tmp_path, inventory=inventory)}
    assert files == {"ch1.md", "ch2.md", "ch3.md", "notes.md"}
    assert inventory.to_dict()["skipped"] == {"copies of other pages": {".md": 1}}
    # by hand: file 2 gathers 0 and 1; file 3 copies file 0 only; short files never count
    many = [f"text {k}" for k in range(12)]
    assert aggregate_pages([many[:6], many[6:], many, many[:6] + ["own"], many[:3]]) == {2}
    assert aggregate_pages([many[:10], many[:10]]) == set()
