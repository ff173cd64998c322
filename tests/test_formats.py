"""PDF and HTML files in a corpus directory: text with page and section provenance."""

import logging

import pytest

from linearrag.corpus import load_corpus
from linearrag.errors import CorpusError
from linearrag.lines import source_lines, words_held


def _pdf(path, pages, title=None):
    """A real PDF with a text layer (fpdf2): one page per string; None = a page with a drawing only."""
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text is None:
            pdf.set_fill_color(120, 120, 120)
            pdf.rect(20, 20, 100, 60, style="F")
        else:
            pdf.multi_cell(0, 8, text)
    pdf.output(str(path))


HTML = """<!doctype html><html><head><title>Deploy guide</title><script>var tracker = 1;</script></head>
<body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<main>
  <h1>Deployment</h1>
  <p>Run the app behind a <a href="proxy.html">termination proxy</a> that handles HTTPS.</p>
  <h2>Workers</h2>
  <p>Start several worker processes with <code>--workers 4</code>.</p>
  <pre>uvicorn main:app --workers 4</pre>
  <h3>Memory</h3>
  <ul><li>Each worker loads its own copy of the model.</li></ul>
</main>
<footer>Copyright 2026</footer></body></html>"""


def test_pdf_pages_become_passages_with_the_page_in_the_id(tmp_path):
    _pdf(tmp_path / "manual.pdf", ["Kyoto was the capital of Japan for over a thousand years.",
                                   "Tokyo became the capital in 1868 after the Meiji Restoration."], title="City Manual")
    passages = load_corpus(tmp_path)
    assert [p.id for p in passages] == ["manual.pdf#p1", "manual.pdf#p2"]
    assert passages[0].title == "City Manual › p. 1" and passages[1].title == "City Manual › p. 2"
    assert "Kyoto was the capital of Japan" in passages[0].text and "Meiji Restoration" in passages[1].text


