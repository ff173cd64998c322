"""The Tri-Graph's sparse structure: passages, sentences and entities.

``C`` is |P|×|E| (entity occurrence counts per passage), ``M`` is |S|×|E| (0/1:
sentence mentions entity), ``sentence_passage`` maps each sentence to its passage.
A passage's title, when it is a name (a record's title, not a file path), is an
entity of the passage and of each of its sentences: the passage is about it, even
where a sentence says "she" and NER misses the name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .analysis import AnalyzedText
from .normalize import is_usable_entity, normalize_entity


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
    """Accumulates analysed passages one at a time, then emits the matrices."""

    def __init__(self) -> None:
        self._entity_index: dict[str, int] = {}
        self._surfaces: list[Counter] = []
        self._labels: list[Counter] = []
        self.sentences: list[str] = []
        self._sent_passage: list[int] = []
        self._c_rows: list[int] = []
        self._c_cols: list[int] = []
        self._m_rows: list[int] = []
        self._m_cols: list[int] = []
        self._n_passages = 0

    def _entity(self, key: str, surface: str, label: str) -> int:
        idx = self._entity_index.get(key)
        if idx is None:
            idx = self._entity_index[key] = len(self._surfaces)
            self._surfaces.append(Counter())
            self._labels.append(Counter())
        self._surfaces[idx][surface] += 1
        self._labels[idx][label] += 1
        return idx

    def add(self, analyzed: AnalyzedText, title: str = "") -> None:
        """Add one passage (its sentences and mentions); a non-empty ``title`` becomes its entity."""
        p = self._n_passages
        self._n_passages += 1
        title_key = normalize_entity(title) if title else ""
        title_entity = None
        if title_key and is_usable_entity(title_key):
            title_entity = self._entity(title_key, title.strip(), "TITLE")
            self._c_rows.append(p)
            self._c_cols.append(title_entity)
        for sentence, mentions in zip(analyzed.sentences, analyzed.mentions):
            s = len(self.sentences)
            self.sentences.append(sentence)
            self._sent_passage.append(p)
            seen = set()
            if title_entity is not None:
                seen.add(title_entity)
                self._m_rows.append(s)
                self._m_cols.append(title_entity)
            for m in mentions:
                e = self._entity(m.key, m.surface, m.label)
                self._c_rows.append(p)
                self._c_cols.append(e)
                if e not in seen:
                    seen.add(e)
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
        keys = [""] * n_e
        for key, idx in self._entity_index.items():
            keys[idx] = key
        return TriGraph(
            sentences=self.sentences,
            sentence_passage=np.asarray(self._sent_passage, dtype=np.int32),
            entity_keys=keys, entity_names=[_most_common(c) for c in self._surfaces],
            entity_labels=[_most_common(c) for c in self._labels], C=C, M=M,
        )


def _most_common(counter: Counter) -> str:
    # Ties broken by the string itself, so the build is deterministic.
    return min(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def build_graph(items: Iterable[tuple[AnalyzedText, str]]) -> TriGraph:
    """Build the Tri-Graph from ``(analysed passage, title)`` pairs in passage order."""
    builder = GraphBuilder()
    for analyzed, title in items:
        builder.add(analyzed, title)
    return builder.build()
