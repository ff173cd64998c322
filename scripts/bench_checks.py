"""What the open-time structure checks cost on an index N times larger than a given one.

  uv run scripts/bench_checks.py --index indexes/2wiki --times 164      # ≈ 1M passages from 2wiki

Every array the checks read (CSR offsets and indices of C, M and their transposes, the
sentence→passage map, each passage's first sentence, the entity key table, every string
column's offsets) is tiled ``--times`` times into valid arrays of that size (a block-diagonal
index: offsets and indices shifted per copy), written as ``.npy`` files, memory-mapped as an
index opens them, and checked with the same functions (``validate.index_structure``,
``validate.offsets``), page cache warm. Prints one JSON line: the sizes, the seconds of each
check and their total (median of ``--repeat`` runs), and the CRC-32 cost of reading a passage.
"""

import argparse
import json
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from linearrag import validate  # noqa: E402
from linearrag.files import KeyTable, load_array, save_array  # noqa: E402
from linearrag.index.store import load_index  # noqa: E402

_CSR = {"C": ("C_indptr", "C_indices", "passages", "entities"), "M": ("M_indptr", "M_indices", "sentences", "entities"),
        "CT": ("CT_indptr", "CT_indices", "entities", "passages"),
        "MT": ("MT_indptr", "MT_indices", "entities", "sentences")}
_STRINGS = ("passage_ids", "passage_titles", "passage_texts", "sentences", "entity_keys", "entity_names",
            "entity_labels")


def tile_offsets(offsets: np.ndarray, times: int) -> np.ndarray:
    step = int(offsets[-1])
    parts = [offsets[:-1] + k * step for k in range(times)] + [np.array([times * step])]
    return np.concatenate(parts).astype(offsets.dtype)


def tile_indices(indices: np.ndarray, bound: int, times: int) -> np.ndarray:
    return np.concatenate([indices.astype(np.int64) + k * bound for k in range(times)]).astype(indices.dtype)


def tiled(index, times: int) -> tuple[dict, dict, tuple]:
    """The arrays of ``index`` tiled ``times`` times, and the tiled sizes."""
    g, counts = index.graph, index.meta["counts"]
    n = {k: counts[k] for k in ("passages", "sentences", "entities")}
    arrays = {}
    for indptr, idx, rows, cols in _CSR.values():
        arrays[indptr] = tile_offsets(np.asarray(g.arrays[indptr]), times)
        arrays[idx] = tile_indices(np.asarray(g.arrays[idx]), n[cols], times)
    for name in ("C_data", "CT_data"):
        arrays[name] = np.tile(np.asarray(g.arrays[name]), times)
    arrays["sentence_passage"] = tile_indices(np.asarray(g.sentence_passage), n["passages"], times)
    arrays["passage_sentences"] = tile_offsets(np.asarray(g.arrays["passage_sentences"]), times)
    rows = tile_indices(np.asarray(index.entity_lookup._rows), n["entities"], times)
    hashes = np.sort(np.tile(np.asarray(index.entity_lookup._hashes), times))
    strings = {name: tile_offsets(np.asarray(_column(index, name)._offsets), times) for name in _STRINGS}
    shape = tuple(times * n[k] for k in ("passages", "sentences", "entities"))
    return arrays | {"key_rows": rows, "key_hashes": hashes}, strings, shape


def _column(index, name):
    return getattr(index, name) if hasattr(index, name) else getattr(index.graph, name)


def run_checks(folder: Path, arrays: dict, strings: dict, shape: tuple) -> dict[str, float]:
    """Seconds of each check over the mapped tiled arrays."""
    mapped = {k: load_array(folder / f"{k}.npy", random_access=True) for k in arrays}
    lookup = KeyTable(range(shape[2]), mapped.pop("key_hashes"), mapped.pop("key_rows"))
    out = {}
    t0 = time.perf_counter()
    validate.index_structure(mapped, lookup, shape)
    out["graph_and_keys"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for name in strings:
        offsets = load_array(folder / f"{name}.off.npy")
        validate.offsets(offsets, len(offsets) - 1, int(offsets[-1]), name)
    out["string_offsets"] = time.perf_counter() - t0
    out["total"] = out["graph_and_keys"] + out["string_offsets"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--times", type=int, default=164, help="copies of the index (default 164: 2wiki ≈ 1M passages)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.times < 1 or args.repeat < 1:
        print("error: --times and --repeat must be ≥ 1", file=sys.stderr)
        return 2
    index = load_index(args.index)
    arrays, strings, shape = tiled(index, args.times)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, arr in arrays.items():
            save_array(folder / f"{name}.npy", arr)
        for name, offsets in strings.items():
            save_array(folder / f"{name}.off.npy", offsets)
        runs = [run_checks(folder, arrays, strings, shape) for _ in range(args.repeat)]
    texts = [index.passage_texts[i].encode() for i in range(min(1000, len(index.passage_ids)))]
    t0 = time.perf_counter()
    for t in texts:
        zlib.crc32(t)
    crc_us = (time.perf_counter() - t0) / len(texts) * 1e6
    median = {k: round(float(np.median([r[k] for r in runs])), 4) for k in runs[0]}
    print(json.dumps({"passages": shape[0], "sentences": shape[1], "entities": shape[2],
                      "entries": {k: int(len(v)) for k, v in arrays.items() if k.endswith("indices")},
                      "seconds": median, "crc_per_passage_us": round(crc_us, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
