"""``linearrag check INDEX``: verify every file of the committed generation.

Opening an index checks sizes and shapes only (cheap); this reads everything: the SHA-256 of
every file against the manifest, array shapes and counts, the BM25 files, and each segment
against its entry in the manifest. The first problem is an :class:`IndexFormatError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import IndexFormatError
from .files import sha256_file
from .lexical import Postings
from .index.merge import natural_key
from .index.segment import Segment
from .index.store import load_index, read_manifest


def check_index(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    manifest = read_manifest(path)
    checked, size = 0, 0
    for rel, (want_size, want_sha) in sorted(manifest["files"].items()):
        f = path / rel
        if not f.is_file():
            raise IndexFormatError(f"{path}: missing file {rel}; the index is damaged, rebuild it")
        got_size = f.stat().st_size
        if got_size != want_size:
            raise IndexFormatError(f"{path}: {rel} has {got_size} bytes, the manifest says {want_size}; "
                                   "the index is damaged, rebuild it")
        if sha256_file(f) != want_sha:
            raise IndexFormatError(f"{path}: {rel} does not match its checksum; the index is damaged, rebuild it")
        checked += 1
        size += got_size
    index = load_index(path)
    Postings.open(index.data_dir, len(index.passage_ids))
    live: list[str] = []
    for entry in manifest["segments"]:
        seg = Segment(path / entry["name"])
        try:
            records = seg.records
            n_vec, n_names = seg.passage_emb.shape[0], seg.names_emb.shape[0]
            n_sent, rows = seg.sentence_emb.shape[0], len(seg.sentence_rows)
            names = len(seg.names)
        except (OSError, ValueError, KeyError) as exc:
            raise IndexFormatError(f"{path}: segment {entry['name']} is damaged ({type(exc).__name__}); "
                                   "rebuild the index") from None
        if len(records) != entry["passages"] or n_vec != len(records) or n_sent != rows or n_names != names:
            raise IndexFormatError(f"{path}: segment {entry['name']} does not match the manifest "
                                   f"({len(records)} passages, {n_vec} vectors); rebuild the index")
        gone = set(entry["deleted"])
        live.extend(r.id for r in records if r.id not in gone)
    if sorted(live, key=natural_key) != index.passage_ids.tolist():
        raise IndexFormatError(f"{path}: the passages of the segments and of the global layer differ; "
                               "rebuild the index")
    info = index.info
    return {
        "index": str(path), "ok": True, "generation": manifest["generation"], "language": info.language,
        "passages": info.counts["passages"], "sentences": info.counts["sentences"],
        "entities": info.counts["entities"], "segments": len(manifest["segments"]),
        "deleted_passages": sum(len(s["deleted"]) for s in manifest["segments"]),
        "files_checked": checked, "bytes_checked": size,
    }


def describe(summary: dict[str, Any]) -> str:
    s = summary
    return (f"ok: {s['index']} generation {s['generation']} ({s['language']}): {s['passages']} passages, "
            f"{s['sentences']} sentences, {s['entities']} entities in {s['segments']} segment(s), "
            f"{s['deleted_passages']} deleted awaiting compaction; {s['files_checked']} files verified "
            f"({s['bytes_checked'] / 1e6:.1f} MB)")
