"""The on-disk index: one directory, written atomically, loaded with checks.

Layout (format version 1)::

    meta.json            format version, models, counts, build parameters and timings
    passages.jsonl       one {"id", "title", "text"} per line, in row order of C
    texts.json           {"sentences": [...], "entity_keys": [...], "entity_names": [...], "entity_labels": [...]}
    graph.npz            C (CSR parts), M (CSR parts), sentence_passage
    passage_emb.npy      float32 [P, dim], unit rows (memory-mapped on load)
    sentence_emb.npy     float32 [S, dim]
    entity_emb.npy       float32 [E, dim]
    bm25/                the lexical index (bm25s format)

A build writes into a hidden temporary directory beside the target and swaps it in
with renames, so an interrupted build leaves the previous index as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .corpus import Passage
from .errors import IndexFormatError
from .graph import TriGraph
from .jsonl import jsonl_lines

FORMAT_VERSION = 1
_EMBEDDINGS = ("passage_emb.npy", "sentence_emb.npy", "entity_emb.npy")
_REQUIRED = ("meta.json", "passages.jsonl", "texts.json", "graph.npz", *_EMBEDDINGS)


@dataclass
class Index:
    """A loaded index. Arrays are read-only; embeddings are memory-mapped."""

    path: Path
    meta: dict[str, Any]
    passage_ids: list[str]
    passage_titles: list[str]
    passage_texts: list[str]
    graph: TriGraph
    passage_emb: np.ndarray
    sentence_emb: np.ndarray
    entity_emb: np.ndarray
    _id_to_row: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def language(self) -> str:
        return self.meta["language"]

    def row_of(self, passage_id: str) -> int | None:
        if not self._id_to_row:
            self._id_to_row = {pid: i for i, pid in enumerate(self.passage_ids)}
        return self._id_to_row.get(passage_id)


def write_index(directory: Path, meta: dict, passages: list[Passage], graph: TriGraph,
                passage_emb: np.ndarray, sentence_emb: np.ndarray, entity_emb: np.ndarray) -> None:
    """Write every file of an index into ``directory`` (which must exist and be empty)."""
    with open(directory / "passages.jsonl", "w", encoding="utf-8") as f:
        for p in passages:
            f.write(json.dumps({"id": p.id, "title": p.title, "text": p.text}, ensure_ascii=False) + "\n")
    with open(directory / "texts.json", "w", encoding="utf-8") as f:
        json.dump({"sentences": graph.sentences, "entity_keys": graph.entity_keys,
                   "entity_names": graph.entity_names, "entity_labels": graph.entity_labels}, f, ensure_ascii=False)
    np.savez(
        directory / "graph.npz",
        C_data=graph.C.data, C_indices=graph.C.indices, C_indptr=graph.C.indptr, C_shape=np.array(graph.C.shape),
        M_indices=graph.M.indices, M_indptr=graph.M.indptr, M_shape=np.array(graph.M.shape),
        sentence_passage=graph.sentence_passage,
    )
    for name, arr in zip(_EMBEDDINGS, (passage_emb, sentence_emb, entity_emb)):
        np.save(directory / name, np.ascontiguousarray(arr, dtype=np.float32))
    meta = dict(meta, format_version=FORMAT_VERSION)
    with open(directory / "meta.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, ensure_ascii=False, indent=2)
        f.flush()
        os.fsync(f.fileno())


@contextmanager
def atomic_directory(target: Path):
    """Yield a fresh temporary directory beside ``target``; on success swap it in.

    On any exception (including KeyboardInterrupt) the temporary directory is removed
    and ``target`` is untouched.
    """
    target = Path(target).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    _recover_interrupted_swap(target)
    _remove_stale_temporaries(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
    os.chmod(tmp, 0o777 & ~_umask())   # mkdtemp makes it 0700: other users could not read the index
    try:
        yield tmp
        _swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _backup_path(target: Path) -> Path:
    return target.parent / f".{target.name}.previous"


def check_output(target: str | Path) -> None:
    """Fail early (before any model loads) on an ``--output`` that cannot become an index: a
    file, a directory that holds something other than an index, or a place we cannot write."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise IndexFormatError(f"{target}: is a file, not an index directory; choose another --output")
    if target.is_dir() and not (target / "meta.json").exists() and any(target.iterdir()):
        raise IndexFormatError(f"{target}: exists and is not an index; choose another --output or remove it")
    parent = target.resolve().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise IndexFormatError(f"{parent}: not writable, so {target} cannot be written; choose another --output")


