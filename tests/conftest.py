"""Shared fixtures: real indexes built once per test session with the real default models."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory):
    """The shipped 2Wiki sample (160 passages), built with the default English models."""
    from linearrag import build_index

    out = tmp_path_factory.mktemp("indexes") / "2wiki-sample"
    summary = build_index(EXAMPLES / "2wiki-sample" / "corpus.jsonl", out)
    return out, summary


@pytest.fixture(scope="session")
def sample_retriever(sample_index):
    from linearrag import Retriever

    return Retriever.from_path(sample_index[0])


@pytest.fixture(scope="session")
def ja_index(tmp_path_factory):
    from linearrag import build_index

    out = tmp_path_factory.mktemp("indexes") / "ja-sample"
    summary = build_index(EXAMPLES / "ja-sample" / "corpus.jsonl", out)
    return out, summary


@pytest.fixture(scope="session")
def team_index(tmp_path_factory):
    """A directory of Markdown notes (Japanese): a three-document chain."""
    from linearrag import build_index

    out = tmp_path_factory.mktemp("indexes") / "team-notes"
    summary = build_index(EXAMPLES / "team-notes", out)
    return out, summary
