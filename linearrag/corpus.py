"""Corpus loading: turn files on disk into a list of :class:`Passage`.

Accepted inputs (see README, "Input formats"):

* a directory: every ``.txt`` / ``.md`` file below it (recursive, sorted), split on
  blank lines and merged up to ``max_chars`` characters; id ``relpath#n``, title the
  relative path;
* a ``.jsonl`` file of ``{"id"?, "title"?, "text"}`` records (ids are kept exactly);
* a ``.json`` list of ``{"title", "text"}`` records (HippoRAG layout) or of strings
  (LinearRAG ``chunks.json``, with or without a leading ``"<n>:"``).

Files in a directory that are not UTF-8 are skipped with a warning (the build goes on
with the rest); a single input file that is not UTF-8 is an error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import CorpusError

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md")
_CHUNK_PREFIX = re.compile(r"^\s*(\d+):")
_BLANK_LINES = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Passage:
    """One retrievable unit: a stable id, a title (may be empty) and the text."""

    id: str
    title: str
    text: str
    title_is_name: bool = True  # False for file paths: not an entity of the passage

    @property
    def full_text(self) -> str:
        """What analysis and embeddings see: the title, then the text."""
        if self.title and self.title_is_name and not self.text.startswith(self.title):
            return f"{self.title}\n{self.text}"
        return self.text


def load_corpus(path: str | Path, max_chars: int = 1000) -> list[Passage]:
    """Load passages from ``path`` (a directory, ``.jsonl`` or ``.json`` file).

    Raises :class:`CorpusError` for a missing path, an empty corpus, malformed JSON,
    duplicate ids or empty text.
    """
    if max_chars < 1:
        raise CorpusError(f"--max-chars must be at least 1, got {max_chars}")
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory; pass an existing directory, .jsonl or .json file")
    if path.is_dir():
        passages = _load_directory(path, max_chars)
    elif path.suffix.lower() == ".jsonl":
        passages = _load_jsonl(path)
    elif path.suffix.lower() == ".json":
        passages = _load_json(path)
    elif path.suffix.lower() in TEXT_SUFFIXES:
        passages = _split_text_file(path, path.name, read_utf8(path), max_chars)
    else:
        raise CorpusError(f"{path}: unsupported file type; use a directory of .txt/.md files, a .jsonl or a .json file")
    if not passages:
        raise CorpusError(f"{path}: the corpus is empty (no passage with text); add documents and build again")
    _check_unique_ids(path, passages)
    return passages


def read_utf8(path: Path) -> str:
    """The file as text; CorpusError naming the file when it is not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text (byte {exc.start}); convert it to UTF-8") from None


def _load_directory(root: Path, max_chars: int) -> list[Passage]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    if not files:
        raise CorpusError(f"{root}: no .txt or .md files found below this directory")
    passages: list[Passage] = []
    for file in files:
        rel = file.relative_to(root).as_posix()
        try:
            text = read_utf8(file)
        except CorpusError as exc:
            log.warning("skipping %s", exc)
            continue
        passages.extend(_split_text_file(file, rel, text, max_chars))
    return passages


def _split_text_file(file: Path, rel: str, text: str, max_chars: int) -> list[Passage]:
    """Split on blank lines, then merge consecutive paragraphs up to ``max_chars``."""
    paragraphs = [" ".join(p.split()) for p in _BLANK_LINES.split(text)]
    paragraphs = [p for p in paragraphs if p]
    if not paragraphs:
        log.warning("skipping %s: empty file", file)
        return []
    chunks: list[str] = []
    current = ""
    for para in paragraphs:
        if current and len(current) + 1 + len(para) > max_chars:
            chunks.append(current)
            current = para
        else:
            current = f"{current}\n{para}" if current else para
    chunks.append(current)
    return [Passage(id=f"{rel}#{n}", title=rel, text=chunk, title_is_name=False) for n, chunk in enumerate(chunks)]


def _record_to_passage(path: Path, where: str, record: object, default_id: str) -> Passage:
    if isinstance(record, str):
        match = _CHUNK_PREFIX.match(record)
        pid, text = (match.group(1), record[match.end():]) if match else (default_id, record)
        title = ""
    elif isinstance(record, dict):
        text = record.get("text")
        if not isinstance(text, str):
            raise CorpusError(f"{path}:{where}: record has no string field 'text'")
        pid = record.get("id", default_id)
        title = record.get("title") or ""
        if not isinstance(title, str):
            raise CorpusError(f"{path}:{where}: field 'title' must be a string")
        pid = str(pid)
    else:
        raise CorpusError(f"{path}:{where}: expected an object with 'text' or a string, got {type(record).__name__}")
    text = text.strip()
    if not text:
        raise CorpusError(f"{path}:{where}: empty text; remove the record or give it text")
    return Passage(id=pid, title=title.strip(), text=text)


def _load_jsonl(path: Path) -> list[Passage]:
    passages = []
    for lineno, line in enumerate(read_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{lineno}: malformed JSON ({exc.msg}); fix or remove that line") from None
        passages.append(_record_to_passage(path, f"line {lineno}", record, str(len(passages))))
    return passages


def _load_json(path: Path) -> list[Passage]:
    try:
        data = json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    if not isinstance(data, list):
        raise CorpusError(f"{path}: expected a JSON list of passages (objects with 'text', or strings)")
    return [_record_to_passage(path, f"item {i}", rec, str(i)) for i, rec in enumerate(data)]


def _check_unique_ids(path: Path, passages: list[Passage]) -> None:
    seen: set[str] = set()
    for p in passages:
        if p.id in seen:
            raise CorpusError(f"{path}: duplicate passage id {p.id!r}; ids must be unique")
        seen.add(p.id)


def fingerprint(passages: list[Passage]) -> str:
    """A SHA-256 over ids, titles and texts: identifies the exact input of a build."""
    h = hashlib.sha256()
    for p in passages:
        for part in (p.id, p.title, p.text):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
    return h.hexdigest()
