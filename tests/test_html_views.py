"""The HTML views in a real headless browser (Debian's chromium driven by Playwright): no
console error, no network request, the DOM's node and edge counts equal the JSON's, a click
on a passage node shows its text, and the screenshot is not blank."""

import os
import shutil

import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

BEATRICE = "What nationality is Beatrice I, Countess of Burgundy's husband?"


def _chromium() -> str:
    path = os.environ.get("LINEARRAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no chromium found: scripts/test.sh installs Debian's chromium (apt-get install chromium), "
                    "or set LINEARRAG_CHROMIUM to a Chromium binary")
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser, tmp_path, name, page_html):
    file = tmp_path / f"{name}.html"
    file.write_text(page_html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors, requests = [], []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda req: requests.append(req.url))
    page.goto(file.as_uri())
    page.wait_for_selector("#graph[data-ready='true']")
    return page, errors, requests, file


def _check_page(page, errors, requests, file, elements, tmp_path, name):
    nodes = sum(1 for e in elements if "source" not in e["data"])
    edges = len(elements) - nodes
    assert errors == []
    assert requests == [file.as_uri()]                       # nothing but the file itself
    graph = page.locator("#graph")
    assert graph.get_attribute("data-nodes") == str(nodes) and graph.get_attribute("data-edges") == str(edges)
    assert page.locator("#list li.node").count() == nodes and page.locator("#list li.edge").count() == edges
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot))
    from PIL import Image

    colours = Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 20           # not blank


def test_query_view(browser, sample_retriever, tmp_path):
    from linearrag.explain.html import query_elements, query_html

    result = sample_retriever.query(BEATRICE).to_dict()
    page, errors, requests, file = _open(browser, tmp_path, "query", query_html(result))
    elements = query_elements(result)
    _check_page(page, errors, requests, file, elements, tmp_path, "query")
    # A click on a passage node shows the passage's text.
    x, y = page.evaluate("""() => { const n = cy.nodes('[kind = "passage"]')[0];
        const p = n.renderedPosition(); const r = document.getElementById('graph').getBoundingClientRect();
        return [r.left + p.x, r.top + p.y]; }""")
    page.mouse.click(x, y)
    first = result["passages"][0]["text"][:60]
    assert first in page.locator("#details").inner_text()
    assert "Frederick Barbarossa" in page.locator("#list").inner_text()
    # linked selection's edge: Adelaide's page names Hugh IV, whose page follows it
    linked = [p for p in result["passages"] if p["linked_from"]]
    assert linked and f"[{linked[0]['linked_from']}] names {linked[0]['title']}" in page.locator("#list").inner_text()
    page.close()


def test_path_view_in_japanese(browser, ja_index, tmp_path):
    from linearrag import Retriever
    from linearrag.explain.html import path_elements, path_html
    from linearrag.explain.paths import EntityGraph, describe_paths, resolve_entity

    r = Retriever.from_path(ja_index[0])
    a, b = resolve_entity(r, "夏目漱石", 0.6), resolve_entity(r, "道後温泉", 0.6)
    result = describe_paths(EntityGraph(r.index.graph.M), r.index, a, b, 4).to_dict()
    assert result["hops"] is not None
    page, errors, requests, file = _open(browser, tmp_path, "path", path_html(result))
    _check_page(page, errors, requests, file, path_elements(result), tmp_path, "path")
    assert "夏目漱石" in page.locator("#list").inner_text()
    page.close()
    from linearrag.explain.html import query_elements, query_html

    answer = r.query("夏目漱石が書いた小説の舞台になった町には何がある？").to_dict()
    page, errors, requests, file = _open(browser, tmp_path, "query-ja", query_html(answer))
    _check_page(page, errors, requests, file, query_elements(answer), tmp_path, "query-ja")
    assert "坊っちゃん" in page.locator("#list").inner_text()
    page.close()


def test_overview_view(browser, team_index, tmp_path):
    from linearrag import load_index
    from linearrag.explain.html import overview_elements, overview_html
    from linearrag.explain.overview import corpus_overview

    result = corpus_overview(load_index(team_index[0])).to_dict()
    page, errors, requests, file = _open(browser, tmp_path, "overview", overview_html(result))
    _check_page(page, errors, requests, file, overview_elements(result), tmp_path, "overview")
    page.close()


HOSTILE = ('<!--<script>window.__pwned=1</script></script><img src=x onerror="window.__pwned=1">'
           '\u2028&amp;\u2029')


