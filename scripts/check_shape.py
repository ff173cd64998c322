"""Check the code's shape rules (docs/architecture.md): for ``linearrag/`` no module over 400
lines, no import cycle (imports inside functions count), an import inside a function only
with a comment saying why (``# optional:`` or ``# deferred:``); for ``linearrag/`` and ``scripts/`` no function
over 80 lines and no dead code (vulture, with the framework callbacks in
``scripts/shape_allow.py``).

    uv run scripts/check_shape.py          # one line per breach; exit 1 if any
    uv run scripts/check_shape.py --json   # the figures as JSON
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "linearrag"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
# An import inside a function says why on its line: an optional dependency (the ray extra,
# Playwright, CUDA) or a library deferred so that the commands that do not use it start fast.
REASONS = ("# optional:", "# deferred:")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_files() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``from ... import`` names."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path, module: str, known: set[str]) -> list[tuple[str, int, bool, str]]:
    """(imported module, line, inside a function, the line's text) for every import of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = path.read_text(encoding="utf-8").splitlines()
    inside: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside |= {id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, path.name == "__init__.py")
            # ``from pkg import sub`` imports the submodule when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            out.append((target, node.lineno, id(node) in inside, lines[node.lineno - 1]))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more modules (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def long_functions(paths: list[Path]) -> list[tuple[str, int]]:
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    out.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", length))
    return out


def dead_code() -> list[str]:
    """vulture's findings in linearrag/ and scripts/ (tests count as users of the API)."""
    cmd = [sys.executable, "-m", "vulture", PACKAGE, "scripts", "tests", "scripts/shape_allow.py",
           "--min-confidence", "60"]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    return [line for line in run.stdout.splitlines() if line.startswith((PACKAGE + "/", "scripts/"))]


def check() -> dict:
    files = package_files()
    known = set(files)
    graph: dict[str, set[str]] = {m: set() for m in files}
    unexplained = []
    for module, path in files.items():
        for target, line, inside, text in imports(path, module, known):
            if target in known and target != module:
                graph[module].add(target)
            if inside and not any(tag in text for tag in REASONS):
                unexplained.append(f"{path.relative_to(ROOT)}:{line} {text.strip()}")
    big = [(str(p.relative_to(ROOT)), n) for p in files.values()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    return {"modules": len(files), "modules_over_400_lines": big,
            "functions_over_80_lines": long_functions(list(files.values()) + scripts),
            "import_cycles": cycles(graph), "imports_in_functions_without_reason": sorted(set(unexplained)),
            "dead_code": dead_code()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args()
    report = check()
    breaches = [(k, v) for k, v in report.items() if isinstance(v, list) and v]
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for key, items in breaches:
            for item in items:
                print(f"{key}: {item}")
        print(f"{report['modules']} modules; {sum(len(v) for _, v in breaches)} breaches", file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
