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
_OPTION = re.compile(r"^-{1,2}(?=[A-Za-z])")   # "--reload", "-v": the dashes are part of the option
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
    >>> normalize_entity("--App")
    '--app'
    
    """
    text = unicodedata.normalize("NFKC", text)
    text = " ".join(text.split())
    text = _ARTICLE.sub("", text)
    text = _POSSESSIVE.sub("", text)
    option = _OPTION.match(text)
    text = _EDGE_PUNCT.sub("", text).casefold()
    if option:
        text = option.group(0) + text
    if any("\u30A0" <= ch <= "\u30FF" for ch in text):
        text = _TRAILING_CHOON.sub("", text.translate(_SMALL_KANA))
    return text


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