def _hostile(value):
    """Every string of a result with markup that would end or comment out a script appended."""
    if isinstance(value, str):
        return value + HOSTILE
    if isinstance(value, list):
        return [_hostile(v) for v in value]
    if isinstance(value, dict):
        return {k: _hostile(v) for k, v in value.items()}
    return value


def test_markup_in_texts_titles_ids_and_names_never_runs(browser, sample_retriever, team_index, tmp_path):
    """<!--<script>, </script> and <img onerror> in passage texts, titles, ids and entity names:
    all three views still draw, nothing in them runs, nothing is fetched."""
    from linearrag import load_index
    from linearrag.explain import html as views
    from linearrag.explain.overview import corpus_overview
    from linearrag.explain.paths import EntityGraph, describe_paths, resolve_entity

    r = sample_retriever
    a = resolve_entity(r, "Beatrice I, Countess of Burgundy", 0.6)
    b = resolve_entity(r, "Frederick Barbarossa", 0.6)
    cases = [("query", views.query_html, views.query_elements, r.query(BEATRICE).to_dict()),
             ("path", views.path_html, views.path_elements,
              describe_paths(EntityGraph(r.index.graph.M), r.index, a, b, 4).to_dict()),
             ("overview", views.overview_html, views.overview_elements,
              corpus_overview(load_index(team_index[0])).to_dict())]
    for name, page_of, elements_of, result in cases:
        result = _hostile(result)
        page, errors, requests, file = _open(browser, tmp_path, f"hostile-{name}", page_of(result))
        _check_page(page, errors, requests, file, elements_of(result), tmp_path, f"hostile-{name}")
        assert page.evaluate("window.__pwned") is None, name
        assert HOSTILE.split("\u2028")[0] in page.locator("#list").inner_text(), name   # shown as text
        page.close()


def _crowded_result() -> dict:
    """A documentation query as the engine returns it without a linked name: 40 evidence seeds,
    20 reached entities on two levels, a term of the question, 5 passages."""
    seeds = [{"entity": f"seed entity number {i} with a rather long name", "score": 0.9 - i / 100, "level": 1,
              "sentence": None, "passage_id": None} for i in range(40)]
    reached = [{"entity": f"reached {i}", "score": 0.5, "level": 2 + i % 2, "sentence": f"seed entity number {i} "
                f"with a rather long name meets reached {i}.", "passage_id": "cli.rst#1"} for i in range(20)]
    passages = [{"rank": k + 1, "id": f"cli.rst#{k}", "title": "CLI › Run", "score": 1.0 / (k + 1), "text": "Run it.",
                 "entities": ["seed entity number 0 with a rather long name", "reached 0"], "linked_from": None,
                 "file": "cli.rst", "lines": [10 * k + 1, 10 * k + 8], "section": "CLI › Run", "page": None}
                for k in range(5)]
    return {"query": "what does --app do?", "mode": "linearrag", "activated_entities": seeds + reached,
            "query_entities": [{"surface": "--app", "entity": "reached 1", "similarity": 1.0, "how": "term"}],
            "activated_count": 60, "passages": passages, "fallback": None, "evidence_passages": ["cli.rst#1"]}


def test_a_crowded_query_view_stays_readable(browser, tmp_path):
    """40 seeds no longer sit in one row of overlapping labels: columns by level, at most
    PER_COLUMN nodes each and a "+N more" node, and no two labels overlap on screen."""
    from linearrag.explain.html import PER_COLUMN, query_elements, query_html

    result = _crowded_result()
    page, errors, requests, file = _open(browser, tmp_path, "crowded", query_html(result))
    elements = query_elements(result)
    _check_page(page, errors, requests, file, elements, tmp_path, "crowded")
    boxes = page.evaluate("""() => cy.nodes().map(n => { const b = n.renderedBoundingBox({includeLabels: true});
        return [n.data('label'), b.x1, b.y1, b.x2, b.y2]; })""")
    for i, (a, *p) in enumerate(boxes):
        for b, *q in boxes[i + 1:]:
            apart = p[2] <= q[0] or q[2] <= p[0] or p[3] <= q[1] or q[3] <= p[1]
            assert apart, (a, b)
    labels = [b[0] for b in boxes]
    assert "+28 more" in labels and sum(1 for x in labels if x.startswith("seed entity")) == PER_COLUMN
    assert "1. cli.rst:1-8" in labels
    columns = page.evaluate("""() => ['question', 'evidence', 'entity', 'passage'].map(k =>
        Math.round(cy.nodes('[kind = "' + k + '"]')[0].position('x')))""")
    assert columns == sorted(columns) and len(set(columns)) == 4   # left to right by level
    assert "seed entity number 39" in page.locator("#list").inner_text()   # the rest, behind "+28 more"
    page.close()
