"""Markdown documents end to end with the real models: clean entities, a lowercase two-hop question."""

import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

PAGES = {
    "memory/reference-counting.md": """# Reference Counting { #rc }

<!-- TODO: diagrams -->
The `Rc<T>` type keeps a count of the owners of a value. ![owners](img/rc.svg)

## Reference Cycles

A reference cycle happens when two `Rc<T>` values point to each other, so neither count reaches zero
and the memory leaks. See [the chapter on leaks](../leaks.md#cycles) for details.

To break a reference cycle, replace one of the strong pointers with a weak reference.
""",
    "memory/weak-references.md": """# Weak References

A weak reference does not keep its value alive: the value is dropped when only weak references remain.
You create a weak reference with `Rc::downgrade` and read it back with `upgrade`, which returns an `Option`.

```rust
let weak = Rc::downgrade(&shared); // Reference Cycles are broken here
```
""",
    "tools/cargo.md": """# Cargo

Cargo builds your code, downloads the libraries your code depends on, and builds those libraries.
Run `cargo build` to compile and `cargo test` to run the tests of a package.
""",
    "tools/testing.md": """# Testing

Tests are functions annotated with the `test` attribute. You can filter which tests run by passing
a name to `cargo test`; only tests whose names contain it run.
""",
    "basics/ownership.md": """# Ownership

Each value has an owner, and there can only be one owner at a time. When the owner goes out of scope,
the value is dropped and its memory is returned. [[Borrowing|Borrowing]] lets code use a value without owning it.
""",
}

# Headings with emphasis and code, and identifiers with brackets (only this module's index).
CODE_PAGES = {
    "advanced/checkers.md": """# Advanced **Dependencies**

A checker is a class whose instances are callable, so FastAPI can call them like functions.

## Using `Depends(checker)` in a *path operation*

Pass the instance itself, as in `Depends(checker)`, and declare `q: Optional[str]` as a query parameter.
The Advanced Dependencies page shows the same checker with a fixed content string.

### Parameterized **Checker** instances

A Parameterized Checker keeps its parameters in the instance, so Advanced Dependencies stay short.
""",
}


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory):
    from linearrag import build_index

    root = tmp_path_factory.mktemp("docs")
    for rel, text in {**PAGES, **CODE_PAGES}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    out = tmp_path_factory.mktemp("idx") / "docs"
    build_index(root, out)
    return out


def test_markdown_entities_have_no_debris(docs_index):
    from linearrag import load_index

    idx = load_index(docs_index)
    keys = idx.graph.entity_keys
    for debris in ("](", "][", "<!--", "http", "img/", ".svg", "{", "#", "///", "`"):
        assert not [k for k in keys if debris in k], debris
    assert "weak reference" in keys and "reference cycle" in keys     # terms, singular keys
    assert "rc::downgrade" in keys                                    # a code identifier
    titles = dict(zip(idx.passage_ids, idx.passage_titles))
    assert titles["memory/reference-counting.md#1"] == "Reference Counting › Reference Cycles"
    assert all("Rc::downgrade(&shared)" not in s for s in idx.graph.sentences)   # code is not NER text
    # Headings are plain words in titles and entities; no entity crosses the heading separator
    # of a title line, carries emphasis, or loses the bracket that closes it ("depends(checker")
    assert titles["advanced/checkers.md#1"] == "Advanced Dependencies › Using Depends(checker) in a path operation"
    assert titles["advanced/checkers.md#2"] == ("Advanced Dependencies › Using Depends(checker) in a path operation"
                                                " › Parameterized Checker instances")
    for key in keys:
        assert "›" not in key and "*" not in key, key
    for name in idx.graph.entity_names:       # what users see: no name cut inside a bracket
        assert name.count("(") == name.count(")") and name.count("[") == name.count("]"), name
    assert "Depends(checker)" in idx.graph.entity_names


