"""Check that every passage's citation holds its words: its ``file``, lines ``first``–``last``.

    uv run scripts/check_citations.py --index IDX [--root DIR] [--show 20]

For each passage of the index, the cited lines of the cited file (found under the input root
the index recorded for its source, or ``--root``) are read, and the passage's words that those
lines lack are listed (words the readers write themselves, like "Added in version", excepted;
see ``linearrag/lines.py``). Prints one JSON line: passages checked, how many hold all their
words, how many cite no lines (PDF pages are cited by page; their lines are the text layer's),
and the first ``--show`` that miss words. Exit 1 when a passage misses words, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from linearrag.cli import run_cli
from linearrag.corpus import read_utf8
from linearrag.errors import CorpusError
from linearrag.index.sources import Owners
from linearrag.index.store import load_index, read_manifest
from linearrag.lines import source_lines, words_held


def source_file(root: str | None, cited: str, override: str | None) -> Path | None:
    """The file a citation names: below ``--root``, else below the recorded input root (a
    single-file root — a ``.jsonl`` corpus, one document — is the file itself)."""
    base = Path(override or root or "")
    if not (override or root):
        return None
    if base.is_file():
        return base if base.name == Path(cited).name else base.parent / cited
    return base / cited


def check(index_path: str, root: str | None, show: int) -> dict:
    index = load_index(index_path)
    owners = Owners.read(Path(index_path), read_manifest(index_path))
    cache: dict[Path, list[str]] = {}
    out = {"passages": index.size, "held": 0, "no_lines": 0, "unreadable": 0, "missing": []}
    for row in range(index.size):
        cite, pid = index.citation(row), index.passage_ids[row]
        path = source_file(owners.of(cite.file) or owners.of(pid), cite.file, root)
        if not cite.lines or cite.page is not None:
            out["no_lines"] += 1
            continue
        if path is None or not path.is_file():
            out["unreadable"] += 1
            continue
        if path not in cache:
            suffix = path.suffix.lower()
            kind = "html" if suffix in (".html", ".htm") else "json" if suffix in (".ipynb", ".jsonl", ".json") else ""
            try:
                cache[path] = source_lines(read_utf8(path), kind)
            except CorpusError:
                cache[path] = []
        lacking = words_held(index.passage_texts[row], cache[path], *cite.lines)
        if lacking:
            if len(out["missing"]) < show:
                out["missing"].append({"id": pid, "file": cite.file, "lines": list(cite.lines), "words": lacking[:12]})
        else:
            out["held"] += 1
    out["missing_count"] = out["passages"] - out["held"] - out["no_lines"] - out["unreadable"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="the index to check")
    ap.add_argument("--root", help="the input root to read files from (default: the roots the index recorded)")
    ap.add_argument("--show", type=int, default=20, help="passages missing words to list (default 20)")
    args = ap.parse_args()
    if args.root and not Path(args.root).exists():
        raise CorpusError(f"--root {args.root}: no such file or directory; pass the folder the index was built from")
    result = check(args.index, args.root, args.show)
    print(json.dumps(result, ensure_ascii=False))
    return 1 if result["missing_count"] or result["unreadable"] else 0


if __name__ == "__main__":
    run_cli(main)
