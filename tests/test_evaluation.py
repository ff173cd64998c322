"""Metrics on hand-made rankings, question layouts, and an end-to-end run re-scored independently."""

import json
import subprocess
import sys

import pytest

from linearrag.errors import CorpusError
from linearrag.evaluation.metrics import aggregate, contains_answer, normalize_answer, score_question
from linearrag.questions import load_questions

from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


def test_recall_and_allgold():
    m = score_question(["a", "x", "y", "b", "z", "c"], ["a", "b", "c"], None, None)
    assert m["recall@1"] == pytest.approx(1 / 3)
    assert m["recall@2"] == pytest.approx(1 / 3)
    assert m["recall@5"] == pytest.approx(2 / 3)
    assert m["recall@10"] == pytest.approx(1.0)
    assert m["allgold@5"] == 0.0
    assert m["contain@5"] is None                      # no answers: not available, not 0


def test_fewer_than_k_results_and_duplicates_in_gold():
    m = score_question(["b", "a"], ["a", "b", "a"], ["x"], ["nothing here"])
    assert m["recall@10"] == 1.0 and m["allgold@5"] == 1.0 and m["contain@5"] == 0.0
    empty = score_question([], ["a"], None, [])
    assert empty["recall@5"] == 0.0 and empty["allgold@5"] == 0.0


def test_contain_normalisation():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("ＡＢＣ、Ｄ") == "abc d"
    assert contains_answer(["He was born in Detroit, Michigan."], ["detroit michigan"])
    assert contains_answer(["夏目漱石は松山で教師をしていた。"], ["松山"])
    assert not contains_answer(["Paris"], ["Lyon", "Nice"])
    assert contains_answer(["Germany"], ["BRD", "germany"])          # any alias


def test_aggregate_skips_unavailable():
    rows = [{"recall@5": 1.0, "contain@5": None}, {"recall@5": 0.5, "contain@5": None}]
    agg = aggregate(rows)
    assert agg["recall@5"] == 75.0 and agg["contain@5"] is None and agg["questions"] == 2


def test_question_layouts(tmp_path):
    bench = tmp_path / "q.jsonl"
    bench.write_text(json.dumps({"id": "1", "question": "Q?", "answers": ["A", "a2"], "gold_ids": ["p1"],
                                 "type": "compositional"}) + "\n", encoding="utf-8")
    q = load_questions(bench)[0]
    assert (q.id, q.answers, q.gold_ids, q.type) == ("1", ["A", "a2"], ["p1"], "compositional")
    linear = tmp_path / "questions.json"
    linear.write_text(json.dumps([{"id": "x", "question_type": "inference", "question": "Q?", "answer": "A",
                                   "evidence": []}]), encoding="utf-8")
    q = load_questions(linear)[0]
    assert (q.id, q.answers, q.gold_ids, q.type) == ("x", ["A"], None, "inference")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="question"):
        load_questions(bad)


def test_end_to_end_run_file_rescored_independently(sample_index, tmp_path):
    run = tmp_path / "run.jsonl"
    qfile = EXAMPLES / "2wiki-sample" / "questions.jsonl"
    proc = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--index", str(sample_index[0]), "--questions", str(qfile),
         "--output", str(run), "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report["modes"]) == {"linearrag", "dense", "bm25", "rrf"}
    # Re-score the raw rankings here, without the package's metric code.
    gold = {}
    for line in qfile.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        gold[rec["id"]] = set(rec["gold_ids"])
    per_mode = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert len(rec["retrieved"]) == 10
        g = gold[rec["id"]]
        per_mode.setdefault(rec["mode"], []).append(
            (len(g & set(rec["retrieved"][:5])) / len(g), float(g <= set(rec["retrieved"][:5]))))
    for mode, rows in per_mode.items():
        assert len(rows) == len(gold)
        overall = report["modes"][mode]["overall"]
        assert overall["recall@5"] == pytest.approx(100 * sum(r for r, _ in rows) / len(rows), abs=0.01)
        assert overall["allgold@5"] == pytest.approx(100 * sum(a for _, a in rows) / len(rows), abs=0.01)
        assert report["modes"][mode]["latency_ms"]["p50"] > 0
    assert report["modes"]["linearrag"]["by_type"]


def test_evaluate_cli_markdown_and_limit(sample_index):
    proc = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--index", str(sample_index[0]), "--questions",
         str(EXAMPLES / "2wiki-sample" / "questions.jsonl"), "--limit", "5", "--modes", "dense,bm25",
         "--report", "md", "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Questions: 5") and "| dense |" in proc.stdout and "| bm25 |" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--index", str(sample_index[0]), "--questions",
         str(EXAMPLES / "2wiki-sample" / "questions.jsonl"), "--modes", "magic", "--quiet"],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "unknown mode" in proc.stderr


def test_fact_metrics_agree_with_the_reference_scorer():
    """FactRecall as the docs benchmark's own scorer computes it (shared/benchmarks/score_docs.py)."""
    import importlib.util

    from linearrag.evaluation.metrics import fact_ranks, score_facts

    path = ROOT.parent / "shared" / "benchmarks" / "score_docs.py"
    spec = importlib.util.spec_from_file_location("score_docs", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    texts = ["Intro with  *path operations* are evaluated in order.", "The `Depends` function\ninjects it.",
             "nothing relevant", "Use Query(max_length=50) for it."]
    facts = [{"file": "a.md", "phrase": "*path operations* are evaluated in order"},
             {"file": "b.md", "phrase": "The Depends function injects"},
             {"file": "c.md", "phrase": "not there at all"},
             {"file": "d.md", "phrase": "Use `Query(max_length=50)` for it"}]
    assert fact_ranks([f["phrase"] for f in facts], texts) == ref.fact_found_ranks(facts, texts) == [1, 2, None, 4]
    row = score_facts([f["phrase"] for f in facts], texts)
    assert row["factrecall@1"] == 0.25 and row["factrecall@3"] == 0.5 and row["factrecall@5"] == 0.75
    assert row["allfacts@5"] == 0.0


def test_hop_counts_from_question_types_and_their_table():
    from linearrag.evaluation.report import markdown_report
    from linearrag.evaluation.runner import hops_of

    assert [hops_of(t) for t in ("2hop", "3hop1", "4hop3", "comparison", None, "hop2")] == ["2", "3", "4", None, None, None]
    row = {"questions": 1, "recall@5": 50.0}
    report = {"questions": 3, "index": "x", "modes": {"linearrag": {
        "overall": {"recall@5": 60.0}, "by_type": {"2hop": row, "3hop1": row},
        "by_hops": {"10": row, "2": row, "3": {"questions": 2, "recall@5": 75.0}},
        "latency_ms": {"p50": 1.0, "p95": 2.0}}}}
    text = markdown_report(report)
    assert "By hop count:" in text
    hop_rows = [line for line in text.splitlines() if line.startswith("| linearrag | ") and line.count("|") == 10]
    assert [r.split("|")[2].strip() for r in hop_rows] == ["2", "3", "10"]     # numeric order
    assert "| linearrag | 3 | 2 | n/a | n/a | 75.0 |" in text
