"""A large index made from a real one, for scale benchmarks (scripts/bench_scale.py).

A real corpus of a million passages cannot be analysed and embedded on two cores in a
session, so the benchmark replicates a real index R times:

* passages, sentences and their texts are copied; replica 0 is the source itself (same ids,
  so the source's questions and gold passages apply), replica r > 0 has ids ``<id>~r``;
* **hub entities** (in at least ``hub_df`` source passages: countries, years, common terms)
  are shared by every replica; every other entity is renamed per replica (``<key> ~r``), so
  entities per passage stay as in the source and the hubs' degrees grow with R, as in a real
  corpus where rare names are new and common ones recur;
* BM25 tokens likewise: tokens of fewer than ``hub_df`` source passages are renamed per
  replica, the rest are shared; BM25 (Lucene idf, k1 = 1.5, b = 0.75, as bm25s) is computed
  over the whole replicated corpus;
* vectors of replicas are the source's plus Gaussian noise of relative norm ``noise``
  (cosine to the original ≈ 1/√(1 + noise²)), renormalised; replica 0 keeps the originals.

:func:`graph_statistics` describes an index (entities per passage, degree histogram) so
that the generated one can be compared with its source (docs/scale.md, tests).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .ann import build_ann
from .files import save_array, write_key_table, write_strings
from .index.segment import Segment
from .index.store import (ENTITY_ANN, PASSAGE_ANN, VECTOR_DTYPE, Index, commit, file_table, write_graph_extras)

K1, B = 1.5, 0.75


def graph_statistics(C: sp.csr_matrix) -> dict:
    """Entities per passage and the entity degree (passages per entity) distribution."""
    per_passage = np.diff(C.indptr)
    df = np.bincount(C.indices, minlength=C.shape[1])
    df = df[df > 0]
    edges = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025, 10 ** 12]
    hist = np.histogram(df, bins=edges)[0]
    labels = [f"{a}" if b - a == 1 else (f"{a}-{b - 1}" if b < 10 ** 12 else f"≥{a}") for a, b in zip(edges, edges[1:])]
    return {
        "passages": int(C.shape[0]), "entities": int(df.size), "nnz_C": int(C.nnz),
        "entities_per_passage_mean": round(float(per_passage.mean()), 3) if per_passage.size else 0.0,
        "entities_per_passage_median": float(np.median(per_passage)) if per_passage.size else 0.0,
        "degree_histogram_share": {k: round(float(v) / max(df.size, 1), 4) for k, v in zip(labels, hist)},
        "max_degree": int(df.max()) if df.size else 0,
    }


def _source_tokens(source: Index) -> list[list[str]]:
    """The BM25 tokens of every source passage (from its segments), in index row order."""
    manifest = json.loads((source.path / (source.path / "CURRENT").read_text().strip()).read_text())
    tokens: dict[str, list[str]] = {}
    for entry in manifest["segments"]:
        for r in Segment(source.path / entry["name"]).records:
            tokens[r.id] = r.tokens
    return [tokens[pid] for pid in source.passage_ids]


def _replica_columns(n_cols: int, shared: np.ndarray, r: int) -> np.ndarray:
    """Column of each source column in replica r: shared ones keep theirs, the others get new ones."""
    if r == 0:
        return np.arange(n_cols, dtype=np.int64)
    rare = np.flatnonzero(~shared)
    out = np.arange(n_cols, dtype=np.int64)
    out[rare] = n_cols + (r - 1) * rare.size + np.arange(rare.size)
    return out


def _split(n_passages: int, p0: int) -> list[int]:
    reps = math.ceil(n_passages / p0)
    return [p0] * (reps - 1) + [n_passages - p0 * (reps - 1)]


def _stack(indptr0, indices0, data0, sizes, colmaps):
    """Rows [0, n_r) of a CSR source per replica, columns mapped: (indptr, indices, data)."""
    ind_parts, dat_parts, len_parts = [], [], []
    for n_r, cmap in zip(sizes, colmaps):
        end = int(indptr0[n_r])
        ind_parts.append(cmap[indices0[:end]])
        if data0 is not None:
            dat_parts.append(data0[:end])
        len_parts.append(np.diff(indptr0[:n_r + 1]))
    lens = np.concatenate(len_parts)
    indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return indptr, np.concatenate(ind_parts), (np.concatenate(dat_parts) if data0 is not None else None)


def _compact(*index_arrays: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    used = np.unique(np.concatenate(index_arrays))
    return used, [np.searchsorted(used, a).astype(np.int32) for a in index_arrays]


def _noisy(rows: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out = rows + rng.standard_normal(rows.shape, dtype=np.float32) * (noise / math.sqrt(rows.shape[1]))
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    out[norms[:, 0] == 0] = 0.0          # sentences without a vector stay without one
    return out


def _write_vectors(path: Path, source: np.ndarray, sizes: list[int], row_starts: np.ndarray | None,
                   noise: float, rng: np.random.Generator, chunk: int = 65536) -> None:
    """Replicated vectors written through a memory map, one chunk at a time."""
    dim = source.shape[1]
    ends = [int(row_starts[n]) if row_starts is not None else n for n in sizes]
    total = sum(ends)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=VECTOR_DTYPE, shape=(total, dim))
    at = 0
    for r, end in enumerate(ends):
        for s in range(0, end, chunk):
            block = np.asarray(source[s:min(end, s + chunk)], dtype=np.float32)
            out[at:at + len(block)] = block if r == 0 else _noisy(block, noise, rng)
            at += len(block)
    out.flush()
    del out


def _write_entity_vectors(path: Path, source_emb, origin_entity: np.ndarray, origin_replica: np.ndarray,
                          noise: float, rng) -> None:
    """Each entity's vector: its origin's, with noise for a copy in a later replica."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=VECTOR_DTYPE, shape=(len(origin_entity), source_emb.shape[1]))
    for s in range(0, len(origin_entity), 65536):
        e, r = origin_entity[s:s + 65536], origin_replica[s:s + 65536]
        block = np.asarray(source_emb[e], dtype=np.float32)
        moved = r > 0
        if moved.any():
            block[moved] = _noisy(block[moved], noise, rng)
        out[s:s + len(block)] = block
    out.flush()
    del out


