"""Integration: retrieval with the real models on the shipped corpora."""

import json
import subprocess
import sys

import numpy as np
import pytest

from linearrag import ParameterError, RetrievalParams, Retriever, load_index
from linearrag.errors import IndexFormatError, ModelMismatchError
from linearrag.retrieval.params import PRESETS

from .conftest import ROOT

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

BEATRICE = "What nationality is Beatrice I, Countess of Burgundy's husband?"


def test_two_hop_bridge_beatrice_barbarossa_germany(sample_retriever):
    result = sample_retriever.query(BEATRICE)
    ids = [p.id for p in result.passages]
    assert "2w000278" in ids            # Frederick I (Barbarossa): "King of Germany"
    assert "2w000283" in ids            # Beatrice I
    chain = {a.entity: a for a in result.activated_entities}
    assert chain["Beatrice I, Countess of Burgundy"].level == 1
    barbarossa = chain["Frederick Barbarossa"]
    assert barbarossa.level == 2 and barbarossa.passage_id == "2w000283"
    assert "marriage to Frederick Barbarossa" in barbarossa.sentence
    frederick = next(p for p in result.passages if p.id == "2w000278")
    assert "Frederick Barbarossa" in frederick.entities and "Germany" in frederick.text
    assert result.fallback is None


def test_japanese_botchan_setting(ja_index):
    r = Retriever.from_path(ja_index[0])
    result = r.query("『坊っちゃん』の舞台はどこ?")
    ids = [p.id for p in result.passages]
    # the novel's page names 松山 (its setting); linked selection puts that page second
    assert ids[:2] == ["botchan", "matsuyama"] and result.passages[1].linked_from == "botchan"
    assert "soseki" in ids
    chain = {a.entity: a for a in result.activated_entities}
    assert chain["坊っちゃん"].level == 1 and chain["松山"].level == 2


def test_three_document_chain_sato_to_rust(team_index):
    """佐藤 → 認証基盤チーム (people.md) → プロジェクトAlpha (teams.md) → Rust (projects.md).

    teams.md shares no word with the question: only the graph brings it in."""
    r = Retriever.from_path(team_index[0])
    # With e5 (calibrated) the bridging sentence stands 0.22 above the background for this
    # question, so the hop needs δ below the default, as SKILL.md advises for long chains. At the
    # default the three documents are still retrieved, without the chain.
    default = r.query("佐藤さんはRustの仕事に関わっていますか?", RetrievalParams(top_k=3))
    assert "projects.md#0" in [p.id for p in default.passages]
    result = r.query("佐藤さんはRustの仕事に関わっていますか?", RetrievalParams(top_k=3, delta=0.2))
    ids = [p.id for p in result.passages]
    assert set(ids) == {"people.md#0", "teams.md#0", "projects.md#0"}   # out of six notes
    chain = {a.entity: a for a in result.activated_entities}
    assert chain["佐藤"].level == 1 and chain["Rust"].level == 1
    assert chain["認証基盤チーム"].level == 2 and chain["認証基盤チーム"].passage_id == "people.md#0"
    teams = next(p for p in result.passages if p.id == "teams.md#0")
    assert "認証基盤チーム" in teams.entities


def test_same_query_same_output(sample_retriever):
    a = sample_retriever.query(BEATRICE).to_dict()
    b = sample_retriever.query(BEATRICE).to_dict()
    a.pop("timings_ms"), b.pop("timings_ms")
    assert a == b


def test_a_query_without_entities_walks_from_its_best_passages(sample_retriever):
    q = "which of these is the oldest?"
    result = sample_retriever.query(q, RetrievalParams(top_k=10))
    assert result.fallback is None and not [e for e in result.query_entities if e.entity]
    # the evidence passages are the three best by the query-only (hybrid) prior
    aq = sample_retriever.analyze_queries([q])[0]
    space = sample_retriever.exact
    background = float(np.median(space.sample.passage_vectors @ aq.vector))
    dense = space.passage_matrix @ aq.vector
    dense = (dense - min(background, 0.99)) / (1 - min(background, 0.99))
    bm25 = sample_retriever.postings.scores(aq.tokens)
    prior = 0.5 * (np.clip(dense, 0, None) + bm25 / bm25.max())
    best = np.lexsort((np.arange(len(prior)), -prior))[:3]
    ids = sample_retriever.index.passage_ids
    assert result.evidence_passages == [ids[i] for i in best]
    # their entities are the seeds (level 1), scored idf ratio / rank of the best passage holding them
    C = sample_retriever.index.graph.C.tocsr()
    expected = {}
    for rank, row in enumerate(best, 1):
        for e in C.indices[C.indptr[row]:C.indptr[row + 1]]:
            expected[int(e)] = max(expected.get(int(e), 0.0), float(space.idf[e]) / rank)
    names = sample_retriever.index.graph.entity_names
    seeds = {a.entity: a.score for a in result.activated_entities if a.level == 1}
    assert seeds and set(seeds) <= {names[e] for e in expected}
    for name, score in seeds.items():
        assert abs(score - max(v for e, v in expected.items() if names[e] == name)) < 1e-4
    assert "No query entity: the walk starts from the entities of" in result.format_text()
    # the scalable path picks the same passages and ranks the same
    ann = sample_retriever.query(q, RetrievalParams(top_k=10, search="ann"))
    assert ann.evidence_passages == result.evidence_passages and ann.fallback is None
    # evidence_seeds=0: the old fallback
    off = sample_retriever.query(q, RetrievalParams(top_k=10, evidence_seeds=0))
    assert off.fallback and off.evidence_passages == []


