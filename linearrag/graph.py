"""The Tri-Graph's sparse structure: passages, sentences and entities.

``C`` is |P|×|E| (entity occurrence counts per passage), ``M`` is |S|×|E| (0/1:
sentence mentions entity), ``sentence_passage`` maps each sentence to its passage.
A passage's title, when it is a name (a record's title, not a file path), is an
entity of the passage and of each of its sentences: the passage is about it, even
where a sentence says "she" and NER misses the name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .analysis import AnalyzedText
from .normalize import is_usable_entity, normalize_entity, singular_key
from .passage import ANCHOR

# Labels of entities that come from terms rather than names (see ``GraphBuilder``).
TERM_LABELS = frozenset({"TERM", "CODE", "HEADING", "LINK"})
_PERSON_LABELS = frozenset({"PERSON", "TITLE"})
# One-word mentions that may shorten a longer name: the small English model often labels a
# lone given name ORG ("Beatrice").
_SHORT_LABELS = frozenset({"PERSON", "ORG"})


@dataclass
class TriGraph:
    sentences: list[str]
    sentence_passage: np.ndarray        # int32 [S]
    entity_keys: list[str]              # normalised keys, column order of C and M
    entity_names: list[str]             # most frequent surface form, for display
    entity_labels: list[str]            # most frequent NER label ("TITLE" for titles)
    C: sp.csr_matrix                    # float32 [P, E] occurrence counts
    M: sp.csr_matrix                    # float32 [S, E] 0/1


class GraphBuilder:
    """Accumulates analysed passages one at a time, then emits the matrices.

    Terms (English noun phrases ``TERM``, code identifiers ``CODE``, headings ``HEADING``)
    are candidates: at :meth:`build` an entity known only as a noun-phrase term is kept when
    it occurs in at least ``term_min_df`` passages, and an entity known only from terms is
    dropped when it occurs in more than ``term_max_df`` of the passages (at least
    ``TERM_MAX_DF_FLOOR`` passages): "example", "function" or `str` would be hubs that
    connect everything. Named entities (NER, titles) are never filtered.
    """

    def __init__(self, term_min_df: int = 2, term_max_df: float = 0.05, merge_short_names: bool = False,
                 aliases: dict[str, str] | None = None, alias_names: dict[str, str] | None = None) -> None:
        self.aliases = aliases or {}
        self.alias_names = alias_names or {}
        self.merged_aliases: set[str] = set()   # alias keys met in the corpus
        self.term_min_df = term_min_df
        self.term_max_df = term_max_df
        self.merge_short_names = merge_short_names
        self._entity_index: dict[str, int] = {}
        self._surfaces: list[dict[str, int]] = []   # surface → count, per entity
        self._labels: list[dict[str, int]] = []
        self.sentences: list[str] = []
        self._sent_passage: list[int] = []
        self._c_rows: list[int] = []
        self._c_cols: list[int] = []
        self._m_rows: list[int] = []
        self._m_cols: list[int] = []
        self._n_passages = 0
        self._last_C: sp.csr_matrix | None = None

    def _entity(self, key: str, surface: str, label: str) -> int:
        if key in self.aliases:
            self.merged_aliases.add(key)
            key = self.aliases[key]
            surface = self.alias_names.get(key, surface)
        idx = self._entity_index.get(key)
        if idx is None:
            idx = self._entity_index[key] = len(self._surfaces)
            self._surfaces.append({})
            self._labels.append({})
        surfaces, labels = self._surfaces[idx], self._labels[idx]
        surfaces[surface] = surfaces.get(surface, 0) + 1
        labels[label] = labels.get(label, 0) + 1
        return idx

    def add(self, analyzed: AnalyzedText, title: str = "", terms: tuple[tuple[str, str], ...] = (),
            title_line: bool = False, links: tuple[tuple[str, str], ...] = ()) -> None:
        """Add one passage (its sentences and mentions).

        A non-empty ``title`` becomes its entity, on every sentence; ``terms`` are extra
        ``(surface, label)`` entities: a ``HEADING`` on every sentence, a ``CODE`` identifier on
        the sentences that contain it. ``links`` are (visible text, target document title)
        pairs: the target's title entity (a ``LINK``) joins the passage and the sentences that
        show the text, so the walk goes from this passage to the linked document. With ``title_line`` the first sentence is the title
        line: its mentions count for the passage but it bridges nothing (it only restates
        the title, and a query naming the title would find it similar for that reason alone).
        With ``merge_short_names`` a one-word person name that is the first or last word of a
        longer person name (or of the title) in the same passage is that entity ("Franklin"
        after "Aretha Franklin"); off by default, as it measured slightly worse (docs/benchmarks.md).
        """
        p = self._n_passages
        self._n_passages += 1
        title_key = normalize_entity(title) if title else ""
        everywhere: list[int] = []   # entities of every sentence
        if title_key and is_usable_entity(title_key):
            everywhere.append(self._entity(title_key, title.strip(), "TITLE"))
        code: list[tuple[str, int]] = []
        # A link to another document: the target's title entity (the key its first passage
        # carries as a heading), on the sentences that show the link's text.
        terms = tuple(terms) + tuple((target, "LINK", text) for text, target in links)
        for surface, label, *shown in terms:
            if label == ANCHOR:   # a name for links, resolved before the graph is built
                continue
            key = normalize_entity(surface)
            key = singular_key(key) if label in ("HEADING", "LINK") else key
            if not is_usable_entity(key):
                continue
            e = self._entity(key, surface.strip(), label)
            if label == "HEADING":
                everywhere.append(e)
            else:
                code.append((shown[0] if shown else surface, e))
        for e in dict.fromkeys(everywhere + [e for _, e in code]):
            self._c_rows.append(p)
            self._c_cols.append(e)
        short_forms = _short_forms(analyzed, title_key, title.strip()) if self.merge_short_names else {}
        for k, (sentence, mentions) in enumerate(zip(analyzed.sentences, analyzed.mentions)):
            s = len(self.sentences)
            self.sentences.append(sentence)
            self._sent_passage.append(p)
            bridges = not (title_line and k == 0)
            in_sentence = list(everywhere) + [e for surface, e in code if surface in sentence]
            for m in mentions:
                key, surface = short_forms.get(m.key, (m.key, m.surface))
                e = self._entity(key, surface, m.label)
                self._c_rows.append(p)
                self._c_cols.append(e)
                in_sentence.append(e)
            if bridges:
                for e in dict.fromkeys(in_sentence):
                    self._m_rows.append(s)
                    self._m_cols.append(e)

    def build(self) -> TriGraph:
        n_e = len(self._surfaces)
        C = sp.csr_matrix(
            (np.ones(len(self._c_rows), dtype=np.float32), (self._c_rows, self._c_cols)),
            shape=(self._n_passages, n_e), dtype=np.float32,
        )
        C.sum_duplicates()
        M = sp.csr_matrix(
            (np.ones(len(self._m_rows), dtype=np.float32), (self._m_rows, self._m_cols)),
            shape=(len(self.sentences), n_e), dtype=np.float32,
        )
        M.sum_duplicates()
        M.data[:] = 1.0
        keys = [""] * n_e
        for key, idx in self._entity_index.items():
            keys[idx] = key
        self._last_C = C
        keep = self._kept_entities(C)
        cols = np.flatnonzero(keep)
        return TriGraph(
            sentences=self.sentences,
            sentence_passage=np.asarray(self._sent_passage, dtype=np.int32),
            entity_keys=[keys[e] for e in cols], entity_names=[_most_common(self._surfaces[e]) for e in cols],
            entity_labels=[_most_common(self._labels[e]) for e in cols],
            C=C[:, cols].tocsr(), M=M[:, cols].tocsr(),
        )

    def kept_surfaces(self) -> set[str]:
        """Every surface form of every entity :meth:`build` kept: any of them can become an
        entity's display name when passages are added or removed."""
        keep = self._kept_entities(self._last_C) if self._last_C is not None else []
        return {surface for e in np.flatnonzero(keep) for surface in self._surfaces[e]}

    def _kept_entities(self, C: sp.csr_matrix) -> np.ndarray:
        """Boolean mask over entities: the document-frequency filter for terms."""
        df = np.bincount(C.indices, minlength=C.shape[1])
        max_df = max(self.term_max_df * self._n_passages, TERM_MAX_DF_FLOOR)
        keep = np.ones(C.shape[1], dtype=bool)
        keys = [""] * C.shape[1]
        for key, idx in self._entity_index.items():
            keys[idx] = key
        for e, labels in enumerate(self._labels):
            if set(labels) == {"TERM"} and _bare_word(keys[e]):
                keep[e] = False   # "way", "step", "variety": a word, not a term of the corpus
            elif _bare_word(keys[e]) and _a_word_now_and_then_a_name(labels, self._surfaces[e]):
                keep[e] = False   # "file": 113 mentions, one "File" opening a sentence tagged ORG
            elif keys[e] in _ADMONITION_WORDS and not set(labels) & _NAMED_BY_THE_TEXT:
                keep[e] = False   # "Note:" heads a paragraph; NER now and then calls it a name
            elif set(labels) <= TERM_LABELS:
                keep[e] = df[e] <= max_df and (df[e] >= self.term_min_df or set(labels) != {"TERM"})
        return keep


