"""The on-disk index: immutable segments, a global layer per generation, one commit point.

Layout of an index directory (format version 2; docs/store.md explains the design)::

    CURRENT                  the name of the committed manifest ("manifest-000007.json")
    LOCK                     writers hold an exclusive flock on it; readers never touch it
    manifest-000007.json     format version, generation, meta, live segments with their
                             deleted passage ids, the global directory, size + SHA-256 of
                             every file the generation uses
    seg-000007-0/            a segment (segment.py): analysis and vectors of some passages
    g-000007/                the global layer of generation 7 (merge.py):
        passage_ids|passage_titles|passage_texts|passage_cites|sentences|entity_keys|entity_names|
        entity_labels .bin + .off.npy + .crc.npy   string columns (a CRC-32 per string)
        C_data|C_indices|C_indptr|M_indices|M_indptr|sentence_passage .npy
        CT_data|CT_indices|CT_indptr|MT_indices|MT_indptr .npy   C and M by entity (transposed)
        passage_sentences.npy   per passage, its first sentence (P + 1 offsets)
        entity_keys.hash|rows .npy   key table: entity key → row without parsing the keys
        passage_emb|sentence_emb|entity_emb .npy   unit rows, float16 (VECTOR_DTYPE)
        passages|entities .usearch   HNSW graphs over passage and entity vectors (ann.py)
        bm25/                the lexical index (bm25s format + a vocabulary key table)
        sources.json         {source: content hash} of the live passages (for --update)
        source_roots.json    the input root each source came from (sources.py)

A commit writes new segment and global directories, fsyncs every file and directory, writes
and fsyncs the manifest, then replaces ``CURRENT`` atomically and fsyncs the index directory.
A crash before that replace leaves the previous generation; after it, the new one. Readers
read ``CURRENT``, then only files the manifest names, and never write.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..ann import VectorSearch, build_ann
from .. import validate
from ..errors import IndexFormatError
from .meta import IndexMeta
from ..passage import Citation
from ..files import (KeyTable, StringColumn, fsync_path, fsync_tree, load_array, load_vector_table, read_strings,
                    save_array, save_json, sha256_file, write_durably, write_key_table, write_strings)

FORMAT_VERSION = 3
CURRENT = "CURRENT"
LOCK = "LOCK"
KEEP_GENERATIONS = 3      # manifests (and their files) kept for readers still opening an older one
MANIFEST_NAME = re.compile(r"^manifest-(\d{6,})\.json$")
_STRINGS = ("passage_ids", "passage_titles", "passage_texts", "sentences", "entity_keys", "entity_names",
            "entity_labels")
CITES = "passage_cites"   # per passage, its Citation as JSON (since citations; optional when read)
_ARRAYS = ("C_data", "C_indices", "C_indptr", "M_indices", "M_indptr", "sentence_passage",
           "CT_data", "CT_indices", "CT_indptr", "MT_indices", "MT_indptr", "passage_sentences")
# Vectors are stored in float16: half the disk and page cache; on every benchmark set the
# rankings equal those from float32 (docs/scale.md). Readers compute in float32.
VECTOR_DTYPE = np.float16
PASSAGE_ANN = "passages.usearch"
ENTITY_ANN = "entities.usearch"
_EMBEDDINGS = ("passage_emb", "sentence_emb", "entity_emb")


class StoredGraph:
    """The Tri-Graph of a loaded index: raw CSR arrays of C, M and their transposes, memory-mapped;
    scipy matrices are made on first use (the exact retrieval path), never at open."""

    def __init__(self, sentences, sentence_passage, entity_keys, entity_names, entity_labels, arrays, shape):
        self.sentences, self.sentence_passage = sentences, sentence_passage
        self.entity_keys, self.entity_names, self.entity_labels = entity_keys, entity_names, entity_labels
        self.arrays = arrays
        self.n_passages, self.n_sentences, self.n_entities = shape
        for name, arr in arrays.items():
            setattr(self, name, arr)

    @cached_property
    def C(self) -> sp.csr_matrix:
        a = self.arrays
        return sp.csr_matrix((a["C_data"], a["C_indices"], a["C_indptr"]), shape=(self.n_passages, self.n_entities))

    @cached_property
    def M(self) -> sp.csr_matrix:
        a = self.arrays
        return sp.csr_matrix((np.ones(len(a["M_indices"]), dtype=np.float32), a["M_indices"], a["M_indptr"]),
                             shape=(self.n_sentences, self.n_entities))

    @cached_property
    def M_T(self) -> sp.csr_matrix:
        a = self.arrays
        return sp.csr_matrix((np.ones(len(a["MT_indices"]), dtype=np.float32), a["MT_indices"], a["MT_indptr"]),
                             shape=(self.n_entities, self.n_sentences))


@dataclass
class Index:
    """A loaded index: one generation, read-only, arrays memory-mapped."""

    path: Path
    meta: dict[str, Any]
    passage_ids: StringColumn
    passage_titles: StringColumn
    passage_texts: StringColumn
    graph: StoredGraph
    passage_emb: np.ndarray
    sentence_emb: np.ndarray
    entity_emb: np.ndarray
    data_dir: Path = None            # the generation's global directory
    generation: int = 0
    entity_lookup: Mapping[str, int] = None    # entity key → row (a KeyTable: nothing parsed at open)
    files: dict[str, list] = field(default_factory=dict, repr=False)   # the manifest's {file: [size, sha256]}
    passage_cites: StringColumn | None = None   # None in generations written before citations
    _id_to_row: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def language(self) -> str:
        return self.meta["language"]

    @cached_property
    def info(self) -> IndexMeta:
        """The metadata, typed (:mod:`linearrag.index.meta`)."""
        return IndexMeta.from_dict(self.meta)

    @property
    def size(self) -> int:
        return len(self.passage_ids)

    @cached_property
    def passage_search(self) -> VectorSearch:
        """Approximate nearest passages (HNSW over the passage vectors; scores exact)."""
        return VectorSearch(self.passage_emb, self.data_dir / PASSAGE_ANN, self._checksum(PASSAGE_ANN))

    @cached_property
    def entity_search(self) -> VectorSearch:
        """Approximate nearest entity names (HNSW over the entity vectors; scores exact)."""
        return VectorSearch(self.entity_emb, self.data_dir / ENTITY_ANN, self._checksum(ENTITY_ANN))

    def _checksum(self, name: str) -> str | None:
        entry = self.files.get(f"{self.data_dir.name}/{name}") if self.data_dir is not None else None
        return entry[1] if entry else None

    def citation(self, row: int) -> Citation:
        """Where passage ``row`` comes from (file, lines, section, page)."""
        if self.passage_cites is None:
            return Citation.guessed(self.passage_ids[row], self.passage_titles[row])
        return Citation.from_json(json.loads(self.passage_cites[row]))

    def row_of(self, passage_id: str) -> int | None:
        if not self._id_to_row:
            self._id_to_row = {pid: i for i, pid in enumerate(self.passage_ids)}
        return self._id_to_row.get(passage_id)


# ---- reading -----------------------------------------------------------------------------

def current_generation(path: str | Path) -> str | None:
    """The manifest name ``CURRENT`` points to (None when there is none)."""
    try:   # damaged bytes decode to something no manifest name matches: read_manifest says so
        return (Path(path) / CURRENT).read_bytes().decode("utf-8", errors="replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


def committed_generation(path: str | Path) -> int | None:
    """The committed generation number (one small read: how a server notices a new commit)."""
    name = current_generation(path)
    m = MANIFEST_NAME.match(name) if name else None
    return int(m.group(1)) if m else None


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The committed manifest of an index directory, checked; one-line errors."""
    path = Path(path)
    if not path.is_dir():
        raise IndexFormatError(f"{path}: no index here; build one with scripts/build_graph.py --output {path}")
    name = current_generation(path)
    if name is None:
        if (path / "meta.json").exists():
            raise IndexFormatError(f"{path}: index format version 1, this linearrag reads version {FORMAT_VERSION}; "
                                   "rebuild the index (scripts/build_graph.py --output to the same path)")
        raise IndexFormatError(f"{path}: not an index (no CURRENT file); rebuild it with scripts/build_graph.py")
    if not MANIFEST_NAME.match(name):
        raise IndexFormatError(f"{path}/{CURRENT}: corrupt (names {name[:40]!r}); rebuild the index")
    try:
        manifest = json.loads((path / name).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexFormatError(f"{path}: {name} (named by CURRENT) is missing; rebuild the index") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(f"{path}/{name}: corrupt ({exc}); rebuild the index") from None
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format version {version!r}, this linearrag reads version {FORMAT_VERSION}; rebuild the index")
    for key in ("generation", "meta", "segments", "global", "files"):
        if key not in manifest:
            raise IndexFormatError(f"{path}/{name}: corrupt (no {key!r}); rebuild the index")
    return manifest


def read_meta(path: str | Path) -> dict[str, Any]:
    """The build metadata of the committed generation (models, counts, parameters)."""
    manifest = read_manifest(path)
    return dict(manifest["meta"], format_version=FORMAT_VERSION, generation=manifest["generation"])


def load_index(path: str | Path, mmap: bool = True, checked: bool = True) -> Index:
    """Open the committed generation of an index. A writer that commits meanwhile (and, three
    commits later, deletes this generation's files) makes the open start over from CURRENT.
    ``checked``: verify the structure of every array and the CRC of every string read (see
    docs/store.md); False only to measure what the checks cost (``bench_scale.py``)."""
    path = Path(path)
    for attempt in range(20):
        name = current_generation(path)
        try:
            return _load(path, mmap, checked)
        except (IndexFormatError, FileNotFoundError):
            if current_generation(path) == name:
                raise
            time.sleep(0.01 * attempt)
    return _load(path, mmap, checked)


def _load(path: Path, mmap: bool, checked: bool = True) -> Index:
    manifest = read_manifest(path)
    meta = dict(manifest["meta"], format_version=FORMAT_VERSION, generation=manifest["generation"])
    data = path / manifest["global"]
    for rel, (size, _) in manifest["files"].items():
        if not rel.startswith(manifest["global"] + "/"):
            continue
        f = path / rel
        if not f.exists():
            raise IndexFormatError(f"{path}: missing file {rel}; the index is damaged, rebuild it (linearrag check {path})")
        if f.stat().st_size != size:
            raise IndexFormatError(f"{path}: {rel} has {f.stat().st_size} bytes, the manifest says {size}; "
                                   f"the index is damaged, rebuild it (linearrag check {path})")
    try:
        cols = {name: read_strings(data, name, checked) for name in _STRINGS}
        cites = read_strings(data, CITES, checked) if f"{manifest['global']}/{CITES}.bin" in manifest["files"] else None
        arrays = {name: load_array(data / f"{name}.npy", mmap=mmap, random_access=True) for name in _ARRAYS}
        embs = [load_vector_table(data / f"{name}.npy", mmap=mmap) for name in _EMBEDDINGS]
        counts = meta.get("counts", {})
        n_p, n_s, n_e = counts.get("passages"), counts.get("sentences"), counts.get("entities")
        lookup = KeyTable.open(data, "entity_keys", cols["entity_keys"])
    except FileNotFoundError:
        raise
    except validate.Damaged as exc:
        raise _damaged(path, manifest, exc) from None
    except (ValueError, OSError, KeyError, TypeError, UnicodeDecodeError, EOFError) as exc:
        raise IndexFormatError(f"{path}: corrupt or truncated index file ({type(exc).__name__}: {exc}); "
                               "rebuild it") from None
    dim = meta.get("embedding", {}).get("dim")
    expected = {
        "passage ids": (n_p, len(cols["passage_ids"])), "passage titles": (n_p, len(cols["passage_titles"])),
        "passage texts": (n_p, len(cols["passage_texts"])),
        "passage citations": (n_p, len(cites) if cites is not None else n_p), "sentences": (n_s, len(cols["sentences"])),
        "entity keys": (n_e, len(cols["entity_keys"])), "entity names": (n_e, len(cols["entity_names"])),
        "entity labels": (n_e, len(cols["entity_labels"])),
        "sentence_passage": (n_s, len(arrays["sentence_passage"])),
        "C offsets": (n_p + 1, len(arrays["C_indptr"])), "M offsets": (n_s + 1, len(arrays["M_indptr"])),
        "C by entity offsets": (n_e + 1, len(arrays["CT_indptr"])),
        "M by entity offsets": (n_e + 1, len(arrays["MT_indptr"])),
        "passage sentence offsets": (n_p + 1, len(arrays["passage_sentences"])),
        "C entries": (len(arrays["C_indices"]), len(arrays["CT_indices"])),
        "M entries": (len(arrays["M_indices"]), len(arrays["MT_indices"])),
        "passage_emb": ((n_p, dim), embs[0].shape), "sentence_emb": ((n_s, dim), embs[1].shape),
        "entity_emb": ((n_e, dim), embs[2].shape),
    }
    for what, (want, got) in expected.items():
        if want != got:
            raise IndexFormatError(f"{path}: {what} has shape {got}, expected {want}; the index is corrupt, rebuild it")
    try:
        if checked:
            validate.index_structure(arrays, lookup, (n_p, n_s, n_e))
    except validate.Damaged as exc:
        raise _damaged(path, manifest, exc) from None
    graph = StoredGraph(cols["sentences"], arrays["sentence_passage"], cols["entity_keys"], cols["entity_names"],
                        cols["entity_labels"], arrays, (n_p, n_s, n_e))
    return Index(path=path, meta=meta, passage_ids=cols["passage_ids"], passage_titles=cols["passage_titles"],
                 passage_texts=cols["passage_texts"], graph=graph, passage_emb=embs[0], sentence_emb=embs[1],
                 entity_emb=embs[2], data_dir=data, generation=manifest["generation"], entity_lookup=lookup,
                 files=manifest["files"], passage_cites=cites)


def _damaged(path: Path, manifest: dict, exc: validate.Damaged) -> IndexFormatError:
    return IndexFormatError(f"{path}: {manifest['global']}/{exc.file} is damaged ({exc.what}); rebuild the index "
                            f"or restore it from a copy (linearrag check {path} lists every damaged file)")


# ---- writing -----------------------------------------------------------------------------

def write_global(directory: Path, layer, sources: dict[str, str]) -> None:
    """Write a generation's global layer (a :class:`merge.GlobalLayer`) into a new directory."""
    directory.mkdir()
    g = layer.graph
    for name, values in (("passage_ids", layer.ids), ("passage_titles", layer.titles),
                         ("passage_texts", layer.texts), (CITES, layer.cites), ("sentences", g.sentences), ("entity_keys", g.entity_keys),
                         ("entity_names", g.entity_names), ("entity_labels", g.entity_labels)):
        write_strings(directory, name, values)
    for name, arr in (("C_data", g.C.data.astype(np.float32)), ("C_indices", g.C.indices), ("C_indptr", g.C.indptr),
                      ("M_indices", g.M.indices), ("M_indptr", g.M.indptr),
                      ("sentence_passage", g.sentence_passage.astype(np.int32))):
        save_array(directory / f"{name}.npy", arr)
    write_graph_extras(directory, g.C, g.M, g.sentence_passage, g.entity_keys)
    for name, arr in (("passage_emb", layer.passage_emb), ("sentence_emb", layer.sentence_emb),
                      ("entity_emb", layer.entity_emb)):
        save_array(directory / f"{name}.npy", np.asarray(arr, dtype=VECTOR_DTYPE))
    build_ann(np.asarray(layer.passage_emb, dtype=np.float32), directory / PASSAGE_ANN)
    build_ann(np.asarray(layer.entity_emb, dtype=np.float32), directory / ENTITY_ANN)
    layer.lexical.save(directory)
    save_json(directory / "sources.json", sources)


def write_graph_extras(directory: Path, C: sp.csr_matrix, M: sp.csr_matrix, sentence_passage: np.ndarray,
                       entity_keys) -> None:
    """What readers need besides C and M to answer without touching the whole corpus: both
    matrices by entity (CSC), each passage's first sentence, and the entity key table."""
    CT = C.tocsc()
    CT.sort_indices()
    MT = M.tocsc()
    MT.sort_indices()
    for name, arr in (("CT_data", CT.data.astype(np.float32)), ("CT_indices", CT.indices), ("CT_indptr", CT.indptr),
                      ("MT_indices", MT.indices), ("MT_indptr", MT.indptr)):
        save_array(directory / f"{name}.npy", arr)
    sp_rows = np.asarray(sentence_passage, dtype=np.int64)
    if sp_rows.size and np.any(np.diff(sp_rows) < 0):
        raise ValueError("sentences must be stored in passage order")
    save_array(directory / "passage_sentences.npy", np.searchsorted(sp_rows, np.arange(C.shape[0] + 1)))
    write_key_table(directory, "entity_keys", entity_keys)


def file_table(index_dir: Path, directories: list[str]) -> dict[str, list]:
    """{relative path: [size, sha256]} of every file below the given directories."""
    table = {}
    for d in directories:
        for f in sorted((index_dir / d).rglob("*")):
            if f.is_file():
                table[f.relative_to(index_dir).as_posix()] = [f.stat().st_size, sha256_file(f)]
    return table


def commit(index_dir: Path, generation: int, meta: dict, segments: list[dict], global_dir: str,
           files: dict[str, list]) -> None:
    """Make ``generation`` the committed one. Call with the write lock held, after every file
    it names is written; this fsyncs them, writes the manifest, then swaps ``CURRENT``."""
    for d in {global_dir, *(s["name"] for s in segments)}:
        fsync_tree(index_dir / d)
    name = f"manifest-{generation:06d}.json"
    manifest = {"format_version": FORMAT_VERSION, "generation": generation, "meta": meta,
                "segments": segments, "global": global_dir, "files": files}
    write_durably(index_dir / name, json.dumps(manifest, ensure_ascii=False, indent=1))
    fsync_path(index_dir)
    tmp = index_dir / f"{CURRENT}.tmp"
    write_durably(tmp, name + "\n")
    os.replace(tmp, index_dir / CURRENT)
    fsync_path(index_dir)


def next_generation(manifest: dict | None) -> int:
    return (manifest["generation"] if manifest else 0) + 1


__all__ = ["Index", "load_index", "read_meta", "read_manifest", "current_generation",
           "write_global", "write_graph_extras", "commit", "file_table", "FORMAT_VERSION", "MANIFEST_NAME"]
