"""Corpus loading: turn files on disk into a list of :class:`Passage`.

Accepted inputs (see README, "Input formats"):

* a directory: every ``.txt``, ``.md``/``.mdx``/``.qmd``/``.Rmd``, ``.rst``, ``.ipynb``, ``.html`` and ``.pdf``
  file below it (recursive, sorted). Text files are split on blank lines and merged up to
  ``max_chars`` characters (id ``relpath#n``, title the relative path), unless they hold
  reStructuredText markup (Django's docs, Sphinx's included fragments: read as ``.rst``); Markdown (MyST, MDX),
  reStructuredText, notebooks and HTML are cut at headings first (title the heading path, see
  ``markdown.py``, ``myst.py``, ``mdx.py``, ``rst.py``, ``formats.py`` and ``notebook.py``); a PDF gives a
  passage per page (id ``relpath#p3``);
* a ``.jsonl`` file of ``{"id"?, "title"?, "text"}`` records (ids are kept exactly);
* a ``.json`` list of ``{"title", "text"}`` records (HippoRAG layout) or of strings
  (LinearRAG ``chunks.json``, with or without a leading ``"<n>:"``).

Files in a directory that are not UTF-8 (or a PDF without a text layer, or one that cannot
be read) are skipped with a warning (the build goes on with the rest); a single input file
like that is an error.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import re
from pathlib import Path

from .aggregate import aggregate_pages
from .links import resolve_links
from .passage import ANCHOR, HEADING_SEPARATOR, Citation, Passage
from .errors import CorpusError
from .jsonl import jsonl_lines
from .lang.code import name_suffixes
from .formats import read_html, read_pdf
from .notebook import notebook_markdown
from .inventory import Inventory, list_files, skip_reason
from .lines import LineFinder, source_lines
from .codetext import blank_code, code_identifiers
from .markdown import is_table_of_contents, read_sections
from .mdx import to_markdown as mdx_to_markdown
from .myst import to_markdown
from .rst import looks_like_rst, only_included, read_rst
from .textsplit import split_text

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".qmd", ".rmd", ".mdx")
RST_SUFFIXES = (".rst", ".rest")
NOTEBOOK_SUFFIX = ".ipynb"
MARKDOWN_SUFFIXES = (".md", ".markdown", ".qmd", ".rmd")   # Quarto and R Markdown books are Markdown
MDX_SUFFIX = ".mdx"
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIX = ".pdf"
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *RST_SUFFIXES, NOTEBOOK_SUFFIX, *HTML_SUFFIXES, PDF_SUFFIX)
# The largest document (or record text) read by default: a few MB of one-line text build in
# minutes; a larger file needs --max-file-mb (NER runs at ~0.1 MB/s on 2 cores).
DEFAULT_MAX_FILE_MB = 20
_CHUNK_PREFIX = re.compile(r"^\s*(\d+):")
_BLANK_LINES = re.compile(r"\n\s*\n")


def load_corpus(path: str | Path, max_chars: int = 1000, resolve: bool = True,
                allowed: list[Path] | None = None, allow_empty: bool = False,
                max_file_mb: float = DEFAULT_MAX_FILE_MB, inventory: Inventory | None = None) -> list[Passage]:
    """Load passages from ``path`` (a directory, ``.jsonl`` or ``.json`` file).

    Raises :class:`CorpusError` for a missing path, an empty corpus, malformed JSON,
    duplicate ids or empty text. With ``resolve=False`` links stay raw (an index resolves
    them against its whole corpus at each commit). ``allowed``: directories the files read
    must resolve into (a symbolic link that leads elsewhere is skipped with a warning).
    ``allow_empty``: an empty directory gives no passages instead of an error (a re-sync).
    ``max_file_mb``: the largest document (and JSONL/JSON record text) read, in MB; a larger
    one is an error (a single file) or skipped with a warning (in a directory).
    ``inventory``: filled with the files of a directory read and skipped (with why).
    """
    if max_chars < 1:
        raise CorpusError(f"--max-chars must be at least 1, got {max_chars}")
    if not max_file_mb > 0:
        raise CorpusError(f"--max-file-mb must be above 0, got {max_file_mb}")
    limit = int(max_file_mb * 1e6)
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory; pass an existing directory, .jsonl or .json file")
    if path.is_dir():
        passages = _load_directory(path, max_chars, allowed, allow_empty, limit, inventory)
    elif path.suffix.lower() == ".jsonl":
        passages = _load_jsonl(path, limit)
    elif path.suffix.lower() == ".json":
        passages = _load_json(path, limit)
    elif path.suffix.lower() in DOCUMENT_SUFFIXES:
        passages = _read_document(path, path.name, max_chars, limit)
    else:
        raise CorpusError(f"{path}: unsupported file type; use a directory of "
                          ".txt/.md/.mdx/.qmd/.rst/.ipynb/.html/.pdf files, a .jsonl or a .json file")
    if not passages and allow_empty and path.is_dir():
        return []
    if not passages:
        raise CorpusError(f"{path}: the corpus is empty (no passage with text); add documents and build again")
    _check_unique_ids(path, passages)
    return resolve_links(passages) if resolve and path.suffix.lower() not in (".jsonl", ".json") else passages


def passage_sources(path: str | Path, passages: list[Passage]) -> tuple[list[str], dict[str, str]]:
    """The source of each passage and a content hash per source, for re-syncing an index
    with its input: in a directory (or a single document) a source is a file (its relative
    path, hashed over its bytes); in a ``.jsonl``/``.json`` corpus every record is its own
    source (hashed over its title and text)."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".json") and path.is_file():
        sources = [p.id for p in passages]
        hashes = {p.id: _hash_parts(p.title, p.text) for p in passages}
        return sources, hashes
    root = path if path.is_dir() else path.parent
    sources = [p.id.rsplit("#", 1)[0] for p in passages]
    hashes = {}
    for src in dict.fromkeys(sources):
        hashes[src] = hashlib.sha256((root / src).read_bytes()).hexdigest()
    return sources, hashes


