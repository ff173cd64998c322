"""Stage 2: personalised PageRank on the passage–entity bipartite graph.

The walk uses C binarised: from a passage to each of its entities uniformly, from an
entity to each of its passages uniformly. With damping d and reset r the stationary
vector solves x = (1 − d) r + d W x, i.e. x = (1 − d)(I − d W)⁻¹ r. Nodes without
edges keep only their reset mass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class BipartiteWalk:
    """Transition operators of the passage–entity graph, precomputed once per index."""

    to_passages: sp.csr_matrix  # [P, E]: x_P += to_passages @ x_E
    to_entities: sp.csr_matrix  # [E, P]: x_E += to_entities @ x_P

    @classmethod
    def from_counts(cls, C: sp.csr_matrix) -> BipartiteWalk:
        A = C.copy().astype(np.float32)
        A.data[:] = 1.0
        deg_p = np.asarray(A.sum(axis=1)).ravel()
        deg_e = np.asarray(A.sum(axis=0)).ravel()
        inv_e = np.divide(1.0, deg_e, out=np.zeros_like(deg_e), where=deg_e > 0)
        inv_p = np.divide(1.0, deg_p, out=np.zeros_like(deg_p), where=deg_p > 0)
        to_passages = (A @ sp.diags(inv_e)).tocsr()
        to_entities = (A.T @ sp.diags(inv_p)).tocsr()
        return cls(to_passages.astype(np.float32), to_entities.astype(np.float32))

    def dense_matrix(self) -> np.ndarray:
        """W as a dense (P+E)×(P+E) array, passages first (for tests on small graphs)."""
        n_p, n_e = self.to_passages.shape
        W = np.zeros((n_p + n_e, n_p + n_e))
        W[:n_p, n_p:] = self.to_passages.toarray()
        W[n_p:, :n_p] = self.to_entities.toarray()
        return W


def personalized_pagerank(walk: BipartiteWalk, reset_passages: np.ndarray, reset_entities: np.ndarray,
                          damping: float, max_iterations: int = 100, tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """Power iteration from the reset vector; returns (passage scores, entity scores).

    The graph is bipartite, so each step updates the passages from the entities and then the
    entities from the *new* passages (Gauss–Seidel order): one step does the work of two
    Jacobi steps (x_P after k steps is the Jacobi iterate after 2k), same fixed point.
    Stops when the L1 change of a step is below ``tol`` or after ``max_iterations`` steps.
    """
    d = damping
    base_p = (1.0 - d) * reset_passages.astype(np.float64)
    base_e = (1.0 - d) * reset_entities.astype(np.float64)
    x_p = reset_passages.astype(np.float64)
    x_e = base_e + d * (walk.to_entities @ x_p)
    for _ in range(max_iterations):
        new_p = walk.to_passages @ x_e
        new_p *= d
        new_p += base_p
        new_e = walk.to_entities @ new_p
        new_e *= d
        new_e += base_e
        x_p -= new_p
        x_e -= new_e
        change = np.abs(x_p).sum() + np.abs(x_e).sum()
        x_p, x_e = new_p, new_e
        if change < tol:
            break
    return x_p, x_e
