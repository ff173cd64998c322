"""Linked selection: the passages ranked below the first follow the names the ones above mention.

Fusion scores every passage on its own. In a two-hop question the second passage is the one
the first *names*: the film's page names its director, whose page holds the answer; the
director's page rarely looks like the question by itself, so it tends to sit at rank 3–10
behind passages that do (other pages naming the film). Selection fixes the order of the
``depth`` best-scored passages one position at a time: position 1 stays; each next position
goes to the best-scored remaining passage whose title a passage already placed names — its
title entity is one of that passage's entities, or the title is written in that passage's
text (NER misses many titles) — else to the best-scored remaining passage. A title links one
passage only: once a passage of that title is placed, its siblings (other paragraphs of the
same article) are ranked by score again, so a link brings in the bridge, not a run of
paragraphs that repeat it. When no remaining passage has a whole title named above, a title's
*name* may hold what a placed passage names: "Alcohol laws of Indiana" after a page naming
Indiana (``parts``, :func:`title_parts`; the three- and four-hop chains of MuSiQue are built
from such pages), when that page looks a little like the question too
(:func:`parts_like_the_question`). A passage whose title the question itself names
(``asked``: a comparison's second subject; or its title's name, a qualifier aside:
:func:`qualified_asked`) counts as named: it keeps its place when it outscores every passage
named above (``asked_first``), instead of waiting behind a page the first subject names. From the third
position on, a position no link decides weighs what a passage adds to those placed above
(``cover``, :mod:`cover`) against its score rank.

It runs on corpora of titled records (Wikipedia-style), where a title names the passage's
subject. On documents a passage's title is a heading path, and following headings measured
worse there (docs/benchmarks.md), so the retriever leaves documents in score order. Nothing
outside the ``depth`` candidates is looked at: O(depth²) per query at any corpus size.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from ..normalize import normalize_entity
from .cover import COVER_FROM


def linked_order(rows: np.ndarray, names: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                 mentions=None, limit: int | None = None, parts=None,
                 asked=frozenset(), asked_first: bool = False,
                 joined: int | None = None, cover=None) -> tuple[np.ndarray, list[int], list[int]]:
    """Reorder candidate ``rows`` (best-scored first) by linked selection (module docstring).

    ``names[i]``: the title entity of ``rows[i]`` (−1: none); ``indptr``/``indices``: C's CSR
    structure; ``mentions(j, i)`` (optional, positions into ``rows``): whether passage j writes
    passage i's title, a link too (:class:`TitleMentions`; its folded ``titles`` also tell
    siblings apart where a title is no entity). Returns the new order (positions into ``rows``)
    and per output position that of the placed passage naming it (−1: kept its place by score).
    ``parts[i]`` (optional): entities that runs of words of candidate i's title name
    (:func:`title_parts`); when no remaining passage has a whole title named above, the
    best-scored one whose title part a placed passage names comes next — unless a passage whose
    title entity is in ``asked`` (the question names it) scores higher. The third list gives,
    per output position, that title part's entity (−1 for every other position).
    With ``asked_first`` a passage whose title entity is in ``asked`` is also taken in score
    order among the passages named above: the question names it, as a passage above would.
    With ``limit`` only the first ``limit`` positions are placed (each depends only on those above
    it). From ``joined`` on, rows are pages joined from outside (:func:`named_pages`): never 1st or 2nd.
    ``cover`` (:class:`cover.Coverage`): from the third on, a position no link decides weighs coverage.
    """
    n = len(rows) if limit is None else min(limit, len(rows))
    order: list[int] = []
    linked_from: list[int] = []
    vias: list[int] = []
    named_by: dict[int, int] = {}          # entity → output position of the first placed passage naming it
    written_by: dict[int, int] = {}        # candidate → output position of the first placed text naming it
    placed_names: set = set()              # a title already placed links no further passage (no sibling run)
    remaining = list(range(len(rows)))

    def key(i: int):
        return int(names[i]) if names[i] >= 0 else (None if mentions is None else mentions.titles[i])

    def place(i: int, source: int, via: int = -1) -> None:
        pos = len(order)
        order.append(i)
        linked_from.append(source)
        vias.append(via)
        remaining.remove(i)
        placed_names.add(key(i))
        if cover is not None:
            cover.place(i)
        row = int(rows[i])
        for e in np.asarray(indices[indptr[row]:indptr[row + 1]]).tolist():
            if e != names[i]:
                named_by.setdefault(e, pos)
        if mentions is not None and len(order) < n:   # each pair tested once, when its naming side is placed
            for r in remaining:
                if r not in written_by and mentions(i, r):
                    written_by[r] = pos

    if n == 0:
        return np.zeros(0, dtype=np.int64), [], []
    place(0, -1)
    while remaining and len(order) < n:
        waits = joined is not None and len(order) < JOINED_FROM - 1
        pick, source, via = next((i for i in remaining if not (waits and i >= joined)), remaining[0]), -1, -1
        chosen = True
        for i in remaining:
            if key(i) in placed_names or (waits and i >= joined):
                continue
            e = int(names[i])
            if e >= 0 and e in named_by:
                pick, source = i, named_by[e]
                break
            if i in written_by:
                pick, source = i, written_by[i]
                break
            if asked_first and e in asked:
                pick = i
                break
        else:
            part = _part_pick(remaining, parts, placed_names, key, names, asked, named_by)
            chosen = part is not None
            pick, source, via = part if chosen and part[0] >= 0 else (pick, source, via)
        if not chosen and cover is not None and len(order) >= COVER_FROM - 1:
            pick = cover.pick(remaining)
        place(pick, source, via)
    return np.asarray(order, dtype=np.int64), linked_from, vias


def _part_pick(remaining, parts, placed_names, key, names, asked, named_by) -> tuple[int, int, int] | None:
    """The best-scored remaining candidate whose title part a placed passage names, as (candidate,
    position of that passage, the part's entity); (−1, −1, −1) when a candidate the question
    names comes first (score order decides); None when neither (no parts: None)."""
    for i in remaining if parts is not None else ():
        if key(i) in placed_names:
            continue
        if names[i] in asked:
            return -1, -1, -1
        named = sorted((named_by[p], p) for p in parts[i] if p in named_by)
        if named:
            return i, named[0][0], named[0][1]
    return None


def named_pages(text: str, question: str, own_title: str, lookup, canonical, by_entity, title_of,
                taken, max_df: int, limit: int) -> list[int]:
    """Pages outside the candidates whose title the best passage writes: "located in north-west
    Iowa" names the page "Iowa" though NER tagged "north-west Iowa" and the walk never ranked
    "Iowa" among the candidates (MuSiQue's "the state where …" hops). Runs of up to six words of
    ``text`` that start with a capital are looked up as entity keys (one batch); a run counts
    when its entity is named in at most ``max_df`` passages (a hub such as "London" bridges
    nothing in particular), the question does not write it, and one of the entity's passages is
    titled exactly the run (a qualifier aside: "Brand (play)" for "Brand"). Returns up to
    ``limit`` rows, in the order the text names them, the lowest row of each title (its first
    paragraph); a title already among the candidates (``taken``) is not joined again.
    ``by_entity``: (indptr, indices) of C by entity; ``title_of(row)``: a passage's title."""
    if limit <= 0:
        return []
    words = [w.strip(".") for w in _RUN_WORDS.findall(text)]
    # a run stops at punctuation (joined with spaces, "Paradise , Nevada" is no title as written)
    runs = [(i, " ".join(words[i:i + n])) for i in range(len(words)) if words[i][:1].isupper()
            for n in range(_run_end(words, i), 0, -1)]
    keys = {run: canonical(normalize_entity(run)) for _, run in runs}
    found = _resolve(lookup, sorted({k for k in keys.values() if len(k) > 1}))
    asked, own = _fold(question), _before_qualifier(own_title)
    indptr, indices = by_entity
    out: list[int] = []
    done: set[int] = set()
    for i, run in runs:
        e = found.get(keys[run], -1)
        if i in done or e < 0 or run == own or _fold(run) in asked or not 0 < indptr[e + 1] - indptr[e] <= max_df:
            continue
        row = next((int(r) for r in indices[indptr[e]:indptr[e + 1]]     # rows ascending: the first paragraph
                    if _before_qualifier(title_of(int(r))) == run), -1)
        if row < 0:
            continue
        done.add(i)     # the longest run at a position that titles a page is the one it names
        if row not in taken and row not in out:
            out.append(row)
            if len(out) == limit:
                break
    return out


_MINOR_WORDS = frozenset("a an and as at by de del der di du for from in la le of on or the to van von with".split())


def written_as_name(name: str) -> bool:
    """Whether an entity's name is written as a name: at least two words besides minor ones
    ("of", "the") and numbers, each capitalised — "Reign of Terror", "Committee of Public Safety",
    not "Place of birth" or "Steam engine" (a page about a kind of thing)."""
    words = [w for w in name.split() if w[:1].isalpha() and w.lower() not in _MINOR_WORDS]
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


def titles_a_page(entity: int, key: str, by_entity, title_of, canonical, most: int = 1000) -> bool:
    """Whether a passage of ``entity`` (keyed ``key``; the first ``most`` of its passages) is
    titled so, a qualifier aside: the entity is the subject of a page, not a phrase some text
    capitalises ("International Airport" inside airport names). ``by_entity``: (indptr,
    indices) of C by entity; ``title_of(row)``: a passage's title."""
    indptr, indices = by_entity
    return any(canonical(normalize_entity(_before_qualifier(title_of(int(r))))) == key
               for r in indices[indptr[entity]:min(indptr[entity + 1], indptr[entity] + most)])


def qualified_asked(titles: Sequence[str], names: np.ndarray, asked: set[int], lookup, canonical, level) -> set[int]:
    """The title entities of the candidates the question names by their title's name, a qualifier
    aside: "Franz Ferdinand (band)" when the question names Franz Ferdinand (its entity is a seed,
    ``level(entities)`` == 1) — per name the best-scored such candidate only (``titles`` are in
    score order), and none when a candidate titled with the name alone is already ``asked``: a
    name the question writes is one subject, and the page its name alone titles is that subject.
    ``names[i]``: the title entity of candidate i (−1: none)."""
    held = [i for i, t in enumerate(titles) if names[i] >= 0 and " (" in t]
    if not held:
        return set()
    bare = name_entities([_before_qualifier(titles[i]) for i in held], lookup, canonical)
    known = [j for j, b in enumerate(bare.tolist()) if b >= 0]
    if not known:
        return set()
    levels = np.asarray(level(bare[known])).tolist()
    seen, out = set(asked), set()
    for j, lv in zip(known, levels):
        name = int(bare[j])
        if lv == 1 and name not in seen:
            seen.add(name)
            out.add(int(names[held[j]]))
    return out


def _before_qualifier(title: str) -> str:
    """A title as a text writes it: "Brand (play)" → "Brand"."""
    return title.split(" (")[0].strip()


def _run_end(words: list[str], i: int, most: int = 6) -> int:
    n = 0
    while n < most and i + n < len(words) and words[i + n][:1].isalnum():
        n += 1
    return n


def name_entities(titles: Sequence[str], lookup, canonical=lambda k: k) -> np.ndarray:
    """Title entity ids of passages with these titles (−1 where the title is not an index
    entity), keyed as graph.GraphBuilder keys a title; ``lookup``: entity key → row (a
    files.KeyTable resolves them in one go); ``canonical`` maps an alias key to its entity's."""
    keys = [canonical(normalize_entity(t)) if t else "" for t in titles]
    wanted = [k for k in keys if k]
    found = _resolve(lookup, wanted)
    return np.asarray([found.get(k, -1) if k else -1 for k in keys], dtype=np.int64)


def _resolve(lookup, keys: list[str]) -> dict[str, int]:
    """key → entity row for those of ``keys`` in ``lookup`` (a files.KeyTable resolves them in
    one go; a plain dict is read key by key)."""
    return lookup.resolve(keys) if hasattr(lookup, "resolve") else {k: lookup[k] for k in keys if k in lookup}


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class TitleMentions:
    """``mentions(j, i)``: whether candidate j's text names candidate i's title — the title,
    case-folded (NFKC, white space collapsed), found in the text as it is; in English as whole
    words (not inside a longer word). A title NER did not tag as an entity still links.
    Titles of one character, and a title equal to the naming passage's own, never count.
    Each text is folded once, each pair tested once (a substring search, then a word check).
    """

    def __init__(self, titles: Sequence[str], texts, whole_words: bool):
        """``texts``: the candidates' texts, or a function of the position giving one (read only
        for the passages that get placed)."""
        self.titles = [_fold(t) for t in titles]
        self._text_of = texts if callable(texts) else list(texts).__getitem__
        self._folded: dict[int, str] = {}
        self.whole_words = whole_words

    def text(self, j: int) -> str:
        if j not in self._folded:
            self._folded[j] = _fold(self._text_of(j))
        return self._folded[j]

    def __call__(self, j: int, i: int) -> bool:
        title = self.titles[i]
        if len(title) < 2 or title == self.titles[j]:
            return False
        text = self.text(j)
        at = text.find(title)
        while at >= 0:
            end = at + len(title)
            if not self.whole_words or ((at == 0 or not text[at - 1].isalnum())
                                        and (end == len(text) or not text[end].isalnum())):
                return True
            at = text.find(title, at + 1)
        return False


JOINED_FROM = 3      # a page joined from outside the candidates takes no position above the third
_RUN_WORDS = re.compile(r"[\w'’.-]+|[^\w\s]")
_TITLE_SEGMENTS = re.compile(r"[(),:;/\[\]]")


def title_parts(titles: Sequence[str], lookup, canonical=lambda k: k, max_words: int = 6) -> list[set[int]]:
    """Per title, the index entities that a run of words of its *name* names — the title up to
    its first bracket, comma or colon — the whole title excepted: "Alcohol laws of Indiana" →
    {Indiana}, "Henry King (director)" → {Henry King}; a run followed by another capitalised word
    of the name is none ("Michael Jai White" holds no "Michael"). A qualifier is no part:
    "Paradise, Nevada" or "Aquarium (Aqua album)" do not hold Nevada or Aqua (measured: those
    pulled unrelated pages in once the corpus held several places and bands)."""
    grams: list[list[str]] = []
    for title in titles:
        whole = canonical(normalize_entity(title)) if title else ""
        grams.append([k for k in map(canonical, _name_runs(title or "", max_words)) if len(k) > 1 and k != whole])
    wanted = [k for keys in grams for k in keys]
    found = _resolve(lookup, wanted)
    return [{found[k] for k in keys if k in found} for keys in grams]


def parts_like_the_question(parts: list[set[int]], rows: np.ndarray, prior, floor: float) -> list[set[int]]:
    """``parts`` kept only for the candidates whose query-only prior (``prior(rows)``) reaches
    ``floor``: a page a title part links must look a little like the question ("Alcohol laws of
    Indiana" for "…stop selling booze?"), not only hold a name placed above ("Flag of
    Nebraska" after a concert tour's page naming Nebraska). The prior is read for the
    candidates that hold a part only."""
    held = np.asarray([i for i, p in enumerate(parts) if p], dtype=np.int64)
    if not held.size:
        return parts
    low = set(held[np.asarray(prior(rows[held])) < floor].tolist())
    return [set() if i in low else p for i, p in enumerate(parts)]


_REGNAL = re.compile(r"[IVXL]+")


@functools.lru_cache(maxsize=65_536)
def _name_runs(title: str, max_words: int) -> tuple[str, ...]:
    """The normalised runs of up to ``max_words`` words of a title's name that end where a name
    may end: not before another capitalised word of it ("Michael" of "Michael Jai White" is a
    first name, not a part; "Hong Kong" of "British Hong Kong" is), a regnal number aside
    ("Philippe" of "Philippe II"). Cached: the same candidates come back query after query."""
    words = _TITLE_SEGMENTS.split(title, maxsplit=1)[0].split()
    open_after = [w[:1].isupper() and w.lower() not in _MINOR_WORDS and not _REGNAL.fullmatch(w)
                  for w in words[1:]] + [False]
    return tuple(normalize_entity(" ".join(words[a:b])) for a in range(len(words))
                 for b in range(a + 1, min(len(words), a + max_words) + 1) if not open_after[b - 1])
