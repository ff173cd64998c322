"""reStructuredText (Sphinx) read with docutils: sections by title, clean prose, code kept apart.

What the engine sees of a ``.rst`` file:

* **Sections** from docutils' document tree, with the title path as the passage title.
* **Prose**: paragraphs, list items, definition lists ("term: definition"), option lists
  ("`-v`, `--verbose`: print more"), table rows ("a | b"), admonitions and version notes kept
  as text; Sphinx roles reduced to their text (``:ref:`Title <label>``` → "Title",
  ``:option:`--x``` → "`--x`", ``:func:`~a.b``` → "`b`"), code-like roles written in
  backticks so that they become candidate terms, as in Markdown.
* **Code**: literal blocks, ``code-block``, ``doctest`` and the like are code paragraphs (BM25
  and embeddings read them, NER does not).
* **Links**: ``:doc:`` names a document, ``:ref:`` a label; a label (``.. _label:`` above a
  title) is kept as an anchor of its section, so the corpus loader can resolve the link. A
  glossary entry's term and a ``:term:`` role are both written as code: one entity joins the
  passages that use a term to the passage that defines it.
* **Figures and CSV tables**: a figure's caption and legend are text (its image is not); an
  inline ``csv-table`` reads as rows ("a | b"). A tab's, a card's or a drop-down's title heads
  its text ("macOS/Linux:"); ``only`` and ``ifconfig`` keep their text (it is the page's, for
  some builders).
* **Which files**: ``.rst`` and ``.rest``, and a ``.txt`` file that holds reStructuredText
  markup (:func:`looks_like_rst`).
* **Dropped**: ``toctree``, ``index``, ``auto*`` (they document code not in the folder),
  ``include``/``literalinclude``/``raw`` (never read other files), comments, targets,
  substitution definitions and docutils' own error messages. A substitution (``|XHR|``) reads
  as its name, the word its line holds: its definition usually lies elsewhere in the file (or in
  Sphinx's ``rst_epilog``), and a passage's words must be on the lines it cites.

Sphinx's directives and roles are unknown to plain docutils: during a parse every unknown role
and directive gets a generic handler (below), so nothing is lost to an "unknown directive"
error and nothing is printed.
"""

from __future__ import annotations

import contextlib
import csv
import re

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from docutils.readers import standalone
from docutils.transforms import references

from .markdown import Section

DROP_DIRECTIVES = {"toctree", "index", "include", "literalinclude", "raw", "meta", "highlight", "currentmodule",
                    "module", "sectionauthor", "codeauthor", "moduleauthor", "default-role", "role", "tabularcolumns",
                    "contents", "image", "figure", "default-domain", "testsetup", "testcleanup",
                    "autosummary", "graphviz", "digraph", "graph", "csv-table"}
# Directives whose argument is a title (sphinx-tabs, sphinx-design), not a described object's signature.
TITLED_CONTAINERS = {"tab", "group-tab", "code-tab", "tab-item", "dropdown", "card", "grid-item-card", "margin",
                     "aside"}
# Directives that only group their content (tabs, grids, builder conditions): no title, the text kept.
CONTAINERS = {"hlist", "tabs", "tab-set", "grid", "container", "div", "rst-class", "centered", "only", "ifconfig"}
CODE_DIRECTIVES = {"code-block", "sourcecode", "code", "doctest", "testcode", "testoutput", "productionlist",
                    "parsed-literal", "literal-block", "prompt", "console"}
