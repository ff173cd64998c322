"""reStructuredText read with docutils (Sphinx roles and directives included), and every file of
an input folder accounted for."""

import logging
import textwrap

from linearrag.corpus import load_corpus
from linearrag.inventory import Inventory
from linearrag.lines import words_held
from linearrag.rst import read_rst, role_text

from .conftest import terms_graph

DOC = textwrap.dedent("""\
    .. _cli:

    Command Line Interface
    ======================

    Installing Flask installs the :command:`flask` script. See :ref:`the tutorial <tutorial>`
    and :doc:`/deploying/index` for more; set :envvar:`FLASK_APP` or pass :option:`--app`.
    Call :func:`~flask.Flask.run` or :meth:`!flask.Flask.test_client`.

    .. toctree::
       :maxdepth: 2

       quickstart

    .. automodule:: flask
       :members:

    Run the Server
    --------------

    .. code-block:: text

       $ flask --app hello run

    .. note::
       Do not use the development server in production.

    .. versionadded:: 2.2
       The ``--debug`` option.

    .. function:: url_for(endpoint, **values)

       Generate a URL to the given endpoint.

    ``FLASK_DEBUG``
        Enables debug mode.

    =====  ======
    Name   Effect
    =====  ======
    run    serve
    =====  ======

    .. |sub| replace:: substituted
    .. a comment that must not show

    After the subsection.
    """)


def test_sections_prose_code_and_sphinx_markup():
    sections = read_rst(DOC, "fallback")
    assert [s.path for s in sections] == [["Command Line Interface"], ["Command Line Interface", "Run the Server"]]
    intro, server = sections
    text = intro.paragraphs[0]
    assert text.startswith("Installing Flask installs the `flask` script. See the tutorial and /deploying/index")
    assert "`FLASK_APP`" in text and "`--app`" in text and "`run`" in text and "`flask.Flask.test_client`" in text
    assert intro.links[0] == [("the tutorial", "ref:tutorial"), ("/deploying/index", "/deploying/index")]
    assert intro.anchors == ["ref:cli"] and server.anchors == []   # the label above the title names it
    assert "quickstart" not in " ".join(intro.paragraphs) and "members" not in " ".join(intro.paragraphs)
    body = list(zip(server.paragraphs, server.code))
    assert ("$ flask --app hello run", True) in body
    assert ("Note: Do not use the development server in production.", False) in body
    assert ("Added in version 2.2.", False) in body and ("The `--debug` option.", False) in body
    assert ("`url_for(endpoint, **values)`", False) in body
    assert ("`FLASK_DEBUG`: Enables debug mode.", False) in body
    assert ("Name | Effect", False) in body and ("run | serve", False) in body
    assert "After the subsection." in server.paragraphs[-1]
    assert not any("comment" in p for p in server.paragraphs)


def test_role_text():
    assert role_text("Title <label>") == ("Title", "label")
    assert role_text("~pkg.mod.name") == ("name", "pkg.mod.name")
    assert role_text("!plain") == ("plain", "plain")


def test_broken_markup_never_raises_and_prints_nothing(capsys):
    sections = read_rst("Title\n===\n\n.. unknown-thing:: x\n   :opt: 1\n\n   body *unclosed\n\n:weird:`x", "f")
    assert sections and capsys.readouterr().err == ""


def test_a_folder_is_accounted_for(tmp_path, caplog):
    (tmp_path / "guide.rst").write_text(DOC)
    (tmp_path / "other.rst").write_text("Other\n=====\n\nSee :doc:`guide` for the server.\n")
    (tmp_path / "empty.rst").write_text(".. toctree::\n\n   guide\n")
    (tmp_path / "conf.py").write_text("project = 'x'\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref")
    inventory = Inventory()
    with caplog.at_level(logging.INFO):
        passages = load_corpus(tmp_path, inventory=inventory)
    assert inventory.to_dict() == {"read": {".rst": 2}, "skipped": {
        "hidden": {"(none)": 1}, "no reader": {".png": 1, ".py": 1}, "no text": {".rst": 1}}}
    assert "skipped 2: .png 1, .py 1 — no reader" in caplog.text
    other = [p for p in passages if p.id.startswith("other.rst")][0]
    assert other.title == "Other" and other.links == (("guide", "Command Line Interface"),)