def _hash_parts(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def read_utf8(path: Path) -> str:
    """The file as text; CorpusError naming the file when it is not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text (byte {exc.start}); convert it to UTF-8") from None


def within(path: Path, roots: list[Path]) -> bool:
    """Whether ``path``, symbolic links resolved, lies in one of ``roots`` (resolved already)."""
    real = path.resolve()
    return any(real == root or real.is_relative_to(root) for root in roots)


def _load_directory(root: Path, max_chars: int, allowed: list[Path] | None = None,
                    allow_empty: bool = False, limit: int = 0, inventory: Inventory | None = None) -> list[Passage]:
    inventory = inventory if inventory is not None else Inventory()
    files = list_files(root, inventory, DOCUMENT_SUFFIXES)
    if allowed is not None:
        inside = [within(f, allowed) for f in files]
        for f, ok in zip(files, inside):
            if not ok:
                log.warning("skipping %s: a symbolic link to %s, outside the directories this server may read",
                            f, f.resolve())
                inventory.skip(f, "outside the allowed directories")
        files = [f for f, ok in zip(files, inside) if ok]
    read: list[tuple[Path, list[Passage]]] = []
    for file in files:
        rel = file.relative_to(root).as_posix()
        try:
            found = _read_document(file, rel, max_chars, limit)
        except CorpusError as exc:
            log.warning("skipping %s", exc)
            inventory.skip(file, skip_reason(str(exc)))
            continue
        if found:
            read.append((file, found))
        else:
            inventory.skip(file, "no text")
    gathering = aggregate_pages([[p.text for p in found] for _, found in read])
    passages: list[Passage] = []
    for k, (file, found) in enumerate(read):
        if k in gathering:   # mdBook's print.html: every passage is another page's
            log.warning("skipping %s: it only gathers other pages of the folder", file)
            inventory.skip(file, "copies of other pages")
        else:
            inventory.took(file)
            passages.extend(found)
    log.info("%s: %s", root, inventory.describe())
    if not passages and not allow_empty:
        raise CorpusError(f"{root}: no document with text below this directory ({inventory.describe()}); "
                          f"readers: {', '.join(DOCUMENT_SUFFIXES)}")
    return passages


def _read_document(file: Path, rel: str, max_chars: int, limit: int = 0) -> list[Passage]:
    """Passages of one file, by its type (a file that cannot be read raises CorpusError)."""
    if limit:
        _check_size(file, file.stat().st_size, limit)
    suffix = file.suffix.lower()
    if suffix == PDF_SUFFIX:
        return _pdf_passages(file, rel, max_chars)
    text = read_utf8(file)
    kind = "html" if suffix in HTML_SUFFIXES else "json" if suffix == NOTEBOOK_SUFFIX else ""
    if suffix == MDX_SUFFIX:   # module lines and JSX comments out first (same lines: citations hold)
        text = mdx_to_markdown(text)
    finder = LineFinder(source_lines(text, kind, tags=False))
    if suffix in MARKDOWN_SUFFIXES:
        if file.name.casefold() == "summary.md" and is_table_of_contents(text):
            raise CorpusError(f"{file}: a table of contents (a book's SUMMARY.md: links to every chapter), no text")
        sections = read_sections(to_markdown(text), fallback_title=Path(rel).stem)   # MyST made plain first
        return _section_passages(file, rel, sections, max_chars, finder)
    if suffix == MDX_SUFFIX:
        return _section_passages(file, rel, read_sections(text, fallback_title=Path(rel).stem), max_chars, finder)
    if suffix == NOTEBOOK_SUFFIX:
        sections = read_sections(to_markdown(notebook_markdown(text, file)), fallback_title=Path(rel).stem)
        return _section_passages(file, rel, sections, max_chars, finder)
    if suffix in RST_SUFFIXES or (suffix == ".txt" and looks_like_rst(text)):
        sections = read_rst(text, fallback_title=Path(rel).stem)
        if not sections and only_included(text):   # CMake: a page that is a title and a shared fragment
            raise CorpusError(f"{file}: its text is only included from other files (.. include::, "
                              f".. literalinclude::), which are read as files of their own when they lie "
                              f"in the folder")
        return _section_passages(file, rel, sections, max_chars, finder)
    if suffix in HTML_SUFFIXES:
        return _section_passages(file, rel, read_html(text, fallback_title=Path(rel).stem), max_chars, finder)
    return _split_text_file(file, rel, text, max_chars, finder)


def _placed(finder: LineFinder, pieces: list[str]) -> tuple[int, int]:
    """The lines (first, last) holding consecutive pieces of text, placed in order."""
    spans = [finder.place(piece) for piece in pieces]
    return min(a for a, _ in spans), max(b for _, b in spans)


def _pdf_passages(file: Path, rel: str, max_chars: int) -> list[Passage]:
    """One passage per page (``rel#p3``; a long page is cut at paragraphs: ``rel#p3-2``…)."""
    title, pages = read_pdf(file)
    if not pages:
        raise CorpusError(f"{file}: no text layer (a scanned or image-only PDF); run OCR on it first")
    passages = []
    for number, text in pages:
        chunks = _merge_paragraphs([(p,) for p in text.split("\n")], max_chars)
        finder = LineFinder(text.split("\n"))   # lines of the page's text layer
        for k, chunk in enumerate(chunks):
            pid = f"{rel}#p{number}" + (f"-{k + 1}" if k else "")
            cite = Citation(rel, _placed(finder, [p for p, in chunk]), page=number)
            passages.append(Passage(id=pid, title=f"{title}{HEADING_SEPARATOR}p. {number}",
                                    text="\n".join(p for p, in chunk), title_is_name=False, title_in_text=True,
                                    cite=cite))
    return passages


def _section_passages(file: Path, rel: str, sections: list, max_chars: int, finder: LineFinder) -> list[Passage]:
    """Sections (Markdown, reStructuredText, HTML), each cut into passages of whole paragraphs
    up to ``max_chars``; title = heading path; ids ``relpath#n`` in reading order; each cites
    the lines of the file that hold its paragraphs (``finder``)."""
    if not sections:
        log.warning("skipping %s: no text", file)
        return []
    passages: list[Passage] = []
    for section in sections:
        path = [h for k, h in enumerate(section.path) if k == 0 or h.casefold() != section.path[k - 1].casefold()]
        title = HEADING_SEPARATOR.join(path)   # "Installation › Installation" is said once
        first = len(passages)
        for chunk in _merge_paragraphs(list(zip(section.paragraphs, section.code, section.links)), max_chars):
            body = "\n".join(p for p, _, _ in chunk)
            spans, pos = [], 0
            for para, is_code, _ in chunk:
                if is_code:
                    spans.append((pos, pos + len(para)))
                pos += len(para) + 1
            prose = " ".join(p for p, is_code, _ in chunk if not is_code)
            # Its own heading (a document title on every passage would be a hub); the first
            # passage also carries the document title, which links from other documents reach.
            headings = dict.fromkeys([section.path[-1]] + ([section.path[0]] if not passages else []))
            terms = tuple((h, "HEADING") for h in headings) + tuple((c, "CODE") for c in _code_terms(prose))
            if len(passages) == first:   # what links call the section (resolve_links): on its first passage
                terms += tuple((a, ANCHOR) for a in section.anchors)
            links = tuple(link for _, _, paragraph_links in chunk for link in paragraph_links)
            cite = Citation(rel, _placed(finder, [p for p, _, _ in chunk]), section=title)
            passages.append(Passage(id=f"{rel}#{len(passages)}", title=title, text=body, title_is_name=False,
                                    title_in_text=True, ner_text=blank_code(body, spans), terms=terms,
                                    links=links, cite=cite))
    return passages


def _code_terms(prose: str) -> list[str]:
    """The identifiers written in backticks in ``prose``, each qualified one followed by the
    shorter names it is also written as (`app.teardown_appcontext()` also names
    `teardown_appcontext`, which another page documents): the walk crosses from one to the other."""
    names = code_identifiers(prose)
    return list(dict.fromkeys(n for name in names for n in (name, *name_suffixes(name))))


def _merge_paragraphs(paragraphs: list, max_chars: int) -> list[list]:
    """Consecutive paragraphs ``(text, …)`` merged into chunks of at most ``max_chars``
    characters; a longer paragraph is first cut into pieces that fit (at line breaks, sentence
    ends, then words: :func:`textsplit.split_text`), each keeping the paragraph's other fields."""
    chunks: list[list] = []
    size = 0
    pieces = ((piece, *para[1:]) for para in paragraphs
              for piece in (split_text(para[0], max_chars) if len(para[0]) > max_chars else [para[0]]))
    for para in pieces:
        if chunks and size + 1 + len(para[0]) <= max_chars:
            chunks[-1].append(para)
            size += 1 + len(para[0])
        else:
            chunks.append([para])
            size = len(para[0])
    return chunks


def _split_text_file(file: Path, rel: str, text: str, max_chars: int, finder: LineFinder) -> list[Passage]:
    """Split on blank lines, then merge consecutive paragraphs up to ``max_chars``."""
    paragraphs = [" ".join(p.split()) for p in _BLANK_LINES.split(text)]
    paragraphs = [(p,) for p in paragraphs if p]
    if not paragraphs:
        log.warning("skipping %s: empty file", file)
        return []
    chunks = _merge_paragraphs(paragraphs, max_chars)
    return [Passage(id=f"{rel}#{n}", title=rel, text="\n".join(p for p, in chunk), title_is_name=False,
                    cite=Citation(rel, _placed(finder, [p for p, in chunk])))
            for n, chunk in enumerate(chunks)]


def _record_to_passage(path: Path, where: str, record: object, default_id: str,
                       lines: tuple[int, int] | None = None) -> Passage:
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
    return Passage(id=pid, title=title.strip(), text=text, cite=Citation(path.name, lines, section=title.strip()))


def _check_size(where: object, size: int, limit: int) -> None:
    if size > limit:
        need = -(-size // 1_000_000) + 1
        raise CorpusError(f"{where}: {size / 1e6:.1f} MB, over the {limit / 1e6:g} MB limit for one document "
                          f"(--max-file-mb); pass --max-file-mb {need} to index it")


def _load_jsonl(path: Path, limit: int = 0) -> list[Passage]:
    passages = []
    for lineno, line in jsonl_lines(read_utf8(path)):
        if limit:
            _check_size(f"{path}:{lineno}", len(line), limit)
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{lineno}: malformed JSON ({exc.msg}); fix or remove that line") from None
        passages.append(_record_to_passage(path, f"line {lineno}", record, str(len(passages)), (lineno, lineno)))
    return passages


def _load_json(path: Path, limit: int = 0) -> list[Passage]:
    raw = read_utf8(path)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    if not isinstance(data, list):
        raise CorpusError(f"{path}: expected a JSON list of passages (objects with 'text', or strings)")
    spans = _item_lines(raw)
    passages = [_record_to_passage(path, f"item {i}", rec, str(i), spans[i] if i < len(spans) else None)
                for i, rec in enumerate(data)]
    for i, p in enumerate(passages):
        if limit:
            _check_size(f"{path}: item {i}", len(p.text), limit)
    return passages


def _item_lines(raw: str) -> list[tuple[int, int]]:
    """(first, last) line of each item of a JSON list (decoded one by one to find where each ends)."""
    decoder, out = json.JSONDecoder(), []
    pos = raw.index("[") + 1
    newlines = [i for i, ch in enumerate(raw) if ch == "\n"]
    while True:
        while pos < len(raw) and raw[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(raw) or raw[pos] == "]":
            return out
        _, end = decoder.raw_decode(raw, pos)
        out.append((bisect.bisect_right(newlines, pos - 1) + 1, bisect.bisect_right(newlines, end - 1) + 1))
        pos = end


def _check_unique_ids(path: Path, passages: list[Passage]) -> None:
    seen: set[str] = set()
    for p in passages:
        if p.id in seen:
            raise CorpusError(f"{path}: duplicate passage id {p.id!r}; ids must be unique")
        seen.add(p.id)
