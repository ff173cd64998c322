"""Citations: every passage says its file, lines (holding its words) and section, for every format."""

import json
import textwrap

import pytest

from linearrag.corpus import load_corpus
from linearrag.lines import LineFinder, source_lines, words, words_held
from linearrag.passage import Citation
from linearrag.retrieval.results import PassageHit, citation_text

RST = textwrap.dedent("""\
    Command Line Interface
    ======================

    Installing Flask installs the :command:`flask` script. See :ref:`the tutorial <tutorial>`
    for more; set :envvar:`FLASK_APP` or pass :option:`--app`.

    .. code-block:: python
       :caption: ``hello.py``

       from flask import Flask
       app = Flask(__name__)

    Run the Server
    --------------

    .. versionadded:: 2.2
       The ``--debug`` option.

    The development server is not for production. Use a WSGI server.
    """)

MD = textwrap.dedent("""\
    # Settings

    Intro line one
    continues here with [a link](https://example.org) and `Depends`.

    (target-label)=
    ## Environment

    ```{note}
    Set `APP_CONFIG_PATH` first.
    ```

    | Name | Meaning |
    |------|---------|
    | <td>x</td> | y |

    Closing words of the page.
    """)

HTML = textwrap.dedent("""\
    <html><head><title>Guide</title></head><body><main>
    <h1>Guide</h1>
    <p>Caf&eacute; culture &amp; the
    <code>fetch()</code> call.</p>
    <h2>Next</h2>
    <p>Second section text.</p>
    </main></body></html>
    """)


def _check_all(root, passages):
    for p in passages:
        assert p.cite is not None and p.cite.lines, p.id
        kind = "html" if p.cite.file.endswith(".html") else "json" if p.cite.file.endswith(
            (".ipynb", ".jsonl", ".json")) else ""
        lines = source_lines((root / p.cite.file).read_text(encoding="utf-8"), kind)
        first, last = p.cite.lines
        assert 1 <= first <= last <= len(lines), (p.id, p.cite)
        assert words_held(p.text, lines, first, last) == [], (p.id, p.cite, p.text)


def test_every_format_cites_lines_that_hold_its_words(tmp_path):
    (tmp_path / "cli.rst").write_text(RST)
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "settings.md").write_text(MD)
    (tmp_path / "page.html").write_text(HTML)
    (tmp_path / "notes.txt").write_text("First paragraph.\n\n\nSecond paragraph\non two lines.\n")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "source": ["# Loading\n", "\n", "We read \"data.csv\" here.\n"]},
        {"cell_type": "code", "source": ["x = 1\n", "print(x)"], "outputs": []}]}
    (tmp_path / "load.ipynb").write_text(json.dumps(nb, indent=1))
    passages = load_corpus(tmp_path, max_chars=80)
    _check_all(tmp_path, passages)
    by_file = {}
    for p in passages:
        by_file.setdefault(p.cite.file, []).append(p)
    assert set(by_file) == {"cli.rst", "guide/settings.md", "page.html", "notes.txt", "load.ipynb"}
    rst = {p.text.split("\n")[0][:20]: p.cite for p in by_file["cli.rst"]}
    assert rst["Installing Flask ins"].lines[0] == 4 and rst["Installing Flask ins"].section == \
        "Command Line Interface"
    server = next(c for t, c in rst.items() if t.startswith("Added in version"))
    assert server.section == "Command Line Interface › Run the Server" and server.lines[0] == 16
    md = [p.cite for p in by_file["guide/settings.md"]]
    assert md[0].lines == (3, 4) and md[0].section == "Settings"
    assert md[-1].lines[1] == 17 and md[-1].section == "Settings › Environment"
    notes = by_file["notes.txt"]
    assert [p.cite.lines for p in notes] == [(1, 1), (4, 5)] or [p.cite.lines for p in notes] == [(1, 5)]


