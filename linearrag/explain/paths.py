"""Shortest entity paths: how two entities of an index connect, sentence by sentence.

Two entities are adjacent when one sentence mentions both (the sentence–entity matrix M);
every hop of a path carries the sentence that links its two entities and that sentence's
passage. Breadth-first search from both ends touches only the neighbourhoods it needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

from ..retrieval.linking import link_entities

MAX_PATHS = 5


@dataclass
class Hop:
    entity: str                 # the entity this hop reaches
    sentence: str | None        # the sentence linking it to the previous entity (None for the start)
    passage_id: str | None


@dataclass
class PathResult:
    source: str                 # the entity names matched for the two ends
    target: str
    hops: int | None            # edges on a shortest path; None: not connected within max_hops
    paths: list[list[Hop]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def format_text(self) -> str:
        if self.hops is None:
            return f"{self.source} and {self.target}: no path within the hop limit"
        lines = [f"{self.source} → {self.target}: {self.hops} hop(s), {len(self.paths)} shortest path(s) shown"]
        for k, path in enumerate(self.paths, start=1):
            lines.append(f"path {k}: " + " → ".join(h.entity for h in path))
            for h in path[1:]:
                lines.append(f"   {h.entity}: \"{h.sentence}\" [{h.passage_id}]")
        return "\n".join(lines)


class EntityGraph:
    """Entity co-occurrence over the sentences of an index (built once per index)."""

    def __init__(self, M: sp.csr_matrix):
        self.M = M.tocsr()
        self.M_T = M.T.tocsr()

    def neighbours(self, e: int) -> np.ndarray:
        sentences = self.M_T.indices[self.M_T.indptr[e]:self.M_T.indptr[e + 1]]
        if sentences.size == 0:
            return sentences
        out = np.unique(self.M[sentences].indices)
        return out[out != e]

    def linking_sentence(self, a: int, b: int) -> int:
        """The first sentence (lowest index) that mentions both ``a`` and ``b``."""
        sa = self.M_T.indices[self.M_T.indptr[a]:self.M_T.indptr[a + 1]]
        sb = self.M_T.indices[self.M_T.indptr[b]:self.M_T.indptr[b + 1]]
        return int(np.intersect1d(sa, sb, assume_unique=True)[0])

    def shortest_paths(self, a: int, b: int, max_hops: int, limit: int = MAX_PATHS) -> list[list[int]]:
        """Up to ``limit`` shortest paths from ``a`` to ``b`` (entity ids), in a fixed order;
        [] when none is within ``max_hops``. Bidirectional breadth-first search."""
        if a == b:
            return [[a]]
        dist = {0: {a: 0}, 1: {b: 0}}        # side → {entity: distance from that side's end}
        frontier = {0: [a], 1: [b]}
        meet: set[int] = set()
        depth = {0: 0, 1: 0}
        while frontier[0] and frontier[1] and depth[0] + depth[1] < max_hops and not meet:
            side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
            depth[side] += 1
            nxt = []
            for e in frontier[side]:
                for n in self.neighbours(e).tolist():
                    if n not in dist[side]:
                        dist[side][n] = depth[side]
                        nxt.append(n)
                        if n in dist[1 - side]:
                            meet.add(n)
            frontier[side] = sorted(set(nxt))
        if not meet:
            return []
        best = min(dist[0][m] + dist[1][m] for m in meet)
        middles = sorted(m for m in meet if dist[0][m] + dist[1][m] == best)
        paths: list[list[int]] = []
        for m in middles:
            for left in self._walk_back(m, dist[0], limit):
                for right in self._walk_back(m, dist[1], limit):
                    paths.append(left + right[::-1][1:])
                    if len(paths) >= limit:
                        return paths
        return paths

    def _walk_back(self, node: int, dist: dict[int, int], limit: int) -> list[list[int]]:
        """Paths from the side's end to ``node`` along decreasing distance (at most ``limit``)."""
        if dist[node] == 0:
            return [[node]]
        out = []
        for prev in self.neighbours(node).tolist():
            if dist.get(prev) == dist[node] - 1:
                for path in self._walk_back(prev, dist, limit):
                    out.append(path + [node])
                    if len(out) >= limit:
                        return out
        return out


def describe_paths(graph: EntityGraph, index, a: int, b: int, max_hops: int) -> PathResult:
    """Shortest paths between entities ``a`` and ``b`` of ``index``, each hop with its sentence."""
    names = index.graph.entity_names
    found = graph.shortest_paths(a, b, max_hops)
    result = PathResult(names[a], names[b], (len(found[0]) - 1) if found else None)
    for path in found:
        hops = [Hop(names[path[0]], None, None)]
        for x, y in zip(path, path[1:]):
            s = graph.linking_sentence(x, y)
            hops.append(Hop(names[y], index.graph.sentences[s],
                            index.passage_ids[int(index.graph.sentence_passage[s])]))
        result.paths.append(hops)
    return result


def longest_exact_seed(seeds: dict[int, float], names) -> int | None:
    """Of the seeds linked exactly (score 1), the one with the longest name (ties: lowest id)."""
    exact = [e for e, s in seeds.items() if s >= 1.0]
    return max(exact, key=lambda e: (len(names[e]), -e)) if exact else None


def resolve_entity(retriever, name: str, floor: float, calibrated: bool = True) -> int | None:
    """The index entity a name refers to, matched as a query's entities are: a name n-gram
    (longest exact match; aliases applied), else the most similar entity by cosine when it
    reaches ``floor`` — read against the background when ``calibrated`` (as the default
    retrieval does, ``RetrievalParams.similarity``)."""
    q = retriever.analyze_queries([name], tags=True)[0]   # linked with lowercase="all" below
    space = retriever.space(retriever.params)

    def nearest(vector):
        return space.nearest_entity(vector, calibrated)

    seeds, linked, _ = link_entities(q.ngrams, q.mentions, q.mention_vectors, retriever.entity_lookup,
                                     retriever.index.graph.entity_names, floor,
                                     aliases=retriever.aliases.keys, lowercase="all", nearest=nearest)
    exact = longest_exact_seed(seeds, retriever.index.graph.entity_names)
    if exact is not None:
        return exact
    if len(retriever.index.graph.entity_names) == 0:
        return None
    best, sim = nearest(q.vector)
    return best if sim >= floor else None
