"""Command-line entry points (also installed as console scripts; see pyproject.toml).

Importing this package pins the BLAS/OpenMP thread pools to one thread unless the user
set them: queries are small matrix-vector products, and extra threads fight torch for the
cores (same results, lower latency). It must run before numpy is imported.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
