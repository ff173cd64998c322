"""MDX (Markdown with JSX, as Docusaurus and other React-based docs sites write it) turned into
the plain Markdown ``markdown.py`` reads.

MDX adds ES module lines (``import Tabs from '@theme/Tabs';``, ``export const x = ...``), JSX
comments (``{/* ... */}``), components (``<Tabs>``, ``<TabItem value="pip">``) and
Docusaurus admonitions (``:::tip Title`` … ``:::``). Module lines and comments are dropped;
component tags are removed by the Markdown reader as any HTML tag is (their text stays); an
admonition keeps its text, its title ("Tip (Title):") before the first paragraph, as MyST's
admonitions do. Code fences are copied as they are. Line numbers are kept (each dropped line
becomes an empty one), so citations point at the ``.mdx`` file's own lines.
"""

from __future__ import annotations

import re

from .markdown import FENCE

_MODULE = re.compile(r"^(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?['\"]|import\s*\{|import\s+\w+\s*,\s*\{"
                     r"|export\s+(?:const|default|function|let|var|async|\{))")
_STATEMENT_END = re.compile(r"(?:\bfrom\s+['\"][^'\"]*['\"]|;)\s*$")
_JSX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_ADMONITION_OPEN = re.compile(r"^\s*:{3,}\s*([A-Za-z]+)(?:\[([^\]]*)\]|\s+(.*?))?\s*$")
_ADMONITION_CLOSE = re.compile(r"^\s*:{3,}\s*$")


def to_markdown(text: str) -> str:
    """Plain Markdown for an MDX document, with the same number of lines."""
    text = _JSX_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    statement = False   # inside a module statement over several lines ("import {\n  a,\n} from 'x';")
    for i, line in enumerate(lines):
        if fence is not None:
            fence = None if line.strip().startswith(fence) else fence
            out.append(line)
        elif FENCE.match(line):
            fence = FENCE.match(line).group(1)
            out.append(line)
        elif statement or _MODULE.match(line):
            statement = not _STATEMENT_END.search(line) and (statement or "{" in line) and "}" not in line[-3:]
            out.append("")
        elif _ADMONITION_CLOSE.match(line):
            out.append("")
        elif _ADMONITION_OPEN.match(line):
            m = _ADMONITION_OPEN.match(line)
            kind, title = m.group(1).capitalize(), (m.group(2) or m.group(3) or "").strip()
            label = f"{kind} ({title}):" if title else f"{kind}:"
            # joined to the text below it, as the Markdown reader joins a paragraph's lines
            out.append(label if i + 1 < len(lines) and lines[i + 1].strip() else "")
        else:
            out.append(line)
    return "\n".join(out)
