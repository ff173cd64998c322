"""Durable files: arrays, JSON and string columns written and fsynced, read memory-mapped.

A string column is two files: ``<name>.bin`` (the UTF-8 strings one after another) and
``<name>.off.npy`` (int64 offsets, one more than the strings). Reading one string reads only
its bytes, so opening a column costs nothing however many strings it holds.
"""

from __future__ import annotations

import errno
import hashlib
import json
import mmap as mmap_module
import os
import resource
import sys
import warnings
import weakref
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import validate
from .errors import IndexFormatError


def fsync_path(path: Path) -> None:
    """Flush a file's (or a directory's entries') data to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(directory: Path) -> None:
    """fsync every file and directory below ``directory`` (inclusive), children first."""
    for root, _dirs, files in os.walk(directory, topdown=False):
        for name in files:
            fsync_path(Path(root) / name)
        fsync_path(Path(root))


def save_array(path: Path, array: np.ndarray) -> None:
    """Write ``array`` as ``.npy`` (format 1.0). The data goes through Python's file object, so a
    failed write is an OSError with its errno and the file's name (numpy's own writer reports a
    full disk as "N requested and M written", with neither)."""
    array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    if array.dtype.hasobject:
        raise TypeError(f"{path.name}: object arrays are not stored")
    try:
        with open(path, "wb") as f:
            np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(array))
            if array.size:
                f.write(array.reshape(-1).view(np.uint8))
    except OSError as exc:
        raise with_filename(exc, path) from None


def with_filename(exc: OSError, path: Path) -> OSError:
    """``exc`` with ``path`` as its file name and an errno (writes through a file object lose
    the name; numpy and some libraries report a short write with no errno: the cause is then
    read off the file system and the process's file-size limit)."""
    code = exc.errno or _short_write_cause(path)
    if exc.filename is None or code != exc.errno:
        return OSError(code, os.strerror(code) if code else (exc.strerror or str(exc)), str(path))
    return exc


def _short_write_cause(path: Path) -> int | None:
    try:
        st = os.statvfs(path.parent)
        if st.f_bavail * st.f_frsize < (1 << 20):
            return errno.ENOSPC
    except OSError:
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return errno.EFBIG if soft != resource.RLIM_INFINITY else None


def load_array(path: Path, mmap: bool = True, random_access: bool = False) -> np.ndarray:
    """An ``.npy`` array, memory-mapped (read-only) unless ``mmap`` is false. A mapped array is
    handed out as a plain ndarray over the mapping (np.memmap's per-index overhead is gone).

    ``random_access``: the array is read a few rows at a time in no order (vectors, graph
    rows), so the kernel is told not to read ahead (``MADV_RANDOM``). Otherwise, with the file
    not in the page cache, every scattered row read pulls in a whole read-ahead window: on the
    million-passage replica, opening a retriever (its fixed 1,024-row background samples) read
    gigabytes from disk and took 12 s."""
    try:
        if not mmap:
            return np.load(path, allow_pickle=False)
        mapped = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError:
        raise
    except Exception as exc:   # a damaged header: numpy parses it with tokenize and ast
        raise ValueError(f"{path.name}: not a readable .npy file ({type(exc).__name__})") from None
    handle = getattr(mapped, "_mmap", None)
    if random_access and handle is not None and hasattr(mmap_module, "MADV_RANDOM"):
        handle.madvise(mmap_module.MADV_RANDOM)
    return np.asarray(mapped)


# Tables whose chosen rows are read from the file (see read_rows): id(array) → (a weak
# reference to the array, an open descriptor, where its data starts in the file).
_ROW_SOURCES: dict[int, tuple[weakref.ref, int, int]] = {}


def load_vector_table(path: Path, mmap: bool = True) -> np.ndarray:
    """A vector table (``.npy``, [rows, dim]) as :func:`load_array` maps it for random access,
    whose chosen rows :func:`read_rows` reads with ``pread`` instead of through the mapping."""
    if not mmap or not hasattr(os, "preadv"):
        return load_array(path, mmap=mmap, random_access=True)
    array = load_array(path, mmap=True, random_access=True)
    if array.ndim != 2 or not array.flags.c_contiguous or array.dtype.hasobject:
        return array
    with open(path, "rb") as f:   # where the data starts: after the .npy header
        version = np.lib.format.read_magic(f)
        if version != (1, 0):   # (np.save writes 1.0; others are read through the mapping)
            return array
        np.lib.format.read_array_header_1_0(f)
        offset = f.tell()
    fd = os.open(path, os.O_RDONLY)
    key = id(array)
    _ROW_SOURCES[key] = (weakref.ref(array), fd, offset)
    weakref.finalize(array, _forget_rows, key, fd)
    return array


def _forget_rows(key: int, fd: int) -> None:
    _ROW_SOURCES.pop(key, None)
    os.close(fd)


def read_rows(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``table[rows]``; for a table opened with :func:`load_vector_table`, read from the file.

    A query reads a few hundred scattered rows of tables of gigabytes (sentence, passage and
    entity vectors at a million passages). Through the mapping, every row maps the page-cache
    folio holding it into the process, and with the large folios a sequentially read file gets,
    that was ~57 KB per 768-byte row: 2.7 GB of the sentence table's 3 GB were resident after
    220 queries. ``preadv`` copies just the rows (consecutive ones in one call) from the same
    page cache and maps nothing: ~1 µs a row. A file that ends early is an IndexFormatError."""
    rows = np.asarray(rows, dtype=np.int64)
    entry = _ROW_SOURCES.get(id(table))
    if entry is None or entry[0]() is not table or rows.ndim != 1 or rows.size == 0:
        return table[rows]
    _, fd, offset = entry
    n, dim = table.shape
    if rows.min() < 0 or rows.max() >= n:
        return table[rows]   # numpy's own IndexError (negative rows: its own meaning)
    unique, inverse = np.unique(rows, return_inverse=True)
    out = np.empty((unique.size, dim), dtype=table.dtype)
    view = memoryview(out).cast("B")
    row_bytes = dim * table.dtype.itemsize
    starts = np.flatnonzero(np.diff(unique, prepend=-2) != 1)   # runs of consecutive rows
    ends = np.append(starts[1:], unique.size)
    for a, b in zip(starts.tolist(), ends.tolist()):
        want = (b - a) * row_bytes
        got = os.preadv(fd, [view[a * row_bytes:b * row_bytes]], offset + int(unique[a]) * row_bytes)
        if got != want:
            raise IndexFormatError(f"a vector file of this index ends early (row {int(unique[a])}); rebuild the index")
    return out if unique.size == rows.size and np.array_equal(unique, rows) else out[inverse]


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
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
    except OSError as exc:
        raise with_filename(exc, path) from None


def write_durably(path: Path, text: str) -> None:
    """Write a small text file and fsync it (the file only: the caller syncs the directory)."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise with_filename(exc, path) from None


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class StringColumn(Sequence[str]):
    """A read-only list of strings backed by a UTF-8 blob and an offsets array.

    With ``crc`` (a CRC-32 per string, written since store format 3.1) every string read is
    checked against it, so damaged bytes are an :class:`IndexFormatError` naming the file,
    never another string's text or a decoding traceback (~1 µs a passage)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, crc: np.ndarray | None = None,
                 where: str = "a text column"):
        self._blob = blob
        self._offsets = offsets
        self._crc = crc
        self._where = where

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
        return self._decode(i, bytes(self._blob[start:end]))

    def _decode(self, i: int, data: bytes) -> str:
        if self._crc is not None and zlib.crc32(data) != int(self._crc[i]):
            raise IndexFormatError(f"{self._where}: string {i} does not match its checksum; the index is damaged, "
                                   "rebuild it (linearrag check INDEX names every damaged file)")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise IndexFormatError(f"{self._where}: string {i} is not UTF-8; the index is damaged, "
                                   "rebuild it (linearrag check INDEX names every damaged file)") from None

    def __iter__(self) -> Iterator[str]:
        data = bytes(self._blob[:])   # one copy, then cut at the byte offsets
        for k in range(len(self)):
            yield self._decode(k, data[int(self._offsets[k]):int(self._offsets[k + 1])])

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def tolist(self) -> list[str]:
        return list(self)


def write_strings(directory: Path, name: str, strings: Iterable[str]) -> None:
    """``<name>.bin`` (the UTF-8 strings), ``<name>.off.npy`` (offsets) and ``<name>.crc.npy``
    (a CRC-32 per string)."""
    offsets, crcs = [0], []
    path = directory / f"{name}.bin"
    try:
        with open(path, "wb") as f:
            for s in strings:
                data = s.encode("utf-8")
                f.write(data)
                offsets.append(offsets[-1] + len(data))
                crcs.append(zlib.crc32(data))
    except OSError as exc:
        raise with_filename(exc, path) from None
    save_array(directory / f"{name}.off.npy", np.asarray(offsets, dtype=np.int64))
    save_array(directory / f"{name}.crc.npy", np.asarray(crcs, dtype=np.uint32))


def read_strings(directory: Path, name: str, checked: bool = True) -> StringColumn:
    """A string column, its structure checked (vectorised): offsets start at 0, never decrease
    and end at the text file's size; a CRC per string when the column has them. ``checked``
    False skips the monotony check and the CRCs (only to measure what they cost)."""
    offsets = load_array(directory / f"{name}.off.npy")
    blob_path = directory / f"{name}.bin"
    size = blob_path.stat().st_size
    if offsets.ndim != 1 or len(offsets) < 1 or offsets.dtype.kind not in "iu" or int(offsets[-1]) != size \
            or int(offsets[0]) != 0:
        raise ValueError(f"{name}.off.npy: offsets do not match the {size}-byte text file")
    if checked:
        validate.offsets(offsets, len(offsets) - 1, size, f"{name}.off.npy")
    crc_path = directory / f"{name}.crc.npy"
    crc = load_array(crc_path) if checked and crc_path.exists() else None
    if crc is not None and (crc.ndim != 1 or len(crc) != len(offsets) - 1):
        raise ValueError(f"{name}.crc.npy: {len(crc)} checksums for {len(offsets) - 1} strings")
    blob = np.asarray(np.memmap(blob_path, dtype=np.uint8, mode="r")) if size else np.zeros(0, dtype=np.uint8)
    return StringColumn(blob, offsets, crc, where=str(blob_path))


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

    def validate(self, bound: int, name: str) -> None:
        """Structural check (vectorised): hashes sorted, rows within ``[0, bound)``."""
        validate.non_decreasing(self._hashes, f"{name}.hash.npy")
        validate.indices(self._rows, max(bound, 1), f"{name}.rows.npy")

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
            return isinstance(array, mmap_module.mmap)
    return False