def test_lowercase_two_hop_question_reaches_both_pages(docs_index):
    from linearrag import RetrievalParams, Retriever

    retriever = Retriever.from_path(docs_index)
    question = "how do i break a reference cycle, and what does the replacement pointer do to its value?"
    default = retriever.query(question, RetrievalParams(top_k=3))   # the term, with evidence seeds
    assert {"memory/reference-counting.md#1", "memory/weak-references.md#0"} <= {p.id for p in default.passages}
    # the term alone seeds (term_evidence off): the walk reaches the second page's term in a hop
    result = retriever.query(question, RetrievalParams(top_k=3, lowercase_linking="phrases", term_evidence="off"))
    assert result.fallback is None
    assert any(q.entity and q.entity.lower().startswith("reference cycle") for q in result.query_entities)
    ids = [p.id for p in result.passages]
    assert "memory/reference-counting.md#1" in ids and "memory/weak-references.md#0" in ids
    weak = {a.entity.lower(): a for a in result.activated_entities}.get("weak reference")
    assert weak is not None and weak.level == 2 and weak.passage_id == "memory/reference-counting.md#1"


def test_a_docs_question_links_its_terms_and_cites_lines(docs_index):
    """Defaults on documents: the question's identifier and lowercase tool name link to index
    entities, the evidence seeds join them, every passage cites lines that hold its words."""
    from linearrag import RetrievalParams, Retriever
    from linearrag.lines import words_held

    retriever = Retriever.from_path(docs_index)
    result = retriever.query("how do i filter which tests run with cargo test?", RetrievalParams(top_k=3))
    linked = {q.surface: q for q in result.query_entities if q.entity}
    assert "cargo test" in linked and linked["cargo test"].how == "term"
    assert result.evidence_passages                    # terms alone are weak seeds on documents
    assert result.passages[0].id == "tools/testing.md#0"
    for p in result.passages:
        assert p.file and p.lines and p.section, p
    pages = {rel: text.split("\n") for rel, text in {**PAGES, **CODE_PAGES}.items()}
    for p in result.passages:
        assert words_held(p.text, pages[p.file], *p.lines) == [], (p.id, p.lines)
    keys = set(retriever.index.graph.entity_keys)
    assert not keys & {"way", "value", "owner", "code", "time"}   # bare words are debris, never entities


def test_an_mdbook_chapter_links_listings_and_old_anchors(tmp_path):
    """The Rust book's markup: reference links to built pages (``ch15-01-box.html#old-id``), old
    heading ids kept as ``<a id>`` lines, ``<Listing caption=...>`` around code that
    ``{{#rustdoc_include}}`` pulls from outside the folder. The caption is text, the include line
    is nothing, and the link reaches the section the old id names."""
    from linearrag.corpus import load_corpus

    (tmp_path / "ch15-01-box.md").write_text(
        "## Using `Box<T>` to Point to Data on the Heap\n\nBoxes are the simplest pointer.\n\n"
        "<!-- Old headings. Do not remove or links may break. -->\n\n"
        '<a id="using-boxt-to-store-data-on-the-heap"></a>\n\n### Storing Data on the Heap\n\n'
        "Listing 15-1 shows how to use a box.\n\n"
        '<Listing number="15-1" file-name="src/main.rs" caption="Storing an `i32` value on the heap using a box">\n\n'
        "```rust\n{{#rustdoc_include ../listings/ch15-smart-pointers/listing-15-01/src/main.rs}}\n```\n\n"
        "</Listing>\n\nThis program prints `b = 5`.\n", encoding="utf-8")
    (tmp_path / "ch15-02-deref.md").write_text(
        "## Treating Smart Pointers Like Regular References\n\nRecall [storing data on the heap][heap]<!-- ignore "
        "--> and [the std docs][std].\n\n[heap]: ch15-01-box.html#using-boxt-to-store-data-on-the-heap\n"
        "[std]: https://doc.rust-lang.org/std/boxed/struct.Box.html\n", encoding="utf-8")
    by_id = {p.id: p for p in load_corpus(tmp_path)}
    heap = by_id["ch15-01-box.md#1"]
    assert heap.title.endswith("Storing Data on the Heap")
    assert heap.text.split("\n") == ["Listing 15-1 shows how to use a box.",
                                     "Listing 15-1: Storing an `i32` value on the heap using a box",
                                     "This program prints `b = 5`."]
    assert heap.cite.lines == (11, 21)                                # from its first line to its last
    assert by_id["ch15-02-deref.md#0"].links == (("storing data on the heap", "Storing Data on the Heap"),)


