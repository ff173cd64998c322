"""Every file of an input folder accounted for: read per format, skipped per extension with why.

A docs folder holds more than documents (images, ``conf.py``, a ``Makefile``); a build says what
it read and what it skipped, and why, instead of skipping in silence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

NO_READER = "no reader"


@dataclass
class Inventory:
    """Files read per extension, and files skipped per (extension, reason)."""

    read: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)

    def skip(self, path: Path, reason: str) -> None:
        self.skipped[(_extension(path), reason)] += 1

    def took(self, path: Path) -> None:
        self.read[_extension(path)] += 1

    def to_dict(self) -> dict:
        skipped: dict[str, dict[str, int]] = {}
        for (ext, reason), n in sorted(self.skipped.items()):
            skipped.setdefault(reason, {})[ext] = n
        return {"read": dict(sorted(self.read.items())), "skipped": skipped}

    def describe(self) -> str:
        """One line: "read 75 files (.rst 75); skipped 11: .png 8, .bat 1, .py 1, (none) 1 — no reader"."""
        read = sum(self.read.values())
        parts = [f"read {read} file{'s' if read != 1 else ''} ("
                 + ", ".join(f"{ext} {n}" for ext, n in self.read.most_common()) + ")" if read else "read no file"]
        for reason, by_ext in self.to_dict()["skipped"].items():
            n = sum(by_ext.values())
            shown = ", ".join(f"{ext} {k}" for ext, k in sorted(by_ext.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"skipped {n}: {shown} — {reason}")
        return "; ".join(parts)


def list_files(root: Path, inventory: Inventory, suffixes: tuple[str, ...]) -> list[Path]:
    """The files below ``root`` with a reader (sorted); hidden files and folders (``.git``,
    ``.venv``) and files without a reader are recorded as skipped."""
    files = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            inventory.skip(path, "hidden")
        elif path.suffix.lower() in suffixes:
            files.append(path)
        else:
            inventory.skip(path, NO_READER)
    return files


def _extension(path: Path) -> str:
    return path.suffix.lower() or "(none)"


def skip_reason(message: str) -> str:
    """The reason a reader's error gives for skipping a file, in the build summary's words."""
    for marker, reason in (("not UTF-8", "not UTF-8"), ("--max-file-mb", "over --max-file-mb"),
                           ("no text layer", "no text layer (scanned PDF)"),
                           ("a table of contents", "a table of contents"),
                           ("only included", "only included text")):
        if marker in message:
            return reason
    return "unreadable"
