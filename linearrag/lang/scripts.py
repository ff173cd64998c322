"""Unicode scripts: the character classes every language module and the detector share."""

from __future__ import annotations

from collections.abc import Iterable


def is_kana(ch: str) -> bool:
    """Hiragana, katakana or half-width katakana."""
    return "\u3040" <= ch <= "\u30ff" or "\uff66" <= ch <= "\uff9f"


def is_han(ch: str) -> bool:
    """A CJK ideograph (the unified block and extension A)."""
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def is_hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7af"


def is_kanji_or_katakana(ch: str) -> bool:
    return is_han(ch) or "\u30a0" <= ch <= "\u30ff" or ch == "々"


def is_japanese_char(ch: str) -> bool:
    return is_kana(ch) or is_kanji_or_katakana(ch)


def is_hiragana_only(key: str) -> bool:
    """Keys of hiragana only (さん, ちゃん) are suffixes and particles, not names."""
    return all("\u3040" <= ch <= "\u309f" for ch in key)


def has_latin_letter(text: str) -> bool:
    return any(ch.isascii() and ch.isalpha() for ch in text)


def script_counts(texts: Iterable[str], limit: int = 200_000) -> dict[str, int]:
    """Letters per script (kana, han, hangul, latin, other) over the first ``limit`` characters."""
    counts = {"kana": 0, "han": 0, "hangul": 0, "latin": 0, "other": 0}
    seen = 0
    for text in texts:
        for ch in text:
            if is_kana(ch):
                counts["kana"] += 1
            elif is_han(ch):
                counts["han"] += 1
            elif is_hangul(ch):
                counts["hangul"] += 1
            elif ch.isascii() and ch.isalpha():
                counts["latin"] += 1
            elif ch.isalpha():
                counts["other"] += 1
        seen += len(text)
        if seen >= limit:
            break
    return counts