def test_front_matter_setext_headings_and_rules(tmp_path):
    """What other docs sites write: YAML front matter (no text), setext headings ("Usage" over
    "-----") and rules ("***", "---") that are no text."""
    from linearrag.corpus import load_corpus

    (tmp_path / "readme.md").write_text(
        "---\nhide:\n  - navigation\n---\n\nMy Project\n==========\n\nIntro text.\n\n***\n\n"
        "Usage\n-----\n\nRun it.\n\n---\n\nThen stop it.\n", encoding="utf-8")
    passages = load_corpus(tmp_path)
    assert [(p.title, p.text) for p in passages] == [
        ("My Project", "Intro text."), ("My Project › Usage", "Run it.\nThen stop it.")]
    assert [p.cite.lines for p in passages] == [(9, 9), (16, 20)]


def test_an_mdx_page_is_read_as_markdown(tmp_path):
    """MDX (Docusaurus): import/export lines and JSX comments dropped, the front matter's title
    names a page without a "#" heading, an admonition's title kept before its text, component
    tags gone, and the citation on the file's own lines."""
    from linearrag.corpus import load_corpus

    (tmp_path / "install.mdx").write_text(
        "---\ntitle: 'Install the tool'\nsidebar_position: 2\n---\n"
        "import Tabs from '@theme/Tabs';\nimport {\n  TabItem,\n} from '@theme/TabItem';\n\n"
        "{/* hidden note */}\n\nImport nothing yourself: the installer does it.\n\n"
        ":::tip[Use a virtualenv]\nCreate one first.\n:::\n\n<Tabs>\n  <TabItem value=\"pip\">\n\n"
        "```bash\npip install tool\n```\n\n  </TabItem>\n</Tabs>\n\nexport const version = '1.0';\n",
        encoding="utf-8")
    install = load_corpus(tmp_path)
    assert [(p.title, p.text) for p in install] == [
        ("Install the tool", "Import nothing yourself: the installer does it.\nTip (Use a virtualenv): Create one "
                             "first.\npip install tool")]
    assert install[0].cite.lines == (12, 22)                          # not the import lines above


def test_a_books_summary_is_a_table_of_contents_and_skipped(tmp_path):
    """mdBook's (and GitBook's) SUMMARY.md lists every chapter as a link; read, it would be one
    passage linked to every chapter title. It is skipped as a table of contents and the build says
    so; a SUMMARY.md of prose is read like any page."""
    from linearrag.corpus import load_corpus
    from linearrag.inventory import Inventory

    book = tmp_path / "book"
    book.mkdir()
    (book / "SUMMARY.md").write_text(
        "# The Book\n\n[Foreword](foreword.md)\n\n- [Getting Started](ch01.md)\n    - [Installation](ch01-01.md)\n"
        "- [Guessing Game](ch02.md)\n\n---\n\n<!-- appendix -->\n1. [Appendix](appendix.md)\n", encoding="utf-8")
    (book / "ch01.md").write_text("# Getting Started\n\nInstall the toolchain first.\n", encoding="utf-8")
    inventory = Inventory()
    passages = load_corpus(book, inventory=inventory)
    assert [p.id for p in passages] == ["ch01.md#0"]
    assert inventory.to_dict()["skipped"] == {"a table of contents": {".md": 1}}
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "summary.md").write_text("# Summary\n\nThe quarter went well; see [the plan](plan.md) for the next one.\n"
                                      "Revenue grew and costs fell.\n\nHiring resumes in spring.\n", encoding="utf-8")
    assert [p.id for p in load_corpus(notes)] == ["summary.md#0"]


