"""The user's alias file: merged at index and query time, recorded, checked, and strict about its format."""

import json
import subprocess
import sys

import pytest

from linearrag.aliases import load_aliases
from linearrag.errors import CorpusError, IndexFormatError

from .conftest import ROOT

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

CORPUS = [
    {"id": "a", "title": "Ranking notes", "text": "Personalized PageRank spreads mass from the seeds over the graph."},
    {"id": "b", "title": "Walk details", "text": "PPR converges in a few dozen power iterations on this graph."},
    {"id": "c", "title": "Kyoto", "text": "Kyoto was the capital of Japan for a thousand years."},
]


def test_alias_file_format_errors_name_the_line(tmp_path):
    f = tmp_path / "aliases.tsv"
    f.write_text("# comment\nPPR\tPersonalized PageRank\n\nbroken line without tab\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"aliases.tsv:4: expected 'alias<TAB>canonical'"):
        load_aliases(f)
    f.write_text("a\tb\nb\ta\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="cycle"):
        load_aliases(f)
    f.write_text("漱石\t夏目漱石\nPPR\tPersonalized PageRank\n", encoding="utf-8")
    aliases = load_aliases(f)
    assert aliases.keys == {"漱石": "夏目漱石", "ppr": "personalized pagerank"}


def test_aliases_merge_entities_at_index_and_query_time(tmp_path):
    from linearrag import BuildConfig, Retriever, build_index, load_index

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    alias_file = tmp_path / "aliases.tsv"
    alias_file.write_text("PPR\tPersonalized PageRank\n", encoding="utf-8")
    plain = build_index(corpus, tmp_path / "plain")
    merged = build_index(corpus, tmp_path / "merged", BuildConfig(aliases=str(alias_file)))
    assert plain["aliases_merged"] == 0 and merged["aliases_merged"] == 1
    keys = load_index(tmp_path / "merged").graph.entity_keys
    assert "ppr" not in keys and "personalized pagerank" in keys
    assert "ppr" in load_index(tmp_path / "plain").graph.entity_keys
    result = Retriever.from_path(tmp_path / "merged").query("How does PPR spread mass?")
    assert [q.entity for q in result.query_entities if q.entity] == ["Personalized PageRank"]
    assert {p.id for p in result.passages[:2]} == {"a", "b"}

    alias_file.write_text("PPR\tPageRank\n", encoding="utf-8")        # changed after the build
    with pytest.raises(IndexFormatError, match="alias file .* changed since the index was built"):
        Retriever.from_path(tmp_path / "merged")
    proc = subprocess.run([sys.executable, "scripts/query_graph.py", "--index", str(tmp_path / "merged"),
                           "--query", "What is PPR?", "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")


def test_malformed_alias_file_fails_before_any_model_loads(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(CORPUS[0]) + "\n", encoding="utf-8")
    (tmp_path / "bad.tsv").write_text("only-one-column\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "scripts/build_graph.py", "--input", str(corpus), "--output",
                           str(tmp_path / "i"), "--aliases", str(tmp_path / "bad.tsv"), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f"error: {tmp_path / 'bad.tsv'}:1: expected 'alias<TAB>canonical', got 'only-one-column'; fix that line")
