"""Every input format, and every kind of bad input."""

import json

import pytest

from linearrag.corpus import load_corpus
from linearrag.errors import CorpusError


def test_directory_split_and_merge(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.md").write_text("# Title\n\nFirst paragraph.\n\nSecond paragraph.\n", encoding="utf-8")
    (tmp_path / "sub" / "a.txt").write_text("x" * 30 + "\n\n" + "y" * 30 + "\n\n" + "z" * 10, encoding="utf-8")
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    passages = load_corpus(tmp_path, max_chars=45)
    ids = [p.id for p in passages]
    assert ids == ["b.md#0", "sub/a.txt#0", "sub/a.txt#1"]   # sorted, relpath#n
    assert passages[0].text == "# Title\nFirst paragraph.\nSecond paragraph."
    assert passages[0].title == "b.md" and not passages[0].title_is_name
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
    with pytest.raises(CorpusError, match="no .txt or .md files"):
        load_corpus(tmp_path)
    (tmp_path / "empty.txt").write_text("  \n\n ", encoding="utf-8")
    with pytest.raises(CorpusError, match="corpus is empty"):
        load_corpus(tmp_path)
