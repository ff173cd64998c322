"""Self-contained HTML views of a query, an entity path and a corpus overview.

One file each, nothing loaded from the network: the graph library (Cytoscape.js, MIT licence,
``static/cytoscape.LICENSE.txt``) and the data are inlined. Each page has the graph (click a
node for its sentences or passage text) and the same content as a plain list, for screen
readers and for people who prefer text.
"""

from __future__ import annotations

import html
import json
from importlib.resources import files

from ..retrieval.results import citation_text, relevance

_CSS = """
body{font-family:system-ui,"Noto Sans CJK JP","Hiragino Sans",sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{padding:12px 20px;background:#fff;border-bottom:1px solid #ddd}
header h1{font-size:18px;margin:0 0 4px} header p{margin:0;color:#555;font-size:13px}
main{display:flex;gap:12px;padding:12px 20px}
#graph{flex:1 1 auto;height:560px;background:#fff;border:1px solid #ddd;border-radius:6px}
#details{flex:0 0 320px;height:560px;overflow:auto;background:#fff;border:1px solid #ddd;border-radius:6px;
padding:10px;font-size:13px;white-space:pre-wrap}
#list{padding:0 20px 20px;font-size:13px} #list h2{font-size:15px}
.legend span{display:inline-block;margin-right:12px}
"""

# Cytoscape's style sheet for every view (and the server's search page, through /v1/explain).
GRAPH_STYLE = [
    {"selector": "node", "style": {"label": "data(label)", "font-size": 11, "text-wrap": "wrap",
                                   "text-max-width": 140, "background-color": "#8aa9d6", "width": 22, "height": 22}},
    {"selector": 'node[kind = "passage"]', "style": {"shape": "round-rectangle", "background-color": "#f2b35b",
                                                     "width": 30, "height": 18}},
    {"selector": 'node[kind = "seed"]', "style": {"background-color": "#d9534f", "width": 28, "height": 28}},
    {"selector": 'node[kind = "evidence"]', "style": {"background-color": "#e89ab0"}},
    {"selector": 'node[kind = "question"]', "style": {"background-color": "#8e6cc0", "shape": "diamond"}},
    {"selector": 'node[kind = "more"]', "style": {"background-color": "#ddd", "shape": "round-rectangle", "width": 34,
                                                  "height": 16}},
    {"selector": 'node[level], node[kind = "question"], node[kind = "passage"], node[kind = "more"]',
     "style": {"text-halign": "right", "text-valign": "center", "text-margin-x": 6, "text-wrap": "ellipsis",
               "text-max-width": 200}},
    {"selector": 'node[kind = "community"]', "style": {"background-color": "#6fbf73", "width": "data(size)",
                                                       "height": "data(size)"}},
    {"selector": "edge", "style": {"width": 1.5, "line-color": "#bbb", "target-arrow-color": "#bbb",
                                   "target-arrow-shape": "triangle", "curve-style": "bezier", "label": "data(short)",
                                   "font-size": 9, "text-rotation": "autorotate", "color": "#666"}},
    {"selector": ":selected", "style": {"border-width": 3, "border-color": "#222"}},
]

_JS = """
(function(){
  var data = JSON.parse(document.getElementById('data').textContent);
  var details = document.getElementById('details');
  var container = document.getElementById('graph');
  var cy = cytoscape({
    container: container, elements: data.elements, wheelSensitivity: 0.3,
    layout: data.layout,
    style: data.style
  });
  function show(el){ details.textContent = el.data('detail') || el.data('label') || ''; }
  cy.on('tap', 'node', function(evt){ show(evt.target); });
  cy.on('tap', 'edge', function(evt){ show(evt.target); });
  container.setAttribute('data-nodes', String(cy.nodes().length));
  container.setAttribute('data-edges', String(cy.edges().length));
  container.setAttribute('data-ready', 'true');
  window.cy = cy;
})();
"""


# What must never appear raw inside a <script> element: "<" (a closing tag or "<!--", which
# makes the browser swallow the scripts after it), ">" and "&", and the two line separators
# older JavaScript parsers end a string at. JSON.parse reads the escapes back unchanged.
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                              "\u2029": "\\u2029"})


def _payload_script(payload: dict) -> str:
    text = json.dumps(payload, ensure_ascii=False).translate(_SCRIPT_SAFE)
    return f'<script type="application/json" id="data">{text}</script>'