MYST = textwrap.dedent("""\
    (installation)=
    # Installation

    % a comment nobody should see

    Install with {command}`pip install tool` and read {ref}`the guide <guide-label>`; see {doc}`/cli/run`.
    Set {envvar}`APP_CONFIG_PATH` or pass {option}`--no-cache`.

    ```{note}
    :class: tip
    Use a virtual environment.
    ```

    :::{warning} Careful
    Do not run as root.
    :::

    ```{code-block} bash
    $ tool --version
    ```

    ```{toctree}
    :maxdepth: 1
    cli/run
    ```

    ```python
    x = {role}`kept as code`
    ```
    """)


def test_myst_roles_directives_targets_and_comments(tmp_path):
    """MyST in Markdown: roles to their text, admonitions as text, code as code, the rest dropped."""
    from linearrag.myst import to_markdown
    from linearrag.markdown import read_sections

    (section,) = read_sections(to_markdown(MYST), "f")
    assert section.path == ["Installation"]
    body = list(zip(section.paragraphs, section.code))
    assert body[0] == ("Install with `pip install tool` and read the guide; see /cli/run. Set `APP_CONFIG_PATH` "
                       "or pass `--no-cache`.", False)
    assert ("Note: Use a virtual environment.", False) in body
    assert ("Warning (Careful): Do not run as root.", False) in body
    assert ("$ tool --version", True) in body and ("x = {role}`kept as code`", True) in body
    text = " ".join(section.paragraphs)
    assert "installation)=" not in text and "comment" not in text and "maxdepth" not in text and "{" not in \
        text.replace("{role}", "")
    plain = "# Title\n\nNo MyST here: {braces}, `code` and `/items/{item_id}` then `more`.\n"
    assert to_markdown(plain) == plain
    (tmp_path / "install.md").write_text(MYST)
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "run.md").write_text("# Running\n\nThe run command starts the server.\n")
    passages = load_corpus(tmp_path)
    first = [p for p in passages if p.id.startswith("install.md")][0]
    assert ("/cli/run", "Running") in first.links


def test_a_jupyter_notebook_is_read_as_markdown_and_code(tmp_path):
    import json

    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"language": "python"}}, "cells": [
        {"cell_type": "markdown", "source": ["# Loading data\n", "\n", "We read {file}`data.csv` with pandas.\n"]},
        {"cell_type": "code", "source": "import pandas as pd\ndf = pd.read_csv('data.csv')\ndf.shape",
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": ["(120, 4)"],
                                                                 "image/png": "iVBOR"}}]},
        {"cell_type": "code", "source": "print('done')", "outputs": [{"output_type": "stream", "text": "done\n"}]},
        {"cell_type": "code", "source": "df.plot()", "outputs": [{"output_type": "display_data", "data": {
            "image/png": "iVBOR", "text/plain": ["<Figure size 640x480 with 1 Axes>"]}}]},
        {"cell_type": "raw", "source": "ignored"}]}
    (tmp_path / "load.ipynb").write_text(json.dumps(nb))
    (tmp_path / "broken.ipynb").write_text("{not json")
    inventory = Inventory()
    passages = load_corpus(tmp_path, inventory=inventory)
    assert inventory.to_dict() == {"read": {".ipynb": 1}, "skipped": {"unreadable": {".ipynb": 1}}}
    (p,) = passages
    assert p.title == "Loading data" and p.text.startswith("We read `data.csv` with pandas.")
    assert "df = pd.read_csv('data.csv')" in p.text and "(120, 4)" in p.text and "done" in p.text
    assert "iVBOR" not in p.text and "ignored" not in p.text and "Figure size" not in p.text


def test_titles_never_repeat_the_page_name(tmp_path):
    """A banner before the page's "# Setup" made its passages "Setup › Setup" (939 of 2,149 on
    docs-fastapi); the path is said once."""
    (tmp_path / "setup.md").write_text("Translated page, see the original.\n\n# Setup\n\nInstall it first.\n\n"
                                       "## Setup\n\nThen configure it.\n\n## Run\n\nStart it.\n")
    passages = load_corpus(tmp_path, max_chars=40)
    assert [(p.title, p.text) for p in passages] == [
        ("Setup", "Translated page, see the original."), ("Setup", "Install it first."),
        ("Setup", "Then configure it."), ("Setup › Run", "Start it.")]


