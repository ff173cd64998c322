"""Technical terms in a question, whatever its language: options, identifiers, file names,
environment variables, URL paths and spans written in backticks.

A tokenizer made for prose cuts ``@app.errorhandler(404)`` or ``session['cart']`` where a
reader does not, and a user types ``FLASK_APP``, ``flask_app`` or ``Flask.run`` as it comes. Each
term found here becomes a name candidate of the query (matched by exact key, so by case-folded
spelling, like every n-gram); a dotted or ``module:function`` name also offers its last parts
(``flask.Flask.run`` → ``Flask.run``; ``hello:create_app`` → ``create_app``) since a page writes
the name in the form its context needs.
"""

from __future__ import annotations

import re

_TERM = re.compile(
    r"`(?P<code>[^`\n]{2,60})`"                                   # written as code
    r"|(?<![\w-])(?P<option>--?[A-Za-z][\w-]*)"                   # --no-cache, -v
    r"|(?<![\w.])(?P<path>/[\w{}<>:.-]+(?:/[\w{}<>:.-]*)*)"       # /users/{user_id}
    r"|(?P<name>\.?[A-Za-z_][\w-]*(?:[.:][A-Za-z_][\w-]*)+)"     # app.config, hello:create_app, pyproject.toml
    r"|(?<![\w.])(?P<dotfile>\.[A-Za-z][\w-]+)"                   # .flaskenv, .env
    r"|(?P<ident>\b[A-Za-z][A-Za-z0-9]*_[\w]*[A-Za-z0-9]\b)"      # snake_case, APP_CONFIG_PATH
    r"|(?P<camel>\b[A-Z]?[a-z]+[A-Z][A-Za-z0-9]*\b)"              # BaseModel, getElementById
)


def technical_terms(text: str) -> list[tuple[int, int, str]]:
    """(start, end, surface) of the technical terms of ``text``, in order; each dotted or
    colon-separated name is followed by its shorter suffixes (same span)."""
    out: list[tuple[int, int, str]] = []
    for m in _TERM.finditer(text):
        kind = m.lastgroup
        start, end = m.span(kind)
        surface = m.group(kind).strip()
        if kind == "code":
            surface = surface.strip("`'\" ")
        if kind == "name" and max(len(part) for part in re.split(r"[.:]", surface)) < 2:
            continue   # "e.g", "U.S": abbreviations
        out.append((start, end, surface))
        if kind in ("name", "code"):
            out.extend((start, end, suffix) for suffix in name_suffixes(surface))
    return out


def name_suffixes(name: str) -> list[str]:
    """The shorter names a qualified name is also written as, longest first: ``flask.Flask.run``
    → ``Flask.run``; ``app.teardown_appcontext()`` → ``teardown_appcontext()`` (whose entity key
    drops the brackets, as every key does). The last part
    alone only when it cannot be an ordinary word (``run``, ``config`` would link every page
    that says them); suffixes under three characters never."""
    if " " in name or not re.search(r"[.:]", name):
        return []
    parts = re.split(r"[.:]", name.lstrip("~."))
    last = len(parts) - 1 + (1 if _code_like(parts[-1]) else 0)
    return [suffix for k in range(1, last) if len(suffix := ".".join(parts[k:])) >= 3]


def _code_like(word: str) -> bool:
    """A single name part that cannot be an ordinary word: it has ``_`` or a digit, or inner capitals."""
    return "_" in word or any(ch.isdigit() for ch in word) or any(ch.isupper() for ch in word[1:])
