"""Rankings and how they are combined: ranks, rank fusion, the hybrid prior and top-k.

Fusion works on rank arrays (:class:`Ranks`) over the rows a search space ranks — every
passage in the exact space, the candidates in the approximate one — so the rules are written
once. A ranking only ranks what it scored: a passage with no BM25 match (score 0) has no BM25
rank, so fusion never treats it as a lexical hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def min_rank_positions(rows: np.ndarray, r1: np.ndarray, r2: np.ndarray, which: np.ndarray | None = None) -> np.ndarray:
    """1 / (fused position) for each of ``rows`` from its rank₁ and its scaled rank₂ (inf: no
    rank): key = min(r1, r2); on equal keys the row whose key comes from r2 first (``which``:
    the guarantee r2 came from, the lower first), then the better r1, then the row (see
    :func:`min_fusion`)."""
    origin = np.where(r2 <= r1, 0.0 if which is None else which, np.inf)
    order = np.lexsort((rows, r1, origin, np.minimum(r1, r2)))   # last key is primary
    scores = np.empty(len(rows), dtype=np.float64)
    scores[order] = 1.0 / np.arange(1, len(rows) + 1)
    return scores


def hybrid_prior(dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
    """Mean of the cosine (clipped at 0) and the BM25 score scaled by the query's best, in [0, 1]."""
    top = float(lexical.max()) if lexical.size else 0.0
    scaled = lexical / top if top > 0 else np.zeros_like(lexical)
    return 0.5 * (np.clip(dense, 0.0, None) + scaled)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, highest first; ties by lower index (deterministic)."""
    k = min(k, len(scores))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    # Include every row tied with the k-th score so the tie-break is by index, not by partition order.
    kth = scores[part].min()
    cand = np.flatnonzero(scores >= kth)
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:k]


def order_siblings(scores: np.ndarray, prior: np.ndarray, group: np.ndarray, depth: int = 100) -> np.ndarray:
    """Among the ``depth`` best-scored passages, passages of one group (paragraphs of one article
    or file) trade places so that they come in the order of the query's own evidence (``prior``).

    The walk cannot tell siblings apart: they share their title entity and most others, so its
    mass spreads over them. Each group keeps the scores (and so the ranks) it holds; only who
    holds which changes. Passages without a sibling in the top ``depth`` are untouched.
    """
    k = min(depth, len(scores))
    if k < 2:
        return scores
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[np.lexsort((top, -scores[top]))]            # best first, ties by index
    groups, counts = np.unique(group[top], return_counts=True)
    shared = groups[counts > 1]
    if not len(shared):
        return scores
    out = scores.copy()
    for g in shared.tolist():
        members = top[group[top] == g]                    # in score order
        by_prior = members[np.lexsort((members, -prior[members]))]
        out[by_prior] = scores[members]
    return out


@dataclass
class Ranks:
    """One ranking of ``rows`` (sorted row numbers): from ``scores`` (best first, ties by row;
    with ``only_positive``, rows scoring ≤ 0 are unranked) or given as 1-based ``ranks``
    (inf: unranked; the approximate space's estimates for rows outside its lists)."""

    rows: np.ndarray
    scores: np.ndarray | None = None
    only_positive: bool = True
    ranks: np.ndarray | None = None

    def all(self) -> np.ndarray:
        """The 1-based rank of every row (float64)."""
        if self.ranks is None:
            self.ranks = position_ranks(self.rows, self.scores, self.only_positive)
        return self.ranks

    def best(self, k: int) -> np.ndarray:
        """Positions (into ``rows``) of ranks 1 … k, best first (fewer when fewer are ranked)."""
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        if self.ranks is not None:
            pos = np.flatnonzero(self.ranks <= k)
            return pos[np.lexsort((self.rows[pos], self.ranks[pos]))]
        if not self.only_positive:
            return top_rows(self.rows, self.scores, k)
        pos = top_rows(self.rows, np.where(self.scores > 0, self.scores, -np.inf), k)
        return pos[self.scores[pos] > 0]


def position_ranks(rows: np.ndarray, scores: np.ndarray, only_positive: bool = True) -> np.ndarray:
    """:func:`ranks_of` on a subset of rows (``scores`` aligned with ``rows``; ties by row)."""
    ranks = np.full(rows.size, np.inf)
    pos = np.flatnonzero(scores > 0) if only_positive else np.arange(rows.size)
    order = pos[np.lexsort((rows[pos], -scores[pos]))]
    ranks[order] = np.arange(1, order.size + 1)
    return ranks


def top_rows(rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best scores (ties by lower row), best first, via argpartition."""
    k = min(k, rows.size)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < rows.size else np.arange(rows.size)
    kth = scores[part].min()
    cand = np.flatnonzero(scores >= kth)
    return cand[np.lexsort((rows[cand], -scores[cand]))][:k]


def rrf(rankings: list[Ranks], k: int, weights: list[float] | None = None) -> np.ndarray:
    """Weighted reciprocal rank fusion of rankings of the same rows: Σ w / (k + rank)."""
    total = np.zeros(rankings[0].rows.size, dtype=np.float64)
    for ranking, w in zip(rankings, weights or [1.0] * len(rankings)):
        total += w / (k + ranking.all())
    return total


def min_fusion(primary: Ranks, guarantees: Sequence[tuple[Ranks, float]], depth: int | None = None) -> np.ndarray:
    """Fuse rankings of the same rows by the best of the ranks: key = min(rank₁, factor · rank)
    over the ``guarantees`` (a ranking and its factor each; a factor of 0 leaves that ranking
    out); on equal keys the row whose key comes from a guarantee goes first (from the guarantee
    listed first, when two meet), then the better rank₁, then the row. So a guaranteed ranking's
    #r ends at worst at position factor·r + r − 1 for one guarantee (factor 3: its #1 at worst
    3rd, its #2 at worst 7th), a little lower when two guarantees' keys meet. Returns, per row,
    1 / (fused position), so higher is better.

    With ``depth`` only the rows that can reach the first ``depth`` positions are ranked: those
    with rank₁ ≤ depth or factor · rank ≤ depth in some guarantee (the ``depth`` best of
    ``primary`` have keys ≤ depth, so every row of the first ``depth`` positions has one). Ranks
    up to ``depth`` being distinct, those rows hold exactly the scores of the full fusion; every
    other row scores 0. Partial selections instead of full sorts (2wiki: 1.5 → ~0.2 ms).
    """
    rows = primary.rows
    guarantees = [(ranking, factor) for ranking, factor in guarantees if factor > 0]
    if depth is not None and 0 < depth and 4 * depth < rows.size:
        top1 = primary.best(depth)
        if top1.size == depth:   # else fewer rows than ``depth`` have a rank₁: rank them all
            tops = [ranking.best(int(np.floor(depth / factor))) for ranking, factor in guarantees]
            sub = np.union1d(top1, np.concatenate(tops)) if tops else top1
            r1 = np.full(sub.size, np.inf)
            r1[np.searchsorted(sub, top1)] = np.arange(1, top1.size + 1)
            keys = [(np.searchsorted(sub, top), factor * np.arange(1, top.size + 1))
                    for top, (_, factor) in zip(tops, guarantees)]
            scores = np.zeros(rows.size, dtype=np.float64)
            scores[sub] = min_rank_positions(rows[sub], r1, *_best_keys(sub.size, keys))
            return scores
    keys = [(slice(None), factor * ranking.all()) for ranking, factor in guarantees]
    return min_rank_positions(rows, primary.all(), *_best_keys(rows.size, keys))


def _best_keys(size: int, keys) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the lowest guarantee key and which guarantee gave it (the first on equal keys);
    ``keys`` holds (positions, key per position) for each guarantee, in order. inf: none."""
    best, which = np.full(size, np.inf), np.zeros(size)
    for g, (at, k) in enumerate(keys):
        better = k < best[at]
        best[at] = np.where(better, k, best[at])
        which[at] = np.where(better, g, which[at])
    return best, which


def siblings_by_prior(rows: np.ndarray, scores: np.ndarray, prior_of, groups_of, depth: int = 100) -> np.ndarray:
    """:func:`order_siblings` on the best ``depth`` of ``rows``: ``groups_of(rows)`` gives their
    title groups and ``prior_of(positions)`` the prior of ``rows[positions]`` (asked only when
    siblings meet). Returns the new scores of all ``rows``."""
    top = top_rows(rows, scores, depth)
    if top.size < 2:
        return scores
    group = np.asarray(groups_of(rows[top]))
    if np.unique(group).size == top.size:
        return scores
    # order_siblings works by position: hand it the top rows in row order (its tie-break)
    by_row = np.argsort(rows[top], kind="stable")
    prior = np.asarray(prior_of(top[by_row]))
    sub = order_siblings(scores[top][by_row], prior, group[by_row], depth=top.size)
    out = scores.copy()
    out[top[by_row]] = sub
    return out
