"""A corpus overview without an LLM: entity communities of the co-occurrence graph (Leiden).

The graph: entities joined by the number of sentences that mention both (from M). Leiden
(igraph + leidenalg, modularity, a fixed seed) splits it into communities; each community is
described by its size, its top entities (PageRank on the entity graph) and its representative
passages (the passages holding the most PageRank of the community's entities).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

SEED = 42


@dataclass
class Community:
    id: int
    size: int                                   # entities
    top_entities: list[str]
    passages: list[dict] = field(default_factory=list)   # {"id", "title", "score"}


@dataclass
class Overview:
    entities: int                               # entities in the graph (with at least one neighbour)
    edges: int
    communities: list[Community]
    modularity: float

    def to_dict(self) -> dict:
        return asdict(self)

    def format_text(self) -> str:
        lines = [f"{len(self.communities)} communities of {self.entities} entities ({self.edges} edges), "
                 f"modularity {self.modularity:.3f}"]
        for c in self.communities:
            lines.append(f"#{c.id} ({c.size} entities): {', '.join(c.top_entities)}")
            for p in c.passages:
                title = f" {p['title']}" if p["title"] else ""
                lines.append(f"   [{p['id']}]{title}")
        return "\n".join(lines)


def cooccurrence(M: sp.csr_matrix) -> sp.csr_matrix:
    """Entity × entity weights: sentences shared (diagonal removed), upper triangle."""
    B = M.copy().tocsr()
    B.data[:] = 1.0
    A = (B.T @ B).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    return sp.triu(A, k=1).tocsr()


def corpus_overview(index, max_communities: int = 20, top_entities: int = 8, top_passages: int = 3,
                    min_size: int = 3) -> Overview:
    """Communities of ``index``'s entity graph, largest first (at most ``max_communities``,
    each of at least ``min_size`` entities). Deterministic for the same index."""
    import igraph as ig   # deferred: only the overview clusters
    import leidenalg   # deferred: only the overview clusters

    graph = index.graph
    upper = cooccurrence(graph.M).tocoo()
    used = np.unique(np.concatenate([upper.row, upper.col]))
    local = np.full(graph.M.shape[1], -1, dtype=np.int64)
    local[used] = np.arange(used.size)
    g = ig.Graph(n=int(used.size), edges=np.column_stack([local[upper.row], local[upper.col]]).tolist())
    g.es["weight"] = upper.data.astype(float).tolist()
    partition = leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, weights="weight", seed=SEED)
    rank = np.asarray(g.pagerank(weights="weight"), dtype=np.float64)
    membership = np.asarray(partition.membership)
    names = graph.entity_names
    C = graph.C.tocsc()
    communities = []
    sizes = np.bincount(membership) if membership.size else np.zeros(0, dtype=np.int64)
    order = sorted(range(len(sizes)), key=lambda c: (-sizes[c], c))
    for c in order[:max_communities]:
        if sizes[c] < min_size:
            break
        members = np.flatnonzero(membership == c)
        top = members[np.lexsort((members, -rank[members]))][:top_entities]
        weights = np.zeros(graph.M.shape[1])
        weights[used[members]] = rank[members]
        passage_score = C @ weights
        best = np.flatnonzero(passage_score > 0)
        best = best[np.lexsort((best, -passage_score[best]))][:top_passages]
        communities.append(Community(
            id=len(communities) + 1, size=int(sizes[c]), top_entities=[names[used[e]] for e in top],
            passages=[{"id": index.passage_ids[p], "title": index.passage_titles[p],
                       "score": round(float(passage_score[p]), 6)} for p in best]))
    return Overview(entities=int(used.size), edges=int(upper.nnz), communities=communities,
                    modularity=round(float(partition.modularity), 4))
