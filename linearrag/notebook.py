"""Jupyter notebooks (``.ipynb``) as Markdown: the notebook reader of ``corpus.py``."""

from __future__ import annotations

import json
import re

from .errors import CorpusError

_OBJECT_REPR = re.compile(r"^\s*<[^<>\n]+>\s*$")


def notebook_markdown(text: str, where: object) -> str:
    """A Jupyter notebook (``.ipynb``, nbformat 4 JSON) as one Markdown document: Markdown cells
    as they are, code cells and their text outputs (streams, ``text/plain`` results) as fenced
    code blocks; images and other rich outputs dropped, and so is an image's text stand-in (an
    object's repr, ``<Figure size 640x480 with 1 Axes>``). The notebook's JSON is read with the
    standard library (nbformat would validate the schema too, which a reader does not need)."""
    try:
        nb = json.loads(text)
        cells = nb["cells"]
        language = ((nb.get("metadata") or {}).get("kernelspec") or {}).get("language") or "python"
    except (ValueError, KeyError, TypeError, AttributeError):
        raise CorpusError(f"{where}: not a Jupyter notebook (nbformat 4 JSON); check the file") from None
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        source = _joined(cell.get("source")) if isinstance(cell, dict) else ""
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        if kind == "markdown" and source.strip():
            parts.append(source.strip("\n"))
        elif kind == "code" and source.strip():
            parts.append(f"```{language}\n{source.strip(chr(10))}\n```")
            for out in cell.get("outputs") or []:
                data = out.get("data") or {}
                stream = out.get("output_type") == "stream"
                shown = _joined(out.get("text")) if stream else _joined(data.get("text/plain"))
                if any(str(kind).startswith("image/") for kind in data) and _OBJECT_REPR.match(shown):
                    continue   # a plot's stand-in: "<Figure size 640x480 with 1 Axes>"
                if shown.strip():
                    parts.append(f"```text\n{shown.strip(chr(10))}\n```")
    return "\n\n".join(parts) + "\n"


def _joined(value) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""
