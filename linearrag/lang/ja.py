"""Japanese: GiNZA (Sudachi tokens, its parser for sentence boundaries), compound nouns and
person names GiNZA's NER misses, BM25 tokens from the same pass, English sentences read by the
English model."""

from __future__ import annotations

from .base import Language
from .scripts import has_latin_letter, is_japanese_char, is_kanji_or_katakana

_PERSON_NAME_TAG = "固有名詞-人名"


class Japanese(Language):
    code = "ja"
    name = "Japanese"
    spacy_model = "ja_ginza"
    # "strings": GiNZA's string table, which a pipeline does not need (analysis._add_labels)
    exclude_pipes = ("compound_splitter", "bunsetu_recognizer", "strings")
    whole_word_titles = False
    tokens_from_analysis = True
    merge_fragments = True
    second_language = "en"

    def entity_spans(self, doc, spans: list, terms: bool) -> list:
        phrases = _japanese_noun_phrases(doc)
        return _drop_latin_fragments(_add_person_names(doc, spans), phrases) + phrases

    def analysis_tokens(self, doc) -> list[str]:
        return [t.norm_ for t in doc if _is_content_token(t)]

    def foreign_sentence(self, text: str) -> bool:
        """GiNZA reads every English word as a noun: the English model reads such sentences."""
        return _is_english_sentence(text)

    def extra_sentence_start(self, tok, nxt) -> bool:
        return _ends_latin_sentence(tok, nxt)

    def claims(self, counts: dict[str, int]) -> bool:
        """Japanese mixes kana with Han characters (Han without kana is Chinese)."""
        cjk = counts["kana"] + counts["han"]
        return cjk >= 0.2 * sum(counts.values()) and counts["kana"] >= 0.05 * cjk


_MIN_ENGLISH_WORDS = 4


def _is_english_sentence(text: str) -> bool:
    """A sentence in Latin script, no kana or kanji, of 4+ words (short Latin lines such as
    "Rust" or "GitLab" are names the Japanese rules already catch)."""
    if len(text.split()) < _MIN_ENGLISH_WORDS or not has_latin_letter(text):
        return False
    return not any(is_japanese_char(ch) for ch in text)


# Japanese function words are BM25 stop words, as English ones are: particles, auxiliaries,
# conjunctions, symbols, and suffixes such as さん.
_FUNCTION_POS = frozenset({"ADP", "AUX", "SCONJ", "CCONJ", "PART", "PUNCT", "SYM", "SPACE", "X"})


def _is_content_token(tok) -> bool:
    return not (tok.is_punct or tok.is_space or tok.pos_ in _FUNCTION_POS or tok.tag_.startswith("接尾辞"))


def _ends_latin_sentence(tok, nxt) -> bool:
    """In Japanese text, ". " before a capital letter or a Japanese character ends an English
    sentence (the parser does not cut there: "…in February. Claude Codeは…")."""
    if tok.text not in (".", "!", "?") or not tok.whitespace_ or tok.i == 0 or not _is_latin_word(tok.doc[tok.i - 1]):
        return False
    head = nxt.text[:1]
    return head.isascii() and head.isupper() or is_japanese_char(head)


def _is_latin_word(tok) -> bool:
    return has_latin_letter(tok.text)


def _is_name_like(tok) -> bool:
    text = tok.text
    return ("固有名詞" in tok.tag_ or all("\u30a0" <= ch <= "\u30ff" for ch in text)
            or (text.isascii() and has_latin_letter(text)))


def _japanese_noun_phrases(doc) -> list:
    """Compound nouns that contain a proper noun, a katakana word or a Latin word
    (認証基盤チーム, プロジェクトAlpha, Rust), and longer common-noun terms (梅雨前線):
    GiNZA's NER misses most of them."""
    from spacy.tokens import Span   # deferred: spaCy takes seconds to import

    out = []
    run: list = []
    for tok in list(doc) + [None]:
        is_noun = (tok is not None and tok.tag_.startswith("名詞") and "数詞" not in tok.tag_
                   and "副詞可能" not in tok.tag_ and not tok.is_space)
        if is_noun and (not run or tok.i == run[-1].i + 1):
            run.append(tok)
            continue
        if run and any(_is_name_like(t) for t in run):
            out.append(Span(doc, run[0].i, run[-1].i + 1, label="NounPhrase"))
        elif run and _is_term(run):
            out.append(Span(doc, run[0].i, run[-1].i + 1, label="Term"))
        run = [tok] if is_noun else []
    return out


_MIN_TERM_CHARS = 3


def _is_term(run: list) -> bool:
    """A common-noun compound written with 3+ kanji/katakana (梅雨前線, 降水量, 気象学):
    Japanese technical terms. Shorter words (地域, 期間) are too generic to be nodes, and a
    single word must be a plain noun (not サ変/形状詞可能: 広範囲, 再開発)."""
    if len(run) == 1 and not run[0].tag_.startswith("名詞-普通名詞-一般"):
        return False
    return sum(is_kanji_or_katakana(ch) for t in run for ch in t.text) >= _MIN_TERM_CHARS


def _drop_latin_fragments(spans: list, phrases: list) -> list:
    """GiNZA's NER cuts Latin names into pieces (Claude | Code): drop an entity of Latin
    words that lies strictly inside a noun phrase of Latin words (Claude Code)."""
    latin = [p for p in phrases if all(_is_latin_word(t) for t in p)]

    def is_fragment(s) -> bool:
        return all(_is_latin_word(t) for t in s) and any(
            p.start <= s.start and s.end <= p.end and len(s) < len(p) for p in latin)

    return [s for s in spans if not is_fragment(s)]


def _add_person_names(doc, spans: list) -> list:
    """GiNZA tags famous names (夏目漱石) as 人名 tokens but often not as an entity."""
    covered = set()
    for span in spans:
        covered.update(range(span.start, span.end))
    from spacy.tokens import Span   # deferred: spaCy takes seconds to import

    extra = []
    start = None
    for tok in list(doc) + [None]:
        is_name = tok is not None and _PERSON_NAME_TAG in tok.tag_ and tok.i not in covered
        if is_name and start is None:
            start = tok.i
        elif not is_name and start is not None:
            extra.append(Span(doc, start, tok.i if tok is not None else len(doc), label="Person"))
            start = None
    return spans + extra
