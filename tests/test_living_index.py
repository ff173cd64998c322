"""A living index with the real models: adds, removals, re-syncs and compaction give the
index a full build of the final corpus gives — same top-10 ids, scores within 1e-4, in every
mode (embeddings computed in fp32 and stored in float16: a vector that differs by 1e-7 between two
batches can round to the neighbouring float16 value, so scores agree to float16's resolution; see
docs/store.md)."""

import json
import random
import shutil

import pytest

from linearrag import BuildConfig, Retriever, build_index, load_index
from linearrag.evaluation.compare import compare
from linearrag.index.writer import IndexWriter

from .conftest import EXAMPLES
from .test_markdown_real import PAGES

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

FP32 = BuildConfig(precision="fp32")


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _agree(changed, rebuilt, questions):
    agreement = compare(Retriever.from_path(changed), Retriever.from_path(rebuilt), questions)
    assert agreement.identical(1e-4), agreement.to_dict()


def test_add_remove_readd_equals_a_full_build(tmp_path):
    rows = [json.loads(line) for line in (EXAMPLES / "2wiki-sample" / "corpus.jsonl").read_text().splitlines()]
    questions = [json.loads(line)["question"]
                 for line in (EXAMPLES / "2wiki-sample" / "questions.jsonl").read_text().splitlines()]
    first, second = rows[:90], rows[90:]
    writer = IndexWriter(tmp_path / "idx", FP32)
    writer.build(_jsonl(tmp_path / "first.jsonl", first))
    added = writer.add(_jsonl(tmp_path / "second.jsonl", second))
    assert added["added"] == 70 and added["passages"] == 160 and added["segments"] == 2
    gone = random.Random(7).sample([r["id"] for r in rows], 16)
    removed = writer.remove(gone)
    assert removed["removed"] == 16 and removed["passages"] == 144
    back = [r for r in rows if r["id"] in gone[:8]]
    readd = writer.add(_jsonl(tmp_path / "back.jsonl", back))
    assert readd["added"] == 8 and readd["passages"] == 152
    final = [r for r in rows if r["id"] not in gone[8:]]
    random.Random(3).shuffle(final)   # the input order of a build does not matter
    build_index(_jsonl(tmp_path / "final.jsonl", final), tmp_path / "full", FP32)
    _agree(tmp_path / "idx", tmp_path / "full", questions)

    # compaction rewrites the live passages into one segment and changes no answer
    compacted = IndexWriter(tmp_path / "idx").compact()
    assert compacted["segments"] == 1 and compacted["deleted_passages"] == 0
    _agree(tmp_path / "idx", tmp_path / "full", questions)
    # an add that replaces a passage: the new text is searched, the old one is gone
    changed = dict(final[0], text="Zanzibar Quokka Festival is held every spring on the island of Pemba.")
    summary = IndexWriter(tmp_path / "idx").add(_jsonl(tmp_path / "one.jsonl", [changed]))
    assert summary["replaced"] == 1 and summary["passages"] == 152
    hit = Retriever.from_path(tmp_path / "idx").query("Where is the Zanzibar Quokka Festival held?").passages[0]
    assert hit.id == changed["id"] and "Pemba" in hit.text


def _write_pages(root, pages):
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def test_directory_update_equals_a_full_build(tmp_path):
    docs = tmp_path / "docs"
    _write_pages(docs, PAGES)
    writer = IndexWriter(tmp_path / "idx", FP32)
    writer.build(docs)
    assert writer.update()["committed"] is False   # nothing changed on disk: nothing to commit

    (docs / "tools" / "cargo.md").unlink()
    (docs / "tools" / "testing.md").write_text(
        "# Testing\n\nIntegration tests live in the `tests` directory; `cargo test` runs them with the unit tests.\n",
        encoding="utf-8")
    # a new page that an unchanged page already links to ([[Borrowing]] in ownership.md): the
    # link resolves only now, and the re-sync must see that without re-reading ownership.md
    (docs / "basics" / "borrowing.md").write_text(
        "# Borrowing\n\nA reference borrows a value without taking ownership; the borrow checker makes sure "
        "no reference outlives the value it points to.\n", encoding="utf-8")
    summary = writer.update()
    assert (summary["files_new"], summary["files_changed"], summary["files_removed"]) == (1, 1, 1)
    assert summary["unchanged"] == 3
    build_index(docs, tmp_path / "full", FP32)
    questions = ["how do I run integration tests", "what keeps a value alive when a reference cycle exists",
                 "what does the borrow checker make sure of", "who owns a value after ownership moves",
                 "how do weak references get upgraded", "what does cargo build do"]
    _agree(tmp_path / "idx", tmp_path / "full", questions)
    ids = load_index(tmp_path / "idx").passage_ids.tolist()
    assert not [i for i in ids if i.startswith("tools/cargo.md")] and "basics/borrowing.md#0" in ids
    # removing a whole file by its name
    summary = IndexWriter(tmp_path / "idx").remove(["basics/borrowing.md"])
    assert summary["removed"] == 1


def test_japanese_directory_add_and_remove(tmp_path, team_index):
    """GiNZA analysis and the multilingual encoder through the same segments."""
    notes = tmp_path / "notes"
    shutil.copytree(EXAMPLES / "team-notes" / "notes", notes)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "lunch.md").write_text("# ランチ\n\n金曜日のランチは田中さんが予約した渋谷のカレー屋です。\n", encoding="utf-8")
    writer = IndexWriter(tmp_path / "idx", FP32)
    writer.build(notes)
    writer.add(extra)
    hits = Retriever.from_path(tmp_path / "idx").query("金曜日のランチはどこですか？").passages
    assert hits[0].id == "lunch.md#0"
    writer.remove(["lunch.md"])
    ids = load_index(tmp_path / "idx").passage_ids.tolist()
    assert "lunch.md#0" not in ids and ids == load_index(team_index[0]).passage_ids.tolist()


def test_an_index_cannot_be_emptied(tmp_path):
    rows = [json.loads(line) for line in (EXAMPLES / "2wiki-sample" / "corpus.jsonl").read_text().splitlines()[:3]]
    writer = IndexWriter(tmp_path / "idx", FP32)
    writer.build(_jsonl(tmp_path / "c.jsonl", rows))
    with pytest.raises(Exception, match="without passages"):
        writer.remove([r["id"] for r in rows])
    assert len(load_index(tmp_path / "idx").passage_ids) == 3