def _swap_in(tmp: Path, target: Path) -> None:
    check_output(target)
    backup = _backup_path(target)
    if target.exists():
        if backup.exists():
            shutil.rmtree(backup)
        os.rename(target, backup)
    os.rename(tmp, target)
    shutil.rmtree(backup, ignore_errors=True)


def _recover_interrupted_swap(target: Path) -> None:
    """A kill between the two renames leaves only the backup: put it back."""
    backup = _backup_path(target)
    if backup.exists() and not target.exists():
        os.rename(backup, target)


def _remove_stale_temporaries(target: Path) -> None:
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        pid = stale.name.split(".tmp-", 1)[1].split("-", 1)[0]
        if not pid.isdigit() or not _pid_alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_meta(path: str | Path) -> dict[str, Any]:
    """Read and check ``meta.json`` of an index directory."""
    path = Path(path)
    _recover_interrupted_swap(path.resolve())
    if not path.is_dir():
        raise IndexFormatError(f"{path}: no index here; build one with scripts/build_graph.py --output {path}")
    meta_file = path / "meta.json"
    if not meta_file.exists():
        raise IndexFormatError(f"{path}: not an index (meta.json missing); rebuild it with scripts/build_graph.py")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(f"{meta_file}: corrupt ({exc}); rebuild the index") from None
    version = meta.get("format_version") if isinstance(meta, dict) else None
    if version != FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format version {version!r}, this linearrag reads version {FORMAT_VERSION}; rebuild the index"
        )
    return meta


def load_index(path: str | Path, mmap: bool = True) -> Index:
    """Load an index directory, checking its version, files and array shapes."""
    path = Path(path)
    meta = read_meta(path)
    for name in _REQUIRED:
        if not (path / name).exists():
            raise IndexFormatError(f"{path}: missing file {name}; the index is incomplete, rebuild it")
    try:
        passages = [json.loads(line) for _, line in jsonl_lines((path / "passages.jsonl").read_text(encoding="utf-8"))]
        texts = json.loads((path / "texts.json").read_text(encoding="utf-8"))
        with np.load(path / "graph.npz") as g:
            C = sp.csr_matrix((g["C_data"], g["C_indices"], g["C_indptr"]), shape=tuple(g["C_shape"]))
            m_shape = tuple(g["M_shape"])
            M = sp.csr_matrix((np.ones(len(g["M_indices"]), dtype=np.float32), g["M_indices"], g["M_indptr"]),
                              shape=m_shape)
            sentence_passage = g["sentence_passage"]
        embs = [np.load(path / name, mmap_mode="r" if mmap else None) for name in _EMBEDDINGS]
    except (ValueError, OSError, KeyError, json.JSONDecodeError, UnicodeDecodeError, EOFError,
            zipfile.BadZipFile) as exc:
        raise IndexFormatError(f"{path}: corrupt or truncated index file ({type(exc).__name__}: {exc}); rebuild it") from None
    counts = meta.get("counts", {})
    n_p, n_s, n_e = len(passages), len(texts.get("sentences", [])), len(texts.get("entity_keys", []))
    dim = meta.get("embedding", {}).get("dim")
    expected = {
        "passages": (counts.get("passages"), n_p), "sentences": (counts.get("sentences"), n_s),
        "entities": (counts.get("entities"), n_e),
        "C": ((n_p, n_e), C.shape), "M": ((n_s, n_e), M.shape), "sentence_passage": (n_s, len(sentence_passage)),
        "passage_emb": ((n_p, dim), embs[0].shape), "sentence_emb": ((n_s, dim), embs[1].shape),
        "entity_emb": ((n_e, dim), embs[2].shape),
    }
    for what, (want, got) in expected.items():
        if want != got:
            raise IndexFormatError(f"{path}: {what} has shape {got}, expected {want}; the index is corrupt, rebuild it")
    graph = TriGraph(
        sentences=texts["sentences"], sentence_passage=sentence_passage,
        entity_keys=texts["entity_keys"], entity_names=texts["entity_names"],
        entity_labels=texts.get("entity_labels") or [""] * n_e, C=C, M=M,
    )
    return Index(
        path=path, meta=meta,
        passage_ids=[p["id"] for p in passages], passage_titles=[p["title"] for p in passages],
        passage_texts=[p["text"] for p in passages], graph=graph,
        passage_emb=embs[0], sentence_emb=embs[1], entity_emb=embs[2],
    )