def test_no_fusion_with_a_dense_prior_walks_a_seedless_query(sample_retriever):
    # evidence seeds fuse like term seeds (term_fusion=rrf), which needs BM25 even when
    # fusion=none and prior=dense (it crashed once); the paper preset does neither
    result = sample_retriever.query("how old is it", RetrievalParams(prior="dense", fusion="none"))
    assert result.fallback is None and result.evidence_passages and len(result.passages) == 5
    paper = sample_retriever.query("how old is it", RetrievalParams().with_overrides(PRESETS["paper-2wiki"]))
    assert paper.fallback == "no query entity found; ranked by dense passage similarity"
    assert all(p.linked_from is None for p in paper.passages)


def test_dense_fallback_is_exactly_the_dense_ranking(sample_retriever):
    q = "which of these is the oldest?"
    result = sample_retriever.query(q, RetrievalParams(top_k=10, prior="dense", evidence_seeds=0))
    assert result.fallback and "dense" in result.fallback
    dense = sample_retriever.query(q, RetrievalParams(top_k=10, mode="dense"))
    assert [p.id for p in result.passages] == [p.id for p in dense.passages]
    vec = sample_retriever.encoder.encode([q], role="query")[0]
    expected = np.argsort(-(np.asarray(sample_retriever.index.passage_emb) @ vec), kind="stable")[:10]
    assert [p.id for p in dense.passages] == [sample_retriever.index.passage_ids[i] for i in expected]


def test_hybrid_fallback_is_the_rrf_ranking(sample_retriever):
    q = "which of these is the oldest?"
    result = sample_retriever.query(q, RetrievalParams(top_k=10, evidence_seeds=0))
    assert result.fallback and "BM25 + dense" in result.fallback
    rrf = sample_retriever.query(q, RetrievalParams(top_k=10, mode="rrf"))
    assert [p.id for p in result.passages] == [p.id for p in rrf.passages]


def test_baseline_modes(sample_retriever):
    for mode in ("dense", "bm25", "rrf"):
        result = sample_retriever.query(BEATRICE, RetrievalParams(mode=mode))
        assert len(result.passages) == 5 and result.passages[0].rank == 1
    bm25 = sample_retriever.query("Beatrice Countess Burgundy", RetrievalParams(mode="bm25"))
    assert bm25.passages[0].id == "2w000283"


def test_batch_equals_single(sample_retriever):
    qs = [BEATRICE, "Who directed the film West of Shanghai?"]
    batch = sample_retriever.query_batch(qs)
    for q, res in zip(qs, batch):
        single = sample_retriever.query(q)
        assert [p.id for p in res.passages] == [p.id for p in single.passages]


def test_bad_parameters(sample_retriever):
    with pytest.raises(ParameterError, match="unknown parameter 'gamma'"):
        RetrievalParams().with_overrides({"gamma": "1"})
    with pytest.raises(ParameterError, match="delta"):
        RetrievalParams(delta=2.0)
    with pytest.raises(ParameterError, match="empty query"):
        sample_retriever.query("   ")


def test_model_mismatch_is_reported(sample_index, tmp_path):
    import shutil

    copy = tmp_path / "idx"
    shutil.copytree(sample_index[0], copy)
    manifest_file = copy / (copy / "CURRENT").read_text().strip()
    manifest = json.loads(manifest_file.read_text())
    manifest["meta"]["ner"]["version"] = "0.0.1"
    manifest_file.write_text(json.dumps(manifest))
    with pytest.raises(ModelMismatchError, match="rebuild the index"):
        Retriever.from_path(copy)


def _query_cli(*args):
    return subprocess.run([sys.executable, "scripts/query_graph.py", *args], capture_output=True, text=True, cwd=ROOT)