def test_image_only_pdf_is_skipped_with_a_warning(tmp_path, caplog):
    _pdf(tmp_path / "scan.pdf", [None, None])
    (tmp_path / "note.txt").write_text("A note about Osaka.", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        passages = load_corpus(tmp_path)
    assert [p.id for p in passages] == ["note.txt#0"]
    assert "scan.pdf" in caplog.text and "no text layer" in caplog.text
    with pytest.raises(CorpusError, match="no text layer"):   # given alone, it is an error
        load_corpus(tmp_path / "scan.pdf")


def test_html_main_text_by_section(tmp_path):
    (tmp_path / "deploy.html").write_text(HTML, encoding="utf-8")
    passages = load_corpus(tmp_path)
    assert [p.title for p in passages] == ["Deployment", "Deployment › Workers", "Deployment › Workers › Memory"]
    first, workers, memory = passages
    assert first.text == "Run the app behind a termination proxy that handles HTTPS."
    assert "uvicorn main:app --workers 4" in workers.text and "uvicorn" not in workers.analysis_text
    assert ("--workers 4", "CODE") in workers.terms
    assert memory.text == "Each worker loads its own copy of the model."
    every = " ".join(p.text for p in passages)
    assert "tracker" not in every and "Home" not in every and "Copyright" not in every


@pytest.mark.parametrize("stream", [False, True])
def test_sphinx_html_links_reach_the_section_a_fragment_names(tmp_path, monkeypatch, stream):
    """Sphinx's HTML output: a section's id sits on its ``<section>``, each heading ends in a "¶"
    link, and references point to ``page.html#section-id``. The "¶" is no text and the link
    reaches the section whose id it names, though the id is no slug of the heading's words; the
    stream reader of large pages reads the ids and links as the tree does."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    (tmp_path / "errorhandling.html").write_text(
        '<html><head><title>Handling Errors</title></head><body><div role="main">'
        '<section id="handling-application-errors"><h1>Handling Application Errors<a class="headerlink" '
        'href="#handling-application-errors">¶</a></h1><p>Intro.</p>'
        '<section id="logging-tools"><h2>Error Logging Tools<a class="headerlink" href="#logging-tools">¶</a></h2>'
        "<p>Sentry aggregates duplicate errors.</p></section></section></div></body></html>", encoding="utf-8")
    (tmp_path / "debugging.html").write_text(
        '<html><body><main><h1>Debugging</h1><p>Use a tool, as described in <a class="reference internal" '
        'href="errorhandling.html#logging-tools"><span>the tools</span></a>.</p></main></body></html>',
        encoding="utf-8")
    by_id = {p.id: p for p in load_corpus(tmp_path)}
    assert by_id["errorhandling.html#1"].title == "Handling Application Errors › Error Logging Tools"
    assert by_id["debugging.html#0"].links == (("the tools", "Error Logging Tools"),)


SPHINX_PAGE = """<html><head><title>Guide | Site</title></head><body><main>
<section id="guide"><h1>Guide<a class="headerlink" href="#guide">¶</a></h1>
<p>Read <a href="other.html#setup">the setup page</a> and <code>run()</code>.</p>
<section id="opts"><h2 id="h-opts"><a id="old-opts"></a>Options</h2>
<table><tr><th>Name</th><th>Meaning</th></tr>
<tr><td><code>--x</code></td><td><p>Do <a href="#guide">x</a>.</p></td></tr></table>
<ul><li>one</li><li>two <a href="#opts">more</a></li></ul>
<pre>code here</pre>
</section></section></main></body></html>"""


def test_the_stream_reader_reads_a_page_as_the_tree_does():
    """A page over ``TREE_MAX_TAGS`` tags is read as a stream: the same sections, ids, rows,
    links and code as the tree gives (the title's own heading folded into the title)."""
    from linearrag.formats import read_html
    from linearrag.htmlstream import StreamReader

    def seen(sections):
        return [(s.path, s.anchors, s.paragraphs, s.code, s.links) for s in sections]

    tree = seen(read_html(SPHINX_PAGE, "fallback"))
    assert tree[1] == (["Guide", "Options"], ["#options", "#hopts", "#oldopts", "#opts"],
                       ["Name | Meaning", "`--x` | Do x.", "one", "two more", "code here"],
                       [False, False, False, False, True], [[], [("x", "#guide")], [], [("more", "#opts")], []])
    assert seen(StreamReader("fallback").read(SPHINX_PAGE)) == tree


LOOSE_PAGE = """<html><head><title>fs</title></head><body>
<div id="versioninfo"><span>Tool 1.95.0</span> <a href="https://example.org/c/5980">5980</a></div>
<h1>Files</h1>
<div class="api_metadata"><span>Added in: v10.0.0</span></div>
<p>Reads files.</p>
<h2><code>open()</code></h2>
<div class="api_stability"><a href="#close">Stability: 1</a> - Experimental</div>
<p>Opens a file.</p>
<h2><code>close()</code></h2>
<p>Closes it.</p>
</body></html>"""


@pytest.mark.parametrize("stream", [False, True])
def test_html_text_outside_any_block_is_read_under_a_heading(tmp_path, monkeypatch, stream):
    """Node's pages write a function's version and stability in a bare ``<div>`` ("Added in:
    v10.0.0", "Stability: 1 - Experimental"): text outside any block is a paragraph of its own
    under a heading; above the first heading it is the site's (a version banner) and no text."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    (tmp_path / "fs.html").write_text(LOOSE_PAGE, encoding="utf-8")
    passages = load_corpus(tmp_path)
    by_title = {p.title: p for p in passages}
    assert len(by_title) == len(passages) == 3
    assert by_title["Files"].text.splitlines() == ["Added in: v10.0.0", "Reads files."]
    opened = by_title["Files › `open()`"]
    assert opened.text.splitlines() == ["Stability: 1 - Experimental", "Opens a file."]
    assert opened.links == (("Stability: 1", "`close()`"),)   # its link reaches the section it names
    assert not any("1.95" in p.text for p in passages)
    for p in passages:
        assert words_held(p.text, source_lines(LOOSE_PAGE, "html"), *p.cite.lines) == [], p.id


@pytest.mark.parametrize("stream", [False, True])
def test_an_unclosed_html_heading_ends_at_its_first_block(tmp_path, monkeypatch, stream):
    """``<h2>Setup<p>Install…`` (a heading left open, as hand-written pages do) is a heading and
    its text, as a browser shows it; the tree once put the rest of the page inside the heading,
    and the page read as its first paragraph alone."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    page = ("<html><body><h1>Guide</h1><p>Intro.</p>\n<h2 id=setup-id>Setup <code>pip</code>\n"
            "<p>Install the tool with pip.</p>\n<ul><li>then run it</li></ul>\n<h2>Usage</h2>\n"
            "<p>Call run().</p></body></html>")
    (tmp_path / "guide.html").write_text(page, encoding="utf-8")
    passages = load_corpus(tmp_path)
    assert [(p.title, p.text.splitlines()) for p in passages] == [
        ("Guide", ["Intro."]),
        ("Guide › Setup `pip`", ["Install the tool with pip.", "then run it"]),
        ("Guide › Usage", ["Call run()."])]
    for p in passages:
        assert words_held(p.text, source_lines(page, "html"), *p.cite.lines) == [], p.id


@pytest.mark.parametrize("stream", [False, True])
def test_both_html_readers_read_the_pages_main_element(tmp_path, monkeypatch, stream):
    """The page's text is its first ``<main>`` (else ``<article>``, else the body), for the
    stream reader as for the tree: rustdoc's breadcrumb and sidebar paragraphs lie outside it
    (56 of 150 Rust pages read alike before, 142 now). A ``<main>`` written only inside a script
    is no element: that page is read whole."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    (tmp_path / "fn.html").write_text(
        "<html><head><title>offset in core - Rust</title></head><body><div class=sidebar><p>In core</p>"
        "<ul><li>Sections</li></ul></div><main><h1>Function offset</h1><p>Adds an offset.</p></main>"
        "<p>Outside main.</p></body></html>", encoding="utf-8")
    (tmp_path / "plain.html").write_text(
        '<html><body><script>let t = "<main>";</script><h1>Plain</h1><p>All of it.</p></body></html>',
        encoding="utf-8")
    assert [(p.id, p.title, p.text) for p in load_corpus(tmp_path)] == [
        ("fn.html#0", "Function offset", "Adds an offset."), ("plain.html#0", "Plain", "All of it.")]


@pytest.mark.parametrize("stream", [False, True])
def test_a_name_split_by_wbr_is_one_title_and_br_breaks_no_paragraph(tmp_path, monkeypatch, stream):
    """rustdoc writes every item's name with ``<wbr>`` break hints ("_mm512_<wbr>castph_<wbr>ps");
    the tree read the page title with a space at each ("Function _mm512_ castph_ ps › Function
    _mm512_castph_ps"). Both readers now read the name whole, and a ``<br>`` parts two words of
    one paragraph (the stream once cut the paragraph there)."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    page = ('<html><body><h1>Function <span class="fn">_mm512_<wbr>castph_<wbr>ps</span></h1>\n'
            "<p>Casts a vector.<br>No instruction is emitted.</p>\n<pre>let a = 1;<br>let b = 2;</pre></body></html>")
    (tmp_path / "fn.html").write_text(page, encoding="utf-8")
    (passage,) = load_corpus(tmp_path)
    assert passage.title == "Function _mm512_castph_ps"
    assert passage.text.splitlines() == ["Casts a vector. No instruction is emitted.", "let a = 1;", "let b = 2;"]
    assert words_held(passage.text, source_lines(page, "html"), *passage.cite.lines) == []


@pytest.mark.parametrize("stream", [False, True])
def test_html_code_inside_a_list_item_or_a_definition_stays_code(tmp_path, monkeypatch, stream):
    """Sphinx writes an install step's command inside its ``<li>`` and a function's example inside
    its ``<dd>``; the tree once read the whole item as one line of prose ("Create an
    environment: python -m venv .venv . .venv/bin/activate")."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    page = ('<html><body><main><h1>Install</h1>\n<ol><li><p>Create an environment:</p>\n'
            '<div class="highlight"><pre>python -m venv .venv\n. .venv/bin/activate</pre></div>\n</li>\n'
            '<li>Plain item</li></ol>\n<dl class="py function"><dt>run(<em>host</em>)</dt>\n<dd><p>Runs the app.</p>\n'
            '<div class="highlight"><pre>&gt;&gt;&gt; app.run()</pre></div></dd></dl></main></body></html>')
    (tmp_path / "install.html").write_text(page, encoding="utf-8")
    (passage,) = load_corpus(tmp_path)
    assert passage.text.split("\n") == ["Create an environment:", "python -m venv .venv", ". .venv/bin/activate",
                                        "Plain item", "run(host)", "Runs the app.", ">>> app.run()"]
    assert words_held(passage.text, source_lines(page, "html"), *passage.cite.lines) == []


def test_html_blocks_inside_a_block_and_line_breaks_stay_apart(tmp_path):
    """Sphinx writes a function's field list inside its ``<dd>``; a browser shows each nested block,
    and each ``<br>``, on a line of its own, so no word of one may run into the next."""
    (tmp_path / "api.html").write_text(
        '<html><body><main><h1>API</h1><dl class="py function"><dt class="sig">run(<em>speed</em>)</dt>'
        '<dd><p>Run the app.</p><dl class="field-list simple"><dt class="field-odd">Parameters'
        '<span class="colon">:</span></dt><dd class="field-odd"><p><strong>speed</strong> – how fast</p></dd>'
        '<dt class="field-even">Returns<span class="colon">:</span></dt><dd class="field-even"><p>None</p></dd>'
        "</dl></dd></dl>\n<p>first line<br>second line</p>\n<ul><li>item one<ul><li>nested</li></ul></li></ul>"
        "\n<p>in<em>line</em> marks join</p></main></body></html>", encoding="utf-8")
    (passage,) = load_corpus(tmp_path)
    assert passage.text.splitlines() == [
        "run(speed)", "Run the app. Parameters: speed – how fast Returns: None", "first line second line",
        "item one nested", "inline marks join"]
    lines = source_lines((tmp_path / "api.html").read_text(encoding="utf-8"), "html")
    assert words_held(passage.text, lines, *passage.cite.lines) == []


NODE_PAGE = """<html><head><title>File system | Node.js v20.20.2 Documentation</title></head><body>
<header><h1>Node.js v20.20.2 documentation</h1></header>
<div id="apicontent">
<h2>File system<span><a class="mark" href="#file-system" id="file-system">#</a></span></h2>
<p>The <code>node:fs</code> module enables interacting with the file system.</p>
<h4><code>fs.ftruncate(fd[, len], callback)</code><span><a class="mark" href="#fsftruncate" id="fsftruncate">#</a></span></h4>
<table>
<tr><th>Version</th><th>Changes</th></tr>
<tr><td>v10.0.0</td>
<td><p>The <code>callback</code> parameter is no longer optional.</p></td></tr>
</table>
<p>Truncates the file descriptor.</p>
<h2>C#<span><a class="mark" href="#c-sharp" id="c-sharp">#</a></span></h2>
<p>See <a href="#fsftruncate">ftruncate</a> for the sharp details.</p>
</div></body></html>
"""


@pytest.mark.parametrize("stream", [False, True])
def test_node_style_html_title_permalinks_and_table_rows(tmp_path, monkeypatch, stream):
    """Node's API pages: the <title> carries the site's name ("File system | Node.js … Documentation")
    and the page's <h1> sits in the dropped header; each heading ends in a "#" link to itself; a
    history table's cells belong to rows. The title is the page's own part, a permalink mark is no
    word of its heading (its id still names the section, and "C#" keeps its own "#"), a row reads
    "a | b". The stream reader for large pages reads the same rows and links as the tree."""
    import linearrag.formats as formats

    if stream:
        monkeypatch.setattr(formats, "TREE_MAX_TAGS", 0)
    (tmp_path / "fs.html").write_text(NODE_PAGE, encoding="utf-8")
    passages = load_corpus(tmp_path)
    by_title = {p.title: p for p in passages}
    assert set(by_title) == {"File system", "File system › `fs.ftruncate(fd[, len], callback)`", "File system › C#"}
    lines = by_title["File system › `fs.ftruncate(fd[, len], callback)`"].text.splitlines()
    assert lines[:2] == ["Version | Changes", "v10.0.0 | The `callback` parameter is no longer optional."]
    assert lines[-1] == "Truncates the file descriptor."
    assert by_title["File system › C#"].links == (("ftruncate", "`fs.ftruncate(fd[, len], callback)`"),)
    for p in passages:
        assert words_held(p.text, source_lines(NODE_PAGE, "html"), *p.cite.lines) == [], p.id


def test_own_title_drops_the_site_name_only_when_the_first_heading_says_the_rest():
    from linearrag.htmlparts import own_title

    assert own_title("File system | Node.js v20.20.2 Documentation", "File system") == "File system"
    # mdBook: the heading's letters and digits decide ("Test-Driven", code marks)
    assert own_title("Adding Functionality with Test Driven Development - The Rust Programming Language",
                     "Adding Functionality with Test-Driven Development") == (
        "Adding Functionality with Test-Driven Development")
    assert own_title("To panic! or Not to panic! - The Rust Programming Language",
                     "To `panic!` or Not to `panic!`") == "To `panic!` or Not to `panic!`"
    # no heading that says it: the whole <title> ("A - Keywords" is not "Appendix A: Keywords")
    assert own_title("A - Keywords - The Rust Programming Language", "Appendix A: Keywords") == (
        "A - Keywords - The Rust Programming Language")
    assert own_title("Pre-commit hooks", "Pre") == "Pre-commit hooks"
