"""Screenshots of the three HTML views for the documentation (docs/img/*.png), made in a real
headless browser (Debian's chromium driven by Playwright).

  uv run scripts/screenshots.py [--out docs/img]

Builds the shipped 2Wiki sample index if needed (indexes/2wiki-sample), then renders the query
view of the demo question, the path Beatrice I → Frederick Barbarossa's family, and the overview.
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What nationality is Beatrice I, Countess of Burgundy's husband?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--index", default=str(ROOT / "indexes" / "2wiki-sample"))
    args = ap.parse_args()
    index = Path(args.index)
    if not (index / "CURRENT").exists():
        subprocess.run([sys.executable, "scripts/build_graph.py", "--input", "examples/2wiki-sample/corpus.jsonl",
                        "--output", str(index), "--quiet"], check=True, cwd=ROOT)
    from playwright.sync_api import sync_playwright

    from linearrag import Retriever
    from linearrag.explain.html import overview_html, path_html, query_html
    from linearrag.explain.overview import corpus_overview
    from linearrag.explain.paths import EntityGraph, describe_paths, resolve_entity

    r = Retriever.from_path(index)
    a = resolve_entity(r, "Beatrice I, Countess of Burgundy", 0.6)
    b = resolve_entity(r, "Germany", 0.6)
    pages = {
        "query": query_html(r.query(QUESTION).to_dict()),
        "path": path_html(describe_paths(EntityGraph(r.index.graph.M), r.index, a, b, 4).to_dict()),
        "overview": overview_html(corpus_overview(r.index, max_communities=8).to_dict()),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chromium = os.environ.get("LINEARRAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("error: no chromium found; apt-get install chromium, or set LINEARRAG_CHROMIUM")
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for name, page_html in pages.items():
            file = Path(tmp) / f"{name}.html"
            file.write_text(page_html, encoding="utf-8")
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(file.as_uri())
            page.wait_for_selector("#graph[data-ready='true']")
            page.screenshot(path=str(out / f"{name}.png"))
            page.close()
            print(f"wrote {out / (name + '.png')}", file=sys.stderr)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