def test_a_glossary_term_and_its_mentions_share_one_entity(tmp_path):
    """A Sphinx or MyST glossary entry writes its term as code, and so does every ``:term:`` /
    ``{term}`` mention: the graph joins the passage that uses a term to the one that defines it."""
    (tmp_path / "glossary.rst").write_text(textwrap.dedent("""\
        Glossary
        ========

        .. glossary::

           WSGI
              The Web Server Gateway Interface between servers and applications.

        definition list
           Not a glossary: its term stays text.
        """), encoding="utf-8")
    (tmp_path / "deploy.rst").write_text("Deploying\n=========\n\nAny :term:`WSGI` server will do.\n",
                                         encoding="utf-8")
    (tmp_path / "terms.md").write_text("# Terms\n\n```{glossary}\napp factory\n  A function that creates "
                                       "the app, see {ref}`setup`.\n```\n", encoding="utf-8")
    (tmp_path / "guide.md").write_text("# Guide\n\nWrite an {term}`app factory` first.\n", encoding="utf-8")
    passages = load_corpus(tmp_path)
    texts = {p.id: p.text for p in passages}
    assert texts["glossary.rst#0"].split("\n") == [
        "`WSGI`: The Web Server Gateway Interface between servers and applications.",
        "definition list: Not a glossary: its term stays text."]
    assert texts["deploy.rst#0"] == "Any `WSGI` server will do."
    assert texts["terms.md#0"] == "`app factory`: A function that creates the app, see setup."
    g = terms_graph(passages)
    ids = [p.id for p in passages]
    for key, holders in (("wsgi", {"glossary.rst#0", "deploy.rst#0"}), ("app factory", {"terms.md#0", "guide.md#0"})):
        assert {ids[r] for r in g.C[:, g.entity_keys.index(key)].nonzero()[0]} == holders


def test_myst_eval_rst_is_read_as_restructuredtext(tmp_path):
    """reStructuredText inside MyST (```` ```{eval-rst} ````) is read, not dropped: its roles,
    admonitions and code as in a ``.rst`` file, its ``:ref:`` a link, ``automodule`` still dropped."""
    (tmp_path / "guide.md").write_text(textwrap.dedent("""\
        # Guide

        ```{eval-rst}
        See :ref:`the tools <error-logging-tools>` and :func:`flask.Flask.run`.

        .. note:: Keep it.

        .. code-block:: python

           app.run()

        .. automodule:: flask
        ```

        After.
        """), encoding="utf-8")
    (tmp_path / "errors.rst").write_text("Errors\n======\n\n.. _error-logging-tools:\n\nError Logging Tools\n"
                                         "-------------------\n\nSentry aggregates errors.\n", encoding="utf-8")
    guide = [p for p in load_corpus(tmp_path) if p.id.startswith("guide.md")]
    assert [p.text for p in guide] == ["See the tools and `flask.Flask.run`.\nNote: Keep it.\napp.run()\nAfter."]
    assert guide[0].links == (("the tools", "Error Logging Tools"),)


MYST_BOOK = textwrap.dedent("""\
    ---
    myst:
      substitutions:
        project: Frobnicator
    ---
    # Getting started

    Welcome to {{ project }}; the template writes `{{ user.name }}`.[^pip]

    [^pip]: Or install it with conda.
        The channel is conda-forge.

    +++ {"slideshow": {"slide_type": "slide"}}

    ```{figure} arch.png
    :name: fig-arch

    The architecture of the frobnicator.
    ```

    See {numref}`fig-arch`, {numref}`Figure %s <fig-arch>` and {eq}`pythagoras`.

    $$
    a^2 + b^2 = c^2
    $$ (pythagoras)

    ```{list-table} Options
    :header-rows: 1

    * - Option
      - Meaning
    * - `--fast`
      - Go fast, even
        on battery
    ```

    ```{csv-table} Speeds
    :header: "Mode", "Speed"

    "slow", 1
    "fast", 10
    ```

    ````{tab-set}
    ```{tab-item} Linux
    Install with apt.
    ```
    ```{tab-item} macOS
    Install with brew.
    ```
    ````
    """)