LEVELS = {"name": "preset", "fit": True, "padding": 24}   # query view: positions by level (query_elements)
_TREE = {"name": "breadthfirst", "directed": True, "spacingFactor": 1.1, "padding": 20}
# Communities with their members around them; no randomness, so the picture is repeatable.
_CLUSTERS = {"name": "cose", "randomize": False, "animate": False, "padding": 20, "nodeRepulsion": 9000,
             "idealEdgeLength": 40, "numIter": 1500}


def _page(title: str, subtitle: str, elements: list[dict], list_html: str, legend: str,
          layout: dict | None = None) -> str:
    library = (files("linearrag.explain") / "static" / "cytoscape.min.js").read_text(encoding="utf-8")
    nodes = sum(1 for e in elements if "source" not in e["data"])
    edges = len(elements) - nodes
    return f"""<!doctype html>
<html lang="und"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{_CSS}</style></head>
<body>
<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p><p class="legend">{legend}</p></header>
<main>
<div id="graph" role="img" aria-label="graph of {nodes} nodes and {edges} edges; the same content is listed below"></div>
<aside id="details" aria-live="polite">Click a node or an edge to see its sentences or passage text.</aside>
</main>
<section id="list" aria-label="the graph as a list">{list_html}</section>
{_payload_script({"elements": elements, "layout": layout or _TREE, "style": GRAPH_STYLE})}
<script>{library}</script>
<script>{_JS}</script>
<footer id="licences" style="padding:0 20px 20px;font-size:11px;color:#777">Made by LinearRAG (MIT).
Graph drawing: Cytoscape.js, MIT licence, © The Cytoscape Consortium (https://js.cytoscape.org).</footer>
</body></html>
"""


def _short(text: str | None, n: int = 40) -> str:
    text = text or ""
    return text if len(text) <= n else text[: n - 1] + "…"


def _node(node_id: str, label: str, kind: str, detail: str, position: dict | None = None, **extra) -> dict:
    node = {"data": {"id": node_id, "label": label, "kind": kind, "detail": detail, **extra}}
    if position is not None:
        node["position"] = position
    return node


def _edge(edge_id: str, source: str, target: str, detail: str, short: str = "") -> dict:
    return {"data": {"id": edge_id, "source": source, "target": target, "detail": detail, "short": short}}


def _list(title: str, items: list[str]) -> str:
    return f"<h2>{html.escape(title)}</h2><ul>" + "".join(items) + "</ul>"


def _li(cls: str, text: str) -> str:
    return f'<li class="{cls}">{html.escape(text)}</li>'


def _seed_label(result: dict) -> str:
    """What the level-1 entities are: named in the question, or (no query entity linked)
    evidence seeds taken from the passages the query alone ranks best."""
    if result.get("evidence_passages"):
        return "evidence seed (an entity of a passage the query alone ranks best)"
    return "seed (named in the question)"


PER_COLUMN = 12     # nodes drawn per column of the query view; the rest behind "+N more"
_ROW, _COLUMN = 40, 270   # px between rows, between columns (labels are cut to fit a column)
_LABEL_CHARS = 34


def _columns(result: dict) -> list[tuple[str, list[dict]]]:
    """The query view's columns, left to right: the question's terms, the seeds (named in the
    question, then evidence seeds), each further level of reached entities, the passages."""
    entities = result.get("activated_entities", [])
    named = {q["entity"] for q in result.get("query_entities", []) if q.get("entity")}
    terms = [q for q in result.get("query_entities", []) if q.get("entity")]
    seeds = [a for a in entities if a["level"] == 1]
    columns = [("question", terms), ("seeds", sorted(seeds, key=lambda a: a["entity"] not in named))]
    for level in sorted({a["level"] for a in entities if a["level"] >= 2}):
        columns.append((f"level {level}", [a for a in entities if a["level"] == level]))
    columns.append(("passages", list(result.get("passages", []))))
    return [(name, items) for name, items in columns if items]


def _position(column: int, row: int) -> dict:
    return {"x": column * _COLUMN, "y": row * _ROW}