def _write_passage_strings(gdir: Path, source: Index, sizes: list[int], s_sizes: list[int]) -> None:
    """Passage ids, titles and texts and the sentences of every replica (ids and titles marked ~r)."""
    write_strings(gdir, "passage_ids", (source.passage_ids[p] + (f"~{r}" if r else "")
                                        for r, n in enumerate(sizes) for p in range(n)))
    write_strings(gdir, "passage_titles", (source.passage_titles[p] + (f" ~{r}" if r else "")
                                           for r, n in enumerate(sizes) for p in range(n)))
    write_strings(gdir, "passage_texts", (source.passage_texts[p] for n in sizes for p in range(n)))
    write_strings(gdir, "sentences", (source.graph.sentences[s] for n in s_sizes for s in range(n)))


def replicate(source: Index, out_dir: Path, n_passages: int, hub_df: int | None = None, noise: float = 0.25,
              seed: int = 0, threads: int = 2, log: Callable[[str], None] = lambda s: None) -> dict:
    """Write an index of ``n_passages`` replicated from ``source`` into the new directory
    ``out_dir`` (one committed generation); returns the source's and the result's statistics."""
    g = source.graph
    p0, e0 = g.n_passages, g.n_entities
    hub_df = hub_df or max(2, math.ceil(0.002 * p0))
    sizes = _split(n_passages, p0)
    rng = np.random.default_rng(seed)
    C_indptr0, C_indices0 = np.asarray(g.C_indptr), np.asarray(g.C_indices)
    C_data0 = np.asarray(g.C_data)
    M_indptr0, M_indices0 = np.asarray(g.M_indptr), np.asarray(g.M_indices)
    ps0 = np.asarray(g.passage_sentences, dtype=np.int64)
    df0 = np.diff(np.asarray(g.CT_indptr))
    hubs = df0 >= hub_df
    colmaps = [_replica_columns(e0, hubs, r) for r in range(len(sizes))]

    log(f"graph: {len(sizes)} replicas, {int(hubs.sum())} hub entities (in ≥ {hub_df} passages) shared")
    C_indptr, C_cols, C_data = _stack(C_indptr0, C_indices0, C_data0, sizes, colmaps)
    s_sizes = [int(ps0[n]) for n in sizes]
    M_indptr, M_cols, _ = _stack(M_indptr0, M_indices0, None, s_sizes, colmaps)
    used, (C_cols, M_cols) = _compact(C_cols, M_cols)
    n_e = used.size
    C = sp.csr_matrix((C_data.astype(np.float32), C_cols, C_indptr), shape=(n_passages, n_e))
    M = sp.csr_matrix((np.ones(M_cols.size, dtype=np.float32), M_cols, M_indptr), shape=(sum(s_sizes), n_e))
    sentence_passage = np.concatenate([np.asarray(g.sentence_passage[:s], dtype=np.int64) + r * p0
                                       for r, s in enumerate(s_sizes)]).astype(np.int32)
    origin_replica = np.where(used < e0, 0, (used - e0) // max(int((~hubs).sum()), 1) + 1)

    out_dir.mkdir(parents=True)
    gdir = out_dir / "g-000001"
    gdir.mkdir()

    log("strings")
    _write_passage_strings(gdir, source, sizes, s_sizes)
    rare_ids = np.flatnonzero(~hubs)
    origin_entity = np.where(used < e0, used, rare_ids[(used - e0) % max(rare_ids.size, 1)] if rare_ids.size else 0)
    keys = [g.entity_keys[int(e)] + (f" ~{int(r)}" if r else "") for e, r in zip(origin_entity, origin_replica)]
    write_strings(gdir, "entity_keys", keys)
    write_strings(gdir, "entity_names", (g.entity_names[int(e)] + (f" ~{int(r)}" if r else "")
                                         for e, r in zip(origin_entity, origin_replica)))
    write_strings(gdir, "entity_labels", (g.entity_labels[int(e)] for e in origin_entity))

    log("graph arrays")
    for name, arr in (("C_data", C.data), ("C_indices", C.indices), ("C_indptr", C.indptr),
                      ("M_indices", M.indices), ("M_indptr", M.indptr), ("sentence_passage", sentence_passage)):
        save_array(gdir / f"{name}.npy", arr)
    write_graph_extras(gdir, C, M, sentence_passage, keys)
    del keys

    log("vectors")
    _write_vectors(gdir / "passage_emb.npy", source.passage_emb, sizes, None, noise, rng)
    _write_vectors(gdir / "sentence_emb.npy", source.sentence_emb, sizes, ps0, noise, rng)
    _write_entity_vectors(gdir / "entity_emb.npy", source.entity_emb, origin_entity, origin_replica, noise, rng)

    log("BM25")
    _write_bm25(gdir, _source_tokens(source), sizes, hub_df)

    log("ANN indexes")
    for vectors, ann in (("passage_emb.npy", PASSAGE_ANN), ("entity_emb.npy", ENTITY_ANN)):
        build_ann(np.asarray(np.load(gdir / vectors, mmap_mode="r"), dtype=np.float32), gdir / ann, threads=threads)
    (gdir / "sources.json").write_text("{}", encoding="utf-8")

    stats = {"source": graph_statistics(_csr(g.C_data, g.C_indices, g.C_indptr, (p0, e0))),
             "generated": graph_statistics(C), "replicas": len(sizes), "hub_df": hub_df,
             "hub_entities": int(hubs.sum()), "noise": noise, "seed": seed,
             "sentences": int(M.shape[0]), "sentences_per_passage": round(M.shape[0] / max(n_passages, 1), 3)}
    meta = dict(source.meta)
    meta.pop("format_version", None)
    meta.pop("generation", None)
    meta["counts"] = {"passages": n_passages, "sentences": int(M.shape[0]), "entities": n_e}
    meta["synthetic"] = {k: v for k, v in stats.items() if k not in ("source", "generated")}
    log("manifest")
    commit(out_dir, 1, meta, [], gdir.name, file_table(out_dir, [gdir.name]))
    return stats


def _csr(data, indices, indptr, shape) -> sp.csr_matrix:
    return sp.csr_matrix((np.asarray(data), np.asarray(indices), np.asarray(indptr)), shape=shape)


def _write_bm25(gdir: Path, tokens: list[list[str]], sizes: list[int], hub_df: int) -> None:
    """BM25 of the replicated corpus in the layout :class:`lexical.Postings` reads."""
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for p, toks in enumerate(tokens):
        for t in toks:
            rows.append(p)
            cols.append(vocab.setdefault(t, len(vocab)))
    v0 = len(vocab)
    T0 = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(tokens), v0))
    T0.sum_duplicates()
    df0 = np.bincount(T0.indices, minlength=v0)
    shared = df0 >= hub_df
    colmaps = [_replica_columns(v0, shared, r) for r in range(len(sizes))]
    indptr, cols_all, tf = _stack(T0.indptr, T0.indices, T0.data, sizes, colmaps)
    used, (cols_all,) = _compact(cols_all)
    n = int(sum(sizes))
    T = sp.csr_matrix((tf, cols_all, indptr), shape=(n, used.size))
    dl = np.asarray(T.sum(axis=1)).ravel()
    avgdl = float(dl.mean()) if n else 1.0
    df = np.bincount(T.indices, minlength=used.size).astype(np.float64)
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    norm = K1 * ((1 - B) + B * dl / avgdl)
    row_of = np.repeat(np.arange(n), np.diff(T.indptr))
    T.data = (idf[T.indices] * T.data / (T.data + norm[row_of])).astype(np.float32)
    S = T.tocsc()
    S.sort_indices()
    folder = gdir / "bm25"
    folder.mkdir()
    save_array(folder / "data.csc.index.npy", S.data.astype(np.float32))
    save_array(folder / "indices.csc.index.npy", S.indices.astype(np.int32))
    save_array(folder / "indptr.csc.index.npy", S.indptr.astype(np.int64))
    names = [""] * v0
    for t, i in vocab.items():
        names[i] = t
    rare = np.flatnonzero(~shared)
    origin = np.where(used < v0, used, rare[(used - v0) % max(rare.size, 1)] if rare.size else 0)
    replica = np.where(used < v0, 0, (used - v0) // max(rare.size, 1) + 1)
    tokens_out = [names[int(o)] + (f"~{int(r)}" if r else "") for o, r in zip(origin, replica)]
    write_strings(folder, "vocab", tokens_out)
    write_key_table(folder, "vocab", tokens_out)
    (folder / "params.index.json").write_text(json.dumps(
        {"k1": K1, "b": B, "method": "lucene", "idf_method": "lucene", "num_docs": n, "synthetic": True}),
        encoding="utf-8")
