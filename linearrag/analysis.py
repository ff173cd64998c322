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

from . import lang as languages
from .errors import ModelMismatchError
from .lang.code import technical_terms
from .lang.scripts import is_hiragana_only
from .normalize import is_dropped_label, is_usable_entity, normalize_entity, singular_key
from .textsplit import spans

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
    """Wraps the spaCy pipeline of one language (``lang``: a code of :data:`linearrag.lang.LANGUAGES`)."""

    def __init__(self, lang: str, model: str | None = None, terms: bool = True):
        import spacy   # deferred: spaCy takes seconds to import

        self.lang = lang
        self.language = languages.get(lang)
        self.model_name = model or self.language.spacy_model
        exclude = self.language.exclude(terms)
        try:
            self.nlp = spacy.load(self.model_name, exclude=exclude)
        except OSError as exc:
            raise ModelMismatchError(
                f"spaCy model {self.model_name!r} is not installed ({str(exc).splitlines()[0][:120]}); "
                "install it or pass another with --spacy-model"
            ) from None
        self.language.prepare(self.nlp)
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
        self._second: Analyzer | None = None
        self.with_terms = terms and self.language.indexes_terms(self.nlp)

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
        """Pipes a query does without (``tags``: part-of-speech tags are needed); see the language's."""
        return self.language.query_skips(self.nlp, tags)

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
            result.ngrams = candidate_ngrams(doc, self.language)
            yield result

    @functools.cached_property
    def english_model(self) -> tuple[str, str] | None:
        """The second model that reads sentences written in another language (Japanese: whole
        English sentences), and its version; None when the language has none."""
        if self.language.second_language is None:
            return None
        import spacy.util   # deferred: spaCy takes seconds to import

        name = languages.get(self.language.second_language).spacy_model
        return name, str(spacy.util.get_package_version(name) or "unknown")

    def _second_nlp(self):
        """The second pipeline, loaded on first use (a Japanese text with an English sentence)."""
        if self._second is None:
            self._second = Analyzer(self.language.second_language, terms=False)   # only its entities are read
        return self._second.nlp

    def _convert(self, doc, terms: bool = True) -> AnalyzedText:
        result = AnalyzedText()
        spans = [part for span in doc.ents for part in _split_at_newlines(span)]
        spans = self.language.entity_spans(doc, spans, self.with_terms and terms)
        result.tokens = self.language.analysis_tokens(doc)
        spans.sort(key=lambda s: s.start)
        foreign: list[int] = []   # sentences the second model reads
        i = 0
        for start, end in _sentence_bounds(doc, self.language):
            raw = doc[start:end]
            text = raw.text.strip()
            first = raw.start_char + len(raw.text) - len(raw.text.lstrip())
            sentence_spans = []
            while i < len(spans) and spans[i].start < end:
                sentence_spans.append(spans[i])
                i += 1
            if self.language.foreign_sentence(text):
                sentence_spans = []
                foreign.append(len(result.sentences))
            mentions = _mentions(sentence_spans)
            if text:
                result.sentences.append(text)
                result.mentions.append(mentions)
                result.spans.append((first, first + len(text)))
            elif mentions and result.mentions:
                result.mentions[-1].extend(mentions)
        if foreign:
            for k, edoc in zip(foreign, self._second_nlp().pipe([result.sentences[k] for k in foreign])):
                result.mentions[k] = _mentions(list(edoc.ents), offset=result.spans[k][0])
        return result


def _numpy_products(nlp) -> None:
    """Let the pipeline's matrix products go through numpy (its BLAS) instead of thinc's
    default, the blis package: on this project's 2-core AVX2 machines blis took ~3× longer for
    a query's small products (25 × 768 by 768 × 768: 2.0 ms against 0.6 ms), which made a
    GiNZA query pass 41 → 26 ms and an English one 7.1 → 5.6 ms (interleaved, same process).
    Same models, same entities and tags: checked on 2,860 benchmark questions and 1,000 2wiki
    passages (tests/test_build_real.py keeps a check)."""
    from thinc.api import NumpyOps   # deferred: spaCy's stack takes seconds to import

    ops = NumpyOps(use_blis=False)
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is not None and hasattr(model, "walk"):
            for node in model.walk():
                if isinstance(node.ops, NumpyOps):   # CPU ops only (never a GPU's)
                    node.ops = ops


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
        if is_usable_entity(key) and not is_hiragana_only(key) and key not in keys:
            keys.add(key)
            mentions.append(Mention(key, span.text.strip(), span.label_,
                                    offset + span.start_char, offset + span.end_char))
    return mentions


def _sentence_bounds(doc, language) -> list[tuple[int, int]]:
    """Sentence token ranges: the model's boundaries, plus a boundary at every line break and
    where the language finds one the model missed.

    With ``language.merge_fragments`` (Japanese) a model boundary is kept only after
    sentence-final punctuation: GiNZA's parser splits プロジェクト | Alphaは… in mid-sentence.
    """
    merge_fragments = language.merge_fragments
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
        elif language.extra_sentence_start(tok, doc[tok.i + 1]):
            starts.add(tok.i + 1)
    cuts = [0, *sorted(starts), len(doc)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


HEADING_SEPARATOR_CHAR = "›"   # between the headings of a title line ("Page › Section")


def _split_at_newlines(span) -> list:
    """An entity never crosses a line break (a title line and the text below it) nor the
    separator of a heading path ("Advanced Dependencies › Dependencies" is two headings)."""
    if "\n" not in span.text and HEADING_SEPARATOR_CHAR not in span.text:
        return [span]
    from spacy.tokens import Span   # deferred: spaCy takes seconds to import

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


def candidate_ngrams(doc, language) -> list[NameCandidate]:
    """Token n-grams of a query that may name an index entity (matched by exact key later):
    they start and end on a word, and the language keeps them (``Language.keep_ngram``:
    English asks for a capitalised word or a lowercase term, Japanese for a noun)."""
    out = []
    n = len(doc)
    by_case = language.names_by_case
    # token attributes read once (a Span per n-gram costs more than the test itself)
    toks = list(doc)
    # an n-gram starts and ends on a word: not on punctuation, space or a lone symbol ("=" in
    # "init_every_request = False" would stay in the surface shown to people)
    edge_ok = [not (t.is_punct or t.is_space) and any(ch.isalnum() for ch in t.text) for t in toks]
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
            if not edge_ok[last] or not language.keep_ngram(toks, i, last, named, has_noun, stop):
                continue
            surface = text[starts[i]:ends[last]]
            key = normalize_entity(surface)
            if is_usable_entity(key) and not is_hiragana_only(key):
                for variant in language.key_variants(key):
                    out.append(NameCandidate(variant, surface, starts[i], ends[last], named or not by_case))
    seen = {(c.key, c.start, c.end) for c in out}
    if by_case:   # a name typed in lowercase ("gunicorn"): one word, letters only, no stop word
        for k, tok in enumerate(toks):
            key = normalize_entity(tok.text)
            bare = tok.text.isalpha() and tok.text.islower() and not stop[k] and len(key) > 2
            if bare and (key, starts[k], ends[k]) not in seen:
                seen.add((key, starts[k], ends[k]))
                out.append(NameCandidate(key, tok.text, starts[k], ends[k], False))
    for start, end, surface in technical_terms(text):   # what a prose tokenizer cuts: "@app.errorhandler(404)"
        key = normalize_entity(surface)
        if is_usable_entity(key) and (key, start, end) not in seen:
            seen.add((key, start, end))
            out.append(NameCandidate(key, surface, start, end, not by_case))
    return out