VERSION_DIRECTIVES = {"versionadded": "Added in version", "versionchanged": "Changed in version",
                       "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
# Directives that describe an object (Sphinx's domains, CMake's): their argument is a signature,
# shown even without content. Any other directive docutils does not know shows nothing without
# content (:func:`shows_nothing`): it writes text from outside the folder (pip's
# "pip-command-usage:: hash", CMake's "cmake-module:: ../../Modules/X.cmake") or nothing at all.
OBJECT_DIRECTIVES = {"function", "class", "method", "attribute", "property", "data", "exception", "decorator",
                     "decoratormethod", "classmethod", "staticmethod", "option", "cmdoption", "envvar", "describe",
                     "object", "confval", "type", "member", "macro", "struct", "union", "enum", "enumerator", "var",
                     "concept", "alias", "directive", "event", "setting", "command", "variable", "genex", "signal"}
_ARGUMENT_IS_TEXT = {"seealso", "centered", "todo", *VERSION_DIRECTIVES}
# Roles whose text is an identifier, an option, a file or a command: written as inline code.
CODE_ROLES = {"option", "envvar", "file", "command", "program", "class", "func", "meth", "attr", "mod", "data",
               "exc", "obj", "const", "code", "samp", "kbd", "makevar", "mailheader", "mimetype", "regexp",
               "confval", "type", "member", "var", "macro", "struct", "enum", "any"}
_TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
_SETTINGS = {"report_level": 5, "halt_level": 5, "warning_stream": False, "file_insertion_enabled": False,
             "raw_enabled": False, "doctitle_xform": False, "sectsubtitle_xform": False, "input_encoding": "unicode",
             "line_length_limit": 1_000_000}


_UNRESOLVED = re.compile(r"^`?([^`]+?)`?__?$")
_NOTE_MARK = re.compile(r"\[[^\]]+\]_")   # an unresolved footnote or citation reference
_NUMBER_SLOT = re.compile(r"%s|\{(?:number|name)\}")


def role_text(text: str) -> tuple[str, str | None]:
    """(shown text, target) of a role's content: ``Title <target>`` → ("Title", "target");
    ``~pkg.mod.name`` → ("name", "pkg.mod.name"); a leading ``!`` (no link) is dropped."""
    text = text.replace("\x00", "")
    m = _TITLED.match(text)
    if m and m.group(1):
        return m.group(1).strip(), m.group(2).strip()
    target = text.strip().lstrip("!")
    if target.startswith("~"):
        target = target[1:]
        return target.rsplit(".", 1)[-1], target
    return target, target


def title_head(title: str) -> str:
    """A tab's or a card's title as the head of its text: "macOS/Linux:", "Why a venv?" ("" for none)."""
    title = title.strip()
    return title if not title or title[-1] in ".?!:" else f"{title}:"


def shows_nothing(name: str, has_content: bool) -> bool:
    """Whether a directive docutils does not know (named without its domain) writes no text: one
    without content that describes no object and whose argument is no text (see
    :data:`OBJECT_DIRECTIVES`)."""
    return not has_content and name not in OBJECT_DIRECTIVES and name not in _ARGUMENT_IS_TEXT


def numbered_text(shown: str, target: str | None) -> str:
    """What a numbered reference (``:numref:``, ``:eq:``) reads as: its title without the number
    Sphinx fills in (``Figure %s <fig-x>`` → "Figure"), else its label, as a bare ``:ref:`` does
    (the cited lines hold the label, not the number or the caption)."""
    title = " ".join(_NUMBER_SLOT.sub("", shown).split()) if shown != target else ""
    return title or (target or shown)


def csv_rows(lines) -> list[str]:
    """The rows of an inline CSV table as "a | b", as other tables read (its options already apart)."""
    text = [line.strip() for line in lines if line.strip()]
    return [" | ".join(c.strip() for c in cells) for cells in csv.reader(text, skipinitialspace=True) if any(cells)]


def _generic_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    shown, target = role_text(text)
    role = name.split(":")[-1].lower()
    if role in ("numref", "eq"):
        shown = numbered_text(shown, target)
    if role == "term":   # a glossary term: written as code, the entity its glossary entry also carries
        return [nodes.literal(rawtext, shown)], []
    if role in ("doc", "ref", "numref", "download") and target:
        return [nodes.reference(rawtext, shown, refuri=f"{role}:{target}")], []
    if role in CODE_ROLES:
        return [nodes.literal(rawtext, shown)], []
    return [nodes.Text(shown)], []


class _AnyOptions(dict):
    """Directive options: every name accepted, its value kept as text."""

    def __getitem__(self, key):
        return directives.unchanged

    def __contains__(self, key):
        return True


class _Generic(Directive):
    """A Sphinx directive plain docutils does not know: its arguments and content kept as text
    (a description's signature first), code directives as a literal block, the rest dropped."""

    optional_arguments = 3
    final_argument_whitespace = True
    has_content = True
    option_spec = _AnyOptions(x=directives.unchanged)

    def run(self):
        name = self.name.split(":")[-1].lower()
        if name == "figure":   # the image is no text; its caption and legend are
            container = nodes.container()
            self.state.nested_parse(self.content, self.content_offset, container)
            return [container]
        if name == "csv-table":   # an inline table (one read from a file has no content: nothing)
            return [nodes.paragraph(row, row) for row in csv_rows(self.content)]
        if name in DROP_DIRECTIVES or name.startswith("auto") or shows_nothing(name, any(self.content)):
            return []
        if name in CODE_DIRECTIVES:
            code = "\n".join(self.content)
            return [nodes.literal_block(code, code)] if code.strip() else []
        container = nodes.container()
        heading = " ".join(self.arguments).strip()
        if name in VERSION_DIRECTIVES:   # "2.2 The explanation" (Sphinx reads the rest as text)
            version, _, rest = heading.partition(" ")
            heading = f"{VERSION_DIRECTIVES[name]} {version}".strip() + ("." if version else "")
            if rest.strip():
                inline, _ = self.state.inline_text(" ".join(rest.split()), self.lineno)
                container += nodes.paragraph(rest, "", *inline)
        elif name in TITLED_CONTAINERS:   # a tab's, a card's, a drop-down's title: words, not a signature
            heading = title_head(heading)
        elif name == "glossary" or name in CONTAINERS:
            heading = ""
            container["classes"].append(name)
        elif heading and ("(" in heading or name not in ("note", "warning", "tip", "seealso", "admonition",
                                                           "rubric", "topic", "sidebar", "hint", "important")):
            heading = f"`{heading}`"   # a described object's signature: an identifier
        if heading:
            container.insert(0, nodes.paragraph(heading, heading))
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, container)
        return [container]


