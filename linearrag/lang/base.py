"""What the engine asks of a language: one small interface, one module per language.

A :class:`Language` names its default models and says how its text is read: which spaCy pipes
load, which entity spans a document yields beyond NER, where its BM25 tokens come from, which
query n-grams may name an entity, whether titles are matched as whole words, and which texts
are written in it (script detection). Adding a language is one new module and a line in
:data:`linearrag.lang.LANGUAGES`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..encoders.e5_model import E5_SMALL   # the default embedder of both languages (docs/embedders.md)


class Language:
    """Defaults; a language module overrides what differs."""

    code = ""
    name = ""
    spacy_model = ""                    # the default NER pipeline
    embedding_model = E5_SMALL          # the default sentence embedder
    exclude_pipes: tuple[str, ...] = ()  # pipes that only cost time
    whole_word_titles = True            # a title is found in text only as a whole word (spaces)
    tokens_from_analysis = False        # BM25 tokens come from the NER pass itself
    merge_fragments = False             # keep a model's sentence boundary only after final punctuation
    names_by_case = False               # a name holds a capitalised word (else every n-gram may name)
    second_language: str | None = None  # the language whose model reads ``foreign_sentence``s

    def exclude(self, terms: bool) -> list[str]:
        """The pipes not to load (``terms``: noun-phrase terms are indexed)."""
        return list(self.exclude_pipes)

    def prepare(self, nlp) -> None:
        """Adjust a loaded pipeline (e.g. a sentence splitter where the parser is excluded)."""

    def indexes_terms(self, nlp) -> bool:
        """Whether this language reads noun-phrase terms with ``nlp``."""
        return False

    def query_skips(self, nlp, tags: bool) -> list[str]:
        """Pipes a query does without (``tags``: part-of-speech tags are needed)."""
        return []

    def entity_spans(self, doc, spans: list, terms: bool) -> list:
        """The entity spans of ``doc``: its NER ``spans`` (cut at line breaks) plus what the
        language adds (``terms``: noun-phrase terms wanted)."""
        return spans

    def analysis_tokens(self, doc) -> list[str]:
        """BM25 tokens read off the NER pass (languages with ``tokens_from_analysis``)."""
        return []

    def bm25_tokens(self, texts: Sequence[str], analyzed: Sequence) -> list[list[str]]:
        """BM25 tokens of ``texts``, whose analyses (``AnalyzedText``) are ``analyzed``."""
        return [list(a.tokens) for a in analyzed]

    def foreign_sentence(self, text: str) -> bool:
        """Whether a sentence is written in another language that a second model reads."""
        return False

    def extra_sentence_start(self, tok, nxt) -> bool:
        """A sentence boundary between ``tok`` and ``nxt`` that the model missed."""
        return False

    def keep_ngram(self, toks: list, i: int, last: int, named: bool, has_noun: bool, stop: list[bool]) -> bool:
        """Whether the query n-gram ``toks[i..last]`` may name an index entity."""
        return has_noun

    def key_variants(self, key: str) -> list[str]:
        """The keys an n-gram is looked up under (a plural's singular too, in English)."""
        return [key]

    def claims(self, counts: dict[str, int]) -> bool:
        """Whether texts with these letter counts per script are written in this language."""
        return False

    def foreign_query(self, counts: dict[str, int]) -> str | None:
        """The language a query seems written in when an index of this language cannot answer it."""
        letters = sum(counts.values())
        if counts["hangul"] >= 0.5 * letters:
            return "Korean"
        if counts["other"] >= 0.5 * letters:
            return "a script other than Latin, kana or Han"
        return None