def test_a_paragraph_repeated_in_a_file_cites_its_own_place(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nSame words here.\n\n## B\n\nOther text.\n\n## C\n\nSame words here.\n")
    passages = load_corpus(tmp_path, max_chars=20)
    assert [p.cite.lines for p in passages] == [(3, 3), (7, 7), (11, 11)]


def test_a_section_after_look_alike_blocks_cites_its_own_lines(tmp_path):
    """pip's "Uninstall a package" section ("$ pip uninstall sampleproject …") follows two
    blocks that start with the same words: the run once began at the first "pip" within reach
    and cited 22 lines for a 5-line block."""
    page = textwrap.dedent("""\
        # Getting started

        ```console
        $ pip install -r requirements.txt
        [...]
        Successfully installed sampleproject
        ```

        ## Upgrade a package

        ```console
        $ pip install --upgrade sampleproject
        [...]
        Successfully installed sampleproject
        ```

        ## Uninstall a package

        ```console
        $ pip uninstall sampleproject
        Uninstalling sampleproject:
        Proceed (Y/n)? y
        Successfully uninstalled sampleproject
        ```
        """)
    (tmp_path / "start.md").write_text(page)
    cites = {p.title: p.cite.lines for p in load_corpus(tmp_path)}
    assert cites == {"Getting started": (4, 6), "Getting started › Upgrade a package": (12, 14),
                     "Getting started › Uninstall a package": (20, 23)}


def test_jsonl_and_json_records_cite_their_lines(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"id": "a", "title": "T", "text": "one"}\n\n{"id": "b", "text": "two"}\n')
    cites = [p.cite for p in load_corpus(tmp_path / "c.jsonl")]
    assert cites == [Citation("c.jsonl", (1, 1), "T"), Citation("c.jsonl", (3, 3), "")]
    (tmp_path / "c.json").write_text('[\n {"title": "T",\n  "text": "one"},\n {"title": "U", "text": "two"}\n]\n')
    assert [p.cite.lines for p in load_corpus(tmp_path / "c.json")] == [(2, 3), (4, 4)]


def test_the_line_finder_places_pieces_in_order_and_skips_markup():
    lines = ["Intro :ref:`Title <label>` words", "", "Another piece of text", "Intro Title words"]
    finder = LineFinder(lines)
    assert finder.place("Intro Title words") == (1, 1)
    assert finder.place("Another piece of text") == (3, 3)
    assert finder.place("Intro Title words") == (4, 4)
    assert words("「東京」はCity_name") == ["東", "京", "は", "city", "name"]


@pytest.mark.parametrize("passage,text", [
    ({"id": "a.md#0", "file": "a.md", "lines": [3, 9]}, "a.md:3-9"),
    ({"id": "a.md#0", "file": "a.md", "lines": [3, 3]}, "a.md:3"),
    ({"id": "b.pdf#p2", "file": "b.pdf", "lines": [1, 4], "page": 2}, "b.pdf p. 2"),
    ({"id": "x", "file": "", "lines": None}, "x")])
def test_citation_text(passage, text):
    assert citation_text(passage) == text


def test_the_text_view_cites_path_and_lines():
    hit = PassageHit(rank=1, id="cli.rst#2", title="CLI › Run", score=0.5, text="Run it.", file="cli.rst",
                     lines=[12, 20], section="CLI › Run")
    assert hit.citation == "cli.rst:12-20"


def test_substitutions_and_inline_tags_keep_the_words_of_their_lines(tmp_path):
    # Flask's javascript.rst writes |fetch| and defines it at the end of the file; FastAPI's
    # features.md writes <abbr title="…">ORM</abbr>s. Both once cited lines lacking their words.
    (tmp_path / "js.rst").write_text(textwrap.dedent("""\
        JavaScript
        ==========

        The |fetch| API replaces |XHR| in new code, see |undefined| too.

        Second paragraph.

        .. |fetch| replace:: ``fetch``
        .. |XHR| replace:: XMLHttpRequest
        """))
    (tmp_path / "features.md").write_text(
        '# Features\n\nWorks with <abbr title="Object Relational Mappers">ORM</abbr>s and '
        '<abbr title="Object Document Mappers">ODM</abbr>s.\n')
    passages = load_corpus(tmp_path)
    _check_all(tmp_path, passages)
    texts = {p.cite.file: p.text for p in passages}
    assert "The fetch API replaces XHR in new code, see undefined too." in texts["js.rst"]
    assert "XMLHttpRequest" not in texts["js.rst"]
    assert "ORMs and ODMs" in texts["features.md"]
    lines = source_lines((tmp_path / "features.md").read_text())
    assert words_held("ORMs and ODMs", lines, 3, 3) == []
    assert words_held("ORMs and ODMs and XMLHttpRequest", lines, 3, 3) == ["xmlhttprequest"]


def test_markdown_backslash_escapes_read_as_their_mark(tmp_path):
    """CommonMark: an escaped punctuation mark is that mark (Node's docs write "byte\\_length",
    so the identifier a user types is in the text), it starts no link or tag, and a code span
    keeps its backslashes. The cited lines still hold every word."""
    doc = ("# Buffers\n\nIf byte\\_length is `0`, see \\[`setKeepAlive([enable])`]\\[`x`] and \\<b\\>, "
           "not `a\\_b`.\n")
    (tmp_path / "buf.md").write_text(doc)
    (p,) = load_corpus(tmp_path)
    assert p.text == "If byte_length is `0`, see [`setKeepAlive([enable])`][`x`] and <b>, not `a\\_b`."
    assert words_held(p.text, doc.split("\n"), *p.cite.lines) == []


def test_html_citations_read_past_the_urls_inside_tags(tmp_path):
    """Node's API pages put a long link between a parameter and its type (``<code>mode</code> <a
    href="https://developer.mozilla.org/…#Number_type">&lt;integer></a>``). Counted as file words,
    the URL parted them, the line finder took a later, tighter copy of the same words, and the next
    passages were cited hundreds of lines too far. Tags are no words to the finder."""
    url = "https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Data_structures#Number_type"
    item = f'<li><code>mode</code> <a href="{url}" class="type">&#x3C;integer></a></li>'
    page = ("<html><body><main>\n<h2>lchmod</h2>\n<ul>\n" + item + "\n</ul>\n<p>Changes the permissions.</p>\n"
            + "\n".join(f"<p>Filler paragraph {i}.</p>" for i in range(30))
            + "\n<h2>chmod</h2>\n<p><code>mode</code> &#x3C;integer></p>\n<p>Changes the mode.</p>\n</main></body></html>")
    (tmp_path / "fs.html").write_text(page)
    (first, *_) = load_corpus(tmp_path, max_chars=60)
    assert first.text == "`mode` <integer>\nChanges the permissions." and tuple(first.cite.lines) == (4, 6)
