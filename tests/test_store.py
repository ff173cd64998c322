"""Index round trip, load-time checks, and atomic replacement under a real kill."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from linearrag.analysis import AnalyzedText, Mention
from linearrag.corpus import Passage
from linearrag.errors import IndexFormatError
from linearrag.graph import build_graph
from linearrag.store import atomic_directory, load_index, write_index

DIM = 4


def _write(directory, marker="old"):
    passages = [Passage("a", "A", f"{marker} alpha"), Passage("b", "B", "beta")]
    analyzed = [AnalyzedText(["alpha."], [[Mention("x", "X", "ORG")]]), AnalyzedText(["beta."], [[]])]
    graph = build_graph(zip(analyzed, ["", ""]))
    rng = np.random.default_rng(0)
    meta = {"language": "en", "ner": {"model": "m", "version": "1"},
            "embedding": {"model": "e", "version": "1", "dim": DIM},
            "counts": {"passages": 2, "sentences": 2, "entities": 1}}
    with atomic_directory(directory) as tmp:
        write_index(tmp, meta, passages, graph, rng.random((2, DIM)), rng.random((2, DIM)), rng.random((1, DIM)))


def test_round_trip(tmp_path):
    _write(tmp_path / "idx")
    idx = load_index(tmp_path / "idx")
    assert idx.passage_ids == ["a", "b"] and idx.passage_texts[0] == "old alpha"
    assert idx.graph.C.toarray().tolist() == [[1.0], [0.0]]
    assert idx.graph.M.toarray().tolist() == [[1.0], [0.0]]
    assert isinstance(idx.passage_emb, np.memmap) and idx.passage_emb.shape == (2, DIM)
    assert idx.meta["format_version"] == 1
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]   # no temporary left


def test_missing_index_and_missing_meta(tmp_path):
    with pytest.raises(IndexFormatError, match="no index here"):
        load_index(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexFormatError, match="meta.json missing"):
        load_index(tmp_path / "empty")


def test_wrong_version(tmp_path):
    _write(tmp_path / "idx")
    meta = json.loads((tmp_path / "idx" / "meta.json").read_text())
    meta["format_version"] = 99
    (tmp_path / "idx" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="format version 99"):
        load_index(tmp_path / "idx")


def test_missing_file(tmp_path):
    _write(tmp_path / "idx")
    os.remove(tmp_path / "idx" / "entity_emb.npy")
    with pytest.raises(IndexFormatError, match="missing file entity_emb.npy"):
        load_index(tmp_path / "idx")


def test_truncated_array(tmp_path):
    _write(tmp_path / "idx")
    path = tmp_path / "idx" / "sentence_emb.npy"
    path.write_bytes(path.read_bytes()[:-9])
    with pytest.raises(IndexFormatError, match="corrupt or truncated"):
        load_index(tmp_path / "idx")


def test_corrupt_meta(tmp_path):
    _write(tmp_path / "idx")
    (tmp_path / "idx" / "meta.json").write_text("{not json")
    with pytest.raises(IndexFormatError, match="corrupt"):
        load_index(tmp_path / "idx")


def test_failed_build_keeps_previous_index(tmp_path):
    _write(tmp_path / "idx", "old")
    with pytest.raises(RuntimeError):
        with atomic_directory(tmp_path / "idx") as tmp:
            (tmp / "meta.json").write_text("{}")
            raise RuntimeError("disk full")
    assert load_index(tmp_path / "idx").passage_texts[0] == "old alpha"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_killed_build_keeps_previous_index(tmp_path):
    """SIGKILL in the middle of writing: the old index loads, and the next build cleans up."""
    _write(tmp_path / "idx", "old")
    script = textwrap.dedent(f"""
        import os, signal
        from linearrag.store import atomic_directory
        with atomic_directory({str(tmp_path / 'idx')!r}) as tmp:
            (tmp / "meta.json").write_text("half")
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script])
    assert proc.returncode == -9
    assert any(p.name.startswith(".idx.tmp-") for p in tmp_path.iterdir())   # the half-written build
    assert load_index(tmp_path / "idx").passage_texts[0] == "old alpha"
    _write(tmp_path / "idx", "new")
    assert load_index(tmp_path / "idx").passage_texts[0] == "new alpha"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_kill_between_the_two_renames_is_recovered(tmp_path):
    _write(tmp_path / "idx", "old")
    os.rename(tmp_path / "idx", tmp_path / ".idx.previous")   # the state a kill there leaves
    assert load_index(tmp_path / "idx").passage_texts[0] == "old alpha"


def test_refuses_to_replace_a_non_index_directory(tmp_path):
    target = tmp_path / "docs"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    with pytest.raises(IndexFormatError, match="not an index"):
        _write(target)
    assert (target / "precious.txt").read_text() == "keep me"


def test_passage_with_unicode_line_separators_loads(tmp_path):
    _write(tmp_path / "idx", marker="one\u2028two\u2029three\u0085four")
    idx = load_index(tmp_path / "idx")
    assert idx.passage_texts[0] == "one\u2028two\u2029three\u0085four alpha" and len(idx.passage_ids) == 2
