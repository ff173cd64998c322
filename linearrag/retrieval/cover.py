"""Bridged coverage: past the second position, what a passage adds to the ones placed above.

Linked selection places a passage by a link (a title a passage above names) where it can;
otherwise the next position went to the best-scored remaining passage. Later hops are often
named by no title: "What is the debt load for the US carried by the country Dai Jitao is
from?" — Dai Jitao's page comes first; the page holding the answer, "National debt of the United
States" (China holds about $1.18 trillion of it), is named by no passage, and by score it sat at
rank 9 (musique-train100) behind pages on US oil refining that match "the US" as well as it
does. It *continues* what is placed in two ways at once: it shares entities of few passages
with a page placed above (China and Japan, with a page on China's modern history) and it holds
a word of the question that no placed passage holds ("debt").

So, when no link decides a position from the third on, each remaining candidate is valued
1 / (its rank by score) + ``weight`` × its gain, where the gain is the share of the question's
tokens, weighted by idf, that it holds and no placed passage holds — counted only when it
shares with a placed passage an entity of at most ``max_df`` passages that the question does
not name (a hub such as a country of every other page bridges nothing in particular). Ties go
to the better score. Everything is over the candidates: O(tokens × candidates) per query.
"""

from __future__ import annotations

import numpy as np

from .sparse import gather

COVER_FROM = 3      # positions 1 and 2 belong to score and links; coverage decides from the third


class Coverage:
    """``held``: bool [tokens, candidates], which candidate holds which distinct query token;
    ``df``: each token's passage count; ``n_passages``: the corpus size (for idf);
    ``bridges[i]``: candidate i's entities that may bridge (rare, not named by the question);
    ``words``: the tokens as a person reads them (the explanation; default: their indices).

    ``picks`` explains each position coverage decided: position → (the placed position holding
    the shared entity, that entity, the words the passage adds)."""

    def __init__(self, held: np.ndarray, df: np.ndarray, n_passages: int, bridges: list[set[int]], weight: float,
                 words=None):
        self.held = np.asarray(held, dtype=bool)
        idf = np.log((n_passages + 1) / (np.asarray(df, dtype=np.float64) + 1))
        total = float(idf.sum())
        self.share = idf / total if total > 0 else np.zeros_like(idf)
        self.covered = np.zeros(self.held.shape[0], dtype=bool)
        self.bridges = bridges
        self.holder: dict[int, int] = {}     # bridging entity → position of the first placed passage holding it
        self.placed = 0
        self.weight = weight
        self.words = list(words) if words is not None else [str(t) for t in range(self.held.shape[0])]
        self.picks: dict[int, tuple[int, int, list[str]]] = {}

    def place(self, i: int) -> None:
        """Candidate ``i`` takes the next position: its tokens are covered, its entities can bridge."""
        if self.held.shape[0]:
            self.covered |= self.held[:, i]
        for e in self.bridges[i]:
            self.holder.setdefault(e, self.placed)
        self.placed += 1

    def gain(self, i: int) -> float:
        """The idf share of the question's tokens ``i`` adds, 0 unless it shares a bridge."""
        if not self.held.shape[0] or self.holder.keys().isdisjoint(self.bridges[i]):
            return 0.0
        return float(self.share[self.held[:, i] & ~self.covered].sum())

    def pick(self, candidates: list[int]) -> int:
        """The candidate (positions in score order, best first) with the best
        1 / rank + weight × gain; the better-scored on a tie. A pick with a gain is explained
        in ``picks`` under the position it is about to take."""
        best, best_value, best_gain = candidates[0], -1.0, 0.0
        for i in candidates:
            gain = self.gain(i)
            value = 1.0 / (i + 1) + self.weight * gain
            if value > best_value:
                best, best_value, best_gain = i, value, gain
        if best_gain > 0:
            # the shared entity of the earliest placed passage (the lowest id among its own)
            source, entity = min((self.holder[e], e) for e in self.bridges[best] if e in self.holder)
            adds = [self.words[t] for t in np.flatnonzero(self.held[:, best] & ~self.covered).tolist()]
            self.picks[self.placed] = (source, entity, adds)
        return best


def bridge_entities(rows: np.ndarray, indptr: np.ndarray, indices: np.ndarray, entity_df,
                    named: set[int], max_df: int) -> list[set[int]]:
    """Per row, its entities (C's CSR structure) named in at most ``max_df`` passages
    (``entity_df(ids)``: their passage counts) and not in ``named``: one gather of the rows'
    entries and one count per distinct entity."""
    rows = np.asarray(rows, dtype=np.int64)
    owner, ents, _ = gather(indptr, indices, rows)
    out: list[set[int]] = [set() for _ in range(rows.size)]
    if ents.size:
        distinct, inverse = np.unique(ents, return_inverse=True)
        keep = (np.asarray(entity_df(distinct)) <= max_df)[inverse]
        for i, e in zip(owner[keep].tolist(), ents[keep].tolist()):
            if e not in named:
                out[i].add(e)
    return out