TERM_MAX_DF_FLOOR = 20
STRAY_NAME_SHARE = 0.15   # name labels on at most this share of a word's mentions are the NER's slips
# The labels that head a paragraph (written by the readers for an admonition, "Note: …", or by
# authors, "**Note:**"): no entity, however NER tags them (npm's docs: "Note" in 95 passages),
# unless the text names one so (a heading, a title, code, a link).
_ADMONITION_WORDS = frozenset({"note", "warning", "tip", "hint", "important", "caution", "attention", "see also",
                               "todo", "added"})
_NAMED_BY_THE_TEXT = frozenset({"CODE", "HEADING", "LINK", "TITLE"})


def _a_word_now_and_then_a_name(labels: dict[str, int], surfaces: dict[str, int]) -> bool:
    """A common word the NER calls a name now and then: a noun-phrase term (``TERM``) that no
    heading, code or link names, whose name labels are at most ``STRAY_NAME_SHARE`` of its
    mentions, and that is written in lowercase in most of them ("file", "support"; not "AnyIO",
    "ORMs" or "Trio", written as names). A name label alone kept such a word from the term
    filters: pip's "file" joined 70 of 454 passages."""
    if "TERM" not in labels or set(labels) & _NAMED_BY_THE_TEXT:
        return False
    total = sum(labels.values())
    named = total - labels["TERM"]
    lowercase = sum(n for surface, n in surfaces.items() if surface.islower())
    return 0 < named <= STRAY_NAME_SHARE * total and 2 * lowercase > sum(surfaces.values())


