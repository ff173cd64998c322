"""Durable files: arrays, JSON and string columns written and fsynced, read memory-mapped.

A string column is two files: ``<name>.bin`` (the UTF-8 strings one after another) and
``<name>.off.npy`` (int64 offsets, one more than the strings). Reading one string reads only
its bytes, so opening a column costs nothing however many strings it holds.
"""

from __future__ import annotations

import hashlib
import json
import mmap as mmap_module
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def fsync_path(path: Path) -> None:
    """Flush a file's (or a directory's entries') data to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(directory: Path) -> None:
    """fsync every file and directory below ``directory`` (inclusive), children first."""
    for root, dirs, files in os.walk(directory, topdown=False):
        for name in files:
            fsync_path(Path(root) / name)
        fsync_path(Path(root))


def save_array(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.save(f, np.ascontiguousarray(array), allow_pickle=False)


def load_array(path: Path, mmap: bool = True, random_access: bool = False) -> np.ndarray:
    """An ``.npy`` array, memory-mapped (read-only) unless ``mmap`` is false. A mapped array is
    handed out as a plain ndarray over the mapping (np.memmap's per-index overhead is gone).

    ``random_access``: the array is read a few rows at a time in no order (vectors, graph
    rows), so the kernel is told not to read ahead (``MADV_RANDOM``). Otherwise, with the file
    not in the page cache, every scattered row read pulls in a whole read-ahead window: on the
    million-passage replica, opening a retriever (its fixed 1,024-row background samples) read
    gigabytes from disk and took 12 s."""
    if not mmap:
        return np.load(path, allow_pickle=False)
    mapped = np.load(path, mmap_mode="r", allow_pickle=False)
    handle = getattr(mapped, "_mmap", None)
    if random_access and handle is not None and hasattr(mmap_module, "MADV_RANDOM"):
        handle.madvise(mmap_module.MADV_RANDOM)
    return np.asarray(mapped)


def as_float32(array) -> np.ndarray:
    """A float32 array of stored (float16) vectors, for products with a query vector.

    numpy casts float16 to float32 without SIMD below AVX-512: ~3 ns a value here (1,500 rows
    of 384: 1.9 ms), torch ~30× less. Both are exact (every float16 is a float32), so torch
    does it when this process has imported torch already (a query process has: the spaCy
    models and the query encoder bring it)."""
    a = np.asarray(array)
    if a.dtype == np.float32:
        return a
    torch = sys.modules.get("torch")
    if a.dtype != np.float16 or torch is None or a.ndim == 0:   # (ascontiguousarray makes 0-d 1-d)
        return a.astype(np.float32)
    a = np.ascontiguousarray(a)
    with warnings.catch_warnings():   # a read-only (memory-mapped) array: only read here
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a).float().numpy()


def save_json(path: Path, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))


def write_durably(path: Path, text: str) -> None:
    """Write a small text file and fsync it (the file only: the caller syncs the directory)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class StringColumn(Sequence[str]):
    """A read-only list of strings backed by a UTF-8 blob and an offsets array."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray):
        self._blob = blob
        self._offsets = offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        return bytes(self._blob[start:end]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        data = bytes(self._blob[:])   # one copy, then cut at the byte offsets
        for k in range(len(self)):
            yield data[int(self._offsets[k]):int(self._offsets[k + 1])].decode("utf-8")

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def tolist(self) -> list[str]:
        return list(self)


def write_strings(directory: Path, name: str, strings: Iterable[str]) -> None:
    offsets = [0]
    with open(directory / f"{name}.bin", "wb") as f:
        for s in strings:
            data = s.encode("utf-8")
            f.write(data)
            offsets.append(offsets[-1] + len(data))
    save_array(directory / f"{name}.off.npy", np.asarray(offsets, dtype=np.int64))


def read_strings(directory: Path, name: str) -> StringColumn:
    offsets = load_array(directory / f"{name}.off.npy")
    blob_path = directory / f"{name}.bin"
    size = blob_path.stat().st_size
    if offsets.ndim != 1 or len(offsets) < 1 or int(offsets[-1]) != size:
        raise ValueError(f"{name}: offsets do not match the {size}-byte text file")
    blob = np.asarray(np.memmap(blob_path, dtype=np.uint8, mode="r")) if size else np.zeros(0, dtype=np.uint8)
    return StringColumn(blob, offsets)


# ---- key tables: string → row without parsing every key at open ------------------------------

def key_hash(key: str) -> int:
    """A stable 64-bit hash of a key (the same in every process and Python version)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


def write_key_table(directory: Path, name: str, keys: Iterable[str]) -> None:
    """``<name>.hash.npy`` (sorted uint64 hashes of the keys) and ``<name>.rows.npy`` (the row of
    each, in that order): a lookup is one binary search on memory-mapped arrays."""
    hashes = np.fromiter((key_hash(k) for k in keys), dtype=np.uint64)
    order = np.argsort(hashes, kind="stable")
    save_array(directory / f"{name}.hash.npy", hashes[order])
    save_array(directory / f"{name}.rows.npy", order.astype(np.int64))


class KeyTable(Mapping):
    """A read-only mapping key → row over a key column (``keys[row]`` is the key) and its key
    table; opening it reads nothing, a lookup costs one binary search and one string read."""

    def __init__(self, keys: Sequence[str], hashes: np.ndarray, rows: np.ndarray):
        if len(hashes) != len(keys) or len(rows) != len(keys):
            raise ValueError(f"key table has {len(hashes)} hashes and {len(rows)} rows for {len(keys)} keys")
        self._keys, self._hashes, self._rows = keys, hashes, rows

    @classmethod
    def open(cls, directory: Path, name: str, keys: Sequence[str]) -> KeyTable:
        return cls(keys, load_array(directory / f"{name}.hash.npy"), load_array(directory / f"{name}.rows.npy"))

    def __getitem__(self, key: str) -> int:
        if not isinstance(key, str):
            raise KeyError(key)
        h = np.uint64(key_hash(key))
        row = self._row_from(int(np.searchsorted(self._hashes, h)), h, key)
        if row is None:
            raise KeyError(key)
        return row

    def _row_from(self, i: int, h, key: str) -> int | None:
        """The row of ``key`` among the equal hashes ``h`` from sorted position ``i`` on."""
        while i < len(self._hashes) and self._hashes[i] == h:
            row = int(self._rows[i])
            if self._keys[row] == key:
                return row
            i += 1
        return None

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def resolve(self, keys: Iterable[str]) -> dict[str, int]:
        """key → row for those of ``keys`` in the table: one vectorised binary search, and a
        string comparison only where a hash matches (a query's ~100 n-grams in one go)."""
        keys = [k for k in dict.fromkeys(keys) if isinstance(k, str)]
        if not keys or not len(self._hashes):
            return {}
        hashes = np.fromiter((key_hash(k) for k in keys), dtype=np.uint64, count=len(keys))
        at = np.searchsorted(self._hashes, hashes)
        hit = at < len(self._hashes)
        hit[hit] = self._hashes[at[hit]] == hashes[hit]
        out: dict[str, int] = {}
        for k in np.flatnonzero(hit).tolist():
            row = self._row_from(int(at[k]), hashes[k], keys[k])
            if row is not None:
                out[keys[k]] = row
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def is_mapped(array: np.ndarray) -> bool:
    """Whether an array's memory is a file mapping (not read into the process)."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = getattr(array, "base", None)
        if array is not None and not isinstance(array, np.ndarray):
            import mmap

            return isinstance(array, mmap.mmap)
    return False
