"""MyST Markdown (Sphinx's Markdown) turned into the plain Markdown ``markdown.py`` reads.

MyST adds roles (``{ref}`Title <label>```), directives in fences (```` ```{note} ````,
``:::{warning}``), targets (``(label)=``) and comments (``% text``). Left alone they leak
into passages and entities ("ref", "--some-option <target-label>"), and an admonition fence is
read as a code block. The same rules as for reStructuredText (``rst.py``) apply: roles become
their text (code-like ones in backticks, ``{doc}`` a link), admonitions and version notes stay
as text, code directives stay code, ``eval-rst`` is read as reStructuredText,
``toctree``/``index``/``auto*``/``include`` and the like are dropped, comments and MyST-NB cell
breaks (``+++``) removed, a figure's caption kept, a ``list-table``/``csv-table`` read as rows
("a | b"), ``{numref}``/``{eq}`` labels dropped and ``{{ name }}`` substitutions read as their
name (the value lies elsewhere, and a passage's words must be on its lines). A
target above a heading becomes the heading's explicit id (``## Title {#label}``) and
``{ref}`label``` a link to it; other targets are removed. A file without MyST syntax is
returned unchanged.
"""

from __future__ import annotations

import re
import textwrap

from .links import label_id
from .markdown import FENCE
from .rst import (CODE_DIRECTIVES, CODE_ROLES, CONTAINERS, DROP_DIRECTIVES, TITLED_CONTAINERS, VERSION_DIRECTIVES,
                  csv_rows, numbered_text, read_rst, role_text, shows_nothing, title_head)

# A role, or an inline code span (whose text is kept: "`/items/{item_id}`" holds no role), or a
# substitution ("{{ project }}": its name, as reStructuredText's |name| reads; the value is elsewhere).
_ROLE_OR_CODE = re.compile(r"(?<![/$])\{([A-Za-z][\w:+-]*)\}`([^`]+)`|`[^`\n]+`|\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}")
_DIRECTIVE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\{([A-Za-z][\w:+-]*)\}\s*(.*)$")
_TARGET = re.compile(r"^\s*\(([^()\s](?:[^()\n]*[^()\s])?)\)=\s*$")   # "(label)=", "(Hash-checking mode)="
_COMMENT = re.compile(r"^\s*%(\s|$)")
_ATX = re.compile(r"^\s{0,3}#{1,6}\s")
_HAS_ID = re.compile(r"\{\s*#[^}]*\}\s*$")
_OPTION = re.compile(r"^\s*:[\w-]+:(\s.*)?$")
_MYST_BLOCK = re.compile(r"^\s*(`{3,}|:{3,})\{[A-Za-z]|^\s*\([^()\s](?:[^()\n]*[^()\s])?\)=\s*$", re.M)
_CELL_BREAK = re.compile(r"^\+\+\+(\s.*)?$")   # MyST-NB: a notebook cell boundary, with its metadata
_MATH_LABEL = re.compile(r"^(\s*\$\$)\s*\([^()\s]+\)\s*$")   # "$$ (label)": the equation's label
_ROW = re.compile(r"^(\s*)[*-]\s+-\s*(.*)$")   # a list-table row: "* - first cell"
_CELL = re.compile(r"^(\s*)-\s*(.*)$")
_DROP_MORE = {"tableofcontents", "contents", "bibliography", "mermaid", "dot"}
# Quarto and R Markdown code chunks (```{r}, ```{python}): code, whatever engine runs them.
_CODE_CELLS = {"r", "python", "julia", "bash", "sh", "sql", "ojs", "js", "javascript", "stan", "rcpp", "octave",
               "matlab", "scala", "perl", "ruby", "sas", "stata", "powershell", "zsh", "c", "cpp", "rust", "go"}
# Directives whose argument is a title (a tab, a drop-down, a card), not a signature.
_TITLED = TITLED_CONTAINERS | {"topic", "sidebar", "rubric"}
_TITLES = {"note": "Note", "warning": "Warning", "tip": "Tip", "important": "Important", "hint": "Hint",
           "caution": "Caution", "attention": "Attention", "danger": "Danger", "error": "Error",
           "seealso": "See also", "todo": "To do"}


def is_myst(text: str) -> bool:
    """A directive fence, a target, or a role outside code spans."""
    return bool(_MYST_BLOCK.search(text)) or any(m.group(1) for m in _ROLE_OR_CODE.finditer(text))


def to_markdown(text: str) -> str:
    """Plain Markdown for a MyST document (unchanged when it has no MyST syntax)."""
    if not is_myst(text):
        return text
    return "\n".join(_lines(text.split("\n")))