@contextlib.contextmanager
def _sphinx_tolerant():
    """Unknown roles and directives get the generic handlers for the duration of a parse."""
    real_role, real_directive = roles.role, directives.directive

    def role(name, language, lineno, reporter):
        found, messages = real_role(name, language, lineno, reporter)
        return (found or _generic_role), []

    def directive(name, language, document):
        found, messages = real_directive(name, language, document)
        # Sphinx's options too; docutils' own parsed-literal renders its markup (a synopsis's roles and links)
        generic = name.lower() in DROP_DIRECTIVES or (name.lower() in CODE_DIRECTIVES and name != "parsed-literal")
        return (found if found and not generic else _Generic), []

    roles.role, directives.directive = role, directive
    try:
        yield
    finally:
        roles.role, directives.directive = real_role, real_directive


class _Reader(standalone.Reader):
    """docutils' standalone reader without substitution: ``|name|`` stays as written."""

    def get_transforms(self):
        return [t for t in super().get_transforms() if t is not references.Substitutions]


_RST_MARKUP = re.compile(r"^\.\. (?:[A-Za-z][\w:.+-]*::|_[^:\n]+:\s*$)"   # a directive, a label
                         r"|:[a-z][\w:+-]*:`[^`\n]+`", re.MULTILINE)            # a role


_INCLUDE = re.compile(r"^\s*\.\.\s+(?:literal)?include::", re.MULTILINE)