def _bare_word(key: str) -> bool:
    """A one-word key of letters only ("variety", "blueprint"): as a noun-phrase term alone it
    is debris; the same word as a heading ("Blueprints"), an identifier in code or a name stays."""
    return key.isalpha()


def _short_forms(analyzed: AnalyzedText, title_key: str, title: str) -> dict[str, tuple[str, str]]:
    """One-word person keys of a passage → (key, surface) of the one longer person name (or
    title) of the passage whose first or last word they are."""
    surfaces = {m.key: m.surface for ms in analyzed.mentions for m in ms if m.label in _SHORT_LABELS}
    longer = {m.key: m.surface for ms in analyzed.mentions for m in ms if m.label in _PERSON_LABELS and " " in m.key}
    if " " in title_key:
        longer[title_key] = title
    out = {}
    for key in surfaces:
        if " " in key or key in longer:
            continue
        matches = sorted(k for k in longer if key in (k.split()[0], k.split()[-1]))
        if len(matches) == 1:
            out[key] = (matches[0], longer[matches[0]])
    return out


def _most_common(counter: dict[str, int]) -> str:
    # Ties broken by the string itself, so the build is deterministic.
    return min(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def build_graph(items: Iterable[tuple[AnalyzedText, str]], **options) -> TriGraph:
    """Build the Tri-Graph from ``(analysed passage, title)`` pairs in passage order."""
    builder = GraphBuilder(**options)
    for analyzed, title in items:
        builder.add(analyzed, title)
    return builder.build()
