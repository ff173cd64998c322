"""Sharded builds with the real models: 2 shards on 2 worker processes, a resumed build after a
kill, and Ray actors on a local Ray instance, each equal to the serial build (same structure,
vectors within float16 rounding, same rankings in every mode; fp32)."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from linearrag import BuildConfig, Retriever, build_index, load_index
from linearrag.evaluation.compare import compare

from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

QUESTIONS = [json.loads(line)["question"]
             for line in (EXAMPLES / "2wiki-sample" / "questions.jsonl").read_text().splitlines()][:25]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rows = (EXAMPLES / "2wiki-sample" / "corpus.jsonl").read_text().splitlines()[:100]
    path = tmp_path_factory.mktemp("shards") / "corpus.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def serial(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial") / "idx"
    summary = build_index(corpus, out, BuildConfig(precision="fp32", workers=1))
    assert summary["shards"] == 1 and summary["executor"] == "this process"
    return out


def assert_same_index(a_path, b_path):
    a, b = load_index(a_path), load_index(b_path)
    assert a.passage_ids == b.passage_ids and a.graph.entity_keys == b.graph.entity_keys
    assert a.graph.sentences == b.graph.sentences
    assert (a.graph.C != b.graph.C).nnz == 0 and (a.graph.M != b.graph.M).nnz == 0
    for name in ("passage_emb", "sentence_emb", "entity_emb"):
        # vectors are stored as float16: fp32 values a rounding apart may land one float16 step
        # (2^-10 of the value) apart, so the comparison is at float16's resolution
        x = np.asarray(getattr(a, name), dtype=np.float32)
        y = np.asarray(getattr(b, name), dtype=np.float32)
        assert np.allclose(x, y, rtol=2 ** -9, atol=1e-6), (name, float(np.abs(x - y).max()))
    agreement = compare(Retriever.from_path(a_path), Retriever.from_path(b_path), QUESTIONS)
    assert agreement.identical(1e-4), agreement.to_dict()


def test_two_shards_on_two_workers_equal_serial(corpus, serial, tmp_path):
    summary = build_index(corpus, tmp_path / "idx", BuildConfig(precision="fp32", workers=2, shard_passages=50))
    assert summary["shards"] == 2 and summary["workers"] == 2 and summary["executor"] == "2 worker processes"
    assert set(summary["worker_seconds"]) >= {"ner", "embed_passages"}
    assert not list((tmp_path / "idx").glob("staging-*"))   # finished shards became segments
    assert_same_index(serial, tmp_path / "idx")


def test_resume_after_kill_equals_uninterrupted(corpus, serial, tmp_path):
    out = tmp_path / "idx"
    cmd = [sys.executable, str(ROOT / "scripts" / "build_graph.py"), "--input", str(corpus), "--output", str(out),
           "--precision", "fp32", "--workers", "1", "--shard-passages", "25", "--quiet"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, env=env)
    deadline = time.time() + 600
    while time.time() < deadline and len(list(out.glob("staging-*/shard-*/DONE"))) < 2:
        assert proc.poll() is None, "the build finished before it could be killed"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list(out.glob("staging-*/shard-*/DONE")))
    assert 2 <= done < 4 and not (out / "CURRENT").exists()
    proc = subprocess.run([*cmd[:-1], "--json"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["shards"] == 4 and summary["shards_resumed"] == done
    assert not list(out.glob("staging-*"))
    assert_same_index(serial, out)


def test_ray_local_equals_serial(corpus, serial, tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed (uv sync --extra ray)")
    summary = build_index(corpus, tmp_path / "idx",
                          BuildConfig(precision="fp32", workers=2, shard_passages=50, ray="local"))
    assert summary["executor"] == "2 Ray actors" and summary["shards"] == 2
    assert_same_index(serial, tmp_path / "idx")


def test_a_large_add_runs_as_shards_and_equals_serial(corpus, serial, tmp_path):
    """An add of two shards or more takes the build's path (workers, staging, resume)."""
    from linearrag.index.writer import IndexWriter

    rows = corpus.read_text(encoding="utf-8").splitlines()
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    first.write_text("\n".join(rows[:40]) + "\n", encoding="utf-8")
    rest.write_text("\n".join(rows[40:]) + "\n", encoding="utf-8")
    config = BuildConfig(precision="fp32", workers=2, shard_passages=25)
    IndexWriter(tmp_path / "idx", BuildConfig(precision="fp32", workers=1)).build(first)
    summary = IndexWriter(tmp_path / "idx", config).add(rest)
    assert summary["added"] == 60 and summary["shards"] == 3 and summary["executor"] == "2 worker processes"
    assert_same_index(serial, tmp_path / "idx")
