"""Language detection by script: enough to choose between the English and Japanese pipelines."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import CorpusError

SUPPORTED = ("en", "ja")


def _script_counts(texts: Iterable[str], limit: int = 200_000) -> dict[str, int]:
    counts = {"kana": 0, "han": 0, "hangul": 0, "latin": 0, "other": 0}
    seen = 0
    for text in texts:
        for ch in text:
            o = ord(ch)
            if 0x3040 <= o <= 0x30FF or 0xFF66 <= o <= 0xFF9F:
                counts["kana"] += 1
            elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
                counts["han"] += 1
            elif 0xAC00 <= o <= 0xD7AF:
                counts["hangul"] += 1
            elif ch.isascii() and ch.isalpha():
                counts["latin"] += 1
            elif ch.isalpha():
                counts["other"] += 1
        seen += len(text)
        if seen >= limit:
            break
    return counts


def detect_language(texts: Iterable[str]) -> str:
    """Return ``"en"`` or ``"ja"`` from the scripts used in ``texts``.

    Japanese text mixes kana with Han characters; Han without kana is Chinese, which
    has no pipeline here and is an error, as are Korean and other scripts.
    """
    c = _script_counts(texts)
    cjk = c["kana"] + c["han"]
    letters = cjk + c["hangul"] + c["latin"] + c["other"]
    if letters == 0:
        raise CorpusError("cannot detect the language: the corpus has no letters; pass --lang en or --lang ja")
    if cjk >= 0.2 * letters:
        if c["kana"] >= 0.05 * cjk:
            return "ja"
        raise CorpusError("the corpus looks Chinese (Han characters without kana); only English and Japanese are supported")
    if c["hangul"] >= 0.2 * letters:
        raise CorpusError("the corpus looks Korean; only English and Japanese are supported")
    if c["latin"] >= 0.5 * letters:
        return "en"
    raise CorpusError("the corpus is in a script this engine has no model for; only English and Japanese are supported")


_LANGUAGE_NAMES = {"en": "English", "ja": "Japanese"}


def query_language_warning(query: str, index_language: str) -> str | None:
    """A warning when the query is written in a language the index does not hold (a Chinese
    question on an English index), else None. A Japanese index also holds English text, and a
    Japanese query may be all kanji, so there only Korean and other scripts are flagged."""
    c = _script_counts([query])
    letters = sum(c.values())
    if letters == 0:
        return None
    if c["hangul"] >= 0.5 * letters:
        seen = "Korean"
    elif c["other"] >= 0.5 * letters:
        seen = "a script other than Latin, kana or Han"
    elif index_language == "en" and c["kana"] + c["han"] >= 0.5 * letters:
        seen = "Japanese" if c["kana"] else "Chinese"
    else:
        return None
    held = _LANGUAGE_NAMES.get(index_language, index_language)
    return (f"the query looks {seen} but the index holds {held} text; the passages returned are unlikely "
            f"to be relevant (ask in {held}, or build an index of {seen} documents)")