def test_myst_book_markup_reads_as_text(tmp_path):
    """What Jupyter Book and MyST-NB pages add: substitutions read as their name, footnotes
    as text of their own, cell breaks dropped, a figure's caption kept (not its image),
    list and CSV tables as rows, tab titles as titles, figure and equation numbers dropped
    (their labels stay)."""
    from linearrag.markdown import read_sections
    from linearrag.myst import to_markdown

    (section,) = read_sections(to_markdown(MYST_BOOK), "f")
    text = section.paragraphs
    assert text[0] == "Welcome to project; the template writes `{{ user.name }}`."   # code keeps its braces
    assert "Or install it with conda. The channel is conda-forge." in text
    assert "The architecture of the frobnicator." in text
    # a numbered reference reads as its title without the number, else as its label (a bare
    # {ref} does the same): the lines hold the label, not the number Sphinx fills in
    assert "See fig-arch, Figure and pythagoras." in text
    assert "Option | Meaning" in text and "`--fast` | Go fast, even on battery" in text
    assert "Mode | Speed" not in text and "slow | 1" in text and "fast | 10" in text
    assert "Options" in text and "Speeds" in text
    assert "Linux: Install with apt." in text and "macOS: Install with brew." in text
    joined = " ".join(text)
    for debris in ("+++", "slide_type", "[^pip]", "arch.png", "%s", "(pythagoras)", "* -", "header-rows"):
        assert debris not in joined, debris
    (tmp_path / "book.md").write_text(MYST_BOOK)
    (passage,) = load_corpus(tmp_path)
    assert passage.cite is not None and passage.cite.lines
    assert words_held(passage.text, MYST_BOOK.split("\n"), *passage.cite.lines) == []   # its words are on its lines


def test_markdown_footnotes_keep_their_text():
    """A footnote's marker is no text; its definition is a paragraph where it is written (it was
    dropped with the reference-link definitions), and a ``[^x]`` in code stays."""
    from linearrag.markdown import read_sections, reference_targets

    doc = "# Notes\n\nBorrowing rules apply.[^1] Use `a[^1]` in code.\n\n[^1]: Unless the value is `Copy`.\n"
    (section,) = read_sections(doc, "f")
    assert section.paragraphs == ["Borrowing rules apply. Use `a[^1]` in code.", "Unless the value is `Copy`."]
    assert reference_targets(doc) == {}


def test_rst_figure_captions_and_inline_csv_tables_are_text(tmp_path):
    """A figure's caption and legend are prose (its image path is not); an inline CSV table reads
    as rows, like the other tables. A numbered reference reads as its title without the number
    ("Figure %s" → "Figure"), else as its label, as in MyST."""
    doc = textwrap.dedent("""\
        Architecture
        ============

        .. _fig-flow:

        .. figure:: arch.png
           :alt: boxes

           The request flows through the middleware.

        See :numref:`fig-flow` and :numref:`Figure %s <fig-flow>`, derived in :eq:`flow`.

        .. csv-table:: Speeds
           :header: "Mode", "Speed"

           "slow", 1
           "fast, really", 10
        """)
    (section,) = read_rst(doc, "f")
    assert "The request flows through the middleware." in section.paragraphs
    assert "slow | 1" in section.paragraphs and "fast, really | 10" in section.paragraphs
    assert "arch.png" not in " ".join(section.paragraphs)
    assert "See fig-flow and Figure, derived in flow." in section.paragraphs
    (tmp_path / "arch.rst").write_text(doc)
    (passage,) = load_corpus(tmp_path)
    assert words_held(passage.text, doc.split("\n"), *passage.cite.lines) == []


