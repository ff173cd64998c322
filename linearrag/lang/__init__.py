"""Languages: one module each behind :class:`~.base.Language`, and the registry.

Adding a language: a module with a :class:`Language` subclass (its models, its spans, its
tokens, which texts it claims) and one line in :data:`LANGUAGES`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import CorpusError
from .base import Language
from .en import English, looks_like_code
from .ja import Japanese
from .scripts import is_hiragana_only, script_counts

LANGUAGES: dict[str, Language] = {language.code: language for language in (English(), Japanese())}
CHOICES = ("auto", *LANGUAGES)

__all__ = ["CHOICES", "LANGUAGES", "Language", "detect_language", "get", "is_hiragana_only", "looks_like_code",
           "query_language_warning", "resolve"]


def get(code: str) -> Language:
    """The language ``code`` names (an error names the choices)."""
    try:
        return LANGUAGES[code]
    except KeyError:
        raise CorpusError(f"unsupported --lang {code!r}; use {', '.join(CHOICES[:-1])} or {CHOICES[-1]}") from None


def resolve(code: str, texts: Iterable[str]) -> Language:
    """``code``'s language, or the one ``texts`` are written in for "auto"."""
    return get(detect_language(texts) if code == "auto" else code)


def detect_language(texts: Iterable[str]) -> str:
    """The code of the language ``texts`` are written in, from the scripts they use.

    Han without kana is Chinese, which has no pipeline here and is an error, as are Korean
    and other scripts.
    """
    c = script_counts(texts)
    letters = sum(c.values())
    if letters == 0:
        raise CorpusError("cannot detect the language: the corpus has no letters; pass --lang en or --lang ja")
    for code, language in LANGUAGES.items():
        if language.claims(c):
            return code
    supported = "only English and Japanese are supported"
    if c["kana"] + c["han"] >= 0.2 * letters:
        raise CorpusError(f"the corpus looks Chinese (Han characters without kana); {supported}")
    if c["hangul"] >= 0.2 * letters:
        raise CorpusError(f"the corpus looks Korean; {supported}")
    raise CorpusError(f"the corpus is in a script this engine has no model for; {supported}")


def query_language_warning(query: str, index_language: str) -> str | None:
    """A warning when the query is written in a language the index does not hold (a Chinese
    question on an English index), else None. A Japanese index also holds English text, and a
    Japanese query may be all kanji, so there only Korean and other scripts are flagged."""
    c = script_counts([query])
    if sum(c.values()) == 0:
        return None
    language = get(index_language)
    seen = language.foreign_query(c)
    if seen is None:
        return None
    return (f"the query looks {seen} but the index holds {language.name} text; the passages returned are unlikely "
            f"to be relevant (ask in {language.name}, or build an index of {seen} documents)")
