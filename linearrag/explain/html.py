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

_JS = """
(function(){
  var data = JSON.parse(document.getElementById('data').textContent);
  var details = document.getElementById('details');
  var container = document.getElementById('graph');
  var cy = cytoscape({
    container: container, elements: data.elements, wheelSensitivity: 0.3,
    layout: data.layout,
    style: [
      {selector: 'node', style: {'label': 'data(label)', 'font-size': 11, 'text-wrap': 'wrap',
        'text-max-width': 140, 'background-color': '#8aa9d6', 'width': 22, 'height': 22}},
      {selector: 'node[kind = "passage"]', style: {'shape': 'round-rectangle', 'background-color': '#f2b35b',
        'width': 30, 'height': 18}},
      {selector: 'node[kind = "seed"]', style: {'background-color': '#d9534f', 'width': 28, 'height': 28}},
      {selector: 'node[kind = "community"]', style: {'background-color': '#6fbf73', 'width': 'data(size)',
        'height': 'data(size)'}},
      {selector: 'edge', style: {'width': 1.5, 'line-color': '#bbb', 'target-arrow-color': '#bbb',
        'target-arrow-shape': 'triangle', 'curve-style': 'bezier', 'label': 'data(short)', 'font-size': 9,
        'text-rotation': 'autorotate', 'color': '#666'}},
      {selector: ':selected', style: {'border-width': 3, 'border-color': '#222'}}
    ]
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
{_payload_script({"elements": elements, "layout": layout or _TREE})}
<script>{library}</script>
<script>{_JS}</script>
<footer id="licences" style="padding:0 20px 20px;font-size:11px;color:#777">Made by LinearRAG (MIT).
Graph drawing: Cytoscape.js, MIT licence, © The Cytoscape Consortium (https://js.cytoscape.org).</footer>
</body></html>
"""


def _short(text: str | None, n: int = 40) -> str:
    text = text or ""
    return text if len(text) <= n else text[: n - 1] + "…"


def _node(node_id: str, label: str, kind: str, detail: str, **extra) -> dict:
    return {"data": {"id": node_id, "label": label, "kind": kind, "detail": detail, **extra}}


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


def query_elements(result: dict) -> list[dict]:
    """Graph elements of a query result (the query JSON): activated entities by level, the
    ranked passages, bridging edges labelled with their sentences, passage → entity edges."""
    elements: list[dict] = []
    entities = {a["entity"]: a for a in result.get("activated_entities", [])}
    ids = {name: f"e{i}" for i, name in enumerate(entities)}
    seed = _seed_label(result)
    for name, a in entities.items():
        detail = (f"{name} — {seed}, score {a['score']:.2f}" if a["level"] == 1 else
                  f"{name} — level {a['level']}, score {a['score']:.2f}\nreached through [{a['passage_id']}]:\n"
                  f"{a['sentence']}")
        elements.append(_node(ids[name], name, "seed" if a["level"] == 1 else "entity", detail, level=a["level"]))
    passages = {p["id"]: p for p in result.get("passages", [])}
    pid = {p: f"p{i}" for i, p in enumerate(passages)}
    best = max((p["score"] for p in passages.values()), default=0.0)
    for p in passages.values():
        where = citation_text(p)
        elements.append(_node(pid[p["id"]], f"{p['rank']}. {_short(p['title'] or p['id'], 30)}", "passage",
                              f"#{p['rank']} {where} {p.get('section') or p['title']} "
                              f"(relevance {relevance(p['score'], best)} %)" + (f" [{p['id']}]" if where != p["id"] else "")
                              + f"\n\n{p['text']}", cite=where))
    k = 0
    for name, a in entities.items():
        if a["level"] < 2 or not a.get("sentence"):
            continue
        sentence = a["sentence"].casefold()
        sources = [ids[o] for o, b in entities.items() if b["level"] < a["level"] and o.casefold() in sentence]
        if not sources and a.get("passage_id") in pid:
            sources = [pid[a["passage_id"]]]
        for s in sources[:2]:
            elements.append(_edge(f"b{k}", s, ids[name], f"[{a['passage_id']}] {a['sentence']}", _short(a["sentence"])))
            k += 1
    for p in passages.values():
        for name in p.get("entities", []):
            if name in ids:
                elements.append(_edge(f"c{k}", pid[p["id"]], ids[name], f"[{p['id']}] contains {name}"))
                k += 1
        source = p.get("linked_from")
        if source in pid:   # linked selection: the passage above names this one's title
            elements.append(_edge(f"l{k}", pid[source], pid[p["id"]],
                                  f"[{source}] names {p['title'] or p['id']} [{p['id']}]", "names"))
            k += 1
    return elements


def _list_html(elements: list[dict], node_title: str, edge_title: str) -> str:
    nodes = [_li("node", e["data"]["detail"].split("\n")[0]) for e in elements if "source" not in e["data"]]
    edges = [_li("edge", e["data"]["detail"]) for e in elements if "source" in e["data"]]
    return _list(node_title, nodes) + _list(edge_title, edges)


def query_html(result: dict) -> str:
    """The HTML view of one query result (the query JSON)."""
    elements = query_elements(result)
    sub = (f"mode {result.get('mode')}; " + (f"fallback: {result['fallback']}" if result.get("fallback") else
           f"{len(result.get('activated_entities', []))} activated entities, {len(result.get('passages', []))} passages"))
    legend = (f"<span>red: {html.escape(_seed_label(result))}</span><span>blue: reached entity</span>"
              "<span>orange: passage</span>")
    return _page(result.get("query", ""), sub, elements, _list_html(elements, "Entities and passages", "Links"), legend)


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