def test_query_cli_json(sample_index):
    proc = _query_cli("--index", str(sample_index[0]), "--query", BEATRICE, "--top-k", "3", "--quiet")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for field in ("query", "query_entities", "activated_entities", "passages", "fallback", "params", "timings_ms"):
        assert field in out
    assert len(out["passages"]) == 3 and out["params"]["top_k"] == 3
    assert {"rank", "id", "title", "score", "text", "entities"} <= set(out["passages"][0])


def test_query_cli_batch_and_text(sample_index, tmp_path):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": "a", "question": "Who is Frederick Barbarossa?"}\n'
                     '{"id": "b", "question": "Where is Burgundy?"}\n', encoding="utf-8")
    proc = _query_cli("--index", str(sample_index[0]), "--queries", str(qfile), "--quiet")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    proc = _query_cli("--index", str(sample_index[0]), "--query", BEATRICE, "--format", "text", "--quiet")
    assert proc.returncode == 0 and "Entity chain:" in proc.stdout and "2w000278" in proc.stdout
    # the question as the last word of the command line, as a user types it, reads the same
    same = _query_cli("--index", str(sample_index[0]), "--format", "text", "--quiet", BEATRICE)
    assert same.returncode == 0
    assert same.stdout.split("Timings")[0] == proc.stdout.split("Timings")[0]


@pytest.mark.parametrize("args, message", [
    (["--index", "/nonexistent/index", "--query", "x"], "no index here"),
    (["--query", "  "], "the --query is empty"),
    (["  "], "the question is empty"),
    ([], "pass a question (or --query QUESTION)"),
    (["--query", "x", "--param", "gamma=1"], "unknown parameter 'gamma'"),
    (["--query", "x", "--param", "delta=abc"], "must be float"),
    (["--query", "x", "--top-k", "0"], "error: top_k must be ≥ 1, got 0"),
])
def test_query_cli_errors(sample_index, args, message):
    if "--index" not in args:
        args = ["--index", str(sample_index[0]), *args]
    proc = _query_cli(*args, "--quiet")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("error: ")
    if "top_k" in message:
        assert len(lines[0]) < 60   # the bad value, not the whole parameter object


def test_query_in_a_language_the_index_does_not_hold_warns(sample_index, sample_retriever):
    result = sample_retriever.query("弗雷德里克一世的妻子是谁？")
    assert len(result.warnings) == 1 and "Chinese" in result.warnings[0]
    assert sample_retriever.query(BEATRICE).warnings == []
    proc = _query_cli("--index", str(sample_index[0]), "--query", "베아트리체의 남편은 누구입니까?", "--quiet")
    assert proc.returncode == 0
    assert proc.stderr.startswith("warning: the query looks Korean")
    assert json.loads(proc.stdout)["warnings"] == [proc.stderr.strip().removeprefix("warning: ")]


def test_index_directory_follows_the_umask(sample_index):
    import os
    import stat

    mask = os.umask(0)
    os.umask(mask)
    mode = stat.S_IMODE(os.stat(sample_index[0]).st_mode)
    assert mode == 0o777 & ~mask


def test_corrupt_index_is_reported(sample_index, tmp_path):
    import shutil

    copy = tmp_path / "idx"
    shutil.copytree(sample_index[0], copy)
    f = copy / "g-000001" / "C_indptr.npy"
    f.write_bytes(b"x" * f.stat().st_size)      # same size: found when read, not by the size check
    with pytest.raises(IndexFormatError, match="corrupt"):
        load_index(copy)


@pytest.mark.parametrize("damage", ["graph_truncated", "bm25_missing", "bm25_corrupt"])
def test_damaged_index_files_are_one_line_errors(sample_index, tmp_path, damage):
    import shutil

    copy = tmp_path / "idx"
    shutil.copytree(sample_index[0], copy)
    data = copy / "g-000001"
    if damage == "graph_truncated":
        f = data / "C_indices.npy"
        f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    elif damage == "bm25_missing":
        shutil.rmtree(data / "bm25")
    else:
        for f in (data / "bm25").iterdir():
            f.write_bytes(b"x" * f.stat().st_size)   # same sizes: bm25s itself fails to read them
    proc = _query_cli("--index", str(copy), "--query", BEATRICE, "--quiet")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "rebuild" in lines[0], proc.stderr


def test_bad_output_is_refused_before_any_model_loads(tmp_path):
    corpus = ROOT / "examples" / "2wiki-sample" / "corpus.jsonl"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.md").write_text("# Mine", encoding="utf-8")
    for output, message in ((a_file, "is a file"), (tmp_path / "notes", "exists and is not an index")):
        proc = subprocess.run([sys.executable, "scripts/build_graph.py", "--input", str(corpus), "--output", str(output),
                               "--quiet"], capture_output=True, text=True, cwd=ROOT)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and message in lines[0], proc.stderr
    assert (tmp_path / "notes" / "keep.md").read_text(encoding="utf-8") == "# Mine"
