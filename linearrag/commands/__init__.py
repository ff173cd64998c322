"""Command-line entry points (also installed as console scripts; see pyproject.toml)."""

import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pin_query_threads() -> None:
    """One BLAS/OpenMP thread for query-time work, unless the user chose otherwise.

    Queries are small matrix-vector products; extra threads only fight over the cores (same
    results, lower latency). Must run before numpy is imported; builds keep all cores.
    """
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