def only_included(text: str) -> bool:
    """Whether a page that gave no section includes other files (``.. include::``): its text is
    theirs (CMake's ``CMAKE_FIND_ROOT_PATH_MODE_PACKAGE.rst`` is a title and an included fragment)."""
    return bool(_INCLUDE.search(text))


def looks_like_rst(text: str) -> bool:
    """Whether a ``.txt`` file is reStructuredText: it holds a directive (``.. note::``), a label
    (``.. _label:``) or a Sphinx role. Django's documentation is written in ``.txt`` files, and
    Sphinx projects keep the fragments they include (CMake's ``FIND_XXX.txt``) under that name;
    read as plain text, "``.. versionadded:: 3.12``" and ":variable:`CMAKE_IGNORE_PATH`" leaked."""
    return _RST_MARKUP.search(text) is not None


def read_rst(text: str, fallback_title: str) -> list[Section]:
    """Sections of a reStructuredText document (see the module docstring); the document title is
    its first section title, else ``fallback_title``."""
    with _sphinx_tolerant():
        tree = publish_doctree(text, reader=_Reader(), settings_overrides=_SETTINGS)
    for bad in list(tree.findall(nodes.problematic)):   # markup docutils could not resolve: as Sphinx shows it
        bad.parent.replace(bad, nodes.Text(_unmarked(bad.astext())))
    for ref in list(tree.findall(nodes.substitution_reference)):
        _apart(ref)
    first = next(iter(tree.findall(nodes.title)), None)
    title = " ".join(first.astext().split()) if first is not None else fallback_title
    sections = [Section([title])]
    _walk(tree, [title], sections, top=True)
    return [s for s in sections if s.paragraphs]


def _apart(ref) -> None:
    """A substitution read as its name stands apart from the words it is glued to: "v\\ |version|"
    read "vversion", a word of no line (its line holds "v" and "version")."""
    parent = ref.parent
    at = parent.index(ref)
    if at + 1 < len(parent) and isinstance(parent[at + 1], nodes.Text) and parent[at + 1].astext()[:1].isalnum():
        parent.insert(at + 1, nodes.Text(" "))
    if at > 0 and isinstance(parent[at - 1], nodes.Text) and parent[at - 1].astext()[-1:].isalnum():
        parent.insert(at, nodes.Text(" "))


def _walk(node, path: list[str], sections: list[Section], top: bool = False) -> None:
    for child in node.children:
        if isinstance(child, nodes.section):
            heading = child.next_node(nodes.title)
            name = " ".join(heading.astext().split()) if heading is not None else "…"
            sub = path if (top and name == path[0] and not any(s.paragraphs for s in sections)) else [*path, name]
            sections.append(Section(sub, anchors=_labels(child, heading)))
            _walk(child, sub, sections)
            sections.append(Section(path))   # text after a subsection belongs to the parent again
        else:
            _block(child, sections[-1])


def _labels(section, heading) -> list[str]:
    """The explicit targets (``.. _label:``) that name ``section``, as ``ref:label``: docutils
    files them under the section's names, next to the name its title gives it (the same name when
    the label is the title's words, ``.. _pip download:`` over "pip download": explicit then)."""
    implicit = nodes.fully_normalize_name(heading.astext()) if heading is not None else None
    explicit = section.document.nametypes if section.document is not None else {}
    return [f"ref:{name}" for name in section.get("names", []) if name != implicit or explicit.get(name)]