def test_tab_titles_are_words_and_conditional_text_is_kept():
    """A tab's or a drop-down's title heads its text as words ("macOS/Linux:"), not as code (an
    identifier entity), and the text of ``only`` / ``ifconfig`` is the page's: kept, in
    reStructuredText and in MyST alike."""
    from linearrag.markdown import read_sections
    from linearrag.myst import to_markdown

    doc = textwrap.dedent("""\
        Install
        =======

        .. tabs::

           .. group-tab:: macOS/Linux

              Use the system Python.

        .. dropdown:: Why a virtualenv?

           It keeps projects apart.

        .. only:: html

           The HTML build shows this text.
        """)
    (section,) = read_rst(doc, "f")
    assert section.paragraphs == ["macOS/Linux:", "Use the system Python.", "Why a virtualenv?",
                                  "It keeps projects apart.", "The HTML build shows this text."]
    myst = ("# Install\n\n```{only} html\nThe HTML build shows this text.\n```\n\n"
            ":::{dropdown} Why?\nIt keeps apart.\n:::\n")
    (section,) = read_sections(to_markdown(myst), "f")
    assert section.paragraphs == ["The HTML build shows this text.", "Why? It keeps apart."]


def test_escaped_spaces_and_option_lists():
    """docutils keeps backslash escapes as NUL bytes in its text nodes ("H\\ :sub:`2`\\ O"): none
    reaches a passage. An option list keeps its options, as terms ("`-v`, `--verbose`: …")."""
    doc = textwrap.dedent("""\
        Tools
        =====

        Water is H\\ :sub:`2`\\ O and `url_value_preprocessor`\\ s run first.

        -v, --verbose   print more
        -q              print less
        """)
    (section,) = read_rst(doc, "f")
    assert section.paragraphs == ["Water is H2O and url_value_preprocessors run first.",
                                  "`-v`, `--verbose`: print more", "`-q`: print less"]
    assert not any("\x00" in p for p in section.paragraphs)


def test_a_substitution_glued_to_a_word_stands_apart(tmp_path):
    """A substitution reads as its name (its definition lies in Sphinx's configuration), apart
    from the word an escaped space glues it to: "v\\ |version|" read "vversion", which no line
    holds, so the passage's citation failed."""
    doc = textwrap.dedent("""\
        Release
        =======

        This is Flask v\\ |version|, built with |tool|\\ s (see |XHR|).
        """)
    (section,) = read_rst(doc, "f")
    assert section.paragraphs == ["This is Flask v version, built with tool s (see XHR)."]
    (tmp_path / "release.rst").write_text(doc)
    (passage,) = load_corpus(tmp_path)
    assert words_held(passage.text, doc.split("\n"), *passage.cite.lines) == []


def test_a_page_whose_text_is_only_included_says_so(tmp_path, caplog):
    """CMake writes some pages as a title over ``.. include:: FRAGMENT.txt``, and Flask's changes
    page includes a file outside its docs folder. Included files are never read into another
    file's passages (a passage's words must be on the lines it cites); a fragment in the folder is
    read as a file of its own. The build says why the including page has no passage."""
    (tmp_path / "MODE_PACKAGE.rst").write_text("MODE_PACKAGE\n------------\n\n.. |X| replace:: find_package\n\n"
                                                 ".. include:: MODE_XXX.txt\n")
    (tmp_path / "license.rst").write_text("License\n=======\n\n.. literalinclude:: ../LICENSE.txt\n")
    (tmp_path / "MODE_XXX.txt").write_text("This variable controls whether :variable:`ROOT_PATH` is used by |X|.\n")
    (tmp_path / "empty.rst").write_text(".. toctree::\n\n   guide\n")
    inventory = Inventory()
    with caplog.at_level(logging.WARNING):
        passages = load_corpus(tmp_path, inventory=inventory)
    assert [p.id for p in passages] == ["MODE_XXX.txt#0"]
    assert inventory.to_dict()["skipped"] == {"only included text": {".rst": 2}, "no text": {".rst": 1}}
    assert "MODE_PACKAGE.rst: its text is only included from other files" in caplog.text


