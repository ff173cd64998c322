"""Shared fixtures: real indexes built once per test session with the real default models."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _build(tmp_path_factory, corpus, name):
    """Build ``corpus`` once per session with the default models; returns (path, summary)."""
    from linearrag import build_index

    out = tmp_path_factory.mktemp("indexes") / name
    return out, build_index(corpus, out)


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory):
    """The shipped 2Wiki sample (160 passages), built with the default English models."""
    return _build(tmp_path_factory, EXAMPLES / "2wiki-sample" / "corpus.jsonl", "2wiki-sample")


@pytest.fixture(scope="session")
def sample_retriever(sample_index):
    from linearrag import Retriever

    return Retriever.from_path(sample_index[0])


@pytest.fixture(scope="session")
def ja_index(tmp_path_factory):
    return _build(tmp_path_factory, EXAMPLES / "ja-sample" / "corpus.jsonl", "ja-sample")


@pytest.fixture(scope="session")
def team_index(tmp_path_factory):
    """A directory of Markdown notes (Japanese): a three-document chain among unrelated notes."""
    return _build(tmp_path_factory, EXAMPLES / "team-notes" / "notes", "team-notes")


def terms_graph(passages):
    """The Tri-Graph of ``passages`` from their terms and links alone (no NER: each line a
    sentence without mentions), for tests of what the readers give the graph."""
    from linearrag.analysis import AnalyzedText
    from linearrag.graph import GraphBuilder

    builder = GraphBuilder()
    for p in passages:
        sentences = p.text.split("\n")
        builder.add(AnalyzedText(sentences, [[] for _ in sentences]), "", p.terms, links=p.links)
    return builder.build()
