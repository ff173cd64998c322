"""Any size of text, no traceback: long lines cut at sentences and words, one-line Markdown
that starts with '#', a record analysed in pieces, deep HTML read as a stream, and a file over
the size limit refused (or skipped) with the flag that lifts it."""

import json
import logging

import pytest

from linearrag.corpus import load_corpus
from linearrag.errors import CorpusError
from linearrag.textsplit import split_text, spans

from .conftest import EXAMPLES

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

TEXTS = [json.loads(line)["text"] for line in (EXAMPLES / "2wiki-sample" / "corpus.jsonl").read_text().splitlines()]


def _prose(chars: int) -> str:
    blob = " ".join(TEXTS)
    return ((blob + " ") * (chars // len(blob) + 1))[:chars]


@pytest.mark.parametrize("max_chars", [1, 7, 80, 1000])
def test_split_text_keeps_every_word_within_the_budget(max_chars):
    text = _prose(5000) + " " + "x" * 2500 + " 日本語の文です。" * 50
    pieces = split_text(text, max_chars)
    assert all(0 < len(p) <= max_chars for p in pieces)
    assert "".join("".join(pieces).split()) == "".join(text.split())   # nothing lost, nothing added
    for (a, b), piece in zip(spans(text, max_chars), pieces):
        assert text[a:b] == piece


def test_split_prefers_sentence_ends():
    text = "First sentence is here. " * 100
    assert all(p.endswith(".") for p in split_text(text, 230))


def test_one_line_files_become_bounded_passages(tmp_path):
    line = _prose(300_000)
    (tmp_path / "one.txt").write_text(line)
    (tmp_path / "tagged.md").write_text("# " + line)   # one line that starts like a heading
    passages = load_corpus(tmp_path, max_chars=1000)
    for name in ("one.txt", "tagged.md"):
        mine = [p for p in passages if p.id.startswith(name)]
        assert len(mine) > 290 and max(len(p.text) for p in mine) <= 1000, name
    md = [p for p in passages if p.id.startswith("tagged.md")]
    assert md[0].title == "tagged" and md[0].text.startswith("# ")


def test_a_document_over_the_size_limit(tmp_path, caplog):
    (tmp_path / "big.txt").write_text("word " * 300_000)   # 1.5 MB
    (tmp_path / "small.txt").write_text("A small note about the kettle.")
    with pytest.raises(CorpusError, match=r"over the 1 MB limit .*--max-file-mb 3 to index it"):
        load_corpus(tmp_path / "big.txt", max_file_mb=1)
    with caplog.at_level(logging.WARNING):
        passages = load_corpus(tmp_path, max_file_mb=1)
    assert [p.id for p in passages] == ["small.txt#0"] and "--max-file-mb" in caplog.text
    assert len(load_corpus(tmp_path, max_file_mb=2)) > 1
    record = tmp_path / "records.jsonl"
    record.write_text(json.dumps({"id": "r", "text": "word " * 300_000}) + "\n")
    with pytest.raises(CorpusError, match=r"records.jsonl:1: 1.5 MB, over the 1 MB limit"):
        load_corpus(record, max_file_mb=1)


def test_deeply_nested_html_is_read_as_a_stream(tmp_path):
    depth = 300_000
    page = ("<html><head><title>Deep</title><script>var x = '<p>not text</p>';</script></head><body>"
            + "<div>" * depth + "<h2>Kitchen</h2><p>The kettle is in the <code>second</code> cupboard.</p>"
            + "<pre>make tea</pre>" + "</div>" * depth + "</body></html>")
    (tmp_path / "deep.html").write_text(page)
    passages = load_corpus(tmp_path / "deep.html")
    assert [p.title for p in passages] == ["Deep › Kitchen"]
    assert passages[0].text == "The kettle is in the `second` cupboard.\nmake tea"


def test_a_long_record_is_analysed_in_pieces(monkeypatch):
    """Pieces far below spaCy's max_length; sentences and mentions keep offsets into the whole text."""
    import linearrag.analysis as analysis

    monkeypatch.setattr(analysis, "PIECE_CHARS", 1500)
    analyzer = analysis.Analyzer("en")
    text = _prose(6000)
    whole, short = list(analyzer.analyze([text, "Paris is in France."]))
    assert len(whole.sentences) > 20 and whole.sentences and short.sentences == ["Paris is in France."]
    for sentence, (a, b) in zip(whole.sentences, whole.spans):
        assert text[a:b] == sentence
    mentions = [m for ms in whole.mentions for m in ms if m.start >= 0]
    assert mentions and all(text[m.start:m.end] == m.surface for m in mentions)