def _block(node, section: Section) -> None:
    """Add one block-level node's text to ``section``."""
    if isinstance(node, (nodes.title, nodes.comment, nodes.target, nodes.substitution_definition,
                         nodes.system_message, nodes.raw, nodes.image, nodes.pending)):
        return
    if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
        code = node.astext().strip("\n")
        if code.strip():
            section.add(code, code=True)
    elif isinstance(node, (nodes.paragraph, nodes.rubric, nodes.line, nodes.attribution)):
        _prose(node, section)
    elif isinstance(node, nodes.definition_list_item):
        term = _inline(node.next_node(nodes.term) or nodes.Text(""))
        if term and _in_glossary(node):   # a defined term: code, so that :term: mentions meet it
            term = f"`{term.strip('`')}`"
        body = node.next_node(nodes.definition)
        _add_text(section, f"{term}: " if term else "", body)
    elif isinstance(node, nodes.option_list_item):   # "-v, --verbose  print more": the options are terms
        group = node.next_node(nodes.option_group)
        options = ", ".join(f"`{o.astext()}`" for o in group.findall(nodes.option)) if group is not None else ""
        _add_text(section, f"{options}: " if options else "", node.next_node(nodes.description))
    elif isinstance(node, nodes.field):
        name = node.next_node(nodes.field_name)
        _add_text(section, f"{name.astext()}: " if name is not None else "", node.next_node(nodes.field_body))
    elif isinstance(node, nodes.row):
        cells = [" ".join(_inline(p) for p in entry.findall(nodes.paragraph)) for entry in node.children]
        if any(cells):
            section.add(" | ".join(cells), links=[])
    elif isinstance(node, nodes.Admonition) and not isinstance(node, nodes.admonition):
        _add_text(section, f"{node.tagname.capitalize()}: ", node)
    else:
        for child in node.children:
            if isinstance(child, nodes.Element):
                _block(child, section)


def _in_glossary(node) -> bool:
    parent = node.parent
    while parent is not None and not (isinstance(parent, nodes.container) and "glossary" in parent["classes"]):
        parent = parent.parent
    return parent is not None


def _add_text(section: Section, prefix: str, body) -> None:
    """``prefix`` joined to the first paragraph of ``body``; the rest of body as its own blocks."""
    if body is None:
        if prefix.strip(": "):
            section.add(prefix.rstrip(": "))
        return
    before = len(section.paragraphs)
    for child in body.children:
        if isinstance(child, nodes.Element):
            _block(child, section)
    if prefix and len(section.paragraphs) > before and not section.code[before]:
        section.paragraphs[before] = prefix + section.paragraphs[before]
    elif prefix.strip(": "):
        section.paragraphs.insert(before, prefix.rstrip(": "))
        section.code.insert(before, False)
        section.links.insert(before, [])


def _prose(node, section: Section) -> None:
    text = " ".join(_inline(node).split())
    if text:
        links = [(" ".join(r.astext().split()), r.get("refuri", "")) for r in node.findall(nodes.reference)]
        section.add(text, links=[(t, _link_target(uri)) for t, uri in links if t and _link_target(uri)])


def _link_target(uri: str) -> str | None:
    """A role's link as the corpus loader resolves it: a document path (``:doc:``), a label
    (``:ref:`` → ``ref:label``; Sphinx compares labels in lower case); None for the rest."""
    if uri.startswith("doc:"):
        return uri[4:]
    if uri.startswith("ref:"):
        return "ref:" + nodes.fully_normalize_name(uri[4:])
    return None


def _unmarked(raw: str) -> str:
    """The text of markup docutils left unresolved: a reference to a target the file does not
    hold (``PATHS`_``, ``Foo_``, ```Title <x>`_``) reads as its text, as Sphinx writes it (it
    warns and keeps the words); a footnote or citation mark (``[1]_``) is none; anything else as
    written."""
    if _NOTE_MARK.fullmatch(raw):
        return ""
    m = _UNRESOLVED.match(raw)
    return role_text(m.group(1))[0] if m else raw


def _inline(node) -> str:
    """The text of inline markup: literals in backticks (candidate terms), the rest as written."""
    if isinstance(node, nodes.Text):   # "H\ :sub:`2`\ O": docutils keeps the escapes as NUL bytes
        return nodes.unescape(str(node))
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, (nodes.system_message, nodes.target, nodes.footnote_reference,
                         nodes.citation_reference, nodes.image)):
        return ""
    return "".join(_inline(child) for child in node.children)