def query_elements(result: dict) -> list[dict]:
    """Graph elements of a query result (the query JSON), laid out by level: the question's
    terms, the seeds, each level of reached entities, the ranked passages, one column each
    (at most ``PER_COLUMN`` nodes, then one "+N more" node listing the rest); edges: term →
    its entity, bridging edges (detail: the sentence), passage → entity, linked selection."""
    elements: list[dict] = []
    ids: dict[str, str] = {}
    seed_label, evidence = _seed_label(result), bool(result.get("evidence_passages"))
    named = {q["entity"] for q in result.get("query_entities", []) if q.get("entity")}
    best = max((p["score"] for p in result.get("passages", [])), default=0.0)
    for col, (name, items) in enumerate(_columns(result)):
        shown, rest = items[:PER_COLUMN], items[PER_COLUMN:]
        for row, item in enumerate(shown):
            elements.append(_column_node(name, item, seed_label, evidence, named, best, ids,
                                         position=_position(col, row)))
        if rest:
            listed = "\n".join(_item_name(name, item) for item in rest)
            elements.append(_node(f"more{col}", f"+{len(rest)} more", "more", f"{name}: {len(rest)} more\n{listed}",
                                  position=_position(col, len(shown))))
    elements.extend(_query_edges(result, ids))
    return elements


def _item_name(column: str, item: dict) -> str:
    if column == "question":
        return item["surface"]
    if column == "passages":
        return citation_text(item)
    return item["entity"]


def _column_node(column: str, item: dict, seed_label: str, evidence: bool, named: set, best: float,
                 ids: dict[str, str], position: dict) -> dict:
    if column == "question":
        node_id = ids.setdefault(f"q:{item['surface']}", f"q{len(ids)}")
        return _node(node_id, _short(item["surface"], _LABEL_CHARS), "question",
                     f"{item['surface']} — in the question, linked to {item['entity']} ({item['how']})",
                     position=position)
    if column == "passages":
        node_id = ids.setdefault(f"p:{item['id']}", f"p{len(ids)}")
        where = citation_text(item)
        detail = (f"#{item['rank']} {where} {item.get('section') or item['title']} "
                  f"(relevance {relevance(item['score'], best)} %)" + (f" [{item['id']}]" if where != item["id"] else "")
                  + (f"\ndefines: {', '.join(item['defines'])}" if item.get("defines") else "")
                  + (f"\nsame text also at: {', '.join(citation_text(c) for c in item['copies'])}"
                     if item.get("copies") else "")
                  + f"\n\n{item['text']}")
        return _node(node_id, _short(f"{item['rank']}. {where}", _LABEL_CHARS), "passage", detail, cite=where,
                     position=position)
    name = item["entity"]
    node_id = ids.setdefault(f"e:{name}", f"e{len(ids)}")
    if item["level"] == 1:
        kind, label = ("seed", "seed (named in the question)") if name in named or not evidence else \
            ("evidence", seed_label)
        return _node(node_id, _short(name, _LABEL_CHARS), kind, f"{name} — {label}, score {item['score']:.2f}",
                     level=1, position=position)
    return _node(node_id, _short(name, _LABEL_CHARS), "entity",
                 f"{name} — level {item['level']}, score {item['score']:.2f}\nreached through "
                 f"[{item['passage_id']}]:\n{item['sentence']}", level=item["level"], position=position)


def _query_edges(result: dict, ids: dict[str, str]) -> list[dict]:
    """Edges between drawn nodes only (a node behind "+N more" has none)."""
    edges: list[dict] = []
    entities = {a["entity"]: a for a in result.get("activated_entities", [])}

    def add(prefix: str, source: str | None, target: str | None, detail: str, short: str = "") -> None:
        if source and target:
            edges.append(_edge(f"{prefix}{len(edges)}", source, target, detail, short))

    for q in result.get("query_entities", []):
        if q.get("entity"):
            add("t", ids.get(f"q:{q['surface']}"), ids.get(f"e:{q['entity']}"), f"{q['surface']} → {q['entity']}")
    for name, a in entities.items():
        if a["level"] < 2 or not a.get("sentence"):
            continue
        sentence = a["sentence"].casefold()
        sources = [ids[f"e:{o}"] for o, b in entities.items()
                   if b["level"] < a["level"] and o.casefold() in sentence and f"e:{o}" in ids]
        if not sources and f"p:{a.get('passage_id')}" in ids:
            sources = [ids[f"p:{a['passage_id']}"]]
        for s in sources[:2]:
            add("b", s, ids.get(f"e:{name}"), f"[{a['passage_id']}] {a['sentence']}")
    for p in result.get("passages", []):
        for name in p.get("entities", []):
            add("c", ids.get(f"p:{p['id']}"), ids.get(f"e:{name}"), f"[{p['id']}] contains {name}")
        if p.get("linked_from"):   # linked selection: the passage above names this one's title
            add("l", ids.get(f"p:{p['linked_from']}"), ids.get(f"p:{p['id']}"),
                f"[{p['linked_from']}] names {p['linked_via']}, in the title {p['title']} [{p['id']}]"
                if p.get("linked_via") else f"[{p['linked_from']}] names {p['title'] or p['id']} [{p['id']}]", "names")
        if p.get("bridged_from"):   # bridged coverage: shares an entity with it, adds question words
            words = ", ".join(f'"{w}"' for w in p.get("adds_words", []))
            add("v", ids.get(f"p:{p['bridged_from']}"), ids.get(f"p:{p['id']}"),
                f"[{p['id']}] shares {p['bridged_via']} with [{p['bridged_from']}] and adds the question's {words}, "
                "which no passage above holds", "shares")
    return edges


