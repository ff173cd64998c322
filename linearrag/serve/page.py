"""The search page at ``/`` and its assets, all served by the server itself (it works with no
network access): the question box, the ranked passages with their citations, the entity
chain with each hop's bridging sentence, and the explanation graph (Cytoscape.js, the
library the HTML views inline)."""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import cache
from importlib.resources import files


@cache
def _read(package: str, name: str) -> str:
    return (files(package) / "static" / name).read_text(encoding="utf-8")


ASSETS: dict[str, Callable[[], tuple[str, str]]] = {
    "cytoscape.min.js": lambda: ("text/javascript", _read("linearrag.explain", "cytoscape.min.js")),
    "search.js": lambda: ("text/javascript", _read("linearrag.serve", "search.js")),
    "search.css": lambda: ("text/css", _read("linearrag.serve", "search.css")),
}


def search_page(index_name: str, token_for_reads: bool) -> str:
    """The page's HTML (the script draws everything else from /v1/explain)."""
    token_box = ('<label class="token">Token <input id="token" type="password" autocomplete="off" '
                 'aria-label="bearer token"></label>') if token_for_reads else ""
    return f"""<!doctype html>
<html lang="und"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>LinearRAG — {html.escape(index_name)}</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/search.css"></head>
<body>
<header><h1>LinearRAG <span class="index">{html.escape(index_name)}</span></h1>
<form id="ask" role="search"><input id="question" name="question" type="search" required autofocus
 placeholder="Ask a question about these documents" aria-label="question">
<select id="mode" aria-label="mode"><option value="">default</option><option>dense</option><option>bm25</option>
<option>rrf</option></select><button type="submit">Search</button>{token_box}</form>
<p id="status" role="status" aria-live="polite"></p></header>
<main>
<section id="results" aria-label="ranked passages"></section>
<section id="explain" aria-label="how the passages were reached">
<h2>Entity chain</h2><ol id="chain"></ol>
<div id="graph" role="img" aria-label="explanation graph; the chain above lists the same entities"></div>
<aside id="details" aria-live="polite">Click an entity of the chain or a node of the graph to see its sentences
or passage.</aside></section>
</main>
<footer>LinearRAG (MIT). Graph drawing: Cytoscape.js, MIT licence, © The Cytoscape Consortium.</footer>
<script src="/static/cytoscape.min.js"></script>
<script src="/static/search.js"></script>
</body></html>
"""
