"""Stage 2: personalised PageRank on the passage–entity bipartite graph.

The walk uses C binarised: from a passage to each of its entities uniformly, from an
entity to each of its passages uniformly. With damping d and reset r the stationary
vector solves x = (1 − d) r + d W x, i.e. x = (1 − d)(I − d W)⁻¹ r. Nodes without
edges keep only their reset mass.

:func:`personalized_pagerank` iterates that over all nodes (the exact search space);
:func:`push_pagerank` is the forward-push form (Andersen, Chung and Lang 2006) for the
approximate one, which touches only the neighbourhood the reset reaches: each node u keeps an
estimate p(u) and a residual r(u); a node with r(u) ≥ ε·deg(u) keeps (1 − d)·r(u) and passes
d·r(u)/deg(u) to each neighbour. When no node qualifies, the exact vector is
x = p + Σ_u r(u)·ppr_u, so 0 ≤ x(v) − p(v) and Σ_v (x(v) − p(v)) = Σ_u r(u) < ε·Σ_u deg(u)
over the touched nodes; the reported ``residual`` is that sum. Pushes are done a round at a
time for every qualifying node (vectorised), which keeps the invariant.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .sparse import SparseVector, degrees, gather


@dataclass
class BipartiteWalk:
    """Transition operators of the passage–entity graph, precomputed once per index."""

    # float64, as the vectors are (a float32 matrix is converted at every product); the [E, P]
    # operator is column-major, so its product runs over the P columns rather than the E rows
    # (same sums in the same order; 2wiki: 160 → 100 µs a product)
    to_passages: sp.csr_matrix  # [P, E]: x_P += to_passages @ x_E
    to_entities: sp.csc_matrix  # [E, P]: x_E += to_entities @ x_P

    @classmethod
    def from_counts(cls, C: sp.csr_matrix) -> BipartiteWalk:
        A = C.copy().astype(np.float64)
        A.data[:] = 1.0
        deg_p = np.asarray(A.sum(axis=1)).ravel()
        deg_e = np.asarray(A.sum(axis=0)).ravel()
        inv_e = np.divide(1.0, deg_e, out=np.zeros_like(deg_e), where=deg_e > 0)
        inv_p = np.divide(1.0, deg_p, out=np.zeros_like(deg_p), where=deg_p > 0)
        to_passages = (A @ sp.diags(inv_e)).tocsr()
        to_entities = (A.T @ sp.diags(inv_p)).tocsc()
        to_passages.sort_indices()
        to_entities.sort_indices()
        return cls(to_passages, to_entities)

    def dense_matrix(self) -> np.ndarray:
        """W as a dense (P+E)×(P+E) array, passages first (for tests on small graphs)."""
        n_p, n_e = self.to_passages.shape
        W = np.zeros((n_p + n_e, n_p + n_e))
        W[:n_p, n_p:] = self.to_passages.toarray()
        W[n_p:, :n_p] = self.to_entities.toarray()
        return W


def personalized_pagerank(walk: BipartiteWalk, reset_passages: np.ndarray, reset_entities: np.ndarray,
                          damping: float, max_iterations: int = 100, tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """Power iteration from the reset vector; returns (passage scores, entity scores).

    The graph is bipartite, so each step updates the passages from the entities and then the
    entities from the *new* passages (Gauss–Seidel order): one step does the work of two
    Jacobi steps (x_P after k steps is the Jacobi iterate after 2k), same fixed point. The
    entity half is folded into the passage update, x_P ← c + d² T_PE T_EP x_P with
    c = (1 − d)(r_P + d T_PE r_E), and read off once at the end (x_E = (1 − d) r_E + d T_EP x_P):
    a step touches the entity vector once, in the product, and nothing else of length E.

    Stops after ``max_iterations`` steps or when (1 + d)·‖Δx_P‖₁ < ``tol``: the entity half
    moves by at most d·‖Δx_P‖₁ (T_EP's columns sum to at most 1), so the whole vector moved by
    less than ``tol``, and the error left is at most d²/(1 − d²) of that (the step contracts
    the passage error by d²).
    """
    d = damping
    base_e = (1.0 - d) * reset_entities.astype(np.float64)
    c = (1.0 - d) * reset_passages.astype(np.float64)
    c += d * (walk.to_passages @ base_e)
    x_p = reset_passages.astype(np.float64)
    d2 = d * d
    for _ in range(max_iterations):
        new_p = walk.to_passages @ (walk.to_entities @ x_p)
        new_p *= d2
        new_p += c
        x_p -= new_p
        change = (1.0 + d) * float(np.abs(x_p).sum())
        x_p = new_p
        if change < tol:
            break
    x_e = walk.to_entities @ x_p
    x_e *= d
    x_e += base_e
    return x_p, x_e


@dataclass
class PushResult:
    passages: SparseVector      # estimates on the touched passages
    entities: SparseVector
    residual: float             # Σ of what is left unpushed: the L1 error bound
    rounds: int
    touched: int


class PushScratch:
    """Residual, estimate and seen-flags for every node, allocated once per retriever and
    reused: a query writes only the nodes it touches and clears exactly those afterwards, so
    its cost is that neighbourhood's size (the zero pages of an untouched region are never
    even mapped)."""

    def __init__(self, n_nodes: int):
        self.res = np.zeros(n_nodes, dtype=np.float64)
        self.est = np.zeros(n_nodes, dtype=np.float64)
        self.seen = np.zeros(n_nodes, dtype=bool)
        self.stamp = np.zeros(n_nodes, dtype=np.int64)
        self.lock = threading.Lock()


def push_pagerank(graph, reset_passages: SparseVector, reset_entities: SparseVector, damping: float,
                  epsilon: float, max_rounds: int = 200, scratch: PushScratch | None = None) -> PushResult:
    """Forward-push personalised PageRank on the bipartite walk (see the module docstring).
    Node ids: passages 0..P−1, entities P + e. ``scratch``: reusable buffers for all nodes
    (a retriever's; None allocates them for this call)."""
    n_p = graph.n_passages
    n_nodes = n_p + len(graph.CT_indptr) - 1
    if scratch is None or len(scratch.res) != n_nodes or not scratch.lock.acquire(blocking=False):
        scratch, owned = PushScratch(n_nodes), None
    else:
        owned = scratch
    try:
        return _push(graph, reset_passages, reset_entities, damping, epsilon, max_rounds, scratch)
    finally:
        if owned is not None:
            owned.lock.release()


def _push(graph, reset_passages, reset_entities, damping, epsilon, max_rounds, scratch) -> PushResult:
    n_p = graph.n_passages
    res, est, seen = scratch.res, scratch.est, scratch.seen
    nodes = np.concatenate([np.asarray(reset_passages.rows, dtype=np.int64),
                            n_p + np.asarray(reset_entities.rows, dtype=np.int64)])
    values = np.concatenate([reset_passages.values, reset_entities.values]).astype(np.float64)
    keep = values > 0
    nodes, values = nodes[keep], values[keep]
    np.add.at(res, nodes, values)
    touched = np.unique(nodes)
    seen[touched] = True
    deg = _node_degrees(graph, touched)
    rounds = 0
    try:
        for rounds in range(1, max_rounds + 1):
            r_t = res[touched]
            front = (r_t > 0) & (r_t >= epsilon * np.maximum(deg, 1))
            if not front.any():
                rounds -= 1
                break
            f_nodes, f_res, f_deg = touched[front], r_t[front], deg[front]
            res[f_nodes] = 0.0
            est[f_nodes] += (1.0 - damping) * f_res
            share = np.divide(damping * f_res, f_deg, out=np.zeros_like(f_res), where=f_deg > 0)
            is_p = f_nodes < n_p
            targets, amounts = [], []
            if is_p.any():
                owner, cols, _ = gather(graph.C_indptr, graph.C_indices, f_nodes[is_p])
                targets.append(cols + n_p)
                amounts.append(share[is_p][owner])
            if (~is_p).any():
                owner, cols, _ = gather(graph.CT_indptr, graph.CT_indices, f_nodes[~is_p] - n_p)
                targets.append(cols)
                amounts.append(share[~is_p][owner])
            t = np.concatenate(targets) if targets else np.zeros(0, dtype=np.int64)
            if t.size == 0:
                continue
            np.add.at(res, t, np.concatenate(amounts))
            new = t[~seen[t]]
            if new.size:
                new = _distinct(new, scratch)
                seen[new] = True
                touched = np.concatenate([touched, new])
                deg = np.concatenate([deg, _node_degrees(graph, new)])
        touched = np.sort(touched)
        values_est = est[touched].copy()
        residual = float(res[touched].sum())
    finally:
        res[touched] = 0.0
        est[touched] = 0.0
        seen[touched] = False
    is_p = touched < n_p
    return PushResult(SparseVector(touched[is_p], values_est[is_p]), SparseVector(touched[~is_p] - n_p, values_est[~is_p]),
                      residual, rounds, int(touched.size))


def _distinct(values: np.ndarray, scratch: PushScratch) -> np.ndarray:
    """The distinct values, in first-seen order, without sorting (``scratch.stamp`` marks)."""
    stamp = scratch.stamp
    positions = np.arange(values.size)
    stamp[values[::-1]] = positions[::-1]      # fancy assignment: the last write wins, so the first position stays
    return values[stamp[values] == positions]


def _node_degrees(graph, nodes: np.ndarray) -> np.ndarray:
    n_p = graph.n_passages
    out = np.zeros(nodes.size, dtype=np.float64)
    p = nodes < n_p
    out[p] = degrees(graph.C_indptr, nodes[p])
    out[~p] = degrees(graph.CT_indptr, nodes[~p] - n_p)
    return out
