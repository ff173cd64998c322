import pytest

from linearrag.lang import detect_language
from linearrag.errors import CorpusError
from linearrag.normalize import is_dropped_label, is_usable_entity, normalize_entity


@pytest.mark.parametrize("raw, key", [
    ("Frederick Barbarossa", "frederick barbarossa"),
    ("  The   Beatles ", "beatles"),
    ("the Beatles'", "beatles"),
    ("Germany's", "germany"),
    ("ＵＮＩＣＥＦ", "unicef"),        # full-width Latin
    ("\"Lothair II\",", "lothair ii"),
    ("An Post", "post"),
    ("Straße", "strasse"),            # case-fold
])
def test_normalize_entity(raw, key):
    assert normalize_entity(raw) == key


def test_japanese_spelling_variants_merge():
    assert normalize_entity("コンピューター") == normalize_entity("コンピュータ")
    assert normalize_entity("ｺﾝﾋﾟｭｰﾀｰ") == normalize_entity("コンピュータ")   # half-width kana
    assert normalize_entity("ヴァイオリン") != ""


def test_numeric_labels_are_dropped():
    for label in ("CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "Money", "Age", "N_Person", "Date"):
        assert is_dropped_label(label)
    for label in ("PERSON", "GPE", "ORG", "Person", "City", "Book"):
        assert not is_dropped_label(label)


def test_unusable_keys():
    assert not is_usable_entity("")
    assert not is_usable_entity("1999")
    assert not is_usable_entity("1,000")
    assert not is_usable_entity("x")
    assert is_usable_entity("松")
    assert is_usable_entity("u2")


def test_detect_language():
    assert detect_language(["The quick brown fox."]) == "en"
    assert detect_language(["夏目漱石は松山で教師をしていた。"]) == "ja"
    assert detect_language(["Project Alpha は Rust で書かれている。ログイン基盤です。"]) == "ja"
    with pytest.raises(CorpusError, match="Chinese"):
        detect_language(["这是一个中文句子，没有日文假名。我们在北京工作。"])
    with pytest.raises(CorpusError, match="Korean"):
        detect_language(["이것은 한국어 문장입니다."])
    with pytest.raises(CorpusError, match="no letters"):
        detect_language(["12345 !!!"])
