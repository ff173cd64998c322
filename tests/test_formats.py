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


def test_sphinx_html_links_reach_the_section_a_fragment_names(tmp_path):
    """Sphinx's HTML output: a section's id sits on its ``<section>``, each heading ends in a "¶"
    link, and references point to ``page.html#section-id``. The "¶" is no text and the link
    reaches the section whose id it names, though the id is no slug of the heading's words."""
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