def test_a_markdown_definition_list_reads_as_term_and_definition(tmp_path):
    """A definition list (MyST's deflist, PHP Markdown Extra: "Term" over ": Definition") reads
    "Term: Definition", so a term in code is what the passage defines (``defines``)."""
    from linearrag.corpus import load_corpus
    from linearrag.retrieval.output import definition_keys

    (tmp_path / "cli.md").write_text("# Options\n\n`--reload`\n: Reload the server when code changes.\n\n"
                                     "`--port`\n:   The port to bind.\n", encoding="utf-8")
    (passage,) = load_corpus(tmp_path)
    assert passage.text == "`--reload`: Reload the server when code changes.\n`--port`: The port to bind."
    assert definition_keys(passage.text) == {"--reload", "--port"}


QUARTO_PAGE = """\
# Data import {#sec-import}

::: {.callout-note}
You need the `readr` package.
:::

:::tip
Use `read_csv()` for comma files.
:::

```{r}
#| label: fig-plot
df <- read_csv("data.csv")
```

As shown in @fig-plot and [@wickham2017; see @grolemund2016, p. 3], it loads; mail me@example.org.

{{< include _setup.qmd >}}
{{% notice tip %}}
Hugo notices hold text too.
{{% /notice %}}

=== "Linux"

    Install with apt.

> [!NOTE]
> GitHub alerts look like this.

> A quotation, then
> its second line.

- [x] done task
- [ ] open task

::: pkg.reader.Reader
    options:
      members:
        - read

The end.
"""


def test_book_and_site_markup_reads_as_text(tmp_path):
    """What Quarto/R Markdown books, Pandoc, MkDocs (tabs, mkdocstrings), Hugo and GitHub write
    around the prose: block markers, citations, cross-references and shortcodes are no words; a
    tab's or an alert's title heads its text; a ```{r} chunk is code; an mkdocstrings block
    (API reference generated from code not in the folder) is dropped like Sphinx's auto*; a
    .qmd or .Rmd file is read as Markdown, every word on the lines it cites."""
    from linearrag.corpus import load_corpus
    from linearrag.lines import words_held

    (tmp_path / "import.qmd").write_text(QUARTO_PAGE, encoding="utf-8")
    (tmp_path / "same.Rmd").write_text(QUARTO_PAGE, encoding="utf-8")
    passages = load_corpus(tmp_path)
    assert sorted(p.id for p in passages) == ["import.qmd#0", "same.Rmd#0"]
    page = passages[0]
    assert page.text.split("\n") == [
        "You need the `readr` package.", "Use `read_csv()` for comma files.",
        "#| label: fig-plot", 'df <- read_csv("data.csv")',
        "As shown in and , it loads; mail me@example.org.", "Hugo notices hold text too.",
        "Linux: Install with apt.", "Note: GitHub alerts look like this.", "A quotation, then its second line.",
        "- done task - open task", "The end."]
    assert words_held(page.text, QUARTO_PAGE.split("\n"), *page.cite.lines) == []
    assert "df <- read_csv" not in page.ner_text and "package" in page.ner_text   # the chunk is code: no NER
    assert not any(p.id.endswith("#1") for p in passages)   # the mkdocstrings block made no passage