def _lines(lines: list[str]) -> list[str]:
    lines = list(lines)   # a label's heading gets its id in place
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _DIRECTIVE.match(line)
        if m:
            indent, fence, name, args = m.groups()
            end = _closing(lines, i + 1, fence)
            out.extend(_directive(name.split(":")[-1].lower(), args.strip(), lines[i + 1:end], indent))
            i = end + 1
            continue
        if _TARGET.match(line):   # a label: kept on the heading it names, as an explicit id
            nxt = next((k for k in range(i + 1, len(lines)) if lines[k].strip()), None)
            if nxt is not None and _ATX.match(lines[nxt]) and not _HAS_ID.search(lines[nxt]):
                lines[nxt] = f"{lines[nxt].rstrip()} {{#{label_id(_TARGET.match(line).group(1))}}}"
            i += 1
            continue
        if _COMMENT.match(line) or _CELL_BREAK.match(line):
            i += 1
            continue
        fence = FENCE.match(line)
        if fence:   # an ordinary code fence (a list item's too): copied as it is
            end = _closing(lines, i + 1, fence.group(1))
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        out.append(_ROLE_OR_CODE.sub(_role, _MATH_LABEL.sub(r"\1", line)))
        i += 1
    return out


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The index of the line closing ``fence`` (the same character, at least as long), or the end."""
    char, size = fence[0], len(fence)
    for k in range(start, len(lines)):
        stripped = lines[k].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= size:
            return k
    return len(lines)


def _directive(name: str, args: str, body: list[str], indent: str) -> list[str]:
    while body and _OPTION.match(body[0]):   # ":key: value" options first
        body = body[1:]
    if name == "figure":   # the image is no text; its caption and legend are
        return ["", *_lines(body), ""]
    if name in ("list-table", "csv-table"):
        rows = _list_table(body) if name == "list-table" else [_ROLE_OR_CODE.sub(_role, r) for r in csv_rows(body)]
        return ["", *([f"{indent}{args}", ""] if args else []), *(x for row in rows for x in (f"{indent}{row}", ""))]
    if name in DROP_DIRECTIVES or name in _DROP_MORE or name.startswith("auto"):
        return []
    if name == "glossary":
        return _glossary(body, indent)
    if name in ("eval-rst", "eval-rest"):
        return _eval_rst(body, indent)
    if name in CODE_DIRECTIVES or name == "code-cell" or name in _CODE_CELLS:
        return [f"{indent}```{args.split()[0] if args else ''}", *body, f"{indent}```"]
    if name in VERSION_DIRECTIVES:
        version, _, rest = args.partition(" ")
        head = f"{VERSION_DIRECTIVES[name]} {version}.".strip() + (f" {rest.strip()}" if rest.strip() else "")
    elif name == "admonition":
        head = f"{args}:" if args else ""
    elif name in _TITLED:
        head = title_head(args)
    elif name in CONTAINERS:
        head = ""
    elif name in _TITLES:
        head = f"{_TITLES[name]}" + (f" ({args})" if args else "") + ":"
    elif shows_nothing(name, any(line.strip() for line in body)):   # generated from outside the folder
        return []
    else:
        head = f"`{args}`" if args else ""   # a described object's signature, or nothing
    inner = _lines(body)
    first = next((k for k, text in enumerate(inner) if text.strip()), None)
    if head and first is not None and not inner[first].lstrip().startswith(("```", "~~~", "#", "-", "*", "|")):
        inner[first] = f"{indent}{head} {inner[first].strip()}"
    elif head:
        inner.insert(0, f"{indent}{head}")
        inner.insert(1, "")
    return ["", *inner, ""]


def _list_table(body: list[str]) -> list[str]:
    """A ``list-table``'s rows ("* - a" then "  - b": one row, two cells) as "a | b", as
    reStructuredText tables read; a cell's further lines join it."""
    rows: list[list[str]] = []
    for line in body:
        row, cell = _ROW.match(line), _CELL.match(line)
        if row:
            rows.append([row.group(2).strip()])
        elif cell and rows:
            rows[-1].append(cell.group(2).strip())
        elif line.strip() and rows:
            rows[-1][-1] = f"{rows[-1][-1]} {line.strip()}".strip()
    return [" | ".join(_ROLE_OR_CODE.sub(_role, c) for c in cells) for cells in rows if any(cells)]


def _eval_rst(body: list[str], indent: str) -> list[str]:
    """reStructuredText inside MyST, read by ``rst.py`` (its roles, directives and labels as in a
    ``.rst`` file; ``automodule`` and the like still drop): its paragraphs as Markdown ones, code as
    fenced blocks, links as Markdown links. Its own section titles, if any, become paragraphs."""
    out = [""]
    for section in read_rst(textwrap.dedent("\n".join(body)), fallback_title=""):
        for text, code, links in zip(section.paragraphs, section.code, section.links):
            if code:
                out += [f"{indent}```", *text.split("\n"), f"{indent}```", ""]
                continue
            for shown, target in links:   # the link again, as Markdown writes it, on its first mention
                text = text.replace(shown, f"[{shown}]({target})", 1) if "[" not in shown else text
            out += [f"{indent}{text}", ""]
    return out


def _glossary(body: list[str], indent: str) -> list[str]:
    """A glossary's entries (a term on its own line, its definition indented below) as
    paragraphs "`term`: definition": the term is code, as ``{term}`` mentions of it are."""
    lines = [line for line in body if line.strip()]
    base = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    entries: list[tuple[str, list[str]]] = []
    for line in lines:
        if len(line) - len(line.lstrip()) > base and entries:
            entries[-1][1].append(_ROLE_OR_CODE.sub(_role, line.strip()))
        else:
            entries.append((line.strip(), []))
    out = [""]
    for term, definition in entries:
        out += [f"{indent}`{term}`:" + (f" {' '.join(definition)}" if definition else ""), ""]
    return out


def _role(m: re.Match) -> str:
    if m.group(3) is not None:   # a substitution: its name
        return m.group(3)
    if m.group(1) is None:   # an inline code span: as it is
        return m.group(0)
    role, raw = m.group(1).split(":")[-1].lower(), m.group(2)
    shown, target = role_text(raw)
    if role in ("numref", "eq"):   # a number Sphinx fills in: the title without it, else the label
        return numbered_text(shown, target)
    if role == "doc" and target:
        return f"[{shown}]({target})"
    if role == "ref" and target:   # a label; the corpus loader finds the heading it names
        return f"[{shown}](ref:{label_id(target).casefold()})"
    if role in CODE_ROLES or role == "term":   # a glossary term: code, as its entry writes it
        return f"`{shown}`"
    return shown
