"""Entity normalisation, shared by indexing and querying.

Rules (documented in docs/normalisation.md): NFKC (full/half width), case-fold,
collapse white space, drop a leading English article and surrounding punctuation;
for Japanese also unify katakana long-vowel variants and small kana.
"""

from __future__ import annotations

import re
import unicodedata

# spaCy (OntoNotes) labels that are numbers, not things: they become hub nodes.
ENGLISH_DROPPED_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "DATE", "TIME"})

# GiNZA (Sekine's extended named-entity hierarchy) numeric and time types.
JAPANESE_DROPPED_LABELS = frozenset({
    "Money", "Percent", "Multiplication", "Frequency", "Age", "School_Age", "Ordinal_Number", "Rank",
    "Latitude_Longtitude", "Measurement_Other", "Physical_Extent", "Space", "Volume", "Weight", "Speed",
    "Intensity", "Temperature", "Calorie", "Seismic_Intensity", "Seismic_Magnitude", "Numex_Other",
    "Countx_Other", "Point", "Stock_Index", "Timex_Other", "Time", "Date", "Day_Of_Week", "Era",
    "Periodx_Other", "Period_Time", "Period_Day", "Period_Week", "Period_Month", "Period_Year",
    "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "DATE", "TIME",
})

_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_EDGE_PUNCT = re.compile(r"^[\s\W_]+|[\s\W_]+$", re.UNICODE)
_POSSESSIVE = re.compile(r"(?:'s|’s|')$")
_SMALL_KANA = str.maketrans("ァィゥェォッャュョヮヵヶぁぃぅぇぉっゃゅょゎ", "アイウエオツヤユヨワカケあいうえおつやゆよわ")
# A trailing long-vowel mark on katakana words of 4+ chars is optional in common
# spelling (コンピュータ / コンピューター).
_TRAILING_CHOON = re.compile(r"(?<=[\u30A0-\u30FF]{3})ー$")


def is_dropped_label(label: str) -> bool:
    """True for numeric / temporal entity labels, which are not indexed."""
    return label in ENGLISH_DROPPED_LABELS or label in JAPANESE_DROPPED_LABELS or label.startswith("N_")


def normalize_entity(text: str) -> str:
    """Normalise an entity surface form to its node key (language-independent rules).

    >>> normalize_entity("  The  Beatles' ")
    'beatles'
    >>> normalize_entity("コンピューター") == normalize_entity("コンピュータ")
    True
    """
    text = unicodedata.normalize("NFKC", text)
    text = " ".join(text.split())
    text = _ARTICLE.sub("", text)
    text = _POSSESSIVE.sub("", text)
    text = _strip_edges(text).casefold()
    if any("\u30A0" <= ch <= "\u30FF" for ch in text):
        text = _TRAILING_CHOON.sub("", text.translate(_SMALL_KANA))
    return text


_PAIRS = {"(": ")", "[": "]", "{": "}"}
_QUOTES = "\"'"


def _balanced(text: str) -> bool:
    depth = {o: 0 for o in _PAIRS}
    closers = {c: o for o, c in _PAIRS.items()}
    for ch in text:
        if ch in depth:
            depth[ch] += 1
        elif ch in closers:
            depth[closers[ch]] -= 1
            if depth[closers[ch]] < 0:
                return False
    return all(v == 0 for v in depth.values()) and all(text.count(q) % 2 == 0 for q in _QUOTES)


def _strip_edges(text: str) -> str:
    """Punctuation at both ends removed, except closing brackets and quotes that the rest
    needs: ``Depends(checker)`` keeps its ``)`` (stripping it left ``Depends(checker``),
    ``Optional[str]`` its ``]``; ``"Lothair II",`` still loses both quotes and the comma."""
    stripped = _EDGE_PUNCT.sub("", text)
    if not stripped or _balanced(stripped):
        return stripped
    start = text.find(stripped)
    tail = text[start + len(stripped):]
    for i in range(1, len(tail) + 1):
        if _balanced(stripped + tail[:i]):
            return stripped + tail[:i]
    # a span cut inside a bracket ("Depends(checker" from a tokenizer): the name before it
    cut = _first_unbalanced(stripped)
    return _EDGE_PUNCT.sub("", stripped[:cut]) if cut is not None else stripped


def _first_unbalanced(text: str) -> int | None:
    """Index of the first bracket or quote that nothing in ``text`` closes (or opens)."""
    closers = {c: o for o, c in _PAIRS.items()}
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch in _PAIRS:
            stack.append(i)
        elif ch in closers:
            if not stack or text[stack[-1]] != closers[ch]:
                return i
            stack.pop()
    if stack:
        return stack[0]
    for q in _QUOTES:
        if text.count(q) % 2:
            return text.rfind(q)
    return None


def is_usable_entity(key: str) -> bool:
    """Reject empty keys, single characters and pure numbers."""
    if len(key) < 2 and not any(ord(ch) > 0x2E80 for ch in key):
        return False
    return bool(key) and not key.replace(" ", "").replace(".", "").replace(",", "").isdigit()


_KEEP_S = ("ss", "us", "is", "os", "as", "'s")


def singular_key(key: str) -> str:
    """An English term key with its last word made singular by simple rules ("path
    parameters" → "path parameter", "dependencies" → "dependency", "classes" → "class");
    words ending in -ss, -us, -is, -os, -as and short words stay as they are.

    >>> singular_key("reference cycles")
    'reference cycle'
    """
    head, _, last = key.rpartition(" ")
    if len(last) <= 3 or not last.isalpha() or not last.isascii():
        return key
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith(("sses", "shes", "ches", "xes")):
        last = last[:-2]
    elif last.endswith("s") and not last.endswith(_KEEP_S):
        last = last[:-1]
    return f"{head} {last}" if head else last