def test_a_pipe_table_reads_as_rows(tmp_path):
    """A Markdown table is one line per row ("a | b"), its header rule no text, and the citation
    holds every row's words; a list stays one paragraph (items as lines of their own measured
    lower on docs-fastapi, docs/method.md)."""
    from linearrag.corpus import load_corpus
    from linearrag.lines import words_held

    doc = ("# Fields\n\nThe fields:\n\n| Parameter | Type |\n|:----------|-----:|\n| `title` | `str` |\n"
           "| `version` | `str` |\n\n- first item\n- second item\n")
    (tmp_path / "fields.md").write_text(doc, encoding="utf-8")
    (passage,) = load_corpus(tmp_path)
    assert passage.text.split("\n") == ["The fields:", "Parameter | Type", "`title` | `str`", "`version` | `str`",
                                        "- first item - second item"]
    assert words_held(passage.text, doc.split("\n"), *passage.cite.lines) == []


def test_copies_of_a_section_are_listed_under_the_best_ranked(tmp_path):
    """Generated docs repeat a setting's section on every command page that takes it (npm's docs:
    538 of 1,428 passages). The best-ranked copy stands for them, with where else the text stands;
    the places the others took go to the next passages. ``same_text=keep`` lists every copy."""
    from linearrag import RetrievalParams, Retriever, build_index
    from linearrag.lines import words_held

    setting = ("## ignore-scripts\n\nIf true, npm does not run scripts specified in package.json files. "
               "Commands meant to run one script, such as `npm test`, still run it.\n")
    pages = {f"commands/npm-{name}.md": f"# npm-{name}\n\n{what}\n\n{setting}" for name, what in (
        ("ci", "Installs a project with a clean slate, from the lockfile only."),
        ("install", "Installs a package and any packages that it depends on."),
        ("update", "Updates all the packages listed to the latest version."))}
    pages["using-npm/scripts.md"] = ("# Scripts\n\nThe `scripts` property of package.json runs lifecycle "
                                     "scripts such as `preinstall` and `postinstall` during installs.\n")
    for rel, text in pages.items():
        (tmp_path / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / rel).write_text(text, encoding="utf-8")
    build_index(tmp_path / "docs", tmp_path / "idx")
    retriever = Retriever.from_path(tmp_path / "idx")
    question = "how do I keep npm from running the install scripts in package.json?"
    result = retriever.query(question, RetrievalParams(top_k=4))
    texts = [p.text for p in result.passages]
    assert len(set(texts)) == len(texts) == 4
    (kept,) = [p for p in result.passages if p.text.startswith("If true, npm does not run scripts")]
    assert len(kept.copies) == 2 and {c["file"] for c in kept.copies} | {kept.file} == {
        "commands/npm-ci.md", "commands/npm-install.md", "commands/npm-update.md"}
    for c in kept.copies:
        assert words_held(kept.text, pages[c["file"]].split("\n"), *c["lines"]) == [], c
    assert "same text also at: commands/npm-" in result.format_text()
    every = retriever.query(question, RetrievalParams(top_k=4, same_text="keep"))
    assert sum(p.text == kept.text for p in every.passages) == 3 and not any(p.copies for p in every.passages)


def test_markdown_code_indented_four_spaces_is_code(tmp_path):
    """CommonMark's indented code block (four spaces after a blank line) is code: its lines stay
    lines and NER does not read them. Four spaces below a list item, an admonition or a footnote
    continue that block's own text, which stays prose."""
    from linearrag.corpus import load_corpus
    from linearrag.lines import words_held

    doc = ("# Install\n\nBuild it with:\n\n    ./configure --prefix=/usr\n    make install\n\nThen run the tests.\n\n"
           "- a list item\n\n    its second paragraph\n\n!!! note\n    Admonition text.\n")
    (tmp_path / "readme.md").write_text(doc, encoding="utf-8")
    (passage,) = load_corpus(tmp_path)
    assert passage.text.split("\n") == ["Build it with:", "./configure --prefix=/usr", "make install",
                                        "Then run the tests.", "- a list item", "its second paragraph",
                                        "Admonition text."]
    assert "configure" not in passage.ner_text and "make install" not in passage.ner_text
    assert "second paragraph" in passage.ner_text and "Admonition text" in passage.ner_text
    assert words_held(passage.text, doc.split("\n"), *passage.cite.lines) == []