def _list_html(elements: list[dict], node_title: str, edge_title: str) -> str:
    nodes = [_li("node", e["data"]["detail"].replace("\n", ", ", 1).replace("\n", "; ") if e["data"]["kind"] == "more"
                 else e["data"]["detail"].split("\n")[0]) for e in elements if "source" not in e["data"]]
    edges = [_li("edge", e["data"]["detail"]) for e in elements if "source" in e["data"]]
    return _list(node_title, nodes) + _list(edge_title, edges)


def query_html(result: dict) -> str:
    """The HTML view of one query result (the query JSON)."""
    elements = query_elements(result)
    sub = (f"mode {result.get('mode')}; " + (f"fallback: {result['fallback']}" if result.get("fallback") else
           f"{len(result.get('activated_entities', []))} activated entities, {len(result.get('passages', []))} passages"))
    legend = ("<span>purple: a term of the question</span><span>red: seed named in the question</span>"
              "<span>pink: evidence seed (an entity of a passage the query alone ranks best)</span>"
              "<span>blue: reached entity (columns: level 2, 3, …)</span><span>orange: passage</span>")
    return _page(result.get("query", ""), sub, elements, _list_html(elements, "Entities and passages", "Links"), legend,
                 layout=LEVELS)


def path_elements(result: dict) -> list[dict]:
    elements: list[dict] = []
    ids: dict[str, str] = {}
    k = 0
    for path in result.get("paths", []):
        previous = None
        for hop in path:
            name = hop["entity"]
            if name not in ids:
                ids[name] = f"e{len(ids)}"
                kind = "seed" if name in (result["source"], result["target"]) else "entity"
                elements.append(_node(ids[name], name, kind, name))
            if previous is not None:
                eid = f"h{k}"
                k += 1
                elements.append(_edge(eid, ids[previous], ids[name], f"[{hop['passage_id']}] {hop['sentence']}",
                                      _short(hop["sentence"])))
            previous = name
    return elements


def path_html(result: dict) -> str:
    """The HTML view of `linearrag path` JSON."""
    elements = path_elements(result)
    hops = "not connected within the hop limit" if result.get("hops") is None else f"{result['hops']} hop(s)"
    return _page(f"{result['source']} → {result['target']}", hops, elements,
                 _list_html(elements, "Entities", "Hops (linking sentence and passage)"),
                 "<span>red: the two ends</span><span>blue: entities between</span>")


def overview_elements(result: dict) -> list[dict]:
    elements: list[dict] = []
    k = 0
    for c in result.get("communities", []):
        cid = f"c{c['id']}"
        passages = "\n".join(f"[{p['id']}] {p['title']}" for p in c["passages"])
        elements.append(_node(cid, f"#{c['id']} ({c['size']})", "community",
                              f"community #{c['id']}: {c['size']} entities\n{', '.join(c['top_entities'])}\n\n"
                              f"representative passages:\n{passages}", size=20 + min(40, c["size"] ** 0.5)))
        for name in c["top_entities"]:
            eid = f"e{k}"
            elements.append(_node(eid, name, "entity", f"{name} (community #{c['id']})"))
            elements.append(_edge(f"m{k}", cid, eid, f"{name} is a top entity of community #{c['id']}"))
            k += 1
    return elements


def overview_html(result: dict) -> str:
    """The HTML view of `linearrag overview` JSON."""
    elements = overview_elements(result)
    sub = (f"{len(result.get('communities', []))} communities of {result.get('entities')} entities, "
           f"modularity {result.get('modularity')}")
    return _page("Corpus overview", sub, elements, _list_html(elements, "Communities and entities", "Membership"),
                 "<span>green: community</span><span>blue: top entity</span>", layout=_CLUSTERS)