def test_txt_files_with_rst_markup_are_read_as_rst_and_parsed_literals_render(tmp_path):
    """Django writes its documentation in ``.txt`` files, and Sphinx projects keep the fragments
    they include under that name (CMake's ``FIND_XXX.txt``): a ``.txt`` holding a directive, a
    label or a role is reStructuredText; one without stays plain text, markup-looking words and
    all. A ``parsed-literal`` (a command's synopsis) renders its roles and links, and a link to a
    target the file lacks (``PATHS`_``, ``Hints_``: Sphinx warns) keeps its words."""
    (tmp_path / "howto.txt").write_text(textwrap.dedent("""\
        Search paths
        ============

        .. versionadded:: 3.12

        Set :variable:`CMAKE_IGNORE_PATH` to skip |FIND_XXX| paths; see Hints_.

        .. parsed-literal::

          find_file(<var> :ref:`NAMES <find-names>` name1 `PATHS`_)
        """))
    (tmp_path / "notes.txt").write_text("Plain notes: the role syntax is :name:, and .. is a path.\n\n"
                                        "Second paragraph.\n")
    by_id = {p.id: p for p in load_corpus(tmp_path)}
    howto = by_id["howto.txt#0"]
    assert howto.title == "Search paths"
    assert howto.text.splitlines() == [
        "Added in version 3.12.", "Set CMAKE_IGNORE_PATH to skip FIND_XXX paths; see Hints.",
        "find_file(<var> NAMES name1 PATHS)"]
    assert by_id["notes.txt#0"].text == "Plain notes: the role syntax is :name:, and .. is a path.\nSecond paragraph."
    lines = (tmp_path / "howto.txt").read_text().split("\n")
    assert words_held(howto.text, lines, *howto.cite.lines) == []


def test_myst_labels_with_spaces_glued_roles_and_fences_in_list_items(tmp_path):
    """What pip's docs (Sphinx + MyST) hold: labels with spaces, ``(Hash-checking mode)=`` and an
    rST ``.. _pip download:`` over the title "pip download" (a label that is the title's words was
    taken for the title's own name), referenced from MyST (the link leaked as
    "(ref:hash-checking mode)"),
    a role glued to a word ("compatible{sup}`1`"), and code fences inside list items ("- ```" and
    an indented fence), whose marks leaked and turned the prose after them into code."""
    (tmp_path / "download.rst").write_text(".. _pip download:\n\npip download\n============\n\n"
                                           "Download packages without installing them.\n")
    page = textwrap.dedent("""\
        # Secure installs

        - Enable {ref}`Hash-checking mode`, and see {ref}`pip download`.
        - ```
          PIP_FIND_LINKS="http://mirror1.example.com"
          ```

          is the same as

          ```
          --find-links=http://mirror1.example.com
          ```

        `~=` matches any compatible{sup}`1` version.

        (Hash-checking mode)=

        ## Hash-checking Mode

        Pass `--require-hashes`.
        """)
    (tmp_path / "secure.md").write_text(page)
    by_id = {p.id: p for p in load_corpus(tmp_path)}
    intro = by_id["secure.md#0"]
    assert intro.links == (("Hash-checking mode", "Hash-checking Mode"), ("pip download", "pip download"))
    text = intro.text
    for debris in ("ref:", "```", "{sup}", "(Hash-checking mode)="):
        assert debris not in text, debris
    assert "is the same as" in text.splitlines()                      # prose, not code
    assert 'PIP_FIND_LINKS="http://mirror1.example.com"' in text         # the fenced code, as code
    assert "`~=` matches any compatible1 version." in text.splitlines()
    assert words_held(text, page.split("\n"), *intro.cite.lines) == []


def test_directives_that_generate_text_from_outside_the_folder_write_nothing():
    """An unknown directive without content writes no text unless it describes an object: pip's
    ``pip-command-usage:: hash`` and CMake's ``cmake-module:: ../../Modules/X.cmake`` fill their
    page from code outside the folder, and read as a lone "`hash`" or a path. A description
    without content keeps its signature, ``seealso`` its argument, in MyST alike."""
    from linearrag.markdown import read_sections
    from linearrag.myst import to_markdown

    doc = textwrap.dedent("""\
        pip hash
        ========

        .. pip-command-usage:: hash "python -m pip"

        .. cmake-module:: ../../Modules/FindFoo.cmake

        .. py:function:: hash_file(path)

        .. seealso:: The hashing guide.

        Computes a hash of a package archive.
        """)
    (section,) = read_rst(doc, "f")
    assert section.paragraphs == ["`hash_file(path)`", "The hashing guide.",
                                  "Computes a hash of a package archive."]
    md = "# pip hash\n\n```{pip-command-usage} hash\n```\n\n```{py:function} hash_file(path)\n```\n\nComputes a hash.\n"
    (section,) = read_sections(to_markdown(md), "f")
    assert section.paragraphs == ["`hash_file(path)`", "Computes a hash."]
