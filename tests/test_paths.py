"""Entity paths: breadth-first search on hand-built graphs, and the `linearrag path` command."""

import json
import subprocess
import sys

import numpy as np
import scipy.sparse as sp

from linearrag.explain.paths import EntityGraph

from .conftest import ROOT
import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


def _graph(rows, n_e):
    data = [(s, e) for s, r in enumerate(rows) for e in r]
    M = sp.csr_matrix((np.ones(len(data), np.float32), ([d[0] for d in data], [d[1] for d in data])),
                      shape=(len(rows), n_e))
    return EntityGraph(M)


def test_shortest_paths_both_ways_and_the_hop_limit():
    # 0-1-2-3 chain, plus a second route 0-4-2; 5 is isolated.
    g = _graph([[0, 1], [1, 2], [2, 3], [0, 4], [4, 2]], 6)
    assert g.shortest_paths(0, 3, max_hops=4) == [[0, 1, 2, 3], [0, 4, 2, 3]]
    assert g.shortest_paths(0, 2, max_hops=2) == [[0, 1, 2], [0, 4, 2]]
    assert g.shortest_paths(0, 3, max_hops=2) == []          # needs 3 hops
    assert g.shortest_paths(0, 5, max_hops=4) == []
    assert g.shortest_paths(3, 3, max_hops=1) == [[3]]
    assert g.linking_sentence(4, 2) == 4


def _linearrag(*args):
    return subprocess.run([sys.executable, "-m", "linearrag.commands.main", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_path_command_on_team_notes(team_index):
    proc = _linearrag("path", str(team_index[0]), "佐藤", "Rust")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hops"] == 3
    path = out["paths"][0]
    assert [h["entity"] for h in path] == ["佐藤", "認証基盤チーム", "プロジェクトAlpha", "Rust"]
    assert path[1]["passage_id"] == "people.md#0" and "リーダー" in path[1]["sentence"]
    assert path[3]["passage_id"] == "projects.md#0"
    text = _linearrag("path", str(team_index[0]), "佐藤", "Rust", "--format", "text")
    assert "佐藤 → 認証基盤チーム → プロジェクトAlpha → Rust" in text.stdout
    bad = _linearrag("path", str(team_index[0]), "佐藤", "Rust", "--max-hops", "0")
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --max-hops must be ≥ 1, got 0"


def test_overview_on_team_notes_is_deterministic(team_index):
    from linearrag import load_index
    from linearrag.explain.overview import corpus_overview

    first = corpus_overview(load_index(team_index[0])).to_dict()
    assert first == corpus_overview(load_index(team_index[0])).to_dict()     # fixed seed
    assert first["communities"] and first["modularity"] > 0
    sizes = [c["size"] for c in first["communities"]]
    assert sizes == sorted(sizes, reverse=True)
    rust = [c for c in first["communities"] if "Rust" in c["top_entities"]]
    assert rust and rust[0]["passages"][0]["id"] == "projects.md#0"
    proc = _linearrag("overview", str(team_index[0]), "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == first
